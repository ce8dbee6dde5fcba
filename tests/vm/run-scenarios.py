#!/usr/bin/env python3
"""memonlined system scenarios on a real kernel (QEMU TCG guest).

Usage: run-scenarios.py [--image-dir DIR]... [--only NAME[,NAME..]] [--keep] [-v]

Each --image-dir is one guest (kernel); the scenarios run on each in turn.
Prints `PASS K/name` / `FAIL K/name: reason` per scenario (K the guest
kernel's version, e.g. 6.12) and ends with one `N passed, N failed` for
all of them; exits non-zero on any failure. The scenarios run in boots
(Suite.BOOTS), each ordered so that every expected zone is known: the main
one, a pmem one whose policy has memonlined convert devdax namespaces
itself, and on a guest with the cxl tool a CXL one (q35, CXL Type-3
devices); on 6.12 a memmap one (memory_hotplug.memmap_on_memory=1). Only the boots with a selected scenario are started; --only
takes NAME (every kernel) or K/NAME. On a failure the guest journal, the
serial console tail and the assertion are printed to stderr.

Needs images built by build-image.sh with the project installed.
"""

import argparse
import json
import os
import sys
import tempfile
import time
import traceback

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from vm import (VM, VMError, GiB, MiB, GUEST_LIB, DEFAULT_IMAGE_DIR, MESSAGE_IDS, image_env,  # noqa: E402
                kernel_tag, kernel_auto_online)
from faults import FaultScenarios  # noqa: E402
from pressure import PressureScenarios  # noqa: E402
import oracle  # noqa: E402
from zones import ZoneScenarios  # noqa: E402

TAKEOVER_ID = MESSAGE_IDS["AUTO_ONLINE"]
ID = {k: MESSAGE_IDS[k.upper()] for k in ("batch", "node", "failure", "device")}
CONF = "/etc/memonlined.conf"
AUTO_ONLINE = "/sys/devices/system/memory/auto_online_blocks"
# Where the daemon keeps the auto_online_blocks value it took over.
AUTO_ONLINE_SAVED = "/run/memonlined/auto_online_blocks"

# Debian's node_exporter textfile directory: the unit may write it.
TEXTFILE_DIR = "/var/lib/prometheus/node-exporter"
# node_exporter in the guest (prometheus-node-exporter, started only to be scraped).
EXPORTER = "prometheus-node-exporter"
METRICS_URL = "http://127.0.0.1:9100/metrics"

# The test policy: everything movable, ratio guard off, so zones are known;
# the metrics textfile for node_exporter.
CONF_MOVABLE = """# memonlined VM test policy
[zones]
default = online_movable
movable_ratio = 0

[pmem]
zone = online_movable

[metrics]
textfile_dir = %s
""" % TEXTFILE_DIR
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

# The pmem boot: plain memory goes to Normal, so the Movable blocks of a
# converted namespace can only come from [pmem]'s own (default) zone.
CONF_PMEM = """# memonlined VM test policy (pmem boot)
[zones]
default = online_kernel
movable_ratio = 0

[pmem]
convert_devdax = yes
"""
# Appended with the namespace name it must leave alone.
KEEP_RULE = """
[device keep]
match_namespace = %s
convert = no
"""

# Appended with the namespace whose bad blocks the admin accepts.
ALLOW_BAD_RULE = """
[device poisoned]
match_namespace = %s
allow_badblocks = yes
"""
# An uncorrected memory error as a patrol scrub reports it (Intel SDM vol. 3,
# 16.6.3): MCi_STATUS VAL|UC|EN|MISCV|ADDRV|S, MCACOD 0xc0 (memory scrubbing),
# so the kernel rates it action optional (no panic, nothing killed);
# MCG_STATUS MCIP|RIPV; MCi_MISC: a physical address, valid from bit 12.
# On CPU 0 alone: QEMU's TCG CPU (family 6, model 6) has no MCA broadcast,
# and for such a model the kernel does not wait for the other CPUs either.
MCE_SRAO = "mce 0 1 0xbd000000000000c0 0x5 %#x 0x8c"

# memmap_on_memory for converted devices: on the default command line
# (pmem boot) the kernel's switch is off (6.12) or there is no per-device
# attribute (6.1), so memonlined converts without it; the memmap boot (6.12)
# turns the switch on.
MEMMAP_YES = """
[pmem]
memmap_on_memory = yes
"""
MEMMAP_APPEND = "memory_hotplug.memmap_on_memory=1"
MEMMAP_PARAM = "/sys/module/memory_hotplug/parameters/memmap_on_memory"

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


def parse_prometheus(text):
    """Samples of the text exposition format: {(name, "{labels}" or ""): value}."""
    samples = {}
    for line in text.splitlines():
        if not line or line.startswith("#"):
            continue
        head, _, value = line.rpartition(" ")
        brace = head.find("{")
        name, labels = (head, "") if brace < 0 else (head[:brace], head[brace:])
        samples[(name, labels)] = float(value)
    return samples


def field(rec, key):
    v = rec.get(key)
    if isinstance(v, list):  # repeated field, or binary as byte list
        if v and all(isinstance(x, int) for x in v):
            return bytes(v).decode(errors="replace")
        v = v[-1] if v else None
    return v


# The guests whose kernel the fault and zone scenarios run on (see main()).
FAULTS_KERNEL = "6.12"
ZONES_KERNEL = "6.1"
MEMMAP_KERNEL = "6.12"


class Suite(FaultScenarios, ZoneScenarios, PressureScenarios):
    def __init__(self, vm, verbose=False):
        self.vm = vm
        self.verbose = verbose
        self.results = []
        self.timings = {}
        self.tag = kernel_tag(vm.env.get("KVER")) if vm else "?"
        # The kernel's own auto-online default: what memonlined takes over.
        self.boot_auto = kernel_auto_online(os.path.join(vm.image_dir, "config")) if vm else None

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
    def nearest_cpu_nodes(self, st, node):
        """The CPU nodes nearest NODE (itself if it has CPUs). Several when
        distances tie, as for a CXL window's node, which has no SLIT entry
        and so is 20 from every other node."""
        nodes = st["nodes"]
        if parse_cpulist(nodes[str(node)]["cpulist"]):
            return {node}
        dist = [int(x) for x in nodes[str(node)]["distance"].split()]
        # nodeN/distance lists the online nodes in id order.
        ids = sorted(int(k) for k in nodes)
        cands = [(dist[i], nid) for i, nid in enumerate(ids)
                 if i < len(dist) and parse_cpulist(nodes[str(nid)]["cpulist"])]
        if not cands:
            return set()
        best = min(d for d, _ in cands)
        return {nid for d, nid in cands if d == best}

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
        want = self.nearest_cpu_nodes(st, node)
        writer = field(rec, "MEMONLINE_WRITER_NODE")
        if writer not in (None, "") and len(want) > 1:
            check(int(writer) in want, "node %s written from node %s, not one of the nearest %s"
                  % (node, writer, sorted(want)))
            want = {int(writer)}
        ok = [n for n in want if cpus <= parse_cpulist(st["nodes"][str(n)]["cpulist"])]
        check(ok, "node %s record used CPUs %s, not all on one of the nearest CPU nodes %s (cpus %s)"
              % (node, cpus_s, sorted(want),
                 {n: st["nodes"][str(n)]["cpulist"] for n in sorted(want)}))
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

    def assert_tools_agree(self, when):
        """ndctl, daxctl and cxl list every nvdimm region and namespace, dax
        device, CXL region and memdev as memonlined status shows them
        (oracle.py): names, sizes, modes, states and nodes."""
        r = self.vm.guest_exec([GUEST_LIB + "/tool-lists"], timeout=120)
        check(r.rc == 0, "%s: tool-lists failed: %s" % (when, r.err.strip()[:400]))
        lists = json.loads(r.out)
        msgs = oracle.compare(lists)
        if msgs and self.verbose:
            self.log("tool-lists %s: %s" % (when, json.dumps(lists)))
        check(not msgs, "%s: memonlined status and the tools disagree (%d): %s%s"
              % (when, len(msgs), "; ".join(msgs[:8]), "; ..." if len(msgs) > 8 else ""))
        self.log("tools agree with memonlined status %s" % when)

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
    def check_platform(self):
        """The guest runs its distribution's kernel command line, memonlined
        finds every library it links, and where the image holds the Debian
        package, it is installed intact and its unit is the one running."""
        cmdline = self.sh("cat /proc/cmdline").out
        check("memhp_default_state" not in cmdline and "online_policy" not in cmdline,
              "the guest must boot the distribution's default command line: %s" % cmdline.strip())
        if self.vm.project == "yes":    # not the bash stub
            r = self.sh("ldd /usr/sbin/memonlined", check=False)
            check(r.rc == 0 and "not found" not in r.out, "memonlined does not link in the guest: %s%s"
                  % (r.out, r.err))
        if self.vm.env.get("PACKAGE") == "yes":
            # The Debian package, as an admin installs it: dpkg knows every file unchanged.
            r = self.sh("dpkg-query -W -f='${Status} ${Version}' memonlined && dpkg -V memonlined", check=False)
            check(r.rc == 0 and r.out.startswith("install ok installed") and "??" not in r.out,
                  "the memonlined package is not installed intact: %s%s" % (r.out, r.err))
            unit = self.sh("systemctl show -p FragmentPath --value memonlined").out.strip()
            check(unit.endswith("/lib/systemd/system/memonlined.service"),
                  "the running unit is not the package's: %s" % unit)
            self.log("package %s, unit %s" % (r.out.strip(), unit))
        check(self.boot_auto is not None, "no kernel config in the image dir (build-image.sh copies it)")
        self.log("kernel %s, built-in auto-online %s" % (self.vm.env.get("KVER"), self.boot_auto))

    def s_setup(self):
        self.check_platform()
        self.vm.write_guest_file(CONF, CONF_MOVABLE)
        self.sh("memonlined --check-config && systemctl restart memonlined && systemctl is-active memonlined")
        self.assert_none_offline()

    # ------------------------------------------------ kernel auto-online
    def auto_online(self):
        return self.sh("cat %s" % AUTO_ONLINE).out.strip()

    def saved_auto_online(self):
        r = self.sh("cat %s" % AUTO_ONLINE_SAVED, check=False)
        return r.out.strip() if r.rc == 0 else None

    def assert_taken_over(self, original):
        check(self.auto_online() == "offline", "auto_online_blocks reads %r while memonlined runs"
              % self.auto_online())
        check(self.saved_auto_online() == original, "%s holds %r, the kernel's value was %r"
              % (AUTO_ONLINE_SAVED, self.saved_auto_online(), original))

    def s_takeover(self):
        """memonlined owns onlining while it runs: auto_online_blocks is
        offline, hot-added memory comes online by policy with records, and a
        stop gives the kernel's value back. A kernel that does not
        auto-online (6.1) is made to, as memhp_default_state=online would."""
        emulated = self.boot_auto == "offline"
        original = "online" if emulated else self.boot_auto
        cursor = self.cursor()
        if emulated:
            self.sh("echo online > %s && systemctl restart memonlined" % AUTO_ONLINE)
        else:
            cursor = ""     # taken over at boot: look at the whole boot
        self.assert_taken_over(original)
        recs = [r for r in self.records("takeover", cursor)
                if 'kernel auto-online was "%s"' % original in (field(r, "MESSAGE") or "")]
        check(recs, "no takeover record (MESSAGE_ID %s) naming %r" % (TAKEOVER_ID, original))
        # Without the takeover the kernel onlines these itself (Normal, no records).
        self.hotadd_and_check(0, 512 * MiB, "Movable")
        self.sh("systemctl stop memonlined")
        check(self.auto_online() == original, "after a stop auto_online_blocks reads %r, not the original %r"
              % (self.auto_online(), original))
        check(self.saved_auto_online() is None, "the saved value outlived the stop")
        if emulated:
            self.sh("echo offline > %s" % AUTO_ONLINE)
        self.sh("systemctl start memonlined && systemctl is-active memonlined")
        if not emulated:
            self.assert_taken_over(original)

    def s_dimm_cpu_node(self):
        self.start_exporter()
        try:
            before = self.scrape()
            new = self.hotadd_and_check(1, 1 * GiB, "Movable")
            self.assert_metrics(before, 1, len(new))
        finally:
            self.sh("systemctl stop %s" % EXPORTER, check=False)
        self.assert_sandbox_kept_function()

    # ---------------------------------------------------------- metrics
    def start_exporter(self):
        self.sh("systemctl start %s" % EXPORTER)
        deadline = time.monotonic() + 90
        while self.sh("curl -sf -o /dev/null --max-time 20 %s" % METRICS_URL, check=False).rc != 0:
            check(time.monotonic() < deadline, "node_exporter does not answer on %s: %s" % (
                METRICS_URL, self.sh("systemctl status --no-pager %s" % EXPORTER, check=False).out[-800:]))
            time.sleep(2)

    def scrape(self):
        """memonlined's series and the textfile collector's own, as node_exporter
        serves them over HTTP: {(name, labels): value}."""
        r = self.sh("curl -sf --max-time 30 %s | grep -E '^(memonlined_|node_textfile_)'" % METRICS_URL,
                    check=False)
        check(r.rc == 0, "scraping %s failed (rc %d): %s" % (METRICS_URL, r.rc, r.err.strip()[:300]))
        return parse_prometheus(r.out)

    def assert_metrics(self, before, node, n):
        """node_exporter serves the daemon's textfile: the node's offline blocks
        are 0 and its online ones grew by the hot-added N; the collector parsed
        the file without error; status --prometheus says the same."""
        online = ("memonlined_blocks_online", '{node="%d"}' % node)
        offline = ("memonlined_blocks_offline", '{node="%d"}' % node)
        onlined = ("memonlined_blocks_onlined_total", "")
        check(online in before and onlined in before,
              "node_exporter serves no memonlined_blocks_online{node=\"%d\"} before the hot-add: %s; journal: %s"
              % (node, sorted(k[0] for k in before), self.sh("journalctl -b -q -u memonlined -o cat --grep prom",
                                                            check=False).out.strip()[-400:]))
        deadline = time.monotonic() + 30
        while True:
            after = self.scrape()
            if after.get(offline) == 0 and after.get(online) == before[online] + n:
                break
            check(time.monotonic() < deadline,
                  "after %d blocks on node %d: %s %s, %s %s (before: online %s)"
                  % (n, node, offline[0] + offline[1], after.get(offline), online[0] + online[1],
                     after.get(online), before[online]))
            time.sleep(2)
        check(after.get(("node_textfile_scrape_error", "")) == 0,
              "node_exporter's textfile collector reports an error: %s"
              % {k: v for k, v in after.items() if k[0].startswith("node_textfile")})
        check(after[onlined] - before[onlined] >= n, "memonlined_blocks_onlined_total grew by %d, hot-added %d"
              % (after[onlined] - before[onlined], n))
        for k in ("memonlined_last_batch_first_block_seconds", "memonlined_last_batch_last_block_seconds",
                  "memonlined_start_time_seconds"):
            check((k, "") in after, "node_exporter serves no %s" % k)
        held = 0 if self.boot_auto == "offline" else 1
        check(after.get(("memonlined_auto_online_blocks", '{value="offline"}')) == 1 and
              after.get(("memonlined_auto_online_taken_over", "")) == held,
              "auto_online_blocks offline and taken over %d expected: %s" % (held, {
                  k: v for k, v in after.items() if k[0].startswith("memonlined_auto_online")}))
        mode = self.sh("stat -c '%%a %%U' %s/memonlined.prom" % TEXTFILE_DIR).out.strip()
        check(mode == "644 root", "memonlined.prom is %s, not 644 root (the unit's UMask=0077)" % mode)
        st = parse_prometheus(self.sh("memonlined status --prometheus").out)
        for k in (offline, online, ("memonlined_auto_online_taken_over", "")):
            check(st.get(k) == after.get(k), "status --prometheus says %s%s %s, the daemon's file %s"
                  % (k[0], k[1], st.get(k), after.get(k)))

    def assert_sandbox_kept_function(self):
        """The unit's sandbox (no capabilities, @resources denied but for
        affinity) still lets the daemon lock its memory, run at its nice
        level and pin its writers."""
        st = self.sh("cat /proc/$(systemctl show -p MainPID --value memonlined)/status").out
        fields = dict(l.split(":", 1) for l in st.splitlines() if ":" in l)
        locked_kb = int(fields.get("VmLck", "0 kB").split()[0])
        check(locked_kb > 0, "the daemon's memory is not locked (VmLck %s kB)" % locked_kb)
        check(int(fields.get("CapBnd", "1"), 16) == 0,
              "the bounding set is not empty: CapBnd %s" % fields.get("CapBnd"))
        check(fields.get("Seccomp", "").strip() == "2", "no seccomp filter: %s" % fields.get("Seccomp"))
        nice = self.sh("ps -o ni= -p $(systemctl show -p MainPID --value memonlined)").out.strip()
        check(nice == "-5", "Nice=-5 not applied without CAP_SYS_NICE: nice %s" % nice)
        r = self.sh("journalctl -q -b -u memonlined -o cat --grep 'cannot pin a worker'", check=False)
        check(not r.out.strip(), "a writer could not be pinned: %s" % r.out.strip()[:300])

    def udev_tags(self, block):
        """Every tag udev ever set on the block (TAGS is sticky, CURRENT_TAGS is not)."""
        out = self.sh("udevadm info -q property -p /devices/system/memory/%s" % block, check=False).out
        for line in out.splitlines():
            if line.startswith("TAGS="):
                return [t for t in line[5:].split(":") if t]
        return []

    def s_udev_starts_daemon(self):
        # While the daemon runs, the rule leaves memory blocks untagged: PID 1
        # gets none of their events.
        new = self.hotadd_and_check(0, 512 * MiB, "Movable")
        for b in new:
            check("systemd" not in self.udev_tags(b),
                  "%s was tagged for systemd while memonlined ran: %s" % (b, self.udev_tags(b)))
        # Stopped (not masked): the next hot-add pulls the service in again.
        self.sh("systemctl stop memonlined && test ! -e /run/memonlined/running")
        cursor = self.cursor()
        self.mark()
        self.vm.hotplug_dimm(1, 512 * MiB)
        new = self.wait_new_blocks(4)
        deadline = time.monotonic() + 60
        while not self.daemon_active() and time.monotonic() < deadline:
            time.sleep(1)
        check(self.daemon_active(), "a memory hot-add did not start the stopped memonlined.service")
        self.wait_new_online()
        st = self.state()
        if self.boot_auto == "offline":
            self.assert_blocks(st, new, 1, "Movable")
            self.assert_journal(st, cursor, {1: len(new)}, "Movable")
        else:
            # The stop gave auto-online back: the kernel onlined these while
            # adding them, in its own zone, before the daemon could start.
            # The daemon the event started takes over again.
            self.assert_blocks(st, new, 1, st_zone_of(st, new[0]))
            got = sum(int(field(b, "MEMONLINE_BLOCKS") or 0) for b in self.records("batch", cursor))
            check(got == 0, "memonlined batch records count %d blocks the kernel onlined itself" % got)
            self.assert_taken_over(self.boot_auto)
        self.assert_none_offline()
        check(any("systemd" in self.udev_tags(b) for b in new),
              "blocks added while memonlined was stopped were not tagged for systemd: %s"
              % {b: self.udev_tags(b) for b in new})

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
        self.assert_tools_agree("after create-namespace")
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
        self.assert_tools_agree("after the kmem conversion, every block online")

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
        # The project's udev rule pulls memonlined-hotplug.target in on every
        # memory add event, and the target the service while it is enabled:
        # a plain stop is undone by the hot-add itself, "systemctl disable"
        # is not, nor is a mask (which also beats an enabled unit).
        self.sh("systemctl disable --now memonlined && "
                "test ! -e /etc/systemd/system/memonlined-hotplug.target.wants/memonlined.service")
        if self.boot_auto != "offline":
            # The stop gave the kernel its auto-online back. Blocks stay
            # offline without a daemon only as after a crash or with
            # memhp_default_state=offline at boot: do what the latter does.
            check(self.auto_online() == self.boot_auto, "auto_online_blocks %r after a stop, not %r"
                  % (self.auto_online(), self.boot_auto))
            self.sh("echo offline > %s" % AUTO_ONLINE)
        cursor = self.cursor()
        self.mark()
        self.vm.hotplug_dimm(0, 512 * MiB)
        new = self.wait_new_blocks(4)
        self.assert_stays_down(new, "disabled")
        self.sh("systemctl enable memonlined && systemctl mask --runtime memonlined")
        self.vm.hotplug_dimm(0, 128 * MiB)
        new = self.wait_new_blocks(5)
        self.assert_stays_down(new, "masked")
        self.sh("systemctl unmask --runtime memonlined && systemctl start memonlined && "
                "systemctl is-active memonlined")
        self.wait_new_online()
        st = self.state()
        self.assert_blocks(st, new, 0, "Movable")
        self.assert_journal(st, cursor, {0: len(new)}, "Movable")
        self.assert_none_offline()
        if self.boot_auto != "offline":
            # It found offline and has nothing to give back: put the
            # kernel's value back under it for the scenarios that follow.
            check(self.saved_auto_online() is None, "memonlined saved %r though it found offline"
                  % self.saved_auto_online())
            self.sh("systemctl stop memonlined && echo %s > %s && systemctl start memonlined"
                    % (self.boot_auto, AUTO_ONLINE))
            self.assert_taken_over(self.boot_auto)

    def assert_stays_down(self, new, how):
        """The hot-add of blocks new did not start the service (disabled or masked): they stay offline."""
        time.sleep(2)
        check(not self.daemon_active(), "a memory hot-add started the %s memonlined.service" % how)
        st = self.state()
        on = sorted(b["block"] for b in st["blocks"] if b["block"] in new and b["state"] == "online")
        check(not on, "blocks came online while memonlined was %s: %s" % (how, on))

    def s_crash_mid_batch(self):
        size = 8 * GiB
        n = size // (128 * MiB)
        cursor = self.cursor()
        self.mark()
        before = int(self.sh("systemctl show -p NRestarts --value memonlined").out.strip() or 0)
        # The killer runs in the guest, armed before the hot-add: at the first
        # new block's online uevent it kills the daemon (a poll of the blocks'
        # states in bash can be slower than a batch that starts as the add ends).
        daemon_pid = self.unit_prop("MainPID")
        check(daemon_pid.isdigit() and daemon_pid != "0", "no MainPID for memonlined: %r" % daemon_pid)
        pid = self.watch_first_online("kill -9 %s" % daemon_pid, n, timeout=120)
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
        if self.boot_auto != "offline":
            # kill -9 left offline; the restarted daemon kept the kernel's value to give back.
            self.assert_taken_over(self.boot_auto)
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
        # status names the refused file and exits 3 (its tables still come, from the built-in defaults)
        st = self.sh("memonlined status --json", check=False)
        check(st.rc == 3 and BROKEN_LINE in st.err and json.loads(st.out).get("nodes"),
              "status with a refused policy file: rc %s, stderr %r" % (st.rc, st.err.strip()[:300]))
        # Leave a valid file for the scenarios after this one.
        self.vm.write_guest_file(CONF, CONF_KERNEL)
        self.sh("memonlined --check-config && systemctl reload memonlined")

    # ------------------------------------------------------------- pmem
    # The pmem boot runs with CONF_PMEM: memonlined converts devdax
    # namespaces itself; the test only uses ndctl, never daxctl.

    def s_setup_pmem(self):
        self.pmem_conf = CONF_PMEM
        self.vm.write_guest_file(CONF, CONF_PMEM)
        self.sh("memonlined --check-config && systemctl restart memonlined && systemctl is-active memonlined")
        self.nrestarts0 = self.nrestarts()
        self.assert_none_offline()

    def nrestarts(self):
        return int(self.sh("systemctl show -p NRestarts --value memonlined").out.strip() or 0)

    def reload_conf(self, text):
        self.vm.write_guest_file(CONF, text)
        self.sh("memonlined --check-config && systemctl reload memonlined && systemctl is-active memonlined")
        self.pmem_conf = text

    def regions(self):
        r = self.sh("cd /sys/bus/nd/devices 2>/dev/null && ls -d region* 2>/dev/null", check=False)
        return set(r.out.split())

    def add_nvdimms(self, sizes, node=2):
        """Hot-add one NVDIMM per size on NODE and give each a fresh label
        area (a new backing file has none). Returns the new region names."""
        before = self.regions()
        for size in sizes:
            self.vm.hotplug_nvdimm(node, size)
        # nullglob and quotes: an unmatched region* taken literally, then
        # matched by the unquoted test once the region appeared, once made
        # a region called "region*" (seen on 6.12).
        script = r"""
shopt -s nullglob
want=%d; before=" %s "
for i in $(seq 120); do
    new=
    for d in /sys/bus/nd/devices/region*; do
        r=${d##*/}; case "$before" in *" $r "*) continue;; esac
        [ -e "$d/mapping0" ] && new="$new $r"
    done
    set -- $new; [ $# -ge $want ] && break
    sleep 0.5
done
[ $# -ge $want ] || { echo "only $# of $want new nvdimm regions appeared" >&2; exit 1; }
for r in "$@"; do
    read -r m < /sys/bus/nd/devices/$r/mapping0
    ndctl disable-region $r >/dev/null && ndctl init-labels -f ${m%%%%,*} >/dev/null &&
        ndctl enable-region $r >/dev/null || exit 1
done
echo "$@"
""" % (len(sizes), " ".join(sorted(before)))
        r = self.vm.guest_exec(["/bin/bash", "-c", script], timeout=240, check=True)
        regs = r.out.split()
        check(len(regs) == len(sizes), "expected %d new regions, got %r" % (len(sizes), regs))
        self.log("nvdimm regions %s" % " ".join(regs))
        return regs

    def create_devdax(self, regions):
        """ndctl create-namespace -m devdax on each region, back to back in
        one guest command. Returns [(namespace, dax device, region id)]."""
        cmds = " && ".join("ndctl create-namespace -m devdax -r %s" % r for r in regions)
        r = self.sh(cmds, timeout=240)
        out = []
        dec = json.JSONDecoder()
        text = r.out.strip()
        while text:
            ns, end = dec.raw_decode(text)
            text = text[end:].strip()
            out.append((ns["dev"], ns["daxregion"]["devices"][0]["chardev"], int(ns["daxregion"]["id"])))
        check(len(out) == len(regions), "create-namespace printed %d namespaces for %d regions"
              % (len(out), len(regions)))
        self.log("created %s" % ", ".join("%s=%s" % (a, b) for a, b, _ in out))
        return out

    def daxctl_dev(self, dev):
        r = self.sh("daxctl list -d %s" % dev, check=False)
        if r.rc != 0 or not r.out.strip():
            return None
        d = json.loads(r.out)
        return d[0] if isinstance(d, list) else d

    def wait_system_ram(self, dev, timeout=180):
        """The daemon converts on the dax add event: wait until daxctl sees
        DEV as system-ram with every memory block online."""
        deadline = time.monotonic() + timeout
        while True:
            d = self.daxctl_dev(dev)
            # daxctl 81 (Debian 13) says -2 for both counts while kmem still
            # adds the blocks (it cannot read them yet, -ENOENT).
            if d and d.get("mode") == "system-ram" and int(d.get("total_memblocks") or 0) > 0 \
                    and d.get("online_memblocks") == d.get("total_memblocks"):
                return d
            if time.monotonic() > deadline:
                raise Fail("%s not converted and onlined by memonlined within %ds: daxctl says %s"
                           % (dev, timeout, json.dumps(d)))
            time.sleep(1)

    def assert_device(self, st, cursor, ns, dev, region, nblocks, node):
        """DEV's blocks and records: one device record, batch/node records
        attributed to DEV."""
        bs = st["block_size"]
        devrecs = [r for r in self.records("device", cursor) if field(r, "MEMONLINE_DEVICE") == dev]
        check(len(devrecs) == 1, "%d device records for %s (want 1)" % (len(devrecs), dev))
        d = devrecs[0]
        want = {"MEMONLINE_NAMESPACE": ns, "MEMONLINE_REGION": str(region), "MEMONLINE_NODE": str(node),
                "MEMONLINE_BLOCKS": str(nblocks), "MEMONLINE_BYTES": str(nblocks * bs)}
        for k, v in want.items():
            check(str(field(d, k)) == v, "device record %s=%s, expected %s: %s" % (k, field(d, k), v, rec_brief(d)))
        usec = {k: int(field(d, k) or -1) for k in ("MEMONLINE_BIND_USEC", "MEMONLINE_ONLINE_USEC",
                                                      "MEMONLINE_TOTAL_USEC")}
        check(usec["MEMONLINE_BIND_USEC"] > 0, "device record without bind time (not converted by memonlined?): %s"
              % rec_brief(d))
        check(0 < usec["MEMONLINE_ONLINE_USEC"] <= usec["MEMONLINE_TOTAL_USEC"],
              "device record timings inconsistent: %s" % rec_brief(d))
        # the total runs from the device's event (or the rescan that found it) and so covers both
        check(usec["MEMONLINE_BIND_USEC"] + usec["MEMONLINE_ONLINE_USEC"] <= usec["MEMONLINE_TOTAL_USEC"],
              "device record bind and online times exceed the total: %s" % rec_brief(d))
        # the batch and node records of this device's pass name it
        mine = 0
        for kind in ("batch", "node"):
            for r in self.records(kind, cursor):
                devs = set((field(r, "MEMONLINE_DEVICE") or "").split(","))
                if dev not in devs:
                    continue
                mine += 1
                check(ns in (field(r, "MEMONLINE_NAMESPACE") or "").split(","),
                      "%s record names %s without MEMONLINE_NAMESPACE=%s: %s" % (kind, dev, ns, rec_brief(r)))
                check(str(region) in (field(r, "MEMONLINE_REGION") or "").split(","),
                      "%s record names %s without MEMONLINE_REGION=%s: %s" % (kind, dev, region, rec_brief(r)))
                if kind == "batch":
                    check(int(field(r, "MEMONLINE_BLOCKS")) == nblocks,
                          "batch record for %s counts %s blocks, device has %d"
                          % (dev, field(r, "MEMONLINE_BLOCKS"), nblocks))
                    check(field(r, "MEMONLINE_TRIGGER") in (None, "dax"),
                          "batch for %s triggered by %s, not the dax event" % (dev, field(r, "MEMONLINE_TRIGGER")))
        check(mine >= 2, "no batch+node records carry MEMONLINE_DEVICE=%s" % dev)
        return d

    def pmem_converted(self, created, cursor, node=2, zone="Movable"):
        """Every (ns, dev, region) in CREATED: converted by the daemon, all
        its blocks online on NODE in ZONE, records right."""
        total = 0
        per_dev = {}
        for ns, dev, region in created:
            info = self.wait_system_ram(dev)
            per_dev[dev] = int(info["total_memblocks"])
            total += per_dev[dev]
            check(info.get("movable", zone == "Movable") == (zone == "Movable"),
                  "daxctl says %s movable=%s, policy zone %s" % (dev, info.get("movable"), zone))
        new = self.wait_new_blocks(total)
        self.wait_new_online()
        st = self.state()
        self.assert_blocks(st, new, node, zone)
        self.assert_journal(st, cursor, {node: total}, zone)
        for ns, dev, region in created:
            d = self.assert_device(st, cursor, ns, dev, region, per_dev[dev], node)
            self.log("%s: %s" % (dev, field(d, "MESSAGE")))
        self.assert_none_offline()
        check(self.nrestarts() == self.nrestarts0, "memonlined was restarted (NRestarts %d -> %d)"
              % (self.nrestarts0, self.nrestarts()))
        return new

    def s_pmem_auto_convert(self):
        regs = self.add_nvdimms([2 * GiB])
        self.assert_tools_agree("with the region labelled, no namespace yet")
        cursor = self.cursor()
        self.mark()
        created = self.create_devdax(regs)
        self.pmem_converted(created, cursor)
        self.assert_tools_agree("after memonlined converted and onlined it")

    def excluded_namespace(self):
        """A devdax namespace that a [device] rule keeps as devdax; made once."""
        if getattr(self, "kept", None):
            return self.kept
        regs = self.add_nvdimms([1 * GiB])
        # The namespace create-namespace makes is the region's seed namespace.
        seed = self.sh("cat /sys/bus/nd/devices/%s/namespace_seed" % regs[0]).out.strip()
        self.reload_conf(self.pmem_conf + KEEP_RULE % seed)
        cursor = self.cursor()
        self.mark()
        created = self.create_devdax(regs)
        check(created[0][0] == seed, "create-namespace made %s, the seed was %s" % (created[0][0], seed))
        self.kept = (created[0], cursor)
        return self.kept

    def s_pmem_excluded(self):
        (ns, dev, region), cursor = self.excluded_namespace()
        # The daemon handles the dax event at once; give it the time a
        # conversion of this size would take under TCG and then some.
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            g = self.vm.guest_exec([GUEST_LIB + "/journal-records", "--grep", "%s: not converting" % dev, cursor],
                                   timeout=60)
            if g.rc == 0:
                break
            time.sleep(1)
        check(g.rc == 0, "memonlined did not log that it leaves %s alone" % dev)
        self.log(g.out.strip())
        time.sleep(3)
        d = self.daxctl_dev(dev)
        check(d and d.get("mode") == "devdax", "%s is no longer devdax: %s" % (dev, json.dumps(d)))
        new = self.sh(GUEST_LIB + "/wait-blocks --list").out.split()
        check(not new, "memory blocks appeared for an excluded device: %s" % " ".join(new[:20]))
        devrecs = [r for r in self.records("all", cursor) if dev in (field(r, "MEMONLINE_DEVICE") or "").split(",")]
        check(not devrecs, "records name the excluded %s: %s" % (dev, rec_brief(devrecs[0]) if devrecs else ""))
        r = self.sh("memonlined --dry-run", check=False)
        line = [x for x in r.out.splitlines() if x.startswith("device=%s " % dev)]
        check(line and "action=skip" in line[0], "--dry-run does not skip %s: %r" % (dev, line or r.out[-400:]))
        check("keep" in line[0], "--dry-run reason does not name the [device keep] rule: %s" % line[0])
        self.assert_none_offline()
        self.assert_tools_agree("with the kept devdax namespace")

    # ---------------------------------------------------------- bad media
    def region_badblocks(self, region):
        return self.sh("cat /sys/bus/nd/devices/%s/badblocks" % region).out.split("\n")

    def poison(self, region):
        """An uncorrected memory error in the middle of REGION, through QEMU's
        MCE injection: QEMU's NFIT has no ARS, so ndctl inject-error cannot
        make one, but the guest's nfit driver takes an MCE's address into
        its region's badblocks (nfit_handle_mce()). Returns the page's
        address and the list's line for it."""
        start = int(self.sh("cat /sys/bus/nd/devices/%s/resource" % region).out.strip(), 16)
        size = int(self.sh("cat /sys/bus/nd/devices/%s/size" % region).out.strip())
        addr = start + size // 2 // 4096 * 4096
        check(self.region_badblocks(region) == [""], "%s lists bad blocks before the test made any: %r"
              % (region, self.region_badblocks(region)))
        out = self.vm.hmp(MCE_SRAO % addr)
        check(not out or not out.strip(), "QEMU refused the MCE: %s" % (out or "").strip())
        want = "%d 8" % ((addr - start) // 512)
        deadline = time.monotonic() + 60
        while self.region_badblocks(region)[0] != want:
            check(time.monotonic() < deadline, "%s does not list the injected error %s: %r"
                  % (region, want, self.region_badblocks(region)))
            time.sleep(1)
        self.log("%s: bad blocks %s (address %#x)" % (region, want, addr))
        return addr, want

    def bad_media_record(self, dev, cursor, mode, timeout=60):
        deadline = time.monotonic() + timeout
        while True:
            recs = [r for r in self.records("bad-media", cursor)
                    if field(r, "MEMONLINE_DEVICE") == dev and field(r, "MEMONLINE_MODE") == mode]
            if recs:
                return recs
            check(time.monotonic() < deadline, "no bad-media record for %s (%s) within %ds" % (dev, mode, timeout))
            time.sleep(1)

    def status_dax(self, dev):
        st = json.loads(self.sh("memonlined status --json --tables dax", check=False).out)
        return next((d for d in st.get("dax", []) if d.get("device") == dev), None)

    def s_pmem_bad_media(self):
        """A namespace made on media with a known bad block: memonlined does
        not convert it, nor online its blocks when an admin converts it with
        --no-online, and says so (record, status); a [device] rule with
        allow_badblocks = yes lets them come online."""
        regs = self.add_nvdimms([1 * GiB])
        addr, line = self.poison(regs[0])
        cursor = self.cursor()
        self.mark()
        (ns, dev, region), = self.create_devdax(regs)
        recs = self.bad_media_record(dev, cursor, "devdax")
        check(len(recs) == 1, "%d bad-media records for %s" % (len(recs), dev))
        want = {"MEMONLINE_NAMESPACE": ns, "MEMONLINE_REGION": str(region), "MEMONLINE_MEDIA": "refused",
                "MEMONLINE_BADBLOCKS": "8", "MEMONLINE_BAD_ADDRESS": "%#x" % addr, "MEMONLINE_BLOCKS": "0"}
        for k, v in want.items():
            check(field(recs[0], k) == v, "bad-media record %s=%s, expected %s: %s"
                  % (k, field(recs[0], k), v, rec_brief(recs[0])))
        self.log(field(recs[0], "MESSAGE"))
        time.sleep(3)
        d = self.daxctl_dev(dev)
        check(d and d.get("mode") == "devdax", "%s with a bad block was converted: %s" % (dev, json.dumps(d)))
        new = self.sh(GUEST_LIB + "/wait-blocks --list").out.split()
        check(not new, "memory blocks appeared for %s: %s" % (dev, " ".join(new[:20])))
        s = self.status_dax(dev)
        check(s and s.get("state") == "refused" and s.get("badblocks") == "8",
              "memonlined status does not show %s refused with 8 bad sectors: %s" % (dev, s))
        dry = [x for x in self.sh("memonlined --dry-run", check=False).out.splitlines()
               if x.startswith("device=%s " % dev)]
        check(dry and "action=skip" in dry[0] and dry[0].endswith(" badblocks=8"),
              "--dry-run does not refuse %s: %r" % (dev, dry))

        # The admin converts it, leaving the onlining to memonlined: it does not.
        cursor = self.cursor()
        self.sh("daxctl reconfigure-device --mode=system-ram --no-online %s" % dev, timeout=240)
        d = self.daxctl_dev(dev)
        n = int(d["total_memblocks"])
        new = self.wait_new_blocks(n)
        recs = self.bad_media_record(dev, cursor, "system-ram")
        check(field(recs[0], "MEMONLINE_BLOCKS") == str(n) and field(recs[0], "MEMONLINE_MEDIA") == "refused",
              "bad-media record for %s's %d blocks: %s" % (dev, n, rec_brief(recs[0])))
        time.sleep(5)
        st = self.state()
        online = [b["block"] for b in st["blocks"] if b["block"] in new and b["state"] == "online"]
        check(not online, "blocks of %s came online: %s" % (dev, " ".join(online)))
        check(not self.records("failure", cursor), "failure records for a refusal")
        s = self.status_dax(dev)
        check(s and s.get("state") == "refused", "memonlined status does not show %s refused: %s" % (dev, s))

        # The admin accepts the bad block: a reload brings them online.
        conf = self.pmem_conf
        cursor = self.cursor()
        self.reload_conf(conf + ALLOW_BAD_RULE % ns)
        self.wait_new_online()
        st = self.state()
        self.assert_blocks(st, new, 2, "Movable")
        self.assert_journal(st, cursor, {2: n}, "Movable")
        self.reload_conf(conf)
        self.assert_none_offline()
        check(self.nrestarts() == self.nrestarts0, "memonlined was restarted")

    # ----------------------------------------------------- memmap_on_memory
    def node_meminfo(self):
        """{node: {"MemTotal": kB, "MemFree": kB}} from nodeN/meminfo."""
        r = self.sh("grep -H -E 'MemTotal|MemFree' /sys/devices/system/node/node*/meminfo")
        out = {}
        for line in r.out.splitlines():
            # .../node2/meminfo:Node 2 MemTotal:  4128768 kB
            parts = line.split(":", 1)[1].split()
            out.setdefault(int(parts[1]), {})[parts[2].rstrip(":")] = int(parts[3])
        return out

    def memmap_attr(self, dev):
        r = self.sh("cat /sys/bus/dax/devices/%s/memmap_on_memory" % dev, check=False)
        return r.out.strip() if r.rc == 0 else None

    def memmap_convert(self, size, conf_tail=MEMMAP_YES):
        """Under the pmem policy plus CONF_TAIL, hot-add a SIZE NVDIMM on the
        CPU-less node 2, create a devdax namespace and let memonlined convert
        and online it. Returns (dev, device record, new blocks, node meminfo
        before, after, block size)."""
        self.reload_conf(CONF_PMEM + conf_tail)
        regs = self.add_nvdimms([size])
        before = self.node_meminfo()
        cursor = self.cursor()
        self.mark()
        created = self.create_devdax(regs)
        new = self.pmem_converted(created, cursor)
        after = self.node_meminfo()
        dev = created[0][1]
        recs = [r for r in self.records("device", cursor) if field(r, "MEMONLINE_DEVICE") == dev]
        check(len(recs) == 1, "%d device records for %s" % (len(recs), dev))
        bs = int(self.sh("cat /sys/devices/system/memory/block_size_bytes").out.strip(), 16)
        return dev, recs[0], new, before, after, bs, cursor

    def node2_added_kb(self, before, after):
        return after.get(2, {}).get("MemTotal", 0) - before.get(2, {}).get("MemTotal", 0)

    def s_pmem_memmap_unavailable(self):
        """memmap_on_memory = yes on the distribution's command line: 6.12's
        switch is off, 6.1 has no per-device attribute. Converted and onlined
        all the same, with the memmap in ordinary memory; one warning; the
        record says no (unsupported on 6.1) and why."""
        param = self.sh("cat %s 2>/dev/null || echo absent" % MEMMAP_PARAM).out.strip()
        self.log("memory_hotplug.memmap_on_memory reads %s" % param)
        check(param in ("N", "absent"), "the kernel's switch reads %s on the default command line" % param)
        dev, rec, new, before, after, bs, cursor = self.memmap_convert(GiB)
        attr = self.memmap_attr(dev)
        want = "unsupported" if attr is None else "no"
        got = field(rec, "MEMONLINE_MEMMAP_ON_MEMORY")
        check(got == want, "device record MEMONLINE_MEMMAP_ON_MEMORY=%s, expected %s (attribute %s): %s"
              % (got, want, attr, rec_brief(rec)))
        why = field(rec, "MEMONLINE_MEMMAP_REASON") or ""
        check(("Linux 6.8" if attr is None else "memory_hotplug.memmap_on_memory=1") in why,
              "device record does not say why: %s" % rec_brief(rec))
        check(attr in (None, "0"), "%s memmap_on_memory reads %s: memonlined wrote it with the switch off"
              % (dev, attr))
        g = self.vm.guest_exec([GUEST_LIB + "/journal-records", "--grep", "not as the policy asks", cursor],
                               timeout=60)
        check(g.rc == 0 and dev in g.out, "no warning that %s gets no memmap_on_memory" % dev)
        added = self.node2_added_kb(before, after)
        check(added == len(new) * bs // 1024, "node 2 MemTotal grew by %d kB for %d blocks of %d kB: the memmap "
              "is not in ordinary memory?" % (added, len(new), bs // 1024))
        self.reload_conf(CONF_PMEM)

    def s_setup_memmap(self):
        param = self.sh("cat %s" % MEMMAP_PARAM).out.strip()
        check(param in ("Y", "force"), "booted with %s, the kernel's switch reads %s" % (MEMMAP_APPEND, param))
        self.s_setup_pmem()

    def s_pmem_memmap_on_device(self):
        """memmap_on_memory = yes with the kernel's switch on (6.12): the
        attribute was written before the bind, every block came online, and
        each block's memmap (1/64 of it) sits on the device, not in node 2's
        new MemTotal."""
        dev, rec, new, before, after, bs, _ = self.memmap_convert(2 * GiB)
        attr = self.memmap_attr(dev)
        check(attr == "1", "%s memmap_on_memory reads %s after the conversion" % (dev, attr))
        got = field(rec, "MEMONLINE_MEMMAP_ON_MEMORY")
        check(got == "yes", "device record MEMONLINE_MEMMAP_ON_MEMORY=%s: %s" % (got, rec_brief(rec)))
        check(field(rec, "MEMONLINE_MEMMAP_REASON") is None, "a reason although it is as asked: %s"
              % rec_brief(rec))
        added = self.node2_added_kb(before, after)
        memmap_kb = len(new) * (bs // 64) // 1024
        self.log("node 2 MemTotal +%d kB for %d blocks (memmap %d kB on the device)" % (added, len(new), memmap_kb))
        check(added == len(new) * bs // 1024 - memmap_kb,
              "node 2 MemTotal grew by %d kB for %d blocks: expected %d kB (their memmap, %d kB, on the device)"
              % (added, len(new), len(new) * bs // 1024 - memmap_kb, memmap_kb))

    def s_pmem_two_at_once(self):
        regs = self.add_nvdimms([1 * GiB, 1 * GiB])
        cursor = self.cursor()
        self.mark()
        created = self.create_devdax(regs)
        check(len({d for _, d, _ in created}) == 2, "two namespaces, one dax device: %r" % created)
        self.pmem_converted(created, cursor)

    def s_pmem_destroy_unconverted(self):
        (ns, dev, region), _ = self.excluded_namespace()
        before = self.nrestarts()
        pid = self.sh("systemctl show -p MainPID --value memonlined").out.strip()
        cursor = self.cursor()
        self.sh("ndctl destroy-namespace -f %s" % ns, timeout=120)
        check(self.daxctl_dev(dev) is None, "%s still listed after destroying %s" % (dev, ns))
        time.sleep(3)
        check(self.daemon_active(), "memonlined not active after %s was destroyed" % ns)
        check(self.nrestarts() == before, "memonlined restarted after the destroy (NRestarts %d -> %d)"
              % (before, self.nrestarts()))
        pid2 = self.sh("systemctl show -p MainPID --value memonlined").out.strip()
        check(pid == pid2, "memonlined's pid changed %s -> %s" % (pid, pid2))
        fails = self.records("failure", cursor)
        check(not fails, "failure records after the destroy: %s" % rec_brief(fails[0]) if fails else "")
        self.assert_tools_agree("after destroy-namespace")
        # still working: a plain DIMM goes to the default zone (online_kernel here)
        self.hotadd_and_check(0, 512 * MiB, "Normal")
        check(self.nrestarts() == before, "memonlined restarted (NRestarts %d -> %d)" % (before, self.nrestarts()))

    def s_report_status(self):
        """After the hot-adds: `memonlined report --json-lines` lists this boot's
        batches with the journal's block and byte counts, the table renders,
        and `memonlined status` shows no offline block and a running daemon."""
        batches = self.records("batch", "")
        check(batches, "no batch records in this boot's journal")
        want = {}
        for b in batches:
            key = (int(field(b, "_PID")), int(field(b, "MEMONLINE_BATCH")))
            want[key] = (int(field(b, "MEMONLINE_BLOCKS")), int(field(b, "MEMONLINE_BYTES")))
        r = self.sh("memonlined report --json-lines --boot 0", timeout=120)
        objs = [json.loads(line) for line in r.out.splitlines() if line.strip()]
        got = {(o["pid"], o["batch"]): (o["blocks"], o["bytes"]) for o in objs if o.get("type") == "batch"}
        check(got == want, "report --json-lines batches differ from the journal: missing %s, extra %s, differing %s"
              % (sorted(set(want) - set(got))[:5], sorted(set(got) - set(want))[:5],
                 [(k, got[k], want[k]) for k in set(got) & set(want) if got[k] != want[k]][:5]))
        for o in objs:
            if o.get("type") == "batch" and o["blocks"]:
                check(o.get("nodes"), "report --json-lines batch without node children: %s" % o)
        table = self.sh("memonlined report --boot 0 --no-color", timeout=120).out
        check(str(sum(v[0] for v in want.values())) in table or "Blocks" in table or "BLOCKS" in table,
              "report table looks empty:\n%s" % table[:800])
        st = json.loads(self.sh("memonlined status --json").out)
        offline = sum(n["offline_blocks"] for n in st["nodes"])
        check(offline == 0, "memonlined status counts %d offline blocks" % offline)
        check(st["daemon"].get("active_state") == "active",
              "memonlined status does not see the daemon active: %s" % st["daemon"])

    # -------------------------------------------------------------- CXL
    # The CXL boot: q35 with two CXL Type-3 devices with volatile memory
    # (mem0, mem1) behind one host bridge and one fixed memory window, and
    # the kernel's default command line. `cxl create-region -t ram` alone
    # must end in online memory: since 6.3 the region's dax device goes to
    # kmem, which adds the blocks on the window's own CPU-less node.

    def s_setup_cxl(self):
        self.check_platform()
        self.vm.write_guest_file(CONF, CONF_MOVABLE)
        self.sh("memonlined --check-config && systemctl restart memonlined && systemctl is-active memonlined")
        self.assert_none_offline()
        r = self.sh("for i in $(seq 60); do [ $(cxl list -M | jq length) -ge %d ] && break; sleep 1; done; "
                    "cxl list -M" % len(self.vm.cxl), timeout=120)
        mems = sorted(m["memdev"] for m in json.loads(r.out or "[]"))
        check(len(mems) == len(self.vm.cxl), "cxl list -M shows %s, QEMU has %d type-3 devices"
              % (mems, len(self.vm.cxl)))
        self.assert_tools_agree("with the memdevs and no region")
        self.nrestarts0 = self.nrestarts()
        self.pid0 = self.main_pid()
        self.cxl_regions = {}       # memdev -> (region, dax device, node, blocks)

    def main_pid(self):
        return self.sh("systemctl show -p MainPID --value memonlined").out.strip()

    def cxl_region_blocks(self, region):
        """dax device, node and memory blocks of a RAM region, through sysfs."""
        script = r"""
shopt -s nullglob
r=/sys/bus/cxl/devices/%s
for d in $r/dax_region*/dax*; do [ -e $d/target_node ] && dax=${d##*/}; done
[ -n "$dax" ] || { echo "no dax device under $r" >&2; exit 1; }
read -r node < /sys/bus/dax/devices/$dax/target_node
read -r start < $r/resource; read -r size < $r/size
read -r bs < /sys/devices/system/memory/block_size_bytes
first=$(( start / 16#$bs )); n=$(( size / 16#$bs ))
echo "$dax $node"
for ((i = first; i < first + n; i++)); do echo memory$i; done
""" % region
        r = self.vm.guest_exec(["/bin/bash", "-c", script], timeout=60)
        check(r.rc == 0, "cannot map %s to its blocks: %s" % (region, r.err.strip()))
        lines = r.out.split("\n")
        dax, node = lines[0].split()
        return dax, int(node), [b for b in lines[1:] if b]

    def status_cxl(self):
        """memonlined status's CXL region table, by region."""
        r = self.sh("memonlined status --json --tables cxl", check=False)
        check(r.rc == 0, "memonlined status --tables cxl exited %d: %s" % (r.rc, (r.err or r.out).strip()[:300]))
        return {x["region"]: x for x in json.loads(r.out)["cxl"]}

    def create_cxl_region(self, memdev):
        cursor = self.cursor()
        self.mark()
        boot_nodes = set(self.state()["nodes"])
        r = self.sh("cxl create-region -m -d decoder0.0 -w 1 -t ram %s" % memdev, timeout=240)
        info = json.loads(r.out)
        region = info["region"]
        check(info.get("type") == "ram" and info.get("decode_state") == "commit",
              "%s: %s" % (region, r.out.strip()[:400]))
        dax, node, blocks = self.cxl_region_blocks(region)
        self.log("%s on %s: %s on node %d, %d blocks" % (region, memdev, dax, node, len(blocks)))
        new = self.wait_new_blocks(len(blocks))
        check(sorted(new) == sorted(blocks), "%s added blocks %s, its range holds %s"
              % (region, new[:6], blocks[:6]))
        self.wait_new_online()
        st = self.state()
        check(not parse_cpulist(st["nodes"][str(node)]["cpulist"]), "CXL node %d has CPUs" % node)
        self.assert_blocks(st, new, node, "Movable")
        self.assert_journal(st, cursor, {node: len(new)}, "Movable", device=dax)
        self.assert_none_offline()
        row = self.status_cxl().get(region)
        want = ("ram", "online", dax, memdev)
        check(row is not None and (row["mode"], row["state"], row["dax"], row["memdevs"]) == want,
              "memonlined status shows %s as %s" % (region, row))
        self.assert_tools_agree("after %s on %s came online" % (region, memdev))
        self.cxl_regions[memdev] = (region, dax, node, new, boot_nodes)
        return region, dax, node, new

    def assert_daemon_steady(self, cursor):
        check(self.daemon_active(), "memonlined is not active")
        check(self.nrestarts() == self.nrestarts0, "memonlined was restarted (NRestarts %d -> %d)"
              % (self.nrestarts0, self.nrestarts()))
        check(self.main_pid() == self.pid0, "memonlined's pid changed %s -> %s" % (self.pid0, self.main_pid()))
        fails = self.records("failure", cursor)
        check(not fails, "failure records: %s" % (rec_brief(fails[0]) if fails else ""))

    def s_cxl_ram_region(self):
        region, dax, node, new = self.create_cxl_region("mem0")
        check(str(node) not in self.cxl_regions["mem0"][4], "node %d existed before %s" % (node, region))
        if self.boot_auto != "offline":
            self.assert_taken_over(self.boot_auto)

    def s_cxl_second_region(self):
        region, dax, node, new = self.create_cxl_region("mem1")
        if "mem0" in self.cxl_regions:
            first = self.cxl_regions["mem0"]
            check(node == first[2], "%s is on node %d, %s on node %d: one window, one node"
                  % (region, node, first[0], first[2]))
            st = self.state()
            both = set(first[3]) | set(new)
            on = [b for b in st["blocks"] if b["node"] == node]
            check({b["block"] for b in on} == both and all(b["state"] == "online" for b in on),
                  "node %d holds %s, expected %d blocks all online" % (node, on[:4], len(both)))

    def s_cxl_destroy_region(self):
        """Offline and destroy the newest region. Decoders of a port commit
        in address order, so CXL regions come down in the reverse order of
        their creation: after destroying region0 under a live region1,
        `cxl create-region` on mem0 fails ("failed to set target0")."""
        if not self.cxl_regions:
            self.create_cxl_region("mem0")
        memdev = list(self.cxl_regions)[-1]
        region, dax, node, blocks, _ = self.cxl_regions.pop(memdev)
        cursor = self.cursor()
        self.sh("daxctl offline-memory %s" % dax, timeout=240)
        st = self.state()
        still = [b["block"] for b in st["blocks"] if b["block"] in blocks and b["state"] == "online"]
        check(not still, "daxctl offline-memory left %s online" % still[:6])
        time.sleep(2)   # memonlined sees the offline events; it must not online them again
        st = self.state()
        back = [b["block"] for b in st["blocks"] if b["block"] in blocks and b["state"] == "online"]
        check(not back, "offlined blocks came back online: %s" % back[:6])
        self.assert_tools_agree("after daxctl offline-memory %s" % dax)
        r = self.sh("cxl destroy-region -f %s" % region, check=False, timeout=240)
        check(r.rc == 0, "cxl destroy-region %s failed: %s" % (region, (r.out + r.err).strip()[:400]))
        left = self.sh("ls -d /sys/bus/cxl/devices/%s 2>/dev/null; ls /sys/bus/dax/devices/ | grep -x %s; "
                       "cd /sys/devices/system/memory && ls -d %s 2>/dev/null" % (region, dax, " ".join(blocks)),
                       check=False).out.split()
        check(not left, "still there after destroy-region: %s" % left[:6])
        check(region not in self.status_cxl(), "memonlined status still lists %s" % region)
        self.assert_tools_agree("after %s was destroyed" % region)
        self.assert_daemon_steady(cursor)
        self.assert_none_offline()
        self.destroyed = memdev

    def s_cxl_region_again(self):
        """A new region on the memdev of the destroyed one: onlined like the first."""
        memdev = getattr(self, "destroyed", None)
        if memdev is None:
            raise Fail("needs cxl-destroy-region first")
        cursor = self.cursor()
        self.create_cxl_region(memdev)
        self.assert_daemon_steady(cursor)

    def uevent_groups(self):
        """Multicast groups of memonlined's uevent sockets: 1 is the kernel's, 2 udev's."""
        script = r"""
pid=$(systemctl show -p MainPID --value memonlined)
inodes=$(for fd in /proc/$pid/fd/*; do readlink "$fd"; done | sed -n 's/^socket:\[\([0-9]*\)\]$/\1/p')
awk -v want=" $(echo $inodes) " 'NR > 1 && $2 == 15 && index(want, " " $NF " ") { print $4 }' /proc/net/netlink
"""
        r = self.vm.guest_exec(["/bin/bash", "-c", script], timeout=60)
        check(r.rc == 0, "cannot read memonlined's netlink sockets: %s" % r.err.strip())
        return sorted(int(g, 16) for g in r.out.split())

    def s_cxl_kernel_events(self):
        """event_source = kernel, applied by a reload: memonlined swaps its
        udev socket for the kernel's, onlines a new region from raw uevents,
        and goes back to udev on the next reload."""
        groups = self.uevent_groups()
        check(groups == [2], "memonlined listens on groups %s, not udev's (2)" % groups)
        self.s_cxl_destroy_region()
        memdev = self.destroyed
        cursor = self.cursor()
        self.vm.write_guest_file(CONF, CONF_MOVABLE + "\n[daemon]\nevent_source = kernel\n")
        self.sh("memonlined --check-config && systemctl reload memonlined && systemctl is-active memonlined")
        groups = self.uevent_groups()
        check(groups == [1], "after the reload memonlined listens on groups %s, not the kernel's (1)" % groups)
        said = self.sh("journalctl -q -u memonlined --after-cursor '%s' -o cat --grep 'listening for kernel events'"
                       % cursor, check=False).out
        check("listening for kernel events" in said, "no 'listening for kernel events' in the journal")
        self.create_cxl_region(memdev)
        self.assert_daemon_steady(cursor)
        self.vm.write_guest_file(CONF, CONF_MOVABLE)
        self.sh("systemctl reload memonlined && systemctl is-active memonlined")
        groups = self.uevent_groups()
        check(groups == [2], "back on the shipped source memonlined listens on groups %s" % groups)

    # ------------------------------------------------------------------ run
    SCENARIOS = [
        ("auto-online-takeover", "s_takeover"),
        ("dimm-cpu-node", "s_dimm_cpu_node"),
        ("dimm-cpuless-node", "s_dimm_cpuless_node"),
        ("udev-starts-daemon", "s_udev_starts_daemon"),
        ("virtio-mem", "s_virtio_mem"),
    ] + PressureScenarios.PRESSURE_SCENARIOS + [
        ("nvdimm-devdax-kmem", "s_nvdimm_devdax_kmem"),
        ("coldplug", "s_coldplug"),
        ("crash-mid-batch", "s_crash_mid_batch"),
        ("burst-16g", "s_burst"),
        ("reload", "s_reload"),
        ("report-and-status", "s_report_status"),
    ]
    # Second boot, CONF_PMEM: memonlined converts devdax namespaces itself.
    PMEM_SCENARIOS = [
        ("pmem-auto-convert", "s_pmem_auto_convert"),
        ("pmem-excluded", "s_pmem_excluded"),
        ("pmem-two-at-once", "s_pmem_two_at_once"),
        ("pmem-destroy-unconverted", "s_pmem_destroy_unconverted"),
        ("pmem-memmap-unavailable", "s_pmem_memmap_unavailable"),
        ("pmem-bad-media", "s_pmem_bad_media"),
    ]
    # Booted with memory_hotplug.memmap_on_memory=1 (6.12 only: 6.1 has no
    # per-device attribute, pmem-memmap-unavailable covers it).
    MEMMAP_SCENARIOS = [
        ("pmem-memmap-on-device", "s_pmem_memmap_on_device"),
    ]
    # Third boot, guests with the cxl tool only: CXL Type-3 memory on q35.
    CXL_SCENARIOS = [
        ("cxl-ram-region", "s_cxl_ram_region"),
        ("cxl-second-region", "s_cxl_second_region"),
        ("cxl-destroy-region", "s_cxl_destroy_region"),
        ("cxl-region-again", "s_cxl_region_again"),
        ("cxl-kernel-events", "s_cxl_kernel_events"),
    ]
    CXL_DEVICES = [512 * MiB, 512 * MiB]
    # (boot name, setup method, scenarios, VM options): one VM each, in this order.
    BOOTS = [
        ("main", "s_setup", SCENARIOS, {}),
        ("pmem", "s_setup_pmem", PMEM_SCENARIOS, {}),
        ("cxl", "s_setup_cxl", CXL_SCENARIOS, {"cxl": CXL_DEVICES, "virtio_mem_size": 0}),
        ("memmap", "s_setup_memmap", MEMMAP_SCENARIOS, {"extra_append": MEMMAP_APPEND}),
        ("faults", "s_setup_faults", FaultScenarios.FAULT_SCENARIOS, FaultScenarios.VM_ARGS),
        ("zones", "s_setup_zones", ZoneScenarios.ZONE_SCENARIOS, {}),
    ]

    @classmethod
    def all_scenarios(cls):
        return [s for _, _, group, _ in cls.BOOTS for s in group]

    def label(self, name):
        return "%s/%s" % (self.tag, name)

    def selected(self, name, only):
        return not only or name in only or self.label(name) in only

    def record(self, name, ok, reason=""):
        self.results.append((self.label(name), ok, reason))
        print("PASS %s" % self.label(name) if ok else "FAIL %s: %s" % (self.label(name), reason), flush=True)

    def run(self, only=None, scenarios=None, setup="s_setup"):
        scenarios = self.SCENARIOS if scenarios is None else scenarios
        try:
            getattr(self, setup)()
        except Exception as e:  # noqa: BLE001
            self.fail_all("setup", e, only, scenarios)
            return
        for name, meth in scenarios:
            if not self.selected(name, only):
                continue
            t = time.monotonic()
            try:
                getattr(self, meth)()
                self.record(name, True)
            except Exception as e:  # noqa: BLE001
                self.record(name, False, str(e).splitlines()[0] if str(e) else type(e).__name__)
                self.dump(self.label(name), e)
                if not self.vm.alive():
                    self.fail_rest(name, only, "qemu died", scenarios)
                    return
            self.timings[self.label(name)] = time.monotonic() - t
            self.log("%s took %.1fs" % (self.label(name), self.timings[self.label(name)]))

    def dump(self, name, e):
        print("==== %s failed ====" % name, file=sys.stderr)
        if isinstance(e, Fail):
            print("assertion: %s" % e, file=sys.stderr)
        else:
            traceback.print_exception(type(e), e, e.__traceback__, file=sys.stderr)
        if self.vm is not None and self.vm.alive():
            print(self.vm.diagnostics(), file=sys.stderr)
        elif self.vm is not None:
            print(self.vm.serial_tail(), file=sys.stderr)
        sys.stderr.flush()

    def fail_all(self, what, e, only, scenarios=None):
        reason = "%s: %s" % (what, str(e).splitlines()[0] if str(e) else type(e).__name__)
        self.dump("%s %s" % (self.tag, what), e)
        for name, _ in self.SCENARIOS if scenarios is None else scenarios:
            if self.selected(name, only):
                self.record(name, False, reason)

    def fail_rest(self, after, only, reason, scenarios=None):
        started = False
        for name, _ in self.SCENARIOS if scenarios is None else scenarios:
            if started and self.selected(name, only):
                self.record(name, False, reason)
            if name == after:
                started = True


def st_zone_of(st, block):
    return next((b["zone"] for b in st["blocks"] if b["block"] == block), None)


def rec_brief(rec):
    return " ".join("%s=%s" % (k, field(rec, k)) for k in sorted(rec)
                    if k.startswith("MEMONLINE_") or k in ("MESSAGE", "MESSAGE_ID"))


def run_boot(image_dir, workdir, tag, boot, setup, scenarios, vm_opts, only, verbose, results, timings):
    """One VM for one group of scenarios; appends to RESULTS and TIMINGS."""
    vm = None
    suite = Suite(None, verbose=verbose)
    suite.tag = tag
    try:
        vm = VM(image_dir, workdir=workdir, **vm_opts)
        if not vm.has_project:
            print("warning: image built with --no-project: memonlined is not installed",
                  file=sys.stderr)
        suite = Suite(vm, verbose=verbose)
        suite.tag = tag
        vm.boot()
        suite.log("%s %s boot %.1fs%s" % (tag, boot, vm.boot_seconds,
                                          " after %d stalled or aborted boot(s)" % vm.boot_retries
                                          if vm.boot_retries else ""))
        timings["%s/boot:%s" % (tag, boot)] = vm.boot_seconds
        suite.run(only, scenarios, setup)
    except Exception as e:  # noqa: BLE001
        suite.fail_all("boot", e, only, scenarios)
    finally:
        if vm is not None:
            vm.shutdown()
            vm.close()
    results.extend(suite.results)
    timings.update(suite.timings)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--image-dir", action="append", default=[],
                    help="an image built by build-image.sh; repeat for several kernels")
    ap.add_argument("--only", default="", help="comma-separated scenario names (NAME or KERNEL/NAME)")
    ap.add_argument("--keep", action="store_true", help="keep the VM work dirs (serial log, qemu log)")
    ap.add_argument("-v", "--verbose", action="store_true")
    ap.add_argument("--list", action="store_true")
    a = ap.parse_args()
    if a.list:
        for name, _ in Suite.all_scenarios():
            print(name)
        return 0
    image_dirs = a.image_dir or [DEFAULT_IMAGE_DIR]
    envs = [image_env(d) for d in image_dirs]
    tags = [kernel_tag(e.get("KVER")) for e in envs]
    only = set(x for x in a.only.split(",") if x)
    names = {n for n, _ in Suite.all_scenarios()}
    unknown = {x for x in only if x not in names and x.split("/", 1)[-1] not in names}
    if unknown:
        ap.error("unknown scenario(s): %s" % ", ".join(sorted(unknown)))
    t0 = time.monotonic()
    results, timings, kept = [], {}, []
    for image_dir, env, tag in zip(image_dirs, envs, tags):
        for boot, setup, scenarios, vm_opts in Suite.BOOTS:
            chosen = [n for n, _ in scenarios if not only or n in only or "%s/%s" % (tag, n) in only]
            if not chosen:
                continue
            if boot in ("pmem", "faults", "zones", "memmap") and env.get("PROJECT") == "stub":
                # the bash stub only onlines blocks; it converts no dax device
                for n in chosen:
                    print("SKIP %s/%s: the stub daemon has no dax conversion or fault handling" % (tag, n))
                continue
            one_kernel = {"faults": FAULTS_KERNEL, "zones": ZONES_KERNEL, "memmap": MEMMAP_KERNEL}.get(boot)
            if one_kernel and tag != one_kernel and not any("%s/%s" % (tag, n) in only for n in chosen):
                # The daemon's own logic, not the kernel's: one kernel each keeps
                # CI in its time budget.
                print("%s: %s scenarios run on the %s guest" % (tag, boot, one_kernel), file=sys.stderr)
                continue
            if boot == "cxl" and env.get("CXL") != "yes":
                # Debian 12's 6.1 cannot create CXL RAM regions (6.3+), nor
                # QEMU 7.2 emulate them: no CXL boot on that guest.
                print("%s: no CXL boot: the guest has no CXL RAM region support" % tag, file=sys.stderr)
                if only and any("%s/%s" % (tag, n) in only for n in chosen):
                    for n in chosen:
                        print("FAIL %s/%s: this guest has no CXL RAM region support" % (tag, n))
                        results.append(("%s/%s" % (tag, n), False, "no CXL"))
                continue
            workdir = tempfile.mkdtemp(prefix="memonlined-vm-%s-%s-" % (tag, boot)) if a.keep else None
            if workdir:
                kept.append(workdir)
            run_boot(image_dir, workdir, tag, boot, setup, scenarios, vm_opts, only, a.verbose, results, timings)
    for w in kept:
        print("logs kept in %s" % w, file=sys.stderr)
    passed = sum(1 for r in results if r[1])
    failed = len(results) - passed
    t = ["%s=%.0fs" % (k, v) for k, v in timings.items()]
    print("timings: total=%.0fs %s" % (time.monotonic() - t0, " ".join(t)), file=sys.stderr)
    print("%d passed, %d failed" % (passed, failed))
    return 1 if failed or passed == 0 else 0


if __name__ == "__main__":
    sys.exit(main())
