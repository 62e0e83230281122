#!/bin/bash
# Sandbox filesystem: a read-only tmpfs root with the host's /usr and /etc
# essentials read-only, fresh /tmp, /proc and a minimal /dev, nosuid and
# nodev mounts, no host secrets, the workspace in each of its modes, and
# never host uid 0 behind any of it.
# as-user: yes
. "$(dirname "$0")/lib.sh"

me=$(id -u)

# ---- the root and the host trees ----
out=$(sandbox -- sh -c 'stat -f -c %T /; touch /x 2>&1; mkdir /newdir 2>&1')
expect_match "root is a tmpfs" "^tmpfs" "$out"
expect_match "touch /x fails read-only" "cannot touch '/x': Read-only file system" "$out"
expect_match "mkdir /newdir fails read-only" "Read-only file system" "$(printf '%s\n' "$out" | tail -n 1)"
for d in /usr /usr/bin /usr/local /usr/local/bin /etc /bin /lib; do
        out=$(sandbox -- sh -c "touch $d/proctor-x 2>&1; echo rc=\$?")
        expect_match "$d is read-only" "Read-only file system.*rc=1" "$(printf '%s' "$out" | tr '\n' ' ')"
done
out=$(sandbox -- sh -c 'chmod 777 /usr/bin/env; rm -f /etc/passwd; echo x > /etc/hosts; true' 2>&1)
expect_eq "no change to /usr or /etc" 3 "$(printf '%s\n' "$out" | grep -c 'Read-only file system')"
expect_eq "/usr is the host's" "$(cat /etc/debian_version)" "$(sandbox -- cat /etc/debian_version)"

# ---- /tmp: writable, a tmpfs, sized by --tmpfs, fresh per sandbox ----
out=$(sandbox -- sh -c 'stat -f -c %T /tmp; echo data > /tmp/f && cat /tmp/f')
expect_eq "/tmp is a writable tmpfs" "tmpfs
data" "$out"
out=$(sandbox --tmpfs 1M -- sh -c 'stat -f -c "%b %S" /tmp; dd if=/dev/zero of=/tmp/fill bs=64k count=32 2>&1; echo "dd=$?"')
expect_eq "--tmpfs 1M sizes /tmp" 1048576 "$(printf '%s\n' "$out" | head -n 1 | awk '{ print $1 * $2 }')"
expect_match "2M into a 1M /tmp: No space left" "No space left on device" "$out"
expect_match "dd fails" "dd=1" "$out"
name=proctor-it-tmp-$$-$RANDOM
sandbox -- sh -c "echo secret > /tmp/$name"
out=$(sandbox -- sh -c "cat /tmp/$name 2>&1; ls /tmp")
expect_match "/tmp file gone in the next sandbox" "No such file" "$out"
expect_no_match "next sandbox's /tmp is empty" "$name" "$(printf '%s\n' "$out" | tail -n +2)"
check "/tmp file absent on the host" test ! -e "/tmp/$name"
check "/tmp file absent in the workspace" test ! -e "$WORK/$name"

# ---- /dev ----
out=$(sandbox -- sh -c 'for f in /dev/* /dev/.[!.]*; do [ -L "$f" ] && continue; [ -c "$f" ] && echo "$f"; [ -b "$f" ] && echo "block $f"; done; true')
expect_eq "/dev has exactly the five character devices" "/dev/full
/dev/null
/dev/random
/dev/urandom
/dev/zero" "$out"
out=$(sandbox -- sh -c 'test -e /dev/tty && echo has-tty; test -e /dev/ptmx && echo has-ptmx; test -e /dev/console && echo has-console; tty; echo "tty=$?"')
expect_eq "no tty" "not a tty
tty=1" "$out"
out=$(sandbox -- sh -c 'echo x > /dev/null && echo null-ok; head -c 4 /dev/zero | od -An -tx1; head -c 16 /dev/urandom | wc -c; head -c 16 /dev/random | wc -c; dd if=/dev/zero of=/dev/full bs=1 count=1 status=none 2>&1; echo "full=$?"')
expect_eq "the devices work" "null-ok
 00 00 00 00
16
16
full=1" "$(printf '%s\n' "$out" | grep -v -e 'No space' -e records)"
expect_match "/dev/full is full" "No space left on device" "$out"

# ---- /proc ----
out=$(sandbox -- sh -c 'stat -f -c %T /proc; tr "\0" " " < /proc/1/cmdline; echo; grep -c . /proc/mounts')
expect_eq "/proc is a proc mount" proc "$(printf '%s\n' "$out" | head -n 1)"
# the init carries a neutral name, not the operator's command line
expect_match "/proc/1 is the sandbox's init" "^proctor-init *$" "$(printf '%s\n' "$out" | sed -n 2p)"

# ---- mount flags: nosuid everywhere, nodev everywhere but the device nodes ----
mi=$(sandbox -- cat /proc/self/mountinfo)
expect_match "mountinfo read" "/workspace" "$mi"
bad_suid=$(printf '%s\n' "$mi" | awk '$6 !~ /(^|,)nosuid(,|$)/ { print $5 }' | tr '\n' ' ')
expect_eq "every mount is nosuid" "" "$bad_suid"
bad_dev=$(printf '%s\n' "$mi" | awk '$6 !~ /(^|,)nodev(,|$)/ && $5 !~ /^\/dev\/(null|zero|full|random|urandom)$/ { print $5 }' | tr '\n' ' ')
expect_eq "every mount but the device nodes is nodev" "" "$bad_dev"
expect_match "/ is mounted read-only" "^ro," "$(printf '%s\n' "$mi" | awk '$5 == "/" { print $6 }')"

# ---- host secrets stay out ----
out=$(sandbox -- sh -c 'ls /root 2>&1; ls /home 2>&1; cat /etc/shadow 2>&1; cat /etc/gshadow 2>&1; ls /etc/sudoers /etc/ssh 2>&1; ls /var 2>&1; true')
expect_eq "no /root, /home, shadow, sudoers, ssh, /var" 7 "$(printf '%s\n' "$out" | grep -c 'No such file or directory')"
out=$(sandbox -- cat /etc/passwd /etc/group)
expect_eq "no host users or groups in /etc/passwd and /etc/group" "root sandbox nobody root sandbox nogroup" \
        "$(printf '%s\n' "$out" | cut -d: -f1 | tr '\n' ' ' | sed 's/ $//')"
if [ -n "${HOME:-}" ] && [ -d "$HOME" ]; then
        out=$(sandbox -- sh -c "ls '$HOME' 2>&1; true")
        expect_match "operator's home $HOME not visible" "No such file or directory" "$out"
fi
# links in the workspace resolve inside the sandbox, never to host files
ln -s /etc/shadow "$WORK/abs-link"
ln -s ../../../../../../etc/shadow "$WORK/rel-link"
out=$(sandbox -- sh -c 'cat /workspace/abs-link 2>&1; cat /workspace/rel-link 2>&1; ls /workspace/.. | tr "\n" " "')
expect_eq "symlinks to host secrets dangle" 2 "$(printf '%s\n' "$out" | grep -c 'No such file or directory')"
expect_no_match "workspace parent is the sandbox root" "proctor-it" "$out"
rm -f "$WORK/abs-link" "$WORK/rel-link"

# ---- tools run unmodified ----
out=$(sandbox -- bash -c 'echo "bash $BASH_VERSINFO"')
expect_match "bash runs" "^bash [0-9]+$" "$out"
expect_eq "python3 runs" 42 "$(sandbox -- python3 -c 'import json, hashlib, subprocess; print(6 * 7)')"
expect_eq "coreutils run" "3 b" "$(sandbox -- sh -c 'printf "c\nb\na\n" | sort | wc -l | tr -d " "; printf "c\nb\n" | sort | head -n 1' | tr '\n' ' ' | sed 's/ $//')"
out=$(sandbox -- sh -c 'git -c init.defaultBranch=main init -q repo && cd repo && echo x > f && git add f &&
        git -c user.name=Tester -c user.email=t@example.com commit -q -m first && git log --format=%an:%s')
expect_eq "git init and commit in the workspace" "Tester:first" "$out"
check "the commit reached the host" test -d "$WORK/repo/.git/objects"
expect_eq "host git reads it" "first" "$(git -c safe.directory='*' -C "$WORK/repo" log --format=%s 2>&1)"
printf '#include <stdio.h>\nint main(void) { puts("hello from c"); return 0; }\n' > "$WORK/hello.c"
out=$(sandbox -- sh -c 'gcc -O1 -o /tmp/hello hello.c && /tmp/hello && gcc -o hello hello.c && ./hello')
expect_eq "gcc compiles and runs in /tmp and /workspace" "hello from c
hello from c" "$out"
printf 'all: out.txt\n\t@cat out.txt\nout.txt:\n\t@echo made > out.txt\n' > "$WORK/Makefile"
expect_eq "make runs" "made" "$(sandbox -- make -s)"

# ---- the rw workspace: writes reach the host, owned by its owner ----
owner=$(stat -c %u "$WORK")
sandbox -- sh -c 'echo one > /workspace/new && mkdir -p /workspace/d/e && echo two > /workspace/d/e/f'
expect_eq "write reached the host" one "$(cat "$WORK/new" 2>&1)"
expect_eq "files owned by the workspace owner" "$owner $owner $owner" \
        "$(stat -c %u "$WORK/new" "$WORK/d" "$WORK/d/e/f" | tr '\n' ' ' | sed 's/ $//')"
expect_eq "host file seen as the sandbox user's" "1000 1000" "$(sandbox -- stat -c '%u %g' /workspace/new)"
echo host > "$WORK/hostmade"
give_away "$WORK/hostmade"
sandbox -- sh -c 'echo inside >> /workspace/hostmade'
expect_eq "host file writable from inside" "host
inside" "$(cat "$WORK/hostmade")"

if is_root && id proctor-test >/dev/null 2>&1; then
        tu=$(id -u proctor-test)
        ws=$WORK/owned
        mkdir "$ws"
        chown proctor-test:proctor-test "$ws"
        "$PROCTOR" exec --mode sandbox --workspace "$ws" -- sh -c 'echo x > /workspace/f; mkdir /workspace/g'
        expect_eq "user-owned workspace: files owned by that user" "$tu $tu" \
                "$(stat -c %u "$ws/f" "$ws/g" | tr '\n' ' ' | sed 's/ $//')"
fi

# the sandboxed processes are never host uid 0
mark=7.$$$RANDOM
sandbox_bg -- sleep "$mark" >/dev/null 2>&1
px=$T_LAST_BG
track_marker "sleep $mark"
found=""
get_sleep() { found=$(pgrep -x -f "sleep $mark" | head -n 1); [ -n "$found" ]; }
if wait_until 5 get_sleep; then
        expect_match "sandboxed command's host uids are not 0" "^Uid:([[:space:]]+[1-9][0-9]*){4}$" "$(grep '^Uid:' /proc/$found/status)"
        expect_match "sandboxed command's host gids are not 0" "^Gid:([[:space:]]+[1-9][0-9]*){4}$" "$(grep '^Gid:' /proc/$found/status)"
        init=$(awk '/^PPid:/ { print $2 }' /proc/$found/status)
        if [ -n "$init" ] && [ "$init" != "$px" ]; then
                expect_match "the sandbox's init is not host uid 0" "^Uid:([[:space:]]+[1-9][0-9]*){4}$" "$(grep '^Uid:' /proc/$init/status)"
        fi
        is_root || expect_eq "an unprivileged operator's sandbox runs as them" "$me" "$(awk '/^Uid:/ { print $2 }' /proc/$found/status)"
else
        fail "sandboxed sleep not found on the host"
fi
kill -TERM $px 2>/dev/null
wait $px 2>/dev/null

# ---- --workspace-mode ro ----
echo orig > "$WORK/ro-file"
out=$(sandbox --workspace-mode ro -- sh -c 'cat /workspace/ro-file; echo x > /workspace/ro-file; touch /workspace/ro-new; echo "rc=$?"' 2>&1)
expect_match "ro: reads work" "^orig" "$out"
expect_eq "ro: writes fail read-only" 2 "$(printf '%s\n' "$out" | grep -c 'Read-only file system')"
expect_match "ro: touch fails" "rc=1" "$out"
expect_eq "ro: host file untouched" orig "$(cat "$WORK/ro-file")"
check "ro: nothing created" test ! -e "$WORK/ro-new"

# ---- --workspace-mode overlay ----
mkdir "$WORK/ov"
echo keep > "$WORK/ov/keep"
echo doomed > "$WORK/ov/doomed"
give_away "$WORK/ov"
before=$(cd "$WORK" && find . -printf '%p %s %m %u %T@\n' | sort)
out=$(sandbox --workspace-mode overlay -- sh -c 'echo new > /workspace/ov/new && cat /workspace/ov/new;
        echo changed > /workspace/ov/keep && cat /workspace/ov/keep; rm /workspace/ov/doomed && echo removed;
        mkdir /workspace/ov/dir && echo dir-made; ls -a / | tr "\n" " "')
expect_eq "overlay: writes succeed inside" "new
changed
removed
dir-made" "$(printf '%s\n' "$out" | head -n 4)"
expect_no_match "overlay: no layer directories visible in /" "\.ovl" "$out"
after=$(cd "$WORK" && find . -printf '%p %s %m %u %T@\n' | sort)
expect_eq "overlay: no trace on the host" "$before" "$after"
expect_eq "overlay: next overlay sandbox starts clean" "keep doomed" \
        "$(sandbox --workspace-mode overlay -- sh -c 'cat ov/keep ov/doomed; ls ov/new 2>/dev/null' | tr '\n' ' ' | sed 's/ $//')"

# ---- --workspace-mode none ----
out=$(sandbox --workspace-mode none -- sh -c 'pwd; test -e /workspace && echo has-workspace; ls /tmp | wc -l; true')
expect_eq "none: no /workspace, runs in /tmp" "/tmp
0" "$out"
finish
