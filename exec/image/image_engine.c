/* image_engine: one HTTP/1.0 GET over the engine's unix socket, the
 * response body streamed to a file. HTTP/1.0 so that the engine neither
 * chunks nor keeps the connection: the body ends where the stream does.
 * Refuses names that would need escaping rather than escaping them, so
 * that nothing but a path can reach the request line. */
#include "exec/image/image_engine.h"

#include <errno.h>
#include <jansson.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "exec/fdio.h"
#include "exec/image/image.h"

#define ENGINE_HEAD_MAX 16384
/* An inspection is a few KiB; a larger answer is not read. */
#define ENGINE_INSPECT_MAX (1u << 20)

bool image_engine_name_ok(const char *name)
{
        size_t i, n = strlen(name);

        if (n == 0 || n > 255 || name[0] == '/' || name[0] == '.' || name[0] == '-')
                return false;
        for (i = 0; i < n; i++) {
                char c = name[i];
                if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                      strchr("._-/:@", c) != NULL))
                        return false;
        }
        return strstr(name, "..") == NULL;
}

/* DOCKER_HOST (unix:// only), else Docker's default socket, else the
 * user's Podman socket. */
static int engine_socket(char *path, size_t len, char *err, size_t errlen)
{
        const char *host = getenv("DOCKER_HOST"), *rt = getenv("XDG_RUNTIME_DIR");

        if (host != NULL && host[0] != '\0') {
                if (strncmp(host, "unix://", 7) != 0) {
                        snprintf(err, errlen,
                                 "DOCKER_HOST=%s: only an engine on a unix socket is read", host);
                        return -EINVAL;
                }
                snprintf(path, len, "%s", host + 7);
                return 0;
        }
        snprintf(path, len, "/var/run/docker.sock");
        if (access(path, F_OK) == 0)
                return 0;
        if (rt != NULL && rt[0] == '/') {
                snprintf(path, len, "%s/podman/podman.sock", rt);
                if (access(path, F_OK) == 0)
                        return 0;
        }
        snprintf(err, errlen,
                 "no Docker or Podman engine socket (DOCKER_HOST, /var/run/docker.sock, "
                 "$XDG_RUNTIME_DIR/podman/podman.sock)");
        return -ENOENT;
}

/* An export's progress is told at most this often */
#define EXPORT_PROGRESS_NS 100000000ull

static uint64_t now_ns(void)
{
        struct timespec ts;

        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* A request's cancel flag and the progress of its body (layer 0 of 0: an
 * export, whose size is not known before it ends); caps may be NULL. */
struct engine_meter {
        const struct image_caps *caps;
        struct image_progress pr;
        uint64_t told_ns, told_bytes;
};

/* Tells the bytes come so far, unless they were told already or less than
 * EXPORT_PROGRESS_NS ago (force: at once). */
static void meter_tell(struct engine_meter *m, bool force)
{
        if (m->caps == NULL || m->caps->progress == NULL ||
            (!force && (m->pr.done == m->told_bytes || now_ns() - m->told_ns < EXPORT_PROGRESS_NS)))
                return;
        m->told_ns = now_ns();
        m->told_bytes = m->pr.done;
        m->caps->progress(&m->pr, m->caps->progress_ud);
}

/* One read from the engine that a cancel ends, even while the engine sends
 * nothing (an export can take the engine a while before its first byte),
 * and that tells the progress while it waits: the bytes read, 0 at the
 * end, -ECANCELED, or -errno. */
static ssize_t engine_read(int s, void *buf, size_t n, struct engine_meter *m)
{
        const volatile int *cancel = m->caps != NULL ? m->caps->cancel : NULL;
        struct pollfd p = {.fd = s, .events = POLLIN};
        ssize_t r;
        int ready;

        for (;;) {
                if (cancel != NULL && *cancel)
                        return -ECANCELED;
                ready = poll(&p, 1, m->caps != NULL ? 100 : -1);
                if (ready < 0 && errno != EINTR)
                        return -errno;
                if (ready == 0)
                        meter_tell(m, false);
                if (ready <= 0) /* a signal may have set the cancel flag */
                        continue;
                r = read(s, buf, n);
                if (r >= 0)
                        return r;
                if (errno != EINTR && errno != EAGAIN)
                        return -errno;
        }
}

/* Reads the status line and headers; body and nbody: what came after. */
static int read_head(int s, char *head, size_t cap, int *status, char **body, size_t *nbody,
                     struct engine_meter *m)
{
        size_t n = 0;
        char *end = NULL;

        while (end == NULL) {
                ssize_t r = engine_read(s, head + n, cap - 1 - n, m);
                if (r == -ECANCELED)
                        return (int)r;
                if (r <= 0)
                        return -EPROTO;
                n += (size_t)r;
                head[n] = '\0';
                /* The first read may hold the body's start as well. */
                end = memmem(head, n, "\r\n\r\n", 4);
                if (end == NULL && n >= cap - 1)
                        return -EPROTO;
        }
        if (sscanf(head, "HTTP/1.%*d %d", status) != 1)
                return -EPROTO;
        *end = '\0';
        *body = end + 4;
        *nbody = n - (size_t)(end + 4 - head);
        return 0;
}

/* GET /images/NAME/OP (OP: "get" exports, "json" inspects), the body
 * written to out_fd; `what` names the operation in errors. caps (may be
 * NULL): its cancel ends the request, its progress hears of the body's
 * bytes (layer 0 of 0: an export, whose size is not known before). */
static int engine_get(const char *name, const char *op, const char *what, int out_fd,
                      const struct image_caps *caps, char *err, size_t errlen)
{
        struct sockaddr_un sa = {.sun_family = AF_UNIX};
        char path[sizeof(sa.sun_path)], req[512], *head = NULL, *body, buf[65536];
        struct engine_meter m = {.caps = caps};
        size_t nbody;
        int s = -1, status = 0, rc;

        if (!image_engine_name_ok(name)) {
                snprintf(err, errlen, "'%s' is not an image name", name);
                return -EINVAL;
        }
        if ((rc = engine_socket(path, sizeof(path), err, errlen)) < 0)
                return rc;
        memcpy(sa.sun_path, path, sizeof(path));
        s = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
        if (s < 0 || connect(s, (struct sockaddr *)&sa, sizeof(sa)) != 0) {
                rc = -errno;
                snprintf(err, errlen, "cannot reach the engine at %s: %s", path, strerror(errno));
                goto out;
        }
        snprintf(req, sizeof(req), "GET /images/%s/%s HTTP/1.0\r\nHost: engine\r\n\r\n", name, op);
        head = malloc(ENGINE_HEAD_MAX);
        if (head == NULL || (rc = fdio_write_all(s, req, strlen(req))) < 0 ||
            (rc = read_head(s, head, ENGINE_HEAD_MAX, &status, &body, &nbody, &m)) < 0) {
                rc = head == NULL ? -ENOMEM : rc;
                if (rc != -ECANCELED)
                        snprintf(err, errlen, "the engine at %s gave no HTTP answer", path);
                goto out;
        }
        if (status == 404) {
                snprintf(err, errlen,
                         "image %s is not in the engine's store (%s): run `docker pull %s` (or "
                         "podman pull) first",
                         name, path, name);
                rc = -ENOENT;
                goto out;
        }
        if (status != 200 || strcasestr(head, "\r\ntransfer-encoding:") != NULL) {
                snprintf(err, errlen, "the engine at %s answered %d to the %s of %s", path, status,
                         what, name);
                rc = -EPROTO;
                goto out;
        }
        rc = fdio_write_all(out_fd, body, nbody);
        m.pr.done = nbody;
        meter_tell(&m, true);
        while (rc == 0) {
                ssize_t r = engine_read(s, buf, sizeof(buf), &m);
                if (r < 0)
                        rc = (int)r;
                if (r <= 0)
                        break;
                rc = fdio_write_all(out_fd, buf, (size_t)r);
                m.pr.done += (uint64_t)r;
                meter_tell(&m, false);
        }
        if (rc < 0 && rc != -ECANCELED)
                snprintf(err, errlen, "the %s of %s from the engine: %s", what, name,
                         strerror(-rc));
out:
        free(head);
        if (s >= 0)
                close(s);
        return rc;
}

int image_engine_fetch(const char *name, int out_fd, const struct image_caps *caps, char *err,
                       size_t errlen)
{
        return engine_get(name, "get", "export", out_fd, caps, err, errlen);
}

int image_engine_id(const char *name, char hex[65], char *err, size_t errlen)
{
        char *buf = malloc(ENGINE_INSPECT_MAX + 1);
        json_t *j = NULL;
        const char *id;
        ssize_t n;
        int fd = memfd_create("proctor-inspect", MFD_CLOEXEC), rc;

        if (fd < 0 || buf == NULL) {
                rc = fd < 0 ? -errno : -ENOMEM;
                free(buf);
                if (fd >= 0)
                        close(fd);
                return rc;
        }
        rc = engine_get(name, "json", "inspection", fd, NULL, err, errlen);
        if (rc == 0 && (n = pread(fd, buf, ENGINE_INSPECT_MAX + 1, 0)) >= 0 &&
            n <= ENGINE_INSPECT_MAX) {
                buf[n] = '\0';
                j = json_loads(buf, 0, NULL);
        }
        close(fd);
        free(buf);
        if (rc < 0)
                return rc;
        id = json_string_value(json_object_get(j, "Id"));
        rc = -EPROTO;
        if (id != NULL && strncmp(id, "sha256:", 7) == 0 && strlen(id) == 71 &&
            strspn(id + 7, "0123456789abcdef") == 64) {
                memcpy(hex, id + 7, 65);
                rc = 0;
        } else {
                snprintf(err, errlen, "the engine's inspection of %s names no sha256 image id",
                         name);
        }
        json_decref(j);
        return rc;
}
