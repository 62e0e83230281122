/* image_engine: an image exported from the local Docker or Podman engine
 * (Engine API `GET /images/{name}/get` over its unix socket) as a `docker
 * save` tarball, and its id (`GET /images/{name}/json`), for exec/image.
 * Never pulls from a registry, never speaks to a TCP engine, never sends
 * anything but those requests. */
#ifndef PROCTOR_IMAGE_ENGINE_H
#define PROCTOR_IMAGE_ENGINE_H

#include <stdbool.h>
#include <stddef.h>

/* Whether `name` can be an engine's image name (registry/repo:tag or
 * @digest, nothing that needs escaping in a URL path). */
bool image_engine_name_ok(const char *name);

struct image_caps;

/* Writes the engine's export of `name` to out_fd. 0, or -errno with err
 * (-ENOENT: no engine socket, or no such image in its store; -ECANCELED
 * once caps' cancel is set, err untouched). caps (may be NULL): its
 * progress hears of the bytes exported as layer 0 of 0, total 0 (unknown). */
int image_engine_fetch(const char *name, int out_fd, const struct image_caps *caps, char *err,
                       size_t errlen);

/* The image's id in the engine's store (`GET /images/{name}/json`): the
 * sha256 of its config, as 64 hex digits in hex. 0, or -errno with err. */
int image_engine_id(const char *name, char hex[65], char *err, size_t errlen);

#endif
