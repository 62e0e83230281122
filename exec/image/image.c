/* image: reads an image (a `docker save` tarball or an OCI layout
 * directory), unpacks each layer once into the cache by its diff_id and
 * assembles the root by hard-linking the layers in order, whiteouts applied.
 * An engine's image comes through exec/image/image_engine as such a tarball.
 * Every tar entry is checked before anything is written: no absolute or `..`
 * paths, no link followed, no device node, no setuid bit. Nothing half-made
 * is ever trusted: each layer and root is built in a temporary directory
 * and renamed into place only when complete. */
#include "exec/image/image.h"
#include "exec/image/image_engine.h"
#include "exec/image/sha256.h"

#include <dirent.h>
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
#include <zlib.h>

#define IMG_JSON_MAX (4u << 20) /* manifests and configs are small */
#define IMG_PAX_MAX  (1u << 20)
#define IMG_LAYERS   128

struct image {
        char ref[512];
        char digest[80];
        char root[PATH_MAX + 100];
        char workdir[PATH_MAX];
        char user[128];
        char **env;
        unsigned skipped_dev, dropped_setid;
        /* What the image may still take while unpacked (entry_cost), of
         * `cap`, the lower of the two caps (cap_is_cache: the cache's). */
        uint64_t budget, cap;
        bool cap_is_cache;
        const struct image_caps *caps; /* while image_open runs; may be NULL */
};

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
static void cap_message(const struct image *img, char *err, size_t errlen)
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

/* ---- reading: a byte stream over a file region, gunzipped when needed ---- */

#define PROGRESS_STEP (4u << 20)

/* While `hash` is set, every byte read is hashed: the region's raw bytes
 * (an OCI blob's digest) and the bytes it gunzips to (a layer's diff_id;
 * the same bytes when the region is not compressed). */
struct stream {
        int fd;
        /* a layer's unpack reports through these (NULL: a config, an index) */
        const struct image_caps *caps;
        struct image_progress pr;
        uint64_t reported;
        uint64_t left; /* raw bytes of the region not yet read */
        uint64_t off;  /* raw offset in the file (plain streams only) */
        bool gz, zend, hash;
        z_stream z;
        struct sha256 raw_h, plain_h;
        unsigned char in[65536];
};

static int stream_open(struct stream *s, int fd, uint64_t off, uint64_t len)
{
        unsigned char magic[2];

        memset(s, 0, sizeof(*s));
        s->fd = fd;
        s->off = off;
        s->left = len;
        sha256_init(&s->raw_h);
        sha256_init(&s->plain_h);
        if (pread(fd, magic, 2, (off_t)off) == 2 && magic[0] == 0x1f && magic[1] == 0x8b) {
                s->gz = true;
                /* 15 + 16: gzip only; a layer that is neither gzip nor tar
                 * fails on its first header. */
                if (inflateInit2(&s->z, 15 + 16) != Z_OK)
                        return -ENOMEM;
        }
        return 0;
}

static void stream_close(struct stream *s)
{
        if (s->gz)
                inflateEnd(&s->z);
}

static ssize_t raw_read(struct stream *s, void *dst, size_t n)
{
        ssize_t got;

        if (n > s->left)
                n = (size_t)s->left;
        if (n == 0)
                return 0;
        do
                got = pread(s->fd, dst, n, (off_t)s->off);
        while (got < 0 && errno == EINTR);
        if (got < 0)
                return -errno;
        if (got == 0)
                return -EPROTO; /* the file is shorter than its index said */
        s->off += (uint64_t)got;
        s->left -= (uint64_t)got;
        if (s->caps != NULL && s->caps->cancel != NULL && *s->caps->cancel)
                return -ECANCELED;
        s->pr.done += (uint64_t)got;
        if (s->caps != NULL && s->caps->progress != NULL &&
            (s->pr.done - s->reported >= PROGRESS_STEP || s->left == 0)) {
                s->reported = s->pr.done;
                s->caps->progress(&s->pr, s->caps->progress_ud);
        }
        if (s->hash)
                sha256_update(&s->raw_h, dst, (size_t)got);
        return got;
}

/* Up to n bytes of the stream into dst: how many (0 only at its end), or
 * -EPROTO for a damaged or truncated gzip stream, or -errno. Concatenated
 * gzip members read as one stream, as engines read them. */
static ssize_t stream_some(struct stream *s, unsigned char *dst, size_t n)
{
        ssize_t got;

        if (n == 0)
                return 0;
        if (!s->gz)
                return raw_read(s, dst, n);
        for (;;) {
                if (s->zend) {
                        if (s->z.avail_in == 0 && s->left == 0)
                                return 0;
                        if (inflateReset(&s->z) != Z_OK)
                                return -EPROTO;
                        s->zend = false;
                }
                if (s->z.avail_in == 0) {
                        got = raw_read(s, s->in, sizeof(s->in));
                        if (got <= 0)
                                return got < 0 ? got : -EPROTO;
                        s->z.next_in = s->in;
                        s->z.avail_in = (uInt)got;
                }
                s->z.next_out = dst;
                s->z.avail_out = (uInt)(n > (1u << 30) ? (1u << 30) : n);
                int zr = inflate(&s->z, Z_NO_FLUSH);
                if (zr != Z_OK && zr != Z_STREAM_END)
                        return -EPROTO;
                s->zend = zr == Z_STREAM_END;
                got = (ssize_t)((unsigned char *)s->z.next_out - dst);
                if (got > 0) {
                        if (s->hash)
                                sha256_update(&s->plain_h, dst, (size_t)got);
                        return got;
                }
        }
}

/* Fills dst with exactly n bytes: 0, -EPROTO on a short stream, or -errno. */
static int stream_read(struct stream *s, void *dst, size_t n)
{
        unsigned char *p = dst;

        while (n > 0) {
                ssize_t got = stream_some(s, p, n);
                if (got <= 0)
                        return got < 0 ? (int)got : -EPROTO;
                p += got;
                n -= (size_t)got;
        }
        return 0;
}

static int stream_skip(struct stream *s, uint64_t n)
{
        unsigned char buf[16384];

        if (!s->gz && !s->hash) {
                if (n > s->left)
                        return -EPROTO;
                s->off += n;
                s->left -= n;
                return 0;
        }
        while (n > 0) {
                size_t k = n > sizeof(buf) ? sizeof(buf) : (size_t)n;
                int rc = stream_read(s, buf, k);
                if (rc < 0)
                        return rc;
                n -= k;
        }
        return 0;
}

/* Reads what is left (a digest covers the whole stream, not just the tar
 * archive it holds), counting the bytes against *budget: -EFBIG when they
 * would pass it. 0 or -errno. */
static int stream_drain(struct stream *s, uint64_t *budget)
{
        unsigned char buf[65536];
        ssize_t got;

        while ((got = stream_some(s, buf, sizeof(buf))) > 0) {
                if ((uint64_t)got > *budget)
                        return -EFBIG;
                *budget -= (uint64_t)got;
        }
        return (int)got;
}

/* The hex digests of what was read: the raw region and its content. */
static void stream_digests(struct stream *s, char raw[65], char plain[65])
{
        struct sha256 r = s->raw_h;

        sha256_final_hex(&r, raw);
        if (s->gz)
                sha256_final_hex(&s->plain_h, plain);
        else
                memcpy(plain, raw, 65);
}

/* ---- tar (ustar, GNU long names, pax path/linkpath/size) ---- */

struct tar_entry {
        char path[PATH_MAX];
        char link[PATH_MAX];
        char type;
        unsigned mode;
        uint64_t size;
        uint64_t data_off; /* plain streams: where the data starts */
};

struct tar {
        struct stream *s;
        uint64_t pending; /* data and padding of the last entry not read */
};

static uint64_t tar_num(const char *f, size_t n)
{
        uint64_t v = 0;
        size_t i = 0;

        if ((unsigned char)f[0] & 0x80) { /* base-256, for sizes past 8 GiB */
                v = (unsigned char)f[0] & 0x7f;
                for (i = 1; i < n; i++)
                        v = (v << 8) | (unsigned char)f[i];
                return v;
        }
        while (i < n && (f[i] == ' ' || f[i] == '\0'))
                i++;
        for (; i < n && f[i] >= '0' && f[i] <= '7'; i++)
                v = (v << 3) | (uint64_t)(f[i] - '0');
        return v;
}

static bool tar_checksum_ok(const unsigned char *h)
{
        uint64_t want = tar_num((const char *)h + 148, 8), sum = 0;
        int i;

        for (i = 0; i < 512; i++)
                sum += (i >= 148 && i < 156) ? ' ' : h[i];
        return sum == want;
}

/* A block's data into buf (NUL-terminated), for long names and pax. */
static int tar_read_meta(struct tar *t, uint64_t size, char *buf, size_t cap)
{
        uint64_t pad = (512 - size % 512) % 512;
        int rc;

        if (size >= cap)
                return -ENAMETOOLONG;
        if ((rc = stream_read(t->s, buf, (size_t)size)) < 0 || (rc = stream_skip(t->s, pad)) < 0)
                return rc;
        buf[size] = '\0';
        return 0;
}

static void pax_apply(char *rec, size_t len, struct tar_entry *e, bool *has_size)
{
        size_t i = 0;

        while (i < len) {
                char *sp, *eq, *end;
                unsigned long n = strtoul(rec + i, &sp, 10);
                if (n == 0 || i + n > len || *sp != ' ')
                        return;
                end = rec + i + n - 1; /* the record's '\n' */
                *end = '\0';
                eq = strchr(sp + 1, '=');
                if (eq != NULL) {
                        *eq = '\0';
                        if (strcmp(sp + 1, "path") == 0)
                                snprintf(e->path, sizeof(e->path), "%s", eq + 1);
                        else if (strcmp(sp + 1, "linkpath") == 0)
                                snprintf(e->link, sizeof(e->link), "%s", eq + 1);
                        else if (strcmp(sp + 1, "size") == 0) {
                                e->size = strtoull(eq + 1, NULL, 10);
                                *has_size = true;
                        }
                }
                i += n;
        }
}

/* 1 with the next entry in e, 0 at the end of the archive, or -errno. */
static int tar_next(struct tar *t, struct tar_entry *e, char *err, size_t errlen)
{
        unsigned char h[512];
        char *pax = NULL;
        bool long_name = false, long_link = false, has_size = false;
        int rc;

        if (t->pending > 0 && (rc = stream_skip(t->s, t->pending)) < 0)
                goto bad;
        t->pending = 0;
        memset(e, 0, sizeof(*e));
        for (;;) {
                if ((rc = stream_read(t->s, h, sizeof(h))) < 0)
                        goto bad;
                if (h[0] == '\0') {
                        free(pax);
                        return 0; /* the zero block that ends an archive */
                }
                if (!tar_checksum_ok(h)) {
                        rc = -EPROTO;
                        goto bad;
                }
                uint64_t size = tar_num((const char *)h + 124, 12);
                char type = (char)h[156];
                if (type == 'L' || type == 'K') {
                        rc = tar_read_meta(t, size, type == 'L' ? e->path : e->link, PATH_MAX);
                        if (rc < 0)
                                goto bad;
                        *(type == 'L' ? &long_name : &long_link) = true;
                        continue;
                }
                if (type == 'x' || type == 'g') {
                        free(pax);
                        if (size > IMG_PAX_MAX || (pax = malloc((size_t)size + 1)) == NULL) {
                                rc = -ENOMEM;
                                pax = NULL;
                                goto bad;
                        }
                        if ((rc = tar_read_meta(t, size, pax, (size_t)size + 1)) < 0)
                                goto bad;
                        if (type == 'x')
                                pax_apply(pax, (size_t)size, e, &has_size);
                        long_name = long_name || e->path[0] != '\0';
                        long_link = long_link || e->link[0] != '\0';
                        continue;
                }
                if (!long_name) {
                        char name[101], prefix[156];
                        memcpy(name, h, 100);
                        name[100] = '\0';
                        memcpy(prefix, h + 345, 155);
                        prefix[155] = '\0';
                        if (memcmp(h + 257, "ustar", 5) == 0 && prefix[0] != '\0')
                                snprintf(e->path, sizeof(e->path), "%s/%s", prefix, name);
                        else
                                snprintf(e->path, sizeof(e->path), "%s", name);
                }
                if (!long_link) {
                        memcpy(e->link, h + 157, 100);
                        e->link[100] = '\0';
                }
                e->type = type == '\0' || type == '7' ? '0' : type;
                e->mode = (unsigned)tar_num((const char *)h + 100, 8);
                if (!has_size)
                        e->size = size;
                if (e->type == '1' || e->type == '2' || e->type == '5')
                        e->size = 0; /* links and directories carry no data */
                e->data_off = t->s->off;
                t->pending = e->size + (512 - e->size % 512) % 512;
                free(pax);
                return 1;
        }
bad:
        free(pax);
        snprintf(err, errlen, "not a readable tar archive (%s)",
                 rc == -EPROTO ? "bad header or truncated" : strerror(-rc));
        return rc;
}

/* ---- paths: every name is made relative and clean, or refused ---- */

/* Cleans p in place ("./a//b/" -> "a/b"; "." -> ""). -EPERM for an
 * absolute path or a ".." component: such an entry could land anywhere. */
static int path_clean(char *p)
{
        char *r = p, *w = p;

        if (p[0] == '/')
                return -EPERM;
        while (*r != '\0') {
                char *c = r;
                size_t n;
                while (*r != '\0' && *r != '/')
                        r++;
                n = (size_t)(r - c);
                while (*r == '/')
                        r++;
                if (n == 0 || (n == 1 && c[0] == '.'))
                        continue;
                if (n == 2 && c[0] == '.' && c[1] == '.')
                        return -EPERM;
                if (w != p)
                        *w++ = '/';
                memmove(w, c, n);
                w += n;
        }
        *w = '\0';
        return 0;
}

/* A relative symbolic link at `path` must not climb above the layer's
 * root. An absolute target is resolved inside the sandbox's root. */
static bool link_target_ok(const char *path, const char *target)
{
        int depth = 0;
        const char *c;

        if (target[0] == '/')
                return true;
        for (c = path; *c != '\0'; c++)
                depth += *c == '/';
        for (c = target; *c != '\0';) {
                const char *s = c;
                while (*c != '\0' && *c != '/')
                        c++;
                if (c - s == 2 && s[0] == '.' && s[1] == '.') {
                        if (--depth < 0)
                                return false;
                } else if (c - s > 0 && !(c - s == 1 && s[0] == '.')) {
                        depth++;
                }
                while (*c == '/')
                        c++;
        }
        return true;
}

static int open_beneath(int dirfd, const char *name)
{
        struct open_how how = {.flags = O_PATH | O_DIRECTORY | O_CLOEXEC,
                               .resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS |
                                          RESOLVE_NO_MAGICLINKS | RESOLVE_NO_XDEV};
        int fd = (int)syscall(SYS_openat2, dirfd, name, &how, sizeof(how));

        return fd < 0 ? -errno : fd;
}

/* The directory holding `path` (clean, relative) under root, made as
 * needed, with no symbolic link followed on the way; *base points at the
 * last component. Returns an O_PATH descriptor or -errno. */
static int open_parent(int root, char *path, const char **base)
{
        char *slash = strrchr(path, '/');
        char *c, *next;
        int fd, nfd;

        *base = slash != NULL ? slash + 1 : path;
        if ((fd = open_beneath(root, ".")) < 0 || slash == NULL)
                return fd;
        *slash = '\0';
        for (c = path; c != NULL; c = next) {
                next = strchr(c, '/');
                if (next != NULL)
                        *next = '\0';
                nfd = open_beneath(fd, c);
                if (nfd == -ENOENT && mkdirat(fd, c, 0755) == 0)
                        nfd = open_beneath(fd, c);
                if (next != NULL)
                        *next++ = '/';
                close(fd);
                if (nfd < 0) {
                        *slash = '/';
                        return nfd;
                }
                fd = nfd;
        }
        *slash = '/';
        return fd;
}

/* Removes name under dirfd, recursively, never following a link. */
static int remove_at(int at, const char *name)
{
        DIR *d;
        struct dirent *de;
        int fd;

        if (unlinkat(at, name, 0) == 0 || errno == ENOENT)
                return 0;
        if (errno != EISDIR && errno != EPERM)
                return -errno;
        fd = openat(at, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (fd < 0)
                return -errno;
        fchmod(fd, 0700); /* a read-only directory from a layer */
        d = fdopendir(fd);
        if (d == NULL) {
                close(fd);
                return -errno;
        }
        while ((de = readdir(d)) != NULL) {
                if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
                        continue;
                int rc = remove_at(dirfd(d), de->d_name);
                if (rc < 0) {
                        closedir(d);
                        return rc;
                }
        }
        closedir(d);
        return unlinkat(at, name, AT_REMOVEDIR) == 0 || errno == ENOENT ? 0 : -errno;
}

/* ---- one layer: every entry checked, then written under the layer dir ---- */

struct unpack {
        int root; /* the layer's temporary directory */
        unsigned skipped_dev, dropped_setid;
        uint64_t *budget; /* what the image may still take (see entry_cost) */
        char *err;
        size_t errlen;
};

static int refuse(struct unpack *u, const struct tar_entry *e, const char *why)
{
        snprintf(u->err, u->errlen, "layer refused: entry '%.200s' %s", e->path, why);
        return -EPERM;
}

static int write_data(struct tar *t, int fd, uint64_t size)
{
        unsigned char buf[65536];

        while (size > 0) {
                size_t k = size > sizeof(buf) ? sizeof(buf) : (size_t)size;
                int rc = stream_read(t->s, buf, k);
                if (rc < 0)
                        return rc;
                for (size_t done = 0; done < k;) {
                        ssize_t n = write(fd, buf + done, k - done);
                        if (n < 0)
                                return -errno;
                        done += (size_t)n;
                }
                size -= k;
                t->pending -= k;
        }
        return 0;
}

/* What an entry takes on disk, as the caps count it: its data in 4 KiB
 * blocks, and a block at least, so that a flood of empty files or
 * directories counts too. */
static uint64_t entry_cost(const struct tar_entry *e)
{
        uint64_t blocks = (e->size + 4095) / 4096;

        return (blocks > 0 ? blocks : 1) * 4096;
}

static int unpack_entry(struct unpack *u, struct tar *t, struct tar_entry *e)
{
        unsigned mode = e->mode & 0777;
        const char *base;
        int dir, fd, rc = 0;

        if (path_clean(e->path) < 0)
                return refuse(u, e, "has an absolute path or a '..' component");
        if (e->path[0] == '\0')
                return 0; /* the layer's root itself */
        if (e->type == '3' || e->type == '4' || e->type == '6') {
                u->skipped_dev++; /* a sandbox gets its own minimal /dev */
                return 0;
        }
        if (e->type != '0' && e->type != '1' && e->type != '2' && e->type != '5')
                return refuse(u, e, "has an unsupported type");
        if (entry_cost(e) > *u->budget)
                return -EFBIG; /* before anything of it is written */
        *u->budget -= entry_cost(e);
        if (e->mode & 06000)
                u->dropped_setid++;
        if (e->type == '2' && !link_target_ok(e->path, e->link))
                return refuse(u, e, "is a symbolic link that points outside the image");
        dir = open_parent(u->root, e->path, &base);
        if (dir < 0)
                return refuse(u, e,
                              dir == -ELOOP || dir == -EXDEV || dir == -ENOTDIR
                                  ? "lies beyond a symbolic link or a file"
                                  : strerror(-dir));
        if (e->type == '5') {
                if (mkdirat(dir, base, 0700) != 0 && errno == EEXIST) {
                        struct stat st;
                        if (fstatat(dir, base, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
                            !S_ISDIR(st.st_mode) && (rc = remove_at(dir, base)) == 0 &&
                            mkdirat(dir, base, 0700) != 0)
                                rc = -errno;
                }
                /* Set, not masked by the umask; always open to its owner
                 * so that the cache can be assembled and pruned. */
                if (rc == 0 && fchmodat(dir, base, mode | 0700, 0) != 0)
                        rc = -errno;
                close(dir);
                return rc;
        }
        /* A later entry of the same name replaces an earlier one. */
        if ((rc = remove_at(dir, base)) < 0)
                goto out;
        if (e->type == '2') {
                if (symlinkat(e->link, dir, base) != 0)
                        rc = -errno;
        } else if (e->type == '1') {
                const char *tbase;
                int tdir;
                if (path_clean(e->link) < 0 || e->link[0] == '\0') {
                        rc = refuse(u, e, "is a hard link to a path outside the image");
                        goto out;
                }
                tdir = open_parent(u->root, e->link, &tbase);
                if (tdir < 0) {
                        rc = refuse(u, e, "is a hard link beyond a symbolic link");
                        goto out;
                }
                if (linkat(tdir, tbase, dir, base, 0) != 0)
                        rc = -errno;
                close(tdir);
        } else {
                fd = openat(dir, base, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
                if (fd < 0) {
                        rc = -errno;
                        goto out;
                }
                rc = write_data(t, fd, e->size);
                /* setuid, setgid and sticky bits never reach the cache. */
                if (rc == 0 && fchmod(fd, mode) != 0)
                        rc = -errno;
                close(fd);
        }
        if (rc < 0 && u->err[0] == '\0')
                snprintf(u->err, u->errlen, "cannot unpack '%.200s': %s", e->path, strerror(-rc));
out:
        close(dir);
        return rc;
}

/* ---- the cache ---- */

int image_cache_dir(char *buf, size_t len)
{
        const char *x = getenv("XDG_CACHE_HOME"), *home = getenv("HOME");
        char *p;
        int n;

        if (x != NULL && x[0] == '/')
                n = snprintf(buf, len, "%s/proctor/images", x);
        else if (home != NULL && home[0] == '/')
                n = snprintf(buf, len, "%s/.cache/proctor/images", home);
        else
                return -ENOENT;
        if (n < 0 || (size_t)n >= len)
                return -ENAMETOOLONG;
        for (p = buf + 1; *p != '\0'; p++) {
                if (*p != '/')
                        continue;
                *p = '\0';
                if (mkdir(buf, 0700) != 0 && errno != EEXIST)
                        return -errno;
                *p = '/';
        }
        if (mkdir(buf, 0700) != 0 && errno != EEXIST)
                return -errno;
        return 0;
}

/* The cache's format: 2 since every digest is verified. An older cache
 * (no such record) was filled without checking them, so none of it is
 * trusted: its roots and layers are removed once, then the record made. */
#define IMG_CACHE_FORMAT "2\n"

static void cache_upgrade(void)
{
        char dir[PATH_MAX], buf[8];
        int at, fd;
        ssize_t n;

        if (image_cache_dir(dir, sizeof(dir)) < 0 ||
            (at = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) < 0)
                return;
        fd = openat(at, "format", O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
        n = fd >= 0 ? read(fd, buf, sizeof(buf)) : -1;
        if (fd >= 0)
                close(fd);
        if (n != (ssize_t)strlen(IMG_CACHE_FORMAT) ||
            memcmp(buf, IMG_CACHE_FORMAT, (size_t)n) != 0) {
                remove_at(at, "roots");
                remove_at(at, "layers");
                unlinkat(at, "format", 0);
                fd = openat(at, "format", O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
                            0600);
                if (fd >= 0) {
                        if (write(fd, IMG_CACHE_FORMAT, strlen(IMG_CACHE_FORMAT)) < 0)
                                unlinkat(at, "format", 0);
                        close(fd);
                }
        }
        close(at);
}

static int cache_sub(char *buf, size_t len, const char *sub, char *err, size_t errlen)
{
        int rc = image_cache_dir(buf, len);
        size_t n = strlen(buf);

        if (rc == 0 && snprintf(buf + n, len - n, "/%s", sub) >= (int)(len - n))
                rc = -ENAMETOOLONG;
        if (rc == 0 && mkdir(buf, 0700) != 0 && errno != EEXIST)
                rc = -errno;
        if (rc < 0)
                snprintf(err, errlen, "cannot make the image cache %s: %s", buf, strerror(-rc));
        return rc;
}

/* The layers/HEX directory of a cached layer (hex may be a prefix of
 * a longer string: its first 64 digits count). */
static int layer_path(char *buf, size_t len, const char *hex, char *err, size_t errlen)
{
        char dir[PATH_MAX];
        int rc = cache_sub(dir, sizeof(dir), "layers", err, errlen);

        if (rc == 0 && snprintf(buf, len, "%s/%.64s", dir, hex) >= (int)len)
                rc = -ENAMETOOLONG;
        return rc;
}

/* Unpacks one layer (the stream's tar) into layers/HEX, HEX its diff_id,
 * the sha256 of the uncompressed stream, and `blob` (or NULL) the sha256
 * the stored bytes must have. The layer is made in a temporary directory
 * and stored only when both digests match and it fits img->budget;
 * otherwise nothing of it is left. `what` names it for people. */
static int layer_unpack(const char *hex, const char *blob, const char *what, struct stream *s,
                        struct image *img, char *err, size_t errlen)
{
        char tmp[PATH_MAX + 16], final[PATH_MAX + 80], raw[65], plain[65];
        struct unpack u = {.err = err, .errlen = errlen, .budget = &img->budget};
        struct tar t = {.s = s};
        struct tar_entry *e;
        int rc;

        if ((rc = layer_path(final, sizeof(final), hex, err, errlen)) < 0)
                return rc;
        snprintf(tmp, sizeof(tmp), "%.*s", (int)(sizeof(tmp) - 1), final);
        snprintf(strrchr(tmp, '/'), sizeof(tmp) - (size_t)(strrchr(tmp, '/') - tmp),
                 "/.tmp-XXXXXX");
        if (mkdtemp(tmp) == NULL || (u.root = open(tmp, O_PATH | O_DIRECTORY | O_CLOEXEC)) < 0) {
                rc = -errno;
                snprintf(err, errlen, "cannot unpack into %s: %s", tmp, strerror(errno));
                return rc;
        }
        s->hash = true;
        e = malloc(sizeof(*e));
        rc = e == NULL ? -ENOMEM : 0;
        err[0] = '\0';
        while (rc == 0 && (rc = tar_next(&t, e, err, errlen)) == 1)
                rc = unpack_entry(&u, &t, e);
        free(e);
        close(u.root);
        img->skipped_dev += u.skipped_dev;
        img->dropped_setid += u.dropped_setid;
        if (rc == 0 && t.pending > 0)
                rc = stream_skip(s, t.pending);
        if (rc == 0)
                rc = stream_drain(s, &img->budget);
        if (rc == -EFBIG) {
                cap_message(img, err, errlen);
        } else if (rc == -EPROTO && err[0] == '\0') {
                snprintf(err, errlen, "%s is not a readable layer (damaged or truncated)", what);
        } else if (rc == 0) {
                stream_digests(s, raw, plain);
                if (strncmp(plain, hex, 64) != 0) {
                        snprintf(err, errlen,
                                 "%s does not match its diff_id: the image claims sha256:%.64s, "
                                 "its content is sha256:%s; the image is damaged or forged",
                                 what, hex, plain);
                        rc = -EBADMSG;
                } else if (blob != NULL && strncmp(raw, blob, 64) != 0) {
                        snprintf(err, errlen,
                                 "%s does not match its digest: it is named sha256:%.64s, "
                                 "its bytes are sha256:%s; the image is damaged or forged",
                                 what, blob, raw);
                        rc = -EBADMSG;
                }
        }
        /* Another proctor may have finished the same layer meanwhile. */
        if (rc == 0 && rename(tmp, final) != 0 && errno != ENOTEMPTY && errno != EEXIST) {
                rc = -errno;
                snprintf(err, errlen, "cannot store %s: %s", what, strerror(errno));
        }
        if (access(tmp, F_OK) == 0)
                remove_at(AT_FDCWD, tmp);
        return rc;
}

/* Merges one unpacked layer directory into the root being assembled:
 * its whiteouts first (an opaque directory hides everything below it),
 * then its entries, hard-linked, replacing those of lower layers. */
static int merge_dir(int from, int to)
{
        DIR *d = fdopendir(dup(from));
        struct dirent *de;
        int rc = 0;

        if (d == NULL)
                return -errno;
        while ((de = readdir(d)) != NULL && rc == 0) {
                if (strcmp(de->d_name, ".wh..wh..opq") == 0) {
                        DIR *t = fdopendir(openat(to, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC));
                        struct dirent *te;
                        while (t != NULL && (te = readdir(t)) != NULL && rc == 0)
                                if (strcmp(te->d_name, ".") != 0 && strcmp(te->d_name, "..") != 0)
                                        rc = remove_at(to, te->d_name);
                        if (t != NULL)
                                closedir(t);
                } else if (strncmp(de->d_name, ".wh.", 4) == 0) {
                        rc = remove_at(to, de->d_name + 4);
                }
        }
        rewinddir(d);
        while (rc == 0 && (de = readdir(d)) != NULL) {
                struct stat st, have;
                const char *n = de->d_name;
                if (strcmp(n, ".") == 0 || strcmp(n, "..") == 0 || strncmp(n, ".wh.", 4) == 0)
                        continue;
                if (fstatat(from, n, &st, AT_SYMLINK_NOFOLLOW) != 0) {
                        rc = -errno;
                        break;
                }
                bool exists = fstatat(to, n, &have, AT_SYMLINK_NOFOLLOW) == 0;
                if (S_ISDIR(st.st_mode)) {
                        if (exists && !S_ISDIR(have.st_mode) && (rc = remove_at(to, n)) < 0)
                                break;
                        if ((!exists || !S_ISDIR(have.st_mode)) && mkdirat(to, n, 0700) != 0) {
                                rc = -errno;
                                break;
                        }
                        int sf = openat(from, n, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
                        int tf = openat(to, n, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
                        rc = sf < 0 || tf < 0 ? -errno : merge_dir(sf, tf);
                        if (rc == 0 && fchmod(tf, st.st_mode & 0777) != 0)
                                rc = -errno;
                        if (sf >= 0)
                                close(sf);
                        if (tf >= 0)
                                close(tf);
                        continue;
                }
                if (exists && (rc = remove_at(to, n)) < 0)
                        break;
                if (linkat(from, n, to, n, 0) != 0)
                        rc = -errno;
        }
        closedir(d);
        return rc;
}

static uint64_t tree_bytes(int at)
{
        DIR *d = fdopendir(dup(at));
        struct dirent *de;
        uint64_t sum = 0;

        while (d != NULL && (de = readdir(d)) != NULL) {
                struct stat st;
                if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0 ||
                    fstatat(at, de->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0)
                        continue;
                sum += (uint64_t)st.st_blocks * 512;
                if (S_ISDIR(st.st_mode)) {
                        int fd = openat(at, de->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW);
                        if (fd >= 0) {
                                sum += tree_bytes(fd);
                                close(fd);
                        }
                }
        }
        if (d != NULL)
                closedir(d);
        return sum;
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

static bool hex64(const char *s);
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

static bool hex64(const char *s)
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
        if (digest == NULL || strncmp(digest, "sha256:", 7) != 0 || !hex64(digest + 7) ||
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
        if (!hex64(base)) {
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
                if (diff[i] == NULL || strncmp(diff[i], "sha256:", 7) != 0 || !hex64(diff[i] + 7) ||
                    diff[i][71] != '\0') {
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
        if (strncmp(name, "blobs/sha256/", 13) != 0 || !hex64(name + 13) || name[13 + 64] != '\0')
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
                remove_at(AT_FDCWD, tmp);
        for (i = 0; rc < 0 && i < p->nlayers; i++) {
                char why[8]; /* err keeps the first failure's reason */
                if (fresh[i] && layer_path(lp, sizeof(lp), diff[i], why, sizeof(why)) == 0)
                        remove_at(AT_FDCWD, lp);
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

/* ---- the cache's cap: least recently used images go first ---- */

struct cached {
        char hex[65];
        time_t used;
        uint64_t bytes;
        json_t *layers; /* the diff_ids it was assembled from, or NULL */
};

static int cached_older(const void *a, const void *b)
{
        const struct cached *x = a, *y = b;

        return x->used < y->used ? -1 : x->used > y->used;
}

/* The complete images under roots (their records read), oldest first;
 * *n gets how many. NULL when there are none or no memory. */
static struct cached *cached_list(const char *roots, size_t *n)
{
        struct cached *c = NULL;
        struct dirent *de;
        DIR *d = opendir(roots);

        *n = 0;
        while (d != NULL && (de = readdir(d)) != NULL) {
                char path[PATH_MAX + 300];
                struct stat st;
                json_t *j;
                if (!hex64(de->d_name) || de->d_name[64] != '\0')
                        continue;
                snprintf(path, sizeof(path), "%s/%s/image.json", roots, de->d_name);
                if ((j = json_load_file(path, 0, NULL)) == NULL)
                        continue;
                struct cached *more = realloc(c, (*n + 1) * sizeof(*c));
                if (more == NULL) {
                        json_decref(j);
                        break;
                }
                c = more;
                snprintf(c[*n].hex, sizeof(c[*n].hex), "%.64s", de->d_name);
                snprintf(path, sizeof(path), "%s/%s", roots, de->d_name);
                c[*n].used = stat(path, &st) == 0 ? st.st_mtime : 0;
                c[*n].bytes = (uint64_t)json_integer_value(json_object_get(j, "bytes"));
                c[*n].layers = json_incref(json_object_get(j, "layers"));
                json_decref(j);
                (*n)++;
        }
        if (d != NULL)
                closedir(d);
        if (c != NULL)
                qsort(c, *n, sizeof(*c), cached_older);
        return c;
}

/* Removes the layers no image left under roots was assembled from. */
static void layers_collect(const char *roots, struct cached *c, size_t n)
{
        char layers[PATH_MAX];
        struct dirent *de;
        DIR *d;

        snprintf(layers, sizeof(layers), "%.*s/layers", (int)(strrchr(roots, '/') - roots), roots);
        if ((d = opendir(layers)) == NULL)
                return;
        while ((de = readdir(d)) != NULL) {
                bool used = false;
                if (!hex64(de->d_name) || de->d_name[64] != '\0')
                        continue; /* ".", "..", a layer still being unpacked */
                for (size_t i = 0; i < n && !used; i++) {
                        size_t k;
                        json_t *l;
                        json_array_foreach (c[i].layers, k, l)
                                used = used || (json_is_string(l) &&
                                                strcmp(json_string_value(l), de->d_name) == 0);
                }
                if (!used)
                        remove_at(dirfd(d), de->d_name);
        }
        closedir(d);
}

/* Keeps the sum of the cached images' sizes (as `proctor images` lists
 * them) within cap, removing the least recently used images, never
 * `keep` (the one just stored), and then the layers no image needs. */
static void cache_enforce(const char *roots, uint64_t cap, const char *keep)
{
        size_t n, i;
        struct cached *c = cached_list(roots, &n);
        bool removed = false;
        uint64_t sum = 0;

        for (i = 0; i < n; i++)
                sum += c[i].bytes;
        for (i = 0; i < n && sum > cap; i++) {
                char path[PATH_MAX + 80];
                if (strcmp(c[i].hex, keep) == 0)
                        continue;
                snprintf(path, sizeof(path), "%s/%s", roots, c[i].hex);
                if (remove_at(AT_FDCWD, path) < 0)
                        continue;
                sum -= c[i].bytes;
                json_decref(c[i].layers);
                c[i].layers = NULL;
                removed = true;
        }
        if (removed)
                layers_collect(roots, c, n);
        for (i = 0; i < n; i++)
                json_decref(c[i].layers);
        free(c);
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

int image_cache_list(void (*fn)(const struct image_entry *e, void *ud), void *ud, char *err,
                     size_t errlen)
{
        char roots[PATH_MAX];
        struct dirent *de;
        DIR *d;
        int rc = cache_sub(roots, sizeof(roots), "roots", err, errlen);

        if (rc < 0)
                return rc;
        if ((d = opendir(roots)) == NULL)
                return -errno;
        while ((de = readdir(d)) != NULL) {
                struct image_entry e = {.bytes = 0};
                char path[PATH_MAX + 300];
                struct stat st;
                json_t *j;
                if (!hex64(de->d_name))
                        continue; /* ".", "..", an unpack still under way */
                snprintf(path, sizeof(path), "%s/%s/image.json", roots, de->d_name);
                if ((j = json_load_file(path, 0, NULL)) == NULL)
                        continue;
                snprintf(e.ref, sizeof(e.ref), "%s",
                         json_string_value(json_object_get(j, "ref")) ?: "?");
                snprintf(e.digest, sizeof(e.digest), "sha256:%.64s", de->d_name);
                e.bytes = (uint64_t)json_integer_value(json_object_get(j, "bytes"));
                snprintf(path, sizeof(path), "%s/%s", roots, de->d_name);
                if (stat(path, &st) == 0)
                        e.last_used = st.st_mtime;
                json_decref(j);
                fn(&e, ud);
        }
        closedir(d);
        return 0;
}

int image_cache_prune(unsigned *images, char *err, size_t errlen)
{
        char dir[PATH_MAX];
        struct dirent *de;
        DIR *d;
        int rc;

        *images = 0;
        if ((rc = cache_sub(dir, sizeof(dir), "roots", err, errlen)) < 0)
                return rc;
        if ((d = opendir(dir)) == NULL)
                return -errno;
        while ((de = readdir(d)) != NULL)
                if (strcmp(de->d_name, ".") != 0 && strcmp(de->d_name, "..") != 0) {
                        *images += hex64(de->d_name);
                        if ((rc = remove_at(dirfd(d), de->d_name)) < 0)
                                break;
                }
        closedir(d);
        if (rc == 0) {
                char *slash = strrchr(dir, '/');
                snprintf(slash, sizeof(dir) - (size_t)(slash - dir), "/layers");
                rc = remove_at(AT_FDCWD, dir);
        }
        if (rc < 0)
                snprintf(err, errlen, "cannot prune %s: %s", dir, strerror(-rc));
        return rc;
}
