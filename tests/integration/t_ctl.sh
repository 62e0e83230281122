#!/bin/bash
# A running session's socket: proctor ls lists a proctor run with its
# running execution, clients attach (the events so far, then live ones),
# a kill from a client ends the execution and the run says so, a read-only
# client cannot kill, two clients at once, a client that does not read is
# cut off without slowing the session, a SIGKILLed session's client sees
# the end and ls forgets it, the socket goes when the session ends, and a
# process of another user is refused by the socket itself even where the
# modes would let it in.
# as-user: yes
. "$(dirname "$0")/lib.sh"

export XDG_RUNTIME_DIR=$WORK/rt
mkdir -m 700 "$XDG_RUNTIME_DIR"
RT=$XDG_RUNTIME_DIR/proctor
S=$WORK/s
W=$WORK/ws
mkdir -p "$S" "$W"
give_away "$W"
cp "$TOP/tests/integration/ctl_client.py" "$WORK/ctl_client.py"
chmod 755 "$WORK/ctl_client.py"
C="$T_PY $WORK/ctl_client.py"
cat >"$S/long.jsonl" <<'EOF'
{"content": "A long call.", "tool_calls": [{"name": "bash", "arguments": {"command": "echo started; sleep 60; echo slept"}}]}
{"content": "Done."}
EOF
cat >"$S/flood.jsonl" <<'EOF'
{"content": "A flood.", "tool_calls": [{"name": "bash", "arguments": {"command": "head -c 12000000 /dev/zero | tr '\\0' x"}}]}
{"content": "Done."}
EOF

lsj() { "$PROCTOR" ls --json; }
# ls_eval EXPR: a Python expression over the list L of ls --json's statuses
ls_eval() { lsj | "$T_PY" -c 'import json, sys; L = json.load(sys.stdin); print(eval(sys.argv[1]))' "$1"; }
running_one() { [ "$(ls_eval 'sum(1 for s in L if s.get("state") == "running 1")')" = 1 ]; }
no_session() { [ "$(ls_eval 'len(L)')" = 0 ]; }
socket_of() { echo "$RT/$(ls_eval 'L[0]["session_id"]').sock"; }

# start_run NAME MODEL [ARGS...]: proctor run in the background, its pid in RUN_PID
start_run() {
        local name=$1 model=$2
        shift 2
        "$PROCTOR" run --mode sandbox --workspace "$W" --trace "$WORK/$name.trace" \
                --model "script:$S/$model" "$@" go >"$WORK/$name.out" 2>"$WORK/$name.err" </dev/null &
        RUN_PID=$!
        track_pid $RUN_PID
}

# ---- ls, attach, kill ----
start_run long long.jsonl
check "ls: the run is listed, running its execution" wait_until 20 running_one
expect_eq "ls: its pid" "$RUN_PID" "$(ls_eval 'L[0]["pid"]')"
expect_eq "ls: kind, mode, executions, workspace" "run sandbox 1 $(cd "$W" && pwd -P)" \
        "$(ls_eval '" ".join([L[0]["kind"], L[0]["mode"], str(L[0]["executions"]), L[0]["workspace"]])')"
expect_match "ls: the table names it" "$(ls_eval 'L[0]["session_id"]') +$RUN_PID .* running 1" \
        "$("$PROCTOR" ls)"
SOCK=$(socket_of)
check "the socket is private" test "$(stat -c %a "$SOCK")" = 600

# a read-only client gets the events but cannot kill
$C attach "$SOCK" --read-only --kill --timeout 3 >"$WORK/ro.out"
expect_match "read-only: the hello says so" '"type":"ctl.hello".*"read_only":true' \
        "$(head -1 "$WORK/ro.out")"
expect_match "read-only: the events so far come" '"type":"tool.call"' "$(cat "$WORK/ro.out")"
expect_match "read-only: its kill is refused" "attached read-only: it sends no commands" \
        "$(cat "$WORK/ro.out")"
check "read-only: the call still runs" running_one

# two clients at once, the second counted by the first's status
$C attach "$SOCK" --read-only --timeout 8 >"$WORK/watch.out" &
watch=$!
track_pid $watch
clients_one() { [ "$(ls_eval 'L[0].get("clients", 0)')" -ge 1 ]; }
check "a watcher is counted" wait_until 10 clients_one || { lsj; cat "$WORK/watch.out"; }
$C attach "$SOCK" --kill --timeout 30 >"$WORK/kill.out"
expect_match "kill: the client sees the operator's kill" '"type":"operator.kill"' \
        "$(cat "$WORK/kill.out")"
expect_match "kill: and the session's end" '"type":"session.end"' "$(cat "$WORK/kill.out")"
wait $RUN_PID
expect_eq "kill: the run completes" 0 "$?"
expect_match "kill: the run says the execution was killed" "execution [0-9]+: killed" \
        "$(cat "$WORK/long.err")"
expect_no_match "kill: it was killed, not slept through" "slept" \
        "$(events_eval "$WORK/long.trace" 'res(0)["output"]')"
wait $watch
expect_match "the watcher saw the kill too" '"type":"operator.kill"' "$(cat "$WORK/watch.out")"
check "the session's end removes its socket" test ! -e "$SOCK"
check "ls: no live session" no_session
expect_eq "ls: says so" "no live sessions" "$("$PROCTOR" ls)"

# ---- a client that does not read is cut off; the session does not wait ----
start_run flood flood.jsonl --output-limit 16M
sock_up() { [ -n "$(ls "$RT" 2>/dev/null)" ]; }
check "flood: its socket" wait_until 20 sock_up
SOCK=$(ls "$RT"/*.sock | head -1)
$C noread "$SOCK" 20 >"$WORK/noread.out" &
slow=$!
track_pid $slow
t0=$(now_ms)
wait $RUN_PID
expect_eq "flood: the run completes" 0 "$?"
ended_ms=$(($(now_ms) - t0))
check "flood: the session ended while its client still slept (${ended_ms} ms)" kill -0 $slow
wait $slow
expect_match "flood: the slow client was cut off" "eof True" "$(cat "$WORK/noread.out")"
b=$(cut -d' ' -f2 <"$WORK/noread.out")
if [ "$b" -lt 12000000 ]; then pass; else fail "flood: the cut client got all $b bytes"; fi

# ---- a SIGKILLed session ----
start_run dead long.jsonl
check "killed: listed" wait_until 20 running_one
SOCK=$(socket_of)
$C attach "$SOCK" --read-only --timeout 60 >"$WORK/dead.out" &
cl=$!
track_pid $cl
sleep 0.5
kill -KILL $RUN_PID
t0=$(now_ms)
wait $cl
if [ $(($(now_ms) - t0)) -lt 30000 ]; then pass; else fail "killed: its client waited out its timeout"; fi
check "killed: its socket is still there" test -S "$SOCK"
# (polled: a child of the killed session still closing down may hold the
# listening socket for a moment, and ls then finds it not answering)
check "killed: ls does not list it" wait_until 15 no_session
check "killed: ls removed its socket" test ! -e "$SOCK"

# ---- the socket itself refuses another user ----
if is_root && id proctor-test >/dev/null 2>&1; then
        start_run peer long.jsonl
        check "peer: listed" wait_until 20 running_one
        SOCK=$(socket_of)
        # modes that would let anyone in: only SO_PEERCRED stands
        chmod 711 "$XDG_RUNTIME_DIR" "$RT"
        chmod 666 "$SOCK"
        as_user() { setpriv --reuid=proctor-test --regid=proctor-test --init-groups "$@"; }
        expect_eq "peer: another user is refused by the socket" refused \
                "$(as_user $C status "$SOCK")"
        expect_match "peer: control, root is answered" '"type":"status"' "$($C status "$SOCK")"
        chmod 700 "$XDG_RUNTIME_DIR" "$RT"
        # with the modes as proctor makes them, another user cannot even connect
        chmod 600 "$SOCK"
        expect_match "peer: the modes keep another user out" "unreachable" \
                "$(as_user $C status "$SOCK")"
        kill -TERM $RUN_PID
        wait $RUN_PID
fi

finish
