#!/bin/bash
# Interop with servers that bend the OpenAI shape, found by running real
# ones, as canned streams from tests/fake_openai.py: tool-call ids reused
# across turns (gateways and small local servers number calls per answer),
# a stream cut inside an event, an error body that is not UTF-8, servers
# that refuse stream_options, an endpoint behind a private CA, a 200 that
# holds no chat completion, the legacy function_call, older vLLM's in-stream
# error, and key fragments echoed back.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/openai_session.sh"

KEY=sk-interop-test-key-31337
ev() { events_eval "$@"; }

# ---- a reused tool-call id gets a unique one ----
cat >"$WORK/reuse.script" <<'JSON'
{"tool_calls": [{"id": "call_0", "name": "bash", "arguments": "{\"command\": \"echo one\"}"}]}
{"tool_calls": [{"id": "call_0", "name": "bash", "arguments": "{\"command\": \"echo two\"}"}, {"id": "call_0", "name": "bash", "arguments": "{\"command\": \"echo three\"}"}]}
{"content": "done"}
JSON
session reuse
expect_eq "reused ids: the session completes" 0 $rc
ids=$(ev "$WORK/reuse.jsonl" '" ".join(c["call_id"] for c in of("tool.call"))')
expect_eq "reused ids: three calls, three ids" 3 "$(tr ' ' '\n' <<<"$ids" | sort -u | wc -l)"
expect_match "reused ids: the first keeps the model's" "^call_0 " "$ids"
expect_eq "reused ids: each result under its own call" "one two three" \
        "$(ev "$WORK/reuse.jsonl" '" ".join(next(r["output"].strip() for r in of("tool.result") if r["call_id"] == c["call_id"]) for c in of("tool.call"))')"
# what went back to the model: each tool message answers one call of the
# assistant message before it, by the id given there
expect_eq "reused ids: the model is sent consistent ids" "True" \
        "$("$T_PY" -c 'import json, sys
reqs = [json.loads(l) for l in open(sys.argv[1]) if l.startswith("{")]
body = [r for r in reqs if "body" in r][-1]["body"]
msgs = body["messages"] if isinstance(body, dict) else json.loads(body)["messages"]
ok, seen = True, set()
for m in msgs:
    if m["role"] == "assistant":
        ids = [c["id"] for c in m.get("tool_calls") or []]
        ok = ok and len(ids) == len(set(ids)) and not (set(ids) & seen)
        seen |= set(ids)
    if m["role"] == "tool":
        ok = ok and m["tool_call_id"] in seen
print(ok)' "$WORK/reuse.log")"
expect_eq "reused ids: replay --summary counts three calls" 3 \
        "$("$PROCTOR" replay --summary "$WORK/reuse.trace" | grep -cE '^ +[0-9]+ +bash ' || true)"

# ---- a stream cut inside an event is a dropped stream, retried ----
# (no Content-Length and no chunks: the body ends where the connection does)
cat >"$WORK/cut.script" <<'JSON'
{"raw": ["data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"hel"], "close_delimited": true}
{"content": "recovered"}
JSON
session cut
expect_eq "cut inside an event: the session completes" 0 $rc
expect_match "cut inside an event: said, and retried" "connection dropped mid-stream.*attempt 1 of" \
        "$(ev "$WORK/cut.jsonl" 'of("model.error")[0]["message"]')"
expect_eq "cut inside an event: the retry's answer" "recovered" \
        "$(ev "$WORK/cut.jsonl" 'of("model.message")[0]["content"]')"
# control: a whole last event without its blank line still counts
cat >"$WORK/tail.script" <<'JSON'
{"raw": ["data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"whole\"},\"finish_reason\":\"stop\"}]}\n\ndata: [DONE]"], "close_delimited": true}
JSON
session tail
expect_eq "a last event without its blank line: the session completes" 0 $rc
expect_eq "a last event without its blank line: no error" 0 "$(ev "$WORK/tail.jsonl" 'len(of("model.error"))')"

# ---- an error body that is not UTF-8: its status and a cleaned excerpt ----
mkdir -p "$WORK/cfg"
printf '{"provider": {"retries": 0}}\n' >"$WORK/cfg/r0.json"
cat >"$WORK/latin.script" <<'JSON'
{"raw": ["Erreur 502 : la passerelle a re\u00e7u une r\u00e9ponse invalide"], "status": 502, "content_type": "text/plain; charset=iso-8859-1", "encoding": "latin-1"}
JSON
cp "$WORK/latin.script" "$WORK/latinh.script"
session latin --config "$WORK/cfg/r0.json"
expect_eq "Latin-1 error body: the session fails" 1 $rc
expect_eq "Latin-1 error body: status, a cleaned excerpt, final" \
        "502 HTTP 502: Erreur 502 : la passerelle a re?u une r?ponse invalide True" \
        "$(ev "$WORK/latin.jsonl" '"%s %s %s" % tuple(of("model.error")[0][k] for k in ("http_status", "message", "final"))')"
S_HUMAN=1 session latinh --config "$WORK/cfg/r0.json"
expect_match "Latin-1 error body: stderr says it" "model error: HTTP 502: Erreur 502" "$(cat "$WORK/latinh.err")"
expect_no_match "Latin-1 error body: no retry promised when none comes" "retrying" "$(cat "$WORK/latinh.err")"

# ---- stream_options can be left out, for servers that refuse it ----
printf '{"provider": {"stream_options": false}}\n' >"$WORK/cfg/noso.json"
printf '{"provider": {"stream_options": "no"}}\n' >"$WORK/cfg/badso.json"
echo '{"content": "ok"}' >"$WORK/so.script"
cp "$WORK/so.script" "$WORK/noso.script"
sent_options() { "$T_PY" -c 'import json, sys
r = [json.loads(l) for l in open(sys.argv[1])]
print("stream_options" in [x for x in r if x.get("event") == "request"][0]["body"])' "$1"; }
session so
expect_eq "stream_options: sent by default (usage in the stream)" True "$(sent_options "$WORK/so.log")"
session noso --config "$WORK/cfg/noso.json"
expect_eq "stream_options false: the session completes" 0 $rc
expect_eq "stream_options false: left out" False "$(sent_options "$WORK/noso.log")"
out=$("$PROCTOR" run --config "$WORK/cfg/badso.json" --model demo hi 2>&1); rc=$?
expect_eq "stream_options not a boolean: exit 2" 2 $rc
expect_match "stream_options not a boolean: said" "stream_options.*true or false" "$out"

# ---- an endpoint behind a private CA: --ca-cert ----
if command -v openssl >/dev/null; then
        C=$WORK/ca
        mkdir -p "$C"
        (cd "$C" &&
                openssl req -x509 -newkey rsa:2048 -nodes -keyout ca.key -out ca.pem -days 1 \
                        -subj /CN=proctor-test-ca &&
                openssl req -newkey rsa:2048 -nodes -keyout srv.key -out srv.csr -subj /CN=127.0.0.1 &&
                printf 'subjectAltName=IP:127.0.0.1\n' >ext &&
                openssl x509 -req -in srv.csr -CA ca.pem -CAkey ca.key -CAcreateserial -out srv.pem \
                        -days 1 -extfile ext) >/dev/null 2>&1
        printf '{"content": "over tls"}\n{"content": "over tls"}\n' >"$WORK/tls.script"
        "$T_PY" "$TOP/tests/fake_openai.py" --script "$WORK/tls.script" --tls "$C/srv.pem" "$C/srv.key" \
                --ignore-stdin >"$WORK/tls.port" 2>"$WORK/tls.srv" &
        track_pid $!
        wait_until 5 grep -q PORT "$WORK/tls.port"
        url=https://127.0.0.1:$(awk '/PORT/ { print $2 }' "$WORK/tls.port")/v1
        out=$(PROCTOR_API_KEY=$KEY "$PROCTOR" run --model openai:m --base-url "$url" \
                --config "$WORK/cfg/r0.json" hi 2>&1); rc=$?
        expect_eq "private CA, not given: the session fails" 1 $rc
        expect_match "private CA, not given: says the certificate and the fix" \
                "certificate.*--ca-cert FILE" "$out"
        out=$(PROCTOR_API_KEY=$KEY "$PROCTOR" run --ca-cert "$C/ca.pem" --model openai:m \
                --base-url "$url" hi 2>/dev/null)
        expect_eq "private CA, --ca-cert: the answer comes" "over tls" "$out"
        out=$(PROCTOR_CA_CERT=$C/ca.pem PROCTOR_API_KEY=$KEY "$PROCTOR" run --model openai:m \
                --base-url "$url" hi 2>/dev/null)
        expect_eq "private CA, PROCTOR_CA_CERT: the answer comes" "over tls" "$out"
else
        echo "t_model_interop: no openssl: --ca-cert not tested"
fi

# ---- a 200 that is no chat completion says what it was ----
cat >"$WORK/html.script" <<'JSON'
{"raw": ["<!DOCTYPE html><html><head><title>Sign in</title></head><body>Please sign in</body></html>"], "content_type": "text/html; charset=utf-8", "close_delimited": true}
JSON
session html --config "$WORK/cfg/r0.json"
expect_eq "HTML with 200: the session fails" 1 $rc
expect_match "HTML with 200: says a page came, where from, and what it said" \
        "HTTP 200 with an HTML page, not a chat completion \(is http://127.0.0.1:[0-9]+/v1/chat/completions the right endpoint.*Please sign in" \
        "$(ev "$WORK/html.jsonl" 'of("model.error")[0]["message"]')"
expect_eq "HTML with 200: not retried (it would answer the same)" 1 "$(grep -c '"event": "request"' "$WORK/html.log")"
"$T_PY" -c 'import gzip, json
print(json.dumps({"raw": [gzip.compress(b"{\"choices\": []}").decode("latin-1")], "encoding": "latin-1",
                  "content_type": "application/json", "close_delimited": True}))' >"$WORK/gz.script"
session gz --config "$WORK/cfg/r0.json"
expect_match "gzip with 200: says so" "HTTP 200 with a gzip body it did not declare" \
        "$(ev "$WORK/gz.jsonl" 'of("model.error")[0]["message"]')"

# ---- a legacy function_call answer is a tool call, not silence ----
cat >"$WORK/legacy.script" <<'JSON'
{"raw": ["data: {\"choices\":[{\"index\":0,\"delta\":{\"role\":\"assistant\",\"function_call\":{\"name\":\"bash\",\"arguments\":\"{\\\"command\\\": \"}}}]}\n\n", "data: {\"choices\":[{\"index\":0,\"delta\":{\"function_call\":{\"arguments\":\"\\\"echo legacy-ran\\\"}\"}}}]}\n\n", "data: {\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"function_call\"}]}\n\n", "data: [DONE]\n\n"]}
{"content": "done"}
JSON
session legacy
expect_eq "legacy function_call: the session completes" 0 $rc
expect_eq "legacy function_call: the call is made" 'bash {"command": "echo legacy-ran"}' \
        "$(ev "$WORK/legacy.jsonl" 'of("tool.call")[0]["name"] + " " + of("tool.call")[0]["arguments"]')"
expect_eq "legacy function_call: and runs" "legacy-ran" \
        "$(ev "$WORK/legacy.jsonl" 'of("tool.result")[0]["output"].strip()')"

# ---- older vLLM's in-stream error: the error object itself ----
mkdir -p "$WORK/cfg"
printf '{"provider": {"retries": 2}}\n' >"$WORK/cfg/r2.json"
cat >"$WORK/vllm.script" <<'JSON'
{"raw": ["data: {\"object\": \"error\", \"message\": \"This model's maximum context length is 4096 tokens\", \"type\": \"BadRequestError\", \"param\": null, \"code\": 400}\n\n"]}
{"content": "a retry was not expected"}
JSON
session vllm --config "$WORK/cfg/r2.json"
expect_eq "vLLM error: the session fails" 1 $rc
expect_match "vLLM error: its message reaches the operator" \
        "maximum context length is 4096 tokens" "$(ev "$WORK/vllm.jsonl" 'of("model.error")[0]["message"]')"
expect_eq "vLLM error: its status is read" 400 "$(ev "$WORK/vllm.jsonl" 'of("model.error")[0]["http_status"]')"
expect_eq "vLLM error: a 400 is not retried" 1 "$(grep -c '"event": "request"' "$WORK/vllm.log")"

# ---- any 8 bytes of the key in a row are redacted, wherever they stand ----
MIDDLE=${KEY:4:16}
SUFFIX=${KEY: -14}
EIGHT=${KEY:9:8}
"$T_PY" -c 'import json, sys
print(json.dumps({"fault": "http_401", "json_body": {"error": {"message":
    "invalid key ...%s... (ends %s; near %s)" % tuple(sys.argv[1:4])}}}))' \
        "$MIDDLE" "$SUFFIX" "$EIGHT" >"$WORK/frag.script"
for human in 0 1; do
        cp "$WORK/frag.script" "$WORK/frag$human.script"
        S_HUMAN=$human session frag$human
        expect_eq "key fragments ($human): the session fails" 1 $rc
        for f in "$WORK/frag$human".{jsonl,out,err,trace}; do
                [ -e "$f" ] || continue
                expect_no_match "key fragments ($human): none in ${f##*/}" "$MIDDLE|$SUFFIX|$EIGHT" "$(cat "$f")"
        done
done
expect_match "key fragments: the message is still there, redacted" \
        "invalid key \.\.\.\[redacted\]\.\.\. \(ends \[redacted\]; near \[redacted\]\)" "$(cat "$WORK/frag1.err")"
finish
