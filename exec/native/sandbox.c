/* sandbox: the child side of an execution (the host's template of its
 * root is sandbox_host.c). The parent clones, writes the id maps, then
 * releases the child, which builds a fresh root (sandbox mode), becomes
 * the init, launches the command and holds its wall clock. Linear on
 * purpose; runs between clone and exec, so raw syscalls only and nothing
 * allocates. */
#include "exec/native/sandbox.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <net/if.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/syscall.h>
#include <grp.h>
#include <linux/capability.h>
#include <poll.h>
#include <sys/signalfd.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "exec/native/env.h"
#include "exec/native/inroot.h"
#include "exec/native/sandbox_int.h"
#include "exec/native/seccomp.h"
#include "exec/native/selfrun.h"

extern char **environ;

#ifndef MOVE_MOUNT_F_EMPTY_PATH
#define MOVE_MOUNT_F_EMPTY_PATH 0x00000004
#endif
#ifndef OPEN_TREE_CLONE
#define OPEN_TREE_CLONE 1
#endif
#ifndef OPEN_TREE_CLOEXEC
#define OPEN_TREE_CLOEXEC O_CLOEXEC
#endif
#ifndef MOVE_MOUNT_T_EMPTY_PATH
#define MOVE_MOUNT_T_EMPTY_PATH 0x00000040
#endif
#ifndef MOUNT_ATTR_RDONLY
#define MOUNT_ATTR_RDONLY 0x00000001
#define MOUNT_ATTR_NOSUID 0x00000002
#define MOUNT_ATTR_NODEV  0x00000004
#define MOUNT_ATTR_NOEXEC 0x00000008
#endif
#ifndef CLOSE_RANGE_CLOEXEC
#define CLOSE_RANGE_CLOEXEC (1U << 2)
#endif

struct mount_attr_v1 {
        uint64_t attr_set, attr_clr, propagation, userns_fd;
};

/* ---- child side: everything below runs after clone ---- */

static uint64_t mono_us(void)
{
        struct timespec ts;

        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (uint64_t)ts.tv_sec * 1000000u + (uint64_t)ts.tv_nsec / 1000u;
}

static void send_msg(int fd, char kind, int err, int64_t value, const char *text)
{
        struct sandbox_msg m;
        size_t i = 0;

        memset(&m, 0, sizeof(m));
        m.kind = kind;
        m.err = err;
        m.value = value;
        m.mono_us = mono_us();
        while (text != NULL && text[i] != '\0' && i < sizeof(m.text) - 1) {
                m.text[i] = text[i];
                i++;
        }
        while (write(fd, &m, sizeof(m)) < 0 && errno == EINTR)
                ;
}

__attribute__((noreturn)) static void setup_fail(const struct sandbox_plan *p, const char *what)
{
        send_msg(p->status_fd, SANDBOX_MSG_SETUP, errno, 0, what);
        _exit(125);
}

static void write_file(const struct sandbox_plan *p, const char *path, const char *data, size_t len)
{
        int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);

        if (fd < 0)
                setup_fail(p, path);
        while (len > 0) {
                ssize_t n = write(fd, data, len);
                if (n < 0)
                        setup_fail(p, path);
                data += n;
                len -= (size_t)n;
        }
        close(fd);
}

/* An image's trees, one per bind (-1: bound by path), taken while the
 * child still has its creator's ids: the image cache may sit in a home only
 * they can enter. Each child has its own copy of this array. */
static int image_trees[SB_MAX_BINDS];

static void take_image_trees(const struct sandbox_plan *p)
{
        unsigned i;

        for (i = 0; i < p->host->nbinds; i++) {
                image_trees[i] = -1;
                if (!p->host->binds[i].from_image)
                        continue;
                /* Its path was resolved inside the image (root_take): no
                 * link on it is followed now, so it still leads there. */
                int fd = inroot_open_plain(p->host->binds[i].src, O_PATH | O_DIRECTORY);
                if (fd < 0) {
                        errno = -fd;
                        setup_fail(p, p->host->binds[i].src);
                }
                image_trees[i] = (int)syscall(SYS_open_tree, fd, "",
                                              OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_EMPTY_PATH);
                close(fd);
                if (image_trees[i] < 0)
                        setup_fail(p, p->host->binds[i].src);
        }
}

/* Binds src (or the detached tree, when not -1) onto path (relative to the
 * new root) read-only, nosuid, nodev. */
static void bind_ro(const struct sandbox_plan *p, const char *src, int tree, const char *path,
                    unsigned long keep, bool is_dir)
{
        if (is_dir) {
                if (mkdir(path, 0755) != 0 && errno != EEXIST)
                        setup_fail(p, path);
        } else {
                write_file(p, path, "", 0);
        }
        if (tree >= 0
                ? syscall(SYS_move_mount, tree, "", AT_FDCWD, path, MOVE_MOUNT_F_EMPTY_PATH) != 0
                : mount(src, path, NULL, MS_BIND, NULL) != 0)
                setup_fail(p, src);
        if (tree >= 0)
                close(tree);
        if (mount(NULL, path, NULL, MS_BIND | MS_REMOUNT | MS_RDONLY | MS_NOSUID | MS_NODEV | keep,
                  NULL) != 0)
                setup_fail(p, path);
}

static void mkdirs(const struct sandbox_plan *p, const char *const *dirs)
{
        for (; *dirs != NULL; dirs++)
                if (mkdir(*dirs, 0755) != 0 && errno != EEXIST)
                        setup_fail(p, *dirs);
}

static void populate_dev(const struct sandbox_plan *p)
{
        static const char *const devs[] = {"/dev/null", "/dev/zero", "/dev/full", "/dev/random",
                                           "/dev/urandom"};
        static const char *const links[][2] = {
            {"/proc/self/fd", "dev/fd"},
            {"/proc/self/fd/0", "dev/stdin"},
            {"/proc/self/fd/1", "dev/stdout"},
            {"/proc/self/fd/2", "dev/stderr"},
            {"/tmp", "dev/shm"},
        };
        size_t i;

        for (i = 0; i < sizeof(devs) / sizeof(devs[0]); i++) {
                write_file(p, devs[i] + 1, "", 0);
                if (mount(devs[i], devs[i] + 1, NULL, MS_BIND, NULL) != 0 ||
                    mount(NULL, devs[i] + 1, NULL,
                          MS_BIND | MS_REMOUNT | MS_NOSUID | MS_NOEXEC | p->host->dev_keep,
                          NULL) != 0)
                        setup_fail(p, devs[i]);
        }
        for (i = 0; i < sizeof(links) / sizeof(links[0]); i++)
                if (symlink(links[i][0], links[i][1]) != 0)
                        setup_fail(p, links[i][1]);
}

/* The host's network comes with its resolver's configuration; the host's
 * root is still "/" here. None on the host: none in the sandbox. */
static void copy_resolv_conf(const struct sandbox_plan *p)
{
        char buf[8192];
        int fd = open("/etc/resolv.conf", O_RDONLY | O_CLOEXEC);
        ssize_t n = fd >= 0 ? read(fd, buf, sizeof(buf)) : -1;

        if (fd >= 0)
                close(fd);
        if (n > 0)
                write_file(p, "etc/resolv.conf", buf, (size_t)n);
}

static void populate_etc(const struct sandbox_plan *p)
{
        const struct sandbox_host *h = p->host;
        static const char hosts[] = "127.0.0.1 localhost sandbox\n::1 localhost sandbox\n";
        unsigned i;

        for (i = 0; i < h->nfiles; i++)
                write_file(p, h->files[i].path, h->files[i].data, h->files[i].len);
        write_file(p, "etc/passwd", p->passwd, strlen(p->passwd));
        write_file(p, "etc/group", p->group, strlen(p->group));
        write_file(p, "etc/hostname", "sandbox\n", 8);
        write_file(p, "etc/hosts", hosts, sizeof(hosts) - 1);
        if (p->share_net)
                copy_resolv_conf(p);
        /* HTTPS from a sandbox that shares the network needs the CA store
         * (its links lead into the read-only /usr). */
        if (p->share_net && h->ca_store) {
                if (mkdir("etc/ssl", 0755) != 0 && errno != EEXIST)
                        setup_fail(p, "etc/ssl");
                bind_ro(p, CA_STORE, -1, CA_STORE + 1, h->ca_keep, true);
        }
}

static void mount_tmpfs(const struct sandbox_plan *p, const char *path, const char *mode,
                        uint64_t size)
{
        char opts[64];

        /* snprintf is async-signal-safe enough in glibc for %s/%llu */
        snprintf(opts, sizeof(opts), "mode=%s,size=%llu", mode, (unsigned long long)size);
        if (mount("tmpfs", path, "tmpfs", MS_NOSUID | MS_NODEV, opts) != 0)
                setup_fail(p, path);
}

static void attach_tree(const struct sandbox_plan *p, int tree, const char *path)
{
        if (syscall(SYS_move_mount, tree, "", AT_FDCWD, path, MOVE_MOUNT_F_EMPTY_PATH) != 0)
                setup_fail(p, "attach workspace");
}

/* `tree` is a detached copy of the workspace mount (idmapped by the parent
 * for root-owned workspaces), taken before /tmp was covered. */
static void mount_workspace(const struct sandbox_plan *p, const struct sandbox_request *r, int tree)
{
        char opts[160];
        unsigned long ro = r->ws_mode == EXEC_WS_RO ? MS_RDONLY : 0;

        if (tree < 0)
                return;
        if (mkdir("workspace", 0755) != 0)
                setup_fail(p, "workspace");
        if (r->ws_mode == EXEC_WS_OVERLAY) {
                static const char *const ovl[] = {".ovl", NULL};
                static const char *const sub[] = {".ovl/u", ".ovl/w", ".ovl/l", NULL};
                mkdirs(p, ovl);
                mount_tmpfs(p, ".ovl", "0755", r->tmpfs_bytes);
                mkdirs(p, sub);
                attach_tree(p, tree, ".ovl/l");
                snprintf(opts, sizeof(opts), "lowerdir=/.ovl/l,upperdir=/.ovl/u,workdir=/.ovl/w");
                if (mount("overlay", "workspace", "overlay", MS_NOSUID | MS_NODEV, opts) != 0)
                        setup_fail(p, "overlay workspace");
                if (umount2(".ovl/l", MNT_DETACH) != 0 || umount2(".ovl", MNT_DETACH) != 0 ||
                    rmdir(".ovl") != 0)
                        setup_fail(p, "hide overlay layers");
                return;
        }
        attach_tree(p, tree, "workspace");
        if (mount(NULL, "workspace", NULL,
                  MS_BIND | MS_REMOUNT | MS_NOSUID | MS_NODEV | ro | r->ws_keep, NULL) != 0)
                setup_fail(p, "workspace remount");
}

/* Kernel objects counted per user (not per process) are charged to every
 * user namespace up to the host's: a sandbox holding all of them would take
 * them from the operator and other sandboxes. Bound them in the sandbox's
 * own user namespace (RLIMIT_SIGPENDING, MSGQUEUE and NOFILE are set just
 * before exec). */
static void bound_kernel_counters(const struct sandbox_plan *p)
{
        static const char *const limits[][2] = {
            {"proc/sys/user/max_inotify_instances", "16"},
            {"proc/sys/user/max_inotify_watches", "8192"},
        }; /* fanotify_init is outside the seccomp allowlist */
        size_t i;

        for (i = 0; i < sizeof(limits) / sizeof(limits[0]); i++) {
                int fd = open(limits[i][0], O_WRONLY | O_CLOEXEC);
                /* A kernel without the setting has no such counter. */
                if (fd < 0 && errno == ENOENT)
                        continue;
                if (fd < 0 || write(fd, limits[i][1], strlen(limits[i][1])) < 0)
                        setup_fail(p, limits[i][0]);
                close(fd);
        }
}

/* The network namespace is empty but for its own loopback, which starts
 * down: bring it up so a command can reach a server it started itself. */
static void loopback_up(const struct sandbox_plan *p)
{
        struct ifreq ifr;
        int s = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);

        memset(&ifr, 0, sizeof(ifr));
        memcpy(ifr.ifr_name, "lo", 3);
        if (s < 0 || ioctl(s, SIOCGIFFLAGS, &ifr) != 0)
                setup_fail(p, "loopback");
        ifr.ifr_flags |= IFF_UP | IFF_RUNNING;
        if (ioctl(s, SIOCSIFFLAGS, &ifr) != 0)
                setup_fail(p, "loopback up");
        close(s);
}

/* The request-independent part of the fresh root, done while the child
 * waits: a tmpfs staged over /tmp in the new mount namespace (the host's
 * /tmp is untouched), filled, and pivoted into with the host's root kept at
 * /.oldroot until the workspace has been taken from it. */
static void build_base(const struct sandbox_plan *p, int self)
{
        static const char *const dirs[] = {"usr", "etc",      "proc",     "dev",
                                           "tmp", ".oldroot", ".proctor", NULL};
        const struct sandbox_host *h = p->host;
        unsigned i;

        if (sethostname("sandbox", 7) != 0)
                setup_fail(p, "sethostname");
        if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) != 0)
                setup_fail(p, "make / private");
        mount_tmpfs(p, "/tmp", "0755", 4u << 20);
        if (chdir("/tmp") != 0)
                setup_fail(p, "chdir new root");
        mkdirs(p, dirs);
        for (i = 0; i < h->nbinds; i++)
                bind_ro(p, h->binds[i].src, image_trees[i], h->binds[i].path, h->binds[i].keep,
                        h->binds[i].is_dir);
        for (i = 0; i < h->nlinks; i++)
                if (symlink(h->links[i].target, h->links[i].path) != 0)
                        setup_fail(p, h->links[i].path);
        populate_etc(p);
        populate_dev(p);
        /* proctor itself, read-only, so that file tools run inside. */
        write_file(p, SANDBOX_SELF + 1, "", 0);
        if (syscall(SYS_move_mount, self, "", AT_FDCWD, SANDBOX_SELF + 1,
                    MOVE_MOUNT_F_EMPTY_PATH) != 0 ||
            mount(NULL, SANDBOX_SELF + 1, NULL,
                  MS_BIND | MS_REMOUNT | MS_RDONLY | MS_NOSUID | MS_NODEV | h->self_keep,
                  NULL) != 0)
                setup_fail(p, SANDBOX_SELF);
        close(self);
        /* and, in an image's root, the libraries it needs, which the image
         * need not have: read-only, out of every search path but its own */
        if (h->self_run.ndirs > 0 && mkdir(SELFRUN_LIB + 1, 0755) != 0)
                setup_fail(p, SELFRUN_LIB);
        for (i = 0; i < h->self_run.ndirs; i++)
                bind_ro(p, h->self_run.dirs[i], -1, h->self_run.mounts[i] + 1, h->self_run_keep[i],
                        true);
        if (mount("proc", "proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL) != 0)
                setup_fail(p, "mount /proc");
        bound_kernel_counters(p);
        if (!p->share_net)
                loopback_up(p);
        if (syscall(SYS_pivot_root, ".", ".oldroot") != 0)
                setup_fail(p, "pivot_root");
        if (chdir("/") != 0)
                setup_fail(p, "chdir /");
}

/* Binds the workspace entry `name` (under the directory `dir`) onto itself,
 * read-only when `ro`: a mount point cannot be renamed or removed, so the
 * path keeps leading to it. Returns the new mount's root (its descriptor
 * names the entry in the mount just made), or -1 when there is no entry
 * the sandbox can reach. */
static int pin_entry(const struct sandbox_plan *p, int dir, const char *name, bool ro)
{
        struct mount_attr_v1 attr = {.attr_set = MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID |
                                                 MOUNT_ATTR_NODEV | MOUNT_ATTR_NOEXEC};
        struct statx st;
        int fd = openat(dir, name, O_PATH | O_NOFOLLOW | O_CLOEXEC), tree;

        /* Not there, or the directory before it (already pinned) is shut
         * to the sandbox: nothing beyond can be reached or replaced. */
        if (fd < 0 && (errno == ENOENT || errno == EACCES))
                return -1;
        if (fd < 0)
                setup_fail(p, "proctor's own files in the workspace");
        errno = ELOOP;
        if (statx(fd, "", AT_EMPTY_PATH, STATX_TYPE, &st) != 0 || S_ISLNK(st.stx_mode))
                setup_fail(p, "proctor's own files in the workspace (a symbolic link)");
        /* A directory on the way that is already a mount (pinned for
         * another path, perhaps read-only) stays as it is. */
        if (!ro && (st.stx_attributes_mask & STATX_ATTR_MOUNT_ROOT) &&
            (st.stx_attributes & STATX_ATTR_MOUNT_ROOT))
                return fd;
        tree = (int)syscall(SYS_open_tree, fd, "",
                            OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_EMPTY_PATH);
        if (tree < 0 ||
            (ro && syscall(SYS_mount_setattr, tree, "", AT_EMPTY_PATH, &attr, sizeof(attr)) != 0) ||
            syscall(SYS_move_mount, tree, "", fd, "",
                    MOVE_MOUNT_F_EMPTY_PATH | MOVE_MOUNT_T_EMPTY_PATH) != 0)
                setup_fail(p, "protect proctor's own files in the workspace");
        close(fd);
        return tree;
}

/* proctor's own config, state or trace inside the workspace (`rel`):
 * read-only, and each directory on the way pinned, so that a command can
 * neither write it nor move it aside and put its own in its place. */
static void protect_path(const struct sandbox_plan *p, const char *rel)
{
        char part[NAME_MAX + 1];
        int dir = open("workspace", O_PATH | O_DIRECTORY | O_CLOEXEC);

        if (dir < 0)
                setup_fail(p, "workspace");
        while (*rel != '\0') {
                size_t n = strcspn(rel, "/");
                int next;
                if (n == 0 || n > NAME_MAX) {
                        rel += n + (rel[n] == '/');
                        continue;
                }
                memcpy(part, rel, n);
                part[n] = '\0';
                rel += n + (rel[n] == '/');
                next = pin_entry(p, dir, part, *rel == '\0');
                close(dir);
                if (next < 0)
                        return; /* not there (yet): nothing to keep */
                dir = next;
        }
        close(dir);
}

/* The request's part: /tmp at its size, the workspace taken from the old
 * root, which is then detached for good, and the root made read-only. */
static void finish_root(const struct sandbox_plan *p, const struct sandbox_request *r)
{
        char path[PATH_MAX + 16];
        int tree = r->ws_tree_fd;

        mount_tmpfs(p, "tmp", "1777", r->tmpfs_bytes);
        if (tree < 0 && r->ws_path != NULL) {
                struct stat st;
                snprintf(path, sizeof(path), "/.oldroot%s", r->ws_path);
                tree = (int)syscall(SYS_open_tree, AT_FDCWD, path,
                                    OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_SYMLINK_NOFOLLOW);
                if (tree < 0)
                        setup_fail(p, "open workspace");
                /* The path is only a way back to the directory opened for
                 * the session: anything else in its place is refused. */
                errno = ESTALE;
                if (fstat(tree, &st) != 0 || (uint64_t)st.st_dev != r->ws_dev ||
                    (uint64_t)st.st_ino != r->ws_ino)
                        setup_fail(p, "workspace (moved or replaced since the session opened it)");
        }
        mount_workspace(p, r, tree);
        if (tree >= 0)
                for (char *const *v = r->protect; v != NULL && *v != NULL; v++)
                        protect_path(p, *v);
        if (umount2(".oldroot", MNT_DETACH) != 0 || rmdir(".oldroot") != 0)
                setup_fail(p, "detach old root");
        if (mount(NULL, "/", NULL, MS_BIND | MS_REMOUNT | MS_RDONLY | MS_NOSUID | MS_NODEV, NULL) !=
            0)
                setup_fail(p, "remount / read-only");
}

/* The child starts with its creator's host ids. When that is root, take
 * the mapped ids so that nothing runs as host uid 0, keeping the namespace
 * capabilities the root setup still needs. */
static void switch_ids(const struct sandbox_plan *p)
{
        struct __user_cap_header_struct hdr = {.version = _LINUX_CAPABILITY_VERSION_3};
        struct __user_cap_data_struct data[2];

        if (setgroups(0, NULL) != 0)
                setup_fail(p, "setgroups");
        if (setresgid(p->gid, p->gid, p->gid) != 0)
                setup_fail(p, "setresgid");
        if (prctl(PR_SET_KEEPCAPS, 1) != 0 || setresuid(p->uid, p->uid, p->uid) != 0)
                setup_fail(p, "setresuid");
        if (syscall(SYS_capget, &hdr, data) != 0)
                setup_fail(p, "capget");
        data[0].effective = data[0].permitted;
        data[1].effective = data[1].permitted;
        if (syscall(SYS_capset, &hdr, data) != 0)
                setup_fail(p, "capset");
}

static void set_limit(int res, uint64_t soft, uint64_t hard)
{
        struct rlimit rl = {.rlim_cur = soft, .rlim_max = hard};

        setrlimit(res, &rl);
}

/* In the vfork child: become the command, with the write end of its exit
 * channel (or -1) at SANDBOX_EXIT_FD. Reports an exec failure. */
__attribute__((noreturn)) static void run_command(const struct sandbox_plan *p,
                                                  const struct sandbox_request *r, int exit_wr)
{
        const char *cwd = p->isolate ? (r->ws_path == NULL ? "/tmp" : "/workspace") : r->ws_path;
        const char *self_argv[64];
        char *const *argv;
        int e;

        /* Before the dup2s: the workspace's descriptor, and the exit
         * channel's, may be 0, 1 or 2. */
        if (exit_wr >= 0 && dup3(exit_wr, SANDBOX_EXIT_FD, O_CLOEXEC) < 0)
                goto fail;
        if (!p->isolate && r->ws_tree_fd >= 0 ? fchdir(r->ws_tree_fd) != 0
                                              : cwd != NULL && chdir(cwd) != 0)
                goto fail;
        if (dup2(p->stdin_fd, 0) < 0 || dup2(p->stdout_fd, 1) < 0 || dup2(p->stderr_fd, 2) < 0)
                goto fail;
        if (r->cpu_ms > 0) {
                uint64_t s = (r->cpu_ms + 999) / 1000;
                set_limit(RLIMIT_CPU, s, s + 1);
        }
        if (r->as_bytes > 0)
                set_limit(RLIMIT_AS, r->as_bytes, r->as_bytes);
        if (r->nproc > 0)
                set_limit(RLIMIT_NPROC, r->nproc, r->nproc);
        /* One file can never take more than the disk quota has left. */
        if (r->fsize != UINT64_MAX)
                set_limit(RLIMIT_FSIZE, r->fsize, r->fsize);
        if (p->isolate) {
                set_limit(RLIMIT_CORE, 0, 0);
                /* Counted per user across namespaces: see bound_kernel_counters. */
                set_limit(RLIMIT_SIGPENDING, SANDBOX_SIGPENDING, SANDBOX_SIGPENDING);
                set_limit(RLIMIT_MSGQUEUE, SANDBOX_MSGQUEUE, SANDBOX_MSGQUEUE);
                set_limit(RLIMIT_NOFILE, SANDBOX_NOFILE_SOFT, SANDBOX_NOFILE);
        }
        syscall(SYS_close_range, 3u, ~0u, CLOSE_RANGE_CLOEXEC);
        /* Open across exec; the stub marks it close-on-exec itself, so that
         * programs it runs never get it. */
        if (exit_wr >= 0 && fcntl(SANDBOX_EXIT_FD, F_SETFD, 0) < 0)
                goto fail;
        if (p->seccomp != NULL &&
            ((e = seccomp_policy_load(p->seccomp)) < 0 ||
             ((p->share_net || r->no_unix_sockets) && (e = seccomp_load_no_unix_sockets()) < 0))) {
                send_msg(p->status_fd, SANDBOX_MSG_SETUP, -e, 0, "seccomp");
                _exit(125);
        }
        /* Announced before exec, so the parent learns of the start before
         * the command can write a byte. */
        send_msg(p->status_fd, SANDBOX_MSG_READY, 0, getpid(), NULL);
        /* execvpe searches the caller's PATH (getenv), and this process's
         * own environment was blanked: the command's is the one to search. */
        environ = (char **)r->envp;
        argv = p->isolate ? selfrun_argv(&p->host->self_run, r->argv, self_argv, 64) : r->argv;
        execvpe(argv[0], argv, r->envp);
fail:
        e = errno;
        send_msg(p->status_fd, SANDBOX_MSG_NOEXEC, e, 0, r->argv[0]);
        _exit(e == ENOENT ? 127 : 126);
}

static void kill_group(int sig)
{
        (void)sig;
        kill(0, SIGKILL);
}

static void reset_signals(void)
{
        struct sigaction sa;
        sigset_t none;
        int s;

        memset(&sa, 0, sizeof(sa));
        sa.sa_handler = SIG_DFL;
        for (s = 1; s < NSIG; s++)
                sigaction(s, &sa, NULL);
        sigemptyset(&none);
        sigprocmask(SIG_SETMASK, &none, NULL);
}

/* Closes every descriptor but those in keep[]: a waiting child must not hold
 * proctor's terminal or other executions' pipes, whose readers wait for EOF. */
static void close_except(int *keep, unsigned n)
{
        unsigned i, j, lo = 0;

        for (i = 1; i < n; i++)
                for (j = i; j > 0 && keep[j - 1] > keep[j]; j--) {
                        int t = keep[j];
                        keep[j] = keep[j - 1];
                        keep[j - 1] = t;
                }
        for (i = 0; i < n; i++) {
                if (keep[i] < 0 || (unsigned)keep[i] < lo)
                        continue;
                if ((unsigned)keep[i] > lo)
                        syscall(SYS_close_range, lo, (unsigned)keep[i] - 1, 0u);
                lo = (unsigned)keep[i] + 1;
        }
        syscall(SYS_close_range, lo, ~0u, 0u);
}

static void keep_plan_fds(const struct sandbox_plan *p)
{
        int keep[5] = {p->ctl_fd, p->status_fd, p->stdin_fd, p->stdout_fd, p->stderr_fd};

        close_except(keep, 5);
}

union fds_cmsg {
        char buf[CMSG_SPACE(SANDBOX_MAX_PROCS_FDS * sizeof(int))];
        struct cmsghdr align;
};

/* Sends one tag byte with n descriptors attached (n may be 0). 0 or -errno. */
static int send_fds(int sock, const char *tag, const int *fds, unsigned n, int flags)
{
        union fds_cmsg cm;
        struct iovec iov = {.iov_base = (void *)tag, .iov_len = 1};
        struct msghdr mh = {.msg_iov = &iov, .msg_iovlen = 1};
        ssize_t w;

        if (n > SANDBOX_MAX_PROCS_FDS)
                return -E2BIG;
        if (n > 0) {
                struct cmsghdr *c;
                memset(&cm, 0, sizeof(cm));
                mh.msg_control = cm.buf;
                mh.msg_controllen = CMSG_SPACE(n * sizeof(int));
                c = CMSG_FIRSTHDR(&mh);
                c->cmsg_level = SOL_SOCKET;
                c->cmsg_type = SCM_RIGHTS;
                c->cmsg_len = CMSG_LEN(n * sizeof(int));
                memcpy(CMSG_DATA(c), fds, n * sizeof(int));
        }
        do
                w = sendmsg(sock, &mh, MSG_NOSIGNAL | flags);
        while (w < 0 && errno == EINTR);
        return w == 1 ? 0 : w < 0 ? -errno : -EIO;
}

/* Receives one tag byte and the descriptors sent with it, at most `max`
 * kept (close-on-exec), *n set to how many. Returns what recvmsg did. */
static ssize_t recv_fds(int sock, char *tag_out, int *fds, unsigned max, unsigned *n, int flags)
{
        union fds_cmsg cm;
        char tag = 0;
        struct iovec iov = {.iov_base = &tag, .iov_len = 1};
        struct msghdr mh = {.msg_iov = &iov,
                            .msg_iovlen = 1,
                            .msg_control = cm.buf,
                            .msg_controllen = sizeof(cm.buf)};
        struct cmsghdr *c;
        ssize_t got;

        do
                got = recvmsg(sock, &mh, MSG_CMSG_CLOEXEC | flags);
        while (got < 0 && errno == EINTR);
        *n = 0;
        *tag_out = tag;
        if (got <= 0)
                return got;
        for (c = CMSG_FIRSTHDR(&mh); c != NULL; c = CMSG_NXTHDR(&mh, c)) {
                unsigned k, have;
                if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS)
                        continue;
                have = (unsigned)((c->cmsg_len - CMSG_LEN(0)) / sizeof(int));
                for (k = 0; k < have; k++) {
                        int fd;
                        memcpy(&fd, CMSG_DATA(c) + k * sizeof(int), sizeof(int));
                        if (*n < max)
                                fds[(*n)++] = fd;
                        else
                                close(fd);
                }
        }
        return got;
}

int sandbox_hand_over(int ctl_fd, int pipe_fd)
{
        return send_fds(ctl_fd, "D", &pipe_fd, 1, MSG_DONTWAIT);
}

/* The tag of sandbox_start_clock's message, followed by the deadline. */
#define CLOCK_TAG 'C'

int sandbox_start_clock(int ctl_fd, uint64_t deadline_us)
{
        char msg[1 + sizeof(deadline_us)] = {CLOCK_TAG};
        ssize_t w;

        memcpy(msg + 1, &deadline_us, sizeof(deadline_us));
        do
                w = send(ctl_fd, msg, sizeof(msg), MSG_NOSIGNAL | MSG_DONTWAIT);
        while (w < 0 && errno == EINTR);
        return w == (ssize_t)sizeof(msg) ? 0 : w < 0 ? -errno : -EIO;
}

/* Child side of sandbox_hand_over and sandbox_start_clock: 1 with *fd set
 * (or left -1 when there was nothing to take yet) or *deadline_us set, 0
 * when the parent closed the socket, -1 on error. */
static int recv_ctl(int ctl, int *fd, uint64_t *deadline_us)
{
        unsigned n;
        char tag;
        ssize_t got = recv_fds(ctl, &tag, fd, 1, &n, MSG_DONTWAIT);

        if (got <= 0)
                return got == 0 ? 0 : errno == EAGAIN ? 1 : -1;
        /* Sent in one piece with its tag: the rest is already there. */
        if (tag == CLOCK_TAG &&
            recv(ctl, deadline_us, sizeof(*deadline_us), MSG_WAITALL) != sizeof(*deadline_us))
                return -1;
        return 1;
}

int sandbox_release(int ctl_fd, const int *join_fds, unsigned n)
{
        return send_fds(ctl_fd, "g", join_fds, n, 0);
}

/* Child side of sandbox_release: false when the parent closed the socket
 * instead (it died or no longer needs this child). */
static bool wait_release(const struct sandbox_plan *p, int *join_fds, unsigned *n)
{
        char tag;

        return recv_fds(p->ctl_fd, &tag, join_fds, SANDBOX_MAX_PROCS_FDS, n, 0) == 1;
}

/* Joins the execution's cgroup from the inside, so that whatever the
 * migration waits for stalls this child, not the supervisor's loop. */
static void join_cgroup(const struct sandbox_plan *p, const int *fds, unsigned n)
{
        unsigned i;

        for (i = 0; i < n; i++) {
                if (write(fds[i], "0", 1) != 1)
                        setup_fail(p, "join cgroup");
                close(fds[i]);
        }
        /* The cgroup namespace made at clone is rooted where the child was
         * born; root a new one at the execution's own group. */
        if (p->isolate && n > 0 && unshare(CLONE_NEWCGROUP) != 0)
                setup_fail(p, "cgroup namespace");
}

struct req_hdr {
        uint32_t magic, argc, envc, ws_mode;
        uint64_t len, ws_keep, ws_dev, ws_ino, tmpfs_bytes, cpu_ms, as_bytes, fsize, deadline_us;
        uint32_t nproc, has_ws, nprotect, exit_channel, no_unix_sockets;
};

#define REQ_MAGIC 0x70726f63u
#define REQ_MAX   (64u << 20)

static size_t strs_len(char *const *v, uint32_t *count)
{
        size_t n = 0;

        *count = 0;
        for (; v != NULL && *v != NULL; v++, (*count)++)
                n += strlen(*v) + 1;
        return n;
}

static char *strs_put(char *o, char *const *v)
{
        for (; v != NULL && *v != NULL; v++) {
                size_t l = strlen(*v) + 1;
                memcpy(o, *v, l);
                o += l;
        }
        return o;
}

static int send_all(int fd, const char *buf, size_t n)
{
        while (n > 0) {
                ssize_t w = send(fd, buf, n, MSG_NOSIGNAL);
                if (w < 0 && errno == EINTR)
                        continue;
                if (w < 0)
                        return -errno;
                buf += w;
                n -= (size_t)w;
        }
        return 0;
}

int sandbox_request_send(int fd, const struct sandbox_request *r)
{
        struct req_hdr h = {.magic = REQ_MAGIC, .ws_mode = (uint32_t)r->ws_mode};
        union {
                char buf[CMSG_SPACE(sizeof(int))];
                struct cmsghdr align;
        } cm;
        struct iovec iov = {.iov_base = &h, .iov_len = sizeof(h)};
        struct msghdr mh = {.msg_iov = &iov, .msg_iovlen = 1};
        size_t ws = r->ws_path != NULL ? strlen(r->ws_path) + 1 : 0;
        char *payload, *o;
        ssize_t w;
        int rc;

        h.len = strs_len(r->argv, &h.argc) + strs_len(r->envp, &h.envc) +
                strs_len(r->protect, &h.nprotect) + ws;
        if (h.len > REQ_MAX)
                return -E2BIG;
        h.ws_keep = r->ws_keep;
        h.ws_dev = r->ws_dev;
        h.ws_ino = r->ws_ino;
        h.tmpfs_bytes = r->tmpfs_bytes;
        h.cpu_ms = r->cpu_ms;
        h.as_bytes = r->as_bytes;
        h.nproc = r->nproc;
        h.fsize = r->fsize;
        h.deadline_us = r->deadline_us;
        h.has_ws = r->ws_path != NULL;
        h.exit_channel = r->exit_channel;
        h.no_unix_sockets = r->no_unix_sockets;
        payload = malloc(h.len ? h.len : 1);
        if (payload == NULL)
                return -ENOMEM;
        o = strs_put(strs_put(strs_put(payload, r->argv), r->envp), r->protect);
        if (ws > 0)
                memcpy(o, r->ws_path, ws);
        if (r->ws_tree_fd >= 0) {
                struct cmsghdr *c;
                memset(&cm, 0, sizeof(cm));
                mh.msg_control = cm.buf;
                mh.msg_controllen = sizeof(cm.buf);
                c = CMSG_FIRSTHDR(&mh);
                c->cmsg_level = SOL_SOCKET;
                c->cmsg_type = SCM_RIGHTS;
                c->cmsg_len = CMSG_LEN(sizeof(int));
                memcpy(CMSG_DATA(c), &r->ws_tree_fd, sizeof(int));
        }
        do
                w = sendmsg(fd, &mh, MSG_NOSIGNAL);
        while (w < 0 && errno == EINTR);
        rc = w < 0 ? -errno : send_all(fd, (char *)&h + w, sizeof(h) - (size_t)w);
        if (rc == 0)
                rc = send_all(fd, payload, h.len);
        free(payload);
        return rc;
}

static int recv_all(int fd, char *buf, size_t n)
{
        while (n > 0) {
                ssize_t got = recv(fd, buf, n, MSG_WAITALL);
                if (got < 0 && errno == EINTR)
                        continue;
                if (got <= 0)
                        return -1;
                buf += got;
                n -= (size_t)got;
        }
        return 0;
}

/* Splits count NUL-terminated strings starting at *cur into v[]. */
static int strs_get(char **cur, char *end, char **v, uint32_t count)
{
        uint32_t i;

        for (i = 0; i < count; i++) {
                char *z = memchr(*cur, '\0', (size_t)(end - *cur));
                if (z == NULL)
                        return -1;
                v[i] = *cur;
                *cur = z + 1;
        }
        v[count] = NULL;
        return 0;
}

/* Child side: the request lands in fresh pages (no heap here). Returns
 * false when the parent closed the socket: the child is not needed. */
static bool recv_request(const struct sandbox_plan *p, struct sandbox_request *r)
{
        struct req_hdr h;
        union {
                char buf[CMSG_SPACE(sizeof(int))];
                struct cmsghdr align;
        } cm;
        struct iovec iov = {.iov_base = &h, .iov_len = sizeof(h)};
        struct msghdr mh = {.msg_iov = &iov,
                            .msg_iovlen = 1,
                            .msg_control = cm.buf,
                            .msg_controllen = sizeof(cm.buf)};
        struct cmsghdr *c;
        char **argv, **envp, **protect, *data, *cur;
        size_t ptrs;
        ssize_t got;

        do
                got = recvmsg(p->ctl_fd, &mh, MSG_WAITALL | MSG_CMSG_CLOEXEC);
        while (got < 0 && errno == EINTR);
        if (got <= 0)
                return false;
        if ((size_t)got < sizeof(h) &&
            recv_all(p->ctl_fd, (char *)&h + got, sizeof(h) - (size_t)got) != 0)
                return false;
        r->ws_tree_fd = -1;
        for (c = CMSG_FIRSTHDR(&mh); c != NULL; c = CMSG_NXTHDR(&mh, c))
                if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS)
                        memcpy(&r->ws_tree_fd, CMSG_DATA(c), sizeof(int));
        errno = EPROTO;
        if (h.magic != REQ_MAGIC || h.len > REQ_MAX || h.argc == 0 || h.argc > REQ_MAX / 2 ||
            h.envc > REQ_MAX / 2 || h.nprotect > 64)
                setup_fail(p, "request");
        ptrs = ((size_t)h.argc + h.envc + h.nprotect + 3) * sizeof(char *);
        argv = mmap(NULL, ptrs + h.len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (argv == MAP_FAILED)
                setup_fail(p, "request memory");
        envp = argv + h.argc + 1;
        protect = envp + h.envc + 1;
        data = (char *)argv + ptrs;
        if (recv_all(p->ctl_fd, data, h.len) != 0)
                return false;
        cur = data;
        errno = EPROTO;
        if (strs_get(&cur, data + h.len, argv, h.argc) != 0 ||
            strs_get(&cur, data + h.len, envp, h.envc) != 0 ||
            strs_get(&cur, data + h.len, protect, h.nprotect) != 0)
                setup_fail(p, "request");
        r->argv = argv;
        r->envp = envp;
        r->protect = protect;
        r->ws_path = h.has_ws ? cur : NULL;
        r->ws_mode = (enum exec_ws_mode)h.ws_mode;
        r->ws_keep = (unsigned long)h.ws_keep;
        r->ws_dev = h.ws_dev;
        r->ws_ino = h.ws_ino;
        r->tmpfs_bytes = h.tmpfs_bytes;
        r->cpu_ms = h.cpu_ms;
        r->as_bytes = h.as_bytes;
        r->nproc = h.nproc;
        r->fsize = h.fsize;
        r->exit_channel = h.exit_channel != 0;
        r->no_unix_sockets = h.no_unix_sockets != 0;
        r->deadline_us = h.deadline_us;
        return true;
}

/* Reaps children without blocking; true once `cmd` was among them. */
static bool reap(pid_t cmd, int *status, bool *none_left)
{
        pid_t w;
        int st;
        bool found = false;

        while ((w = waitpid(-1, &st, WNOHANG)) > 0) {
                if (w == cmd) {
                        *status = st;
                        found = true;
                }
        }
        *none_left = w < 0 && errno == ECHILD;
        return found;
}

/* Empties a handed-over pipe into /dev/null; false at its end. */
static bool drain_pipe(int fd, int null_fd)
{
        char buf[16384];

        for (;;) {
                ssize_t n = null_fd >= 0
                                ? splice(fd, NULL, null_fd, NULL, 1u << 20, SPLICE_F_NONBLOCK)
                                : read(fd, buf, sizeof(buf));
                if (n > 0)
                        continue;
                if (n < 0 && errno == EINTR)
                        continue;
                return n < 0 && errno == EAGAIN;
        }
}

int sandbox_threads_each(pid_t pid, void (*task)(pid_t, const char *, void *),
                         void (*child)(pid_t, void *), void *arg)
{
        char path[96];
        struct dirent *de;
        DIR *d;

        snprintf(path, sizeof(path), "/proc/%d/task", (int)pid);
        if ((d = opendir(path)) == NULL)
                return -errno;
        while ((de = readdir(d)) != NULL) {
                if (de->d_name[0] == '.')
                        continue;
                if (task != NULL)
                        task(pid, de->d_name, arg);
                snprintf(path, sizeof(path), "/proc/%d/task/%.20s/children", (int)pid, de->d_name);
                sandbox_children_each(path, child, arg);
        }
        closedir(d);
        return 0;
}

int sandbox_children_each(const char *path, void (*fn)(pid_t, void *), void *arg)
{
        char buf[512];
        long pid = -1;
        ssize_t n;
        int fd = open(path, O_RDONLY | O_CLOEXEC);

        if (fd < 0)
                return -errno;
        /* pids separated by spaces; one may span two reads */
        while ((n = read(fd, buf, sizeof(buf))) > 0) {
                for (ssize_t i = 0; i < n; i++) {
                        if (buf[i] >= '0' && buf[i] <= '9') {
                                pid = (pid < 0 ? 0 : pid * 10) + (buf[i] - '0');
                        } else if (pid > 0) {
                                fn((pid_t)pid, arg);
                                pid = -1;
                        }
                }
        }
        if (pid > 0)
                fn((pid_t)pid, arg);
        close(fd);
        return 0;
}

static void kill_child(pid_t pid, void *arg)
{
        (void)arg;
        kill(pid, SIGKILL);
}

/* Kills every process of the execution but the init. A sandbox's init is
 * pid 1 of its namespace: kill(-1) reaches every other process in it and
 * nothing beyond. A local init is the subreaper of the command's tree:
 * whatever outlives its parent becomes the init's child, so killing its
 * children again at each wake-up ends the whole tree, process groups and
 * sessions the command made included. */
static void kill_rest(bool isolate)
{
        char path[64];

        if (isolate) {
                kill(-1, SIGKILL);
                return;
        }
        snprintf(path, sizeof(path), "/proc/self/task/%d/children", (int)getpid());
        if (sandbox_children_each(path, kill_child, NULL) < 0)
                kill(0, SIGKILL); /* no list of children: the group, this init too */
}

/* Milliseconds poll may sleep before the deadline (rounded up), -1: none. */
static int until_deadline(uint64_t deadline_us)
{
        uint64_t now = mono_us();

        if (deadline_us == 0)
                return -1;
        if (now >= deadline_us)
                return 0;
        return (deadline_us - now) / 1000 >= INT_MAX ? INT_MAX
                                                     : (int)((deadline_us - now + 999) / 1000);
}

/* The init of an execution: reaps every process until the command has
 * ended; ends everything at the wall clock's deadline (proctor may be
 * stopped, so the init holds it); in a sandbox, drains into /dev/null the
 * output pipes the parent hands over once the command has passed the
 * output cap (ctl, -1 in local mode), so that a flood is paid for by the
 * sandbox's own CPU time, not the supervisor's. A warm sandbox's command
 * starts with no deadline: the parent sends it at the call (ctl's
 * sandbox_start_clock). After a timeout it returns
 * only once nothing is left of the tree. A byte on the exit channel
 * (exit_rd, or -1) is the command's exit status, told before its exit:
 * every other process of the sandbox is killed and it returns at once,
 * returning 1 (whatever wrote it, the sandbox ends; its output pipes reach
 * their end once the killed processes are gone). 0 once the command has
 * ended, -1 when it could not be waited for. */
static int init_wait(const struct sandbox_plan *p, int ctl, int exit_rd, pid_t cmd,
                     uint64_t deadline_us, int *status)
{
        struct pollfd fds[3 + SANDBOX_MAX_DRAIN];
        sigset_t chld;
        int sfd, null_fd = -2, drains[SANDBOX_MAX_DRAIN], ndrain = 0, nfds, i;
        bool none_left, cmd_done = false, timed_out = false;

        sigemptyset(&chld);
        sigaddset(&chld, SIGCHLD);
        sigprocmask(SIG_BLOCK, &chld, NULL);
        sfd = signalfd(-1, &chld, SFD_CLOEXEC | SFD_NONBLOCK);
        for (;;) {
                cmd_done = reap(cmd, status, &none_left) || cmd_done;
                if (cmd_done && (!timed_out || none_left))
                        return 0;
                if (none_left)
                        return -1;
                /* orphans that came to us since */
                if (timed_out)
                        kill_rest(p->isolate);
                /* no signalfd: wait as before, output undrained */
                if (sfd < 0) {
                        pid_t w = waitpid(-1, status, 0);
                        if (w == cmd)
                                return 0;
                        continue;
                }
                fds[0] = (struct pollfd){.fd = sfd, .events = POLLIN};
                fds[1] = (struct pollfd){.fd = ctl, .events = ctl >= 0 ? POLLIN : 0};
                fds[2] = (struct pollfd){.fd = exit_rd, .events = exit_rd >= 0 ? POLLIN : 0};
                for (i = 0; i < ndrain; i++)
                        fds[3 + i] = (struct pollfd){.fd = drains[i], .events = POLLIN};
                nfds = 3 + ndrain;
                if (poll(fds, (nfds_t)nfds, timed_out ? -1 : until_deadline(deadline_us)) < 0 &&
                    errno != EINTR)
                        return -1;
                if (!timed_out && deadline_us != 0 && mono_us() >= deadline_us) {
                        timed_out = true;
                        send_msg(p->status_fd, SANDBOX_MSG_TIMEOUT, 0, 0, NULL);
                        kill_rest(p->isolate);
                }
                if (exit_rd >= 0 && (fds[2].revents & (POLLIN | POLLHUP | POLLERR))) {
                        unsigned char rc;
                        ssize_t n = read(exit_rd, &rc, 1);
                        if (n == 1 && !timed_out) {
                                kill_rest(p->isolate);
                                *status = (int)rc << 8; /* as waitpid's exit(rc) */
                                return 1;
                        }
                        if (n == 0 || (n < 0 && errno != EINTR && errno != EAGAIN)) {
                                close(exit_rd);
                                exit_rd = -1;
                        }
                }
                if (fds[0].revents & POLLIN) {
                        struct signalfd_siginfo si;
                        while (read(sfd, &si, sizeof(si)) > 0)
                                ;
                }
                if (ctl >= 0 && (fds[1].revents & (POLLIN | POLLHUP | POLLERR))) {
                        int fd = -1;
                        if (recv_ctl(ctl, &fd, &deadline_us) <= 0) {
                                ctl = -1; /* the parent let go: nothing more comes */
                        } else if (fd >= 0 && ndrain < SANDBOX_MAX_DRAIN) {
                                drains[ndrain++] = fd;
                        } else if (fd >= 0) {
                                close(fd);
                        }
                }
                if (ndrain > 0 && null_fd == -2)
                        null_fd = open("/dev/null", O_WRONLY | O_CLOEXEC);
                for (i = ndrain - 1; i >= 0; i--) {
                        if (fds[3 + i].revents == 0 && i < nfds - 3)
                                continue;
                        if (!drain_pipe(drains[i], null_fd)) {
                                close(drains[i]);
                                drains[i] = drains[--ndrain];
                        }
                }
        }
}

void sandbox_child(const struct sandbox_plan *p)
{
        struct sandbox_request r;
        int keep_status[1] = {p->status_fd};
        int join[SANDBOX_MAX_PROCS_FDS];
        unsigned njoin;
        int self = -1;
        pid_t cmd;
        int st, told, chan[2] = {-1, -1};

        reset_signals();
        env_blank_process_strings();
        if (p->isolate) {
                prctl(PR_SET_PDEATHSIG, SIGKILL);
        } else {
                struct sigaction sa;
                memset(&sa, 0, sizeof(sa));
                sa.sa_handler = kill_group;
                sigaction(SIGTERM, &sa, NULL);
                prctl(PR_SET_PDEATHSIG, SIGTERM);
        }
        keep_plan_fds(p);
        /* The parent holds the only other end: EOF means it died or no
         * longer needs this child. */
        if (!wait_release(p, join, &njoin))
                _exit(125);
        /* The ids are mapped (do_clone): from here on this copy of proctor's
         * memory, keys included, is closed to every other process. */
        prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
        if (setsid() < 0)
                setup_fail(p, "setsid");
        /* proctor's own binary is taken while the child still has its
         * creator's ids (it may sit in a directory only they can enter) and
         * before /tmp is covered (it may live there). */
        if (p->isolate) {
                self = (int)syscall(SYS_open_tree, AT_FDCWD, p->host->self_exe,
                                    OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC);
                if (self < 0)
                        setup_fail(p, "open proctor's binary");
                take_image_trees(p);
        }
        if (p->isolate && p->switch_ids) {
                switch_ids(p);
                /* A change of credentials clears the parent-death signal. If
                 * the parent died in between, the request socket says so. */
                prctl(PR_SET_PDEATHSIG, SIGKILL);
        }
        join_cgroup(p, join, njoin);
        if (p->isolate)
                build_base(p, self);
        send_msg(p->status_fd, SANDBOX_MSG_WAITING, 0, 0, NULL);
        if (!recv_request(p, &r))
                _exit(0);
        /* A sandbox's init keeps the socket: the parent hands it the output
         * pipes a command floods past the cap (see drain_loop). */
        if (!p->isolate)
                close(p->ctl_fd);
        if (!p->isolate)
                prctl(PR_SET_CHILD_SUBREAPER, 1);
        else
                finish_root(p, &r);

        if (p->isolate && r.exit_channel && pipe2(chan, O_CLOEXEC | O_NONBLOCK) != 0)
                setup_fail(p, "exit channel");
        cmd = vfork();
        if (cmd < 0)
                setup_fail(p, "fork command");
        if (cmd == 0)
                run_command(p, &r, chan[1]);
        if (p->isolate) {
                int keep_init[3] = {p->status_fd, p->ctl_fd, chan[0]};
                close_except(keep_init, 3);
        } else {
                close_except(keep_status, 1);
        }
        told = init_wait(p, p->isolate ? p->ctl_fd : -1, chan[0], cmd, r.deadline_us, &st);
        if (told < 0)
                _exit(0);
        /* err 1: told on the exit channel, the command may still be exiting */
        send_msg(p->status_fd, SANDBOX_MSG_STATUS, told, st, NULL);
        if (!p->isolate)
                kill(0, SIGKILL); /* leftovers of the command's process group */
        _exit(0);
}
