#!/bin/bash
# check-vm.sh BUILDDIR [--suites bookworm,trixie] [--images-only | run-scenarios.py options]
# Build the guest images from BUILDDIR (configured with --prefix=/usr
# --sysconfdir=/etc --localstatedir=/var; the mmdebstrap bases are cached)
# and run the VM scenarios on each: Debian 12 (the host's 6.1 kernel;
# memonlined from the Debian package scripts/build-deb.sh builds into
# BUILDDIR/deb-bookworm, as .ci/run's package stage does) and Debian 13 (its
# own 6.12 kernel, plus the CXL boot; memonlined from the Debian package
# built in a trixie chroot). Both packages are reused while the sources are
# unchanged. One combined
# "N passed, N failed" line. Exit status is the scenarios' status. Root needed.
#   BUILDDIR=--stub   run the harness against tests/vm/stub (no project)
#   --images-only     build the images, print their dirs (one a line), run
#                     nothing: how tests/bench/run-bench.sh gets the same guests
set -eo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
[ $# -ge 1 ] || { echo "usage: $0 BUILDDIR|--stub [--suites S1,S2] [run-scenarios options]" >&2; exit 2; }
B=$1; shift
SUITES=bookworm,trixie
[ "$B" = --stub ] && SUITES=bookworm    # the stub is a harness self-test; one guest will do
if [ "${1:-}" = --suites ]; then SUITES=$2; shift 2; fi
IMAGES_ONLY=0
if [ "${1:-}" = --images-only ]; then IMAGES_ONLY=1; shift; fi
for t in qemu-system-x86_64 mmdebstrap mkfs.ext4 python3 jq; do
    command -v $t >/dev/null || { echo "check-vm: missing $t (scripts/install-deps.sh)" >&2; exit 2; }
done
dirs=()
for s in ${SUITES//,/ }; do
    t0=$SECONDS
    if [ "$B" = --stub ]; then
        out=$("$HERE/build-image.sh" --suite "$s" --stub)
    elif [ "$s" = trixie ]; then
        # Debian 13 runs the package built in a trixie chroot (reused while
        # the sources are unchanged): a bookworm binary links sonames it lacks.
        "$HERE/../../scripts/check-trixie-build.sh" --deb "$B/deb-trixie" --no-check --reuse "$HERE/../.." >&2
        out=$("$HERE/build-image.sh" --suite "$s" --deb "$B/deb-trixie" "$B")
    else
        "$HERE/../../scripts/build-deb.sh" --nocheck --reuse "$B/deb-bookworm" >&2
        out=$("$HERE/build-image.sh" --suite "$s" --deb "$B/deb-bookworm" "$B")
    fi
    echo "check-vm: $s image in $((SECONDS - t0)) s" >&2
    dirs+=(--image-dir "$out")
done
if [ "$IMAGES_ONLY" = 1 ]; then
    printf '%s\n' "${dirs[@]}" | grep -vx -e --image-dir
    exit 0
fi
exec python3 "$HERE/run-scenarios.py" "${dirs[@]}" "$@"
