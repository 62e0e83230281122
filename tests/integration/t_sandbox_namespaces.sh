#!/bin/bash
# Sandbox namespaces: its own hostname, process table, network, IPC, user
# and cgroup views, and an init that reaps orphans.
# as-user: yes
. "$(dirname "$0")/lib.sh"

host_name=$(hostname)

# uts: the sandbox's hostname, and the host's stays as it was
out=$(sandbox -- sh -c 'hostname; cat /proc/sys/kernel/hostname; uname -n'); rc=$?
expect_eq "hostname runs" 0 $rc
expect_eq "hostname is sandbox" "sandbox
sandbox
sandbox" "$out"
expect_eq "host hostname untouched" "$host_name" "$(hostname)"

# pid: only the sandbox's own processes; pid 1 is proctor's init and the
# command's pid is small
out=$(sandbox -- sh -c 'echo "self $$"; ps -o pid=,args= ax'); rc=$?
expect_eq "ps ax runs" 0 $rc
expect_match "command pid is small" "^self [2-9]$" "$(printf '%s\n' "$out" | head -n 1)"
ps_lines=$(printf '%s\n' "$out" | tail -n +2)
expect_match "pid 1 is proctor's init" "^ *1 proctor-init *$" "$(printf '%s\n' "$ps_lines" | head -n 1)"
expect_eq "ps shows init, sh and ps only" 3 "$(printf '%s\n' "$ps_lines" | wc -l)"
expect_no_match "no host process visible" "run\.sh|systemd|t_sandbox_namespaces|setpriv" "$ps_lines"
out=$(sandbox -- sh -c 'ls /proc | grep -E "^[0-9]+$" | sort -n | tr "\n" " "')
expect_match "/proc starts at the init" "^1 2 " "$out"
expect_eq "/proc lists a handful of small pids" "ok" \
        "$(printf '%s\n' $out | awk '$1 > 50 { bad = 1 } END { print (NR >= 2 && NR <= 8 && !bad) ? "ok" : "bad: " NR }')"
expect_no_match "/proc does not list this script" "(^| )$$ " "$out"

# net: a fresh namespace with nothing but lo
out=$(sandbox -- cat /proc/net/dev)
ifaces=$(printf '%s\n' "$out" | tail -n +3 | awk -F: '{ gsub(/ /, "", $1); print $1 }' | tr '\n' ' ')
expect_eq "only lo in /proc/net/dev" "lo " "$ifaces"
if [ "$(grep -c : /proc/net/dev)" -gt 1 ]; then pass; else fail "premise: the host has interfaces besides lo"; fi

# every namespace differs from the host's
inside=$(sandbox -- sh -c 'for n in user pid mnt net ipc uts cgroup; do echo "$n $(readlink /proc/self/ns/$n)"; done')
for n in user pid mnt net ipc uts cgroup; do
        host_ns=$(readlink /proc/self/ns/$n)
        in_ns=$(printf '%s\n' "$inside" | awk -v n=$n '$1 == n { print $2 }')
        expect_match "$n namespace read inside" "^$n:\[[0-9]+\]$" "$in_ns"
        if [ -n "$in_ns" ] && [ "$in_ns" != "$host_ns" ]; then pass; else
                fail "$n namespace is the host's ($host_ns)"; fi
done
# two live sandboxes do not share namespaces either (both must be alive:
# the kernel reuses the inode number of a freed namespace)
sandbox_bg --timeout 20 -- sh -c 'for n in user pid mnt net ipc uts cgroup; do echo "$n $(readlink /proc/self/ns/$n)"; done > /workspace/nsA.tmp
        mv /workspace/nsA.tmp /workspace/nsA; while [ ! -e /workspace/nsdone ]; do sleep 0.05; done' >/dev/null 2>&1
pa=$T_LAST_BG
check "first sandbox reported its namespaces" wait_until 10 test -s "$WORK/nsA"
inside=$(cat "$WORK/nsA" 2>/dev/null)
inside2=$(sandbox -- sh -c 'for n in user pid mnt net ipc uts cgroup; do echo "$n $(readlink /proc/self/ns/$n)"; done')
touch "$WORK/nsdone"
wait $pa
for n in user pid mnt net ipc uts cgroup; do
        a=$(printf '%s\n' "$inside" | awk -v n=$n '$1 == n { print $2 }')
        b=$(printf '%s\n' "$inside2" | awk -v n=$n '$1 == n { print $2 }')
        if [ -n "$a" ] && [ "$a" != "$b" ]; then pass; else fail "two sandboxes share the $n namespace ($a)"; fi
done

# user: one id mapped, and it is not host root
out=$(sandbox -- sh -c 'id -u; cat /proc/self/uid_map /proc/self/gid_map')
expect_eq "uid inside" 1000 "$(printf '%s\n' "$out" | head -n 1)"
maps=$(printf '%s\n' "$out" | tail -n +2 | awk '{ print $1, ($2 == 0 ? "host-root" : "host-user"), $3 }' | tr '\n' ';')
expect_eq "one id mapped, not host root" "1000 host-user 1;1000 host-user 1;" "$maps"

# cgroup: the namespace hides where the execution sits on the host
out=$(sandbox -- cat /proc/self/cgroup)
expect_no_match "cgroup paths inside are the namespace root" ":/.+" "$out"

# ipc: a SysV segment and a POSIX shm file made on the host are invisible
if shmid=$(ipcmk -M 4096 -p 600 2>/dev/null | awk '{ print $NF }') && [ -n "$shmid" ]; then
        at_exit "ipcrm -m $shmid"
        if grep -qw -- "$shmid" /proc/sysvipc/shm; then pass; else fail "host shm segment $shmid not listed on host"; fi
        out=$(sandbox -- sh -c 'cat /proc/sysvipc/shm; ipcs -m')
        expect_no_match "host shm segment not visible inside" "(^|[[:space:]])$shmid([[:space:]]|$)" "$(printf '%s\n' "$out" | tail -n +2)"
        expect_eq "no shm segments inside" 0 "$(sandbox -- sh -c 'tail -n +2 /proc/sysvipc/shm | wc -l')"
else
        fail "ipcmk could not create a host segment"
fi
shm=/dev/shm/proctor-it-$$-$RANDOM
if echo host > "$shm" 2>/dev/null; then
        at_exit "rm -f $shm"
        out=$(sandbox -- sh -c "cat $shm 2>/dev/null; ls /dev/shm/")
        expect_no_match "host /dev/shm file not visible" "^host$|proctor-it-$$" "$out"
fi

# the init reaps orphans: a child reparented to pid 1 exits and leaves no zombie
# (awk compares fields, so the command lines holding this text never match)
# (polled both ways: on a loaded machine a fixed wait can see the orphan
# not yet started or already gone)
out=$(sandbox -- sh -c '(sleep 2 &)
orphan() { ps -o ppid=,args= ax | awk "\$2 == \"sleep\" && \$3 == \"2\""; }
i=0; while [ $i -lt 100 ] && [ -z "$(orphan)" ]; do sleep 0.05; i=$((i+1)); done
orphan
while [ -n "$(orphan)" ]; do sleep 0.1; done
echo ---; ps -o stat=,args= ax')
expect_eq "orphan reparented to pid 1" "1 sleep 2" "$(printf '%s\n' "$out" | head -n 1 | awk '{ print $1, $2, $3 }')"
after=$(printf '%s\n' "$out" | sed -n '/^---$/,$p' | tail -n +2)
expect_match "ps ran after the orphan exited" "ps" "$after"
expect_no_match "no zombie left" "^ *Z" "$after"
expect_eq "orphan gone" "" "$(printf '%s\n' "$after" | awk '$2 == "sleep"')"
# many orphans at once
out=$(sandbox -- sh -c 'for i in 1 2 3 4 5 6 7 8; do (sleep 0.1 &); done; sleep 0.8; ps -o stat= ax')
expect_no_match "no zombies after eight orphans" "Z" "$out"
finish
