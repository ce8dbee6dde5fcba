#!/bin/bash
# demo.sh BUILDDIR|--stub: build the guest image (cached base), boot it, hot-add
# DIMMs on node 0 and node 1 and an NVDIMM devdax namespace on CPU-less node
# 2 (converted with daxctl --no-online), show per-node block counts before
# and after, print memonlined's journal timing records, then the daemon's own
# `memonlined report` (timing review of the guest journal) and `memonlined
# status`. Root needed.
set -eo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
[ $# -ge 1 ] || { echo "usage: $0 BUILDDIR|--stub" >&2; exit 2; }
if [ "$1" = --stub ]; then out=$("$HERE/build-image.sh" --stub)
else out=$("$HERE/build-image.sh" "$1"); fi
exec python3 "$HERE/vm.py" --image-dir "$out" demo
