/* Unit test for exec/native/seccomp: every promise of the policy is checked by a
 * forked child that loads the real filter and makes the real call. Children
 * never call cmocka; they report through a pipe or their exit status. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <errno.h>
#include <jansson.h>
#include <fcntl.h>
#include <linux/btrfs.h>
#include <linux/falloc.h>
#include <linux/keyctl.h>
#include <pthread.h>
#include <sched.h>
#include <seccomp.h>
#include <signal.h>
#include <spawn.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/ptrace.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <unistd.h>

#include "exec/native/seccomp.h"

#ifndef CLONE_NEWTIME
#define CLONE_NEWTIME 0x80
#endif

#define ARRAY_LEN(a) (sizeof(a) / sizeof((a)[0]))

/* A path that exists nowhere, so unfiltered controls fail harmlessly. */
#define NOWHERE "/proctor-test-seccomp-nonexistent"

extern char **environ;

static struct seccomp_policy *policy;

/* One call to attempt: returns 0 on success or the errno it failed with. */
struct probe {
        const char *name;
        int (*attempt)(unsigned long arg);
        unsigned long arg;
        int expect; /* errno under the filter; 0: must succeed */
};

/* What a probe child reported before it exited, if anything. */
struct outcome {
        bool reported;
        int load_rc; /* seccomp_policy_load's result; 0 when unfiltered */
        int value;   /* the probe's result */
        int status;  /* wait status */
};

static int result_of(long rc)
{
        return rc < 0 ? errno : 0;
}

static struct outcome run_probe(int (*attempt)(unsigned long), unsigned long arg, bool filtered)
{
        struct outcome o = {0};
        int report[2], fds[2];
        pid_t pid;

        assert_int_equal(pipe2(fds, O_CLOEXEC), 0);
        pid = fork();
        assert_true(pid >= 0);
        if (pid == 0) {
                /* cmocka's fault handlers would run the rest of the suite
                 * in this child: a fault must end it. */
                signal(SIGSEGV, SIG_DFL);
                signal(SIGBUS, SIG_DFL);
                signal(SIGILL, SIG_DFL);
                close(fds[0]);
                report[0] = filtered ? seccomp_policy_load(policy) : 0;
                report[1] = report[0] == 0 ? attempt(arg) : 0;
                if (write(fds[1], report, sizeof(report)) != sizeof(report))
                        _exit(3);
                _exit(0);
        }
        close(fds[1]);
        if (read(fds[0], report, sizeof(report)) == sizeof(report)) {
                o.reported = true;
                o.load_rc = report[0];
                o.value = report[1];
        }
        close(fds[0]);
        assert_int_equal(waitpid(pid, &o.status, 0), pid);
        return o;
}

/* Runs argv (searched in PATH) under the filter with stdout captured into
 * out; returns the wait status. */
static int run_filtered_exec(char *const argv[], char *out, size_t outlen)
{
        int fds[2], status;
        size_t got = 0;
        ssize_t n;
        pid_t pid;

        assert_int_equal(pipe2(fds, O_CLOEXEC), 0);
        pid = fork();
        assert_true(pid >= 0);
        if (pid == 0) {
                if (dup2(fds[1], STDOUT_FILENO) < 0)
                        _exit(124);
                if (seccomp_policy_load(policy) < 0)
                        _exit(125);
                execvp(argv[0], argv);
                _exit(127);
        }
        close(fds[1]);
        while (got + 1 < outlen && (n = read(fds[0], out + got, outlen - got - 1)) > 0)
                got += (size_t)n;
        out[got] = '\0';
        close(fds[0]);
        assert_int_equal(waitpid(pid, &status, 0), pid);
        return status;
}

/* A clone that creates a real child when allowed; the child leaves at once. */
static int attempt_clone(unsigned long flags)
{
        long pid = syscall(SYS_clone, flags | SIGCHLD, 0L, 0L, 0L, 0L);

        if (pid == 0)
                _exit(0);
        if (pid > 0)
                waitpid((pid_t)pid, NULL, 0);
        return result_of(pid);
}

static int attempt_io_uring_setup(unsigned long arg)
{
        return result_of(syscall(SYS_io_uring_setup, 0L, NULL));
}

static int attempt_io_uring_enter(unsigned long arg)
{
        return result_of(syscall(SYS_io_uring_enter, -1, 0L, 0L, 0L, NULL, 0L));
}

static int attempt_io_uring_register(unsigned long arg)
{
        return result_of(syscall(SYS_io_uring_register, -1, 0L, NULL, 0L));
}

static int attempt_userfaultfd(unsigned long arg)
{
        return result_of(syscall(SYS_userfaultfd, (long)O_CLOEXEC));
}

static int attempt_bpf(unsigned long arg)
{
        return result_of(syscall(SYS_bpf, -1, NULL, 0L));
}

static int attempt_perf_event_open(unsigned long arg)
{
        return result_of(syscall(SYS_perf_event_open, NULL, 0L, -1, -1, 0L));
}

static int attempt_keyctl(unsigned long arg)
{
        return result_of(
            syscall(SYS_keyctl, (long)KEYCTL_GET_KEYRING_ID, (long)KEY_SPEC_SESSION_KEYRING, 0L));
}

static int attempt_add_key(unsigned long arg)
{
        return result_of(syscall(SYS_add_key, "user", NULL, NULL, 0L, 0L));
}

static int attempt_request_key(unsigned long arg)
{
        return result_of(syscall(SYS_request_key, "user", NULL, NULL, 0L));
}

static int attempt_mount(unsigned long arg)
{
        return result_of(syscall(SYS_mount, "none", NOWHERE, "tmpfs", 0L, NULL));
}

static int attempt_umount2(unsigned long arg)
{
        return result_of(syscall(SYS_umount2, NOWHERE, 0L));
}

static int attempt_pivot_root(unsigned long arg)
{
        return result_of(syscall(SYS_pivot_root, NOWHERE, NOWHERE));
}

static int attempt_fsopen(unsigned long arg)
{
        return result_of(syscall(SYS_fsopen, "proctor-no-such-fs", 0L));
}

static int attempt_fsconfig(unsigned long arg)
{
        return result_of(syscall(SYS_fsconfig, -1, 0L, NULL, NULL, 0L));
}

static int attempt_fsmount(unsigned long arg)
{
        return result_of(syscall(SYS_fsmount, -1, 0L, 0L));
}

static int attempt_fspick(unsigned long arg)
{
        return result_of(syscall(SYS_fspick, AT_FDCWD, NOWHERE, 0L));
}

static int attempt_open_tree(unsigned long arg)
{
        return result_of(syscall(SYS_open_tree, AT_FDCWD, NOWHERE, 0L));
}

static int attempt_move_mount(unsigned long arg)
{
        return result_of(syscall(SYS_move_mount, AT_FDCWD, NOWHERE, AT_FDCWD, NOWHERE, 0L));
}

static int attempt_mount_setattr(unsigned long arg)
{
        return result_of(syscall(SYS_mount_setattr, AT_FDCWD, NOWHERE, 0L, NULL, 0L));
}

static int attempt_unshare(unsigned long arg)
{
        return result_of(syscall(SYS_unshare, 0L));
}

static int attempt_setns(unsigned long arg)
{
        return result_of(syscall(SYS_setns, -1, 0L));
}

static int attempt_ptrace(unsigned long arg)
{
        return result_of(syscall(SYS_ptrace, (long)PTRACE_PEEKUSER, (long)getpid(), 0L, 0L));
}

static int attempt_process_vm_readv(unsigned long arg)
{
        return result_of(syscall(SYS_process_vm_readv, (long)getpid(), NULL, 0L, NULL, 0L, 0L));
}

static int attempt_process_vm_writev(unsigned long arg)
{
        return result_of(syscall(SYS_process_vm_writev, (long)getpid(), NULL, 0L, NULL, 0L, 0L));
}

/* The harmful calls below carry arguments that a kernel letting them through
 * rejects (bad magic, bad fd, missing path), so the unfiltered control runs
 * are safe even as root. */
static int attempt_kexec_load(unsigned long arg)
{
        return result_of(syscall(SYS_kexec_load, 0L, 0L, NULL, -1L));
}

static int attempt_kexec_file_load(unsigned long arg)
{
        return result_of(syscall(SYS_kexec_file_load, -1, -1, 0L, NULL, -1L));
}

static int attempt_init_module(unsigned long arg)
{
        return result_of(syscall(SYS_init_module, NULL, 0L, ""));
}

static int attempt_finit_module(unsigned long arg)
{
        return result_of(syscall(SYS_finit_module, -1, "", 0L));
}

static int attempt_delete_module(unsigned long arg)
{
        return result_of(syscall(SYS_delete_module, "proctor_no_such_module", 0L));
}

static int attempt_reboot(unsigned long arg)
{
        return result_of(syscall(SYS_reboot, 0L, 0L, 0L, NULL));
}

static int attempt_swapon(unsigned long arg)
{
        return result_of(syscall(SYS_swapon, NOWHERE, 0L));
}

static int attempt_swapoff(unsigned long arg)
{
        return result_of(syscall(SYS_swapoff, NOWHERE));
}

/* arg: the family, possibly with junk in the upper half the kernel drops. */
static int attempt_socket(unsigned long family)
{
        return result_of(syscall(SYS_socket, family, (long)SOCK_STREAM, 0L));
}

static int attempt_socket_seqpacket(unsigned long family)
{
        return result_of(syscall(SYS_socket, family, (long)SOCK_SEQPACKET, 0L));
}

static int attempt_socket_dgram(unsigned long family)
{
        return result_of(syscall(SYS_socket, family, (long)SOCK_DGRAM, 0L));
}

static int attempt_socketpair(unsigned long family)
{
        int sv[2];

        return result_of(syscall(SYS_socketpair, family, (long)SOCK_STREAM, 0L, sv));
}

/* arg: the request; on fd -1 an unfiltered kernel answers EBADF. */
static int attempt_ioctl_bad_fd(unsigned long request)
{
        char c = 'x';

        return result_of(syscall(SYS_ioctl, -1, request, &c));
}

static int attempt_clone3(unsigned long arg)
{
        return result_of(syscall(SYS_clone3, NULL, 0L));
}

static int attempt_getpid(unsigned long arg)
{
        long pid = syscall(SYS_getpid);

        return pid < 0 ? errno : pid > 0 ? 0 : EIO;
}

static int attempt_pipe_write(unsigned long arg)
{
        int fds[2];
        char buf[4] = {0};

        if (pipe(fds) < 0)
                return errno;
        if (write(fds[1], "abc", 3) != 3 || read(fds[0], buf, 3) != 3)
                return errno ? errno : EIO;
        return strcmp(buf, "abc") == 0 ? 0 : EIO;
}

static int attempt_open_read(unsigned long arg)
{
        char buf[64];
        int fd = open("/proc/self/stat", O_RDONLY | O_CLOEXEC);
        ssize_t n;

        if (fd < 0)
                return errno;
        n = read(fd, buf, sizeof(buf));
        close(fd);
        return n > 0 ? 0 : n < 0 ? errno : EIO;
}

static int wait_for_exit_code(pid_t pid, int code)
{
        int status;

        if (waitpid(pid, &status, 0) != pid)
                return errno;
        return WIFEXITED(status) && WEXITSTATUS(status) == code ? 0 : ECHILD;
}

static int attempt_fork_wait(unsigned long arg)
{
        pid_t pid = fork();

        if (pid == 0)
                _exit(7);
        if (pid < 0)
                return errno;
        return wait_for_exit_code(pid, 7);
}

/* posix_spawn tries clone3 first; it must fall back to clone on ENOSYS. */
static int attempt_posix_spawn(unsigned long arg)
{
        char *argv[] = {"/bin/true", NULL};
        pid_t pid;
        int rc = posix_spawn(&pid, argv[0], NULL, NULL, argv, environ);

        return rc ? rc : wait_for_exit_code(pid, 0);
}

static void *thread_main(void *arg)
{
        return arg;
}

static int attempt_thread(unsigned long arg)
{
        static int token;
        pthread_t t;
        void *ret = NULL;
        int rc = pthread_create(&t, NULL, thread_main, &token);

        if (rc)
                return rc;
        rc = pthread_join(t, &ret);
        return rc ? rc : ret == &token ? 0 : EIO;
}

/* arg: fallocate's mode, on a memfd (which has every mode). */
static int attempt_fallocate(unsigned long mode)
{
        int fd = memfd_create("probe", MFD_CLOEXEC), rc;

        if (fd < 0)
                return -1;
        rc = result_of(syscall(SYS_fallocate, fd, mode, 0L, 65536L));
        close(fd);
        return rc;
}

static int attempt_ioctl_fionread(unsigned long request)
{
        int fds[2], avail = -1;
        long rc;

        if (pipe(fds) < 0)
                return errno;
        if (write(fds[1], "xy", 2) != 2)
                return errno;
        rc = syscall(SYS_ioctl, fds[0], request, &avail);
        if (rc < 0)
                return errno;
        return avail == 2 ? 0 : EIO;
}

#define JUNK_HIGH 0xffffffff00000000UL

static const struct probe probes[] = {
    {"refuses io_uring_setup", attempt_io_uring_setup, 0, EPERM},
    {"refuses io_uring_enter", attempt_io_uring_enter, 0, EPERM},
    {"refuses io_uring_register", attempt_io_uring_register, 0, EPERM},
    {"refuses userfaultfd", attempt_userfaultfd, 0, EPERM},
    {"refuses bpf", attempt_bpf, 0, EPERM},
    {"refuses perf_event_open", attempt_perf_event_open, 0, EPERM},
    {"refuses keyctl", attempt_keyctl, 0, EPERM},
    {"refuses add_key", attempt_add_key, 0, EPERM},
    {"refuses request_key", attempt_request_key, 0, EPERM},
    {"refuses mount", attempt_mount, 0, EPERM},
    {"refuses umount2", attempt_umount2, 0, EPERM},
    {"refuses pivot_root", attempt_pivot_root, 0, EPERM},
    {"refuses fsopen", attempt_fsopen, 0, EPERM},
    {"refuses fsconfig", attempt_fsconfig, 0, EPERM},
    {"refuses fsmount", attempt_fsmount, 0, EPERM},
    {"refuses fspick", attempt_fspick, 0, EPERM},
    {"refuses open_tree", attempt_open_tree, 0, EPERM},
    {"refuses move_mount", attempt_move_mount, 0, EPERM},
    {"refuses mount_setattr", attempt_mount_setattr, 0, EPERM},
    {"refuses unshare", attempt_unshare, 0, EPERM},
    {"refuses setns", attempt_setns, 0, EPERM},
    {"refuses clone(CLONE_NEWUSER)", attempt_clone, CLONE_NEWUSER, EPERM},
    {"refuses clone(CLONE_NEWNS)", attempt_clone, CLONE_NEWNS, EPERM},
    {"refuses clone(CLONE_NEWPID)", attempt_clone, CLONE_NEWPID, EPERM},
    {"refuses clone(CLONE_NEWNET)", attempt_clone, CLONE_NEWNET, EPERM},
    {"refuses clone(CLONE_NEWIPC)", attempt_clone, CLONE_NEWIPC, EPERM},
    {"refuses clone(CLONE_NEWUTS)", attempt_clone, CLONE_NEWUTS, EPERM},
    {"refuses clone(CLONE_NEWCGROUP)", attempt_clone, CLONE_NEWCGROUP, EPERM},
    {"refuses clone(CLONE_NEWTIME)", attempt_clone, CLONE_NEWTIME, EPERM},
    {"answers clone3 with ENOSYS", attempt_clone3, 0, ENOSYS},
    {"refuses ptrace", attempt_ptrace, 0, EPERM},
    {"refuses process_vm_readv", attempt_process_vm_readv, 0, EPERM},
    {"refuses process_vm_writev", attempt_process_vm_writev, 0, EPERM},
    {"refuses kexec_load", attempt_kexec_load, 0, EPERM},
    {"refuses kexec_file_load", attempt_kexec_file_load, 0, EPERM},
    {"refuses init_module", attempt_init_module, 0, EPERM},
    {"refuses finit_module", attempt_finit_module, 0, EPERM},
    {"refuses delete_module", attempt_delete_module, 0, EPERM},
    {"refuses reboot", attempt_reboot, 0, EPERM},
    {"refuses swapon", attempt_swapon, 0, EPERM},
    {"refuses swapoff", attempt_swapoff, 0, EPERM},
    {"refuses socket(AF_ALG)", attempt_socket_seqpacket, AF_ALG, EPERM},
    {"refuses socket(AF_ALG) with junk high bits", attempt_socket_seqpacket, JUNK_HIGH | AF_ALG,
     EPERM},
    {"refuses socket(AF_VSOCK)", attempt_socket, AF_VSOCK, EPERM},
    {"refuses socket(AF_PACKET)", attempt_socket_dgram, AF_PACKET, EPERM},
    {"refuses socketpair(AF_ALG)", attempt_socketpair, AF_ALG, EPERM},
    {"refuses socketpair(AF_VSOCK)", attempt_socketpair, AF_VSOCK, EPERM},
    {"refuses ioctl(TIOCSTI)", attempt_ioctl_bad_fd, TIOCSTI, EPERM},
    {"refuses ioctl(TIOCSTI) with junk high bits", attempt_ioctl_bad_fd, JUNK_HIGH | TIOCSTI,
     EPERM},
    {"refuses ioctl(TIOCLINUX)", attempt_ioctl_bad_fd, TIOCLINUX, EPERM},
    {"refuses ioctl(TIOCLINUX) with junk high bits", attempt_ioctl_bad_fd, JUNK_HIGH | TIOCLINUX,
     EPERM},
    {"refuses ioctl(BTRFS_IOC_SUBVOL_CREATE)", attempt_ioctl_bad_fd, BTRFS_IOC_SUBVOL_CREATE,
     EPERM},
    {"refuses ioctl(BTRFS_IOC_SUBVOL_CREATE_V2)", attempt_ioctl_bad_fd, BTRFS_IOC_SUBVOL_CREATE_V2,
     EPERM},
    {"refuses ioctl(BTRFS_IOC_SNAP_CREATE)", attempt_ioctl_bad_fd, BTRFS_IOC_SNAP_CREATE, EPERM},
    {"refuses ioctl(BTRFS_IOC_SNAP_CREATE_V2)", attempt_ioctl_bad_fd, BTRFS_IOC_SNAP_CREATE_V2,
     EPERM},
    {"answers fallocate(KEEP_SIZE) not supported", attempt_fallocate, FALLOC_FL_KEEP_SIZE,
     EOPNOTSUPP},
    {"answers fallocate(PUNCH_HOLE|KEEP_SIZE) not supported", attempt_fallocate,
     FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, EOPNOTSUPP},
    {"answers fallocate(ZERO_RANGE) not supported", attempt_fallocate, FALLOC_FL_ZERO_RANGE,
     EOPNOTSUPP},
    {"answers fallocate(KEEP_SIZE) with junk high bits not supported", attempt_fallocate,
     JUNK_HIGH | FALLOC_FL_KEEP_SIZE, EOPNOTSUPP},
    {"refuses fallocate with an unknown mode bit", attempt_fallocate, 0x4000, EPERM},

    {"allows getpid", attempt_getpid, 0, 0},
    {"allows fallocate (plain allocation)", attempt_fallocate, 0, 0},
    {"allows fallocate (plain allocation) with junk high bits", attempt_fallocate, JUNK_HIGH, 0},
    {"allows pipe write and read", attempt_pipe_write, 0, 0},
    {"allows open and read of a file", attempt_open_read, 0, 0},
    {"allows fork and waitpid", attempt_fork_wait, 0, 0},
    {"allows clone without namespace flags", attempt_clone, 0, 0},
    {"allows posix_spawn (clone3 falls back)", attempt_posix_spawn, 0, 0},
    {"allows pthread_create (clone3 falls back)", attempt_thread, 0, 0},
    {"allows socket(AF_UNIX)", attempt_socket, AF_UNIX, 0},
    {"allows socket(AF_UNIX) with junk high bits", attempt_socket, JUNK_HIGH | AF_UNIX, 0},
    {"allows socket(AF_INET)", attempt_socket, AF_INET, 0},
    {"allows socket(AF_INET6)", attempt_socket, AF_INET6, 0},
    {"allows socket(AF_NETLINK)", attempt_socket_dgram, AF_NETLINK, 0},
    {"allows socketpair(AF_UNIX)", attempt_socketpair, AF_UNIX, 0},
    {"allows ioctl(FIONREAD)", attempt_ioctl_fionread, FIONREAD, 0},
    {"allows ioctl(FIONREAD) with junk high bits", attempt_ioctl_fionread, JUNK_HIGH | FIONREAD, 0},
};

static void assert_reported(const struct probe *p, struct outcome o, const char *how)
{
        if (!o.reported)
                fail_msg("%s: %s child died without reporting (wait status %#x)", p->name, how,
                         o.status);
        if (o.load_rc != 0)
                fail_msg("%s: loading the policy failed: %s", p->name, strerror(-o.load_rc));
}

static void test_probe(void **state)
{
        const struct probe *p = *state;
        struct outcome o = run_probe(p->attempt, p->arg, true);

        assert_reported(p, o, "filtered");
        if (o.value != p->expect)
                fail_msg("%s: under the filter got %s (%d), want %s", p->name,
                         o.value ? strerror(o.value) : "success", o.value,
                         p->expect ? strerror(p->expect) : "success");
        if (p->expect == 0)
                return;
        /* The control: a call that fails the same way without the filter
         * proves nothing about the filter here, so say so. */
        o = run_probe(p->attempt, p->arg, false);
        assert_reported(p, o, "unfiltered");
        if (o.value == p->expect)
                print_message("note: %s: fails with %s even without the filter here; "
                              "this probe is inconclusive on this machine\n",
                              p->name, strerror(o.value));
}

#if defined(__x86_64__)
/* getpid through the i386 entry point (int $0x80, syscall 20). */
static int attempt_i386_getpid(unsigned long arg)
{
        long ret;

        __asm__ volatile("int $0x80" : "=a"(ret) : "0"(20L) : "r8", "r9", "r10", "r11", "memory");
        return ret == getpid() ? 0 : ret < 0 ? (int)-ret : EIO;
}

/* getpid through the x32 ABI: the x86_64 number with bit 30 set. */
static int attempt_x32_getpid(unsigned long arg)
{
        long ret = syscall(0x40000000L | SYS_getpid);

        return ret == getpid() ? 0 : ret < 0 ? errno : EIO;
}

/* The policy kills a process that speaks a foreign ABI: the child must die
 * by SIGSYS without reporting back. */
static void assert_foreign_abi_killed(int (*attempt)(unsigned long), const char *abi)
{
        struct outcome o = run_probe(attempt, 0, true);

        if (o.reported)
                fail_msg("%s getpid under the filter returned %s; want SIGSYS", abi,
                         o.value ? strerror(o.value) : "success");
        assert_true(WIFSIGNALED(o.status));
        assert_int_equal(WTERMSIG(o.status), SIGSYS);
}

static void test_refuses_i386(void **state)
{
        struct outcome control = run_probe(attempt_i386_getpid, 0, false);

        /* Without ia32 emulation int $0x80 faults (SIGSEGV) before the
         * filter can see it: nothing to test on this kernel. */
        if (!control.reported || control.value != 0) {
                print_message("skip: this kernel has no i386 emulation (int $0x80 faults "
                              "even unfiltered)\n");
                skip();
        }
        assert_foreign_abi_killed(attempt_i386_getpid, "i386");
}

static void test_refuses_x32(void **state)
{
        assert_foreign_abi_killed(attempt_x32_getpid, "x32");
}
#endif

static void assert_exec_ok(char *const argv[], const char *want_prefix)
{
        char out[4096];
        int status = run_filtered_exec(argv, out, sizeof(out));

        if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
                fail_msg("'%s %s' under the filter: wait status %#x, output: %s", argv[0],
                         argv[1] ? argv[1] : "", status, out);
        if (strncmp(out, want_prefix, strlen(want_prefix)) != 0)
                fail_msg("'%s' under the filter printed '%s', want '%s...'", argv[0], out,
                         want_prefix);
}

static void test_execve_true(void **state)
{
        char *argv[] = {"/bin/true", NULL};

        assert_exec_ok(argv, "");
}

static void test_execve_false_fails(void **state)
{
        char *argv[] = {"/bin/false", NULL};
        char out[16];
        int status = run_filtered_exec(argv, out, sizeof(out));

        /* Exit codes pass through: 1 from false, not 125 (load) or 127. */
        assert_true(WIFEXITED(status));
        assert_int_equal(WEXITSTATUS(status), 1);
}

static void test_sh_python(void **state)
{
        char *argv[] = {"sh", "-c", "python3 -c 'print(1)'", NULL};

        assert_exec_ok(argv, "1\n");
}

static void test_git_version(void **state)
{
        char *argv[] = {"git", "--version", NULL};

        assert_exec_ok(argv, "git version ");
}

/* Each script cleans up after itself and ends with a word only reached when
 * every step before it worked. */
static void test_coreutils(void **state)
{
        char *argv[] = {"bash", "-c",
                        "set -e; d=$(mktemp -d); trap 'rm -rf \"$d\"' EXIT; cd \"$d\"\n"
                        "echo hi > a; cp -a a b; ls -l > /dev/null; sort b | tee c > /dev/null\n"
                        "mv c e; ln -s e l; test \"$(readlink l)\" = e; chmod 600 a\n"
                        "touch -d yesterday a; tar czf z.tgz a b; tar xzf z.tgz; mkfifo f\n"
                        "timeout 5 sleep 0.01; nproc > /dev/null; seq 3 | xargs echo > /dev/null\n"
                        "echo $(( 20 + 22 )) | cat",
                        NULL};

        assert_exec_ok(argv, "42\n");
}

static void test_cc_and_make(void **state)
{
        char *argv[] = {"sh", "-c",
                        "set -e; d=$(mktemp -d); trap 'rm -rf \"$d\"' EXIT; cd \"$d\"\n"
                        "printf 'int main(void){return 3;}\\n' > t.c\n"
                        "printf 'all: t\\nt: t.c\\n\\tcc -O2 -o t t.c\\n' > Makefile\n"
                        "make -s; set +e; ./t; test $? -eq 3 && echo built",
                        NULL};

        assert_exec_ok(argv, "built\n");
}

static void test_git_commit(void **state)
{
        char *argv[] = {"sh", "-c",
                        "set -e; d=$(mktemp -d); trap 'rm -rf \"$d\"' EXIT; cd \"$d\"\n"
                        "git init -q; echo x > f; git add f\n"
                        "git -c user.name=t -c user.email=t@t commit -qm first\n"
                        "git log --format=%s",
                        NULL};

        assert_exec_ok(argv, "first\n");
}

/* Counted here independently of the module: every syscall name libseccomp
 * knows for the native arch is either allowed or blocked. */
static void test_counts(void **state)
{
        struct seccomp_abi_count abis[SECCOMP_MAX_ABIS + 1];
        size_t n = seccomp_policy_abi_counts(policy, abis, ARRAY_LEN(abis));
        unsigned allowed, blocked, sum_allowed = 0, sum_blocked = 0, known = 0;

        for (int nr = 0; nr < 1024; nr++) {
                char *name = seccomp_syscall_resolve_num_arch(seccomp_arch_native(), nr);

                known += name != NULL;
                free(name);
        }
        assert_true(n >= 1 && n <= SECCOMP_MAX_ABIS);
        assert_int_equal(abis[0].allowed + abis[0].blocked, known);
        assert_true(abis[0].allowed > 50);
        assert_true(abis[0].blocked > 50);
        for (size_t i = 0; i < n; i++) {
                print_message("%s: %u allowed, %u blocked\n", abis[i].abi, abis[i].allowed,
                              abis[i].blocked);
                if (i > 0)
                        assert_int_equal(abis[i].allowed, 0);
                sum_allowed += abis[i].allowed;
                sum_blocked += abis[i].blocked;
        }
#if defined(__x86_64__)
        assert_int_equal(n, 3);
        assert_string_equal(abis[0].abi, "x86_64");
        assert_string_equal(abis[1].abi, "i386");
        assert_string_equal(abis[2].abi, "x32");
#endif
        seccomp_policy_counts(policy, &allowed, &blocked);
        assert_int_equal(allowed, sum_allowed);
        assert_int_equal(blocked, sum_blocked);
        assert_true(blocked >= 300);
        assert_true(allowed > 50);
        assert_int_equal(seccomp_policy_abi_counts(policy, abis, 1), 1);
}

/* The sandbox loads the policy compiled at build time: it must be exactly
 * what libseccomp compiles from the source now, counts included. */
/* The profile for container engines: what runc or crun load. Each call the
 * filter narrows by its arguments appears only with those conditions (an
 * unconditional rule beside them would void them), and nothing outside the
 * allowlist is there. The engine itself is attacked in t_docker.sh. */
static const json_t *profile_rules_for(const json_t *rules, const char *name, size_t *n)
{
        const json_t *found = NULL, *r, *nm;
        size_t i, j;

        *n = 0;
        json_array_foreach (rules, i, r)
                json_array_foreach (json_object_get(r, "names"), j, nm) {
                        if (strcmp(json_string_value(nm), name) == 0) {
                                found = found != NULL ? found : r;
                                (*n)++;
                        }
                }
        return found;
}

static void test_profile_json(void **state)
{
        char *s = seccomp_policy_profile_json();
        json_t *p = s != NULL ? json_loads(s, 0, NULL) : NULL, *rules, *a;
        const json_t *r;
        size_t n;

        assert_non_null(p);
        assert_string_equal(json_string_value(json_object_get(p, "defaultAction")),
                            "SCMP_ACT_ERRNO");
        assert_int_equal(json_integer_value(json_object_get(p, "defaultErrnoRet")), EPERM);
        rules = json_object_get(p, "syscalls");
        r = profile_rules_for(rules, "read", &n);
        assert_int_equal(n, 1);
        assert_null(json_object_get(r, "args"));
        assert_string_equal(json_string_value(json_object_get(r, "action")), "SCMP_ACT_ALLOW");
        for (const char *const *no =
                 (const char *const[]){"ptrace", "unshare", "setns", "mount", "bpf", "keyctl",
                                       "perf_event_open", "process_vm_readv", NULL};
             *no != NULL; no++) {
                profile_rules_for(rules, *no, &n);
                assert_int_equal(n, 0);
        }
        /* chmod: only without setuid/setgid bits */
        r = profile_rules_for(rules, "chmod", &n);
        assert_int_equal(n, 1);
        a = json_array_get(json_object_get(r, "args"), 0);
        assert_string_equal(json_string_value(json_object_get(a, "op")), "SCMP_CMP_MASKED_EQ");
        assert_int_equal(json_integer_value(json_object_get(a, "index")), 1);
        assert_int_equal(json_integer_value(json_object_get(a, "value")), S_ISUID | S_ISGID);
        assert_int_equal(json_integer_value(json_object_get(a, "valueTwo")), 0);
        /* openat: safe mode, or flags that create nothing */
        profile_rules_for(rules, "openat", &n);
        assert_int_equal(n, 2);
        /* clone: no namespace flag */
        r = profile_rules_for(rules, "clone", &n);
        assert_int_equal(n, 1);
        a = json_array_get(json_object_get(r, "args"), 0);
        assert_true(json_integer_value(json_object_get(a, "value")) & CLONE_NEWUSER);
        assert_int_equal(json_integer_value(json_object_get(a, "valueTwo")), 0);
        /* socket: one rule per family, never AF_PACKET */
        profile_rules_for(rules, "socket", &n);
        assert_int_equal(n, 4);
        r = profile_rules_for(rules, "clone3", &n);
        assert_int_equal(json_integer_value(json_object_get(r, "errnoRet")), ENOSYS);
        json_decref(p);
        free(s);
}

static void test_builtin_matches(void **state)
{
        const struct seccomp_policy *b = seccomp_policy_builtin();
        unsigned a1, b1, a2, b2;

        assert_true(seccomp_policy_equal(policy, b));
        seccomp_policy_counts(policy, &a1, &b1);
        seccomp_policy_counts(b, &a2, &b2);
        assert_int_equal(a1, a2);
        assert_int_equal(b1, b2);
}

static int setup(void **state)
{
        char err[256] = "";
        int rc = seccomp_policy_build(&policy, err, sizeof(err));

        if (rc < 0)
                print_error("seccomp_policy_build: %d: %s\n", rc, err);
        return rc < 0 ? -1 : 0;
}

static int teardown(void **state)
{
        seccomp_policy_free(policy);
        policy = NULL;
        return 0;
}

static const struct CMUnitTest fixed_tests[] = {
#if defined(__x86_64__)
    cmocka_unit_test(test_refuses_i386),    cmocka_unit_test(test_refuses_x32),
#endif
    cmocka_unit_test(test_execve_true),     cmocka_unit_test(test_execve_false_fails),
    cmocka_unit_test(test_sh_python),       cmocka_unit_test(test_git_version),
    cmocka_unit_test(test_coreutils),       cmocka_unit_test(test_cc_and_make),
    cmocka_unit_test(test_git_commit),      cmocka_unit_test(test_counts),
    cmocka_unit_test(test_builtin_matches), cmocka_unit_test(test_profile_json),
};

int main(void)
{
        struct CMUnitTest tests[ARRAY_LEN(probes) + ARRAY_LEN(fixed_tests)];
        size_t n = 0;

        for (size_t i = 0; i < ARRAY_LEN(probes); i++)
                tests[n++] =
                    (struct CMUnitTest){probes[i].name, test_probe, NULL, NULL, (void *)&probes[i]};
        for (size_t i = 0; i < ARRAY_LEN(fixed_tests); i++)
                tests[n++] = fixed_tests[i];
        return cmocka_run_group_tests_name("seccomp", tests, setup, teardown);
}
