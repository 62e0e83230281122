#!/bin/bash
# Kill: SIGTERM, SIGINT and SIGHUP to `proctor exec` end the whole sandbox
# (reason killed), even mid fork bomb; proctor's own death by SIGKILL takes
# the sandbox with it; nothing (process, cgroup, mount) is left behind, and
# what a SIGKILLed proctor could not remove, the next proctor does.
# as-user: yes
. "$(dirname "$0")/lib.sh"

J=$WORK/events.jsonl
jv() { json_eval "$1" < "$J"; }
# host_mounts: the host's mount points, less those of the other scripts
# that run alongside (each mounts only inside its own /tmp/proctor-it.*
# directory, its private engine's /tmp/pdk.* or /tmp/ppm.*, or an engine's
# state under /run and /var/lib)
host_mounts() {
        awk -v own="$WORK" '{ m = $5 }
                index(m, "/tmp/proctor-it.") == 1 && index(m, own) != 1 { next }
                m ~ "^/tmp/(pdk|ppm)[.]" { next }
                m ~ "^/(run|var/lib)/(containers|docker|netns|user/[0-9]+/(containers|netns))" { next }
                { print m }' /proc/self/mountinfo | sort
}
mounts_before=$(host_mounts)


# start_sandbox MARKER ARGS...: proctor exec --json in the background, events
# into a fresh $J; sets $bg to proctor's pid
n_runs=0
start_sandbox() {
        local m=$1
        shift
        track_marker "$m"
        n_runs=$((n_runs + 1))
        J=$WORK/events-$n_runs.jsonl
        sandbox_bg --json "$@" > "$J" 2>"$WORK/stderr"
        bg=$T_LAST_BG
}
started() { grep -q '"exec.start"' "$J" 2>/dev/null; }

# ---- SIGTERM, SIGINT, SIGHUP ----
for sig in TERM INT HUP; do
        dur=6$RANDOM.$$
        start_sandbox "sleep $dur" -- sleep "$dur"
        check "SIG$sig: sandbox started" wait_until 5 started
        check "SIG$sig: its sleep runs on the host" wait_until 3 running "^sleep $dur\$"
        t0=$(now_ms)
        kill -$sig $bg
        wait $bg
        rc=$?
        t1=$(now_ms)
        # prompt (the kill bench measures how fast; a loaded machine slows it)
        if [ $((t1 - t0)) -lt 10000 ]; then pass; else fail "SIG$sig: took $((t1 - t0)) ms to exit"; fi
        expect_eq "SIG$sig: reason killed" killed "$(jv "of('exec.exit')[0]['reason']")"
        expect_eq "SIG$sig: status is 128+signal" "$(jv "128 + of('exec.exit')[0]['signal'] if of('exec.exit') else 'no exit event'")" $rc
        expect_eq "SIG$sig: exec.remove follows" exec.remove "$(jv "ev[-1]['type']")"
        check "SIG$sig: no sleep left on the host" wait_gone "sleep $dur" 5
        if is_root; then check "SIG$sig: no cgroup left" wait_until 5 no_cg_dirs_of $bg; fi
done

# ---- SIGTERM while processes churn inside ----
# twenty loops forking without pause: ~40 processes, under the cap of 64
mark=$(new_marker storm)
start_sandbox "$mark" --pids 64 --timeout 30 -- bash -c "for i in \$(seq 20); do (while :; do /bin/true; done) & done; wait # $mark"
check "fork storm started" wait_until 5 started
sleep 0.7
check "fork storm still running when signalled" kill -0 $bg
t0=$(now_ms)
kill -TERM $bg
wait $bg
t1=$(now_ms)
# prompt: well before its 30 s wall clock (how fast is the kill bench's;
# twenty forking loops and a loaded machine slow the tear-down)
if [ $((t1 - t0)) -lt 10000 ]; then pass; else fail "fork storm: SIGTERM took $((t1 - t0)) ms"; fi
expect_eq "fork storm: reason killed" killed "$(jv "of('exec.exit')[0]['reason']")"
check "fork storm: no process left" wait_gone "$mark" 5
if is_root; then check "fork storm: no cgroup left" wait_until 5 no_cg_dirs_of $bg; fi

# ---- SIGTERM during a real fork bomb ----
# As root the pids cgroup may end the bomb first (reason pids_limit); with
# rlimits only, the bomb runs until the signal.
mark=$(new_marker bomb)
start_sandbox "$mark" --pids 64 --timeout 30 -- bash -c "f() { f | f & }; f; sleep 30 # $mark"
check "fork bomb started" wait_until 5 started
sleep 0.5
t0=$(now_ms)
kill -TERM $bg 2>/dev/null
wait $bg
t1=$(now_ms)
# prompt, well before its 30 s wall clock (the kill bench measures how fast)
if [ $((t1 - t0)) -lt 10000 ]; then pass; else fail "fork bomb: SIGTERM took $((t1 - t0)) ms"; fi
if is_root; then
        expect_match "fork bomb: reason killed or pids_limit" "^(killed|pids_limit)$" "$(jv "of('exec.exit')[0]['reason']")"
else
        expect_eq "fork bomb: reason killed" killed "$(jv "of('exec.exit')[0]['reason']")"
fi
check "fork bomb: no process left" wait_gone "$mark" 5
if is_root; then check "fork bomb: no cgroup left" wait_until 5 no_cg_dirs_of $bg; fi

# ---- proctor killed by SIGKILL: the sandbox dies with it ----
dur=6$RANDOM.$$
start_sandbox "sleep $dur" -- sleep "$dur"
check "SIGKILL: sandbox started" wait_until 5 started
check "SIGKILL: its sleep runs" wait_until 3 running "^sleep $dur\$"
kill -KILL $bg
wait $bg 2>/dev/null
check "SIGKILL of proctor: the sandbox's sleep gone promptly" wait_gone "^sleep $dur\$" 5
check "SIGKILL of proctor: the sandbox's init gone promptly" wait_gone "sleep $dur" 5
# the same with a crowd of processes inside
mark=$(new_marker crowd)
start_sandbox "$mark" --pids 64 -- sh -c "for i in 1 2 3 4 5 6 7 8; do sleep 60 & done; sleep 60; : $mark"
check "SIGKILL crowd: started" wait_until 5 started
sleep 0.3
kill -KILL $bg
wait $bg 2>/dev/null
check "SIGKILL crowd: every process gone promptly" wait_gone "$mark" 5

# ---- the next proctor removes what a SIGKILLed one left ----
if is_root; then
        dur=6$RANDOM.$$
        start_sandbox "sleep $dur" -- sleep "$dur"
        check "stale: sandbox started" wait_until 5 started
        victim=$bg
        kill -KILL $victim
        wait $victim 2>/dev/null
        stale=$(cg_dirs_of $victim)
        # (premise; another proctor starting on this host meanwhile may have
        # begun the removal already, so one hierarchy is enough)
        expect_match "stale: groups left by the dead proctor" "/(memory|pids)/(.*/)?proctor-$victim-1$" "$stale"
        "$PROCTOR" exec -- true
        expect_eq "stale: the next proctor exec -- true runs" 0 $?
        expect_eq "stale: its groups are removed" "" "$(cg_dirs_of $victim)"
        check "stale: nothing of it still runs" wait_gone "sleep $dur" 5
        # and proctor keeps its own groups through normal runs
        sandbox_bg -- true
        p=$T_LAST_BG
        wait $p
        expect_eq "a normal run leaves no cgroup" "" "$(cg_dirs_of $p)"
        sandbox_bg --timeout 1 -- sleep 10 2>/dev/null
        p=$T_LAST_BG
        wait $p
        expect_eq "a timed-out run leaves no cgroup" "" "$(cg_dirs_of $p)"
fi

expect_eq "host mount table unchanged" "$mounts_before" "$(host_mounts)"
finish
