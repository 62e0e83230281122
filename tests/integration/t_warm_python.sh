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
    f.write(json.dumps({"content": "done"}) + "\n")
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
expect_eq "sandbox: the later calls are warm" "[True, True, True]" \
        "$(ev sandbox '[c["warm"] for c in of("exec.create")[1:]]')"
expect_eq "sandbox: a warm call sees a fresh /tmp and is pid 2" "[] 2 ['-c']" \
        "$(ev sandbox 'of("tool.result")[1]["output"].strip()')"
expect_match "sandbox: the first call did write its file" "^first 2" "$(res sandbox 0)"
expect_eq "local: never warm" "[False, False, False, False]" \
        "$(ev local '[c["warm"] for c in of("exec.create")]')"
# the premise: local mode shares /tmp, so the first call's file is seen
expect_match "local: the first call's file is there" "'$left'" "$(res local 1)"
rm -f "/tmp/$left"
finish
