#!/bin/bash
# Every benchmark data file docs/BENCHMARKS.md names (tests/bench/data/NAME,
# a glob of them, or a bare dated NAME.jsonl) is in the tree and in
# BENCH_DIST, so `make dist` ships what the page cites; every file in
# tests/bench/data is in BENCH_DIST; and the bench's statistics
# (test-benchstats.py) hold. Under distcheck the tree is the
# unpacked tarball. Prints TAP. BENCH_DIST comes from make check.
set -u
: "${top_srcdir:=$(cd "$(dirname "$0")/../.." && pwd)}"
DOC=$top_srcdir/docs/BENCHMARKS.md
DATA=tests/bench/data

n=0; failed=0
ok() { n=$((n + 1)); echo "ok $n - $1"; }
not_ok() { n=$((n + 1)); failed=$((failed + 1)); echo "not ok $n - $1"; }
in_dist() { case " $(echo ${BENCH_DIST}) " in *" $1 "*) return 0;; esac; return 1; }

if [ -z "${BENCH_DIST:-}" ]; then
        echo "1..1"
        echo "not ok 1 - BENCH_DIST is not set (run through make check)"
        exit 1
fi

# Paths as the page writes them, then bare dated names.
cited=$( { grep -oE "$DATA/[A-Za-z0-9._*-]+" "$DOC"
          grep -oE '(^|[^A-Za-z0-9/._-])20[0-9]{2}-[0-9]{2}-[0-9]{2}[a-z]?-[A-Za-z0-9._-]+\.jsonl' "$DOC" |
                  sed -E "s|^[^0-9]?|$DATA/|"; } | sort -u)
[ -n "$cited" ] && ok "BENCHMARKS.md cites data files" || not_ok "BENCHMARKS.md cites data files"

files=()
for c in $cited; do
        if [[ $c == *'*'* ]]; then
                # A glob stands for the files it matches in the tree; it must match one.
                matched=0
                for f in "$top_srcdir"/$c; do
                        [ -e "$f" ] || continue
                        files+=("${f#"$top_srcdir"/}")
                        matched=1
                done
                [ $matched = 1 ] && ok "$c matches files" || not_ok "$c matches files"
        else
                files+=("$c")
        fi
done
for f in $(printf '%s\n' "${files[@]}" | sort -u); do
        if [ -f "$top_srcdir/$f" ] && in_dist "$f"; then
                ok "$f is in the tree and in BENCH_DIST"
        elif [ -f "$top_srcdir/$f" ]; then
                not_ok "$f is in the tree and in BENCH_DIST (missing from BENCH_DIST in Makefile.am)"
        else
                not_ok "$f is in the tree and in BENCH_DIST (no such file)"
        fi
done

# The bench's statistics and trial schedule (tests/bench/benchstats.py).
while read -r res what; do
        case $res in
        ok) ok "benchstats: ${what#- }" ;;
        *) not_ok "benchstats: ${what#ok - }" ;;
        esac
done < <(python3 "$top_srcdir/tests/unit/test-benchstats.py" 2>&1 || echo "not ok - test-benchstats.py failed")

# Committed data that the tarball would leave out.
for f in "$top_srcdir/$DATA"/*; do
        [ -f "$f" ] || continue
        rel=${f#"$top_srcdir"/}
        in_dist "$rel" && ok "$rel ships" || not_ok "$rel ships (missing from BENCH_DIST in Makefile.am)"
done

echo "1..$n"
[ $failed = 0 ]
