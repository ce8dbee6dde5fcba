#!/bin/bash
# fuzz-journal-entry.sh BUILDDIR build|run|replay [SECONDS]
#
# The libFuzzer harness of `memonlined report` (tests/fuzz/fuzz-journal-entry.c),
# built with clang (-fsanitize=fuzzer,address,undefined; Debian: clang and
# libclang-rt-14-dev) into BUILDDIR/tests/fuzz/journal-entry/:
#   build   compile the harness and the library sources ($SOURCES, from
#           make) for libFuzzer; only what is older than its source or a
#           header is compiled again
#   run     build, fuzz for SECONDS (default 60) on a scratch copy of the
#           seeds in tests/fuzz/corpus/journal-entry, then replay the seeds
#   replay  build, then run every committed seed once
# make passes SOURCES (libmemonline's), CPPFLAGS, DEP_CFLAGS and DEP_LIBS,
# and runs it in BUILDDIR. Prints the
# executions and findings; exits non-zero on any finding or failed replay.
set -euo pipefail
B=$(cd "${1:?usage: fuzz-journal-entry.sh BUILDDIR build|run|replay [SECONDS]}" && pwd)
mode=${2:-run}
seconds=${3:-60}
src=$(sed -n 's/^abs_top_srcdir = //p' "$B/Makefile")
[ -n "$src" ] || { echo "fuzz-journal-entry: $B is not a configured build directory" >&2; exit 2; }
: "${SOURCES:?from make: the library sources}" "${CPPFLAGS:?from make}" "${DEP_CFLAGS=}" "${DEP_LIBS=}"
cd "$B"
# make's quoting (-DSYSCONFDIR=\"/etc\") parsed as the shell would
eval "cppflags=($CPPFLAGS)"
CC=${FUZZ_CC:-clang}
out=$B/tests/fuzz/journal-entry
seeds=$src/tests/fuzz/corpus/journal-entry
bin=$out/fuzz-journal-entry
san="-fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer"
cflags="-g -O1 $DEP_CFLAGS"
headers=("$src"/util/*.h "$src"/daemon/*.h "$B/config.h")

command -v "$CC" >/dev/null || { echo "fuzz-journal-entry: needs $CC with libFuzzer (clang, libclang-rt-14-dev)" >&2; exit 2; }

stale() {  # TARGET DEP...: missing, or older than a dependency
        local t=$1 d
        shift
        [ -e "$t" ] || return 0
        for d in "$@"; do [ "$d" -nt "$t" ] && return 0; done
        return 1
}

build() {
        local objs=() s o
        mkdir -p "$out/obj"
        for s in $SOURCES; do
                case $s in *.c) ;; *) continue ;; esac
                o=$out/obj/$(echo "$s" | tr / _).o
                objs+=("$o")
                if stale "$o" "$src/$s" "${headers[@]}"; then
                        echo "  CC       $o"
                        # shellcheck disable=SC2086
                        "$CC" "${cppflags[@]}" $cflags $san -fsanitize=fuzzer-no-link -c -o "$o" "$src/$s"
                fi
        done
        if stale "$bin" "$src/tests/fuzz/fuzz-journal-entry.c" "${objs[@]}" "${headers[@]}"; then
                echo "  CCLD     $bin"
                # shellcheck disable=SC2086
                "$CC" "${cppflags[@]}" $cflags $san -fsanitize=fuzzer -o "$bin" "$src/tests/fuzz/fuzz-journal-entry.c" \
                        "${objs[@]}" $DEP_LIBS
        fi
}

export ASAN_OPTIONS="${ASAN_OPTIONS:-abort_on_error=1:detect_leaks=1}"
export UBSAN_OPTIONS="${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}"

replay() {
        local n
        n=$(find "$seeds" -type f | wc -l)
        if find "$seeds" -type f -print0 | sort -z | xargs -0 -r "$bin" >"$out/replay.log" 2>&1; then
                echo "journal-entry: replay of $n committed inputs ok"
        else
                echo "journal-entry: replay of $n committed inputs FAILED (log: $out/replay.log)"
                return 1
        fi
}

fuzz() {
        local execs findings rc=0
        rm -rf "$out/work" "$out/findings"
        mkdir -p "$out/work" "$out/findings"
        "$bin" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -max_len=8192 -print_final_stats=1 \
                -artifact_prefix="$out/findings/" "$out/work" "$seeds" >"$out/fuzz.log" 2>&1 || rc=1
        execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$out/fuzz.log" | tail -n 1)
        findings=$(find "$out/findings" -type f | wc -l)
        echo "journal-entry: ${execs:-?} executions in $seconds s, $findings findings (log: $out/fuzz.log)"
        find "$out/findings" -type f -exec echo "  finding: {}" \;
        [ "$rc" -eq 0 ] && [ "$findings" -eq 0 ]
}

case $mode in
build)  build ;;
run)    build && fuzz && replay ;;
replay) build && replay ;;
*)      echo "fuzz-journal-entry: unknown mode $mode (build, run, replay)" >&2; exit 2 ;;
esac
