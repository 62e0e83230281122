/* flood: what reading a flooding command's output costs the supervisor,
 * against the CPU the command itself burns in its sandbox until the CPU
 * limit ends it. Each run floods (`cat /dev/zero`, or `yes`) far past the
 * output cap, so nearly all of it is output that proctor must throw away.
 *   engine    in this process: a sandbox-mode bash tool call through
 *             dispatch_start, its events on a bus with the trace writer (as
 *             a session has them); supervisor CPU is getrusage(RUSAGE_SELF),
 *             the sandbox's is exec.exit's cpu_ms (its cgroup)
 *   exec      whole `proctor exec --mode sandbox` processes: with --json into
 *             a pipe this benchmark drains, or plain to /dev/null
 *   run       a whole headless session (`proctor run --json`, scripted model,
 *             trace written, events into a pipe) whose one bash call floods
 *   floor     no proctor: the flood runs unsandboxed for CPU_SECS into a
 *             1 MiB pipe that this process splices to /dev/null every 1 ms,
 *             the least any reader pays: releasing a pipe's pages costs
 *             about what filling them costs a writer as cheap as cat
 * For whole processes, proctor's own CPU is read from /proc/PID/stat once it
 * has exited and before it is reaped (wait4 would add the sandbox's init);
 * the sandbox's is exec.exit's cpu_ms from the events, or, without them,
 * the CPU limit it was killed at (a lower bound: the ratio is then an upper
 * bound).
 * Prints per flood and variant the medians over RUNS runs and the ratio.
 *
 * Usage: flood [-n RUNS] [-c CPU_SECS] [-p PROCTOR] [-O floor|engine|exec|run]
 * Exits non-zero when a run does not end as a flood must: cpu_limit (exit
 * 137 or 152 for exec) with its output truncated. */
#include <getopt.h>
#include <sys/resource.h>

#include "core/util/bus.h"
#include "core/tools/dispatch.h"
#include "core/session/trace.h"
#include "exec/exec.h"
#include "tests/bench/bench.h"

enum { V_FLOOR, V_ENGINE, V_EXEC_PIPE, V_EXEC_NULL, V_RUN, NV };

static const char *const vnames[NV] = {
    "floor: a bare reader splicing the pipe away every 1 ms",
    "engine: bash tool call, events + trace",
    "proctor exec --json, stdout to a pipe",
    "proctor exec, stdout to /dev/null (sandbox CPU: its limit)",
    "proctor run --json, trace written",
};

static const char *const floods[] = {"cat /dev/zero", "yes"};
#define NFLOODS 2

/* One run's numbers, in microseconds of CPU. */
struct sample {
        uint64_t self_us, sandbox_us, wall_us;
};

struct engine_run {
        bool done, removed, truncated;
        const char *reason;
        char reason_buf[32];
        uint64_t cpu_ms;
};

static uint64_t tv_us(const struct timeval *tv)
{
        return (uint64_t)tv->tv_sec * 1000000u + (uint64_t)tv->tv_usec;
}

static uint64_t self_cpu_us(void)
{
        struct rusage ru;

        getrusage(RUSAGE_SELF, &ru);
        return tv_us(&ru.ru_utime) + tv_us(&ru.ru_stime);
}

static void on_event(const json_t *ev, void *ud)
{
        struct engine_run *r = ud;
        const char *type = json_string_value(json_object_get(ev, "type"));

        if (type != NULL && strcmp(type, "exec.exit") == 0) {
                r->cpu_ms = (uint64_t)json_integer_value(json_object_get(ev, "cpu_ms"));
                r->truncated = json_is_true(json_object_get(ev, "truncated"));
                snprintf(r->reason_buf, sizeof(r->reason_buf), "%s",
                         json_string_value(json_object_get(ev, "reason")));
                r->reason = r->reason_buf;
        } else if (type != NULL && strcmp(type, "exec.remove") == 0) {
                r->removed = true;
        }
}

static void on_done(struct tool_run *tr, const struct tool_outcome *o, void *ud)
{
        ((struct engine_run *)ud)->done = true;
}

static void run_engine(const char *flood, const char *ws, uint64_t cpu_ms, struct sample *out)
{
        uv_loop_t loop;
        struct exec_engine *eng;
        struct dispatch_ctx dx = {0};
        struct engine_run r = {0};
        struct tool_run *tr;
        struct trace *trace;
        char err[256], path[4200];
        json_t *args = json_pack("{s:s}", "command", flood);
        uint64_t c0, t0;

        uv_loop_init(&loop);
        if (exec_engine_new(&loop, NULL, &eng, err, sizeof(err)) < 0)
                bench_die("exec_engine_new: %s", err);
        snprintf(path, sizeof(path), "%s/flood.trace", ws);
        if (trace_open(path, "flood", &trace, err, sizeof(err)) < 0)
                bench_die("trace_open: %s", err);
        dx.eng = eng;
        dx.bus = bus_new();
        dx.mode = EXEC_SANDBOX;
        dx.workspace = ws;
        dx.ws_mode = EXEC_WS_RW;
        dx.limits = exec_limits_default();
        dx.limits.cpu_ms = cpu_ms;
        bus_subscribe(dx.bus, trace_event, trace);
        bus_subscribe(dx.bus, on_event, &r);
        t0 = bench_now_ns();
        c0 = self_cpu_us();
        if (dispatch_start(&dx, "call-1", "bash", args, on_done, &r, &tr, err, sizeof(err)) < 0)
                bench_die("dispatch_start: %s", err);
        while (!r.removed)
                uv_run(&loop, UV_RUN_ONCE);
        out->self_us = self_cpu_us() - c0;
        out->wall_us = (bench_now_ns() - t0) / 1000u;
        out->sandbox_us = r.cpu_ms * 1000u;
        if (!r.done || r.reason == NULL || strcmp(r.reason, "cpu_limit") != 0 || !r.truncated)
                bench_die("engine: %s ended %s, truncated %d (want cpu_limit, truncated)", flood,
                          r.reason != NULL ? r.reason : "(no exit)", r.truncated);
        exec_engine_free(eng);
        uv_run(&loop, UV_RUN_DEFAULT);
        uv_loop_close(&loop);
        bus_free(dx.bus);
        trace_close(trace);
        json_decref(args);
}

static void run_floor(const char *flood, long cpu_secs, struct sample *out)
{
        struct rusage ch0, ch1;
        uint64_t c0, t0 = bench_now_ns();
        int p[2], nul = open("/dev/null", O_WRONLY | O_CLOEXEC);
        pid_t pid;

        if (nul < 0 || pipe2(p, O_CLOEXEC | O_NONBLOCK) != 0)
                bench_die("pipe: %s", strerror(errno));
        fcntl(p[0], F_SETPIPE_SZ, 1 << 20);
        getrusage(RUSAGE_CHILDREN, &ch0);
        c0 = self_cpu_us();
        pid = fork();
        if (pid == 0) {
                dup2(p[1], 1);
                fcntl(1, F_SETFL, 0);
                char cmd[128];
                /* exec: the flood itself is the child this process reaps */
                snprintf(cmd, sizeof(cmd), "exec %s", flood);
                execl("/bin/sh", "sh", "-c", cmd, (char *)NULL);
                _exit(127);
        }
        close(p[1]);
        while (bench_now_ns() - t0 < (uint64_t)cpu_secs * 1000000000u) {
                while (splice(p[0], NULL, nul, NULL, 2u << 20, SPLICE_F_NONBLOCK) > 0)
                        ;
                usleep(1000);
        }
        out->self_us = self_cpu_us() - c0;
        kill(pid, SIGKILL);
        waitpid(pid, NULL, 0);
        getrusage(RUSAGE_CHILDREN, &ch1);
        out->sandbox_us = tv_us(&ch1.ru_utime) + tv_us(&ch1.ru_stime) - tv_us(&ch0.ru_utime) -
                          tv_us(&ch0.ru_stime);
        out->wall_us = (bench_now_ns() - t0) / 1000u;
        close(p[0]);
        close(nul);
}

/* utime + stime of an exited, not yet reaped process: its own CPU alone. */
static uint64_t zombie_self_us(pid_t pid)
{
        char path[64], buf[1024];
        unsigned long ut, st;
        const char *p;
        ssize_t n;
        int fd;

        snprintf(path, sizeof(path), "/proc/%d/stat", pid);
        fd = open(path, O_RDONLY | O_CLOEXEC);
        if (fd < 0)
                bench_die("%s: %s", path, strerror(errno));
        n = read(fd, buf, sizeof(buf) - 1);
        close(fd);
        if (n <= 0)
                bench_die("%s: empty", path);
        buf[n] = '\0';
        p = strrchr(buf, ')');
        if (p == NULL ||
            sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %lu %lu", &ut, &st) != 2)
                bench_die("%s: cannot parse", path);
        return (uint64_t)(ut + st) * 1000000u / (uint64_t)sysconf(_SC_CLK_TCK);
}

/* Finds exec.exit's cpu_ms in a JSONL stream read in chunks of up to
 * SCAN_CHUNK bytes (an exec.exit line is far shorter than SCAN_KEEP). */
#define SCAN_CHUNK (1 << 16)
#define SCAN_KEEP  1024
struct scan {
        char win[SCAN_KEEP + SCAN_CHUNK + 1];
        size_t keep;
        long long cpu_ms; /* -1 until found */
};

static void scan_feed(struct scan *s, size_t n)
{
        static const char mark[] = "\"type\":\"exec.exit\"";
        size_t len = s->keep + n;
        char *m, *c, *end;

        s->win[len] = '\0';
        m = memmem(s->win, len, mark, sizeof(mark) - 1);
        if (s->cpu_ms < 0 && m != NULL && (c = strstr(m, "\"cpu_ms\":")) != NULL) {
                long long v = strtoll(c + 9, &end, 10);
                if (*end != '\0') {
                        s->cpu_ms = v;
                        m = NULL;
                }
        }
        /* Keep the start of an exec.exit line cut by the chunk's end. */
        if (s->cpu_ms < 0 && m != NULL && (size_t)(s->win + len - m) <= SCAN_KEEP) {
                s->keep = (size_t)(s->win + len - m);
                memmove(s->win, m, s->keep);
        } else {
                s->keep = len < SCAN_KEEP ? len : SCAN_KEEP;
                memmove(s->win, s->win + len - s->keep, s->keep);
        }
}

/* Runs argv with stdout into a pipe drained here (looking for exec.exit's
 * cpu_ms) or to /dev/null, stderr to /dev/null; returns its exit status. */
static int run_process(char *const *argv, bool to_pipe, struct sample *out)
{
        static struct scan sc;
        posix_spawn_file_actions_t fa;
        struct rusage ru;
        siginfo_t si;
        uint64_t t0 = bench_now_ns();
        int pfd[2] = {-1, -1}, rc, st;
        ssize_t n;
        pid_t pid;

        sc.keep = 0;
        sc.cpu_ms = -1;
        posix_spawn_file_actions_init(&fa);
        if (to_pipe) {
                if (pipe2(pfd, O_CLOEXEC) != 0)
                        bench_die("pipe: %s", strerror(errno));
                posix_spawn_file_actions_adddup2(&fa, pfd[1], 1);
        } else {
                posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
        }
        posix_spawn_file_actions_addopen(&fa, 2, "/dev/null", O_WRONLY, 0);
        rc = posix_spawn(&pid, argv[0], &fa, NULL, argv, environ);
        posix_spawn_file_actions_destroy(&fa);
        if (rc != 0)
                bench_die("cannot spawn %s: %s", argv[0], strerror(rc));
        if (to_pipe) {
                close(pfd[1]);
                while ((n = read(pfd[0], sc.win + sc.keep, SCAN_CHUNK)) > 0)
                        scan_feed(&sc, (size_t)n);
                close(pfd[0]);
        }
        while (waitid(P_PID, (id_t)pid, &si, WEXITED | WNOWAIT) != 0)
                if (errno != EINTR)
                        bench_die("waitid: %s", strerror(errno));
        out->wall_us = (bench_now_ns() - t0) / 1000u;
        out->self_us = zombie_self_us(pid);
        while (wait4(pid, &st, 0, &ru) < 0)
                if (errno != EINTR)
                        bench_die("wait4: %s", strerror(errno));
        out->sandbox_us = sc.cpu_ms > 0 ? (uint64_t)sc.cpu_ms * 1000u : 0;
        return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

static void run_exec(const char *proctor, const char *flood, const char *ws, long cpu_secs,
                     bool to_pipe, struct sample *out)
{
        char cpu[32], cmd[64], *argv[16], *tok, *save;
        int k = 0, status;

        snprintf(cpu, sizeof(cpu), "%ld", cpu_secs);
        snprintf(cmd, sizeof(cmd), "%s", flood);
        argv[k++] = (char *)proctor;
        argv[k++] = "exec";
        if (to_pipe)
                argv[k++] = "--json";
        argv[k++] = "--mode";
        argv[k++] = "sandbox";
        argv[k++] = "--workspace";
        argv[k++] = (char *)ws;
        argv[k++] = "--cpu-time";
        argv[k++] = cpu;
        argv[k++] = "--";
        for (tok = strtok_r(cmd, " ", &save); tok != NULL; tok = strtok_r(NULL, " ", &save))
                argv[k++] = tok;
        argv[k] = NULL;
        status = run_process(argv, to_pipe, out);
        if (!to_pipe)
                out->sandbox_us = (uint64_t)cpu_secs * 1000000u;
        else if (out->sandbox_us == 0)
                bench_die("proctor exec --json %s: no exec.exit with cpu_ms", flood);
        /* Killed at the CPU limit: by proctor (SIGKILL) or the rlimit (SIGXCPU). */
        if (status != 128 + SIGKILL && status != 128 + SIGXCPU)
                bench_die("proctor exec %s exited %d, not at the CPU limit", flood, status);
}

static void run_session(const char *proctor, const char *flood, const char *ws, long cpu_secs,
                        struct sample *out)
{
        char cpu[32], script[4200], spec[4300], trace[4200], line[256];
        char *argv[] = {
            (char *)proctor, "run",        "--json", "--mode",  "sandbox", "--workspace",
            (char *)ws,      "--cpu-time", cpu,      "--model", spec,      "--trace",
            trace,           "flood",      NULL};
        FILE *f;
        int status;

        snprintf(cpu, sizeof(cpu), "%ld", cpu_secs);
        snprintf(script, sizeof(script), "%s/flood.jsonl", ws);
        snprintf(spec, sizeof(spec), "script:%s", script);
        snprintf(trace, sizeof(trace), "%s/run.trace", ws);
        f = fopen(script, "w");
        if (f == NULL)
                bench_die("%s: %s", script, strerror(errno));
        snprintf(line, sizeof(line),
                 "{\"content\": \"Flood.\", \"tool_calls\": [{\"name\": \"bash\", "
                 "\"arguments\": {\"command\": \"%s\"}}]}\n{\"content\": \"Done.\"}\n",
                 flood);
        fputs(line, f);
        fclose(f);
        status = run_process(argv, true, out);
        if (status != 0)
                bench_die("proctor run (%s) exited %d", flood, status);
        if (out->sandbox_us == 0)
                bench_die("proctor run (%s): no exec.exit with cpu_ms", flood);
}

static int cmp_double(const void *a, const void *b)
{
        double x = *(const double *)a, y = *(const double *)b;

        return x < y ? -1 : x > y;
}

static double median_of(double *v, size_t n)
{
        qsort(v, n, sizeof(*v), cmp_double);
        return n == 0 ? 0 : n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

static void usage(void)
{
        fprintf(stderr,
                "usage: flood [-n RUNS] [-c CPU_SECS] [-p PROCTOR] [-O floor|engine|exec|run]\n");
        exit(2);
}

int main(int argc, char **argv)
{
        char tmpl[] = "/tmp/proctor-bench-XXXXXX";
        const char *proctor = "./proctor", *only = NULL;
        char *proctor_abs, *ws;
        long runs = 3, cpu_secs = 2, r;
        double worst = 0;
        int opt, v, fl;

        while ((opt = getopt(argc, argv, "n:c:p:O:h")) != -1) {
                switch (opt) {
                case 'n':
                        runs = strtol(optarg, NULL, 10);
                        break;
                case 'c':
                        cpu_secs = strtol(optarg, NULL, 10);
                        break;
                case 'p':
                        proctor = optarg;
                        break;
                case 'O':
                        only = optarg;
                        break;
                default:
                        usage();
                }
        }
        if (runs < 1 || cpu_secs < 1)
                usage();
        proctor_abs = realpath(proctor, NULL);
        if (proctor_abs == NULL)
                bench_die("%s: %s", proctor, strerror(errno));
        ws = bench_workspace(tmpl);

        printf("### output flood: the supervisor's CPU against the sandbox's (%ld runs each, CPU "
               "limit %ld s, default 1 MiB output cap; medians)\n\n",
               runs, cpu_secs);
        printf("| flood | variant | supervisor CPU ms | sandbox CPU ms | supervisor / sandbox | "
               "wall ms |\n|---|---|---:|---:|---:|---:|\n");
        for (fl = 0; fl < NFLOODS; fl++) {
                for (v = 0; v < NV; v++) {
                        double self[64], sb[64], ratio[64], wall[64];
                        const char *kind = v == V_FLOOR    ? "floor"
                                           : v == V_ENGINE ? "engine"
                                           : v == V_RUN    ? "run"
                                                           : "exec";

                        if (only != NULL && strcmp(only, kind) != 0)
                                continue;
                        for (r = 0; r < runs && r < 64; r++) {
                                struct sample s;
                                if (v == V_FLOOR)
                                        run_floor(floods[fl], cpu_secs, &s);
                                else if (v == V_ENGINE)
                                        run_engine(floods[fl], ws, (uint64_t)cpu_secs * 1000u, &s);
                                else if (v == V_RUN)
                                        run_session(proctor_abs, floods[fl], ws, cpu_secs, &s);
                                else
                                        run_exec(proctor_abs, floods[fl], ws, cpu_secs,
                                                 v == V_EXEC_PIPE, &s);
                                self[r] = (double)s.self_us / 1000.0;
                                sb[r] = (double)s.sandbox_us / 1000.0;
                                ratio[r] = sb[r] > 0 ? self[r] / sb[r] : 0;
                                wall[r] = (double)s.wall_us / 1000.0;
                        }
                        double rm = median_of(ratio, (size_t)r);
                        if (v != V_FLOOR && rm > worst)
                                worst = rm;
                        printf("| `%s` | %s | %.0f | %.0f | %.3fx | %.0f |\n", floods[fl],
                               vnames[v], median_of(self, (size_t)r), median_of(sb, (size_t)r), rm,
                               median_of(wall, (size_t)r));
                        fflush(stdout);
                }
        }
        printf("\nproctor %s, workspace %s\n\n", proctor_abs, ws);
        printf("- target: the supervisor's CPU well under the sandbox's (at most 0.5x): worst "
               "median %.3fx: %s (the floor rows are the least any reader pays)\n",
               worst, worst <= 0.5 ? "PASS" : "MISS");
        return 0;
}
