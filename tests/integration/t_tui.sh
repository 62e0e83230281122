#!/bin/bash
# The supervisor in a real terminal (a detached tmux): the setup screen,
# flipping the mode, running sessions in both modes, killing a running
# sandbox, Esc interrupt, help, resizing, NO_COLOR, hostile tool output,
# quitting with the terminal restored.
# lock: demo (its local mode writes the host's /tmp/proctor-demo.txt)
. "$(dirname "$0")/lib.sh"

. "$(dirname "$0")/tmux.sh"

mkdir -p "$WORK/s"
cat >"$WORK/s/long.jsonl" <<'EOF'
{"content": "Starting something slow.", "tool_calls": [{"name": "bash", "arguments": {"command": "echo slow-started; sleep 60"}}]}
{"content": "After the slow one."}
EOF
cat >"$WORK/s/evil.jsonl" <<'EOF'
{"content": "Printing something hostile.", "tool_calls": [{"name": "bash", "arguments": {"command": "printf 'before\\033]0;owned\\007\\033[2J\\033[31mred\\n'; echo after-evil"}}]}
{"content": "done with evil"}
EOF

# setup screen, flip, start the demo in sandbox mode
start a 160x48 "$PROCTOR"
expect_screen a "Where should this session's tools run" "setup screen shown"
expect_screen a "\[x\] local" "local is the default"
expect_screen a "demo \(scripted\)" "the demo model is labelled scripted"
$T send-keys -t a F2
expect_screen a "\[x\] sandbox" "F2 flips to sandbox"
expect_screen a "SANDBOX" "the header badge says sandbox"
$T send-keys -t a "tour please" Enter
expect_screen a "sandboxes" "live view shows the sandboxes pane"
expect_screen a "bash: echo host" "tool calls appear"
expect_screen a "cpu +[0-9]+% +▁" "executions show live CPU with a graph" 20
expect_screen a "mem [0-9]+[BKM]/512M +▁" "executions show memory against its limit" 20
expect_screen a "pids [0-9]+/128 +▁" "executions show pids against the limit" 20
# Its CPU limit normally ends it first; on a loaded machine it may get too
# little CPU for that before its wall clock ends it (t_demo.sh alike).
expect_screen a "#[0-9]+ (cpu_limit|timeout)" "the runaway ends at the CPU limit (or the wall clock)" 30
expect_screen a "bash: echo spinning.* [0-9.]+m?s +(cpu_limit|timeout)" "the tool call shows how its execution ended"
expect_screen a "session completed" "the session completes" 30
$T send-keys -t a m
expect_screen a "mode is fixed" "m after the start says the mode is locked"
$T send-keys -t a '?'
expect_screen a "keys \(any key closes\)" "help overlay"
expect_screen a "kill every running execution" "help lists K"
$T send-keys -t a x
$T send-keys -t a q
expect_screen a "EXITED 0" "q quits when idle"
check "the terminal is back to normal (no alternate screen)" sh -c "! $T display -p -t a '#{alternate_on}' | grep -q 1"

# killing a running sandbox from the supervisor
start b 160x48 "$PROCTOR --mode sandbox --model script:$WORK/s/long.jsonl"
$T send-keys -t b "go" Enter
expect_screen b "running +[0-9.]+m?s +setup" "the slow sandbox runs"
$T send-keys -t b k
expect_screen b "Kill execution #1 \(bash: echo slow-started" "the confirmation names the execution"
sleep 0.3 # a confirmation typed ahead of the dialog does not count
$T send-keys -t b y
expect_screen b "#1 killed" "the execution shows killed" 5
expect_screen b "bash: echo slow-started.* killed" "the tool call shows it was killed"
if pgrep -f "slow-started; sleep 60" >/dev/null; then fail "the killed sandbox's process survived"; else pass; fi
expect_screen b "After the slow one" "the session goes on after the kill"
$T send-keys -t b q
expect_screen b "EXITED 0" "quit after the kill"

# Esc interrupts the turn; q while running asks first
start c 160x48 "$PROCTOR --approval never --mode local --model script:$WORK/s/long.jsonl"
$T send-keys -t c "go" Enter
expect_screen c "running" "local slow call runs"
sleep 0.5
$T send-keys -t c q
expect_screen c "Quit and kill everything" "q while running asks"
$T send-keys -t c n
$T send-keys -t c Escape
expect_screen c "Esc again to interrupt the turn and kill 1 running execution" "Esc while a tool runs asks for a second"
$T send-keys -t c Escape
expect_screen c "session interrupted" "Esc interrupts" 5
if pgrep -f "slow-started; sleep 60" >/dev/null; then fail "the interrupted process survived"; else pass; fi
$T send-keys -t c q
expect_screen c "EXITED 0" "quit after the interrupt"

# resize down to 80x24 and below, and back
start d 160x48 "$PROCTOR"
expect_screen d "Where should this session's tools run" "setup at 160x48"
$T resize-window -t d -x 80 -y 24
expect_screen d "Where should this session's tools run" "still drawn at 80x24"
$T resize-window -t d -x 70 -y 20
expect_screen d "terminal too small" "below 80x24 a notice"
$T resize-window -t d -x 160 -y 48
expect_screen d "Where should this session's tools run" "drawn again after growing"
$T send-keys -t d F10
expect_screen d "EXITED 0" "quit from setup"

# hostile output: no retitle, no clear; shown as visible escapes
start e 160x48 "$PROCTOR --approval never --model script:$WORK/s/evil.jsonl"
title_before=$($T display -p -t e '#{pane_title}')
$T send-keys -t e "go" Enter
expect_screen e "done with evil" "the evil session completes"
$T send-keys -t e Tab
$T send-keys -t e Enter
expect_screen e "\^\[\]0;owned\^G\^\[\[2J" "the escape sequence is shown, not obeyed"
expect_eq "the pane title is untouched" "$title_before" "$($T display -p -t e '#{pane_title}')"
expect_screen e "tool calls|tool call" "the screen was not cleared by the tool"
$T send-keys -t e Escape
$T send-keys -t e q
expect_screen e "EXITED 0" "quit after evil"

# NO_COLOR: still usable, and SIGTERM restores the terminal
start f 100x30 "NO_COLOR=1 $PROCTOR"
expect_screen f "Where should this session's tools run" "setup drawn with NO_COLOR"
pid=$(pgrep -n -f "^$PROCTOR$" || pgrep -n -x proctor)
[ -n "$pid" ] && kill -TERM "$pid"
expect_screen f "EXITED" "SIGTERM ends the supervisor"
check "SIGTERM left no alternate screen" sh -c "! $T display -p -t f '#{alternate_on}' | grep -q 1"
# replay of a recorded session: read-only, same view
"$PROCTOR" run --mode sandbox --model "script:$WORK/s/long.jsonl" --timeout 2 \
        --trace "$WORK/rec.jsonl" "record me" >/dev/null 2>&1
start g 160x48 "$PROCTOR replay --speed max $WORK/rec.jsonl"
expect_screen g "REPLAY" "replay is marked"
expect_screen g "bash: echo slow-started" "replayed tool calls appear"
expect_screen g "#1 timeout" "replayed execution shows its exit" 10
$T send-keys -t g k
expect_screen g "read-only" "kill is refused in a replay"
$T send-keys -t g q
expect_screen g "EXITED 0" "quit the replay"
finish
