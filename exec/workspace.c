/* workspace: the host directory a session's executions work in, opened once
 * so that every call mounts the same directory, whatever is renamed or
 * replaced by a symbolic link on the way to it later. Decides which host
 * ids a sandbox acts on it with: never root, never an arbitrary group. */
#include "exec/workspace.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "exec/sandbox.h"

/* The owner's primary group from the user database, so that a directory
 * given to a privileged group (say shadow) lends the sandbox nothing; root's
 * group and unknown owners get nogroup. */
static uint32_t owner_group(uid_t owner)
{
        struct passwd pw, *found = NULL;
        char buf[4096];

        if (getpwuid_r(owner, &pw, buf, sizeof(buf), &found) != 0 || found == NULL ||
            pw.pw_gid == 0)
                return EXEC_NOBODY_ID;
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
                w->uid = w->st.st_uid != 0 ? w->st.st_uid : EXEC_NOBODY_ID;
                w->gid = w->st.st_uid != 0 ? owner_group(w->st.st_uid) : EXEC_NOBODY_ID;
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
        if (!ws_quota_release(w))
                return; /* the pool's thread still reads it: the walk frees it */
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

/* mkdir -p, each directory made 0700 (proctor's own directories). */
static int make_dirs(const char *path)
{
        char buf[PATH_MAX];
        size_t i;

        snprintf(buf, sizeof(buf), "%s", path);
        for (i = 1; buf[i] != '\0'; i++) {
                if (buf[i] != '/')
                        continue;
                buf[i] = '\0';
                if (mkdir(buf, 0700) != 0 && errno != EEXIST)
                        return -errno;
                buf[i] = '/';
        }
        return mkdir(buf, 0700) != 0 && errno != EEXIST ? -errno : 0;
}

/* The canonical form of `path`, whose last parts need not exist yet: the
 * longest existing prefix resolved, the rest appended as written. */
static int canonical(const char *path, char *out, size_t len)
{
        char head[PATH_MAX], real[PATH_MAX];
        char *cut = NULL;

        snprintf(head, sizeof(head), "%s", path);
        while (realpath(head, real) == NULL) {
                char *slash = strrchr(head, '/');
                if (slash == NULL || slash == head)
                        return -ENOENT;
                if (cut != NULL)
                        *cut = '/';
                *slash = '\0';
                cut = slash;
        }
        if (cut != NULL)
                *cut = '/';
        return snprintf(out, len, "%s%s", real, cut != NULL ? cut : "") >= (int)len ? -ENAMETOOLONG
                                                                                    : 0;
}

int exec_workspace_protect(struct exec_workspace *w, const char *host_path, bool is_dir, char *err,
                           size_t errlen)
{
        char full[PATH_MAX];
        size_t n = strlen(w->path);
        int rc;

        if (host_path == NULL || host_path[0] != '/')
                return 0;
        if ((rc = canonical(host_path, full, sizeof(full))) < 0)
                return 0; /* nothing of it exists: it cannot be in the workspace */
        if (strcmp(w->path, "/") != 0 && (strncmp(full, w->path, n) != 0 || full[n] != '/'))
                return 0;
        if (strcmp(w->path, "/") == 0)
                n = 0;
        for (unsigned i = 0; i < w->nprotect; i++) {
                size_t l = strlen(w->protect[i]);
                /* Already inside a protected directory, or the same path. */
                if (strncmp(full + n + 1, w->protect[i], l) == 0 &&
                    (full[n + 1 + l] == '/' || full[n + 1 + l] == '\0'))
                        return 0;
        }
        if (w->nprotect == EXEC_WS_MAX_PROTECT) {
                snprintf(err, errlen, "too many of proctor's own paths inside the workspace");
                return -ENOSPC;
        }
        if (is_dir && (rc = make_dirs(full)) < 0) {
                snprintf(err, errlen, "cannot make %s: %s", full, strerror(-rc));
                return rc;
        }
        snprintf(w->protect[w->nprotect++], PATH_MAX, "%s", full + n + 1);
        return 0;
}
