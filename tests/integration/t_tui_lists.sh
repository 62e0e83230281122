#!/bin/bash
# The list panes in a real terminal (a detached tmux): counts and the
# selection's place in the titles, sorting by CPU, memory and age (htop's
# P, M, T; F6 cycles), a filter typed after /, and o and O selecting the
# execution that uses the most CPU or memory, ready for k; the output
# viewer's search and save; tool calls inline in the transcript.
. "$(dirname "$0")/lib.sh"

. "$(dirname "$0")/tmux.sh"

mkdir -p "$WORK/s"
cat >"$WORK/s/many.jsonl" <<'EOF'
{"content": "Four at once.", "tool_calls": [{"name": "bash", "arguments": {"command": "echo alpha; sleep 60; echo x"}}, {"name": "bash", "arguments": {"command": "echo beta; python3 -c 'b = bytearray(80 << 20); import time; time.sleep(60)'"}}, {"name": "bash", "arguments": {"command": "echo gamma; timeout 60 sh -c 'while :; do :; done'"}}, {"name": "bash", "arguments": {"command": "echo delta"}}]}
{"content": "All four done."}
EOF
# first_exec NAME: the title row of the first execution in the list
first_exec() { screen "$1" | grep -oE '#[0-9]+ (running|exited) ' | head -1 | cut -d' ' -f1; }

start a 160x40 "$PROCTOR --approval never --mode local --model script:$WORK/s/many.jsonl"
expect_screen a "Where should this session's tools run" "setup"
$T send-keys -t a go Enter
expect_screen a "tool calls \[4/4\]" "the tool calls' title counts them and places the selection"
expect_screen a "processes \[4/4\]" "the executions' title too"
expect_screen a "#4 exited" "the short one ends"
# let the spinner and the allocation show in the stats
expect_screen a "mem (8[0-9]|9[0-9])M/-" "the big allocation shows" 10
sleep 1
$T send-keys -t a P
expect_screen a "processes \[1/4\] sort cpu" "P sorts the executions by CPU, the selection on the first row"
expect_eq "the CPU spinner comes first" "#3" "$(first_exec a)"
$T send-keys -t a M
expect_screen a "processes \[1/4\] sort memory" "M sorts by memory"
expect_eq "the big allocation comes first" "#2" "$(first_exec a)"
$T send-keys -t a M
expect_screen a "processes \[[0-9]/4\]─" "M again: arrival order"
expect_eq "arrival order again" "#1" "$(first_exec a)"
$T send-keys -t a T
expect_screen a "processes \[1/4\] sort age" "T sorts by age"
$T send-keys -t a F6
expect_screen a "processes \[1/4\] sort state" "F6 cycles to the next sort"
$T send-keys -t a F6
expect_screen a "processes \[[0-9]/4\]─" "and round to arrival order"

# filter: typed after /, live, Enter keeps it, Esc clears it
$T send-keys -t a /
expect_screen a "filter executions: type to narrow" "/ starts a filter"
$T send-keys -t a -l "GAMMA"
expect_screen a "processes \[1/1 of 4\] /GAMMA_" "the filter applies as it is typed, case-blind"
check "only the matching execution is listed" test "$(screen a | grep -cE '#[0-9]+ (running|exited)')" -eq 1
$T send-keys -t a Enter
expect_screen a "processes \[1/1 of 4\] /GAMMA─" "Enter keeps it"
$T send-keys -t a k
expect_screen a "Kill execution #3 \(bash: echo gamma" "k acts on the filtered selection"
$T send-keys -t a n
$T send-keys -t a Escape
expect_screen a "filter cleared" "Esc clears the filter"
expect_screen a "processes \[[0-9]/4\]─" "all four again"
$T send-keys -t a Tab Tab
$T send-keys -t a /
$T send-keys -t a -l "delta"
$T send-keys -t a Enter
expect_screen a "tool calls \[1/1 of 4\] /delta" "the tool calls have a filter of their own"
$T send-keys -t a Escape
expect_screen a "tool calls \[[0-9]/4\]─" "cleared there too"

# the offender: o the most CPU, O the most memory
$T send-keys -t a o
expect_screen a "#3 uses the most CPU \(k kills it\)" "o names the CPU offender"
$T send-keys -t a k
expect_screen a "Kill execution #3 \(bash: echo gamma" "and selects it for k"
$T send-keys -t a n
$T send-keys -t a O
expect_screen a "#2 uses the most memory" "O names the memory offender"
$T send-keys -t a k
expect_screen a "Kill execution #2 \(bash: echo beta" "and selects it"
sleep 0.3
$T send-keys -t a y
expect_screen a "#2 killed" "the offender is killed"
$T send-keys -t a q
expect_screen a "Quit and kill everything" "q asks while the others run"
sleep 0.3
$T send-keys -t a y
expect_screen a "EXITED 0" "quit"

# the output viewer: search with /, n and N; s saves the output whole
cat >"$WORK/s/out.jsonl" <<'EOF'
{"content": "Lots of output.", "tool_calls": [{"name": "bash", "arguments": {"command": "for i in $(seq 3000); do if [ $i = 1500 ] || [ $i = 2500 ]; then echo \"row $i Needle\"; else echo \"row $i\"; fi; done"}}]}
{"content": "Output done."}
EOF
start o 120x40 "$PROCTOR --approval never --mode local --model script:$WORK/s/out.jsonl"
expect_screen o "Where should this session's tools run" "setup for the output viewer"
$T send-keys -t o go Enter
expect_screen o "Output done" "the output session completes" 10
expect_screen o "^│\[\+\] bash: for i in" "the transcript shows the call inline, collapsed"
$T send-keys -t o e
expect_screen o "^│\[-\] bash: for i in" "e expands the calls in the transcript"
expect_screen o "^│    row 3000 " "with the end of their output"
expect_screen o "^│    \.\.\. \(earlier output: Enter on the call\)" "saying where the rest is"
check "only the last lines" sh -c "! $T capture-pane -p -t o | grep -q '^│    row 2994 '"
$T send-keys -t o e
expect_screen o "^│\[\+\] bash: for i in" "e again: one line each"
check "collapsed, no output in the transcript" sh -c "! $T capture-pane -p -t o | grep -q '^│    row 3000'"
$T send-keys -t o Tab Enter
expect_screen o "output of call_1: .*lines [0-9]+-3000 of 3000" "the details show the output's end"
$T send-keys -t o /
$T send-keys -t o -l "needle"
expect_screen o "search: needle_" "the search is typed in the status line"
$T send-keys -t o Enter
expect_screen o "line 1500 holds \"needle\": n next, N previous" "Enter finds the first match, case-blind"
expect_screen o "lines 1500-" "and scrolls it to the top"
$T send-keys -t o n
expect_screen o "line 2500 holds \"needle\"" "n finds the next"
$T send-keys -t o n
expect_screen o "no later line holds \"needle\"" "n past the last says so"
$T send-keys -t o N
expect_screen o "line 1500 holds \"needle\"" "N finds the previous"
$T send-keys -t o s
expect_screen o "saved [0-9.]+K of call_1's output to proctor-output-[-_A-Za-z0-9]+-call_1\.txt" "s saves the output"
saved=$(ls "$WORK"/proctor-output-*-call_1.txt 2>/dev/null | head -1)
check "the saved file holds the whole output" sh -c "seq 3000 | sed 's/^/row /; s/^row 1500\$/row 1500 Needle/; s/^row 2500\$/row 2500 Needle/' | cmp -s - '$saved'"
expect_eq "the saved file is the operator's alone" 600 "$(stat -c %a "$saved" 2>/dev/null)"
$T send-keys -t o s
expect_screen o "cannot save to proctor-output-.*: File exists" "a second save never overwrites"
$T send-keys -t o Escape
sleep 0.2
$T send-keys -t o q
expect_screen o "EXITED 0" "quit after the output viewer"
finish
