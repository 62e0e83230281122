/* workspace: the directory an execution works in, opened once per session
 * (see exec_workspace_open in exec/exec.h). Internal to exec/. */
#ifndef PROCTOR_WORKSPACE_H
#define PROCTOR_WORKSPACE_H

#include <limits.h>
#include <stdint.h>
#include <sys/stat.h>

#include "exec/exec.h"

#define EXEC_WS_MAX_PROTECT 6

struct exec_workspace {
        int fd;         /* O_PATH, the directory itself */
        struct stat st; /* its identity when opened */
        char path[PATH_MAX];
        unsigned long keep; /* mount flags a bind of it must keep */
        uint32_t uid, gid;  /* host ids sandboxes act on it with */
        /* proctor's own files and directories inside it, relative, made
         * read-only in every sandbox (see exec_workspace_protect) */
        char protect[EXEC_WS_MAX_PROTECT][PATH_MAX];
        unsigned nprotect;
};

void exec_workspace_ids(const struct exec_workspace *w, uint32_t *uid, uint32_t *gid);

#endif
