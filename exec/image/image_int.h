/* image_int: internal to exec/image; nothing outside this folder includes
 * it. What the image's files share:
 *   image.c     the public API of image.h: the image's source (a tarball
 *               indexed once, a directory, an engine's export), its plan
 *               of layers from the manifest, its config, and the root
 *               assembled from the cached layers.
 *   unpack.c    streams over a file region (gunzipped, hashed), the tar
 *               reader, paths made safe, one layer unpacked and verified,
 *               and the merge of layers into a root.
 *   imgcache.c  the cache: its directory, its format, its cap on size,
 *               and `proctor images` (list, prune). */
#ifndef PROCTOR_IMAGE_INT_H
#define PROCTOR_IMAGE_INT_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <zlib.h>

#include "exec/image/image.h"
#include "exec/image/sha256.h"

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

/* ---- reading: a byte stream over a file region, gunzipped when needed ---- */

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

/* ---- unpack.c ---- */

int stream_open(struct stream *s, int fd, uint64_t off, uint64_t len);
void stream_close(struct stream *s);
/* Fills dst with exactly n bytes: 0, -EPROTO on a short stream, or -errno. */
int stream_read(struct stream *s, void *dst, size_t n);
/* The hex digests of what was read: the raw region and its content. */
void stream_digests(struct stream *s, char raw[65], char plain[65]);
/* 1 with the next entry in e, 0 at the end of the archive, or -errno. */
int tar_next(struct tar *t, struct tar_entry *e, char *err, size_t errlen);
/* Cleans p in place ("./a//b/" -> "a/b"); -EPERM for an absolute path or
 * a ".." component. */
int path_clean(char *p);
/* Removes name under dirfd, recursively, never following a link. */
int img_remove_at(int at, const char *name);
/* Unpacks one layer into layers/HEX, verified against its diff_id `hex`
 * and its blob digest (or NULL), within img->budget. */
int layer_unpack(const char *hex, const char *blob, const char *what, struct stream *s,
                 struct image *img, char *err, size_t errlen);
/* Merges one unpacked layer directory into the root being assembled. */
int merge_dir(int from, int to);
/* What the entries under a directory take on disk (their blocks), in bytes. */
uint64_t tree_bytes(int at);

/* ---- imgcache.c ---- */

/* Empties a cache of an older format, once. */
void cache_upgrade(void);
/* The cache's subdirectory `sub` ("roots", "layers"), made as needed. */
int cache_sub(char *buf, size_t len, const char *sub, char *err, size_t errlen);
/* The layers/HEX directory of a cached layer. */
int layer_path(char *buf, size_t len, const char *hex, char *err, size_t errlen);
/* Keeps the cached images under roots within cap, never removing `keep`. */
void cache_enforce(const char *roots, uint64_t cap, const char *keep);

/* ---- image.c ---- */

/* The error for an image past its cap: which cap, and how to raise it. */
void cap_message(const struct image *img, char *err, size_t errlen);
/* Whether s is 64 lowercase hex digits, then its end, a '.' or a '/'. */
bool img_hex64(const char *s);

#endif
