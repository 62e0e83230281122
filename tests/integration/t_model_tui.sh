#!/bin/bash
# The supervisor's transcript for what a real provider does to an answer:
# a loading model's wait counts down, a retried answer is not shown twice,
# an answer cut at the token limit says so, a refusal is marked. Against
# tests/fake_openai.py on 127.0.0.1 (a local server: no key needed).
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/tmux.sh"
. "$(dirname "$0")/openai_session.sh"

S_NOAUTH=1
sse() {
        "$T_PY" -c 'import json, sys
print(json.dumps({"raw": ["data: %s\n\n" % a for a in sys.argv[1:]]}))' "$@"
}

# tui NAME: the supervisor on the fake serving $WORK/NAME.script, prompted
tui() {
        fake_start "$1"
        start "$1" 160x40 "env -u PROCTOR_API_KEY -u OPENAI_API_KEY -u HF_TOKEN $PROCTOR --approval never --mode local --model openai:fake-model --base-url http://127.0.0.1:$port/v1"
        expect_screen "$1" "Type a prompt" "$1: the setup screen"
        $T send-keys -t "$1" "go" Enter
}

printf '{"fault": "http_503", "json_body": {"error": "Model fake-model is currently loading", "estimated_time": 3}}\n{"content": "Loaded after waiting."}\n' >"$WORK/load.script"
tui load
expect_screen load "retrying in 3 s" "loading: the wait is shown"
expect_match "loading: why" "is currently loading" "$(screen load)"
expect_screen load "retrying in [12] s" "loading: it counts down" 4
expect_screen load "Loaded after waiting\." "loading: then the answer" 6
check "loading: no countdown left" sh -c "! $T capture-pane -p -t load | grep -q 'retrying in'"
fake_stop

printf '{"fault": "drop_mid_stream", "content": "Hello world"}\n{"content": "Hello there, friend."}\n' >"$WORK/differ.script"
tui differ
expect_screen differ "Hello there, friend\." "retry: the retried answer"
check "retry: the first attempt's text is taken back" sh -c "! $T capture-pane -p -t differ | grep -q 'Hello wo'"
check "retry: shown once" test "$(screen differ | grep -c 'Hello')" -eq 1
fake_stop

printf '{"content": "The answer is fo", "finish_reason": "length"}\n' >"$WORK/length.script"
tui length
expect_screen length "The answer is fo" "length: the text"
expect_screen length "\* the answer is incomplete: it reached the" "length: said below it"
expect_match "length: why" "\(finish_reason length\)" "$(screen length)"
fake_stop

sse '{"choices":[{"index":0,"delta":{"role":"assistant","refusal":"I cannot help with that."},"finish_reason":"stop"}]}' '[DONE]' >"$WORK/refusal.script"
tui refusal
expect_screen refusal "refused: I cannot help with that\." "refusal: marked as one"
fake_stop
finish
