/* sandbox_host: the host side of a sandbox's root, made once per engine:
 * what every sandbox gets read-only from the host's root or an image's
 * (its /usr, usrmerge links or top-level directories, the allowlisted
 * /etc entries, proctor's own binary), every path resolved inside that
 * root; and the messages a child sends back. */
#include "exec/native/sandbox.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <net/if.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/syscall.h>
#include <grp.h>
#include <linux/capability.h>
#include <poll.h>
#include <sys/signalfd.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "exec/native/env.h"
#include "exec/native/inroot.h"
#include "exec/native/seccomp.h"
#include "exec/native/selfrun.h"
#include "exec/native/sandbox_int.h"

/* /etc entries a program may read; /etc/passwd, group, hostname and hosts
 * are written per sandbox instead. Anything else in /etc stays invisible. */
static const char *const etc_allow[] = {
    "/etc/ld.so.cache", "/etc/ld.so.conf",   "/etc/ld.so.conf.d",  "/etc/alternatives",
    "/etc/localtime",   "/etc/timezone",     "/etc/nsswitch.conf", "/etc/bash.bashrc",
    "/etc/profile",     "/etc/inputrc",      "/etc/os-release",    "/etc/debian_version",
    "/etc/shells",      "/etc/protocols",    "/etc/services",      "/etc/python3",
    "/etc/python3.11",  "/etc/python3.12",   "/etc/python3.13",    "/etc/gitconfig",
    "/etc/magic",       "/etc/locale.alias", "/etc/environment",
};

static const char *const top_links[] = {"/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32"};

/* Mount flags the kernel locks on a bind made inside a user namespace: a
 * remount must keep them or it fails with EPERM. */
unsigned long sandbox_locked_flags(const char *path)
{
        struct statvfs sv;
        unsigned long f = 0;

        if (statvfs(path, &sv) != 0)
                return 0;
        if (sv.f_flag & ST_NOEXEC)
                f |= MS_NOEXEC;
        if (sv.f_flag & ST_NOATIME)
                f |= MS_NOATIME;
        if (sv.f_flag & ST_NODIRATIME)
                f |= MS_NODIRATIME;
        if (sv.f_flag & ST_RELATIME)
                f |= MS_RELATIME;
        return f;
}

/* src: where the tree is on the host (for an image, its path with no link
 * in it, see root_take); path: where it goes in the sandbox ("/usr"). */
static int host_add_bind(struct sandbox_host *h, const char *src, const char *path, bool is_dir,
                         bool from_image)
{
        struct sb_bind *b;

        if (h->nbinds == SB_MAX_BINDS)
                return -ENOSPC;
        b = &h->binds[h->nbinds++];
        snprintf(b->src, sizeof(b->src), "%s", src);
        snprintf(b->path, sizeof(b->path), "%s", path + 1);
        b->keep = sandbox_locked_flags(b->src);
        b->is_dir = is_dir;
        b->from_image = from_image;
        return 0;
}

/* A symbolic link the sandbox gets as it is (resolved in the sandbox). */
static int host_add_link(struct sandbox_host *h, int fd, const char *path)
{
        struct sb_link *l;
        ssize_t n;

        if (h->nlinks == SB_MAX_LINKS)
                return -ENOSPC;
        l = &h->links[h->nlinks];
        n = readlinkat(fd, "", l->target, sizeof(l->target) - 1);
        if (n < 0)
                return -errno;
        l->target[n] = '\0';
        snprintf(l->path, sizeof(l->path), "%s", path + 1);
        h->nlinks++;
        return 0;
}

/* A small file copied into each sandbox's /etc, read from fd. */
static int host_add_file(struct sandbox_host *h, int fd, const char *path, off_t size)
{
        struct sb_file *f;
        ssize_t got = 0;

        if (h->nfiles == SB_MAX_FILES || size > (1 << 20))
                return -ENOSPC;
        f = &h->files[h->nfiles];
        f->data = malloc(size ? (size_t)size : 1);
        if (f->data == NULL)
                return -ENOMEM;
        while (got < size) {
                ssize_t n = read(fd, f->data + got, (size_t)(size - got));
                if (n <= 0)
                        break;
                got += n;
        }
        f->len = (size_t)got;
        snprintf(f->path, sizeof(f->path), "%s", path + 1);
        h->nfiles++;
        return 0;
}

/* Takes `path` from the root rootfd (the host's "/" or an image's root)
 * for every sandbox: a directory as a read-only bind, a link as a link,
 * a regular file (when `files`) as a copy; nothing when there is none.
 * Every link on the way is resolved inside that root (exec/native/inroot): an
 * image's "usr -> /home/alice" is the image's /home/alice, never the
 * host's. `follow`: a link at path itself is followed (inside the root)
 * rather than taken as a link. */
static int root_take(struct sandbox_host *h, int rootfd, bool image, const char *path, bool follow,
                     bool files)
{
        char fdpath[64], src[PATH_MAX];
        struct stat st;
        ssize_t n;
        int fd = inroot_open(rootfd, path, O_PATH | (follow ? 0 : O_NOFOLLOW), true), rc = 0;

        if (fd == -ENOENT || fd == -ENOTDIR || fd == -ELOOP || fd == -EACCES)
                return 0; /* not there, or not reachable: the sandbox goes without */
        if (fd < 0)
                return fd;
        if (fstat(fd, &st) != 0) {
                rc = -errno;
        } else if (S_ISLNK(st.st_mode)) {
                rc = host_add_link(h, fd, path);
        } else if (S_ISDIR(st.st_mode)) {
                /* The directory's own path, with no link in it: the
                 * sandbox mounts it again by that path (take_image_trees). */
                snprintf(fdpath, sizeof(fdpath), "/proc/self/fd/%d", fd);
                n = readlink(fdpath, src, sizeof(src) - 1);
                if (n <= 0 || src[0] != '/')
                        rc = n < 0 ? -errno : -EIO;
                else {
                        src[n] = '\0';
                        rc = host_add_bind(h, src, path, true, image);
                }
        } else if (S_ISREG(st.st_mode) && files) {
                int rfd = inroot_open(rootfd, path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK, true);
                struct stat again;
                if (rfd < 0)
                        rc = rfd;
                else if (fstat(rfd, &again) != 0 || again.st_ino != st.st_ino ||
                         again.st_dev != st.st_dev)
                        rc = -EAGAIN; /* changed under us */
                else
                        rc = host_add_file(h, rfd, path, again.st_size);
                if (rfd >= 0)
                        close(rfd);
        }
        close(fd);
        return rc;
}

/* An image's other top-level directories and links (/opt, /srv, /var...)
 * come too; those a sandbox makes for itself never do. */
static int image_add_top(struct sandbox_host *h, int rootfd)
{
        static const char *const own[] = {"usr", "etc",       "proc",     "dev",     "tmp",
                                          "sys", "workspace", ".proctor", ".oldroot"};
        char path[NAME_MAX + 2];
        struct dirent *de;
        DIR *d = fdopendir(openat(rootfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC));
        int rc = 0;

        if (d == NULL)
                return -errno;
        while (rc == 0 && (de = readdir(d)) != NULL) {
                bool skip = de->d_name[0] == '.' &&
                            (de->d_name[1] == '\0' || strcmp(de->d_name, "..") == 0);
                for (size_t i = 0; i < sizeof(own) / sizeof(own[0]) && !skip; i++)
                        skip = strcmp(de->d_name, own[i]) == 0;
                for (size_t i = 0; i < sizeof(top_links) / sizeof(top_links[0]) && !skip; i++)
                        skip = strcmp(de->d_name, top_links[i] + 1) == 0;
                if (skip)
                        continue;
                snprintf(path, sizeof(path), "/%s", de->d_name);
                rc = root_take(h, rootfd, true, path, false, false);
        }
        closedir(d);
        return rc;
}

int sandbox_host_open(struct sandbox_host **out, char *err, size_t errlen)
{
        return sandbox_host_open_root(out, NULL, err, errlen);
}

/* With an image (root not NULL), the same paths are taken from the image's
 * root instead of the host's: its /usr, usrmerge links or top-level
 * directories and the allowlisted /etc entries. */
int sandbox_host_open_root(struct sandbox_host **out, const char *root, char *err, size_t errlen)
{
        struct sandbox_host *h = calloc(1, sizeof(*h));
        bool image = root != NULL;
        int rootfd = -1;
        struct stat st;
        ssize_t n;
        size_t i;
        int rc = 0;

        if (h == NULL)
                return -ENOMEM;
        h->dev_keep = sandbox_locked_flags("/dev/null");
        n = readlink("/proc/self/exe", h->self_exe, sizeof(h->self_exe) - 1);
        if (n <= 0) {
                snprintf(err, errlen, "cannot find proctor's own binary: %s", strerror(errno));
                free(h);
                return -EIO;
        }
        h->self_exe[n] = '\0';
        h->self_keep = sandbox_locked_flags(h->self_exe);
        if (!image && stat(CA_STORE, &st) == 0 && S_ISDIR(st.st_mode)) {
                h->ca_store = true;
                h->ca_keep = sandbox_locked_flags(CA_STORE);
        }
        /* Everything below is looked up from this root, the image's or "/". */
        rootfd = open(image ? root : "/", O_PATH | O_DIRECTORY | O_CLOEXEC);
        if (rootfd < 0) {
                rc = -errno;
                snprintf(err, errlen, "cannot open the sandbox root %s: %s", image ? root : "/",
                         strerror(errno));
                free(h);
                return rc;
        }
        rc = root_take(h, rootfd, image, "/usr", true, false);
        if (rc == 0 && !image && h->nbinds == 0)
                rc = -ENOENT; /* the host's /usr is not optional */
        for (i = 0; i < sizeof(top_links) / sizeof(top_links[0]) && rc == 0; i++)
                rc = root_take(h, rootfd, image, top_links[i], false, false);
        if (rc == 0 && image)
                rc = image_add_top(h, rootfd);
        if (rc == 0 && image) {
                if ((rc = selfrun_probe(&h->self_run, err, errlen)) < 0) {
                        close(rootfd);
                        sandbox_host_free(h);
                        return rc;
                }
                for (i = 0; i < h->self_run.ndirs; i++)
                        h->self_run_keep[i] = sandbox_locked_flags(h->self_run.dirs[i]);
        }
        if (rc == 0 && !image && stat("/usr/local", &st) == 0) {
                struct stat usr;
                if (stat("/usr", &usr) == 0 && usr.st_dev != st.st_dev)
                        rc = host_add_bind(h, "/usr/local", "/usr/local", true, false);
        }
        for (i = 0; i < sizeof(etc_allow) / sizeof(etc_allow[0]) && rc == 0; i++)
                rc = root_take(h, rootfd, image, etc_allow[i], false, true);
        close(rootfd);
        if (rc < 0) {
                snprintf(err, errlen, "cannot prepare the sandbox root from %s: %s",
                         image ? "the image" : "the host", strerror(-rc));
                sandbox_host_free(h);
                return rc;
        }
        *out = h;
        return 0;
}

void sandbox_host_free(struct sandbox_host *h)
{
        unsigned i;

        if (h == NULL)
                return;
        for (i = 0; i < h->nfiles; i++)
                free(h->files[i].data);
        free(h);
}

int sandbox_msg_read(int fd, struct sandbox_msg *m)
{
        ssize_t n;

        do
                n = read(fd, m, sizeof(*m));
        while (n < 0 && errno == EINTR);
        if (n < 0)
                return -errno;
        if (n == 0)
                return 0;
        if ((size_t)n != sizeof(*m))
                return -EPROTO;
        m->text[sizeof(m->text) - 1] = '\0';
        return 1;
}
