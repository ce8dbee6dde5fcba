#!/bin/bash
# The generated unit: systemd parses it without a complaint, its sandbox
# scores at most 1.6 in `systemd-analyze security`, and the sandbox still
# leaves open what the daemon needs. Prints TAP.
set -u
: "${top_builddir:=$(cd "$(dirname "$0")/../.." && pwd)}"
: "${top_srcdir:=$(cd "$(dirname "$0")/../.." && pwd)}"
: "${MEMONLINED:=$top_builddir/memonlined}"
UNIT=$top_builddir/systemd/memonlined.service
MAX_EXPOSURE=16         # tenths: 1.6

if ! command -v systemd-analyze >/dev/null; then
        echo "1..0 # SKIP systemd-analyze is not installed"
        exit 0
fi

T=$(mktemp -d /tmp/memonline-unit-XXXXXX)
trap 'rm -rf "$T"' EXIT
n=0; failed=0
ok() { n=$((n + 1)); echo "ok $n - $1"; }
not_ok() { n=$((n + 1)); failed=$((failed + 1)); echo "not ok $n - $1"; shift; printf '%s\n' "$@" | sed 's/^/# /'; }
check() { local name="$1"; shift; if "$@"; then ok "$name"; else not_ok "$name" "command: $*"; fi; }
# The value of KEY in the unit, every assignment joined by blanks.
unit_value() { sed -n "s/^$1=//p" "$UNIT" | tr '\n' ' '; }
has_word() { case " $1 " in *" $2 "*) return 0;; esac; return 1; }
not_in_unit() { ! grep -qiE "$1" "$UNIT"; }

check "the unit was generated" test -s "$UNIT"

# --- systemd-analyze security ---------------------------------------------
systemd-analyze security --offline=yes --threshold=$MAX_EXPOSURE "$UNIT" >"$T/security" 2>&1
rc=$?
score=$(sed -n 's/.*Overall exposure level for [^:]*: \([0-9.]*\).*/\1/p' "$T/security")
if [ $rc -eq 0 ] && [ -n "$score" ]; then
        ok "security exposure $score is at most 1.6"
else
        not_ok "security exposure ${score:-?} is at most 1.6" "$(grep -F '✗' "$T/security")"
fi

# --- systemd-analyze verify, against a root that holds the binaries --------
# systemd 257 checks every command whose failure counts (also
# ExecReload=/bin/kill); the daemon is the one just built.
exec_start=$(sed -n 's/^ExecStart=//p' "$UNIT")
mkdir -p "$T/root/etc/systemd/system"
cp "$UNIT" "$T/root/etc/systemd/system/"
for cmd in $(sed -n 's|^Exec[A-Za-z]*=[@:+!]*\(/[^ ]*\).*|\1|p' "$UNIT" | sort -u); do
        mkdir -p "$T/root$(dirname "$cmd")"
        if [ "$cmd" = "$exec_start" ]; then cp "$MEMONLINED" "$T/root$cmd"; else cp "$cmd" "$T/root$cmd"; fi
done
systemd-analyze verify --man=no --root="$T/root" memonlined.service >"$T/verify" 2>&1
rc=$?
if [ $rc -eq 0 ] && [ ! -s "$T/verify" ]; then
        ok "systemd-analyze verify is silent"
else
        not_ok "systemd-analyze verify is silent (rc $rc)" "$(cat "$T/verify")"
fi

# --- what the daemon needs stays open ----------------------------------------
rw=$(unit_value ReadWritePaths)
check "memory block state is writable" has_word "$rw" /sys/devices/system/memory
check "the dax bus is writable (devdax -> kmem)" has_word "$rw" -/sys/bus/dax
# ProtectSystem=strict: the metrics textfile needs Debian's collector directory, if it exists.
check "node_exporter's textfile directory is writable" has_word "$rw" -/var/lib/prometheus/node-exporter
# libdaxctl stat()s /dev/daxX.Y before converting; a private /dev lacks it.
check "/dev is the host's (dax conversion)" not_in_unit '^PrivateDevices=(yes|true|on|1)'

check "mlockall works without CAP_IPC_LOCK (LimitMEMLOCK=infinity)" \
        test "$(unit_value LimitMEMLOCK)" = "infinity "
# The allow list is @system-service minus @resources; affinity must come back
# after the deny line, or every pinned writer fails with EPERM.
filters=$(sed -n 's/^SystemCallFilter=//p' "$UNIT")
last_affinity=$(grep -n 'sched_setaffinity' <<<"$filters" | tail -1 | cut -d: -f1)
deny_resources=$(grep -n '^~.*@resources' <<<"$filters" | tail -1 | cut -d: -f1)
affinity=yes
[ -n "$deny_resources" ] && [ "${last_affinity:-0}" -lt "$deny_resources" ] && affinity=no
check "sched_setaffinity stays allowed" test $affinity = yes
has_word "$(unit_value RestrictAddressFamilies)" AF_NETLINK && netlink=yes || netlink=no
check "netlink sockets stay allowed (udev events)" test $netlink = yes
# A stuck runner starves the watchdog; the abort that follows must end in a
# kill soon, not after TimeoutStopSec, so the restart and coldplug come.
wd=$(unit_value WatchdogSec); abort=$(unit_value TimeoutAbortSec)
check "the watchdog is on (WatchdogSec=${wd% })" test -n "$wd"
check "a watchdog abort is bounded (TimeoutAbortSec=${abort% })" test "${abort% }" = "15s"
# The saved auto_online_blocks outlives a failed start and systemd giving up;
# so the rule cannot test the directory, only the daemon's marker in it.
check "the runtime directory is /run/memonlined" test "$(unit_value RuntimeDirectory)" = "memonlined "
check "it is kept for the boot (RuntimeDirectoryPreserve=yes)" test "$(unit_value RuntimeDirectoryPreserve)" = "yes "
: "${top_srcdir:=$(cd "$(dirname "$0")/../.." && pwd)}"
marker=$(sed -n 's/^#define RUNTIME_DIR_DEFAULT "\(.*\)"$/\1/p' "$top_srcdir/daemon/interface.h")/$(sed -n 's/^#define RUNTIME_MARKER "\(.*\)"$/\1/p' "$top_srcdir/daemon/interface.h")
check "the udev rule tests the daemon's marker ($marker), not the kept directory" \
        grep -q "TEST!=\"$marker\"" "$top_srcdir/udev/99-memonline.rules"

# --- disable and mask keep udev's hot-add events from starting it --------------
# The rule wants memonlined-hotplug.target; the target wants the service
# only through the link "systemctl enable" makes from its WantedBy=.
RULE=$top_srcdir/udev/99-memonline.rules
TARGET=$top_srcdir/systemd/memonlined-hotplug.target
wants=$(grep -v '^#' "$RULE" | grep -o 'SYSTEMD_WANTS}+="[^"]*"' | sort -u)
check "every add event of the rule pulls in memonlined-hotplug.target, not the service itself" \
        test "$wants" = 'SYSTEMD_WANTS}+="memonlined-hotplug.target"'
check "the service is wanted by memonlined-hotplug.target once enabled" \
        has_word "$(unit_value WantedBy)" memonlined-hotplug.target
check "stopping the service stops the target too, so the next add starts it again" \
        has_word "$(unit_value PropagatesStopTo)" memonlined-hotplug.target
check "the target itself wants nothing" bash -c '! grep -qE "^(Wants|Requires|BindsTo)=" "$1"' _ "$TARGET"
R=$T/enable-root
mkdir -p "$R/usr/lib/systemd/system"
cp "$UNIT" "$TARGET" "$R/usr/lib/systemd/system/"
links() { find "$R/etc/systemd/system" -name memonlined.service 2>/dev/null | sed "s|^$R/etc/systemd/system/||" | sort | tr '\n' ' '; }
systemctl --root="$R" enable memonlined.service >/dev/null 2>&1
check "systemctl enable links the service into multi-user.target and memonlined-hotplug.target" \
        test "$(links)" = "memonlined-hotplug.target.wants/memonlined.service multi-user.target.wants/memonlined.service "
systemctl --root="$R" disable memonlined.service >/dev/null 2>&1
check "systemctl disable removes both: a hot-add no longer starts it" test -z "$(links)"
systemd-analyze verify --man=no --root="$R" memonlined-hotplug.target >"$T/verify-target" 2>&1
check "systemd-analyze verify of the target is silent" test ! -s "$T/verify-target"

# status run by any user reads the progress file (0644) in the runtime directory.
check "the runtime directory is open to all (RuntimeDirectoryMode=0755)" test "$(unit_value RuntimeDirectoryMode)" = "0755 "

echo "1..$n"
[ $failed -eq 0 ]
