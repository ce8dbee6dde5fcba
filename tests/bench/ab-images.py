#!/usr/bin/env python3
"""An A/B of builds on the real kernel, rotated as vm-bench.py rotates
contenders: each arm is a guest image (built from one tree) and one
vm-bench.py contender, and every round runs every arm once, each on a
fresh guest, in the order of a Williams design (benchstats.schedule), so
that over whole periods each arm takes each position, and follows each
other arm, equally often.

Usage: ab-images.py --arm NAME=IMAGE_DIR,CONTENDER,BUILD [--arm ...]
                    --rounds N --seed S --out FILE [--resume]
                    -- VM-BENCH OPTIONS (one case: e.g. --sizes '' --nvdimm-sizes '' --cxl-sizes 32 --lock F)

Each trial is vm-bench.py's own JSON line (--rounds 1 on that arm's
image), with build BUILD, and round, position and schedule_seed of this
rotation, ab_arm NAME and ab_arms (every arm, in --arm order) set here.
verdicts.py compares the arms named "old" and "new" (new over old) beside
its usual tables; --resume skips the (arm, round) pairs FILE holds.
"""

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import benchstats  # noqa: E402


def parse_arm(text):
    """NAME=IMAGE_DIR,CONTENDER,BUILD -> (name, image_dir, contender, build)."""
    name, sep, rest = text.partition("=")
    parts = rest.split(",")
    if not sep or not name or len(parts) != 3 or not all(parts):
        raise argparse.ArgumentTypeError("want NAME=IMAGE_DIR,CONTENDER,BUILD, got %r" % text)
    return (name,) + tuple(parts)


def arms_done(path):
    """(arm, round) of the trials already in PATH."""
    done = set()
    if os.path.exists(path):
        with open(path) as f:
            for line in f:
                if line.startswith("{"):
                    r = json.loads(line)
                    if "ab_arm" in r and "round" in r:
                        done.add((r["ab_arm"], r["round"]))
    return done


def todo(arms, rounds, seed, done):
    """[(round, position, arm name)] still to run, in the order to run them."""
    sched = benchstats.schedule([a[0] for a in arms], rounds, seed)
    return [(rnd, pos, name) for rnd in range(rounds) for pos, name in enumerate(sched[rnd])
            if (name, rnd) not in done]


def run_one(arm, bench_args):
    """One vm-bench.py trial of ARM: its JSON line, or a failure of our own when it wrote none."""
    name, image, contender, build = arm
    with tempfile.NamedTemporaryFile("r", suffix=".jsonl", delete=False) as tmp:
        out = tmp.name
    try:
        cmd = [sys.executable, os.path.join(HERE, "vm-bench.py"), "--image-dir", image, "--out", out,
               "--contenders", contender, "--rounds", "1", "--build", build] + bench_args
        rc = subprocess.run(cmd, check=False).returncode
        with open(out) as f:
            lines = [json.loads(line) for line in f if line.startswith("{")]
    finally:
        os.unlink(out)
    if len(lines) != 1:
        return {"contender": contender, "build": build, "ok": False,
                "error": "vm-bench.py exited %d with %d trials (want 1)" % (rc, len(lines))}
    return lines[0]


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--arm", type=parse_arm, action="append", required=True)
    ap.add_argument("--rounds", type=int, required=True)
    ap.add_argument("--seed", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--resume", action="store_true")
    ap.add_argument("bench_args", nargs="*", help="vm-bench.py options after --")
    a = ap.parse_args()
    names = [arm[0] for arm in a.arm]
    if len(set(names)) != len(names):
        ap.error("arm names must differ")
    by_name = {arm[0]: arm for arm in a.arm}
    plan = todo(a.arm, a.rounds, a.seed, arms_done(a.out) if a.resume else set())
    if a.rounds % benchstats.period(len(a.arm)):
        print("ab-images: %d rounds of %d arms are not a whole number of balanced periods (%d)"
              % (a.rounds, len(a.arm), benchstats.period(len(a.arm))), file=sys.stderr)
    passed = failed = 0
    for rnd, pos, name in plan:
        t = time.strftime("%H:%M:%S")
        print("[ab %s] round %d, position %d: %s" % (t, rnd, pos, name), file=sys.stderr, flush=True)
        r = run_one(by_name[name], a.bench_args)
        r.update(round=rnd, position=pos, schedule_seed=a.seed, ab_arm=name, ab_arms=",".join(names))
        with open(a.out, "a") as f:
            f.write(json.dumps(r, sort_keys=True) + "\n")
        print("[ab %s]   -> %s e2e=%s s first block %s s %s" % (
            time.strftime("%H:%M:%S"), "ok" if r.get("ok") else "FAILED", r.get("e2e_s"),
            r.get("first_block_s"), r.get("error", "")), file=sys.stderr, flush=True)
        passed += bool(r.get("ok"))
        failed += not r.get("ok")
    print("ab-images: %d passed, %d failed" % (passed, failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
