/* datadir: finds the bundled themes from where the binary is, so that an
 * installed or copied binary keeps them. Reads paths only, never a theme. */
#include "tui/datadir.h"

#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#ifndef PROCTOR_DATADIR /* the Makefile sets it from PREFIX */
#define PROCTOR_DATADIR "/usr/local/share/proctor"
#endif

/* DIR/SUB into out when DIR/SUB/default.theme is readable. */
static bool has_themes(const char *dir, const char *sub, char *out, size_t outlen)
{
        char probe[PATH_MAX];
        int n = snprintf(probe, sizeof(probe), "%s%s/default.theme", dir, sub);

        if (n < 0 || (size_t)n >= sizeof(probe) || access(probe, R_OK) != 0)
                return false;
        n = snprintf(out, outlen, "%s%s", dir, sub);
        return n >= 0 && (size_t)n < outlen;
}

int datadir_themes_for(const char *exe, const char *compiled, char *dir, size_t dirlen, char *why,
                       size_t whylen)
{
        char path[PATH_MAX], bin[PATH_MAX] = "/";
        char *slash;
        int up;

        if (exe != NULL && snprintf(path, sizeof(path), "%s", exe) < (int)sizeof(path)) {
                for (up = 0; up < 3 && (slash = strrchr(path, '/')) != NULL; up++) {
                        *slash = '\0';
                        if (up == 0 && path[0] != '\0')
                                snprintf(bin, sizeof(bin), "%s", path);
                        if (has_themes(path, "/themes", dir, dirlen))
                                return 0;
                        /* PREFIX/bin/proctor: PREFIX/share/proctor/themes */
                        if (up == 1 && has_themes(path, "/share/proctor/themes", dir, dirlen))
                                return 0;
                }
        }
        if (has_themes(compiled, "/themes", dir, dirlen))
                return 0;
        snprintf(dir, dirlen, "%s/themes", compiled);
        snprintf(why, whylen,
                 "no bundled themes near %.80s or in %.80s/themes (set PROCTOR_THEMES_DIR "
                 "or make install)",
                 bin, compiled);
        return -ENOENT;
}

int datadir_themes(char *dir, size_t dirlen, char *why, size_t whylen)
{
        char exe[PATH_MAX];
        ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);

        if (n > 0)
                exe[n] = '\0';
        return datadir_themes_for(n > 0 ? exe : NULL, PROCTOR_DATADIR, dir, dirlen, why, whylen);
}
