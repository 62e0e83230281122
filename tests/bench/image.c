/* image: spawn-to-reap wall time of one sandbox rooted in the host (its
 * /usr, /etc entries) and one rooted in an image (exec/image, already
 * unpacked), interleaved round-robin so that machine noise hits both
 * alike. Both run the same static binary (busybox true), so the difference
 * is the root alone. Target (docs/images.md): image-rooted <= 1.2x.
 *
 *
 * With -b BIG (a tarball whose bulk is one uncompressed layer, image_make.py
 * big), also the price of verifying digests on a first unpack: the image
 * opened into an emptied cache (every layer hashed against its diff_id and
 * blob digest while it is written), proctor's SHA-256 alone over the same
 * bytes in memory (with the processor's SHA instructions where it has
 * them, and the portable code), and `sha256sum` of the file, each in MB/s
 * of the tarball; the hashing's share of the unpack is their ratio.
 *
 * Usage: image -i IMAGE [-n ROUNDS] [-w WARMUP] [-b BIG [-u UNPACKS]]
 * IMAGE: a `docker save` tarball or OCI layout with /bin/busybox (see
 * tests/integration/image_make.py). Exits non-zero when an execution fails. */
#include <getopt.h>

#include "exec/exec.h"
#include "exec/image/image.h"
#include "exec/image/sha256.h"
#include "tests/bench/bench.h"
#include "tests/bench/bench_exec.h"

enum { V_HOST, V_IMAGE, NV };

static double mb_per_s(uint64_t bytes, double us)
{
        return us > 0 ? (double)bytes / (1u << 20) / (us / 1e6) : 0;
}

/* The digest table: first unpacks of big against hashing its bytes. */
static void bench_digests(const char *big, long unpacks)
{
        static const char *const names[] = {"first unpack (verified)", "proctor sha256, in memory",
                                            "proctor sha256, portable code",
                                            "sha256sum of the file"};
        char *sum_argv[] = {"/usr/bin/sha256sum", (char *)big, NULL}, err[768], hex[65];
        struct bench_series s[4];
        struct sha256 h;
        struct stat st;
        unsigned char *buf;
        unsigned pruned;
        int fd = open(big, O_RDONLY);

        if (fd < 0 || fstat(fd, &st) != 0 || (buf = malloc((size_t)st.st_size)) == NULL ||
            read(fd, buf, (size_t)st.st_size) != st.st_size)
                bench_die("cannot read %s", big);
        close(fd);
        for (int i = 0; i < 4; i++)
                series_init(&s[i], names[i], (size_t)unpacks);
        for (long r = 0; r < unpacks; r++) {
                struct image *img;
                if (image_cache_prune(&pruned, err, sizeof(err)) < 0)
                        bench_die("%s", err);
                uint64_t t0 = bench_now_ns();
                if (image_open(big, NULL, &img, err, sizeof(err)) < 0)
                        bench_die("%s: %s", big, err);
                series_add(&s[0], bench_now_ns() - t0);
                image_free(img);
                t0 = bench_now_ns();
                sha256_init(&h);
                sha256_update(&h, buf, (size_t)st.st_size);
                sha256_final_hex(&h, hex);
                series_add(&s[1], bench_now_ns() - t0);
                sha256_use_cpu(false);
                t0 = bench_now_ns();
                sha256_init(&h);
                sha256_update(&h, buf, (size_t)st.st_size);
                sha256_final_hex(&h, hex);
                series_add(&s[2], bench_now_ns() - t0);
                sha256_use_cpu(true);
                series_add(&s[3], bench_run_process(sum_argv, true));
        }
        image_cache_prune(&pruned, err, sizeof(err));
        free(buf);
        printf("\n### digest verification on a first unpack (%.0f MiB tarball, %ld rounds; "
               "MB/s of the tarball, median)\n\n",
               (double)st.st_size / (1u << 20), unpacks);
        printf("| what | median ms | MB/s |\n|---|---:|---:|\n");
        for (int i = 0; i < 4; i++)
                printf("| %s | %.1f | %.0f |\n", names[i], series_median_us(&s[i]) / 1000,
                       mb_per_s((uint64_t)st.st_size, series_median_us(&s[i])));
        printf("\nHashing's share of a first unpack: %.0f%% (proctor's SHA-256, %s, against "
               "sha256sum: %.2fx its speed)\n",
               100 * series_median_us(&s[1]) / series_median_us(&s[0]),
               sha256_cpu() ? "the processor's SHA instructions" : "portable code",
               series_median_us(&s[3]) / series_median_us(&s[1]));
}

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
        const char *ref = NULL, *big = NULL;
        long rounds = 200, warmup = 10, unpacks = 5, r;
        int opt, i;
        uv_loop_t *loop = uv_default_loop();

        while ((opt = getopt(argc, argv, "i:n:w:b:u:")) != -1) {
                if (opt == 'i')
                        ref = optarg;
                else if (opt == 'b')
                        big = optarg;
                else if (opt == 'u')
                        unpacks = strtol(optarg, NULL, 10);
                else if (opt == 'n')
                        rounds = strtol(optarg, NULL, 10);
                else if (opt == 'w')
                        warmup = strtol(optarg, NULL, 10);
                else
                        bench_die("usage: image -i IMAGE [-n ROUNDS] [-w WARMUP] [-b BIG "
                                  "[-u UNPACKS]]");
        }
        if (ref == NULL || rounds < 1 || warmup < 0 || unpacks < 1)
                bench_die("usage: image -i IMAGE [-n ROUNDS] [-w WARMUP] [-b BIG [-u UNPACKS]]");
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
        printf("\nTarget (docs/images.md): image-rooted median <= 1.2x host-rooted: %.2fx: %s\n",
               im / host, im <= 1.2 * host ? "PASS" : "MISS");
        image_free(img);
        if (big != NULL)
                bench_digests(big, unpacks);
        return 0;
}
