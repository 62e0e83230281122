/* docker: the docker runtime (exec/runtime.h): each sandboxed execution is
 * one short-lived container of the Docker Engine API, created, attached,
 * started, waited for, inspected and removed, with limits mapped onto its
 * HostConfig and proctor's own wall clock. Requests go through exec/http
 * on the engine's loop; the attach stream is a raw upgraded connection so
 * that stdin can be half-closed. Never blocks the loop, never runs the
 * docker CLI, and never leaves a container behind that it knows of. */
#include "exec/runtime.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <signal.h>
#include <stdarg.h>
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
#include "exec/fdio.h"
#include "exec/http.h"
#include "exec/native/seccomp.h"
#include "exec/native/selfrun.h"
#include "exec/native/workspace.h"

#define ATTACH_HEAD_MAX 4096
#define END_GRACE_MS    500  /* output still due once the wait answered */
#define KILL_WAIT_MS    5000 /* a kill before the start: the engine's answer */
/* How long the engine may take to create and start a container: the
 * execution's wall clock, at least SETUP_MIN_MS, SETUP_WAIT_MS without one. */
#define SETUP_MIN_MS    10000
#define SETUP_WAIT_MS   60000
#define RT_CALL_IDLE_MS 10000
/* The init's own wall clock (docker_init) runs this much past proctor's,
 * which ends the call first and names its reason; the init's ends the
 * container when proctor cannot. */
#define INIT_GRACE_MS 5000

struct docker_rt {
        uv_loop_t *loop;
        struct http_client *http;
        struct docker_endpoint ep;
        char *image, *session;
        struct docker_owner owner; /* this process, as its containers' labels name it */
        struct selfrun self;       /* proctor's binary and libraries, for the file tools */
        char *seccomp;             /* proctor's policy as the engine's profile */
        /* The same in a file (Podman's service reads profiles by path on
         * its own host); "" when it could not be written. */
        char seccomp_path[96];
        unsigned pending; /* requests of its own (the sweep) in flight */
        bool podman;      /* the engine is Podman (GET /version said so) */
        /* The image as the first call found it: every container of the
         * session is created from that id, its volumes known. */
        struct docker_image img;
        struct dk_call *list, *version; /* the start's calls, while in flight */
        bool freeing;
};

/* One API call's answer, gathered whole (or streamed to `line`). */
struct dk_call {
        struct dk_exec *x; /* NULL: the runtime's own (sweep) */
        struct docker_rt *rt;
        void (*done)(struct dk_call *c, int status, const char *body, size_t n, const char *err);
        void (*line)(struct dk_call *c, const char *buf, size_t n); /* streaming */
        void (*head)(struct dk_call *c);                            /* the status is known */
        struct http_request *req;
        int status;
        char *buf;
        size_t len, cap;
        char arg[80];
};

static void rt_free(struct docker_rt *rt)
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

struct dk_exec {
        struct docker_rt *rt;
        struct exec *e;
        char id[80];
        char image[256];
        bool keep_stdin;
        char *stdin_data;
        size_t stdin_len;

        /* the attach connection */
        union {
                uv_pipe_t pipe;
                uv_tcp_t tcp;
        } conn;
        uv_stream_t *s;
        uv_connect_t creq;
        uv_getaddrinfo_t gai;
        char head[ATTACH_HEAD_MAX];
        size_t hlen;
        bool head_done, attach_eof, conn_made;
        struct docker_demux dmx;
        char *early; /* what the stream brought before the start's answer */
        size_t early_len;
        struct dk_call *attach_call;    /* over TLS: attach through libcurl */
        struct http_raw_job *stdin_job; /* over TLS: stdin on an attach of its own */

        uv_timer_t timer; /* the wall clock, then the end's grace */
        uv_timer_t probe; /* a local engine's pids and OOM counters (see pids_probe) */
        struct dk_call *stats, *wait, *poll;
        struct dk_call *create, *start; /* in flight */
        char *create_body;              /* kept until the create is answered */
        uint64_t vol_bytes;             /* the tmpfs over each of the image's volumes */
        unsigned setup_ms;              /* the create and start's deadline (setup_over) */
        uint64_t polled_us;             /* when the last poll of the stats was asked */
        struct docker_stats_sample prev;
        bool have_prev;
        uint64_t prev_us;
        struct exec_stats st;
        uint32_t max_pids;
        bool pids_hit; /* the engine's pids counter said a fork was refused */
        bool oom_hit;  /* the memory group's OOM kill counter moved */

        bool created, started, waited, ended, removing, paused;
        bool has_pending;
        enum exec_reason pending;
        uint64_t op_signals;
        int status_code;
        uint64_t end_us;
        unsigned refs; /* open handles and calls in flight */
        char error[256];
};

static void x_unref(struct dk_exec *x);
static bool dk_workspace_here(void *state);
static void x_end(struct dk_exec *x);
static void x_remove(struct dk_exec *x);
static void setup_over(uv_timer_t *t);

/* ---- API calls ---- */

static void call_response(const struct http_response *r, void *ud)
{
        struct dk_call *c = ud;

        c->status = r->status;
        if (c->head != NULL)
                c->head(c);
}

static void call_data(const char *buf, size_t n, void *ud)
{
        struct dk_call *c = ud;

        if (c->line != NULL && c->status / 100 == 2) {
                c->line(c, buf, n);
                return;
        }
        if (c->len + n > (1u << 20))
                return; /* an answer past 1 MiB is cut: only its start is read */
        if (c->len + n + 1 > c->cap) {
                size_t cap = (c->len + n + 1) * 2;
                char *b = realloc(c->buf, cap);
                if (b == NULL)
                        return;
                c->buf = b;
                c->cap = cap;
        }
        memcpy(c->buf + c->len, buf, n);
        c->len += n;
        c->buf[c->len] = '\0';
}

static void call_free(struct dk_call *c)
{
        struct dk_exec *x = c->x;
        struct docker_rt *rt = c->rt;

        free(c->buf);
        free(c);
        if (x != NULL)
                x_unref(x);
        else if (--rt->pending == 0 && rt->freeing) {
                rt_free(rt);
        }
}

static void call_done(const struct http_result *r, void *ud)
{
        struct dk_call *c = ud;

        c->req = NULL;
        if (c->done != NULL)
                c->done(c, r->ok ? c->status : 0, c->buf != NULL ? c->buf : "", c->len,
                        r->ok ? NULL : r->error);
        call_free(c);
}

/* Cancels a call in flight: its done never runs. */
static void call_cancel(struct dk_call **cp)
{
        struct dk_call *c = *cp;

        *cp = NULL;
        if (c == NULL || c->req == NULL)
                return;
        http_cancel(c->req);
        c->req = NULL;
        call_free(c);
}

static struct dk_call *api(struct docker_rt *rt, struct dk_exec *x, const char *method,
                           const char *path, const char *body,
                           void (*done)(struct dk_call *, int, const char *, size_t, const char *))
{
        static const char *const json_hdr[] = {"Content-Type: application/json", NULL};
        struct dk_call *c = calloc(1, sizeof(*c));
        struct docker_endpoint *ep = &rt->ep;
        struct http_callbacks cb = {call_response, call_data, call_done};
        char url[1024], err[256];

        if (c == NULL)
                return NULL;
        c->x = x;
        c->rt = rt;
        c->done = done;
        snprintf(url, sizeof(url), "%s%s", ep->base_url, path);
        struct http_post p = {
            .url = url,
            .headers = body != NULL ? json_hdr : NULL,
            .body = body,
            .body_len = body != NULL ? strlen(body) : 0,
            .method = method,
            .unix_socket = ep->unix_path[0] != '\0' ? ep->unix_path : NULL,
            .cert_file = ep->tls ? ep->cert : NULL,
            .key_file = ep->tls ? ep->key : NULL,
            .ca_file = ep->tls ? ep->ca : NULL,
            .connect_timeout_ms = 10000,
            /* The runtime's own calls (the sweep, the version) must not
             * keep the loop alive on an engine that never answers. */
            .idle_timeout_ms = x == NULL ? RT_CALL_IDLE_MS : 0,
        };
        if (http_post_stream(rt->http, &p, &cb, c, &c->req, err, sizeof(err)) < 0) {
                free(c);
                return NULL;
        }
        if (x != NULL)
                x->refs++;
        else
                rt->pending++;
        return c;
}

__attribute__((format(printf, 2, 3))) static void x_err(struct dk_exec *x, const char *fmt, ...)
{
        va_list ap;

        va_start(ap, fmt);
        vsnprintf(x->error, sizeof(x->error), fmt, ap);
        va_end(ap);
}

/* The fix, when the engine could not be reached or refused. */
static void reach_error(struct dk_exec *x, const char *what, const char *err)
{
        const struct docker_endpoint *ep = &x->rt->ep;

        x_err(x, "%s: cannot reach the Docker engine at %.100s (%.60s): %s", what, ep->shown, err,
              ep->tls                    ? "is the daemon running, and are DOCKER_CERT_PATH's "
                                           "ca.pem, cert.pem and key.pem its?"
              : ep->unix_path[0] == '\0' ? "is the docker daemon running (or does it want TLS: "
                                           "DOCKER_TLS_VERIFY=1)?"
                                         : "is the docker daemon running?");
}

static void answer_error(struct dk_exec *x, const char *what, int status, const char *body,
                         size_t n)
{
        char msg[200];
        const char *hint;

        docker_error_text(body, n, msg, sizeof(msg));
        /* The fix first: the engine's own text may be cut to fit. */
        if ((hint = docker_error_hint(body, n)) != NULL)
                x_err(x, "%s: %s (the engine answered %d: %s)", what, hint, status, msg);
        else
                x_err(x, "%s: the Docker engine answered %d: %s", what, status, msg);
}

/* ---- the execution's end ---- */

static void x_state(struct dk_exec *x, const char *state)
{
        if (x->e != NULL)
                exec__rt_state(x->e, state);
}

static void x_close_cb(uv_handle_t *h)
{
        x_unref(h->data);
}

static void x_close(struct dk_exec *x, uv_handle_t *h)
{
        if (!uv_is_closing(h))
                uv_close(h, x_close_cb);
}

static void x_unref(struct dk_exec *x)
{
        if (--x->refs > 0)
                return;
        struct exec *e = x->e;
        http_raw_abandon(x->stdin_job);
        free(x->stdin_data);
        free(x->early);
        free(x->create_body);
        free(x);
        exec__rt_removed(e);
}

/* A counter (`key` N) of one of the container's group files, where the
 * engine is local and uses cgroupfs: Docker's groups (v1 or v2, with the
 * docker parent or systemd's scope) or Podman's (libpod_parent, or
 * machine.slice under systemd); -1: unknown. */
static long cg_counter(const struct dk_exec *x, const char *ctrl, const char *file, const char *key)
{
        static const struct {
                bool v1; /* under the controller's own hierarchy */
                const char *pre, *post;
        } dirs[] = {
            {true, "docker/", ""},
            {true, "libpod_parent/libpod-", ""},
            {false, "docker/", ""},
            {false, "system.slice/docker-", ".scope"},
            {false, "libpod_parent/libpod-", ""},
            {false, "machine.slice/libpod-", ".scope"},
        };
        char path[400], k[32];
        long v;

        if (x->rt->ep.unix_path[0] == '\0')
                return -1;
        for (size_t i = 0; i < sizeof(dirs) / sizeof(dirs[0]); i++) {
                snprintf(path, sizeof(path), "/sys/fs/cgroup/%s%s%s%s%s/%s", dirs[i].v1 ? ctrl : "",
                         dirs[i].v1 ? "/" : "", dirs[i].pre, x->id, dirs[i].post, file);
                FILE *f = fopen(path, "re");
                if (f == NULL)
                        continue;
                int found = 0;
                while (!found && fscanf(f, "%31s %ld", k, &v) == 2)
                        found = strcmp(k, key) == 0;
                fclose(f);
                if (found)
                        return v;
        }
        return -1;
}

static long pids_hit_max(const struct dk_exec *x)
{
        return cg_counter(x, "pids", "pids.events", "max");
}

/* Podman 4.3 on cgroup v1 leaves State.OOMKilled false after an OOM kill:
 * the group's own counter says it (v1 memory.oom_control, v2 memory.events). */
static bool oom_seen(const struct dk_exec *x)
{
        return cg_counter(x, "memory", "memory.oom_control", "oom_kill") > 0 ||
               cg_counter(x, "memory", "memory.events", "oom_kill") > 0;
}

/* The engine gives only a status code: 128+N is read as signal N (the
 * engine's own convention), as a command's `exit 137` cannot be told apart. */
static enum exec_reason classify(struct dk_exec *x, const struct docker_inspect *in,
                                 struct exec_result *r)
{
        const struct exec_limits *l = exec_limits(x->e);
        int code = in->exit_code;
        long hit;

        r->exit_code = -1;
        r->signal = 0;
        if (code > 128 && code <= 128 + 64)
                r->signal = code - 128;
        else
                r->exit_code = code;
        if (x->has_pending)
                return x->pending;
        if (r->signal != 0 && (x->op_signals & (1ull << (r->signal - 1))))
                return EXEC_KILLED;
        if (in->oom_killed || x->oom_hit || (l->memory_bytes > 0 && oom_seen(x)))
                return EXEC_OOM;
        /* RLIMIT_FSIZE held a file to what the disk quota had left. */
        if (r->signal == SIGXFSZ && exec__rt_disk_room(x->e) != UINT64_MAX)
                return EXEC_DISK_LIMIT;
        /* The group goes with the container's end: what the samples saw. */
        if (l->pids > 0 && code != 0) {
                hit = pids_hit_max(x);
                if (hit > 0 || x->pids_hit || x->max_pids >= l->pids)
                        return EXEC_PIDS_LIMIT;
        }
        return r->signal != 0 ? EXEC_SIGNALED : EXEC_EXITED;
}

static void report(struct dk_exec *x, const struct docker_inspect *in)
{
        struct exec_result r;
        uint64_t end = x->end_us != 0 ? x->end_us : exec__rt_now_us();

        memset(&r, 0, sizeof(r));
        r.exit_code = -1;
        r.wall_ms = (end - exec__rt_t0_us(x->e)) / 1000;
        r.cpu_ms = x->st.cpu_ms;
        r.mem_peak_bytes = x->st.mem_peak_bytes;
        if (x->error[0] != '\0' && !x->has_pending) {
                r.reason = EXEC_SETUP_FAILED;
                snprintf(r.error, sizeof(r.error), "%s", x->error);
        } else if (in != NULL) {
                r.reason = classify(x, in, &r);
        } else {
                r.reason = x->has_pending ? x->pending : EXEC_SETUP_FAILED;
                snprintf(r.error, sizeof(r.error), "%s", x->error);
        }
        if ((r.reason == EXEC_KILLED || r.reason == EXEC_TIMEOUT) && r.signal == 0)
                r.signal = SIGKILL;
        x_state(x, "exited");
        exec__rt_exit(x->e, &r);
}

static void removed(struct dk_call *c, int status, const char *body, size_t n, const char *err)
{
        (void)status;
        (void)body;
        (void)n;
        (void)err;
}

static void x_remove(struct dk_exec *x)
{
        char path[160];

        if (x->removing)
                return;
        x->removing = true;
        call_cancel(&x->stats);
        call_cancel(&x->poll);
        call_cancel(&x->wait);
        call_cancel(&x->create);
        call_cancel(&x->start);
        call_cancel(&x->attach_call);
        uv_timer_stop(&x->timer);
        if (x->created) {
                x_state(x, "removing");
                snprintf(path, sizeof(path), "/containers/%s?force=1&v=1", x->id);
                api(x->rt, x, "DELETE", path, NULL, removed);
        }
        if (x->s != NULL)
                x_close(x, (uv_handle_t *)x->s);
        x_close(x, (uv_handle_t *)&x->timer);
        x_close(x, (uv_handle_t *)&x->probe);
        x_unref(x); /* the execution's own reference */
}

static void inspected(struct dk_call *c, int status, const char *body, size_t n, const char *err)
{
        struct dk_exec *x = c->x;
        struct docker_inspect in;

        if (status == 200 && docker_inspect_parse(body, n, &in) == 0) {
                /* The wait's code is the command's; inspect may lag it. */
                if (x->waited)
                        in.exit_code = x->status_code;
                report(x, &in);
        } else {
                if (status != 0)
                        answer_error(x, "inspect", status, body, n);
                else
                        reach_error(x, "inspect", err);
                report(x, NULL);
        }
        x_remove(x);
}

/* The command ended (the wait answered, or it never started): reads why,
 * reports, removes. */
static void x_end(struct dk_exec *x)
{
        char path[160];

        if (x->ended)
                return;
        x->ended = true;
        if (x->end_us == 0)
                x->end_us = exec__rt_now_us();
        uv_timer_stop(&x->timer);
        uv_timer_stop(&x->probe);
        http_raw_abandon(x->stdin_job);
        x->stdin_job = NULL;
        call_cancel(&x->stats);
        call_cancel(&x->poll);
        if (!x->started) {
                report(x, NULL);
                x_remove(x);
                return;
        }
        snprintf(path, sizeof(path), "/containers/%s/json", x->id);
        if (api(x->rt, x, "GET", path, NULL, inspected) == NULL) {
                x_err(x, "out of memory");
                report(x, NULL);
                x_remove(x);
        }
}

static void grace_over(uv_timer_t *t)
{
        x_end(t->data);
}

static void maybe_end(struct dk_exec *x)
{
        if (!x->waited)
                return;
        if (x->attach_eof) {
                x_end(x);
        } else if (!x->ended) {
                uv_timer_stop(&x->timer);
                uv_timer_start(&x->timer, grace_over, END_GRACE_MS, 0);
        }
}

/* ---- running ---- */

static void send_kill(struct dk_exec *x, int sig);
static void feed(struct dk_exec *x, const char *buf, size_t n);

static void waited(struct dk_call *c, int status, const char *body, size_t n, const char *err)
{
        struct dk_exec *x = c->x;
        json_t *o;

        x->wait = NULL;
        x->end_us = exec__rt_now_us();
        x->waited = true;
        if (status == 200 && (o = json_loadb(body, n, 0, NULL)) != NULL) {
                x->status_code = (int)json_integer_value(json_object_get(o, "StatusCode"));
                json_decref(o);
        } else if (!x->has_pending) {
                if (status != 0)
                        answer_error(x, "wait", status, body, n);
                else
                        reach_error(x, "wait", err);
        }
        maybe_end(x);
}

/* One stats object, from the stream or a poll. */
static void stats_sample(struct dk_exec *x, const char *json, size_t n)
{
        const struct exec_limits *l = exec_limits(x->e);
        struct docker_stats_sample s;
        uint64_t now = exec__rt_now_us();

        /* A stopped container's last sample is all zeros: not a reading. */
        if (docker_stats_parse(json, n, &s) < 0 || x->ended || (s.cpu_ns == 0 && s.mem_bytes == 0))
                return;
        docker_stats_fold(x->have_prev ? &x->prev : NULL, &s, now - x->prev_us, &x->st);
        x->prev = s;
        x->have_prev = true;
        x->prev_us = now;
        if (s.pids > x->max_pids)
                x->max_pids = s.pids;
        if (l->pids > 0 && !x->pids_hit && pids_hit_max(x) > 0)
                x->pids_hit = true;
        exec__rt_stats(x->e, &x->st);
        /* No CPU-time limit in the engine: proctor's, per sample. */
        if (l->cpu_ms > 0 && x->st.cpu_ms >= l->cpu_ms && !x->has_pending) {
                x->has_pending = true;
                x->pending = EXEC_CPU_LIMIT;
                send_kill(x, SIGKILL);
        }
}

static void stats_line(struct dk_call *c, const char *buf, size_t n)
{
        struct dk_exec *x = c->x;
        const char *nl;

        /* One JSON object per line; a line may come in pieces. */
        while (n > 0) {
                nl = memchr(buf, '\n', n);
                size_t k = nl != NULL ? (size_t)(nl - buf) : n;
                if (c->len + k + 1 <= (1u << 20)) {
                        char *b = realloc(c->buf, c->len + k + 1);
                        if (b == NULL)
                                return;
                        c->buf = b;
                        memcpy(c->buf + c->len, buf, k);
                        c->len += k;
                        c->buf[c->len] = '\0';
                }
                if (nl == NULL)
                        return;
                buf += k + 1;
                n -= k + 1;
                stats_sample(x, c->buf, c->len);
                c->len = 0;
        }
}

/* The stream ended by itself (Podman ends it as the container stops):
 * nothing is left to cancel. */
static void stats_done(struct dk_call *c, int status, const char *body, size_t n, const char *err)
{
        c->x->stats = NULL;
}

/* The engine removes a container's groups as it stops, and a fork bomb
 * under a pids limit (or an OOM kill) may end within one stats interval:
 * a local engine's counters are read often while the command runs (a
 * small file read or two). */
#define PIDS_PROBE_MS 20
/* Podman 4.3 streams a stats sample every 5 s: one is asked for each
 * second as well (stream=false answers at once there). */
#define STATS_POLL_US 1000000

static void polled(struct dk_call *c, int status, const char *body, size_t n, const char *err)
{
        c->x->poll = NULL;
        if (status == 200)
                stats_sample(c->x, body, n);
}

static void pids_probe(uv_timer_t *t)
{
        struct dk_exec *x = t->data;
        const struct exec_limits *l = exec_limits(x->e);
        uint64_t now = exec__rt_now_us();
        char path[160];

        if (l->pids > 0 && !x->pids_hit && pids_hit_max(x) > 0)
                x->pids_hit = true;
        if (l->memory_bytes > 0 && !x->oom_hit && oom_seen(x))
                x->oom_hit = true;
        if (x->rt->podman && x->poll == NULL && now - x->polled_us >= STATS_POLL_US) {
                x->polled_us = now;
                snprintf(path, sizeof(path), "/containers/%s/stats?stream=false", x->id);
                x->poll = api(x->rt, x, "GET", path, NULL, polled);
        }
        if ((l->pids == 0 || x->pids_hit) && (l->memory_bytes == 0 || x->oom_hit) && !x->rt->podman)
                uv_timer_stop(t);
}

static void on_deadline(uv_timer_t *t)
{
        struct dk_exec *x = t->data;

        if (!x->has_pending) {
                x->has_pending = true;
                x->pending = EXEC_TIMEOUT;
        }
        send_kill(x, SIGKILL);
}

static void stdin_written(uv_write_t *w, int status)
{
        struct dk_exec *x = w->data;

        free(w);
        x_unref(x);
}

static int conn_write(struct dk_exec *x, const char *data, size_t len)
{
        uv_write_t *w;
        char *copy;
        uv_buf_t b;

        if (x->s == NULL || !x->head_done || x->ended || uv_is_closing((uv_handle_t *)x->s))
                return -EPIPE;
        w = malloc(sizeof(*w) + len);
        if (w == NULL)
                return -ENOMEM;
        copy = (char *)(w + 1);
        memcpy(copy, data, len);
        b = uv_buf_init(copy, (unsigned)len);
        w->data = x;
        if (uv_write(w, x->s, &b, 1, stdin_written) < 0) {
                free(w);
                return -EPIPE;
        }
        x->refs++;
        return 0;
}

/* The attach request, asking the engine to upgrade the connection to the
 * raw stream; `streams` picks them ("stdout=1&stderr=1", "stdin=1"). */
static void attach_head(const struct dk_exec *x, const char *streams, char *buf, size_t len)
{
        snprintf(buf, len,
                 "POST " DOCKER_API_PREFIX "/containers/%s/attach?stream=1&%s HTTP/1.1\r\n"
                 "Host: %s\r\nUser-Agent: proctor\r\nContent-Type: text/plain\r\n"
                 "Connection: Upgrade\r\nUpgrade: tcp\r\n\r\n",
                 x->id, streams, x->rt->ep.tls ? x->rt->ep.host : "docker");
}

static void stdin_sent(int status, const char *body, size_t n, const char *err, void *ud)
{
        struct dk_exec *x = ud;

        x->stdin_job = NULL;
        if (err == NULL || x->ended || x->waited)
                return; /* sent; or the command ended without wanting it all */
        if (status != 0 && status != 101 && status != 200)
                answer_error(x, "stdin", status, body, n);
        else
                reach_error(x, "stdin", err);
        /* Its stdin stays open until an attach with stdin ends: it would
         * wait for ever. */
        if (!x->has_pending) {
                x->has_pending = true;
                x->pending = EXEC_SETUP_FAILED;
        }
        send_kill(x, SIGKILL);
}

/* Over TLS the output's attach goes through libcurl, which cannot close
 * one direction of a connection, so stdin takes an attach of its own
 * (stdin only): its data, then what flows through a socket pair whose
 * near end is x->s (conn_write writes there as it would to the attach
 * connection, for a stdin kept open, an MCP server's). Closing it at the
 * removal, or proctor's death, ends the stream, which the container's
 * init reads as proctor's end (see docker_init). */
static void tls_stdin(struct dk_exec *x)
{
        const struct docker_endpoint *ep = &x->rt->ep;
        char head[sizeof(ep->host) + 400], err[256];
        int sv[2] = {-1, -1};

        if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) < 0) {
                stdin_sent(0, NULL, 0, strerror(errno), x);
                return;
        }
        uv_pipe_init(exec__rt_loop(x->e), &x->conn.pipe, 0);
        x->s = (uv_stream_t *)&x->conn.pipe;
        x->s->data = x;
        x->refs++; /* the pipe's close, at the removal */
        if (uv_pipe_open(&x->conn.pipe, sv[0]) < 0) {
                close(sv[0]);
                close(sv[1]);
                stdin_sent(0, NULL, 0, "cannot open the stdin pipe", x);
                return;
        }
        attach_head(x, "stdin=1", head, sizeof(head));
        struct http_raw_send rs = {
            .url = ep->base_url,
            .head = head,
            .data = x->stdin_data,
            .data_len = x->stdin_len,
            .src_fd = sv[1],
            .cert_file = ep->cert,
            .key_file = ep->key,
            .ca_file = ep->ca,
            .step_timeout_ms = 10000,
        };
        if (http_raw_send(exec__rt_loop(x->e), &rs, stdin_sent, x, &x->stdin_job, err,
                          sizeof(err)) < 0)
                stdin_sent(0, NULL, 0, err, x);
}

static void started(struct dk_call *c, int status, const char *body, size_t n, const char *err)
{
        struct dk_exec *x = c->x;
        const struct exec_limits *l = exec_limits(x->e);
        char path[200];

        x->start = NULL;
        if (status != 204 && status != 304) {
                if (status != 0)
                        answer_error(x, "start", status, body, n);
                else
                        reach_error(x, "start", err);
                x_end(x);
                return;
        }
        x->started = true;
        uv_timer_stop(&x->timer); /* the setup deadline */
        exec__rt_start(x->e, 0);
        x_state(x, "running");
        if (x->early != NULL) {
                feed(x, x->early, x->early_len);
                free(x->early);
                x->early = NULL;
        }
        if (x->has_pending) { /* killed while it started */
                send_kill(x, SIGKILL);
        } else if (l->timeout_ms > 0) {
                uv_timer_start(&x->timer, on_deadline, l->timeout_ms, 0);
        }
        x->polled_us = exec__rt_now_us(); /* the stream's first sample comes now */
        if ((l->pids > 0 || l->memory_bytes > 0) && x->rt->ep.unix_path[0] != '\0')
                uv_timer_start(&x->probe, pids_probe, 0, PIDS_PROBE_MS);
        else if (x->rt->podman)
                uv_timer_start(&x->probe, pids_probe, 0, 100);
        snprintf(path, sizeof(path), "/containers/%s/wait", x->id);
        x->wait = api(x->rt, x, "POST", path, "", waited);
        snprintf(path, sizeof(path), "/containers/%s/stats?stream=true", x->id);
        if ((x->stats = api(x->rt, x, "GET", path, NULL, stats_done)) != NULL)
                x->stats->line = stats_line;
        /* stdin stays open while the container runs: the init inside
         * hands the command its stdin_len bytes, and takes the stream's
         * end for proctor's (docker_init). */
        if (x->rt->ep.tls)
                tls_stdin(x);
        else if (x->stdin_len > 0)
                conn_write(x, x->stdin_data, x->stdin_len);
        if (x->wait == NULL) {
                x_err(x, "out of memory");
                x->waited = true;
                maybe_end(x);
        }
}

static void start(struct dk_exec *x)
{
        char path[160];

        if (x->has_pending) {
                x_end(x);
                return;
        }
        snprintf(path, sizeof(path), "/containers/%s/start", x->id);
        if ((x->start = api(x->rt, x, "POST", path, "", started)) == NULL) {
                x_err(x, "out of memory");
                x_end(x);
        }
}

/* ---- the attach stream ---- */

static void frame(void *ud, enum exec_stream s, const char *buf, size_t n)
{
        struct dk_exec *x = ud;

        if (!x->ended)
                exec__rt_output(x->e, s, buf, n);
}

/* Feeds the attach stream; bytes that come before the start's answer are
 * held so that output never precedes on_start. */
static void feed(struct dk_exec *x, const char *buf, size_t n)
{
        if (!x->started) {
                char *b = realloc(x->early, x->early_len + n + 1);
                if (b == NULL)
                        return;
                memcpy(b + x->early_len, buf, n);
                x->early = b;
                x->early_len += n;
                return;
        }
        if (docker_demux_feed(&x->dmx, buf, n, frame, x) < 0)
                x_err(x, "attach: not a frame stream");
}

static void attach_eof(struct dk_exec *x)
{
        x->attach_eof = true;
        maybe_end(x);
}

static void conn_alloc(uv_handle_t *h, size_t suggested, uv_buf_t *b)
{
        static char buf[65536]; /* one loop, consumed before the next read */

        (void)h;
        (void)suggested;
        *b = uv_buf_init(buf, sizeof(buf));
}

static void head_parsed(struct dk_exec *x, const char *rest, size_t n)
{
        int st = 0;

        if (sscanf(x->head, "HTTP/1.%*d %d", &st) != 1 || (st != 101 && st != 200)) {
                answer_error(x, "attach", st, rest, n); /* what came of the body */
                uv_read_stop(x->s);
                x_end(x);
                return;
        }
        x->head_done = true;
        feed(x, rest, n);
        start(x);
}

static void conn_read(uv_stream_t *s, ssize_t nread, const uv_buf_t *b)
{
        struct dk_exec *x = s->data;
        char *end;

        if (nread < 0) {
                uv_read_stop(s);
                if (!x->head_done) {
                        reach_error(x, "attach", uv_strerror((int)nread));
                        x_end(x);
                } else {
                        attach_eof(x);
                }
                return;
        }
        if (x->head_done) {
                feed(x, b->base, (size_t)nread);
                return;
        }
        size_t take = (size_t)nread;
        if (take > sizeof(x->head) - 1 - x->hlen)
                take = sizeof(x->head) - 1 - x->hlen;
        memcpy(x->head + x->hlen, b->base, take);
        x->hlen += take;
        x->head[x->hlen] = '\0';
        if ((end = strstr(x->head, "\r\n\r\n")) != NULL) {
                size_t hl = (size_t)(end + 4 - x->head);
                size_t before = x->hlen - take; /* what the head held before this read */
                x->head[hl - 2] = '\0';
                head_parsed(x, b->base + (hl - before), (size_t)nread - (hl - before));
        } else if (x->hlen == sizeof(x->head) - 1) {
                x_err(x, "attach: the answer's head is too long");
                uv_read_stop(s);
                x_end(x);
        }
}

static void connected(uv_connect_t *r, int status)
{
        struct dk_exec *x = r->data;
        char req[sizeof(x->rt->ep.host) + 400];
        uv_buf_t b;
        uv_write_t *w;

        if (status < 0) {
                reach_error(x, "attach", uv_strerror(status));
                x_end(x);
                return;
        }
        x->conn_made = true;
        attach_head(x, "stdout=1&stderr=1&stdin=1", req, sizeof(req));
        w = malloc(sizeof(*w) + strlen(req));
        if (w == NULL) {
                x_err(x, "out of memory");
                x_end(x);
                return;
        }
        memcpy(w + 1, req, strlen(req));
        b = uv_buf_init((char *)(w + 1), (unsigned)strlen(req));
        w->data = x;
        x->refs++;
        if (uv_write(w, x->s, &b, 1, stdin_written) < 0 ||
            uv_read_start(x->s, conn_alloc, conn_read) < 0) {
                reach_error(x, "attach", "write failed");
                x_end(x);
        }
}

static void resolved(uv_getaddrinfo_t *g, int status, struct addrinfo *ai)
{
        struct dk_exec *x = g->data;

        if (x->ended) {
                /* killed meanwhile: nothing to connect */
        } else if (status < 0 || ai == NULL) {
                reach_error(x, "attach", uv_strerror(status < 0 ? status : UV_EAI_NONAME));
                x_end(x);
        } else {
                x->creq.data = x;
                if (uv_tcp_connect(&x->creq, &x->conn.tcp, ai->ai_addr, connected) < 0) {
                        reach_error(x, "attach", "connect failed");
                        x_end(x);
                }
        }
        uv_freeaddrinfo(ai);
        x_unref(x);
}

/* Over TLS libcurl carries the output's stream; stdin, if any, takes an
 * attach of its own (tls_stdin). */
static void tls_attach_head(struct dk_call *c)
{
        struct dk_exec *x = c->x;

        if (c->status == 200 || c->status == 101) {
                x->head_done = true;
                start(x);
        }
}

static void tls_attach_line(struct dk_call *c, const char *buf, size_t n)
{
        feed(c->x, buf, n);
}

static void tls_attach_done(struct dk_call *c, int status, const char *body, size_t n,
                            const char *err)
{
        struct dk_exec *x = c->x;

        x->attach_call = NULL;
        if (!x->head_done) {
                if (status != 0)
                        answer_error(x, "attach", status, body, n);
                else
                        reach_error(x, "attach", err);
                x_end(x);
                return;
        }
        attach_eof(x);
}

static void attach(struct dk_exec *x)
{
        struct docker_endpoint *ep = &x->rt->ep;
        uv_loop_t *loop = exec__rt_loop(x->e);
        char port[16], path[160];

        if (ep->tls) {
                snprintf(path, sizeof(path), "/containers/%s/attach?stream=1&stdout=1&stderr=1",
                         x->id);
                x->attach_call = api(x->rt, x, "POST", path, "", tls_attach_done);
                if (x->attach_call == NULL) {
                        x_err(x, "out of memory");
                        x_end(x);
                        return;
                }
                x->attach_call->head = tls_attach_head;
                x->attach_call->line = tls_attach_line;
                return;
        }
        x->creq.data = x;
        if (ep->unix_path[0] != '\0') {
                uv_pipe_init(loop, &x->conn.pipe, 0);
                x->s = (uv_stream_t *)&x->conn.pipe;
                x->s->data = x;
                x->refs++;
                uv_pipe_connect(&x->creq, &x->conn.pipe, ep->unix_path, connected);
                return;
        }
        uv_tcp_init(loop, &x->conn.tcp);
        x->s = (uv_stream_t *)&x->conn.tcp;
        x->s->data = x;
        x->refs++;
        snprintf(port, sizeof(port), "%d", ep->port);
        x->gai.data = x;
        x->refs++;
        if (uv_getaddrinfo(loop, &x->gai, resolved, ep->host, port, NULL) < 0) {
                x->refs--;
                reach_error(x, "attach", "cannot resolve the host");
                x_end(x);
        }
}

/* ---- create ---- */

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
static const char *seccomp_file(struct docker_rt *rt)
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
            (x->create = api(rt, x, "POST", "/containers/create", body, created)) == NULL) {
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
                x_end(x);
                return;
        }
        x_state(x, "created");
        attach(x);
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
        send_kill(x, atoi(c->arg));
}

static void send_kill(struct dk_exec *x, int sig)
{
        char path[200];

        if (!x->started || x->ended || x->removing)
                return; /* the flow sees has_pending at its next step */
        if (x->paused) {
                /* A paused container cannot be killed until thawed. */
                snprintf(path, sizeof(path), "/containers/%s/unpause", x->id);
                struct dk_call *c = api(x->rt, x, "POST", path, "", unpaused_then_kill);
                if (c != NULL)
                        snprintf(c->arg, sizeof(c->arg), "%d", sig);
                return;
        }
        snprintf(path, sizeof(path), "/containers/%s/kill?signal=%d", x->id, sig);
        api(x->rt, x, "POST", path, "", signalled);
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
            (x->create = api(rt, x, "POST", "/containers/create", pinned, created)) == NULL) {
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
                x_end(x);
        } else if (post_create(x, create_body) < 0) {
                x_err(x, "out of memory");
                x_end(x);
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
        x->create = api(x->rt, x, "GET", path, NULL, image_known);
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
                x_end(x);
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
        x_end(x);
}

static void dk_kill(struct exec *e, enum exec_reason why)
{
        struct dk_exec *x = exec__rt_priv(e);

        if (!x->has_pending) {
                x->has_pending = true;
                x->pending = why;
        }
        send_kill(x, SIGKILL);
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
        send_kill(x, sig);
        return 0;
}

static int dk_pause(struct exec *e, bool on)
{
        struct dk_exec *x = exec__rt_priv(e);
        char path[160];

        if (!x->started || x->ended || x->has_pending)
                return -ESRCH;
        snprintf(path, sizeof(path), "/containers/%s/%s", x->id, on ? "pause" : "unpause");
        if (api(x->rt, x, "POST", path, "", signalled) == NULL)
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
static void listed(struct dk_call *c, int status, const char *body, size_t n, const char *err)
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
                api(rt, NULL, "DELETE", path, NULL, swept_one);
        }
        json_decref(a);
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
            api(rt, NULL, "GET",
                "/containers/json?all=1&filters=%7B%22label%22%3A%5B%22proctor."
                "instance%22%5D%7D",
                NULL, listed);
        if (c == NULL) {
                snprintf(err, errlen,
                         "cannot load libcurl for the Docker Engine API (Debian/Ubuntu: libcurl4)");
                rt_free(rt);
                return -ELIBACC;
        }
        rt->version = api(rt, NULL, "GET", "/version", NULL, versioned);
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
