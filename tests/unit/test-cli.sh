#!/bin/bash
# End to end on fake trees: --dry-run, --once, --check-config, exit codes.
# Prints TAP.
set -u
: "${MEMONLINED:=$(cd "$(dirname "$0")/../.." && pwd)/memonlined}"
: "${top_srcdir:=$(cd "$(dirname "$0")/../.." && pwd)}"
. "$top_srcdir/tests/unit/fake-tree.sh"

T=$(mktemp -d /tmp/memonline-cli-XXXXXX)
trap 'chattr -R -i "$T" 2>/dev/null; rm -rf "$T"' EXIT
n=0; failed=0
ok() { n=$((n + 1)); echo "ok $n - $1"; }
not_ok() { n=$((n + 1)); failed=$((failed + 1)); echo "not ok $n - $1"; shift; for l in "$@"; do echo "# $l"; done; }
check() { local name="$1"; shift; if "$@"; then ok "$name"; else not_ok "$name" "command: $*"; fi; }

new_tree() {
        chattr -R -i "$T/sys" 2>/dev/null
        rm -rf "$T/sys"; mkdir -p "$T/sys"
        fake_standard_machine "$T/sys"
        # Hot-added: 4 blocks on node1, 4 on CPU-less node2, 2 whose node link is missing.
        for b in 32 33 34 35; do fake_block "$T/sys" $b 1 offline "Movable Normal"; done
        for b in 64 65 66 67; do fake_block "$T/sys" $b 2 offline "Movable Normal"; done
        for b in 66000 66001; do fake_block "$T/sys" $b -1 offline "Normal Movable"; done
}

cat > "$T/good.conf" <<'CONF'
[daemon]
settle_ms = 10
node_link_wait_ms = 20

[zones]
default = online_movable
movable_ratio = 0

# node2's hot-added blocks 64-67 (128 MiB each). A range, not a node rule:
# blocks whose node is unknown are then planned, unpinned.
[range 0x200000000-0x21fffffff]
zone = online_kernel
CONF

# --- dry run --------------------------------------------------------------
new_tree
out=$("$MEMONLINED" --sysfs-root "$T/sys" --config "$T/good.conf" --dry-run 2>"$T/err")
rc=$?
check "dry-run exits 0" test $rc -eq 0
lines=$(grep -c '^block=memory' <<<"$out")
check "dry-run prints one line per offline block (10)" test "$lines" -eq 10
check "dry-run line format" grep -Eq '^block=memory32 node=1 zone=online_movable cpu=(4|5|6|7)( |$)' <<<"$out"
check "dry-run range rule: CPU-less node2 gets online_kernel" grep -Eq '^block=memory64 node=2 zone=online_kernel cpu=(4|5|6|7)( |$)' <<<"$out"
check "dry-run unknown node is planned unpinned" grep -Eq '^block=memory66000 node=-1 zone=online_movable cpu=-1( |$)' <<<"$out"
check "dry-run writes nothing" test "$(cat "$T/sys/devices/system/memory/memory32/state")" = offline
# node2 is CPU-less and nearer node1: its writer CPUs are node1's, one per core.
cpus=$(grep -E '^block=memory6[4-7] ' <<<"$out" | sed -E 's/.* cpu=([0-9-]+).*/\1/' | sort -u | tr '\n' ' ')
sib=no
case " $cpus " in *" 4 "*" 6 "*|*" 5 "*" 7 "*) sib=yes;; esac
check "dry-run never uses two siblings of one core for a node" test $sib = no

# --- once -----------------------------------------------------------------
new_tree
out=$("$MEMONLINED" --sysfs-root "$T/sys" --config "$T/good.conf" --once --log-target console 2>"$T/err")
rc=$?
check "once exits 0 when all succeed" test $rc -eq 0
allok=yes
for b in 32 33 34 35 66000 66001; do
        [ "$(cat "$T/sys/devices/system/memory/memory$b/state")" = online_movable ] || allok=no
done
for b in 64 65 66 67; do
        [ "$(cat "$T/sys/devices/system/memory/memory$b/state")" = online_kernel ] || allok=no
done
check "once writes each block's zone per policy" test $allok = yes
check "once draws no progress bar when stderr is not a terminal" test "$(grep -c $'\r' "$T/err")" -eq 0

# On a terminal (script(1), from util-linux, gives it one), the bar ends the pass on its own line.
new_tree
TERM=xterm script -qec "\"$MEMONLINED\" --sysfs-root \"$T/sys\" --config \"$T/good.conf\" --once \
        --log-target console >/dev/null" /dev/null >"$T/tty" 2>&1
check "once on a terminal draws the progress bar, to the last block" grep -q '\[####################\] onlining' "$T/tty"
check "boot blocks untouched" test "$(cat "$T/sys/devices/system/memory/memory3/state")" = online
batch=$(grep 'MESSAGE_ID=8a75c3204edc4026aea27aaeda486899' <<<"$out")
check "one batch record" test "$(grep -c . <<<"$batch")" -eq 1
check "batch record counts 10 blocks" grep -q 'MEMONLINE_BLOCKS=10 ' <<<"$batch "
check "batch record counts 1280 MiB" grep -q "MEMONLINE_BYTES=$((10 * 128 * 1024 * 1024)) " <<<"$batch "
check "batch record has no failures" grep -q 'MEMONLINE_FAILED=0 ' <<<"$batch "
for f in MEMONLINE_BATCH MEMONLINE_DURATION_USEC MEMONLINE_GIBPS; do
        check "batch record has $f" grep -q "$f=" <<<"$batch"
done
nodes=$(grep 'MESSAGE_ID=a251eb01963d4e9abecfe2f5aa23b7e8' <<<"$out")
check "node records for node1, node2 and the unknown node" test "$(grep -c . <<<"$nodes")" -eq 3
n2=$(grep 'MEMONLINE_NODE=2 ' <<<"$nodes ")
check "node2 record: 4 blocks, online_kernel" bash -c 'grep -q "MEMONLINE_BLOCKS=4 " <<<"$1 " && grep -q "MEMONLINE_ZONE=online_kernel" <<<"$1"' _ "$n2"
check "node records carry MEMONLINE_CPUS" grep -q 'MEMONLINE_CPUS=' <<<"$n2"

# Already online: nothing to do, still success.
out=$("$MEMONLINED" --sysfs-root "$T/sys" --config "$T/good.conf" --once --log-target console 2>"$T/err")
check "second --once finds nothing to do and exits 0" test $? -eq 0
check "second --once writes no batch record" test "$(grep -c 'MESSAGE_ID=6a1c' <<<"$out")" -eq 0

# --- a tree with no memory directory: an error, not "0 blocks" ----------------
mkdir -p "$T/nomem/devices/system/node"
for mode in --once --dry-run; do
        "$MEMONLINED" --sysfs-root "$T/nomem" --config "$T/good.conf" $mode >"$T/out" 2>"$T/err"
        rc=$?
        check "$mode without devices/system/memory exits 1" test $rc -eq 1
        check "$mode without devices/system/memory says why" grep -q 'block_size_bytes does not exist: this kernel has no memory hotplug' "$T/err"
        check "$mode without devices/system/memory prints no plan" test ! -s "$T/out"
done

# --- fail safe: a node rule cannot be checked for a block of unknown node ----
sed -e 's/^\[range .*\]$/[node 2]/' "$T/good.conf" > "$T/node-rule.conf"
new_tree
out=$("$MEMONLINED" --sysfs-root "$T/sys" --config "$T/node-rule.conf" --dry-run 2>"$T/err")
check "dry-run: a block of unknown node is undecided under node rules" \
        grep -Eq '^block=memory66000 node=-1 zone=skip cpu=-1 reason="undecided: node not known' <<<"$out"
out=$("$MEMONLINED" --sysfs-root "$T/sys" --config "$T/node-rule.conf" --once --log-target console 2>"$T/err")
rc=$?
check "once exits 64 (partial success) when blocks are left undecided" test $rc -eq 64
check "undecided blocks stay offline" test "$(cat "$T/sys/devices/system/memory/memory66000/state")" = offline
check "each undecided block gets a failure record with EAGAIN and the reason" bash -c \
        'test "$(grep -c "MESSAGE_ID=4760fcae4d4f45179c8ac4c18983bc6c.*MEMONLINE_ERRNO_NAME=EAGAIN.*MEMONLINE_REASON=\"undecided: node not known" <<<"$1")" -eq 2' _ "$out"
check "a block left offline is recorded at err (journalctl -p err shows it)" bash -c \
        'test "$(grep "MEMONLINE_BLOCK=memory6600[01]" <<<"$1" | grep -c " PRIORITY=3 ")" -eq 2' _ "$out"
check "the other blocks still follow the node rule" test "$(cat "$T/sys/devices/system/memory/memory64/state")" = online_kernel
fake_block "$T/sys" 66000 1 offline "Movable Normal"
fake_block "$T/sys" 66001 1 offline "Movable Normal"
"$MEMONLINED" --sysfs-root "$T/sys" --config "$T/node-rule.conf" --once --log-target console >/dev/null 2>"$T/err"
check "once the node links appear, the next pass onlines them" test "$(cat "$T/sys/devices/system/memory/memory66000/state")" = online_movable

# --- log level --------------------------------------------------------------
new_tree
MEMONLINED_LOG_LEVEL=debug "$MEMONLINED" --sysfs-root "$T/sys" --config "$T/good.conf" --once \
        --log-target console >/dev/null 2>"$T/err"
check "MEMONLINED_LOG_LEVEL=debug shows where a batch's preparation went" \
        grep -q 'blocks prepared (µs): topology [0-9]*, blocks [0-9]*, node links [0-9]*, dax [0-9]*, devices [0-9]*, plan [0-9]*, to the first write [0-9]* (thread [0-9]*, first open [0-9]*, pin [0-9]*, write slot [0-9]*)' "$T/err"
new_tree
"$MEMONLINED" --sysfs-root "$T/sys" --config "$T/good.conf" --once --log-target console >/dev/null 2>"$T/err"
check "no debug lines by default" test "$(grep -c 'blocks prepared' "$T/err")" -eq 0
new_tree
MEMONLINED_LOG_LEVEL=loud "$MEMONLINED" --sysfs-root "$T/sys" --config "$T/good.conf" --once \
        --log-target console >/dev/null 2>"$T/err"
check "an unknown MEMONLINED_LOG_LEVEL is named, and the run goes on" \
        bash -c 'grep -q "MEMONLINED_LOG_LEVEL=loud: unknown level" "$1" && test "$(cat "$2")" = online_movable' _ \
        "$T/err" "$T/sys/devices/system/memory/memory32/state"

# --- failures ---------------------------------------------------------------
new_tree
# Readable as offline, but the write fails (EPERM), as a refusing kernel would.
chattr +i "$T/sys/devices/system/memory/memory33/state"
out=$("$MEMONLINED" --sysfs-root "$T/sys" --config "$T/good.conf" --once --log-target console 2>"$T/err")
rc=$?
check "once exits 64 (partial success) when a block fails and others came online" test $rc -eq 64
check "failure record names the block and errno" grep -Eq 'MESSAGE_ID=4760fcae4d4f45179c8ac4c18983bc6c.*MEMONLINE_BLOCK=memory33|MEMONLINE_BLOCK=memory33.*MESSAGE_ID=4760' <<<"$out"
check "a failed write is recorded at err" grep -Eq ' PRIORITY=3 .*MEMONLINE_BLOCK=memory33 ' <<<"$out"
check "other blocks still came online" test "$(cat "$T/sys/devices/system/memory/memory34/state")" = online_movable

# Every block fails: nothing came online, a plain failure.
new_tree
for b in 32 33 34 35 64 65 66 67 66000 66001; do chattr +i "$T/sys/devices/system/memory/memory$b/state"; done
"$MEMONLINED" --sysfs-root "$T/sys" --config "$T/good.conf" --once --log-target console >/dev/null 2>"$T/err"
check "once exits 1 when no block came online" test $? -eq 1

# --- where --once logs ------------------------------------------------------
new_tree
# Run by systemd without a terminal (INVOCATION_ID set): the journal, like the daemon.
# JOURNAL_STREAM inherited but not our stderr: not the journal; INVOCATION_ID decides.
out=$(INVOCATION_ID=0123456789abcdef0123456789abcdef JOURNAL_STREAM=1:1 "$MEMONLINED" --sysfs-root "$T/sys" \
        --config "$T/good.conf" --once 2>"$T/err" </dev/null)
check "once under systemd writes its records to the journal, not stdout" test -z "$out"
check "once under systemd still onlines" test "$(cat "$T/sys/devices/system/memory/memory32/state")" = online_movable
new_tree
out=$(env -u INVOCATION_ID JOURNAL_STREAM=1:1 "$MEMONLINED" --sysfs-root "$T/sys" --config "$T/good.conf" --once \
        2>"$T/err" </dev/null)
check "once from a shell prints its records (an inherited JOURNAL_STREAM is not our stderr)" \
        grep -q 'MESSAGE_ID=8a75c3204edc4026aea27aaeda486899' <<<"$out"

# --- config ---------------------------------------------------------------
# a copy: the checkout may be another user's, or group-writable, which memonlined refuses
cp "$top_srcdir/conf/memonlined.conf" "$T/shipped.conf"
check "check-config accepts the shipped file" "$MEMONLINED" --check-config --config "$T/shipped.conf"
printf '[daemon]\nsettle_ms = 10\n[zones]\ndefault = sideways\n' > "$T/bad.conf"
err=$("$MEMONLINED" --check-config --config "$T/bad.conf" 2>&1)
rc=$?
check "check-config rejects a bad file with exit code 3" test $rc -eq 3
check "check-config names FILE:LINE" grep -q "^$T/bad.conf:4: " <<<"$err"
err=$("$MEMONLINED" --sysfs-root "$T/sys" --config "$T/bad.conf" --once --log-target console 2>&1)
check "once refuses to run with a bad file (exit code 3)" test $? -eq 3
check "once names FILE:LINE too" grep -q "$T/bad.conf:4: " <<<"$err"
err=$("$MEMONLINED" --check-config --config "$T/missing.conf" 2>&1)
check "an explicit missing file is an error" test $? -ne 0
"$MEMONLINED" --bogus 2>/dev/null
check "an unknown option is a usage error (exit code 2)" test $? -eq 2
"$MEMONLINED" --once extra-argument 2>/dev/null
check "an extra argument is a usage error (exit code 2)" test $? -eq 2
check "--version prints the version" bash -c '"$1" --version | grep -q "^memonlined [0-9]"' _ "$MEMONLINED"
for sub in status report; do
        for opt in -V --version; do
                out=$("$MEMONLINED" $sub $opt 2>&1)
                check "$sub $opt prints the version, as the daemon does, and exits 0" \
                        test $? -eq 0 -a "$out" = "$("$MEMONLINED" --version)"
        done
done
check "--help mentions --sysfs-root" bash -c '"$1" --help | grep -q -- "--sysfs-root"' _ "$MEMONLINED"
check "--help lists the exit statuses" bash -c '"$1" --help | tr "\n" " " | grep -q "Exit status: 0 .* 2 .* 3 .* 64 partial"' \
        _ "$MEMONLINED"

# --- status: the daemon's exit statuses -------------------------------------
new_tree
: > "$T/empty.conf"
status() { MEMONLINED_RUNTIME_DIR="$T/run" "$MEMONLINED" status --sysfs-root "$T/sys" --no-daemon --rules-dir "$T" "$@"; }
out=$(status --config "$T/empty.conf" 2>"$T/err")
check "status exits 0" test $? -eq 0
check "status counts the offline blocks" grep -q ', 10 offline (' <<<"$out"
status --config "$T/empty.conf" --bogus 2>"$T/err"
check "status: an unknown option exits 2" test $? -eq 2
check "status: errors name the subcommand" grep -q '^memonlined status: ' "$T/err"
status --config "$T/empty.conf" -o NOSUCH 2>/dev/null
check "status: an unknown column exits 2" test $? -eq 2
out=$(status --config "$T/bad.conf" 2>"$T/err")
check "status: a refused policy file exits 3" test $? -eq 3
check "status: and names FILE:LINE" grep -q "^Policy: $T/bad.conf:4: " <<<"$out"
printf '[daemon]\nworkers = \033]0;owned\007\n' > "$T/evil.conf"
status --config "$T/evil.conf" -J >/dev/null 2>"$T/err"
check "status -J: a refused policy file exits 3" test $? -eq 3
check "status -J: says why on stderr" grep -q "^memonlined status: $T/evil.conf:2: " "$T/err"
check "status -J: the warning is escaped" grep -qF '\x1b]0;owned\x07' "$T/err"
check "status -J: no terminal escape on stderr" test "$(tr -d -c '\033' < "$T/err" | wc -c)" -eq 0
out=$(status --config "$T/evil.conf" 2>&1)
check "status: the refused file's text is escaped once under Policy:" \
        grep -qF 'got "\x1b]0;owned\x07" (using built-in defaults)' <<<"$out"
check "status: no terminal escape in the text" test "$(tr -d -c '\033' <<<"$out" | wc -c)" -eq 0
mkdir -p "$T/run"
head -c 5000 /dev/zero | tr '\0' A > "$T/run/progress"
status --config "$T/empty.conf" >/dev/null 2>&1
check "status: an unreadable progress file is partial (64)" test $? -eq 64
printf 'STATUS=onlining node 1: 3/8 blocks\nTRIGGER=udev\nNODE=1\nBLOCKS_DONE=3\nBLOCKS_TOTAL=8\nBLOCK_SIZE=134217728\nELAPSED_USEC=5\n' > "$T/run/progress"
ln -s /proc/999999999 "$T/run/running"
out=$(status --config "$T/empty.conf" 2>&1)
check "status: a killed daemon's progress file (its marker dangles) shows no running batch" \
        bash -c '! grep -q "3/8 blocks" <<<"$1"' _ "$out"
ln -sfn /proc/$$ "$T/run/running"
out=$(status --config "$T/empty.conf" 2>&1)
check "status: a live daemon's progress file shows its batch" grep -q "3/8 blocks" <<<"$out"
rm -rf "$T/run"
MEMONLINED_SYSFS_ROOT="$T/nonexistent" "$MEMONLINED" status --no-daemon 2>/dev/null
check "status: no topology exits 1" test $? -eq 1
check "status --help lists the exit statuses" \
        bash -c '"$1" status --help | tr "\n" " " | grep -q "Exit status: 0 .* 1 .* 2 .* 3 .* 64 partial"' _ "$MEMONLINED"

echo "1..$n"
[ $failed -eq 0 ]
