#!/bin/bash
# run-bench.sh BUILDDIR [--quick|--smoke] [--no-vm] [--suite bookworm|trixie] [--results DIR]
#              [-- vm-bench.py options]
#
# The whole comparison of docs/BENCHMARKS.md, written as JSON lines to
# DIR/results.jsonl (default BUILDDIR/bench-results/YYYYmmdd-HHMMSS):
#   1. the userspace pipeline on fake trees (bench-pipeline): 2,457 and
#      24,576 blocks, CPU µs per block and its growth;
#   2. the idle daemon: RSS and wakeups per minute (idle-bench.sh);
#   3. every way to online memory in a fresh QEMU TCG guest per trial
#      (vm-bench.py): 64, 512, 2048 blocks, 3 repeats, interleaved.
# --quick: VM part at 64 and 512 blocks, 1 repeat, 20 s idle.
# --smoke: VM part at 64 blocks, 1 repeat, every contender; a check, not
#          a measurement: the DIMM contenders share one guest and the
#          NVDIMM ones another, trial after trial (about 4 min on 2
#          cores); prints "N passed, N failed" and exits non-zero on any
#          failure.
# --suite: the guest. bookworm (default): Debian 12, kernel 6.1; the image
#          is BUILDDIR/tests-vm (tests/vm/build-image.sh BUILDDIR), (re)built
#          when missing or older than BUILDDIR/memonlined. trixie: Debian 13,
#          kernel 6.12 (auto-onlines by default) and CXL; the image is the
#          one `make check-vm` boots, made the same way (check-vm.sh
#          --suites trixie --images-only) at every run.
# Configure BUILDDIR with --prefix=/usr --sysconfdir=/etc --localstatedir=/var for the image.
set -uo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
B=${1:?usage: run-bench.sh BUILDDIR [--quick|--smoke] [--no-vm] [--results DIR]}
B=$(cd "$B" && pwd)
shift
MODE=full
VM=1
RESULTS=
SUITE=bookworm
VMARGS=()
while [ $# -gt 0 ]; do
        case "$1" in
        --quick) MODE=quick ;;
        --smoke) MODE=smoke ;;
        --no-vm) VM=0 ;;
        --results) RESULTS=$2; shift ;;
        --suite) SUITE=$2; shift ;;
        --) shift; VMARGS=("$@"); break ;;
        *) echo "run-bench: unknown option $1" >&2; exit 2 ;;
        esac
        shift
done
: "${RESULTS:=$B/bench-results/$(date +%Y%m%d-%H%M%S)-$MODE$([ "$SUITE" = bookworm ] || echo "-$SUITE")}"
mkdir -p "$RESULTS"
OUT=$RESULTS/results.jsonl
log() { echo "run-bench: $*" >&2; }
passed=0
failed=0
count() { if [ "$1" = 0 ]; then passed=$((passed + 1)); else failed=$((failed + 1)); log "FAILED: $2"; fi; }

log "results in $OUT"
{
        printf '{"bench":"machine","host_kernel":"%s","cpu":"%s","cpus":%d,"mem_kib":%d,"date":"%s","commit":"%s"}\n' \
                "$(uname -r)" "$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -n1)" "$(nproc)" \
                "$(awk '/^MemTotal/{print $2}' /proc/meminfo)" "$(date -Is)" \
                "$(git -C "$HERE" rev-parse --short HEAD 2>/dev/null || echo unknown)"
} >> "$OUT"

# 1. userspace pipeline
make -C "$B" -s tests/bench/bench-pipeline memonlined >&2 || { log "build failed"; exit 1; }
case $MODE in
smoke) sizes=2457; rep=1 ;;
quick) sizes=2457,24576; rep=3 ;;
*) sizes=2457,6144,12288,24576; rep=5 ;;
esac
"$B/tests/bench/bench-pipeline" --blocks "$sizes" --repeat "$rep" >> "$OUT"
count $? "bench-pipeline"
grep '"pipeline-' "$OUT" | tail -n 5 >&2

# 2. idle
case $MODE in smoke) secs=10 ;; quick) secs=20 ;; *) secs=60 ;; esac
"$HERE/idle-bench.sh" "$B" "$secs" | tee -a "$OUT" >&2
count "${PIPESTATUS[0]}" "idle-bench"

# 3. the real kernel
if [ "$VM" = 1 ]; then
        case $SUITE in
        bookworm)
                IMG=$B/tests-vm
                # A stale image would benchmark an older daemon.
                if [ ! -f "$IMG/image.env" ] || [ "$B/memonlined" -nt "$IMG/image.raw" ]; then
                        log "building the guest image in $IMG"
                        bash "$HERE/../vm/build-image.sh" --out "$IMG" "$B" >&2 || { log "image build failed"; exit 1; }
                fi ;;
        trixie)
                IMG=$(bash "$HERE/../vm/check-vm.sh" "$B" --suites trixie --images-only) ||
                        { log "image build failed"; exit 1; } ;;
        *) log "unknown suite $SUITE (bookworm or trixie)"; exit 2 ;;
        esac
        case $MODE in
        smoke) vmopts=(--smoke) ;;
        quick) vmopts=(--sizes 64,512 --nvdimm-sizes 64 --repeat 1) ;;
        *) vmopts=() ;;
        esac
        python3 "$HERE/vm-bench.py" --image-dir "$IMG" --out "$OUT" "${vmopts[@]}" "${VMARGS[@]}" \
                2> "$RESULTS/vm-bench.log" | tee "$RESULTS/vm-summary.txt"
        read -r _ vp _ vf _ < <(sed -n 's/^vm-bench: \([0-9]*\) passed, \([0-9]*\) failed$/x \1 p \2 f/p' \
                "$RESULTS/vm-summary.txt")
        passed=$((passed + ${vp:-0}))
        failed=$((failed + ${vf:-1}))
        grep '"contender"' "$OUT" | python3 -c '
import json, sys
for l in sys.stdin:
    r = json.loads(l)
    print("  %-30s %5s blocks  %-6s e2e %s s  restarts %s  %s" % (r["contender"], r.get("blocks", r.get("blocks_requested")),
          "ok" if r.get("ok") else "FAILED", r.get("e2e_s"), r.get("lock_restarts"), r.get("error", "")))' >&2
fi

if [ "$MODE" = full ] || [ "$MODE" = quick ]; then
        python3 "$HERE/summarize.py" "$OUT" > "$RESULTS/summary.md" 2>&1 && log "summary in $RESULTS/summary.md"
fi
echo "$passed passed, $failed failed"
[ "$failed" = 0 ]
