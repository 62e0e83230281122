#!/bin/bash
# Local mode: the command runs on the host in the workspace directory, its
# output streams, its status passes through, the wall clock ends it, and
# neither a signal to proctor nor proctor's death leaves a child behind.
# as-user: yes
. "$(dirname "$0")/lib.sh"

J=$WORK/events.jsonl
jv() { json_eval "$1" < "$J"; }

# ---- where and as whom ----
out=$(local_exec -- sh -c 'pwd; id -u; hostname'); rc=$?
expect_eq "local runs" 0 $rc
expect_eq "runs in the workspace, as the operator, on the host" "$(cd "$WORK" && pwd -P)
$(id -u)
$(hostname)" "$out"
mkdir "$WORK/sub"
expect_eq "--workspace picks the directory" "$WORK/sub" "$("$PROCTOR" exec --mode local --workspace "$WORK/sub" -- pwd)"
expect_eq "no --workspace: the current directory" "$WORK/sub" "$(cd "$WORK/sub" && "$PROCTOR" exec --mode local -- pwd)"
local_exec -- sh -c 'echo kept > left-behind'
expect_eq "local writes stay on the host" kept "$(cat "$WORK/left-behind" 2>&1)"
expect_eq "default mode is local" "$(id -u) $(hostname)" "$(cd "$WORK" && "$PROCTOR" exec -- sh -c 'echo "$(id -u) $(hostname)"')"

# ---- output and status ----
out=$(local_exec -- sh -c 'echo out; echo err >&2' 2>"$WORK/err")
expect_eq "stdout to stdout" out "$out"
expect_eq "stderr to stderr" err "$(cat "$WORK/err")"
for code in 0 1 3 42 255; do
        local_exec -- sh -c "exit $code"
        expect_eq "exit $code passes through" $code $?
done
local_exec -- sh -c 'kill -TERM $$'
expect_eq "killed by SIGTERM: 143" 143 $?
local_exec -- sh -c 'kill -KILL $$'
expect_eq "killed by SIGKILL: 137" 137 $?

# streamed: the first line arrives while the command still runs
# (the read end opens first, read-write so that it never blocks: the
# redirection of a function call is made by this shell itself)
fifo=$WORK/fifo
mkfifo "$fifo"
exec 3<>"$fifo"
local_bg -- sh -c 'echo first; sleep 2; echo second' > "$fifo"
p=$T_LAST_BG
t0=$(now_ms)
IFS= read -r -t 5 line <&3
t1=$(now_ms)
expect_eq "first line read" first "$line"
if [ $((t1 - t0)) -lt 1500 ]; then pass; else fail "first line came after $((t1 - t0)) ms: not streamed"; fi
check "command still running while its first line is read" kill -0 $p
IFS= read -r -t 5 line <&3
expect_eq "second line read" second "$line"
exec 3<&-
wait $p

# ---- --json: the event sequence ----
local_exec --json -- sh -c 'echo hello; sleep 1; echo bye >&2; exit 4' > "$J"
expect_eq "--json status passes through" 4 $?
types=$(jv "' '.join(e['type'] for e in ev)")
expect_match "events: create, start, output..., stats?, exit, remove" \
        "^exec\.create exec\.start( exec\.(output|stats))+ exec\.exit exec\.remove$" "$types"
expect_eq "output carries both streams, in order" "stdout:hello
|stderr:bye" "$(jv "'|'.join(e['stream'] + ':' + e['data'] for e in of('exec.output'))")"
expect_eq "seq increases by one from 1" true "$(jv "[e['seq'] for e in ev] == list(range(1, len(ev) + 1))")"
expect_eq "t_ms never decreases" true "$(jv "all(a['t_ms'] <= b['t_ms'] for a, b in zip(ev, ev[1:]))")"
expect_eq "one exec_id throughout" true "$(jv "len(set(e['exec_id'] for e in ev)) == 1")"
expect_eq "isolation none" none "$(jv "of('exec.create')[0]['isolation']")"
expect_eq "exit: exited, code 4, no signal" "exited 4 0" "$(jv "' '.join(str(of('exec.exit')[0][k]) for k in ('reason', 'exit_code', 'signal'))")"
expect_eq "start carries the pid" true "$(jv "of('exec.start')[0]['pid'] > 1")"
expect_eq "wall_ms covers the sleep" true "$(jv "900 <= of('exec.exit')[0]['wall_ms'] < 6000")"
expect_eq "output before exit" true "$(jv "of('exec.output')[0]['t_ms'] + 500 <= of('exec.exit')[0]['t_ms']")"
expect_eq "nothing else on stdout" true "$(jv "all('type' in e and 'seq' in e and 't_ms' in e for e in ev)")"

# the order holds every time, even when the output is immediate
for i in $(seq 20); do local_exec --json -- echo hi > "$WORK/quick$i.jsonl"; done
expect_eq "20 quick runs: start always before output" "" "$(odd_event_orders "$WORK"/quick*.jsonl)"

# ---- wall clock ----
mark=$(new_marker lt)
track_marker "$mark"
t0=$(now_ms)
local_exec --json --timeout 1 -- sh -c "sleep 30; : $mark" > "$J"
rc=$?
t1=$(now_ms)
expect_eq "--timeout 1: status 124" 124 $rc
expect_eq "--timeout 1: reason timeout" timeout "$(jv "of('exec.exit')[0]['reason']")"
if [ $((t1 - t0)) -lt 5000 ]; then pass; else fail "--timeout 1 took $((t1 - t0)) ms"; fi
check "--timeout: no child left" wait_gone "$mark" 1
err=$(local_exec --timeout 1 -- sleep 30 2>&1)
expect_match "--timeout: said on stderr" "timed out after 1" "$err"

# ---- SIGTERM / SIGINT to proctor: the child's whole process group ----
for sig in TERM INT; do
        dur=5$RANDOM.$$
        track_marker "sleep $dur"
        local_bg --json -- sh -c "sleep $dur & sleep $dur & sleep $dur; :" > "$J"
        p=$T_LAST_BG
        three() { [ "$(host_pids "^sleep $dur\$" | wc -l)" -eq 3 ]; }
        check "SIG$sig: three sleeps run" wait_until 5 three
        t0=$(now_ms)
        kill -$sig $p
        wait $p
        rc=$?
        t1=$(now_ms)
        if [ $((t1 - t0)) -lt 2000 ]; then pass; else fail "SIG$sig: took $((t1 - t0)) ms"; fi
        expect_eq "SIG$sig: reason killed" killed "$(jv "of('exec.exit')[0]['reason']")"
        expect_eq "SIG$sig: status 128+signal" "$(jv "128 + of('exec.exit')[0]['signal'] if of('exec.exit') else 'no exit event'")" $rc
        check "SIG$sig: the whole group is gone" wait_gone "sleep $dur" 1
done

# ---- proctor killed by SIGKILL: its local children end ----
dur=5$RANDOM.$$
track_marker "sleep $dur"
local_bg -- sh -c "sleep $dur & sleep $dur; :" > /dev/null
p=$T_LAST_BG
two() { [ "$(host_pids "^sleep $dur\$" | wc -l)" -eq 2 ]; }
check "SIGKILL: two sleeps run" wait_until 5 two
kill -KILL $p
wait $p 2>/dev/null
check "SIGKILL of proctor: its children gone within 1 s" wait_gone "sleep $dur" 1

# ---- local leftovers of a finished command are ended too ----
dur=5$RANDOM.$$
track_marker "sleep $dur"
t0=$(now_ms)
local_exec -- sh -c "sleep $dur & echo started" >/dev/null
t1=$(now_ms)
if [ $((t1 - t0)) -lt 3000 ]; then pass; else fail "a background child held the run for $((t1 - t0)) ms"; fi
check "a backgrounded child does not outlive the run" wait_gone "sleep $dur" 1
# the command is found through the PATH it is given (proctor's own process
# strings are blanked in the child that launches it)
mkdir -p "$WORK/pbin"
printf '#!/bin/sh\necho mytool-ran\n' > "$WORK/pbin/mytool"
chmod 755 "$WORK/pbin/mytool"
expect_eq "a command on the caller's PATH runs" mytool-ran \
        "$(PATH="$WORK/pbin:$PATH" "$PROCTOR" exec --mode local --workspace "$WORK" -- mytool 2>&1)"
finish
