#!/usr/bin/env python3
"""Checks of tests/bench/benchstats.py, verdicts.py and vm-bench.py's plan
of the smoke's shared guests, one "ok - ..." or "not ok - ..." line each
(test-bench-data.sh numbers them as TAP)."""

import importlib.util
import itertools
import os
import signal
import statistics
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "bench"))
import benchstats  # noqa: E402
import verdicts  # noqa: E402



def load_script(name, file):
    """A script of tests/bench (its file name is no module name), loaded from its path."""
    spec = importlib.util.spec_from_file_location(
        name, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "bench", file))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


vm_bench = load_script("vm_bench", "vm-bench.py")
ab_images = load_script("ab_images", "ab-images.py")
write_gaps = load_script("write_gaps", "write-gaps.py")
sysfs_reads_ab = load_script("sysfs_reads_ab", "sysfs-reads-ab.py")


def check(cond, what):
    print("%s - %s" % ("ok" if cond else "not ok", what))


def exact_median_dist(vals):
    """{median: probability} over every resample with replacement of VALS."""
    n, dist = len(vals), {}
    for idx in itertools.product(range(n), repeat=n):
        m = statistics.median(vals[i] for i in idx)
        dist[m] = dist.get(m, 0) + 1
    return {m: c / n ** n for m, c in dist.items()}


def exact_interval(num, den, level=0.95):
    """The percentile interval of the exact bootstrap distribution of
    median(num*)/median(den*), num and den resampled independently."""
    ratios = {}
    for a, pa in exact_median_dist(num).items():
        for b, pb in exact_median_dist(den).items():
            ratios[a / b] = ratios.get(a / b, 0) + pa * pb
    cdf, lo, hi = 0.0, None, None
    for r in sorted(ratios):
        cdf += ratios[r]
        if lo is None and cdf > (1 - level) / 2:
            lo = r
        if hi is None and cdf >= 1 - (1 - level) / 2:
            hi = r
    return lo, hi


def bootstrap():
    # A dataset whose exact bootstrap interval sits well inside its atoms.
    num, den = [9.0, 10.0, 11.0, 12.0, 30.0], [4.0, 5.0, 6.0, 6.5, 7.0]
    got = benchstats.bootstrap_ratio(num, den)
    check(got["ratio"] == 11.0 / 6.0, "ratio of medians 11/6")
    check((got["lo"], got["hi"]) == exact_interval(num, den),
          "bootstrap interval %r equals the exact bootstrap's %r" % ((got["lo"], got["hi"]), exact_interval(num, den)))
    check(got["resamples"] >= 10000 and got["level"] == 0.95, "10000 resamples, 95 %")
    # Fixed seed: the same answer every run, and the known one for this dataset.
    check(benchstats.bootstrap_ratio(num, den) == got, "bootstrap is reproducible (fixed seed)")
    fixed = benchstats.bootstrap_ratio([10, 12, 11, 13, 30, 11], [5, 6, 5.5, 7, 6, 5])
    check((fixed["ratio"], round(fixed["lo"], 4), round(fixed["hi"], 4)) == (2.0, 1.7143, 3.9048),
          "known interval on the fixed dataset: 2.00 [1.7143, 3.9048], got %.2f [%.4f, %.4f]"
          % (fixed["ratio"], fixed["lo"], fixed["hi"]))
    # Resampled independently: equal sets still give an interval around 1, not [1, 1].
    same = benchstats.bootstrap_ratio([1, 2, 3, 4, 5], [1, 2, 3, 4, 5])
    check(same["lo"] < 1 < same["hi"], "numerator and denominator resampled independently")
    check(benchstats.bootstrap_ratio([], [1]) is None and benchstats.bootstrap_ratio([1], []) is None,
          "no interval without data")
    m = benchstats.bootstrap_median([3.0, 1.0, 2.0])
    check(m["median"] == 2.0 and m["lo"] == 1.0 and m["hi"] == 3.0, "bootstrap median of 1,2,3: 2 [1, 3]")


def rotation():
    for k in range(2, 8):
        names = ["c%d" % i for i in range(k)]
        p = benchstats.period(k)
        for rounds in (p, 2 * p):
            s = benchstats.schedule(names, rounds, seed=k)
            check(len(s) == rounds and all(sorted(r) == names for r in s),
                  "%d contenders, %d rounds: each round runs each contender once" % (k, rounds))
            pos = benchstats.position_counts(s)
            check(all(c == [rounds // k] * k for c in pos.values()),
                  "%d contenders, %d rounds: each in each position %d times" % (k, rounds, rounds // k))
            carry = benchstats.carryover_counts(s)
            check(len(carry) == k * (k - 1) and len(set(carry.values())) == 1,
                  "%d contenders, %d rounds: each follows each other equally often" % (k, rounds))
    s6 = benchstats.schedule(["memonlined", "kernel-auto-online", "serial-loop"], 6, seed=1)
    check(s6 == benchstats.schedule(["memonlined", "kernel-auto-online", "serial-loop"], 6, seed=1),
          "the schedule is the same for the same seed (a resumed campaign keeps it)")


def pooling():
    rows = [("a", 1, {"contender": "x", "kind": "dimm", "blocks_requested": 64, "kernel": "6.12", "build": "b1",
                      "ok": True, "e2e_s": 1.0}),
            ("a", 2, {"contender": "x", "kind": "dimm", "blocks_requested": 64, "kernel": "6.12", "build": "b1",
                      "ok": False}),
            ("b", 1, {"contender": "x", "kind": "dimm", "blocks_requested": 64, "kernel": "6.12", "build": "b1",
                      "ok": True, "e2e_s": 2.0}),
            ("b", 2, {"contender": "x", "kind": "dimm", "blocks_requested": 64, "kernel": "6.12", "build": "b2",
                      "ok": True, "e2e_s": 9.0}),
            ("b", 3, {"bench": "machine"})]
    g = benchstats.pool(rows)
    k1 = ("b1", "6.12", "dimm", 64, "x")
    check(sorted(g) == sorted([k1, ("b2", "6.12", "dimm", 64, "x")]), "pooled by build, kernel, kind, blocks, contender")
    check(len(g[k1]) == 3 and benchstats.times(g[k1], "e2e_s") == [1.0, 2.0],
          "a group keeps its failed trials; times are the successful ones across files")


def claims():
    def trial(contender, rnd, pos, last, first, ok=True):
        return ("f", rnd * 3 + pos, {"contender": contender, "kind": "dimm", "blocks": 512, "kernel": "6.12",
                                     "build": "b1", "ok": ok, "e2e_s": last, "first_block_s": first,
                                     "round": rnd, "position": pos})
    rows = []
    for rnd in range(6):
        order = benchstats.schedule(["memonlined", "kernel-auto-online", "udev-rule"], 6, seed="t")[rnd]
        for pos, c in enumerate(order):
            last = {"memonlined": 5.0, "kernel-auto-online": 10.0, "udev-rule": 10.0}[c] + 0.1 * rnd
            # The first block: udev-rule as early as auto-online, memonlined later, each with spread.
            first = {"memonlined": 4.0, "kernel-auto-online": 2.0, "udev-rule": 2.0}[c] + 0.3 * ((rnd * 7) % 5)
            rows.append(trial(c, rnd, pos, last, first))
    rows.append(trial("udev-rule", 6, 0, None, None, ok=False))
    got = {r["contender"]: r for r in verdicts.claim_rows(benchstats.pool(rows))}
    check(set(got) == {"memonlined", "kernel-auto-online", "udev-rule"}, "one claim row per contender")
    m, u, ref = got["memonlined"], got["udev-rule"], got["kernel-auto-online"]
    check(m["e2e_s_verdict"] == "faster" and m["e2e_s_ratio"]["hi"] < 1,
          "half the reference's time, no overlap: faster (%.2f)" % m["e2e_s_ratio"]["ratio"])
    check(m["first_block_s_verdict"] == "slower" and m["first_block_s_ratio"]["lo"] > 1,
          "a later first block: slower")
    check(u["e2e_s_verdict"] == "not told apart", "the same times as the reference: not told apart")
    check(u["trials"] == 7 and u["ok"] == 6, "a failed trial counts in the group, not in its times")
    check("e2e_s_verdict" not in ref and ref["reference"] == "kernel-auto-online", "the reference has no ratio")
    check(m["positions"] == [0, 0, 1, 1, 2, 2], "the positions of a balanced period: each twice")
    check(verdicts.verdict(None) == "no data", "no verdict without data")
    few = benchstats.bootstrap_ratio([1, 1.1, 1.2], [5, 5.1, 5.2])
    check(verdicts.verdict(few).startswith("no verdict"), "no verdict from fewer than 6 trials a side")



def created():
    def trial(contender, rnd, created_at, ok=True):
        return ("f", rnd, {"contender": contender, "kind": "dimm1", "blocks": 512, "kernel": "6.1", "build": "b1",
                           "ok": ok, "e2e_s": 5.0, "first_block_s": 2.0, "blocks_created_at_s": created_at})
    rows = []
    for rnd in range(6):
        rows.append(trial("kernel-auto-online", rnd, [1.8 + 0.05 * rnd]))
        rows.append(trial("memonlined", rnd, [2.8 + 0.05 * rnd, 9.0]))     # the first add's counts, not the second's
        rows.append(trial("udev-rule", rnd, [1.8 + 0.05 * ((rnd * 5) % 6)]))
    rows += [trial("memonlined", 6, [0.1], ok=False),                       # a failed trial adds nothing
             trial("udev-rule", 7, []), trial("udev-rule", 8, None), trial("udev-rule", 9, [True])]
    got = {r["contender"]: r for r in verdicts.claim_rows(benchstats.pool(rows), verdicts.CREATED)}
    m, u = got["memonlined"], got["udev-rule"]
    check(m["blocks_created_at_s"]["n"] == 6 and abs(m["blocks_created_at_s"]["median"] - 2.925) < 1e-9,
          "blocks appear: the first add's time of each successful trial")
    check(m["blocks_created_at_s_verdict"] == "slower", "an add that starts later: slower")
    check(u["blocks_created_at_s"]["n"] == 6 and u["blocks_created_at_s_verdict"] == "not told apart",
          "trials that do not tell (no list, an empty one, a bool) are left out: not told apart")
    check("e2e_s" not in m, "the blocks-appear table has no other measure")


def begin():
    """verdicts.py --begin: the first online's wait in mem_hotplug_begin, by contender and by trial."""
    def trial(contender, wait, rcu, write=None, ok=True):
        r = {"contender": contender, "kind": "cxl", "blocks": 32, "kernel": "6.12", "build": "b1", "ok": ok,
             "first_online_begin_ms": wait, "first_online_begin_rcu": rcu, "add_end_s": 0.2}
        if write is not None:
            r["first_write_s"] = write
        return ("f", 1, r)
    rows = [trial("cxl+memonlined", 70.0 + k, True, 0.3 + 0.01 * k) for k in range(5)]
    rows += [trial("cxl+memonlined", 0.3, False, 0.23),
             trial("cxl+memonlined", 500.0, True, 0.9, ok=False),          # a failed trial adds nothing
             trial("cxl+memonlined", True, True, 0.5),                      # a bool is no wait
             trial("cxl+kernel-auto-online", 0.04, False), ("f", 2, {"contender": "udev", "kind": "cxl",
                                                                     "blocks": 32, "kernel": "6.12", "build": "b1",
                                                                     "ok": True})]
    got = {r["contender"]: r for r in verdicts.begin_rows(benchstats.pool(rows))}
    m = got["cxl+memonlined"]
    check(sorted(got) == ["cxl+kernel-auto-online", "cxl+memonlined"], "begin: only contenders whose trials tell")
    check(m["trials"] == 6 and m["rcu"] == 5 and m["wait_min_ms"] == 0.3 and m["wait_max_ms"] == 74.0
          and m["wait_ms"]["median"] == 71.5, "begin: the successful trials' waits, and those with a grace period")
    check(m["per_trial"][0] == (30.0, 0.3, False) and m["per_trial"][-1] == (140.0, 74.0, True),
          "begin: per trial the add's end to the first write beside its wait, nearest first")
    check(got["cxl+kernel-auto-online"]["per_trial"] == [], "begin: no first write, no per-trial line")


def own_time():
    def trial(contender, phase, kernel_sum, prepare, ok=True):
        return ("f", 1, {"contender": contender, "kind": "dimm", "blocks": 512, "kernel": "6.12", "build": "b1",
                         "ok": ok, "onlining_phase_s": phase, "kernel_online_sum_s": kernel_sum,
                         "mo_prepare_usec": prepare})
    rows = [trial("memonlined", 1.2 * k, k, [10000 * k, 100000]) for k in (1, 2, 3, 4, 5, 6)]
    rows += [trial("memonlined", 9.0, 1.0, [900000], ok=False),          # a failed trial adds nothing
             trial("memonlined", 1.0, 0, [True]),                         # no kernel time, no bool as a time
             trial("kernel-auto-online", 5.0, 1.0, None)]
    got = verdicts.own_time_rows(benchstats.pool(rows))
    check(len(got) == 1 and got[0]["contender"] == "memonlined", "own time only for memonlined's cases")
    m = got[0]["phase_over_kernel"]
    check(m is not None and m["n"] == 6 and abs(m["median"] - 1.2) < 1e-9,
          "the phase over Σ online_pages per trial, without a zero sum or a failed trial")
    check(got[0]["batches"] == 12 and got[0]["prepare_ms_max"] == 100.0,
          "every batch's preparation of the successful trials, in ms")
    check(got[0]["prepare_ms_p90"] == 100.0, "nearest-rank p90 of 12 batches is the 11th")
    r = {"add_end_s": 2.0, "event_delay_ms": 100.0, "first_block_s": 3.0, "first_online_after_s": 2.75}
    check(abs(verdicts.first_floor(r) - 2.35) < 1e-9, "first-block floor: add end + event trip + that online")
    check(verdicts.first_floor({"add_end_s": 2.0}) is None, "no first-block floor from a trial that does not tell")
    check(got[0]["first_floor_over_reference"] is None and got[0]["add_end_to_first_write_ms"] is None,
          "no floor ratio without floors, no first-write time without first writes")
    check(benchstats.percentile([], 90) is None and benchstats.percentile([3, 1, 2], 50) == 2,
          "percentile of nothing is None; of 1,2,3 the median is 2")



def pipeline_ab():
    rows = [("f", i, {"bench": "pipeline", "blocks": 100, "contender": c, "build": b, "cpu_usec_per_block": v})
            for i, (c, b, v) in enumerate([("old", "o1", 10.0 + k * 0.1) for k in range(6)] +
                                          [("new", "n1", 5.0 + k * 0.1) for k in range(6)])]
    rows.append(("f", 99, {"bench": "pipeline", "blocks": 200, "contender": "new", "cpu_usec_per_block": 1.0}))
    got = verdicts.pipeline_rows(rows)
    check(len(got) == 1 and got[0]["blocks"] == 100, "a size with one side only gives no row")
    check(got[0]["verdict"] == "faster" and got[0]["old_build"] == "o1" and got[0]["new_build"] == "n1",
          "half the CPU per block of the old build: faster (%.2f)" % got[0]["ratio"]["ratio"])


def build_ab():
    arms = [("old", "/i/old", "cxl+memonlined", "o1"), ("new", "/i/new", "cxl+memonlined", "n1"),
            ("auto", "/i/new", "cxl+kernel-auto-online", "n1")]
    plan = ab_images.todo(arms, 6, "t", set())
    check(len(plan) == 18 and all(sorted(n for r, _, n in plan if r == rnd) == ["auto", "new", "old"]
                                  for rnd in range(6)), "ab-images: every round runs every arm once")
    sched = [[n for r, _, n in plan if r == rnd] for rnd in range(6)]
    check(all(c == [2, 2, 2] for c in benchstats.position_counts(sched).values()),
          "ab-images: over 6 rounds of 3 arms each arm takes each position twice")
    check(ab_images.todo(arms, 6, "t", {("old", 0), ("new", 3)}) ==
          [t for t in plan if t[::2] not in ((0, "old"), (3, "new"))], "ab-images: --resume skips what ran")
    check(ab_images.parse_arm("new=/a/b,cxl+memonlined,db3b597") == ("new", "/a/b", "cxl+memonlined", "db3b597"),
          "ab-images: an arm is NAME=IMAGE_DIR,CONTENDER,BUILD")

    def trial(arm, build, last, first, prepare, ok=True):
        return ("f", 0, {"ab_arm": arm, "build": build, "kernel": "6.12", "kind": "cxl", "blocks_requested": 32,
                         "contender": "cxl+memonlined", "ok": ok, "e2e_s": last, "first_block_s": first,
                         "mo_prepare_usec": [prepare]})
    rows = [trial("old", "o1", 1.0 + k * 0.01, 0.55 + k * 0.02, 150000 + k) for k in range(6)]
    rows += [trial("new", "n1", 0.9 + k * 0.01, 0.56 + k * 0.02, 50000 + k) for k in range(6)]
    rows.append(trial("new", "n1", None, None, 1, ok=False))
    rows.append(("f", 0, {"ab_arm": "auto", "build": "n1", "kernel": "6.12", "kind": "cxl", "blocks_requested": 32,
                          "contender": "cxl+kernel-auto-online", "ok": True, "e2e_s": 0.5}))
    got = verdicts.build_ab_rows(rows)
    check(len(got) == 1 and got[0]["old_build"] == "o1" and got[0]["new_build"] == "n1",
          "builds A/B: one case, the old and the new arm's builds")
    check(got[0]["new_trials"] == 7 and got[0]["new_ok"] == 6, "builds A/B: a failed trial counts, without a time")
    check(got[0]["prepare_ms"]["verdict"] == "faster" and abs(got[0]["prepare_ms"]["new"] - 50.0025) < 1e-6,
          "builds A/B: a third of the preparation is faster (%.2f)" % got[0]["prepare_ms"]["ratio"]["ratio"])
    check(got[0]["e2e_s"]["verdict"] == "faster", "builds A/B: 10% off the last block, no overlap: faster")
    check(got[0]["first_block_s"]["verdict"] == "not told apart",
          "builds A/B: first blocks that overlap are not told apart")
    check(verdicts.build_ab_rows([r for r in rows if r[2]["ab_arm"] != "old"]) == [],
          "builds A/B: no old arm, no row")

    def setting(contender, k, last, phase, ok=True):
        return ("f", k, {"build": "n1", "kernel": "6.12", "kind": "dimm1", "blocks": 512, "contender": contender,
                         "ok": ok, "e2e_s": last, "first_block_s": 2.0 + 0.01 * k, "onlining_phase_s": phase,
                         "kernel_online_sum_s": 4.0 + 0.01 * k})
    rows = [setting("memonlined", k, 9.0 + 0.01 * k, 4.2 + 0.01 * k) for k in range(6)]
    rows += [setting("memonlined-no-chain", k, 10.0 + 0.01 * k, 5.0 + 0.01 * k) for k in range(6)]
    rows += [setting("memonlined-no-chain", 6, None, None, ok=False),
             setting("kernel-auto-online", 0, 9.5, None)]
    got = verdicts.versus_rows(benchstats.pool(rows), [("memonlined", "memonlined-no-chain"),
                                                       ("memonlined", "chmem")])
    check(len(got) == 1 and got[0]["num_ok"] == 6 and got[0]["den_trials"] == 7 and got[0]["den_ok"] == 6,
          "--versus: one row per case where both ran; a failed trial counts, without a time")
    check(got[0]["e2e_s"]["verdict"] == "faster" and got[0]["onlining_phase_s"]["verdict"] == "faster"
          and got[0]["first_block_s"]["verdict"] == "not told apart"
          and got[0]["kernel_online_sum_s"]["verdict"] == "not told apart",
          "--versus: each measure's ratio and verdict by the rule")
    check(verdicts.versus_pair("a/b-c") == ("a", "b-c"), "--versus: NUM/DEN")


def one_dimm():
    class Args:
        one_dimm = True
    plan = vm_bench.points(["memonlined", "kernel-auto-online", "cxl+memonlined"], set(), [512], [], [],
                           vm_bench.dimm_kind(Args()))
    check(plan == [("dimm1", 512, ["memonlined", "kernel-auto-online"])], "--one-dimm: a case of its own, dimm1")
    check(vm_bench.dimm_kind(object()) == "dimm", "without --one-dimm: two DIMMs, dimm")
    check(benchstats.REFERENCE["dimm1"] == "kernel-auto-online", "one DIMM is compared with auto-online too")
    diag = list(vm_bench.DIMM_DIAG) + list(vm_bench.NVDIMM_DIAG) + list(vm_bench.CXL_DIAG)
    check(all(c in vm_bench.KNOWN and c not in vm_bench.ALL for c in diag),
          "--contenders may name every kind's diagnostic contender, which runs only when named")
    plan = vm_bench.points(["cxl+memonlined", "cxl+memonlined-no-chain"], set(), [], [], [32])
    check(plan == [("cxl", 32, ["cxl+memonlined", "cxl+memonlined-no-chain"])], "a CXL diagnostic is planned when named")


def smoke_guests():
    names = [c for c in vm_bench.ALL if c not in vm_bench.CXL_CONTENDERS]
    plan = vm_bench.points(names, set(), [64], [64], [])
    todo = [(0, pos, kind, s, c) for kind, s, cs in plan
            for pos, c in enumerate(benchstats.schedule(cs, 1, "bench/%s/%d" % (kind, s))[0])]
    guests = vm_bench.smoke_guests(todo)
    check(len(guests) == 2 and [g[0][2] for g in guests] == ["dimm", "nvdimm"],
          "the smoke's 11 trials in 2 guests: the DIMM contenders', then the NVDIMM ones'")
    check(sorted(t for g in guests for t in g) == sorted(todo), "every smoke trial runs, once")
    check(all(len({(t[2], t[3]) for t in g}) == 1 for g in guests), "a shared guest holds one kind and size")
    for g in guests:
        masks = [vm_bench.masks_memonlined(t[4]) for t in g]
        check(masks == sorted(masks) and 0 < sum(masks) < len(masks),
              "%s guest: the contenders that run memonlined before those that mask it" % g[0][2])
    check([t[4] for t in guests[1]][-1] == "daxctl-online", "daxctl's own onlining last in the NVDIMM guest")
    check(all(vm_bench.masks_memonlined(c) == (conf is None) for c, (_, conf, _) in vm_bench.DIMM_CONTENDERS.items()),
          "a DIMM contender masks memonlined when it has no memonlined config")
    kept = [t[4] for t in todo if not vm_bench.masks_memonlined(t[4])]
    check([t[4] for g in guests for t in g if not vm_bench.masks_memonlined(t[4])] == kept,
          "within a guest the rotation's order is kept otherwise")
    cxl = [(0, i, "cxl", 8, c) for i, c in enumerate(vm_bench.CXL_CONTENDERS)]
    check(vm_bench.smoke_guests(todo + cxl)[2:] == [[t] for t in cxl], "a CXL trial keeps a guest of its own")
    dimm = vm_bench.SharedGuest(None, guests[0])
    check(dimm.slots == 16 and dimm.added == 8 * 64 * vm_bench.BLOCK,
          "the DIMM guest: two slots and 64 blocks of DIMMs a contender")
    mixed = vm_bench.SharedGuest(None, guests[0] + guests[1])
    check(mixed.slots == 19 and mixed.added == dimm.added, "an NVDIMM takes one slot and no DIMM memory")
    check(vm_bench.maxmem(dimm.added, 2048) == vm_bench.MAXMEM, "the DIMM guest's memory fits the usual maxmem")


def gaps():
    """write-gaps.py: which batch a write belongs to, and the phase and floor over Σ online_pages."""
    entries = [{"MESSAGE": "write times (µs, entry-return): memory10 1000000-1004000, memory11 1005000-1009000"},
               {"MESSAGE": "Onlined 2 blocks (0.25 GiB) on 1 node in 0.010 s"},
               {"MESSAGE": "write times (µs, entry-return): memory12 1109000-1113000"},
               {"MESSAGE": "Onlined 1 block (0.12 GiB) on 1 node in 0.004 s"}]
    writes = write_gaps.writes_from(entries)
    check([(w[0], w[3]) for w in writes] == [(10, 0), (11, 0), (12, 1)],
          "write-gaps: a write belongs to the batch whose Onlined line follows it")
    # online_pages takes 3 ms of each 4 ms write: 1 ms of head and none of tail, say.
    ev = {"add": [0.5], "onl": [1.001, 1.006, 1.110], "onlr": [1.004, 1.009, 1.113]}
    r = write_gaps.decompose(writes, ev)
    check(r["writes_paired"] == 3 and r["online_ms_sum"] == 9.0 and r["span_ms_sum"] == 12.0,
          "write-gaps: every write pairs with the online_pages inside it")
    check(r["own_in_batch_ms_sum"] == 1.0 and r["own_across_batches_ms_sum"] == 100.0,
          "write-gaps: own gaps inside a batch apart from the batch boundary")
    check(abs(r["floor_over_online"] - 12 / 9) < 1e-3 and abs(r["in_batch_phase_over_online"] - 13 / 9) < 1e-3
          and abs(r["phase_over_online"] - 113 / 9) < 1e-3,
          "write-gaps: floor, in-batch phase and whole phase over Σ online_pages")
    check(r["own_in_batch_longest"] == [[1.0, 0.504]], "write-gaps: the longest own gap inside a batch, and when")
    # A write with no online_pages inside it (a block already online) is not paired.
    lone = write_gaps.decompose(writes, {"add": [0.5], "onl": [1.001, 1.110], "onlr": [1.004, 1.113]})
    check(lone["writes_paired"] == 2 and lone["online_ms_sum"] == 6.0, "write-gaps: a write without online_pages stays unpaired")
    ok = {"ok": True, "kernel": "6.12", "kind": "dimm1", "blocks": 512, "build": "x"}
    groups = write_gaps.summary_rows([dict(ok, floor_over_online=1.2), dict(ok, floor_over_online=1.3),
                                      dict(ok, ok=False, floor_over_online=1.0), dict(ok, floor_over_online=None)])
    check(list(groups) == [("6.12", "dimm1", 512, "x")] and len(groups[("6.12", "dimm1", 512, "x")]) == 2,
          "write-gaps summary: only successful trials that paired writes")


def sched_gaps():
    """write-gaps.py --sched: each gap on the writer's CPU split by what ran there."""
    w = "     mo-write-n0-345     [000] ....."
    lines = [
        w + "  10.000000: onl: (online_pages+0x0/0x2d0)",
        w + "  10.004000: onlr: (memory_block_change_state+0x1/0x2) arg1=0x0",
        # 0.5 ms of the writer's own path, then a virtio interrupt for 0.25 ms.
        w + "  10.004500: irq_handler_entry: irq=24 name=virtio0-input.0",
        w + "  10.004750: irq_handler_exit: irq=24 ret=handled",
        # Preempted by a udev worker for 2 ms, which takes a timer softirq for 0.5 ms.
        w + "  10.005000: sched_switch: prev_comm=mo-write-n0 prev_pid=345 prev_prio=115 prev_state=R+ "
            "==> next_comm=(udev-worker) next_pid=900 next_prio=120",
        "   (udev-worker)-900     [000] ..s..  10.006000: softirq_entry: vec=1 [action=TIMER]",
        "   (udev-worker)-900     [000] ..s..  10.006500: softirq_exit: vec=1 [action=TIMER]",
        "   (udev-worker)-900     [000] .....  10.007000: sched_switch: prev_comm=(udev-worker) prev_pid=900 "
            "prev_prio=120 prev_state=S ==> next_comm=mo-write-n0 next_pid=345 next_prio=115",
        w + "  10.007250: onl: (online_pages+0x0/0x2d0)",
        w + "  10.011000: onlr: (memory_block_change_state+0x1/0x2) arg1=0x0",
        # A short gap: the writer alone, 0.1 ms.
        w + "  10.011100: onl: (online_pages+0x0/0x2d0)",
        w + "  10.015000: onlr: (memory_block_change_state+0x1/0x2) arg1=0x0",
        "not a trace line",
    ]
    r = write_gaps.sched_gaps(lines)
    check(r["gaps"] == 2 and r["gaps_long"] == 1, "write-gaps --sched: the gaps between one writer's onlines, one long")
    got = r["gap_ms_by_what"]
    check(abs(got["writer"] - 1.1) < 1e-6 and abs(got["irq:virtio0-input.0"] - 0.25) < 1e-6
          and abs(got["(udev-worker)"] - 1.5) < 1e-6 and abs(got["softirq:TIMER"] - 0.5) < 1e-6,
          "write-gaps --sched: a gap's time goes to the writer, the interrupt and the task that ran")
    check(abs(r["long_gap_ms_by_what"]["writer"] - 1.0) < 1e-6 and abs(sum(r["long_gap_ms_by_what"].values()) - 3.25) < 1e-6,
          "write-gaps --sched: the long gaps' split leaves the short gap out")
    check(r["writer_preempted_in_gaps"] == 1 and r["writer_slept_in_gaps"] == 0,
          "write-gaps --sched: a switch out in state R is a preemption")
    check(write_gaps.writer_cpus("\n".join(lines)) == [0], "write-gaps --sched: the writer's CPU from its online_pages lines")
    check(write_gaps.task_label("kworker/3:1H") == "kworker" and write_gaps.task_label("ksoftirqd/2") == "ksoftirqd"
          and write_gaps.task_label("(udev-worker)") == "(udev-worker)", "write-gaps --sched: task names without instances")
    check(write_gaps.sched_gaps(lines[:2]) == {}, "write-gaps --sched: no gap, no split")
    other = ["          <idle>-0       [001] d....  10.005000: sched_switch: prev_comm=swapper/1 prev_pid=0 "
             "prev_prio=120 prev_state=R ==> next_comm=systemd-journal next_pid=300 next_prio=120",
             " systemd-journal-300     [001] d....  10.006000: sched_switch: prev_comm=systemd-journal prev_pid=300 "
             "prev_prio=120 prev_state=S ==> next_comm=swapper/1 next_pid=0 next_prio=120",
             "          <idle>-0       [001] d.h..  10.006500: irq_handler_entry: irq=1 name=i8042",
             "          <idle>-0       [001] d.h..  10.006600: irq_handler_exit: irq=1 ret=handled",
             "          <idle>-0       [001] d....  10.009000: sched_switch: prev_comm=swapper/1 prev_pid=0 "
             "prev_prio=120 prev_state=R ==> next_comm=systemd-journal next_pid=300 next_prio=120"]
    busy = write_gaps.busy_by_task([lines, other], 10.004, 10.008)
    check(busy == {"mo-write-n0": 1.8, "(udev-worker)": 1.5, "systemd-journal": 1.0, "softirq:TIMER": 0.5,
                   "irq:virtio0-input.0": 0.2, "irq:i8042": 0.1},
          "write-gaps --sched: every CPU's busy time by task inside the phase, idle left out, its interrupts kept")


def guest_cpus():
    """vm.py: the guest's CPUs, half on each CPU node, in the -smp shape of their count."""
    import tempfile
    vm = sys.modules[vm_bench.VM.__module__]
    d = tempfile.mkdtemp()
    for f in ("image.raw", "vmlinuz", "initrd.img"):
        open(os.path.join(d, f), "w").close()
    shapes = {}
    for cpus in (2, 4, 8):
        guest = vm.VM(image_dir=d, cpus=cpus)
        line = guest.qemu_cmdline()
        shapes[cpus] = (line[line.index("-smp") + 1], [a for a in line if a.startswith("node,nodeid=") and "cpus=" in a])
        guest.close()
    check(shapes[8] == ("8,sockets=2,cores=2,threads=2", ["node,nodeid=0,cpus=0-3,memdev=ram0",
                                                          "node,nodeid=1,cpus=4-7,memdev=ram1"]),
          "vm.py: 8 CPUs keep the suites' shape, two cores of two threads per node")
    check(shapes[2] == ("2,sockets=2,cores=1,threads=1", ["node,nodeid=0,cpus=0,memdev=ram0",
                                                          "node,nodeid=1,cpus=1,memdev=ram1"]),
          "vm.py: 2 CPUs, one per node")
    check(shapes[4][1] == ["node,nodeid=0,cpus=0-1,memdev=ram0", "node,nodeid=1,cpus=2-3,memdev=ram1"],
          "vm.py: 4 CPUs, a core of two threads per node")
    try:
        vm.VM(image_dir=d, cpus=3)
        refused = False
    except vm.VMError:
        refused = True
    check(refused, "vm.py: a CPU count without a shape is refused")
    # An RCU stall report whose backtraces fill far more than a short tail, before the agent answers.
    guest = vm.VM(image_dir=d)
    with open(guest.serial_log, "w") as f:
        f.write("[  255.0] rcu: INFO: rcu_preempt detected stalls on CPUs/tasks:\n")
        f.write("".join("[  276.8%04d] NMI backtrace for cpu %d ... RIP: 0010:pv_native_safe_halt\n" % (i, i % 8)
                        for i in range(400)))
    guest.alive = lambda: True

    def no_agent(*a, **k):
        raise OSError("no agent")
    guest.qga_call = no_agent
    try:
        guest.wait_guest_ready(timeout=30, stall_s=120)
        stalled = False
    except vm.BootStalled:
        stalled = True
    except vm.VMError:          # the agent's timeout: the stall went unseen
        stalled = False
    size = guest._serial_size()
    check(guest.serial_since(size) == guest.serial_tail(64) and guest.serial_since(size, overlap=0) == "",
          "vm.py: what the console printed since an offset, with the overlap before it")
    guest.close()
    check(stalled, "vm.py: an RCU stall report is seen however long its backtraces run")
    # QEMU aborts on an assertion of its own during the first boot: a reboot, not a failed run.
    guest = vm.VM(image_dir=d)
    starts, kills = [], []

    class Exited:
        def __init__(self, rc):
            self.returncode = rc

    def start():
        starts.append(guest.nvdimm_next_addr)
        guest.nvdimm_next_addr += 1 << 30
        guest.t_boot = time.monotonic()
        with open(guest.qemu_log, "w") as f:
            f.write("qemu-system-x86_64: system/physmem.c:2678: iotlb_to_section: Assertion "
                    "`section_index < d->map.sections_nb' failed.\n" if len(starts) == 1 else "")
        guest.proc = Exited(-signal.SIGABRT if len(starts) == 1 else None)
    guest.start = start
    guest.log = lambda msg: None
    guest.kill = lambda: kills.append(len(starts))
    guest.alive = lambda: len(starts) > 1
    guest.qga_call = lambda *a, **k: {}
    guest.guest_exec = lambda *a, **k: vm.ExecResult(0, "running\n", "")
    guest.boot(attempts=3, stall_s=120)
    check(len(starts) == 2 and kills == [1] and guest.boot_retries == 1 and starts[1] == starts[0],
          "vm.py: QEMU's own assertion during boot costs one reboot, with the NVDIMM addresses reset")
    # A command line QEMU refuses is not retried: it would fail the same way each time.
    guest2 = vm.VM(image_dir=d)
    refused = []

    def start_refused():
        refused.append(1)
        with open(guest2.qemu_log, "w") as f:
            f.write("qemu-system-x86_64: -device nvdimm: memory backend not found\n")
        guest2.proc = Exited(1)
    guest2.start = start_refused
    guest2.log = lambda msg: None
    guest2.kill = lambda: None
    guest2.alive = lambda: False
    try:
        guest2.boot(attempts=3, stall_s=120)
        raised = None
    except vm.VMError as e:
        raised = e
    check(len(refused) == 1 and raised is not None and not isinstance(raised, vm.EmulatorAborted),
          "vm.py: QEMU refusing its command line fails at once, without a reboot")
    guest.proc = guest2.proc = None
    guest.close()
    guest2.close()
    for f in os.listdir(d):
        os.unlink(os.path.join(d, f))
    os.rmdir(d)


def sysfs_reads():
    """sysfs-reads-ab.py: the arms' turns, and what a run's lines give."""
    turns = sysfs_reads_ab.order(6)
    check(len(turns) == 12 and sum(1 for a, _ in turns if a == "old") == 6, "sysfs-reads-ab: each arm once a round")
    firsts = [turns[2 * k][0] for k in range(6)]
    check(firsts.count("old") == 3 and firsts.count("new") == 3, "sysfs-reads-ab: each arm leads in half of the rounds")
    got = sysfs_reads_ab.parse("acpi_scan_cached 2400 0\nmemdev_load_cached 5000 0\npmem_scan 900 -2\n"
                               "garbage line\nacpi_scan_uncached 12x 0\n")
    check(got == {"acpi_scan_cached": 2400, "memdev_load_cached": 5000},
          "sysfs-reads-ab: a failed read (result < 0) and malformed lines are left out")
    n = {"n_num": 20, "n_den": 20}
    check(sysfs_reads_ab.verdict(dict(n, lo=0.2, hi=0.4)) == "faster"
          and sysfs_reads_ab.verdict(dict(n, lo=0.9, hi=1.1)) == "not told apart"
          and sysfs_reads_ab.verdict(dict(n, lo=1.1, hi=1.3)) == "slower",
          "sysfs-reads-ab: the verdict follows the interval")
    check(sysfs_reads_ab.verdict({"n_num": 5, "n_den": 20, "lo": 0.2, "hi": 0.4}) == "no verdict (n < 6)",
          "sysfs-reads-ab: verdicts.py's rule, n >= 6 included")


def stop_at():
    """vm-bench.py --stop-at: no trial starts at or after the plan's time."""
    at = lambda hm: time.struct_time((2026, 12, 7, hm[0], hm[1], 0, 0, 341, 0))
    check(not vm_bench.past_stop_time(None, at((23, 59))), "vm-bench: without --stop-at every trial runs")
    check(not vm_bench.past_stop_time("08:50", at((8, 49))), "vm-bench: a trial starts before the stop time")
    check(vm_bench.past_stop_time("08:50", at((8, 50))), "vm-bench: no trial starts at the stop time")
    check(vm_bench.past_stop_time("8:05", at((9, 0))), "vm-bench: nor after it, the hour compared first")
    check(not vm_bench.past_stop_time("00:12", at((23, 46))), "vm-bench: a stop time after midnight is to come")
    check(vm_bench.past_stop_time("00:12", at((0, 13))), "vm-bench: and has passed once midnight is behind")
    check(vm_bench.past_stop_time("23:50", at((0, 5))), "vm-bench: a stop time before midnight has passed after it")
    check(not vm_bench.past_stop_time("20:00", at((8, 1))) and vm_bench.past_stop_time("20:00", at((7, 59))),
          "vm-bench: the nearest stop time counts, 12 hours either way")


def hotplug_begin():
    """vm-bench.py: each online's wait in its own task's mem_hotplug_begin, and the RCU grace period in it."""
    line = "  %s [000] .....  %.6f: %s: (x)"
    trace = "\n".join(line % e for e in [
        ("cxl-600", 1.000, "add"), ("cxl-600", 1.100, "addr"),
        # Another task's begin and grace period, overlapping the writer's: not the writer's.
        ("kworker-9", 1.205, "hb"), ("kworker-9", 1.206, "rcu"),
        ("mo-write-n3-581", 1.200, "wr"), ("mo-write-n3-581", 1.201, "hb"),
        ("mo-write-n3-581", 1.202, "rcu"), ("kworker-9", 1.250, "hbr"),
        ("mo-write-n3-581", 1.274, "hbr"), ("mo-write-n3-581", 1.275, "onl"), ("mo-write-n3-581", 1.300, "onlr"),
        ("mo-write-n3-581", 1.301, "wr"), ("mo-write-n3-581", 1.3010, "hb"), ("mo-write-n3-581", 1.3011, "hbr"),
        ("mo-write-n3-581", 1.302, "onl"), ("mo-write-n3-581", 1.310, "onlr")])
    r = vm_bench.summarize_trace(vm_bench.parse_trace(trace), 2)
    check(r.get("first_online_begin_ms") == 73.0 and r.get("first_online_begin_rcu") is True,
          "vm-bench: the first online's wait is its own task's begin, with the grace period in it")
    check(r.get("online_begin_long") == [[73.0, 0.275, True]] and r.get("online_begin_long_ms_sum") == 73.0,
          "vm-bench: the second online's 0.1 ms begin is no long wait")
    other = vm_bench.summarize_trace(vm_bench.parse_trace(trace.replace("1.202000: rcu", "1.202000: xx")), 2)
    check(other.get("first_online_begin_ms") == 73.0 and other.get("first_online_begin_rcu") is False,
          "vm-bench: another task's grace period inside the wait is not the writer's")
    cut = vm_bench.summarize_trace(vm_bench.parse_trace(trace.replace("1.274000: hbr", "1.274000: xx")), 2)
    check("first_online_begin_ms" not in cut, "vm-bench: a begin without its return gives no wait")


def thread_cpu():
    """vm-bench.py: the daemon's CPU by thread between two snapshots, and the threads that exited."""
    before = vm_bench.parse_thread_cpu("T 100 5000000 10 0 1 memonlined\nT 101 1000000 3 0 0 mo-write-n0\n"
                                       "T 102 2000000 7 0 0 iou-wrk-101\nPROCESS 1 0 100\n")
    after = vm_bench.parse_thread_cpu("T 100 7000000 60 0 2 memonlined\nT 101 41000000 9 1 3 mo-write-n0\n"
                                      "T 103 30000000 5 0 2 iou-wrk-101\nT 104 10000000 4 1 0 mo-read-n0\n"
                                      "PROCESS 10 2 100\n")
    check(before[1] == 10**7 and before[0][102] == ("iou-wrk", 2000000, 7, 0),
          "vm-bench: a snapshot's process time from its ticks; an io-wq worker named without its TID")
    check(after[0][101][3] == 3 * 10**7, "vm-bench: a thread's kernel time from its ticks")
    d = vm_bench.thread_cpu_delta(before, after)
    check(d == {"iou-wrk": 30.0, "memonlined": 2.0, "mo-read-n0": 10.0, "mo-write-n0": 40.0,
                "exited": 28.0, "process": 110.0},
          "vm-bench: each live thread's time since the first snapshot, new ones whole; the rest exited")
    runs = vm_bench.thread_runs_delta(before, after)
    check(runs == {"runs": {"iou-wrk": 5, "memonlined": 50, "mo-read-n0": 4, "mo-write-n0": 6},
                   "sys_ms": {"iou-wrk": 20.0, "memonlined": 10.0, "mo-read-n0": 0.0, "mo-write-n0": 30.0}},
          "vm-bench: wakeups and kernel time by thread name since the first snapshot, new threads whole")
    reused = vm_bench.parse_thread_cpu("T 101 500000 2 0 0 mo-read-n0\nPROCESS 10 2 100\n")
    check(vm_bench.thread_cpu_delta(before, reused)["mo-read-n0"] == 0.5,
          "vm-bench: a TID reused by another thread counts from zero")
    check(vm_bench.thread_runs_delta(before, reused)["runs"] == {"mo-read-n0": 2},
          "vm-bench: a reused TID's wakeups count from zero")
    check(vm_bench.parse_thread_cpu("") is None and vm_bench.thread_cpu_delta(None, after) == {}
          and vm_bench.thread_runs_delta(None, after) == {},
          "vm-bench: no daemon, no snapshot, no field")
    spaced = vm_bench.parse_thread_cpu("T 7 3000000 1 0 0 CPU 0/TCG\nPROCESS 1 0 100\n")
    check(spaced and spaced[0][7] == ("CPU 0/TCG", 3000000, 1, 0), "vm-bench: a thread name with spaces")
    odd = vm_bench.parse_thread_cpu("T 7 x 1 0 0 memonlined\nT 8 5 1 0 memonlined\nPROCESS 1 0 100\n")
    check(odd == ({}, 10**7), "vm-bench: a thread line with a field missing or not a number is left out")
    check(vm_bench.parse_thread_cpu("PROCESS 1 0 0\n") is None, "vm-bench: a clock tick of zero is no snapshot")

bootstrap()
rotation()
pooling()
claims()
created()
own_time()
pipeline_ab()
build_ab()
one_dimm()
smoke_guests()
gaps()
sched_gaps()
guest_cpus()
sysfs_reads()
hotplug_begin()
begin()
stop_at()
thread_cpu()
