/* workspace: the host directory a session's executions work in, opened once
 * so that every call mounts the same directory, whatever is renamed or
 * replaced by a symbolic link on the way to it later. Decides which host
 * ids a sandbox acts on it with: never root, never an arbitrary group. */
#include "exec/native/workspace.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pwd.h>
#include <sched.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "exec/native/sandbox.h"

/* The owner's primary group from the user database, so that a directory
 * given to a privileged group (say shadow) lends the sandbox nothing; root's
 * group and unknown owners get nogroup. */
static uint32_t owner_group(uid_t owner)
{
        struct passwd pw, *found = NULL;
        char buf[4096];

        if (getpwuid_r(owner, &pw, buf, sizeof(buf), &found) != 0 || found == NULL ||
            pw.pw_gid == 0)
                return EXEC_NOBODY_ID;
        return pw.pw_gid;
}

#ifndef OPEN_TREE_CLONE
#define OPEN_TREE_CLONE 1
#endif
#ifndef MOUNT_ATTR_IDMAP
#define MOUNT_ATTR_IDMAP 0x00100000
#endif

struct ws_mount_attr {
        uint64_t attr_set, attr_clr, propagation, userns_fd;
};

static int write_map(pid_t pid, const char *which)
{
        char path[64], map[32];
        int fd, n, rc = 0;

        snprintf(path, sizeof(path), "/proc/%d/%s", (int)pid, which);
        n = snprintf(map, sizeof(map), "0 %u 1\n", EXEC_NOBODY_ID);
        fd = open(path, O_WRONLY | O_CLOEXEC);
        if (fd < 0)
                return -errno;
        if (write(fd, map, (size_t)n) != n)
                rc = -errno;
        close(fd);
        return rc;
}

/* A user namespace whose only ids are 0, mapped to host nobody: a mount
 * idmapped through it shows root's files as nobody's and stores what nobody
 * makes there as root's. A user namespace is had only by a process in it: a
 * child made for the purpose waits in one until its ids are written and the
 * namespace opened. It shares proctor's memory (no page tables copied: this
 * is on `proctor exec`'s path) and touches none of it but its stack: it
 * closes its copy of the gate's write end, reads until the parent closes
 * its own (the parent is done), and exits; raw calls only. */
static int wait_gate(void *arg)
{
        const int *gate = arg;
        char c;

        syscall(SYS_close, gate[1]);
        syscall(SYS_read, gate[0], &c, 1);
        syscall(SYS_exit, 0);
        return 0;
}

static int nobody_root_userns(void)
{
        enum { STACK = 64 << 10 };
        char path[64];
        int gate[2], fd = -1, rc;
        void *stack;
        pid_t pid;

        if (pipe2(gate, O_CLOEXEC) != 0)
                return -errno;
        stack = mmap(NULL, STACK, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK,
                     -1, 0);
        if (stack == MAP_FAILED) {
                rc = -errno;
                close(gate[0]);
                close(gate[1]);
                return rc;
        }
        pid = clone(wait_gate, (char *)stack + STACK, CLONE_NEWUSER | CLONE_VM | SIGCHLD, gate);
        rc = pid < 0 ? -errno : 0;
        close(gate[0]);
        if (rc == 0 && (rc = write_map(pid, "uid_map")) == 0 &&
            (rc = write_map(pid, "gid_map")) == 0) {
                snprintf(path, sizeof(path), "/proc/%d/ns/user", (int)pid);
                fd = open(path, O_RDONLY | O_CLOEXEC);
                rc = fd < 0 ? -errno : 0;
        }
        close(gate[1]);
        if (pid > 0)
                while (waitpid(pid, NULL, 0) < 0 && errno == EINTR)
                        ;
        munmap(stack, STACK);
        return rc < 0 ? rc : fd;
}

bool exec_workspace_as_root(const struct exec_workspace *w)
{
        return w->idmap_fd >= 0;
}

int exec_workspace_tree(struct exec_workspace *w, char *err, size_t errlen)
{
        struct ws_mount_attr attr = {.attr_set = MOUNT_ATTR_IDMAP};
        int tree, e;

        tree = (int)syscall(SYS_open_tree, w->fd, "", AT_EMPTY_PATH | OPEN_TREE_CLONE | O_CLOEXEC);
        if (tree < 0) {
                e = errno;
                snprintf(err, errlen, "cannot take the workspace %.200s: %s", w->path, strerror(e));
                return -e;
        }
        if (!w->idmap_tried && w->st.st_uid == 0) {
                /* Once: where the filesystem takes no idmapped mount (say
                 * NFS), sandboxes act on the workspace as nobody, as any
                 * other user would. */
                w->idmap_tried = true;
                w->idmap_fd = nobody_root_userns();
                attr.userns_fd = (uint64_t)w->idmap_fd;
                if (w->idmap_fd >= 0 &&
                    syscall(SYS_mount_setattr, tree, "", AT_EMPTY_PATH, &attr, sizeof(attr)) == 0)
                        return tree;
                if (w->idmap_fd >= 0)
                        close(w->idmap_fd);
                w->idmap_fd = -1;
                return tree;
        }
        attr.userns_fd = (uint64_t)w->idmap_fd;
        if (w->idmap_fd >= 0 &&
            syscall(SYS_mount_setattr, tree, "", AT_EMPTY_PATH, &attr, sizeof(attr)) != 0) {
                e = errno;
                close(tree);
                snprintf(err, errlen, "cannot idmap the workspace %.200s: %s", w->path,
                         strerror(e));
                return -e;
        }
        return tree;
}

int exec_workspace_open(const char *path, struct exec_workspace **out, char *err, size_t errlen)
{
        const char *p = path != NULL ? path : ".";
        struct exec_workspace *w = calloc(1, sizeof(*w));
        char link[64];
        ssize_t n;
        int e;

        if (w == NULL)
                return -ENOMEM;
        w->idmap_fd = -1;
        /* The last part must be the directory itself: a symbolic link there
         * is how a sandbox that could write the parent would redirect the
         * next session (say to /etc). */
        w->fd = open(p, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (w->fd < 0) {
                e = errno;
                if (e == ENOTDIR && readlink(p, link, sizeof(link)) >= 0)
                        snprintf(err, errlen,
                                 "workspace %s is a symbolic link: give the directory itself", p);
                else
                        snprintf(err, errlen, "workspace %s: %s", p, strerror(e));
                free(w);
                return -e;
        }
        snprintf(link, sizeof(link), "/proc/self/fd/%d", w->fd);
        n = readlink(link, w->path, sizeof(w->path) - 1);
        if (n <= 0 || w->path[0] != '/' || fstat(w->fd, &w->st) != 0) {
                e = n <= 0 ? errno : EIO;
                snprintf(err, errlen, "workspace %s: cannot resolve it: %s", p, strerror(e));
                exec_workspace_free(w);
                return -e;
        }
        w->path[n] = '\0';
        w->keep = sandbox_locked_flags(w->path);
        if (geteuid() == 0) {
                /* Root acts on a workspace only as its owner would. On a
                 * root-owned one its sandboxes run as nobody, through a
                 * mount that makes nobody the owner of root's files there
                 * (exec_workspace_tree): root's rights in the workspace,
                 * nobody's everywhere else. */
                w->uid = w->st.st_uid != 0 ? w->st.st_uid : EXEC_NOBODY_ID;
                w->gid = w->st.st_uid != 0 ? owner_group(w->st.st_uid) : EXEC_NOBODY_ID;
        } else {
                w->uid = geteuid();
                w->gid = getegid();
        }
        *out = w;
        return 0;
}

static void user_name(uid_t uid, char *buf, size_t len)
{
        struct passwd pw, *found = NULL;
        char tmp[4096];

        if (getpwuid_r(uid, &pw, tmp, sizeof(tmp), &found) == 0 && found != NULL)
                snprintf(buf, len, "%s", pw.pw_name);
        else
                snprintf(buf, len, "uid %u", (unsigned)uid);
}

/* The permission bits that apply to ids `uid`/`gid` (no supplementary
 * groups: root's sandboxes drop them). */
static unsigned bits_for(const struct stat *st, uid_t uid, gid_t gid)
{
        if (st->st_uid == uid)
                return (st->st_mode >> 6) & 7;
        if (st->st_gid == gid)
                return (st->st_mode >> 3) & 7;
        return st->st_mode & 7;
}

int exec_workspace_usable(struct exec_workspace *w, enum exec_ws_mode mode, bool native, char *err,
                          size_t errlen)
{
        bool rw = mode == EXEC_WS_RW;
        char owner[64], actor[80];
        uid_t uid = w->uid;
        bool enter, write;
        int tree;

        if (mode == EXEC_WS_NONE)
                return 0;
        if (geteuid() != 0) {
                /* The child finds the path in its own namespace, as you:
                 * every directory on the way counts, groups too. */
                enter = faccessat(AT_FDCWD, w->path, X_OK, AT_EACCESS) == 0;
                write = faccessat(AT_FDCWD, w->path, W_OK, AT_EACCESS) == 0;
                user_name(geteuid(), actor, sizeof(actor));
        } else {
                if (native && w->st.st_uid == 0 &&
                    (tree = exec_workspace_tree(w, err, errlen)) >= 0)
                        close(tree); /* learns whether the filesystem takes the idmap */
                if (native && exec_workspace_as_root(w))
                        uid = 0;
                enter = (bits_for(&w->st, uid, w->gid) & 1) != 0;
                write = (bits_for(&w->st, uid, w->gid) & 2) != 0;
                if (uid == EXEC_NOBODY_ID)
                        snprintf(actor, sizeof(actor), "nobody");
                else
                        user_name(uid, actor, sizeof(actor));
        }
        if (enter && (write || !rw))
                return 0;
        user_name(w->st.st_uid, owner, sizeof(owner));
        if (!enter)
                snprintf(err, errlen,
                         "workspace %s (%s's, mode %04o) cannot be entered by %s, whom sandboxes "
                         "act as there: give a directory %s can enter (--workspace DIR), or use "
                         "--mode local",
                         w->path, owner, (unsigned)(w->st.st_mode & 07777), actor, actor);
        else
                snprintf(err, errlen,
                         "workspace %s (%s's, mode %04o) is not writable by %s, whom sandboxes "
                         "act as there: use --workspace-mode ro (or overlay, writes discarded), or "
                         "a directory %s can write%s",
                         w->path, owner, (unsigned)(w->st.st_mode & 07777), actor, actor,
                         /* a container acts as nobody; proctor's own sandbox as root there */
                         !native && geteuid() == 0 && w->st.st_uid == 0
                             ? ", or leave out --runtime: proctor's own sandbox acts as root in a "
                               "root-owned workspace"
                             : "");
        return -EACCES;
}

void exec_workspace_free(struct exec_workspace *w)
{
        if (w == NULL)
                return;
        if (!ws_quota_release(w))
                return; /* the pool's thread still reads it: the walk frees it */
        if (w->fd >= 0)
                close(w->fd);
        if (w->idmap_fd >= 0)
                close(w->idmap_fd);
        free(w);
}

const char *exec_workspace_path(const struct exec_workspace *w)
{
        return w->path;
}

void exec_workspace_ids(const struct exec_workspace *w, uint32_t *uid, uint32_t *gid)
{
        *uid = w->uid;
        *gid = w->gid;
}

/* mkdir -p, each directory made 0700 (proctor's own directories). */
static int make_dirs(const char *path)
{
        char buf[PATH_MAX];
        size_t i;

        snprintf(buf, sizeof(buf), "%s", path);
        for (i = 1; buf[i] != '\0'; i++) {
                if (buf[i] != '/')
                        continue;
                buf[i] = '\0';
                if (mkdir(buf, 0700) != 0 && errno != EEXIST)
                        return -errno;
                buf[i] = '/';
        }
        return mkdir(buf, 0700) != 0 && errno != EEXIST ? -errno : 0;
}

/* The canonical form of `path`, whose last parts need not exist yet: the
 * longest existing prefix resolved, the rest appended as written. */
static int canonical(const char *path, char *out, size_t len)
{
        char head[PATH_MAX], real[PATH_MAX];
        char *cut = NULL;

        snprintf(head, sizeof(head), "%s", path);
        while (realpath(head, real) == NULL) {
                char *slash = strrchr(head, '/');
                if (slash == NULL || slash == head)
                        return -ENOENT;
                if (cut != NULL)
                        *cut = '/';
                *slash = '\0';
                cut = slash;
        }
        if (cut != NULL)
                *cut = '/';
        return snprintf(out, len, "%s%s", real, cut != NULL ? cut : "") >= (int)len ? -ENAMETOOLONG
                                                                                    : 0;
}

int exec_workspace_protect(struct exec_workspace *w, const char *host_path, bool is_dir, char *err,
                           size_t errlen)
{
        char full[PATH_MAX];
        size_t n = strlen(w->path);
        int rc;

        if (host_path == NULL || host_path[0] != '/')
                return 0;
        if ((rc = canonical(host_path, full, sizeof(full))) < 0)
                return 0; /* nothing of it exists: it cannot be in the workspace */
        if (strcmp(w->path, "/") != 0 && (strncmp(full, w->path, n) != 0 || full[n] != '/'))
                return 0;
        if (strcmp(w->path, "/") == 0)
                n = 0;
        for (unsigned i = 0; i < w->nprotect; i++) {
                size_t l = strlen(w->protect[i]);
                /* Already inside a protected directory, or the same path. */
                if (strncmp(full + n + 1, w->protect[i], l) == 0 &&
                    (full[n + 1 + l] == '/' || full[n + 1 + l] == '\0'))
                        return 0;
        }
        if (w->nprotect == EXEC_WS_MAX_PROTECT) {
                snprintf(err, errlen, "too many of proctor's own paths inside the workspace");
                return -ENOSPC;
        }
        if (is_dir && (rc = make_dirs(full)) < 0) {
                snprintf(err, errlen, "cannot make %s: %s", full, strerror(-rc));
                return rc;
        }
        snprintf(w->protect[w->nprotect++], PATH_MAX, "%s", full + n + 1);
        return 0;
}
