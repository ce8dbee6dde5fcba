#!/bin/bash
# make install DESTDIR= keeps an admin's /etc/memonlined.conf: a first
# install puts the shipped policy there, a later one over an edited file
# leaves it and writes memonlined.conf.new beside it, make uninstall keeps
# the edited one. Runs make install in the build tree. Prints TAP.
set -u
: "${top_srcdir:=$(cd "$(dirname "$0")/../.." && pwd)}"
: "${top_builddir:=$top_srcdir}"

T=$(mktemp -d /tmp/memonline-install-XXXXXX)
trap 'rm -rf "$T"' EXIT
n=0; failed=0
ok() { n=$((n + 1)); echo "ok $n - $1"; }
not_ok() { n=$((n + 1)); failed=$((failed + 1)); echo "not ok $n - $1"; shift; printf '%s\n' "$@" | sed 's/^/# /'; }
check() { local name="$1"; shift; if "$@"; then ok "$name"; else not_ok "$name" "command: $*"; fi; }

SHIPPED=$top_srcdir/conf/memonlined.conf
sysconfdir=$(sed -n 's/^sysconfdir = //p' "$top_builddir/Makefile")
prefix=$(sed -n 's/^prefix = //p' "$top_builddir/Makefile")
sysconfdir=${sysconfdir//\$\{prefix\}/$prefix}
CONF=$T/root$sysconfdir/memonlined.conf
# Alone: the make running this test must not hand its jobs and flags on.
run_make() { env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL make -C "$top_builddir" "$@" DESTDIR="$T/root" >"$T/make.log" 2>&1; }

run_make install
check "make install DESTDIR= succeeds" test $? -eq 0
check "a first install puts the shipped policy in $sysconfdir" cmp -s "$SHIPPED" "$CONF"
check "and nothing beside it" test ! -e "$CONF.new"

printf '\n[zones]\ndefault = online_kernel   # the admin\x27s\n' >> "$CONF"
cp "$CONF" "$T/edited"
run_make install
check "a second install over an edited policy succeeds" test $? -eq 0
check "the edited policy is kept" cmp -s "$T/edited" "$CONF"
check "the shipped policy goes beside it as memonlined.conf.new" cmp -s "$SHIPPED" "$CONF.new"
check "make install says so" grep -q "memonlined.conf differs from the shipped policy and is kept" "$T/make.log"

cp "$SHIPPED" "$CONF"
run_make install
check "over the shipped policy: installed as it is" cmp -s "$SHIPPED" "$CONF"
check "a stale memonlined.conf.new goes" test ! -e "$CONF.new"

printf '# edited\n' >> "$CONF"
run_make install
run_make uninstall
check "make uninstall succeeds" test $? -eq 0
check "make uninstall keeps an edited policy" test -s "$CONF"
check "and removes memonlined.conf.new" test ! -e "$CONF.new"
cp "$SHIPPED" "$CONF"
run_make uninstall
check "make uninstall removes the policy as shipped" test ! -e "$CONF"
left=$(find "$T/root" -type f | head -5)
check "and leaves no file behind" test -z "$left"

echo "1..$n"
[ $failed -eq 0 ]
