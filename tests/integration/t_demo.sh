#!/bin/bash
# The bundled demo (the default model without an API key) in each mode: it
# completes in under a minute, is labelled scripted, shows the modes differ
# (the cache and /tmp survive between calls only in local mode), and its
# runaway loop is ended by the limits (sandbox) or the timeout (local).
# lock: demo (its local mode writes the host's /tmp/proctor-demo.txt)
. "$(dirname "$0")/lib.sh"

ev() { events_eval "$@"; }
for mode in local sandbox; do
        out=$WORK/demo-$mode.jsonl
        start=$(date +%s)
        env -u PROCTOR_API_KEY -u OPENAI_API_KEY -u HF_TOKEN timeout 60 "$PROCTOR" run --json \
                --mode $mode --workspace "$WORK" --trace "$WORK/demo-$mode.trace" "show me" >"$out"
        rc=$?
        took=$(($(date +%s) - start))
        expect_eq "$mode: the demo completes" 0 $rc
        if [ $took -lt 60 ]; then pass; else fail "$mode: took $took s"; fi
        expect_match "$mode: labelled scripted" "demo \(scripted\)" "$(ev "$out" 'of("session.start")[0]["model"]')"
        cache=$(ev "$out" 'next(r["ok"] for r in of("tool.result") if r["call_id"] == next(c["call_id"] for c in of("tool.call") if c["name"] == "read_cache"))')
        if [ $mode = local ]; then
                expect_eq "local: the cache survived" True "$cache"
                expect_eq "local: the runaway ended by the timeout" True \
                        "$(ev "$out" '"timeout" in [e["reason"] for e in of("exec.exit")]')"
        else
                expect_eq "sandbox: the cache did not survive" False "$cache"
                # Its CPU limit normally ends it first; on a loaded machine it
                # may get too little CPU for that before its wall clock ends it.
                expect_eq "sandbox: the runaway ended by a limit (CPU, or wall clock under load)" True \
                        "$(ev "$out" 'bool({"cpu_limit", "timeout"} & {e["reason"] for e in of("exec.exit")})')"
        fi
done
rm -f /tmp/proctor-demo.txt
finish
