#!/bin/bash
# A session's executions are bounded: one model turn asking for 8 calls runs
# at most --max-parallel of them at once (the rest queued, FIFO) in both
# modes, and at most what the memory budget allows in sandbox mode; a call
# that could never fit the budget gets an error; interrupting cancels the
# queued calls, each with a result; the bounds are in session.start.
# as-user: yes
. "$(dirname "$0")/lib.sh"

ev() { events_eval "$@"; }

# calls.jsonl N COMMAND: one turn of N bash calls, then an answer
make_script() {
        "$T_PY" - "$@" <<'EOF'
import json, sys
n, cmd = int(sys.argv[1]), sys.argv[2]
calls = [{"name": "bash", "arguments": {"command": cmd.replace("{i}", str(i))}} for i in range(n)]
print(json.dumps({"content": "all at once", "tool_calls": calls}))
print(json.dumps({"content": "done"}))
EOF
}

# Each call prints when it started and ended, in ns of the shared clock.
make_script 8 'echo "T{i} $(date +%s%N) $(sleep 0.4; date +%s%N)"' >"$WORK/timed.jsonl"

# max_overlap FILE: the most calls whose printed intervals overlapped
max_overlap() {
        ev "$1" '(lambda iv: max(sum(1 for s, e in iv if s <= t < e) for t, _ in iv))(
[tuple(map(int, l.split()[1:3])) for r in of("tool.result") for l in r["output"].splitlines() if l.startswith("T")])'
}
# max_live FILE: the most executions between exec.create and exec.remove
max_live() {
        ev "$1" 'max(__import__("itertools").accumulate(
    1 if e["type"] == "exec.create" else -1 for e in E if e["type"] in ("exec.create", "exec.remove")))'
}

for mode in local sandbox; do
        out=$WORK/par-$mode.jsonl
        "$PROCTOR" run --json --mode $mode --max-parallel 2 --model "script:$WORK/timed.jsonl" \
                --workspace "$WORK" "go" >"$out" 2>"$WORK/par-$mode.err"
        expect_eq "$mode: the session completes" 0 $?
        expect_eq "$mode: all 8 calls succeeded" "8 [True]" \
                "$(ev "$out" 'str(len(of("tool.result"))) + " " + str(sorted(set(r["ok"] for r in of("tool.result"))))')"
        expect_eq "$mode: 8 executions" 8 "$(ev "$out" 'len(of("exec.create"))')"
        expect_eq "$mode: never more than 2 calls ran at once, and 2 did" 2 "$(max_overlap "$out")"
        expect_eq "$mode: never more than 2 executions live" 2 "$(max_live "$out")"
        expect_eq "$mode: every call shows at once, before the third execution" True \
                "$(ev "$out" '[e["type"] for e in E if e["type"] in ("tool.call", "exec.create")][:10] == ["tool.call"] * 8 + ["exec.create"] * 2')"
        expect_eq "$mode: started first come, first served" True \
                "$(ev "$out" '[e["call_id"] for e in of("exec.create")] == [c["call_id"] for c in of("tool.call")]')"
        expect_eq "$mode: session.start has the cap" 2 "$(ev "$out" 'of("session.start")[0]["limits"]["max_parallel"]')"
done

# the memory budget: 64M sandboxes in a 128M budget, so 2 at once
out=$WORK/budget.jsonl
"$PROCTOR" run --json --mode sandbox --memory 64M --memory-budget 128M --max-parallel 8 \
        --model "script:$WORK/timed.jsonl" --workspace "$WORK" "go" >"$out" 2>"$WORK/budget.err"
expect_eq "budget: the session completes" 0 $?
expect_eq "budget: all 8 calls succeeded" 8 "$(ev "$out" 'len([r for r in of("tool.result") if r["ok"]])')"
expect_eq "budget: never more than 2 sandboxes at once" 2 "$(max_overlap "$out")"
expect_eq "budget: never more than 2 live" 2 "$(max_live "$out")"
expect_eq "budget: in session.start" 134217728 \
        "$(ev "$out" 'of("session.start")[0]["limits"]["memory_budget_bytes"]')"
# in local mode there is no memory limit to count: the cap alone applies
out=$WORK/budget-local.jsonl
"$PROCTOR" run --json --mode local --memory 64M --memory-budget 64M --max-parallel 8 \
        --model "script:$WORK/timed.jsonl" --workspace "$WORK" "go" >"$out" 2>&1
expect_eq "budget: local mode is bounded by the cap alone" 8 "$(max_live "$out")"

# a call that could never fit is refused, not left waiting
make_script 2 'echo never-{i}' >"$WORK/never.jsonl"
out=$WORK/never.jsonl.out
timeout 60 "$PROCTOR" run --json --mode sandbox --memory 256M --memory-budget 128M \
        --model "script:$WORK/never.jsonl" --workspace "$WORK" "go" >"$out" 2>"$WORK/never.err"
expect_eq "too big: the session completes" 0 $?
expect_eq "too big: no execution" 0 "$(ev "$out" 'len(of("exec.create"))')"
expect_match "too big: the error names the budget" \
        "could not be started: its memory limit \(256 MiB\) is more than the session's whole memory budget \(128 MiB\)" \
        "$(ev "$out" 'res(0)["output"]')"
expect_eq "too big: both answered as errors" "[False]" "$(ev "$out" 'sorted(set(r["ok"] for r in of("tool.result")))')"

# defaults: 4 at once; the budget 4 x the memory limit, at most half the host
out=$WORK/default.jsonl
"$PROCTOR" run --json --mode local --model "script:$WORK/never.jsonl" --workspace "$WORK" "go" >"$out" 2>&1
expect_eq "default: 4 at once" 4 "$(ev "$out" 'of("session.start")[0]["limits"]["max_parallel"]')"
half=$(($(awk '/^MemTotal:/ { print $2 }' /proc/meminfo) * 1024 / 2))
want=$((4 * 512 * 1024 * 1024))
[ $want -gt $half ] && want=$half
expect_eq "default: the budget" $want "$(ev "$out" 'of("session.start")[0]["limits"]["memory_budget_bytes"]')"
# the config file's keys
printf '{"max_parallel": 3, "memory_budget": "1G"}\n' >"$WORK/config.json"
out=$WORK/config.out
"$PROCTOR" run --json --config "$WORK/config.json" --mode local --model "script:$WORK/never.jsonl" \
        --workspace "$WORK" "go" >"$out" 2>&1
expect_eq "config: max_parallel and memory_budget" "3 1073741824" \
        "$(ev "$out" '"%d %d" % (of("session.start")[0]["limits"]["max_parallel"], of("session.start")[0]["limits"]["memory_budget_bytes"])')"
printf '{"max_parallel": 0}\n' >"$WORK/bad.json"
msg=$("$PROCTOR" run --config "$WORK/bad.json" --model "script:$WORK/never.jsonl" go 2>&1)
expect_match "config: max_parallel 0 refused" "max_parallel: expected an integer from 1" "$msg"
msg=$("$PROCTOR" run --max-parallel 0 --model "script:$WORK/never.jsonl" go 2>&1)
expect_match "flag: --max-parallel 0 refused" "max-parallel: bad number" "$msg"

# an interrupt cancels the queued calls: each still gets a result
wait_events() { # FILE TYPE COUNT: until COUNT events of TYPE (10 s)
        local i
        for i in $(seq 100); do
                [ "$(grep -c "\"type\":\"$2\"" "$1" 2>/dev/null)" -ge "$3" ] && return 0
                sleep 0.1
        done
        return 1
}
for mode in local sandbox; do
        marker=proctor-par-$mode-$$-$RANDOM
        make_script 6 "echo up; sleep 30 # $marker" >"$WORK/int-$mode.jsonl"
        out=$WORK/int-$mode.out
        "$PROCTOR" run --json --mode $mode --max-parallel 2 --model "script:$WORK/int-$mode.jsonl" \
                --workspace "$WORK" "go" >"$out" 2>"$WORK/int-$mode.err" &
        pid=$!
        track_pid $pid
        wait_events "$out" tool.output 2 || fail "$mode interrupt: the first two never started"
        kill -INT $pid
        wait $pid; rc=$?
        expect_eq "$mode interrupt: exit 130" 130 $rc
        expect_eq "$mode interrupt: every call has a result" 6 "$(ev "$out" 'len(of("tool.result"))')"
        expect_eq "$mode interrupt: 4 cancelled before they started" 4 \
                "$(ev "$out" 'len([r for r in of("tool.result") if not r["ok"] and r["output"].startswith("cancelled before it started")])')"
        expect_eq "$mode interrupt: only 2 executions were made" 2 "$(ev "$out" 'len(of("exec.create"))')"
        expect_eq "$mode interrupt: status interrupted" interrupted "$(ev "$out" 'of("session.end")[0]["status"]')"
        check "$mode interrupt: no sleep is left" wait_gone "$marker" 5
        expect_eq "$mode interrupt: no error on stderr" "" "$(grep -v '^proctor' "$WORK/int-$mode.err")"
done
finish
