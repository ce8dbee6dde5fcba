#!/bin/sh
# Creates one of the corpus cases that cannot be committed as a file:
#   make-special.sh NAME PATH
# NAME is a MANIFEST name starting with @; PATH is where the config goes
# (its directory must exist). Exits 77 when this system cannot make it.
set -eu
name=$1
path=$2
case $name in
@directory) mkdir "$path" ;;
@fifo) mkfifo "$path" ;;
@device-node) ln -s /dev/null "$path" ;;
@dangling-link) ln -s "$(basename "$path").nowhere" "$path" ;;
# Sparse: over the size limit without writing it.
@oversize) truncate -s 2M "$path" ;;
# Permission denied needs a reader without CAP_DAC_OVERRIDE: see check-corpus.sh.
@unreadable) printf '[daemon]\nsettle_ms = 10\n' >"$path" && chmod 000 "$path" ;;
@missing) rm -f "$path" ;;
@dropin-fifo)
        printf '[daemon]\nsettle_ms = 10\n' >"$path"
        mkdir "$path.d"
        printf '[daemon]\nretries = 3\n' >"$path.d/10-ok.conf"
        mkfifo "$path.d/20-fifo.conf"
        ;;
@dropin-dir-is-file)
        printf '[daemon]\nsettle_ms = 10\n' >"$path"
        printf 'not a directory\n' >"$path.d"
        ;;
# Who may write the policy: root alone (see memonlined.conf(5)).
@world-writable) printf '[daemon]\nsettle_ms = 10\n' >"$path" && chmod 666 "$path" ;;
@group-writable) printf '[daemon]\nsettle_ms = 10\n' >"$path" && chmod 664 "$path" ;;
@foreign-owner)
        [ "$(id -u)" -eq 0 ] || exit 77
        printf '[daemon]\nsettle_ms = 10\n' >"$path"
        chown 65534:65534 "$path"
        ;;
@dropin-writable)
        printf '[daemon]\nsettle_ms = 10\n' >"$path"
        mkdir "$path.d"
        printf '[daemon]\nretries = 3\n' >"$path.d/10-open.conf"
        chmod 646 "$path.d/10-open.conf"
        ;;
@dropin-dir-writable | @dropin-dir-sticky)
        printf '[daemon]\nsettle_ms = 10\n' >"$path"
        mkdir "$path.d"
        printf '[daemon]\nretries = 3\n' >"$path.d/10-ok.conf"
        if [ "$name" = @dropin-dir-sticky ]; then chmod 1777 "$path.d"; else chmod 777 "$path.d"; fi
        ;;
# A linked drop-in is judged by its target and the target's directory.
@dropin-link-writable | @dropin-link-dir-writable | @dropin-link-safe)
        printf '[daemon]\nsettle_ms = 10\n' >"$path"
        mkdir -p "$path.d/open"
        printf '[daemon]\nretries = 3\n' >"$path.d/open/target.txt"
        ln -s open/target.txt "$path.d/50-link.conf"
        case $name in
        @dropin-link-writable) chmod 666 "$path.d/open/target.txt" ;;
        @dropin-link-dir-writable) chmod 777 "$path.d/open" ;;
        esac
        ;;
*)
        echo "make-special.sh: unknown case $name" >&2
        exit 2
        ;;
esac
