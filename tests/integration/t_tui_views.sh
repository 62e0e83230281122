#!/bin/bash
# The supervisor in a real terminal, beyond the basics of t_tui.sh: the
# detail view (streamed output followed and scrolled, an execution's
# limits and graphs), the mouse, suspending with Ctrl-Z and resuming, the
# colour depth picked from the terminal description, and user themes.
# lock: demo (its local mode writes the host's /tmp/proctor-demo.txt)
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/tmux.sh"

mkdir -p "$WORK/s"
cat >"$WORK/s/stream.jsonl" <<'EOF'
{"content": "Streaming.", "tool_calls": [{"name": "bash", "arguments": {"command": "for i in $(seq 1 40); do echo line-$i; sleep 0.1; done; seq 1000 1300"}}]}
{"content": "Second.", "tool_calls": [{"name": "bash", "arguments": {"command": "echo second-call-output"}}]}
{"content": "Stream done."}
EOF
echo '{"content": "quick answer"}' >"$WORK/s/quick.jsonl"
cat >"$WORK/s/wide.jsonl" <<'EOF'
{"content": "Wide and broken text.", "tool_calls": [{"name": "bash", "arguments": {"command": "printf '\\345\\267\\245\\345\\205\\267 wide-start \\377\\376 wide-end\\n'"}}]}
{"content": "done with wide"}
EOF
# cols NAME REGEX: the display width of the first screen row matching REGEX
# (East Asian wide and fullwidth characters take two columns)
cols() {
        screen "$1" | "$T_PY" -c '
import sys, re, unicodedata
for line in sys.stdin.read().splitlines():
    if re.search(sys.argv[1], line):
        print(sum(2 if unicodedata.east_asian_width(c) in "WF" else 1 for c in line))
        break' "$2"
}

# the detail view of a running call follows its output as it streams
start a 160x48 "$PROCTOR --mode sandbox --model script:$WORK/s/stream.jsonl"
$T send-keys -t a "go" Enter
expect_screen a "bash: for i in" "the streaming call appears"
$T send-keys -t a Tab
$T send-keys -t a Enter
expect_screen a "tool call call_1 \(Esc closes\)" "Enter opens the call's details"
expect_screen a "arguments \{\"command\":\"for i in" "the details show the arguments"
expect_screen a "ran in +#1 sandbox" "the details name the sandbox it runs in"
expect_screen a "output of call_1: .*following" "the output section follows the stream"
expect_screen a "│ line-3 " "streamed output shows while the call runs"
expect_screen a "│ line-2[0-9] " "later output arrives in the open view" 10
expect_screen a "│ 1300 " "the view follows to the last line" 20
expect_screen a "lines [0-9]+-341 of 341, following" "the rule counts the lines shown"
check "the first lines scrolled out of a following view" sh -c "! $T capture-pane -p -t a | grep -q '│ line-1 '"
$T send-keys -t a Home
expect_screen a "│ line-1 " "Home scrolls to the first line"
expect_screen a "lines 1-[0-9]+ of 341, End follows" "scrolled up, the view stops following"
$T send-keys -t a NPage
expect_screen a "lines (2[0-9]|[3-9][0-9])-[0-9]+ of 341" "PgDn scrolls down"
$T send-keys -t a End
expect_screen a "│ 1300 " "End follows the tail again"
expect_screen a "SANDBOX \(isolated\) +completed" "the session completes" 20

# an execution's details: limits, the final numbers, the graphs. Esc, Tab
# and Home arrive together, before a frame: the executions pane was last
# drawn before the second execution began, and Home still means its first
# row, not the newest (followed again at the next frame)
$T send-keys -t a Escape Tab Home
expect_screen a "sandboxes \[1/2\]" "Home right after the details close selects the first execution"
$T send-keys -t a Enter
expect_screen a "execution #1 \(Esc closes\)" "Enter on an execution opens its details"
expect_screen a "sandbox +exited +pid [0-9]+ +for call_1: bash: for i in" "the execution names its call"
expect_screen a "limits +memory 512M +cpu 5s +pids 128 +wall 120s +/tmp 64M +output 1M" \
        "the execution's limits are shown"
expect_screen a "ended +exited +exit 0 .*wall [0-9.]+s +cpu [0-9]+ms +peak [0-9.]+[BKM]" \
        "the final numbers are shown"
expect_screen a "│ cpu [0-9.]+m?s +(▁|▂|▃|▄|▅|▆|▇|█){5}" "the CPU history graph is drawn"
expect_screen a "│ peak [0-9.]+[BKM]/512M +(▁|▂|▃|▄|▅|▆|▇|█){5}" "the memory history graph is drawn"
expect_screen a "output of call_1" "the execution's call output is there"
$T send-keys -t a Escape
expect_screen a "sandboxes" "Esc goes back to the panes"
sleep 0.3

# the mouse: a click selects a row, a second click opens it, the wheel scrolls
click a 70 4
click a 70 4
expect_screen a "tool call call_2 \(Esc closes\)" "clicking a tool call twice opens it"
expect_screen a "│ second-call-output" "the clicked call's output is shown"
$T send-keys -t a Escape
sleep 0.3 # an Esc right before a mouse report would read as one sequence
click a 70 3
click a 70 3
expect_screen a "tool call call_1 \(Esc closes\)" "clicking another row opens that call"
click a 70 20 64
expect_screen a "of 341, End follows" "the wheel scrolls the details up"
$T send-keys -t a Escape
sleep 0.3
click a 120 3
sleep 0.3 # a key inside the double-click interval would race the click
$T send-keys -t a Enter
expect_screen a "execution #1 \(Esc closes\)" "a click in the executions pane selects there"
$T send-keys -t a Escape q
expect_screen a "EXITED 0" "quit after the views"

# Ctrl-Z gives the shell back with the screen restored; fg resumes and
# input still works
$T new-session -d -s z -x 120 -y 40 "bash --norc --noprofile"
$T send-keys -t z "cd '$WORK' && PS1='shell> ' && $PROCTOR" Enter
expect_screen z "Where should this session's tools run" "the supervisor starts from a shell"
$T send-keys -t z C-z
expect_screen z "Stopped" "Ctrl-Z suspends the supervisor"
check "suspended, the terminal is out of the alternate screen" \
        sh -c "! $T display -p -t z '#{alternate_on}' | grep -q 1"
$T send-keys -t z "fg" Enter
expect_screen z "Where should this session's tools run" "fg redraws the supervisor"
check "resumed, back in the alternate screen" sh -c "$T display -p -t z '#{alternate_on}' | grep -q 1"
$T send-keys -t z F2
expect_screen z "\[x\] sandbox" "keys work after resuming"
$T send-keys -t z F10
expect_screen z "^shell>$" "q after resuming gives the shell back"

# the demo in local mode: processes, not sandboxes; the runaway killed by hand
start l 160x48 "$PROCTOR"
expect_screen l "\[x\] local" "the demo starts from local mode"
$T send-keys -t l "tour please" Enter
expect_screen l "LOCAL \(not isolated\)" "the header warns: local"
expect_screen l "processes" "local mode lists processes"
expect_screen l "bash: echo host" "the demo's tool calls appear in local mode"
expect_screen l "bash: echo spinning.* running" "the demo's runaway runs locally" 20
expect_match "the runaway is a process under the supervisor" "echo spinning; while" "$(tree l)"
$T send-keys -t l k
expect_screen l "Kill execution #[0-9]+ \(bash: echo spinning" "kill asks in local mode too"
sleep 0.3
$T send-keys -t l y
expect_screen l "#[0-9]+ killed" "the local runaway shows killed"
expect_no_match "the killed local process is gone" "echo spinning; while" "$(tree l)"
expect_screen l "LOCAL \(not isolated\) +completed" "the local demo completes" 20
$T send-keys -t l q
expect_screen l "EXITED 0" "quit after the local demo"

# a long answer: its end shows, and the transcript scrolls back to its start
"$T_PY" -c 'import json
print(json.dumps({"content": "\n".join("answer-line-%d" % i for i in range(1, 701))}))' \
        >"$WORK/s/long-answer.jsonl"
start t 160x48 "$PROCTOR --approval never --model script:$WORK/s/long-answer.jsonl"
$T send-keys -t t "go" Enter
expect_screen t "│answer-line-700 " "the end of a 700-line answer shows"
$T send-keys -t t Home
expect_screen t "│you: go " "Home scrolls the transcript to its start"
expect_screen t "│answer-line-1 " "the answer's first line is there"
$T send-keys -t t PPage End
expect_screen t "│answer-line-700 " "End comes back to the newest line"
$T send-keys -t t q
expect_screen t "EXITED 0" "quit after the long answer"

# replay: pause holds the view still, s steps one event at a time
cat >"$WORK/s/paced.jsonl" <<'EOF'
{"content": "First a pause.", "tool_calls": [{"name": "bash", "arguments": {"command": "sleep 2; echo paced-one"}}]}
{"content": "Then another.", "tool_calls": [{"name": "bash", "arguments": {"command": "echo paced-two"}}]}
{"content": "paced done"}
EOF
"$PROCTOR" run --model "script:$WORK/s/paced.jsonl" --trace "$WORK/paced.jsonl" "pace" >/dev/null 2>&1
start r 160x48 "$PROCTOR replay --speed 0.5 $WORK/paced.jsonl"
expect_screen r "REPLAY +running" "the replay starts, showing the recorded state"
expect_screen r "bash: sleep 2; echo pace" "the replayed call shows"
$T send-keys -t r Space
expect_screen r "REPLAY [0-9.ms]+\/[0-9.ms]+ paused" "space pauses the replay"
sleep 4.5 # at half speed the next call would be on screen by now
check "paused, the replay holds still" sh -c "! $T capture-pane -p -t r | grep -q 'echo paced-two'"
for i in $(seq 40); do
        screen r | grep -q "echo paced-two" && break
        $T send-keys -t r s
        sleep 0.05
done
expect_screen r "bash: echo paced-two" "s steps through the recorded events"
check "stepping does not run the rest at once" sh -c "! $T capture-pane -p -t r | grep -q 'paced done'"
$T send-keys -t r Space
expect_screen r "paced done" "space resumes to the end" 10
expect_screen r "REPLAY +completed" "the replay ends in the recorded final state"
$T send-keys -t r q
expect_screen r "EXITED 0" "quit the paced replay"

# wide characters and invalid UTF-8: replaced, and the columns still line up
start w 160x48 "$PROCTOR --approval never --model script:$WORK/s/wide.jsonl"
$T send-keys -t w "go" Enter
expect_screen w "done with wide" "the wide-text session completes"
$T send-keys -t w Tab Enter
expect_screen w "│ 工具 wide-start �� wide-end" "wide characters shown, invalid bytes replaced"
expect_eq "the row with wide characters keeps the frame's width" 160 "$(cols w "wide-start")"
expect_eq "its right border is in place" "│" "$(screen w | grep "wide-start" | head -1 | grep -o ".$")"
$T send-keys -t w Escape
sleep 0.2
$T send-keys -t w Tab
expect_screen w "bash: printf" "back on the panes"
expect_eq "the tool calls row keeps the frame's width" 160 "$(cols w "bash: printf")"
$T send-keys -t w q
expect_screen w "EXITED 0" "quit after wide text"

# every way out gives the terminal back: SIGINT and SIGHUP wind down, a
# crash (SIGSEGV, SIGABRT) restores the screen and dies of the signal
for sig in INT HUP SEGV ABRT; do
        start "k$sig" 100x30 "$PROCTOR"
        expect_screen "k$sig" "Where should this session's tools run" "started for SIG$sig"
        pid=$(pgrep -P "$($T display -p -t "k$sig" '#{pane_pid}')" -x proctor)
        kill -"$sig" "$pid"
        case $sig in
        SEGV) want="EXITED 139" ;;
        ABRT) want="EXITED 134" ;;
        INT) want="EXITED 130" ;;
        HUP) want="EXITED 129" ;;
        esac
        expect_screen "k$sig" "$want" "SIG$sig ends the supervisor ($want)"
        check "SIG$sig left no alternate screen" sh -c "! $T display -p -t k$sig '#{alternate_on}' | grep -q 1"
        check "SIG$sig left the cursor visible" sh -c "$T display -p -t k$sig '#{cursor_flag}' | grep -q 1"
done

# colour depth: from the terminal description, the nearest colours
# depth NAME ENV TERMINAL: the setup screen where ENV describes the
# terminal; the SGR sequences it drew in $c
depth() {
        start "$1" 120x40 "$2 $PROCTOR"
        expect_screen "$1" "Where should this session's tools run" "drawn in $3"
        c=$(colors "$1")
}
depth tc "TERM=xterm-direct COLORTERM=truecolor" "a direct-colour terminal"
expect_match "truecolor: 24-bit colours" '8;2;' "$c"
depth c256 TERM=xterm-256color "a 256-colour terminal"
expect_match "256 colours: palette colours" '8;5;' "$c"
expect_no_match "256 colours: no 24-bit colour" '8;2;' "$c"
depth c16 TERM=xterm-16color "a 16-colour terminal"
expect_match "16 colours: bright colours" '\[(9[0-7]|10[0-7])m' "$c"
expect_no_match "16 colours: no palette colour" '8;[25];' "$c"
depth c8 TERM=xterm "an 8-colour terminal"
expect_match "8 colours: basic colours" '\[3[0-7]m' "$c"
expect_no_match "8 colours: nothing beyond 8" '8;[25];|\[(9[0-7]|10[0-7])m' "$c"
depth cm TERM=xterm-mono "a monochrome terminal"
expect_no_match "mono: no colour at all" '\[([34][0-8]|9[0-7]|10[0-7])(;|m)|8;[25];' "$c"
expect_match "mono: the badge stands out by reverse video" '(^|;)\[?7m|\[7m|;7m' "$c"

# user themes: loaded from $XDG_CONFIG_HOME/proctor/themes, cycled with t,
# a broken one named with its line and the default used
mkdir -p "$WORK/xdg/proctor/themes"
printf 'name = Mine\nbadge.local = #ffffff on #ff0000 bold\n' >"$WORK/xdg/proctor/themes/mine.theme"
printf 'name = Broken\ntext = #zzzzzz\n' >"$WORK/xdg/proctor/themes/broken.theme"
start th 120x40 "XDG_CONFIG_HOME=$WORK/xdg TERM=xterm-256color $PROCTOR --theme mine"
expect_screen th "Where should this session's tools run" "a user theme by name"
expect_match "the user theme's badge colour (red) is drawn" '48;5;196m' "$(colors th)"
$T send-keys -t th F10
start tb 120x40 "XDG_CONFIG_HOME=$WORK/xdg $PROCTOR --theme broken"
expect_screen tb "broken.theme:2: bad colour \"#zzzzzz\"" "a broken theme is named with file and line"
expect_screen tb "Where should this session's tools run" "the supervisor still runs on the default"
$T send-keys -t tb F10
start tt 120x40 "XDG_CONFIG_HOME=$WORK/xdg $PROCTOR --approval never --model script:$WORK/s/quick.jsonl"
$T send-keys -t tt "go" Enter
expect_screen tt "session completed" "a quick session for cycling themes"
seen=""
for i in $(seq 12); do
        $T send-keys -t tt t
        sleep 0.2
        seen="$seen $(screen tt | grep -o 'theme: [A-Za-z -]*' | head -1)"
done
expect_match "t cycles through the user theme" "theme: Mine" "$seen"
expect_match "t cycles through the bundled themes" "theme: Light" "$seen"
$T send-keys -t tt q
expect_screen tt "EXITED 0" "quit after cycling themes"

# an ended call that printed nothing reads "none", never "nothing yet"
cat >"$WORK/s/silent.jsonl" <<'EOF'
{"content": "Silent.", "tool_calls": [{"name": "bash", "arguments": {"command": "true"}}]}
{"content": "silent done"}
EOF
start sl 120x40 "$PROCTOR --mode sandbox --model script:$WORK/s/silent.jsonl"
$T send-keys -t sl "go" Enter
expect_screen sl "SANDBOX \(isolated\) +completed" "the silent session completes" 20
$T send-keys -t sl Tab
$T send-keys -t sl Enter
expect_screen sl "tool call call_1 \(Esc closes\)" "the silent call's details open"
expect_screen sl "output of call_1: none " "an ended call with no output says none"
check "and never nothing yet" sh -c "! $T capture-pane -p -t sl | grep -q 'nothing yet'"
$T send-keys -t sl Escape
$T send-keys -t sl q
finish
