#!/bin/bash
# The wall clock holds while the supervisor is stopped: `proctor exec
# --timeout 2` stopped by SIGSTOP right after its command started still has
# its command (the whole tree) ended at 2 s, by the execution's own init;
# once continued it reports timeout (exit 124) with the wall time the
# command really had. Both modes. (Signal, pause and resume of an execution
# are driven through the exec and session API in tests/unit/test_exec_control.c.)
# as-user: yes
. "$(dirname "$0")/lib.sh"

# stopped_timeout MODE: one run of the scenario in MODE (sandbox or local)
stopped_timeout() {
        local mode=$1 dur m J rc state t0 t1
        dur=30$RANDOM
        m=$(new_marker "$mode")
        J=$WORK/stopped-$mode.jsonl
        track_marker "$m"
        track_marker "sleep $dur"
        "$PROCTOR" exec --json --mode "$mode" --workspace "$WORK" --timeout 2 -- \
                sh -c "sleep $dur; : $m" > "$J" 2>"$WORK/stderr-$mode" &
        bg=$!
        track_pid $bg
        check "$mode: the command started" wait_until 5 running "^sh -c sleep $dur; : $m"
        kill -STOP $bg
        t0=$(now_ms)
        state=$(awk '{print $3}' /proc/$bg/stat)
        expect_eq "$mode: proctor is stopped" T "$state"
        check "$mode: its sleep runs" running "^sleep $dur\$"
        sleep 3.5
        state=$(awk '{print $3}' /proc/$bg/stat)
        expect_eq "$mode: proctor is still stopped" T "$state"
        check "$mode: the command is gone at the deadline while proctor is stopped" \
                no_process "^sh -c sleep $dur; : $m"
        check "$mode: so is its child" no_process "^sleep $dur\$"
        kill -CONT $bg
        wait $bg
        rc=$?
        t1=$(now_ms)
        expect_eq "$mode: exit code 124" 124 "$rc"
        expect_eq "$mode: reason timeout" timeout "$(json_field exec.exit reason < "$J")"
        wall=$(json_field exec.exit wall_ms < "$J")
        if [ "${wall:-0}" -ge 1900 ] && [ "${wall:-0}" -lt 3000 ]; then pass; else
                fail "$mode: wall_ms $wall is not the 2 s the command had (stopped $((t1 - t0)) ms)"
        fi
        expect_eq "$mode: one exec.exit" 1 "$(grep -c '"exec.exit"' "$J")"
        check "$mode: removed" grep -q '"exec.remove"' "$J"
}

stopped_timeout sandbox
stopped_timeout local

# Not stopped: a command that ends before its deadline is not touched by it.
out=$(local_exec --timeout 2 -- sh -c 'sleep 0.2; echo done')
expect_eq "local: a command within its time ends on its own" done "$out"
out=$(sandbox --timeout 2 -- sh -c 'sleep 0.2; echo done' 2>&1 | without_fallback_note)
expect_eq "sandbox: a command within its time ends on its own" done "$out"

finish
