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
*)
        echo "make-special.sh: unknown case $name" >&2
        exit 2
        ;;
esac
