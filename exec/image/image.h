/* image: the root filesystem of an OCI or Docker image for native
 * sandboxes, read from a `docker save` tarball or an OCI layout directory,
 * or the local engine, unpacked once per layer digest into the cache and
 * assembled read-only.
 * Never writes outside the cache, never creates device nodes or setuid files,
 * never follows a link while unpacking, never keeps what fails its digest
 * or passes a cap, and never pulls from a registry. */
#ifndef PROCTOR_IMAGE_H
#define PROCTOR_IMAGE_H

#include <stdbool.h>
#include <stdint.h>
#include <time.h>

struct image;

#define IMAGE_MAX_DEFAULT       (16ull << 30)
#define IMAGE_CACHE_MAX_DEFAULT (32ull << 30)

/* The bounds on what images take on disk (0: the default). image_max:
 * one image unpacked (every entry counted in 4 KiB blocks, one at least);
 * cache_max: the sum of the cached images' sizes, the least recently used
 * removed past it. */
/* How far a first unpack has come: layer n of m (from 1), its compressed
 * bytes read of its total; or, layer 0 of 0, how many bytes of an engine's
 * export have come (total 0: not known before it ends). */
struct image_progress {
        unsigned layer, layers;
        uint64_t done, total;
};

struct image_caps {
        uint64_t image_max;
        uint64_t cache_max;
        /* Optional: called as each layer starts, about every 4 MiB read, and
         * as it ends; and a flag that, once set (say by a signal handler),
         * ends the export or unpack with -ECANCELED, nothing of it kept
         * (checked at least every 100 ms while an engine sends nothing). */
        void (*progress)(const struct image_progress *p, void *ud);
        void *progress_ud;
        const volatile int *cancel;
};

/* Opens REF (a tarball or a directory), unpacking and assembling it into the
 * cache unless its root is there already, complete. Every digest the image
 * claims is verified (the config's, each layer's diff_id, each blob's) and
 * nothing unverified or past a cap is kept. caps may be NULL (defaults).
 * 0 or -errno with err; err may quote names from the image: sanitize it
 * before it reaches a terminal. */
int image_open(const char *ref, const struct image_caps *caps, struct image **out, char *err,
               size_t errlen);
void image_free(struct image *img);

/* The assembled root, to be bound read-only into sandboxes. */
const char *image_root(const struct image *img);
/* REF as given, and the image's config digest ("sha256:HEX"). */
const char *image_ref(const struct image *img);
const char *image_digest(const struct image *img);
/* The image's Env ("K=V", NULL-terminated; never NULL), its WorkingDir and
 * User ("" when unset): shown, Env merged into the sandbox's environment. */
char *const *image_env(const struct image *img);
const char *image_workdir(const struct image *img);
const char *image_user(const struct image *img);
/* What unpacking left out, for people: device nodes and fifos skipped,
 * setuid/setgid bits dropped (0 when the root came from the cache). */
unsigned image_skipped_devices(const struct image *img);
unsigned image_dropped_setid(const struct image *img);

/* A size for people: "512B", "1.5M", "16G". */
void image_size_text(uint64_t bytes, char *buf, size_t len);

/* $XDG_CACHE_HOME/proctor/images (or ~/.cache/...). 0 or -errno. */
int image_cache_dir(char *buf, size_t len);

struct image_entry {
        char ref[512];
        char digest[80];
        uint64_t bytes;
        time_t last_used;
};
/* Calls fn for every complete image in the cache. 0 or -errno. */
int image_cache_list(void (*fn)(const struct image_entry *e, void *ud), void *ud, char *err,
                     size_t errlen);
/* Removes every cached image, layer and leftover of an interrupted unpack;
 * *images gets how many images were removed. 0 or -errno. */
int image_cache_prune(unsigned *images, char *err, size_t errlen);

#endif
