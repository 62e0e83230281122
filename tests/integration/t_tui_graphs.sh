#!/bin/bash
# as-user: yes
# What the supervisor's graphs and output viewer claim, in local mode where
# nothing has a limit: a graph spans the execution's whole run (a spike
# seconds ago is still there), small numbers draw low bars, the details say
# what full height means, an execution counts its output, and the output
# viewer numbers lines from the output's start.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/tmux.sh"

mkdir -p "$WORK/s"
cat >"$WORK/s/spike.jsonl" <<'EOF'
{"content": "Spike.", "tool_calls": [{"name": "bash", "arguments": {"command": "python3 -c 'import time\nt = time.time()\nb = bytearray(150 << 20)\nwhile time.time() - t < 1.5: pass\ndel b\ntime.sleep(30)'"}}]}
{"content": "spike done"}
EOF
cat >"$WORK/s/big.jsonl" <<'EOF'
{"content": "Big.", "tool_calls": [{"name": "bash", "arguments": {"command": "seq 1 300000"}}]}
{"content": "big done"}
EOF
cat >"$WORK/s/lines.jsonl" <<'EOF'
{"content": "Lines.", "tool_calls": [{"name": "bash", "arguments": {"command": "sleep 2; for i in $(seq 1 20000); do printf '%099d\\n' $i; [ $((i % 500)) = 0 ] && sleep 0.05; done; true"}}]}
{"content": "lines done"}
EOF

# levels NAME LABEL: the bars of the first graph after LABEL (a regex) as
# levels 0-7, in either glyph set (UTF-8 eighths, or ASCII under LANG=C)
levels() {
        screen "$1" | "$T_PY" -c '
import re, sys
bars = {c: i for i, c in enumerate("\u2581\u2582\u2583\u2584\u2585\u2586\u2587\u2588")}
bars.update({c: i for i, c in enumerate("_.-:=+*#")})
for line in sys.stdin.read().splitlines()[2:]:  # below the header
    m = re.search(sys.argv[1] + " +", line)
    if m:
        print("".join(str(bars[c]) for c in re.match("[^ x\u2502|]*", line[m.end():]).group(0) if c in bars))
        break' "$2"
}
# first_line_ok NAME: the output viewer's rule says "lines A-B of C" and
# its first row is A itself (the output is `seq`-like: line N says N)
first_line_ok() {
        screen "$1" | "$T_PY" -c '
import re, sys
rows = sys.stdin.read().splitlines()
for i, r in enumerate(rows):
    m = re.search(r"lines (\d+)-(\d+) of (\d+)", r)
    if m:
        shown = re.sub(r"^[\s\u2502x|]+|[\s\u2502x|]+$", "", rows[i + 1])
        print("rule says %s, first row %s" % (m.group(1), shown))
        sys.exit(0 if shown.lstrip("0") == m.group(1) else 1)
sys.exit("no rule")'
}

# ---- a spike 1.5 s long, looked at ten seconds later ----
start sp 160x30 "$PROCTOR --approval never --mode local --model script:$WORK/s/spike.jsonl"
$T send-keys -t sp "go" Enter
expect_screen sp "#1 running" "the spiking process runs"
sleep 10
lv=$(levels sp "cpu +[0-9]+%")
# (how high the spike draws depends on the CPU share the machine gave it:
# its shape, not its height, is what is checked)
expect_match "the CPU graph still shows the spike of 8 s ago, then the quiet" '[1-7]{2,}.*0{5,}$' "$lv"
lv=$(levels sp "mem [0-9.]+[BKMG]/-")
expect_match "the memory graph still shows the 150M of 8 s ago" '[3-7].*0$' "$lv"
lv=$(levels sp "pids [0-9]+/-")
# (the first column may hold a start's passing processes, sampled late on a
# loaded machine)
expect_match "2 pids with no limit draw low bars, not full ones" '^[0-3][0-2]+$' "$lv"
$T send-keys -t sp Tab Tab Enter
expect_screen sp "execution #1 \(Esc closes\)" "the execution's details"
expect_screen sp "graphs +the whole run, [0-9.]+s, oldest left; full height: cpu 100%, mem 256M \(no limit\), pids 16 \(no limit\)" \
        "the details say what the graphs span and what full height is"
$T send-keys -t sp Escape
$T send-keys -t sp K
sleep 0.3
$T send-keys -t sp y
expect_screen sp "spike done" "the spike ends when killed"

# a process of a few hundred kilobytes draws the lowest bars
cat >"$WORK/s/small.jsonl" <<'EOF'
{"content": "Small.", "tool_calls": [{"name": "bash", "arguments": {"command": "sleep 30"}}]}
{"content": "small done"}
EOF
start sm 160x30 "$PROCTOR --approval never --mode local --model script:$WORK/s/small.jsonl"
$T send-keys -t sm "go" Enter
expect_screen sm "mem [0-9.]+[BKM]/- +[^ ]" "the small process has a memory graph" 10
sleep 1
expect_match "a small process's memory with no limit draws the lowest bars" '^0+$' \
        "$(levels sm "mem [0-9.]+[BKM]/-")"

# ---- output: counted for the execution, numbered from the start ----
start bg 160x40 "$PROCTOR --approval never --mode local --model script:$WORK/s/big.jsonl"
$T send-keys -t bg "go" Enter
expect_screen bg "big done" "the big output session ends" 20
$T send-keys -t bg Tab Tab Home Enter
expect_screen bg "execution #1 \(Esc closes\)" "the big execution's details"
expect_screen bg "ended +exited .* output 1M \(truncated\)" "an execution in a session counts its output"
$T send-keys -t bg Escape BTab Home Enter
expect_screen bg "output of call_1: 1M, lines [0-9]+-[0-9]+ of [0-9]+ \(older dropped\), following" \
        "the call's output, whose head the view model let go"
check "following: the rule's line numbers are the output's own" first_line_ok bg
$T send-keys -t bg Home
expect_screen bg "lines [0-9]+-[0-9]+ of [0-9]+ \(older dropped\), End follows" "Home goes to the oldest line kept"
check "at the oldest line kept: its number is its place in the whole output" first_line_ok bg
expect_no_match "the oldest line kept is not called line 1" "lines 1-" "$(screen bg)"

# 2 MB of output watched from its start: the view kept every line, so none
# is said dropped, though the view model kept only its last megabyte
start ln 160x40 "$PROCTOR --approval never --mode local --output-limit 4M --model script:$WORK/s/lines.jsonl"
$T send-keys -t ln "go" Enter
expect_screen ln "bash: sleep 2" "the slow printer starts"
$T send-keys -t ln Tab Enter
expect_screen ln "tool call call_1 \(Esc closes\)" "its details open before the output"
expect_screen ln "lines [0-9]+-20000 of 20000, following" "all 20000 lines arrive" 30
expect_no_match "nothing is said dropped when nothing was" "older dropped" "$(screen ln)"
check "following to the end: numbers and lines agree" first_line_ok ln
$T send-keys -t ln Home
expect_screen ln "lines 1-[0-9]+ of 20000, End follows" "Home goes to line 1"
check "line 1 is the first line" first_line_ok ln

finish
