#!/bin/bash
# Where MCP servers come from: the config file's mcpServers, then each
# --mcp-config FILE in order, a later entry replacing an earlier one of the
# same name. The server is tests' mcp_fake.py; a broken entry (exit 3) shows
# which one won.
# as-user: yes
. "$(dirname "$0")/lib.sh"

cp "$(dirname "$0")/mcp_fake.py" "$WORK/"
give_away "$WORK/mcp_fake.py"
good() { echo "{\"command\": \"python3\", \"args\": [\"mcp_fake.py\"], \"env\": {\"WHO\": \"$1\"}}"; }
BAD='{"command": "sh", "args": ["-c", "echo broken entry >&2; exit 3"]}'
cat >"$WORK/config.json" <<JSON
{"mcpServers": {"a": $(good config), "b": $BAD}}
JSON
cat >"$WORK/one.json" <<JSON
{"mcpServers": {"b": $(good one), "c": $BAD}}
JSON
cat >"$WORK/two.json" <<JSON
{"mcpServers": {"c": $(good two), "d": $(good two)}}
JSON
# states ARGS...: "name:state ..." from mcp list --json
states() {
        (cd "$WORK" && "$PROCTOR" mcp list --json "$@" 2>/dev/null) |
                python3 -c 'import json,sys; print(" ".join(sorted("%s:%s" % (s["name"], s["state"]) for s in json.load(sys.stdin))))'
}

expect_eq "the config file alone" "a:ready b:failed" "$(states --config config.json)"
expect_eq "one --mcp-config is merged over it" "a:ready b:ready c:failed" \
        "$(states --config config.json --mcp-config one.json)"
expect_eq "every --mcp-config counts, a later one's entry winning" "a:ready b:ready c:ready d:ready" \
        "$(states --config config.json --mcp-config one.json --mcp-config two.json)"
expect_eq "in the order given" "a:ready b:ready c:failed d:ready" \
        "$(states --config config.json --mcp-config=two.json --mcp-config one.json)"
echo '{}' >"$WORK/empty.json"
expect_eq "without servers in the config file" "b:ready c:failed d:ready" \
        "$(states --config empty.json --mcp-config two.json --mcp-config one.json)"

# a session gets the same merge: each server's own entry
cat >"$WORK/calls.jsonl" <<'JSON'
{"content": "", "tool_calls": [{"name": "mcp__a__env", "arguments": {}}, {"name": "mcp__b__env", "arguments": {}}, {"name": "mcp__c__env", "arguments": {}}]}
{"content": "done"}
JSON
T=$WORK/run.jsonl
(cd "$WORK" && "$PROCTOR" run --config config.json --mcp-config one.json --mcp-config two.json \
        --model script:calls.jsonl --trace "$T" "env" >/dev/null 2>&1)
expect_eq "a session runs each server from the entry that won" "WHO=config WHO=one WHO=two" \
        "$(python3 -c 'import json,sys
out = {}
for l in open(sys.argv[1]):
    e = json.loads(l)
    if e["type"] == "tool.result":
        out[e["call_id"]] = [x for x in e["output"].splitlines() if x.startswith("WHO=")][0]
print(" ".join(out[k] for k in sorted(out)))' "$T")"

out=$(cd "$WORK" && "$PROCTOR" mcp list --mcp-config one.json --mcp-config /nonexistent.json 2>&1); rc=$?
expect_eq "a missing file among several is an error" 2 $rc
expect_match "naming it" "/nonexistent.json" "$out"
echo '{"mcpServers": {"x": {"args": []}}}' >"$WORK/bad.json"
out=$(cd "$WORK" && "$PROCTOR" mcp list --mcp-config one.json --mcp-config bad.json 2>&1); rc=$?
expect_eq "a bad entry in a later file is an error" 2 $rc
expect_match "naming the file and the entry" "bad.json: mcpServers.x.command: missing" "$out"
expect_match "--help says it repeats" "repeatable" "$("$PROCTOR" run --help)"

finish
