#!/bin/bash
# check-vm.sh BUILDDIR [run-scenarios.py options]
# Build the guest image from BUILDDIR (configured with --prefix=/usr
# --sysconfdir=/etc --localstatedir=/var; the mmdebstrap base is cached) and
# run the VM scenarios. Exit status is the scenarios' status. Root needed.
#   BUILDDIR=--stub   run the harness against tests/vm/stub (no project)
set -eo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
[ $# -ge 1 ] || { echo "usage: $0 BUILDDIR|--stub [run-scenarios options]" >&2; exit 2; }
B=$1; shift
for t in qemu-system-x86_64 mmdebstrap mkfs.ext4 python3 jq; do
    command -v $t >/dev/null || { echo "check-vm: missing $t (apt-get install qemu-system-x86 mmdebstrap e2fsprogs python3 jq linux-image-amd64)" >&2; exit 2; }
done
if [ "$B" = --stub ]; then
    out=$("$HERE/build-image.sh" --stub)
else
    out=$("$HERE/build-image.sh" "$B")
fi
exec python3 "$HERE/run-scenarios.py" --image-dir "$out" "$@"
