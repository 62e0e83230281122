#!/bin/bash
# Approvals, headless: the policy's defaults (host with a terminal on stdin,
# never without one), the prompt on a real terminal (a detached tmux: y, n
# with a reason, a with a rule that then decides the next such call), the
# JSON protocol of run --json (allow, deny, edited arguments, a malformed
# line, an unknown id, stdin ended), no way to ask means denied with the
# reason and a non-zero exit, rules (deny over allow over the policy, the
# shell's control characters), the config file and the environment, and a
# call that waits holding no execution.
# as-user: yes
. "$(dirname "$0")/lib.sh"

. "$(dirname "$0")/tmux.sh"

S=$WORK/s
W=$WORK/ws
mkdir -p "$S" "$W"
cat >"$S/two.jsonl" <<'EOF'
{"content": "Two calls.", "tool_calls": [{"name": "bash", "arguments": {"command": "echo one > one.txt"}}, {"name": "bash", "arguments": {"command": "echo two > two.txt"}}]}
{"content": "Done."}
EOF
# one call, then a similar one in the next turn
cat >"$S/again.jsonl" <<'EOF'
{"content": "First.", "tool_calls": [{"name": "bash", "arguments": {"command": "touch a1.txt"}}]}
{"content": "Second.", "tool_calls": [{"name": "bash", "arguments": {"command": "touch a2.txt"}}]}
{"content": "Done."}
EOF
cat >"$S/rules.jsonl" <<'EOF'
{"content": "Four calls.", "tool_calls": [{"name": "bash", "arguments": {"command": "git --version"}}, {"name": "bash", "arguments": {"command": "git --version; touch chained.txt"}}, {"name": "bash", "arguments": {"command": "rm -f nothing.txt"}}, {"name": "read", "arguments": {"path": "one.txt"}}]}
{"content": "Done."}
EOF

# run NAME ARGS...: proctor run in $W with its trace in $WORK/NAME.trace,
# stdout in NAME.out, stderr in NAME.err; the status in NAME.rc
run() {
        local name=$1
        shift
        "$PROCTOR" run --workspace "$W" --trace "$WORK/$name.trace" "$@" go \
                >"$WORK/$name.out" 2>"$WORK/$name.err" </dev/null
        echo $? >"$WORK/$name.rc"
}
ev() { events_eval "$WORK/$1.trace" "$2"; }
rc() { cat "$WORK/$1.rc"; }

# ---- no terminal on stdin: never, unless asked ----
run never --mode local --model "script:$S/two.jsonl"
expect_eq "no terminal: the session completes" 0 "$(rc never)"
check "no terminal: both calls ran" test -f "$W/one.txt" -a -f "$W/two.txt"
expect_match "no terminal: the first lines say the policy and why" \
        "approval never \(the default without a terminal on stdin" "$(cat "$WORK/never.err")"
expect_eq "no terminal: session.start records never" never \
        "$(ev never 'of("session.start")[0]["approval"]["policy"]')"
expect_eq "no terminal: no approval event" 0 "$(ev never 'len(of("approval.request"))')"
rm -f "$W"/*.txt

# an explicit policy that asks, with no way to ask: denied, saying why
run nobody --mode local --approval host --model "script:$S/two.jsonl"
expect_eq "host without a terminal: exit 1" 1 "$(rc nobody)"
check "host without a terminal: nothing ran" test ! -e "$W/one.txt" -a ! -e "$W/two.txt"
expect_match "host without a terminal: the exit names the ways to allow" \
        "2 calls were denied: .*--approval never or --allow RULE" "$(cat "$WORK/nobody.err")"
expect_match "host without a terminal: the model reads why" \
        "asks the operator before this call, and no one could answer" \
        "$(ev nobody 'of("tool.result")[0]["output"]')"
expect_eq "host without a terminal: decided by the policy" "['policy', 'policy']" \
        "$(ev nobody '[d["by"] for d in of("approval.decision")]')"

# ---- sandbox mode: host does not ask for sandboxed calls; always does ----
run sbhost --mode sandbox --approval host --model "script:$S/two.jsonl"
expect_eq "sandbox, host: completes" 0 "$(rc sbhost)"
expect_eq "sandbox, host: no request" 0 "$(ev sbhost 'len(of("approval.request"))')"
check "sandbox, host: the calls ran" test -f "$W/one.txt" -a -f "$W/two.txt"
rm -f "$W"/*.txt
run sbalways --mode sandbox --approval always --model "script:$S/two.jsonl"
expect_eq "sandbox, always: two requests" 2 "$(ev sbalways 'len(of("approval.request"))')"
expect_match "sandbox, always: the request says where and the limits" \
        "a sandbox.*'memory_bytes': 536870912" \
        "$(ev sbalways '(of("approval.request")[0]["where"], of("approval.request")[0]["limits"])')"

# ---- rules: deny wins over allow, rules win over the policy ----
echo hi >"$W/one.txt"
give_away "$W"
run rules --mode local --approval always --allow 'bash:git *' --deny 'bash:rm *' \
        --allow 'bash:rm *' --allow read --model "script:$S/rules.jsonl"
expect_eq "rules: allowed by its rule" "allow" \
        "$(ev rules 'of("approval.decision")[0]["decision"]')"
expect_eq "rules: git's rule is named" "bash:git *" \
        "$(ev rules '[d.get("rule") for d in of("approval.decision") if d["call_id"] == of("tool.call")[0]["call_id"]][0]')"
expect_match "rules: the allowed call ran" "git version" "$(ev rules 'res(0)["output"]')"
check "rules: a chained command is not allowed by 'git *'" test ! -e "$W/chained.txt"
# (a redirect, a pipe, a substitution: the same, unless the pattern spells them)
expect_eq "rules: the chained command asked (and, no one to ask, was denied)" "policy" \
        "$(ev rules '[d["by"] for d in of("approval.decision") if d["call_id"] == of("tool.call")[1]["call_id"]][0]')"
expect_eq "rules: deny wins over an allow of the same calls" "deny bash:rm *" \
        "$(ev rules '[d["decision"] + " " + d["rule"] for d in of("approval.decision") if d["call_id"] == of("tool.call")[2]["call_id"]][0]')"
expect_match "rules: the model reads the rule" "denied by the operator's rule 'bash:rm \*'" \
        "$(ev rules 'res(2)["output"]')"
expect_eq "rules: read allowed by its rule" "allow read" \
        "$(ev rules '[d["decision"] + " " + d["rule"] for d in of("approval.decision") if d["call_id"] == of("tool.call")[3]["call_id"]][0]')"
expect_eq "rules: session.start lists them, deny first" \
        "['deny bash:rm *', 'allow bash:git *', 'allow bash:rm *', 'allow read']" \
        "$(ev rules '[r["decision"] + " " + r["rule"] for r in of("session.start")[0]["approval"]["rules"]]')"
rm -f "$W"/*.txt

# a bad rule, a bad policy: usage errors that name them
"$PROCTOR" run --workspace "$W" --approval sometimes --model "script:$S/two.jsonl" go \
        >/dev/null 2>"$WORK/bad.err" </dev/null
expect_eq "a bad policy: exit 2" 2 "$?"
expect_match "a bad policy: named" "unknown approval policy 'sometimes' \(expected host, always or never\)" \
        "$(cat "$WORK/bad.err")"
"$PROCTOR" run --workspace "$W" --allow ':x' --model "script:$S/two.jsonl" go \
        >/dev/null 2>"$WORK/badrule.err" </dev/null
expect_eq "a bad rule: exit 2" 2 "$?"
expect_match "a bad rule: named" "rule ':x': no tool named" "$(cat "$WORK/badrule.err")"

# ---- the config file and the environment ----
cat >"$WORK/config.json" <<'EOF'
{"approval": "always", "deny": ["bash:echo two*"], "allow": ["bash"]}
EOF
run config --mode local --config "$WORK/config.json" --model "script:$S/two.jsonl"
expect_eq "config: its policy" always "$(ev config 'of("session.start")[0]["approval"]["policy"]')"
expect_eq "config: its rules decide" "['allow', 'deny']" \
        "$(ev config '[d["decision"] for d in of("approval.decision")]')"
check "config: the allowed call ran, the denied one did not" test -f "$W/one.txt" -a ! -e "$W/two.txt"
rm -f "$W"/*.txt
echo '{"approval": 3}' >"$WORK/badconfig.json"
"$PROCTOR" run --workspace "$W" --config "$WORK/badconfig.json" --model "script:$S/two.jsonl" go \
        >/dev/null 2>"$WORK/badconfig.err" </dev/null
expect_match "config: a bad value is named" "approval: expected a non-empty string, got 3" \
        "$(cat "$WORK/badconfig.err")"
PROCTOR_APPROVAL=host run env --mode local --model "script:$S/two.jsonl"
expect_eq "PROCTOR_APPROVAL: its policy" host "$(ev env 'of("session.start")[0]["approval"]["policy"]')"
PROCTOR_APPROVAL=host run envflag --mode local --approval never --model "script:$S/two.jsonl"
expect_eq "--approval wins over PROCTOR_APPROVAL" never \
        "$(ev envflag 'of("session.start")[0]["approval"]["policy"]')"
rm -f "$W"/*.txt

# ---- run --json: decisions as JSON lines on stdin ----
# json NAME: proctor run --json fed by the decisions the python below sends
# as the requests come; its events in NAME.trace (the --trace file)
json_session() {
        local name=$1 model=$2 answers=$3
        shift 3
        timeout 60 "$T_PY" - "$PROCTOR" "$W" "$WORK/$name.trace" "$model" "$answers" "$@" \
                >"$WORK/$name.out" 2>"$WORK/$name.err" <<'PYEOF'
import json, subprocess, sys
proctor, ws, trace, model, answers = sys.argv[1:6]
extra = sys.argv[6:]
answers = json.loads(answers)
p = subprocess.Popen([proctor, "run", "--json", "--mode", "local", "--approval", "always",
                      "--workspace", ws, "--trace", trace, "--model", model] + extra + ["go"],
                     stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
asked = 0
for line in p.stdout:
    e = json.loads(line)
    print(line, end="")
    if e["type"] != "approval.request":
        continue
    a = answers[asked] if asked < len(answers) else None
    asked += 1
    if a is None:
        continue
    for pre in a.get("before", []):
        p.stdin.write(pre + "\n")
    if "decision" in a:
        d = {"type": "approval.decision", "call_id": e["call_id"], "decision": a["decision"]}
        for k in ("reason", "arguments", "rule"):
            if k in a:
                d[k] = a[k]
        p.stdin.write(json.dumps(d) + "\n")
    if a.get("close"):
        p.stdin.close()
    else:
        p.stdin.flush()
sys.exit(p.wait())
PYEOF
        echo $? >"$WORK/$name.rc"
}
json_session js "script:$S/two.jsonl" '[
  {"before": ["not json", "{\"type\": \"approval.decision\", \"call_id\": \"nope\", \"decision\": \"allow\"}",
              "{\"type\": \"hello\"}"],
   "decision": "deny", "reason": "not this one"},
  {"decision": "allow", "arguments": "{\"command\": \"echo edited > edited.txt\"}"}]'
expect_eq "json: the session completes" 0 "$(rc js)"
expect_match "json: a malformed line is an error event" "not a JSON object" \
        "$(ev js '[e["message"] for e in of("error")]')"
expect_match "json: an unknown call_id is an error event" "no call 'nope' waits for approval" \
        "$(ev js '[e["message"] for e in of("error")]')"
expect_match "json: another message type is an error event" "unknown message type" \
        "$(ev js '[e["message"] for e in of("error")]')"
expect_eq "json: the deny's reason reaches the model" "denied by the operator: not this one" \
        "$(ev js 'res(0)["output"]')"
check "json: the denied call did not run" test ! -e "$W/one.txt"
check "json: the edited call ran as edited" test -s "$W/edited.txt"
check "json: not as the model wrote it" test ! -e "$W/two.txt"
expect_match "json: the model is told of the edit" "the operator edited this call's arguments" \
        "$(ev js 'res(1)["output"]')"
expect_eq "json: the decision records the edit" '{"command": "echo edited > edited.txt"}' \
        "$(ev js 'of("approval.decision")[1]["arguments"]')"
# a call that waits holds no execution: its exec.create comes after its decision
expect_eq "json: no execution before the decision" True \
        "$(ev js 'all(x["seq"] > d["seq"] for d in of("approval.decision") for x in of("exec.create") if x.get("call_id") == d["call_id"])')"
expect_eq "json: one execution, for the allowed call" 1 "$(ev js 'len(of("exec.create"))')"
expect_eq "json: waited_ms counts the wait" True \
        "$(ev js 'all(isinstance(d["waited_ms"], int) for d in of("approval.decision"))')"
rm -f "$W"/*.txt

# sandbox mode, always: the sandbox is made only once the call is allowed
json_session jssb "script:$S/two.jsonl" '[{"decision": "allow"}, {"decision": "deny"}]' \
        --mode sandbox
expect_eq "json, sandbox: completes" 0 "$(rc jssb)"
expect_eq "json, sandbox: one sandbox, made after its decision" "[True]" \
        "$(ev jssb '[x["seq"] > of("approval.decision")[0]["seq"] for x in of("exec.create")]')"
expect_eq "json, sandbox: it is the allowed call's" True \
        "$(ev jssb 'of("exec.create")[0]["call_id"] == of("approval.decision")[0]["call_id"]')"
check "json, sandbox: the allowed call ran" test -f "$W/one.txt"
check "json, sandbox: the denied one did not" test ! -e "$W/two.txt"
rm -f "$W"/*.txt

# stdin ends while a call waits: denied, saying why; exit 1
json_session jsclosed "script:$S/two.jsonl" '[{"decision": "allow"}, {"close": true}]'
expect_eq "json, stdin ended: exit 1" 1 "$(rc jsclosed)"
check "json, stdin ended: the allowed call ran" test -f "$W/one.txt"
check "json, stdin ended: the other did not" test ! -e "$W/two.txt"
expect_match "json, stdin ended: the model reads why" "no answer could come: stdin ended" \
        "$(ev jsclosed 'res(1)["output"]')"
expect_match "json, stdin ended: the exit names the ways to allow" \
        "--approval never or --allow RULE" "$(cat "$WORK/jsclosed.err")"
rm -f "$W"/*.txt

# an allow with a rule added: the next similar call is allowed by it
json_session jsrule "script:$S/again.jsonl" '[{"decision": "allow", "rule": "bash:touch *"}]'
expect_eq "json, rule added: completes" 0 "$(rc jsrule)"
expect_eq "json, rule added: the second call is allowed by it" "rule bash:touch *" \
        "$(ev jsrule 'of("approval.decision")[1]["by"] + " " + of("approval.decision")[1]["rule"]')"
check "json, rule added: both ran" test -f "$W/a1.txt" -a -f "$W/a2.txt"
rm -f "$W"/*.txt

# SIGINT while a call waits: denied, the session ends interrupted
"$PROCTOR" run --json --mode local --approval always --workspace "$W" \
        --trace "$WORK/int.trace" --model "script:$S/two.jsonl" go \
        >"$WORK/int.out" 2>/dev/null < <(sleep 30) &
pid=$!
track_pid $pid
wait_until 10 grep -q approval.request "$WORK/int.out"
kill -INT $pid
wait $pid
expect_eq "interrupt while waiting: exit 130" 130 "$?"
expect_eq "interrupt while waiting: both denied by the operator" "['deny', 'deny']" \
        "$(ev int '[d["decision"] for d in of("approval.decision")]')"
check "interrupt while waiting: nothing ran" test ! -e "$W/one.txt" -a ! -e "$W/two.txt"

# ---- a terminal: the default is host, and each call is a prompt ----
run_cmd="'$PROCTOR' run --mode local --workspace '$W' --model 'script:$S/again.jsonl'"
start p 160x30 "$run_cmd --trace '$WORK/p.trace' go"
expect_screen p "approval host \(the default with a terminal on stdin\)" "a terminal: host by default"
expect_screen p "policy host asks: allow bash \{\"command\":\"touch a1.txt\"\}" "the prompt names the call"
expect_screen p "in this host \(local mode\): not isolated\?" "the prompt says where it runs"
expect_screen p "\[y\]es \[n\]o \[a\]lways:" "the prompt's keys"
$T send-keys -t p y Enter
expect_screen p "touch a2.txt" "y: the next call asks"
check "y: the first call ran" test -f "$W/a1.txt"
$T send-keys -t p n Enter
expect_screen p "reason, for the model \(Enter for none\):" "n: asks for a reason"
$T send-keys -t p "not now" Enter
expect_screen p "EXITED 0" "the session completes"
check "n: the second call did not run" test ! -e "$W/a2.txt"
expect_eq "n: the reason reaches the model" "denied by the operator: not now" \
        "$(ev p 'res(1)["output"]')"
rm -f "$W"/*.txt

start pa 160x30 "$run_cmd --trace '$WORK/pa.trace' go"
expect_screen pa "\[y\]es \[n\]o \[a\]lways:" "a: the prompt"
$T send-keys -t pa a Enter
expect_screen pa "rule to add, Enter to keep it \[bash:touch a1.txt\*\]:" "a: the rule offered"
$T send-keys -t pa "bash:touch *" Enter
expect_screen pa "EXITED 0" "a: the session completes without a second prompt"
expect_eq "a: the edited rule allowed the next call" "rule bash:touch *" \
        "$(ev pa 'of("approval.decision")[1]["by"] + " " + of("approval.decision")[1]["rule"]')"
expect_eq "a: the decision records the rule added" "bash:touch *" \
        "$(ev pa 'of("approval.decision")[0]["rule_added"]')"
check "a: both calls ran" test -f "$W/a1.txt" -a -f "$W/a2.txt"

finish
