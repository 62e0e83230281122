/* pywarm: run_python_code's `print(1)` in sandbox mode, call to result
 * (exec_spawn to on_exit, the moment the tool result is built), three ways
 * interleaved round-robin against a cold `python3 -c 'print(1)'` process:
 *   python3 -c  vfork + execve + waitpid of /usr/bin/python3, the one a
 *               sandbox's PATH finds
 *   cold        exec_spawn of the stub (exec/native/pystub.c) in a prebuilt
 *               sandbox (pool of 1, no warm interpreter): the empty pool
 *   warm        exec_spawn taking a warm sandbox (exec_engine_opts.warm 1)
 *   tool call   the same as a session makes it: dispatch_start of
 *               run_python_code {"code": "print(1)"} to its done callback
 *               (the tool result), its events on a bus whose subscriber
 *               serializes each (as the trace writer does), on an engine
 *               set up as a session's (core/session/session.c: prewarm 1, warm up
 *               to 3, its room bounded by dispatch_warm_room)
 *   bash        `bash -c 'echo 1'` as a process, and in a sandbox from a
 *               pool of 1 (no warm bash: whether one would pay)
 * with SETTLE_MS of idle loop before each call (the pause between tool
 * calls, in which pools refill). Also, read just before each warm call,
 * the refill's cost (the CPU time the waiting warm sandbox's start took,
 * from its cgroup) and the memory it holds (its cgroup's usage; without
 * cgroups, as an unprivileged user, its interpreter's RSS, which counts
 * shared pages too).
 * Usage: pywarm [-n ROUNDS] [-w WARMUP] [-S SETTLE_MS]; PYWARM_DEBUG=1 prints
 * each sandbox call's total, wall and CPU time on stderr.
 * Exits non-zero only when an execution fails or gives the wrong output. */
#include <getopt.h>

#include "core/util/bus.h"
#include "core/tools/dispatch.h"
#include "exec/exec.h"
#include "exec/native/pystub.h"
#include "tests/bench/bench.h"

enum { V_PROC, V_COLD, V_WARM, V_TOOL, V_BASH_PROC, V_BASH, NV };

static const char *const vnames[NV] = {
    "python3 -c (process)",       "sandbox, cold interpreter",
    "sandbox, warm interpreter",  "tool call (dispatch), warm, as a session",
    "bash -c 'echo 1' (process)", "bash -c 'echo 1', sandbox (pool of 1)"};

struct call {
        bool exited, removed;
        struct exec_result res;
        char out[64];
        size_t nout;
        uint64_t t_exit;
};

struct ctx {
        uv_loop_t *loop;
        struct exec_engine *cold, *warm, *tool;
        struct bus *bus;
        struct dispatch_ctx dx;
        bool tool_warm; /* the last tool call's execution was warm */
        struct exec_workspace *wsh;
        const char *ws;
        const char *python; /* the interpreter a sandbox's PATH finds */
        uint64_t settle_ms;
        uv_timer_t idle;
        struct bench_series s[NV], refill_cpu, mem;
};

static void on_output(struct exec *e, enum exec_stream s, const char *buf, size_t n, void *ud)
{
        struct call *c = ud;

        if (c->nout + n < sizeof(c->out)) {
                memcpy(c->out + c->nout, buf, n);
                c->nout += n;
        }
}

static void on_exit_cb(struct exec *e, const struct exec_result *r, void *ud)
{
        struct call *c = ud;

        c->t_exit = bench_now_ns();
        c->exited = true;
        c->res = *r;
}

static void on_remove(struct exec *e, uint64_t teardown_us, void *ud)
{
        ((struct call *)ud)->removed = true;
}

static const struct exec_callbacks callbacks = {
    .on_output = on_output, .on_exit = on_exit_cb, .on_remove = on_remove};

/* uv_stop too: UV_RUN_ONCE still waits for I/O after a timer ran. */
static void tick(uv_timer_t *t)
{
        *(bool *)t->data = true;
        uv_stop(t->loop);
}

/* Runs the loop for `ms`, untimed. */
static void idle(struct ctx *cx, uint64_t ms)
{
        bool done = false;

        cx->idle.data = &done;
        uv_timer_start(&cx->idle, tick, ms, 0);
        while (!done)
                uv_run(cx->loop, UV_RUN_ONCE);
}

/* Whether a warm bash would pay: what a bash start costs by itself, and
 * in a sandbox from the pool (no interpreter kept warm). */
static char *bash_argv[] = {"bash", "-c", "echo 1", NULL};

static uint64_t run_sandbox(struct ctx *cx, int v, bool *was_warm)
{
        struct exec_request req;
        struct call c;
        struct exec *e;
        char err[512];
        uint64_t t0;

        memset(&c, 0, sizeof(c));
        memset(&req, 0, sizeof(req));
        req.isolation = EXEC_SANDBOX;
        req.argv = v == V_BASH ? bash_argv : exec_python_argv;
        req.ws = cx->wsh;
        req.ws_mode = EXEC_WS_RW;
        req.limits = exec_limits_default();
        req.stdin_data = v == V_BASH ? NULL : "print(1)";
        req.stdin_len = v == V_BASH ? 0 : 8;
        req.warm = v == V_WARM;
        t0 = bench_now_ns();
        if (exec_spawn(v == V_WARM ? cx->warm : cx->cold, &req, &callbacks, &c, &e, err,
                       sizeof(err)) < 0)
                bench_die("exec_spawn: %s", err);
        *was_warm = exec_warm(e);
        while (!c.removed)
                if (uv_run(cx->loop, UV_RUN_ONCE) == 0 && !c.removed)
                        bench_die("loop ran dry before on_remove");
        if (c.res.reason != EXEC_EXITED || c.res.exit_code != 0 || c.nout != 2 ||
            memcmp(c.out, "1\n", 2) != 0)
                bench_die("%s: %s, exit %d, output %.*s %s", vnames[v],
                          exec_reason_name(c.res.reason), c.res.exit_code, (int)c.nout, c.out,
                          c.res.error);
        if (getenv("PYWARM_DEBUG"))
                fprintf(stderr, "%s total %llu us wall %llu ms cpu %llu ms\n", vnames[v],
                        (unsigned long long)(c.t_exit - t0) / 1000,
                        (unsigned long long)c.res.wall_ms, (unsigned long long)c.res.cpu_ms);
        return c.t_exit - t0;
}

/* The trace writer's share of a session's work: every event serialized;
 * and whether the last execution made was warm. */
static void serialize(const json_t *ev, void *ud)
{
        const char *type = json_string_value(json_object_get(ev, "type"));

        free(json_dumps(ev, JSON_COMPACT));
        if (type != NULL && strcmp(type, "exec.create") == 0)
                *(bool *)ud = json_is_true(json_object_get(ev, "warm"));
}

struct tool_done {
        bool done;
        bool ok;
        char out[64];
        uint64_t t;
};

static void on_tool_done(struct tool_run *r, const struct tool_outcome *o, void *ud)
{
        struct tool_done *d = ud;

        d->t = bench_now_ns();
        d->done = true;
        d->ok = o->ok;
        snprintf(d->out, sizeof(d->out), "%.*s", (int)o->len, o->output);
}

/* run_python_code as a session's tool call, call to result; then until
 * its execution is gone. */
static uint64_t run_tool(struct ctx *cx)
{
        json_t *args = json_pack("{s:s}", "code", "print(1)");
        struct tool_done d = {0};
        struct tool_run *r;
        char err[512];
        uint64_t t0 = bench_now_ns();

        if (dispatch_start(&cx->dx, "call_1", "run_python_code", args, on_tool_done, &d, &r, err,
                           sizeof(err)) < 0)
                bench_die("dispatch_start: %s", err);
        json_decref(args);
        while (!d.done)
                if (uv_run(cx->loop, UV_RUN_ONCE) == 0 && !d.done)
                        bench_die("loop ran dry before the tool result");
        if (!d.ok || strcmp(d.out, "1\n") != 0)
                bench_die("%s: %s", vnames[V_TOOL], d.out);
        while (exec_engine_live(cx->tool) > 0)
                uv_run(cx->loop, UV_RUN_ONCE);
        return d.t - t0;
}

/* Before a warm call: what the waiting warm sandbox cost to start (its
 * CPU time) and holds (its memory). */
static void measure_waiting(struct ctx *cx, bool record)
{
        struct exec_stats st;

        if (exec_engine_warm_stats(cx->warm, &st) != 0)
                bench_die("no warm sandbox waits %llu ms after the last call",
                          (unsigned long long)cx->settle_ms);
        if (!record)
                return;
        series_add(&cx->refill_cpu, st.cpu_ms * 1000000u);
        /* bytes, stored as "ns" so the series' percentiles serve */
        series_add(&cx->mem, st.mem_bytes);
}

static void run_one(struct ctx *cx, int v, bool record)
{
        char *argv[] = {(char *)cx->python, "-c", "print(1)", NULL};
        uint64_t ns;
        bool was_warm = false;

        idle(cx, cx->settle_ms);
        if (v == V_WARM)
                measure_waiting(cx, record);
        if (v == V_PROC) {
                ns = bench_run_process(argv, true);
        } else if (v == V_BASH_PROC) {
                char *bash[] = {"/bin/bash", "-c", "echo 1", NULL};
                ns = bench_run_process(bash, true);
        } else if (v == V_TOOL) {
                ns = run_tool(cx);
                if (!cx->tool_warm)
                        bench_die("%s did not get a warm sandbox", vnames[v]);
        } else {
                ns = run_sandbox(cx, v, &was_warm);
                if (was_warm != (v == V_WARM))
                        bench_die("%s call %s a warm sandbox", vnames[v],
                                  was_warm ? "took" : "did not get");
        }
        if (record)
                series_add(&cx->s[v], ns);
}

static void print_row(const struct bench_series *s, double base)
{
        char r[32];
        double med = series_median_us(s);

        printf("| %s | %.0f | %.0f | %s |\n", s->name, med, series_pct_us(s, 90),
               fmt_ratio(r, sizeof(r), med, base));
}

int main(int argc, char **argv)
{
        struct exec_engine_opts cold_o = {.prewarm = 1}, warm_o = {.warm = 1},
                                tool_o = {.prewarm = 1, .warm = 3};
        char tmpl[] = "/tmp/proctor-bench-pywarm.XXXXXX", err[512];
        struct ctx cx = {.settle_ms = 100};
        unsigned rounds = 50, warmup = 3, r;
        uv_loop_t loop;
        int opt, v;

        while ((opt = getopt(argc, argv, "n:w:S:")) != -1) {
                if (opt == 'n')
                        rounds = (unsigned)atoi(optarg);
                else if (opt == 'w')
                        warmup = (unsigned)atoi(optarg);
                else if (opt == 'S')
                        cx.settle_ms = (uint64_t)atoll(optarg);
                else
                        bench_die("usage: pywarm [-n ROUNDS] [-w WARMUP] [-S SETTLE_MS]");
        }
        /* The sandbox's PATH finds /usr/bin's: compare with the same one
         * (not a version manager's shim that would be on the host's PATH). */
        cx.python =
            access("/usr/bin/python3", X_OK) == 0 ? "/usr/bin/python3" : bench_which("python3");
        if (rounds == 0 || cx.python == NULL)
                bench_die("no rounds, or no python3 on PATH");
        uv_loop_init(&loop);
        cx.loop = &loop;
        uv_timer_init(&loop, &cx.idle);
        cx.ws = bench_workspace(tmpl);
        if (exec_workspace_open(cx.ws, &cx.wsh, err, sizeof(err)) < 0 ||
            exec_engine_new(&loop, &cold_o, &cx.cold, err, sizeof(err)) < 0 ||
            exec_engine_new(&loop, &warm_o, &cx.warm, err, sizeof(err)) < 0 ||
            exec_engine_new(&loop, &tool_o, &cx.tool, err, sizeof(err)) < 0)
                bench_die("%s", err);
        cx.bus = bus_new();
        bus_subscribe(cx.bus, serialize, &cx.tool_warm);
        cx.dx.eng = cx.tool;
        cx.dx.bus = cx.bus;
        cx.dx.mode = EXEC_SANDBOX;
        cx.dx.workspace = exec_workspace_path(cx.wsh);
        cx.dx.ws = cx.wsh;
        cx.dx.ws_mode = EXEC_WS_RW;
        cx.dx.limits = exec_limits_default();
        cx.dx.max_parallel = 4;
        exec_engine_set_warm_room(cx.tool, dispatch_warm_room, &cx.dx);
        for (v = 0; v < NV; v++)
                series_init(&cx.s[v], vnames[v], rounds);
        series_init(&cx.refill_cpu, "refill: CPU time a warm sandbox's start cost", rounds);
        series_init(&cx.mem, "memory a waiting warm sandbox holds", rounds);
        /* The first warm request is served cold (nothing to start ahead
         * yet) and teaches the engine what to keep warm: untimed. */
        {
                bool was_warm;
                run_sandbox(&cx, V_WARM, &was_warm);
                run_tool(&cx);
        }
        for (r = 0; r < warmup + rounds; r++)
                for (v = 0; v < NV; v++)
                        run_one(&cx, (int)(v + r) % NV, r >= warmup);
        printf("### run_python_code `print(1)`, %u rounds, %llu ms between calls (us)\n\n", rounds,
               (unsigned long long)cx.settle_ms);
        printf("| variant | median | p90 | vs its process |\n|---|---:|---:|---:|\n");
        for (v = 0; v < NV; v++)
                print_row(&cx.s[v],
                          series_median_us(&cx.s[v >= V_BASH_PROC ? V_BASH_PROC : V_PROC]));
        printf("\n| pool | median | p90 |\n|---|---:|---:|\n");
        printf("| %s (ms) | %.0f | %.0f |\n", cx.refill_cpu.name,
               series_median_us(&cx.refill_cpu) / 1000.0,
               series_pct_us(&cx.refill_cpu, 90) / 1000.0);
        printf("| %s (MiB) | %.1f | %.1f |\n", cx.mem.name,
               series_median_us(&cx.mem) * 1000.0 / 1048576.0,
               series_pct_us(&cx.mem, 90) * 1000.0 / 1048576.0);
        printf("\ntarget (DESIGN.md): warm at most 0.2x python3 -c: %.2fx exec_spawn to exit, "
               "%.2fx tool call to result\n",
               series_median_us(&cx.s[V_WARM]) / series_median_us(&cx.s[V_PROC]),
               series_median_us(&cx.s[V_TOOL]) / series_median_us(&cx.s[V_PROC]));
        dispatch_close(&cx.dx);
        exec_engine_free(cx.cold);
        exec_engine_free(cx.warm);
        exec_engine_free(cx.tool);
        uv_close((uv_handle_t *)&cx.idle, NULL);
        uv_run(&loop, UV_RUN_DEFAULT);
        exec_workspace_free(cx.wsh);
        bus_free(cx.bus);
        rmdir(cx.ws);
        return 0;
}
