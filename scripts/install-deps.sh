#!/bin/sh
# Install what building, testing and the demo VM need (Debian 12 host).
# QEMU comes from bookworm-backports (10.x): the CXL Type-3 guest of the
# VM suite needs QEMU 8 or newer (volatile-memdev). The host stays on
# Debian 12 otherwise; the Debian 13 guest brings its own kernel.
# prometheus: its promtool checks the metrics in make check (test-prometheus.sh).
set -e
PKGS="build-essential autoconf automake pkg-config git
      libudev-dev libsystemd-dev libdaxctl-dev libiniparser-dev libnuma-dev libsmartcols-dev libcmocka-dev
      valgrind jq python3 systemd-journal-remote time
      qemu-system-x86 qemu-utils linux-image-amd64 mmdebstrap e2fsprogs ndctl daxctl
      gnuplot-nox clang libclang-rt-14-dev zsh prometheus"
QEMU_PKGS="qemu-system-x86 qemu-utils"
QEMU_MIN=1:10
BACKPORTS_LIST=/etc/apt/sources.list.d/memonlined-backports.sources

# The URI of the machine's own bookworm entry: one-line sources.list or
# deb822 .sources stanzas.
bookworm_uri() {
        { grep -hs '^deb ' /etc/apt/sources.list /etc/apt/sources.list.d/*.list |
                  sed 's/\[[^]]*\]//' | awk '$3 == "bookworm" { print $2; exit }'
          for f in /etc/apt/sources.list.d/*.sources; do
                  [ -f "$f" ] || continue
                  awk 'BEGIN { RS = ""; FS = "\n" }
                       { uri = ""; ok = 0
                         for (i = 1; i <= NF; i++) {
                                 if ($i ~ /^URIs:/) { sub(/^URIs:[ \t]*/, "", $i); split($i, u, " "); uri = u[1] }
                                 if ($i ~ /^Suites:/ && $i ~ /[ \t]bookworm([ \t]|$)/) ok = 1
                         }
                         if (ok && uri != "") { print uri; exit } }' "$f"
          done; } | head -n1
}

. /etc/os-release
codename=${VERSION_CODENAME:-}

missing=""
for p in $PKGS; do
        dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed" || missing="$missing $p"
done
qemu_old=0
v=$(dpkg-query -W -f='${Version}' qemu-system-x86 2>/dev/null || true)
if [ -z "$v" ] || dpkg --compare-versions "$v" lt "$QEMU_MIN"; then
        qemu_old=1
fi
[ -z "$missing" ] && [ $qemu_old = 0 ] && exit 0
if [ "$(id -u)" -ne 0 ]; then
        echo "install-deps: need root to install:$missing$([ $qemu_old = 1 ] && echo " QEMU >= 10")" >&2
        exit 1
fi
export DEBIAN_FRONTEND=noninteractive
qemu_from=
if [ $qemu_old = 1 ] && [ "$codename" = bookworm ]; then
        # Once: a bookworm-backports entry, unless some source has one
        # already. Its mirror and keyring are the ones the machine's own
        # bookworm entry uses, so no archive host is named here.
        if ! grep -rqs 'bookworm-backports' /etc/apt/sources.list /etc/apt/sources.list.d/; then
                uri=$(bookworm_uri)
                if [ -z "$uri" ]; then
                        echo "install-deps: no bookworm entry in the apt sources to take a mirror from" >&2
                        exit 1
                fi
                cat > "$BACKPORTS_LIST" <<SOURCES
Types: deb
URIs: ${uri%/}
Suites: bookworm-backports
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
SOURCES
        fi
        qemu_from="-t bookworm-backports"
fi
apt-get update -q
# shellcheck disable=SC2086
if [ $qemu_old = 1 ]; then
        apt-get install -y -q $qemu_from $QEMU_PKGS
fi
if [ -n "$missing" ]; then
        apt-get install -y -q $missing
fi
v=$(dpkg-query -W -f='${Version}' qemu-system-x86)
if dpkg --compare-versions "$v" lt "$QEMU_MIN"; then
        echo "install-deps: qemu-system-x86 $v is older than $QEMU_MIN (CXL volatile memory needs it)" >&2
        exit 1
fi
