#!/usr/bin/env python3
"""Every way to online hot-added memory, on a real kernel in a QEMU TCG
guest, one fresh guest per trial (but under --smoke, below).

Usage: vm-bench.py --image-dir DIR --out FILE.jsonl [--sizes 64,512,2048]
                   [--rounds N] [--contenders a,b,...] [--nvdimm-sizes 64,512]
                   [--cxl-sizes 32] [--smoke] [--seed S] [--resume] [--lock FILE]
                   [--memmap-on-memory] [--estimate]

The kernel is the image's (tests/vm/build-image.sh): Debian 12's 6.1,
which leaves hot-added memory offline, or Debian 13's 6.12, which onlines
it itself (auto_online_blocks reads `online` at boot). Every guest boots
its distribution's command line, plus memhp_default_state= only where a
contender needs the other auto-online setting than the kernel's default:
kernel-auto-online wants `online`, the loops, the udev rule and daxctl's
own onlining want `offline`; memonlined takes whatever the kernel has
(on 6.12 it takes over: `offline` while it runs). Each trial checks
auto_online_blocks just before the hot-add and fails if it is not what
the contender needs. Each trial records the kernel (`kernel`, `kver`).

Each trial boots a fresh guest (inside one guest the n-th hot-add is 3-6x
slower than the first), sets the contender up, arms kprobes on
add_memory_resource (start), online_pages entry/return (per block) and
the return of lock_device_hotplug_sysfs with a non-zero value (the
kernel's sleep-and-restart on hotplug lock contention), hot-adds the
memory and waits until every new block is online. Times are the guest's
CLOCK_MONOTONIC (trace_clock=mono): end to end = first
add_memory_resource entry to the last online_pages return; the first
block's online_pages return beside it (first_block_s). Contenders are
rotated: every round runs every size and every contender once before the
next round starts, in the order of a balanced design (benchstats.py:
each contender in each position equally often), recorded per trial as
round and position. One JSON line per trial goes to --out as it ends;
--resume skips the trials it already holds. Guests boot
with `quiet` (--guest-append): under TCG the emulated serial console
stalls vCPUs while the kernel prints its hotplug messages.

DIMM hot-add: two pc-dimms of half the size each, on nodes 0 and 1, so
that memonlined with several workers has several writers to offer.
NVDIMM: one emulated NVDIMM on the CPU-less node 2, devdax namespace,
then `daxctl reconfigure-device --mode=system-ram` with or without
--no-online.
CXL (images with the cxl tool, i.e. Debian 13): a q35 guest with one CXL
Type-3 device with volatile memory of the size asked for; `cxl
create-region -m -d decoder0.0 -w 1 -t ram mem0` alone, and the kernel's
kmem adds the region's blocks on a new CPU-less node. Either memonlined
onlines them or, with memonlined masked, the kernel's own auto-online.

--smoke (CI) checks, and measures nothing: 64 blocks, every contender once,
and to save boots the DIMM contenders run one after another in one guest,
the NVDIMM ones in another (a CXL trial keeps its own guest). That guest
boots the kernel's own auto-online setting, and a contender that needs
the other writes auto_online_blocks before its hot-add; the contenders
that run memonlined go first, as the others mask it. Between two trials
the guest loses the udev rule and any onlining loop of the trial before
(and blocks it left offline are onlined by hand); each trial still gets
fresh slots, its own trace and journal window, and is judged on its own
blocks only. Its record says so: shared_guest (the guest's number in the
run), shared_guest_trials_before, auto_online_written.
"""

import argparse
import contextlib
import fcntl
import itertools
import json
import os
import re
import subprocess
import sys
import time
import traceback

import benchstats

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "vm"))
from vm import VM, VMError, BootStalled, GiB, MiB, image_env, kernel_tag, kernel_auto_online  # noqa: E402

BLOCK = 128 * MiB
BATCH_ID = "8a75c3204edc4026aea27aaeda486899"
NODE_ID = "a251eb01963d4e9abecfe2f5aa23b7e8"
GUEST_MEM_MIB = 6144       # room in the kernel zones for the memmap of 256 GiB (4 GiB)
MAXMEM = "300G"
# Host memory a trial takes besides the memmap (QEMU's RSS at 64 blocks is about 1.3 GiB), and a margin.
GUEST_TOUCHED = 2 * GiB
HOST_SLACK = 2 * GiB
MEMTOTAL = r"sed -n 's/^MemTotal: *\([0-9]*\) kB$/\1/p' /proc/meminfo"
MEMMAP_PARAM = "cat /sys/module/memory_hotplug/parameters/memmap_on_memory 2>/dev/null || echo unsupported"

UDEV_RULE = 'SUBSYSTEM=="memory", ACTION=="add", ATTR{state}=="offline", ATTR{state}="online"\n'

DIMM_CONTENDERS = {
    # name: (auto_online_blocks it needs, memonlined.conf or None = memonlined masked, loop kind);
    # None: memonlined's own (it takes over from a kernel that auto-onlines).
    "memonlined": (None, "", None),
    "memonlined-w2-c2": (None, "[daemon]\nworkers = 2\nmax_concurrent_writes = 2\n", None),
    "memonlined-w2-c4": (None, "[daemon]\nworkers = 2\nmax_concurrent_writes = 4\n", None),
    "memonlined-kernel-events": (None, "[daemon]\nevent_source = kernel\n", None),
    # The same daemon writing one system call per block, as before linked write chains.
    "memonlined-no-chain": (None, "[daemon]\nwrite_chain = no\n", None),
    # Diagnostic: into ZONE_MOVABLE like serial-loop (guard off), to compare the kernel's cost of the write orders.
    "memonlined-movable": (None, "[zones]\ndefault = online_movable\nmovable_ratio = 0\n", None),
    "udev-rule": ("offline", None, "udev"),
    "kernel-auto-online": ("online", None, None),
    "serial-loop": ("offline", None, "serial"),
    "chmem": ("offline", None, "chmem"),
}
NVDIMM_CONTENDERS = ("daxctl-online", "daxctl-no-online+memonlined", "daxctl-no-online+memonlined-kernel-events")
NVDIMM_CONF = {"daxctl-no-online+memonlined-kernel-events": "[daemon]\nevent_source = kernel\n"}
# Diagnostic, not in the default set: memonlined starts only once udevd has
# handled the add events (as daxctl's own onlining waits for them).
NVDIMM_DIAG = ("daxctl-no-online+settle+memonlined",)
# name: (auto_online_blocks it needs, memonlined.conf or None = memonlined masked)
CXL_CONTENDERS = {
    "cxl+memonlined": (None, ""),
    "cxl+memonlined-kernel-events": (None, "[daemon]\nevent_source = kernel\n"),
    "cxl+memonlined-no-chain": (None, "[daemon]\nwrite_chain = no\n"),
    "cxl+kernel-auto-online": ("online", None),
    # The plainest userspace onliner: what any of them pays for the event's trip.
    "cxl+udev-rule": ("offline", None),
}
DIMM_DIAG = ("memonlined-movable", "memonlined-no-chain")   # run only when named
CXL_DIAG = ("cxl+memonlined-no-chain",)
ALL = ([c for c in DIMM_CONTENDERS if c not in DIMM_DIAG] + list(NVDIMM_CONTENDERS)
       + [c for c in CXL_CONTENDERS if c not in CXL_DIAG])
KNOWN = ALL + list(NVDIMM_DIAG) + list(DIMM_DIAG) + list(CXL_DIAG)   # what --contenders may name
AUTO_ONLINE = "/sys/devices/system/memory/auto_online_blocks"
# Where memonlined keeps the value it took over (6.12).
AUTO_ONLINE_SAVED = "/run/memonlined/auto_online_blocks"

TRACE = "/sys/kernel/tracing"
TRACE_SETUP = r"""
set -e
T=%(T)s
[ -d $T/events ] || mount -t tracefs nodev $T
echo 0 > $T/tracing_on
# A shared smoke guest arms the probes again, and enabled probes cannot be removed.
if [ -e $T/events/bench/enable ]; then echo 0 > $T/events/bench/enable; fi
echo > $T/kprobe_events
echo 'p:bench/add add_memory_resource' >> $T/kprobe_events
echo 'r:bench/addr add_memory_resource ret=$retval' >> $T/kprobe_events
# The block devices (and their add uevents) come after the memmap is set up.
echo 'p:bench/mkblk create_memory_block_devices' >> $T/kprobe_events 2>/dev/null || true
echo 'p:bench/onl online_pages' >> $T/kprobe_events
echo 'r:bench/onlr online_pages ret=$retval' >> $T/kprobe_events
echo 'r:bench/lockr lock_device_hotplug_sysfs ret=$retval' >> $T/kprobe_events
# A state write that took the hotplug lock (one per write; the restarts are lockr's). A trigger
# that disables a probe on its own first hit records nothing: it fires before the record.
echo 'r:bench/wr lock_device_hotplug_sysfs ret=$retval' >> $T/kprobe_events
# ACPI hot-add work holds device_hotplug_lock from before the add to after it.
echo 'p:bench/acpi acpi_device_hotplug' >> $T/kprobe_events 2>/dev/null || true
echo 'r:bench/acpir acpi_device_hotplug' >> $T/kprobe_events 2>/dev/null || true
# Each online takes mem_hotplug_lock for writing; when no hotplug operation held it within
# the last RCU grace period, taking it waits for a new grace period (synchronize_rcu).
echo 'p:bench/hb mem_hotplug_begin' >> $T/kprobe_events 2>/dev/null || true
echo 'r:bench/hbr mem_hotplug_begin' >> $T/kprobe_events 2>/dev/null || true
echo 'p:bench/rcu synchronize_rcu' >> $T/kprobe_events 2>/dev/null || true
echo 'ret != 0' > $T/events/bench/lockr/filter
echo 'ret == 0' > $T/events/bench/wr/filter
echo mono > $T/trace_clock
echo 16384 > $T/buffer_size_kb
echo > $T/trace
echo 1 > $T/events/bench/enable
echo 1 > $T/tracing_on
""" % {"T": TRACE}

# Waits in the guest (one process, a grep every 0.5 s) until N online_pages returns.
WAIT_ONLINE = r"""
n=0; end=$(( $(date +%%s) + %(timeout)d ))
while [ "$(date +%%s)" -lt $end ]; do
    n=$(grep -c ' onlr:' %(T)s/trace || true)
    [ "$n" -ge %(n)d ] && break
    sleep 0.5
done
echo $n
""" 

# A tight serial loop that starts once all N new blocks exist (bash builtins, no forks per block).
SERIAL_LOOP = r"""
M=/sys/devices/system/memory
shopt -s nullglob
base=%(base)d; want=$(( base + %(n)d ))
while :; do b=($M/memory[0-9]*); [ ${#b[@]} -ge $want ] && break; sleep 0.05; done
for d in $M/memory[0-9]*; do
    read -r s < $d/state
    [ "$s" = offline ] && echo %(zone)s > $d/state
done
"""

CHMEM_LOOP = r"""
M=/sys/devices/system/memory
shopt -s nullglob
base=%(base)d; want=$(( base + %(n)d ))
while :; do b=($M/memory[0-9]*); [ ${#b[@]} -ge $want ] && break; sleep 0.05; done
ids=$(for d in $M/memory[0-9]*; do read -r s < $d/state; [ "$s" = offline ] && echo ${d##*memory}; done | sort -n)
chmem -e -b $(echo "$ids" | head -n1)-$(echo "$ids" | tail -n1)
"""

COUNT_BLOCKS = "ls /sys/devices/system/memory | grep -c '^memory[0-9]'"
# memonlined's threads: "T tid ns-on-CPU times-run utime stime comm" each (schedstat's first and
# third fields, stat's ticks; the name last, as it may hold spaces), then the whole process's
# utime and stime in clock ticks, which keeps the threads that have exited (io-wq workers).
THREAD_CPU = r"""p=$(pidof -s memonlined) || exit 0
for t in /proc/$p/task/*; do
    printf 'T %s %s %s %s\n' "${t##*/}" "$(cut -d' ' -f1,3 $t/schedstat)" \
        "$(sed 's/.*) //' $t/stat | cut -d' ' -f12,13)" "$(cat $t/comm)"
done 2>/dev/null
printf 'PROCESS %s %s\n' "$(sed 's/.*) //' /proc/$p/stat | cut -d' ' -f12,13)" "$(getconf CLK_TCK)"
"""
# The offline blocks above a block id: a shared smoke guest holds the blocks of the trials before
# (in a fresh guest every block up to the last before the hot-add is boot memory, online).
COUNT_OFFLINE = ("grep -l '^offline' /sys/devices/system/memory/memory*/state 2>/dev/null | "
                 "sed -n 's|.*/memory\\([0-9]*\\)/state$|\\1|p' | awk '$1 > %(last)d' | wc -l")
# The highest block id before the hot-add: every new block is above it.
LAST_BLOCK = "ls /sys/devices/system/memory | sed -n 's/^memory//p' | sort -n | tail -n1"
# Zones of the online blocks above a block id (an online block's valid_zones is its zone), as "N zone" lines.
NEW_ZONES = r"""
shopt -s nullglob
for d in /sys/devices/system/memory/memory[0-9]*; do
    [ "${d##*memory}" -gt %(last)d ] || continue
    read -r s < $d/state; [ "$s" = online ] || continue
    read -r z < $d/valid_zones; echo "$z"
done | sort | uniq -c
"""

# Per ACPI memory device (DIMM): its blocks above a block id by zone, "offline" for those not online,
# as "N device zone" lines. A block's firmware_node is its DIMM; `cd -P` reads the link without a
# fork per block (a shared smoke guest holds the DIMMs of the trials before, hundreds of blocks).
DEVICE_ZONES = r"""
for d in /sys/devices/system/memory/memory[0-9]*; do
    [ "${d##*memory}" -gt %(last)d ] && cd -P $d/firmware_node 2>/dev/null || continue
    case ${PWD##*/} in PNP0C80:*) ;; *) continue ;; esac
    read -r s < $d/state || continue
    if [ "$s" = online ]; then read -r z < $d/valid_zones; else z=offline; fi
    echo "${PWD##*/} $z"
done | sort | uniq -c
"""


def device_zones(vm, last):
    """{device: {zone: blocks}} of the DIMMs hot-added above block id LAST: the layout, whole or split."""
    out = vm.sh(DEVICE_ZONES % {"last": last}, timeout=300).out
    layout = {}
    for line in out.splitlines():
        parts = line.split()
        if len(parts) == 3:
            layout.setdefault(parts[1], {})[parts[2]] = int(parts[0])
    return layout


def auto_online_append(want, boot_auto):
    """The command line addition that gives auto_online_blocks WANT ('online',
    'offline', or None for whatever the kernel does) on a kernel whose
    built-in default is BOOT_AUTO."""
    if want is None or (boot_auto != "offline") == (want != "offline"):
        return ""
    return "memhp_default_state=%s" % want


def check_auto_online(vm, res, want, conf):
    """Record auto_online_blocks before the hot-add; False (with an error) if
    it is not what the contender needs: WANT, or `offline` under memonlined."""
    res["auto_online_blocks"] = vm.sh("cat %s" % AUTO_ONLINE).out.strip()
    if conf is not None:
        # memonlined's (on a kernel that auto-onlines: what it took over, if any)
        saved = vm.sh("cat %s 2>/dev/null || true" % AUTO_ONLINE_SAVED).out.strip()
        res["auto_online_taken_over"] = saved or None
        want = "offline"
    if want is not None and res["auto_online_blocks"] != want:
        res.update(ok=False, error="auto_online_blocks reads %r before the hot-add, the contender needs %r"
                   % (res["auto_online_blocks"], want))
        return False
    return True


def new_zones(vm, last):
    """{zone: blocks} of the online blocks above block id LAST."""
    out = vm.sh(NEW_ZONES % {"last": last}, timeout=300).out
    return {z: int(n) for n, z in (line.split(None, 1) for line in out.splitlines() if line.strip())}


def log(msg):
    print("[bench %s] %s" % (time.strftime("%H:%M:%S"), msg), file=sys.stderr, flush=True)


def pct(sorted_vals, p):
    if not sorted_vals:
        return None
    k = max(0, min(len(sorted_vals) - 1, int(round(p / 100.0 * len(sorted_vals) + 0.5)) - 1))
    return sorted_vals[k]


def parse_trace(text):
    """Times (s) of add entries, online_pages entries and returns, lock restarts."""
    ev = {"add": [], "addr": [], "mkblk": [], "onl": [], "onlr": [], "lockr": [], "acpi": [], "acpir": [],
          "wr": [], "hb": [], "hbr": [], "rcu": [], "lockr_who": []}
    by_task = ("lockr", "onl", "hb", "hbr", "rcu")
    ev.update({k + "_who": [] for k in by_task})
    for line in text.splitlines():
        m = re.search(r"\s(\d+\.\d+): (?:bench/)?(add|addr|mkblk|onl|onlr|lockr|acpi|acpir|wr|hb|hbr|rcu):", line)
        if not m:
            continue
        if m.group(2) in by_task:
            # The task: "comm-pid [cpu] flags time:" (for lockr, the one made to wait).
            who = line.strip().split(" [", 1)[0].strip()
            ev[m.group(2) + "_who"].append((float(m.group(1)), who))
        else:
            ev[m.group(2)].append(float(m.group(1)))
    for k in ev:
        ev[k].sort()
    for k in by_task:
        ev[k] = [t for t, _ in ev[k + "_who"]]
    return ev


def covered(spans, lo, hi):
    """How much of [lo, hi] the union of SPANS ((start, end) pairs) covers."""
    total, end = 0.0, lo
    for a, b in sorted(spans):
        a, b = max(a, end), min(b, hi)
        if b > a:
            total += b - a
            end = b
    return total


def hotplug_begin_waits(ev, long_ms=1.0):
    """How long each online waited to take mem_hotplug_lock (its task's mem_hotplug_begin
    before its online_pages), and whether that task ran synchronize_rcu in the wait: the first
    online (first_online_begin_ms, first_online_begin_rcu), and the waits of LONG_MS or more over
    all onlines (a batch's first write after a quiet spell). {} without the probes."""
    calls = {}
    for (a, who), (b, who_r) in zip(sorted(ev["hb_who"], key=lambda e: (e[1], e[0])),
                                    sorted(ev["hbr_who"], key=lambda e: (e[1], e[0]))):
        if who != who_r or b < a:
            return {}           # an entry without its return (the trace began or ended inside one)
        calls.setdefault(who, []).append((a, b))
    if len(ev["hb_who"]) != len(ev["hbr_who"]) or not ev["onl_who"] or not ev["add"]:
        return {}
    waits = []
    for onl, who in ev["onl_who"]:
        before = [c for c in calls.get(who, []) if c[1] <= onl]
        if not before:
            return {}
        a, b = before[-1]
        waits.append((onl, (b - a) * 1e3, any(w == who and a <= t <= b for t, w in ev["rcu_who"])))
    t0 = ev["add"][0]
    long_ = [w for w in waits if w[1] >= long_ms]
    return {"first_online_begin_ms": round(waits[0][1], 3), "first_online_begin_rcu": waits[0][2],
            "online_begin_long_ms_sum": round(sum(w[1] for w in long_), 1),
            "online_begin_long": [[round(w[1], 1), round(w[0] - t0, 3), w[2]] for w in long_[:8]]}


def summarize_trace(ev, n_expected):
    r = {"trace_adds": len(ev["add"]), "trace_onlines": len(ev["onlr"]),
         "lock_restarts": len(ev["lockr"])}
    if ev["add"] and ev["onlr"]:
        t0 = ev["add"][0]
        r["e2e_s"] = round(ev["onlr"][-1] - t0, 4)
        if ev["onl"]:
            r["first_online_after_s"] = round(ev["onl"][0] - t0, 4)
        # The first block online beside the last (e2e_s), and what bounds it: the adds' ends
        # (each holds the hotplug lock), the first state write's first try (first_try_s, a
        # restart or the lock taken) and the first write that took the lock (first_write_s);
        # neither when the kernel onlined inside the add.
        r["first_block_s"] = round(ev["onlr"][0] - t0, 4)
        if ev["addr"]:
            r["first_add_end_s"] = round(ev["addr"][0] - t0, 4)
            r["add_end_s"] = round(ev["addr"][-1] - t0, 4)
            r["kernel_online_after_add_s"] = round(sum(
                b - a for a, b in zip(ev["onl"], ev["onlr"]) if a >= ev["addr"][-1]), 4)
        writes = [t for t in ev["wr"] if t >= t0]
        if writes:
            r["first_write_s"] = round(writes[0] - t0, 4)
        tries = [t for t in ev["wr"] + ev["lockr"] if t >= t0]
        if tries:
            r["first_try_s"] = round(min(tries) - t0, 4)
        r["adds_at_s"] = [round(t - t0, 4) for t in ev["add"]]
        r["adds_done_at_s"] = [round(t - t0, 4) for t in ev["addr"]]
        r["blocks_created_at_s"] = [round(t - t0, 4) for t in ev["mkblk"]]
        # A restart while an add holds device_hotplug_lock is the kernel making the
        # writer wait for the adder, not writers contending with each other.
        spans = list(zip(ev["add"], ev["addr"]))
        r["lock_restarts_during_add"] = sum(1 for t in ev["lockr"] if any(a <= t <= b for a, b in spans))
        # The whole ACPI hot-add handler (lock taken before the add, released after it).
        spans += list(zip(ev["acpi"], ev["acpir"]))
        r["hotplug_work_at_s"] = [[round(a - t0, 4), round(b - t0, 4)] for a, b in zip(ev["acpi"], ev["acpir"])]
        if ev["acpi"]:
            r["lock_restarts_during_hotplug_work"] = sum(
                1 for t in ev["lockr"] if any(a <= t <= b for a, b in spans))
        # The restarts outside every add: when, which task had to wait, and how long after
        # the last add or ACPI handler ended (ms). The probe fires on the return, after the
        # kernel's 5 ms sleep, so the failed trylock came that much earlier.
        ends = sorted(b for _, b in spans)
        r["lock_restarts_outside"] = [
            [round(t - t0, 4), who, round((t - max([b for b in ends if b <= t], default=t0)) * 1e3, 1)]
            for t, who in ev["lockr_who"] if not any(a <= t <= b for a, b in spans)][:8]
        r["kernel_online_sum_s"] = round(sum(b - a for a, b in zip(ev["onl"], ev["onlr"])), 4)
        if ev["onl"]:
            # First online_pages entry to the last return, less the time an add (or the ACPI
            # work around it) held the hotplug lock: the onlining phase proper.
            lo, hi = ev["onl"][0], ev["onlr"][-1]
            r["onlining_phase_s"] = round(hi - lo - covered(spans, lo, hi), 4)
        # Between one block's online_pages return and the next one's entry: userspace,
        # the rest of the write syscall, and handing over between writers.
        pairs = [((a - b) * 1e3, b - t0) for b, a in zip(ev["onlr"], ev["onl"][1:]) if a >= b]
        between = sorted(g for g, _ in pairs)
        if between:
            r["between_onlines_ms_p50"] = round(pct(between, 50), 3)
            r["between_onlines_ms_p90"] = round(pct(between, 90), 3)
            r["between_onlines_ms_p99"] = round(pct(between, 99), 3)
            r["between_onlines_ms_sum"] = round(sum(between), 1)
            # The few long pauses (a new batch, a lock wait) against the steady per-block cost.
            long_ = sorted((p for p in pairs if p[0] >= 50), reverse=True)
            r["between_onlines_long_ms_sum"] = round(sum(g for g, _ in long_), 1)
            r["between_onlines_long"] = [[round(g, 1), round(at, 3)] for g, at in long_[:8]]
        r.update(hotplug_begin_waits(ev))
        # The longest stretch with no block coming online: where the time goes.
        marks = [t0] + ev["onlr"]
        gaps = [(b - a, a - t0) for a, b in zip(marks, marks[1:])]
        if gaps:
            g = max(gaps)
            r["max_gap_s"], r["max_gap_at_s"] = round(g[0], 4), round(g[1], 4)
    # online_pages is serialised under device_hotplug_lock: entries and returns pair in order.
    durs = sorted((b - a) * 1e6 for a, b in zip(ev["onl"], ev["onlr"]) if b >= a)
    if durs:
        r["kernel_online_us_p50"] = round(pct(durs, 50))
        r["kernel_online_us_p99"] = round(pct(durs, 99))
        r["kernel_online_us_max"] = round(durs[-1])
    r["all_online_traced"] = len(ev["onlr"]) >= n_expected
    return r


def journal_since(vm, match, after_mono_usec):
    """The guest journal entries (dicts) matching `match`, logged after the given CLOCK_MONOTONIC time."""
    out = vm.sh("journalctl --sync; journalctl -b --no-pager -o json %s" % match,
                check=False, timeout=120).out
    entries = []
    for line in out.splitlines():
        try:
            j = json.loads(line)
        except ValueError:
            continue
        if int(j.get("__MONOTONIC_TIMESTAMP", 0)) > after_mono_usec:
            entries.append(j)
    return entries


def batch_records(vm, after_mono_usec, message_id=BATCH_ID):
    recs = journal_since(vm, "MESSAGE_ID=%s" % message_id, after_mono_usec)
    recs.sort(key=lambda j: int(j.get("MEMONLINE_BATCH", 0)))
    return recs


def summarize_batches(recs, ev, node_recs=()):
    if not recs:
        return {"mo_batches": 0}
    g = lambda j, k: int(j.get(k, 0) or 0)  # noqa: E731
    blocks = sum(g(j, "MEMONLINE_BLOCKS") for j in recs)
    r = {"mo_batches": len(recs), "mo_blocks": blocks,
         "mo_failed": sum(g(j, "MEMONLINE_FAILED") for j in recs),
         "mo_write_us_p50": [g(j, "MEMONLINE_P50_USEC") for j in recs],
         "mo_write_us_p99": [g(j, "MEMONLINE_P99_USEC") for j in recs],
         "mo_write_us_max": max(g(j, "MEMONLINE_MAX_USEC") for j in recs),
         "mo_cpu_usec": sum(g(j, "MEMONLINE_CPU_USEC") for j in recs),
         "mo_latency_usec": [g(j, "MEMONLINE_LATENCY_USEC") for j in recs],
         # Reading sysfs and planning before each batch's first write.
         "mo_prepare_usec": [g(j, "MEMONLINE_PREPARE_USEC") for j in recs],
         "mo_triggers": sorted({j.get("MEMONLINE_TRIGGER", "?") for j in recs})}
    if any(j.get("MEMONLINE_FIRST_LATENCY_USEC") for j in recs):
        # The daemon's own first event to first block online, per batch (builds that record it).
        r["mo_first_latency_usec"] = [g(j, "MEMONLINE_FIRST_LATENCY_USEC") for j in recs]
    if blocks:
        r["mo_cpu_usec_per_block"] = round(r["mo_cpu_usec"] / blocks, 1)
    # Which zone each node's blocks went to, and from which CPUs.
    r["mo_nodes"] = [{"batch": g(j, "MEMONLINE_BATCH"), "node": g(j, "MEMONLINE_NODE"),
                      "zone": j.get("MEMONLINE_ZONE"), "blocks": g(j, "MEMONLINE_BLOCKS"),
                      "cpus": j.get("MEMONLINE_CPUS"), "duration_usec": g(j, "MEMONLINE_DURATION_USEC")}
                     for j in node_recs]
    # Writes are serialised and batches sequential: batch 1 ends at the return of
    # its last block. Its first event arrived LATENCY before that; the gap from the
    # kernel's first add to that arrival is the event path's delay (udevd or not).
    b1 = g(recs[0], "MEMONLINE_BLOCKS")
    if ev["add"] and b1 and len(ev["onlr"]) >= b1 and g(recs[0], "MEMONLINE_LATENCY_USEC"):
        first_event = ev["onlr"][b1 - 1] - g(recs[0], "MEMONLINE_LATENCY_USEC") / 1e6
        # From the first block device (its add uevent), else from the add's start.
        origin = ev["mkblk"][0] if ev["mkblk"] else ev["add"][0]
        r["event_delay_ms"] = round((first_event - origin) * 1e3, 1)
        r["event_delay_from"] = "create_memory_block_devices" if ev["mkblk"] else "add_memory_resource"
    return r


def host_headroom_ok(size, guest_mem_mib):
    """Only what the guest touches takes host memory: its boot working set and the
    memmap of the hot-added memory (1/64 of it, in boot memory or, with
    memory_hotplug.memmap_on_memory=1, in the blocks), besides QEMU's own."""
    need = min(guest_mem_mib * MiB, GUEST_TOUCHED) + size // 64 + HOST_SLACK
    avail = 0
    for line in open("/proc/meminfo"):
        if line.startswith("MemAvailable:"):
            avail = int(line.split()[1]) * 1024
    return avail >= need, avail, need


def maxmem(size, guest_mem_mib):
    """QEMU's maxmem: 300G as always, more when the hot-add would not fit (4096 blocks)."""
    need = -(-(size + guest_mem_mib * MiB) // GiB) + 16
    return MAXMEM if need <= int(MAXMEM[:-1]) else "%dG" % need


def new_vm(args, append, cxl=(), size=0, slots=16):
    """A guest for SIZE bytes of DIMMs, with SLOTS slots for DIMMs and NVDIMMs."""
    append = " ".join(a for a in (append, args.guest_append) if a)
    return VM(args.image_dir, mem_mib=args.guest_mem_mib, maxmem=maxmem(size, args.guest_mem_mib), slots=slots,
              virtio_mem_size=0, extra_append=append, log=lambda m: log("vm: " + m), boot_timeout=400, cxl=cxl,
              cpus=getattr(args, "guest_cpus", 8))


def memory_before(vm, res):
    """The guest's memory set-up before the hot-add; returns MemTotal in KiB."""
    res["guest_mem_mib"] = vm.mem_mib
    res["guest_cpus"] = vm.cpus
    res["maxmem"] = vm.maxmem
    res["memmap_on_memory"] = vm.sh(MEMMAP_PARAM).out.strip()
    return int(vm.sh(MEMTOTAL).out.strip())


def memory_after(vm, res, before_kib, blocks):
    """Where the memmap of the new blocks went: MemTotal grows by 128 MiB a block when it
    is in boot memory, by 126 MiB when memmap_on_memory put it in the block itself."""
    added = int(vm.sh(MEMTOTAL).out.strip()) - before_kib
    res["mem_total_added_mib"] = round(added / 1024, 1)
    if blocks:
        per = (blocks * BLOCK // 1024 - added) / 1024 / blocks
        res["memmap_in_block_mib"] = round(per, 2)
        res["memmap_on_memory_effective"] = per > 1.0


def qemu_peak_rss_mib(vm):
    """QEMU's peak RSS on the host (VmHWM), None once it is gone."""
    try:
        with open("/proc/%d/status" % vm.proc.pid) as f:
            for line in f:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) // 1024
    except (AttributeError, OSError, ValueError):
        pass
    return None


def kernel_fields(args, res, append):
    res["kernel"], res["kver"], res["qemu"] = args.kernel, args.kver, args.qemu
    res["kernel_append"] = append


def qemu_version():
    try:
        out = subprocess.run(["qemu-system-x86_64", "--version"], capture_output=True, text=True, timeout=30).stdout
    except (OSError, subprocess.SubprocessError):
        return None
    m = re.search(r"version (\S+)", out)
    return m.group(1) if m else None


def step(vm, what):
    log("  %s" % what)


DEBUG_DROPIN = "[Service]\nEnvironment=MEMONLINED_LOG_LEVEL=debug\n"


def prepare(vm, conf, loop, debug=False):
    if debug and conf is not None:
        # Diagnostics: each batch logs where its preparation went.
        vm.sh("mkdir -p /etc/systemd/system/memonlined.service.d")
        vm.write_guest_file("/etc/systemd/system/memonlined.service.d/debug.conf", DEBUG_DROPIN)
        vm.sh("systemctl daemon-reload")
    if conf is None:
        # As on a machine without memonlined: no service, and no rule of ours
        # (it would tag every block for systemd while the daemon is not running).
        vm.sh("systemctl mask --now memonlined.service >/dev/null 2>&1; "
              "rm -f /usr/lib/udev/rules.d/99-memonline.rules /lib/udev/rules.d/99-memonline.rules; "
              "udevadm control --reload; systemctl is-active memonlined.service || true")
    else:
        vm.write_guest_file("/etc/memonlined.conf", "# bench\n" + conf)
        vm.sh("systemctl restart memonlined.service && systemctl is-active memonlined.service", timeout=120)
    if loop == "udev":
        vm.write_guest_file("/etc/udev/rules.d/90-bench-online.rules", UDEV_RULE)
        vm.sh("udevadm control --reload")


READ_TRACE = r"sed -E 's/^(.*[0-9]: (bench\/)?[a-z]+:).*/\1/' %(T)s/trace"


def collect(args, vm, res, n, base, last, mono, records):
    """Wait for N onlined blocks, then read the trace, the counts of the blocks above block id
    LAST (BASE blocks before the hot-add) and the batch records logged after MONO."""
    got = int(vm.sh(WAIT_ONLINE % {"T": TRACE, "n": n, "timeout": args.timeout},
                    timeout=args.timeout + 60).out.strip() or 0)
    time.sleep(0.5)
    # Only "task [cpu] flags time: event:" of each line: the udev rule at 2048 blocks leaves
    # ~10^5 restart lines, whose full text took over 120 s to read under TCG.
    ev = parse_trace(vm.sh(READ_TRACE % {"T": TRACE}, timeout=args.timeout).out)
    res.update(summarize_trace(ev, n))
    res["new_blocks"] = int(vm.sh(COUNT_BLOCKS).out) - base
    res["offline_left"] = int(vm.sh(COUNT_OFFLINE % {"last": last}).out)
    if records:
        res.update(summarize_batches(batch_records(vm, mono), ev, batch_records(vm, mono, NODE_ID)))
    res.update(floor(res))
    if records and args.daemon_debug:
        out = vm.sh("journalctl -b -u memonlined --no-pager -o cat | grep 'blocks prepared' || true",
                    check=False, timeout=120).out
        res["mo_prepare_phases"] = [line.strip() for line in out.splitlines() if line.strip()]
        if ev["add"]:
            res["mo_log"] = daemon_log(vm, mono, ev["add"][0])
    return got


def parse_thread_cpu(text):
    """THREAD_CPU's output as ({tid: (comm, ns, runs, sys_ns)}, the process's ns), or None
    when no daemon ran. An io-wq worker's comm, iou-wrk-TID, is named without its TID."""
    threads, process, tick = {}, None, None
    for line in text.splitlines():
        f = line.split()
        if len(f) == 4 and f[0] == "PROCESS" and all(x.isdigit() for x in f[1:]) and int(f[3]) > 0:
            process, tick = int(f[1]) + int(f[2]), int(f[3])
        elif len(f) >= 7 and f[0] == "T" and all(x.isdigit() for x in f[1:6]):
            tid, ns, runs, _, sys_ticks = (int(x) for x in f[1:6])
            threads[tid] = (re.sub(r"^iou-wrk-\d+$", "iou-wrk", " ".join(f[6:])), ns, runs, sys_ticks)
    if process is None:
        return None
    threads = {t: (c, ns, runs, st * 10**9 // tick) for t, (c, ns, runs, st) in threads.items()}
    return threads, process * 10**9 // tick


def thread_deltas(before, after):
    """Each live thread's (name, ns on a CPU, times run, ns in the kernel) since the first
    snapshot; a thread new since then (or a TID reused by another name) counts whole."""
    for tid, (comm, ns, runs, sys_ns) in after[0].items():
        prev = before[0].get(tid)
        if prev and prev[0] == comm and ns >= prev[1]:
            yield comm, ns - prev[1], max(runs - prev[2], 0), max(sys_ns - prev[3], 0)
        else:
            yield comm, ns, runs, sys_ns


def thread_cpu_delta(before, after):
    """CPU time (ms) of the daemon's threads between two snapshots, summed by thread name;
    "exited": the process's time less its live threads' (threads that ended in between,
    at the clock tick's resolution); "process": the whole. {} without both snapshots."""
    if not before or not after or after[1] < before[1]:
        return {}
    out, live = {}, 0
    for comm, ns, _, _ in thread_deltas(before, after):
        live += ns
        out[comm] = out.get(comm, 0) + ns
    res = {k: round(v / 1e6, 1) for k, v in sorted(out.items())}
    res["exited"] = round(max(after[1] - before[1] - live, 0) / 1e6, 1)
    res["process"] = round((after[1] - before[1]) / 1e6, 1)
    return res


def thread_runs_delta(before, after):
    """By thread name between two snapshots: how often its threads were put on a CPU
    ("runs": each wakeup is one) and their time in the kernel (ms, at the clock tick's
    resolution: stat's stime). {} without both snapshots."""
    if not before or not after or after[1] < before[1]:
        return {}
    runs, sys_ms = {}, {}
    for comm, _, r, sys_ns in thread_deltas(before, after):
        runs[comm] = runs.get(comm, 0) + r
        sys_ms[comm] = sys_ms.get(comm, 0) + sys_ns
    return {"runs": dict(sorted(runs.items())),
            "sys_ms": {k: round(v / 1e6, 1) for k, v in sorted(sys_ms.items())}}


def floor(res):
    """What an onliner with no cost of its own would take in this trial: the last add's
    end, the event's trip to the daemon (event_delay_ms, known from memonlined's records
    only) and the kernel's own online_pages time after that add (the twelfth campaign's
    floor); {} where the trial does not tell."""
    if "add_end_s" not in res or "event_delay_ms" not in res:
        return {}
    parts = [res["add_end_s"], res["event_delay_ms"] / 1e3, res["kernel_online_after_add_s"]]
    return {"floor_s": round(sum(parts), 4), "floor_parts_s": [round(p, 4) for p in parts]}


def daemon_log(vm, after_mono_usec, t0, limit=400):
    """The daemon's journal lines since the hot-add, as [s after the first add, message]."""
    lines = [[round(int(j["__MONOTONIC_TIMESTAMP"]) / 1e6 - t0, 4), j["MESSAGE"][:240]]
             for j in journal_since(vm, "-u memonlined", after_mono_usec) if isinstance(j.get("MESSAGE"), str)]
    lines.sort()
    return lines[:limit]


def guarded(vm, res, body, keep_guest=False):
    """Run one trial; any failure is recorded in res, and the guest goes (unless KEEP_GUEST:
    a shared smoke guest runs the next trial)."""
    try:
        body()
    except Exception as e:  # noqa: BLE001
        res.update(ok=False, error="%s: %s" % (type(e).__name__, str(e)[-400:]))
        # The guest stopped answering (a TCG hang), or QEMU died before the guest
        # had booted (an emulator failure before the contender ran), as opposed
        # to a wrong result.
        res["guest_unresponsive"] = isinstance(e, (OSError, BootStalled)) or (
            isinstance(e, VMError) and "boot_s" not in res)
        traceback.print_exc()
    finally:
        res["host_rss_peak_mib"] = qemu_peak_rss_mib(vm)
        if not keep_guest:
            vm.close()
    return res


def trial_result(args, kind, name, blocks, rep, append):
    """A trial's record as it starts: what it runs, and the guest's kernel and command line addition."""
    res = {"contender": name, "kind": kind, "repeat": rep,
           ("blocks" if kind in DIMM_KINDS else "blocks_requested"): blocks}
    kernel_fields(args, res, append)
    return res


def headroom_error(avail, need):
    return "host headroom: %d MiB available, %d MiB needed" % (avail >> 20, need >> 20)


def run_dimm(args, name, blocks, rep):
    """One DIMM trial on a fresh guest."""
    append = auto_online_append(DIMM_CONTENDERS[name][0], args.boot_auto)
    res = trial_result(args, dimm_kind(args), name, blocks, rep, append)
    size = blocks * BLOCK
    ok, avail, need = host_headroom_ok(size, args.guest_mem_mib)
    if not ok:
        res.update(ok=False, error=headroom_error(avail, need))
        return res
    vm = new_vm(args, append, size=size)

    def body():
        res["boot_s"] = round(vm.boot(), 1)
        res["boot_retries"] = vm.boot_retries
        step(vm, "booted in %.1f s; preparing" % res["boot_s"])
        dimm_trial(args, vm, res, name, blocks)

    return guarded(vm, res, body)


def dimm_trial(args, vm, res, name, blocks, shared=None):
    """Contender NAME onlines two hot-added DIMMs of BLOCKS blocks in all (one with --one-dimm),
    in the booted guest VM; SHARED is the SharedGuest under --smoke (None: a fresh guest)."""
    want, conf, loop = DIMM_CONTENDERS[name]
    size = blocks * BLOCK
    prepare(vm, conf, loop, args.daemon_debug)
    if shared is not None:
        shared.set_auto_online(res, want)
    if not check_auto_online(vm, res, want, conf):
        return
    mem_kib = memory_before(vm, res)
    base = int(vm.sh(COUNT_BLOCKS).out)
    last = int(vm.sh(LAST_BLOCK).out)
    step(vm, "%d blocks before the hot-add, auto_online_blocks %s; arming the trace"
         % (base, res["auto_online_blocks"]))
    mono = int(float(vm.sh("cat /proc/uptime").out.split()[0]) * 1e6)
    vm.sh(TRACE_SETUP)
    threads = parse_thread_cpu(vm.sh(THREAD_CPU, check=False).out) if conf is not None else None
    pid = None
    if loop in ("serial", "chmem"):
        script = (SERIAL_LOOP if loop == "serial" else CHMEM_LOOP) % {
            "base": base, "n": blocks, "zone": "online_movable"}
        pid = vm.guest_exec_start(["/bin/bash", "-c", script], timeout=args.timeout)
        if shared is not None:
            shared.loops.append(pid)
    t_host = time.monotonic()
    step(vm, "hot-adding")
    if args.one_dimm:
        vm.hotplug_dimm(0, size)
    else:
        vm.hotplug_dimm(0, size // 2)
        vm.hotplug_dimm(1, size // 2)
    got = collect(args, vm, res, blocks, base, last, mono, conf is not None)
    res["host_wait_s"] = round(time.monotonic() - t_host, 2)
    if threads:
        # From before the hot-add to after the last online and the trace's read.
        after = parse_thread_cpu(vm.sh(THREAD_CPU, check=False).out)
        res["mo_thread_cpu_ms"] = thread_cpu_delta(threads, after)
        res["mo_thread_runs"] = thread_runs_delta(threads, after)
    if pid is not None:
        lr = vm.guest_exec_wait(pid, timeout=60)
        if shared is not None:
            shared.loops.remove(pid)
        if lr.rc != 0:
            res["loop_error"] = (lr.err or lr.out)[-300:]
    res["zones"] = new_zones(vm, last)
    res["device_zones"] = device_zones(vm, last)
    memory_after(vm, res, mem_kib, res["new_blocks"])
    res["ok"] = bool(got >= blocks and res["offline_left"] == 0 and res["new_blocks"] == blocks
                     and "e2e_s" in res)
    if not res["ok"]:
        res["error"] = "%d of %d onlined, %d offline left" % (got, blocks, res["offline_left"])


NDCTL_SETUP = r"""
for i in $(seq 120); do ndctl list -R | grep -q region && break; sleep 1; done
ndctl disable-region all >/dev/null && ndctl init-labels -f all >/dev/null && ndctl enable-region all >/dev/null
ndctl create-namespace -m devdax
"""
NDCTL_REGIONS = r"""ndctl list -R | grep -o '"dev":"region[0-9]*"' | cut -d'"' -f4"""
# In a shared smoke guest the regions of the trials before hold online memory: set up only
# the region that was not there before the hot-add (BEFORE lists those that were).
NDCTL_SETUP_NEW_REGION = r"""
before=' %(before)s '
for i in $(seq 120); do
    for r in $(""" + NDCTL_REGIONS + r"""); do
        case "$before" in *" $r "*) ;; *) break 2 ;; esac
    done
    r=; sleep 1
done
[ -n "$r" ] || { echo "no new NVDIMM region" >&2; exit 1; }
dimm=$(cut -d, -f1 /sys/bus/nd/devices/$r/mapping0)
ndctl disable-region $r >/dev/null && ndctl init-labels -f $dimm >/dev/null && ndctl enable-region $r >/dev/null
ndctl create-namespace -m devdax -r $r
"""


def nvdimm_auto_online(name):
    """The auto_online_blocks an NVDIMM contender needs: daxctl's own onlining needs the
    kernel not to online first; memonlined takes what the kernel has (None)."""
    return "offline" if name == "daxctl-online" else None


def run_nvdimm(args, name, blocks, rep):
    """One NVDIMM trial on a fresh guest."""
    append = auto_online_append(nvdimm_auto_online(name), args.boot_auto)
    res = trial_result(args, "nvdimm", name, blocks, rep, append)
    vm = new_vm(args, append)

    def body():
        res["boot_s"] = round(vm.boot(), 1)
        res["boot_retries"] = vm.boot_retries
        nvdimm_trial(args, vm, res, name, blocks)

    return guarded(vm, res, body)


def nvdimm_trial(args, vm, res, name, blocks, shared=None):
    """Contender NAME onlines a hot-added NVDIMM of BLOCKS blocks (devdax, then kmem) in the
    booted guest VM; SHARED is the SharedGuest under --smoke (None: a fresh guest)."""
    # devdax keeps ~1.6% for its own memmap (map=dev) and aligns: ask for a little more.
    size = (blocks * BLOCK * 102 // 100 + GiB - 1) // GiB * GiB
    own = name == "daxctl-online"
    want = nvdimm_auto_online(name)
    settle_first = name == "daxctl-no-online+settle+memonlined"
    conf = None if own else NVDIMM_CONF.get(name, "")
    prepare(vm, conf, None, args.daemon_debug)
    if shared is not None:
        shared.set_auto_online(res, want)
    if not check_auto_online(vm, res, want, conf):
        return
    if settle_first:
        vm.sh("systemctl stop memonlined.service; "
              "rm -f /usr/lib/udev/rules.d/99-memonline.rules /lib/udev/rules.d/99-memonline.rules; "
              "udevadm control --reload")
    base = int(vm.sh(COUNT_BLOCKS).out)
    last = int(vm.sh(LAST_BLOCK).out)
    if shared is None:
        vm.hotplug_nvdimm(2, size)
        r = vm.sh(NDCTL_SETUP, timeout=400)
    else:
        before = vm.sh(NDCTL_REGIONS).out.split()
        vm.hotplug_nvdimm(2, size)
        r = vm.sh(NDCTL_SETUP_NEW_REGION % {"before": " ".join(before)}, timeout=400)
    dev = json.loads(r.out)["daxregion"]["devices"][0]["chardev"]
    mono = int(float(vm.sh("cat /proc/uptime").out.split()[0]) * 1e6)
    vm.sh(TRACE_SETUP)
    cmd = "daxctl reconfigure-device --mode=system-ram %s %s" % ("" if own else "--no-online", dev)
    if settle_first:
        cmd = "{ %s && udevadm settle && systemctl start memonlined.service; }" % cmd
    r = vm.sh("t0=$(date +%%s%%N); %s >/tmp/daxctl.json; rc=$?; t1=$(date +%%s%%N); "
              "echo $rc $(( (t1 - t0) / 1000 )); cat /tmp/daxctl.json" % cmd, timeout=args.timeout)
    first, rest = r.out.split("\n", 1)
    rc, usec = first.split()
    res["daxctl_rc"], res["daxctl_wall_s"] = int(rc), round(int(usec) / 1e6, 3)
    info = json.loads(rest)
    info = info[0] if isinstance(info, list) else info
    n = int(info.get("total_memblocks", 0))
    res["blocks"] = n
    got = collect(args, vm, res, n, base, last, mono, not own)
    res["ok"] = bool(n > 0 and got >= n and res["offline_left"] == 0 and res["daxctl_rc"] == 0
                     and "e2e_s" in res)
    if not res["ok"]:
        res["error"] = "%d of %d onlined, %d offline left, daxctl rc %s" % (
            got, n, res["offline_left"], rc)


CXL_MEMDEV = r"""
for i in $(seq 120); do [ "$(cxl list -M | jq length)" -ge 1 ] && break; sleep 1; done
cxl list -M | jq -r '.[0].memdev'
"""
CXL_CREATE = ("t0=$(date +%s%N); cxl create-region -m -d decoder0.0 -w 1 -t ram {mem} >/tmp/region.json; rc=$?; "
              "t1=$(date +%s%N); echo $rc $(( (t1 - t0) / 1000 )); cat /tmp/region.json")


def run_cxl(args, name, blocks, rep):
    want, conf = CXL_CONTENDERS[name]
    append = auto_online_append(want, args.boot_auto)
    res = trial_result(args, "cxl", name, blocks, rep, append)
    if not args.cxl:
        res.update(ok=False, error="the image has no cxl tool (CXL RAM regions need Debian 13's guest)")
        return res
    vm = new_vm(args, append, cxl=[blocks * BLOCK])

    def body():
        res["boot_s"] = round(vm.boot(), 1)
        res["boot_retries"] = vm.boot_retries
        prepare(vm, conf, "udev" if name == "cxl+udev-rule" else None, args.daemon_debug)
        if not check_auto_online(vm, res, want, conf):
            return
        mem = vm.sh(CXL_MEMDEV, timeout=180).out.strip()
        if not mem.startswith("mem"):
            raise VMError("no CXL memdev in the guest (cxl list -M: %r)" % mem)
        mem_kib = memory_before(vm, res)
        base = int(vm.sh(COUNT_BLOCKS).out)
        last = int(vm.sh(LAST_BLOCK).out)
        mono = int(float(vm.sh("cat /proc/uptime").out.split()[0]) * 1e6)
        vm.sh(TRACE_SETUP)
        step(vm, "cxl create-region on %s" % mem)
        r = vm.sh(CXL_CREATE.format(mem=mem), timeout=args.timeout)
        first, rest = r.out.split("\n", 1)
        rc, usec = first.split()
        res["cxl_rc"], res["cxl_create_wall_s"] = int(rc), round(int(usec) / 1e6, 3)
        info = json.loads(rest)
        res["region"], res["region_size"] = info.get("region"), info.get("size")
        bs = int(vm.sh("cat /sys/devices/system/memory/block_size_bytes").out.strip(), 16)
        n = int(info.get("size", 0)) // bs
        res["blocks"] = n
        got = collect(args, vm, res, n, base, last, mono, conf is not None)
        res["zones"] = new_zones(vm, last)
        memory_after(vm, res, mem_kib, res["new_blocks"])
        res["ok"] = bool(n > 0 and got >= n and res["offline_left"] == 0 and res["cxl_rc"] == 0
                         and res["new_blocks"] == n and "e2e_s" in res)
        if not res["ok"]:
            res["error"] = "%d of %d onlined, %d offline left, cxl rc %s" % (got, n, res["offline_left"], rc)

    return guarded(vm, res, body)


# --smoke only. The smoke checks that every contender onlines all its blocks and measures
# nothing, so the DIMM contenders share one guest and the NVDIMM ones another, one trial after
# the other: 2 boots instead of 11. A campaign boots a fresh guest per trial (inside one guest
# the n-th hot-add is 3-6x slower than the first). A CXL device is fixed when its guest starts:
# a CXL trial keeps a guest of its own.
SHARED_KINDS = ("dimm", "nvdimm")

# Between two trials in a shared smoke guest: what the trial before may have left behind
# (the next trial's own set-up restarts or masks memonlined, writes auto_online_blocks and
# re-arms the trace).
SMOKE_RESET = r"""
# udev-rule's rule (prepare() installs it again for a trial that wants it).
rm -f /etc/udev/rules.d/90-bench-online.rules
udevadm control --reload
udevadm settle --timeout=120 || true
# Blocks a failed trial left offline, online by hand: the next trial's loops would online them too.
n=0
for s in /sys/devices/system/memory/memory[0-9]*/state; do
    read -r v < $s
    if [ "$v" = offline ] && echo online > $s 2>/dev/null; then n=$((n + 1)); fi
done
echo $n
"""


def masks_memonlined(name):
    """Whether contender NAME's set-up takes memonlined away for the rest of the guest's boot:
    prepare() without a config masks it and deletes its udev rule; the settle diagnostic
    deletes the rule too."""
    if name in DIMM_CONTENDERS:
        return DIMM_CONTENDERS[name][1] is None
    if name in CXL_CONTENDERS:
        return CXL_CONTENDERS[name][1] is None
    return name == "daxctl-online" or name in NVDIMM_DIAG


def smoke_guests(todo):
    """The trials TODO ((round, position, kind, blocks, contender)) as --smoke runs them: lists
    of trials that share a guest, in the order to run. One guest per kind and size, in TODO's
    order; in it the contenders that run memonlined first (in TODO's order), then those that
    take it away; a CXL trial alone."""
    guests = {}
    for t in todo:
        _, _, kind, blocks, _ = t
        guests.setdefault((kind, blocks) if kind in SHARED_KINDS else t, []).append(t)
    return [sorted(g, key=lambda t: masks_memonlined(t[4])) for g in guests.values()]


class SharedGuest:
    """--smoke: the guest that one list of smoke_guests() runs its trials in, one after another.
    Booted at the first trial, and again when a trial finds it hung or gone (trial() then runs
    that trial once more, in the new guest). Every guest boots the kernel's own auto-online
    setting; a trial that needs another writes it (set_auto_online). Before each later trial
    reset() undoes what the trials before may have left."""

    numbers = itertools.count()   # the guests of this run, as their trials record them (shared_guest)

    def __init__(self, args, trials):
        self.args = args
        dimm_blocks = [s for _, _, kind, s, _ in trials if kind == "dimm"]
        nvdimms = len(trials) - len(dimm_blocks)
        # Two DIMMs a DIMM trial, one NVDIMM an NVDIMM trial: each trial gets fresh slots.
        self.slots = max(16, 2 * len(dimm_blocks) + nvdimms)
        # Every DIMM trial's memory stays in the guest (NVDIMMs sit at their own addresses).
        self.added = sum(dimm_blocks) * BLOCK
        self.vm = None
        self.number = self.boot_s = self.boot_retries = None
        self.trials = 0   # trials run in this guest so far
        self.loops = []   # guest pids of onlining loops not seen to end

    def run(self, name, blocks, rep):
        """One trial of contender NAME at BLOCKS blocks in this guest: run_dimm's or
        run_nvdimm's record, plus shared_guest (this guest's number) and
        shared_guest_trials_before."""
        kind = "dimm" if name in DIMM_CONTENDERS else "nvdimm"
        res = trial_result(self.args, kind, name, blocks, rep, "")
        if not self.running():
            self.close()
        if self.vm is None:
            ok, avail, need = host_headroom_ok(self.added, self.args.guest_mem_mib)
            if not ok:
                res.update(ok=False, error=headroom_error(avail, need))
                return res
            self.vm = new_vm(self.args, "", size=self.added, slots=self.slots)
            self.number, self.boot_s, self.trials, self.loops = next(self.numbers), None, 0, []
        vm = self.vm
        res.update(shared_guest=self.number, shared_guest_trials_before=self.trials)
        self.trials += 1

        def body():
            if self.boot_s is None:
                self.boot_s, self.boot_retries = round(vm.boot(), 1), vm.boot_retries
                step(vm, "shared guest %d booted in %.1f s" % (self.number, self.boot_s))
                res.update(boot_s=self.boot_s, boot_retries=self.boot_retries)
            else:
                res.update(boot_s=self.boot_s, boot_retries=self.boot_retries)
                self.reset(res)
            (dimm_trial if kind == "dimm" else nvdimm_trial)(self.args, vm, res, name, blocks, self)

        guarded(vm, res, body, keep_guest=True)
        if res.get("guest_unresponsive") or not vm.alive():
            self.close()
        return res

    def reset(self, res):
        """Undo what the trials before may have left: a loop still waiting for blocks (it would
        online this trial's), the udev rule, blocks left offline."""
        kill = "kill %s 2>/dev/null\n" % " ".join(map(str, self.loops)) if self.loops else ""
        self.loops = []
        onlined = int(self.vm.sh(kill + SMOKE_RESET, timeout=240).out.strip() or 0)
        if onlined:
            log("  shared guest %d: %d blocks left offline by the trials before, onlined by hand"
                % (self.number, onlined))
            res["reset_onlined_blocks"] = onlined

    def set_auto_online(self, res, want):
        """Write the auto_online_blocks the contender needs (WANT; None: what memonlined leaves,
        as on a fresh guest), where a fresh guest has it from its command line. Called after
        prepare(): a memonlined that stops gives back the setting it took over."""
        if want is not None:
            self.vm.sh("echo %s > %s" % (want, AUTO_ONLINE))
            res["auto_online_written"] = want

    def running(self):
        return self.vm is not None and self.vm.alive()

    def close(self):
        if self.vm is not None:
            self.vm.close()
            self.vm = None


def other_qemus():
    n = 0
    for pid in os.listdir("/proc"):
        if pid.isdigit():
            try:
                with open("/proc/%s/comm" % pid) as f:
                    n += f.read().startswith("qemu-system")
            except OSError:
                pass
    return n


def runnable():
    with open("/proc/loadavg") as f:
        return int(f.read().split()[3].split("/")[0])


def wait_quiet(limit):
    """Wait up to LIMIT s until no other guest runs and at most 2 tasks are runnable
    for 3 s running (TCG timings are CPU-bound); returns (seconds waited, quiet)."""
    t0 = time.monotonic()
    calm = 0
    while True:
        calm = calm + 1 if other_qemus() == 0 and runnable() <= 2 else 0
        if calm >= 3:
            return round(time.monotonic() - t0), True
        if time.monotonic() - t0 >= limit:
            return round(time.monotonic() - t0), False
        time.sleep(1)


# Two DIMMs (the default), or one (--one-dimm): a case of its own.
DIMM_KINDS = ("dimm", "dimm1")


def dimm_kind(args):
    return "dimm1" if getattr(args, "one_dimm", False) else "dimm"


def points(contenders, big, sizes, nv_sizes, cxl_sizes, dimm="dimm"):
    """[(kind, blocks, [contenders])]: what each round measures, in order."""
    plan = [(dimm, s, [c for c in contenders if c in DIMM_CONTENDERS and (s < 2048 or c in big)]) for s in sizes]
    plan += [("nvdimm", s, [c for c in contenders if c in NVDIMM_CONTENDERS or c in NVDIMM_DIAG]) for s in nv_sizes]
    plan += [("cxl", s, [c for c in contenders if c in CXL_CONTENDERS]) for s in cxl_sizes]
    return [p for p in plan if p[2]]


def trials_done(path):
    """(kind, blocks, contender, round) of the trials already in PATH (--resume)."""
    done = set()
    if os.path.exists(path):
        for line in open(path):
            if line.startswith("{"):
                r = json.loads(line)
                if "round" in r and "contender" in r:
                    done.add((r["kind"], r.get("blocks_requested", r.get("blocks")), r["contender"], r["round"]))
    return done


# Of a trial's estimate, what a boot and the guest's start take.
BOOT_ESTIMATE_S = 45


def trial_estimate_s(kind, blocks, booted=False):
    """A trial's wall time on this 2-core host, from the campaigns of docs/BENCHMARKS.md
    (a boot and set-up of about a minute, then about 0.06 s a block under TCG); BOOTED:
    in a shared smoke guest that an earlier trial booted."""
    return (70 if kind == "nvdimm" else 60) - (BOOT_ESTIMATE_S if booted else 0) + 0.06 * blocks


def record(a, out, r, rnd, pos):
    """Write trial result R to OUT as one JSON line, log it; True if it passed."""
    r.update(round=rnd, position=pos, schedule_seed=a.seed, memmap_choice=a.memmap_choice)
    out.write(json.dumps(r, sort_keys=True) + "\n")
    out.flush()
    log("  -> %s e2e=%s s first block %s s restarts=%s %s" % (
        "ok" if r.get("ok") else "FAILED", r.get("e2e_s"), r.get("first_block_s"),
        r.get("lock_restarts"), r.get("error", "")))
    return bool(r.get("ok"))


def source_build():
    """git describe of the tree this script is in ("unknown" outside git)."""
    r = subprocess.run(["git", "-C", HERE, "describe", "--always", "--dirty", "--abbrev=7"],
                       capture_output=True, text=True, check=False)
    return r.stdout.strip() or "unknown"


def hms(secs):
    return "%dh%02dm" % (secs // 3600, secs % 3600 // 60)


@contextlib.contextmanager
def vm_lock(path):
    """Hold PATH's flock for one trial (the host's one-guest-at-a-time rule), none without PATH."""
    if not path:
        yield
        return
    with open(path, "a") as f:
        t = time.monotonic()
        fcntl.flock(f, fcntl.LOCK_EX)
        if time.monotonic() - t > 1:
            log("  waited %d s for %s" % (time.monotonic() - t, path))
        try:
            yield
        finally:
            fcntl.flock(f, fcntl.LOCK_UN)


def trial(a, c, s, rnd, shared=None):
    """One trial of contender C at S blocks with the host's state around it: on a fresh guest,
    or under --smoke in the SharedGuest SHARED."""
    waited, quiet = wait_quiet(a.wait_quiet)
    t = time.monotonic()
    load = os.getloadavg()[0]

    def run():
        if shared is not None:
            return shared.run(c, s, rnd)
        return (run_dimm if c in DIMM_CONTENDERS else run_cxl if c in CXL_CONTENDERS else run_nvdimm)(a, c, s, rnd)

    r = run()
    if not r.get("ok") and r.get("guest_unresponsive"):
        # Once, on a fresh guest (a shared guest that hung is gone: a new one boots); the first
        # error stays in the record.
        log("  guest stopped answering or QEMU died in boot (%s); one more trial on a fresh guest" % r["error"])
        first = r["error"]
        r = run()
        r["retry_of"] = first
    r["trial_wall_s"] = round(time.monotonic() - t, 1)
    r["guest_append"] = a.guest_append
    # Other guests on this host distort TCG timings: keep the evidence.
    r["host_load_before"] = round(load, 2)
    r["waited_for_quiet_s"], r["host_quiet"] = waited, quiet
    r["host_load_after"] = round(os.getloadavg()[0], 2)
    # Not the shared smoke guest this trial ran in (it lives on for the next).
    r["other_qemus_after"] = other_qemus() - (shared is not None and shared.running())
    r["time"] = time.strftime("%Y-%m-%dT%H:%M:%S")
    r["build"] = a.build
    return r


def past_stop_time(stop_at, now=None):
    """True at or after STOP_AT (HH:MM, local time); never without one. The nearest such
    time counts: one up to 12 hours ahead is still to come, one up to 12 hours behind has
    passed, so that a plan's 00:12 written at 23:46 is tonight's, not this morning's."""
    if not stop_at:
        return False
    hour, minute = (int(x) for x in stop_at.split(":"))
    now = now or time.localtime()
    return (now.tm_hour * 60 + now.tm_min - hour * 60 - minute) % (24 * 60) < 12 * 60


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--image-dir", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--sizes", default="64,512,2048")
    ap.add_argument("--nvdimm-sizes", default="64,512")
    ap.add_argument("--cxl-sizes", default=None,
                    help="blocks of the CXL region (default 32 on an image with the cxl tool, none otherwise)")
    ap.add_argument("--repeat", "--rounds", type=int, default=3,
                    help="rounds: each runs every contender of every size once, in a balanced rotation")
    ap.add_argument("--seed", default="bench",
                    help="seed of the rotation (recorded per trial as schedule_seed, with round and position)")
    ap.add_argument("--resume", action="store_true",
                    help="skip the trials (contender, size, round) --out already holds")
    ap.add_argument("--lock", default=None,
                    help="flock this file around each trial (released between trials)")
    ap.add_argument("--stop-at", default=None, metavar="HH:MM",
                    help="start no trial at or after this local time (a plan's time rule; the nearest such "
                         "time, up to 12 hours ahead or behind); the trials before it stay")
    ap.add_argument("--estimate", action="store_true", help="print the trials and their estimated wall time only")
    ap.add_argument("--build", default=None,
                    help="the build measured, recorded per trial (default: git describe of this source tree); "
                         "the pooling rule never pools two builds")
    ap.add_argument("--memmap-on-memory", action="store_true",
                    help="boot guests with memory_hotplug.memmap_on_memory=1: the hot-added memory's memmap "
                         "goes into the blocks, not boot memory (kernels that support it for the hot-add)")
    ap.add_argument("--contenders", default=",".join(ALL))
    ap.add_argument("--big-contenders", default="memonlined,kernel-auto-online,serial-loop,udev-rule",
                    help="contenders run at sizes >= 2048 (each trial there takes minutes)")
    ap.add_argument("--timeout", type=int, default=900)
    ap.add_argument("--daemon-debug", action="store_true",
                    help="run memonlined with MEMONLINED_LOG_LEVEL=debug; keep its per-batch phase lines "
                         "and its journal since the hot-add (mo_log: [s after the first add, message])")
    ap.add_argument("--wait-quiet", type=int, default=240,
                    help="before each trial wait up to this long for a quiet host (no other guest)")
    ap.add_argument("--guest-mem-mib", type=int, default=GUEST_MEM_MIB,
                    help="boot memory; the kernel zones must hold the memmap of the hot-added memory")
    ap.add_argument("--guest-cpus", type=int, choices=(2, 4, 8), default=8,
                    help="guest CPUs, half on each CPU node (default 8: 2 cores of 2 threads per node); "
                         "under 8 the vCPU threads no longer outnumber the host's cores")
    # Under TCG each character on the emulated serial console takes QEMU's
    # global lock: the kernel's hotplug messages stalled vCPUs for seconds.
    ap.add_argument("--guest-append", default="quiet",
                    help="added to every guest's kernel command line (default: quiet; '' for the console loud)")
    ap.add_argument("--one-dimm", action="store_true",
                    help="hot-add the DIMM blocks as one DIMM on node 0, not two halves on nodes 0 and 1: "
                         "a single device (the first-block target); its trials' kind is dimm1, a case of its own")
    ap.add_argument("--smoke", action="store_true",
                    help="64 blocks, one repeat, every contender, 2 GiB guests (they boot faster); a check, "
                         "not a measurement: the DIMM contenders share one guest and the NVDIMM ones another "
                         "(CXL: one each), trial after trial, each record marked shared_guest")
    a = ap.parse_args()
    if a.stop_at and not re.fullmatch(r"([01]?[0-9]|2[0-3]):[0-5][0-9]", a.stop_at):
        ap.error("--stop-at %r: expected HH:MM" % a.stop_at)
    if a.build is None:
        a.build = source_build()
    env = image_env(a.image_dir)
    a.kver = env.get("KVER")
    a.kernel = kernel_tag(a.kver)
    a.cxl = env.get("CXL") == "yes"
    a.qemu = qemu_version()
    # What auto_online_blocks reads at boot: each contender gets the command line it needs from it.
    a.boot_auto = kernel_auto_online(os.path.join(a.image_dir, "config"))
    if a.boot_auto is None:
        ap.error("no kernel config in %s (tests/vm/build-image.sh copies it)" % a.image_dir)
    if a.cxl_sizes is None:
        a.cxl_sizes = "32" if a.cxl else ""
    if a.smoke:
        a.sizes, a.nvdimm_sizes, a.repeat = "64", "64", 1
        a.cxl_sizes = "8" if a.cxl else ""
        a.contenders = ",".join(c for c in ALL if a.cxl or c not in CXL_CONTENDERS)
        a.guest_mem_mib = 2048
        a.wait_quiet = 0
    if a.memmap_on_memory:
        a.guest_append = " ".join(x for x in (a.guest_append, "memory_hotplug.memmap_on_memory=1") if x)
    a.memmap_choice = "memmap_on_memory=1" if a.memmap_on_memory else "boot memory %d MiB" % a.guest_mem_mib
    log("guest kernel %s (%s), auto_online_blocks at boot: %s, CXL: %s"
        % (a.kernel, a.kver, a.boot_auto, "yes" if a.cxl else "no"))
    contenders = [c for c in a.contenders.split(",") if c]
    for c in contenders:
        if c not in KNOWN:
            ap.error("unknown contender %s (known: %s)" % (c, ", ".join(KNOWN)))
    big = set(a.big_contenders.split(","))
    sizes = [int(s) for s in a.sizes.split(",") if s]
    nv_sizes = [int(s) for s in a.nvdimm_sizes.split(",") if s]
    cxl_sizes = [int(s) for s in a.cxl_sizes.split(",") if s]
    plan = points(contenders, big, sizes, nv_sizes, cxl_sizes, dimm_kind(a))
    scheds = {(kind, s): benchstats.schedule(cs, a.repeat, "%s/%s/%d" % (a.seed, kind, s)) for kind, s, cs in plan}
    done = trials_done(a.out) if a.resume else set()
    todo = [(rnd, pos, kind, s, c) for rnd in range(a.repeat) for kind, s, cs in plan
            for pos, c in enumerate(scheds[(kind, s)][rnd]) if (kind, s, c, rnd) not in done]
    # One trial a guest, or under --smoke the lists of trials that share one.
    guests = smoke_guests(todo) if a.smoke else [[t] for t in todo]
    estimate = sum(trial_estimate_s(kind, s, booted=i > 0 and kind in SHARED_KINDS)
                   for g in guests for i, (_, _, kind, s, _) in enumerate(g))
    log("%d trials to run (%d done before) in %d guests, about %s without waiting for the lock or a quiet host"
        % (len(todo), len(done), len(guests), hms(estimate)))
    for kind, s, cs in plan:
        if a.repeat % benchstats.period(len(cs)):
            log("note: %s at %d blocks: %d rounds of %d contenders are not a whole number of balanced periods (%d)"
                % (kind, s, a.repeat, len(cs), benchstats.period(len(cs))))
    if a.estimate:
        return 0
    passed = failed = 0
    with open(a.out, "a") as out:
        if a.smoke:
            for group in guests:
                shared = SharedGuest(a, group) if group[0][2] in SHARED_KINDS else None
                # The lock is the host's one guest at a time: held as long as the shared guest lives.
                with vm_lock(a.lock):
                    try:
                        for rnd, pos, kind, s, c in group:
                            log("round %d, position %d: %s, %d blocks%s" % (
                                rnd, pos, c, s, " (shared guest)" if shared else ""))
                            ok = record(a, out, trial(a, c, s, rnd, shared), rnd, pos)
                            passed, failed = passed + ok, failed + (not ok)
                    finally:
                        if shared is not None:
                            shared.close()
        else:
            for rnd, pos, kind, s, c in todo:
                if past_stop_time(a.stop_at):
                    log("%s passed: %d trials not started" % (a.stop_at, len(todo) - passed - failed))
                    break
                log("round %d, position %d: %s, %d blocks" % (rnd, pos, c, s))
                with vm_lock(a.lock):
                    r = trial(a, c, s, rnd)
                if record(a, out, r, rnd, pos):
                    passed += 1
                else:
                    failed += 1
    print("vm-bench: %d passed, %d failed" % (passed, failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
