#!/bin/bash
# What the model passes in tool arguments, in both modes: a timeout can only
# tighten the operator's (1e-9 does not switch the clock off, zero and
# negatives are refused with an error result); a bash command longer than
# one argument may be (128 KiB) runs as bash -c would run it; one beyond
# what the kernel takes at all is an error naming its size.
# as-user: yes
. "$(dirname "$0")/lib.sh"

ev() { events_eval "$@"; }

"$T_PY" - "$WORK" <<'EOF'
import json, sys
w = sys.argv[1]
def script(name, calls):
    with open(f"{w}/{name}.jsonl", "w") as f:
        print(json.dumps({"content": "", "tool_calls": calls}), file=f)
        print(json.dumps({"content": "done"}), file=f)
bash = lambda cmd, **kw: {"name": "bash", "arguments": dict(command=cmd, **kw)}
script("timeout", [bash("sleep 30", timeout=1e-9), bash("sleep 30", timeout=0),
                   bash("sleep 30", timeout=-5), bash("sleep 30", timeout=3600)])
pad = "#" + "x" * (300 * 1024) + "\n"
script("long", [
    bash(pad + 'echo ok; echo "0=$0 #=$# @=[$@] IFS=$(printf %q "$IFS")"; '
         'set | grep -c "^c=" ; echo "é-done"; echo "line=$LINENO"'),
    bash('#' + 'é' * (150 * 1024) + '\necho ok-utf8'),
    bash(pad + 'exit 7'),
    bash('#' + 'x' * (3 * 1024 * 1024) + '\necho never'),
])
EOF

for mode in local sandbox; do
        out=$WORK/timeout-$mode.jsonl
        start=$(now_ms)
        timeout 60 "$PROCTOR" run --json --mode $mode --timeout 2 --model "script:$WORK/timeout.jsonl" \
                --workspace "$WORK" "go" >"$out" 2>"$WORK/timeout-$mode.err"
        rc=$?
        took=$(($(now_ms) - start))
        expect_eq "$mode timeout: the session completes" 0 $rc
        expect_eq "$mode timeout: 1e-9 still stops the call" timeout \
                "$(ev "$out" 'next(e["reason"] for e in of("exec.exit") if e["exec_id"] == next(c["exec_id"] for c in of("exec.create") if c["call_id"] == of("tool.call")[0]["call_id"]))')"
        expect_match "$mode timeout: after 1 s, not never" "timeout after 1\.[0-9] s" "$(ev "$out" 'res(0)["output"]')"
        expect_match "$mode timeout: 0 refused" "field 'timeout' must be greater than 0" "$(ev "$out" 'res(1)["output"]')"
        expect_match "$mode timeout: negative refused" "field 'timeout' must be greater than 0" "$(ev "$out" 'res(2)["output"]')"
        expect_eq "$mode timeout: refused calls ran nothing" 2 "$(ev "$out" 'len(of("exec.create"))')"
        expect_eq "$mode timeout: 3600 s is held to the operator's 2 s" 2000 \
                "$(ev "$out" 'next(c["limits"]["timeout_ms"] for c in of("exec.create") if c["call_id"] == of("tool.call")[3]["call_id"])')"
        expect_match "$mode timeout: ... and stopped there" "timeout after 2\.[0-9] s" "$(ev "$out" 'res(3)["output"]')"
        check "$mode timeout: all over in seconds ($took ms)" test $took -lt 15000

        out=$WORK/long-$mode.jsonl
        timeout 60 "$PROCTOR" run --json --mode $mode --model "script:$WORK/long.jsonl" \
                --workspace "$WORK" "go" >"$out" 2>"$WORK/long-$mode.err"
        expect_eq "$mode long: the session completes" 0 $?
        r0=$(ev "$out" 'res(0)["output"]')
        expect_match "$mode long: a 300 KiB command runs" "^ok" "$r0"
        expect_match "$mode long: \$0 and \$# as under bash -c, IFS the default" \
                "0=bash #=0 @=\[\] IFS=\\$' \\\\t\\\\n'" "$r0"
        expect_match "$mode long: no helper variable leaks" "^0$" "$(echo "$r0" | sed -n 3p)"
        expect_match "$mode long: text after the pieces intact" "é-done" "$r0"
        expect_match "$mode long: \$LINENO as under bash -c" "line=2" "$r0"
        expect_eq "$mode long: split between characters, still whole" "ok-utf8" "$(ev "$out" 'res(1)["output"].strip()')"
        expect_match "$mode long: its exit code is the command's" "^\[exit code 7\]" "$(ev "$out" 'res(2)["output"]')"
        expect_eq "$mode long: exit 7 reported" 7 "$(ev "$out" 'res(2)["exit_code"]')"
        expect_match "$mode long: 3 MiB is refused, with its size" \
                "could not be started: the command is 3145740 bytes \(3\.00 MiB\).*ARG_MAX" \
                "$(ev "$out" 'res(3)["output"]')"
        expect_eq "$mode long: ... without an execution" 3 "$(ev "$out" 'len(of("exec.create"))')"
done
finish
