/* dispatch: the overhead of a local-mode builtin tool call as the agent loop
 * makes it: tools_parse_args + tools_run_builtin + tools_cap, for a read of
 * a 1 KB file and for a write_cache/read_cache pair. Timed over batches, so
 * the clock is not part of what is measured. Target: under 50 us a call.
 *
 * Usage: dispatch [-n ITERATIONS] [-b BATCH] */
#include "bench.h"

#include "core/tools/tools.h"

/* One call from raw arguments to the capped text the model would get. */
static void dispatch(const char *name, const char *arguments, const char *root,
                     struct tools_cache *cache, size_t *out_len)
{
        struct tools_result r;
        char err[256], *capped;
        json_t *args;
        bool cut;

        if (tools_parse_args(name, arguments, &args, err, sizeof(err)) < 0)
                bench_die("%s: %s", name, err);
        tools_run_builtin(name, args, root, cache, &r);
        if (r.error)
                bench_die("%s failed: %s", name, r.text);
        capped = tools_cap(r.text, r.len, TOOLS_OUTPUT_CAP, out_len, &cut);
        if (capped == NULL)
                bench_die("out of memory");
        free(capped);
        tools_result_free(&r);
        json_decref(args);
}

static void call_read(const char *root, struct tools_cache *cache)
{
        size_t len;

        /* 16 lines of 64 bytes, each with its 7-column number */
        dispatch("read", "{\"path\": \"one-kb.txt\"}", root, cache, &len);
        if (len != 1024 + 16 * 7)
                bench_die("read returned %zu bytes", len);
}

static void call_cache_pair(const char *root, struct tools_cache *cache)
{
        size_t len;

        dispatch("write_cache",
                 "{\"key\": \"plan\", \"value\": \"1. read the failing test\\n2. fix the parser\\n"
                 "3. run the suite again\"}",
                 root, cache, &len);
        dispatch("read_cache", "{\"key\": \"plan\"}", root, cache, &len);
        if (len != 65)
                bench_die("read_cache returned %zu bytes", len);
}

/* Per-call time of each batch: `calls` is how many calls one fn() makes. */
static void measure(struct bench_series *s, void (*fn)(const char *, struct tools_cache *),
                    unsigned calls, size_t iterations, size_t batch, const char *root,
                    struct tools_cache *cache)
{
        size_t i, k;

        for (i = 0; i < 1000; i++)
                fn(root, cache);
        for (i = 0; i + batch <= iterations; i += batch) {
                uint64_t t0 = bench_now_ns();

                for (k = 0; k < batch; k++)
                        fn(root, cache);
                series_add(s, (bench_now_ns() - t0) / (batch * calls));
        }
}

static void row(const struct bench_series *s, double target_us, bool *all)
{
        double med = series_median_us(s), p90 = series_pct_us(s, 90);

        printf("| %s | %.2f | %.2f | %s |\n", s->name, med, p90, med < target_us ? "PASS" : "MISS");
        *all = *all && med < target_us;
}

int main(int argc, char **argv)
{
        char root[] = "/tmp/proctor-bench-dispatch.XXXXXX", *file, line[65];
        size_t iterations = 100000, batch = 10;
        struct bench_series rd, pair;
        struct tools_cache *cache;
        bool all = true;
        FILE *f;
        int c, i;

        while ((c = getopt(argc, argv, "n:b:")) != -1) {
                if (c == 'n')
                        iterations = strtoul(optarg, NULL, 10);
                else if (c == 'b')
                        batch = strtoul(optarg, NULL, 10);
                else
                        bench_die("usage: dispatch [-n ITERATIONS] [-b BATCH]");
        }
        if (batch == 0 || iterations < batch)
                bench_die("need -n >= -b > 0");
        if (mkdtemp(root) == NULL)
                bench_die("mkdtemp: %s", strerror(errno));
        if (asprintf(&file, "%s/one-kb.txt", root) < 0 || (f = fopen(file, "w")) == NULL)
                bench_die("cannot create the 1 KB file");
        memset(line, 'x', 63);
        line[63] = '\n';
        line[64] = '\0';
        for (i = 0; i < 16; i++)
                fputs(line, f);
        fclose(f);
        cache = tools_cache_new();
        if (cache == NULL || tools_schemas() == NULL)
                bench_die("out of memory");

        series_init(&rd, "read, 1 KB file", iterations / batch);
        series_init(&pair, "write_cache + read_cache pair, per call", iterations / batch);
        measure(&rd, call_read, 1, iterations, batch, root, cache);
        measure(&pair, call_cache_pair, 2, iterations, batch, root, cache);

        printf("### local builtin tool call: parse + run + cap (%zu iterations a row, batches "
               "of %zu; microseconds per call)\n\n",
               iterations, batch);
        printf("| call | median | p90 | under 50 us |\n|---|---:|---:|---|\n");
        row(&rd, 50, &all);
        row(&pair, 50, &all);
        printf("\n- target: median under 50 us a call: %s\n", all ? "PASS" : "MISS");

        tools_cache_free(cache);
        unlink(file);
        rmdir(root);
        free(file);
        free(rd.ns);
        free(pair.ns);
        return 0;
}
