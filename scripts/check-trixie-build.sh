#!/bin/bash
# check-trixie-build.sh [SRCDIR]: build memonlined warning-free
# (--enable-werror) and run `make check` in a Debian 13 (trixie) chroot:
# gcc 14, systemd 257, ndctl 81. Prints make check's summary ("# PASS:
# N" ...) and exits non-zero if the build or a test fails. Root needed.
#
# The chroot (mmdebstrap, build dependencies only) is cached as a tarball
# in ${XDG_CACHE_HOME:-$HOME/.cache}/memonlined-build/, keyed by a hash of
# the package list and the apt sources (the host's, with bookworm replaced
# by trixie; MEMONLINED_VM_SOURCES overrides the file). The source is the
# git tree's files (git ls-files, so nothing generated on the host), and
# autogen.sh runs with trixie's autotools.
set -euo pipefail
SRC=$(cd "${1:-$(dirname "$0")/..}" && pwd)
SUITE=trixie
SOURCES=${MEMONLINED_VM_SOURCES:-/etc/apt/sources.list.d/debian.sources}
CACHE=${XDG_CACHE_HOME:-$HOME/.cache}/memonlined-build
PACKAGES=(build-essential autoconf automake pkg-config git
          libudev-dev libsystemd-dev libndctl-dev libdaxctl-dev libiniparser-dev libsmartcols-dev libnuma-dev libcmocka-dev zsh python3 systemd bash-completion
          jq e2fsprogs systemd-journal-remote)

log() { echo "trixie-build: $*" >&2; }
die() { log "error: $*"; exit 1; }

[ "$(id -u)" = 0 ] || die "must run as root (mmdebstrap, chroot)"
for t in mmdebstrap unshare chroot git tar sha256sum; do
    command -v "$t" >/dev/null || die "missing tool $t"
done
mkdir -p "$CACHE"
sed 's/bookworm/'"$SUITE"'/g' "$SOURCES" > "$CACHE/sources-$SUITE.sources"
KEY=$( { printf '%s\n' "${PACKAGES[@]}" | sort; grep -v '^#' "$CACHE/sources-$SUITE.sources"; echo v1; } |
       sha256sum | cut -c1-16)
BASE=$CACHE/$SUITE-build-$KEY.tar
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
fi

ROOT=$(mktemp -d /tmp/memonlined-trixie-XXXXXX)
trap 'rm -rf "$ROOT"' EXIT
tar -C "$ROOT" --numeric-owner -xpf "$BASE"
mkdir -p "$ROOT/src"
git -C "$SRC" ls-files -z | tar -C "$SRC" --null -T - -cf - | tar -C "$ROOT/src" -xf -
log "$(chroot "$ROOT" sh -c 'gcc --version | head -n1; pkg-config --modversion libsystemd libndctl')" || true

# Own mount namespace: proc, dev and tmp go away with it.
unshare --mount --propagation private -- sh -c '
    set -e
    R=$1
    mount -t proc proc "$R/proc"
    mount --rbind /dev "$R/dev"
    mount -t tmpfs tmpfs "$R/tmp"
    chroot "$R" /bin/sh -c "
        set -e
        cd /src && ./autogen.sh >/tmp/autogen.log 2>&1 || { cat /tmp/autogen.log; exit 1; }
        mkdir -p /build && cd /build
        /src/configure --enable-werror --prefix=/usr --sysconfdir=/etc --localstatedir=/var \
            >/tmp/configure.log 2>&1 || { tail -40 /tmp/configure.log; exit 1; }
        make -j2 >/tmp/make.log 2>&1 || { tail -60 /tmp/make.log; exit 1; }
        echo build ok
        rc=0
        make -j2 check >/tmp/check.log 2>&1 || rc=\$?
        grep -E \"^(FAIL|ERROR|XPASS|# )\" /tmp/check.log
        [ \$rc = 0 ] || cat /build/test-suite.log
        exit \$rc
    "
' sh "$ROOT"
