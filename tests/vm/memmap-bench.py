#!/usr/bin/env python3
"""What memmap_on_memory = yes costs or saves, against no, on a real kernel.

Usage: memmap-bench.py --image-dir DIR [--size GIB] [--repeats N] [--out FILE] [-v]

DIR is the Debian 13 image of `tests/vm/check-vm.sh BUILDDIR --suites trixie`
(BUILDDIR/tests-vm-trixie, or as build-image.sh printed it). Root needed.

One guest (the Debian 13 image: its 6.12 kernel has the per-device
attribute), booted with memory_hotplug.memmap_on_memory=1 and `quiet`.
After a 1 GiB warm-up conversion (the first hot-add onto the CPU-less
node 2 also creates the node), each repeat hot-adds two NVDIMMs of --size
GiB on node 2, one converted by memonlined with [pmem] memmap_on_memory =
no and one with yes, in alternating order (no, yes / yes, no / ...), so
that the drift of a guest that has more memory each time falls on both.
Per conversion: the device record's kmem bind, onlining and total times,
and the change of each node's MemTotal and MemFree (nodeN/meminfo) from
before the namespace is created to after the last block is online.

Prints one JSON line per conversion (and writes them to --out), then the
medians side by side and the ratio yes/no.
"""

import argparse
import importlib.util
import json
import os
import statistics
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from vm import VM, GiB  # noqa: E402

_spec = importlib.util.spec_from_file_location("run_scenarios", os.path.join(HERE, "run-scenarios.py"))
rs = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(rs)

FIELDS = ("MEMONLINE_BIND_USEC", "MEMONLINE_ONLINE_USEC", "MEMONLINE_TOTAL_USEC")


def one(suite, setting, size):
    dev, rec, new, before, after, bs, _ = suite.memmap_convert(size, "\n[pmem]\nmemmap_on_memory = %s\n" % setting)
    got = rs.field(rec, "MEMONLINE_MEMMAP_ON_MEMORY")
    if got != setting:
        raise rs.Fail("%s: asked memmap_on_memory=%s, the record says %s: %s" % (dev, setting, got,
                                                                                  rs.rec_brief(rec)))
    row = {"setting": setting, "device": dev, "blocks": len(new), "block_size": bs, "size": size}
    for f in FIELDS:
        row[f.split("_", 1)[1].lower()] = int(rs.field(rec, f))
    for node in sorted(set(before) | set(after)):
        for k in ("MemTotal", "MemFree"):
            row["node%d_%s_kb" % (node, k)] = after.get(node, {}).get(k, 0) - before.get(node, {}).get(k, 0)
    return row


def summary(rows):
    keys = [k for k in rows[0] if k.endswith("_usec") or k.endswith("_kb")]
    by = {s: [r for r in rows if r["setting"] == s] for s in ("no", "yes")}
    out = ["%-24s %14s %14s %8s" % ("median of %d / %d" % (len(by["no"]), len(by["yes"])), "no", "yes",
                                    "yes/no")]
    for k in keys:
        med = {s: statistics.median(r.get(k, 0) for r in by[s]) for s in by}
        ratio = "%.2f" % (med["yes"] / med["no"]) if med["no"] else "-"
        out.append("%-24s %14.0f %14.0f %8s" % (k, med["no"], med["yes"], ratio))
    return "\n".join(out)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--image-dir", required=True)
    ap.add_argument("--size", type=int, default=4, help="GiB per NVDIMM (default 4)")
    ap.add_argument("--repeats", type=int, default=4, help="pairs of conversions (default 4)")
    ap.add_argument("--out", help="also write the JSON lines here")
    ap.add_argument("-v", "--verbose", action="store_true")
    a = ap.parse_args()
    if 1 + 2 * a.repeats > 14:
        ap.error("the guest has 16 memory slots: at most 6 repeats")

    vm = VM(a.image_dir, extra_append="%s quiet" % rs.MEMMAP_APPEND)
    rows = []
    try:
        vm.boot()
        suite = rs.Suite(vm, verbose=a.verbose)
        suite.s_setup_memmap()
        kver = suite.sh("uname -r").out.strip()
        suite.memmap_convert(GiB, "")            # warm-up: creates node 2
        for i in range(a.repeats):
            for setting in (("no", "yes") if i % 2 == 0 else ("yes", "no")):
                row = one(suite, setting, a.size * GiB)
                row.update(repeat=i, kernel=kver)
                rows.append(row)
                print(json.dumps(row, sort_keys=True), flush=True)
    finally:
        vm.shutdown()
        vm.close()
    if a.out:
        with open(a.out, "w") as f:
            for r in rows:
                f.write(json.dumps(r, sort_keys=True) + "\n")
    if rows:
        print(summary(rows))
    return 0 if len(rows) == 2 * a.repeats else 1


if __name__ == "__main__":
    sys.exit(main())
