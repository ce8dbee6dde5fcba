#!/bin/bash
# plot-scaling.sh RESULTS [...] OUT.png: the scaling curve of a rotated
# campaign (DIMMs): time to the last block (solid) and to the first
# (dashed) against the blocks hot-added, per contender, medians with their
# bootstrap 95% intervals (verdicts.py), on log-log axes, where linear
# growth has slope 1 and quadratic slope 2 (the two grey guides).
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
[ $# -ge 2 ] || { echo "usage: plot-scaling.sh RESULTS [...] OUT.png" >&2; exit 2; }
out=${*: -1}
dat=$(mktemp)
trap 'rm -f "$dat"' EXIT
python3 "$HERE/verdicts.py" "${@:1:$#-1}" --plot-data "$dat" >/dev/null
[ -s "$dat" ] || { echo "plot-scaling: no DIMM trials in ${*:1:$#-1}" >&2; exit 1; }
# Anchor the guides at the smallest size's slowest median.
read -r x0 y0 < <(sort -k2,2n -k3,3gr "$dat" | awk 'NR == 1 {print $2, $3}')
plots="($y0 * x / $x0) with lines dt 3 lc rgb 'grey' title 'linear', ($y0 * (x / $x0)**2) with lines dt 2 lc rgb 'grey' title 'quadratic'"
i=0
for n in $(cut -d' ' -f1 "$dat" | sed 's/:first$//' | sort -u); do
        i=$((i + 1))
        plots="$plots, '< grep \"^$n \" $dat' using 2:3:4:5 with yerrorlines lc $i lw 2 title '$n, last block'"
        if grep -q "^$n:first " "$dat"; then
                plots="$plots, '< grep \"^$n:first \" $dat' using 2:3:4:5 with yerrorlines lc $i dt 2 title '$n, first block'"
        fi
done
gnuplot <<GP
set terminal pngcairo size 1000,640 font "sans,11" background "white"
set output "$out"
set title "Hot-added DIMM memory on Debian 13's 6.12 (QEMU TCG): median and bootstrap 95% interval"
set xlabel "128 MiB blocks hot-added (two DIMMs)"
set ylabel "seconds from the first add to the block online"
set logscale xy
set key top left
set grid
set xrange [*:*]
plot $plots
GP
echo "$out"
