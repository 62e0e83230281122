/* datadir: where the bundled themes are, for a binary run from a checkout,
 * from the prefix it was installed into, or copied anywhere else. Looks at
 * files only; never reads the environment (theme.c applies PROCTOR_THEMES_DIR). */
#ifndef PROCTOR_DATADIR_H
#define PROCTOR_DATADIR_H

#include <stddef.h>

/* The first directory holding default.theme of: themes/ beside the binary
 * `exe` or up to two levels above it (a checkout, or build/asan/ in one);
 * share/proctor/themes of the prefix whose bin/ holds it (an installed
 * binary, DESTDIR included); `compiled`/themes (the data directory the
 * build was configured with). Fills dir with it and returns 0; else fills
 * dir with `compiled`/themes, why with the places looked at, for people,
 * and returns -ENOENT. */
int datadir_themes_for(const char *exe, const char *compiled, char *dir, size_t dirlen, char *why,
                       size_t whylen);

/* The same for this process's binary (/proc/self/exe) and PROCTOR_DATADIR. */
int datadir_themes(char *dir, size_t dirlen, char *why, size_t whylen);

#endif
