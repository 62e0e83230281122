/* pool: children made ahead of a spawn: prewarmed ones waiting for a
 * request, and warm sandboxes whose command already runs, waiting for a
 * call's stdin, with the policy for how many to keep, within the room the
 * session's bounds leave (exec_engine_set_warm_room). */
#include "exec/engine.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

static void pool_refill(uv_timer_t *t);
static void warm_start(struct exec_engine *eng, struct exec *e);

/* Refills the pool from the loop, soon. One already due keeps its place:
 * restarting the timer would put it behind whatever was queued since (the
 * next model turn, whose call would then find the pool empty). */
void refill_soon(struct exec_engine *eng)
{
        if (!uv_is_active((uv_handle_t *)&eng->refill))
                uv_timer_start(&eng->refill, pool_refill, 0, 0);
}

/* A warm sandbox's command was already running when the call took it: its
 * start is reported after exec_spawn has returned (from the grace timer,
 * idle until the command ends), and before anything else of the call. */
void warm_announce(struct exec *e)
{
        if (!e->start_due)
                return;
        e->start_due = false;
        uv_timer_stop(&e->grace);
        if (e->cb.on_start != NULL)
                e->cb.on_start(e, e->pid, now_us() - e->t0_us, e->ud);
}

static void warm_announce_due(uv_timer_t *t)
{
        warm_announce(t->data);
}

/* A waiting warm sandbox's counters moved on: the watcher may show them. */
void warm_settled(uv_timer_t *t)
{
        struct exec *e = t->data;

        if (e->in_pool && e->warm)
                warm_changed(e->eng);
        else
                uv_timer_stop(t);
}

/* The waiting warm sandboxes changed: tell the watcher. */
void warm_changed(struct exec_engine *eng)
{
        if (eng->warm_watch != NULL && !eng->freeing)
                eng->warm_watch(eng->warm_watch_ud);
}

void pool_unlink(struct exec *e)
{
        struct exec **pp;

        for (pp = &e->eng->pool; *pp != NULL; pp = &(*pp)->pool_next) {
                if (*pp == e) {
                        *pp = e->pool_next;
                        e->in_pool = false;
                        if (e->warm)
                                warm_changed(e->eng);
                        return;
                }
        }
}

struct exec *pool_take(struct exec_engine *eng, enum exec_isolation iso, uint32_t uid, uint32_t gid)
{
        struct exec *e;
        int pass;

        /* Prefer a child that is already waiting over one still getting ready. */
        for (pass = 0; pass < 2; pass++) {
                for (e = eng->pool; e != NULL; e = e->pool_next) {
                        if (!e->warm && e->iso == iso && e->uid == uid && e->gid == gid &&
                            !e->reaped && !e->setup_failed && (pass == 1 || e->waiting)) {
                                pool_unlink(e);
                                return e;
                        }
                }
        }
        return NULL;
}

/* Keeps `prewarm` children waiting for the ids and mode last asked for,
 * and the policy's number of warm sandboxes, as far as the room callback
 * allows; others are let go. Runs from a timer so a spawn never pays for it. */
static void pool_refill(uv_timer_t *t)
{
        struct exec_engine *eng = t->data;
        struct exec *e, *next;
        unsigned have = 0, warm = 0;
        char err[256];

        exec_engine_warm_trim(eng, eng->warm_target);
        for (e = eng->pool; e != NULL; e = next) {
                next = e->pool_next;
                if (e->warm && e->warm_gen == eng->ww.gen)
                        warm++;
                else if (!e->warm && e->iso == eng->want_iso && e->uid == eng->want_uid &&
                         e->gid == eng->want_gid)
                        have++;
                else
                        send_kill(e);
        }
        while (!eng->freeing &&
               (have < eng->prewarm ||
                (eng->ww.set && warm < eng->warm_target &&
                 (eng->warm_room == NULL || eng->warm_room(eng->warm_room_ud, warm))))) {
                bool make_warm = have >= eng->prewarm;
                enum exec_isolation iso = make_warm ? EXEC_SANDBOX : eng->want_iso;
                uint32_t uid = make_warm ? eng->ww.uid : eng->want_uid;
                uint32_t gid = make_warm ? eng->ww.gid : eng->want_gid;
                if (child_new(eng, iso, uid, gid, &e, err, sizeof(err)) < 0)
                        return;
                e->in_pool = true;
                e->pool_next = eng->pool;
                eng->pool = e;
                if (make_warm) {
                        warm_start(eng, e);
                        warm++;
                } else {
                        have++;
                }
        }
}

/* ---- warm sandboxes ---- */

static bool strv_eq(char *const *a, char *const *b)
{
        for (; a != NULL && b != NULL && *a != NULL && *b != NULL; a++, b++)
                if (strcmp(*a, *b) != 0)
                        return false;
        return (a == NULL || *a == NULL) && (b == NULL || *b == NULL);
}

static char **strv_dup(char *const *v)
{
        size_t n = 0, i;
        char **d;

        while (v != NULL && v[n] != NULL)
                n++;
        if ((d = calloc(n + 1, sizeof(*d))) == NULL)
                return NULL;
        for (i = 0; i < n; i++) {
                if ((d[i] = strdup(v[i])) == NULL) {
                        strv_free(d);
                        return NULL;
                }
        }
        return d;
}

static bool limits_eq(const struct exec_limits *a, const struct exec_limits *b)
{
        return a->memory_bytes == b->memory_bytes && a->cpu_ms == b->cpu_ms &&
               a->timeout_ms == b->timeout_ms && a->pids == b->pids &&
               a->tmpfs_bytes == b->tmpfs_bytes && a->output_bytes == b->output_bytes &&
               a->disk_bytes == b->disk_bytes;
}

/* Whether a warm sandbox made for the remembered request can serve `req`:
 * everything the sandbox was built and started with must be the same; only
 * stdin differs. */
static bool warm_fits(const struct warm_want *w, const struct exec_request *req, uint32_t uid,
                      uint32_t gid)
{
        return w->set && req->ws == w->req.ws && req->ws_mode == w->req.ws_mode && uid == w->uid &&
               gid == w->gid && limits_eq(&req->limits, &w->req.limits) &&
               strv_eq(req->argv, w->argv) && strv_eq(req->env_extra, w->env_extra);
}

/* Remembers the warm request the next warm sandboxes are made for. The
 * session's workspace outlives the engine's executions, so it is kept by
 * pointer. */
void warm_remember(struct exec_engine *eng, const struct exec_request *req, uint32_t uid,
                   uint32_t gid)
{
        struct warm_want *w = &eng->ww;
        char **argv, **env;

        if (eng->warm == 0 || warm_fits(w, req, uid, gid))
                return;
        argv = strv_dup(req->argv);
        env = strv_dup(req->env_extra);
        if (argv == NULL || env == NULL) {
                strv_free(argv);
                strv_free(env);
                return;
        }
        strv_free(w->argv);
        strv_free(w->env_extra);
        w->req = *req;
        w->req.stdin_data = NULL;
        w->req.stdin_len = 0;
        w->argv = argv;
        w->env_extra = env;
        w->req.argv = argv;
        w->req.env_extra = env;
        w->uid = uid;
        w->gid = gid;
        w->gen++;
        w->set = true;
}

/* Launches the remembered request's command in a new pooled child: it
 * builds its whole root (fresh /tmp and the workspace in place) and loads
 * the seccomp filter and rlimits as for a call, then the command starts
 * and waits for its stdin. No clock runs until the call (warm_assign). */
static void warm_start(struct exec_engine *eng, struct exec *e)
{
        const struct warm_want *w = &eng->ww;
        struct exec_workspace *quota_ws = NULL;

        e->warm = true;
        e->warm_gen = w->gen;
        e->lim = w->req.limits;
        if (exec_request_disk_quota(&w->req))
                quota_ws = w->req.ws;
        if (child_request(e, &w->req, w->req.ws, quota_ws, false) < 0) {
                e->setup_failed = true;
                send_kill(e);
        }
        if (e->in_pool)
                warm_changed(eng);
}

static uint64_t proc_cpu_ns(pid_t pid);

/* A warm sandbox for `req`, preferring one whose command already runs. */
struct exec *warm_take(struct exec_engine *eng, const struct exec_request *req, uint32_t uid,
                       uint32_t gid)
{
        struct exec *e;
        int pass;

        if (!req->warm || req->isolation != EXEC_SANDBOX || req->ws == NULL ||
            !warm_fits(&eng->ww, req, uid, gid))
                return NULL;
        for (pass = 0; pass < 2; pass++) {
                for (e = eng->pool; e != NULL; e = e->pool_next) {
                        if (e->warm && e->warm_gen == eng->ww.gen && !e->reaped &&
                            !e->setup_failed && !e->have_status && !e->exit_reported &&
                            (pass == 1 || e->started)) {
                                pool_unlink(e);
                                return e;
                        }
                }
        }
        return NULL;
}

/* The warm command's RLIMIT_CPU, set at the call before the code is handed
 * over: the CPU time its interpreter's start took plus the call's limit,
 * rounded up to the second as a cold call's is, so a warm call gets the
 * allowance a cold one gets, counted from the call. The hard limit stays a
 * second above (SIGXCPU first, then SIGKILL). 0 or -errno. */
static int warm_cpu_rlimit(struct exec *e)
{
        uint64_t used_ns = proc_cpu_ns(e->cmd_pid), s;
        struct rlimit rl;

        if (e->lim.cpu_ms == 0)
                return 0;
        if (e->cmd_pid <= 0) /* never prlimit(0): that is proctor itself */
                return -ESRCH;
        s = (used_ns + e->lim.cpu_ms * 1000000u + 999999999u) / 1000000000u;
        rl.rlim_cur = s;
        rl.rlim_max = s + 1;
        return prlimit(e->cmd_pid, RLIMIT_CPU, &rl, NULL) == 0 ? 0 : -errno;
}

/* The CPU time the process has run, in ns (its schedstat: /proc/PID/stat
 * counts in clock ticks, too coarse to take off an exact total); 0 when
 * unknown. */
static uint64_t proc_cpu_ns(pid_t pid)
{
        char path[64], buf[96];
        ssize_t n;
        int fd;

        snprintf(path, sizeof(path), "/proc/%d/schedstat", (int)pid);
        if (pid <= 0 || (fd = open(path, O_RDONLY | O_CLOEXEC)) < 0)
                return 0;
        n = read(fd, buf, sizeof(buf) - 1);
        close(fd);
        if (n <= 0)
                return 0;
        buf[n] = '\0';
        return strtoull(buf, NULL, 10);
}

/* A warm sandbox taken before its command ran: now that it runs, its CPU
 * rlimit is set, then the code is handed over. The rest of its start
 * counts in the call, as a cold call's start does. */
void warm_due(struct exec *e)
{
        int rc;

        e->stdin_due = false;
        if ((rc = warm_cpu_rlimit(e)) < 0)
                snprintf(e->error, sizeof(e->error), "cannot set the CPU time limit: %s",
                         strerror(-rc));
        else if (e->stdin_copy != NULL && (rc = stdin_write_kept(e)) < 0)
                snprintf(e->error, sizeof(e->error), "cannot feed stdin: %s", uv_strerror(rc));
        if (rc < 0) {
                e->setup_failed = true;
                send_kill(e);
        }
}

/* Makes the warm sandbox the execution `req`: its clocks start now, at
 * the call. The init gets its deadline; the CPU time its command spent
 * starting up is taken off what the cgroup (or, without one, the init's
 * rusage) reports. */
void warm_assign(struct exec *e, const struct exec_request *req)
{
        struct cgroup_stats cs;
        int rc = 0;

        read_stats(e, &cs, true);
        e->cpu_base_ns = e->cg != NULL ? cs.cpu_ns : proc_cpu_ns(e->cmd_pid);
        e->out_bytes = 0;
        e->truncated = false;
        /* Taken before its command ran: the code waits for it (warm_due). */
        e->stdin_due = !e->started;
        if (e->started && (rc = warm_cpu_rlimit(e)) < 0)
                snprintf(e->error, sizeof(e->error), "cannot set the CPU time limit: %s",
                         strerror(-rc));
        else if (e->lim.timeout_ms > 0 &&
                 (rc = sandbox_start_clock(e->ctl_fd, now_us() + e->lim.timeout_ms * 1000)) < 0)
                snprintf(e->error, sizeof(e->error), "cannot start the wall clock: %s",
                         strerror(-rc));
        if (e->started) {
                e->start_due = true;
                uv_timer_start(&e->grace, warm_announce_due, 0, 0);
        }
        child_arm(e, req, rc);
}

unsigned exec_warm_policy_next(unsigned target, unsigned cap, enum exec_warm_event ev)
{
        if (target > cap)
                target = cap;
        switch (ev) {
        case EXEC_WARM_MISS:
                return target < cap ? target + 1 : cap;
        case EXEC_WARM_IDLE:
                return target > 0 ? target - 1 : 0;
        case EXEC_WARM_HIT:
                break;
        }
        return target;
}

void exec_engine_set_warm_room(struct exec_engine *eng, exec_warm_room_fn fn, void *ud)
{
        eng->warm_room = fn;
        eng->warm_room_ud = ud;
}

/* Whether `e` is a waiting warm sandbox of the current request. */
static bool warm_waiting(const struct exec_engine *eng, const struct exec *e)
{
        return e->warm && e->warm_gen == eng->ww.gen && !e->reaped && !e->killed_sent;
}

unsigned exec_engine_warm_idle(const struct exec_engine *eng)
{
        const struct exec *e;
        unsigned n = 0;

        for (e = eng->pool; e != NULL; e = e->pool_next)
                n += warm_waiting(eng, e);
        return n;
}

void exec_engine_set_warm_watch(struct exec_engine *eng, exec_warm_watch_fn fn, void *ud)
{
        eng->warm_watch = fn;
        eng->warm_watch_ud = ud;
}

unsigned exec_engine_warm_list(struct exec_engine *eng, struct exec_stats *st, bool *ready,
                               unsigned max)
{
        struct cgroup_stats cs;
        struct exec *e;
        unsigned n = 0, total = exec_engine_warm_idle(eng), i;

        /* The pool is newest first: fill from the end. */
        for (e = eng->pool; e != NULL; e = e->pool_next) {
                if (!warm_waiting(eng, e))
                        continue;
                i = total - 1 - n++;
                if (i >= max)
                        continue;
                read_stats(e, &cs, true);
                memset(&st[i], 0, sizeof(st[i]));
                st[i].cpu_ms = cs.cpu_ns / 1000000u;
                st[i].mem_bytes = cs.mem_bytes;
                st[i].mem_peak_bytes = cs.mem_peak_bytes;
                st[i].pids = cs.pids;
                if (ready != NULL)
                        ready[i] = e->started;
        }
        return total;
}

unsigned exec_engine_warm_target(const struct exec_engine *eng)
{
        return eng->warm_target;
}

void exec_engine_warm_trim(struct exec_engine *eng, unsigned keep)
{
        unsigned n = exec_engine_warm_idle(eng);
        struct exec *e, *next;
        int pass;

        /* Those still starting go first: the others cost more to replace. */
        for (pass = 0; pass < 2 && n > keep; pass++) {
                for (e = eng->pool; e != NULL && n > keep; e = next) {
                        next = e->pool_next;
                        if (warm_waiting(eng, e) && (pass == 1 || !e->started)) {
                                send_kill(e);
                                n--;
                        }
                }
        }
}

/* No warm call for warm_idle_ms: the pool shrinks by one. */
static void warm_idle_due(uv_timer_t *t)
{
        struct exec_engine *eng = t->data;

        eng->warm_target = exec_warm_policy_next(eng->warm_target, eng->warm, EXEC_WARM_IDLE);
        exec_engine_warm_trim(eng, eng->warm_target);
        if (eng->warm_target > 0)
                uv_timer_start(&eng->warm_idle, warm_idle_due, eng->warm_idle_ms, 0);
}

/* A warm call came, and found a warm sandbox or not. */
void warm_note_call(struct exec_engine *eng, bool hit)
{
        eng->warm_target = exec_warm_policy_next(eng->warm_target, eng->warm,
                                                 hit ? EXEC_WARM_HIT : EXEC_WARM_MISS);
        uv_timer_start(&eng->warm_idle, warm_idle_due, eng->warm_idle_ms, 0);
}

int exec_engine_warm_stats(struct exec_engine *eng, struct exec_stats *st)
{
        struct cgroup_stats cs;
        struct exec *e;

        for (e = eng->pool; e != NULL; e = e->pool_next) {
                if (!e->warm || !e->started || e->reaped || e->have_status)
                        continue;
                read_stats(e, &cs, true);
                memset(st, 0, sizeof(*st));
                st->cpu_ms = cs.cpu_ns / 1000000u;
                st->mem_bytes = cs.mem_bytes;
                st->mem_peak_bytes = cs.mem_peak_bytes;
                st->pids = cs.pids;
                return 0;
        }
        return -ENOENT;
}
