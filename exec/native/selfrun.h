/* selfrun: proctor's own binary run inside a root that is not the host's
 * (an image's, a container's), where its shared libraries and loader are
 * missing: the directories they were loaded from are mounted read-only
 * under /.proctor/lib and the binary is started through its own loader.
 * Internal to exec/. selfrun_argv allocates nothing (it runs in a child
 * between clone and exec). */
#ifndef PROCTOR_SELFRUN_H
#define PROCTOR_SELFRUN_H

#include <limits.h>
#include <stddef.h>

#include "exec/exec.h"

#define SELFRUN_MAX_DIRS 6
#define SELFRUN_LIB      "/.proctor/lib"

struct selfrun {
        char exe[PATH_MAX];                    /* proctor's binary on the host */
        char dirs[SELFRUN_MAX_DIRS][PATH_MAX]; /* host directories of its libraries */
        char mounts[SELFRUN_MAX_DIRS][24];     /* where each appears: /.proctor/lib/N */
        unsigned ndirs;
        char loader[PATH_MAX]; /* the loader inside: /.proctor/lib/N/ld-... */
        char library_path[SELFRUN_MAX_DIRS * 24];
};

/* Finds the binary, its loader (the program's PT_INTERP) and the
 * directories of every shared object this process has mapped. 0, or
 * -errno with err. */
int selfrun_probe(struct selfrun *s, char *err, size_t errlen);

/* When argv runs proctor itself (argv[0] is EXEC_SANDBOX_SELF), fills out
 * (cap pointers, NULL-terminated) with the same command through the
 * loader and returns out; otherwise, or when it does not fit, returns
 * argv unchanged. */
char *const *selfrun_argv(const struct selfrun *s, char *const *argv, const char **out, size_t cap);

#endif
