#!/bin/bash
# prepare-syscalls.sh BENCH_PREPARE [bench-prepare options]
# Count the syscalls a CXL region's batch makes before its first write
# (tests/bench/bench-prepare.c marks both ends), under strace, all
# threads: one line "syscalls_before_first_write=N file_syscalls=N", then
# the count of each syscall and of each sysfs path (ids folded to N), most
# first. file_syscalls (opening, reading, listing, stating and reading
# links) is the same run after run on the same tree, whatever the host is
# doing; the rest (futexes, clocks, thread starts) varies by a few with
# how the threads meet. In a TCG guest each of them costs far more
# during udevd's storm than on this host, so fewer is what shortens the
# preparation.
set -euo pipefail
[ $# -ge 1 ] || { echo "usage: $0 BENCH_PREPARE [options]" >&2; exit 2; }
command -v strace >/dev/null || { echo "prepare-syscalls: strace is missing" >&2; exit 2; }
bin=$1; shift
trace=$(mktemp)
trap 'rm -f "$trace"' EXIT
strace -f -qq -o "$trace" "$bin" "$@" >/dev/null
awk '
        /memonline-bench: batch"/ { on = 1; next }
        /memonline-bench: first write"/ { done = 1; exit }
        on && /^[0-9]+ +[a-z_0-9]+\(/ {
                n++
                sub(/^[0-9]+ +/, "")
                name = $0; sub(/\(.*/, "", name); calls[name]++
                if (name ~ /^(openat2?|open|read|pread64|close|getdents64|newfstatat|statx|fstat|readlink(at)?|lseek)$/) files++
                if (match($0, /"[^"]*"/)) {
                        p = substr($0, RSTART + 1, RLENGTH - 2)
                        sub(/^\/dev\/shm\/memonline-fake-[^\/]*\//, "", p)
                        sub(/^\/tmp\/memonline-fake-[^\/]*\//, "", p)
                        gsub(/[0-9]+/, "N", p)
                        if (p ~ /^(devices|bus|firmware|proc|memoryN)/) paths[p]++
                }
        }
        END {
                if (!done) { print "prepare-syscalls: no first write marked" > "/dev/stderr"; exit 1 }
                print "syscalls_before_first_write=" n " file_syscalls=" files
                for (c in calls) printf "call %d %s\n", calls[c], c | "sort -k2,2nr -k3"
                close("sort -k2,2nr -k3")
                for (p in paths) printf "path %d %s\n", paths[p], p | "sort -k2,2nr -k3"
        }' "$trace"
