/* tmpdir: removing a unit test's scratch directory with all it holds.
 * Tests only; never linked into proctor. */
#ifndef PROCTOR_TEST_TMPDIR_H
#define PROCTOR_TEST_TMPDIR_H

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>

/* rm -rf DIR: 0, or -1 when it failed (or DIR's name is too long). */
static inline int tmpdir_remove(const char *dir)
{
        char cmd[PATH_MAX + 16];

        if (snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir) >= (int)sizeof(cmd))
                return -1;
        return system(cmd) == 0 ? 0 : -1;
}

#endif
