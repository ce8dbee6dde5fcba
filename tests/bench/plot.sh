#!/bin/bash
# plot.sh RESULTS.jsonl [...] OUT.svg: end-to-end time against block count,
# one line per contender (median, min-max as error bars), with gnuplot.
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
[ $# -ge 2 ] || { echo "usage: plot.sh RESULTS.jsonl [...] OUT.svg" >&2; exit 2; }
out=${*: -1}
dat=$(mktemp)
trap 'rm -f "$dat"' EXIT
python3 "$HERE/summarize.py" "${@:1:$#-1}" --plot-data "$dat" >/dev/null
names=$(cut -d' ' -f1 "$dat" | sort -u)
plots=
for n in $names; do
        plots="$plots${plots:+, }'< grep \"^$n \" $dat' using 2:3:4:5 with yerrorlines title '$n'"
done
gnuplot <<GP
set terminal svg size 900,560 dynamic font "sans,12" background "white"
set output "$out"
set title "Hot-added memory: hot-add request to last block online (QEMU TCG, Debian 6.1 guest)"
set xlabel "128 MiB blocks hot-added"
set ylabel "seconds (median, min-max)"
set logscale xy
set key top left
set grid
plot $plots
GP
echo "$out"
