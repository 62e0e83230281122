/* bench_exec: one sandboxed execution through the engine, spawn to
 * removal, for the benchmarks that compare roots and runtimes (image.c,
 * docker.c). Include after bench.h. */
#ifndef PROCTOR_BENCH_EXEC_H
#define PROCTOR_BENCH_EXEC_H

#include "exec/exec.h"

struct bench_call {
        bool exited, removed;
        struct exec_result res;
};

static inline void bench_call_exit(struct exec *e, const struct exec_result *r, void *ud)
{
        struct bench_call *c = ud;

        c->exited = true;
        c->res = *r;
}

static inline void bench_call_remove(struct exec *e, uint64_t teardown_us, void *ud)
{
        ((struct bench_call *)ud)->removed = true;
}

/* Wall time of argv (which must exit 0) in a sandbox of `eng`, from the
 * spawn to on_remove; dies on any failure. */
static inline uint64_t bench_exec_true(uv_loop_t *loop, struct exec_engine *eng,
                                       struct exec_workspace *ws, char **argv)
{
        static const struct exec_callbacks cbs = {.on_exit = bench_call_exit,
                                                  .on_remove = bench_call_remove};
        struct exec_request req = {0};
        struct bench_call c = {0};
        struct exec *e;
        char err[512];
        uint64_t t0 = bench_now_ns();

        req.isolation = EXEC_SANDBOX;
        req.argv = argv;
        req.ws = ws;
        req.ws_mode = EXEC_WS_RW;
        req.limits = exec_limits_default();
        if (exec_spawn(eng, &req, &cbs, &c, &e, err, sizeof(err)) < 0)
                bench_die("exec_spawn: %s", err);
        while (!c.removed)
                if (uv_run(loop, UV_RUN_ONCE) == 0 && !c.removed)
                        bench_die("loop ran dry before on_remove");
        if (!c.exited || c.res.reason != EXEC_EXITED || c.res.exit_code != 0)
                bench_die("%s failed: %s %s", argv[0], exec_reason_name(c.res.reason), c.res.error);
        return bench_now_ns() - t0;
}

#endif
