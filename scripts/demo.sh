#!/bin/bash
# The demo: set up, build, boot a QEMU guest with two CPU nodes and a
# CPU-less memory node, hot-add DIMMs and an NVDIMM namespace, watch the
# blocks come online and print the daemon's timing report.
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/install-deps.sh
./autogen.sh >/dev/null
mkdir -p build-demo
cd build-demo
[ -f Makefile ] || ../configure --prefix=/usr --sysconfdir=/etc --localstatedir=/var >/dev/null
make -j"$(nproc)" >/dev/null
make demo
