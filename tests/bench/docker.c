/* docker: spawn-to-reap wall time of the same command (busybox true) as a
 * host-rooted native sandbox, an image-rooted one (exec/image, unpacked),
 * one container of the docker runtime (create, attach, start, wait,
 * inspect, remove over the Engine API), and `docker run --rm` of the docker
 * CLI, interleaved round-robin so that machine noise hits all alike.
 *
 * Usage: docker -i IMAGE_TAR -e ENGINE_IMAGE -d DOCKER_CLI [-n ROUNDS] [-w WARMUP]
 * IMAGE_TAR: a `docker save` tarball with /bin/busybox; ENGINE_IMAGE: the
 * engine's image with /bin/busybox; the engine at $DOCKER_HOST. Exits
 * non-zero when an execution fails. */
#include <getopt.h>

#include "exec/exec.h"
#include "exec/image/image.h"
#include "tests/bench/bench.h"
#include "tests/bench/bench_exec.h"

enum { V_HOST, V_IMAGE, V_DOCKER, V_CLI, NV };

int main(int argc, char **argv)
{
        static char *true_argv[] = {"/bin/busybox", "true", NULL};
        static const char *const names[NV] = {"native, host-rooted", "native, image-rooted",
                                              "--runtime docker", "docker run --rm (CLI)"};
        char tmpl[] = "/tmp/proctor-bench-XXXXXX", err[768];
        struct exec_engine_opts eo[3] = {{0}, {0}, {0}};
        struct exec_engine *eng[3];
        struct bench_series s[NV];
        struct exec_workspace *ws;
        struct image *img;
        const char *tar = NULL, *eimg = NULL, *cli = NULL;
        long rounds = 30, warmup = 3, r;
        int opt, i;
        uv_loop_t *loop = uv_default_loop();

        while ((opt = getopt(argc, argv, "i:e:d:n:w:")) != -1) {
                if (opt == 'i')
                        tar = optarg;
                else if (opt == 'e')
                        eimg = optarg;
                else if (opt == 'd')
                        cli = optarg;
                else if (opt == 'n')
                        rounds = strtol(optarg, NULL, 10);
                else if (opt == 'w')
                        warmup = strtol(optarg, NULL, 10);
                else
                        bench_die("usage: docker -i TAR -e IMAGE -d DOCKER [-n ROUNDS] [-w N]");
        }
        if (tar == NULL || eimg == NULL || cli == NULL || rounds < 1 || warmup < 0)
                bench_die("usage: docker -i TAR -e IMAGE -d DOCKER [-n ROUNDS] [-w N]");
        char *cli_argv[] = {(char *)cli,  "run",          "--rm", "--network", "none",
                            (char *)eimg, "/bin/busybox", "true", NULL};
        if (image_open(tar, NULL, &img, err, sizeof(err)) < 0)
                bench_die("%s: %s", tar, err);
        eo[V_IMAGE].image_root = image_root(img);
        eo[V_DOCKER].runtime = "docker";
        eo[V_DOCKER].docker_image = eimg;
        if (exec_workspace_open(bench_workspace(tmpl), &ws, err, sizeof(err)) < 0)
                bench_die("%s", err);
        for (i = 0; i < 3; i++)
                if (exec_engine_new(loop, &eo[i], &eng[i], err, sizeof(err)) < 0)
                        bench_die("exec_engine_new: %s", err);
        for (i = 0; i < NV; i++)
                series_init(&s[i], names[i], (size_t)rounds);
        for (r = 0; r < warmup + rounds; r++)
                for (i = 0; i < NV; i++) {
                        int v = (int)((r + i) % NV);
                        uint64_t ns = v == V_CLI ? bench_run_process(cli_argv, true)
                                                 : bench_exec_true(loop, eng[v], ws, true_argv);
                        if (r >= warmup)
                                series_add(&s[v], ns);
                }
        for (i = 0; i < 3; i++)
                exec_engine_free(eng[i]);
        uv_run(loop, UV_RUN_DEFAULT);
        exec_workspace_free(ws);
        rmdir(tmpl);

        double host = series_median_us(&s[V_HOST]), dk = series_median_us(&s[V_DOCKER]);
        printf("### native sandboxes vs containers, spawn-to-reap of busybox true (%ld rounds "
               "interleaved, %ld warm-up; microseconds)\n\n",
               rounds, warmup);
        printf("| variant | median | p90 | min | median / host-rooted | median / docker "
               "runtime |\n|---|---:|---:|---:|---:|---:|\n");
        for (i = 0; i < NV; i++)
                printf("| %s | %.0f | %.0f | %.0f | %.2fx | %.2fx |\n", names[i],
                       series_median_us(&s[i]), series_pct_us(&s[i], 90),
                       series_pct_us(&s[i], 0.0001), series_median_us(&s[i]) / host,
                       series_median_us(&s[i]) / dk);
        image_free(img);
        return 0;
}
