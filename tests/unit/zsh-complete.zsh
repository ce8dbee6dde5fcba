#!/bin/zsh -f
# zsh-complete.zsh FPATH_DIR LINE PATTERN: type LINE and Tab twice into an
# interactive zsh with FPATH_DIR's completions; exit 0 once the terminal
# output matches PATTERN (a zsh glob), 1 after 10 s without.
zmodload zsh/zpty zsh/datetime || exit 2
zpty z zsh -f -i || exit 2
zpty -w z "PS1='> '; fpath=(${(q)1} \$fpath); autoload -U compinit; compinit -u -D; LISTMAX=1000; print READ\"\"Y"
out=""
deadline=$(( EPOCHREALTIME + 10 ))
while [[ $out != *READY* ]] && (( EPOCHREALTIME < deadline )); do
        zpty -r -t z chunk && out+=$chunk || sleep 0.05
done
zpty -w -n z "$2"$'\t'
sleep 0.5
zpty -w -n z $'\t'  # a second Tab lists what the first only narrowed down
out=""
while (( EPOCHREALTIME < deadline )); do
        if zpty -r -t z chunk; then
                out+=$chunk
                [[ $out == ${~3} ]] && { zpty -d z; exit 0; }
        else
                sleep 0.05
        fi
done
print -r -- "${(V)out}"
zpty -d z
exit 1
