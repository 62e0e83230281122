/* quota: the session's disk quota on what sandboxes add to the workspace,
 * measured by walking it. Never follows a link nor leaves the workspace's
 * mount; runs its walks on the loop's thread pool. */
#include "exec/workspace.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <sys/statfs.h>
#include <time.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define WALK_MAX_DEPTH      256
#define WALK_MIN_GAP_MS     1000 /* between walks started by the sampler */
#define WALK_INLINE_ENTRIES 1000 /* a base walk this small runs on the loop */
/* Growth tolerated while over the quota: a file removed and written
 * again, directory blocks. */
#define WALK_GROWTH_SLACK (1u << 20)

struct ws_quota {
        uv_loop_t *loop;
        uint64_t limit;
        void (*over_cb)(struct exec_workspace *w, void *ud);
        void *ud;
        bool base_known, walking, over;
        uint64_t base;     /* the workspace's size when the quota started */
        uint64_t used;     /* its size at the last walk */
        uint64_t fs_mark;  /* the filesystem's usage when that walk started */
        uint64_t walk_fs;  /* the filesystem's usage when the running walk started */
        uint64_t walk_res; /* the running walk's result (written by the worker) */
        int walk_err;
        uint64_t last_walk_ms;
        uint64_t over_at; /* the size that stops executions (grows while over) */
        uv_work_t work;
};

/* Inodes with several links, counted once: open addressing on ino. */
struct ino_set {
        uint64_t *v;
        size_t cap, n;
};

static bool ino_seen(struct ino_set *s, uint64_t ino)
{
        size_t i;

        if (s->n * 2 >= s->cap) {
                struct ino_set g = {calloc(s->cap ? s->cap * 2 : 1024, sizeof(uint64_t)),
                                    s->cap ? s->cap * 2 : 1024, 0};
                if (g.v == NULL)
                        return false; /* counted twice: the quota errs strict */
                for (i = 0; i < s->cap; i++)
                        if (s->v[i] != 0)
                                ino_seen(&g, s->v[i]);
                free(s->v);
                *s = g;
        }
        for (i = (size_t)(ino * 0x9e3779b97f4a7c15ull) & (s->cap - 1); s->v[i] != 0;
             i = (i + 1) & (s->cap - 1))
                if (s->v[i] == ino + 1)
                        return true;
        s->v[i] = ino + 1;
        s->n++;
        return false;
}

struct walk {
        dev_t dev;
        uint64_t total;
        struct ino_set links;
        uint64_t entries, max_entries; /* stops (too big) past max, 0: no max */
};

/* Adds up the disk blocks under the open directory `fd` (taken), never
 * following symbolic links nor leaving the workspace's filesystem. */
static void walk_dir(struct walk *wk, int fd, unsigned depth)
{
        DIR *d = fdopendir(fd);
        struct dirent *de;
        struct stat st;

        if (d == NULL) {
                close(fd);
                return;
        }
        while ((de = readdir(d)) != NULL) {
                if (wk->max_entries > 0 && ++wk->entries > wk->max_entries)
                        break;
                if (de->d_name[0] == '.' &&
                    (de->d_name[1] == '\0' || (de->d_name[1] == '.' && de->d_name[2] == '\0')))
                        continue;
                if (fstatat(dirfd(d), de->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0 ||
                    st.st_dev != wk->dev)
                        continue;
                if (!S_ISDIR(st.st_mode) && st.st_nlink > 1 && ino_seen(&wk->links, st.st_ino))
                        continue;
                wk->total += (uint64_t)st.st_blocks * 512u;
                if (S_ISDIR(st.st_mode) && depth < WALK_MAX_DEPTH) {
                        int c = openat(dirfd(d), de->d_name,
                                       O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
                        if (c >= 0)
                                walk_dir(wk, c, depth + 1);
                }
        }
        closedir(d);
}

/* The workspace's size in bytes of disk; -E2BIG when it has more than
 * max_entries entries (0: no bound). */
static int ws_size(const struct exec_workspace *w, uint64_t max_entries, uint64_t *out)
{
        struct walk wk = {.dev = w->st.st_dev, .max_entries = max_entries};
        int fd = openat(w->fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);

        if (fd < 0)
                return -errno;
        wk.total = (uint64_t)w->st.st_blocks * 512u;
        walk_dir(&wk, fd, 0);
        free(wk.links.v);
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
        return (uint64_t)(sf.f_blocks - sf.f_bfree) * (uint64_t)sf.f_frsize;
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

        w->quota->walk_err = ws_size(w, 0, &w->quota->walk_res);
}

static void walk_done(uv_work_t *req, int status)
{
        struct exec_workspace *w = req->data;
        struct ws_quota *q = w->quota;

        q->walking = false;
        if (w->free_after_walk) {
                w->free_after_walk = false;
                exec_workspace_free(w);
                return;
        }
        if (status != 0 || q->walk_err != 0)
                return;
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
        /* Past the quota now, or growing further while past it (a call
         * started then may remove files, but not add any). */
        if (q->used > q->over_at + WALK_GROWTH_SLACK && q->over_cb != NULL)
                q->over_cb(w, q->ud);
        if (q->used > q->over_at)
                q->over_at = q->used;
}

static void walk_start(struct exec_workspace *w)
{
        struct ws_quota *q = w->quota;

        q->walking = true;
        q->walk_fs = fs_used(w);
        q->last_walk_ms = mono_ms();
        q->work.data = w;
        if (uv_queue_work(q->loop, &q->work, walk_work, walk_done) != 0)
                q->walking = false;
}

int ws_quota_start(struct exec_workspace *w, uv_loop_t *loop, uint64_t limit,
                   void (*over)(struct exec_workspace *w, void *ud), void *ud)
{
        if (w->quota != NULL || limit == 0)
                return 0;
        w->quota = calloc(1, sizeof(*w->quota));
        if (w->quota == NULL)
                return -ENOMEM;
        w->quota->loop = loop;
        w->quota->limit = limit;
        w->quota->over_cb = over;
        w->quota->ud = ud;
        /* The base, what was there before any sandbox: a small workspace
         * is measured here at once (a millisecond at most), sparing a
         * one-shot `proctor exec` the thread pool; a big one on the pool. */
        if (ws_size(w, WALK_INLINE_ENTRIES, &w->quota->base) == 0) {
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
        uint64_t fs, bound;

        if (q == NULL || q->walking || !q->base_known)
                return;
        /* Over already: walk again soon, to see files removed since. */
        if (q->over) {
                walk_start(w);
                return;
        }
        if (mono_ms() - q->last_walk_ms < WALK_MIN_GAP_MS)
                return;
        fs = fs_used(w);
        bound =
            (q->used > q->base ? q->used - q->base : 0) + (fs > q->fs_mark ? fs - q->fs_mark : 0);
        if (bound > q->limit)
                walk_start(w);
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
        free(w->quota);
        w->quota = NULL;
        return true;
}
