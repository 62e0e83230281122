/* ctl_find: the live sessions' sockets asked for their status (see
 * ctl_find.h). Blocking, with a bound of a second per session: for
 * commands, not for a session's loop. */
#include "core/session/ctl_find.h"

#include <dirent.h>
#include <errno.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "core/session/ctl.h"

#define ASK_MS     1000
#define STATUS_MAX (64u << 10)

static int64_t mono_ms(void)
{
        struct timespec ts;

        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

json_t *ctl_ask_status(const char *path, bool *dead)
{
        struct sockaddr_un sa = {.sun_family = AF_UNIX};
        static const char req[] = "{\"type\":\"status\"}\n";
        char *buf = NULL;
        size_t n = 0;
        int64_t until = mono_ms() + ASK_MS;
        json_t *st = NULL;
        int fd;

        *dead = false;
        if (strlen(path) >= sizeof(sa.sun_path))
                return NULL;
        memcpy(sa.sun_path, path, strlen(path) + 1);
        fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
        if (fd < 0)
                return NULL;
        if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
                *dead = errno == ECONNREFUSED || errno == ENOENT;
                close(fd);
                return NULL;
        }
        if (write(fd, req, sizeof(req) - 1) != (ssize_t)(sizeof(req) - 1) ||
            (buf = malloc(STATUS_MAX)) == NULL) {
                close(fd);
                free(buf);
                return NULL;
        }
        while (n < STATUS_MAX - 1 && memchr(buf, '\n', n) == NULL) {
                struct pollfd p = {fd, POLLIN, 0};
                int64_t left = until - mono_ms();
                ssize_t r;
                if (left <= 0 || poll(&p, 1, (int)left) <= 0)
                        break;
                r = read(fd, buf + n, STATUS_MAX - 1 - n);
                if (r < 0 && (errno == EINTR || errno == EAGAIN))
                        continue;
                if (r <= 0)
                        break;
                n += (size_t)r;
        }
        close(fd);
        if (memchr(buf, '\n', n) != NULL)
                st = json_loadb(buf, (size_t)((char *)memchr(buf, '\n', n) - buf), 0, NULL);
        free(buf);
        if (st != NULL && !json_is_object(st)) {
                json_decref(st);
                st = NULL;
        }
        return st;
}

static int by_start(const void *a, const void *b)
{
        json_int_t x = json_integer_value(json_object_get(*(json_t *const *)a, "started_ms"));
        json_int_t y = json_integer_value(json_object_get(*(json_t *const *)b, "started_ms"));

        return (x > y) - (x < y);
}

int ctl_find_all(json_t **out, char *err, size_t errlen)
{
        char dir[108], path[300];
        json_t *all;
        DIR *d;
        struct dirent *de;
        int rc;

        *out = NULL;
        if ((rc = ctl_dir(dir, sizeof(dir), err, errlen)) < 0) {
                return rc;
        }
        if ((d = opendir(dir)) == NULL) {
                rc = -errno;
                snprintf(err, errlen, "%s: %s", dir, strerror(errno));
                return rc;
        }
        all = json_array();
        while ((de = readdir(d)) != NULL) {
                size_t n = strlen(de->d_name);
                struct stat st;
                bool dead;
                json_t *s;
                if (n < 6 || strcmp(de->d_name + n - 5, ".sock") != 0 ||
                    (size_t)snprintf(path, sizeof(path), "%s/%s", dir, de->d_name) >=
                        sizeof(path) ||
                    lstat(path, &st) < 0 || !S_ISSOCK(st.st_mode) || st.st_uid != getuid())
                        continue;
                if ((s = ctl_ask_status(path, &dead)) != NULL) {
                        json_array_append_new(all, s);
                } else if (dead) {
                        unlink(path); /* its process is gone */
                } else {
                        char id[128];
                        snprintf(id, sizeof(id), "%.*s", (int)(n - 5), de->d_name);
                        json_array_append_new(all, json_pack("{s:s,s:s,s:s}", "type", "status",
                                                             "session_id", id, "state",
                                                             "not answering"));
                }
        }
        closedir(d);
        size_t n = json_array_size(all);
        json_t **v = n > 1 ? calloc(n, sizeof(*v)) : NULL;
        if (v != NULL) {
                /* oldest first, as they started */
                for (size_t k = 0; k < n; k++)
                        v[k] = json_incref(json_array_get(all, k));
                qsort(v, n, sizeof(*v), by_start);
                json_array_clear(all);
                for (size_t k = 0; k < n; k++)
                        json_array_append_new(all, v[k]);
                free(v);
        }
        *out = all;
        return 0;
}

int ctl_socket_path(const char *id, char *path, size_t len, char *err, size_t errlen)
{
        char dir[108];
        int rc;

        if (id[0] == '\0' || strspn(id, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
                                        "0123456789-_") != strlen(id)) {
                snprintf(err, errlen, "'%.80s' is not a session id (proctor ls lists them)", id);
                return -EINVAL;
        }
        if ((rc = ctl_dir(dir, sizeof(dir), err, errlen)) < 0)
                return rc;
        if ((size_t)snprintf(path, len, "%s/%s.sock", dir, id) >= len) {
                snprintf(err, errlen, "the session's socket path is too long");
                return -ENAMETOOLONG;
        }
        return 0;
}
