#!/bin/bash
# as-user: yes
# How the supervisor looks on terminals unlike the author's: no colour at
# all under NO_COLOR and --no-color, a theme's background on every cell,
# red and green outcomes on an 8-colour terminal, plain ASCII under a
# locale that is not UTF-8, dialogs that fit 80 columns.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/tmux.sh"

mkdir -p "$WORK/s"
cat >"$WORK/s/slow.jsonl" <<'EOF'
{"content": "Slow.", "tool_calls": [{"name": "bash", "arguments": {"command": "echo a-rather-long-command-line-that-goes-on-and-on-and-on; sleep 60"}}]}
{"content": "after the slow one"}
EOF
echo '{"content": "quick answer"}' >"$WORK/s/quick.jsonl"
cat >"$WORK/s/outcomes.jsonl" <<'EOF'
{"content": "One that works.", "tool_calls": [{"name": "bash", "arguments": {"command": "echo works-fine"}}]}
{"content": "One that fails.", "tool_calls": [{"name": "bash", "arguments": {"command": "echo failing-now; exit 3"}}]}
{"content": "outcomes done"}
EOF

# raw NAME ENV ARGS: proctor's own bytes to the terminal, as tmux receives
# them (capture-pane -e adds default-colour resets of its own)
raw_start() {
        local name=$1
        shift
        start "$name" 100x30 "sleep 0.5; $*"
        $T pipe-pane -t "$name" -o "cat >'$WORK/$name.raw'"
}
# SGR parameters that set a colour: 30-49, 90-107, 38;/48; forms
COLOR_SGR=$'\e\\[([0-9;]*;)?(3[0-9]|4[0-9]|9[0-7]|10[0-7])(;[0-9;:]*)?m'

# ---- NO_COLOR and --no-color: attributes only, not one colour ----
n=nc0
for how in "NO_COLOR=1 TERM=xterm-256color $PROCTOR" "TERM=xterm-256color $PROCTOR --no-color"; do
        n=nc$((${n#nc} + 1))
        raw_start "$n" "$how"
        expect_screen "$n" "Where should this session's tools run" "setup screen under: $how"
        sleep 0.3
        check "no colour sequence sent under: $how" \
                sh -c "! grep -aEq '$COLOR_SGR' '$WORK/$n.raw'"
        check "attributes still sent under: $how" grep -aq $'\e\\[0;1;7m' "$WORK/$n.raw"
        expect_no_match "no colour on the screen under: $how" '\[(3[0-8]|4[0-8]|9[0-7]|10[0-7])(;|m)' \
                "$(colors "$n")"
done

# ---- a theme's background on blank cells too ----
# A terminal without bce, so that tmux keeps the colour of cleared cells
# where capture-pane can show it. blank_row NAME: the first all-blank row
# below the header, with its colours
# (capture-pane -e carries colours from row to row: one row alone starts
# from none). row NAME REGEX: the first row matching REGEX, with its colours
row_of() {
        local r
        r=$(screen "$1" | awk -v re="$2" 'NR > 2 && $0 ~ re { print NR - 1; exit }')
        [ -n "$r" ] && $T capture-pane -N -e -p -t "$1" -S "$r" -E "$r"
}
blank_row() { row_of "$1" '^ *$'; }
start lt 100x30 "TERM=screen-256color $PROCTOR --theme light"
expect_screen lt "Where should this session's tools run" "the light theme's setup screen"
expect_match "the light theme paints blank rows with its background (#fafafa)" \
        $'^\e\\[38;5;[0-9]+m\e\\[48;5;231m {100}$' "$(blank_row lt)"
expect_match "the light theme paints the margin of text rows" \
        $'^\e\\[38;5;[0-9]+m\e\\[48;5;231m  model' "$(row_of lt 'model ')"
start dk 100x30 "TERM=screen-256color $PROCTOR"
expect_screen dk "Where should this session's tools run" "the default theme's setup screen"
expect_match "the default theme paints blank rows with its background (#1c1e22)" \
        $'^\e\\[38;5;[0-9]+m\e\\[48;5;234m {100}$' "$(blank_row dk)"

# ---- 8 colours: failures still red, successes still green ----
start e8 160x30 "TERM=xterm $PROCTOR --approval never --mode local --model script:$WORK/s/outcomes.jsonl"
$T send-keys -t e8 "go" Enter
expect_screen e8 "outcomes done" "the outcomes session ends" 20
expect_match "8 colours: a failed call is red" $'\e\\[(1;)?31m[^\e]*(error|exit)' "$(row_of e8 'echo failing-now')"
expect_match "8 colours: a call that worked is green" $'\e\\[(1;)?32m[^\e]*ok' "$(row_of e8 'echo works-fine')"
expect_match "8 colours: the failed mark is red" $'\e\\[31m\x0f?x\e' "$(row_of e8 'echo failing-now')"

# ---- a locale that is not UTF-8: ASCII only, every pane intact ----
# intact NAME: each row between a box's top and bottom edge has its side
# borders where the top edge has its corners (a character drawn several
# cells wide pushes them out of place)
intact() {
        screen "$1" | "$T_PY" -c '
import sys
rows = sys.stdin.read().split("\n")
top = next(i for i, r in enumerate(rows) if r.startswith("lq"))
bottom = next(i for i, r in enumerate(rows) if i > top and r.startswith("mq"))
t = rows[top]
# corners, not letters of a title: "l" opens the row or follows a "k"
edges = [i for i, ch in enumerate(t) if (ch == "l" and (i == 0 or t[i - 1] == "k"))
         or (ch == "k" and (i + 1 == len(t) or t[i + 1] == "l"))]
bad = [r for r in rows[top + 1:bottom] if any(len(r) <= e or r[e] not in "x|" for e in edges)]
if bad: print("edges at %s" % edges)
for r in bad[:3]:
    print("bad: " + r)
sys.exit(1 if bad or len(edges) < 2 else 0)'
}
# ascii_only NAME: nothing beyond ASCII, and none of the "~V" or "M-b"
# ncurses draws for a byte it cannot show
ascii_only() {
        local s
        s=$(screen "$1")
        ! printf '%s' "$s" | LC_ALL=C grep -q $'[\x80-\xff]' &&
                ! printf '%s' "$s" | grep -Eq '~[@-_]|M-[a-z^]'
}
start lc 120x30 "LANG=C LC_ALL=C $PROCTOR --mode local"
expect_screen lc "Where should this session's tools run" "the setup screen under LANG=C"
check "LANG=C: the setup screen is ASCII only" ascii_only lc
expect_screen lc "or a click; fixed [a-z ]*\.\.\.$" "LANG=C: a cut line ends in three dots"
$T send-keys -t lc "go" Enter
expect_screen lc "cpu +[0-9]+% +[_.:=+*#-]+ " "LANG=C: the CPU graph in ASCII" 20
expect_screen lc "mem [0-9.]+[BKMG]/- +[_.:=+*#-]+ " "LANG=C: the memory graph in ASCII"
expect_screen lc "\+ (bash|run_python_c|write|read)[^ ]*\.\.\. " "LANG=C: cut summaries end in three dots"
check "LANG=C: the live view is ASCII only" ascii_only lc
check "LANG=C: every pane keeps its borders" intact lc
$T send-keys -t lc Tab Enter
expect_screen lc "tool call call_[0-9]+ \(Esc closes\)" "LANG=C: the details of a call"
check "LANG=C: the details are ASCII only" ascii_only lc
check "LANG=C: the details keep their borders" intact lc

# ---- confirmations fit: the keys always show whole, 80x24 and wider ----
for size in 80x24 160x48; do
        d=dlg${size%x*}
        start "$d" "$size" "$PROCTOR --approval never --mode local --model script:$WORK/s/slow.jsonl"
        $T send-keys -t "$d" "go" Enter
        expect_screen "$d" "host: 1 running" "$size: the slow call runs"
        $T send-keys -t "$d" k
        expect_screen "$d" "Kill execution #1 \(bash: echo a-rather-long" "$size: k asks, naming the call"
        expect_screen "$d" "y kills \(SIGKILL\), t SIGTERM first \(SIGKILL 5 s on\), n/Esc cancel " \
                "$size: the kill dialog shows its keys whole"
        $T send-keys -t "$d" n
        $T send-keys -t "$d" K
        expect_screen "$d" "Kill all 1 running executions\?" "$size: K asks"
        expect_screen "$d" "y kills, n/Esc cancel " "$size: the kill-all dialog shows its keys whole"
        $T send-keys -t "$d" Escape
        $T send-keys -t "$d" q
        expect_screen "$d" "Quit and kill everything\?" "$size: q asks while the session runs"
        expect_screen "$d" "y quits, n/Esc stay " "$size: the quit dialog shows its keys whole"
        sleep 0.3 # a y typed ahead of the dialog does not count
        $T send-keys -t "$d" y
        expect_screen "$d" "EXITED 0" "$size: y quits"
done

# ---- the session's clock and its trace start with the session ----
st=$WORK/state
start clk 120x30 "XDG_STATE_HOME=$st $PROCTOR --approval never --mode local --model script:$WORK/s/quick.jsonl"
expect_screen clk "Where should this session's tools run" "the setup screen, left a while"
sleep 3
check "no trace file while the setup screen waits" \
        sh -c "! ls '$st'/proctor/sessions/*.jsonl >/dev/null 2>&1"
$T send-keys -t clk "go" Enter
expect_screen clk "quick answer" "the quick session runs"
expect_screen clk "completed +[0-9]+ms " "the clock counts from the start, not from the setup screen"
trace=$(ls "$st"/proctor/sessions/*.jsonl 2>/dev/null | head -1)
check "the trace is made when the session starts" test -s "$trace"
expect_eq "the trace's first event is the session's start" session.start \
        "$(head -1 "$trace" | json_field session.start type)"
check "the trace's clock starts at the session's start" \
        test "$(head -1 "$trace" | json_field session.start t_ms)" -lt 1000
$T send-keys -t clk q
expect_screen clk "EXITED 0" "quit after the quick session"
rm -rf "$st"
start qs 120x30 "XDG_STATE_HOME=$st $PROCTOR --mode local"
expect_screen qs "Where should this session's tools run" "another setup screen"
$T send-keys -t qs F10
expect_screen qs "EXITED 0" "F10 on the setup screen quits"
check "quitting from the setup screen leaves no trace file" \
        sh -c "! ls '$st'/proctor/sessions/*.jsonl >/dev/null 2>&1"

finish
