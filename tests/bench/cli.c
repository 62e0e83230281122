/* cli: whole-process cost of one sandboxed /bin/true: `proctor exec --mode
 * sandbox` against bwrap with equivalent mounts, each a fresh process,
 * interleaved round-robin (the starting variant rotates every run), with
 * `proctor exec --mode local`, `proctor --version` (startup alone) and a
 * bare /bin/true for reference, and the floor (tests/bench/floor.c): the
 * same namespaces and mounts as bwrap's with nothing else, the kernel work
 * any such sandbox pays. Every run must exit 0.
 * Usage: cli [-n RUNS] [-w WARMUP] [-S PAUSE_MS] [-p PROCTOR] [-W WORKSPACE] [-I IMAGE]
 * -I adds `proctor exec --mode sandbox --image IMAGE` (an engine's image by
 *    name, say, with DOCKER_HOST and XDG_CACHE_HOME set by the caller and the
 *    image cached before), held to 1.2x the host-rooted sandbox.
 * -S sleeps PAUSE_MS before every run, untimed, as when a person or a script
 *    runs one command now and then: on cgroup v1 the first move through
 *    cgroup.procs after a quiet spell waits for a fresh RCU grace period
 *    (proctor joins through tasks, which does not; this checks it). */
#include <getopt.h>

#include "tests/bench/bench.h"

enum { V_SANDBOX, V_IMAGE, V_BWRAP, V_FLOOR, V_LOCAL, V_VERSION, V_BARE, NV };

static void usage(void)
{
        fprintf(stderr, "usage: cli [-n RUNS] [-w WARMUP] [-S PAUSE_MS] [-p PROCTOR] "
                        "[-W WORKSPACE] [-I IMAGE]\n");
        exit(2);
}

int main(int argc, char **argv)
{
        static char *true_argv[] = {"/bin/true", NULL};
        char tmpl[] = "/tmp/proctor-bench-XXXXXX";
        const char *proctor = "./proctor";
        char *ws = NULL, *bwrap, *proctor_abs, *floor_path, *self = realpath(argv[0], NULL);
        char *image = NULL;
        char *cmd[NV][48];
        struct bench_series s[NV];
        long runs = 100, warmup = 5, pause_ms = 0, r;
        double bare, bw, sb;
        int opt, i;

        while ((opt = getopt(argc, argv, "n:w:S:p:W:I:h")) != -1) {
                switch (opt) {
                case 'n':
                        runs = strtol(optarg, NULL, 10);
                        break;
                case 'w':
                        warmup = strtol(optarg, NULL, 10);
                        break;
                case 'S':
                        pause_ms = strtol(optarg, NULL, 10);
                        break;
                case 'p':
                        proctor = optarg;
                        break;
                case 'W':
                        ws = optarg;
                        break;
                case 'I':
                        image = optarg;
                        break;
                default:
                        usage();
                }
        }
        if (runs < 1 || warmup < 0 || pause_ms < 0)
                usage();
        proctor_abs = realpath(proctor, NULL);
        if (proctor_abs == NULL || access(proctor_abs, X_OK) != 0)
                bench_die("%s: not an executable (build it with make, or pass -p)", proctor);
        if (ws == NULL)
                ws = bench_workspace(tmpl);
        bwrap = bench_which("bwrap");
        if (self == NULL ||
            asprintf(&floor_path, "%.*s/floor", (int)(strrchr(self, '/') - self), self) < 0)
                bench_die("cannot find the floor benchmark beside %s", argv[0]);

        {
                char *sandbox[] = {proctor_abs, "exec", "--mode",    "sandbox", "--workspace",
                                   ws,          "--",   "/bin/true", NULL};
                char *with_image[] = {proctor_abs, "exec", "--mode", "sandbox",   "--workspace", ws,
                                      "--image",   image,  "--",     "/bin/true", NULL};
                char *local[] = {proctor_abs, "exec", "--mode",    "local", "--workspace",
                                 ws,          "--",   "/bin/true", NULL};
                char *version[] = {proctor_abs, "--version", NULL};
                char *floor_cmd[] = {floor_path, ws, "/bin/true", NULL};

                memcpy(cmd[V_SANDBOX], sandbox, sizeof(sandbox));
                memcpy(cmd[V_IMAGE], with_image, sizeof(with_image));
                memcpy(cmd[V_LOCAL], local, sizeof(local));
                memcpy(cmd[V_VERSION], version, sizeof(version));
                memcpy(cmd[V_FLOOR], floor_cmd, sizeof(floor_cmd));
                memcpy(cmd[V_BARE], true_argv, sizeof(true_argv));
                if (bwrap != NULL)
                        bwrap_argv(cmd[V_BWRAP], bwrap, ws, true_argv);
        }
        series_init(&s[V_SANDBOX], "proctor exec --mode sandbox", (size_t)runs);
        series_init(&s[V_IMAGE], "proctor exec --mode sandbox --image (cached)", (size_t)runs);
        series_init(&s[V_BWRAP], "bwrap --unshare-all", (size_t)runs);
        series_init(&s[V_FLOOR], "floor: namespaces and mounts only", (size_t)runs);
        series_init(&s[V_LOCAL], "proctor exec --mode local", (size_t)runs);
        series_init(&s[V_VERSION], "proctor --version (startup only)", (size_t)runs);
        series_init(&s[V_BARE], "/bin/true", (size_t)runs);
        s[V_IMAGE].skipped = image == NULL;
        s[V_BWRAP].skipped = bwrap == NULL;
        s[V_FLOOR].skipped = access(floor_path, X_OK) != 0;

        for (r = 0; r < warmup + runs; r++) {
                for (i = 0; i < NV; i++) {
                        int v = (int)((r + i) % NV);
                        uint64_t ns;

                        if (s[v].skipped)
                                continue;
                        if (pause_ms > 0) {
                                struct timespec ts = {pause_ms / 1000,
                                                      (pause_ms % 1000) * 1000000L};
                                nanosleep(&ts, NULL);
                        }
                        ns = bench_run_process(cmd[v], true);
                        if (r >= warmup)
                                series_add(&s[v], ns);
                }
        }

        bare = series_median_us(&s[V_BARE]);
        bw = bwrap != NULL ? series_median_us(&s[V_BWRAP]) : 0;
        sb = series_median_us(&s[V_SANDBOX]);
        printf("### whole process, fork+exec to reap (%ld runs interleaved, %ld warm-up", runs,
               warmup);
        if (pause_ms > 0)
                printf(", %ld ms untimed pause before each run", pause_ms);
        printf("; microseconds)\n\n");
        printf("| command | median | p90 | min | median / bare | median / bwrap |\n");
        printf("|---|---:|---:|---:|---:|---:|\n");
        for (i = 0; i < NV; i++)
                bench_print_row(&s[i], bare, bw);
        printf("\nproctor %s, workspace %s\n", proctor_abs, ws);
        printf("\nTargets (DESIGN.md, Performance):\n\n");
        if (bwrap != NULL)
                printf("- proctor exec --mode sandbox median <= 0.8x bwrap: %.2fx (%.0f us vs "
                       "%.0f us): %s\n",
                       sb / bw, sb, bw, sb <= 0.8 * bw ? "PASS" : "MISS");
        else
                printf("- proctor exec --mode sandbox median <= 0.8x bwrap: SKIPPED (bwrap not "
                       "installed: apt-get install -y bubblewrap)\n");
        if (image != NULL)
                printf("- proctor exec --image %s (cached) median <= 1.2x host-rooted: %.2fx (%.0f "
                       "us vs %.0f us): %s\n",
                       image, series_median_us(&s[V_IMAGE]) / sb, series_median_us(&s[V_IMAGE]), sb,
                       series_median_us(&s[V_IMAGE]) <= 1.2 * sb ? "PASS" : "MISS");
        if (bwrap != NULL && !s[V_FLOOR].skipped)
                printf("- the floor (the namespaces and mounts alone) costs %.2fx bwrap; proctor "
                       "exec spends %.0f us beyond it\n",
                       series_median_us(&s[V_FLOOR]) / bw, sb - series_median_us(&s[V_FLOOR]));
        if (ws == tmpl)
                rmdir(ws);
        free(proctor_abs);
        free(bwrap);
        free(floor_path);
        free(self);
        return 0;
}
