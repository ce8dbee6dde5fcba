#!/bin/bash
# check-trixie-build.sh [--deb OUTDIR [--no-check] [--reuse]] [SRCDIR]:
# build memonlined warning-free (--enable-werror) and run `make check` in a
# Debian 13 (trixie) chroot: gcc 14, systemd 257, ndctl 81, jq 1.7. Prints
# make check's summary ("# PASS: N" ...) and exits non-zero if the build or
# a test fails. Root needed.
#
#   --deb OUTDIR  then also build the Debian package there with
#                 "dpkg-buildpackage -us -uc -b" (nocheck: make check just
#                 ran), check it with lintian (any error or warning fails),
#                 install it in the chroot and run its autopkgtest
#                 (debian/tests, virt server null: the chroot is the
#                 testbed, where no daemon is started), and copy
#                 memonlined_*.deb to OUTDIR, with
#                 memonlined.source-sha256, the hash of the sources it was
#                 built from. The VM suite installs it in its trixie guest:
#                 a binary built on bookworm links sonames trixie lacks
#                 (libiniparser.so.1; trixie has .so.4).
#   --no-check    with --deb: only the package, no -Werror build, no make
#                 check, no lintian, no autopkgtest.
#   --reuse       with --deb: do nothing when OUTDIR already holds a package
#                 built from these very sources.
#
# The chroot (mmdebstrap: the Build-Depends of debian/control, debhelper and
# the tools the tests run) is cached as a tarball in
# ${XDG_CACHE_HOME:-$HOME/.cache}/memonlined-build/, keyed by a hash of the
# package list and the apt sources (the host's, with bookworm replaced by
# trixie; MEMONLINED_VM_SOURCES overrides the file). The source is the git
# tree's files (git ls-files, so nothing generated on the host), and
# autogen.sh runs with trixie's autotools. Each step prints its time.
set -euo pipefail
DEB_OUT=
CHECK=1
REUSE=0
SRC=
while [ $# -gt 0 ]; do
    case "$1" in
        --deb) DEB_OUT=$2; shift ;;
        --deb=*) DEB_OUT=${1#--deb=} ;;
        --no-check) CHECK=0 ;;
        --reuse) REUSE=1 ;;
        -h|--help) sed -n '2,25p' "$0"; exit 0 ;;
        -*) echo "trixie-build: error: unknown option $1" >&2; exit 2 ;;
        *) SRC=$1 ;;
    esac
    shift
done
SRC=$(cd "${SRC:-$(dirname "$0")/..}" && pwd)
SUITE=trixie
SOURCES=${MEMONLINED_VM_SOURCES:-/etc/apt/sources.list.d/debian.sources}
CACHE=${XDG_CACHE_HOME:-$HOME/.cache}/memonlined-build
# procps: systemd-analyze verify (test-unit-file.sh) wants /bin/kill.
# lintian and autopkgtest check the package.
PACKAGES=(build-essential autoconf automake pkg-config git dpkg-dev debhelper procps lintian autopkgtest
          libudev-dev libsystemd-dev libndctl-dev libdaxctl-dev libiniparser-dev libsmartcols-dev libnuma-dev libcmocka-dev zsh python3 systemd bash-completion
          jq e2fsprogs systemd-journal-remote)

log() { echo "trixie-build: $*" >&2; }
die() { log "error: $*"; exit 1; }
T0=$SECONDS
took() { log "$* in $((SECONDS - T0)) s"; T0=$SECONDS; }

# The first alternative of each Build-Depends of debian/control, without
# versions, profiles or architectures.
build_depends() {
    awk '/^Build-Depends:/ { f = 1; sub(/^Build-Depends:/, ""); print; next }
         f && /^[ \t]/ { print; next } { f = 0 }' "$SRC/debian/control" |
        tr ',' '\n' | sed 's/|.*//; s/[(<[].*//; s/[[:space:]]//g; s/^debhelper-compat$/debhelper/' | grep .
}

[ "$(id -u)" = 0 ] || die "must run as root (mmdebstrap, chroot)"
[ -n "$DEB_OUT" ] || { [ "$CHECK" = 1 ] && [ "$REUSE" = 0 ]; } || die "--no-check and --reuse go with --deb OUTDIR"
for t in mmdebstrap unshare chroot git tar sha256sum; do
    command -v "$t" >/dev/null || die "missing tool $t"
done
mapfile -t BUILD_DEPENDS < <(build_depends)
[ ${#BUILD_DEPENDS[@]} -gt 0 ] || die "no Build-Depends in $SRC/debian/control"
mapfile -t PACKAGES < <(printf '%s\n' "${PACKAGES[@]}" "${BUILD_DEPENDS[@]}" | sort -u)
mkdir -p "$CACHE"
sed 's/bookworm/'"$SUITE"'/g' "$SOURCES" > "$CACHE/sources-$SUITE.sources"
KEY=$( { printf '%s\n' "${PACKAGES[@]}"; grep -v '^#' "$CACHE/sources-$SUITE.sources"; echo v1; } |
       sha256sum | cut -c1-16)
BASE=$CACHE/$SUITE-build-$KEY.tar

# The package's provenance: the chroot and every file the build sees.
source_hash() {
    { echo "$KEY"; git -C "$SRC" ls-files -z | (cd "$SRC" && xargs -0 sha256sum --); } | sha256sum | cut -d' ' -f1
}
if [ -n "$DEB_OUT" ]; then
    mkdir -p "$DEB_OUT"
    DEB_OUT=$(cd "$DEB_OUT" && pwd)
    HASH=$(source_hash)
    if [ "$REUSE" = 1 ] && [ "$(cat "$DEB_OUT/memonlined.source-sha256" 2>/dev/null)" = "$HASH" ] &&
       [ "$(ls "$DEB_OUT"/memonlined_*.deb 2>/dev/null | wc -l)" = 1 ]; then
        log "reusing $(ls "$DEB_OUT"/memonlined_*.deb): built from these sources"
        exit 0
    fi
    rm -f "$DEB_OUT"/memonlined_*.deb "$DEB_OUT/memonlined.source-sha256"
fi

if [ -s "$BASE" ]; then
    log "using cached chroot $BASE"
else
    log "mmdebstrap $SUITE -> $BASE"
    inc=$(IFS=,; echo "${PACKAGES[*]}")
    mmdebstrap --variant=apt --mode=root --include="$inc" --format=tar \
        --aptopt='Acquire::Retries "3"' \
        --customize-hook='chroot "$1" apt-get clean' \
        "$SUITE" "$BASE.tmp.tar" "$CACHE/sources-$SUITE.sources" </dev/null
    mv "$BASE.tmp.tar" "$BASE"
    took "mmdebstrap"
fi

ROOT=$(mktemp -d /tmp/memonlined-trixie-XXXXXX)
trap 'rm -rf "$ROOT"' EXIT
tar -C "$ROOT" --numeric-owner -xpf "$BASE"
mkdir -p "$ROOT/src"
git -C "$SRC" ls-files -z | tar -C "$SRC" --null -T - -cf - | tar -C "$ROOT/src" -xf -
log "$(chroot "$ROOT" sh -c 'gcc --version | head -n1; pkg-config --modversion libsystemd libndctl')" || true
took "chroot extracted"

# Runs in the chroot: $1 = 1 for the -Werror build and make check, $2 = 1
# for the package. A log's tail when a step fails.
cat > "$ROOT/memonlined-build.sh" <<'EOF'
set -e
t0=$(date +%s)
took() { echo "trixie-build: $* in $(( $(date +%s) - t0 )) s" >&2; t0=$(date +%s); }
# The package builds from a pristine copy: autogen.sh writes into /src.
[ "$2" = 0 ] || { mkdir /pkg && cp -a /src /pkg/memonlined; }
if [ "$1" = 1 ]; then
    cd /src && ./autogen.sh >/tmp/autogen.log 2>&1 || { cat /tmp/autogen.log; exit 1; }
    mkdir -p /build && cd /build
    /src/configure --enable-werror --prefix=/usr --sysconfdir=/etc --localstatedir=/var \
        >/tmp/configure.log 2>&1 || { tail -40 /tmp/configure.log; exit 1; }
    make -j2 >/tmp/make.log 2>&1 || { tail -60 /tmp/make.log; exit 1; }
    echo build ok
    took "build (-Werror)"
    rc=0
    make -j2 check >/tmp/check.log 2>&1 || rc=$?
    grep -E "^(FAIL|ERROR|XPASS|# )" /tmp/check.log
    took "make check"
    [ $rc = 0 ] || { cat /build/test-suite.log; exit $rc; }
fi
if [ "$2" = 1 ]; then
    cd /pkg/memonlined
    DEB_BUILD_OPTIONS="nocheck parallel=2" dpkg-buildpackage -us -uc -b >/tmp/deb.log 2>&1 ||
        { tail -60 /tmp/deb.log; exit 1; }
    took "dpkg-buildpackage"
fi
if [ "$1" = 1 ] && [ "$2" = 1 ]; then
    lintian --fail-on error,warning /pkg/memonlined_*.changes 2>&1 | grep -v '^running with root' |
        sed 's/^/lintian: /'
    [ "${PIPESTATUS[0]}" = 0 ] || { echo "trixie-build: lintian reports errors or warnings" >&2; exit 1; }
    took "lintian (no error or warning)"
    # The chroot is the testbed: the package's postinst starts nothing without systemd as PID 1.
    autopkgtest --no-built-binaries /pkg/memonlined/ /pkg/memonlined_*.deb -- null >/tmp/autopkgtest.log 2>&1 ||
        { tail -60 /tmp/autopkgtest.log; echo "trixie-build: autopkgtest failed" >&2; exit 1; }
    echo "autopkgtest: $(grep -E '^installed +[A-Z]+' /tmp/autopkgtest.log | tail -n1 | tr -s ' '), $(grep -c '^ok ' /tmp/autopkgtest.log) checks passed"
    took "autopkgtest"
fi
EOF

# Own mount namespace: proc, dev and tmp go away with it.
unshare --mount --propagation private -- sh -c '
    set -e
    R=$1
    mount -t proc proc "$R/proc"
    mount --rbind /dev "$R/dev"
    mount -t tmpfs tmpfs "$R/tmp"
    chroot "$R" /bin/bash /memonlined-build.sh "$2" "$3"
' sh "$ROOT" "$CHECK" "$([ -n "$DEB_OUT" ] && echo 1 || echo 0)"

if [ -n "$DEB_OUT" ]; then
    debs=("$ROOT"/pkg/memonlined_*.deb)
    [ ${#debs[@]} = 1 ] && [ -f "${debs[0]}" ] || die "dpkg-buildpackage made no single memonlined_*.deb"
    cp -p "${debs[0]}" "$DEB_OUT/"
    echo "$HASH" > "$DEB_OUT/memonlined.source-sha256"
    log "package $DEB_OUT/${debs[0]##*/}, Depends: $(dpkg-deb -f "${debs[0]}" Depends)"
fi
