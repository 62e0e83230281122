#!/bin/bash
# Headless sessions against a real HTTP server on 127.0.0.1 speaking the
# OpenAI chat-completions protocol (tests/fake_openai.py): streamed turns
# with tool calls split across chunks, and each fault and what the session
# does about it. The API key travels only as a header.
# as-user: yes
. "$(dirname "$0")/lib.sh"

KEY=sk-fake-test-key-4242

ev() { events_eval "$@"; }

. "$(dirname "$0")/openai_session.sh"

# a streamed turn with two tool calls split into 3-character chunks, then an answer
cat >"$WORK/ok.script" <<'EOF'
{"content": "Let me check two things.", "tool_calls": [{"name": "bash", "arguments": "{\"command\": \"echo from-bash\"}"}, {"name": "write_cache", "arguments": "{\"key\": \"a\", \"value\": \"b\"}"}], "chunk_size": 3, "usage": {"prompt_tokens": 100, "completion_tokens": 20}}
{"content": "Both worked.", "chunk_size": 4, "usage": {"prompt_tokens": 150, "completion_tokens": 5}}
EOF
session ok
expect_eq "ok: completes" 0 $rc
expect_eq "ok: status" completed "$(ev "$WORK/ok.jsonl" 'of("session.end")[0]["status"]')"
expect_eq "ok: two model messages" 2 "$(ev "$WORK/ok.jsonl" 'len(of("model.message"))')"
expect_eq "ok: the deltas spell the first message" "Let me check two things." \
        "$(ev "$WORK/ok.jsonl" '"".join(e["text"] for e in E[:E.index(of("model.message")[0])] if e["type"] == "model.delta")')"
expect_eq "ok: tool calls assembled from chunks" '[["bash", {"command": "echo from-bash"}], ["write_cache", {"key": "a", "value": "b"}]]' \
        "$(ev "$WORK/ok.jsonl" 'json.dumps([[c["name"], json.loads(c["arguments"])] for c in of("tool.call")])')"
expect_match "ok: bash ran" "from-bash" "$(ev "$WORK/ok.jsonl" 'of("tool.result")[0]["output"] + of("tool.result")[1]["output"]')"
expect_eq "ok: usage summed" "{'prompt_tokens': 250, 'completion_tokens': 25}" \
        "$(ev "$WORK/ok.jsonl" 'of("session.end")[0]["usage"]')"
expect_eq "ok: the key reached the server as a header" "['ok', 'ok']" \
        "$(ev "$WORK/ok.log" '[r.get("auth") for r in E if "body" in r]')"
expect_eq "ok: the second request carries the tool results" 2 \
        "$(ev "$WORK/ok.log" 'len([m for m in [r for r in E if "body" in r][1]["body"]["messages"] if m["role"] == "tool"])')"
expect_eq "ok: requests stream and send the tools" "(True, 7)" \
        "$(ev "$WORK/ok.log" '(E[0]["body"]["stream"], len(E[0]["body"]["tools"]))')"
for f in ok.jsonl ok.trace ok.err; do
        check "ok: the key is not in $f" sh -c "! grep -q '$KEY' '$WORK/$f'"
done

# HTTP 500, then a good answer: one retry, then success
printf '{"fault": "http_500"}\n{"content": "recovered"}\n' >"$WORK/e500.script"
session e500
expect_eq "500: session completes" 0 $rc
expect_eq "500: one model.error, not final" "[(500, False)]" \
        "$(ev "$WORK/e500.jsonl" '[(e["http_status"], e["final"]) for e in of("model.error")]')"
expect_eq "500: answer kept" recovered "$(ev "$WORK/e500.jsonl" 'of("model.message")[0]["content"]')"

# 429 with Retry-After: 1 s
printf '{"fault": "http_429", "retry_after": 1}\n{"content": "after waiting"}\n' >"$WORK/e429.script"
session e429
expect_eq "429: session completes" 0 $rc
expect_eq "429: retry in 1000 ms" 1000 "$(ev "$WORK/e429.jsonl" 'of("model.error")[0]["retry_in_ms"]')"

# a connection dropped mid-stream is retried
printf '{"fault": "drop_mid_stream"}\n{"content": "second try"}\n' >"$WORK/drop.script"
session drop
expect_eq "drop: session completes" 0 $rc
expect_eq "drop: the retry is reported" 1 "$(ev "$WORK/drop.jsonl" 'len(of("model.error"))')"
expect_eq "drop: the answer" "second try" "$(ev "$WORK/drop.jsonl" 'of("model.message")[0]["content"]')"

# malformed SSE: a final error, the session fails
printf '{"fault": "malformed_sse"}\n' >"$WORK/bad.script"
session bad
expect_eq "malformed: exit 1" 1 $rc
expect_eq "malformed: status failed" failed "$(ev "$WORK/bad.jsonl" 'of("session.end")[0]["status"]')"
expect_match "malformed: the error says so" "malformed" "$(ev "$WORK/bad.jsonl" 'of("model.error")[-1]["message"]')"

# a stalled stream: the idle timeout retries, then gives up
printf '{"fault": "stall"}\n{"fault": "stall"}\n' >"$WORK/stall.script"
mkdir -p "$WORK/cfg"
printf '{"provider": {"retries": 1, "timeout": "400ms"}}\n' >"$WORK/cfg/stall.json"
session stall --config "$WORK/cfg/stall.json"
expect_eq "stall: exit 1" 1 $rc
expect_eq "stall: one retry then a final error" "[False, True]" \
        "$(ev "$WORK/stall.jsonl" '[e["final"] for e in of("model.error")]')"

# 401: no retry, a clear final error
printf '{"fault": "http_401"}\n' >"$WORK/e401.script"
session e401
expect_eq "401: exit 1" 1 $rc
expect_eq "401: one final error" "[(401, True)]" \
        "$(ev "$WORK/e401.jsonl" '[(e["http_status"], e["final"]) for e in of("model.error")]')"

# a tool call with invalid JSON arguments: an error result, the session goes on
printf '{"fault": "invalid_json_args"}\n{"content": "fine"}\n' >"$WORK/args.script"
session args
expect_eq "bad args: session completes" 0 $rc
expect_eq "bad args: the call got an error result" False "$(ev "$WORK/args.jsonl" 'of("tool.result")[0]["ok"]')"
expect_match "bad args: the model is told" "not valid JSON" "$(ev "$WORK/args.jsonl" 'of("tool.result")[0]["output"]')"

# no key: a clear error before anything runs
err=$(env -u PROCTOR_API_KEY -u OPENAI_API_KEY -u HF_TOKEN "$PROCTOR" run --model openai:x \
        --workspace "$WORK" "hi" 2>&1); rc=$?
expect_eq "no key: exit 2" 2 $rc
expect_match "no key: says which variable" "PROCTOR_API_KEY" "$err"
finish
