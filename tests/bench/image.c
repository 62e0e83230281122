/* image: spawn-to-reap wall time of one sandbox rooted in the host (its
 * /usr, /etc entries) and one rooted in an image (exec/image, already
 * unpacked), interleaved round-robin so that machine noise hits both
 * alike. Both run the same static binary (busybox true), so the difference
 * is the root alone. Target (README, Images): image-rooted <= 1.2x.
 *
 * Usage: image -i IMAGE [-n ROUNDS] [-w WARMUP]
 * IMAGE: a `docker save` tarball or OCI layout with /bin/busybox (see
 * tests/integration/image_make.py). Exits non-zero when an execution fails. */
#include <getopt.h>

#include "exec/exec.h"
#include "exec/image.h"
#include "tests/bench/bench.h"
#include "tests/bench/bench_exec.h"

enum { V_HOST, V_IMAGE, NV };

int main(int argc, char **argv)
{
        static char *true_argv[] = {"/bin/busybox", "true", NULL};
        static const char *const names[NV] = {"host-rooted sandbox", "image-rooted sandbox"};
        char tmpl[] = "/tmp/proctor-bench-XXXXXX", err[768];
        struct exec_engine_opts eo[NV] = {{0}, {0}};
        struct exec_engine *eng[NV];
        struct bench_series s[NV];
        struct exec_workspace *ws;
        struct image *img;
        const char *ref = NULL;
        long rounds = 200, warmup = 10, r;
        int opt, i;
        uv_loop_t *loop = uv_default_loop();

        while ((opt = getopt(argc, argv, "i:n:w:")) != -1) {
                if (opt == 'i')
                        ref = optarg;
                else if (opt == 'n')
                        rounds = strtol(optarg, NULL, 10);
                else if (opt == 'w')
                        warmup = strtol(optarg, NULL, 10);
                else
                        bench_die("usage: image -i IMAGE [-n ROUNDS] [-w WARMUP]");
        }
        if (ref == NULL || rounds < 1 || warmup < 0)
                bench_die("usage: image -i IMAGE [-n ROUNDS] [-w WARMUP]");
        if (access("/bin/busybox", X_OK) != 0)
                bench_die("no /bin/busybox on the host (apt-get install -y busybox-static)");
        if (image_open(ref, NULL, &img, err, sizeof(err)) < 0)
                bench_die("%s: %s", ref, err);
        eo[V_IMAGE].image_root = image_root(img);
        if (exec_workspace_open(bench_workspace(tmpl), &ws, err, sizeof(err)) < 0)
                bench_die("%s", err);
        for (i = 0; i < NV; i++) {
                if (exec_engine_new(loop, &eo[i], &eng[i], err, sizeof(err)) < 0)
                        bench_die("exec_engine_new: %s", err);
                series_init(&s[i], names[i], (size_t)rounds);
        }
        for (r = 0; r < warmup + rounds; r++)
                for (i = 0; i < NV; i++) {
                        int v = (int)((r + i) % NV);
                        uint64_t ns = bench_exec_true(loop, eng[v], ws, true_argv);
                        if (r >= warmup)
                                series_add(&s[v], ns);
                }
        for (i = 0; i < NV; i++)
                exec_engine_free(eng[i]);
        uv_run(loop, UV_RUN_DEFAULT);
        exec_workspace_free(ws);
        rmdir(tmpl);

        double host = series_median_us(&s[V_HOST]), im = series_median_us(&s[V_IMAGE]);
        printf("### host- vs image-rooted sandbox, spawn-to-reap of busybox true (%ld rounds "
               "interleaved, %ld warm-up; microseconds)\n\n",
               rounds, warmup);
        printf("| variant | median | p90 | min | median / host |\n|---|---:|---:|---:|---:|\n");
        for (i = 0; i < NV; i++)
                printf("| %s | %.0f | %.0f | %.0f | %.2fx |\n", names[i], series_median_us(&s[i]),
                       series_pct_us(&s[i], 90), series_pct_us(&s[i], 0.0001),
                       series_median_us(&s[i]) / host);
        printf("\nTarget (README, Images): image-rooted median <= 1.2x host-rooted: %.2fx: %s\n",
               im / host, im <= 1.2 * host ? "PASS" : "MISS");
        image_free(img);
        return 0;
}
