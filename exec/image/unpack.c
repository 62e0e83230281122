/* unpack: the reading and unpacking half of exec/image. A byte stream over
 * a region of a file, gunzipped when needed and hashed as it is read (the
 * raw bytes and the bytes they gunzip to); a tar reader (ustar, GNU long
 * names, pax); and one layer unpacked into the cache, every entry checked
 * before anything is written: no absolute or `..` paths, no link followed,
 * no device node, no setuid bit, nothing past the image's cap. Also the
 * merge of unpacked layers into a root, whiteouts applied. */
#include "exec/image/image_int.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/openat2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <zlib.h>

#define IMG_PAX_MAX (1u << 20)

/* ---- reading: a byte stream over a file region, gunzipped when needed ---- */

#define PROGRESS_STEP (4u << 20)

int stream_open(struct stream *s, int fd, uint64_t off, uint64_t len)
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

void stream_close(struct stream *s)
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
int stream_read(struct stream *s, void *dst, size_t n)
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
void stream_digests(struct stream *s, char raw[65], char plain[65])
{
        struct sha256 r = s->raw_h;

        sha256_final_hex(&r, raw);
        if (s->gz)
                sha256_final_hex(&s->plain_h, plain);
        else
                memcpy(plain, raw, 65);
}

/* ---- tar (ustar, GNU long names, pax path/linkpath/size) ---- */

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
int tar_next(struct tar *t, struct tar_entry *e, char *err, size_t errlen)
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
int path_clean(char *p)
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
int img_remove_at(int at, const char *name)
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
                int rc = img_remove_at(dirfd(d), de->d_name);
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
                            !S_ISDIR(st.st_mode) && (rc = img_remove_at(dir, base)) == 0 &&
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
        if ((rc = img_remove_at(dir, base)) < 0)
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

/* Unpacks one layer (the stream's tar) into layers/HEX, HEX its diff_id,
 * the sha256 of the uncompressed stream, and `blob` (or NULL) the sha256
 * the stored bytes must have. The layer is made in a temporary directory
 * and stored only when both digests match and it fits img->budget;
 * otherwise nothing of it is left. `what` names it for people. */
int layer_unpack(const char *hex, const char *blob, const char *what, struct stream *s,
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
                img_remove_at(AT_FDCWD, tmp);
        return rc;
}

/* Merges one unpacked layer directory into the root being assembled:
 * its whiteouts first (an opaque directory hides everything below it),
 * then its entries, hard-linked, replacing those of lower layers. */
int merge_dir(int from, int to)
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
                                        rc = img_remove_at(to, te->d_name);
                        if (t != NULL)
                                closedir(t);
                } else if (strncmp(de->d_name, ".wh.", 4) == 0) {
                        rc = img_remove_at(to, de->d_name + 4);
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
                        if (exists && !S_ISDIR(have.st_mode) && (rc = img_remove_at(to, n)) < 0)
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
                if (exists && (rc = img_remove_at(to, n)) < 0)
                        break;
                if (linkat(from, n, to, n, 0) != 0)
                        rc = -errno;
        }
        closedir(d);
        return rc;
}

uint64_t tree_bytes(int at)
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
