/* escape: tries, one at a time, each system call the sandbox's seccomp
 * policy promises to refuse, and prints one line per attempt:
 *
 *     NAME blocked|ALLOWED DETAIL
 *
 * "blocked": the call failed with EPERM, EACCES or ENOSYS, or the attempt
 * was killed by a signal (SIGSYS from a seccomp kill). "ALLOWED": the call
 * succeeded, or failed with any other errno, which means it got past the
 * filter into the kernel's own argument checks. The last line is
 * "attempts N".
 *
 * Every attempt runs in a forked child, so a kill or a side effect stays
 * there, and every attempt is harmless even where it is allowed (on the
 * host, as root): it acts on the process itself, or its arguments make the
 * kernel refuse it after the permission checks (bogus magic, missing paths).
 *
 * usage: escape [NAME...]   (no names: every attempt)
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/perf_event.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/ptrace.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <unistd.h>

#ifndef AF_ALG
#define AF_ALG 38
#endif
#ifndef AF_VSOCK
#define AF_VSOCK 40
#endif
#ifndef CLONE_NEWCGROUP
#define CLONE_NEWCGROUP 0x02000000
#endif
#ifndef TIOCLINUX
#define TIOCLINUX 0x541C
#endif

/* Numbers that older headers may lack (x86_64). */
#ifndef SYS_io_uring_setup
#define SYS_io_uring_setup 425
#endif
#ifndef SYS_open_tree
#define SYS_open_tree 428
#endif
#ifndef SYS_move_mount
#define SYS_move_mount 429
#endif
#ifndef SYS_fsopen
#define SYS_fsopen 430
#endif
#ifndef SYS_clone3
#define SYS_clone3 435
#endif

#define KEY_SPEC_SESSION_KEYRING (-3)
#define KEY_SPEC_PROCESS_KEYRING (-2)
#define KEYCTL_GET_KEYRING_ID 0
#define BPF_MAP_CREATE_CMD 0
#define BPF_MAP_TYPE_ARRAY_ID 2
#define X32_SYSCALL_BIT 0x40000000L
#define NOWHERE "/proctor-escape-no-such-path"

struct clone_args_min {
        uint64_t flags, pidfd, child_tid, parent_tid, exit_signal, stack, stack_size, tls;
};

/* A raw fork-like call that created a child: the child leaves at once. */
static long child_gone(long r)
{
        if (r == 0)
                _exit(0);
        if (r > 0)
                waitpid((pid_t)r, NULL, __WALL);
        return r;
}

static long a_io_uring_setup(void)
{
        unsigned char params[120];

        memset(params, 0, sizeof(params));
        return syscall(SYS_io_uring_setup, 2, params);
}

static long a_userfaultfd(void)
{
        return syscall(SYS_userfaultfd, O_CLOEXEC | 1 /* UFFD_USER_MODE_ONLY */);
}

static long a_bpf(void)
{
        uint32_t attr[32];

        memset(attr, 0, sizeof(attr));
        attr[0] = BPF_MAP_TYPE_ARRAY_ID; /* map_type */
        attr[1] = 4;                     /* key_size */
        attr[2] = 4;                     /* value_size */
        attr[3] = 1;                     /* max_entries */
        return syscall(SYS_bpf, BPF_MAP_CREATE_CMD, attr, sizeof(attr));
}

static long a_perf_event_open(void)
{
        struct perf_event_attr pe;

        memset(&pe, 0, sizeof(pe));
        pe.size = sizeof(pe);
        pe.type = PERF_TYPE_SOFTWARE;
        pe.config = PERF_COUNT_SW_CPU_CLOCK;
        pe.exclude_kernel = 1;
        pe.exclude_hv = 1;
        return syscall(SYS_perf_event_open, &pe, 0, -1, -1, 0);
}

static long a_keyctl(void)
{
        return syscall(SYS_keyctl, KEYCTL_GET_KEYRING_ID, KEY_SPEC_SESSION_KEYRING, 0);
}

static long a_add_key(void)
{
        return syscall(SYS_add_key, "user", "proctor-escape", "x", 1, KEY_SPEC_PROCESS_KEYRING);
}

static long a_request_key(void)
{
        return syscall(SYS_request_key, "user", "proctor-escape-none", NULL,
                       KEY_SPEC_PROCESS_KEYRING);
}

static long a_mount(void)
{
        return mount("none", NOWHERE, "tmpfs", 0, NULL);
}

static long a_umount2(void)
{
        return umount2(NOWHERE, 0);
}

static long a_pivot_root(void)
{
        return syscall(SYS_pivot_root, NOWHERE "-a", NOWHERE "-b");
}

static long a_fsopen(void)
{
        return syscall(SYS_fsopen, "proctor-escape-no-such-fs", 0);
}

static long a_open_tree(void)
{
        return syscall(SYS_open_tree, AT_FDCWD, NOWHERE, 0);
}

static long a_move_mount(void)
{
        return syscall(SYS_move_mount, AT_FDCWD, NOWHERE, AT_FDCWD, NOWHERE "-b", 0);
}

static long a_unshare_user(void)
{
        return unshare(CLONE_NEWUSER);
}

static long a_unshare_mnt(void)
{
        return unshare(CLONE_NEWNS);
}

static long a_setns(void)
{
        int fd = open("/proc/self/ns/net", O_RDONLY | O_CLOEXEC);

        if (fd < 0)
                return -1;
        return setns(fd, CLONE_NEWNET);
}

static long a_clone_newuser(void)
{
        return child_gone(syscall(SYS_clone, CLONE_NEWUSER | SIGCHLD, 0, 0, 0, 0));
}

static long a_clone_newns(void)
{
        return child_gone(syscall(SYS_clone, CLONE_NEWNS | SIGCHLD, 0, 0, 0, 0));
}

static long a_clone3(void)
{
        struct clone_args_min ca;

        memset(&ca, 0, sizeof(ca));
        ca.exit_signal = SIGCHLD;
        return child_gone(syscall(SYS_clone3, &ca, sizeof(ca)));
}

static long a_clone3_newuser(void)
{
        struct clone_args_min ca;

        memset(&ca, 0, sizeof(ca));
        ca.flags = CLONE_NEWUSER;
        ca.exit_signal = SIGCHLD;
        return child_gone(syscall(SYS_clone3, &ca, sizeof(ca)));
}

static long a_ptrace_traceme(void)
{
        return ptrace(PTRACE_TRACEME, 0, NULL, NULL);
}

static long a_process_vm_readv(void)
{
        static char src[16] = "proctor";
        char dst[16];
        struct iovec l = {dst, sizeof(dst)}, r = {src, sizeof(src)};

        return syscall(SYS_process_vm_readv, getpid(), &l, 1, &r, 1, 0);
}

static long a_kexec_load(void)
{
        /* Default arch, an undefined flag: EINVAL after the permission checks. */
        return syscall(SYS_kexec_load, 0, 0, NULL, 0x100UL);
}

static long a_init_module(void)
{
        static char image[64]; /* not an ELF file: ENOEXEC if ever looked at */

        return syscall(SYS_init_module, image, sizeof(image), "");
}

static long a_finit_module(void)
{
        return syscall(SYS_finit_module, -1, "", 0);
}

static long a_delete_module(void)
{
        return syscall(SYS_delete_module, "proctor_escape_no_such_module", O_NONBLOCK);
}

static long a_reboot(void)
{
        /* Right first magic, wrong second: EINVAL after the permission check. */
        return syscall(SYS_reboot, 0xfee1deadUL, 0UL, 0UL, NULL);
}

static long a_swapon(void)
{
        return syscall(SYS_swapon, NOWHERE, 0);
}

static long a_socket_alg(void)
{
        return socket(AF_ALG, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
}

static long a_socket_alg_hi32(void)
{
        /* The kernel reads an int: junk in the upper half must not help. */
        return syscall(SYS_socket, (1UL << 32) | AF_ALG, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
}

static long a_socket_vsock(void)
{
        return socket(AF_VSOCK, SOCK_STREAM | SOCK_CLOEXEC, 0);
}

static long a_socket_packet(void)
{
        return socket(AF_PACKET, SOCK_RAW | SOCK_CLOEXEC, 0);
}

static long a_tiocsti(void)
{
        char c = 'x';

        return ioctl(0, TIOCSTI, &c);
}

static long a_tiocsti_hi32(void)
{
        char c = 'x';

        return syscall(SYS_ioctl, 0, (1UL << 32) | TIOCSTI, &c);
}

static long a_tioclinux(void)
{
        char sub = 6; /* TIOCL_GETSHIFTSTATE */

        return ioctl(0, TIOCLINUX, &sub);
}

static long a_open_by_handle_at(void)
{
        struct {
                unsigned int handle_bytes;
                int handle_type;
                unsigned char f_handle[8];
        } h = {8, 1, {0}};

        return syscall(SYS_open_by_handle_at, AT_FDCWD, &h, O_RDONLY);
}

static long a_chroot(void)
{
        return chroot(NOWHERE);
}

static long a_sethostname(void)
{
        static char name[100]; /* longer than any hostname: EINVAL */

        memset(name, 'x', sizeof(name));
        return sethostname(name, sizeof(name));
}

#if defined(__x86_64__)
/* The i386 entry point from a 64-bit process: getpid is 20, unshare 310
 * there. A filter that only knows x86_64 numbers would misread these. */
static long int80(long nr, long a1)
{
        long r;

        __asm__ volatile("int $0x80"
                         : "=a"(r)
                         : "a"(nr), "b"(a1)
                         : "memory", "r8", "r9", "r10", "r11");
        if (r < 0 && r > -4096) {
                errno = (int)-r;
                return -1;
        }
        return r;
}

static long a_i386_getpid(void)
{
        return int80(20, 0);
}

static long a_i386_unshare(void)
{
        return int80(310, CLONE_NEWUSER);
}

static long a_x32_getpid(void)
{
        return syscall(X32_SYSCALL_BIT | SYS_getpid);
}

static long a_x32_unshare(void)
{
        return syscall(X32_SYSCALL_BIT | SYS_unshare, CLONE_NEWUSER);
}
#endif

static const struct attempt {
        const char *name;
        long (*fn)(void);
} attempts[] = {
        {"io_uring_setup", a_io_uring_setup},
        {"userfaultfd", a_userfaultfd},
        {"bpf", a_bpf},
        {"perf_event_open", a_perf_event_open},
        {"keyctl", a_keyctl},
        {"add_key", a_add_key},
        {"request_key", a_request_key},
        {"mount", a_mount},
        {"umount2", a_umount2},
        {"pivot_root", a_pivot_root},
        {"fsopen", a_fsopen},
        {"open_tree", a_open_tree},
        {"move_mount", a_move_mount},
        {"unshare_user", a_unshare_user},
        {"unshare_mnt", a_unshare_mnt},
        {"setns", a_setns},
        {"clone_newuser", a_clone_newuser},
        {"clone_newns", a_clone_newns},
        {"clone3", a_clone3},
        {"clone3_newuser", a_clone3_newuser},
        {"ptrace_traceme", a_ptrace_traceme},
        {"process_vm_readv", a_process_vm_readv},
        {"kexec_load", a_kexec_load},
        {"init_module", a_init_module},
        {"finit_module", a_finit_module},
        {"delete_module", a_delete_module},
        {"reboot", a_reboot},
        {"swapon", a_swapon},
        {"socket_alg", a_socket_alg},
        {"socket_alg_hi32", a_socket_alg_hi32},
        {"socket_vsock", a_socket_vsock},
        {"socket_packet", a_socket_packet},
        {"ioctl_tiocsti", a_tiocsti},
        {"ioctl_tiocsti_hi32", a_tiocsti_hi32},
        {"ioctl_tioclinux", a_tioclinux},
        {"open_by_handle_at", a_open_by_handle_at},
        {"chroot", a_chroot},
        {"sethostname", a_sethostname},
#if defined(__x86_64__)
        {"i386_getpid", a_i386_getpid},
        {"i386_unshare", a_i386_unshare},
        {"x32_getpid", a_x32_getpid},
        {"x32_unshare", a_x32_unshare},
#endif
};

struct outcome {
        long ret;
        int err;
};

static void try_one(const struct attempt *a)
{
        struct outcome o = {0, 0};
        int pfd[2], st = 0;
        ssize_t got;
        pid_t pid;

        if (pipe(pfd) != 0) {
                printf("%s ALLOWED harness-pipe-failed\n", a->name);
                return;
        }
        fflush(stdout);
        pid = fork();
        if (pid < 0) {
                printf("%s ALLOWED harness-fork-failed\n", a->name);
                close(pfd[0]);
                close(pfd[1]);
                return;
        }
        if (pid == 0) {
                close(pfd[0]);
                errno = 0;
                o.ret = a->fn();
                o.err = errno;
                if (write(pfd[1], &o, sizeof(o)) != (ssize_t)sizeof(o))
                        _exit(3);
                _exit(0);
        }
        close(pfd[1]);
        do
                got = read(pfd[0], &o, sizeof(o));
        while (got < 0 && errno == EINTR);
        close(pfd[0]);
        while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
                ;
        if (got != (ssize_t)sizeof(o)) {
                if (WIFSIGNALED(st))
                        printf("%s blocked SIG%s\n", a->name, sigabbrev_np(WTERMSIG(st)));
                else
                        printf("%s ALLOWED no-result\n", a->name);
                return;
        }
        if (o.ret >= 0)
                printf("%s ALLOWED returned-%ld\n", a->name, o.ret);
        else if (o.err == EPERM || o.err == EACCES || o.err == ENOSYS)
                printf("%s blocked %s\n", a->name, strerrorname_np(o.err));
        else
                printf("%s ALLOWED %s\n", a->name, o.err ? strerrorname_np(o.err) : "errno-0");
}

int main(int argc, char **argv)
{
        size_t i, n = 0;
        int k;

        for (i = 0; i < sizeof(attempts) / sizeof(attempts[0]); i++) {
                int wanted = argc < 2;
                for (k = 1; k < argc && !wanted; k++)
                        wanted = strcmp(argv[k], attempts[i].name) == 0;
                if (!wanted)
                        continue;
                try_one(&attempts[i]);
                n++;
        }
        printf("attempts %zu\n", n);
        return 0;
}
