#!/usr/bin/env python3
"""The claims of a rotated campaign, by the pooling rule of
docs/BENCHMARKS.md ("Pooling rule"), from vm-bench.py's JSON lines.

Usage: verdicts.py FILE_OR_DIR [...] [--json] [--plot-data FILE.dat] [--created | --begin]
                   [--versus NUM/DEN ...]

Per case (build, kernel, kind, blocks) and contender: the trials (ok of
all), the median time to the last block (e2e_s) and to the first
(first_block_s) with a bootstrap 95% interval of each median, then the
ratio of each contender's medians to the reference's (kernel-auto-online
for DIMMs, cxl+kernel-auto-online for CXL regions, daxctl-online for
NVDIMMs) with its bootstrap 95% interval, and the verdict the interval
gives: "faster" (its upper end below 1), "slower" (its lower end above
1), or "not told apart"; none with fewer than 6 successful trials on
either side. The positions each contender took in its rounds
are printed too: a rotated campaign shows every position equally often.
--plot-data writes "contender blocks median lo hi" rows of the time to
the last block (then the same for the first block, contender suffixed
":first") for gnuplot (plot-scaling.sh).

bench-pipeline passes of an A/B (contenders "old" and "new") give a
table of CPU per block, new over old, by the same rule; so do the guest
trials of ab-images.py whose arms are named "old" and "new": time to the
last and to the first block, and the batches' preparation.

--versus NUM/DEN adds, per case where both ran, contender NUM over
contender DEN by the same rule (two settings of one build, as
memonlined over memonlined-no-chain): the last and the first block,
the onlining phase and the kernel's Σ online_pages.

--begin prints, instead of the claims, each contender's first online's
wait to take mem_hotplug_lock (first_online_begin_ms: median with its
interval, range, and the trials where a synchronize_rcu ran in it), then
per trial with a first write the add's end to that write and the wait:
whether the write came within the grace period the add left.

--created prints, instead of the claims, the same table for the time
from the hot-add command to the first add's blocks (blocks_created_at_s),
before any onliner can act: whether a contender delays the add itself.

Then memonlined's own time per case, for the targets that are not
ratios to another contender: its onlining phase over the kernel's own
sum of online_pages, per trial (median, bootstrap 95% interval), and the
p90 and maximum of its batches' preparation (MEMONLINE_PREPARE_USEC),
the time from the last add's end to its first write (the event's trip
and the preparation), and its floors over the reference's medians: what
an onliner with no cost of its own would take, to the last block
(vm-bench.py's floor_s) and to the first (the last add's end, the
event's trip, the kernel's own online_pages of that block). A floor
above a target's ratio means no userspace onliner can meet it there.
"""

import argparse
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import benchstats  # noqa: E402

REFERENCE = benchstats.REFERENCE
MEASURES = (("e2e_s", "last block"), ("first_block_s", "first block"))
CREATED = (("blocks_created_at_s", "blocks appear"),)
MIN_TRIALS = 6


def verdict(iv):
    if iv is None:
        return "no data"
    if min(iv["n_num"], iv["n_den"]) < MIN_TRIALS:
        return "no verdict (n < %d)" % MIN_TRIALS
    if iv["hi"] < 1:
        return "faster"
    if iv["lo"] > 1:
        return "slower"
    return "not told apart"


def cases(groups):
    """{(build, kernel, kind, blocks): {contender: trials}}"""
    out = {}
    for key, trials in groups.items():
        out.setdefault(key[:4], {})[key[4]] = trials
    return out


def field_times(trials, field):
    """FIELD of the successful trials: a number, or for a per-add list
    (blocks_created_at_s) its first add's."""
    if field == "blocks_created_at_s":
        return [r[field][0] for _, _, r in trials if r.get("ok") and isinstance(r.get(field), list)
                and r[field] and is_number(r[field][0])]
    return benchstats.times(trials, field)


def claim_rows(groups, measures=MEASURES):
    """One dict per (case, contender), the reference's own row included."""
    rows = []
    for case, by_contender in sorted(cases(groups).items(), key=lambda kv: tuple(map(str, kv[0]))):
        build, kernel, kind, blocks = case
        ref = by_contender.get(REFERENCE.get(kind))
        for contender, trials in sorted(by_contender.items()):
            row = {"build": build, "kernel": kernel, "kind": kind, "blocks": blocks, "contender": contender,
                   "reference": REFERENCE.get(kind), "trials": len(trials),
                   "ok": sum(1 for _, _, r in trials if r.get("ok")),
                   "positions": sorted(r.get("position") for _, _, r in trials
                                       if isinstance(r.get("position"), int))}
            for field, _ in measures:
                vals = field_times(trials, field)
                row[field] = benchstats.bootstrap_median(vals)
                if ref is not None and contender != REFERENCE.get(kind):
                    iv = benchstats.bootstrap_ratio(vals, field_times(ref, field))
                    row[field + "_ratio"] = iv
                    row[field + "_verdict"] = verdict(iv)
            rows.append(row)
    return rows


OWN_TIME_CONTENDERS = ("memonlined", "cxl+memonlined", "memonlined-no-chain", "cxl+memonlined-no-chain")
VERSUS_MEASURES = MEASURES + (("onlining_phase_s", "onlining phase"), ("kernel_online_sum_s", "Σ online_pages"))


def versus_rows(groups, pairs):
    """Per case and (NUM, DEN) of PAIRS that both ran in it: each one's median of
    every VERSUS_MEASURES field, NUM over DEN with its interval and verdict."""
    out = []
    for case, by in sorted(cases(groups).items(), key=lambda kv: tuple(map(str, kv[0]))):
        build, kernel, kind, blocks = case
        for num, den in pairs:
            if num not in by or den not in by:
                continue
            row = {"build": build, "kernel": kernel, "kind": kind, "blocks": blocks, "num": num, "den": den,
                   "num_ok": sum(1 for _, _, r in by[num] if r.get("ok")), "num_trials": len(by[num]),
                   "den_ok": sum(1 for _, _, r in by[den] if r.get("ok")), "den_trials": len(by[den])}
            for field, _ in VERSUS_MEASURES:
                a, b = benchstats.times(by[num], field), benchstats.times(by[den], field)
                iv = ratio_or_none(a, b)
                row[field] = {"num": benchstats.median(a) if a else None, "den": benchstats.median(b) if b else None,
                              "ratio": iv, "verdict": verdict(iv)}
            out.append(row)
    return out


def print_versus(rows):
    for row in rows:
        print("\n#### %s, %s, %s blocks (build %s): %s (%d of %d ok) over %s (%d of %d ok)\n" % (
            row["kernel"], row["kind"], row["blocks"], row["build"], row["num"], row["num_ok"], row["num_trials"],
            row["den"], row["den_ok"], row["den_trials"]))
        print("| measure | %s, median | %s, median | ratio (95%%) | verdict |" % (row["num"], row["den"]))
        print("|---|---|---|---|---|")
        for field, name in VERSUS_MEASURES:
            m = row[field]
            print("| %s | %s | %s | %s | %s |" % (
                name, "-" if m["num"] is None else "%.3f s" % m["num"],
                "-" if m["den"] is None else "%.3f s" % m["den"], fmt_ratio(m["ratio"]), m["verdict"]))


def versus_pair(text):
    num, sep, den = text.partition("/")
    if not sep or not num or not den:
        raise argparse.ArgumentTypeError("want NUM/DEN, got %r" % text)
    return num, den


def is_number(v):
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def own_time_rows(groups):
    """One dict per case measured with memonlined: its onlining phase over
    the kernel's Σ online_pages (per successful trial) and its batches'
    preparation in ms."""
    rows = []
    for key, trials in sorted(groups.items(), key=lambda kv: tuple(map(str, kv[0]))):
        build, kernel, kind, blocks, contender = key
        if contender not in OWN_TIME_CONTENDERS:
            continue
        ok = [r for _, _, r in trials if r.get("ok")]
        phase = [r["onlining_phase_s"] / r["kernel_online_sum_s"] for r in ok
                 if is_number(r.get("onlining_phase_s")) and is_number(r.get("kernel_online_sum_s"))
                 and r["kernel_online_sum_s"] > 0]
        prepare_ms = prepare_ms_of(ok)
        ref = groups.get((build, kernel, kind, blocks, REFERENCE.get(kind)), [])
        first_floors = [f for f in map(first_floor, ok) if f is not None]
        rows.append({"build": build, "kernel": kernel, "kind": kind, "blocks": blocks, "contender": contender,
                     "trials": len(ok), "phase_over_kernel": benchstats.bootstrap_median(phase),
                     "batches": len(prepare_ms), "prepare_ms_p90": benchstats.percentile(prepare_ms, 90),
                     "prepare_ms_max": max(prepare_ms) if prepare_ms else None,
                     "add_end_to_first_write_ms": benchstats.bootstrap_median(
                         [(r["first_write_s"] - r["add_end_s"]) * 1e3 for r in ok
                          if is_number(r.get("first_write_s")) and is_number(r.get("add_end_s"))]),
                     "floor_over_reference": ratio_or_none([r["floor_s"] for r in ok if is_number(r.get("floor_s"))],
                                                           benchstats.times(ref, "e2e_s")),
                     "first_floor_over_reference": ratio_or_none(first_floors,
                                                                 benchstats.times(ref, "first_block_s"))})
    return rows


def prepare_ms_of(trials):
    """Every batch's preparation (MEMONLINE_PREPARE_USEC) of TRIALS, in ms."""
    return [u / 1e3 for r in trials for u in (r.get("mo_prepare_usec") or []) if is_number(u)]


def first_floor(r):
    """The first block of an onliner with no cost of its own: the last add's end (no
    write enters before it), the event's trip, and the kernel's own time for that
    first block (its online_pages); None where the trial does not tell."""
    parts = (r.get("add_end_s"), r.get("event_delay_ms"), r.get("first_block_s"), r.get("first_online_after_s"))
    if not all(is_number(p) for p in parts):
        return None
    return r["add_end_s"] + r["event_delay_ms"] / 1e3 + (r["first_block_s"] - r["first_online_after_s"])


def ratio_or_none(num, den):
    return benchstats.bootstrap_ratio(num, den) if num and den else None


def print_own_time(rows):
    if not rows:
        return
    print("\n#### memonlined's own time (onlining phase over the kernel's Σ online_pages; preparation per batch)\n")
    print("| kernel | case | build | contender | trials ok | phase / Σ online_pages, median (95%) | batches "
          "| preparation p90 | preparation max | last add's end to the first write, median (95%) "
          "| floor / reference, last block (95%) | floor / reference, first block (95%) |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|")
    for row in rows:
        m, w = row["phase_over_kernel"], row["add_end_to_first_write_ms"]
        print("| %s | %s, %s blocks | %s | %s | %d | %s | %d | %s | %s | %s | %s | %s |" % (
            row["kernel"], row["kind"], row["blocks"], row["build"], row["contender"], row["trials"],
            "-" if m is None else "%.2f × (%.2f-%.2f)" % (m["median"], m["lo"], m["hi"]),
            row["batches"],
            "-" if row["prepare_ms_p90"] is None else "%.0f ms" % row["prepare_ms_p90"],
            "-" if row["prepare_ms_max"] is None else "%.0f ms" % row["prepare_ms_max"],
            "-" if w is None else "%.0f ms (%.0f-%.0f)" % (w["median"], w["lo"], w["hi"]),
            fmt_ratio(row["floor_over_reference"]), fmt_ratio(row["first_floor_over_reference"])))


def pipeline_rows(rows):
    """bench-pipeline passes of an A/B (contender "old" and "new", one build
    each): per size, the medians of cpu_usec_per_block, their ratio new/old
    with the bootstrap interval, and its verdict."""
    by = {}
    for _, _, r in rows:
        if r.get("bench") == "pipeline" and r.get("contender") in ("old", "new") and \
                is_number(r.get("cpu_usec_per_block")):
            by.setdefault(r["blocks"], {}).setdefault(r["contender"], []).append(r)
    out = []
    for blocks, sides in sorted(by.items()):
        if set(sides) != {"old", "new"}:
            continue
        old, new = ([r["cpu_usec_per_block"] for r in sides[k]] for k in ("old", "new"))
        iv = benchstats.bootstrap_ratio(new, old)
        out.append({"blocks": blocks, "old_build": sides["old"][0].get("build"),
                    "new_build": sides["new"][0].get("build"), "old": benchstats.median(old),
                    "new": benchstats.median(new), "ratio": iv, "verdict": verdict(iv)})
    return out


def print_pipeline(rows):
    if not rows:
        return
    print("\n#### userspace CPU per block (bench-pipeline), new over old\n")
    print("| blocks | old build, µs per block (median) | new build | ratio (95%) | verdict |")
    print("|---|---|---|---|---|")
    for row in rows:
        print("| %d | %s: %.2f | %s: %.2f | %s | %s |" % (row["blocks"], row["old_build"], row["old"],
                                                         row["new_build"], row["new"], fmt_ratio(row["ratio"]),
                                                         row["verdict"]))


def build_ab_rows(loaded):
    """Guest trials of ab-images.py, arms "old" and "new" (a build each): per
    case (kernel, kind, blocks), each arm's medians of the time to the last
    and the first block and of its batches' preparation, and new over old
    with the bootstrap interval and its verdict."""
    by = {}
    for path, line, r in loaded:
        if r.get("ab_arm") in ("old", "new") and "kind" in r:
            by.setdefault(benchstats.case_of(r), {}).setdefault(r["ab_arm"], []).append((path, line, r))
    out = []
    for case, sides in sorted(by.items(), key=lambda kv: tuple(map(str, kv[0]))):
        if set(sides) != {"old", "new"}:
            continue
        kernel, kind, blocks = case
        row = {"kernel": kernel, "kind": kind, "blocks": blocks}
        for k in ("old", "new"):
            row[k + "_build"] = sides[k][0][2].get("build")
            row[k + "_trials"] = len(sides[k])
            row[k + "_ok"] = sum(1 for _, _, r in sides[k] if r.get("ok"))
        measures = {f: [benchstats.times(sides[k], f) for k in ("old", "new")] for f, _ in MEASURES}
        measures["prepare_ms"] = [prepare_ms_of([r for _, _, r in sides[k] if r.get("ok")]) for k in ("old", "new")]
        for field, (old, new) in measures.items():
            iv = ratio_or_none(new, old)
            row[field] = {"old": benchstats.median(old), "new": benchstats.median(new), "ratio": iv,
                          "verdict": verdict(iv)}
        out.append(row)
    return out


def print_build_ab(rows):
    if not rows:
        return
    print("\n#### builds A/B in the guest (ab-images.py), new over old\n")
    print("| kernel | case | old build (ok/trials) | new build (ok/trials) | measure | old, median "
          "| new, median | new / old (95%) | verdict |")
    print("|---|---|---|---|---|---|---|---|---|")
    units = {"e2e_s": ("last block", "%.3f s"), "first_block_s": ("first block", "%.3f s"),
             "prepare_ms": ("preparation per batch", "%.0f ms")}
    for row in rows:
        for field, (name, fmt) in units.items():
            m = row[field]
            print("| %s | %s, %s blocks | %s (%d/%d) | %s (%d/%d) | %s | %s | %s | %s | %s |" % (
                row["kernel"], row["kind"], row["blocks"], row["old_build"], row["old_ok"], row["old_trials"],
                row["new_build"], row["new_ok"], row["new_trials"], name,
                "-" if m["old"] is None else fmt % m["old"], "-" if m["new"] is None else fmt % m["new"],
                fmt_ratio(m["ratio"]), m["verdict"]))


def fmt_median(m):
    return "-" if m is None else "%.2f s (%.2f-%.2f)" % (m["median"], m["lo"], m["hi"])


def fmt_ratio(iv):
    return "-" if iv is None else "%.2f × (%.2f-%.2f)" % (iv["ratio"], iv["lo"], iv["hi"])


def print_markdown(rows):
    last = None
    for row in rows:
        case = (row["build"], row["kernel"], row["kind"], row["blocks"])
        if case != last:
            last = case
            print("\n#### %s, %s, %s blocks (build %s; ratios against %s)\n"
                  % (row["kernel"], row["kind"], row["blocks"], row["build"], row["reference"]))
            print("| contender | trials ok | last block, median (95%) | ratio (95%) | verdict "
                  "| first block, median (95%) | ratio (95%) | verdict | positions |")
            print("|---|---|---|---|---|---|---|---|---|")
        print("| %s | %d of %d | %s | %s | %s | %s | %s | %s | %s |" % (
            row["contender"], row["ok"], row["trials"],
            fmt_median(row["e2e_s"]), fmt_ratio(row.get("e2e_s_ratio")), row.get("e2e_s_verdict", "reference"),
            fmt_median(row["first_block_s"]), fmt_ratio(row.get("first_block_s_ratio")),
            row.get("first_block_s_verdict", "reference"),
            ",".join(str(p) for p in row["positions"]) or "-"))


def print_created(rows):
    last = None
    for row in rows:
        case = (row["build"], row["kernel"], row["kind"], row["blocks"])
        if case != last:
            last = case
            print("\n#### %s, %s, %s blocks (build %s): from the hot-add command to the first add's blocks\n"
                  % (row["kernel"], row["kind"], row["blocks"], row["build"]))
            print("| contender | trials ok | blocks appear, median (95%%) | × %s (95%%) | verdict |" % row["reference"])
            print("|---|---|---|---|---|")
        m = row["blocks_created_at_s"]
        print("| %s | %d of %d | %s | %s | %s |" % (
            row["contender"], row["ok"], row["trials"],
            "-" if m is None else "%.3f s (%.3f-%.3f)" % (m["median"], m["lo"], m["hi"]),
            fmt_ratio(row.get("blocks_created_at_s_ratio")), row.get("blocks_created_at_s_verdict", "reference")))


def begin_rows(groups):
    """One dict per (case, contender) whose trials recorded the first online's
    wait in mem_hotplug_begin, with the per-trial (add's end to the first write,
    wait, grace period) of the trials that wrote."""
    rows = []
    for key, trials in sorted(groups.items(), key=lambda kv: tuple(map(str, kv[0]))):
        ok = [r for _, _, r in trials if r.get("ok") and is_number(r.get("first_online_begin_ms"))]
        if not ok:
            continue
        waits = [r["first_online_begin_ms"] for r in ok]
        per_trial = sorted(
            (round((r["first_write_s"] - r["add_end_s"]) * 1e3, 1), r["first_online_begin_ms"],
             bool(r.get("first_online_begin_rcu")))
            for r in ok if is_number(r.get("first_write_s")) and is_number(r.get("add_end_s")))
        rows.append(dict(zip(("build", "kernel", "kind", "blocks", "contender"), key),
                         trials=len(ok), wait_ms=benchstats.bootstrap_median(waits),
                         wait_min_ms=min(waits), wait_max_ms=max(waits),
                         rcu=sum(1 for r in ok if r.get("first_online_begin_rcu") is True),
                         per_trial=per_trial))
    return rows


def print_begin(rows):
    last = None
    for row in rows:
        case = (row["build"], row["kernel"], row["kind"], row["blocks"])
        if case != last:
            last = case
            print("\n#### %s, %s, %s blocks (build %s): the first online's wait in mem_hotplug_begin\n"
                  % (row["kernel"], row["kind"], row["blocks"], row["build"]))
            print("| contender | trials | wait, median (95%) | range | a grace period in it | "
                  "the add's end to the first write: wait (ms), by trial |")
            print("|---|---|---|---|---|---|")
        m = row["wait_ms"]
        print("| %s | %d | %s | %.1f-%.1f ms | %d of %d | %s |" % (
            row["contender"], row["trials"], "%.1f ms (%.1f-%.1f)" % (m["median"], m["lo"], m["hi"]),
            row["wait_min_ms"], row["wait_max_ms"], row["rcu"], row["trials"],
            ", ".join("%.0f: %.1f%s" % (d, w, "*" if g else "") for d, w, g in row["per_trial"]) or "-"))
    if rows:
        print("\n(* a synchronize_rcu ran in the wait)")


def write_plot_data(rows, path):
    with open(path, "w") as f:
        for field, suffix in (("e2e_s", ""), ("first_block_s", ":first")):
            for row in sorted(rows, key=lambda r: (r["contender"], r["blocks"])):
                m = row[field]
                if m is not None and row["kind"] == "dimm":
                    f.write("%s%s %d %.4f %.4f %.4f\n" % (row["contender"], suffix, row["blocks"],
                                                         m["median"], m["lo"], m["hi"]))


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("paths", nargs="+")
    ap.add_argument("--json", action="store_true", help="one JSON object per row instead of Markdown")
    ap.add_argument("--plot-data")
    ap.add_argument("--created", action="store_true", help="when the first add's blocks appear, by contender")
    ap.add_argument("--begin", action="store_true",
                    help="the first online's wait in mem_hotplug_begin, by contender and by trial")
    ap.add_argument("--versus", type=versus_pair, action="append", default=[],
                    help="NUM/DEN: contender NUM over DEN, per case where both ran")
    a = ap.parse_args()
    loaded = benchstats.load(benchstats.trial_files(a.paths))
    groups = benchstats.pool(loaded)
    if a.begin:
        rows = begin_rows(groups)
        for row in rows if a.json else ():
            print(json.dumps(row, sort_keys=True))
        if not a.json:
            print_begin(rows)
        return 0 if rows else 1
    if a.created:
        rows = claim_rows(groups, CREATED)
        for row in rows if a.json else ():
            print(json.dumps(row, sort_keys=True))
        if not a.json:
            print_created(rows)
        return 0 if rows else 1
    rows = claim_rows(groups)
    own = own_time_rows(groups)
    pipeline = pipeline_rows(loaded)
    build_ab = build_ab_rows(loaded)
    versus = versus_rows(groups, a.versus)
    if pipeline and not a.json:
        print_pipeline(pipeline)
    if not rows and pipeline:
        return 0
    if not rows:
        print("verdicts: no trials in %s" % " ".join(a.paths), file=sys.stderr)
        return 1
    if a.json:
        for row in rows + own + build_ab + versus:
            print(json.dumps(row, sort_keys=True))
    else:
        print_build_ab(build_ab)
        print_markdown(rows)
        print_versus(versus)
        print_own_time(own)
    if a.plot_data:
        write_plot_data(rows, a.plot_data)
    return 0


if __name__ == "__main__":
    sys.exit(main())
