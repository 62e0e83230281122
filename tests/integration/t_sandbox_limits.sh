#!/bin/bash
# Limits: memory, processes, CPU time, wall clock, tmpfs and output size end
# or bound a runaway command, each exit is classified, stats are reported.
# As root the cgroup (v1 here) enforces memory, pids and CPU; an unprivileged
# user without delegation gets the rlimit backstop, and the script asserts
# what that gives instead.
# as-user: yes
. "$(dirname "$0")/lib.sh"

J=$WORK/events.jsonl
jrun() { sandbox --json "$@" > "$J"; }
jv() { json_eval "$1" < "$J"; }
exit_field() { jv "of('exec.exit')[-1].get('$1') if of('exec.exit') else 'no-exit'"; }
host_ok() { # the host still runs a command promptly
        local t0 t1
        t0=$(now_ms)
        true && /bin/true
        t1=$(now_ms)
        [ $((t1 - t0)) -lt 2000 ]
}

# ---- memory ----
jrun --memory 64M --timeout 20 -- python3 -c '
a = []
while True:
    a.append(bytearray(1 << 20))'
rc=$?
expect_eq "memory: limits reported" 67108864 "$(jv "of('exec.create')[0]['limits']['memory_bytes']")"
peak=$(exit_field mem_peak_bytes)
if is_root; then
        expect_eq "memory bomb: reason oom" oom "$(exit_field reason)"
        expect_eq "memory bomb: killed by SIGKILL" 9 "$(exit_field signal)"
        expect_eq "memory bomb: exit status 137" 137 $rc
        if [ "${peak:-0}" -gt $((32 << 20)) ] && [ "$peak" -le $((66 << 20)) ]; then pass; else
                fail "memory bomb: peak $peak not near the 64M limit"; fi
        # the cgroup counts every process of the sandbox together
        jrun --memory 64M --timeout 20 -- sh -c '
                for i in 1 2 3; do python3 -c "a = bytearray(30 << 20); a[::4096] = b\"x\" * len(a[::4096]); import time; time.sleep(1)" & done; wait'
        expect_eq "three 30M processes under 64M: reason oom" oom "$(exit_field reason)"
else
        expect_eq "memory bomb (rlimit): the command fails itself" exited "$(exit_field reason)"
        expect_eq "memory bomb (rlimit): exit status 1" 1 $rc
        expect_match "memory bomb (rlimit): MemoryError" "MemoryError" "$(jv "out('stderr')")"
        if [ "${peak:-0}" -le $((70 << 20)) ]; then pass; else fail "memory bomb (rlimit): peak $peak above 64M"; fi
fi
check "memory bomb: host fine" host_ok

# ---- processes ----
mark=$(new_marker fork)
track_marker "$mark"
if is_root; then ftimeout=10; else ftimeout=2; fi
t0=$(now_ms)
sandbox_bg --json --pids 32 --timeout $ftimeout -- bash -c "f() { f | f & }; f; sleep 10 # $mark" > "$J"
pf=$T_LAST_BG
sleep 0.5
check "fork bomb: host runs commands meanwhile" host_ok
wait $pf
rc=$?
t1=$(now_ms)
expect_eq "pids: limits reported" 32 "$(jv "of('exec.create')[0]['limits']['pids']")"
if is_root; then
        expect_eq "fork bomb: reason pids_limit" pids_limit "$(exit_field reason)"
        expect_eq "fork bomb: exit status 137" 137 $rc
        if [ $((t1 - t0)) -lt 8000 ]; then pass; else fail "fork bomb: took $((t1 - t0)) ms"; fi
        maxp=$(jv "max([e['pids'] for e in of('exec.stats')] or [0])")
        if [ "$maxp" -ge 8 ] && [ "$maxp" -le 32 ]; then pass; else fail "fork bomb: stats pids $maxp not in 8..32"; fi
else
        # RLIMIT_NPROC makes forks fail; the shell keeps retrying until the wall clock
        expect_eq "fork bomb (rlimit): reason timeout" timeout "$(exit_field reason)"
        expect_eq "fork bomb (rlimit): exit status 124" 124 $rc
        if [ $((t1 - t0)) -lt 6000 ]; then pass; else fail "fork bomb (rlimit): took $((t1 - t0)) ms"; fi
fi
check "fork bomb: nothing left on the host" wait_gone "$mark" 2
check "fork bomb: host fine after" host_ok

# ---- CPU time ----
# (a generous wall clock: under contention a sandbox weighs a tenth of a
# normal process, so its second of CPU may take many seconds to come)
jrun --cpu-time 1 --timeout 120 -- sh -c 'while :; do :; done'
rc=$?
expect_eq "cpu spin: reason cpu_limit" cpu_limit "$(exit_field reason)"
expect_eq "cpu spin: exit status is 128+signal" "$(jv "128 + of('exec.exit')[0]['signal'] if of('exec.exit') else 'no exit event'")" $rc
cpu=$(exit_field cpu_ms)
# cpu_ms is the group's count, from when the child joined it; RLIMIT_CPU
# counts the process's own time from its start. On a loaded machine the two
# parted (839 ms reported at the rlimit's SIGXCPU was seen once, with other
# tests' engines running alongside; the cause is not pinned down): "about"
# is 0.7-3 s.
if [ "${cpu:-0}" -ge 700 ] && [ "$cpu" -lt 3000 ]; then pass; else fail "cpu spin: cpu_ms $cpu not about 1000"; fi
expect_eq "cpu: limits reported" 1000 "$(jv "of('exec.create')[0]['limits']['cpu_ms']")"
if is_root; then
        # the cgroup sums the CPU of every process; each alone stays under 1 s
        # (each spins for 0.6 s of its own CPU time, so a loaded machine
        # only slows the test down, it cannot make the sum fall short)
        jrun --cpu-time 1 --timeout 120 -- sh -c 'for i in 1 2 3 4; do python3 -c "import time
while time.process_time() < 0.6: pass"; done; echo survived'
        expect_eq "four 0.6 s spins under --cpu-time 1: reason cpu_limit" cpu_limit "$(exit_field reason)"
        expect_no_match "the sequence was cut short" "survived" "$(jv "out()")"
        # under contention a sandbox weighs a tenth of a normal process (so
        # spinning sandboxes cannot starve the supervisor), and is held to
        # one core
        mark=$(new_marker weight)
        track_marker "$mark"
        sandbox_bg -- sh -c "$mark=1; while :; do :; done" >/dev/null 2>&1
        grp=""
        for i in $(seq 50); do
                grp=$(ls -d "$(cg_v1_dir cpu)/proctor-$T_LAST_BG-"* 2>/dev/null | head -1)
                [ -n "$grp" ] && [ "$(cat "$grp/cpu.shares" 2>/dev/null)" = 102 ] && break
                sleep 0.1
        done
        expect_eq "a sandbox's CPU weight (cpu.shares)" 102 "$(cat "$grp/cpu.shares" 2>/dev/null)"
        expect_eq "a sandbox's CPU bandwidth: one core" 100000 "$(cat "$grp/cpu.cfs_quota_us" 2>/dev/null)"
        kill "$T_LAST_BG"
        check "the spinner is gone after the kill" wait_gone "$mark" 3
fi

# ---- wall clock ----
mark=$(new_marker wall)
track_marker "$mark"
t0=$(now_ms)
jrun --timeout 1 -- sh -c "sleep 30; : $mark"
rc=$?
t1=$(now_ms)
expect_eq "sleep 30 --timeout 1: reason timeout" timeout "$(exit_field reason)"
expect_eq "sleep 30 --timeout 1: exit status 124" 124 $rc
wall=$(exit_field wall_ms)
if [ "${wall:-0}" -ge 900 ] && [ "$wall" -lt 5000 ]; then pass; else fail "timeout: wall_ms $wall"; fi
if [ $((t1 - t0)) -lt 6000 ]; then pass; else fail "timeout: took $((t1 - t0)) ms"; fi
check "timeout: nothing left" wait_gone "$mark" 1
err=$(sandbox --timeout 1 -- sleep 30 2>&1)
expect_match "timeout: said on stderr" "timed out after 1" "$err"

# ---- tmpfs ----
out=$(sandbox --tmpfs 1M -- python3 -c '
import errno
try:
    with open("/tmp/fill", "wb") as f:
        for i in range(64):
            f.write(b"x" * 65536)
            f.flush()
    print("no limit")
except OSError as e:
    print(errno.errorcode[e.errno])'); rc=$?
expect_eq "tmpfs fill: ENOSPC" ENOSPC "$out"
expect_eq "tmpfs fill: the command itself goes on" 0 $rc

# ---- output ----
jrun --output-limit 64K -- sh -c 'yes | head -c 5M'
rc=$?
expect_eq "flood: exactly 64K delivered" 65536 "$(jv "len(out().encode())")"
expect_eq "flood: truncated" true "$(exit_field truncated)"
expect_eq "flood: the command exited normally" "exited 0 0" "$(exit_field reason) $(exit_field exit_code) $rc"
expect_eq "output: limits reported" 65536 "$(jv "of('exec.create')[0]['limits']['output_bytes']")"
n=$(sandbox --output-limit 64K -- sh -c 'yes | head -c 5M' 2>"$WORK/err" | wc -c)
expect_eq "flood without --json: 64K on stdout" 65536 "$n"
expect_match "flood: truncation said on stderr" "output truncated at 65536" "$(cat "$WORK/err")"
jrun --output-limit 64K -- sh -c 'head -c 1000 /dev/zero | tr "\0" a; echo'
expect_eq "small output: not truncated" false "$(exit_field truncated)"
expect_eq "small output: whole" 1001 "$(jv "len(out())")"

# ---- exit classification ----
jrun -- sh -c 'exit 3'
rc=$?
expect_eq "exit 3: status 3" 3 $rc
expect_eq "exit 3: reason exited, code 3, no signal" "exited 3 0" "$(exit_field reason) $(exit_field exit_code) $(exit_field signal)"
jrun -- sh -c 'kill -TERM $$'
rc=$?
expect_eq "kill -TERM \$\$: status 143" 143 $rc
expect_eq "kill -TERM \$\$: reason signaled, signal 15" "signaled 15" "$(exit_field reason) $(exit_field signal)"
sandbox -- sh -c 'kill -KILL $$'
expect_eq "kill -KILL \$\$: status 137" 137 $?
sandbox -- true
expect_eq "true: status 0" 0 $?
# a sandbox that cannot be built: overlayfs refuses procfs as its lower
# layer, so an overlay workspace there fails the setup
"$PROCTOR" exec --mode sandbox --workspace /proc --workspace-mode overlay --json -- true > "$J"
rc=$?
expect_eq "setup failure: status 125" 125 $rc
expect_eq "setup failure: create, exit, remove" "exec.create exec.exit exec.remove" "$(jv "' '.join(e['type'] for e in ev)")"
expect_eq "setup failure: reason setup_failed" setup_failed "$(exit_field reason)"
expect_match "setup failure: error says why" "workspace" "$(exit_field error)"
err=$("$PROCTOR" exec --mode sandbox --workspace /proc --workspace-mode overlay -- true 2>&1)
expect_eq "setup failure without --json: status 125" 125 $?
err=$(without_fallback_note <<<"$err")
expect_match "setup failure: one line naming why" "^proctor exec: .*workspace.*: " "$err"
expect_eq "setup failure: exactly one line" 1 "$(printf '%s\n' "$err" | wc -l)"

# the event order holds every time, even when the output is immediate
for i in $(seq 20); do sandbox --json -- echo hi > "$WORK/quick$i.jsonl"; done
expect_eq "20 quick runs: start always before output" "" "$(odd_event_orders "$WORK"/quick*.jsonl)"

# ---- stats and streaming ----
# 1.5 s of CPU, not of wall time: on a loaded host a sandbox weighs little
jrun --timeout 120 -- python3 -c '
import time
print("early", flush=True)
t = time.process_time()
while time.process_time() - t < 1.5:
    pass
print("late")'
expect_eq "burner exited" "exited 0" "$(exit_field reason) $(exit_field exit_code)"
expect_eq "at least one stats event with cpu, memory and pids" true \
        "$(jv "any(e['cpu_ms'] > 0 and e['mem_bytes'] > 0 and e['pids'] >= 1 for e in of('exec.stats'))")"
expect_eq "stats fields present" true \
        "$(jv "all(all(k in e for k in ('exec_id', 'cpu_pct', 'cpu_ms', 'mem_bytes', 'mem_peak_bytes', 'pids')) for e in of('exec.stats')) and len(of('exec.stats')) > 0")"
# cpu_pct is a share of one core: its peak is at least the run's average
# share (cpu_ms over wall_ms), whatever share a loaded machine gave it
expect_eq "cpu_pct a share of one core" true \
        "$(jv "max(e['cpu_pct'] for e in of('exec.stats')) >= 50 * of('exec.exit')[0]['cpu_ms'] / of('exec.exit')[0]['wall_ms']")"
expect_eq "exit cpu_ms about 1.5 s" true "$(jv "1000 <= of('exec.exit')[0]['cpu_ms'] < 5000")"
expect_eq "output streamed before the exit" true \
        "$(jv "[e for e in of('exec.output') if 'early' in e['data']][0]['t_ms'] + 800 <= of('exec.exit')[0]['t_ms']")"
if is_root; then
        expect_eq "cgroup stats count the init and the command" true "$(jv "max(e['pids'] for e in of('exec.stats')) >= 2")"
fi
finish
