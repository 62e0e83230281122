/* image: the root filesystem of an OCI or Docker image for native
 * sandboxes, read from a `docker save` tarball or an OCI layout directory,
 * or the local engine, unpacked once per layer digest into the cache and
 * assembled read-only.
 * Never writes outside the cache, never creates device nodes or setuid files,
 * never follows a link while unpacking, and never pulls from a registry. */
#ifndef PROCTOR_IMAGE_H
#define PROCTOR_IMAGE_H

#include <stdbool.h>
#include <stdint.h>
#include <time.h>

struct image;

/* Opens REF (a tarball or a directory), unpacking and assembling it into the
 * cache unless its root is there already, complete. 0 or -errno with err. */
int image_open(const char *ref, struct image **out, char *err, size_t errlen);
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
