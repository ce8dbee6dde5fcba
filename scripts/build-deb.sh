#!/bin/bash
# build-deb.sh [--orig TARBALL] [--nocheck] [--reuse] [OUTDIR]: build the
# Debian source and binary packages of this checkout as a release is built:
# the upstream tarball of "make dist" becomes memonlined_VERSION.orig.tar.xz,
# debian/ goes on top, "dpkg-buildpackage -us -uc" builds both, and lintian
# checks the .changes (source and binary): any error or warning fails. As
# root it first installs the build dependencies ("apt-get build-dep").
#
#   --orig TARBALL  the "make dist" tarball to use (from a configured build
#                   tree); without it one is made from the checkout's files
#                   (committed and uncommitted, not the ignored ones)
#   --nocheck       DEB_BUILD_OPTIONS=nocheck: no make check in the build
#   --reuse         do nothing when OUTDIR holds a package built from these
#                   very sources (memonlined.source-sha256)
#
# The .dsc, .orig.tar.xz, .debian.tar.xz, .deb, .changes and logs end up in
# OUTDIR (default build-deb/). The VM suite installs that .deb in its
# Debian 12 guest.
set -euo pipefail
SRC=$(cd "$(dirname "$0")/.." && pwd)
ORIG=
NOCHECK=0
REUSE=0
OUT=
while [ $# -gt 0 ]; do
        case "$1" in
        --orig) ORIG=$(realpath "$2"); shift ;;
        --orig=*) ORIG=$(realpath "${1#--orig=}") ;;
        --nocheck) NOCHECK=1 ;;
        --reuse) REUSE=1 ;;
        -h|--help) sed -n '2,19p' "$0"; exit 0 ;;
        -*) echo "build-deb: error: unknown option $1" >&2; exit 2 ;;
        *) OUT=$1 ;;
        esac
        shift
done
OUT=$(mkdir -p "${OUT:-$SRC/build-deb}" && cd "${OUT:-$SRC/build-deb}" && pwd)
start=$(date +%s)

# The checkout's files, as the package is built from them.
source_files() {
        if git -C "$SRC" rev-parse --git-dir >/dev/null 2>&1; then
                (cd "$SRC" && git ls-files -z -co --exclude-standard)
        else
                (cd "$SRC" && find . -path ./build\* -prune -o -path ./debian/build -prune -o -type f -print0)
        fi
}
source_hash() {
        source_files | (cd "$SRC" && xargs -0 sha256sum -- 2>/dev/null) | sha256sum | cut -d' ' -f1
}
HASH=$(source_hash)
if [ "$REUSE" = 1 ] && [ "$(cat "$OUT/memonlined.source-sha256" 2>/dev/null)" = "$HASH" ] &&
   [ "$(ls "$OUT"/memonlined_*.deb 2>/dev/null | wc -l)" = 1 ]; then
        echo "build-deb: reusing $(ls "$OUT"/memonlined_*.deb): built from these sources"
        exit 0
fi

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
upstream=${version%-*}
rm -rf "$OUT"/memonlined-* "$OUT"/memonlined_* "$OUT"/memonlined-dbgsym_* "$OUT/dist"
if [ -z "$ORIG" ]; then
        echo "build-deb: make dist"
        mkdir -p "$OUT/dist/src" "$OUT/dist/build"
        source_files | (cd "$SRC" && tar --null -T - --ignore-failed-read -cf - 2>/dev/null) | tar -C "$OUT/dist/src" -xf -
        if ! (cd "$OUT/dist/src" && ./autogen.sh && cd ../build && ../src/configure && make dist) \
                        >"$OUT/dist.log" 2>&1; then
                tail -30 "$OUT/dist.log"
                echo "build-deb: FAIL: make dist (log: $OUT/dist.log)"
                exit 1
        fi
        ORIG=$OUT/dist/build/memonlined-$upstream.tar.xz
fi
[ -f "$ORIG" ] || { echo "build-deb: FAIL: no $ORIG (debian/changelog's upstream version is $upstream)"; exit 1; }
case "$ORIG" in
*/memonlined-"$upstream".tar.xz) ;;
*) echo "build-deb: FAIL: $ORIG is not memonlined-$upstream.tar.xz, debian/changelog's version"; exit 1 ;;
esac
cp "$ORIG" "$OUT/memonlined_$upstream.orig.tar.xz"
tar -C "$OUT" -xf "$OUT/memonlined_$upstream.orig.tar.xz"
tree=$OUT/memonlined-$upstream
[ -d "$tree" ] || { echo "build-deb: FAIL: the tarball holds no memonlined-$upstream/"; exit 1; }
(cd "$SRC" && source_files | tr '\0' '\n' | grep '^debian/' | tar -T - -cf -) | tar -C "$tree" -xf -
rm -rf "$OUT/dist"

opts=${DEB_BUILD_OPTIONS:-parallel=2}
[ "$NOCHECK" = 1 ] && opts="$opts nocheck"
echo "build-deb: dpkg-buildpackage (source and binary) in $tree"
if ! (cd "$tree" && DEB_BUILD_OPTIONS="$opts" dpkg-buildpackage -us -uc >"$OUT/dpkg-buildpackage.log" 2>&1); then
        tail -60 "$OUT/dpkg-buildpackage.log"
        echo "build-deb: FAIL: dpkg-buildpackage (log: $OUT/dpkg-buildpackage.log)"
        exit 1
fi
changes=$(ls "$OUT"/memonlined_*.changes)
ls -l "$OUT"/*.dsc "$OUT"/*.deb

echo "build-deb: lintian $changes"
if ! lintian --fail-on error,warning "$changes" | tee "$OUT/lintian.log"; then
        echo "build-deb: FAIL: lintian reports errors or warnings"
        exit 1
fi
echo "$HASH" > "$OUT/memonlined.source-sha256"
echo "build-deb: ok, lintian clean, $(( $(date +%s) - start )) s"
