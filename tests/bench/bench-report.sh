#!/bin/bash
# bench-report.sh MEMONLINED [HOSTS [BATCHES [NODES]]] [-- REPORT-OPTIONS]
#
# `memonlined report` over a journal file of HOSTS x BATCHES x (1 + NODES)
# records (default 20000 x 1 x (1 + 3) = 80,000), written by
# report-journal.py and systemd-journal-remote; every host is its own
# machine, and every batch its own daemon process. Runs the report 3 times
# with the table output and 3 times with each REPORT-OPTIONS word (default
# --json-lines, or --json on builds that have no --json-lines, where --json
# printed the same JSON lines) and prints the median wall time and the
# median CPU time (user + system) of each as one JSON line. On a loaded
# host the CPU time is the steadier figure.
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
BIN=${1:?usage: bench-report.sh MEMONLINED [HOSTS [BATCHES [NODES]]] [-- REPORT-OPTIONS]}
shift
ARGS=()
while [ $# -gt 0 ] && [ "$1" != -- ]; do ARGS+=("$1"); shift; done
[ "${1:-}" = -- ] && shift
HOSTS=${ARGS[0]:-20000}
BATCHES=${ARGS[1]:-1}
NODES=${ARGS[2]:-3}
MODES=("$@")
if [ ${#MODES[@]} -eq 0 ]; then
        if "$BIN" report --help | grep -q -- --json-lines; then MODES=(--json-lines); else MODES=(--json); fi
fi
REMOTE=$(command -v systemd-journal-remote || echo /lib/systemd/systemd-journal-remote)

T=$(mktemp -d /tmp/memonlined-bench-report-XXXXXX)
trap 'rm -rf "$T"' EXIT
python3 "$HERE/report-journal.py" --hosts "$HOSTS" --batches "$BATCHES" --nodes "$NODES" > "$T/export"
"$REMOTE" -o "$T/bench.journal" "$T/export" 2>/dev/null
entries=$(( HOSTS * BATCHES * (1 + NODES) ))

median3() {  # one mode: "WALL CPU", the medians of 3 runs in seconds
        local walls=() cpus=() i t
        for i in 1 2 3; do
                /usr/bin/time -f '%e %U %S' -o "$T/time" \
                        "$BIN" report --file "$T/bench.journal" --no-color "$@" >/dev/null 2>&1
                read -r t u s < "$T/time"
                walls+=("$t")
                cpus+=("$(awk -v u="$u" -v s="$s" 'BEGIN { printf "%.2f", u + s }')")
        done
        echo "$(printf '%s\n' "${walls[@]}" | sort -n | sed -n 2p) $(printf '%s\n' "${cpus[@]}" | sort -n | sed -n 2p)"
}

read -r wall cpu <<<"$(median3)"
printf '{"entries":%d,"hosts":%d,"batches_per_host":%d,"nodes":%d,"table_wall_s":%s,"table_cpu_s":%s' \
        "$entries" "$HOSTS" "$BATCHES" "$NODES" "$wall" "$cpu"
for m in "${MODES[@]}"; do
        read -r wall cpu <<<"$(median3 "$m")"
        printf ',"%s_wall_s":%s,"%s_cpu_s":%s' "${m#--}" "$wall" "${m#--}" "$cpu"
done
printf '}\n'
