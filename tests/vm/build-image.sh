#!/bin/bash
# Build the memonlined test guest: a Debian ext4 disk image with systemd,
# udev, ndctl/daxctl, qemu-guest-agent, the test helper scripts and (unless
# --no-project) the project installed with `make install DESTDIR=`.
#
# Usage: tests/vm/build-image.sh [--suite bookworm|trixie] [--no-project|--stub]
#                                [--deb DIR] [--out DIR] [--size SIZE] [BUILDDIR]
#
#   --suite S  bookworm (default): Debian 12; the guest kernel is the host's
#              Debian kernel from /boot (6.1), with a subset of its modules.
#              trixie: Debian 13; the rootfs carries its own kernel
#              (linux-image-amd64, 6.12), its initramfs-tools initrd, and
#              cxl/libcxl; vmlinuz and initrd.img are taken out of its /boot.
#              Nothing but QEMU is needed on the host.
#   --deb DIR  install the project from DIR/memonlined_*.deb (dpkg -i in the
#              image) instead of `make install`: the bookworm guest runs the
#              package of scripts/build-deb.sh, the trixie guest the one
#              built in a trixie chroot (scripts/check-trixie-build.sh
#              --deb DIR), since a bookworm binary links libiniparser.so.1
#              and trixie has .so.4. BUILDDIR is still needed for its tests.
#   --stub     install tests/vm/stub/memonlined (a shell stand-in for the
#              daemon) instead of the project: a self-test of the harness.
#   BUILDDIR   configured build dir of the project (or $MEMONLINED_BUILDDIR).
#              Configured with --prefix=/usr --sysconfdir=/etc --localstatedir=/var.
#   --out DIR  where to write image.raw, vmlinuz, initrd.img, image.env
#              (default: BUILDDIR/tests-vm, BUILDDIR/tests-vm-trixie for
#              trixie, or the cache dir with --no-project; or $MEMONLINED_VM_OUT).
#   --size S   ext4 image size (default 2G, 3G for trixie; sparse file).
#
# Runs unattended as root (no tty). The base rootfs made by mmdebstrap is
# cached as a tarball in ${XDG_CACHE_HOME:-$HOME/.cache}/memonlined-vm/,
# keyed by a hash of suite + package list + apt sources, so reruns only
# redo the cheap steps (extract, modules, install, mkfs). The trixie
# sources are the host's (MEMONLINED_VM_SOURCES) with bookworm replaced by
# trixie.
set -euo pipefail

HERE=$(cd "$(dirname "$0")" && pwd)
SUITE=bookworm
SOURCES=${MEMONLINED_VM_SOURCES:-/etc/apt/sources.list.d/debian.sources}
# prometheus-node-exporter scrapes the daemon's metrics textfile; curl reads
# its /metrics on the guest's loopback.
PACKAGES=(systemd-sysv udev kmod ndctl daxctl qemu-guest-agent util-linux
          procps jq libsmartcols1 libnuma1 libndctl6 libdaxctl1 libsystemd0
          libudev1 numactl prometheus-node-exporter curl)
# libiniparser changed soname: .so.1 in bookworm, .so.4 in trixie.
BOOKWORM_PACKAGES=(libiniparser1)
# trixie adds its own kernel and the CXL tools.
TRIXIE_PACKAGES=(libiniparser4 linux-image-amd64 initramfs-tools zstd cxl libcxl1)
# Its initrd holds only what finds the root disk: with MODULES=most udev
# spent 13 s of each TCG boot loading modules in the initramfs.
TRIXIE_INITRD_HOOK='echo MODULES=list > "$1/etc/initramfs-tools/conf.d/memonlined-vm.conf" &&
    printf "%s\n" virtio_pci virtio_blk ext4 >> "$1/etc/initramfs-tools/modules" &&
    chroot "$1" update-initramfs -u -k all'
HOOKS=()
# Guest kernel modules (deps are resolved from the kernel's modules.dep).
MODULES=(nfit libnvdimm nd_pmem nd_btt nd_e820 dax device_dax kmem dax_pmem
         dax_hmem virtio_mem virtio_console virtio_pci virtio_blk ext4)
CACHE=${XDG_CACHE_HOME:-$HOME/.cache}/memonlined-vm
NO_PROJECT=0
STUB=0
OUT=${MEMONLINED_VM_OUT:-}
SIZE=
BUILDDIR=${MEMONLINED_BUILDDIR:-}
DEB_DIR=

log() { echo "build-image: $*" >&2; }
die() { log "error: $*"; exit 1; }

while [ $# -gt 0 ]; do
    case "$1" in
        --suite) SUITE=$2; shift ;;
        --suite=*) SUITE=${1#--suite=} ;;
        --no-project) NO_PROJECT=1 ;;
        --stub) NO_PROJECT=1; STUB=1 ;;
        --out) OUT=$2; shift ;;
        --out=*) OUT=${1#--out=} ;;
        --size) SIZE=$2; shift ;;
        --size=*) SIZE=${1#--size=} ;;
        --deb) DEB_DIR=$2; shift ;;
        --deb=*) DEB_DIR=${1#--deb=} ;;
        -h|--help) sed -n '2,36p' "$0"; exit 0 ;;
        -*) die "unknown option $1" ;;
        *) BUILDDIR=$1 ;;
    esac
    shift
done

case "$SUITE" in
bookworm) TAG= ; : "${SIZE:=2G}"; PACKAGES+=("${BOOKWORM_PACKAGES[@]}") ;;
trixie) TAG=-trixie; : "${SIZE:=3G}"; PACKAGES+=("${TRIXIE_PACKAGES[@]}")
        HOOKS=(--customize-hook="$TRIXIE_INITRD_HOOK") ;;
*) die "unknown suite $SUITE (bookworm or trixie)" ;;
esac

[ "$(id -u)" = 0 ] || die "must run as root (mmdebstrap, ownership in mkfs.ext4 -d)"
for t in mmdebstrap mkfs.ext4 depmod modprobe tar sha256sum; do
    command -v "$t" >/dev/null || die "missing tool $t"
done

if [ "$NO_PROJECT" = 0 ]; then
    [ -n "$BUILDDIR" ] || die "give BUILDDIR (or MEMONLINED_BUILDDIR), or --no-project"
    BUILDDIR=$(cd "$BUILDDIR" && pwd)
    [ -f "$BUILDDIR/Makefile" ] || die "$BUILDDIR has no Makefile (not configured?); use --no-project"
    : "${OUT:=$BUILDDIR/tests-vm$TAG}"
elif [ "$STUB" = 1 ]; then
    : "${OUT:=$CACHE/stub$TAG}"
else
    : "${OUT:=$CACHE/noproject$TAG}"
fi
mkdir -p "$OUT" "$CACHE"
OUT=$(cd "$OUT" && pwd)

# --- guest kernel (bookworm): the Debian kernel in /boot, not uname -r ---
KVER=${MEMONLINED_VM_KVER:-}
if [ "$SUITE" = bookworm ]; then
    if [ -z "$KVER" ]; then
        KIMG=$(ls -1 /boot/vmlinuz-* 2>/dev/null | sort -V | tail -n1)
        [ -n "$KIMG" ] || die "no /boot/vmlinuz-* (apt-get install linux-image-amd64)"
        KVER=${KIMG#/boot/vmlinuz-}
    fi
    [ -f "/boot/vmlinuz-$KVER" ] || die "no /boot/vmlinuz-$KVER"
    [ -f "/boot/initrd.img-$KVER" ] || die "no /boot/initrd.img-$KVER"
    [ -d "/lib/modules/$KVER" ] || die "no /lib/modules/$KVER"
    log "guest kernel $KVER"
else
    # The host's sources, retargeted (same mirror and keyring).
    TSOURCES=$CACHE/sources-$SUITE.sources
    mkdir -p "$CACHE"
    sed 's/bookworm/'"$SUITE"'/g' "$SOURCES" > "$TSOURCES.tmp"
    mv "$TSOURCES.tmp" "$TSOURCES"
    SOURCES=$TSOURCES
fi

# --- base rootfs, cached ---
KEY=$( { echo "suite=$SUITE"; printf '%s\n' "${PACKAGES[@]}" | sort;
         grep -v '^#' "$SOURCES"; echo v1; [ ${#HOOKS[@]} = 0 ] || printf '%s\n' "${HOOKS[@]}"; } |
       sha256sum | cut -c1-16)
BASE=$CACHE/base-$SUITE-$KEY.tar
if [ -f "$BASE" ] && [ -s "$BASE" ]; then
    log "using cached base $BASE"
else
    log "mmdebstrap $SUITE -> $BASE (a few minutes)"
    inc=$(IFS=,; echo "${PACKAGES[*]}")
    mmdebstrap --variant=minbase --mode=root --include="$inc" \
        --format=tar --aptopt='Acquire::Retries "3"' ${HOOKS[@]+"${HOOKS[@]}"} \
        "$SUITE" "$BASE.tmp.tar" "$SOURCES" </dev/null
    mv "$BASE.tmp.tar" "$BASE"
fi

# --- assemble rootfs in a temp dir under OUT ---
ROOT=$OUT/rootfs
rm -rf "$ROOT"
mkdir -p "$ROOT"
trap 'rm -rf "$ROOT"' EXIT
tar -C "$ROOT" --numeric-owner -xpf "$BASE"

# Bookworm: the host's kernel, with the modules the scenarios need. No CXL:
# 6.1 cannot create CXL RAM regions (that, and their kmem default, came in 6.3).
host_kernel() {
    local mods f rel
    log "copying modules"
    mods=$( { for m in "${MODULES[@]}"; do
                modprobe -C /dev/null --ignore-install -S "$KVER" --show-depends "$m" 2>/dev/null ||
                    log "warning: no module $m"
              done; } | awk '$1=="insmod"{print $2}' | sort -u)
    for f in $mods; do
        rel=${f#/lib/modules/$KVER/}
        mkdir -p "$ROOT/lib/modules/$KVER/$(dirname "$rel")"
        cp -p "$f" "$ROOT/lib/modules/$KVER/$rel"
    done
    for f in modules.builtin modules.builtin.modinfo modules.order; do
        [ -f "/lib/modules/$KVER/$f" ] && cp -p "/lib/modules/$KVER/$f" "$ROOT/lib/modules/$KVER/"
    done
    depmod -b "$ROOT" "$KVER"
    log "$(echo "$mods" | wc -l) modules"
    KERNEL_SRC=/boot/vmlinuz-$KVER
    INITRD_SRC=/boot/initrd.img-$KVER
    CONFIG_SRC=/boot/config-$KVER
}

# Trixie: the rootfs's own kernel and the initrd initramfs-tools made for it.
rootfs_kernel() {
    local kimg
    kimg=$(ls -1 "$ROOT"/boot/vmlinuz-* 2>/dev/null | sort -V | tail -n1)
    [ -n "$kimg" ] || die "the $SUITE rootfs has no /boot/vmlinuz-*"
    KVER=${kimg##*/vmlinuz-}
    KERNEL_SRC=$ROOT/boot/vmlinuz-$KVER
    INITRD_SRC=$ROOT/boot/initrd.img-$KVER
    CONFIG_SRC=$ROOT/boot/config-$KVER
    [ -f "$INITRD_SRC" ] || die "the $SUITE rootfs has no /boot/initrd.img-$KVER"
    [ -d "$ROOT/lib/modules/$KVER" ] || die "the $SUITE rootfs has no /lib/modules/$KVER"
    log "guest kernel $KVER (from the $SUITE rootfs)"
}

if [ "$SUITE" = bookworm ]; then host_kernel; else rootfs_kernel; fi

# system configuration
echo memonlined-vm > "$ROOT/etc/hostname"
printf '127.0.0.1 localhost\n127.0.1.1 memonlined-vm\n' > "$ROOT/etc/hosts"
printf '/dev/vda / ext4 rw,errors=remount-ro 0 1\n' > "$ROOT/etc/fstab"
sed -i 's/^root:[^:]*:/root::/' "$ROOT/etc/shadow"          # password-less root
mkdir -p "$ROOT/etc/systemd/journald.conf.d"
cat > "$ROOT/etc/systemd/journald.conf.d/memonlined-test.conf" <<'EOF'
[Journal]
Storage=volatile
RateLimitIntervalSec=0
RateLimitBurst=0
ForwardToConsole=no
EOF
# Make the modules the scenarios need load early and deterministically.
cat > "$ROOT/etc/modules-load.d/memonlined-test.conf" <<'EOF'
virtio_console
nfit
nd_pmem
dax_pmem
device_dax
kmem
virtio_mem
EOF
if [ "$SUITE" != bookworm ]; then
    # CXL: the port and region drivers; cxl_pci binds QEMU's type-3 device.
    printf '%s\n' cxl_acpi cxl_pci cxl_mem cxl_port dax_cxl >> "$ROOT/etc/modules-load.d/memonlined-test.conf"
fi
# Nothing should auto-online memory in the guest except memonlined.
mkdir -p "$ROOT/etc/udev/rules.d"
for r in 40-vm-hotadd.rules 80-hotplug-cpu-mem.rules; do
    ln -sf /dev/null "$ROOT/etc/udev/rules.d/$r"
done
# Faster, quieter boot.
for u in systemd-timesyncd.service apt-daily.timer apt-daily-upgrade.timer \
         e2scrub_all.timer fstrim.timer man-db.timer ndctl-monitor.service \
         cxl-monitor.service dpkg-db-backup.timer; do
    ln -sf /dev/null "$ROOT/etc/systemd/system/$u"
done
if [ "$SUITE" != bookworm ]; then
    # systemd 257 boots slower under TCG: no gettys (the harness talks
    # through the guest agent), no DRM, and no first-boot update units
    # (ldconfig, catalog) on every boot of the snapshot disk.
    for u in getty-static.service getty.target modprobe@drm.service; do
        ln -sf /dev/null "$ROOT/etc/systemd/system/$u"
    done
    touch "$ROOT/etc/.updated" "$ROOT/var/.updated"
fi
wants=$ROOT/etc/systemd/system/multi-user.target.wants
mkdir -p "$wants"
# node_exporter runs only while a scenario scrapes it (its postinst enabled it).
rm -f "$wants/prometheus-node-exporter.service"
# qemu-guest-agent is started by udev (virtio port) via its static unit;
# also pull it in explicitly in case the rule does not fire.
mkdir -p "$ROOT/etc/systemd/system/qemu-guest-agent.service.d"
cat > "$ROOT/etc/systemd/system/qemu-guest-agent.service.d/memonlined-test.conf" <<'EOF'
[Install]
WantedBy=multi-user.target
[Unit]
ConditionPathExists=/dev/virtio-ports/org.qemu.guest_agent.0
EOF
ln -sf /lib/systemd/system/qemu-guest-agent.service "$wants/qemu-guest-agent.service"

# test helpers
install -d "$ROOT/usr/lib/memonlined-test"
install -m 0755 "$HERE"/guest/* "$ROOT/usr/lib/memonlined-test/"

# the project
if [ "$NO_PROJECT" = 0 ] && [ -n "$DEB_DIR" ]; then
    debs=("$DEB_DIR"/memonlined_*.deb)
    [ ${#debs[@]} = 1 ] && [ -f "${debs[0]}" ] || die "no single memonlined_*.deb in $DEB_DIR"
    log "dpkg -i ${debs[0]##*/} in the image"
    cp "${debs[0]}" "$ROOT/tmp/memonlined.deb"
    # The package's postinst enables the unit (deb-systemd-helper); nothing runs.
    chroot "$ROOT" dpkg -i /tmp/memonlined.deb >&2 || die "dpkg -i ${debs[0]##*/} failed in the image"
    rm -f "$ROOT/tmp/memonlined.deb"
    [ -x "$ROOT/usr/sbin/memonlined" ] || die "the package did not install /usr/sbin/memonlined"
    for t in multi-user memonlined-hotplug; do
        [ -L "$ROOT/etc/systemd/system/$t.target.wants/memonlined.service" ] ||
            die "the package did not enable memonlined.service for $t.target"
    done
    chroot "$ROOT" dpkg-query -W memonlined >&2
elif [ "$NO_PROJECT" = 0 ]; then
    log "make -C $BUILDDIR install DESTDIR=$ROOT"
    make -C "$BUILDDIR" install DESTDIR="$ROOT" >&2
    unit=
    for d in /lib/systemd/system /usr/lib/systemd/system /etc/systemd/system; do
        [ -f "$ROOT$d/memonlined.service" ] && { unit=$d/memonlined.service; break; }
    done
    [ -n "$unit" ] || die "make install did not install memonlined.service"
    [ -x "$ROOT/usr/sbin/memonlined" ] || die "make install did not install /usr/sbin/memonlined"
    # As an admin enables it: every WantedBy= (memonlined-hotplug.target too).
    systemctl --root="$ROOT" enable memonlined.service >&2 || die "systemctl enable failed in the image"
    ls -l "$ROOT/usr/sbin/memonlined" >&2
elif [ "$STUB" = 1 ]; then
    log "installing the STUB daemon (harness self-test)"
    install -m 0755 "$HERE/stub/memonlined" "$ROOT/usr/sbin/memonlined"
    install -m 0644 "$HERE/stub/memonlined.service" "$ROOT/etc/systemd/system/memonlined.service"
    ln -sf /etc/systemd/system/memonlined.service "$wants/memonlined.service"
fi

# image
log "mkfs.ext4 -d -> $OUT/image.raw ($SIZE)"
rm -f "$OUT/image.raw.tmp"
mkfs.ext4 -q -F -L memonlined-vm -E root_owner=0:0 -d "$ROOT" "$OUT/image.raw.tmp" "$SIZE" >&2
mv "$OUT/image.raw.tmp" "$OUT/image.raw"
cp -p "$KERNEL_SRC" "$OUT/vmlinuz"
cp -p "$INITRD_SRC" "$OUT/initrd.img"
# The scenarios read the kernel's built-in auto-online default from it.
rm -f "$OUT/config"
[ -f "$CONFIG_SRC" ] && cp -p "$CONFIG_SRC" "$OUT/config"
cat > "$OUT/image.env" <<EOF
SUITE=$SUITE
KVER=$KVER
IMAGE=$OUT/image.raw
KERNEL=$OUT/vmlinuz
INITRD=$OUT/initrd.img
APPEND=console=ttyS0 root=/dev/vda rw
CXL=$([ "$SUITE" != bookworm ] && [ -x "$ROOT/usr/bin/cxl" ] && echo yes || echo no)
PACKAGE=$([ -n "$DEB_DIR" ] && [ "$NO_PROJECT" = 0 ] && echo yes || echo no)
PROJECT=$([ "$NO_PROJECT" = 0 ] && echo yes || { [ "$STUB" = 1 ] && echo stub || echo no; })
EOF
log "done: $OUT/image.raw"
echo "$OUT"
