#!/bin/sh
# Install what building, testing and the demo VM need (Debian 12).
set -e
PKGS="build-essential autoconf automake pkg-config git
      libudev-dev libsystemd-dev libndctl-dev libdaxctl-dev libiniparser-dev libnuma-dev libsmartcols-dev libcmocka-dev
      valgrind jq python3 systemd-journal-remote time
      qemu-system-x86 qemu-utils linux-image-amd64 mmdebstrap e2fsprogs ndctl daxctl
      gnuplot-nox clang libclang-rt-14-dev zsh"
missing=""
for p in $PKGS; do
        dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed" || missing="$missing $p"
done
[ -z "$missing" ] && exit 0
if [ "$(id -u)" -ne 0 ]; then
        echo "install-deps: need root to install:$missing" >&2
        exit 1
fi
export DEBIAN_FRONTEND=noninteractive
apt-get update -q
# shellcheck disable=SC2086
apt-get install -y -q $missing
