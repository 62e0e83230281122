/* workspace: the host directory a session's executions work in, opened once
 * so that every call mounts the same directory, whatever is renamed or
 * replaced by a symbolic link on the way to it later. Decides which host
 * ids a sandbox acts on it with: never root, never an arbitrary group. */
#include "exec/workspace.h"

#include <errno.h>
#include <fcntl.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "exec/sandbox.h"

#define NOBODY_ID 65534u

/* The owner's primary group from the user database, so that a directory
 * given to a privileged group (say shadow) lends the sandbox nothing; root's
 * group and unknown owners get nogroup. */
static uint32_t owner_group(uid_t owner)
{
        struct passwd pw, *found = NULL;
        char buf[4096];

        if (getpwuid_r(owner, &pw, buf, sizeof(buf), &found) != 0 || found == NULL ||
            pw.pw_gid == 0)
                return NOBODY_ID;
        return pw.pw_gid;
}

int exec_workspace_open(const char *path, struct exec_workspace **out, char *err, size_t errlen)
{
        const char *p = path != NULL ? path : ".";
        struct exec_workspace *w = calloc(1, sizeof(*w));
        char link[64];
        ssize_t n;
        int e;

        if (w == NULL)
                return -ENOMEM;
        /* The last part must be the directory itself: a symbolic link there
         * is how a sandbox that could write the parent would redirect the
         * next session (say to /etc). */
        w->fd = open(p, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (w->fd < 0) {
                e = errno;
                if (e == ENOTDIR && readlink(p, link, sizeof(link)) >= 0)
                        snprintf(err, errlen,
                                 "workspace %s is a symbolic link: give the directory itself", p);
                else
                        snprintf(err, errlen, "workspace %s: %s", p, strerror(e));
                free(w);
                return -e;
        }
        snprintf(link, sizeof(link), "/proc/self/fd/%d", w->fd);
        n = readlink(link, w->path, sizeof(w->path) - 1);
        if (n <= 0 || w->path[0] != '/' || fstat(w->fd, &w->st) != 0) {
                e = n <= 0 ? errno : EIO;
                snprintf(err, errlen, "workspace %s: cannot resolve it: %s", p, strerror(e));
                exec_workspace_free(w);
                return -e;
        }
        w->path[n] = '\0';
        w->keep = sandbox_locked_flags(w->path);
        if (geteuid() == 0) {
                /* Root acts on a workspace only as its owner would, and on a
                 * root-owned one as nobody: with the rights any other user
                 * has there. */
                w->uid = w->st.st_uid != 0 ? w->st.st_uid : NOBODY_ID;
                w->gid = w->st.st_uid != 0 ? owner_group(w->st.st_uid) : NOBODY_ID;
        } else {
                w->uid = geteuid();
                w->gid = getegid();
        }
        *out = w;
        return 0;
}

void exec_workspace_free(struct exec_workspace *w)
{
        if (w == NULL)
                return;
        if (w->fd >= 0)
                close(w->fd);
        free(w);
}

const char *exec_workspace_path(const struct exec_workspace *w)
{
        return w->path;
}

void exec_workspace_ids(const struct exec_workspace *w, uint32_t *uid, uint32_t *gid)
{
        *uid = w->uid;
        *gid = w->gid;
}
