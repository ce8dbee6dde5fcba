#!/bin/bash
# The documentation keeps up with the code: every MESSAGE_ID that
# daemon/interface.h defines is explained in the journal catalog and listed in
# memonlined(8), and every MEMONLINE_* field the daemon's sources name is
# documented in memonlined(8) and README.md (whose record table abbreviates
# MEMONLINE_X to _X); every Prometheus metric is in memonlined(8). Under
# distcheck the tree is the unpacked tarball.
# Prints TAP.
set -u
: "${top_srcdir:=$(cd "$(dirname "$0")/../.." && pwd)}"
CATALOG=$top_srcdir/catalog/memonlined.catalog
MAN=$top_srcdir/man/memonlined.8.in
README=$top_srcdir/README.md

n=0; failed=0
ok() { n=$((n + 1)); echo "ok $n - $1"; }
not_ok() { n=$((n + 1)); failed=$((failed + 1)); echo "not ok $n - $1"; }
check() { if "$@"; then ok "$desc"; else not_ok "$desc"; fi; }

ids=$(sed -nE 's/^#define (MESSAGE_ID_[A-Z_]+) +"([0-9a-f]{32})".*/\1=\2/p' "$top_srcdir/daemon/interface.h")
# The fields as interface.h names them, and any a source still spells out.
fields=$( (sed -nE 's/^#define FIELD_[A-Z0-9_]+ +"(MEMONLINE_[A-Z0-9_]+)"$/\1/p' "$top_srcdir/daemon/interface.h"
           cat "$top_srcdir"/daemon/*.c | grep -oE 'MEMONLINE_[A-Z0-9_]*[A-Z0-9]') | sort -u)

desc="daemon/interface.h defines MESSAGE_IDs"; check test -n "$ids"
desc="daemon/interface.h names MEMONLINE_* fields"; check test -n "$fields"

for pair in $ids; do
        name=${pair%%=*} id=${pair#*=}
        desc="$name ($id) is in the catalog"; check grep -q "^-- $id\$" "$CATALOG"
        desc="$name ($id) is in memonlined(8)"; check grep -qw "$id" "$MAN"
done

for f in $fields; do
        desc="$f is in memonlined(8)"; check grep -qE "(^|[^A-Z0-9_])$f([^A-Z0-9_]|\$)" "$MAN"
        # README's table writes MEMONLINE_A, _B, _C.
        desc="$f is in README.md"
        check grep -qE "(^|[^A-Z0-9_])(MEMONLINE)?_${f#MEMONLINE_}([^A-Z0-9_]|\$)" "$README"
done

# Every metric daemon/metrics.c writes is listed in memonlined(8)'s METRICS,
# and the key that turns them on in memonlined.conf(5) and the shipped file.
metrics=$(grep -oE '"memonlined_[a-z_]*[a-z]' "$top_srcdir/daemon/metrics.c" | tr -d '"' | sort -u)
desc="daemon/metrics.c names metrics"; check test -n "$metrics"
for m in $metrics; do
        desc="metric $m is in memonlined(8)"; check grep -qE "(^|[^a-z_])$m([^a-z_]|\$)" "$MAN"
done
desc="[metrics] textfile_dir is in memonlined.conf(5)"
check grep -q '^\.BI textfile_dir=' "$top_srcdir/man/memonlined.conf.5.in"
desc="[metrics] textfile_dir is in conf/memonlined.conf"
check grep -q '^#textfile_dir =' "$top_srcdir/conf/memonlined.conf"
desc="status --prometheus is in memonlined-status(8)"
check grep -q '^\.B \\-\\-prometheus$' "$top_srcdir/man/memonlined-status.8.in"
desc="README.md has a Metrics section naming memonlined_blocks_offline"
check grep -q 'memonlined_blocks_offline{node=' "$README"

# take_over_auto_online is on by default: no page may still say that the
# kernel must leave memory offline (Debian 12's default) or that the daemon
# only warns about auto-online.
for doc in "$README" "$MAN" "$top_srcdir/man/memonlined.conf.5.in" "$CATALOG"; do
        desc="${doc#"$top_srcdir"/} does not ask for auto_online_blocks = offline"
        check bash -c '! tr "\n" " " <"$1" | grep -qiE "must leave hot-added memory *offline|should say *.?offline.? *\(Debian|warns at start when the kernel.s *(\\n|\.I )?auto_online_blocks"' _ "$doc"
done

echo "1..$n"
[ "$failed" -eq 0 ]
