/* kill: how long the operator's kill takes to end a whole sandbox while a
 * fork bomb runs inside, from exec_kill to the exit being reported (every
 * process of the sandbox gone, output pipes closed). Target: under 50 ms.
 *
 * Usage: kill [-n ROUNDS] [-d DELAY_MS]
 *   -d: how long the bomb runs before the kill (default 300 ms). */
#include "bench.h"

#include <uv.h>

#include "exec/exec.h"

struct round {
        struct exec *e;
        uint64_t kill_ns, exit_ns;
        int started, removed;
        struct exec_result res;
};

static void on_start(struct exec *e, int pid, uint64_t setup_us, void *ud)
{
        ((struct round *)ud)->started = 1;
}

static void on_exit_cb(struct exec *e, const struct exec_result *res, void *ud)
{
        struct round *r = ud;

        r->exit_ns = bench_now_ns();
        r->res = *res;
}

static void on_remove(struct exec *e, uint64_t teardown_us, void *ud)
{
        ((struct round *)ud)->removed = 1;
}

static void fire(uv_timer_t *t)
{
        struct round *r = t->data;

        r->kill_ns = bench_now_ns();
        if (exec_kill(r->e) != 0)
                bench_die("the bomb ended before the kill");
}

int main(int argc, char **argv)
{
        static const struct exec_callbacks cb = {
            .on_start = on_start, .on_exit = on_exit_cb, .on_remove = on_remove};
        char *bomb[] = {"bash", "-c", "b() { b | b & }; b; sleep 60", NULL};
        /* Stats rarely, so that the pids limit does not end the bomb before
         * the operator's kill does: the bomb keeps forking at its limit. */
        struct exec_engine_opts eo = {.stats_interval_ms = 60000};
        struct bench_series s;
        struct exec_engine *eng;
        unsigned rounds = 20, delay = 300, i;
        uv_loop_t loop;
        uv_timer_t t;
        char err[256], ws[] = "/tmp/proctor-bench-kill.XXXXXX";
        int c;

        while ((c = getopt(argc, argv, "n:d:")) != -1) {
                if (c == 'n')
                        rounds = (unsigned)strtoul(optarg, NULL, 10);
                else if (c == 'd')
                        delay = (unsigned)strtoul(optarg, NULL, 10);
                else
                        bench_die("usage: kill [-n ROUNDS] [-d DELAY_MS]");
        }
        bench_workspace(ws);
        uv_loop_init(&loop);
        if (exec_engine_new(&loop, &eo, &eng, err, sizeof(err)) < 0)
                bench_die("exec_engine_new: %s", err);
        uv_timer_init(&loop, &t);
        series_init(&s, "kill", rounds);
        for (i = 0; i < rounds; i++) {
                struct exec_request req = {
                    .isolation = EXEC_SANDBOX, .argv = bomb, .workspace = ws};
                struct round r = {0};

                req.limits = exec_limits_default();
                req.limits.memory_bytes = 1ull << 30;
                if (exec_spawn(eng, &req, &cb, &r, &r.e, err, sizeof(err)) < 0)
                        bench_die("exec_spawn: %s", err);
                t.data = &r;
                uv_timer_start(&t, fire, delay, 0);
                while (!r.removed)
                        uv_run(&loop, UV_RUN_ONCE);
                if (r.res.reason != EXEC_KILLED)
                        bench_die("round %u ended as %s, not killed", i,
                                  exec_reason_name(r.res.reason));
                series_add(&s, r.exit_ns - r.kill_ns);
        }
        uv_close((uv_handle_t *)&t, NULL);
        exec_engine_free(eng);
        uv_run(&loop, UV_RUN_DEFAULT);
        uv_loop_close(&loop);
        rmdir(ws);
        printf("### kill of a sandbox running a fork bomb (%u rounds, the bomb forks against "
               "the default limit of 128 processes for %u ms; microseconds)\n\n",
               rounds, delay);
        printf("| | median | p90 |\n|---|---:|---:|\n");
        printf("| exec_kill to exit reported | %.0f | %.0f |\n\n", series_median_us(&s),
               series_pct_us(&s, 90));
        printf("- target: median under 50 ms: %s\n",
               series_median_us(&s) < 50000 ? "PASS" : "MISS");
        return 0;
}
