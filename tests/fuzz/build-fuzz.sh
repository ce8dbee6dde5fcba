#!/bin/sh
# Builds the fuzz harnesses in the build directory (run from there):
#   build-fuzz.sh replay SRCDIR NAME...
#       tests/fuzz/replay-NAME: the harness with replay-main.c, built with
#       $CC $CFLAGS against libmemonline.a ($LIBS): replays a corpus anywhere.
#   build-fuzz.sh libfuzzer SRCDIR "LIBRARY SOURCES" NAME...
#       tests/fuzz/fuzz-NAME: the harness and the library built with clang
#       ($CC) for libFuzzer, with ASan and UBSan.
# Only what is older than its sources (or any header) is built again.
set -eu
mode=$1
srcdir=$2
shift 2
: "${CC:?}" "${CFLAGS:=}" "${LDFLAGS:=}" "${LIBS:=}"
mkdir -p tests/fuzz
headers="$srcdir/util/*.h $srcdir/daemon/*.h $srcdir/tests/fuzz/fuzz.h config.h"

# stale TARGET DEP...: the target is missing or older than one of its deps.
stale() {
        t=$1
        shift
        [ -e "$t" ] || return 0
        for d in "$@"; do
                [ "$d" -nt "$t" ] && return 0
        done
        return 1
}

common="$srcdir/tests/fuzz/fuzz-common.c"
case $mode in
replay)
        for name in "$@"; do
                out=tests/fuzz/replay-$name
                srcs="$srcdir/tests/fuzz/fuzz-$name.c $common $srcdir/tests/fuzz/replay-main.c"
                # shellcheck disable=SC2086
                if stale "$out" $srcs libmemonline.a $headers; then
                        echo "  CCLD     $out"
                        # shellcheck disable=SC2086
                        $CC $CFLAGS -o "$out" $srcs $LDFLAGS $LIBS
                fi
        done
        ;;
libfuzzer)
        lib_sources=$1
        shift
        san="-fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer"
        mkdir -p tests/fuzz/obj
        objs=""
        rebuilt=no
        for src in $lib_sources; do
                case $src in *.c) ;; *) continue ;; esac
                obj=tests/fuzz/obj/$(echo "$src" | tr / _ | sed 's/\.c$/.o/')
                objs="$objs $obj"
                # shellcheck disable=SC2086
                if stale "$obj" "$srcdir/$src" $headers; then
                        echo "  CC       $obj"
                        # shellcheck disable=SC2086
                        $CC $CFLAGS $san -fsanitize=fuzzer-no-link -c -o "$obj" "$srcdir/$src"
                        rebuilt=yes
                fi
        done
        lib=tests/fuzz/libmemonline-fuzz.a
        if [ $rebuilt = yes ] || [ ! -e $lib ]; then
                rm -f $lib
                # shellcheck disable=SC2086
                ar rcs $lib $objs
        fi
        for name in "$@"; do
                out=tests/fuzz/fuzz-$name
                srcs="$srcdir/tests/fuzz/fuzz-$name.c $common"
                # shellcheck disable=SC2086
                if stale "$out" $srcs $lib $headers; then
                        echo "  CCLD     $out"
                        # shellcheck disable=SC2086
                        $CC $CFLAGS $san -fsanitize=fuzzer -o "$out" $srcs $lib $LDFLAGS $LIBS
                fi
        done
        ;;
*)
        echo "build-fuzz.sh: unknown mode $mode" >&2
        exit 1
        ;;
esac
