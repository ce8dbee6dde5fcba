#!/bin/bash
# Taking over from kernel auto-online, through the daemon's own start,
# stop, crash, restart and reload on a fake tree ([daemon]
# take_over_auto_online), a start that cannot run, a second instance and
# a value written by hand. RUNTIME_DIRECTORY stands in for the unit's
# RuntimeDirectory. Prints TAP.
set -u
: "${MEMONLINED:=$(cd "$(dirname "$0")/../.." && pwd)/memonlined}"
: "${top_srcdir:=$(cd "$(dirname "$0")/../.." && pwd)}"
. "$top_srcdir/tests/unit/fake-tree.sh"

T=$(mktemp -d /tmp/memonline-takeover-XXXXXX)
pid=
cleanup() { [ -n "$pid" ] && kill -9 "$pid" 2>/dev/null; rm -rf "$T"; }
trap cleanup EXIT
n=0; failed=0
ok() { n=$((n + 1)); echo "ok $n - $1"; }
not_ok() { n=$((n + 1)); failed=$((failed + 1)); echo "not ok $n - $1"; sed 's/^/# /' "$T/err" | tail -20; }
check() { local name="$1"; shift; if "$@"; then ok "$name"; else not_ok "$name"; fi; }
wait_for() { for _ in $(seq 100); do "$@" && return 0; sleep 0.1; done; return 1; }
AUTO=$T/sys/devices/system/memory/auto_online_blocks
SAVED=$T/run/auto_online_blocks
auto_is() { [ "$(cat "$AUTO")" = "$1" ]; }
saved_is() { [ -f "$SAVED" ] && [ "$(cat "$SAVED")" = "$1" ]; }
logged() { grep -q -- "$1" "$T/err"; }
start() {  # [config text]
        printf '%s\n' "${1:-[zones]}" > "$T/conf"
        : > "$T/err"
        RUNTIME_DIRECTORY=$T/run "$MEMONLINED" --sysfs-root "$T/sys" --config "$T/conf" \
                --log-target console >"$T/out" 2>"$T/err" &
        pid=$!
        wait_for logged "started (policy"
}
stop() {  # signal
        kill "-$1" "$pid"
        wait "$pid" 2>/dev/null
        pid=
}

mkdir -p "$T/sys" "$T/run"
fake_standard_machine "$T/sys"
echo online > "$AUTO"

start
check "at start auto_online_blocks is set to offline" auto_is offline
check "the old value is saved in the runtime directory" saved_is online
check "the takeover is logged with the old value" logged 'kernel auto-online was "online": set auto_online_blocks to offline'
check "no conflict warning once taken over" bash -c "! grep -q 'kernel auto-online is' '$T/err'"
stop TERM
check "a clean stop restores the old value" auto_is online
check "a clean stop removes the saved value" test ! -e "$SAVED"
check "the restore is logged" logged 'restored auto_online_blocks to "online"'

start
stop KILL
check "after a crash auto_online_blocks stays offline" auto_is offline
check "after a crash the saved value is still there" saved_is online
start
check "the restarted daemon names the original value" logged 'earlier memonlined took over; "online" is restored'
stop TERM
check "the restarted daemon restores the original, not offline" auto_is online

# Changed by someone else while we ran: theirs stays.
start
echo online_movable > "$AUTO"
stop TERM
check "a value set while memonlined ran is left alone" auto_is online_movable
check "and that is logged" logged 'written by someone else while memonlined ran (it reads "online_movable")'

# Policy says no: warn only; a saved value from a crashed run is still given back.
start
stop KILL
start $'[daemon]\ntake_over_auto_online = no'
check "with take_over_auto_online = no a crashed run's value is given back at start" auto_is online_movable
check "with take_over_auto_online = no the other onliner is reported" wait_for logged 'kernel auto-online is "online_movable"'
# Reload with yes: taken over now; reload with no again: given back.
printf '[daemon]\ntake_over_auto_online = yes\n' > "$T/conf"
kill -HUP "$pid"
check "a reload to yes takes over" wait_for auto_is offline
printf '[daemon]\ntake_over_auto_online = no\n' > "$T/conf"
kill -HUP "$pid"
check "a reload to no gives it back" wait_for auto_is online_movable
stop TERM
check "a stop after giving it back changes nothing" auto_is online_movable

# Already offline (memhp_default_state=offline): nothing taken, nothing restored.
echo offline > "$AUTO"
start
check "already offline: no takeover logged" bash -c "! grep -q 'auto_online_blocks' '$T/err'"
stop TERM
check "already offline: stays offline after stop" auto_is offline

# An admin writes "offline" by hand while memonlined runs (it reads the same as ours): theirs stays.
echo online > "$AUTO"
start
check "taken over again for the hand-written case" auto_is offline
echo offline > "$AUTO"
check "a write of the value memonlined wrote is noticed" wait_for logged 'written by someone else while memonlined ran (it reads "offline")'
check "and the saved value is dropped at once" test ! -e "$SAVED"
stop TERM
check "a hand-written offline stays offline at stop" auto_is offline
check "nothing is restored over it" bash -c "! grep -q 'restored auto_online_blocks' '$T/err'"

# A start that cannot run gives the setting back before it exits (a broken config: exit 3).
echo online > "$AUTO"
start
stop KILL
printf '[zones]\ndefault = sideways\n' > "$T/conf"
rc=0
RUNTIME_DIRECTORY=$T/run "$MEMONLINED" --sysfs-root "$T/sys" --config "$T/conf" --log-target console \
        >"$T/out" 2>"$T/err" || rc=$?
check "a refused config exits 3" test $rc -eq 3
check "a start that cannot run restores the value a crashed run saved" auto_is online
check "and says so" logged 'memonlined cannot run: restored auto_online_blocks to "online"'
check "and drops the saved value" test ! -e "$SAVED"
for i in 1 2 3; do
        RUNTIME_DIRECTORY=$T/run "$MEMONLINED" --sysfs-root "$T/sys" --config "$T/conf" --log-target console \
                >"$T/out" 2>"$T/err"
done
check "three more failed starts leave it as the admin had it" auto_is online
start
check "the next good start takes over the admin's value" saved_is online
stop TERM
check "and gives it back at stop" auto_is online

# Two instances: the second refuses, names the first, and touches nothing.
start
first=$pid
check "the running daemon's marker resolves" test -e "$T/run/running"
rc=0
RUNTIME_DIRECTORY=$T/run timeout 10 "$MEMONLINED" --sysfs-root "$T/sys" --config "$T/conf" --log-target console \
        >"$T/out2" 2>"$T/err2" || rc=$?
check "a second instance exits non-zero at once" test $rc -eq 1
check "it names the first one's pid" grep -q "another memonlined (pid $first) is running" "$T/err2"
check "it leaves the first one's takeover alone" auto_is offline
check "and the saved value" saved_is online
check "the first one still runs" kill -0 "$first"
stop TERM
check "the first one's stop gives the value back" auto_is online
check "a clean stop removes the marker" test ! -L "$T/run/running"
start
stop KILL
check "a killed daemon's marker no longer resolves" test ! -e "$T/run/running"
start
check "the next start is not refused by a dead holder" auto_is offline
stop TERM

echo "1..$n"
[ $failed -eq 0 ]
