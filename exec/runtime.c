/* runtime: the seam to other runtimes (exec/runtime.h): a spawn handed to
 * the engine's runtime, and the exec__rt_* calls through which it reports
 * to the caller as native executions do. */
#include "exec/engine.h"

#include <errno.h>
#include <stdlib.h>

#include "exec/native/workspace.h"

int rt_spawn(struct exec_engine *eng, const struct exec_request *req, struct exec_workspace *ws,
             struct exec_workspace *own_ws, const struct exec_callbacks *cb, void *ud,
             struct exec **out, char *err, size_t errlen)
{
        struct exec_request r = *req;
        struct exec *e = calloc(1, sizeof(*e));
        int rc;

        if (e == NULL) {
                exec_workspace_free(own_ws);
                return -ENOMEM;
        }
        e->eng = eng;
        e->rt = eng->rt;
        e->iso = EXEC_SANDBOX;
        e->assigned = true;
        e->pidfd = e->ctl_fd = e->out.fd = e->err.fd = -1;
        e->lim = req->limits;
        e->own_ws = own_ws;
        if (cb != NULL)
                e->cb = *cb;
        e->ud = ud;
        e->t0_us = now_us();
        e->id = eng->next_id + 1;
        r.ws = ws;
        r.workspace = exec_workspace_path(ws);
        /* The disk quota, where the engine writes to this host's workspace:
         * the same walk as for native sandboxes, and RLIMIT_FSIZE through
         * the engine (exec__rt_disk_room). */
        if (ws != NULL && exec_request_disk_quota(req) && eng->rt->workspace_here != NULL &&
            eng->rt->workspace_here(eng->rt_state) &&
            ws_quota_start(ws, eng->loop, req->limits.disk_bytes, quota_over, quota_pids, eng) == 0)
                e->ws = ws;
        if ((rc = eng->rt->spawn(eng->rt_state, e, &r, err, errlen)) < 0) {
                exec_workspace_free(own_ws);
                free(e);
                return rc;
        }
        if (e->ws != NULL)
                ws_quota_sample(e->ws);
        eng->next_id++;
        e->next = eng->list;
        eng->list = e;
        eng->children++;
        eng->live++;
        *out = e;
        return 0;
}

void *exec__rt_priv(const struct exec *e)
{
        return e->rt_priv;
}

void exec__rt_set_priv(struct exec *e, void *priv)
{
        e->rt_priv = priv;
}

uv_loop_t *exec__rt_loop(const struct exec *e)
{
        return e->eng->loop;
}

uint64_t exec__rt_t0_us(const struct exec *e)
{
        return e->t0_us;
}

uint64_t exec__rt_now_us(void)
{
        return now_us();
}

void exec__rt_start(struct exec *e, int pid)
{
        e->pid = pid;
        e->started = true;
        if (e->cb.on_start != NULL)
                e->cb.on_start(e, pid, now_us() - e->t0_us, e->ud);
}

void exec__rt_output(struct exec *e, enum exec_stream s, const char *buf, size_t n)
{
        uint64_t cap = e->lim.output_bytes, room;

        room = cap == 0 ? n : e->out_bytes >= cap ? 0 : cap - e->out_bytes;
        e->out_bytes += n;
        if (room < n)
                e->truncated = true;
        if (room > 0 && e->cb.on_output != NULL)
                e->cb.on_output(e, s, buf, room < n ? (size_t)room : n, e->ud);
}

void exec__rt_stats(struct exec *e, const struct exec_stats *st)
{
        e->last = *st;
        if (e->cb.on_stats != NULL && !e->exit_reported)
                e->cb.on_stats(e, st, e->ud);
        if (e->ws != NULL)
                ws_quota_sample(e->ws);
}

uint64_t exec__rt_disk_room(const struct exec *e)
{
        return e->ws != NULL ? ws_quota_room(e->ws) : UINT64_MAX;
}

void exec__rt_state(struct exec *e, const char *state)
{
        if (e->cb.on_state != NULL)
                e->cb.on_state(e, state, e->ud);
}

void exec__rt_exit(struct exec *e, struct exec_result *r)
{
        if (e->exit_reported)
                return;
        e->exit_reported = true;
        e->exit_us = now_us();
        e->paused = 0;
        r->truncated = e->truncated;
        if (e->ws != NULL)
                ws_quota_sample(e->ws); /* what it left behind counts for the next */
        if (e->last.mem_peak_bytes > r->mem_peak_bytes)
                r->mem_peak_bytes = e->last.mem_peak_bytes;
        if (e->cb.on_exit != NULL)
                e->cb.on_exit(e, r, e->ud);
}

void exec__rt_removed(struct exec *e)
{
        exec_finish_remove(e);
}
