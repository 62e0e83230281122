#!/bin/bash
# proctor attach: the live view of a proctor run elsewhere, in a real
# terminal (a detached tmux): its history and its sandbox row, a kill from
# the attached view (k, y) that the run records, a read-only view that
# cannot kill, two views at once counted in each other's header, the
# session's end shown in a view that stays, the refusals (a bad id, no
# session at all), and the supervisor's header counting a view of its own
# session.
. "$(dirname "$0")/lib.sh"

. "$(dirname "$0")/tmux.sh"

export XDG_RUNTIME_DIR=$WORK/rt
mkdir -m 700 "$XDG_RUNTIME_DIR"
S=$WORK/s
W=$WORK/ws
mkdir -p "$S" "$W"
cat >"$S/long.jsonl" <<'EOF'
{"content": "A long call.", "tool_calls": [{"name": "bash", "arguments": {"command": "echo started; sleep 60; echo slept"}}]}
{"content": "Done."}
EOF

lsj() { "$PROCTOR" ls --json; }
ls_eval() { lsj | "$T_PY" -c 'import json, sys; L = json.load(sys.stdin); print(eval(sys.argv[1]))' "$1"; }
running_one() { [ "$(ls_eval 'sum(1 for s in L if s.get("state") == "running 1")')" = 1 ]; }
clients_are() { [ "$(ls_eval 'L[0].get("clients", 0) if L else -1')" = "$1" ]; }

# start_run NAME: proctor run in the background, its pid in RUN_PID
start_run() {
        "$PROCTOR" run --mode sandbox --workspace "$W" --trace "$WORK/$1.trace" \
                --model "script:$S/long.jsonl" go >"$WORK/$1.out" 2>"$WORK/$1.err" </dev/null &
        RUN_PID=$!
        track_pid $RUN_PID
}
# view NAME ARGS...: proctor attach ARGS in a tmux window of its own
view() {
        local name=$1
        shift
        start "$name" 200x40 "XDG_RUNTIME_DIR='$XDG_RUNTIME_DIR' $PROCTOR attach $*"
}

# ---- refusals ----
out=$("$PROCTOR" attach 2>&1)
expect_eq "no session: attach fails" 1 "$?"
expect_match "no session: it says so" "no live session to attach to" "$out"
out=$("$PROCTOR" attach 20990101-000000-nothere 2>&1)
expect_eq "a bad id: exit 2" 2 "$?"
expect_match "a bad id: it says so" "no live session has that id" "$out"
out=$("$PROCTOR" attach ../etc 2>&1)
expect_eq "not an id: exit 2" 2 "$?"
expect_match "not an id: it says so" "is not a session id" "$out"
expect_match "attach --help" "usage: proctor attach \[--read-only\]" "$("$PROCTOR" attach --help)"

# ---- a read-write view and a read-only one on the same run ----
start_run one
check "the run's call is running" wait_until 20 running_one
ID=$(ls_eval 'L[0]["session_id"]')

view rw
expect_screen rw "attached to $ID" "the header names the session" 15
expect_screen rw "echo started; sleep 60" "the call so far (history) is shown"
expect_screen rw "#1 running" "its sandbox row"
expect_screen rw "SANDBOX" "the sandbox badge"

view ro --read-only "$ID"
expect_screen ro "attached to $ID \(read-only\)" "the read-only header" 15
expect_screen ro "#1 running" "the read-only view shows the execution"
check "two clients are attached" wait_until 10 clients_are 2
expect_screen rw "2 watching" "the read-write view counts the other"
expect_screen ro "2 watching" "the read-only view counts the other"

# the read-only view cannot kill
$T send-keys -t ro Tab Tab
$T send-keys -t ro k
expect_screen ro "read-only: nothing is sent" "k in a read-only view says nothing is sent"
$T send-keys -t ro Escape
$T send-keys -t ro p
expect_screen ro "read-only: nothing is sent" "nor p"
check "the call still runs after the read-only view's k" running_one
# viewing keys work: details of the execution
$T send-keys -t ro Enter
expect_screen ro "started" "details open in the read-only view"
$T send-keys -t ro Escape

# k then y from the read-write view kills it
$T send-keys -t rw Tab Tab
$T send-keys -t rw k
expect_screen rw "y SIGKILL|SIGKILL" "the kill dialog opens"
sleep 0.3 # the dialog's guard against typed-ahead keys
$T send-keys -t rw y
expect_screen rw "asked the session to kill execution #1" "y sends the kill"
expect_screen rw "#1 killed" "the kill comes back as the session's event" 15
wait $RUN_PID
expect_eq "the run completes" 0 "$?"
expect_match "the run's trace has the operator's kill" '"type":"operator.kill"' \
        "$(cat "$WORK/one.trace")"
expect_match "and the execution killed" '"type":"exec.exit".*"reason":"killed"' \
        "$(cat "$WORK/one.trace")"

# the session's end is shown; the views stay until q
expect_screen rw "the session ended" "the read-write view says the session ended" 15
expect_screen ro "the session ended" "the read-only view too" 15
expect_no_match "the view is still up" "EXITED" "$(screen rw)"
$T send-keys -t rw q
expect_screen rw "EXITED 0" "q leaves the ended view"
$T send-keys -t ro q
expect_screen ro "EXITED 0" "q leaves the read-only view"

# ---- q detaches; the session goes on ----
start_run two
check "the second run's call is running" wait_until 20 running_one
view rw2
expect_screen rw2 "#1 running" "attached to the newest session"
$T send-keys -t rw2 q
expect_screen rw2 "EXITED 0" "q detaches"
check "no client is left attached" wait_until 10 clients_are 0
check "the call still runs after the detach" running_one
kill $RUN_PID
wait $RUN_PID 2>/dev/null

# ---- the supervisor's own header counts the views attached to it ----
start sup 200x40 "XDG_RUNTIME_DIR='$XDG_RUNTIME_DIR' $PROCTOR --mode sandbox --workspace '$W' --model script:$S/long.jsonl"
expect_screen sup "Where should this session's tools run" "the supervisor's setup screen" 15
$T send-keys -t sup go Enter
expect_screen sup "#1 running" "the supervisor runs the call"
view sv --read-only
expect_screen sv "#1 running" "a read-only view of the supervisor's session"
expect_screen sup "1 watching \(1 read-only\)" "the supervisor's header counts it"
$T send-keys -t sv q
expect_screen sv "EXITED 0" "the view leaves"
check "the supervisor's header forgets it" bash -c "for i in \$(seq 100); do $T capture-pane -p -t sup | grep -q 'watching' || exit 0; sleep 0.1; done; exit 1"
$T send-keys -t sup Escape Escape
$T send-keys -t sup q
$T send-keys -t sup y

finish
