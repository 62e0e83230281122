# Checks of --runtime docker that hold for every engine speaking the Docker
# Engine API (a private dockerd in t_docker.sh, Podman's compatible service
# in t_podman.sh), sourced after lib.sh. The caller has the engine listening
# at DOCKER_HOST with $IMAGE imported (engine_image makes it), and defines
# dk (proctor exec --runtime docker with the image and $WORK) and ENGINE
# (the engine's name in messages). The docker CLI speaks to both engines.

# The test image: busybox-static with its applets, a /tmp as images have
# it, and stand-ins for bash and python3 (a python3 that prints its stdin
# shows what reached the container's stdin). $1: a scratch directory.
engine_image() {
        local r=$1/root a
        ENGINE_ROOT=$r
        mkdir -p "$r/bin" "$r/tmp" "$r/etc" "$r/workspace"
        chmod 1777 "$r/tmp"
        cp /bin/busybox "$r/bin/busybox"
        for a in $(/bin/busybox --list); do [ "$a" = busybox ] || ln -s busybox "$r/bin/$a"; done
        printf '#!/bin/sh\nexec sh "$@"\n' >"$r/bin/bash"
        printf '#!/bin/sh\necho "stdin:"; cat\n' >"$r/bin/python3"
        chmod 755 "$r/bin/bash" "$r/bin/python3"
        tar -C "$r" -c . | docker import - "$IMAGE" >/dev/null
        check "$ENGINE: the test image is imported" docker image inspect "$IMAGE" >/dev/null
}

leftovers() { docker ps -aq --filter label=proctor.pid | wc -l; }
# leftovers_are N: as many containers of proctor's as N, asked anew at each
# call (for wait_until: "$(leftovers)" in its arguments is counted only once)
leftovers_are() { [ "$(leftovers)" -eq "$1" ]; }
# has_container PID: a container of proctor process PID runs
has_container() { [ -n "$(docker ps -q --filter label=proctor.pid="$1")" ]; }

# Output, exit codes, a signal's 128+N, a missing command.
engine_check_exits() {
        local out
        out=$(dk -- sh -c 'echo out; echo err >&2; exit 7' 2>"$WORK/e")
        expect_eq "$ENGINE: exit code is the command's" 7 $?
        expect_eq "$ENGINE: stdout" out "$out"
        expect_eq "$ENGINE: stderr" err "$(cat "$WORK/e")"
        dk -- sh -c 'kill -9 $$'
        expect_eq "$ENGINE: killed by a signal: 128+N" 137 $?
        dk -- no-such-command 2>"$WORK/e"
        expect_eq "$ENGINE: missing command: 127" 127 $?
        expect_match "$ENGINE: missing command: said" "no-such-command.*No such file or directory" "$(cat "$WORK/e")"
}

# The lifecycle and live stats in --json; nothing left after.
engine_check_stats() {
        dk --json -- sh -c 'echo hi; sleep 4' >"$WORK/ev"
        expect_eq "$ENGINE: exec.create names the runtime" docker "$(json_field exec.create runtime <"$WORK/ev")"
        expect_eq "$ENGINE: the engine limits the container as a whole" "[]" "$(json_field exec.create limits_per_process <"$WORK/ev")"
        expect_eq "$ENGINE: lifecycle states" '["created", "running", "exited", "removing"]' \
                "$(json_eval '[e["state"] for e in of("exec.state")]' <"$WORK/ev")"
        expect_match "$ENGINE: exec.start names the container" '^[0-9a-f]{64}$' "$(json_field exec.start container <"$WORK/ev")"
        # Podman 4.3 once lost every sample of some runs: a counter it
        # wraps below zero (usage_in_usermode) failed to parse
        # (test_docker.c, test_stats_podman_wrapped).
        expect_eq "$ENGINE: stats arrive while it runs" true \
                "$(json_eval 'len(of("exec.stats")) >= 1 and all(s["mem_bytes"] > 0 and s["pids"] >= 1 for s in of("exec.stats"))' <"$WORK/ev")"
        expect_eq "$ENGINE: stats every second or so" true "$(json_eval 'len(of("exec.stats")) >= 2' <"$WORK/ev")"
        expect_eq "$ENGINE: the output" "hi" "$(json_eval '"".join(e["data"] for e in of("exec.output")).strip()' <"$WORK/ev")"
        expect_eq "$ENGINE: the container is removed" 0 "$(leftovers)"
}

# Memory, wall clock, pids and output limits with their exit reasons.
engine_check_limits() {
        local t0 out
        dk --json --memory 16M -- sh -c 'x=a; while :; do x=$x$x; done' >"$WORK/ev"
        expect_eq "$ENGINE: memory limit: oom" oom "$(json_field exec.exit reason <"$WORK/ev")"
        dk --json --cpu-time 1 -- sh -c 'while :; do :; done' >"$WORK/ev"
        expect_eq "$ENGINE: CPU time: cpu_limit" cpu_limit "$(json_field exec.exit reason <"$WORK/ev")"
        t0=$(now_ms)
        dk --timeout 1 -- sleep 30 2>"$WORK/e"
        expect_eq "$ENGINE: timeout: 124" 124 $?
        check "$ENGINE: timeout: ended within 5 s" test $(($(now_ms) - t0)) -lt 5000
        expect_match "$ENGINE: timeout: said" "timed out after 1.0 s" "$(cat "$WORK/e")"
        # A subshell meets the limit; the shell itself (which a failed fork
        # would end at once) goes on without forking for a moment.
        dk --json --pids 8 -- sh -c '(for i in $(seq 20); do sleep 2 & done); i=0; while [ $i -lt 100000 ]; do i=$((i+1)); done; exit 1' >"$WORK/ev" 2>/dev/null
        expect_eq "$ENGINE: pids limit: pids_limit" pids_limit "$(json_field exec.exit reason <"$WORK/ev")"
        out=$(dk --output-limit 100 -- sh -c 'i=0; while [ $i -lt 100 ]; do echo 0123456789; i=$((i+1)); done' 2>/dev/null | wc -c)
        expect_eq "$ENGINE: output cap" 100 "$out"
        expect_eq "$ENGINE: nothing left after the limits" 0 "$(leftovers)"
}

# The session's disk quota on the bind-mounted workspace (a local engine):
# one file held to the room by RLIMIT_FSIZE, many
# files together stopped by the workspace walk the stats samples drive.
engine_check_disk() {
        local d=$WORK/disk before added rc
        mkdir -p "$d"
        give_away "$d"
        # RLIMIT_FSIZE: the engine's Ulimits (Docker) and proctor's init in
        # the container (every engine) hold the file to the room left
        "$PROCTOR" exec --runtime docker --image "$IMAGE" --workspace "$d" --disk 10M --json -- \
                sh -c 'head -c 50000000 /dev/zero > /workspace/big' >"$WORK/ev" 2>/dev/null
        rc=$?
        expect_eq "$ENGINE: one file past the disk quota: 153 (SIGXFSZ)" 153 $rc
        expect_eq "$ENGINE: one file past the disk quota: disk_limit" disk_limit "$(json_field exec.exit reason <"$WORK/ev")"
        expect_eq "$ENGINE: the file is held to the quota" 10485760 "$(stat -c %s "$d/big" 2>&1)"
        rm -f "$d/big"
        before=$(du -sb "$d" | cut -f1)
        "$PROCTOR" exec --runtime docker --image "$IMAGE" --workspace "$d" --disk 20M --json -- \
                sh -c 'for i in 1 2 3 4 5 6 7 8 9 10; do head -c 8000000 /dev/zero > /workspace/f$i; sleep 0.5; done; echo all-written' \
                >"$WORK/ev" 2>/dev/null
        expect_eq "$ENGINE: files past the quota together: disk_limit" disk_limit "$(json_field exec.exit reason <"$WORK/ev")"
        expect_no_match "$ENGINE: they were stopped before the end" "all-written" "$(json_eval 'out()' <"$WORK/ev")"
        added=$(($(du -sb "$d" | cut -f1) - before))
        if [ "$added" -lt $((70 << 20)) ]; then pass; else fail "$ENGINE: the quota let $added bytes through (20M quota)"; fi
        rm -f "$d"/f*
        "$PROCTOR" exec --runtime docker --image "$IMAGE" --workspace "$d" --disk 10M -- \
                sh -c 'head -c 5000000 /dev/zero > /workspace/ok && echo fits' >"$WORK/out" 2>/dev/null
        expect_eq "$ENGINE: control: a file within the quota is written" "fits 5000000" "$(cat "$WORK/out") $(stat -c %s "$d/ok" 2>&1)"
        rm -rf "$d"
        expect_eq "$ENGINE: nothing left after the disk checks" 0 "$(leftovers)"
}

# An image the engine does not have: the message names the fix.
engine_check_no_image() {
        dk --image proctor-test:missing -- true 2>"$WORK/e"
        expect_eq "$ENGINE: image not found: 125" 125 $?
        expect_match "$ENGINE: image not found: docker pull" "docker pull proctor-test:missing" "$(cat "$WORK/e")"
}

# Labels, and the sweep of a SIGKILLed proctor's container at the next start.
engine_check_sweep() {
        local p cid
        "$PROCTOR" exec --runtime docker --image "$IMAGE" --workspace "$WORK" -- sleep 60 &
        p=$!
        track_pid $p
        wait_until 20 leftovers_are 1
        wait_until 20 has_container "$p"
        cid=$(docker ps -q --filter label=proctor.pid="$p")
        expect_match "$ENGINE: labelled with proctor's pid" '^[0-9a-f]+$' "$cid"
        expect_match "$ENGINE: labelled with the execution" '"proctor.exec":"1"' "$(docker inspect -f '{{json .Config.Labels}}' "$cid" 2>/dev/null)"
        { kill -9 $p; wait $p; } 2>/dev/null
        expect_eq "$ENGINE: SIGKILLed proctor leaves its container" 1 "$(leftovers)"
        # Podman reads the seccomp profile from a file proctor writes, named
        # with its pid (exec/docker/docker.c, seccomp_file), where Docker takes it inline
        local sdir=${XDG_RUNTIME_DIR:-/tmp}
        [ "${#sdir}" -le 30 ] && [ "${sdir#/}" != "$sdir" ] || sdir=/tmp
        profiles() { find "$sdir" -maxdepth 1 -name "proctor-seccomp-$p-*" 2>/dev/null | wc -l; }
        if [ "$ENGINE" = podman ]; then
                expect_eq "$ENGINE: SIGKILLed proctor leaves its profile's file" 1 "$(profiles)"
        else
                expect_eq "$ENGINE: no profile file for Docker" 0 "$(profiles)"
        fi
        dk -- true
        check "$ENGINE: the next start sweeps it" wait_until 20 leftovers_are 0
        expect_eq "$ENGINE: and the dead proctor's profile file" 0 "$(profiles)"
}

# A session: run's tools in containers, stdin to the command (the
# run_python_code stand-in prints it).
engine_check_session() {
        cat >"$WORK/s.jsonl" <<'S'
{"content": "Looking.", "tool_calls": [{"name": "bash", "arguments": {"command": "echo in-container; cat /proc/1/cgroup | head -1; exit 3"}}, {"name": "run_python_code", "arguments": {"code": "print('via stdin')"}}]}
{"content": "Done."}
S
        "$PROCTOR" run --runtime docker --image "$IMAGE" --workspace "$WORK" --model "script:$WORK/s.jsonl" --json go >"$WORK/ev" 2>"$WORK/e"
        expect_eq "$ENGINE: run: ends completed" completed "$(json_field session.end status <"$WORK/ev")"
        expect_eq "$ENGINE: run: two containers" '["docker", "docker"]' "$(json_eval '[e["runtime"] for e in of("exec.create")]' <"$WORK/ev")"
        expect_match "$ENGINE: run: the bash tool ran in the container" "in-container" "$(json_eval '[r["output"] for r in of("tool.result")]' <"$WORK/ev")"
        expect_match "$ENGINE: run: the bash tool's exit code" '"exit_code": 3' "$(json_eval 'of("tool.result")' <"$WORK/ev")"
        expect_match "$ENGINE: run: stdin reached the container" "stdin:.*via stdin" "$(json_eval '[r["output"] for r in of("tool.result")]' <"$WORK/ev")"
        expect_eq "$ENGINE: run: nothing left" 0 "$(leftovers)"
}

# SIGTERM to proctor exec kills the container through the API (reason
# killed) and removes it.
engine_check_kill() {
        local p
        # Not through dk: $! must be proctor's own pid.
        "$PROCTOR" exec --runtime docker --image "$IMAGE" --workspace "$WORK" --json -- sleep 60 >"$WORK/kev" 2>/dev/null &
        p=$!
        track_pid $p
        wait_until 20 grep -q '"state":"running"' "$WORK/kev"
        kill -TERM $p
        check "$ENGINE: SIGTERM: proctor exec ends within 15 s" wait_until 15 test ! -e /proc/$p
        wait $p 2>/dev/null
        expect_eq "$ENGINE: SIGTERM: exit reason killed" killed "$(json_field exec.exit reason <"$WORK/kev")"
        check "$ENGINE: SIGTERM: the container is removed" wait_until 10 leftovers_are 0
}

# proctor's own seccomp policy, not the engine's default: a setuid bit on a
# workspace file (which the engine's profile allows: the control) is refused,
# a device node too, while a fifo and a plain mode change still work.
engine_check_seccomp() {
        local out uid gid
        out=$(dk -- sh -c 'touch /workspace/suid; chmod 4755 /workspace/suid 2>&1; echo chmod=$?; chmod 700 /workspace/suid && echo plain-ok; mkfifo /tmp/f && echo fifo-ok; mknod /tmp/c c 1 3 2>&1; stat -c %a /workspace/suid' 2>&1)
        expect_match "$ENGINE: proctor's policy: setuid bit refused" "chmod=1" "$out"
        expect_match "$ENGINE: proctor's policy: said as not permitted" "Operation not permitted" "$out"
        expect_match "$ENGINE: proctor's policy: a plain chmod works" "plain-ok" "$out"
        expect_match "$ENGINE: proctor's policy: a fifo works" "fifo-ok" "$out"
        expect_match "$ENGINE: proctor's policy: the file kept no setuid bit" "^700$" "$(echo "$out" | tail -1)"
        uid=$(id -u "$T_OWNER")
        gid=$(id -g "$T_OWNER")
        out=$(docker run --rm --network none --user "$uid:$gid" --security-opt no-new-privileges \
                -v "$WORK:/workspace" "$IMAGE" sh -c 'chmod 4755 /workspace/suid; echo chmod=$?; stat -c %a /workspace/suid' 2>&1)
        expect_match "$ENGINE: control: the engine's default profile lets the setuid bit through" "chmod=0" "$out"
        chmod 600 "$WORK/suid"
}

# The workspace is the directory opened at the session's start: its path
# swapped for a link to another user's 0700 directory between two calls
# gives the second call neither that user's rights nor its files.
engine_check_workspace_swap() {
        local base=$WORK/swap victim out
        victim=$(mktemp -d /tmp/pvictim.XXXX)
        echo victim-secret >"$victim/secret"
        chown -R daemon:daemon "$victim"
        chmod 700 "$victim"
        chmod 600 "$victim/secret"
        mkdir -p "$base/ws"
        give_away "$base"
        out=$(setpriv --reuid=daemon --regid=daemon --clear-groups cat "$victim/secret" 2>&1)
        expect_eq "$ENGINE: control: the other user reads its secret" victim-secret "$out"
        cat >"$WORK/swap.jsonl" <<'S'
{"content": "First.", "tool_calls": [{"name": "bash", "arguments": {"command": "touch /workspace/started; while [ ! -e /workspace/go ]; do usleep 50000; done; echo first-done"}}]}
{"content": "Second.", "tool_calls": [{"name": "bash", "arguments": {"command": "id -u; cat /workspace/secret; echo pwned > /workspace/pwned; ls /workspace"}}]}
{"content": "Done."}
S
        "$PROCTOR" run --runtime docker --image "$IMAGE" --workspace "$base/ws" \
                --model "script:$WORK/swap.jsonl" --json go >"$WORK/swap.ev" 2>"$WORK/swap.err" &
        local p=$!
        track_pid $p
        check "$ENGINE: swap: the first call runs" wait_until 30 test -e "$base/ws/started"
        mv "$base/ws" "$base/ws.old" && ln -s "$victim" "$base/ws" && touch "$base/ws.old/go"
        check "$ENGINE: swap: the session ends" wait_until 60 test ! -e /proc/$p
        wait $p 2>/dev/null
        out=$(json_eval '"".join(r["output"] for r in of("tool.result")[1:])' <"$WORK/swap.ev" 2>&1)
        expect_no_match "$ENGINE: swap: the second call cannot read the other user's secret" "victim-secret" "$out"
        check "$ENGINE: swap: nor write in its directory" test ! -e "$victim/pwned"
        expect_no_match "$ENGINE: swap: nor runs as that user" "^1$" "$out"
        expect_match "$ENGINE: swap: the call is refused, and says why" \
                "mounted another directory at /workspace than the workspace proctor opened" "$out"
        rm -rf "$victim" "$base"
        expect_eq "$ENGINE: swap: nothing left" 0 "$(leftovers)"
}

# The container's group is the workspace owner's primary group, never the
# directory's: a workspace given to the shadow group lends it nothing.
engine_check_group() {
        local ws=$WORK/grp out
        mkdir -p "$ws"
        give_away "$ws"
        chgrp shadow "$ws"
        echo shadow-secret >"$ws/s"
        chown root:shadow "$ws/s"
        chmod 640 "$ws/s"
        out=$(setpriv --reuid="$T_OWNER" --regid=shadow --clear-groups cat "$ws/s" 2>&1)
        expect_eq "$ENGINE: control: a process in group shadow reads the file" shadow-secret "$out"
        # (one stream inside: stdout and stderr are relayed apart, in no
        # order between them)
        out=$("$PROCTOR" exec --runtime docker --image "$IMAGE" --workspace "$ws" -- sh -c 'id -g; cat /workspace/s 2>&1' 2>&1)
        expect_eq "$ENGINE: group: the owner's primary group" "$(id -g "$T_OWNER")" "$(echo "$out" | head -1)"
        expect_no_match "$ENGINE: group: the shadow group's file stays unread" "shadow-secret" "$out"
        rm -rf "$ws"
}

# The sweep removes only what a dead proctor of this host and boot made:
# containers labelled by hand (a dead pid, but no proof of which process)
# or naming a live process stay; a SIGKILLed proctor's go (engine_check_sweep).
engine_check_sweep_foreign() {
        local dead start forged live out
        dead=$(sh -c 'echo $$')
        start=$(awk '{ sub(/.*\) /, ""); print $20 }' /proc/$$/stat)
        forged=$(docker create --label proctor.pid="$dead" --label proctor.host="$(hostname)" \
                --label proctor.session=x --label proctor.exec=1 "$IMAGE" true)
        live=$(docker create --label proctor.pid=$$ --label proctor.host="$(hostname)" \
                --label proctor.start="$start" --label proctor.boot="$(cat /proc/sys/kernel/random/boot_id)" \
                --label proctor.instance=0123456789abcdef0123456789abcdef "$IMAGE" true)
        check "$ENGINE: foreign containers exist" test -n "$forged" -a -n "$live"
        dk -- true
        # the sweep has answered once a proctor that starts after has ended
        dk -- true
        out=$(docker ps -aq --no-trunc)
        expect_match "$ENGINE: sweep: a container with a forged dead pid survives" "$forged" "$out"
        expect_match "$ENGINE: sweep: a live process's container survives" "$live" "$out"
        docker rm -f "$forged" "$live" >/dev/null 2>&1
}

# Kernel objects counted per host user (the container has no user
# namespace): queued signals and open files stop at a native sandbox's
# bounds (256; 4096), and the limits are there for the command to see.
engine_check_counters() {
        local out
        if ! cc -static -O1 -w -o "$WORK/counters" "$T_DIR/attacks/counters.c" 2>"$WORK/cc.err"; then
                echo "$ENGINE: cannot build the counters attack (a static libc?): not tested ($(head -1 "$WORK/cc.err"))"
                return
        fi
        out=$("$WORK/counters" | awk '/^sigpending/ { s = $2 } /^nofile/ { f = $2 } END { print (s > 256 && f > 4096) ? "past" : "held: " s " " f }')
        expect_eq "$ENGINE: control: on the host the counters go past the bounds" past "$out"
        out=$(dk -- sh -c 'grep -E "pending signals|msgqueue|open files" /proc/self/limits; /workspace/counters')
        expect_match "$ENGINE: the limits are visible inside: pending signals" "Max pending signals +256 +256" "$out"
        expect_match "$ENGINE: the limits are visible inside: message queues" "Max msgqueue size +65536 +65536" "$out"
        expect_match "$ENGINE: the limits are visible inside: open files" "Max open files +1024 +4096" "$out"
        expect_match "$ENGINE: queued signals stop at 256" "^sigpending (25[0-7]|2[0-4][0-9]|1?[0-9]{1,2})$" "$(grep '^sigpending' <<<"$out")"
        expect_match "$ENGINE: open files stop at 4096" "^nofile ([0-9]{1,3}|[0-3][0-9]{3}|40[0-9][0-9])$" "$(grep '^nofile' <<<"$out")"
        rm -f "$WORK/counters"
}

# A SIGKILLed proctor's container ends on its own: its init reads the end
# of proctor's attach stream and ends the tree, wall clock or not.
engine_check_orphan() {
        local p cid
        "$PROCTOR" exec --runtime docker --image "$IMAGE" --workspace "$WORK" -- sleep 600 &
        p=$!
        track_pid $p
        wait_until 30 has_container "$p"
        cid=$(docker ps -q --filter label=proctor.pid="$p")
        expect_match "$ENGINE: control: the call's container runs" '^[0-9a-f]+$' "$cid"
        { kill -9 $p; wait $p; } 2>/dev/null
        running() { [ "$(docker inspect -f '{{.State.Running}}' "$cid" 2>/dev/null)" = true ]; }
        check "$ENGINE: a SIGKILLed proctor's container ends on its own" wait_until 15 eval '! running'
        # a proctor that exits at once (its call refused) still finishes
        # the sweep it started
        dk --workspace-mode overlay -- true 2>/dev/null
        expect_eq "$ENGINE: the sweep is done before proctor exits" "" "$(docker ps -aq --filter id="$cid")"
        docker rm -f "$cid" >/dev/null 2>&1
        # a stopped proctor cannot act on its wall clock: the init's own
        # (5 s past it) ends the container
        "$PROCTOR" exec --runtime docker --image "$IMAGE" --workspace "$WORK" --timeout 8 -- sleep 600 >/dev/null 2>&1 &
        p=$!
        track_pid $p
        wait_until 30 has_container "$p"
        cid=$(docker ps -q --filter label=proctor.pid="$p")
        kill -STOP $p
        expect_match "$ENGINE: control: a --timeout 8 call's container runs" '^[0-9a-f]+$' "$cid"
        check "$ENGINE: its wall clock holds while proctor is stopped" wait_until 30 eval '! running'
        kill -CONT $p
        check "$ENGINE: the stopped proctor ends once resumed" wait_until 20 test ! -e /proc/$p
        wait $p 2>/dev/null
        expect_eq "$ENGINE: nothing left after the orphan checks" 0 "$(leftovers)"
}

# An image's VOLUME: the engine would back it with an anonymous volume,
# outside the workspace's disk quota; proctor mounts a tmpfs there, no
# larger than what the quota has left.
engine_check_volume() {
        local out uid gid
        mkdir -p "$ENGINE_ROOT/data"
        chmod 1777 "$ENGINE_ROOT/data"
        tar -C "$ENGINE_ROOT" -c . | docker import --change 'VOLUME /data' - "$IMAGE-vol" >/dev/null
        rmdir "$ENGINE_ROOT/data"
        local fill='for i in 1 2 3 4 5 6; do head -c 9000000 /dev/zero > /data/f$i 2>/dev/null; done; du -sk /data | cut -f1'
        uid=$(id -u "$T_OWNER")
        gid=$(id -g "$T_OWNER")
        out=$(docker run --rm --network none --user "$uid:$gid" "$IMAGE-vol" sh -c "$fill" 2>&1)
        check "$ENGINE: control: the engine's own volume takes 50 MB ($out KiB)" test "${out:-0}" -ge 50000 2>/dev/null
        out=$(dk --image "$IMAGE-vol" --disk 10M -- sh -c "$fill" 2>&1)
        check "$ENGINE: a VOLUME under --disk 10M holds 10 MiB at most ($out KiB)" test "${out:-99999}" -le 10300 2>/dev/null
        out=$(dk --image "$IMAGE-vol" -- sh -c 'echo x > /data/ok && cat /data/ok' 2>&1)
        expect_eq "$ENGINE: the VOLUME is writable" x "$out"
        docker rmi -f "$IMAGE-vol" >/dev/null 2>&1
        expect_eq "$ENGINE: nothing left after the volume checks" 0 "$(leftovers)"
}
