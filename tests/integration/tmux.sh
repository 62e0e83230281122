# Helpers for the supervisor's end-to-end tests: proctor in a detached tmux
# server of the test's own, its screen read back with capture-pane.
# Sourced after lib.sh.
command -v tmux >/dev/null || { echo "tmux missing"; exit 1; }
SOCK=$WORK/tmux.sock
T="tmux -S $SOCK"
at_exit "$T kill-server 2>/dev/null"

# start NAME COLSxROWS ARGS...: proctor in a fresh tmux session; when it
# exits the pane stays, showing "EXITED <status>"
start() {
        local name=$1 size=$2
        shift 2
        $T new-session -d -s "$name" -x "${size%x*}" -y "${size#*x}" \
                "cd '$WORK' && $* ; echo EXITED \$?; sleep 60"
}
screen() { $T capture-pane -p -t "$1"; }
# wait_for NAME REGEX [SECONDS]: until the screen matches
wait_for() {
        local i n=$(( ${3:-10} * 10 ))
        for i in $(seq $n); do
                screen "$1" | grep -Eq -- "$2" && return 0
                sleep 0.1
        done
        return 1
}
expect_screen() { if wait_for "$1" "$2" "${4:-10}"; then pass; else fail "$3"; screen "$1" | head -20; fi; }

# colors NAME: the SGR sequences on the screen, one per line
colors() { $T capture-pane -e -p -t "$1" | grep -ao $'\e\\[[0-9;:]*m' | tr -d '\033'; }
# click NAME X Y [BUTTON]: a mouse press and release at column X, row Y
# (0-based), in the X10 encoding the terminal description announces;
# BUTTON 0 is the left button, 64 the wheel up, 65 the wheel down
click() {
        local b=${4:-0}
        local cb cx cy cr
        cb=$(printf "\\$(printf %o $((32 + b)))")
        cx=$(printf "\\$(printf %o $((33 + $2)))")
        cy=$(printf "\\$(printf %o $((33 + $3)))")
        cr=$(printf "\\$(printf %o $((32 + 3)))")
        if [ "$b" -ge 64 ]; then
                $T send-keys -t "$1" -l $'\e[M'"$cb$cx$cy"
        else
                $T send-keys -t "$1" -l $'\e[M'"$cb$cx$cy"$'\e[M'"$cr$cx$cy"
        fi
}
# tree NAME: command lines of every process under the tmux pane NAME
tree() {
        local todo kids p out=""
        todo=$($T display -p -t "$1" '#{pane_pid}')
        while [ -n "$todo" ]; do
                kids=""
                for p in $todo; do
                        out="$out$(tr '\0' ' ' <"/proc/$p/cmdline" 2>/dev/null)
"
                        kids="$kids $(pgrep -P "$p" | tr '\n' ' ')"
                done
                todo=$(echo $kids)
        done
        printf '%s' "$out"
}
