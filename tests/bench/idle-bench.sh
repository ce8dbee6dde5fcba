#!/bin/bash
# idle-bench.sh BUILDDIR [SECONDS]
# The daemon's cost when nothing happens: start memonlined on a fake sysfs
# tree (--log-target console, so no journald and no systemd watchdog), let
# it settle, then count its wakeups (context switches of all its threads,
# from /proc/PID/task/*/status) over SECONDS (default 60), then its
# syscalls (strace -c, if installed) over SECONDS more. Prints one JSON line.
set -euo pipefail
B=$(cd "${1:?usage: idle-bench.sh BUILDDIR [SECONDS]}" && pwd)
SECS=${2:-60}
top_srcdir=$(cd "$(dirname "$0")/../.." && pwd)
. "$top_srcdir/tests/unit/fake-tree.sh"

T=$(mktemp -d /tmp/memonlined-idle-XXXXXX)
PID=
cleanup() {
        [ -n "$PID" ] && kill "$PID" 2>/dev/null && wait "$PID" 2>/dev/null
        rm -rf "$T"
}
trap cleanup EXIT

fake_standard_machine "$T/sys"
: > "$T/conf"
"$B/memonlined" --sysfs-root "$T/sys" --config "$T/conf" --log-target console >"$T/out" 2>"$T/err" &
PID=$!
sleep 3
kill -0 "$PID" || { echo "idle-bench: memonlined exited: $(cat "$T/err")" >&2; exit 1; }

switches() {  # voluntary nonvoluntary, summed over threads
        local v=0 n=0 f
        for f in /proc/"$PID"/task/*/status; do
                v=$((v + $(awk '/^voluntary_ctxt_switches/{print $2}' "$f")))
                n=$((n + $(awk '/^nonvoluntary_ctxt_switches/{print $2}' "$f")))
        done
        echo "$v $n"
}
rss_kib=$(awk '/^VmRSS/{print $2}' /proc/"$PID"/status)
threads=$(ls /proc/"$PID"/task | wc -l)
read -r v0 n0 < <(switches)
sleep "$SECS"
read -r v1 n1 < <(switches)
# Then which syscalls, if any (attaching strace itself stops the threads once: not counted above).
syscalls=null
if command -v strace >/dev/null; then
        timeout -s INT "$SECS" strace -f -c -p "$PID" -o "$T/strace" 2>/dev/null || true
        syscalls=$(awk '$NF=="total"{print $(NF-1); f=1} END{if(!f) print 0}' "$T/strace")
        sed -n '3,$p' "$T/strace" | grep -v -e '^-' -e total | awk '{print "idle-bench: syscall", $NF, $(NF-1)}' >&2 || true
fi
rss_kib_end=$(awk '/^VmRSS/{print $2}' /proc/"$PID"/status)
printf '{"bench":"idle","seconds":%d,"threads":%d,"rss_kib":%d,"rss_kib_end":%d,"voluntary_switches":%d,"nonvoluntary_switches":%d,"wakeups_per_min":%.1f,"syscalls":%s}\n' \
        "$SECS" "$threads" "$rss_kib" "$rss_kib_end" $((v1 - v0)) $((n1 - n0)) \
        "$(echo "($v1 - $v0 + $n1 - $n0) * 60 / $SECS" | bc -l)" "$syscalls"
