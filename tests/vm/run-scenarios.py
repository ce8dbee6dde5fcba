#!/usr/bin/env python3
"""memonlined system scenarios on a real kernel (QEMU TCG guest).

Usage: run-scenarios.py [--image-dir DIR] [--only NAME[,NAME..]] [--keep] [-v]

Prints `PASS name` / `FAIL name: reason` per scenario and ends with
`N passed, N failed`; exits non-zero on any failure. All scenarios share
one boot (ordered so that each one's expected zone is known); on a
failure the guest journal, the serial console tail and the assertion are
printed to stderr.

Needs an image built by build-image.sh with the project installed.
"""

import argparse
import json
import os
import sys
import tempfile
import time
import traceback

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from vm import VM, VMError, GiB, MiB, GUEST_LIB, DEFAULT_IMAGE_DIR  # noqa: E402

ID = {
    "batch": "6a1c2b3e4d5f47a8b9c0d1e2f3a4b5c6",
    "node": "7b2d3c4f5e6048b9a0c1d2e3f4a5b6c7",
    "failure": "8c3e4d5a6f7149c0b1d2e3f4a5b6c7d8",
    "device": "9d4f5e6b7a8240d1c2e3f4a5b6c7d8e9",
}
CONF = "/etc/memonlined.conf"

# The test policy: everything movable, ratio guard off, so zones are known.
CONF_MOVABLE = """# memonlined VM test policy
[zones]
default = online_movable
movable_ratio = 0

[pmem]
zone = online_movable
"""
CONF_KERNEL = """# memonlined VM test policy (after reload)
[zones]
default = online_kernel
movable_ratio = 0

[pmem]
zone = online_kernel
"""
# Line 3 is wrong on purpose.
CONF_BROKEN = """# memonlined VM test policy (broken)
[zones]
default = no_such_zone
movable_ratio = 0
"""
BROKEN_LINE = "%s:3:" % CONF

ZONE_OF_POLICY = {"online_movable": "Movable", "movable": "Movable",
                  "online_kernel": "Normal", "kernel": "Normal", "normal": "Normal"}


class Fail(Exception):
    pass


def check(cond, msg):
    if not cond:
        raise Fail(msg)


def parse_cpulist(s):
    cpus = set()
    s = (s or "").strip()
    if not s:
        return cpus
    for part in s.split(","):
        part = part.strip()
        if "-" in part:
            a, b = part.split("-")
            cpus.update(range(int(a), int(b) + 1))
        elif part:
            cpus.add(int(part))
    return cpus


def field(rec, key):
    v = rec.get(key)
    if isinstance(v, list):  # repeated field, or binary as byte list
        if v and all(isinstance(x, int) for x in v):
            return bytes(v).decode(errors="replace")
        v = v[-1] if v else None
    return v


class Suite:
    def __init__(self, vm, verbose=False):
        self.vm = vm
        self.verbose = verbose
        self.results = []
        self.timings = {}

    def log(self, msg):
        if self.verbose:
            print("  .. " + msg, file=sys.stderr, flush=True)

    # ------------------------------------------------------------ guest I/O
    def sh(self, script, timeout=120, check=True):
        return self.vm.sh(script, timeout=timeout, check=check)

    def state(self):
        return self.vm.guest_json([GUEST_LIB + "/state-json"], timeout=120)

    def cursor(self):
        return self.sh(GUEST_LIB + "/journal-records --cursor").out.strip()

    def records(self, kind, cursor):
        r = self.vm.guest_exec([GUEST_LIB + "/journal-records", kind, cursor], timeout=60, check=True)
        return [json.loads(line) for line in r.out.splitlines() if line.strip()]

    def mark(self):
        self.sh(GUEST_LIB + "/wait-blocks --mark")

    def wait_new_blocks(self, n, timeout=300):
        r = self.vm.guest_exec([GUEST_LIB + "/wait-blocks", "-t", str(timeout), str(n)],
                               timeout=timeout + 30)
        check(r.rc == 0, "only part of the hot-added memory appeared in the guest: %s" % r.err.strip())
        return r.out.split()

    def wait_new_online(self, timeout=180, stall=45):
        r = self.vm.guest_exec([GUEST_LIB + "/wait-blocks", "--online", "-t", str(timeout),
                                "-s", str(stall)], timeout=timeout + 30)
        check(r.rc == 0, "hot-added blocks not onlined: %s" % r.err.strip()[:400])

    def daemon_active(self):
        return self.sh("systemctl is-active memonlined", check=False).out.strip() == "active"

    # ----------------------------------------------------------- assertions
    def nearest_cpu_node(self, st, node):
        nodes = st["nodes"]
        if parse_cpulist(nodes[str(node)]["cpulist"]):
            return node
        dist = [int(x) for x in nodes[str(node)]["distance"].split()]
        # /sys/devices/system/node/nodeN/distance is indexed by node id over
        # the online nodes, which here are 0..N contiguous.
        ids = sorted(int(k) for k in nodes)
        best = None
        for i, nid in enumerate(ids):
            if i < len(dist) and parse_cpulist(nodes[str(nid)]["cpulist"]):
                if best is None or dist[i] < best[0]:
                    best = (dist[i], nid)
        return best[1] if best else None

    def assert_blocks(self, st, names, node, zone):
        by = {b["block"]: b for b in st["blocks"]}
        for n in names:
            b = by.get(n)
            check(b is not None, "%s vanished" % n)
            check(b["state"] == "online", "%s is %s" % (n, b["state"]))
            if node is not None:
                check(b["node"] == node, "%s is on node %s, expected %s" % (n, b["node"], node))
            check(b["zone"] == zone, "%s zone %s, policy says %s" % (n, b["zone"], zone))

    def assert_none_offline(self):
        r = self.sh(GUEST_LIB + "/check-online", check=False)
        check(r.rc == 0, "blocks left offline: %s" % " ".join(r.out.split()[:40]))

    def assert_cpus(self, st, rec, node):
        cpus_s = field(rec, "MEMONLINE_CPUS")
        check(cpus_s not in (None, ""), "node record without MEMONLINE_CPUS: %s" % rec_brief(rec))
        cpus = parse_cpulist(cpus_s)
        want_node = self.nearest_cpu_node(st, node)
        allowed = parse_cpulist(st["nodes"][str(want_node)]["cpulist"])
        check(cpus <= allowed, "node %s record used CPUs %s, not all on node %s (cpus %s)"
              % (node, cpus_s, want_node, sorted(allowed)))
        for c in cpus:
            sib = parse_cpulist(st["cpus"][str(c)]["siblings"]) - {c}
            both = sib & cpus
            check(not both, "MEMONLINE_CPUS=%s has hyperthread siblings %d and %s"
                  % (cpus_s, c, sorted(both)))

    def wait_records(self, cursor, nblocks, timeout=60):
        """Poll until the batch records after CURSOR add up to NBLOCKS (or,
        with NBLOCKS None, until some exist and stop changing)."""
        deadline = time.monotonic() + timeout
        last = None
        while True:
            batches = self.records("batch", cursor)
            total = sum(int(field(b, "MEMONLINE_BLOCKS") or 0) for b in batches)
            if nblocks is not None and total >= nblocks:
                return batches
            if nblocks is None and total > 0 and total == last:
                return batches
            if time.monotonic() > deadline:
                return batches
            last = total
            time.sleep(2 if nblocks is None else 1)

    def assert_journal(self, st, cursor, per_node, zone, exact=True, device=None):
        """per_node: {node: nblocks}. Checks batch, node and failure records
        written after CURSOR."""
        bs = st["block_size"]
        total = sum(per_node.values())
        batches = self.wait_records(cursor, total if exact else None)
        nodes = self.records("node", cursor)
        fails = self.records("failure", cursor)
        check(not fails, "failure records: %s" % "; ".join(rec_brief(f) for f in fails[:5]))
        check(batches, "no batch record (MESSAGE_ID=%s) in the journal" % ID["batch"])
        b_blocks = sum(int(field(b, "MEMONLINE_BLOCKS") or 0) for b in batches)
        b_bytes = sum(int(field(b, "MEMONLINE_BYTES") or 0) for b in batches)
        b_failed = sum(int(field(b, "MEMONLINE_FAILED") or 0) for b in batches)
        for b in batches:
            for k in ("MEMONLINE_BATCH", "MEMONLINE_DURATION_USEC", "MEMONLINE_GIBPS"):
                check(field(b, k) not in (None, ""), "batch record lacks %s: %s" % (k, rec_brief(b)))
            check(int(field(b, "MEMONLINE_BYTES")) == int(field(b, "MEMONLINE_BLOCKS")) * bs,
                  "batch record bytes != blocks x %d: %s" % (bs, rec_brief(b)))
        check(b_failed == 0, "batch records report %d failed blocks" % b_failed)
        if exact:
            check(b_blocks == total, "batch records count %d blocks, hot-added %d" % (b_blocks, total))
            check(b_bytes == total * bs, "batch records count %d bytes, expected %d" % (b_bytes, total * bs))
        else:
            check(0 < b_blocks <= total, "batch records count %d blocks, hot-added %d" % (b_blocks, total))
        check(nodes, "no node record (MESSAGE_ID=%s) in the journal" % ID["node"])
        seen = {}
        for r in nodes:
            n = int(field(r, "MEMONLINE_NODE"))
            blk = int(field(r, "MEMONLINE_BLOCKS") or 0)
            check(int(field(r, "MEMONLINE_BYTES") or 0) == blk * bs,
                  "node record bytes != blocks x %d: %s" % (bs, rec_brief(r)))
            check(int(field(r, "MEMONLINE_FAILED") or 0) == 0, "node record failed>0: %s" % rec_brief(r))
            check(n in per_node, "node record for node %d, hot-added only on %s" % (n, sorted(per_node)))
            z = str(field(r, "MEMONLINE_ZONE") or "")
            zn = ZONE_OF_POLICY.get(z.lower(), z)
            check(zn == zone, "node %d record zone %r, policy says %s" % (n, z, zone))
            if blk:
                self.assert_cpus(st, r, n)
            seen[n] = seen.get(n, 0) + blk
        for n, want in per_node.items():
            if exact:
                check(seen.get(n, 0) == want, "node %d records count %d blocks, hot-added %d"
                      % (n, seen.get(n, 0), want))
            else:
                check(0 < seen.get(n, 0) <= want, "node %d records count %d blocks, hot-added %d"
                      % (n, seen.get(n, 0), want))
        if device:
            allrecs = self.records("all", cursor)
            devs = {field(r, "MEMONLINE_DEVICE") for r in allrecs} - {None}
            check(device in devs, "no record names MEMONLINE_DEVICE=%s (saw %s)" % (device, sorted(devs) or "none"))
        return batches, nodes

    def hotadd_and_check(self, node, size, zone, per_node=None, device=None):
        n = size // (128 * MiB)
        cursor = self.cursor()
        self.mark()
        self.vm.hotplug_dimm(node, size)
        new = self.wait_new_blocks(n)
        self.wait_new_online()
        st = self.state()
        self.assert_blocks(st, new, node, zone)
        self.assert_journal(st, cursor, per_node or {node: len(new)}, zone, device=device)
        self.assert_none_offline()
        return new

    # ------------------------------------------------------------ scenarios
    def s_setup(self):
        self.vm.write_guest_file(CONF, CONF_MOVABLE)
        self.sh("memonlined --check-config && systemctl restart memonlined && systemctl is-active memonlined")
        self.assert_none_offline()

    def s_dimm_cpu_node(self):
        self.hotadd_and_check(1, 1 * GiB, "Movable")

    def s_dimm_cpuless_node(self):
        self.hotadd_and_check(2, 1 * GiB, "Movable")

    def s_nvdimm_devdax_kmem(self):
        cursor = self.cursor()
        self.mark()
        self.vm.hotplug_nvdimm(2, 2 * GiB)
        r = self.sh("for i in $(seq 60); do ndctl list -R | grep -q region && break; sleep 1; done; "
                    "ndctl disable-region all && ndctl init-labels -f all && ndctl enable-region all && "
                    "ndctl create-namespace -m devdax", timeout=180)
        ns = json.loads(r.out)
        dev = ns["daxregion"]["devices"][0]["chardev"]
        self.log("namespace %s dax %s size %s" % (ns["dev"], dev, ns["size"]))
        r = self.sh("daxctl reconfigure-device --mode=system-ram --no-online %s" % dev, timeout=240)
        info = json.loads(r.out)
        info = info[0] if isinstance(info, list) else info
        n = int(info["total_memblocks"])
        new = self.wait_new_blocks(n)
        self.wait_new_online()
        st = self.state()
        self.assert_blocks(st, new, 2, "Movable")
        self.assert_journal(st, cursor, {2: len(new)}, "Movable", device=dev)
        self.assert_none_offline()

    def s_virtio_mem(self):
        cursor = self.cursor()
        self.mark()
        self.vm.virtio_mem_resize(1 * GiB)
        new = self.wait_new_blocks(8)
        self.wait_new_online()
        deadline = time.monotonic() + 60
        while self.vm.virtio_mem_size_now() < 1 * GiB and time.monotonic() < deadline:
            time.sleep(1)
        check(self.vm.virtio_mem_size_now() >= 1 * GiB,
              "virtio-mem plugged only %d bytes" % self.vm.virtio_mem_size_now())
        st = self.state()
        self.assert_blocks(st, new, self.vm.virtio_mem_node, "Movable")
        self.assert_journal(st, cursor, {self.vm.virtio_mem_node: len(new)}, "Movable")
        self.assert_none_offline()

    def s_coldplug(self):
        # The project's udev rule pulls memonlined.service in on every memory
        # add event (SYSTEMD_WANTS), so a plain stop is undone by the hot-add
        # itself: mask it (runtime) while it must stay down.
        self.sh("systemctl mask --runtime memonlined && systemctl stop memonlined")
        cursor = self.cursor()
        self.mark()
        self.vm.hotplug_dimm(0, 512 * MiB)
        new = self.wait_new_blocks(4)
        time.sleep(2)
        st = self.state()
        off = [b["block"] for b in st["blocks"] if b["block"] in new and b["state"] != "online"]
        check(len(off) == len(new), "blocks came online while memonlined was stopped: %s"
              % sorted(set(new) - set(off)))
        self.sh("systemctl unmask --runtime memonlined && systemctl start memonlined && "
                "systemctl is-active memonlined")
        self.wait_new_online()
        st = self.state()
        self.assert_blocks(st, new, 0, "Movable")
        self.assert_journal(st, cursor, {0: len(new)}, "Movable")
        self.assert_none_offline()

    def s_crash_mid_batch(self):
        size = 8 * GiB
        n = size // (128 * MiB)
        cursor = self.cursor()
        self.mark()
        before = int(self.sh("systemctl show -p NRestarts --value memonlined").out.strip() or 0)
        # The killer runs in the guest, armed before the hot-add: it waits
        # until the first new block is online and kills the daemon at once.
        killer = r'''
shopt -s nullglob
declare -A old
while read -r b; do old[$b]=1; done < /run/memonlined-test/mark
pid=$(systemctl show -p MainPID --value memonlined)
end=$((SECONDS + 120))
while [ $SECONDS -lt $end ]; do
    on=0; tot=0
    for d in /sys/devices/system/memory/memory[0-9]*; do
        b=${d##*/}; [ -n "${old[$b]:-}" ] && continue
        tot=$((tot + 1)); read -r s < $d/state; [ "$s" = online ] && on=$((on + 1))
    done
    if [ $on -gt 0 ]; then
        if [ $on -lt %d ]; then kill -9 $pid; echo "killed $pid at $on/$tot online"; exit 0; fi
        echo "too late: $on/$tot already online"; exit 2
    fi
done
echo "nothing came online"; exit 3
''' % n
        pid = self.vm.guest_exec_start(["/bin/bash", "-c", killer], timeout=150)
        time.sleep(0.5)
        self.vm.hotplug_dimm(1, size)
        kr = self.vm.guest_exec_wait(pid, timeout=150)
        self.log("killer: %s %s" % (kr.out.strip(), kr.err.strip()))
        check(kr.rc == 0, "could not kill the daemon mid-batch: %s%s" % (kr.out.strip(), kr.err.strip()))
        new = self.wait_new_blocks(n)
        self.wait_new_online(timeout=240)
        deadline = time.monotonic() + 60
        while not self.daemon_active() and time.monotonic() < deadline:
            time.sleep(1)
        check(self.daemon_active(), "memonlined not active again after kill -9")
        after = int(self.sh("systemctl show -p NRestarts --value memonlined").out.strip() or 0)
        check(after > before, "systemd did not restart memonlined (NRestarts %d -> %d)" % (before, after))
        st = self.state()
        self.assert_blocks(st, new, 1, "Movable")
        # The killed batch wrote no record; the restarted daemon reports the rest.
        self.assert_journal(st, cursor, {1: len(new)}, "Movable", exact=False)
        self.assert_none_offline()
        self.log(kr.out.strip())

    def s_burst(self):
        t = time.monotonic()
        self.hotadd_and_check(1, 16 * GiB, "Movable")
        self.log("burst 16 GiB end to end %.1fs" % (time.monotonic() - t))

    def s_reload(self):
        self.vm.write_guest_file(CONF, CONF_KERNEL)
        r = self.sh("systemctl reload memonlined", check=False)
        check(r.rc == 0, "systemctl reload failed for a valid config: %s" % r.err.strip())
        time.sleep(1)
        self.hotadd_and_check(0, 512 * MiB, "Normal")
        # broken config: reload must keep the old (online_kernel) policy
        cursor = self.cursor()
        self.vm.write_guest_file(CONF, CONF_BROKEN)
        cc = self.sh("memonlined --check-config", check=False)
        check(cc.rc != 0, "memonlined --check-config accepted a broken config")
        check(BROKEN_LINE in cc.out + cc.err, "--check-config did not say %r: %r"
              % (BROKEN_LINE, (cc.out + cc.err).strip()[:300]))
        self.sh("systemctl reload memonlined", check=False)
        time.sleep(1)
        check(self.daemon_active(), "memonlined died on a broken config reload")
        deadline = time.monotonic() + 30
        while True:
            g = self.vm.guest_exec([GUEST_LIB + "/journal-records", "--grep", BROKEN_LINE, cursor], timeout=60)
            if g.rc == 0 or time.monotonic() > deadline:
                break
            time.sleep(1)
        check(g.rc == 0, "journal of memonlined.service has no %r after a broken reload" % BROKEN_LINE)
        self.hotadd_and_check(0, 512 * MiB, "Normal")

    # ------------------------------------------------------------------ run
    SCENARIOS = [
        ("dimm-cpu-node", "s_dimm_cpu_node"),
        ("dimm-cpuless-node", "s_dimm_cpuless_node"),
        ("virtio-mem", "s_virtio_mem"),
        ("nvdimm-devdax-kmem", "s_nvdimm_devdax_kmem"),
        ("coldplug", "s_coldplug"),
        ("crash-mid-batch", "s_crash_mid_batch"),
        ("burst-16g", "s_burst"),
        ("reload", "s_reload"),
    ]

    def run(self, only=None):
        try:
            self.s_setup()
        except Exception as e:  # noqa: BLE001
            self.fail_all("setup", e, only)
            return
        for name, meth in self.SCENARIOS:
            if only and name not in only:
                continue
            t = time.monotonic()
            try:
                getattr(self, meth)()
                self.results.append((name, True, ""))
                print("PASS %s" % name, flush=True)
            except Exception as e:  # noqa: BLE001
                reason = str(e).splitlines()[0] if str(e) else type(e).__name__
                self.results.append((name, False, reason))
                print("FAIL %s: %s" % (name, reason), flush=True)
                self.dump(name, e)
                if not self.vm.alive():
                    self.fail_rest(name, only, "qemu died")
                    return
            self.timings[name] = time.monotonic() - t
            self.log("%s took %.1fs" % (name, self.timings[name]))

    def dump(self, name, e):
        print("==== %s failed ====" % name, file=sys.stderr)
        if isinstance(e, Fail):
            print("assertion: %s" % e, file=sys.stderr)
        else:
            traceback.print_exception(type(e), e, e.__traceback__, file=sys.stderr)
        if self.vm.alive():
            print(self.vm.diagnostics(), file=sys.stderr)
        else:
            print(self.vm.serial_tail(), file=sys.stderr)
        sys.stderr.flush()

    def fail_all(self, what, e, only):
        reason = "%s: %s" % (what, str(e).splitlines()[0] if str(e) else type(e).__name__)
        self.dump(what, e)
        for name, _ in self.SCENARIOS:
            if not only or name in only:
                self.results.append((name, False, reason))
                print("FAIL %s: %s" % (name, reason), flush=True)

    def fail_rest(self, after, only, reason):
        started = False
        for name, _ in self.SCENARIOS:
            if started and (not only or name in only):
                self.results.append((name, False, reason))
                print("FAIL %s: %s" % (name, reason), flush=True)
            if name == after:
                started = True


def rec_brief(rec):
    return " ".join("%s=%s" % (k, field(rec, k)) for k in sorted(rec)
                    if k.startswith("MEMONLINE_") or k in ("MESSAGE", "MESSAGE_ID"))


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--image-dir", default=DEFAULT_IMAGE_DIR)
    ap.add_argument("--only", default="", help="comma-separated scenario names")
    ap.add_argument("--keep", action="store_true", help="keep the VM work dir (serial log, qemu log)")
    ap.add_argument("-v", "--verbose", action="store_true")
    ap.add_argument("--list", action="store_true")
    a = ap.parse_args()
    if a.list:
        for name, _ in Suite.SCENARIOS:
            print(name)
        return 0
    only = set(x for x in a.only.split(",") if x)
    unknown = only - {n for n, _ in Suite.SCENARIOS}
    if unknown:
        ap.error("unknown scenario(s): %s" % ", ".join(sorted(unknown)))
    workdir = tempfile.mkdtemp(prefix="memonlined-vm-") if a.keep else None
    t0 = time.monotonic()
    vm = None
    suite = None
    try:
        vm = VM(a.image_dir, workdir=workdir)
        if not vm.has_project:
            print("warning: image built with --no-project: memonlined is not installed",
                  file=sys.stderr)
        suite = Suite(vm, verbose=a.verbose)
        vm.start()
        vm.wait_guest_ready()
        suite.log("boot %.1fs" % vm.boot_seconds)
        suite.run(only)
    except Exception as e:  # noqa: BLE001
        suite = suite or Suite(vm, verbose=a.verbose)
        if vm is not None:
            suite.fail_all("boot", e, only)
        else:
            print("error: %s" % e, file=sys.stderr)
            suite.results = [(n, False, str(e)) for n, _ in Suite.SCENARIOS if not only or n in only]
            for n, _, r in suite.results:
                print("FAIL %s: %s" % (n, r))
    finally:
        if vm is not None:
            vm.shutdown()
            vm.close()
    if a.keep:
        print("logs kept in %s" % workdir, file=sys.stderr)
    passed = sum(1 for r in suite.results if r[1])
    failed = len(suite.results) - passed
    t = ["boot=%.0fs" % vm.boot_seconds] if vm is not None and vm.boot_seconds else []
    t += ["%s=%.0fs" % (k, v) for k, v in suite.timings.items()]
    print("timings: total=%.0fs %s" % (time.monotonic() - t0, " ".join(t)), file=sys.stderr)
    print("%d passed, %d failed" % (passed, failed))
    return 1 if failed or passed == 0 else 0


if __name__ == "__main__":
    sys.exit(main())
