/* sandbox: the child side of an execution. The parent clones, writes the
 * id maps, then releases the child, which builds a fresh root (sandbox
 * mode), becomes the init and launches the command. Linear on purpose; runs
 * between clone and exec, so raw syscalls only and nothing allocates. */
#include "exec/sandbox.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/syscall.h>
#include <grp.h>
#include <linux/capability.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "exec/seccomp.h"

#ifndef MOVE_MOUNT_F_EMPTY_PATH
#define MOVE_MOUNT_F_EMPTY_PATH 0x00000004
#endif
#ifndef OPEN_TREE_CLONE
#define OPEN_TREE_CLONE 1
#endif
#ifndef OPEN_TREE_CLOEXEC
#define OPEN_TREE_CLOEXEC O_CLOEXEC
#endif
#ifndef CLOSE_RANGE_CLOEXEC
#define CLOSE_RANGE_CLOEXEC (1U << 2)
#endif

#define SB_MAX_FILES 24
#define SB_MAX_LINKS 24
#define SB_MAX_BINDS 16

struct sb_file {
        char path[48]; /* relative to the new root */
        char *data;
        size_t len;
};

struct sb_link {
        char path[48];
        char target[PATH_MAX];
};

struct sb_bind {
        char src[48];  /* absolute host path */
        char path[48]; /* relative to the new root */
        unsigned long keep; /* locked flags of the source mount to keep */
        bool is_dir;
};

struct sandbox_host {
        struct sb_file files[SB_MAX_FILES];
        struct sb_link links[SB_MAX_LINKS];
        struct sb_bind binds[SB_MAX_BINDS];
        unsigned nfiles, nlinks, nbinds;
};

/* /etc entries a program may read; /etc/passwd, group, hostname and hosts
 * are written per sandbox instead. Anything else in /etc stays invisible. */
static const char *const etc_allow[] = {
        "/etc/ld.so.cache", "/etc/ld.so.conf", "/etc/ld.so.conf.d", "/etc/alternatives",
        "/etc/localtime",   "/etc/timezone",   "/etc/nsswitch.conf", "/etc/bash.bashrc",
        "/etc/profile",     "/etc/inputrc",    "/etc/os-release",    "/etc/debian_version",
        "/etc/shells",      "/etc/protocols",  "/etc/services",      "/etc/mime.types",
        "/etc/python3",     "/etc/python3.11", "/etc/python3.12",    "/etc/python3.13",
        "/etc/gitconfig",   "/etc/magic",      "/etc/locale.alias",
        "/etc/environment",
};

static const char *const top_links[] = {"/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32"};

/* Mount flags the kernel locks on a bind made inside a user namespace: a
 * remount must keep them or it fails with EPERM. */
unsigned long sandbox_locked_flags(const char *path)
{
        struct statvfs sv;
        unsigned long f = 0;

        if (statvfs(path, &sv) != 0)
                return 0;
        if (sv.f_flag & ST_NOEXEC)
                f |= MS_NOEXEC;
        if (sv.f_flag & ST_NOATIME)
                f |= MS_NOATIME;
        if (sv.f_flag & ST_NODIRATIME)
                f |= MS_NODIRATIME;
        if (sv.f_flag & ST_RELATIME)
                f |= MS_RELATIME;
        return f;
}

static int host_add_bind(struct sandbox_host *h, const char *src, bool is_dir)
{
        struct sb_bind *b;

        if (h->nbinds == SB_MAX_BINDS)
                return -ENOSPC;
        b = &h->binds[h->nbinds++];
        snprintf(b->src, sizeof(b->src), "%s", src);
        snprintf(b->path, sizeof(b->path), "%s", src + 1);
        b->keep = sandbox_locked_flags(src);
        b->is_dir = is_dir;
        return 0;
}

static int host_add_link(struct sandbox_host *h, const char *path)
{
        struct sb_link *l;
        ssize_t n;

        if (h->nlinks == SB_MAX_LINKS)
                return -ENOSPC;
        l = &h->links[h->nlinks];
        n = readlink(path, l->target, sizeof(l->target) - 1);
        if (n < 0)
                return -errno;
        l->target[n] = '\0';
        snprintf(l->path, sizeof(l->path), "%s", path + 1);
        h->nlinks++;
        return 0;
}

static int host_add_file(struct sandbox_host *h, const char *path, off_t size)
{
        struct sb_file *f;
        ssize_t got = 0;
        int fd;

        if (h->nfiles == SB_MAX_FILES || size > (1 << 20))
                return -ENOSPC;
        fd = open(path, O_RDONLY | O_CLOEXEC);
        if (fd < 0)
                return -errno;
        f = &h->files[h->nfiles];
        f->data = malloc(size ? (size_t)size : 1);
        if (f->data == NULL) {
                close(fd);
                return -ENOMEM;
        }
        while (got < size) {
                ssize_t n = read(fd, f->data + got, (size_t)(size - got));
                if (n <= 0)
                        break;
                got += n;
        }
        close(fd);
        f->len = (size_t)got;
        snprintf(f->path, sizeof(f->path), "%s", path + 1);
        h->nfiles++;
        return 0;
}

int sandbox_host_open(struct sandbox_host **out, char *err, size_t errlen)
{
        struct sandbox_host *h = calloc(1, sizeof(*h));
        struct stat st;
        size_t i;
        int rc = 0;

        if (h == NULL)
                return -ENOMEM;
        rc = host_add_bind(h, "/usr", true);
        for (i = 0; i < sizeof(top_links) / sizeof(top_links[0]) && rc == 0; i++) {
                if (lstat(top_links[i], &st) != 0)
                        continue;
                if (S_ISLNK(st.st_mode))
                        rc = host_add_link(h, top_links[i]);
                else if (S_ISDIR(st.st_mode))
                        rc = host_add_bind(h, top_links[i], true);
        }
        if (rc == 0 && stat("/usr/local", &st) == 0) {
                struct stat usr;
                if (stat("/usr", &usr) == 0 && usr.st_dev != st.st_dev)
                        rc = host_add_bind(h, "/usr/local", true);
        }
        for (i = 0; i < sizeof(etc_allow) / sizeof(etc_allow[0]) && rc == 0; i++) {
                if (lstat(etc_allow[i], &st) != 0)
                        continue;
                if (S_ISLNK(st.st_mode))
                        rc = host_add_link(h, etc_allow[i]);
                else if (S_ISDIR(st.st_mode))
                        rc = host_add_bind(h, etc_allow[i], true);
                else if (S_ISREG(st.st_mode))
                        rc = host_add_file(h, etc_allow[i], st.st_size);
        }
        if (rc < 0) {
                snprintf(err, errlen, "cannot prepare the sandbox root from the host: %s",
                         strerror(-rc));
                sandbox_host_free(h);
                return rc;
        }
        *out = h;
        return 0;
}

void sandbox_host_free(struct sandbox_host *h)
{
        unsigned i;

        if (h == NULL)
                return;
        for (i = 0; i < h->nfiles; i++)
                free(h->files[i].data);
        free(h);
}

int sandbox_msg_read(int fd, struct sandbox_msg *m)
{
        ssize_t n;

        do
                n = read(fd, m, sizeof(*m));
        while (n < 0 && errno == EINTR);
        if (n < 0)
                return -errno;
        if (n == 0)
                return 0;
        if ((size_t)n != sizeof(*m))
                return -EPROTO;
        m->text[sizeof(m->text) - 1] = '\0';
        return 1;
}

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

static void write_file(const struct sandbox_plan *p, const char *path, const char *data,
                       size_t len)
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

/* Binds src onto path (relative to the new root) read-only, nosuid, nodev. */
static void bind_ro(const struct sandbox_plan *p, const char *src, const char *path,
                    unsigned long keep, bool is_dir)
{
        if (is_dir) {
                if (mkdir(path, 0755) != 0 && errno != EEXIST)
                        setup_fail(p, path);
        } else {
                write_file(p, path, "", 0);
        }
        if (mount(src, path, NULL, MS_BIND, NULL) != 0)
                setup_fail(p, src);
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
                {"/proc/self/fd", "dev/fd"},   {"/proc/self/fd/0", "dev/stdin"},
                {"/proc/self/fd/1", "dev/stdout"}, {"/proc/self/fd/2", "dev/stderr"},
                {"/tmp", "dev/shm"},
        };
        size_t i;

        for (i = 0; i < sizeof(devs) / sizeof(devs[0]); i++) {
                write_file(p, devs[i] + 1, "", 0);
                if (mount(devs[i], devs[i] + 1, NULL, MS_BIND, NULL) != 0)
                        setup_fail(p, devs[i]);
        }
        for (i = 0; i < sizeof(links) / sizeof(links[0]); i++)
                if (symlink(links[i][0], links[i][1]) != 0)
                        setup_fail(p, links[i][1]);
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
static void mount_workspace(const struct sandbox_plan *p, int tree)
{
        char opts[160];
        unsigned long ro = p->ws_mode == EXEC_WS_RO ? MS_RDONLY : 0;

        if (tree < 0)
                return;
        if (mkdir("workspace", 0755) != 0)
                setup_fail(p, "workspace");
        if (p->ws_mode == EXEC_WS_OVERLAY) {
                static const char *const ovl[] = {".ovl", NULL};
                static const char *const sub[] = {".ovl/u", ".ovl/w", ".ovl/l", NULL};
                mkdirs(p, ovl);
                mount_tmpfs(p, ".ovl", "0755", p->tmpfs_bytes);
                mkdirs(p, sub);
                attach_tree(p, tree, ".ovl/l");
                snprintf(opts, sizeof(opts),
                         "lowerdir=/tmp/.ovl/l,upperdir=/tmp/.ovl/u,workdir=/tmp/.ovl/w");
                if (mount("overlay", "workspace", "overlay", MS_NOSUID | MS_NODEV, opts) != 0)
                        setup_fail(p, "overlay workspace");
                if (umount2(".ovl/l", MNT_DETACH) != 0 || umount2(".ovl", MNT_DETACH) != 0 ||
                    rmdir(".ovl") != 0)
                        setup_fail(p, "hide overlay layers");
                return;
        }
        attach_tree(p, tree, "workspace");
        if (mount(NULL, "workspace", NULL,
                  MS_BIND | MS_REMOUNT | MS_NOSUID | MS_NODEV | ro | p->ws_keep, NULL) != 0)
                setup_fail(p, "workspace remount");
}

/* The fresh root: a tmpfs staged over /tmp in the new mount namespace
 * (host /tmp is untouched), filled, pivoted into, old root detached. */
static void build_root(const struct sandbox_plan *p)
{
        static const char *const dirs[] = {"usr", "etc", "proc", "dev", "tmp", NULL};
        const struct sandbox_host *h = p->host;
        int tree = p->ws_idmap_fd;
        unsigned i;

        if (sethostname("sandbox", 7) != 0)
                setup_fail(p, "sethostname");
        if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) != 0)
                setup_fail(p, "make / private");
        if (tree < 0 && p->ws_path != NULL) {
                tree = (int)syscall(SYS_open_tree, AT_FDCWD, p->ws_path,
                                    OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC);
                if (tree < 0)
                        setup_fail(p, "open workspace");
        }
        mount_tmpfs(p, "/tmp", "0755", 4u << 20);
        if (chdir("/tmp") != 0)
                setup_fail(p, "chdir new root");
        mkdirs(p, dirs);
        for (i = 0; i < h->nbinds; i++)
                bind_ro(p, h->binds[i].src, h->binds[i].path, h->binds[i].keep,
                        h->binds[i].is_dir);
        for (i = 0; i < h->nlinks; i++)
                if (symlink(h->links[i].target, h->links[i].path) != 0)
                        setup_fail(p, h->links[i].path);
        populate_etc(p);
        populate_dev(p);
        if (mount("proc", "proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL) != 0)
                setup_fail(p, "mount /proc");
        mount_tmpfs(p, "tmp", "1777", p->tmpfs_bytes);
        mount_workspace(p, tree);
        if (syscall(SYS_pivot_root, ".", ".") != 0)
                setup_fail(p, "pivot_root");
        if (umount2(".", MNT_DETACH) != 0)
                setup_fail(p, "detach old root");
        if (chdir("/") != 0)
                setup_fail(p, "chdir /");
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

/* In the vfork child: become the command. Reports an exec failure. */
__attribute__((noreturn)) static void run_command(const struct sandbox_plan *p)
{
        const char *cwd = p->isolate ? (p->ws_mode == EXEC_WS_NONE ? "/tmp" : "/workspace")
                                     : p->local_cwd;
        int e;

        if (dup2(p->stdin_fd, 0) < 0 || dup2(p->stdout_fd, 1) < 0 || dup2(p->stderr_fd, 2) < 0)
                goto fail;
        if (cwd != NULL && chdir(cwd) != 0)
                goto fail;
        if (p->cpu_ms > 0) {
                uint64_t s = (p->cpu_ms + 999) / 1000;
                set_limit(RLIMIT_CPU, s, s + 1);
        }
        if (p->as_bytes > 0)
                set_limit(RLIMIT_AS, p->as_bytes, p->as_bytes);
        if (p->nproc > 0)
                set_limit(RLIMIT_NPROC, p->nproc, p->nproc);
        if (p->isolate)
                set_limit(RLIMIT_CORE, 0, 0);
        syscall(SYS_close_range, 3u, ~0u, CLOSE_RANGE_CLOEXEC);
        if (p->seccomp != NULL && (e = seccomp_policy_load(p->seccomp)) < 0) {
                errno = -e;
                send_msg(p->status_fd, SANDBOX_MSG_SETUP, errno, 0, "seccomp");
                _exit(125);
        }
        execvpe(p->argv[0], p->argv, p->envp);
fail:
        e = errno;
        send_msg(p->status_fd, SANDBOX_MSG_NOEXEC, e, 0, p->argv[0]);
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

void sandbox_child(const struct sandbox_plan *p)
{
        char go;
        pid_t cmd;
        int st;

        reset_signals();
        if (p->isolate) {
                prctl(PR_SET_PDEATHSIG, SIGKILL);
        } else {
                struct sigaction sa;
                memset(&sa, 0, sizeof(sa));
                sa.sa_handler = kill_group;
                sigaction(SIGTERM, &sa, NULL);
                prctl(PR_SET_PDEATHSIG, SIGTERM);
        }
        /* The parent holds the only write end: EOF means it died. */
        if (read(p->sync_fd, &go, 1) != 1)
                _exit(125);
        close(p->sync_fd);
        if (setsid() < 0)
                setup_fail(p, "setsid");
        if (p->isolate && p->switch_ids)
                switch_ids(p);
        if (!p->isolate)
                prctl(PR_SET_CHILD_SUBREAPER, 1);
        else
                build_root(p);

        cmd = vfork();
        if (cmd < 0)
                setup_fail(p, "fork command");
        if (cmd == 0)
                run_command(p);
        send_msg(p->status_fd, SANDBOX_MSG_READY, 0, cmd, NULL);
        /* Hold nothing of the parent's: other executions wait for EOF on
         * pipes this process inherited. */
        if (p->status_fd > 0)
                syscall(SYS_close_range, 0u, (unsigned)p->status_fd - 1, 0u);
        syscall(SYS_close_range, (unsigned)p->status_fd + 1, ~0u, 0u);
        for (;;) {
                pid_t w = waitpid(-1, &st, 0);
                if (w == cmd)
                        break;
                if (w < 0 && errno == ECHILD)
                        _exit(0);
        }
        send_msg(p->status_fd, SANDBOX_MSG_STATUS, 0, st, NULL);
        if (!p->isolate)
                kill(0, SIGKILL); /* leftovers of the command's process group */
        _exit(0);
}
