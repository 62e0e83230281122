#!/bin/bash
# 64 sandboxes at once: one model message asks for 64 tool calls, which run
# concurrently (the session's cap and memory budget raised to let them),
# each in its own sandbox (its own pid namespace, hostname,
# /tmp and network), all with their own limits; every one finishes with its
# own output, none sees another, and nothing is left behind.
# as-user: yes
. "$(dirname "$0")/lib.sh"

N=64
mkdir -p "$WORK/ws"
# each call: waits until all are likely up, writes a marker to its private
# /tmp, lists the processes it can see, and checks its /tmp again later
# (the markers carry this run's pid: other runs of the suite go alongside)
"$T_PY" - "$N" "$$" >"$WORK/many.jsonl" <<'EOF'
import json, sys
n, tag = int(sys.argv[1]), sys.argv[2]
cmd = ("echo mine-" + tag + "-{i} > /tmp/marker; sleep 2; "
       "echo call-{i} pids=$(ls /proc | grep -c '^[0-9]') tmp=$(ls /tmp | wc -l) "
       "marker=$(cat /tmp/marker) host=$(hostname)")
calls = [{"name": "bash", "arguments": {"command": cmd.format(i=i)}} for i in range(n)]
print(json.dumps({"content": "many at once", "tool_calls": calls}))
print(json.dumps({"content": "all done"}))
EOF
"$PROCTOR" run --json --mode sandbox --model "script:$WORK/many.jsonl" --workspace "$WORK/ws" \
        --max-parallel $N --memory-budget $((N * 512))M "go" >"$WORK/events.jsonl" 2>"$WORK/err" &
pid=$!
if is_root; then
        has_cg_dirs_of() { [ -n "$(cg_dirs_of "$1")" ]; }
        check "its sandboxes' cgroups exist while it runs" wait_until 20 has_cg_dirs_of $pid
fi
wait $pid
expect_eq "the session completes" 0 $?
E=$WORK/events.jsonl
expect_eq "$N sandboxes made" $N "$(events_eval "$E" 'len(of("exec.create"))')"
expect_eq "all $N ran at the same time" $N "$(events_eval "$E" '
max(__import__("itertools").accumulate(
    1 if e["type"] == "exec.start" else -1
    for e in E if e["type"] in ("exec.start", "exec.exit")))')"
expect_eq "every one exited by itself" "['exited']" \
        "$(events_eval "$E" 'sorted(set(e["reason"] for e in of("exec.exit")))')"
expect_eq "every call succeeded" "[True]" \
        "$(events_eval "$E" 'sorted(set(r["ok"] for r in of("tool.result")))')"
expect_eq "every call printed its own line" $N "$(events_eval "$E" '
len(set(l for r in of("tool.result") for l in r["output"].split("\n") if l.startswith("call-")))')"
# its init, its shell, the subshell counting and its ls and grep: 5, not
# the hundreds the other sandboxes run
expect_eq "each saw only its own processes" "True" "$(events_eval "$E" '
all(__import__("re").search(r"pids=[3-6] ", r["output"]) for r in of("tool.result"))')"
expect_eq "each /tmp held only its own marker" "True" "$(events_eval "$E" '
all(__import__("re").search(r"call-(\d+) .*tmp=1 marker=mine-\d+-\1 host=sandbox", r["output"])
    for r in of("tool.result"))')"
expect_eq "limits held for each" $N "$(events_eval "$E" '
len([e for e in of("exec.create") if e["limits"].get("pids") == 128])')"
check "no sandbox process is left" no_process "echo mine-$$-"
if is_root; then
        check "no cgroup is left" no_cg_dirs_of $pid
fi
finish
