/* workspace: the directory an execution works in, opened once per session
 * (see exec_workspace_open in exec/exec.h). Internal to exec/. */
#ifndef PROCTOR_WORKSPACE_H
#define PROCTOR_WORKSPACE_H

#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <uv.h>

#include "exec/exec.h"

#define EXEC_WS_MAX_PROTECT 6

/* The host uid and gid a sandbox acts with where no unprivileged owner
 * can be: a root-owned workspace, or none. */
#define EXEC_NOBODY_ID 65534u

struct exec_workspace {
        int fd;         /* O_PATH, the directory itself */
        struct stat st; /* its identity when opened */
        char path[PATH_MAX];
        unsigned long keep; /* mount flags a bind of it must keep */
        uint32_t uid, gid;  /* host ids sandboxes act on it with */
        /* Root-owned, opened by root: a user namespace whose root is host
         * nobody, made at the first sandbox (see exec_workspace_tree); -1
         * before, or where the filesystem cannot be idmapped. */
        int idmap_fd;
        bool idmap_tried;
        /* proctor's own files and directories inside it, relative, made
         * read-only in every sandbox (see exec_workspace_protect) */
        char protect[EXEC_WS_MAX_PROTECT][PATH_MAX];
        unsigned nprotect;
        struct ws_quota *quota; /* NULL until a sandbox with a disk limit uses it */
        bool free_after_walk;   /* freed while a walk ran: the walk frees it */
};

void exec_workspace_ids(const struct exec_workspace *w, uint32_t *uid, uint32_t *gid);

/* For a sandbox of a root proctor: a detached copy of the workspace's mount
 * (close it), idmapped when the workspace is root's. -errno, with err. */
int exec_workspace_tree(struct exec_workspace *w, char *err, size_t errlen);
/* Whether sandboxes act on it as its root owner (an idmapped mount). */
bool exec_workspace_as_root(const struct exec_workspace *w);

/* The disk quota: what rw sandboxes add to the workspace, measured by
 * walking it (on the loop's thread pool) when the filesystem's own usage
 * says the workspace may have grown past the quota; a single file is held
 * to the room left by RLIMIT_FSIZE. Counts allocated blocks, at least 4 KiB
 * per inode, and the deleted files that the processes under the inits
 * `pids` lists (its return: how many there are, filling at most max) hold
 * open or mapped. `over` runs when a walk finds the quota exceeded.
 * Starting it again is a no-op. */
int ws_quota_start(struct exec_workspace *w, uv_loop_t *loop, uint64_t limit,
                   void (*over)(struct exec_workspace *w, void *ud),
                   size_t (*pids)(struct exec_workspace *w, void *ud, pid_t *out, size_t max),
                   void *ud);
/* Bytes a new execution may still add (for RLIMIT_FSIZE). */
uint64_t ws_quota_room(const struct exec_workspace *w);
/* A stats tick or a spawn: checks the filesystem, walks when needed. */
void ws_quota_sample(struct exec_workspace *w);
bool ws_quota_over(const struct exec_workspace *w);
/* What the quota has seen: the bytes added since it started (at its last
 * walk), how many walks ended, and how long the last one took. false
 * without a quota. */
bool ws_quota_report(const struct exec_workspace *w, uint64_t *added, unsigned *walks,
                     uint64_t *last_walk_ms);
/* Frees the quota with the workspace; false while a walk still reads the
 * workspace (the walk frees it when it ends). */
bool ws_quota_release(struct exec_workspace *w);

#endif
