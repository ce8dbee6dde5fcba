#!/bin/bash
# build-deb.sh [OUTDIR]: build the Debian package from this checkout
# (committed and uncommitted files, not the ignored ones) with
# "dpkg-buildpackage -us -uc -b", then check it with lintian: any error or
# warning fails. As root it first installs the build dependencies.
# The .deb, .changes and logs end up in OUTDIR (default build-deb/).
set -euo pipefail
SRC=$(cd "$(dirname "$0")/.." && pwd)
OUT=$(mkdir -p "${1:-$SRC/build-deb}" && cd "${1:-$SRC/build-deb}" && pwd)
start=$(date +%s)

if [ "$(id -u)" -eq 0 ]; then
        export DEBIAN_FRONTEND=noninteractive
        need=""
        for p in dpkg-dev debhelper lintian; do
                dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed" || need="$need $p"
        done
        if [ -n "$need" ]; then
                apt-get update -q
                # shellcheck disable=SC2086
                apt-get install -y -q --no-install-recommends $need
        fi
        apt-get build-dep -y -q "$SRC" >"$OUT/build-dep.log" 2>&1 || { cat "$OUT/build-dep.log"; exit 1; }
fi

version=$(cd "$SRC" && dpkg-parsechangelog -S Version)
tree=$OUT/memonlined-${version%-*}
rm -rf "$tree" "$OUT"/memonlined_* "$OUT"/memonlined-dbgsym_*
mkdir -p "$tree"
if git -C "$SRC" rev-parse --git-dir >/dev/null 2>&1; then
        (cd "$SRC" && git ls-files -z -co --exclude-standard |
                tar --null -T - --ignore-failed-read -cf - 2>/dev/null) | tar -C "$tree" -xf -
else
        tar -C "$SRC" --exclude='./build*' --exclude='./debian/build' -cf - . | tar -C "$tree" -xf -
fi

echo "build-deb: dpkg-buildpackage in $tree"
if ! (cd "$tree" && DEB_BUILD_OPTIONS="${DEB_BUILD_OPTIONS:-parallel=2}" \
                dpkg-buildpackage -us -uc -b >"$OUT/dpkg-buildpackage.log" 2>&1); then
        tail -60 "$OUT/dpkg-buildpackage.log"
        echo "build-deb: FAIL: dpkg-buildpackage (log: $OUT/dpkg-buildpackage.log)"
        exit 1
fi
changes=$(ls "$OUT"/memonlined_*.changes)
ls -l "$OUT"/*.deb

echo "build-deb: lintian $changes"
if ! lintian --fail-on error,warning "$changes" | tee "$OUT/lintian.log"; then
        echo "build-deb: FAIL: lintian reports errors or warnings"
        exit 1
fi
echo "build-deb: ok, lintian clean, $(( $(date +%s) - start )) s"
