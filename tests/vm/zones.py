"""Zone scenarios for run-scenarios.py: the ratio guard decides per device,
like the kernel's memory groups, so a DIMM lands wholly in one zone and a
movable one can be unplugged; virtio-mem grows and shrinks without leftovers.

A mixin of Suite (run-scenarios.py), booted on a fresh guest: node 0 and
node 1 have 1 GiB of boot memory each, so with movable_ratio = 301 per
node each takes less than 3 GiB of movable memory: one 2 GiB DIMM, not two.
"""

import time

from vm import GiB, MiB

CONF = "/etc/memonlined.conf"

CONF_GUARD = """# memonlined VM zone policy: the kernel's own default guard
[zones]
default = online_movable
movable_ratio = 301
ratio_per_node = yes
"""


class ZoneFail(AssertionError):
    pass


class ZoneScenarios:
    """Mixed into Suite; see BOOTS in run-scenarios.py."""

    @staticmethod
    def zcheck(cond, msg):
        if not cond:
            raise ZoneFail(msg)

    def s_setup_zones(self):
        self.vm.write_guest_file(CONF, CONF_GUARD)
        self.sh("memonlined --check-config && systemctl restart memonlined && systemctl is-active memonlined")
        self.assert_none_offline()

    def zone_of(self, st, names):
        by = {b["block"]: b for b in st["blocks"]}
        return {n: (by[n]["state"], by[n]["zone"]) if n in by else ("gone", None) for n in names}

    def add_dimm(self, node, size):
        """Hot-add one DIMM and wait until its blocks are online; returns (dev_id, blocks ascending)."""
        n = size // (128 * MiB)
        self.mark()
        dev = self.vm.hotplug_dimm(node, size)
        new = self.wait_new_blocks(n)
        self.wait_new_online()
        return dev, sorted(new, key=lambda b: int(b[6:]))

    def assert_whole(self, st, blocks, zone, what):
        zones = self.zone_of(st, blocks)
        bad = {b: z for b, z in zones.items() if z != ("online", zone)}
        self.zcheck(not bad, "%s: not all %s: %s" % (what, zone, sorted(bad.items())[:6]))

    def guard_records(self, cursor):
        """The daemon's ratio guard notices after CURSOR (log lines, not records)."""
        g = self.vm.guest_exec(["/usr/lib/memonlined-test/journal-records", "--grep", "ratio guard: ", cursor],
                               timeout=60)
        return g.out.splitlines() if g.rc == 0 else []

    @staticmethod
    def field_of(rec, key):
        v = rec.get(key)
        if isinstance(v, list):
            v = v[-1] if v else None
        return v

    def wait_gone(self, blocks, timeout=120):
        deadline = time.monotonic() + timeout
        while True:
            st = self.state()
            left = [b for b, z in self.zone_of(st, blocks).items() if z[0] != "gone"]
            if not left or time.monotonic() > deadline:
                return left
            time.sleep(2)

    # -------------------------------------------------------------------
    def s_virtio_mem_grow_shrink(self):
        """virtio-mem grows (online, movable) and shrinks: its blocks go away."""
        cursor = self.cursor()
        self.mark()
        self.vm.virtio_mem_resize(1 * GiB)
        new = self.wait_new_blocks(8)
        self.wait_new_online()
        st = self.state()
        self.assert_whole(st, new, "Movable", "virtio-mem")
        devs = {self.field_of(r, "MEMONLINE_DEVICE_KIND") for r in self.records("batch", cursor)}
        self.zcheck("virtio-mem" in devs, "batch records do not name the virtio-mem device: %s" % devs)
        self.vm.virtio_mem_resize(0)
        deadline = time.monotonic() + 120
        while self.vm.virtio_mem_size_now() > 0 and time.monotonic() < deadline:
            time.sleep(2)
        self.zcheck(self.vm.virtio_mem_size_now() == 0,
                    "virtio-mem still has %d bytes plugged" % self.vm.virtio_mem_size_now())
        left = self.wait_gone(new)
        self.zcheck(not left, "blocks left after virtio-mem shrank: %s" % left)
        fails = self.records("failure", cursor)
        self.zcheck(not fails, "failure records: %s" % fails[:2])

    def s_guard_burst(self):
        """Two 2 GiB DIMMs on node 0 at once: the first movable, the second
        kernel, each whole; the guard's record says why, with numbers."""
        cursor = self.cursor()
        self.mark()
        self.vm.hotplug_dimm(0, 2 * GiB)
        self.vm.hotplug_dimm(0, 2 * GiB)
        new = sorted(self.wait_new_blocks(32), key=lambda b: int(b[6:]))
        self.wait_new_online()
        st = self.state()
        self.assert_whole(st, new[:16], "Movable", "the first DIMM")
        self.assert_whole(st, new[16:], "Normal", "the second DIMM")
        msgs = self.guard_records(cursor)
        self.zcheck(any("ratio guard: dimm PNP0C80:" in (m or "") and "online_kernel" in (m or "") and
                        "boot kernel memory on node 0" in (m or "") for m in msgs),
                    "no ratio guard record naming the DIMM: %s" % msgs)
        self.assert_none_offline()

    def s_guard_in_turn_unplug(self):
        """Node 1, one DIMM after the other: the first movable, the second
        kernel; the movable one is then unplugged and its blocks go away."""
        a, blocks_a = self.add_dimm(1, 2 * GiB)
        b, blocks_b = self.add_dimm(1, 2 * GiB)
        st = self.state()
        self.assert_whole(st, blocks_a, "Movable", "the first DIMM")
        self.assert_whole(st, blocks_b, "Normal", "the second DIMM")
        self.vm.unplug_dimm(a)
        left = self.wait_gone(blocks_a)
        self.zcheck(not left, "blocks of the unplugged DIMM still there: %s" % left)
        self.assert_none_offline()
        self.kernel_dimm_node1 = blocks_b

    def s_guard_other_order(self):
        """Node 1 again, the large DIMM first this time: 2.5 GiB fits, 1 GiB
        more does not; each lands wholly in one zone."""
        _, large = self.add_dimm(1, 2 * GiB + 512 * MiB)
        _, small = self.add_dimm(1, 1 * GiB)
        st = self.state()
        self.assert_whole(st, large, "Movable", "the 2.5 GiB DIMM")
        self.assert_whole(st, small, "Normal", "the 1 GiB DIMM")
        self.assert_none_offline()

    ZONE_SCENARIOS = [
        ("virtio-mem-grow-shrink", "s_virtio_mem_grow_shrink"),
        ("guard-burst", "s_guard_burst"),
        ("guard-in-turn-unplug", "s_guard_in_turn_unplug"),
        ("guard-other-order", "s_guard_other_order"),
    ]
