#!/bin/bash
# Fuzzes every harness and replays its committed corpus:
#   run-fuzz.sh BUILDDIR [--seconds N] [--jobs J] [--replay-only] [NAME...]
# Builds the libFuzzer harnesses (make fuzz-build; configure --enable-fuzz),
# runs each for N seconds (default $FUZZ_SECONDS or 60) on a scratch copy of
# tests/fuzz/corpus/NAME, then runs every committed input once more. Prints
# per harness the executions and the findings (kept in
# BUILDDIR/tests/fuzz/runs/NAME-findings/), and ends with
# "fuzz: P passed, F failed"; exits non-zero if any failed. --jobs J fuzzes
# J harnesses at a time (default 1; each gets its full N seconds).
set -u
usage() {
        echo "usage: $0 BUILDDIR [--seconds N] [--jobs J] [--replay-only] [NAME...]" >&2
        exit 2
}
[ $# -ge 1 ] || usage
builddir=$(cd "$1" && pwd) || usage
shift
seconds=${FUZZ_SECONDS:-60}
replay_only=no
jobs=1
names=()
while [ $# -gt 0 ]; do
        case $1 in
        --seconds) [ $# -ge 2 ] || usage; seconds=$2; shift 2 ;;
        --jobs) [ $# -ge 2 ] && [ "$2" -ge 1 ] 2>/dev/null || usage; jobs=$2; shift 2 ;;
        --replay-only) replay_only=yes; shift ;;
        -*) usage ;;
        *) names+=("$1"); shift ;;
        esac
done
srcdir=$(sed -n 's/^abs_top_srcdir = //p' "$builddir/Makefile")
[ -n "$srcdir" ] || { echo "$builddir is not a configured build directory" >&2; exit 2; }

make -s -j"$jobs" -C "$builddir" fuzz-build || exit 1
[ ${#names[@]} -gt 0 ] || read -ra names <<<"$(make -s -C "$builddir" fuzz-list)"
runs="$builddir/tests/fuzz/runs"
mkdir -p "$runs"
export ASAN_OPTIONS="${ASAN_OPTIONS:-abort_on_error=1:detect_leaks=1}"
export UBSAN_OPTIONS="${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}"

# One harness: its result line on stdout (then any findings), status 0 if it passed.
fuzz_one() {
        local name=$1 bin seeds log findings_dir execs findings ok work n_seeds replay
        bin="$builddir/tests/fuzz/fuzz-$name"
        seeds="$srcdir/tests/fuzz/corpus/$name"
        log="$runs/$name.log"
        findings_dir="$runs/$name-findings/"
        execs=-
        findings=0
        ok=yes
        if [ ! -x "$bin" ] || [ ! -d "$seeds" ]; then
                echo "$name: no harness ($bin) or no corpus ($seeds)"
                return 1
        fi
        if [ $replay_only = no ]; then
                work="$runs/$name-corpus"
                rm -rf "$work" "$findings_dir"
                mkdir -p "$work" "$findings_dir"
                "$bin" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 \
                        -artifact_prefix="$findings_dir" "$work" "$seeds" >"$log" 2>&1 || ok=no
                execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -n 1)
                findings=$(find "$findings_dir" -type f | wc -l)
                [ "$findings" -eq 0 ] || ok=no
        fi
        # Every committed input once: a past finding must stay fixed.
        n_seeds=$(find "$seeds" -type f | wc -l)
        if ! find "$seeds" -type f -print0 | sort -z | xargs -0 -r "$bin" >"$runs/$name-replay.log" 2>&1; then
                ok=no
                replay=FAILED
        else
                replay=ok
        fi
        printf '%s: %s executions in %s s, %s findings, replay of %s committed inputs %s: %s\n' \
                "$name" "${execs:-?}" "$([ $replay_only = yes ] && echo 0 || echo "$seconds")" "$findings" \
                "$n_seeds" "$replay" "$([ $ok = yes ] && echo PASS || echo FAIL)"
        [ $ok = yes ] && return 0
        for f in "$findings_dir"*; do
                [ -f "$f" ] && echo "  finding: $f"
        done
        echo "  log: $log"
        return 1
}

# At most $jobs at a time; the results print in the harnesses' order.
pids=()
for i in "${!names[@]}"; do
        while [ "$(jobs -rp | wc -l)" -ge "$jobs" ]; do
                wait -n || true
        done
        fuzz_one "${names[$i]}" >"$runs/${names[$i]}.result" 2>&1 &
        pids[$i]=$!
done
passed=0
failed=0
for i in "${!names[@]}"; do
        if wait "${pids[$i]}"; then
                passed=$((passed + 1))
        else
                failed=$((failed + 1))
        fi
        cat "$runs/${names[$i]}.result"
done
echo "fuzz: $passed passed, $failed failed"
[ $failed -eq 0 ]
