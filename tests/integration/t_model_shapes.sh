#!/bin/bash
# What real providers send, as canned streams from tests/fake_openai.py, and
# what a user of `proctor run` sees for each: the exit code, stdout, stderr
# and the trace's events. The key echoed back never shows, whole or cut.
# as-user: yes
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/openai_session.sh"

KEY=sk-fake-test-key-4242
PREFIX=${KEY:0:8} # any 8 characters of the key's start are too many

ev() { events_eval "$@"; }
# sse CHUNK...: one script line answering with exactly these data: events
sse() {
        "$T_PY" -c 'import json, sys
print(json.dumps({"raw": ["data: %s\n\n" % a for a in sys.argv[1:]]}))' "$@"
}
delta() { printf '{"choices":[{"index":0,"delta":%s,"finish_reason":%s}]}' "$1" "${2:-null}"; }
mkdir -p "$WORK/cfg"
printf '{"provider": {"retries": 0}}\n' >"$WORK/cfg/r0.json"
printf '{"provider": {"retries": 1}}\n' >"$WORK/cfg/r1.json"

no_key_anywhere() { # NAME: stdout, stderr and the trace hold no 8+ char prefix of the key
        local f
        for f in "$WORK/$1".{jsonl,out,err,trace}; do
                [ -e "$f" ] || continue
                check "$1: no key prefix in ${f##*/}" sh -c "! grep -qF '$PREFIX' '$f'"
        done
}

# 1. a 401 that echoes "Bearer KEY" with the key around the 300-character cut
for at in 285 292 296 300 304; do
        printf '{"fault": "http_401", "echo_key_at": %d}\n' $at >"$WORK/leak$at.script"
        session leak$at
        expect_eq "leak $at: exit 1" 1 $rc
        expect_match "leak $at: the error is there" "HTTP 401" "$(ev "$WORK/leak$at.jsonl" 'of("model.error")[0]["message"]')"
        no_key_anywhere leak$at
        cp "$WORK/leak$at.script" "$WORK/leakh$at.script"
        S_HUMAN=1 session leakh$at
        expect_match "leak $at, human: said on stderr" "model error: HTTP 401" "$(cat "$WORK/leakh$at.err")"
        no_key_anywhere leakh$at
done
# a key set with its trailing newline: sent trimmed, scrubbed as sent
printf '{"fault": "http_400", "echo_key": true}\n' >"$WORK/nl.script"
S_KEY="$KEY
" session nl
expect_eq "newline key: the server got the key" '["ok"]' "$(ev "$WORK/nl.log" 'json.dumps([r["auth"] for r in E if "auth" in r])')"
expect_match "newline key: redacted" "Bearer \[redacted\]" "$(ev "$WORK/nl.jsonl" 'of("model.error")[0]["message"]')"
no_key_anywhere nl

# 2. an emoji's surrogate pair cut between two chunks
sse "$(delta '{"role":"assistant","content":"party \uD83C"}')" "$(delta '{"content":"\uDF89!"}' '"stop"')" '[DONE]' >"$WORK/emoji.script"
S_HUMAN=1 session emoji
expect_eq "emoji: exit 0" 0 $rc
expect_eq "emoji: printed whole" "party 🎉!" "$(cat "$WORK/emoji.out")"

# 3. finish_reason: cut by the token limit, stopped by a filter, a refusal
printf '{"content": "The answer is fo", "finish_reason": "length"}\n' >"$WORK/length.script"
S_HUMAN=1 session length
expect_eq "length: exit 1" 1 $rc
expect_eq "length: the text" "The answer is fo" "$(cat "$WORK/length.out")"
expect_match "length: said" "incomplete: it reached the model's token limit" "$(cat "$WORK/length.err")"
expect_eq "length: in model.message" length "$(ev "$WORK/length.trace" 'of("model.message")[0]["finish_reason"]')"
expect_eq "length: session failed" failed "$(ev "$WORK/length.trace" 'of("session.end")[0]["status"]')"
expect_match "length: the trace summary says so" "model: the answer is incomplete" "$("$PROCTOR" replay --summary "$WORK/length.trace" 2>&1)"
printf '{"content": "Well", "finish_reason": "content_filter"}\n' >"$WORK/filter.script"
S_HUMAN=1 session filter
expect_eq "filter: exit 1" 1 $rc
expect_match "filter: said" "content filter stopped the answer" "$(cat "$WORK/filter.err")"
sse "$(delta '{"role":"assistant","content":null,"refusal":"I cannot help "}')" "$(delta '{"refusal":"with that."}' '"stop"')" '[DONE]' >"$WORK/refusal.script"
S_HUMAN=1 session refusal
expect_eq "refusal: exit 0" 0 $rc
expect_eq "refusal: printed as the answer" "I cannot help with that." "$(cat "$WORK/refusal.out")"
expect_match "refusal: said" "the model refused" "$(cat "$WORK/refusal.err")"
expect_match "refusal: the trace summary says so" "model: refused" "$("$PROCTOR" replay --summary "$WORK/refusal.trace" 2>&1)"
expect_eq "refusal: in model.message" "(True, 'I cannot help with that.', 'stop')" \
        "$(ev "$WORK/refusal.trace" '(of("model.message")[0]["refusal"], of("model.message")[0]["content"], of("model.message")[0]["finish_reason"])')"

# 4. a stream that just stops, and one that is only [DONE]: dropped streams
printf '{"content": "half an ans", "no_finish": true, "no_done": true}\n{"content": "half an answer, whole"}\n' >"$WORK/stop.script"
S_HUMAN=1 session stop
expect_eq "stops: retried, exit 0" 0 $rc
expect_eq "stops: the answer once" "half an answer, whole" "$(cat "$WORK/stop.out")"
expect_match "stops: the retry said" "the stream ended before the answer did.*retrying in" "$(cat "$WORK/stop.err")"
printf '{"content": "a", "no_finish": true, "no_done": true}\n{"content": "b", "no_finish": true, "no_done": true}\n' >"$WORK/stop2.script"
session stop2 --config "$WORK/cfg/r1.json"
expect_eq "stops twice: exit 1" 1 $rc
expect_eq "stops twice: no answer" 0 "$(ev "$WORK/stop2.jsonl" 'len(of("model.message"))')"
expect_match "stops twice: gave up" "ended before the answer did.*gave up after 2 attempts" "$(ev "$WORK/stop2.jsonl" 'of("model.error")[-1]["message"]')"
{ sse '[DONE]'; sse '[DONE]'; } >"$WORK/done.script"
session done --config "$WORK/cfg/r1.json"
expect_eq "only [DONE]: exit 1" 1 $rc
expect_match "only [DONE]: said" "\[DONE\] and no answer" "$(ev "$WORK/done.jsonl" 'of("model.error")[-1]["message"]')"

# 5. a retried stream: its text once; where it differs, taken back
printf '{"fault": "drop_mid_stream", "content": "Hello world, again and again"}\n{"content": "Hello world, again and again"}\n' >"$WORK/once.script"
S_HUMAN=1 session once
expect_eq "retry: exit 0" 0 $rc
expect_eq "retry: stdout has the text once" "Hello world, again and again" "$(cat "$WORK/once.out")"
expect_eq "retry: the deltas spell it once" "Hello world, again and again" "$(ev "$WORK/once.trace" '"".join(e["text"] for e in of("model.delta"))')"
expect_eq "retry: nothing taken back" 0 "$(ev "$WORK/once.trace" 'len(of("model.discard"))')"
printf '{"fault": "drop_mid_stream", "content": "Hello world"}\n{"content": "Hello there"}\n' >"$WORK/differ.script"
S_HUMAN=1 session differ
expect_eq "differs: exit 0" 0 $rc
expect_eq "differs: the last line is the answer" "Hello there" "$(tail -n 1 "$WORK/differ.out")"
expect_match "differs: said" "retried answer differs" "$(cat "$WORK/differ.err")"
# the deltas, each model.discard taking back its bytes, spell the answer
expect_eq "differs: deltas less the take-back" "Hello there" "$(ev "$WORK/differ.trace" '__import__("functools").reduce(lambda s, e: s + e["text"] if e["type"] == "model.delta" else s[:len(s) - e["bytes"]], of("model.delta") and [e for e in E if e["type"] in ("model.delta", "model.discard")], "")')"
expect_eq "differs: model.discard" "[2]" "$(ev "$WORK/differ.trace" '[e["bytes"] for e in of("model.discard")]')"

# 6. waits: retry-after-ms, a loading model, a quota that is spent
printf '{"fault": "http_429", "retry_after": 9, "headers": {"retry-after-ms": "300"}}\n{"content": "ok"}\n' >"$WORK/rams.script"
S_HUMAN=1 session rams
expect_eq "retry-after-ms: exit 0" 0 $rc
expect_eq "retry-after-ms: waited 300 ms" 300 "$(ev "$WORK/rams.trace" 'of("model.error")[0]["retry_in_ms"]')"
expect_match "retry-after-ms: said" "retrying in 0.3 s" "$(cat "$WORK/rams.err")"
printf '{"fault": "http_503", "json_body": {"error": "Model fake-model is currently loading", "estimated_time": 1.2}}\n{"content": "loaded"}\n' >"$WORK/load.script"
S_HUMAN=1 session load --config "$WORK/cfg/r0.json"
expect_eq "loading: waited, exit 0 (no retry was left)" 0 $rc
expect_eq "loading: the answer" loaded "$(cat "$WORK/load.out")"
expect_eq "loading: the wait" "[(503, 1200, False)]" "$(ev "$WORK/load.trace" '[(e["http_status"], e["retry_in_ms"], e["final"]) for e in of("model.error")]')"
expect_match "loading: said" "currently loading \(waiting for the model to load\); retrying in 1.2 s" "$(cat "$WORK/load.err")"
printf '{"fault": "http_429", "json_body": {"error": {"message": "You exceeded your current quota", "type": "insufficient_quota", "code": "insufficient_quota"}}}\n{"content": "never"}\n' >"$WORK/quota.script"
session quota
expect_eq "quota: exit 1" 1 $rc
expect_eq "quota: final at once" "[(429, True)]" "$(ev "$WORK/quota.jsonl" '[(e["http_status"], e["final"]) for e in of("model.error")]')"
expect_eq "quota: one request" 1 "$(ev "$WORK/quota.log" 'len([r for r in E if r.get("event") == "request"])')"

# 7. error events inside a 200 stream
sse '{"error": {"message": "Rate limit reached", "code": "rate_limit_exceeded"}}' >"$WORK/ise.script"
printf '{"content": "after the limit"}\n' >>"$WORK/ise.script"
session ise
expect_eq "in-stream 429: retried, exit 0" 0 $rc
expect_eq "in-stream 429: as a 429" "[(429, False)]" "$(ev "$WORK/ise.jsonl" '[(e["http_status"], e["final"]) for e in of("model.error")]')"
sse '{"error": {"message": "Invalid API key", "code": 401}}' >"$WORK/ise401.script"
session ise401
expect_eq "in-stream 401: exit 1" 1 $rc
expect_eq "in-stream 401: final" "[(401, True)]" "$(ev "$WORK/ise401.jsonl" '[(e["http_status"], e["final"]) for e in of("model.error")]')"

# 8. errors a user can act on
printf '{"fault": "http_404", "message": "no such route"}\n' >"$WORK/e404.script"
S_BASE= session e404
expect_match "404: names the URL and /v1" "HTTP 404 from http://127.0.0.1:[0-9]+/chat/completions: no such route .*under /v1" \
        "$(ev "$WORK/e404.jsonl" 'of("model.error")[0]["message"]')"
printf '{"raw": "", "status": 301, "headers": {"Location": "https://llm.example.com/v1/chat/completions"}}\n' >"$WORK/e301.script"
session e301
expect_eq "301: exit 1" 1 $rc
expect_match "301: names the target" "redirects to https://llm.example.com/v1/chat/completions .*--base-url https://llm.example.com/v1" \
        "$(ev "$WORK/e301.jsonl" 'of("model.error")[0]["message"]')"
printf '{"fault": "http_502", "body": "<html><head><title>502</title></head><body>nginx</body></html>"}\n' >"$WORK/e502.script"
session e502 --config "$WORK/cfg/r0.json"
expect_eq "html 502: the status line" "HTTP 502 Bad Gateway" "$(ev "$WORK/e502.jsonl" 'of("model.error")[0]["message"]')"
printf '{"fault": "http_500", "json_body": {"error": "TypeError", "message": "Cannot read properties of undefined (reading '"'"'content'"'"')"}}\n' >"$WORK/mock.script"
session mock --config "$WORK/cfg/r0.json"
expect_match "exception name: the message instead" "^HTTP 500: Cannot read properties of undefined" "$(ev "$WORK/mock.jsonl" 'of("model.error")[0]["message"]')"
printf '{"fault": "reset_mid_stream"}\n' >"$WORK/reset.script"
S_HUMAN=1 session reset --config "$WORK/cfg/r0.json"
# (the reset may come before or after the answer's headers were read)
expect_match "reset: said so" "(connection dropped mid-stream|no answer from http://127.0.0.1:[0-9]+/v1/chat/completions): connection reset by the server" "$(cat "$WORK/reset.err")"
expect_no_match "reset: the server was reached" "cannot reach" "$(cat "$WORK/reset.err")"
expect_no_match "reset: not libcurl's words" "select/poll" "$(cat "$WORK/reset.err")"
printf '{"fault": "invalid_json_args"}\n{"content": "fine"}\n' >"$WORK/callerr.script"
S_HUMAN=1 session callerr
expect_match "call error: the reason on its line" "<- call_[0-9a-z]+ error \([0-9]+ ms\): .*not valid JSON" "$(cat "$WORK/callerr.err")"

# 9. shapes to accept
sse "$(delta '{"role":"assistant","content":[{"type":"text","text":"in "},{"type":"text","text":"parts"}]}' '"stop"')" '[DONE]' >"$WORK/parts.script"
S_HUMAN=1 session parts
expect_eq "content parts: the text" "in parts" "$(cat "$WORK/parts.out")"
printf '{"content": "json as text", "no_stream": true, "content_type": "text/plain"}\n' >"$WORK/jtext.script"
S_HUMAN=1 session jtext
expect_eq "JSON labelled text/plain" "json as text" "$(cat "$WORK/jtext.out")"
printf '{"content": "sse as json", "content_type": "application/json"}\n' >"$WORK/sjson.script"
S_HUMAN=1 session sjson
expect_eq "SSE labelled application/json" "sse as json" "$(cat "$WORK/sjson.out")"
# two calls in parallel with neither index nor id, in each of two turns
calls_turn() {
        sse "$(delta '{"role":"assistant","tool_calls":[{"type":"function","function":{"name":"write_cache","arguments":"{\"key\": \"k1\", "}}]}')" \
                "$(delta '{"tool_calls":[{"function":{"arguments":"\"value\": \"v\"}"}}]}')" \
                "$(delta '{"tool_calls":[{"type":"function","function":{"name":"read_cache","arguments":"{\"key\": \"k1\"}"}}]}' '"tool_calls"')" '[DONE]'
}
{ calls_turn; calls_turn; printf '{"content": "done"}\n'; } >"$WORK/par.script"
session par
expect_eq "parallel calls: exit 0" 0 $rc
expect_eq "parallel calls: two per turn" '["write_cache", "read_cache", "write_cache", "read_cache"]' "$(ev "$WORK/par.jsonl" 'json.dumps([c["name"] for c in of("tool.call")])')"
expect_eq "parallel calls: the second waited for the first" '"v"' "$(ev "$WORK/par.jsonl" 'json.dumps(res(1)["output"])')"
expect_eq "made-up ids: unique across turns" 4 "$(ev "$WORK/par.jsonl" 'len(set(c["call_id"] for c in of("tool.call")))')"

# 10. a keyless local server: no Authorization header, no dummy key needed
printf '{"content": "no key needed"}\n' >"$WORK/nokey.script"
S_KEY= S_NOAUTH=1 S_HUMAN=1 session nokey
expect_eq "keyless: exit 0" 0 $rc
expect_eq "keyless: the answer" "no key needed" "$(cat "$WORK/nokey.out")"
expect_eq "keyless: no Authorization header" '["missing"]' "$(ev "$WORK/nokey.log" 'json.dumps([r["auth"] for r in E if "auth" in r])')"
finish
