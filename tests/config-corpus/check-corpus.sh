#!/bin/bash
# make check: every case of the bad-config corpus (MANIFEST) through
# memonlined --check-config --config FILE, with a timeout: the outcome,
# the exit code and the stderr line must be as MANIFEST says, and nothing
# may hang, crash, report a sanitizer error or print a control character.
# The exit code of a config error is CONFIG_ERROR_EXIT (default 3, as memonlined(8) says).
# Prints TAP.
set -u
: "${MEMONLINED:=$(cd "$(dirname "$0")/../.." && pwd)/memonlined}"
: "${top_srcdir:=$(cd "$(dirname "$0")/../.." && pwd)}"
: "${CONFIG_ERROR_EXIT:=3}"
corpus="$top_srcdir/tests/config-corpus"
T=$(mktemp -d /tmp/memonline-corpus-XXXXXX)
trap 'rm -rf "$T"' EXIT
chmod 755 "$T"
# memonlined reads a policy only root (or its own user) may write: the cases
# as ours, with no group or other write bit whatever the checkout's owner and umask.
umask 022
cp -R "$corpus/cases" "$T/cases"
n=0
failed=0

# As root every file is readable: the unreadable case runs as nobody, with a
# copy of the binary that nobody may run, if setpriv can drop to it.
as_reader=()
unreadable_skip=""
if [ "$(id -u)" -eq 0 ]; then
        if command -v setpriv >/dev/null && cp "$MEMONLINED" "$T/memonlined" && chmod 755 "$T/memonlined" &&
           setpriv --reuid=65534 --regid=65534 --clear-groups "$T/memonlined" --version >/dev/null 2>&1; then
                as_reader=(setpriv --reuid=65534 --regid=65534 --clear-groups)
        else
                unreadable_skip="running as root and cannot drop to nobody with setpriv"
        fi
fi

regex_quote() {
        sed 's/[][\.*^$()+?{}|/]/\\&/g' <<<"$1"
}

while IFS=$'\t' read -r name outcome regex; do
        case $name in '#'* | '') continue ;; esac
        n=$((n + 1))
        bin=$MEMONLINED
        runner=()
        if [ "${name:0:1}" = @ ]; then
                path="$T/${name:1}.conf"
                "$SHELL" "$corpus/make-special.sh" "$name" "$path"
                if [ $? -eq 77 ]; then
                        echo "ok $n - $name # SKIP this system cannot make it (as root only)"
                        rm -rf "$path" "$path.d"
                        continue
                fi
                if [ "$name" = @unreadable ]; then
                        if [ -n "$unreadable_skip" ]; then
                                echo "ok $n - $name # SKIP $unreadable_skip"
                                continue
                        fi
                        [ ${#as_reader[@]} -eq 0 ] || { runner=("${as_reader[@]}"); bin="$T/memonlined"; }
                fi
        else
                path="$T/cases/$name"
        fi
        timeout 10 "${runner[@]}" "$bin" --check-config --config "$path" >"$T/out" 2>"$T/err"
        rc=$?
        want_regex=${regex//@FILE@/$(regex_quote "$path")}
        why=""
        if [ $rc -ge 124 ]; then
                why="hung or crashed (exit $rc)"
        elif grep -qE 'Sanitizer|runtime error:' "$T/err"; then
                why="sanitizer report"
        elif cat "$T/out" "$T/err" | tr -d '\n' | LC_ALL=C grep -q '[[:cntrl:]]'; then
                why="control character in the output"
        elif [ "$outcome" = ok ]; then
                [ $rc -eq 0 ] || why="exit $rc, want 0"
                [ -n "$why" ] || [ "$(cat "$T/out")" = "$path: OK" ] || why="stdout is not \"$path: OK\""
                [ -n "$why" ] || [ ! -s "$T/err" ] || why="unexpected stderr"
        elif [ "$outcome" = error ]; then
                [ $rc -eq "$CONFIG_ERROR_EXIT" ] || why="exit $rc, want $CONFIG_ERROR_EXIT"
                [ -n "$why" ] || [ "$(wc -l <"$T/err")" -eq 1 ] || why="want one stderr line"
                [ -n "$why" ] || grep -qE -- "$want_regex" "$T/err" || why="stderr does not match $regex"
        else
                why="unknown outcome $outcome in MANIFEST"
        fi
        if [ -z "$why" ]; then
                echo "ok $n - $name: $outcome"
        else
                failed=$((failed + 1))
                echo "not ok $n - $name: $why"
                sed 's/^/# stdout: /' "$T/out"
                sed 's/^/# stderr: /' "$T/err"
        fi
        # Specials live in $T; make the next one from scratch.
        [ "${name:0:1}" != @ ] || rm -rf "$path" "$path.d"
done <"$corpus/MANIFEST"
echo "1..$n"
[ $failed -eq 0 ]
