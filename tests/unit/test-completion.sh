#!/bin/bash
# The bash completion: sources shell-completion/bash/memonlined, fills
# COMP_WORDS as bash would and checks COMPREPLY. Every long option that
# "memonlined [report|status] --help" prints must be offered. Prints TAP.
set -u
: "${top_srcdir:=$(cd "$(dirname "$0")/../.." && pwd)}"
: "${MEMONLINED:=$(cd "$(dirname "$0")/../.." && pwd)/memonlined}"

T=$(mktemp -d /tmp/memonline-completion-XXXXXX)
trap 'rm -rf "$T"' EXIT
n=0; failed=0
ok() { n=$((n + 1)); echo "ok $n - $1"; }
not_ok() { n=$((n + 1)); failed=$((failed + 1)); echo "not ok $n - $1"; shift; printf '%s\n' "$@" | sed 's/^/# /'; }

# shellcheck source=/dev/null
. "$top_srcdir/shell-completion/bash/memonlined"

# complete WORD...: COMPREPLY for the command line WORD... (the last word is
# the one being completed; "=" is a word of its own, as bash splits it).
complete_words() {
        COMP_WORDS=("$@")
        COMP_CWORD=$(($# - 1))
        COMPREPLY=()
        _memonlined
        printf '%s\n' "${COMPREPLY[@]}" | sort
}
# expect NAME "WANTED REPLIES" WORD...: the replies are exactly these.
expect() {
        local name=$1 want got
        want=$(printf '%s\n' $2 | sort)
        shift 2
        got=$(complete_words "$@")
        if [ "$got" = "$want" ]; then ok "$name"; else not_ok "$name" "want: $(echo $want)" "got:  $(echo $got)"; fi
}
# offers NAME "WORDS" WORD...: the replies include each of WORDS.
offers() {
        local name=$1 w got missing=""
        local -a words
        read -ra words <<<"$2"
        shift 2
        got=" $(complete_words "$@" | tr '\n' ' ') "
        for w in "${words[@]}"; do
                [[ $got == *" $w "* ]] || missing="$missing $w"
        done
        if [ -z "$missing" ]; then ok "$name"; else not_ok "$name" "missing:$missing" "got:$got"; fi
}

# A fake sysfs with two dax devices and two nodes.
mkdir -p "$T/sys/bus/dax/devices/dax0.0" "$T/sys/bus/dax/devices/dax1.0" \
        "$T/sys/devices/system/node/node0" "$T/sys/devices/system/node/node1"
export MEMONLINED_SYSFS_ROOT=$T/sys

expect "subcommands" "report status" memonlined ""
expect "a subcommand from its prefix" "report" memonlined re
expect "--log-target values" "auto journal console" memonlined --log-target ""
expect "--log-target=VALUE" "journal" memonlined --log-target = j
expect "dax device names from sysfs" "dax0.0 dax1.0" memonlined report --device ""
expect "nodes from sysfs" "0 1" memonlined report --node ""
expect "no subcommand after a subcommand" "" memonlined status re
expect "report options are not the daemon's" "" memonlined report --onc

# Config files and directories, relative to the working directory.
mkdir -p "$T/cwd/conf.d" && touch "$T/cwd/memonlined.conf"
cd "$T/cwd" || exit 1
expect "--config completes files" "memonlined.conf" memonlined --config memo
expect "-c completes files" "memonlined.conf" memonlined -c memo
expect "status --config=FILE" "memonlined.conf" memonlined status --config = memo
expect "--sysfs-root completes directories only" "conf.d" memonlined --sysfs-root ""
cd - >/dev/null || exit 1

# Every long option of every command's --help is offered.
for cmd in "" report status; do
        # shellcheck disable=SC2086
        help=$("$MEMONLINED" $cmd --help 2>&1)
        # Option lines: "  -c --config FILE", "     --json".
        long=$(sed -nE 's/^ +(-[A-Za-z] +)?(--[a-z][a-z-]*).*/\2/p' <<<"$help" | sort -u | tr '\n' ' ')
        # status offers "--config=" for options that take a value.
        # shellcheck disable=SC2086
        got=" $(complete_words memonlined $cmd -- | tr -d '=' | tr '\n' ' ') "
        missing=""
        for o in $long; do [[ $got == *" $o "* ]] || missing="$missing $o"; done
        if [ -n "$long" ] && [ -z "$missing" ]; then
                ok "every option of 'memonlined ${cmd:+$cmd }--help' is offered"
        else
                not_ok "every option of 'memonlined ${cmd:+$cmd }--help' is offered" "missing:${missing:- (no options parsed)}"
        fi
done
offers "short options of status" "-o -J -r -n -b -h" memonlined status -

# status -o [TABLE:]LIST and --tables LIST.
offers "status -o: node columns and table prefixes" \
        "NODE WRITER-CPUS OFFLINE-SIZE nodes: devices: dax: cxl: memdevs: nvdimm: namespaces:" \
        memonlined status -o ""
expect "status -o: the last item of a list" "NODE,CPUS NODE,CPULESS" memonlined status -o NODE,CP
expect "status -o: +LIST" "+OFFLINE +OFFLINE-SIZE" memonlined status --output = +OFF
expect "status -o TABLE:COL" "devices:REMOVABLE devices:RANGE" memonlined status -o devices:R
expect "status -o TABLE:COL, split at the colon" "REMOVABLE RANGE" memonlined status -o devices : R
expect "status --output=TABLE:LIST, split" "DEVICE,DECODER" memonlined status --output = dax : DEVICE,DEC
expect "status -o TABLE:, split" \
        "$(echo DEVICE MODE STATE SIZE NODE BLOCKS ONLINE NAMESPACE REGION CXL-REGION DECODER MEMDEVS BADBLOCKS)" \
        memonlined status -o dax :
expect "status --tables" "nodes,dax nodes,devices" memonlined status --tables = nodes,d
# Every column "status --help" lists, per table.
help=$("$MEMONLINED" status --help 2>&1)
for table in nodes devices dax cxl memdevs nvdimm namespaces; do
        want=$(awk -v t="(-o $table:LIST" 'index($0, t) { on = 1; next } /^$/ { on = 0 } on { print $1 }' <<<"$help" |
                sort | tr '\n' ' ')
        got=$(complete_words memonlined status -o "$table:" | sed "s/^$table://" | sort | tr '\n' ' ')
        if [ -n "$want" ] && [ "$want" = "$got" ]; then
                ok "status -o $table: offers every column --help lists"
        else
                not_ok "status -o $table: offers every column --help lists" "want: $want" "got:  $got"
        fi
done
offers "short options of the daemon" "-c -V -h" memonlined -
offers "short options of report" "-D -S -U -b -V -h" memonlined report -
offers "short options of status" "-o -J -r -n -b -V -h" memonlined status -

# zsh: an interactive zsh in a pty, Tab pressed, the listing read back.
zsh_offers() {  # NAME LINE PATTERN
        if ! command -v zsh >/dev/null; then
                n=$((n + 1)); echo "ok $n - zsh: $1 # SKIP zsh is not installed"
                return
        fi
        if out=$(timeout 30 zsh -f "$top_srcdir/tests/unit/zsh-complete.zsh" \
                        "$top_srcdir/shell-completion/zsh" "$2" "$3" 2>&1); then
                ok "zsh: $1"
        else
                not_ok "zsh: $1" "$out"
        fi
}
zsh_offers "subcommands" "memonlined " "*report*summarise*status*"
zsh_offers "--log-target values" "memonlined --log-target " "*auto*console*journal*"
zsh_offers "dax device names" "memonlined report --device " "*dax0.0*dax1.0*"
zsh_offers "status options" "memonlined status --" "*--no-daemon*--rules-dir*"
zsh_offers "status columns of a table" "memonlined status -o devices:" "*KIND*REMOVABLE*"
zsh_offers "status tables" "memonlined status --tables=" "*cxl*devices*namespaces*nvdimm*dax*memdevs*nodes*"

echo "1..$n"
[ $failed -eq 0 ]
