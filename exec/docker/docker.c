/* docker: the docker runtime (exec/runtime.h): each sandboxed execution is
 * one short-lived container of the Docker Engine API, created, attached,
 * started, waited for, inspected and removed, with limits mapped onto its
 * HostConfig and proctor's own wall clock. Requests go through exec/http
 * on the engine's loop; the attach stream is a raw upgraded connection so
 * that stdin can be half-closed. Never blocks the loop, never runs the
 * docker CLI, and never leaves a container behind that it knows of.
 * This file holds the runtime's operations: the engine opened (its socket
 * checked, its version asked, the sweep begun) and freed, a container
 * created, written to, killed, signalled and paused. The API calls are in
 * docker_calls.c, a created container's run and end in docker_run.c, the
 * sweep and the seccomp profile's file in docker_sweep.c (docker_int.h). */
#include "exec/docker/docker_int.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>
#include <grp.h>
#include <pwd.h>

#include <jansson.h>

#include "exec/docker/docker_api.h"
#include "exec/docker/docker_init.h"
#include "exec/http.h"
#include "exec/native/seccomp.h"
#include "exec/native/selfrun.h"
#include "exec/native/workspace.h"

#define KILL_WAIT_MS 5000 /* a kill before the start: the engine's answer */
/* How long the engine may take to create and start a container: the
 * execution's wall clock, at least SETUP_MIN_MS, SETUP_WAIT_MS without one. */
#define SETUP_MIN_MS  10000
#define SETUP_WAIT_MS 60000
/* The init's own wall clock (docker_init) runs this much past proctor's,
 * which ends the call first and names its reason; the init's ends the
 * container when proctor cannot. */
#define INIT_GRACE_MS 5000

void rt_free(struct docker_rt *rt)
{
        http_client_free(rt->http);
        free(rt->image);
        free(rt->session);
        free(rt->seccomp);
        docker_image_clear(&rt->img);
        if (rt->seccomp_path[0] != '\0')
                unlink(rt->seccomp_path);
        free(rt);
}

static bool dk_workspace_here(void *state);
static void setup_over(uv_timer_t *t);

/* ---- create ---- */

static void created(struct dk_call *c, int status, const char *body, size_t n, const char *err);

/* Podman's compatible service takes `seccomp=` as a path on its own host,
 * where Docker takes the profile itself. A create it refused for that
 * (before GET /version said which engine it is) goes again, once, naming
 * the profile's file: true when it went. */
static bool seccomp_by_path(struct dk_exec *x, const char *answer, size_t n)
{
        struct docker_rt *rt = x->rt;
        json_t *o, *opts;
        char opt[112], *body;
        const char *path;

        if (x->create_body == NULL || memmem(answer, n, "seccomp profile", 15) == NULL ||
            (path = seccomp_file(rt)) == NULL)
                return false;
        o = json_loads(x->create_body, 0, NULL);
        opts = json_object_get(json_object_get(o, "HostConfig"), "SecurityOpt");
        snprintf(opt, sizeof(opt), "seccomp=%s", path);
        for (size_t i = 0; i < json_array_size(opts); i++)
                if (strncmp(json_string_value(json_array_get(opts, i)), "seccomp=", 8) == 0)
                        json_array_set_new(opts, i, json_string(opt));
        /* No Ulimits for Podman either (see dk_spawn's has_fsize). */
        json_object_del(json_object_get(o, "HostConfig"), "Ulimits");
        body = o != NULL ? json_dumps(o, JSON_COMPACT) : NULL;
        json_decref(o);
        free(x->create_body);
        x->create_body = NULL; /* once */
        rt->podman = true;
        if (body == NULL ||
            (x->create = dk_api(rt, x, "POST", "/containers/create", body, created)) == NULL) {
                free(body);
                return false;
        }
        free(body);
        return true;
}

static void image_missing(struct dk_exec *x)
{
        x_err(x,
              "image %s is not in the Docker engine at %s: docker pull %s (or docker load -i FILE)",
              x->image, x->rt->ep.shown, x->image);
}

static void created(struct dk_call *c, int status, const char *body, size_t n, const char *err)
{
        struct dk_exec *x = c->x;
        json_t *o;
        const char *id;

        x->create = NULL;
        if (status == 500 && seccomp_by_path(x, body, n))
                return;
        free(x->create_body);
        x->create_body = NULL;
        if (status == 404) {
                image_missing(x);
        } else if (status == 201 && (o = json_loadb(body, n, 0, NULL)) != NULL) {
                id = json_string_value(json_object_get(o, "Id"));
                if (id != NULL && strlen(id) < sizeof(x->id) &&
                    strspn(id, "0123456789abcdef") == strlen(id)) {
                        snprintf(x->id, sizeof(x->id), "%s", id);
                        x->created = true;
                }
                json_decref(o);
                if (!x->created)
                        x_err(x, "create: no container id answered");
        } else if (status != 0) {
                answer_error(x, "create", status, body, n);
        } else {
                reach_error(x, "create", err);
        }
        if (!x->created || x->has_pending || x->error[0] != '\0') {
                dk_x_end(x);
                return;
        }
        x_state(x, "created");
        dk_attach(x);
}

static void signalled(struct dk_call *c, int status, const char *body, size_t n, const char *err)
{
        (void)c;
        (void)status;
        (void)body;
        (void)n;
        (void)err;
}

static void unpaused_then_kill(struct dk_call *c, int status, const char *body, size_t n,
                               const char *err)
{
        struct dk_exec *x = c->x;

        x->paused = false;
        dk_send_kill(x, atoi(c->arg));
}

void dk_send_kill(struct dk_exec *x, int sig)
{
        char path[200];

        if (!x->started || x->ended || x->removing)
                return; /* the flow sees has_pending at its next step */
        if (x->paused) {
                /* A paused container cannot be killed until thawed. */
                snprintf(path, sizeof(path), "/containers/%s/unpause", x->id);
                struct dk_call *c = dk_api(x->rt, x, "POST", path, "", unpaused_then_kill);
                if (c != NULL)
                        snprintf(c->arg, sizeof(c->arg), "%d", sig);
                return;
        }
        snprintf(path, sizeof(path), "/containers/%s/kill?signal=%d", x->id, sig);
        dk_api(x->rt, x, "POST", path, "", signalled);
}

/* ---- the runtime's operations ---- */

/* The container acts on the workspace with the ids a native sandbox has
 * (exec_workspace_open): taken from the directory opened once at the
 * session's start, never from its path again, and the owner's primary
 * group from the user database, never the directory's own group. No
 * workspace: nobody. */
static void pick_user(const struct exec_request *req, char *out, size_t len)
{
        uint32_t uid = EXEC_NOBODY_ID, gid = EXEC_NOBODY_ID;

        if (req->ws_mode != EXEC_WS_NONE && req->ws != NULL)
                exec_workspace_ids(req->ws, &uid, &gid);
        snprintf(out, len, "%u:%u", (unsigned)uid, (unsigned)gid);
}

static void free_on_close(uv_handle_t *h)
{
        struct dk_exec *x = h->data;

        free(x->stdin_data);
        free(x->create_body);
        free(x);
}

/* Creates the container from `body` (taken), pinned to the session's
 * image by id with a bounded tmpfs over each of its volumes: an anonymous
 * volume would be outside the disk quota. 0 or -ENOMEM. */
static int post_create(struct dk_exec *x, char *body)
{
        struct docker_rt *rt = x->rt;
        char *pinned = docker_create_pin(body, &rt->img, x->vol_bytes);

        free(body);
        if (pinned == NULL ||
            (x->create = dk_api(rt, x, "POST", "/containers/create", pinned, created)) == NULL) {
                free(pinned);
                return -ENOMEM;
        }
        /* kept for a retry naming the profile's file (seccomp_by_path):
         * the body may have been built before GET /version said Podman */
        x->create_body = pinned;
        return 0;
}

static void image_known(struct dk_call *c, int status, const char *body, size_t n, const char *err)
{
        struct dk_exec *x = c->x;
        struct docker_image img;
        char *create_body = x->create_body;

        x->create = NULL;
        x->create_body = NULL;
        if (status == 200 && docker_image_parse(body, n, &img) == 0) {
                if (x->rt->img.id[0] == '\0')
                        x->rt->img = img; /* the first answer pins the session's */
                else
                        docker_image_clear(&img);
        } else if (status == 404) {
                image_missing(x);
        } else if (status != 0) {
                answer_error(x, "image", status, body, n);
        } else {
                reach_error(x, "image", err);
        }
        if (x->error[0] != '\0' || x->has_pending) {
                free(create_body);
                dk_x_end(x);
        } else if (post_create(x, create_body) < 0) {
                x_err(x, "out of memory");
                dk_x_end(x);
        }
}

/* Asks the engine for the image (its id and volumes) before the first
 * create; x->create_body waits for the answer. 0 or -ENOMEM. */
static int image_ask(struct dk_exec *x)
{
        const char *name = x->rt->image;
        char path[1200];
        size_t k = snprintf(path, sizeof(path), "/images/");

        /* The name as one path segment's worth: a registry's host:port
         * and repository slashes pass, anything else is escaped. */
        for (; *name != '\0' && k + 4 < sizeof(path); name++)
                k += (size_t)snprintf(path + k, sizeof(path) - k,
                                      strchr("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
                                             "0123456789._-:/@",
                                             *name) != NULL
                                          ? "%c"
                                          : "%%%02X",
                                      (unsigned char)*name);
        snprintf(path + k, sizeof(path) - k, "/json");
        x->create = dk_api(x->rt, x, "GET", path, NULL, image_known);
        return x->create != NULL ? 0 : -ENOMEM;
}

/* The container's command: proctor's own init (docker_init) from its
 * binary bound read-only, then the request's command (proctor again for a
 * file tool). For a local engine the init checks that /workspace is the
 * directory the session opened, by device and inode: the engine resolves
 * the path again at each create, so a path replaced since is caught there,
 * before anything of the command runs. malloc'ed (the strings in `buf`,
 * the rest the request's and rt->self's), or NULL. */
static const char **container_argv(struct docker_rt *rt, const struct exec_request *req,
                                   uint64_t room, char *buf, size_t buflen)
{
        struct docker_init_opts io = {
            .keep_stdin = req->keep_stdin,
            .stdin_len = req->stdin_data != NULL ? req->stdin_len : 0,
            .deadline_ms = req->limits.timeout_ms > 0 ? req->limits.timeout_ms + INIT_GRACE_MS : 0,
            .has_fsize = room != UINT64_MAX,
            .fsize = room,
        };
        size_t argc = 0, n = 0, cap;
        const char **inner, **outer, **out;
        char *const *cmd;

        if (req->ws != NULL && req->ws_mode != EXEC_WS_NONE && dk_workspace_here(rt)) {
                io.has_ws = true;
                io.ws_dev = (unsigned long long)req->ws->st.st_dev;
                io.ws_ino = (unsigned long long)req->ws->st.st_ino;
        }
        while (req->argv[argc] != NULL)
                argc++;
        cap = argc + 24;
        inner = calloc(cap, sizeof(*inner));
        outer = calloc(cap, sizeof(*outer));
        out = calloc(cap, sizeof(*out));
        if (inner == NULL || outer == NULL || out == NULL) {
                free(inner);
                free(outer);
                free(out);
                return NULL;
        }
        cmd = selfrun_argv(&rt->self, req->argv, inner, cap);
        outer[n++] = EXEC_SANDBOX_SELF;
        outer[n++] = DOCKER_INIT_CMD;
        n += docker_init_args(&io, buf, buflen, outer + n);
        outer[n++] = "--";
        for (size_t i = 0; cmd[i] != NULL && n + 1 < cap; i++)
                outer[n++] = cmd[i];
        outer[n] = NULL;
        cmd = selfrun_argv(&rt->self, (char *const *)outer, out, cap);
        if ((const char **)cmd != out) /* a static binary: no loader */
                memcpy(out, outer, (n + 1) * sizeof(*out));
        free(inner);
        free(outer);
        return out;
}

static int dk_spawn(void *state, struct exec *e, const struct exec_request *req, char *err,
                    size_t errlen)
{
        struct docker_rt *rt = state;
        struct dk_exec *x;
        const char **argv;
        char user[48], init_buf[256];
        char *body;
        int rc;

        if (req->ws_mode == EXEC_WS_OVERLAY) {
                snprintf(err, errlen,
                         "--runtime docker mounts the workspace rw, ro or not at "
                         "all: overlay is for native sandboxes");
                return -ENOTSUP;
        }
        x = calloc(1, sizeof(*x));
        if (x == NULL)
                return -ENOMEM;
        x->rt = rt;
        x->e = e;
        x->keep_stdin = req->keep_stdin;
        snprintf(x->image, sizeof(x->image), "%s", rt->image);
        if (!req->keep_stdin && req->stdin_data != NULL && req->stdin_len > 0) {
                x->stdin_data = malloc(req->stdin_len);
                if (x->stdin_data == NULL) {
                        free(x);
                        return -ENOMEM;
                }
                memcpy(x->stdin_data, req->stdin_data, req->stdin_len);
                x->stdin_len = req->stdin_len;
        }
        pick_user(req, user, sizeof(user));
        uint64_t room = exec__rt_disk_room(e);
        if ((argv = container_argv(rt, req, room, init_buf, sizeof(init_buf))) == NULL) {
                free(x->stdin_data);
                free(x);
                return -ENOMEM;
        }
        struct docker_create dc = {
            .image = rt->image,
            .argv = (char *const *)argv,
            .seccomp_profile =
                rt->podman && seccomp_file(rt) != NULL ? rt->seccomp_path : rt->seccomp,
            .self = &rt->self,
            .env = req->env_extra,
            .workspace = req->ws_mode == EXEC_WS_NONE ? NULL : req->workspace,
            .workspace_ro = req->ws_mode == EXEC_WS_RO,
            .user = user,
            .stdin_open = true,
            .limits = req->limits,
            .session = rt->session,
            .host_name = rt->owner.host,
            .exec_id = exec_id(e),
            .owner = &rt->owner,
            /* Podman drops containers.conf's default_ulimits once a
             * create names any, and raises nofile and nproc to their
             * maximum, which a host without CAP_SYS_RESOURCE refuses:
             * there proctor's init sets RLIMIT_FSIZE alone. */
            .has_fsize = !rt->podman && room != UINT64_MAX,
            .fsize = room,
        };
        body = docker_create_body(&dc);
        free(argv);
        x->vol_bytes = docker_tmpfs_bytes(&req->limits);
        if (room < x->vol_bytes)
                x->vol_bytes = room;
        uv_timer_init(exec__rt_loop(e), &x->timer);
        x->timer.data = x;
        uv_timer_init(exec__rt_loop(e), &x->probe);
        x->probe.data = x;
        x->refs = 3; /* the execution's own, and the timer handles' */
        exec__rt_set_priv(e, x);
        if (body != NULL && rt->img.id[0] == '\0') {
                x->create_body = body;
                rc = image_ask(x);
        } else {
                rc = body != NULL ? post_create(x, body) : -ENOMEM;
        }
        if (rc < 0) {
                snprintf(err, errlen, "cannot start a request to the Docker engine (libcurl?)");
                /* The timer must close before x goes; the exec is not live yet. */
                x->e = NULL;
                uv_close((uv_handle_t *)&x->timer, NULL);
                uv_close((uv_handle_t *)&x->probe, free_on_close);
                return -ENOMEM;
        }
        x->setup_ms = req->limits.timeout_ms == 0             ? SETUP_WAIT_MS
                      : req->limits.timeout_ms < SETUP_MIN_MS ? SETUP_MIN_MS
                                                              : (unsigned)req->limits.timeout_ms;
        uv_timer_start(&x->timer, setup_over, x->setup_ms, 0);
        return 0;
}

static int dk_write(struct exec *e, const char *data, size_t len)
{
        struct dk_exec *x = exec__rt_priv(e);
        char *b;

        if (!x->keep_stdin || x->ended || x->removing)
                return -EPIPE;
        if (x->started)
                return conn_write(x, data, len);
        /* Before the container runs: held, and written in order at start. */
        if ((b = realloc(x->stdin_data, x->stdin_len + len)) == NULL)
                return -ENOMEM;
        memcpy(b + x->stdin_len, data, len);
        x->stdin_data = b;
        x->stdin_len += len;
        return 0;
}

/* Killed before it ran, and the engine has not answered since: the
 * execution ends without it (a container it creates later carries the
 * labels the next start's sweep removes). */
static void kill_wait_over(uv_timer_t *t)
{
        struct dk_exec *x = t->data;

        if (!x->started)
                dk_x_end(x);
}

/* The engine has not created and started the container in time: the
 * execution ends as one that could not be set up (a container it makes
 * later carries the labels the next start's sweep removes). */
static void setup_over(uv_timer_t *t)
{
        struct dk_exec *x = t->data;

        if (x->started || x->ended)
                return;
        x_err(x, "the Docker engine at %.100s did not create and start the container within %u s",
              x->rt->ep.shown, x->setup_ms / 1000);
        dk_x_end(x);
}

static void dk_kill(struct exec *e, enum exec_reason why)
{
        struct dk_exec *x = exec__rt_priv(e);

        if (!x->has_pending) {
                x->has_pending = true;
                x->pending = why;
        }
        dk_send_kill(x, SIGKILL);
        /* Before the start each step's answer ends it; one that never
         * comes must not keep the execution (and proctor) waiting. */
        if (!x->started && !x->ended)
                uv_timer_start(&x->timer, kill_wait_over, KILL_WAIT_MS, 0);
}

static int dk_signal(struct exec *e, int sig)
{
        struct dk_exec *x = exec__rt_priv(e);

        if (!x->started || x->ended)
                return -ESRCH;
        x->op_signals |= 1ull << (sig - 1);
        dk_send_kill(x, sig);
        return 0;
}

static int dk_pause(struct exec *e, bool on)
{
        struct dk_exec *x = exec__rt_priv(e);
        char path[160];

        if (!x->started || x->ended || x->has_pending)
                return -ESRCH;
        snprintf(path, sizeof(path), "/containers/%s/%s", x->id, on ? "pause" : "unpause");
        if (dk_api(x->rt, x, "POST", path, "", signalled) == NULL)
                return -ENOMEM;
        x->paused = on;
        return 0;
}

static const char *dk_handle(const struct exec *e)
{
        const struct dk_exec *x = exec__rt_priv(e);

        return x != NULL && x->created ? x->id : NULL;
}

/* ---- the engine: endpoint check and sweep ---- */

/* Connects once to the engine's unix socket, so that a missing daemon or a
 * socket this user may not use is said at start, with the fix. A unix
 * connect does not wait on the network. */
static int check_socket(const struct docker_endpoint *ep, char *err, size_t errlen)
{
        struct sockaddr_un sa = {.sun_family = AF_UNIX};
        struct stat st;
        int fd, rc = 0;

        if (strlen(ep->unix_path) >= sizeof(sa.sun_path)) {
                snprintf(err, errlen, "DOCKER_HOST=%s: socket path too long", ep->shown);
                return -EINVAL;
        }
        memcpy(sa.sun_path, ep->unix_path, strlen(ep->unix_path));
        fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
        if (fd < 0)
                return -errno;
        if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0)
                rc = -errno;
        close(fd);
        if (rc == -EACCES || rc == -EPERM) {
                struct group *g = stat(ep->unix_path, &st) == 0 ? getgrgid(st.st_gid) : NULL;
                struct passwd *pw = getpwuid(getuid());
                char grp[64];
                snprintf(grp, sizeof(grp), "%s", g != NULL ? g->gr_name : "docker");
                snprintf(err, errlen,
                         "permission denied on the Docker engine socket %s (mode %04o, group "
                         "%s): add %s to the group %s (usermod -aG %s %s, then log in again), "
                         "or set DOCKER_HOST to an engine this user may use",
                         ep->unix_path, (unsigned)(st.st_mode & 07777), grp,
                         pw != NULL ? pw->pw_name : "this user", grp, grp,
                         pw != NULL ? pw->pw_name : "USER");
        } else if (rc < 0) {
                snprintf(err, errlen,
                         "cannot reach the Docker engine at %s (%s): is the docker daemon "
                         "running? DOCKER_HOST=%s",
                         ep->unix_path, strerror(-rc),
                         getenv("DOCKER_HOST") != NULL ? getenv("DOCKER_HOST")
                                                       : "(unset: unix:///var/run/docker.sock)");
        }
        return rc;
}

/* Podman names itself among the version's components. */
static void versioned(struct dk_call *c, int status, const char *body, size_t n, const char *err)
{
        json_t *o, *it;
        size_t i;

        c->rt->version = NULL;
        if (status != 200 || (o = json_loadb(body, n, 0, NULL)) == NULL)
                return;
        json_array_foreach (json_object_get(o, "Components"), i, it) {
                const char *name = json_string_value(json_object_get(it, "Name"));
                if (name != NULL && strstr(name, "Podman") != NULL)
                        c->rt->podman = true;
        }
        json_decref(o);
}

static int dk_engine_new(uv_loop_t *loop, const struct exec_engine_opts *o, void **state, char *err,
                         size_t errlen)
{
        struct docker_rt *rt;
        char host[256] = "";
        int rc;

        if (o->docker_image == NULL || o->docker_image[0] == '\0') {
                snprintf(err, errlen,
                         "--runtime docker needs --image REF: the engine's image "
                         "every container runs");
                return -EINVAL;
        }
        rt = calloc(1, sizeof(*rt));
        if (rt == NULL)
                return -ENOMEM;
        rc = docker_endpoint_parse(o->docker_host != NULL ? o->docker_host : getenv("DOCKER_HOST"),
                                   getenv("DOCKER_TLS_VERIFY"), getenv("DOCKER_CERT_PATH"),
                                   getenv("HOME"), &rt->ep, err, errlen);
        if (rc == 0 && rt->ep.unix_path[0] != '\0')
                rc = check_socket(&rt->ep, err, errlen);
        if (rc == 0)
                rc = selfrun_probe(&rt->self, err, errlen);
        if (rc == 0 && (rt->seccomp = seccomp_policy_profile_json()) == NULL)
                rc = -ENOMEM;
        if (rc < 0) {
                rt_free(rt);
                return rc;
        }
        rt->loop = loop;
        rt->image = strdup(o->docker_image);
        rt->session = strdup(o->session_id != NULL ? o->session_id : "");
        rt->http = http_client_new(loop);
        if (gethostname(host, sizeof(host) - 1) < 0)
                host[0] = '\0';
        if ((rc = docker_owner_self(&rt->owner, host)) < 0) {
                snprintf(err, errlen,
                         "cannot read this process's start time or this boot's id in /proc "
                         "(for the labels that let a later proctor sweep its containers): %s",
                         strerror(-rc));
                rt_free(rt);
                return rc;
        }
        if (rt->image == NULL || rt->session == NULL || rt->http == NULL) {
                rt_free(rt);
                return -ENOMEM;
        }
        /* The sweep: containers whose proctor is gone (killed by SIGKILL). */
        struct dk_call *c = rt->list =
            dk_api(rt, NULL, "GET",
                   "/containers/json?all=1&filters=%7B%22label%22%3A%5B%22proctor."
                   "instance%22%5D%7D",
                   NULL, dk_listed);
        if (c == NULL) {
                snprintf(err, errlen,
                         "cannot load libcurl for the Docker Engine API (Debian/Ubuntu: libcurl4)");
                rt_free(rt);
                return -ELIBACC;
        }
        rt->version = dk_api(rt, NULL, "GET", "/version", NULL, versioned);
        *state = rt;
        return 0;
}

static void dk_engine_free(void *state)
{
        struct docker_rt *rt = state;

        /* The sweep runs to its end (a proctor that exits at once still
         * removes what a killed one left): the listing and the removals it
         * asks for keep the loop until answered, each bounded by
         * RT_CALL_IDLE_MS. The version is of no use any more. */
        rt->pending++;
        rt->freeing = true;
        call_cancel(&rt->version);
        if (--rt->pending == 0) {
                rt_free(rt);
        }
}

/* A unix socket's engine, or one on this host's loopback, mounts this
 * host's workspace; a remote one its own host's same path. */
static bool dk_workspace_here(void *state)
{
        const struct docker_rt *rt = state;

        return rt->ep.unix_path[0] != '\0' || strncmp(rt->ep.host, "127.", 4) == 0 ||
               strcmp(rt->ep.host, "localhost") == 0 || strcmp(rt->ep.host, "::1") == 0 ||
               strcmp(rt->ep.host, "[::1]") == 0;
}

const struct exec_runtime exec_runtime_docker = {
    .name = "docker",
    .engine_new = dk_engine_new,
    .engine_free = dk_engine_free,
    .spawn = dk_spawn,
    .write = dk_write,
    .kill = dk_kill,
    .signal = dk_signal,
    .pause = dk_pause,
    .handle = dk_handle,
    .workspace_here = dk_workspace_here,
};
