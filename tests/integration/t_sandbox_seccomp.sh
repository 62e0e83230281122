#!/bin/bash
# Seccomp: every escape attempt of attacks/escape.c is refused inside the
# sandbox (clone3 with ENOSYS so that libc falls back to clone), non-native
# ABIs included; the command runs with the filter, no_new_privs and no
# capabilities.
# as-user: yes
. "$(dirname "$0")/lib.sh"

expected="io_uring_setup userfaultfd bpf perf_event_open keyctl add_key request_key mount umount2
pivot_root fsopen open_tree move_mount unshare_user unshare_mnt setns clone_newuser clone_newns clone3
clone3_newuser ptrace_traceme process_vm_readv kexec_load init_module finit_module delete_module reboot
swapon socket_alg socket_alg_hi32 socket_vsock socket_packet ioctl_tiocsti ioctl_tiocsti_hi32
ioctl_tioclinux open_by_handle_at chroot sethostname i386_getpid i386_unshare x32_getpid x32_unshare"
n_expected=$(echo $expected | wc -w)

check "escape.c compiles" compile_attack escape

# premise: the probe tells an allowed call from a refused one (local mode
# runs it on the host, unfiltered, with only calls that work for anyone)
out=$(local_exec -- ./escape ptrace_traceme process_vm_readv open_tree mount)
expect_eq "premise: unfiltered calls are reported ALLOWED" "mount ALLOWED
open_tree ALLOWED
ptrace_traceme ALLOWED
process_vm_readv ALLOWED
attempts 4" "$(printf '%s\n' "$out" | awk '{ print $1, $2 }')"

out=$(sandbox --timeout 30 -- ./escape); rc=$?
expect_eq "escape ran to the end in the sandbox" 0 $rc
expect_eq "every attempt reported" "attempts $n_expected" "$(printf '%s\n' "$out" | tail -n 1)"
for name in $expected; do
        line=$(printf '%s\n' "$out" | awk -v n=$name '$1 == n')
        expect_match "$name is blocked" "^$name blocked " "$line"
done
expect_eq "nothing ALLOWED" "" "$(printf '%s\n' "$out" | grep ALLOWED)"
expect_eq "clone3 says ENOSYS (libc falls back to clone)" "clone3 blocked ENOSYS" \
        "$(printf '%s\n' "$out" | awk '$1 == "clone3"')"
expect_match "i386 int 0x80 is refused" "^i386_getpid blocked (SIGSYS|ENOSYS|SIGSEGV)$" \
        "$(printf '%s\n' "$out" | awk '$1 == "i386_getpid"')"
# the parts of libc that need clone still work under the filter
out=$(sandbox -- python3 -c 'import subprocess, threading
t = threading.Thread(target=lambda: None); t.start(); t.join()
print(subprocess.run(["echo", "forked"], capture_output=True, text=True).stdout.strip())')
expect_eq "threads and subprocesses work" forked "$out"

# the filter, no_new_privs and no capabilities are in force for the command
out=$(sandbox -- cat /proc/self/status)
expect_match "Seccomp: 2 (filter)" "^Seccomp:[[:space:]]+2$" "$out"
expect_match "NoNewPrivs: 1" "^NoNewPrivs:[[:space:]]+1$" "$out"
for c in CapEff CapPrm CapInh CapAmb; do
        expect_match "$c is 0" "^$c:[[:space:]]+0+$" "$out"
done
# a setuid-root binary gains nothing (no_new_privs, nosuid, user namespace)
out=$(sandbox -- sh -c 'ls -l /usr/bin/su /usr/bin/passwd 2>/dev/null | head -n 1; su -c id root </dev/null 2>&1; id -u')
expect_eq "su does not make root" 1000 "$(printf '%s\n' "$out" | tail -n 1)"
expect_no_match "su never ran as uid 0" "uid=0" "$out"
finish
