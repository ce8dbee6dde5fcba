#!/bin/bash
# make check: replays each harness's committed corpus (tests/fuzz/corpus/NAME)
# through tests/fuzz/replay-NAME, built with the ordinary compiler and the
# configured sanitizers. A finding the fuzzer once made stays fixed.
# Prints TAP.
set -u
: "${top_srcdir:=$(cd "$(dirname "$0")/../.." && pwd)}"
: "${top_builddir:=$(pwd)}"
: "${FUZZ_HARNESSES:?the harness names, from Makefile.am}"
n=0
failed=0
for name in $FUZZ_HARNESSES; do
        n=$((n + 1))
        bin="$top_builddir/tests/fuzz/replay-$name"
        corpus="$top_srcdir/tests/fuzz/corpus/$name"
        if [ ! -d "$corpus" ] || [ -z "$(ls -A "$corpus")" ]; then
                failed=$((failed + 1))
                echo "not ok $n - $name: no committed corpus in $corpus"
                continue
        fi
        if out=$(timeout 300 "$bin" "$corpus" 2>&1); then
                echo "ok $n - $name: ${out##*$'\n'}"
        else
                failed=$((failed + 1))
                echo "not ok $n - $name: replay failed"
                sed 's/^/# /' <<<"$out" | tail -40
        fi
done
echo "1..$n"
[ $failed -eq 0 ]
