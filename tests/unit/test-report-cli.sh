#!/bin/bash
# memonlined report through the binary: --svg parsed as XML, exit statuses. Prints TAP.
set -u
: "${MEMONLINED:=$(cd "$(dirname "$0")/../.." && pwd)/memonlined}"
: "${top_srcdir:=$(cd "$(dirname "$0")/../.." && pwd)}"

REMOTE=
for p in /lib/systemd/systemd-journal-remote /usr/lib/systemd/systemd-journal-remote; do
        [ -x "$p" ] && REMOTE=$p && break
done
if [ -z "$REMOTE" ] || ! command -v python3 >/dev/null; then
        echo "1..0 # SKIP needs systemd-journal-remote and python3"
        exit 0
fi

T=$(mktemp -d /tmp/memonline-report-cli-XXXXXX)
trap 'rm -rf "$T"' EXIT
n=0; failed=0
ok() { n=$((n + 1)); echo "ok $n - $1"; }
not_ok() { n=$((n + 1)); failed=$((failed + 1)); echo "not ok $n - $1"; shift; for l in "$@"; do echo "# $l"; done; }
check() { local name="$1"; shift; if "$@"; then ok "$name"; else not_ok "$name" "command: $*"; fi; }

# 2 machines x 2 batches x 3 node records, as the benchmark writes them
python3 "$top_srcdir/tests/bench/report-journal.py" --hosts 2 --batches 2 --nodes 3 > "$T/export"
"$REMOTE" -o "$T/fleet.journal" "$T/export" 2>/dev/null

# --- --svg ------------------------------------------------------------------
"$MEMONLINED" report --file "$T/fleet.journal" --svg "$T/fleet.svg" > "$T/out" 2> "$T/err"
check "--svg exits 0" test $? -eq 0
check "--svg still prints the table" grep -q '^4 batches, 96 blocks, 12G, 0 failed$' "$T/out"
svg_check() {  # FILE: "SERIES HOSTS BATCHES" of a well-formed SVG, or an error
        python3 - "$1" <<'PY'
import sys
import xml.etree.ElementTree as ET
ns = {"s": "http://www.w3.org/2000/svg"}
root = ET.parse(sys.argv[1]).getroot()
assert root.tag == "{http://www.w3.org/2000/svg}svg", root.tag
series = root.findall(".//s:polyline[@class='series']", ns)
keys = {(p.get("data-host"), p.get("data-node")) for p in series}
assert len(keys) == len(series), "a series drawn twice"
for p in series:
    pts = [tuple(map(float, xy.split(","))) for xy in p.get("points").split()]
    assert all(b[0] >= a[0] and b[1] <= a[1] for a, b in zip(pts, pts[1:])), "a line that goes back"
batches = root.findall(".//s:g[@class='batch']", ns)
print(len(series), len({h for h, _ in keys}), len(batches), " ".join(sorted(h for h, _ in keys)))
PY
}
res=$(svg_check "$T/fleet.svg" 2>&1)
check "the SVG parses as XML, one series per node of each host, one boundary per batch" \
        test "$res" = "6 2 4 host00000 host00000 host00000 host00001 host00001 host00001"
[ "$res" = "6 2 4 host00000 host00000 host00000 host00001 host00001 host00001" ] || echo "# got: $res"

"$MEMONLINED" report --file "$T/fleet.journal" --node 1 -J --svg "$T/node1.svg" > /dev/null 2>&1
res=$(svg_check "$T/node1.svg" 2>&1)
check "--node 1: one series per host" test "${res%% *}" = 2

# A host name that is markup, an escape sequence and invalid UTF-8 leaves the SVG well-formed.
{
        printf '__REALTIME_TIMESTAMP=1700000000000000\n__MONOTONIC_TIMESTAMP=1\n_BOOT_ID=%s\n' \
                aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa1
        printf '_HOSTNAME=ev<il>&"x\033[2J\377\n_PID=7\n_COMM=memonlined\n_UID=0\n'
        printf 'MESSAGE_ID=a251eb01963d4e9abecfe2f5aa23b7e8\nMEMONLINE_BATCH=1\nMEMONLINE_NODE=0\n'
        printf 'MEMONLINE_BLOCKS=8\nMEMONLINE_DURATION_USEC=1000\n\n'
} > "$T/evil.export"
"$REMOTE" -o "$T/evil.journal" "$T/evil.export" 2>/dev/null
"$MEMONLINED" report --file "$T/evil.journal" --svg "$T/evil.svg" > /dev/null 2>&1
check "--svg of a hostile host name exits 0" test $? -eq 0
res=$(python3 - "$T/evil.svg" <<'PY' 2>&1
import sys
import xml.etree.ElementTree as ET
root = ET.parse(sys.argv[1]).getroot()
print([p.get("data-host") for p in root.iter("{http://www.w3.org/2000/svg}polyline")])
PY
)
check "a hostile host name is escaped in the SVG" test "$res" = "['ev<il>&\"x\\\\x1b[2J\\\\xff']"
[ "$res" = "['ev<il>&\"x\\\\x1b[2J\\\\xff']" ] || echo "# got: $res"

# --- exit statuses ------------------------------------------------------------
"$MEMONLINED" report --file "$T/fleet.journal" --svg "$T/nodir/x.svg" > /dev/null 2> "$T/err"
check "an unwritable --svg file exits 1" test $? -eq 1
check "and says so" grep -q '^memonlined report: cannot write .*nodir/x.svg' "$T/err"
"$MEMONLINED" report --file "$T/fleet.journal" --failures --svg "$T/x.svg" > /dev/null 2>&1
check "--svg with --failures is a usage error (2)" test $? -eq 2
"$MEMONLINED" report --bogus > /dev/null 2> "$T/err"
check "an unknown option exits 2" test $? -eq 2
check "errors name the subcommand" grep -q "^memonlined report: unrecognized option '--bogus'" "$T/err"
"$MEMONLINED" report -D "$T/none" > /dev/null 2>&1
check "a missing directory exits 1" test $? -eq 1
# each machine of the fleet has one boot
"$MEMONLINED" report --file "$T/fleet.journal" -b -r -n -o HOST > "$T/out" 2>&1
check "-b is every machine's latest boot" test "$(sort "$T/out" | uniq -c | tr -s ' ')" = \
        "$(printf ' 2 host00000\n 2 host00001')"
"$MEMONLINED" report --file "$T/fleet.journal" -b -1 > /dev/null 2> "$T/err"
check "a boot no machine has exits 1" test $? -eq 1
check "and says so" grep -q '^memonlined report: no such boot in the journal' "$T/err"

echo "1..$n"
[ $failed -eq 0 ]
