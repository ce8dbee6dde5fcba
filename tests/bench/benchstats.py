"""The bench's statistics and trial schedule, python3 stdlib only.

- williams_rows(k), schedule(contenders, rounds, seed): the order of the
  contenders in each round. Each round runs each contender once; over
  every full period of rounds (k rounds for an even number k of
  contenders, 2k for an odd one) each contender takes each position
  equally often and follows each other contender equally often (a
  Williams design), so neither the slot in a round nor the trial before
  it favours one contender. The seed picks which contender is which
  symbol and the order of the rows within each period.
- bootstrap_ratio(num, den): the ratio of the medians of two sets of
  trials with a percentile bootstrap 95% interval, each set resampled on
  its own, with a fixed seed.
- pool(rows): the pooling rule of docs/BENCHMARKS.md ("Pooling"), the one
  every claim uses.
"""

import json
import math
import os
import random
import statistics

BOOT_SEED = 20261205
# What each kind of hot-add is compared with: the kernel's (or daxctl's) own onlining.
# dimm is two DIMMs hot-added back to back, dimm1 one (vm-bench.py --one-dimm).
REFERENCE = {"dimm": "kernel-auto-online", "dimm1": "kernel-auto-online", "nvdimm": "daxctl-online",
             "cxl": "cxl+kernel-auto-online"}
RESAMPLES = 10000
LEVEL = 0.95


def median(vals):
    return statistics.median(vals) if vals else None


def williams_rows(k):
    """The rows of a Williams design for k symbols 0..k-1: k rows for an
    even k, 2k for an odd one (the rows and their mirror images)."""
    if k < 1:
        return []
    # 0, 1, k-1, 2, k-2, ...: every difference between neighbours once.
    base, lo, hi = [0], 1, k - 1
    while len(base) < k:
        base.append(lo)
        lo += 1
        if len(base) < k:
            base.append(hi)
            hi -= 1
    rows = [[(b + i) % k for b in base] for i in range(k)]
    if k % 2:
        rows += [list(reversed(r)) for r in rows]
    return rows


def schedule(contenders, rounds, seed):
    """[round][position] -> contender. Every round is a permutation of
    CONTENDERS; each full period of williams_rows() is a balanced block."""
    contenders = list(contenders)
    rng = random.Random("%s/%s" % (seed, ",".join(contenders)))
    symbols = contenders[:]
    rng.shuffle(symbols)
    rows = williams_rows(len(symbols))
    out = []
    while len(out) < rounds:
        block = rows[:]
        rng.shuffle(block)
        out += [[symbols[s] for s in row] for row in block]
    return out[:rounds]


def period(k):
    """Rounds after which schedule() is balanced for k contenders."""
    return k if k % 2 == 0 else 2 * k


def position_counts(sched):
    """{contender: [times at position 0, 1, ...]}"""
    counts = {}
    for row in sched:
        for pos, c in enumerate(row):
            counts.setdefault(c, [0] * len(row))[pos] += 1
    return counts


def carryover_counts(sched):
    """{(a, b): times b ran right after a within a round}"""
    counts = {}
    for row in sched:
        for a, b in zip(row, row[1:]):
            counts[(a, b)] = counts.get((a, b), 0) + 1
    return counts


def _resampled_median(vals, rng):
    n = len(vals)
    return statistics.median([vals[int(rng.random() * n)] for _ in range(n)])


def percentile_interval(samples, level=LEVEL):
    """The percentile interval of a bootstrap distribution: the values at
    ranks floor(B * a/2) and B - 1 - floor(B * a/2) of the sorted samples."""
    s = sorted(samples)
    cut = int(len(s) * (1 - level) / 2)
    return s[cut], s[len(s) - 1 - cut]


def bootstrap_ratio(num, den, resamples=RESAMPLES, seed=BOOT_SEED, level=LEVEL):
    """median(num) / median(den), and its percentile bootstrap interval:
    RESAMPLES times, num and den are each resampled with replacement on
    their own and the ratio of their medians taken. None without data."""
    num, den = list(num), list(den)
    if not num or not den or median(den) <= 0:
        return None
    rng = random.Random(seed)
    ratios = []
    for _ in range(resamples):
        d = _resampled_median(den, rng)
        ratios.append(_resampled_median(num, rng) / d if d > 0 else math.inf)
    lo, hi = percentile_interval(ratios, level)
    return {"ratio": median(num) / median(den), "lo": lo, "hi": hi, "n_num": len(num), "n_den": len(den),
            "resamples": resamples, "seed": seed, "level": level}


def percentile(vals, p):
    """The nearest-rank P-th percentile of VALS (None when empty)."""
    vals = sorted(vals)
    if not vals:
        return None
    return vals[max(0, min(len(vals) - 1, -(-len(vals) * p // 100) - 1))]


def bootstrap_median(vals, resamples=RESAMPLES, seed=BOOT_SEED, level=LEVEL):
    """median(vals) and its percentile bootstrap interval (for error bars)."""
    vals = list(vals)
    if not vals:
        return None
    rng = random.Random(seed)
    lo, hi = percentile_interval([_resampled_median(vals, rng) for _ in range(resamples)], level)
    return {"median": median(vals), "lo": lo, "hi": hi, "n": len(vals)}


# ---------------------------------------------------------------- pooling
def case_of(r):
    """(kernel, kind, blocks): the case a trial measures; rows from before
    vm-bench.py recorded the kernel ran on 6.1."""
    return (r.get("kernel", "6.1"), r["kind"], r.get("blocks_requested", r.get("blocks")))


def group_key(r):
    """The pooling rule's group: build, kernel, kind, blocks, contender."""
    return (r.get("build") or "?",) + case_of(r) + (r["contender"],)


def trial_files(paths):
    """The files a claim names: each FILE, and every *.jsonl in each DIRECTORY
    (not below it), sorted."""
    files = []
    for p in paths:
        if os.path.isdir(p):
            files += sorted(os.path.join(p, f) for f in os.listdir(p) if f.endswith(".jsonl"))
        else:
            files.append(p)
    return files


def load(files):
    """[(file, line number, row)] of every JSON line of FILES."""
    rows = []
    for path in files:
        with open(path) as f:
            for i, line in enumerate(f, 1):
                line = line.strip()
                if line.startswith("{"):
                    rows.append((path, i, json.loads(line)))
    return rows


def pool(rows):
    """{group_key: [(file, line, row)]} of every trial in ROWS. No trial is
    left out: a hung guest's trial was run again by vm-bench.py and only
    the re-run is in the file (its first error in retry_of). A trial that
    failed otherwise stays in its group as a failure, without a time."""
    groups = {}
    for path, line, r in rows:
        if "contender" in r and "kind" in r:
            groups.setdefault(group_key(r), []).append((path, line, r))
    return groups


def times(trials, field):
    """FIELD of the successful trials of a group, in file order."""
    return [r[field] for _, _, r in trials if r.get("ok") and isinstance(r.get(field), (int, float))]
