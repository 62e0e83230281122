#!/bin/bash
# Resuming an ended session against a loopback OpenAI-compatible server
# that records each request (tests/fake_openai.py): the first request of
# the resumed session carries the earlier prompts, the assistant's tool
# call and its result, then the new prompt; by session id and by trace
# path (a chain: a resumed session resumed again); a bad id's error; the
# new trace's resumed_from; and `proctor resume` in the supervisor.
# as-user: yes
. "$(dirname "$0")/lib.sh"

KEY=sk-fake-test-key-4242
. "$(dirname "$0")/openai_session.sh"
. "$(dirname "$0")/tmux.sh"

export XDG_STATE_HOME=$WORK/state PROCTOR_API_KEY=$KEY
unset OPENAI_API_KEY HF_TOKEN
ev() { events_eval "$@"; }
# first_request NAME EXPR: EXPR over M, the messages of the first request
first_request() {
        "$T_PY" -c 'import sys, json
R = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
M = [r for r in R if "body" in r][0]["body"]["messages"]
print(eval(sys.argv[2]))' "$WORK/$1.log" "$2"
}
# run_against NAME ARGS...: proctor run --json against $WORK/NAME.script
run_against() {
        local name=$1
        shift
        fake_start "$name"
        "$PROCTOR" run --json --base-url "http://127.0.0.1:$port/v1" "$@" \
                >"$WORK/$name.jsonl" 2>"$WORK/$name.err"
        rc=$?
        fake_stop
}

# 1. a session with a tool call that writes a file
cat >"$WORK/first.script" <<'EOF2'
{"content": "Writing it.", "tool_calls": [{"name": "bash", "arguments": "{\"command\": \"echo hello > made.txt; echo wrote-it\"}"}]}
{"content": "The file is written."}
EOF2
run_against first --mode local --approval never --model openai:fake-model --workspace "$WORK" \
        "write the file"
expect_eq "first: completes" 0 $rc
check "first: the file was written" test -f "$WORK/made.txt"
id=$(ev "$WORK/first.jsonl" 'of("session.start")[0]["session_id"]')
trace1=$WORK/state/proctor/sessions/$id.jsonl
check "first: its trace in the sessions directory" test -s "$trace1"

# 2. resumed by id, from another directory, the model and mode as recorded
printf '{"content": "Going on."}\n' >"$WORK/second.script"
cd /tmp || exit 1
run_against second --resume "$id" "now the next step"
cd "$WORK" || exit 1
expect_eq "second: completes" 0 $rc
expect_eq "second: the earlier prompt, call, result and the new prompt, in order" \
        "['system', 'user', 'assistant', 'tool', 'assistant', 'user']" \
        "$(first_request second '[m["role"] for m in M]')"
expect_eq "second: the earlier prompt" "write the file" "$(first_request second 'M[1]["content"]')"
expect_eq "second: the assistant's tool call" "bash {'command': 'echo hello > made.txt; echo wrote-it'}" \
        "$(first_request second 'M[2]["tool_calls"][0]["function"]["name"] + " " + str(json.loads(M[2]["tool_calls"][0]["function"]["arguments"]))')"
expect_eq "second: the call's result, for that call" "True wrote-it" \
        "$(first_request second 'str(M[3]["tool_call_id"] == M[2]["tool_calls"][0]["id"]) + " " + M[3]["content"].strip()')"
expect_eq "second: the earlier answer" "The file is written." "$(first_request second 'M[4]["content"]')"
expect_eq "second: the new prompt last" "now the next step" "$(first_request second 'M[5]["content"]')"
expect_eq "second: resumed_from" "$id $trace1" \
        "$(ev "$WORK/second.jsonl" 'of("session.start")[0]["resumed_from"]["session_id"] + " " + of("session.start")[0]["resumed_from"]["trace"]')"
expect_eq "second: the recorded model, mode and workspace" "openai:fake-model local $WORK" \
        "$(ev "$WORK/second.jsonl" '" ".join(of("session.start")[0][k] for k in ("model", "mode", "workspace"))')"
expect_match "second: it says which workspace it goes on in" "goes on in the earlier session's workspace $WORK" \
        "$(cat "$WORK/second.err")"
id2=$(ev "$WORK/second.jsonl" 'of("session.start")[0]["session_id"]')
trace2=$WORK/state/proctor/sessions/$id2.jsonl

# 3. by trace path, a resumed session resumed again: the whole chain
printf '{"content": "Third."}\n' >"$WORK/third.script"
run_against third --resume "$trace2" --workspace "$WORK" "third prompt"
expect_eq "third: completes" 0 $rc
expect_eq "third: every prompt of the chain" "['write the file', 'now the next step', 'third prompt']" \
        "$(first_request third '[m["content"] for m in M if m["role"] == "user"]')"
expect_eq "third: one system prompt" 1 "$(first_request third 'len([m for m in M if m["role"] == "system"])')"
expect_eq "third: resumed_from the trace given" "$trace2" \
        "$(ev "$WORK/third.jsonl" 'of("session.start")[0]["resumed_from"]["trace"]')"

# 4. a bad id, a missing trace: exit 2 naming the problem
"$PROCTOR" run --resume no-such-session "x" >/dev/null 2>"$WORK/bad.err"
expect_eq "bad id: exit 2" 2 $?
expect_match "bad id: named" "no session 'no-such-session'" "$(cat "$WORK/bad.err")"
"$PROCTOR" run --resume "$WORK/missing.jsonl" "x" >/dev/null 2>"$WORK/bad2.err"
expect_eq "missing trace: exit 2" 2 $?
expect_match "missing trace: named" "missing.jsonl" "$(cat "$WORK/bad2.err")"

# 5. a trace cut by a kill mid-turn: the call without a result gets one
cut=$WORK/cut-trace.jsonl
head -n "$(grep -n '"type":"tool.call"' "$trace1" | head -1 | cut -d: -f1)" "$trace1" >"$cut"
printf '{"type":"user.mess\n' >>"$cut"
printf '{"content": "After the cut."}\n' >"$WORK/cut.script"
run_against cut --resume "$cut" "after a crash"
expect_eq "cut: completes" 0 $rc
expect_match "cut: the unfinished call's result says so" "did not finish in the earlier session" \
        "$(first_request cut 'M[3]["content"]')"
expect_match "cut: stderr tells of the skipped line and the unclean end" \
        "1 line of the trace was not valid.*did not end cleanly" "$(tr '\n' ' ' <"$WORK/cut.err")"

# 6. the supervisor: proctor resume ID shows the earlier conversation, the prompt ready
printf '{"content": "From the supervisor."}\n' >"$WORK/tui.script"
fake_start tui
start r 160x45 "XDG_STATE_HOME='$WORK/state' PROCTOR_API_KEY='$KEY' $PROCTOR resume $id --base-url http://127.0.0.1:$port/v1"
expect_screen r "resumed session $id: type the next prompt" "resume: the prompt is ready"
expect_screen r "you: write the file" "resume: the earlier prompt is shown"
expect_screen r "The file is written" "resume: the earlier answer is shown"
$T send-keys -t r "from the screen" Enter
expect_screen r "From the supervisor" "resume: the model answers the next prompt" 20
expect_eq "resume: the request carries the earlier conversation" \
        "['write the file', 'from the screen']" \
        "$(first_request tui '[m["content"] for m in M if m["role"] == "user"]')"
$T send-keys -t r q
expect_screen r "EXITED 0" "resume: q quits"
fake_stop

# 7. the setup screen offers this workspace's sessions; F4 picks the newest
start s 160x45 "XDG_STATE_HOME='$WORK/state' $PROCTOR --approval never --model demo"
expect_screen s "earlier .*\[F4 resumes\]" "setup: the newest sessions are offered"
$T send-keys -t s F4
expect_screen s "resuming  [0-9-]+[a-f0-9]+: [0-9]+ earlier messages" "setup: F4 picks one"
$T send-keys -t s F10
expect_screen s "EXITED 0" "setup: F10 quits"

# 8. nothing of this workspace to resume
mkdir -p "$WORK/empty"
(cd "$WORK/empty" && "$PROCTOR" resume >/dev/null 2>"$WORK/none.err")
expect_eq "resume without sessions: exit 2" 2 $?
expect_match "resume without sessions: says so" "no ended session of this workspace" "$(cat "$WORK/none.err")"

finish
