/* viewmodel: the view model at the scale DESIGN.md sets for a frame:
 * 10,000 tool calls and 64 live executions. Measures how fast events are
 * folded in (JSON building not counted) and one frame's walk over every call,
 * every execution with its whole stats history, and the host totals (an
 * upper bound: the TUI reads only the rows on screen).
 *
 * Usage: viewmodel [-c CALLS] [-x EXECS] [-s SAMPLES] [-f FRAMES] */
#include "bench.h"

#include <jansson.h>

#include "core/view/viewmodel.h"

#define BATCH 4096

/* Events are built in batches, then fed under the clock. */
struct feeder {
        struct viewmodel *vm;
        json_t *ev[BATCH];
        size_t n;
        uint64_t count, ns, t_ms;
};

static void flush(struct feeder *f)
{
        uint64_t t0 = bench_now_ns();
        size_t i;

        for (i = 0; i < f->n; i++)
                viewmodel_event(f->ev[i], f->vm);
        f->ns += bench_now_ns() - t0;
        for (i = 0; i < f->n; i++)
                json_decref(f->ev[i]);
        f->count += f->n;
        f->n = 0;
}

static void add(struct feeder *f, const char *type, json_t *fields)
{
        json_t *ev = json_object();

        if (ev == NULL || fields == NULL)
                bench_die("out of memory building %s", type);
        json_object_update(ev, fields);
        json_decref(fields);
        json_object_set_new(ev, "seq", json_integer((json_int_t)(f->count + f->n + 1)));
        json_object_set_new(ev, "t_ms", json_integer((json_int_t)f->t_ms));
        json_object_set_new(ev, "type", json_string(type));
        f->ev[f->n++] = ev;
        if (f->n == BATCH)
                flush(f);
}

static void feed_calls(struct feeder *f, unsigned ncalls)
{
        static const char *const names[] = {"bash", "read", "edit", "run_python_code"};
        static const char *const keys[] = {"command", "path", "path", "code"};
        char id[32], args[128];
        unsigned i;

        for (i = 0; i < ncalls; i++) {
                const char *name = names[i % 4];
                snprintf(id, sizeof(id), "call_%u", i);
                snprintf(args, sizeof(args), "{\"%s\": \"src/module_%u.c && make -j2 test\"}",
                         keys[i % 4], i);
                f->t_ms += 3;
                add(f, "tool.call",
                    json_pack("{s:s,s:s,s:s}", "call_id", id, "name", name, "arguments", args));
                add(f, "tool.output",
                    json_pack("{s:s,s:s,s:s}", "call_id", id, "stream", "stdout", "data",
                              "cc -O2 -c src/module.c -o build/module.o\n"
                              "cc -O2 -c src/other.c -o build/other.o\n"));
                add(f, "tool.output",
                    json_pack("{s:s,s:s,s:s}", "call_id", id, "stream", "stderr", "data",
                              "src/module.c:12:5: warning: unused variable 'x'\n"));
                add(f, "tool.result",
                    json_pack("{s:s,s:b,s:s,s:i,s:i,s:b}", "call_id", id, "ok", i % 10 != 0,
                              "output", "(capped)", "exit_code", i % 10 != 0 ? 0 : 2, "duration_ms",
                              3, "truncated", 0));
        }
}

/* Creates and starts `nexecs` executions for the last calls, then feeds
 * `samples` rounds of stats to all of them, interleaved as the sampler does. */
static void feed_execs(struct feeder *f, unsigned ncalls, unsigned nexecs, unsigned samples)
{
        char id[32];
        unsigned i, k;

        for (i = 0; i < nexecs; i++) {
                snprintf(id, sizeof(id), "call_%u", ncalls - nexecs + i);
                add(f, "exec.create",
                    json_pack("{s:I,s:s,s:s,s:{s:I,s:I,s:I,s:i}}", "exec_id", (json_int_t)i + 1,
                              "call_id", id, "isolation", "sandbox", "limits", "memory_bytes",
                              (json_int_t)512 << 20, "cpu_ms", (json_int_t)60000, "timeout_ms",
                              (json_int_t)120000, "pids", 256));
                add(f, "exec.start",
                    json_pack("{s:I,s:i,s:I}", "exec_id", (json_int_t)i + 1, "pid",
                              (int)(10000 + i), "setup_us", (json_int_t)1900));
        }
        for (k = 0; k < samples; k++) {
                f->t_ms += 250;
                for (i = 0; i < nexecs; i++)
                        add(f, "exec.stats",
                            json_pack("{s:I,s:f,s:I,s:I,s:I,s:i}", "exec_id", (json_int_t)i + 1,
                                      "cpu_pct", (double)((k * 7 + i) % 200), "cpu_ms",
                                      (json_int_t)k * 100, "mem_bytes",
                                      (json_int_t)((k % 50) + 1) << 20, "mem_peak_bytes",
                                      (json_int_t)64 << 20, "pids", (int)(k % 30) + 1));
        }
        flush(f);
}

static void end_execs(struct feeder *f, unsigned nexecs)
{
        unsigned i;

        for (i = 0; i < nexecs; i++) {
                add(f, "exec.exit",
                    json_pack("{s:I,s:s,s:i,s:i,s:I,s:I,s:I,s:b}", "exec_id", (json_int_t)i + 1,
                              "reason", "exited", "exit_code", 0, "signal", 0, "wall_ms",
                              (json_int_t)f->t_ms, "cpu_ms", (json_int_t)5000, "mem_peak_bytes",
                              (json_int_t)64 << 20, "truncated", 0));
                add(f, "exec.remove",
                    json_pack("{s:I,s:I}", "exec_id", (json_int_t)i + 1, "teardown_us",
                              (json_int_t)400));
        }
        flush(f);
}

static volatile uint64_t sink;

/* What a frame reads when every row is on screen. */
static void frame(const struct viewmodel *vm)
{
        const struct viewmodel_session *s = viewmodel_session(vm);
        struct viewmodel_host h;
        uint64_t acc = s->elapsed_ms + s->tokens_in + (uint64_t)s->turn;
        size_t i, j, n;

        for (i = 0, n = viewmodel_ncalls(vm); i < n; i++) {
                const struct viewmodel_call *c = viewmodel_call(vm, i);
                acc += (uint64_t)c->state + c->duration_ms + (unsigned char)c->summary[0] +
                       c->output_len + c->nexecs;
        }
        for (i = 0, n = viewmodel_nexecs(vm); i < n; i++) {
                const struct viewmodel_exec *e = viewmodel_exec(vm, i);
                acc += e->stats.mem_bytes + (uint64_t)e->state;
                for (j = 0; j < viewmodel_exec_nsamples(e); j++) {
                        const struct viewmodel_sample *smp = viewmodel_exec_sample(e, j);
                        acc += smp->mem_bytes + smp->pids + (uint64_t)smp->cpu_pct;
                }
        }
        for (i = 0, n = viewmodel_ntranscript(vm); i < n; i++)
                acc += viewmodel_entry(vm, i)->len;
        viewmodel_host(vm, &h);
        sink = acc + h.running + h.mem_bytes;
}

/* Looks every call up by its id; the ids are made before the clock starts. */
static uint64_t lookups(const struct viewmodel *vm, unsigned ncalls)
{
        char(*ids)[16] = malloc((size_t)ncalls * sizeof(*ids));
        uint64_t t0, t1;
        unsigned i;
        long miss = 0;

        if (ids == NULL)
                bench_die("out of memory");
        for (i = 0; i < ncalls; i++)
                snprintf(ids[i], sizeof(ids[i]), "call_%u", i);
        t0 = bench_now_ns();
        for (i = 0; i < ncalls; i++)
                miss += viewmodel_call_find(vm, ids[i]) != (long)i;
        t1 = bench_now_ns();
        free(ids);
        if (miss != 0)
                bench_die("%ld calls not found where expected", miss);
        return t1 - t0;
}

static void row(const char *what, uint64_t count, uint64_t ns)
{
        printf("| %s | %llu | %.0f | %.0f |\n", what, (unsigned long long)count,
               ns ? (double)count * 1e9 / (double)ns : 0, count ? (double)ns / (double)count : 0);
}

int main(int argc, char **argv)
{
        unsigned ncalls = 10000, nexecs = 64, samples = 1000, frames = 1000, i;
        struct feeder calls = {0}, execs = {0}, ends = {0};
        struct bench_series fr;
        uint64_t look_ns = 0;
        struct viewmodel *vm;
        int c;

        while ((c = getopt(argc, argv, "c:x:s:f:")) != -1) {
                unsigned v = (unsigned)strtoul(optarg, NULL, 10);
                if (c == 'c')
                        ncalls = v;
                else if (c == 'x')
                        nexecs = v;
                else if (c == 's')
                        samples = v;
                else if (c == 'f')
                        frames = v;
                else
                        bench_die(
                            "usage: viewmodel [-c CALLS] [-x EXECS] [-s SAMPLES] [-f FRAMES]");
        }
        if (nexecs > ncalls || frames == 0)
                bench_die("need EXECS <= CALLS and FRAMES > 0");
        vm = viewmodel_new();
        if (vm == NULL)
                bench_die("out of memory");
        calls.vm = execs.vm = ends.vm = vm;
        feed_calls(&calls, ncalls);
        flush(&calls);
        execs.t_ms = ends.t_ms = calls.t_ms;
        feed_execs(&execs, ncalls, nexecs, samples);
        if (viewmodel_ncalls(vm) != ncalls || viewmodel_nlive(vm) != nexecs)
                bench_die("the model holds %zu calls and %zu live executions", viewmodel_ncalls(vm),
                          viewmodel_nlive(vm));

        series_init(&fr, "frame", frames);
        for (i = 0; i < frames; i++) {
                uint64_t t0 = bench_now_ns();
                frame(vm);
                series_add(&fr, bench_now_ns() - t0);
        }
        look_ns = lookups(vm, ncalls);
        end_execs(&ends, nexecs);

        printf("### view model: %u tool calls, %u executions x %u stats samples\n\n", ncalls,
               nexecs, samples);
        printf("| operation (events: JSON already built) | count | per second | ns each |\n");
        printf("|---|---:|---:|---:|\n");
        row("events: tool.call, 2x tool.output, tool.result", calls.count, calls.ns);
        row("events: exec.create, exec.start, exec.stats", execs.count, execs.ns);
        row("events: exec.exit, exec.remove", ends.count, ends.ns);
        row("events: all of the above", calls.count + execs.count + ends.count,
            calls.ns + execs.ns + ends.ns);
        row("viewmodel_call_find by call_id", ncalls, look_ns);
        printf("\n");
        printf("| walk (microseconds) | median | p90 |\n|---|---:|---:|\n");
        printf("| frame: every call, every execution's %d-sample history, host totals "
               "(%u frames) | %.1f | %.1f |\n",
               VM_HISTORY, frames, series_median_us(&fr), series_pct_us(&fr, 90));
        printf("\n");
        printf("- target: the model's share of a frame under 2 ms (DESIGN.md, Performance): "
               "%s\n",
               series_median_us(&fr) < 2000 ? "PASS" : "MISS");
        free(fr.ns);
        viewmodel_free(vm);
        return 0;
}
