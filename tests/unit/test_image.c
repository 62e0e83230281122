/* image: `docker save` tarballs written here byte by byte (ustar, GNU long
 * names, pax, gzip) and opened with image_open into a scratch cache. The
 * root gets the layers in order with whiteouts applied; every path escape
 * is refused with nothing written outside the cache and nothing half-made
 * left inside it; devices and setuid bits never reach the cache. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include "exec/image/image.h"
#include "exec/native/inroot.h"
#include "exec/image/sha256.h"

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

static void hex_of(const void *p, size_t n, char out[65])
{
        struct sha256 h;

        sha256_init(&h);
        sha256_update(&h, p, n);
        sha256_final_hex(&h, out);
}

/* A layer's diff_id: the sha256 of its tar, gunzipped when stored so. */
static void diff_id(const struct buf *l, char out[65])
{
        unsigned char chunk[65536];
        struct sha256 h;
        z_stream z = {0};
        int zr;

        if (l->n < 2 || l->p[0] != 0x1f || l->p[1] != 0x8b) {
                hex_of(l->p, l->n, out);
                return;
        }
        sha256_init(&h);
        assert_int_equal(inflateInit2(&z, 15 + 16), Z_OK);
        z.next_in = l->p;
        z.avail_in = (uInt)l->n;
        do {
                z.next_out = chunk;
                z.avail_out = sizeof(chunk);
                zr = inflate(&z, Z_NO_FLUSH);
                assert_true(zr == Z_OK || zr == Z_STREAM_END);
                sha256_update(&h, chunk, sizeof(chunk) - z.avail_out);
        } while (zr != Z_STREAM_END);
        inflateEnd(&z);
        sha256_final_hex(&h, out);
}

/* What an image claims, when it lies. */
struct lie {
        const char *diff;   /* the last layer's diff_id (hex), in place of the true one */
        const char *config; /* the config's name (its digest), in place of the true one */
        bool blobs;         /* layers named blobs/sha256/DIGEST, as docker save does now */
        const char *blob;   /* ... and the last one named by this digest instead */
};

/* A docker save tarball of the given layers (freed), at ref; the config
 * digest goes to cfg_hex when not NULL. */
/* Layer i's member name in the tarball: its blob path (or the lie's, for
 * the last layer), or an old-style name. */
static void member_name(const struct buf *layers, size_t i, size_t n, const struct lie *lie,
                        char *name, size_t len)
{
        char hex[65];

        hex_of(layers[i].p, layers[i].n, hex);
        if (lie != NULL && lie->blobs)
                snprintf(name, len, "blobs/sha256/%s",
                         lie->blob != NULL && i == n - 1 ? lie->blob : hex);
        else
                snprintf(name, len, "l%zu.tar", i);
}

static void write_image_as(struct buf *layers, size_t n, const struct lie *lie, char *cfg_hex)
{
        char cfg[2048], man[2048], name[160], hex[65], cfgname[65];
        struct buf t = {0};
        size_t i;
        int fd;

        snprintf(cfg, sizeof(cfg),
                 "{\"config\":{\"Env\":[\"PATH=/bin\",\"HOME=/root\"],\"User\":\"app\"},"
                 "\"rootfs\":{\"diff_ids\":[");
        for (i = 0; i < n; i++) {
                diff_id(&layers[i], hex);
                snprintf(cfg + strlen(cfg), sizeof(cfg) - strlen(cfg), "%s\"sha256:%s\"",
                         i ? "," : "",
                         lie != NULL && lie->diff != NULL && i == n - 1 ? lie->diff : hex);
        }
        strcat(cfg, "]}}");
        hex_of(cfg, strlen(cfg), cfgname);
        if (cfg_hex != NULL)
                memcpy(cfg_hex, cfgname, 65);
        snprintf(man, sizeof(man), "[{\"Config\":\"blobs/sha256/%s\",\"Layers\":[",
                 lie != NULL && lie->config != NULL ? lie->config : cfgname);
        for (i = 0; i < n; i++) {
                member_name(layers, i, n, lie, name, sizeof(name));
                snprintf(man + strlen(man), sizeof(man) - strlen(man), "%s\"%s\"", i ? "," : "",
                         name);
        }
        strcat(man, "]}]");
        entry(&t, "manifest.json", '0', 0644, man, NULL);
        snprintf(name, sizeof(name), "blobs/sha256/%s",
                 lie != NULL && lie->config != NULL ? lie->config : cfgname);
        entry(&t, name, '0', 0644, cfg, NULL);
        for (i = 0; i < n; i++) {
                member_name(layers, i, n, lie, name, sizeof(name));
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

static void write_image(struct buf *layers, size_t n)
{
        write_image_as(layers, n, NULL, NULL);
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

        assert_int_equal(image_open(ref, NULL, &img, err, sizeof(err)), 0);
        assert_int_equal(strncmp(image_digest(img), "sha256:", 7), 0);
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
        assert_int_equal(image_open(ref, NULL, &img, err, sizeof(err)), 0);
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
        assert_int_equal(image_open(ref, NULL, &img, err, sizeof(err)), -EPERM);
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
        assert_true(image_open(ref, NULL, &img, err, sizeof(err)) < 0);
        assert_null(img);
        /* not a tar at all */
        fd = open(ref, O_WRONLY | O_TRUNC);
        assert_int_equal(write(fd, "{\"not\": \"a tar\"}", 16), 16);
        close(fd);
        assert_true(image_open(ref, NULL, &img, err, sizeof(err)) < 0);
        /* an engine's name, not a file, and no engine there */
        setenv("DOCKER_HOST", "unix:///nonexistent/engine.sock", 1);
        assert_int_equal(image_open("alpine:3.20", NULL, &img, err, sizeof(err)), -ENOENT);
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
        assert_int_equal(image_open(ref, NULL, &img, err, sizeof(err)), 0);
        image_free(img);
        assert_int_equal(image_cache_prune(&n, err, sizeof(err)), 0);
        assert_int_equal(n, 1);
        assert_false(exists("cache/proctor/images/layers"));
}

/* FIPS 180-4 / NIST example vectors, whole and fed in uneven pieces. */
static void sha256_vectors(void)
{
        static const struct {
                const char *msg;
                const char *hex;
        } v[] = {
            {"", "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"},
            {"abc", "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"},
            {"abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq",
             "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1"},
            {"abcdefghbcdefghicdefghijdefghijkefghijklfghijklmghijklmnhijklmnoijklmnopjklmnopqklmn"
             "opqrlmnopqrsmnopqrstnopqrstu",
             "cf5b16a778af8380036ce59e7b0492370b249b11e8f07a51afac45037afee9d1"},
        };
        struct sha256 h;
        char out[65], *million;

        for (size_t i = 0; i < sizeof(v) / sizeof(v[0]); i++) {
                hex_of(v[i].msg, strlen(v[i].msg), out);
                assert_string_equal(out, v[i].hex);
                sha256_init(&h);
                for (size_t k = 0, step = 1; k < strlen(v[i].msg); k += step, step = step * 2 + 1)
                        sha256_update(&h, v[i].msg + k,
                                      k + step > strlen(v[i].msg) ? strlen(v[i].msg) - k : step);
                sha256_final_hex(&h, out);
                assert_string_equal(out, v[i].hex);
        }
        million = malloc(1000000);
        assert_non_null(million);
        memset(million, 'a', 1000000);
        sha256_init(&h);
        for (size_t k = 0; k < 1000000; k += 999)
                sha256_update(&h, million + k, k + 999 > 1000000 ? 1000000 - k : 999);
        sha256_final_hex(&h, out);
        assert_string_equal(out,
                            "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
        free(million);
}

/* The vectors through the processor's SHA instructions (where it has
 * them) and through the portable code; both agree on arbitrary bytes. */
static void test_sha256_vectors(void **state)
{
        unsigned char *buf = malloc(1 << 20);
        char a[65], b[65];

        assert_non_null(buf);
        for (size_t i = 0; i < 1u << 20; i++)
                buf[i] = (unsigned char)(i * 2654435761u >> 13);
        sha256_use_cpu(true);
        sha256_vectors();
        hex_of(buf, 1u << 20, a);
        sha256_use_cpu(false);
        assert_false(sha256_cpu());
        sha256_vectors();
        hex_of(buf, 1u << 20, b);
        assert_string_equal(a, b);
        sha256_use_cpu(true);
        free(buf);
}

static size_t count_in(const char *sub)
{
        char p[512];
        size_t n = 0;
        struct dirent *de;
        DIR *d;

        snprintf(p, sizeof(p), "%s/proctor/images/%s", cache, sub);
        if ((d = opendir(p)) == NULL)
                return 0;
        while ((de = readdir(d)) != NULL)
                n += de->d_name[0] != '.';
        closedir(d);
        return n;
}

static struct buf marked_layer(const char *marker)
{
        struct buf l = {0};

        entry(&l, "bin/marker", '0', 0644, marker, NULL);
        end(&l);
        return l;
}

/* A tarball claiming the legitimate layer's diff_id (and another, its
 * config digest) with other content is refused, naming the layer, and
 * leaves nothing behind: the legitimate image later gets its own files. */
static void test_forged_digests(void **state)
{
        struct buf l[2];
        struct image *img = NULL;
        char err[512], good_diff[65], good_cfg[65], path[4200];
        struct lie lie = {.diff = NULL};
        struct stat st;

        /* the legitimate image's digests, without opening it */
        l[0] = marked_layer("legitimate\n");
        diff_id(&l[0], good_diff);
        write_image_as(l, 1, NULL, good_cfg);
        char good_ref[128];
        snprintf(good_ref, sizeof(good_ref), "%s/good.tar", dir);
        assert_int_equal(rename(ref, good_ref), 0);

        lie.diff = good_diff;
        l[0] = base_layer();
        l[1] = marked_layer("forged\n");
        write_image_as(l, 2, &lie, NULL);
        assert_int_equal(image_open(ref, NULL, &img, err, sizeof(err)), -EBADMSG);
        assert_null(img);
        assert_non_null(strstr(err, "layer 2 of 2 (l1.tar) does not match its diff_id"));
        assert_non_null(strstr(err, good_diff));
        assert_int_equal(count_in("layers"), 0); /* the good first layer went too */
        assert_int_equal(count_in("roots"), 0);

        /* a config whose name is the legitimate config's digest */
        lie = (struct lie){.config = good_cfg};
        l[0] = marked_layer("forged\n");
        write_image_as(l, 1, &lie, NULL);
        assert_true(image_open(ref, NULL, &img, err, sizeof(err)) < 0);
        assert_non_null(strstr(err, "does not match its digest"));
        assert_int_equal(count_in("roots"), 0);

        /* a layer blob named by another blob's digest */
        l[0] = marked_layer("forged\n");
        lie = (struct lie){.blobs = true, .blob = good_diff};
        write_image_as(l, 1, &lie, NULL);
        assert_int_equal(image_open(ref, NULL, &img, err, sizeof(err)), -EBADMSG);
        assert_non_null(strstr(err, "does not match its digest: it is named"));
        assert_int_equal(count_in("layers"), 0);

        /* the same, named truly: accepted */
        l[0] = marked_layer("blob\n");
        lie = (struct lie){.blobs = true};
        write_image_as(l, 1, &lie, NULL);
        assert_int_equal(image_open(ref, NULL, &img, err, sizeof(err)), 0);
        image_free(img);

        /* the legitimate image gets its own file */
        assert_int_equal(image_open(good_ref, NULL, &img, err, sizeof(err)), 0);
        snprintf(path, sizeof(path), "%s/bin/marker", image_root(img));
        FILE *f = fopen(path, "r");
        char got[64] = "";
        assert_non_null(f);
        assert_non_null(fgets(got, sizeof(got), f));
        fclose(f);
        assert_string_equal(got, "legitimate\n");
        assert_true(in_root(img, "bin/marker", &st));
        image_free(img);
        no_leftovers();
}

/* A gzip layer that unpacks past --image-max is refused, says which cap
 * and how to raise it, and leaves nothing in the cache. */
static void test_image_max(void **state)
{
        struct buf l[2] = {base_layer(), {0}}, big = {0};
        struct image_caps caps = {.image_max = 1u << 20};
        struct image *img = NULL;
        char err[512], *zeros = calloc(1, 4u << 20);

        assert_non_null(zeros);
        header(&big, "big", '0', 0644, 4u << 20, NULL);
        put(&big, zeros, 4u << 20);
        end(&big);
        free(zeros);
        l[1] = gzip(&big);
        free(big.p);
        assert_true(l[1].n < 64 << 10); /* small on disk */
        write_image(l, 2);
        assert_int_equal(image_open(ref, &caps, &img, err, sizeof(err)), -EFBIG);
        assert_null(img);
        assert_non_null(strstr(err, "--image-max 1M"));
        assert_non_null(strstr(err, "PROCTOR_IMAGE_MAX"));
        assert_int_equal(count_in("layers"), 0);
        assert_int_equal(count_in("roots"), 0);
        no_leftovers();
        /* the cache's cap, when lower, is the one named */
        caps = (struct image_caps){.image_max = 1u << 30, .cache_max = 1u << 20};
        assert_int_equal(image_open(ref, &caps, &img, err, sizeof(err)), -EFBIG);
        assert_non_null(strstr(err, "image_cache_max 1M"));
        /* and with room, it opens */
        caps.cache_max = 64u << 20;
        assert_int_equal(image_open(ref, &caps, &img, err, sizeof(err)), 0);
        image_free(img);
}

struct seen {
        unsigned calls, last_layer, layers;
        uint64_t last_done, total;
        bool monotonic, armed;
        volatile int cancel; /* set once the big layer is under way, when armed */
};

static void on_progress(const struct image_progress *p, void *ud)
{
        struct seen *s = ud;

        if (s->calls > 0 && p->layer == s->last_layer && p->done < s->last_done)
                s->monotonic = false;
        s->calls++;
        s->last_layer = p->layer;
        s->layers = p->layers;
        s->last_done = p->done;
        s->total = p->total;
        if (p->layer == 2 && p->done > 0 && p->done < p->total)
                s->cancel = s->armed;
}

/* A first unpack reports each layer's progress, and a cancel flag set
 * while a layer is being read ends it with -ECANCELED, nothing kept. */
static void test_progress_cancel(void **state)
{
        struct buf l[2] = {base_layer(), {0}}, big = {0};
        struct seen s = {.monotonic = true, .cancel = 0};
        struct image_caps caps = {.progress = on_progress, .progress_ud = &s, .cancel = &s.cancel};
        struct image *img = NULL;
        char err[512], *bytes = malloc(12u << 20);

        assert_non_null(bytes);
        for (size_t i = 0; i < (12u << 20); i++)
                bytes[i] = (char)(i * 2654435761u >> 13); /* does not compress away */
        header(&big, "big", '0', 0644, 12u << 20, NULL);
        put(&big, bytes, 12u << 20);
        end(&big);
        free(bytes);
        l[1] = big;
        write_image(l, 2);
        /* cancelled while layer 2 is read */
        s.armed = true;
        assert_int_equal(image_open(ref, &caps, &img, err, sizeof(err)), -ECANCELED);
        assert_null(img);
        assert_non_null(strstr(err, "cancelled"));
        assert_int_equal(s.last_layer, 2);
        assert_int_equal(count_in("layers"), 0);
        assert_int_equal(count_in("roots"), 0);
        no_leftovers();
        /* not cancelled: every layer reported, up to its whole size */
        s = (struct seen){.monotonic = true, .cancel = 0};
        assert_int_equal(image_open(ref, &caps, &img, err, sizeof(err)), 0);
        assert_true(s.calls >= 4);
        assert_true(s.monotonic);
        assert_int_equal(s.layers, 2);
        assert_int_equal(s.last_layer, 2);
        assert_true(s.total > (12u << 20));
        assert_true(s.last_done == s.total);
        image_free(img);
}

static void add_bytes(const struct image_entry *e, void *ud)
{
        *(uint64_t *)ud += e->bytes;
}

static void set_used(const struct image *img, time_t t)
{
        char root[4200];
        struct timespec ts[2] = {{.tv_sec = t}, {.tv_sec = t}};

        snprintf(root, sizeof(root), "%s", image_root(img));
        *strrchr(root, '/') = '\0'; /* roots/HEX, whose time is its last use */
        assert_int_equal(utimensat(AT_FDCWD, root, ts, 0), 0);
}

/* Past image_cache_max, the least recently used images go first, with
 * the layers no other image needs; the one just stored stays. */
static void test_cache_lru(void **state)
{
        struct image_caps caps = {.cache_max = 0};
        struct image *a, *b, *c;
        struct buf l[1];
        char err[512];

        l[0] = marked_layer("a\n");
        write_image(l, 1);
        assert_int_equal(image_open(ref, NULL, &a, err, sizeof(err)), 0);
        set_used(a, 1000);
        l[0] = marked_layer("b\n");
        write_image(l, 1);
        assert_int_equal(image_open(ref, NULL, &b, err, sizeof(err)), 0);
        set_used(b, 2000);
        assert_int_equal(count_in("roots"), 2);
        assert_int_equal(count_in("layers"), 2);
        /* room for exactly these two: storing a third drops the oldest */
        uint64_t sum = 0;
        assert_int_equal(image_cache_list(add_bytes, &sum, err, sizeof(err)), 0);
        assert_true(sum > 0);
        caps.cache_max = sum;
        l[0] = marked_layer("c\n");
        write_image(l, 1);
        assert_int_equal(image_open(ref, &caps, &c, err, sizeof(err)), 0);
        assert_int_equal(count_in("roots"), 2);
        assert_int_equal(count_in("layers"), 2);
        char path[4200];
        struct stat st;
        snprintf(path, sizeof(path), "%s", image_root(a));
        assert_int_equal(stat(path, &st), -1); /* a, least recently used, went */
        snprintf(path, sizeof(path), "%s", image_root(b));
        assert_int_equal(stat(path, &st), 0);
        snprintf(path, sizeof(path), "%s", image_root(c));
        assert_int_equal(stat(path, &st), 0);
        /* with room, nothing goes */
        image_free(c);
        l[0] = marked_layer("d\n");
        write_image(l, 1);
        assert_int_equal(
            image_open(ref, &(struct image_caps){.image_max = 1u << 30, .cache_max = 64u << 20}, &c,
                       err, sizeof(err)),
            0);
        assert_int_equal(count_in("roots"), 3);
        image_free(a);
        image_free(b);
        image_free(c);
}

/* Reads what fd holds ("" when it cannot). */
static void slurp(int fd, char *buf, size_t len)
{
        ssize_t n = fd >= 0 ? read(fd, buf, len - 1) : -1;

        buf[n > 0 ? n : 0] = '\0';
        if (fd >= 0)
                close(fd);
}

/* Links in a root resolve inside it, with openat2 and with the walk used
 * where the kernel has no openat2: an absolute target from the root, ".."
 * never above it; the host's file of the same name stays out of reach. */
static void test_inroot(void **state)
{
        char root[128], host[128], p[256], got[64];
        struct stat st;
        int rfd, fd;

        snprintf(root, sizeof(root), "%s/root", dir);
        snprintf(host, sizeof(host), "%s/host", dir);
        assert_int_equal(mkdir(root, 0755), 0);
        assert_int_equal(mkdir(host, 0755), 0);
        snprintf(p, sizeof(p), "%s/marker", host);
        fclose(fopen(p, "w"));
        snprintf(p, sizeof(p), "%s/a", root);
        mkdir(p, 0755);
        snprintf(p, sizeof(p), "%s/a/b", root);
        mkdir(p, 0755);
        snprintf(p, sizeof(p), "%s/a/b/file", root);
        FILE *f = fopen(p, "w");
        fputs("inside", f);
        fclose(f);
        snprintf(p, sizeof(p), "%s/usr", root);
        assert_int_equal(symlink(host, p), 0); /* the host's directory, by name */
        snprintf(p, sizeof(p), "%s/up", root);
        assert_int_equal(symlink("../../../../..", p), 0);
        snprintf(p, sizeof(p), "%s/l", root);
        assert_int_equal(symlink("/a/b", p), 0);
        snprintf(p, sizeof(p), "%s/loop", root);
        assert_int_equal(symlink("loop", p), 0);
        rfd = open(root, O_PATH | O_DIRECTORY);
        assert_true(rfd >= 0);
        for (int kernel = 1; kernel >= 0; kernel--) {
                /* the control: followed on the host, usr reaches the host's file */
                snprintf(p, sizeof(p), "%s/usr/marker", root);
                assert_int_equal(stat(p, &st), 0);
                assert_int_equal(inroot_open(rfd, "/usr/marker", O_RDONLY, kernel), -ENOENT);
                slurp(inroot_open(rfd, "/l/file", O_RDONLY, kernel), got, sizeof(got));
                assert_string_equal(got, "inside");
                slurp(inroot_open(rfd, "up/a/../a/b/./file", O_RDONLY, kernel), got, sizeof(got));
                assert_string_equal(got, "inside");
                slurp(inroot_open(rfd, "../../a/b/file", O_RDONLY, kernel), got, sizeof(got));
                assert_string_equal(got, "inside");
                assert_int_equal(inroot_open(rfd, "loop", O_RDONLY, kernel), -ELOOP);
                fd = inroot_open(rfd, "/l", O_PATH | O_NOFOLLOW, kernel);
                assert_true(fd >= 0);
                assert_int_equal(fstat(fd, &st), 0);
                assert_true(S_ISLNK(st.st_mode));
                close(fd);
                fd = inroot_open(rfd, "/l", O_PATH, kernel);
                assert_true(fd >= 0);
                assert_int_equal(fstat(fd, &st), 0);
                assert_true(S_ISDIR(st.st_mode));
                close(fd);
        }
        close(rfd);
        snprintf(p, sizeof(p), "%s/a/b", root);
        fd = inroot_open_plain(p, O_PATH | O_DIRECTORY);
        assert_true(fd >= 0);
        close(fd);
        snprintf(p, sizeof(p), "%s/l/file", root); /* a link on the way: refused */
        assert_int_equal(inroot_open_plain(p, O_RDONLY), -ENOTDIR);
        snprintf(p, sizeof(p), "%s/l", root);
        assert_true(inroot_open_plain(p, O_PATH | O_DIRECTORY) < 0);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test_setup_teardown(test_layers_and_whiteouts, setup, teardown),
            cmocka_unit_test_setup_teardown(test_escapes_refused, setup, teardown),
            cmocka_unit_test_setup_teardown(test_bad_archives, setup, teardown),
            cmocka_unit_test_setup_teardown(test_list_and_prune, setup, teardown),
            cmocka_unit_test(test_sha256_vectors),
            cmocka_unit_test_setup_teardown(test_forged_digests, setup, teardown),
            cmocka_unit_test_setup_teardown(test_image_max, setup, teardown),
            cmocka_unit_test_setup_teardown(test_cache_lru, setup, teardown),
            cmocka_unit_test_setup_teardown(test_progress_cancel, setup, teardown),
            cmocka_unit_test_setup_teardown(test_inroot, setup, teardown),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
