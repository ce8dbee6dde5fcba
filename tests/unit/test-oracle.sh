#!/bin/bash
# The VM suite's oracle (tests/vm/oracle.py: memonlined status against
# ndctl, daxctl and cxl) on recorded guest output: nothing to say where
# they agree, and every deliberately broken field named with both values.
# Prints TAP.
set -u
: "${top_srcdir:=$(cd "$(dirname "$0")/../.." && pwd)}"
exec python3 "$top_srcdir/tests/vm/oracle.py" --selftest
