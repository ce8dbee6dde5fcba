#!/bin/bash
# The metrics pass Prometheus's own check: `promtool check metrics` (Debian's
# prometheus package; scripts/install-deps.sh installs it, debian/control
# lists it for the tests) reads the output of `memonlined status
# --prometheus` on fake trees, one with hostile device names and a hostile
# auto_online_blocks, and the textfile the daemon writes. promtool parses
# the exposition format and lints names, units, types and HELP: no output
# and exit 0 means clean. Without promtool the test fails: it is a build
# dependency of `make check`, not an optional extra. Prints TAP.
set -u
: "${MEMONLINED:=$(cd "$(dirname "$0")/../.." && pwd)/memonlined}"
: "${top_srcdir:=$(cd "$(dirname "$0")/../.." && pwd)}"
. "$top_srcdir/tests/unit/fake-tree.sh"

T=$(mktemp -d /tmp/memonline-prom-XXXXXX)
pid=
cleanup() { [ -n "$pid" ] && kill -9 "$pid" 2>/dev/null; rm -rf "$T"; }
trap cleanup EXIT
n=0; failed=0
ok() { n=$((n + 1)); echo "ok $n - $1"; }
not_ok() { n=$((n + 1)); failed=$((failed + 1)); echo "not ok $n - $1"; [ -z "${2:-}" ] || sed 's/^/# /' <<<"$2"; }
wait_for() { for _ in $(seq 100); do "$@" && return 0; sleep 0.1; done; return 1; }

if ! command -v promtool >/dev/null; then
        not_ok "promtool is installed (Debian's prometheus package: scripts/install-deps.sh, apt-get build-dep)"
        echo "1..$n"
        exit 1
fi

# promtool's verdict on a file: ok when it says nothing and exits 0.
promtool_ok() {  # name file
        local out rc
        out=$(promtool check metrics <"$2" 2>&1); rc=$?
        if [ $rc -eq 0 ] && [ -z "$out" ]; then ok "$1"; else not_ok "$1 (promtool exit $rc)" "$out"; fi
}

# The check can fail: promtool refuses a label value that is not UTF-8 and an unescaped quote.
printf 'memonlined_x{a="\xff"} 1\n' >"$T/bad1"
printf '# HELP memonlined_x x\n# TYPE memonlined_x gauge\nmemonlined_x{a="a"b"} 1\n' >"$T/bad2"
if ! promtool check metrics <"$T/bad1" >/dev/null 2>&1 && ! promtool check metrics <"$T/bad2" >/dev/null 2>&1; then
        ok "promtool refuses invalid UTF-8 and an unescaped quote"
else
        not_ok "promtool refuses invalid UTF-8 and an unescaped quote"
fi

# A machine with hot-added memory: offline blocks on node 1 (a DIMM),
# online Movable ones on CPU-less node 2, one not linked to a node yet.
mkdir -p "$T/sys"
fake_standard_machine "$T/sys"
for b in 16 17 18 19; do fake_block "$T/sys" $b 1 offline "Normal Movable"; done
for b in 38 39; do fake_block "$T/sys" $b 2 online Movable; done
fake_block "$T/sys" 64 -1 offline Normal
acpi_dimm() {  # root name first count
        local d="$1/bus/acpi/devices/$2" i
        mkdir -p "$d"
        for ((i = 0; i < $4; i++)); do
                ln -s "../../../../devices/system/memory/memory$(($3 + i))" "$d/physical_node$([ $i -gt 0 ] && echo $i)"
        done
}
acpi_dimm "$T/sys" "PNP0C80:00" 16 4

"$MEMONLINED" status --sysfs-root "$T/sys" --prometheus >"$T/status.prom" 2>"$T/err"
rc=$?
if [ $rc -eq 0 ] && grep -qx 'memonlined_blocks_offline{node="1"} 4' "$T/status.prom"; then
        ok "status --prometheus shows node 1's offline blocks"
else
        not_ok "status --prometheus shows node 1's offline blocks (exit $rc)" "$(cat "$T/status.prom" "$T/err")"
fi
promtool_ok "status --prometheus passes promtool" "$T/status.prom"

# MEMONLINED_SYSFS_ROOT takes the tree as --sysfs-root does.
MEMONLINED_SYSFS_ROOT="$T/sys" "$MEMONLINED" status --prometheus >"$T/env.prom" 2>/dev/null
if cmp -s <(grep -v '^memonlined_build' "$T/status.prom") <(grep -v '^memonlined_build' "$T/env.prom"); then
        ok "MEMONLINED_SYSFS_ROOT gives the same output"
else
        not_ok "MEMONLINED_SYSFS_ROOT gives the same output" "$(diff "$T/status.prom" "$T/env.prom")"
fi

# Hostile: names that close the label, forge a sample, drive a terminal, or are no UTF-8.
evil=$'PNP0C80:"} 1\nmemonlined_blocks_offline{node="0"} 99\e[2J\xff\\'
acpi_dimm "$T/sys" "$evil" 38 2
printf 'online"\\\e]0;x\a\n' >"$T/sys/devices/system/memory/auto_online_blocks"
"$MEMONLINED" status --sysfs-root "$T/sys" --prometheus >"$T/evil.prom" 2>"$T/err"
rc=$?
if [ $rc -eq 0 ] && ! grep -q $'\e' "$T/evil.prom" && ! grep -qx 'memonlined_blocks_offline{node="0"} 99' "$T/evil.prom" &&
   [ "$(grep -c '^memonlined_device_blocks_online{' "$T/evil.prom")" = 2 ]; then
        ok "hostile names stay inside their label values"
else
        not_ok "hostile names stay inside their label values (exit $rc)" "$(cat -v "$T/evil.prom" "$T/err")"
fi
promtool_ok "status --prometheus with hostile names passes promtool" "$T/evil.prom"

# The daemon's own file: with its counters and the last batch's times.
mkdir -p "$T/prom"
printf '[zones]\ndefault = online_movable\nmovable_ratio = 0\n[metrics]\ntextfile_dir = %s/prom\n' "$T" >"$T/conf"
"$MEMONLINED" --sysfs-root "$T/sys" --config "$T/conf" --log-target console >"$T/out" 2>"$T/err" &
pid=$!
if wait_for grep -q '^memonlined_last_batch_last_block_seconds ' "$T/prom/memonlined.prom" 2>/dev/null; then
        ok "the daemon writes its textfile after the coldplug batch"
else
        not_ok "the daemon writes its textfile after the coldplug batch" "$(cat "$T/err")"
fi
kill -TERM "$pid"; wait "$pid"; pid=
promtool_ok "the daemon's textfile passes promtool" "$T/prom/memonlined.prom"

echo "1..$n"
[ $failed -eq 0 ]
