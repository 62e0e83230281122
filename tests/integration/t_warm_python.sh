#!/bin/bash
# run_python_code through a headless session: in sandbox mode the calls
# after the first take warm sandboxes (exec.create says warm) and still see
# a fresh /tmp and pid 2; in both modes the code runs as `python3 -c` would
# (argv, tracebacks, exit codes).
# as-user: yes
. "$(dirname "$0")/lib.sh"

S=$WORK/scripts
mkdir -p "$S"
left=proctor-warm-left-$$
python3 - "$S/py.jsonl" "$left" <<'PY'
import json, sys
codes = [
    "import os; open('/tmp/%s', 'w').write('x'); print('first', os.getpid())" % sys.argv[2],
    "import os, sys; print(os.listdir('/tmp'), os.getpid(), sys.argv)",
    "raise ValueError('boom')",
    "import sys; sys.exit(4)",
]
with open(sys.argv[1], "w") as f:
    for c in codes:
        f.write(json.dumps({"content": "", "tool_calls": [
            {"name": "run_python_code", "arguments": {"code": c}}]}) + "\n")
    # the answer comes 3 s after the last call: time for the sandbox warmed
    # after it to be ready and measured, however loaded the machine
    f.write(json.dumps({"content": "done", "delay_ms": 3000}) + "\n")
PY
ev() { events_eval "$WORK/$1.jsonl" "$2"; }
res() { ev "$1" "[r['output'] for r in of('tool.result')][$2]"; }

for mode in sandbox local; do
        "$PROCTOR" run --json --mode $mode --model "script:$S/py.jsonl" --workspace "$WORK" \
                "go" >"$WORK/$mode.jsonl" 2>"$WORK/$mode.err"
        expect_eq "$mode: session completes" 0 $?
        expect_eq "$mode: four results" 4 "$(ev $mode 'len(of("tool.result"))')"
        expect_match "$mode: argv is python3 -c's" "\['-c'\]" "$(res $mode 1)"
        expect_eq "$mode: traceback as python3 -c prints it" 'Traceback (most recent call last):
  File "<string>", line 1, in <module>
ValueError: boom
[exit code 1]' "$(res $mode 2)"
        expect_eq "$mode: SystemExit code" 4 "$(ev $mode 'of("tool.result")[3]["exit_code"]')"
done
expect_eq "sandbox: the first call is cold" False "$(ev sandbox 'of("exec.create")[0]["warm"]')"
warm=$(ev sandbox '[c["warm"] for c in of("exec.create")[1:]]')
expect_eq "sandbox: the later calls are warm" "[True, True, True]" "$warm"
# a cold one was seen once under ASan as the user, not reproduced since:
# what the pool did then, for whoever meets it next
[ "$warm" = "[True, True, True]" ] ||
        ev sandbox '[(e["type"], e.get("exec_id"), e.get("warm"), e.get("reason"), [x["state"] for x in e.get("waiting", [])]) for e in E if e["type"] in ("exec.warm", "exec.create", "exec.exit")]'
expect_eq "sandbox: a warm call sees a fresh /tmp and is pid 2" "[] 2 ['-c']" \
        "$(ev sandbox 'of("tool.result")[1]["output"].strip()')"
expect_match "sandbox: the first call did write its file" "^first 2" "$(res sandbox 0)"
# exec.warm: the sandboxes waiting for a call, each with its memory; the one
# a call takes is gone from the list before the call's exec.create
expect_eq "sandbox: a warm sandbox waits after the first call, with its memory" True \
        "$(ev sandbox 'any(x["state"] == "ready" and x["mem_bytes"] > 0 for w in of("exec.warm") for x in w["waiting"])')"
expect_eq "sandbox: taken, it leaves the list just before the call's exec.create" True \
        "$(ev sandbox '(lambda i: E[i - 1]["type"] == "exec.warm" and E[i - 1]["waiting"] == [])(E.index(of("exec.create")[1]))')"
expect_eq "sandbox: none waits after the session" "[]" "$(ev sandbox 'of("exec.warm")[-1]["waiting"]')"
expect_eq "local: no warm sandboxes" 0 "$(ev local 'len(of("exec.warm"))')"
expect_eq "local: never warm" "[False, False, False, False]" \
        "$(ev local '[c["warm"] for c in of("exec.create")]')"
# the premise: local mode shares /tmp, so the first call's file is seen
expect_match "local: the first call's file is there" "'$left'" "$(res local 1)"
rm -f "/tmp/$left"

# The pool follows the calls: a burst of three finds one warm sandbox and
# grows the pool, so the next burst (after a pause) finds three.
python3 - "$S/burst.jsonl" "$S/mp1.jsonl" <<'PY'
import json, sys
def msg(*calls, think=0):
    m = {"content": "", "tool_calls": [{"name": n, "arguments": a} for n, a in calls]}
    if think:  # the model takes a while (content streamed slowly)
        m.update(content="let me think about this for a moment", delay_ms=think)
    return json.dumps(m) + "\n"
py = lambda c: ("run_python_code", {"code": c})
sh = lambda c: ("bash", {"command": c})
with open(sys.argv[1], "w") as f:
    f.write(msg(py("print(0)")))
    f.write(msg(sh("sleep 1")))
    f.write(msg(py("print(1)"), py("print(2)"), py("print(3)")))
    # (long enough for three interpreters to warm on a loaded machine, well
    # short of the 30 s after which an idle pool shrinks)
    f.write(msg(sh("sleep 8")))
    f.write(msg(py("print(4)"), py("print(5)"), py("print(6)")))
    f.write(json.dumps({"content": "done"}) + "\n")
with open(sys.argv[2], "w") as f:
    f.write(msg(py("print(0)")))
    f.write(msg(py("print(1)"), think=100))
    f.write(msg(sh("echo real"), think=100))
    f.write(json.dumps({"content": "done"}) + "\n")
PY
timeout 60 "$PROCTOR" run --json --mode sandbox --model "script:$S/burst.jsonl" --workspace "$WORK" \
        "go" >"$WORK/burst.jsonl" 2>"$WORK/burst.err"
rc=$?
expect_eq "burst: session completes" 0 $rc
# (127 was seen once under ASan on a loaded machine, not reproduced since:
# what proctor said then, for whoever meets it next)
[ $rc -eq 0 ] || { echo "burst: exit $rc, stderr:"; tail -n 20 "$WORK/burst.err"; }
py_warm='[c["warm"] for c in of("exec.create") if "python" in json.dumps(of("tool.call")[[t["call_id"] for t in of("tool.call")].index(c["call_id"])])]'
expect_eq "burst: three wait at once, each holding its interpreter's memory" True \
        "$(ev burst 'any(len(w["waiting"]) == 3 and all(x["mem_bytes"] > 4 << 20 for x in w["waiting"]) for w in of("exec.warm"))')"
expect_eq "burst: cold, then one warm of three, then three of three" \
        "[False, 1, 3]" "$(ev burst "(lambda w: [w[0], sum(w[1:4]), sum(w[4:7])])($py_warm)")"

# With --max-parallel 1 a warm sandbox waits only while nothing runs (here
# while the model thinks): a real call starts at once (the warm one is let
# go), never queued behind it.
start=$(date +%s)
timeout 60 "$PROCTOR" run --json --mode sandbox --max-parallel 1 --model "script:$S/mp1.jsonl" \
        --workspace "$WORK" "go" >"$WORK/mp1.jsonl" 2>"$WORK/mp1.err"
rc=$?
expect_eq "max-parallel 1: session completes" 0 $rc
[ $rc -eq 0 ] || { echo "max-parallel 1: exit $rc, stderr:"; tail -n 20 "$WORK/mp1.err"; }
expect_eq "max-parallel 1: the second python call still took a warm sandbox" True \
        "$(ev mp1 'of("exec.create")[1]["warm"]')"
expect_eq "max-parallel 1: the real call after it ran" "real" "$(ev mp1 'res(2)["output"].strip()')"
expect_eq "max-parallel 1: and started at once (not after the idle pool shrank)" True \
        "$(ev mp1 '(lambda c, x: x["t_ms"] - c["t_ms"] < 1000)(of("tool.call")[2], of("exec.create")[2])')"
check "max-parallel 1: the session did not wait for the pool" test $(($(date +%s) - start)) -lt 20
finish
