#!/bin/bash
# The daemon's own loop on a fake tree: coldplug, reload (good and bad),
# rescan after reload, clean stop on SIGTERM. Prints TAP.
set -u
: "${MEMONLINED:=$(cd "$(dirname "$0")/../.." && pwd)/memonlined}"
: "${top_srcdir:=$(cd "$(dirname "$0")/../.." && pwd)}"
. "$top_srcdir/tests/unit/fake-tree.sh"

T=$(mktemp -d /tmp/memonline-daemon-XXXXXX)
pid=
cleanup() { [ -n "$pid" ] && kill -9 "$pid" 2>/dev/null; chattr -R -i "$T" 2>/dev/null; rm -rf "$T"; }
trap cleanup EXIT
n=0; failed=0
ok() { n=$((n + 1)); echo "ok $n - $1"; }
not_ok() { n=$((n + 1)); failed=$((failed + 1)); echo "not ok $n - $1"; sed 's/^/# /' "$T/out" "$T/err" | tail -20; }
check() { local name="$1"; shift; if "$@"; then ok "$name"; else not_ok "$name"; fi; }
# Wait up to 10 s for a command to succeed.
wait_for() { for _ in $(seq 100); do "$@" && return 0; sleep 0.1; done; return 1; }
state() { cat "$T/sys/devices/system/memory/memory$1/state"; }
is_state() { [ "$(state "$1")" = "$2" ]; }

mkdir -p "$T/sys"
fake_standard_machine "$T/sys"
for b in 32 33 34; do fake_block "$T/sys" $b 1 offline "Movable Normal"; done
# memory34 refuses its first writes (EPERM) but still reads as offline.
chattr +i "$T/sys/devices/system/memory/memory34/state"
for b in 64 65; do fake_block "$T/sys" $b 2 offline "Movable Normal"; done

cat > "$T/conf" <<'CONF'
[zones]
default = online_movable
movable_ratio = 0
[node 2]
zone = skip
CONF

"$MEMONLINED" --sysfs-root "$T/sys" --config "$T/conf" --log-target console >"$T/out" 2>"$T/err" &
pid=$!

check "coldplug onlines the offline blocks at start" wait_for is_state 33 online_movable
check "coldplug batch record says trigger=coldplug" wait_for grep -q 'MEMONLINE_TRIGGER=coldplug' "$T/out"
check "policy skip leaves node2 offline" is_state 64 offline
check "a failed block is reported" wait_for grep -q 'MEMONLINE_BLOCK=memory34' "$T/out"
check "a failed block schedules a rescan" wait_for grep -q 'rescanning in 1 s' "$T/err"
chattr -i "$T/sys/devices/system/memory/memory34/state"
check "the retry rescan onlines it once the kernel accepts" wait_for is_state 34 online_movable
check "the retry batch record says trigger=retry" wait_for grep -q 'MEMONLINE_TRIGGER=retry' "$T/out"

# A broken file: the reload is refused with FILE:LINE, the old policy stays.
cp "$T/conf" "$T/good"
printf '[zones]\ndefault = online_movable\n[node 2]\nzone = sideways\n' > "$T/conf"
kill -HUP "$pid"
check "bad reload logs FILE:LINE" wait_for grep -q "$T/conf:4: " "$T/err"
check "bad reload keeps the daemon running" kill -0 "$pid"
sleep 0.3
check "bad reload changes nothing" is_state 64 offline

# A good file: reloaded, and the rescan onlines what the new policy wants.
printf '[zones]\ndefault = online_movable\nmovable_ratio = 0\n[node 2]\nzone = online_kernel\n' > "$T/conf"
kill -HUP "$pid"
check "good reload is logged" wait_for grep -q "reloaded $T/conf" "$T/err"
check "after reload node2 comes online as the new policy says" wait_for is_state 65 online_kernel
check "the reload batch record says trigger=reload" wait_for grep -q 'MEMONLINE_TRIGGER=reload' "$T/out"
check "batch sequence numbers increase" grep -q 'MEMONLINE_BATCH=3 ' "$T/out"

kill -TERM "$pid"
rc=0
wait "$pid" || rc=$?
pid=
check "SIGTERM exits cleanly" test $rc -eq 0
check "stop is logged with the total" grep -q "stopped after 5 blocks" "$T/err"

echo "1..$n"
[ $failed -eq 0 ]
