/* docker_sweep: what a proctor that is gone leaves behind, and its
 * removal by a later one. Its containers carry labels naming its process,
 * host and boot: the start's listing removes those whose proctor no longer
 * runs. Its seccomp profile file (written for Podman, which reads the
 * profile by path) is named with its pid: writing one removes those of
 * dead proctors. */
#include "exec/docker/docker_int.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <jansson.h>

#include "exec/fdio.h"

/* The profile files of proctor processes that are gone (SIGKILLed, say):
 * named with their pid, this user's, regular files. */
static void seccomp_files_sweep(const char *dir)
{
        DIR *d = opendir(dir);
        struct dirent *de;
        struct stat st;
        int pid;
        char tail;

        if (d == NULL)
                return;
        while ((de = readdir(d)) != NULL) {
                if (sscanf(de->d_name, "proctor-seccomp-%d-%c", &pid, &tail) != 2 || pid <= 0 ||
                    pid == getpid() || kill(pid, 0) == 0 || errno != ESRCH)
                        continue;
                if (fstatat(dirfd(d), de->d_name, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
                    S_ISREG(st.st_mode) && st.st_uid == geteuid())
                        unlinkat(dirfd(d), de->d_name, 0);
        }
        closedir(d);
}

/* The profile in a file of its own, written the first time an engine that
 * reads it by path (Podman) needs it: readable by the engine's service, not
 * replaceable by others (O_EXCL in a sticky directory), removed with the
 * runtime (or by a later one, when this proctor was killed). Its path, or
 * NULL when it cannot be written. */
const char *seccomp_file(struct docker_rt *rt)
{
        const char *dir = getenv("XDG_RUNTIME_DIR");
        size_t len = strlen(rt->seccomp);
        int fd;

        if (rt->seccomp_path[0] != '\0')
                return rt->seccomp_path;
        if (dir == NULL || dir[0] != '/' || strlen(dir) > 30)
                dir = "/tmp";
        seccomp_files_sweep(dir);
        snprintf(rt->seccomp_path, sizeof(rt->seccomp_path), "%s/proctor-seccomp-%d-XXXXXX", dir,
                 (int)getpid());
        fd = mkstemp(rt->seccomp_path);
        if (fd < 0 || fchmod(fd, 0644) != 0 || fdio_write_all(fd, rt->seccomp, len) != 0) {
                if (fd >= 0)
                        unlink(rt->seccomp_path);
                rt->seccomp_path[0] = '\0';
        }
        if (fd >= 0)
                close(fd);
        return rt->seccomp_path[0] != '\0' ? rt->seccomp_path : NULL;
}

static void swept_one(struct dk_call *c, int status, const char *body, size_t n, const char *err)
{
        (void)c;
        (void)status;
        (void)body;
        (void)n;
        (void)err;
}

/* Removes the containers whose labels prove that they belong to a proctor
 * process of this host and boot that no longer runs (SIGKILLed, say);
 * anything else, labelled by hand or by another proctor still running, is
 * left alone. */
void dk_listed(struct dk_call *c, int status, const char *body, size_t n, const char *err)
{
        struct docker_rt *rt = c->rt;
        struct docker_owner o;
        json_t *a, *it;
        size_t i;
        char path[200];

        rt->list = NULL;
        if (status != 200 || (a = json_loadb(body, n, 0, NULL)) == NULL)
                return;
        json_array_foreach (a, i, it) {
                const char *id = json_string_value(json_object_get(it, "Id"));
                if (id == NULL || strspn(id, "0123456789abcdef") != strlen(id) || strlen(id) > 80 ||
                    docker_owner_from_labels(json_object_get(it, "Labels"), &o) < 0 ||
                    !docker_owner_gone(&o, &rt->owner, docker_proc_start))
                        continue;
                snprintf(path, sizeof(path), "/containers/%s?force=1&v=1", id);
                dk_api(rt, NULL, "DELETE", path, NULL, swept_one);
        }
        json_decref(a);
}
