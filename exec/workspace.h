/* workspace: the directory an execution works in, opened once per session
 * (see exec_workspace_open in exec/exec.h). Internal to exec/. */
#ifndef PROCTOR_WORKSPACE_H
#define PROCTOR_WORKSPACE_H

#include <limits.h>
#include <stdint.h>
#include <sys/stat.h>

#include "exec/exec.h"

struct exec_workspace {
        int fd;         /* O_PATH, the directory itself */
        struct stat st; /* its identity when opened */
        char path[PATH_MAX];
        unsigned long keep; /* mount flags a bind of it must keep */
        uint32_t uid, gid;  /* host ids sandboxes act on it with */
};

void exec_workspace_ids(const struct exec_workspace *w, uint32_t *uid, uint32_t *gid);

#endif
