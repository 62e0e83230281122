#!/bin/bash
# The wall clock holds while the supervisor is stopped: `proctor exec
# --timeout 2` stopped by SIGSTOP right after its command started still has
# its command (the whole tree) ended at 2 s, by the execution's own init;
# once continued it reports timeout (exit 124) with the wall time the
# command really had. Then the operator's controls in the supervisor (a
# detached tmux), in both modes: SIGTERM reaches a command's trap and it
# exits 3 on its own; pause holds a counter still, resume lets it count,
# a paused execution is killed; a paused one still times out. As root the
# pause freezes the cgroup; as an unprivileged user without cgroups it
# stops the processes with SIGSTOP (the trace says which). The exec and
# session API are tested in tests/unit/test_exec_control.c.
# as-user: yes
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/tmux.sh"

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

# ---- the operator's controls, in the supervisor ----
mkdir -p "$WORK/s"
cat >"$WORK/s/ctl.jsonl" <<'EOF'
{"content": "Three at once.", "tool_calls": [{"name": "bash", "arguments": {"command": "trap 'echo got-term; exit 3' TERM; echo polite-up; while :; do sleep 0.1; done"}}, {"name": "bash", "arguments": {"command": "i=0; while :; do i=$((i+1)); echo $i > count.new; mv count.new count; sleep 0.05; done"}}, {"name": "bash", "arguments": {"command": "echo late-up; while :; do sleep 0.1; done", "timeout": 4}}]}
{"content": "Controls done."}
EOF
give_away "$WORK/s"
# the counter renames each value into place, so a read never sees the
# file truncated and not yet written (an empty count)
count() { cat "$WORK/count" 2>/dev/null; }
counting() { [ -n "$(count)" ]; }
counted_past() { local c; c=$(count); [ -n "$c" ] && [ "$c" -gt "$1" ]; }
# how pauses are made here: the freezer where proctor has a cgroup with one
want_how=$("$PROCTOR" doctor --json | "$T_PY" -c 'import sys, json
d = json.load(sys.stdin)
v = d.get("cgroup_version")
print("freezer" if v == "v2" or (v == "v1" and "freezer" in d.get("cgroup_controllers", [])) else "signal")')

# controls MODE: the scenario in the supervisor, then its trace checked
controls() {
        local mode=$1 tr=$WORK/trace-$1.jsonl before wall3
        rm -f "$WORK/count"
        start "$mode" 160x45 "$PROCTOR --mode $mode --approval never --model script:$WORK/s/ctl.jsonl --trace $tr"
        expect_screen "$mode" "Where should this session's tools run" "$mode: setup"
        $T send-keys -t "$mode" go Enter
        expect_screen "$mode" "(sandboxes|processes) \[3/3\]" "$mode: three executions"
        expect_screen "$mode" "#3 running" "$mode: all running"
        $T send-keys -t "$mode" Tab Tab Home Down Down
        expect_screen "$mode" "(sandboxes|processes) \[3/3\]" "$mode: the third selected"

        # the third, paused at once, still ends at its 4 s
        $T send-keys -t "$mode" p
        expect_screen "$mode" "#3 paused \(p resumes" "$mode: p pauses the third"

        # SIGTERM, answered by the command's own trap
        $T send-keys -t "$mode" Up Up
        expect_screen "$mode" "(sandboxes|processes) \[1/3\]" "$mode: the first selected"
        $T send-keys -t "$mode" k
        expect_screen "$mode" "t SIGTERM first" "$mode: the kill dialog"
        sleep 0.3
        $T send-keys -t "$mode" t
        expect_screen "$mode" "#1 exited .* exit 3" "$mode: SIGTERM, then exit 3 of its own" 5

        # pause and resume the counter, then kill it paused
        $T send-keys -t "$mode" Down
        expect_screen "$mode" "(sandboxes|processes) \[2/3\]" "$mode: the counter selected"
        check "$mode: the counter counts" wait_until 5 counting
        $T send-keys -t "$mode" p
        expect_screen "$mode" "#2 paused" "$mode: p pauses the counter"
        sleep 0.3
        before=$(count)
        sleep 1.2
        expect_eq "$mode: paused, the counter stands still" "$before" "$(count)"
        $T send-keys -t "$mode" p
        expect_screen "$mode" "#2 resumed" "$mode: p resumes it"
        check "$mode: resumed, it counts again" wait_until 5 counted_past "$before"
        $T send-keys -t "$mode" p
        expect_screen "$mode" "#2 paused" "$mode: paused again"
        $T send-keys -t "$mode" k
        sleep 0.3
        $T send-keys -t "$mode" y
        expect_screen "$mode" "#2 killed" "$mode: a paused execution is killed"
        expect_screen "$mode" "#3 timeout" "$mode: the paused one timed out" 6
        expect_screen "$mode" "Controls done" "$mode: the session goes on to its end" 10
        $T send-keys -t "$mode" q
        expect_screen "$mode" "EXITED 0" "$mode: quit"

        expect_eq "$mode: pauses made by $want_how" "$want_how $want_how $want_how" \
                "$(events_eval "$tr" "' '.join(e['how'] for e in of('exec.pause'))")"
        expect_eq "$mode: one resume" 1 "$(events_eval "$tr" "len(of('exec.resume'))")"
        expect_eq "$mode: operator.signal" "1 SIGTERM" \
                "$(events_eval "$tr" "' '.join('%d %s' % (e['exec_id'], e['name']) for e in of('operator.signal'))")"
        expect_eq "$mode: exit reasons" "1 exited 3|2 killed -1|3 timeout -1" \
                "$(events_eval "$tr" "'|'.join('%d %s %d' % (e['exec_id'], e['reason'], e['exit_code']) for e in sorted(of('exec.exit'), key=lambda e: e['exec_id']))")"
        wall3=$(events_eval "$tr" "[e['wall_ms'] for e in of('exec.exit') if e['exec_id'] == 3][0]")
        if [ "${wall3:-0}" -ge 3900 ] && [ "${wall3:-0}" -lt 5500 ]; then pass; else
                fail "$mode: the paused one ran ${wall3:-?} ms, not its 4 s"
        fi
}

controls sandbox
controls local

finish
