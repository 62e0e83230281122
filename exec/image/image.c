/* image: reads an image (a `docker save` tarball or an OCI layout
 * directory), unpacks each layer once into the cache by its diff_id and
 * assembles the root by hard-linking the layers in order, whiteouts applied.
 * An engine's image comes through exec/image/image_engine as such a tarball.
 * Every tar entry is checked before anything is written: no absolute or `..`
 * paths, no link followed, no device node, no setuid bit. Nothing half-made
 * is ever trusted: each layer and root is built in a temporary directory
 * and renamed into place only when complete.
 * This file holds image_open and the rest of image.h: the source, the
 * manifest's plan of layers, the config and the root's assembly. The
 * streams, the tar reader and a layer's unpack are in unpack.c, the
 * cache's directory, cap and listing in imgcache.c (see image_int.h). */
#include "exec/image/image.h"
#include "exec/image/image_engine.h"
#include "exec/image/image_int.h"

#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <limits.h>
#include <linux/openat2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#define IMG_JSON_MAX (4u << 20) /* manifests and configs are small */
#define IMG_LAYERS   128

void image_size_text(uint64_t bytes, char *buf, size_t len)
{
        static const char *const unit[] = {"B", "K", "M", "G", "T"};
        double v = (double)bytes;
        unsigned u = 0;

        while (v >= 1024 && u < 4) {
                v /= 1024;
                u++;
        }
        snprintf(buf, len, u == 0 || v == (double)(uint64_t)v ? "%.0f%s" : "%.1f%s", v, unit[u]);
}

/* The error for an image past its cap: which cap, and how to raise it. */
void cap_message(const struct image *img, char *err, size_t errlen)
{
        char cap[32];

        image_size_text(img->cap, cap, sizeof(cap));
        if (img->cap_is_cache)
                snprintf(err, errlen,
                         "the image unpacks to more than the whole image cache may hold "
                         "(image_cache_max %s); nothing of it was kept: raise image_cache_max "
                         "in the config file",
                         cap);
        else
                snprintf(err, errlen,
                         "the image unpacks to more than --image-max %s allows; nothing of it "
                         "was kept: raise it with --image-max SIZE (or PROCTOR_IMAGE_MAX, or "
                         "image_max in the config file)",
                         cap);
}

/* ---- the image's source: a directory, or a tarball indexed once ---- */

struct member {
        char *name;
        char *link; /* a symbolic link's target member, resolved; or NULL */
        uint64_t off, size;
};

/* The member a relative link at `path` names: "a/b" + "../c/d" -> "c/d".
 * -EPERM when it climbs out of the archive or is absolute. */
static int member_link(const char *path, const char *target, char *out, size_t len)
{
        char buf[PATH_MAX * 2 + 2], *c, *save = NULL;
        const char *slash = strrchr(path, '/');
        size_t n = 0;

        if (target[0] == '/')
                return -EPERM;
        snprintf(buf, sizeof(buf), "%.*s/%s", slash != NULL ? (int)(slash - path) : 0, path,
                 target);
        out[0] = '\0';
        for (c = strtok_r(buf, "/", &save); c != NULL; c = strtok_r(NULL, "/", &save)) {
                if (strcmp(c, ".") == 0)
                        continue;
                if (strcmp(c, "..") == 0) {
                        char *up = strrchr(out, '/');
                        if (n == 0)
                                return -EPERM;
                        n = up != NULL ? (size_t)(up - out) : 0;
                        out[n] = '\0';
                        continue;
                }
                n += (size_t)snprintf(out + n, len - n, "%s%s", n ? "/" : "", c);
                if (n >= len)
                        return -ENAMETOOLONG;
        }
        return 0;
}

struct source {
        int fd; /* the tarball, or the directory */
        bool tarball;
        struct member *m;
        size_t n;
};

/* `docker save` stores a layer met twice as a link to the first: each link
 * member gets its target's data, links to links followed a few times. */
static void members_resolve(struct source *src)
{
        for (int round = 0; round < 8; round++)
                for (size_t i = 0; i < src->n; i++)
                        for (size_t j = 0; src->m[i].link != NULL && j < src->n; j++)
                                if (src->m[j].link == NULL &&
                                    strcmp(src->m[j].name, src->m[i].link) == 0) {
                                        free(src->m[i].link);
                                        src->m[i].link = NULL;
                                        src->m[i].off = src->m[j].off;
                                        src->m[i].size = src->m[j].size;
                                }
}

static int source_index(struct source *src, char *err, size_t errlen)
{
        struct stream s;
        struct tar t = {.s = &s};
        struct tar_entry *e = malloc(sizeof(*e));
        struct stat st;
        int rc;

        if (e == NULL || fstat(src->fd, &st) != 0) {
                free(e);
                return -ENOMEM;
        }
        stream_open(&s, src->fd, 0, (uint64_t)st.st_size);
        if (s.gz) {
                stream_close(&s);
                free(e);
                snprintf(err, errlen, "a compressed image archive: decompress it first");
                return -EINVAL;
        }
        while ((rc = tar_next(&t, e, err, errlen)) == 1) {
                struct member *m;
                char target[PATH_MAX];
                if ((e->type != '0' && e->type != '2') || path_clean(e->path) < 0 ||
                    (e->type == '2' && member_link(e->path, e->link, target, sizeof(target)) < 0))
                        continue;
                m = realloc(src->m, (src->n + 1) * sizeof(*m));
                if (m == NULL) {
                        rc = -ENOMEM;
                        break;
                }
                src->m = m;
                m[src->n] = (struct member){.name = strdup(e->path),
                                            .link = e->type == '2' ? strdup(target) : NULL,
                                            .off = e->data_off,
                                            .size = e->size};
                if (m[src->n].name == NULL || (e->type == '2' && m[src->n].link == NULL)) {
                        free(m[src->n].name);
                        free(m[src->n].link);
                        rc = -ENOMEM;
                        break;
                }
                src->n++;
        }
        free(e);
        members_resolve(src);
        return rc;
}

static void source_close(struct source *src)
{
        for (size_t i = 0; i < src->n; i++) {
                free(src->m[i].name);
                free(src->m[i].link);
        }
        free(src->m);
        if (src->fd >= 0)
                close(src->fd);
}

/* A stream over the member `name`. -ENOENT when there is none. */
static int source_stream(struct source *src, const char *name, struct stream *s, int *ownfd)
{
        char clean[PATH_MAX];
        struct stat st;

        snprintf(clean, sizeof(clean), "%s", name);
        if (path_clean(clean) < 0)
                return -EPERM;
        *ownfd = -1;
        if (src->tarball) {
                for (size_t i = 0; i < src->n; i++)
                        if (strcmp(src->m[i].name, clean) == 0 && src->m[i].link == NULL)
                                return stream_open(s, src->fd, src->m[i].off, src->m[i].size);
                return -ENOENT;
        }
        struct open_how how = {.flags = O_RDONLY | O_CLOEXEC,
                               .resolve = RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS};
        int fd = (int)syscall(SYS_openat2, src->fd, clean, &how, sizeof(how));
        if (fd < 0)
                return -errno;
        if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
                close(fd);
                return -EINVAL;
        }
        *ownfd = fd;
        return stream_open(s, fd, 0, (uint64_t)st.st_size);
}

static const char *blob_hex(const char *name);

/* The JSON member `name`, whose bytes must have the sha256 `want` (64
 * hex digits) when it is not NULL; a blob named by its digest is always
 * held to it. NULL with err when it cannot be read, parsed or trusted. */
static json_t *source_json(struct source *src, const char *name, const char *want, char *err,
                           size_t errlen)
{
        struct stream s;
        json_t *j = NULL;
        char *buf, raw[65], plain[65];
        bool forged = false;
        int fd, rc = source_stream(src, name, &s, &fd);

        if (rc < 0) {
                snprintf(err, errlen, "cannot read %.200s in the image: %s", name, strerror(-rc));
                return NULL;
        }
        if (want == NULL)
                want = blob_hex(name);
        s.hash = true;
        if (s.left <= IMG_JSON_MAX && !s.gz && (buf = malloc((size_t)s.left + 1)) != NULL) {
                size_t len = (size_t)s.left;
                if (stream_read(&s, buf, len) == 0) {
                        buf[len] = '\0';
                        stream_digests(&s, raw, plain);
                        forged = want != NULL && strncmp(raw, want, 64) != 0;
                        if (!forged)
                                j = json_loads(buf, 0, NULL);
                        else
                                snprintf(err, errlen,
                                         "%.200s does not match its digest: it is named "
                                         "sha256:%.64s, its bytes are sha256:%s; the image is "
                                         "damaged or forged",
                                         name, want, raw);
                }
                free(buf);
        }
        stream_close(&s);
        if (fd >= 0)
                close(fd);
        if (j == NULL && !forged)
                snprintf(err, errlen, "%.200s in the image is not valid JSON", name);
        return j;
}

/* ---- manifests ---- */

struct plan {
        char config[PATH_MAX];    /* member holding the config */
        char *layers[IMG_LAYERS]; /* members holding the layers, in order */
        size_t nlayers;
        char hex[65]; /* the config's digest */
};

bool img_hex64(const char *s)
{
        size_t i;

        for (i = 0; i < 64; i++)
                if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f')))
                        return false;
        return s[64] == '\0' || s[64] == '.' || s[64] == '/';
}

/* "sha256:HEX" -> "blobs/sha256/HEX"; anything else is refused. */
static int blob_path(const char *digest, char *out, size_t len, char *hex)
{
        if (digest == NULL || strncmp(digest, "sha256:", 7) != 0 || !img_hex64(digest + 7) ||
            digest[71] != '\0')
                return -EINVAL;
        snprintf(out, len, "blobs/sha256/%s", digest + 7);
        if (hex != NULL)
                memcpy(hex, digest + 7, 65);
        return 0;
}

static int plan_docker(json_t *man, struct plan *p, char *err, size_t errlen)
{
        json_t *first = json_array_get(man, 0), *layers = json_object_get(first, "Layers"), *l;
        const char *cfg = json_string_value(json_object_get(first, "Config"));
        const char *base;
        size_t i;

        if (cfg == NULL || !json_is_array(layers) || json_array_size(layers) > IMG_LAYERS) {
                snprintf(err, errlen, "manifest.json has no Config and Layers");
                return -EINVAL;
        }
        snprintf(p->config, sizeof(p->config), "%s", cfg);
        base = strrchr(cfg, '/') != NULL ? strrchr(cfg, '/') + 1 : cfg;
        if (!img_hex64(base)) {
                snprintf(err, errlen, "manifest.json names a config that is not a digest");
                return -EINVAL;
        }
        memcpy(p->hex, base, 64);
        p->hex[64] = '\0';
        json_array_foreach (layers, i, l) {
                if (!json_is_string(l) || (p->layers[i] = strdup(json_string_value(l))) == NULL)
                        return -ENOMEM;
                p->nlayers = i + 1;
        }
        return 0;
}

static int plan_oci(struct source *src, json_t *index, struct plan *p, char *err, size_t errlen)
{
        json_t *mans = json_object_get(index, "manifests"), *m = json_array_get(mans, 0), *l;
        char path[PATH_MAX];
        size_t i;
        json_t *hold = NULL; /* a nested index that m points into */
        int depth, rc = -EINVAL;

        for (depth = 0; depth < 2; depth++) {
                json_t *man;
                if (blob_path(json_string_value(json_object_get(m, "digest")), path, sizeof(path),
                              NULL) < 0) {
                        snprintf(err, errlen, "index.json names no sha256 manifest");
                        json_decref(hold);
                        return -EINVAL;
                }
                if ((man = source_json(src, path, NULL, err, errlen)) == NULL) {
                        json_decref(hold);
                        return -EINVAL;
                }
                if (json_object_get(man, "manifests") != NULL) { /* a nested index */
                        json_decref(hold);
                        hold = man;
                        m = json_array_get(json_object_get(man, "manifests"), 0);
                        continue;
                }
                rc = blob_path(
                    json_string_value(json_object_get(json_object_get(man, "config"), "digest")),
                    p->config, sizeof(p->config), p->hex);
                json_array_foreach (json_object_get(man, "layers"), i, l) {
                        if (rc < 0 || i >= IMG_LAYERS ||
                            blob_path(json_string_value(json_object_get(l, "digest")), path,
                                      sizeof(path), NULL) < 0 ||
                            (p->layers[i] = strdup(path)) == NULL) {
                                rc = -EINVAL;
                                break;
                        }
                        p->nlayers = i + 1;
                }
                json_decref(man);
                if (rc < 0)
                        snprintf(err, errlen, "the image manifest names a bad config or layer");
                json_decref(hold);
                return rc;
        }
        json_decref(hold);
        snprintf(err, errlen, "index.json nests indexes too deep");
        return rc;
}

static void plan_free(struct plan *p)
{
        for (size_t i = 0; i < p->nlayers; i++)
                free(p->layers[i]);
}

/* Env, WorkingDir, User from the config; the layers' diff_ids. */
static int read_config(json_t *cfg, struct image *img, const char **diff, size_t nlayers, char *err,
                       size_t errlen)
{
        json_t *c = json_object_get(cfg, "config"), *env = json_object_get(c, "Env"), *v;
        json_t *ids = json_object_get(json_object_get(cfg, "rootfs"), "diff_ids");
        size_t i, n = 0;

        img->env = calloc(json_array_size(env) + 1, sizeof(char *));
        if (img->env == NULL)
                return -ENOMEM;
        json_array_foreach (env, i, v) {
                /* The sandbox's own identity and scratch space stay its own. */
                static const char *const keep[] = {"HOME=", "USER=", "LOGNAME=", "TMPDIR="};
                bool own = false;
                for (size_t k = 0; json_is_string(v) && k < sizeof(keep) / sizeof(keep[0]); k++)
                        own = own || strncmp(json_string_value(v), keep[k], strlen(keep[k])) == 0;
                if (!own && json_is_string(v) && strchr(json_string_value(v), '=') != NULL &&
                    (img->env[n] = strdup(json_string_value(v))) != NULL)
                        n++;
        }
        snprintf(img->workdir, sizeof(img->workdir), "%s",
                 json_string_value(json_object_get(c, "WorkingDir")) ?: "");
        snprintf(img->user, sizeof(img->user), "%s",
                 json_string_value(json_object_get(c, "User")) ?: "");
        if (json_array_size(ids) != nlayers) {
                snprintf(err, errlen, "the image config lists %zu layers, the manifest %zu",
                         json_array_size(ids), nlayers);
                return -EINVAL;
        }
        for (i = 0; i < nlayers; i++) {
                diff[i] = json_string_value(json_array_get(ids, i));
                if (diff[i] == NULL || strncmp(diff[i], "sha256:", 7) != 0 ||
                    !img_hex64(diff[i] + 7) || diff[i][71] != '\0') {
                        snprintf(err, errlen, "the image config has a bad diff_id");
                        return -EINVAL;
                }
                diff[i] += 7;
        }
        return 0;
}

/* The image's record: what is shown of it, its size as the cache cap
 * counts it, and the layers it was assembled from (kept while it is). */
static int write_meta(int rootdir, const struct image *img, const char **diff, size_t nlayers,
                      uint64_t bytes)
{
        json_t *env = json_array(), *layers = json_array(), *j;
        int rc;

        for (size_t i = 0; img->env[i] != NULL; i++)
                json_array_append_new(env, json_string(img->env[i]));
        for (size_t i = 0; i < nlayers; i++)
                json_array_append_new(layers, json_string(diff[i]));
        j = json_pack("{s:s,s:s,s:o,s:s,s:s,s:I,s:o}", "ref", img->ref, "digest", img->digest,
                      "env", env, "workdir", img->workdir, "user", img->user, "bytes",
                      (json_int_t)bytes, "layers", layers);
        int fd = openat(rootdir, "image.json", O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
        rc = fd < 0 || j == NULL || json_dumpfd(j, fd, JSON_COMPACT) != 0 ? -EIO : 0;
        if (fd >= 0)
                close(fd);
        json_decref(j);
        return rc;
}

/* The digest a member named "blobs/sha256/HEX" must have, or NULL: any
 * other name (an old `docker save` layout's ID/layer.tar) claims none. */
static const char *blob_hex(const char *name)
{
        while (strncmp(name, "./", 2) == 0)
                name += 2;
        if (strncmp(name, "blobs/sha256/", 13) != 0 || !img_hex64(name + 13) ||
            name[13 + 64] != '\0')
                return NULL;
        return name + 13;
}

/* Takes one layer into the cache, verified, unless it is there already;
 * *fresh says it was unpacked now. Either way it counts against the
 * image's budget. */
static int layer_take(struct source *src, struct plan *p, size_t i, const char *hex,
                      struct image *img, bool *fresh, char *err, size_t errlen)
{
        char what[300], path[PATH_MAX + 80];
        struct stream s;
        int fd, rc;

        *fresh = false;
        snprintf(what, sizeof(what), "layer %zu of %zu (%.200s)", i + 1, p->nlayers, p->layers[i]);
        if ((rc = layer_path(path, sizeof(path), hex, err, errlen)) < 0)
                return rc;
        if ((fd = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)) >= 0) {
                uint64_t b = tree_bytes(fd);
                close(fd);
                if (b > img->budget) {
                        cap_message(img, err, errlen);
                        return -EFBIG;
                }
                img->budget -= b;
                return 0;
        }
        if ((rc = source_stream(src, p->layers[i], &s, &fd)) < 0) {
                snprintf(err, errlen, "cannot read %s: %s", what, strerror(-rc));
                return rc;
        }
        s.caps = img->caps;
        s.pr = (struct image_progress){
            .layer = (unsigned)i + 1, .layers = (unsigned)p->nlayers, .total = s.left};
        if (s.caps != NULL && s.caps->progress != NULL)
                s.caps->progress(&s.pr, s.caps->progress_ud);
        rc = layer_unpack(hex, blob_hex(p->layers[i]), what, &s, img, err, errlen);
        stream_close(&s);
        if (fd >= 0)
                close(fd);
        *fresh = rc == 0;
        return rc;
}

/* Unpacks the layers not yet cached, then assembles roots/HEX. When it
 * fails, the layers it unpacked go too: nothing of a refused image stays. */
static int assemble(struct source *src, struct plan *p, const char **diff, struct image *img,
                    const char *final, char *err, size_t errlen)
{
        char roots[PATH_MAX], tmp[PATH_MAX + 16], lp[PATH_MAX + 80];
        bool fresh[IMG_LAYERS] = {false};
        int rc = 0, tdir = -1, rootfs = -1;
        size_t i;

        tmp[0] = '\0';
        if ((rc = cache_sub(roots, sizeof(roots), "roots", err, errlen)) < 0)
                return rc;
        for (i = 0; i < p->nlayers && rc == 0; i++)
                rc = layer_take(src, p, i, diff[i], img, &fresh[i], err, errlen);
        if (rc < 0)
                goto out;
        snprintf(tmp, sizeof(tmp), "%s/.tmp-XXXXXX", roots);
        if (mkdtemp(tmp) == NULL || (tdir = open(tmp, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) < 0 ||
            mkdirat(tdir, "rootfs", 0755) != 0 ||
            (rootfs = openat(tdir, "rootfs", O_RDONLY | O_DIRECTORY | O_CLOEXEC)) < 0) {
                rc = -errno;
                snprintf(err, errlen, "cannot assemble the image in %s: %s", roots,
                         strerror(errno));
                goto out;
        }
        for (i = 0; i < p->nlayers && rc == 0; i++) {
                int lfd = -1;
                if ((rc = layer_path(lp, sizeof(lp), diff[i], err, errlen)) == 0)
                        lfd = open(lp, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
                rc = rc < 0 ? rc : lfd < 0 ? -errno : merge_dir(lfd, rootfs);
                if (lfd >= 0)
                        close(lfd);
                if (rc < 0)
                        snprintf(err, errlen, "cannot assemble layer %zu (sha256:%s): %s", i + 1,
                                 diff[i], strerror(-rc));
        }
        if (rc == 0 && (rc = write_meta(tdir, img, diff, p->nlayers, tree_bytes(rootfs))) < 0)
                snprintf(err, errlen, "cannot write the image's record");
        if (rc == 0 && rename(tmp, final) != 0 && errno != ENOTEMPTY && errno != EEXIST) {
                rc = -errno;
                snprintf(err, errlen, "cannot store the image root: %s", strerror(errno));
        }
out:
        if (rootfs >= 0)
                close(rootfs);
        if (tdir >= 0)
                close(tdir);
        if (tmp[0] != '\0' && access(tmp, F_OK) == 0)
                img_remove_at(AT_FDCWD, tmp);
        for (i = 0; rc < 0 && i < p->nlayers; i++) {
                char why[8]; /* err keeps the first failure's reason */
                if (fresh[i] && layer_path(lp, sizeof(lp), diff[i], why, sizeof(why)) == 0)
                        img_remove_at(AT_FDCWD, lp);
        }
        return rc;
}

/* An image in the engine's store, exported into a nameless file in the
 * cache (gone when closed): read as any `docker save` tarball. */
static int source_engine(const char *ref, const struct image_caps *caps, struct source *src,
                         char *err, size_t errlen)
{
        char dir[PATH_MAX], why[512] = "";
        int rc = image_cache_dir(dir, sizeof(dir));

        if (rc == 0 && (src->fd = open(dir, O_TMPFILE | O_RDWR | O_CLOEXEC, 0600)) < 0)
                rc = -errno;
        if (rc < 0) {
                snprintf(err, errlen, "no room in the image cache to export %s: %s", ref,
                         strerror(-rc));
                return rc;
        }
        if ((rc = image_engine_fetch(ref, src->fd, caps, why, sizeof(why))) < 0) {
                snprintf(err, errlen,
                         "%s; or pass a tarball: `docker save %s -o FILE`, then --image FILE", why,
                         ref);
                return rc;
        }
        src->tarball = true;
        return source_index(src, err, errlen);
}

static int source_open(const char *ref, const struct image_caps *caps, struct source *src,
                       char *err, size_t errlen)
{
        struct stat st;

        memset(src, 0, sizeof(*src));
        src->fd = -1;
        if (stat(ref, &st) != 0 && image_engine_name_ok(ref) && errno == ENOENT)
                return source_engine(ref, caps, src, err, errlen);
        if (stat(ref, &st) != 0) {
                snprintf(err, errlen, "no image file or directory '%s'", ref);
                return -ENOENT;
        }
        src->tarball = S_ISREG(st.st_mode);
        src->fd = open(ref, O_RDONLY | O_CLOEXEC | (src->tarball ? 0 : O_DIRECTORY));
        if (src->fd < 0) {
                snprintf(err, errlen, "cannot open image %s: %s", ref, strerror(errno));
                return -errno;
        }
        return src->tarball ? source_index(src, err, errlen) : 0;
}

static bool source_has(struct source *src, const char *name)
{
        struct stream s;
        int fd;

        if (source_stream(src, name, &s, &fd) < 0)
                return false;
        stream_close(&s);
        if (fd >= 0)
                close(fd);
        return true;
}

/* An engine's image already in the cache: the engine's id for the name is
 * its config's digest, which names a root assembled and verified before;
 * the root's record holds what a session needs of the config. 0 when
 * taken; otherwise the image is exported as usual. */
static int open_engine_cached(const char *ref, struct image *img)
{
        char hex[65], why[512], roots[PATH_MAX], final[PATH_MAX + 80], meta[PATH_MAX + 100];
        struct stat st;
        json_t *j, *env, *v;
        size_t i, n = 0;

        if (stat(ref, &st) == 0 || errno != ENOENT || !image_engine_name_ok(ref) ||
            image_engine_id(ref, hex, why, sizeof(why)) < 0 ||
            cache_sub(roots, sizeof(roots), "roots", why, sizeof(why)) < 0)
                return -ENOENT;
        snprintf(final, sizeof(final), "%s/%s", roots, hex);
        snprintf(meta, sizeof(meta), "%s/image.json", final);
        if ((j = json_load_file(meta, 0, NULL)) == NULL)
                return -ENOENT;
        env = json_object_get(j, "env");
        img->env = calloc(json_array_size(env) + 1, sizeof(char *));
        json_array_foreach (env, i, v)
                if (img->env != NULL && json_is_string(v) &&
                    (img->env[n] = strdup(json_string_value(v))) != NULL)
                        n++;
        snprintf(img->digest, sizeof(img->digest), "sha256:%s", hex);
        snprintf(img->root, sizeof(img->root), "%s/rootfs", final);
        snprintf(img->workdir, sizeof(img->workdir), "%s",
                 json_string_value(json_object_get(j, "workdir")) ?: "");
        snprintf(img->user, sizeof(img->user), "%s",
                 json_string_value(json_object_get(j, "user")) ?: "");
        json_decref(j);
        if (img->env == NULL)
                return -ENOMEM;
        utimensat(AT_FDCWD, final, NULL, 0); /* last used now */
        return 0;
}

int image_open(const char *ref, const struct image_caps *caps, struct image **out, char *err,
               size_t errlen)
{
        struct image *img = calloc(1, sizeof(*img));
        uint64_t image_max =
            caps != NULL && caps->image_max > 0 ? caps->image_max : IMAGE_MAX_DEFAULT;
        uint64_t cache_max =
            caps != NULL && caps->cache_max > 0 ? caps->cache_max : IMAGE_CACHE_MAX_DEFAULT;
        struct plan p = {.nlayers = 0};
        struct source src;
        const char *diff[IMG_LAYERS];
        char roots[PATH_MAX], final[PATH_MAX + 80];
        json_t *man = NULL, *cfg = NULL;
        int rc;

        if (img == NULL)
                return -ENOMEM;
        snprintf(img->ref, sizeof(img->ref), "%s", ref);
        img->caps = caps;
        img->cap_is_cache = cache_max < image_max;
        img->budget = img->cap = img->cap_is_cache ? cache_max : image_max;
        cache_upgrade();
        memset(&src, 0, sizeof(src));
        src.fd = -1;
        if ((rc = open_engine_cached(ref, img)) == 0)
                goto out;
        if ((rc = source_open(ref, caps, &src, err, errlen)) < 0)
                goto out;
        if (source_has(&src, "manifest.json")) {
                rc = (man = source_json(&src, "manifest.json", NULL, err, errlen)) == NULL
                         ? -EINVAL
                         : plan_docker(man, &p, err, errlen);
        } else if (source_has(&src, "index.json")) {
                rc = (man = source_json(&src, "index.json", NULL, err, errlen)) == NULL
                         ? -EINVAL
                         : plan_oci(&src, man, &p, err, errlen);
        } else {
                snprintf(err, errlen,
                         "%s is neither a `docker save` archive nor an OCI layout "
                         "(no manifest.json or index.json)",
                         ref);
                rc = -EINVAL;
        }
        if (rc < 0)
                goto out;
        if ((cfg = source_json(&src, p.config, p.hex, err, errlen)) == NULL) {
                rc = -EINVAL;
                goto out;
        }
        snprintf(img->digest, sizeof(img->digest), "sha256:%s", p.hex);
        if ((rc = read_config(cfg, img, diff, p.nlayers, err, errlen)) < 0 ||
            (rc = cache_sub(roots, sizeof(roots), "roots", err, errlen)) < 0)
                goto out;
        snprintf(final, sizeof(final), "%s/%s", roots, p.hex);
        snprintf(img->root, sizeof(img->root), "%s/rootfs", final);
        if (access(final, F_OK) != 0) {
                if ((rc = assemble(&src, &p, diff, img, final, err, errlen)) < 0)
                        goto out;
                /* Room for it: the images least recently used go first. */
                cache_enforce(roots, cache_max, p.hex);
        }
        /* The record's times say when the image was last used. */
        utimensat(AT_FDCWD, final, NULL, 0);
out:
        json_decref(man);
        json_decref(cfg);
        plan_free(&p);
        source_close(&src);
        img->caps = NULL;
        if (rc == -ECANCELED)
                snprintf(err, errlen, "cancelled; nothing of the unpack was kept");
        if (rc < 0) {
                image_free(img);
                return rc;
        }
        *out = img;
        return 0;
}

void image_free(struct image *img)
{
        if (img == NULL)
                return;
        for (size_t i = 0; img->env != NULL && img->env[i] != NULL; i++)
                free(img->env[i]);
        free(img->env);
        free(img);
}

const char *image_root(const struct image *img)
{
        return img->root;
}

const char *image_ref(const struct image *img)
{
        return img->ref;
}

const char *image_digest(const struct image *img)
{
        return img->digest;
}

char *const *image_env(const struct image *img)
{
        return img->env;
}

const char *image_workdir(const struct image *img)
{
        return img->workdir;
}

const char *image_user(const struct image *img)
{
        return img->user;
}

unsigned image_skipped_devices(const struct image *img)
{
        return img->skipped_dev;
}

unsigned image_dropped_setid(const struct image *img)
{
        return img->dropped_setid;
}
