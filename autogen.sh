#!/bin/sh
set -e
cd "$(dirname "$0")"
mkdir -p m4 build-aux
autoreconf --install --force --warnings=all
cp -f "$(automake --print-libdir)/tap-driver.sh" build-aux/tap-driver.sh
