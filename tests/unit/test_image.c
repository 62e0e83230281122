/* image: `docker save` tarballs written here byte by byte (ustar, GNU long
 * names, pax, gzip) and opened with image_open into a scratch cache. The
 * root gets the layers in order with whiteouts applied; every path escape
 * is refused with nothing written outside the cache and nothing half-made
 * left inside it; devices and setuid bits never reach the cache. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include "exec/image.h"

/* ---- a tiny tar writer ---- */

struct buf {
        unsigned char *p;
        size_t n;
};

static void put(struct buf *b, const void *d, size_t n)
{
        b->p = realloc(b->p, b->n + n);
        assert_non_null(b->p);
        memcpy(b->p + b->n, d, n);
        b->n += n;
}

static void pad(struct buf *b)
{
        static const unsigned char zero[512];

        if (b->n % 512)
                put(b, zero, 512 - b->n % 512);
}

static void header(struct buf *b, const char *name, char type, unsigned mode, size_t size,
                   const char *link)
{
        unsigned char h[512] = {0};
        unsigned sum = 0;

        snprintf((char *)h, 100, "%s", name);
        snprintf((char *)h + 100, 8, "%07o", mode);
        snprintf((char *)h + 108, 8, "%07o", 0);
        snprintf((char *)h + 116, 8, "%07o", 0);
        snprintf((char *)h + 124, 12, "%011zo", size);
        snprintf((char *)h + 136, 12, "%011o", 0);
        h[156] = (unsigned char)type;
        if (link != NULL)
                snprintf((char *)h + 157, 100, "%s", link);
        memcpy(h + 257,
               "ustar\0"
               "00",
               8);
        memset(h + 148, ' ', 8);
        for (int i = 0; i < 512; i++)
                sum += h[i];
        snprintf((char *)h + 148, 8, "%06o", sum);
        put(b, h, 512);
}

static void entry(struct buf *b, const char *name, char type, unsigned mode, const char *data,
                  const char *link)
{
        size_t n = data != NULL ? strlen(data) : 0;

        if (strlen(name) >= 100) { /* a GNU long name first */
                header(b, "././@LongLink", 'L', 0644, strlen(name) + 1, NULL);
                put(b, name, strlen(name) + 1);
                pad(b);
        }
        header(b, name, type, mode, n, link);
        if (n > 0) {
                put(b, data, n);
                pad(b);
        }
}

static void pax_path(struct buf *b, const char *path)
{
        char rec[600];
        int len = (int)strlen(path) + 7, n;

        /* "LEN path=VALUE\n", LEN counting its own digits */
        n = snprintf(rec, sizeof(rec), "%d path=%s\n", len + 3, path);
        if (n != len + 3)
                n = snprintf(rec, sizeof(rec), "%d path=%s\n", n, path);
        header(b, "pax", 'x', 0644, (size_t)n, NULL);
        put(b, rec, (size_t)n);
        pad(b);
}

static void end(struct buf *b)
{
        static const unsigned char zero[1024];

        put(b, zero, sizeof(zero));
}

static struct buf gzip(const struct buf *in)
{
        struct buf out = {malloc(in->n + 1024), 0};
        z_stream z = {0};

        assert_int_equal(deflateInit2(&z, 6, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY), Z_OK);
        z.next_in = in->p;
        z.avail_in = (uInt)in->n;
        z.next_out = out.p;
        z.avail_out = (uInt)(in->n + 1024);
        assert_int_equal(deflate(&z, Z_FINISH), Z_STREAM_END);
        out.n = z.total_out;
        deflateEnd(&z);
        return out;
}

/* ---- images: a docker save tarball of the given layers ---- */

static char dir[64], cache[128], ref[128];

#define H4(c)  c c c c
#define H16(c) H4(c) H4(c) H4(c) H4(c)
#define HEX(c) H16(c) H16(c) H16(c) H16(c)

static void write_image(struct buf *layers, size_t n)
{
        static const char *const hex[] = {HEX("a"), HEX("b"), HEX("c")};
        char cfg[1024], man[1024], name[128];
        struct buf t = {0};
        size_t i;
        int fd;

        snprintf(cfg, sizeof(cfg),
                 "{\"config\":{\"Env\":[\"PATH=/bin\",\"HOME=/root\"],\"User\":\"app\"},"
                 "\"rootfs\":{\"diff_ids\":[");
        snprintf(man, sizeof(man), "[{\"Config\":\"blobs/sha256/%s\",\"Layers\":[", HEX("f"));
        for (i = 0; i < n; i++) {
                snprintf(cfg + strlen(cfg), sizeof(cfg) - strlen(cfg), "%s\"sha256:%s\"",
                         i ? "," : "", hex[i]);
                snprintf(man + strlen(man), sizeof(man) - strlen(man), "%s\"l%zu.tar\"",
                         i ? "," : "", i);
        }
        strcat(cfg, "]}}");
        strcat(man, "]}]");
        entry(&t, "manifest.json", '0', 0644, man, NULL);
        snprintf(name, sizeof(name), "blobs/sha256/%s", HEX("f"));
        entry(&t, name, '0', 0644, cfg, NULL);
        for (i = 0; i < n; i++) {
                snprintf(name, sizeof(name), "l%zu.tar", i);
                header(&t, name, '0', 0644, layers[i].n, NULL);
                put(&t, layers[i].p, layers[i].n);
                pad(&t);
                free(layers[i].p);
        }
        end(&t);
        snprintf(ref, sizeof(ref), "%s/image.tar", dir);
        fd = open(ref, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        assert_true(fd >= 0);
        assert_int_equal(write(fd, t.p, t.n), (ssize_t)t.n);
        close(fd);
        free(t.p);
}

static struct buf base_layer(void)
{
        struct buf l = {0};

        entry(&l, "./bin/", '5', 0755, NULL, NULL);
        entry(&l, "bin/tool", '0', 0755, "#!/bin/sh\n", NULL);
        entry(&l, "bin/gone", '0', 0644, "x", NULL);
        entry(&l, "opq/old", '0', 0644, "old", NULL);
        entry(&l, "etc/os-release", '0', 0644, "ID=test\n", NULL);
        end(&l);
        return l;
}

static int rm_one(const char *p, const struct stat *st, int flag, struct FTW *f)
{
        if (flag == FTW_DP)
                chmod(p, 0700);
        return remove(p);
}

static int setup(void **state)
{
        snprintf(dir, sizeof(dir), "/tmp/proctor-test-image.XXXXXX");
        assert_non_null(mkdtemp(dir));
        snprintf(cache, sizeof(cache), "%s/cache", dir);
        setenv("XDG_CACHE_HOME", cache, 1);
        return 0;
}

static int teardown(void **state)
{
        nftw(dir, rm_one, 16, FTW_DEPTH | FTW_PHYS);
        return 0;
}

static bool exists(const char *rel)
{
        char p[512];
        struct stat st;

        snprintf(p, sizeof(p), "%s/%s", dir, rel);
        return lstat(p, &st) == 0;
}

static bool in_root(const struct image *img, const char *rel, struct stat *st)
{
        char p[4096 + 64];

        snprintf(p, sizeof(p), "%s/%s", image_root(img), rel);
        return lstat(p, st) == 0;
}

/* Nothing named .tmp-* in roots/ or layers/: no half-made unpack left. */
static void no_leftovers(void)
{
        char cmd[512];

        snprintf(cmd, sizeof(cmd),
                 "test -z \"$(find %s -mindepth 3 -maxdepth 3 -name '.tmp-*' 2>/dev/null)\"",
                 cache);
        assert_int_equal(system(cmd), 0);
}

static void test_layers_and_whiteouts(void **state)
{
        struct buf l[2] = {base_layer(), {0}}, up = {0};
        struct image *img;
        struct stat st;
        char err[512];

        entry(&up, "bin/.wh.gone", '0', 0644, NULL, NULL);
        entry(&up, "opq/.wh..wh..opq", '0', 0644, NULL, NULL);
        entry(&up, "opq/new", '0', 0644, "new", NULL);
        entry(&up, "opq/same", '1', 0644, NULL, "opq/new");
        entry(&up, "bin/sh", '2', 0777, NULL, "/bin/busybox");
        entry(&up, "bin/suid", '0', 04755, "s", NULL);
        entry(&up, "bin/chr", '3', 0666, NULL, NULL);
        entry(&up, "bin/fifo", '6', 0666, NULL, NULL);
        pax_path(&up, "deep/a-pax-named-file");
        entry(&up, "ignored-name", '0', 0644, "pax", NULL);
        entry(&up,
              "long/aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
              "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
              '0', 0644, "long", NULL);
        end(&up);
        l[1] = gzip(&up);
        free(up.p);
        write_image(l, 2);

        assert_int_equal(image_open(ref, &img, err, sizeof(err)), 0);
        assert_string_equal(image_digest(img), "sha256:" HEX("f"));
        assert_string_equal(image_user(img), "app");
        assert_string_equal(image_env(img)[0], "PATH=/bin");
        assert_null(image_env(img)[1]); /* HOME stays the sandbox's */
        assert_true(in_root(img, "bin/tool", &st));
        assert_false(in_root(img, "bin/gone", &st));
        assert_false(in_root(img, "opq/old", &st));
        assert_true(in_root(img, "opq/new", &st));
        ino_t ino = st.st_ino;
        assert_true(in_root(img, "opq/same", &st));
        assert_int_equal(st.st_ino, ino);
        assert_true(in_root(img, "bin/sh", &st) && S_ISLNK(st.st_mode));
        assert_true(in_root(img, "bin/suid", &st));
        assert_int_equal(st.st_mode & 07777, 0755);
        assert_false(in_root(img, "bin/chr", &st));
        assert_false(in_root(img, "bin/fifo", &st));
        assert_true(in_root(img, "deep/a-pax-named-file", &st));
        assert_false(in_root(img, "ignored-name", &st));
        assert_true(in_root(img,
                            "long/aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
                            "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
                            &st));
        assert_int_equal(image_skipped_devices(img), 2);
        assert_int_equal(image_dropped_setid(img), 1);
        image_free(img);

        /* The second open comes from the cache: nothing is unpacked again. */
        assert_int_equal(image_open(ref, &img, err, sizeof(err)), 0);
        assert_int_equal(image_skipped_devices(img), 0);
        image_free(img);
        no_leftovers();
}

/* Each hostile entry after a good one: the layer is refused, naming it. */
static void attempt(const char *name, char type, const char *link, const char *then)
{
        struct buf l[2] = {base_layer(), {0}};
        struct image *img = NULL;
        char err[512] = "";

        entry(&l[1], "ok", '0', 0644, "fine", NULL);
        entry(&l[1], name, type, 0644, type == '0' ? "escaped" : NULL, link);
        if (then != NULL)
                entry(&l[1], then, '0', 0644, "escaped", NULL);
        end(&l[1]);
        write_image(l, 2);
        assert_int_equal(image_open(ref, &img, err, sizeof(err)), -EPERM);
        assert_null(img);
        assert_non_null(strstr(err, "layer refused: entry"));
        no_leftovers();
        assert_false(exists("escaped"));
        assert_false(exists("cache/proctor/images/escaped"));
        assert_false(exists("cache/proctor/images/layers/escaped"));
        assert_false(exists("outside/escaped"));
}

static void test_escapes_refused(void **state)
{
        char out[128], abs_path[160];

        snprintf(out, sizeof(out), "%s/outside", dir);
        mkdir(out, 0755);
        snprintf(abs_path, sizeof(abs_path), "%s/escaped", dir);
        attempt("../escaped", '0', NULL, NULL);
        attempt("bin/../../escaped", '0', NULL, NULL);
        attempt("../../../../../../escaped", '0', NULL, NULL);
        attempt(abs_path, '0', NULL, NULL);
        attempt("bin/up", '2', "../../../..", NULL);
        attempt("bin/out", '2', out, "bin/out/escaped");
        attempt("bin/hard", '1', "../../escaped", NULL);
        attempt("bin/hard", '1', abs_path, NULL);
        assert_int_equal(rmdir(out), 0); /* still empty */
}

static void test_bad_archives(void **state)
{
        struct buf l[1] = {base_layer()};
        struct image *img = NULL;
        char err[512];
        int fd;

        write_image(l, 1);
        /* cut short in the middle of its layer */
        assert_int_equal(truncate(ref, 3000), 0);
        assert_true(image_open(ref, &img, err, sizeof(err)) < 0);
        assert_null(img);
        /* not a tar at all */
        fd = open(ref, O_WRONLY | O_TRUNC);
        assert_int_equal(write(fd, "{\"not\": \"a tar\"}", 16), 16);
        close(fd);
        assert_true(image_open(ref, &img, err, sizeof(err)) < 0);
        /* an engine's name, not a file, and no engine there */
        setenv("DOCKER_HOST", "unix:///nonexistent/engine.sock", 1);
        assert_int_equal(image_open("alpine:3.20", &img, err, sizeof(err)), -ENOENT);
        assert_non_null(strstr(err, "docker save alpine:3.20 -o FILE"));
        no_leftovers();
}

static void test_list_and_prune(void **state)
{
        struct buf l[1] = {base_layer()};
        struct image *img;
        char err[512];
        unsigned n;

        write_image(l, 1);
        assert_int_equal(image_open(ref, &img, err, sizeof(err)), 0);
        image_free(img);
        assert_int_equal(image_cache_prune(&n, err, sizeof(err)), 0);
        assert_int_equal(n, 1);
        assert_false(exists("cache/proctor/images/layers"));
}

int main(void)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test_setup_teardown(test_layers_and_whiteouts, setup, teardown),
            cmocka_unit_test_setup_teardown(test_escapes_refused, setup, teardown),
            cmocka_unit_test_setup_teardown(test_bad_archives, setup, teardown),
            cmocka_unit_test_setup_teardown(test_list_and_prune, setup, teardown),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
