/* inroot: path resolution confined to a directory taken as root, so that
 * what an image names ("usr -> /home/alice") is looked up in the image,
 * never on the host. openat2's RESOLVE_IN_ROOT does it in the kernel; the
 * walk below does the same on kernels without it (before 5.6). */
#include "exec/native/inroot.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/openat2.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#define INROOT_MAX_LINKS 40

/* rel ("a/b/c": no "." or ".." in it) under dirfd, each component opened
 * with O_NOFOLLOW, the last with flags; "" is dirfd itself. */
static int open_components(int dirfd, const char *rel, int flags)
{
        char name[NAME_MAX + 1];
        int fd = -1;

        while (*rel == '/')
                rel++;
        if (*rel == '\0') {
                fd = openat(dirfd, ".", flags | O_CLOEXEC);
                return fd < 0 ? -errno : fd;
        }
        while (*rel != '\0') {
                const char *end = strchrnul(rel, '/');
                size_t n = (size_t)(end - rel);
                int nfd;
                if (n > NAME_MAX) {
                        if (fd >= 0)
                                close(fd);
                        return -ENAMETOOLONG;
                }
                memcpy(name, rel, n);
                name[n] = '\0';
                while (*end == '/')
                        end++;
                nfd =
                    openat(fd >= 0 ? fd : dirfd, name,
                           (*end == '\0' ? flags : O_PATH | O_DIRECTORY) | O_NOFOLLOW | O_CLOEXEC);
                if (nfd < 0)
                        nfd = -errno;
                if (fd >= 0)
                        close(fd);
                if (nfd < 0)
                        return nfd;
                fd = nfd;
                rel = end;
        }
        return fd;
}

int inroot_open_plain(const char *path, int flags)
{
        int root = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC), fd;

        if (root < 0)
                return -errno;
        fd = open_components(root, path, flags);
        close(root);
        return fd;
}

/* The walk: `done` holds the components resolved so far (real
 * directories, relative to the root), `rest` what is left; a link met on
 * the way puts its target in front of `rest`, from the root when it is
 * absolute. ".." drops the last resolved component, never past the root. */
static int walk(int rootfd, const char *path, int flags)
{
        char done[PATH_MAX] = "", rest[PATH_MAX], target[PATH_MAX];
        unsigned links = 0;

        if (strlen(path) >= sizeof(rest))
                return -ENAMETOOLONG;
        strcpy(rest, path);
        for (;;) {
                char *c = rest, name[NAME_MAX + 1];
                struct stat st;
                size_t n, dl = strlen(done);
                int dir;
                while (*c == '/')
                        c++;
                if (*c == '\0')
                        break;
                n = strcspn(c, "/");
                if (n > NAME_MAX)
                        return -ENAMETOOLONG;
                memcpy(name, c, n);
                name[n] = '\0';
                c += n;
                bool last = c[strspn(c, "/")] == '\0';
                memmove(rest, c, strlen(c) + 1);
                if (strcmp(name, ".") == 0)
                        continue;
                if (strcmp(name, "..") == 0) {
                        char *s = strrchr(done, '/');
                        *(s != NULL ? s : done) = '\0';
                        continue;
                }
                if ((dir = open_components(rootfd, done, O_PATH | O_DIRECTORY)) < 0)
                        return dir;
                if (fstatat(dir, name, &st, AT_SYMLINK_NOFOLLOW) != 0) {
                        int rc = -errno;
                        close(dir);
                        return rc;
                }
                if (S_ISLNK(st.st_mode) && !(last && (flags & O_NOFOLLOW))) {
                        ssize_t k = readlinkat(dir, name, target, sizeof(target) - 1);
                        close(dir);
                        if (k < 0)
                                return -errno;
                        target[k] = '\0';
                        if (++links > INROOT_MAX_LINKS)
                                return -ELOOP;
                        if ((size_t)k + 1 + strlen(rest) >= sizeof(rest))
                                return -ENAMETOOLONG;
                        memmove(rest + k + 1, rest, strlen(rest) + 1);
                        memcpy(rest, target, (size_t)k);
                        rest[k] = '/';
                        if (target[0] == '/')
                                done[0] = '\0';
                        continue;
                }
                close(dir);
                if (dl + 1 + n >= sizeof(done))
                        return -ENAMETOOLONG;
                if (dl > 0)
                        done[dl++] = '/';
                memcpy(done + dl, name, n + 1);
        }
        return open_components(rootfd, done, flags);
}

int inroot_open(int rootfd, const char *path, int flags, bool use_openat2)
{
        struct open_how how = {.flags = (unsigned)(flags | O_CLOEXEC),
                               .resolve = RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS};
        int fd;

        if (use_openat2) {
                fd = (int)syscall(SYS_openat2, rootfd, path, &how, sizeof(how));
                if (fd >= 0)
                        return fd;
                if (errno != ENOSYS)
                        return -errno;
        }
        return walk(rootfd, path, flags);
}
