/* inroot: opens a path inside a directory taken as its root (an image's
 * unpacked root), every symbolic link on the way resolved inside it: an
 * absolute target from that root, ".." never above it. Never reaches a
 * file of the host outside that root. Allocates nothing (inroot_open_plain
 * runs in a child between clone and exec). */
#ifndef PROCTOR_INROOT_H
#define PROCTOR_INROOT_H

#include <stdbool.h>

/* `path` (absolute or not, as seen inside the root) under rootfd, opened
 * with `flags` (O_CLOEXEC added; O_NOFOLLOW leaves a final link unfollowed,
 * O_PATH then opens the link itself). openat2(RESOLVE_IN_ROOT) where the
 * kernel has it, else (or with use_openat2 false) a walk one component at
 * a time with O_NOFOLLOW, links followed by hand (at most 40).
 * A descriptor, or -errno. */
int inroot_open(int rootfd, const char *path, int flags, bool use_openat2);

/* `path` (absolute) opened from "/" one component at a time, no link
 * followed anywhere: a path already resolved must still lead where it did.
 * The last component gets `flags` | O_NOFOLLOW. A descriptor, or -errno. */
int inroot_open_plain(const char *path, int flags);

#endif
