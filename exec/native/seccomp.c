/* seccomp: builds the sandbox's syscall policy once, in the parent, with
 * libseccomp, and keeps it as plain BPF so that loading it in the child needs
 * nothing but two raw syscalls. Must never allocate or call libseccomp on the
 * load path, which runs between clone and exec. */
#include "exec/native/seccomp.h"

#include <errno.h>
#include <jansson.h>
#include <fcntl.h>
#include <linux/btrfs.h>
#include <linux/falloc.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <sched.h>
#include <seccomp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

/* Highest syscall number (plus one) looked at when counting; covers every
 * table libseccomp knows, x32's 512..547 included. */
#define SCAN_LIMIT 1024

#define ARRAY_LEN(a) (sizeof(a) / sizeof((a)[0]))

/* Only the low 32 bits of int arguments reach the kernel; compare just those
 * so junk in the upper half neither sneaks past nor breaks a legal call. */
#define LOW32 0xffffffffULL

#ifndef CLONE_NEWTIME
#define CLONE_NEWTIME 0x80
#endif

/* For clone(2), CLONE_NEWTIME (0x80) lands in the exit-signal byte, where a
 * value that high is rejected anyway; refusing it costs nothing. */
#define NAMESPACE_FLAGS                                                                            \
        (CLONE_NEWNS | CLONE_NEWCGROUP | CLONE_NEWUTS | CLONE_NEWIPC | CLONE_NEWUSER |             \
         CLONE_NEWPID | CLONE_NEWNET | CLONE_NEWTIME)

struct seccomp_policy {
        struct sock_fprog guard;     /* refuses terminal-injection ioctls */
        struct sock_fprog allowlist; /* everything else: default EPERM */
        struct seccomp_abi_count abis[SECCOMP_MAX_ABIS];
        size_t nabis;
};

enum check {
        ANY_ARGS,         /* allowed whatever the arguments */
        NO_NAMESPACES,    /* clone: flags must not create a namespace */
        SAFE_FAMILY,      /* socket, socketpair: only the families below */
        PLAIN_ALLOCATION, /* fallocate: mode 0 only */
};

/* The allowlist: what bash, python3, coreutils, git, gcc and make need, and
 * no more. Legacy calls (open, stat, fork...) run the same kernel code as
 * their *at or clone twins; musl, Go and static binaries still use them. */
static const char *const allowlist[] = {
    /* Reading and writing open files. */
    "read", "write", "readv", "writev", "pread64", "pwrite64", "preadv", "pwritev", "preadv2",
    "pwritev2", "lseek", "sendfile", "copy_file_range", "fsync", "fdatasync", "ftruncate",
    "fadvise64",
    /* Descriptors; ioctl requests are narrowed by the guard filter. */
    "close", "close_range", "dup", "dup2", "dup3", "fcntl", "flock", "ioctl", "pipe", "pipe2",
    /* Paths: open, inspect, create, change. */
    "open", "openat", "creat", "stat", "fstat", "lstat", "newfstatat", "statx", "statfs", "fstatfs",
    "access", "faccessat", "faccessat2", "readlink", "readlinkat", "getdents64", "getcwd", "chdir",
    "fchdir", "umask", "truncate", "mkdir", "mkdirat", "rmdir", "unlink", "unlinkat", "rename",
    "renameat", "renameat2", "link", "linkat", "symlink", "symlinkat", "mknod", "mknodat", "chmod",
    "fchmod", "fchmodat", "fchmodat2", "chown", "fchown", "lchown", "fchownat", "utime", "utimes",
    "futimesat", "utimensat",
    /* Extended attributes: cp -a, ls -l (ACLs), tar. */
    "getxattr", "lgetxattr", "fgetxattr", "listxattr", "llistxattr", "flistxattr", "setxattr",
    "lsetxattr", "fsetxattr", "removexattr", "lremovexattr", "fremovexattr",
    /* tail -f, make and editors watch files. */
    "inotify_init", "inotify_init1", "inotify_add_watch", "inotify_rm_watch",
    /* Memory; memfd_create backs libffi closures and JIT code. */
    "brk", "mmap", "munmap", "mremap", "mprotect", "madvise", "msync", "membarrier", "memfd_create",
    /* Processes; clone is in checked_calls below. */
    "fork", "vfork", "execve", "execveat", "exit", "exit_group", "wait4", "waitid", "kill", "tkill",
    "tgkill", "set_tid_address", "set_robust_list", "rseq", "futex", "arch_prctl", "prctl",
    "sched_yield", "sched_getaffinity", "restart_syscall",
    /* file(1) and other tools sandbox themselves; a filter can only narrow. */
    "seccomp",
    /* Process groups and identity. make swaps its effective IDs with
     * seteuid/setegid, which glibc implements with setresuid/setresgid. */
    "getpid", "getppid", "gettid", "getpgid", "getpgrp", "setpgid", "getsid", "setsid", "getuid",
    "geteuid", "getgid", "getegid", "getresuid", "getresgid", "getgroups", "setresuid", "setresgid",
    /* Limits and accounting: ulimit, nice, time, make. */
    "getrlimit", "setrlimit", "prlimit64", "getrusage", "times", "getpriority", "setpriority",
    /* Signals. */
    "rt_sigaction", "rt_sigprocmask", "rt_sigreturn", "rt_sigpending", "rt_sigtimedwait",
    "rt_sigsuspend", "sigaltstack", "pause", "alarm", "getitimer", "setitimer", "signalfd",
    "signalfd4",
    /* Clocks and timers (timeout(1) uses POSIX timers). */
    "clock_gettime", "clock_getres", "clock_nanosleep", "nanosleep", "gettimeofday", "time",
    "timer_create", "timer_settime", "timer_gettime", "timer_getoverrun", "timer_delete",
    "timerfd_create", "timerfd_settime", "timerfd_gettime",
    /* Waiting on many descriptors. */
    "poll", "ppoll", "select", "pselect6", "epoll_create", "epoll_create1", "epoll_ctl",
    "epoll_wait", "epoll_pwait", "epoll_pwait2", "eventfd", "eventfd2",
    /* Sockets (socket and socketpair are in checked_calls); the
     * sandbox's network namespace is empty. */
    "connect", "accept", "accept4", "bind", "listen", "shutdown", "getsockname", "getpeername",
    "getsockopt", "setsockopt", "sendto", "recvfrom", "sendmsg", "recvmsg", "sendmmsg", "recvmmsg",
    /* The machine, as far as a program asks. */
    "uname", "sysinfo", "getrandom"};

/* Allowed only with the arguments their check permits. */
static const struct {
        const char *name;
        enum check check;
} checked_calls[] = {
    {"clone", NO_NAMESPACES},
    {"socket", SAFE_FAMILY},
    {"socketpair", SAFE_FAMILY},
    {"fallocate", PLAIN_ALLOCATION},
};

#ifndef FALLOC_FL_WRITE_ZEROES
#define FALLOC_FL_WRITE_ZEROES 0x80
#endif

/* fallocate's other modes, answered "not supported", as a filesystem
 * without them would (tools then fall back). Plain allocation grows the
 * file, so RLIMIT_FSIZE holds it to the disk quota's room; KEEP_SIZE
 * allocates past the end, out of that limit's sight (200 MiB at once
 * under a 10M quota), and the others are of no use to a tool's work. */
static const unsigned long refused_falloc_modes[] = {
    FALLOC_FL_KEEP_SIZE,  FALLOC_FL_PUNCH_HOLE,   FALLOC_FL_NO_HIDE_STALE, FALLOC_FL_COLLAPSE_RANGE,
    FALLOC_FL_ZERO_RANGE, FALLOC_FL_INSERT_RANGE, FALLOC_FL_UNSHARE_RANGE, FALLOC_FL_WRITE_ZEROES};

/* AF_NETLINK stays: glibc's getaddrinfo asks the kernel for local addresses. */
static const int socket_families[] = {AF_UNIX, AF_INET, AF_INET6, AF_NETLINK};

/* bcachefs's BCH_IOCTL_SUBVOLUME_CREATE: _IOW(0xbc, 16, a 32-byte struct);
 * not in the kernel's exported headers. */
#define BCH_IOCTL_SUBVOLUME_CREATE _IOC(_IOC_WRITE, 0xbc, 16, 32)

/* TIOCSTI and TIOCLINUX can push keystrokes into the terminal of whoever
 * reads the output later. A subvolume or snapshot is a new filesystem
 * tree with its own device number inside the workspace: the disk quota's
 * walk counts the subvolumes it finds, but a snapshot can share a whole
 * tree's blocks at no cost to its maker, so none may be made. */
static const unsigned long refused_ioctls[] = {TIOCSTI,
                                               TIOCLINUX,
                                               BTRFS_IOC_SNAP_CREATE,
                                               BTRFS_IOC_SNAP_CREATE_V2,
                                               BTRFS_IOC_SUBVOL_CREATE,
                                               BTRFS_IOC_SUBVOL_CREATE_V2,
                                               BCH_IOCTL_SUBVOLUME_CREATE};

/* Modes that must never reach a file a sandbox creates or changes: the
 * workspace is a host directory, and a setuid or setgid file left there runs
 * with its owner's rights for whoever starts it later. */
static const unsigned long refused_mode_bits[] = {S_ISUID, S_ISGID};

/* Calls that set a mode, and which argument holds it. */
static const struct {
        const char *name;
        unsigned mode_arg;
        int flags_arg; /* the open flags (the mode counts only with O_CREAT or
                        * O_TMPFILE), or -1 */
} mode_calls[] = {
    {"chmod", 1, -1},     {"fchmod", 1, -1}, {"fchmodat", 2, -1},
    {"fchmodat2", 2, -1}, {"creat", 1, -1},  {"open", 2, 1},
    {"openat", 3, 2},     {"mknod", 1, -1},  {"mknodat", 2, -1},
};

/* Open flags under which the kernel reads the mode argument (all the bits
 * of O_TMPFILE, which includes O_DIRECTORY); otherwise it is junk. */
static const unsigned long creating_flags[] = {O_CREAT, O_TMPFILE};

/* File types mknod may not make: devices (a sandbox holds no CAP_MKNOD,
 * but the 0:0 "whiteout" character device is open to everyone). */
static const unsigned long refused_node_types[] = {S_IFCHR, S_IFBLK};

/* ABIs the kernel accepts, by the native arch they run beside. Only the native
 * one is in the filter; the others are refused whole. */
static const struct {
        uint32_t arch;
        const char *name;
        uint32_t host;
} abis[] = {
    {SCMP_ARCH_X86_64, "x86_64", SCMP_ARCH_X86_64},
    {SCMP_ARCH_X86, "i386", SCMP_ARCH_X86_64},
    {SCMP_ARCH_X32, "x32", SCMP_ARCH_X86_64},
    {SCMP_ARCH_AARCH64, "aarch64", SCMP_ARCH_AARCH64},
    {SCMP_ARCH_ARM, "arm", SCMP_ARCH_AARCH64},
};

__attribute__((format(printf, 4, 5))) static int fail(char *err, size_t errlen, int rc,
                                                      const char *fmt, ...)
{
        va_list ap;
        int n = 0;

        if (err && errlen) {
                va_start(ap, fmt);
                n = vsnprintf(err, errlen, fmt, ap);
                va_end(ap);
                if (n >= 0 && (size_t)n < errlen)
                        snprintf(err + n, errlen - (size_t)n, ": %s", strerror(-rc));
        }
        return rc;
}

static void release_ctx(scmp_filter_ctx *ctx)
{
        if (*ctx)
                seccomp_release(*ctx);
}

static void close_fd(int *fd)
{
        if (*fd >= 0)
                close(*fd);
}

/* A native process making an i386 (int $0x80) or x32 syscall is probing for
 * a way around the filter, not running a program: kill it outright. */
static scmp_filter_ctx new_filter(uint32_t default_action)
{
        scmp_filter_ctx ctx = seccomp_init(default_action);

        if (ctx && seccomp_attr_set(ctx, SCMP_FLTATR_ACT_BADARCH, SCMP_ACT_KILL_PROCESS) < 0) {
                seccomp_release(ctx);
                return NULL;
        }
        return ctx;
}

/* libseccomp 2.5 can only export to a descriptor: write into a memfd, then
 * read the instructions back into memory the child can use as is. */
static int export_bpf(scmp_filter_ctx ctx, const char *what, struct sock_fprog *prog, char *err,
                      size_t errlen)
{
        int fd __attribute__((cleanup(close_fd))) = memfd_create("proctor-seccomp", MFD_CLOEXEC);
        struct stat st;
        size_t size, done = 0;
        int rc;

        if (fd < 0)
                return fail(err, errlen, -errno, "cannot create a memfd for the %s filter", what);
        rc = seccomp_export_bpf(ctx, fd);
        if (rc < 0)
                return fail(err, errlen, rc, "cannot export the %s filter to BPF", what);
        if (fstat(fd, &st) < 0)
                return fail(err, errlen, -errno, "cannot size the exported %s filter", what);
        size = (size_t)st.st_size;
        if (size == 0 || size % sizeof(struct sock_filter) ||
            size / sizeof(struct sock_filter) > BPF_MAXINSNS)
                return fail(err, errlen, -E2BIG, "the %s filter exports to %zu bytes of BPF", what,
                            size);
        prog->filter = malloc(size);
        if (!prog->filter)
                return fail(err, errlen, -ENOMEM, "cannot hold the %s filter", what);
        while (done < size) {
                ssize_t n = pread(fd, (char *)prog->filter + done, size - done, (off_t)done);

                if (n <= 0)
                        return fail(err, errlen, n < 0 ? -errno : -EIO,
                                    "cannot read back the %s filter", what);
                done += (size_t)n;
        }
        prog->len = (unsigned short)(size / sizeof(struct sock_filter));
        return 0;
}

static int allow_call(scmp_filter_ctx ctx, const char *name, enum check check, bool *allowed)
{
        int nr = seccomp_syscall_resolve_name(name);
        int rc = 0;

        /* Negative: no such syscall on this arch (open on aarch64, say). */
        if (nr < 0)
                return 0;
        if (nr < SCAN_LIMIT)
                allowed[nr] = true;
        switch (check) {
        case ANY_ARGS:
                return seccomp_rule_add(ctx, SCMP_ACT_ALLOW, nr, 0);
        case NO_NAMESPACES:
                return seccomp_rule_add(ctx, SCMP_ACT_ALLOW, nr, 1,
                                        SCMP_A0(SCMP_CMP_MASKED_EQ, NAMESPACE_FLAGS, 0));
        case SAFE_FAMILY:
                for (size_t i = 0; i < ARRAY_LEN(socket_families) && rc == 0; i++)
                        rc = seccomp_rule_add(
                            ctx, SCMP_ACT_ALLOW, nr, 1,
                            SCMP_A0(SCMP_CMP_MASKED_EQ, LOW32, (scmp_datum_t)socket_families[i]));
                return rc;
        case PLAIN_ALLOCATION:
                rc = seccomp_rule_add(ctx, SCMP_ACT_ALLOW, nr, 1,
                                      SCMP_A1(SCMP_CMP_MASKED_EQ, LOW32, 0));
                for (size_t i = 0; i < ARRAY_LEN(refused_falloc_modes) && rc == 0; i++)
                        rc = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EOPNOTSUPP), nr, 1,
                                              SCMP_A1(SCMP_CMP_MASKED_EQ, refused_falloc_modes[i],
                                                      refused_falloc_modes[i]));
                return rc;
        }
        abort();
}

/* Marks in `allowed` (indexed by native syscall number) what the list lets
 * through, for the counts. */
static int build_allowlist(struct sock_fprog *prog, bool *allowed, char *err, size_t errlen)
{
        scmp_filter_ctx ctx __attribute__((cleanup(release_ctx))) =
            new_filter(SCMP_ACT_ERRNO(EPERM));
        int rc;

        if (!ctx)
                return fail(err, errlen, -ENOMEM, "cannot start the seccomp allowlist");
        /* A binary tree instead of a ~200-long chain of compares. */
        rc = seccomp_attr_set(ctx, SCMP_FLTATR_CTL_OPTIMIZE, 2);
        if (rc < 0)
                return fail(err, errlen, rc, "cannot ask libseccomp for a binary-tree filter");
        for (size_t i = 0; i < ARRAY_LEN(allowlist); i++) {
                rc = allow_call(ctx, allowlist[i], ANY_ARGS, allowed);
                if (rc < 0)
                        return fail(err, errlen, rc, "cannot allow syscall %s", allowlist[i]);
        }
        for (size_t i = 0; i < ARRAY_LEN(checked_calls); i++) {
                rc = allow_call(ctx, checked_calls[i].name, checked_calls[i].check, allowed);
                if (rc < 0)
                        return fail(err, errlen, rc, "cannot allow syscall %s",
                                    checked_calls[i].name);
        }
        /* clone3's flags sit in memory a filter cannot read: claim it does
         * not exist, and glibc retries with clone. */
        rc = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(ENOSYS), SCMP_SYS(clone3), 0);
        if (rc < 0)
                return fail(err, errlen, rc, "cannot make clone3 answer ENOSYS");
        /* openat2 hides its mode in memory too; glibc's open never uses it. */
        rc = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(ENOSYS), SCMP_SYS(openat2), 0);
        if (rc < 0)
                return fail(err, errlen, rc, "cannot make openat2 answer ENOSYS");
        return export_bpf(ctx, "allowlist", prog, err, errlen);
}

/* Refuses `nr` when the bits `mask` of argument `arg` equal `val`, and, when
 * flags_arg >= 0, only if that argument has one of the creating flags. */
static int refuse_masked(scmp_filter_ctx ctx, int nr, unsigned arg, unsigned long mask,
                         unsigned long val, int flags_arg)
{
        struct scmp_arg_cmp cmp[2] = {
            {.arg = arg, .op = SCMP_CMP_MASKED_EQ, .datum_a = mask, .datum_b = val}};
        int rc = 0;

        if (flags_arg < 0)
                return seccomp_rule_add_array(ctx, SCMP_ACT_ERRNO(EPERM), nr, 1, cmp);
        for (size_t i = 0; i < ARRAY_LEN(creating_flags) && rc == 0; i++) {
                cmp[1] = (struct scmp_arg_cmp){.arg = (unsigned)flags_arg,
                                               .op = SCMP_CMP_MASKED_EQ,
                                               .datum_a = creating_flags[i],
                                               .datum_b = creating_flags[i]};
                rc = seccomp_rule_add_array(ctx, SCMP_ACT_ERRNO(EPERM), nr, 2, cmp);
        }
        return rc;
}

/* No call may give a file the setuid or setgid bit, and mknod may not make
 * a device node. Only the low bits the kernel reads are compared. */
static int refuse_modes(scmp_filter_ctx ctx, char *err, size_t errlen)
{
        for (size_t i = 0; i < ARRAY_LEN(mode_calls); i++) {
                int nr = seccomp_syscall_resolve_name(mode_calls[i].name);
                bool node = strncmp(mode_calls[i].name, "mknod", 5) == 0;
                int rc = 0;

                if (nr < 0)
                        continue; /* not on this arch, or newer than libseccomp */
                for (size_t b = 0; b < ARRAY_LEN(refused_mode_bits) && rc == 0; b++)
                        rc = refuse_masked(ctx, nr, mode_calls[i].mode_arg, refused_mode_bits[b],
                                           refused_mode_bits[b], mode_calls[i].flags_arg);
                for (size_t t = 0; node && t < ARRAY_LEN(refused_node_types) && rc == 0; t++)
                        rc = refuse_masked(ctx, nr, mode_calls[i].mode_arg, S_IFMT,
                                           refused_node_types[t], -1);
                if (rc < 0)
                        return fail(err, errlen, rc, "cannot narrow the modes of %s",
                                    mode_calls[i].name);
        }
        return 0;
}

/* libseccomp drops conditional rules next to an unconditional one, and will
 * not add a rule whose action equals the default. "ioctl, except these
 * requests" (and "chmod, except these modes") therefore lives in its own
 * filter; the kernel obeys the strictest verdict of all installed filters. */
static int build_guard(struct sock_fprog *prog, char *err, size_t errlen)
{
        scmp_filter_ctx ctx __attribute__((cleanup(release_ctx))) = new_filter(SCMP_ACT_ALLOW);
        int rc;

        if (!ctx)
                return fail(err, errlen, -ENOMEM, "cannot start the seccomp guard");
        for (size_t i = 0; i < ARRAY_LEN(refused_ioctls); i++) {
                rc = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), SCMP_SYS(ioctl), 1,
                                      SCMP_A1(SCMP_CMP_MASKED_EQ, LOW32, refused_ioctls[i]));
                if (rc < 0)
                        return fail(err, errlen, rc, "cannot refuse ioctl request %#lx",
                                    refused_ioctls[i]);
        }
        if ((rc = refuse_modes(ctx, err, errlen)) < 0)
                return rc;
        return export_bpf(ctx, "guard", prog, err, errlen);
}

/* `allowed` NULL: the ABI is refused as a whole. */
static void count_abi(struct seccomp_abi_count *c, uint32_t arch, const char *name,
                      const bool *allowed)
{
        c->abi = name;
        c->allowed = 0;
        c->blocked = 0;
        for (int nr = 0; nr < SCAN_LIMIT; nr++) {
                char *resolved = seccomp_syscall_resolve_num_arch(arch, nr);

                if (!resolved)
                        continue;
                free(resolved);
                if (allowed && allowed[nr])
                        c->allowed++;
                else
                        c->blocked++;
        }
}

static size_t count_abis(struct seccomp_abi_count *out, const bool *allowed)
{
        uint32_t native = seccomp_arch_native();
        size_t n = 0;

        for (size_t i = 0; i < ARRAY_LEN(abis) && n < SECCOMP_MAX_ABIS; i++) {
                if (abis[i].host == native)
                        count_abi(&out[n++], abis[i].arch, abis[i].name,
                                  abis[i].arch == native ? allowed : NULL);
        }
        if (n == 0)
                count_abi(&out[n++], native, "native", allowed);
        return n;
}

int seccomp_policy_build(struct seccomp_policy **out, char *err, size_t errlen)
{
        bool allowed[SCAN_LIMIT] = {false};
        struct seccomp_policy *p = calloc(1, sizeof(*p));
        int rc;

        *out = NULL;
        if (!p)
                return fail(err, errlen, -ENOMEM, "cannot allocate the seccomp policy");
        rc = build_allowlist(&p->allowlist, allowed, err, errlen);
        if (rc == 0)
                rc = build_guard(&p->guard, err, errlen);
        if (rc < 0) {
                seccomp_policy_free(p);
                return rc;
        }
        p->nabis = count_abis(p->abis, allowed);
        *out = p;
        return 0;
}

void seccomp_policy_free(struct seccomp_policy *p)
{
        if (!p)
                return;
        free(p->guard.filter);
        free(p->allowlist.filter);
        free(p);
}

void seccomp_policy_counts(const struct seccomp_policy *p, unsigned *allowed, unsigned *blocked)
{
        *allowed = 0;
        *blocked = 0;
        for (size_t i = 0; i < p->nabis; i++) {
                *allowed += p->abis[i].allowed;
                *blocked += p->abis[i].blocked;
        }
}

size_t seccomp_policy_abi_counts(const struct seccomp_policy *p, struct seccomp_abi_count *out,
                                 size_t max)
{
        size_t n = p->nabis < max ? p->nabis : max;

        if (n)
                memcpy(out, p->abis, n * sizeof(*out));
        return n;
}

int seccomp_policy_load(const struct seccomp_policy *p)
{
        if (syscall(SYS_prctl, PR_SET_NO_NEW_PRIVS, 1L, 0L, 0L, 0L) < 0)
                return -errno;
        /* Guard first: a filter can only be installed if those already in
         * place allow seccomp(2), and the allowlist may one day not. */
        if (syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0L, &p->guard) < 0)
                return -errno;
        if (syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0L, &p->allowlist) < 0)
                return -errno;
        return 0;
}

/* The host's abstract unix sockets (a desktop's X server or D-Bus, say)
 * belong to its network namespace, and a root daemon's socket may sit in a
 * workspace a root operator's sandbox acts on as root; a connect's or a
 * sendto's address lies in memory no filter can read. Such a sandbox gets
 * no socket(2) of AF_UNIX at all, nor a datagram socketpair (whose ends can
 * send to any address); a stream or seqpacket pair is connected for good.
 * The main policy judges everything else (non-native ABIs included), so
 * this filter looks at the numbers alone. */
int seccomp_load_no_unix_sockets(void)
{
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
        const unsigned lo = 0;
#else
        const unsigned lo = 4;
#endif
        const unsigned arg0 = offsetof(struct seccomp_data, args[0]) + lo;
        const unsigned arg1 = offsetof(struct seccomp_data, args[1]) + lo;
        struct sock_filter f[] = {
            /* 0 */ BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
            /* 1 */ BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_socket, 4, 0),     /* -> 6 */
            /* 2 */ BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_socketpair, 0, 6), /* -> 9 */
            /* 3 */ BPF_STMT(BPF_LD | BPF_W | BPF_ABS, arg1),
            /* 4 */ BPF_STMT(BPF_ALU | BPF_AND | BPF_K, 0xf), /* the type, less its flags */
            /* 5 */ BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SOCK_DGRAM, 0, 3), /* -> 9 */
            /* 6 */ BPF_STMT(BPF_LD | BPF_W | BPF_ABS, arg0),
            /* 7 */ BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, AF_UNIX, 0, 1),
            /* 8 */ BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | (EPERM & SECCOMP_RET_DATA)),
            /* 9 */ BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
        };
        struct sock_fprog prog = {.len = ARRAY_LEN(f), .filter = f};

        if (syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0L, &prog) < 0)
                return -errno;
        return 0;
}

static void write_prog(FILE *f, const char *name, const struct sock_fprog *prog)
{
        fprintf(f, "static struct sock_filter %s[] = {\n", name);
        for (unsigned short i = 0; i < prog->len; i++) {
                const struct sock_filter *k = &prog->filter[i];
                fprintf(f, "        {0x%04x, %u, %u, 0x%08x},\n", k->code, k->jt, k->jf, k->k);
        }
        fprintf(f, "};\n");
}

int seccomp_policy_write_c(const struct seccomp_policy *p, FILE *f)
{
        fprintf(f, "/* Generated by the build from exec/native/seccomp.c; do not edit. */\n");
        write_prog(f, "builtin_guard", &p->guard);
        write_prog(f, "builtin_allowlist", &p->allowlist);
        fprintf(f, "static const struct seccomp_policy builtin = {\n");
        fprintf(f, "        .guard = {%u, builtin_guard},\n", p->guard.len);
        fprintf(f, "        .allowlist = {%u, builtin_allowlist},\n", p->allowlist.len);
        fprintf(f, "        .abis = {\n");
        for (size_t i = 0; i < p->nabis; i++)
                fprintf(f, "                {\"%s\", %u, %u},\n", p->abis[i].abi,
                        p->abis[i].allowed, p->abis[i].blocked);
        fprintf(f, "        },\n        .nabis = %zu,\n};\n", p->nabis);
        return ferror(f) ? -EIO : 0;
}

static bool prog_equal(const struct sock_fprog *a, const struct sock_fprog *b)
{
        return a->len == b->len &&
               memcmp(a->filter, b->filter, (size_t)a->len * sizeof(*a->filter)) == 0;
}

bool seccomp_policy_equal(const struct seccomp_policy *a, const struct seccomp_policy *b)
{
        return prog_equal(&a->guard, &b->guard) && prog_equal(&a->allowlist, &b->allowlist);
}

#ifndef SECCOMP_GENERATOR
#include "seccomp_policy.inc"

const struct seccomp_policy *seccomp_policy_builtin(void)
{
        return &builtin;
}
#endif

/* ---- the policy as a container engine's profile ---- */

static json_t *masked_eq(unsigned arg, uint64_t mask, uint64_t val)
{
        return json_pack("{s:I,s:I,s:I,s:s}", "index", (json_int_t)arg, "value", (json_int_t)mask,
                         "valueTwo", (json_int_t)val, "op", "SCMP_CMP_MASKED_EQ");
}

/* One rule: `action` for `name` when every condition in args (or none). */
static void profile_rule(json_t *rules, const char *name, const char *action, json_t *args)
{
        json_t *r = json_pack("{s:[s],s:s}", "names", name, "action", action);

        if (args != NULL)
                json_object_set_new(r, "args", args);
        json_array_append_new(rules, r);
}

static bool is_mode_call(const char *name)
{
        for (size_t i = 0; i < ARRAY_LEN(mode_calls); i++)
                if (strcmp(mode_calls[i].name, name) == 0)
                        return true;
        return false;
}

/* A mode-setting call, allowed when its mode has no setuid/setgid bit (a
 * mknod's also no device type), or when its open flags create nothing. */
static void profile_mode_call(json_t *rules, size_t i)
{
        static const unsigned long node_types[] = {0, S_IFREG, S_IFIFO, S_IFSOCK};
        const unsigned long suid = S_ISUID | S_ISGID;
        const char *name = mode_calls[i].name;
        unsigned arg = mode_calls[i].mode_arg;

        if (strncmp(name, "mknod", 5) == 0) {
                for (size_t t = 0; t < ARRAY_LEN(node_types); t++)
                        profile_rule(
                            rules, name, "SCMP_ACT_ALLOW",
                            json_pack("[o]", masked_eq(arg, S_IFMT | suid, node_types[t])));
                return;
        }
        profile_rule(rules, name, "SCMP_ACT_ALLOW", json_pack("[o]", masked_eq(arg, suid, 0)));
        if (mode_calls[i].flags_arg >= 0)
                profile_rule(rules, name, "SCMP_ACT_ALLOW",
                             json_pack("[o]", masked_eq((unsigned)mode_calls[i].flags_arg,
                                                        O_CREAT | __O_TMPFILE, 0)));
}

static void profile_checked_call(json_t *rules, const char *name, enum check check)
{
        if (check == PLAIN_ALLOCATION) {
                profile_rule(rules, name, "SCMP_ACT_ALLOW",
                             json_pack("[o]", masked_eq(1, LOW32, 0)));
                for (size_t i = 0; i < ARRAY_LEN(refused_falloc_modes); i++) {
                        json_t *r = json_pack(
                            "{s:[s],s:s,s:i,s:[o]}", "names", name, "action", "SCMP_ACT_ERRNO",
                            "errnoRet", EOPNOTSUPP, "args",
                            masked_eq(1, refused_falloc_modes[i], refused_falloc_modes[i]));
                        json_array_append_new(rules, r);
                }
                return;
        }
        if (check == NO_NAMESPACES) {
                profile_rule(rules, name, "SCMP_ACT_ALLOW",
                             json_pack("[o]", masked_eq(0, NAMESPACE_FLAGS, 0)));
                return;
        }
        for (size_t f = 0; f < ARRAY_LEN(socket_families); f++)
                profile_rule(rules, name, "SCMP_ACT_ALLOW",
                             json_pack("[o]", masked_eq(0, LOW32, (uint64_t)socket_families[f])));
}

/* The profile's name for the native arch ("SCMP_ARCH_X86_64"). */
static const char *native_arch_name(void)
{
        return seccomp_arch_native() == SCMP_ARCH_AARCH64 ? "SCMP_ARCH_AARCH64"
                                                          : "SCMP_ARCH_X86_64";
}

char *seccomp_policy_profile_json(void)
{
        json_t *plain = json_array(), *rules = json_array(), *p;
        char *s;

        for (size_t i = 0; i < ARRAY_LEN(allowlist); i++)
                if (seccomp_syscall_resolve_name(allowlist[i]) >= 0 && !is_mode_call(allowlist[i]))
                        json_array_append_new(plain, json_string(allowlist[i]));
        json_array_append_new(rules,
                              json_pack("{s:o,s:s}", "names", plain, "action", "SCMP_ACT_ALLOW"));
        for (size_t i = 0; i < ARRAY_LEN(mode_calls); i++)
                if (seccomp_syscall_resolve_name(mode_calls[i].name) >= 0)
                        profile_mode_call(rules, i);
        for (size_t i = 0; i < ARRAY_LEN(checked_calls); i++)
                profile_checked_call(rules, checked_calls[i].name, checked_calls[i].check);
        /* As in the filter: flags in memory it cannot read, so "no such call". */
        json_array_append_new(rules, json_pack("{s:[s,s],s:s,s:i}", "names", "clone3", "openat2",
                                               "action", "SCMP_ACT_ERRNO", "errnoRet", ENOSYS));
        p = json_pack("{s:s,s:i,s:[s],s:o}", "defaultAction", "SCMP_ACT_ERRNO", "defaultErrnoRet",
                      EPERM, "architectures", native_arch_name(), "syscalls", rules);
        s = p != NULL ? json_dumps(p, JSON_COMPACT) : NULL;
        json_decref(p);
        return s;
}
