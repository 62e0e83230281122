/* spawn: spawn-to-reap wall time of /bin/true from one running process, four
 * ways, interleaved round-robin (the starting variant rotates every round)
 * so that machine noise hits them all alike:
 *   bare     vfork + execve + waitpid (the fastest honest bare spawn here:
 *            posix_spawn is the same clone(CLONE_VM|CLONE_VFORK) plus signal
 *            bookkeeping, a few percent slower; -B posix to use it instead)
 *   local    exec_spawn, EXEC_LOCAL, loop run until on_remove
 *   sandbox  exec_spawn, EXEC_SANDBOX, default limits, workspace rw
 *   bwrap    vfork + execve of bwrap --unshare-all with the mounts proctor
 *            builds, + waitpid (as root bwrap needs no setuid bit)
 * local and sandbox each have their own engine, as a session has one mode.
 *
 * Usage: spawn [-n ROUNDS] [-w WARMUP] [-P PREWARM] [-S SETTLE_MS]
 *              [-W WORKSPACE] [-u UID] [-B posix|vfork]
 *              [-O bare|local|sandbox|bwrap]
 * -S runs the loop SETTLE_MS before every timed call, untimed: the pause
 *    between two tool calls, in which a prewarmed engine refills its pool
 *    and the kernel forgets recent work (default 0, or 20 with -P).
 * -P sets exec_engine_opts.prewarm.
 * -u chowns the workspace to UID (by default, as root, nobody's).
 * -O runs one variant alone, for profiling with perf or strace.
 * Prints markdown tables and the targets from DESIGN.md; exits non-zero only
 * when an execution fails. */
#include <getopt.h>
#include <sys/types.h>

#include "exec/exec.h"
#include "tests/bench/bench.h"

enum { V_BARE, V_LOCAL, V_SANDBOX, V_BWRAP, NV };

static const char *const vnames[NV] = {"bare", "local", "sandbox", "bwrap"};

struct call {
        bool started, exited, removed;
        struct exec_result res;
        uint64_t setup_us, teardown_us, t_exit, t_end;
};

struct ctx {
        uv_loop_t *loop;
        struct exec_engine *eng[NV]; /* V_LOCAL and V_SANDBOX */
        const char *ws;
        struct exec_workspace *wsh;
        char *bwrap;
        char *bwrap_argv[48];
        bool bare_posix; /* -B posix: bare via posix_spawn instead of vfork */
        unsigned prewarm;
        uint64_t settle_ms;
        struct bench_series s[NV], setup, to_exit, teardown;
};

static char *true_argv[] = {"/bin/true", NULL};

static void on_start(struct exec *e, int pid, uint64_t setup_us, void *ud)
{
        struct call *c = ud;

        c->started = true;
        c->setup_us = setup_us;
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
        struct call *c = ud;

        c->t_end = bench_now_ns();
        c->removed = true;
        c->teardown_us = teardown_us;
}

static const struct exec_callbacks callbacks = {
    .on_start = on_start,
    .on_exit = on_exit_cb,
    .on_remove = on_remove,
};

static void settle_done(uv_timer_t *t)
{
        *(bool *)t->data = true;
}

/* Runs the loop for `ms` without timing anything: the pause between two
 * tool calls, in which a prewarmed engine refills its pool. On cgroup v1 a
 * move through cgroup.procs after such a pause waits for a fresh RCU grace
 * period (milliseconds); proctor's children join through tasks, which does
 * not, and the paused variants show it. */
static void settle(struct ctx *cx, uint64_t ms)
{
        uv_timer_t t;
        bool done = false;

        uv_timer_init(cx->loop, &t);
        t.data = &done;
        uv_timer_start(&t, settle_done, ms, 0);
        while (!done)
                uv_run(cx->loop, UV_RUN_ONCE);
        uv_close((uv_handle_t *)&t, NULL);
        uv_run(cx->loop, UV_RUN_NOWAIT);
}

static uint64_t run_exec(struct ctx *cx, int v, struct call *c, uint64_t *to_exit)
{
        struct exec_request req;
        struct exec *e;
        char err[512];
        uint64_t t0;
        int rc;

        memset(c, 0, sizeof(*c));
        memset(&req, 0, sizeof(req));
        req.isolation = v == V_SANDBOX ? EXEC_SANDBOX : EXEC_LOCAL;
        req.argv = true_argv;
        req.workspace = cx->ws;
        req.ws = cx->wsh;
        req.ws_mode = EXEC_WS_RW;
        req.limits = exec_limits_default();
        t0 = bench_now_ns();
        rc = exec_spawn(cx->eng[v], &req, &callbacks, c, &e, err, sizeof(err));
        if (rc < 0)
                bench_die("exec_spawn (%s): %s", vnames[v], err);
        while (!c->removed) {
                if (uv_run(cx->loop, UV_RUN_ONCE) == 0 && !c->removed)
                        bench_die("loop ran dry before on_remove");
        }
        if (!c->exited)
                bench_die("on_remove without on_exit");
        if (c->res.reason != EXEC_EXITED || c->res.exit_code != 0)
                bench_die("%s execution of /bin/true failed: %s, exit %d, signal %d%s%s", vnames[v],
                          exec_reason_name(c->res.reason), c->res.exit_code, c->res.signal,
                          c->res.error[0] ? ": " : "", c->res.error);
        if (!c->started)
                bench_die("%s execution never reported on_start", vnames[v]);
        *to_exit = c->t_exit - t0;
        return c->t_end - t0;
}

static void run_one(struct ctx *cx, int v, bool record)
{
        struct call c;
        uint64_t ns = 0, to_exit;

        if (cx->settle_ms > 0)
                settle(cx, cx->settle_ms);
        switch (v) {
        case V_BARE:
                ns = cx->bare_posix ? bench_run_posix_spawn(true_argv)
                                    : bench_run_process(true_argv, false);
                break;
        case V_LOCAL:
                ns = run_exec(cx, v, &c, &to_exit);
                break;
        case V_SANDBOX:
                ns = run_exec(cx, v, &c, &to_exit);
                if (record) {
                        series_add(&cx->setup, c.setup_us * 1000u);
                        series_add(&cx->to_exit, to_exit);
                        series_add(&cx->teardown, c.teardown_us * 1000u);
                }
                break;
        case V_BWRAP:
                ns = bench_run_process(cx->bwrap_argv, false);
                break;
        }
        if (record)
                series_add(&cx->s[v], ns);
}

static void print_phase(const char *what, const struct bench_series *s)
{
        printf("| %s | %.0f | %.0f | %.0f |\n", what, series_median_us(s), series_pct_us(s, 90),
               series_pct_us(s, 0.0001));
}

static void usage(void)
{
        fprintf(stderr, "usage: spawn [-n ROUNDS] [-w WARMUP] [-P PREWARM] [-S SETTLE_MS] "
                        "[-W WORKSPACE] [-u UID] [-B posix|vfork] "
                        "[-O bare|local|sandbox|bwrap]\n");
        exit(2);
}

int main(int argc, char **argv)
{
        struct ctx cx;
        struct exec_engine_opts eo;
        char tmpl[] = "/tmp/proctor-bench-XXXXXX";
        char err[512];
        char *ws = NULL;
        long rounds = 200, warmup = 10, chown_uid = -1, settle_ms = -1;
        double bare, bwrap, sb;
        uint64_t t0, t_engine = 0;
        long r;
        int opt, i, only = -1;

        memset(&cx, 0, sizeof(cx));
        while ((opt = getopt(argc, argv, "n:w:P:S:W:u:B:O:h")) != -1) {
                switch (opt) {
                case 'n':
                        rounds = strtol(optarg, NULL, 10);
                        break;
                case 'w':
                        warmup = strtol(optarg, NULL, 10);
                        break;
                case 'P':
                        cx.prewarm = (unsigned)strtoul(optarg, NULL, 10);
                        break;
                case 'S':
                        settle_ms = strtol(optarg, NULL, 10);
                        break;
                case 'W':
                        ws = optarg;
                        break;
                case 'u':
                        chown_uid = strtol(optarg, NULL, 10);
                        break;
                case 'B':
                        if (strcmp(optarg, "posix") == 0)
                                cx.bare_posix = true;
                        else if (strcmp(optarg, "vfork") != 0)
                                usage();
                        break;
                case 'O':
                        for (i = 0; i < NV && strcmp(optarg, vnames[i]) != 0; i++)
                                ;
                        if (i == NV)
                                usage();
                        only = i;
                        break;
                default:
                        usage();
                }
        }
        if (rounds < 1 || warmup < 0)
                usage();
        cx.settle_ms = settle_ms >= 0 ? (uint64_t)settle_ms : cx.prewarm > 0 ? 20 : 0;
        if (ws == NULL)
                ws = bench_workspace(tmpl);
        if (chown_uid >= 0 && chown(ws, (uid_t)chown_uid, (gid_t)chown_uid) != 0)
                bench_die("chown %s: %s", ws, strerror(errno));
        cx.ws = ws;
        /* Opened once, as a session does (each call mounts that directory). */
        if (exec_workspace_open(ws, &cx.wsh, err, sizeof(err)) < 0)
                bench_die("%s", err);

        cx.loop = uv_default_loop();
        memset(&eo, 0, sizeof(eo));
        eo.prewarm = cx.prewarm;
        for (i = V_LOCAL; i <= V_SANDBOX; i++) {
                t0 = bench_now_ns();
                if (exec_engine_new(cx.loop, &eo, &cx.eng[i], err, sizeof(err)) < 0)
                        bench_die("exec_engine_new: %s", err);
                t_engine = bench_now_ns() - t0;
        }

        cx.bwrap = bench_which("bwrap");
        if (cx.bwrap != NULL)
                bwrap_argv(cx.bwrap_argv, cx.bwrap, ws, true_argv);

        series_init(&cx.s[V_BARE], cx.bare_posix ? "bare (posix_spawn)" : "bare (vfork+execve)",
                    (size_t)rounds);
        series_init(&cx.s[V_LOCAL], "local (exec_spawn)", (size_t)rounds);
        series_init(&cx.s[V_SANDBOX], "sandbox (exec_spawn)", (size_t)rounds);
        series_init(&cx.s[V_BWRAP], "bwrap --unshare-all", (size_t)rounds);
        series_init(&cx.setup, "sandbox setup_us (on_start)", (size_t)rounds);
        series_init(&cx.to_exit, "sandbox exec_spawn to on_exit", (size_t)rounds);
        series_init(&cx.teardown, "sandbox teardown_us (on_remove)", (size_t)rounds);
        cx.s[V_BWRAP].skipped = cx.bwrap == NULL;
        for (i = 0; i < NV; i++)
                if (only >= 0 && i != only)
                        cx.s[i].skipped = true;

        for (r = 0; r < warmup + rounds; r++) {
                for (i = 0; i < NV; i++) {
                        int v = (int)((r + i) % NV);
                        if (!cx.s[v].skipped)
                                run_one(&cx, v, r >= warmup);
                }
        }

        for (i = V_LOCAL; i <= V_SANDBOX; i++)
                exec_engine_free(cx.eng[i]);
        uv_run(cx.loop, UV_RUN_DEFAULT);

        bare = !cx.s[V_BARE].skipped ? series_median_us(&cx.s[V_BARE]) : 0;
        bwrap = !cx.s[V_BWRAP].skipped ? series_median_us(&cx.s[V_BWRAP]) : 0;
        sb = !cx.s[V_SANDBOX].skipped ? series_median_us(&cx.s[V_SANDBOX]) : 0;

        printf("### spawn-to-reap of /bin/true from one process (%ld rounds interleaved, "
               "%ld warm-up; prewarm %u",
               rounds, warmup, cx.prewarm);
        if (cx.settle_ms > 0)
                printf(", %llu ms untimed pause before each call",
                       (unsigned long long)cx.settle_ms);
        printf("; microseconds)\n\n");
        printf("| variant | median | p90 | min | median / bare | median / bwrap |\n");
        printf("|---|---:|---:|---:|---:|---:|\n");
        for (i = 0; i < NV; i++)
                bench_print_row(&cx.s[i], bare, bwrap);
        if (!cx.s[V_SANDBOX].skipped) {
                printf("\n| sandbox phase (proctor's own numbers) | median | p90 | min |\n");
                printf("|---|---:|---:|---:|\n");
                print_phase("setup_us: exec_spawn to command launched", &cx.setup);
                print_phase("exec_spawn to on_exit (the result is known)", &cx.to_exit);
                print_phase("teardown_us: exit reported to removed", &cx.teardown);
        }
        printf("\nworkspace %s (owner uid %s); exec_engine_new took %.0f us\n", ws,
               chown_uid >= 0 ? "as given by -u" : "of the caller", (double)t_engine / 1000.0);
        if (cx.bwrap == NULL)
                printf("note: bwrap not installed, its row and target are skipped "
                       "(apt-get install -y bubblewrap)\n");

        printf("\nTargets (DESIGN.md, Performance):\n\n");
        if (sb <= 0 || bare <= 0) {
                printf("- not evaluated: -O ran a single variant\n");
        } else {
                if (bwrap > 0)
                        printf("- sandbox median <= 0.5x bwrap: %.2fx (%.0f us vs %.0f us): "
                               "%s\n",
                               sb / bwrap, sb, bwrap, sb <= 0.5 * bwrap ? "PASS" : "MISS");
                else
                        printf("- sandbox median <= 0.5x bwrap: SKIPPED (no bwrap)\n");
                printf("- sandbox median <= 3x bare: %.2fx (%.0f us vs %.0f us): %s\n", sb / bare,
                       sb, bare, sb <= 3 * bare ? "PASS" : "MISS");
        }
        if (ws == tmpl)
                rmdir(ws);
        return 0;
}
