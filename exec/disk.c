/* disk: the glue between executions and the session's disk quota
 * (exec/native/quota.c): which requests it applies to, the inits whose
 * processes its walk looks through, and the kill of every execution
 * writing to a workspace grown past it. */
#include "exec/engine.h"

bool exec_request_disk_quota(const struct exec_request *req)
{
        return req->isolation == EXEC_SANDBOX && req->ws_mode == EXEC_WS_RW &&
               req->limits.disk_bytes > 0;
}

bool exec_disk_quota(const struct exec *e)
{
        return e->ws != NULL;
}

/* A walk found the workspace grown past the session's disk quota: every
 * execution writing to it stops. */
void quota_over(struct exec_workspace *w, void *ud)
{
        struct exec_engine *eng = ud;
        struct exec *e;

        for (e = eng->list; e != NULL; e = e->next)
                if (e->ws == w && e->assigned && !e->exit_reported)
                        kill_for(e, EXEC_DISK_LIMIT);
}

/* The inits of the native sandboxes writing to `w`, whose processes the
 * quota's walk looks through for deleted files they still hold. A
 * container's processes are the engine's: not listed. */
size_t quota_pids(struct exec_workspace *w, void *ud, pid_t *out, size_t max)
{
        struct exec_engine *eng = ud;
        size_t n = 0;

        for (struct exec *e = eng->list; e != NULL; e = e->next)
                if (e->ws == w && e->rt == NULL && e->pid > 0 && !e->reaped && n++ < max)
                        out[n - 1] = e->pid;
        return n;
}
