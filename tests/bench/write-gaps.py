#!/usr/bin/env python3
"""Where memonlined's time goes in a real kernel, write by write.

Usage: write-gaps.py --image-dir DIR --out FILE.jsonl [--kind dimm|dimm1|cxl]
                     [--blocks N] [--repeat R] [--wait-quiet S]
       write-gaps.py --summarize FILE.jsonl...

One fresh guest per trial, set up as tests/bench/vm-bench.py sets up its
memonlined contenders (the same kprobes, imported from it), with the
daemon at MEMONLINED_LOG_LEVEL=debug. After the hot-add (two DIMMs of N/2
blocks on nodes 0 and 1, one DIMM of N blocks on node 0, or one CXL
region of N blocks) it reads the
whole trace and the daemon's whole journal: each write's entry and
return in userspace ("write times" lines) and each online_pages entry
and return in the kernel, all on CLOCK_MONOTONIC. A write holds one
online_pages call; between two of them lie:

  tail   online_pages return -> the write's return to userspace
         (the kernel's own: the online uevent, the hotplug lock's release)
  own    the write's return -> the next write's entry (memonlined's)
  head   the next write's entry -> its online_pages entry (the kernel's:
         the lock, its 5 ms sleep-and-restart when it is taken)

With --sched the trace also records the scheduler's switches and the
interrupts, and each gap between two online_pages calls on the writer's
CPU is split by what ran there: the writer itself (the kernel's path
around online_pages, its return to userspace, or its vCPU not running
on the host, which the guest cannot see), another task (by name), an
interrupt or a softirq (by name); with how often the writer was
switched out runnable (preempted) or asleep.

Per trial: those sums and percentiles, the batches' preparation and
first block (MEMONLINE_PREPARE_USEC, MEMONLINE_FIRST_LATENCY_USEC), the
boundary between batches (the last write of one batch to the first of
the next), and the first online_pages after the add against the add's
end. One JSON line per trial.

The own gaps split in two: inside a batch (one write's return to the
next write of the same batch) and across a batch boundary. Over the
kernel's Σ online_pages of the paired writes, a trial gives the onlining
phase (every write's span, and every own gap between two) and its
floor: the writes' spans alone, what a writer with no cost of its own
between writes would take in the same write order. --summarize prints
both per trial and their medians with bootstrap 95% intervals
(benchstats.py), the floor against the ≤ 1.15 × target of #28.
"""

import argparse
import importlib.util
import json
import os
import re
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "..", "vm"))
import benchstats  # noqa: E402
from vm import VM, image_env, kernel_tag  # noqa: E402

_spec = importlib.util.spec_from_file_location("vm_bench", os.path.join(HERE, "vm-bench.py"))
vb = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(vb)

WRITE_RE = re.compile(r"memory(\d+) (\d+)-(\d+)")
# The scheduler's switches and the interrupts, beside the bench probes (--sched).
SCHED_EVENTS = ("sched/sched_switch", "irq/irq_handler_entry", "irq/irq_handler_exit",
                "irq/softirq_entry", "irq/softirq_exit")
SCHED_SETUP = "".join("echo 1 > %s/events/%s/enable\n" % (vb.TRACE, e) for e in SCHED_EVENTS)
_SCHED_NAMES = "|".join(e.split("/", 1)[1] for e in SCHED_EVENTS)
# Only the bench probes' lines, for vm-bench's parser (the per-CPU buffers hold the rest).
READ_BENCH = r"grep -v -E ': (%s):' %%(T)s/trace" % _SCHED_NAMES
READ_CPU = r"grep -E ': (%s|onl|onlr):' %%(T)s/per_cpu/cpu%%(cpu)d/trace" % _SCHED_NAMES
TRACE_LINE = re.compile(r"^\s*(.+?)-(\d+)\s+\[(\d+)\]\s+\S+\s+(\d+\.\d+): (\w+): ?(.*)$")
SWITCH = re.compile(r"prev_comm=(.*?) prev_pid=(\d+) .*?prev_state=(\S+) ==> next_comm=(.*?) next_pid=(\d+)")
IRQ_NAME = re.compile(r"irq=(\d+) name=(\S+)")
SOFTIRQ_NAME = re.compile(r"action=(\w+)")

# The trace with its timestamps only (as vm-bench reads it), for the online_pages pairs.
JOURNAL = "journalctl --sync; journalctl -b -u memonlined --no-pager -o json"


def pct(vals, p):
    vals = sorted(vals)
    return vb.pct(vals, p) if vals else None


def daemon_journal(vm, after_mono_usec):
    out = vm.sh(JOURNAL, check=False, timeout=300).out
    entries = []
    for line in out.splitlines():
        try:
            j = json.loads(line)
        except ValueError:
            continue
        if int(j.get("__MONOTONIC_TIMESTAMP", 0)) > after_mono_usec and isinstance(j.get("MESSAGE"), str):
            entries.append(j)
    return entries


def writes_from(entries):
    """(block, entry s, return s, batch) of every successful write, in time order; a batch's
    write-time lines come before its "Onlined" line, so batch counts those lines."""
    w, batch = [], 0
    for j in entries:
        m = j["MESSAGE"]
        if m.startswith("write times"):
            w += [(int(b), int(a) / 1e6, int(r) / 1e6, batch) for b, a, r in WRITE_RE.findall(m)]
        elif m.startswith("Onlined "):
            batch += 1
    return sorted(w, key=lambda x: x[1])


def decompose(writes, ev):
    """Pair each write with the online_pages call inside it; split what lies between two."""
    onl = list(zip(ev["onl"], ev["onlr"]))
    k = 0
    paired = []
    for blk, enter, ret, batch in writes:
        while k < len(onl) and onl[k][0] < enter:
            k += 1
        if k < len(onl) and onl[k][1] <= ret:
            paired.append((blk, enter, ret, onl[k][0], onl[k][1], batch))
            k += 1
    tail, own, head, own_in, own_across = [], [], [], [], []
    for a, b in zip(paired, paired[1:]):
        tail.append((a[2] - a[4]) * 1e3)
        own.append((b[1] - a[2]) * 1e3)
        head.append((b[3] - b[1]) * 1e3)
        (own_in if a[5] == b[5] else own_across).append(own[-1])
    r = {"writes": len(writes), "writes_paired": len(paired)}
    if paired:
        online = sum(p[4] - p[3] for p in paired) * 1e3
        spans = sum(p[2] - p[1] for p in paired) * 1e3
        r["online_ms_sum"] = round(online, 1)
        r["span_ms_sum"] = round(spans, 1)
        r["own_in_batch_ms_sum"] = round(sum(own_in), 1)
        r["own_across_batches_ms_sum"] = round(sum(own_across), 1)
        if online > 0:
            # Over Σ online_pages: the writes back to back (the floor), and with the gaps
            # between them inside batches (the phase, less the batch boundaries).
            r["floor_over_online"] = round(spans / online, 4)
            r["in_batch_phase_over_online"] = round((spans + sum(own_in)) / online, 4)
            r["phase_over_online"] = round((spans + sum(own)) / online, 4)
    for name, vals in (("tail", tail), ("own", own), ("head", head), ("own_in_batch", own_in)):
        if vals:
            r[name + "_ms_sum"] = round(sum(vals), 1)
            r[name + "_ms_p50"] = round(pct(vals, 50), 3)
            r[name + "_ms_p90"] = round(pct(vals, 90), 3)
            r[name + "_ms_max"] = round(max(vals), 1)
    # The longest own gaps, with when they were (s after the first add): between batches, or inside one.
    if own and ev["add"]:
        t0 = ev["add"][0]
        big = sorted(((g, round(a[2] - t0, 3)) for g, a in zip(own, paired)), reverse=True)[:6]
        r["own_longest"] = [[round(g, 1), at] for g, at in big]
        big = sorted(((g, round(a[2] - t0, 3)) for g, a, b in zip(own, paired, paired[1:]) if a[5] == b[5]),
                     reverse=True)[:6]
        r["own_in_batch_longest"] = [[round(g, 1), at] for g, at in big]
    return r


def task_label(comm):
    """A task's name without its instance: kworker/0:1H -> kworker, (udev-worker) stays."""
    if comm.startswith("kworker/"):
        return "kworker"
    if comm.startswith(("ksoftirqd/", "migration/", "rcuc/", "cpuhp/", "idle_inject/")):
        return comm.split("/", 1)[0]
    return comm


def cpu_intervals(lines):
    """What ran on one CPU, from its sched_switch and interrupt lines in time order:
    (start s, end s, label, pid) spans ("irq:NAME", "softirq:NAME" nest inside a task and
    take their time from it), the writer's online_pages entries and returns as
    (time, pid, "onl"|"onlr"), and its switches out as (time, pid, prev_state)."""
    spans, marks, outs = [], [], []
    cur, stack, last = None, [], None
    for line in lines:
        m = TRACE_LINE.match(line)
        if not m:
            continue
        comm, pid, t, ev, rest = m.group(1), int(m.group(2)), float(m.group(4)), m.group(5), m.group(6)
        if cur is None:
            cur = (task_label(comm), pid)
        if last is not None and t > last:
            label = stack[-1] if stack else cur[0]
            spans.append((last, t, label, cur[1]))
        last = t if last is None else max(last, t)
        if ev == "sched_switch":
            sw = SWITCH.search(rest)
            if sw:
                outs.append((t, int(sw.group(2)), sw.group(3)))
                cur = (task_label(sw.group(4)), int(sw.group(5)))
                stack = []
        elif ev == "irq_handler_entry":
            n = IRQ_NAME.search(rest)
            stack.append("irq:" + (n.group(2) if n else "?"))
        elif ev == "softirq_entry":
            n = SOFTIRQ_NAME.search(rest)
            stack.append("softirq:" + (n.group(1) if n else "?"))
        elif ev in ("irq_handler_exit", "softirq_exit"):
            if stack:
                stack.pop()
        elif ev in ("onl", "onlr"):
            marks.append((t, pid, ev))
    return spans, marks, outs


def sched_gaps(lines, long_ms=1.0):
    """Each gap on this CPU between an online_pages return and the same task's next
    online_pages entry, split by what ran: {label: ms} over all gaps and over the gaps of
    LONG_MS or more ("writer" is the writing task itself); the writer's switches out
    inside gaps, runnable (preempted) or not (asleep). {} without a gap."""
    spans, marks, outs = cpu_intervals(lines)
    gaps = [(a[0], b[0], a[1]) for a, b in zip(marks, marks[1:])
            if a[2] == "onlr" and b[2] == "onl" and a[1] == b[1] and b[0] >= a[0]]
    if not gaps:
        return {}
    every, long_, i = {}, {}, 0
    preempted = slept = n_long = 0
    for lo, hi, writer in gaps:
        while i < len(spans) and spans[i][1] <= lo:
            i += 1
        split = {}
        for a, b, label, pid in spans[i:]:
            if a >= hi:
                break
            d = min(b, hi) - max(a, lo)
            if d > 0:
                key = "writer" if pid == writer and not label.startswith(("irq:", "softirq:")) else label
                split[key] = split.get(key, 0.0) + d * 1e3
        for t, pid, state in outs:
            if lo <= t < hi and pid == writer:
                if state.startswith("R"):
                    preempted += 1
                else:
                    slept += 1
        is_long = (hi - lo) * 1e3 >= long_ms
        n_long += is_long
        for k, v in split.items():
            every[k] = every.get(k, 0.0) + v
            if is_long:
                long_[k] = long_.get(k, 0.0) + v
    top = lambda d: {k: round(v, 3) for k, v in sorted(d.items(), key=lambda kv: -kv[1])[:12]}  # noqa: E731
    return {"gaps": len(gaps), "gaps_long": n_long, "gap_ms_by_what": top(every),
            "long_gap_ms_by_what": top(long_), "writer_preempted_in_gaps": preempted,
            "writer_slept_in_gaps": slept}


def busy_by_task(cpu_lines, lo, hi):
    """Each task's, interrupt's and softirq's time on any CPU within [LO, HI] (s), in ms, from
    every CPU's lines; idle left out: what shared the host's cores with the writer."""
    busy = {}
    for lines in cpu_lines:
        for a, b, label, pid in cpu_intervals(lines)[0]:
            d = min(b, hi) - max(a, lo)
            # pid 0 is the idle task, but interrupts taken while idle are time too.
            if d > 0 and (pid != 0 or label.startswith(("irq:", "softirq:"))):
                busy[label] = busy.get(label, 0.0) + d * 1e3
    return {k: round(v, 1) for k, v in sorted(busy.items(), key=lambda kv: -kv[1])[:16]}


def writer_cpus(text):
    """The CPUs whose tasks entered online_pages, from the bench lines."""
    cpus = set()
    for line in text.splitlines():
        m = TRACE_LINE.match(line)
        if m and m.group(5) == "onl":
            cpus.add(int(m.group(3)))
    return sorted(cpus)


def batches_from(entries):
    recs = [j for j in entries if j.get("MESSAGE_ID") == vb.BATCH_ID]
    recs.sort(key=lambda j: int(j.get("MEMONLINE_BATCH", 0)))
    g = lambda j, k: int(j[k]) if j.get(k) else None  # noqa: E731
    return [{"batch": g(j, "MEMONLINE_BATCH"), "blocks": g(j, "MEMONLINE_BLOCKS"),
             "prepare_usec": g(j, "MEMONLINE_PREPARE_USEC"), "first_latency_usec": g(j, "MEMONLINE_FIRST_LATENCY_USEC"),
             "latency_usec": g(j, "MEMONLINE_LATENCY_USEC"), "duration_usec": g(j, "MEMONLINE_DURATION_USEC")}
            for j in recs]


def boundaries(writes, entries):
    """Last write of one batch to the first of the next, from the batches' write-time lines."""
    groups, cur = [], []
    for j in entries:
        m = j["MESSAGE"]
        if m.startswith("write times"):
            cur += [int(a) / 1e6 for _, a, _ in WRITE_RE.findall(m)] + [int(r) / 1e6 for _, _, r in WRITE_RE.findall(m)]
        elif m.startswith("Onlined ") and cur:
            groups.append((min(cur), max(cur)))
            cur = []
    if cur:
        groups.append((min(cur), max(cur)))
    groups.sort()
    return [round((b[0] - a[1]) * 1e3, 1) for a, b in zip(groups, groups[1:])]


def trial(args, rep):
    cxl = args.kind == "cxl"
    vm = vb.new_vm(args, "", cxl=[args.blocks * vb.BLOCK] if cxl else ())
    res = {"kind": args.kind, "blocks": args.blocks, "repeat": rep, "kernel": args.kernel, "build": args.build,
           "contender": args.contender}

    def body():
        res["boot_s"] = round(vm.boot(), 1)
        auto = args.contender == "kernel-auto-online"
        vb.prepare(vm, None if auto else "", None, debug=not auto)
        if auto and not vb.check_auto_online(vm, res, "online", None):
            return
        mono = int(float(vm.sh("cat /proc/uptime").out.split()[0]) * 1e6)
        if cxl:
            mem = vm.sh(vb.CXL_MEMDEV, timeout=180).out.strip()
        vm.sh(vb.TRACE_SETUP)
        if args.sched:
            vm.sh(SCHED_SETUP)
        if cxl:
            vm.sh(vb.CXL_CREATE.format(mem=mem), timeout=args.timeout)
        elif args.kind == "dimm1":
            vm.hotplug_dimm(0, args.blocks * vb.BLOCK)
        else:
            vm.hotplug_dimm(0, args.blocks // 2 * vb.BLOCK)
            vm.hotplug_dimm(1, args.blocks // 2 * vb.BLOCK)
        got = int(vm.sh(vb.WAIT_ONLINE % {"T": vb.TRACE, "n": args.blocks, "timeout": args.timeout},
                        timeout=args.timeout + 60).out.strip() or 0)
        time.sleep(1.0)
        if args.sched:
            vm.sh("echo 0 > %s/tracing_on" % vb.TRACE)
            bench = vm.sh(READ_BENCH % {"T": vb.TRACE}, timeout=args.timeout).out
            ev = vb.parse_trace(bench)
            res["sched"] = {}
            writers = writer_cpus(bench)
            every = [vm.sh(READ_CPU % {"T": vb.TRACE, "cpu": c}, timeout=args.timeout).out.splitlines()
                     for c in range(vm.cpus)]
            for cpu in writers:
                res["sched"][str(cpu)] = sched_gaps(every[cpu])
            if ev["onl"] and ev["onlr"]:
                # The onlining phase: the first online_pages entry to the last return.
                res["busy_in_phase_ms"] = busy_by_task(every, ev["onl"][0], ev["onlr"][-1])
                res["phase_wall_ms"] = round((ev["onlr"][-1] - ev["onl"][0]) * 1e3, 1)
        else:
            ev = vb.parse_trace(vm.sh(vb.READ_TRACE % {"T": vb.TRACE}, timeout=args.timeout).out)
        s = vb.summarize_trace(ev, args.blocks)
        for k in ("e2e_s", "first_online_after_s", "adds_done_at_s", "kernel_online_sum_s", "between_onlines_ms_sum",
                  "between_onlines_ms_p50", "between_onlines_ms_p90", "lock_restarts"):
            res[k] = s.get(k)
        entries = daemon_journal(vm, mono)
        writes = writes_from(entries)
        res.update(decompose(writes, ev))
        res["batches"] = batches_from(entries)
        res["boundaries_ms"] = boundaries(writes, entries)
        res["prepared"] = [j["MESSAGE"] for j in entries if "blocks prepared" in j["MESSAGE"]]
        res["warmed"] = [j["MESSAGE"] for j in entries if j["MESSAGE"].startswith("warmed")]
        if ev["addr"] and ev["onl"]:
            res["first_online_after_add_end_ms"] = round((ev["onl"][0] - ev["addr"][0]) * 1e3, 1)
        # The daemon's lines but the write times, as [s after the first add, message].
        if ev["add"]:
            res["log"] = [[round(int(j["__MONOTONIC_TIMESTAMP"]) / 1e6 - ev["add"][0], 4), j["MESSAGE"][:300]]
                          for j in entries if not j["MESSAGE"].startswith("write times")]
        res["ok"] = got >= args.blocks

    return vb.guarded(vm, res, body)


SUMMARY_FIELDS = (("online_ms_sum", "Σ online_pages, ms"), ("head_ms_sum", "Σ head, ms"),
                  ("tail_ms_sum", "Σ tail, ms"), ("own_in_batch_ms_sum", "Σ own in batch, ms"),
                  ("own_in_batch_ms_p50", "own in batch p50, ms"), ("own_across_batches_ms_sum", "Σ own across batches, ms"))


def summary_rows(trials):
    """{(kernel, kind, blocks, build): [trials]} of the successful trials that paired writes."""
    groups = {}
    for r in trials:
        if r.get("ok") and r.get("floor_over_online") is not None:
            groups.setdefault((r.get("kernel"), r.get("kind"), r.get("blocks"), r.get("build")), []).append(r)
    return groups


def fmt_iv(iv, unit=" ×"):
    if iv is None:
        return "-"
    return "%.2f%s (%.2f-%.2f)" % (iv["median"], unit, iv["lo"], iv["hi"])


def summarize(paths):
    """Per trial, then per case: the onlining phase and its floor over Σ online_pages."""
    trials = []
    for path in paths:
        with open(path) as f:
            trials += [json.loads(line) for line in f if line.strip()]
    for key, rs in sorted(summary_rows(trials).items(), key=lambda kv: tuple(map(str, kv[0]))):
        kernel, kind, blocks, build = key
        print("\n#### %s, %s, %s blocks, build %s: %d trials\n" % (kernel, kind, blocks, build or "?", len(rs)))
        print("| trial | " + " | ".join(h for _, h in SUMMARY_FIELDS)
              + " | floor / Σ online_pages | in-batch phase / Σ online_pages | own share of the in-batch gaps |")
        print("|---" * (len(SUMMARY_FIELDS) + 4) + "|")
        for r in rs:
            gaps = sum(r.get(k) or 0 for k in ("head_ms_sum", "tail_ms_sum")) + (r.get("own_in_batch_ms_sum") or 0)
            share = (r.get("own_in_batch_ms_sum") or 0) / gaps if gaps else None
            print("| %s | " % r.get("time", r.get("repeat"))
                  + " | ".join("-" if r.get(k) is None else "%g" % r[k] for k, _ in SUMMARY_FIELDS)
                  + " | %.3f | %.3f | %s |" % (r["floor_over_online"], r["in_batch_phase_over_online"],
                                               "-" if share is None else "%.1f %%" % (share * 100)))
        floor = benchstats.bootstrap_median([r["floor_over_online"] for r in rs])
        phase = benchstats.bootstrap_median([r["in_batch_phase_over_online"] for r in rs])
        own = benchstats.bootstrap_median([r["own_in_batch_ms_p50"] for r in rs if r.get("own_in_batch_ms_p50") is not None])
        print("\nMedians (95%%): floor %s, in-batch phase %s, own gap in a batch at p50 %s; "
              "the ≤ 1.15 × target %s." % (
                  fmt_iv(floor), fmt_iv(phase), fmt_iv(own, " ms"),
                  "lies below the floor's whole interval: out of reach for any writer in this order"
                  if floor and floor["lo"] > 1.15 else
                  "lies inside the floor's interval" if floor and floor["hi"] >= 1.15 else
                  "lies above the floor's interval: reachable in principle"))
    return 0


def main():
    if len(sys.argv) > 1 and sys.argv[1] == "--summarize":
        return summarize(sys.argv[2:])
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--image-dir", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--kind", choices=("dimm", "dimm1", "cxl"), default="cxl")
    ap.add_argument("--build", default=None, help="the build's commit, recorded in each trial")
    ap.add_argument("--blocks", type=int, default=32)
    ap.add_argument("--repeat", type=int, default=1)
    ap.add_argument("--timeout", type=int, default=900)
    ap.add_argument("--wait-quiet", type=int, default=120)
    ap.add_argument("--guest-mem-mib", type=int, default=vb.GUEST_MEM_MIB)
    ap.add_argument("--guest-append", default="quiet")
    ap.add_argument("--contender", choices=("memonlined", "kernel-auto-online"), default="memonlined",
                    help="who onlines: the daemon at debug level, or the kernel while it adds (memonlined masked)")
    ap.add_argument("--sched", action="store_true",
                    help="also trace the scheduler and interrupts and split each gap by what ran on the writer's CPU")
    a = ap.parse_args()
    env = image_env(a.image_dir)
    a.kernel = kernel_tag(env.get("KVER"))
    if a.kind == "cxl" and env.get("CXL") != "yes":
        ap.error("the image has no cxl tool (CXL regions need Debian 13's guest)")
    with open(a.out, "a") as out:
        for rep in range(a.repeat):
            waited, quiet = vb.wait_quiet(a.wait_quiet)
            r = trial(a, rep)
            r["host_quiet"], r["time"] = quiet, time.strftime("%Y-%m-%dT%H:%M:%S")
            out.write(json.dumps(r, sort_keys=True) + "\n")
            out.flush()
            vb.log("%s %d blocks: e2e %s s, own %s ms, tail %s ms, head %s ms" % (
                a.kind, a.blocks, r.get("e2e_s"), r.get("own_ms_sum"), r.get("tail_ms_sum"), r.get("head_ms_sum")))
    return 0


if __name__ == "__main__":
    sys.exit(main())
