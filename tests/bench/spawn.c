/* spawn: spawn-to-reap wall time of /bin/true from one running process, four
 * ways, interleaved round-robin (the starting variant rotates every round)
 * so that machine noise hits them all alike:
 *   bare     posix_spawn (glibc: clone(CLONE_VM|CLONE_VFORK) + execve) + waitpid
 *   local    exec_spawn, EXEC_LOCAL, loop run until on_remove
 *   sandbox  exec_spawn, EXEC_SANDBOX, default limits, workspace rw
 *   bwrap    posix_spawn of bwrap --unshare-all with the mounts proctor builds
 * Usage: spawn [-n ROUNDS] [-w WARMUP] [-W WORKSPACE] [-u UID] [-B posix|vfork]
 * Prints markdown tables and the targets from DESIGN.md; exits non-zero only
 * when an execution fails. */
#include <getopt.h>
#include <sys/types.h>

#include "exec/exec.h"
#include "tests/bench/bench.h"

enum { V_BARE, V_LOCAL, V_SANDBOX, V_BWRAP, NV };

struct call {
        bool started, exited, removed;
        struct exec_result res;
        uint64_t setup_us, teardown_us, t_end;
};

struct ctx {
        uv_loop_t *loop;
        struct exec_engine *eng;
        const char *ws;
        char *bwrap;
        char *bwrap_argv[48];
        bool bare_vfork;
        struct bench_series s[NV], setup, teardown;
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

static uint64_t run_exec(struct ctx *cx, enum exec_isolation iso, struct call *c)
{
        struct exec_request req;
        struct exec *e;
        char err[512];
        uint64_t t0;
        int rc;

        memset(c, 0, sizeof(*c));
        memset(&req, 0, sizeof(req));
        req.isolation = iso;
        req.argv = true_argv;
        req.workspace = cx->ws;
        req.ws_mode = EXEC_WS_RW;
        req.limits = exec_limits_default();
        t0 = bench_now_ns();
        rc = exec_spawn(cx->eng, &req, &callbacks, c, &e, err, sizeof(err));
        if (rc < 0)
                bench_die("exec_spawn (%s): %s", iso == EXEC_SANDBOX ? "sandbox" : "local", err);
        while (!c->removed) {
                if (uv_run(cx->loop, UV_RUN_ONCE) == 0 && !c->removed)
                        bench_die("loop ran dry before on_remove");
        }
        if (!c->exited)
                bench_die("on_remove without on_exit");
        if (c->res.reason != EXEC_EXITED || c->res.exit_code != 0)
                bench_die("%s execution of /bin/true failed: %s, exit %d, signal %d%s%s",
                          iso == EXEC_SANDBOX ? "sandbox" : "local",
                          exec_reason_name(c->res.reason), c->res.exit_code, c->res.signal,
                          c->res.error[0] ? ": " : "", c->res.error);
        return c->t_end - t0;
}

static uint64_t run_bare_vfork(void)
{
        uint64_t t0, t1;
        pid_t pid;
        int st;

        t0 = bench_now_ns();
        pid = vfork();
        if (pid == 0) {
                execve(true_argv[0], true_argv, environ);
                _exit(127);
        }
        if (pid < 0)
                bench_die("vfork: %s", strerror(errno));
        while (waitpid(pid, &st, 0) < 0)
                if (errno != EINTR)
                        bench_die("waitpid: %s", strerror(errno));
        t1 = bench_now_ns();
        if (!WIFEXITED(st) || WEXITSTATUS(st) != 0)
                bench_die("bare /bin/true failed (status 0x%x)", st);
        return t1 - t0;
}

static void run_one(struct ctx *cx, int v, bool record)
{
        struct call c;
        uint64_t ns = 0;

        switch (v) {
        case V_BARE:
                ns = cx->bare_vfork ? run_bare_vfork() : bench_run_process(true_argv, false);
                break;
        case V_LOCAL:
                ns = run_exec(cx, EXEC_LOCAL, &c);
                break;
        case V_SANDBOX:
                ns = run_exec(cx, EXEC_SANDBOX, &c);
                if (!c.started)
                        bench_die("sandbox execution never reported on_start");
                if (record) {
                        series_add(&cx->setup, c.setup_us * 1000u);
                        series_add(&cx->teardown, c.teardown_us * 1000u);
                }
                break;
        case V_BWRAP:
                if (cx->bwrap == NULL)
                        return;
                ns = bench_run_process(cx->bwrap_argv, false);
                break;
        }
        if (record)
                series_add(&cx->s[v], ns);
}

static void print_row(const struct bench_series *s, double bare, double bwrap)
{
        char r1[32], r2[32];
        double med = series_median_us(s);

        if (s->skipped) {
                printf("| %s | skipped | | | | |\n", s->name);
                return;
        }
        printf("| %s | %.0f | %.0f | %.0f | %s | %s |\n", s->name, med, series_pct_us(s, 90),
               series_pct_us(s, 0.0001), fmt_ratio(r1, sizeof(r1), med, bare),
               fmt_ratio(r2, sizeof(r2), med, bwrap));
}

static void usage(void)
{
        fprintf(stderr, "usage: spawn [-n ROUNDS] [-w WARMUP] [-W WORKSPACE] [-u UID] "
                        "[-B posix|vfork]\n");
        exit(2);
}

int main(int argc, char **argv)
{
        struct ctx cx;
        char tmpl[] = "/tmp/proctor-bench-XXXXXX";
        char err[512];
        char *ws = NULL;
        long rounds = 200, warmup = 10, chown_uid = -1;
        double bare, bwrap, sb;
        uint64_t t0, t_engine;
        long r;
        int opt, i;

        memset(&cx, 0, sizeof(cx));
        while ((opt = getopt(argc, argv, "n:w:W:u:B:h")) != -1) {
                switch (opt) {
                case 'n':
                        rounds = strtol(optarg, NULL, 10);
                        break;
                case 'w':
                        warmup = strtol(optarg, NULL, 10);
                        break;
                case 'W':
                        ws = optarg;
                        break;
                case 'u':
                        chown_uid = strtol(optarg, NULL, 10);
                        break;
                case 'B':
                        if (strcmp(optarg, "vfork") == 0)
                                cx.bare_vfork = true;
                        else if (strcmp(optarg, "posix") != 0)
                                usage();
                        break;
                default:
                        usage();
                }
        }
        if (rounds < 1 || warmup < 0)
                usage();
        if (ws == NULL) {
                ws = mkdtemp(tmpl);
                if (ws == NULL)
                        bench_die("mkdtemp: %s", strerror(errno));
        }
        if (chown_uid >= 0 && chown(ws, (uid_t)chown_uid, (gid_t)chown_uid) != 0)
                bench_die("chown %s: %s", ws, strerror(errno));
        cx.ws = ws;

        cx.loop = uv_default_loop();
        t0 = bench_now_ns();
        if (exec_engine_new(cx.loop, NULL, &cx.eng, err, sizeof(err)) < 0)
                bench_die("exec_engine_new: %s", err);
        t_engine = bench_now_ns() - t0;

        cx.bwrap = bench_which("bwrap");
        if (cx.bwrap != NULL)
                bwrap_argv(cx.bwrap_argv, cx.bwrap, ws, true_argv);

        series_init(&cx.s[V_BARE], cx.bare_vfork ? "bare (vfork+execve)" : "bare (posix_spawn)",
                    (size_t)rounds);
        series_init(&cx.s[V_LOCAL], "local (exec_spawn)", (size_t)rounds);
        series_init(&cx.s[V_SANDBOX], "sandbox (exec_spawn)", (size_t)rounds);
        series_init(&cx.s[V_BWRAP], "bwrap --unshare-all", (size_t)rounds);
        series_init(&cx.setup, "sandbox setup_us (on_start)", (size_t)rounds);
        series_init(&cx.teardown, "sandbox teardown_us (on_remove)", (size_t)rounds);
        cx.s[V_BWRAP].skipped = cx.bwrap == NULL;

        for (r = 0; r < warmup + rounds; r++)
                for (i = 0; i < NV; i++)
                        run_one(&cx, (int)((r + i) % NV), r >= warmup);

        exec_engine_free(cx.eng);
        uv_run(cx.loop, UV_RUN_DEFAULT);

        bare = series_median_us(&cx.s[V_BARE]);
        bwrap = cx.bwrap != NULL ? series_median_us(&cx.s[V_BWRAP]) : 0;
        sb = series_median_us(&cx.s[V_SANDBOX]);

        printf("### spawn-to-reap of /bin/true from one process (%ld rounds interleaved, "
               "%ld warm-up; microseconds)\n\n",
               rounds, warmup);
        printf("| variant | median | p90 | min | median / bare | median / bwrap |\n");
        printf("|---|---:|---:|---:|---:|---:|\n");
        for (i = 0; i < NV; i++)
                print_row(&cx.s[i], bare, bwrap);
        printf("\n| sandbox phase (proctor's own numbers) | median | p90 | min |\n");
        printf("|---|---:|---:|---:|\n");
        printf("| setup_us: exec_spawn to command launched | %.0f | %.0f | %.0f |\n",
               series_median_us(&cx.setup), series_pct_us(&cx.setup, 90),
               series_pct_us(&cx.setup, 0.0001));
        printf("| teardown_us: exit reported to removed | %.0f | %.0f | %.0f |\n",
               series_median_us(&cx.teardown), series_pct_us(&cx.teardown, 90),
               series_pct_us(&cx.teardown, 0.0001));
        printf("\nworkspace %s (owner uid %s); exec_engine_new took %.0f us\n", ws,
               chown_uid >= 0 ? "as given by -u" : "of the caller",
               (double)t_engine / 1000.0);
        if (cx.bwrap == NULL)
                printf("note: bwrap not installed, its row and target are skipped "
                       "(apt-get install -y bubblewrap)\n");

        printf("\nTargets (DESIGN.md, Performance):\n\n");
        if (cx.bwrap != NULL)
                printf("- sandbox median <= 0.5x bwrap: %.2fx (%.0f us vs %.0f us): %s\n",
                       sb / bwrap, sb, bwrap, sb <= 0.5 * bwrap ? "PASS" : "MISS");
        else
                printf("- sandbox median <= 0.5x bwrap: SKIPPED (no bwrap)\n");
        printf("- sandbox median <= 3x bare: %.2fx (%.0f us vs %.0f us): %s\n", sb / bare, sb,
               bare, sb <= 3 * bare ? "PASS" : "MISS");
        if (ws == tmpl)
                rmdir(ws);
        return 0;
}
