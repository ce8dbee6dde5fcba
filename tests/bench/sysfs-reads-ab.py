#!/usr/bin/env python3
"""Two builds of tests/bench/sysfs-reads in one guest, in turns.

Usage: sysfs-reads-ab.py --image-dir DIR --old BIN --new BIN --out FILE.jsonl
                         [--rounds N] [--blocks B] [--lock FILE]
       sysfs-reads-ab.py --summarize FILE.jsonl

Boots one fresh guest of DIR (a test image, tests/vm/build-image.sh),
hot-adds one DIMM of B blocks (default 512) on node 0 and waits until
the daemon has onlined it all and the guest is quiet (20 s), then runs
both binaries N times each (default 20) in the order old, new, new, old,
old, new... so that neither always runs first. Each run times every read
of a batch's preparation once (sysfs-reads' own lines). One JSON line
per run: arm, round, and {read: µs}.

--summarize prints, per read, the medians of each arm and new over old
(ratio of medians) with its bootstrap 95% interval (benchstats.py), and
the verdict of verdicts.py's rule: faster, slower, or not told apart.
"""

import argparse
import json
import os
import re
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "..", "vm"))
import benchstats  # noqa: E402
from verdicts import fmt_ratio, verdict  # noqa: E402

LINE_RE = re.compile(r"^([a-z_]+) (\d+) (-?\d+)$")
WAIT_ONLINE = ("for i in $(seq 600); do n=$(grep -l offline /sys/devices/system/memory/memory*/state | wc -l); "
               "[ $n = 0 ] && break; sleep 1; done; echo $n")


def order(rounds):
    """Arms in turn, ABBA...: each leads in half of the rounds."""
    out = []
    for k in range(rounds):
        out += [("old", k), ("new", k)] if k % 2 == 0 else [("new", k), ("old", k)]
    return out


def parse(text):
    """{read: µs} of one run's lines, the reads that succeeded (result >= 0)."""
    got = {}
    for line in text.splitlines():
        m = LINE_RE.match(line.strip())
        if m and int(m.group(3)) >= 0:
            got[m.group(1)] = int(m.group(2))
    return got


def summarize(path):
    runs = []
    with open(path) as f:
        runs = [json.loads(line) for line in f if line.strip()]
    by_arm = {"old": {}, "new": {}}
    for r in runs:
        for read, usec in r.get("usec", {}).items():
            by_arm.get(r.get("arm"), {}).setdefault(read, []).append(usec)
    print("| read | old, median µs | new, median µs | new / old (95%) | verdict | runs |")
    print("|---|---|---|---|---|---|")
    for read in sorted(by_arm["old"]):
        old, new = by_arm["old"][read], by_arm["new"].get(read, [])
        iv = benchstats.bootstrap_ratio(new, old) if new else None
        print("| %s | %.0f | %.0f | %s | %s | %d / %d |" % (
            read, benchstats.median(old), benchstats.median(new) if new else float("nan"),
            fmt_ratio(iv), verdict(iv), len(old), len(new)))
    return 0


def run(args):
    import importlib.util
    spec = importlib.util.spec_from_file_location("vm_bench", os.path.join(HERE, "vm-bench.py"))
    vb = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(vb)
    from vm import image_env, kernel_tag
    kernel = kernel_tag(image_env(args.image_dir).get("KVER"))
    args.guest_append = "quiet"
    vm = vb.new_vm(args, "")
    with open(args.out, "a") as out:
        try:
            vm.boot()
            vb.prepare(vm, "", None)
            for arm in ("old", "new"):
                with open(getattr(args, arm), "rb") as f:
                    vm.write_guest_file("/root/sysfs-reads-" + arm, f.read(), mode="0755")
            vm.hotplug_dimm(0, args.blocks * vb.BLOCK)
            left = int(vm.sh(WAIT_ONLINE, timeout=900).out.strip() or -1)
            if left != 0:
                print("sysfs-reads-ab: %d blocks still offline" % left, file=sys.stderr)
                return 1
            time.sleep(20)
            for arm, k in order(args.rounds):
                got = parse(vm.sh("/root/sysfs-reads-" + arm, timeout=300).out)
                out.write(json.dumps({"arm": arm, "round": k, "kernel": kernel, "blocks": args.blocks,
                                      "time": time.strftime("%Y-%m-%dT%H:%M:%S"), "usec": got},
                                     sort_keys=True) + "\n")
                out.flush()
        finally:
            vm.close()
    return summarize(args.out)


def main():
    if len(sys.argv) > 1 and sys.argv[1] == "--summarize":
        return summarize(sys.argv[2])
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--image-dir", required=True)
    ap.add_argument("--old", required=True)
    ap.add_argument("--new", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--rounds", type=int, default=20)
    ap.add_argument("--blocks", type=int, default=512)
    ap.add_argument("--guest-mem-mib", type=int, default=6144)
    ap.add_argument("--lock", help="hold this file's lock (flock) for the guest's whole life")
    args = ap.parse_args()
    if args.lock:
        import fcntl
        lock = open(args.lock, "a")
        fcntl.flock(lock, fcntl.LOCK_EX)
    return run(args)


if __name__ == "__main__":
    sys.exit(main())
