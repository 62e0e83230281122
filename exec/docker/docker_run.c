/* docker_run: one container of the Docker runtime once it is created:
 * the attach stream (a raw upgraded connection, or libcurl over TLS, its
 * frames demultiplexed), the start, the stdin, the wait, the stats and a
 * local engine's pids and OOM counters, the wall clock, and the end: the
 * container inspected, the exit classified and reported, the container
 * removed. */
#include "exec/docker/docker_int.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <jansson.h>

#define END_GRACE_MS 500 /* output still due once the wait answered */

/* ---- the execution's end ---- */

void x_state(struct dk_exec *x, const char *state)
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

void x_unref(struct dk_exec *x)
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
                dk_api(x->rt, x, "DELETE", path, NULL, removed);
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
void dk_x_end(struct dk_exec *x)
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
        if (dk_api(x->rt, x, "GET", path, NULL, inspected) == NULL) {
                x_err(x, "out of memory");
                report(x, NULL);
                x_remove(x);
        }
}

static void grace_over(uv_timer_t *t)
{
        dk_x_end(t->data);
}

static void maybe_end(struct dk_exec *x)
{
        if (!x->waited)
                return;
        if (x->attach_eof) {
                dk_x_end(x);
        } else if (!x->ended) {
                uv_timer_stop(&x->timer);
                uv_timer_start(&x->timer, grace_over, END_GRACE_MS, 0);
        }
}

/* ---- running ---- */

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
                dk_send_kill(x, SIGKILL);
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
                x->poll = dk_api(x->rt, x, "GET", path, NULL, polled);
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
        dk_send_kill(x, SIGKILL);
}

static void stdin_written(uv_write_t *w, int status)
{
        struct dk_exec *x = w->data;

        free(w);
        x_unref(x);
}

int conn_write(struct dk_exec *x, const char *data, size_t len)
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
        dk_send_kill(x, SIGKILL);
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
                dk_x_end(x);
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
                dk_send_kill(x, SIGKILL);
        } else if (l->timeout_ms > 0) {
                uv_timer_start(&x->timer, on_deadline, l->timeout_ms, 0);
        }
        x->polled_us = exec__rt_now_us(); /* the stream's first sample comes now */
        if ((l->pids > 0 || l->memory_bytes > 0) && x->rt->ep.unix_path[0] != '\0')
                uv_timer_start(&x->probe, pids_probe, 0, PIDS_PROBE_MS);
        else if (x->rt->podman)
                uv_timer_start(&x->probe, pids_probe, 0, 100);
        snprintf(path, sizeof(path), "/containers/%s/wait", x->id);
        x->wait = dk_api(x->rt, x, "POST", path, "", waited);
        snprintf(path, sizeof(path), "/containers/%s/stats?stream=true", x->id);
        if ((x->stats = dk_api(x->rt, x, "GET", path, NULL, stats_done)) != NULL)
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
                dk_x_end(x);
                return;
        }
        snprintf(path, sizeof(path), "/containers/%s/start", x->id);
        if ((x->start = dk_api(x->rt, x, "POST", path, "", started)) == NULL) {
                x_err(x, "out of memory");
                dk_x_end(x);
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
                dk_x_end(x);
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
                        dk_x_end(x);
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
                dk_x_end(x);
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
                dk_x_end(x);
                return;
        }
        x->conn_made = true;
        attach_head(x, "stdout=1&stderr=1&stdin=1", req, sizeof(req));
        w = malloc(sizeof(*w) + strlen(req));
        if (w == NULL) {
                x_err(x, "out of memory");
                dk_x_end(x);
                return;
        }
        memcpy(w + 1, req, strlen(req));
        b = uv_buf_init((char *)(w + 1), (unsigned)strlen(req));
        w->data = x;
        x->refs++;
        if (uv_write(w, x->s, &b, 1, stdin_written) < 0 ||
            uv_read_start(x->s, conn_alloc, conn_read) < 0) {
                reach_error(x, "attach", "write failed");
                dk_x_end(x);
        }
}

static void resolved(uv_getaddrinfo_t *g, int status, struct addrinfo *ai)
{
        struct dk_exec *x = g->data;

        if (x->ended) {
                /* killed meanwhile: nothing to connect */
        } else if (status < 0 || ai == NULL) {
                reach_error(x, "attach", uv_strerror(status < 0 ? status : UV_EAI_NONAME));
                dk_x_end(x);
        } else {
                x->creq.data = x;
                if (uv_tcp_connect(&x->creq, &x->conn.tcp, ai->ai_addr, connected) < 0) {
                        reach_error(x, "attach", "connect failed");
                        dk_x_end(x);
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
                dk_x_end(x);
                return;
        }
        attach_eof(x);
}

void dk_attach(struct dk_exec *x)
{
        struct docker_endpoint *ep = &x->rt->ep;
        uv_loop_t *loop = exec__rt_loop(x->e);
        char port[16], path[160];

        if (ep->tls) {
                snprintf(path, sizeof(path), "/containers/%s/attach?stream=1&stdout=1&stderr=1",
                         x->id);
                x->attach_call = dk_api(x->rt, x, "POST", path, "", tls_attach_done);
                if (x->attach_call == NULL) {
                        x_err(x, "out of memory");
                        dk_x_end(x);
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
                dk_x_end(x);
        }
}
