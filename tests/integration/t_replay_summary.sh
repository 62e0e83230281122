#!/bin/bash
# proctor replay --summary: the triage text for a recorded session, and how
# it copes with a damaged trace and bad input.
# as-user: yes
. "$(dirname "$0")/lib.sh"
SAMPLE="$TOP/tests/data/sample-trace.jsonl"

out=$("$PROCTOR" replay --summary "$SAMPLE" 2>"$WORK/err"); rc=$?
expect_eq "sample: exits 0" 0 $rc
expect_eq "sample: nothing on stderr" "" "$(cat "$WORK/err")"
expect_match "sample: session line" "^session 20261130-101502-7f3a: mode sandbox, model openai:gpt-4o-mini" "$out"
expect_match "sample: turn 1 with its prompt" "turn 1: \"The tests for the table parser fail" "$out"
expect_match "sample: first call" '1  bash +\{"command":"python3 -m pytest -q"\} +1\.8s +error +exec 1 exited 1' "$out"
expect_match "sample: killed call" '3  bash +\{"command":"python3 tests/bench_parse\.py --rows 5000000 -\.\.\. +902ms +error +exec 3 killed by the operator' "$out"
expect_match "sample: failed read" '4  read +\{"path":"mdtable/align\.py"\} +14ms +error +exec 4 exited 1' "$out"
expect_match "sample: last call" '6  bash .* 1\.3s +ok +exec 6 exited 0' "$out"
expect_match "sample: turn 2" "turn 2: \"Don't run the benchmark again" "$out"
expect_match "sample: end" "session end: completed, 2 turns, 6 tool calls, 41\.0s" "$out"
expect_match "sample: tokens" "usage: prompt_tokens 17984, completion_tokens 329, total_tokens 18313" "$out"

# line 6 (the first tool call) corrupted, the last line cut in half
total=$(wc -l <"$SAMPLE")
awk -v n="$total" 'NR == 6 { print "{\"seq\":6,\"t_ms\":1378,\"type\":\"tool.c"; next }
        NR == n { printf "%s", substr($0, 1, length($0) / 2); next } { print }' \
        "$SAMPLE" >"$WORK/damaged.jsonl"
out=$("$PROCTOR" replay --summary "$WORK/damaged.jsonl" 2>"$WORK/err"); rc=$?
err=$(cat "$WORK/err")
expect_eq "damaged: exits 1" 1 $rc
expect_match "damaged: corrupt line named" "damaged\.jsonl:6: not valid JSON \(" "$err"
expect_match "damaged: truncated line named" "damaged\.jsonl:$total: not valid JSON \(truncated last line" "$err"
expect_eq "damaged: one stderr line per bad line" 2 "$(printf '%s\n' "$err" | wc -l)"
expect_match "damaged: later calls still listed" "exec 3 killed by the operator" "$out"
expect_match "damaged: turn 2 still listed" "turn 2: " "$out"
expect_match "damaged: missing end said" "session end: not recorded" "$out"

err=$("$PROCTOR" replay --summary "$WORK/no-such.jsonl" 2>&1); rc=$?
expect_eq "missing file: exits 2" 2 $rc
expect_match "missing file: named" "no-such\.jsonl: No such file or directory" "$err"
expect_eq "missing file: one-line error" 1 "$(printf '%s\n' "$err" | wc -l)"

err=$("$PROCTOR" replay --summary 2>&1); rc=$?
expect_eq "no file: exits 2" 2 $rc
expect_match "no file: said" "no trace file given" "$err"

err=$("$PROCTOR" replay --summary --bogus "$SAMPLE" 2>&1); rc=$?
expect_eq "unknown option: exits 2" 2 $rc
expect_match "unknown option: named" "unknown option '--bogus'" "$err"
finish
