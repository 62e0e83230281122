/* exec: the API every caller uses (exec/exec.h): the engine, an execution
 * spawned for a request (from the pool, a warm sandbox or a new child),
 * stdin writes, and the names and accessors of executions. What runs an
 * execution on the caller's libuv loop lives in the files exec/engine.h
 * lists; none of it blocks the loop. */
#include "exec/engine.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "exec/native/seccomp.h"
#include "exec/native/workspace.h"

static const char *const reason_names[] = {
    [EXEC_EXITED] = "exited",         [EXEC_SIGNALED] = "signaled",
    [EXEC_TIMEOUT] = "timeout",       [EXEC_OOM] = "oom",
    [EXEC_CPU_LIMIT] = "cpu_limit",   [EXEC_PIDS_LIMIT] = "pids_limit",
    [EXEC_KILLED] = "killed",         [EXEC_SETUP_FAILED] = "setup_failed",
    [EXEC_DISK_LIMIT] = "disk_limit",
};

static const char *const ws_names[] = {
    [EXEC_WS_RW] = "rw",
    [EXEC_WS_RO] = "ro",
    [EXEC_WS_OVERLAY] = "overlay",
    [EXEC_WS_NONE] = "none",
};

const char *exec_reason_name(enum exec_reason r)
{
        return (unsigned)r < sizeof(reason_names) / sizeof(reason_names[0]) ? reason_names[r]
                                                                            : "unknown";
}

int exec_result_status(const struct exec_result *r)
{
        if (r->reason == EXEC_SETUP_FAILED)
                return 125;
        if (r->reason == EXEC_TIMEOUT)
                return 124;
        if (r->signal != 0)
                return 128 + r->signal;
        return r->exit_code >= 0 ? r->exit_code : 1;
}

const char *exec_ws_mode_name(enum exec_ws_mode m)
{
        return (unsigned)m < sizeof(ws_names) / sizeof(ws_names[0]) ? ws_names[m] : "unknown";
}

int exec_ws_mode_parse(const char *s, enum exec_ws_mode *out)
{
        unsigned i;

        for (i = 0; i < sizeof(ws_names) / sizeof(ws_names[0]); i++) {
                if (strcmp(s, ws_names[i]) == 0) {
                        *out = (enum exec_ws_mode)i;
                        return 0;
                }
        }
        return -EINVAL;
}

struct exec_limits exec_limits_default(void)
{
        struct exec_limits l = {
            .memory_bytes = 512ull << 20,
            .cpu_ms = 5000,
            .timeout_ms = 120000,
            .pids = 128,
            .tmpfs_bytes = 64ull << 20,
            .output_bytes = 1ull << 20,
            .disk_bytes = 4ull << 30,
        };
        return l;
}

uint64_t exec_id(const struct exec *e)
{
        return e->id;
}

int exec_pid(const struct exec *e)
{
        return e->pid;
}

const struct exec_limits *exec_limits(const struct exec *e)
{
        return &e->lim;
}

enum exec_isolation exec_isolation(const struct exec *e)
{
        return e->iso;
}

bool exec_warm(const struct exec *e)
{
        return e->warm;
}

bool exec_shares_net(const struct exec *e)
{
        return e->share_net;
}

static unsigned cg_limit_bits(unsigned controllers)
{
        return ((controllers & CG_MEMORY) ? EXEC_CG_MEMORY : 0) |
               ((controllers & CG_CPU) ? EXEC_CG_CPU : 0) |
               ((controllers & CG_PIDS) ? EXEC_CG_PIDS : 0);
}

unsigned exec_cgroup_limits(const struct exec *e)
{
        if (e->rt != NULL)
                return EXEC_CG_ALL; /* the engine limits the container as a whole */
        if (e->iso != EXEC_SANDBOX || e->cg == NULL)
                return 0;
        return cg_limit_bits(cgroup_sys_controllers(e->eng->cg));
}

unsigned exec_engine_cgroup_limits(struct exec_engine *eng)
{
        static uint64_t trial;
        struct cgroup *cg = NULL;
        char name[64], err[256];

        if (eng->rt != NULL)
                return EXEC_CG_ALL; /* the engine limits each container as a whole */
        if (eng->cg != NULL && !eng->proven) {
                snprintf(name, sizeof(name), "proctor-%d-trial%" PRIu64, getpid(), ++trial);
                if (cgroup_create_with(eng->cg, name, CG_FOR_SANDBOX, NULL, &cg, err,
                                       sizeof(err)) == 0)
                        cgroup_destroy(cg);
                eng->proven = true;
                if (cgroup_sys_version(eng->cg) == CGROUP_NONE) {
                        cgroup_sys_free(eng->cg);
                        eng->cg = NULL;
                }
        }
        return eng->cg != NULL ? cg_limit_bits(cgroup_sys_controllers(eng->cg)) : 0;
}

const char *exec_cgroup_missing_text(unsigned have)
{
        static const char *const names[8] = {
            "memory, CPU and pids", "CPU and pids", "memory and pids", "pids",
            "memory and CPU",       "CPU",          "memory",          "",
        };
        return names[have & EXEC_CG_ALL];
}

unsigned exec_engine_live(const struct exec_engine *eng)
{
        return eng->live;
}

uint64_t now_us(void)
{
        struct timespec ts;

        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (uint64_t)ts.tv_sec * 1000000u + (uint64_t)ts.tv_nsec / 1000u;
}

/* ---- engine ---- */

/* The runtime named in `o`: sandboxes of a runtime other than native are
 * never pooled or started warm, as each is the runtime's own. */
static int engine_runtime(struct exec_engine *eng, uv_loop_t *loop,
                          const struct exec_engine_opts *o, char *err, size_t errlen)
{
        if (o == NULL || o->runtime == NULL || strcmp(o->runtime, "native") == 0)
                return 0;
        if (strcmp(o->runtime, "docker") != 0) {
                snprintf(err, errlen, "unknown runtime '%s' (expected native or docker)",
                         o->runtime);
                return -EINVAL;
        }
        eng->rt = &exec_runtime_docker;
        eng->prewarm = 0;
        eng->warm = 0;
        return eng->rt->engine_new(loop, o, &eng->rt_state, err, errlen);
}

const char *exec_engine_runtime(const struct exec_engine *eng)
{
        return eng->rt != NULL ? eng->rt->name : "native";
}

const char *exec_runtime_name(const struct exec *e)
{
        return e->rt != NULL ? e->rt->name : "native";
}

const char *exec_runtime_handle(const struct exec *e)
{
        return e->rt != NULL ? e->rt->handle(e) : NULL;
}

int exec_engine_new(uv_loop_t *loop, const struct exec_engine_opts *o, struct exec_engine **out,
                    char *err, size_t errlen)
{
        struct exec_engine *eng = calloc(1, sizeof(*eng));
        char why[256] = "";
        char selfcg[300];
        int rc;

        if (eng == NULL)
                return -ENOMEM;
        eng->loop = loop;
        /* An image's root replaces the host's in every sandbox (exec/image). */
        if (o != NULL && o->image_root != NULL &&
            (rc = sandbox_host_open_root(&eng->host, o->image_root, err, errlen)) < 0) {
                free(eng);
                return rc;
        }
        eng->stats_ms = o != NULL && o->stats_interval_ms ? o->stats_interval_ms : 250;
        eng->prewarm = o != NULL ? o->prewarm : 0;
        eng->warm = o != NULL ? o->warm : 0;
        eng->warm_idle_ms = o != NULL && o->warm_idle_ms ? o->warm_idle_ms : 30000;
        if ((rc = engine_runtime(eng, loop, o, err, errlen)) < 0) {
                sandbox_host_free(eng->host);
                free(eng);
                return rc;
        }
        uv_timer_init(loop, &eng->refill);
        eng->refill.data = eng;
        uv_timer_init(loop, &eng->warm_idle);
        eng->warm_idle.data = eng;
        /* Shrinking an idle pool is no reason to keep a loop running. */
        uv_unref((uv_handle_t *)&eng->warm_idle);
        eng->handles = 2;
        if (o == NULL || !o->no_cgroups) {
                snprintf(selfcg, sizeof(selfcg), "%s/self/cgroup",
                         o != NULL && o->proc_root ? o->proc_root : "/proc");
                /* The first group proves the hierarchies (see child_new). */
                rc = cgroup_sys_open_unproven(o != NULL && o->cgroup_root ? o->cgroup_root
                                                                          : "/sys/fs/cgroup",
                                              selfcg, &eng->cg, why, sizeof(why));
                if (rc < 0 || cgroup_sys_version(eng->cg) == CGROUP_NONE) {
                        cgroup_sys_free(eng->cg);
                        eng->cg = NULL;
                } else {
                        cgroup_sys_reap_stale(eng->cg);
                }
        }
        *out = eng;
        return 0;
}

/* The sandbox's root template and seccomp policy, made on first use so that
 * local-only processes never pay for them. */
static int engine_prepare_sandbox(struct exec_engine *eng, char *err, size_t errlen)
{
        int rc;

        if (eng->host == NULL && (rc = sandbox_host_open(&eng->host, err, errlen)) < 0)
                return rc;
        eng->seccomp = seccomp_policy_builtin();
        return 0;
}

static void engine_freed(uv_handle_t *h)
{
        struct exec_engine *eng = h->data;

        if (--eng->handles == 0)
                free(eng);
}

void strv_free(char **v)
{
        for (char **p = v; p != NULL && *p != NULL; p++)
                free(*p);
        free(v);
}

void engine_destroy(struct exec_engine *eng)
{
        if (eng->rt != NULL)
                eng->rt->engine_free(eng->rt_state);
        strv_free(eng->ww.argv);
        strv_free(eng->ww.env_extra);
        cgroup_sys_free(eng->cg);
        sandbox_host_free(eng->host);
        uv_close((uv_handle_t *)&eng->refill, engine_freed);
        uv_close((uv_handle_t *)&eng->warm_idle, engine_freed);
}

void exec_engine_free(struct exec_engine *eng)
{
        struct exec *e;

        if (eng == NULL)
                return;
        eng->freeing = true;
        uv_timer_stop(&eng->refill);
        uv_timer_stop(&eng->warm_idle);
        for (e = eng->list; e != NULL; e = e->next)
                if (!e->exit_reported)
                        kill_for(e, EXEC_KILLED);
        if (eng->children == 0)
                engine_destroy(eng);
}

struct exec *exec_engine_find(struct exec_engine *eng, uint64_t id)
{
        struct exec *e;

        for (e = eng->list; e != NULL; e = e->next)
                if (e->assigned && e->id == id)
                        return e;
        return NULL;
}

struct stdin_write {
        uv_write_t req;
        char data[];
};

static void on_kept_stdin_written(uv_write_t *req, int status)
{
        free(req->data);
}

int exec_write(struct exec *e, const char *data, size_t len)
{
        if (e->rt != NULL)
                return e->exit_reported ? -EPIPE : e->rt->write(e, data, len);
        struct stdin_write *w;
        uv_buf_t b;
        int rc;

        if (e->in.data != e || uv_is_closing((uv_handle_t *)&e->in) || e->exit_reported)
                return -EPIPE;
        w = malloc(sizeof(*w) + (len ? len : 1));
        if (w == NULL)
                return -ENOMEM;
        memcpy(w->data, data, len);
        w->req.data = w;
        b = uv_buf_init(w->data, (unsigned)len);
        rc = uv_write(&w->req, (uv_stream_t *)&e->in, &b, 1, on_kept_stdin_written);
        if (rc < 0)
                free(w);
        return rc < 0 ? -EPIPE : 0;
}

int exec_spawn(struct exec_engine *eng, const struct exec_request *req,
               const struct exec_callbacks *cb, void *ud, struct exec **out, char *err,
               size_t errlen)
{
        bool sandbox = req->isolation == EXEC_SANDBOX;
        uint64_t t0 = now_us();
        struct exec_workspace *ws = req->ws;
        struct exec_workspace *own_ws = NULL;
        uint32_t uid, gid;
        struct exec *e;
        int rc;

        if (req->argv == NULL || req->argv[0] == NULL || req->argv[0][0] == '\0') {
                snprintf(err, errlen, "no command given");
                return -EINVAL;
        }
        if (eng->freeing) {
                snprintf(err, errlen, "the execution engine is shutting down");
                return -ESHUTDOWN;
        }
        if (ws == NULL && (rc = exec_workspace_open(req->workspace, &own_ws, err, errlen)) < 0)
                return rc;
        if (ws == NULL)
                ws = own_ws;
        if (sandbox && eng->rt != NULL)
                return rt_spawn(eng, req, ws, own_ws, cb, ud, out, err, errlen);
        if (sandbox && (rc = engine_prepare_sandbox(eng, err, errlen)) < 0) {
                exec_workspace_free(own_ws);
                return rc;
        }
        pick_ids(req, ws, &uid, &gid);
        /* Pooled and warm children have a network namespace of their own;
         * a warm one's command started without env_own. */
        e = req->share_net || req->env_own != NULL ? NULL : warm_take(eng, req, uid, gid);
        if (e == NULL && !req->share_net)
                e = pool_take(eng, req->isolation, uid, gid);
        if (e == NULL && (rc = child_new_net(eng, req->isolation, req->share_net, uid, gid, &e, err,
                                             errlen)) < 0) {
                exec_workspace_free(own_ws);
                return rc;
        }
        e->assigned = true;
        e->id = ++eng->next_id;
        e->lim = req->limits;
        if (!sandbox) {
                struct exec_limits only_wall = {.timeout_ms = req->limits.timeout_ms,
                                                .output_bytes = req->limits.output_bytes};
                e->lim = only_wall;
        }
        if (cb != NULL)
                e->cb = *cb;
        e->ud = ud;
        e->t0_us = t0;
        eng->live++;
        if (exec_request_disk_quota(req) && ws_quota_start(ws, eng->loop, req->limits.disk_bytes,
                                                           quota_over, quota_pids, eng) == 0) {
                e->ws = ws;
                ws_quota_sample(ws);
        }
        e->own_ws = own_ws; /* the quota's walk may outlive this call */
        if (e->warm)
                warm_assign(e, req);
        else
                child_assign(e, req, ws);
        if (req->warm && sandbox && req->ws != NULL) {
                warm_remember(eng, req, uid, gid);
                if (eng->warm > 0)
                        warm_note_call(eng, e->warm);
                /* The first warm call of a session, or a changed request;
                 * a warm call's own successor starts after its result
                 * (report_exit). */
                if (eng->warm > 0 && !eng->freeing && !e->warm)
                        refill_soon(eng);
        } else {
                eng->want_iso = req->isolation;
                eng->want_uid = uid;
                eng->want_gid = gid;
        }
        *out = e;
        return 0;
}
