/* quota: the session's disk quota on what sandboxes add to the workspace,
 * measured by walking it. Never follows a link nor leaves the workspace's
 * mount; runs its walks on the loop's thread pool. */
#include "exec/native/workspace.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <sys/xattr.h>
#include <time.h>
#include <unistd.h>

#include "exec/native/sandbox.h"

#ifndef OPEN_TREE_CLONE
#define OPEN_TREE_CLONE 1
#endif

/* What every inode costs at least: an empty file, a link or a directory
 * takes an inode and no block on most filesystems, and a filesystem's
 * inodes run out long before its bytes if only bytes are counted. One
 * 4 KiB block: a 10M quota allows 2,560 empty files. */
#define INODE_CHARGE    4096u
#define WALK_MAX_DEVS   64   /* the workspace's and its btrfs subvolumes' */
#define WALK_MIN_GAP_MS 1000 /* between walks started by the sampler */
/* A walk at least this often while sandboxes write, whatever the
 * filesystem's usage says (btrfs counts written data there only once it
 * reaches the disk), but never taking more than a tenth of the time. */
#define WALK_MAX_GAP_MS     5000
#define WALK_DUTY           10
#define WALK_INLINE_ENTRIES 1000 /* a base walk this small runs on the loop */
/* Growth tolerated while over the quota: a file removed and written
 * again, directory blocks. */
#define WALK_GROWTH_SLACK (1u << 20)

struct ws_quota {
        uv_loop_t *loop;
        uint64_t limit;
        void (*over_cb)(struct exec_workspace *w, void *ud);
        size_t (*pids_cb)(struct exec_workspace *w, void *ud, pid_t *out, size_t max);
        void *ud;
        /* A copy of the workspace's mount without what is mounted inside it
         * (root only), which is what a sandbox sees; else -1 and the walk
         * skips other mounts. */
        int tree_fd;
        pid_t *pids; /* the inits of the executions, for the running walk */
        size_t npids, pids_cap;
        bool base_known, walking, over;
        unsigned walks;    /* ended, for the exit's report */
        uint64_t base;     /* the workspace's size when the quota started */
        uint64_t used;     /* its size at the last walk */
        uint64_t fs_mark;  /* the filesystem's usage when that walk started */
        uint64_t walk_fs;  /* the filesystem's usage when the running walk started */
        uint64_t walk_res; /* the running walk's result (written by the worker) */
        int walk_err;
        uint64_t last_walk_ms;
        uint64_t walk_ms; /* how long the last walk took */
        uint64_t over_at; /* the size past which (and the slack) executions stop */
        uv_work_t work;
};

/* Inodes counted once: those with several links, and deleted files that
 * several descriptors hold. Open addressing on (dev, ino). */
struct id_set {
        struct file_id {
                uint64_t dev, ino; /* ino + 1: zero marks a free slot */
        } * v;
        size_t cap, n;
};

static bool id_seen(struct id_set *s, uint64_t dev, uint64_t ino)
{
        size_t i;

        if (s->n * 2 >= s->cap) {
                size_t cap = s->cap ? s->cap * 2 : 1024;
                struct id_set g = {calloc(cap, sizeof(*g.v)), cap, 0};
                if (g.v == NULL)
                        return false; /* counted twice: the quota errs strict */
                for (i = 0; i < s->cap; i++)
                        if (s->v[i].ino != 0)
                                id_seen(&g, s->v[i].dev, s->v[i].ino - 1);
                free(s->v);
                *s = g;
        }
        for (i = (size_t)((ino ^ (dev << 17)) * 0x9e3779b97f4a7c15ull) & (s->cap - 1);
             s->v[i].ino != 0; i = (i + 1) & (s->cap - 1))
                if (s->v[i].ino == ino + 1 && s->v[i].dev == dev)
                        return true;
        s->v[i] = (struct file_id){dev, ino + 1};
        s->n++;
        return false;
}

/* One directory on the walk's path: its identity, and the names of the
 * subdirectories still to visit (NUL-separated; a child's name points into
 * its parent's list, which outlives it). */
struct frame {
        dev_t dev;
        ino_t ino;
        const char *name;
        char *subdirs;
        size_t len, pos;
};

struct walk {
        uint64_t total;
        /* For what it cannot read (a directory made 0000, a mapping of a
         * deleted file that only root may stat): past the quota at once,
         * slack included, so that hiding space is never cheaper than
         * showing it. */
        uint64_t unreadable_charge;
        struct id_set seen;
        uint64_t entries, max_entries; /* stops (too big) past max, 0: no max */
        uint64_t mnt_id;               /* the workspace's mount, when known */
        bool mnt_known;
        dev_t devs[WALK_MAX_DEVS]; /* the workspace's and its subvolumes' */
        unsigned ndevs;
        struct frame *stack;
        size_t depth, cap;
        /* Where extended attributes take space that st_blocks leaves out
         * (btrfs keeps them in its metadata: 196 MiB on one empty file),
         * a buffer for their names; NULL where st_blocks counts them. */
        char *xnames;
};

static uint64_t charge(const struct stat *st)
{
        uint64_t b = (uint64_t)st->st_blocks * 512u;

        return b > INODE_CHARGE ? b : INODE_CHARGE;
}

static void note_dev(struct walk *wk, dev_t dev)
{
        for (unsigned i = 0; i < wk->ndevs; i++)
                if (wk->devs[i] == dev)
                        return;
        if (wk->ndevs < WALK_MAX_DEVS)
                wk->devs[wk->ndevs++] = dev;
}

static bool known_dev(const struct walk *wk, dev_t dev)
{
        for (unsigned i = 0; i < wk->ndevs; i++)
                if (wk->devs[i] == dev)
                        return true;
        return false;
}

#define EXT4_MAGIC 0xef53u
#define XFS_MAGIC  0x58465342u

/* ext4 and XFS count an inode's attribute blocks in st_blocks. */
static bool xattrs_in_blocks(int fd)
{
        struct statfs sf;

        return fstatfs(fd, &sf) == 0 &&
               ((unsigned)sf.f_type == EXT4_MAGIC || (unsigned)sf.f_type == XFS_MAGIC);
}

/* The bytes of `name`'s (in `dir`) extended attributes, names and values. */
static uint64_t xattr_bytes(struct walk *wk, int dir, const char *name)
{
        char path[320];
        uint64_t total;
        ssize_t n;

        /* No *at form before Linux 6.13: the directory's descriptor as a
         * path, the last part never followed. */
        snprintf(path, sizeof(path), "/proc/self/fd/%d/%s", dir, name);
        n = llistxattr(path, wk->xnames, XATTR_LIST_MAX);
        if (n <= 0)
                return n < 0 && errno == ERANGE ? wk->unreadable_charge : 0;
        total = (uint64_t)n;
        for (const char *p = wk->xnames; p < wk->xnames + n; p += strlen(p) + 1) {
                ssize_t v = lgetxattr(path, p, NULL, 0);
                if (v > 0)
                        total += (uint64_t)v;
        }
        return total;
}

/* Charges every entry of the directory `fd` and lists its subdirectories
 * in `f`. An entry the walk may not look at is charged as the quota's
 * whole room: what a sandbox hides from the walk must not be free. */
static int read_dir(struct walk *wk, int fd, struct frame *f)
{
        int dup_fd = fcntl(fd, F_DUPFD_CLOEXEC, 0);
        DIR *d = dup_fd >= 0 ? fdopendir(dup_fd) : NULL;
        struct dirent *de;
        struct stat st;
        size_t cap = 0;

        if (d == NULL) {
                if (dup_fd >= 0)
                        close(dup_fd);
                return -errno;
        }
        while ((de = readdir(d)) != NULL) {
                if (wk->max_entries > 0 && ++wk->entries > wk->max_entries)
                        break;
                if (de->d_name[0] == '.' &&
                    (de->d_name[1] == '\0' || (de->d_name[1] == '.' && de->d_name[2] == '\0')))
                        continue;
                if (fstatat(fd, de->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0) {
                        if (errno != ENOENT)
                                wk->total += wk->unreadable_charge;
                        continue;
                }
                if (!S_ISDIR(st.st_mode) && st.st_nlink > 1 &&
                    id_seen(&wk->seen, st.st_dev, st.st_ino))
                        continue;
                wk->total += charge(&st);
                if (wk->xnames != NULL)
                        wk->total += xattr_bytes(wk, fd, de->d_name);
                if (!S_ISDIR(st.st_mode))
                        continue;
                size_t n = strlen(de->d_name) + 1;
                if (f->len + n > cap) {
                        char *g = realloc(f->subdirs, cap = (f->len + n) * 2 + 256);
                        if (g == NULL)
                                break;
                        f->subdirs = g;
                }
                memcpy(f->subdirs + f->len, de->d_name, n);
                f->len += n;
        }
        closedir(d);
        return 0;
}

/* True when the open directory `fd` is on the workspace's mount: a btrfs
 * subvolume (its own st_dev) is, a filesystem mounted there is not. */
static bool same_mount(struct walk *wk, int fd, const struct stat *st)
{
        struct statx sx;

        if (!wk->mnt_known)
                return known_dev(wk, st->st_dev);
        if (statx(fd, "", AT_EMPTY_PATH | AT_SYMLINK_NOFOLLOW, STATX_MNT_ID, &sx) != 0 ||
            !(sx.stx_mask & STATX_MNT_ID))
                return false;
        return sx.stx_mnt_id == wk->mnt_id;
}

static int push(struct walk *wk, int fd, const struct stat *st, const char *name)
{
        if (wk->depth == wk->cap) {
                size_t cap = wk->cap ? wk->cap * 2 : 64;
                struct frame *g = realloc(wk->stack, cap * sizeof(*g));
                if (g == NULL)
                        return -ENOMEM;
                wk->stack = g;
                wk->cap = cap;
        }
        struct frame *f = &wk->stack[wk->depth++];
        *f = (struct frame){.dev = st->st_dev, .ino = st->st_ino, .name = name};
        note_dev(wk, st->st_dev);
        if (read_dir(wk, fd, f) < 0)
                wk->total += wk->unreadable_charge;
        return 0;
}

static bool is_frame(const struct frame *f, int fd)
{
        struct stat st;

        return fd >= 0 && fstat(fd, &st) == 0 && st.st_dev == f->dev && st.st_ino == f->ino;
}

/* The directory of the frame now on top, from the one just left (`fd`,
 * taken): its "..", or, when that is not it any more (the tree moved
 * under the walk), by name from the root. Frames that cannot be reached
 * that way are dropped: what is left of them is wherever it went. */
static int reopen_top(struct walk *wk, int root, int fd)
{
        const struct frame *top = &wk->stack[wk->depth - 1];
        int up = openat(fd, "..", O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        size_t i;

        close(fd);
        if (is_frame(top, up))
                return up;
        if (up >= 0)
                close(up);
        if ((up = fcntl(root, F_DUPFD_CLOEXEC, 0)) < 0)
                return -errno;
        for (i = 1; i < wk->depth; i++) {
                int next =
                    openat(up, wk->stack[i].name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
                if (!is_frame(&wk->stack[i], next)) {
                        if (next >= 0)
                                close(next);
                        break;
                }
                close(up);
                up = next;
        }
        while (wk->depth > i)
                free(wk->stack[--wk->depth].subdirs);
        return up;
}

/* Adds up the disk the tree under `root` takes. Iterative and holding one
 * descriptor beside the root, however deep the tree: a parent is found
 * again through "..", checked by device and inode. Never follows a
 * symbolic link nor leaves the workspace's mount. */
static void walk_tree(struct walk *wk, int root)
{
        struct stat st;
        struct statx sx;
        int fd;

        if (fstat(root, &st) != 0)
                return;
        wk->mnt_known =
            statx(root, "", AT_EMPTY_PATH, STATX_MNT_ID, &sx) == 0 && (sx.stx_mask & STATX_MNT_ID);
        wk->mnt_id = wk->mnt_known ? sx.stx_mnt_id : 0;
        if ((fd = fcntl(root, F_DUPFD_CLOEXEC, 0)) < 0 || push(wk, fd, &st, NULL) < 0) {
                if (fd >= 0)
                        close(fd);
                return;
        }
        while (wk->depth > 0) {
                struct frame *top = &wk->stack[wk->depth - 1];
                if (wk->max_entries > 0 && wk->entries > wk->max_entries)
                        break;
                if (top->pos < top->len) {
                        const char *name = top->subdirs + top->pos;
                        int c = openat(fd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
                        top->pos += strlen(name) + 1;
                        if (c < 0) {
                                if (errno == EACCES || errno == EPERM)
                                        wk->total += wk->unreadable_charge;
                                continue;
                        }
                        if (fstat(c, &st) != 0 || !same_mount(wk, c, &st) ||
                            push(wk, c, &st, name) < 0) {
                                close(c);
                                continue;
                        }
                        close(fd);
                        fd = c;
                        continue;
                }
                free(top->subdirs);
                if (--wk->depth == 0)
                        break;
                if ((fd = reopen_top(wk, root, fd)) < 0)
                        break;
        }
        if (fd >= 0)
                close(fd);
        for (; wk->depth > 0; wk->depth--)
                free(wk->stack[wk->depth - 1].subdirs);
        free(wk->stack);
        wk->stack = NULL;
}

/* ---- space held by the sandboxes' processes ---- */

struct pid_list {
        pid_t *v;
        size_t n, cap;
};

static void pid_add(pid_t pid, void *arg)
{
        struct pid_list *l = arg;

        if (l->n == l->cap) {
                size_t cap = l->cap ? l->cap * 2 : 64;
                pid_t *g = realloc(l->v, cap * sizeof(*g));
                if (g == NULL)
                        return;
                l->v = g;
                l->cap = cap;
        }
        l->v[l->n++] = pid;
}

/* A deleted file still open or mapped: on the workspace's filesystem, it
 * holds its blocks until the last holder ends, and no walk sees it. */
static void charge_deleted(struct walk *wk, const struct stat *st)
{
        if (S_ISREG(st->st_mode) && st->st_nlink == 0 && known_dev(wk, st->st_dev) &&
            !id_seen(&wk->seen, st->st_dev, st->st_ino))
                wk->total += charge(st);
}

/* The files open in the descriptor table of thread `tid` of `pid`. */
static void charge_fds(struct walk *wk, pid_t pid, const char *tid)
{
        char dir[64], path[96];
        struct dirent *de;
        struct stat st;
        DIR *d;

        snprintf(dir, sizeof(dir), "/proc/%d/task/%.20s/fd", (int)pid, tid);
        d = opendir(dir);

        if (d == NULL) {
                if (errno != ENOENT && errno != ESRCH)
                        wk->total += wk->unreadable_charge;
                return;
        }
        while ((de = readdir(d)) != NULL) {
                if (de->d_name[0] == '.')
                        continue;
                snprintf(path, sizeof(path), "%s/%.20s", dir, de->d_name);
                if (stat(path, &st) == 0)
                        charge_deleted(wk, &st);
        }
        closedir(d);
}

/* The deleted files mapped by process `pid`, whose descriptors may be
 * closed. Only root may stat a mapping's file (map_files): for anyone
 * else such a mapping is charged as the quota's whole room. */
static void charge_maps(struct walk *wk, pid_t pid)
{
        char path[96], *line = NULL;
        size_t cap = 0;
        FILE *f;

        snprintf(path, sizeof(path), "/proc/%d/maps", (int)pid);
        if ((f = fopen(path, "re")) == NULL)
                return;
        while (getline(&line, &cap, f) > 0) {
                unsigned long lo, hi, off, ino;
                unsigned maj, mnr;
                struct stat st;
                size_t n = strlen(line);
                if (n < 11 || strcmp(line + n - 11, " (deleted)\n") != 0 ||
                    sscanf(line, "%lx-%lx %*s %lx %x:%x %lu", &lo, &hi, &off, &maj, &mnr, &ino) !=
                        6 ||
                    ino == 0 || !known_dev(wk, makedev(maj, mnr)))
                        continue;
                snprintf(path, sizeof(path), "/proc/%d/map_files/%lx-%lx", (int)pid, lo, hi);
                if (stat(path, &st) == 0)
                        charge_deleted(wk, &st);
                else if (!id_seen(&wk->seen, makedev(maj, mnr), ino))
                        wk->total += wk->unreadable_charge;
        }
        free(line);
        fclose(f);
}

struct charge_walk {
        struct walk *wk;
        struct pid_list todo;
};

static void charge_task(pid_t pid, const char *tid, void *arg)
{
        charge_fds(((struct charge_walk *)arg)->wk, pid, tid);
}

static void charge_child(pid_t pid, void *arg)
{
        pid_add(pid, &((struct charge_walk *)arg)->todo);
}

/* Every process under the inits `roots` (their pid namespaces), each
 * thread's descriptor table and each process's mappings. The inits
 * themselves are proctor's code, holding nothing a command can give them,
 * and not dumpable (their /proc entries are root's): only what is under
 * them is counted. */
static void charge_processes(struct walk *wk, const pid_t *roots, size_t nroots)
{
        struct charge_walk cw = {.wk = wk};

        for (size_t i = 0; i < nroots; i++)
                sandbox_threads_each(roots[i], NULL, charge_child, &cw);
        while (cw.todo.n > 0) {
                pid_t p = cw.todo.v[--cw.todo.n];
                if (sandbox_threads_each(p, charge_task, charge_child, &cw) == 0)
                        charge_maps(wk, p);
        }
        free(cw.todo.v);
}

/* The workspace's size in bytes of disk, with what the processes under
 * `roots` hold deleted; -E2BIG when it has more than max_entries entries
 * (0: no bound). */
static int ws_size(const struct exec_workspace *w, const pid_t *roots, size_t nroots,
                   uint64_t max_entries, uint64_t *out)
{
        const struct ws_quota *q = w->quota;
        struct walk wk = {.max_entries = max_entries,
                          .unreadable_charge = q->limit + WALK_GROWTH_SLACK + 1};
        int fd =
            openat(q->tree_fd >= 0 ? q->tree_fd : w->fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        struct stat st;

        if (fd < 0)
                return -errno;
        if (fstat(fd, &st) != 0) {
                close(fd);
                return -errno;
        }
        wk.total = charge(&st);
        note_dev(&wk, st.st_dev);
        if (!xattrs_in_blocks(fd) && (wk.xnames = malloc(XATTR_LIST_MAX)) == NULL) {
                close(fd);
                return -ENOMEM;
        }
        walk_tree(&wk, fd);
        free(wk.xnames);
        close(fd);
        charge_processes(&wk, roots, nroots);
        free(wk.seen.v);
        *out = wk.total;
        return max_entries > 0 && wk.entries > max_entries ? -E2BIG : 0;
}

/* The filesystem's bytes in use: cheap, and it grows at least as much as
 * the workspace does. */
static uint64_t fs_used(const struct exec_workspace *w)
{
        struct statfs sf;

        if (fstatfs(w->fd, &sf) != 0)
                return 0;
        /* Inodes at the walk's charge: empty files add no bytes. */
        return (uint64_t)(sf.f_blocks - sf.f_bfree) * (uint64_t)sf.f_frsize +
               (uint64_t)(sf.f_files - sf.f_ffree) * INODE_CHARGE;
}

static uint64_t mono_ms(void)
{
        struct timespec ts;

        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

static void walk_work(uv_work_t *req)
{
        struct exec_workspace *w = req->data;
        struct ws_quota *q = w->quota;

        q->walk_err = ws_size(w, q->pids, q->npids, 0, &q->walk_res);
}

static void walk_done(uv_work_t *req, int status)
{
        struct exec_workspace *w = req->data;
        struct ws_quota *q = w->quota;

        q->walking = false;
        q->walk_ms = mono_ms() - q->last_walk_ms;
        if (w->free_after_walk) {
                w->free_after_walk = false;
                exec_workspace_free(w);
                return;
        }
        if (status != 0 || q->walk_err != 0)
                return;
        q->walks++;
        if (!q->base_known) {
                q->base = q->walk_res;
                q->over_at = q->base + q->limit;
                q->base_known = true;
        }
        q->used = q->walk_res;
        q->fs_mark = q->walk_fs;
        q->over = q->used > q->base && q->used - q->base > q->limit;
        if (!q->over) {
                q->over_at = q->base + q->limit;
                return;
        }
        /* Past the quota by more than the slack: every writer stops. From
         * there on what is already there stops no one (a call started then
         * may remove files), only growth past it does. The mark moves only
         * with a stop: moved at every walk, it let a workspace that grew a
         * little between walks grow past the quota for ever. */
        if (q->used > q->over_at + WALK_GROWTH_SLACK && q->over_cb != NULL) {
                q->over_cb(w, q->ud);
                q->over_at = q->used;
        }
}

/* The executions' inits, copied for the walk's thread. */
static void snapshot_pids(struct ws_quota *q, struct exec_workspace *w)
{
        size_t n = q->pids_cb != NULL ? q->pids_cb(w, q->ud, q->pids, q->pids_cap) : 0;

        if (n > q->pids_cap) {
                pid_t *g = realloc(q->pids, n * 2 * sizeof(*g));
                if (g != NULL) {
                        q->pids = g;
                        q->pids_cap = n * 2;
                        n = q->pids_cb(w, q->ud, q->pids, q->pids_cap);
                }
        }
        q->npids = n < q->pids_cap ? n : q->pids_cap;
}

static void walk_start(struct exec_workspace *w)
{
        struct ws_quota *q = w->quota;

        snapshot_pids(q, w);
        q->walking = true;
        q->walk_fs = fs_used(w);
        q->last_walk_ms = mono_ms();
        q->work.data = w;
        if (uv_queue_work(q->loop, &q->work, walk_work, walk_done) != 0)
                q->walking = false;
}

int ws_quota_start(struct exec_workspace *w, uv_loop_t *loop, uint64_t limit,
                   void (*over)(struct exec_workspace *w, void *ud),
                   size_t (*pids)(struct exec_workspace *w, void *ud, pid_t *out, size_t max),
                   void *ud)
{
        if (w->quota != NULL || limit == 0)
                return 0;
        w->quota = calloc(1, sizeof(*w->quota));
        if (w->quota == NULL)
                return -ENOMEM;
        w->quota->loop = loop;
        w->quota->limit = limit;
        w->quota->over_cb = over;
        w->quota->pids_cb = pids;
        w->quota->ud = ud;
        /* Only root may copy a mount; without it a sandbox could not start
         * in a workspace with a mount inside (its copy is never recursive). */
        w->quota->tree_fd =
            (int)syscall(SYS_open_tree, w->fd, "", AT_EMPTY_PATH | OPEN_TREE_CLONE | O_CLOEXEC);
        /* The base, what was there before any sandbox: a small workspace
         * is measured here at once (a millisecond at most), sparing a
         * one-shot `proctor exec` the thread pool; a big one on the pool. */
        if (ws_size(w, NULL, 0, WALK_INLINE_ENTRIES, &w->quota->base) == 0) {
                w->quota->base_known = true;
                w->quota->used = w->quota->base;
                w->quota->over_at = w->quota->base + limit;
                w->quota->fs_mark = fs_used(w);
                w->quota->last_walk_ms = mono_ms();
        } else {
                walk_start(w);
        }
        return 0;
}

uint64_t ws_quota_room(const struct exec_workspace *w)
{
        const struct ws_quota *q = w->quota;
        uint64_t grown;

        if (q == NULL)
                return UINT64_MAX;
        if (q->over)
                return 0;
        grown = q->base_known && q->used > q->base ? q->used - q->base : 0;
        return grown < q->limit ? q->limit - grown : 0;
}

void ws_quota_sample(struct exec_workspace *w)
{
        struct ws_quota *q = w->quota;
        uint64_t fs, bound, since;

        if (q == NULL || q->walking || !q->base_known)
                return;
        /* Over already: walk again soon, to see files removed since. */
        if (q->over) {
                walk_start(w);
                return;
        }
        since = mono_ms() - q->last_walk_ms;
        if (since < WALK_MIN_GAP_MS)
                return;
        fs = fs_used(w);
        bound =
            (q->used > q->base ? q->used - q->base : 0) + (fs > q->fs_mark ? fs - q->fs_mark : 0);
        if (bound > q->limit || (since >= WALK_MAX_GAP_MS && since >= q->walk_ms * WALK_DUTY))
                walk_start(w);
}

bool ws_quota_report(const struct exec_workspace *w, uint64_t *added, unsigned *walks,
                     uint64_t *last_walk_ms)
{
        const struct ws_quota *q = w->quota;

        if (q == NULL)
                return false;
        *added = q->base_known && q->used > q->base ? q->used - q->base : 0;
        *walks = q->walks;
        *last_walk_ms = q->walk_ms;
        return true;
}

bool ws_quota_over(const struct exec_workspace *w)
{
        return w->quota != NULL && w->quota->over;
}

bool ws_quota_release(struct exec_workspace *w)
{
        if (w->quota != NULL && w->quota->walking) {
                w->free_after_walk = true;
                return false;
        }
        if (w->quota != NULL) {
                if (w->quota->tree_fd >= 0)
                        close(w->quota->tree_fd);
                free(w->quota->pids);
                free(w->quota);
        }
        w->quota = NULL;
        return true;
}
