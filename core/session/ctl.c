/* ctl: the session socket (see ctl.h). Everything on the session's loop:
 * clients are libuv pipes, their lines are read with a bound, and what is
 * written to a slow one queues until its bound cuts it off. */
#include "core/session/ctl.h"

#include <errno.h>
#include <limits.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/un.h>
#include <unistd.h>

#include "core/session/trace.h"
#include "core/util/linebuf.h"

#define LINE_MAX_BYTES (1u << 20) /* one command from a client */

enum client_mode { C_NEW, C_ATTACHED };

struct client {
        struct ctl *ctl;
        uv_pipe_t pipe;
        struct client *next;
        enum client_mode mode;
        bool read_only, closing;
        struct linebuf in; /* the client's commands, a line each */
};

struct live_exec {
        uint64_t id;
        double cpu_pct;
        uint64_t mem_bytes;
};

struct ctl {
        uv_loop_t *loop;
        struct bus *bus;
        struct session *s;
        struct ctl_hooks hooks;
        char kind[16];
        char *trace;
        uv_pipe_t srv;
        char path[sizeof(((struct sockaddr_un *)0)->sun_path)];
        bool listening, closing;
        unsigned handles; /* the server's and each client's */
        struct client *clients;
        int64_t started_ms;
        struct live_exec *live;
        size_t nlive, live_cap;
        bool telling, tell_again; /* sending ctl.clients (a send may close one) */
};

static int64_t wall_ms(void)
{
        struct timeval tv;

        gettimeofday(&tv, NULL);
        return (int64_t)tv.tv_sec * 1000 + tv.tv_usec / 1000;
}

int ctl_dir(char *buf, size_t len, char *err, size_t errlen)
{
        const char *rt = getenv("XDG_RUNTIME_DIR");
        struct stat st;
        int n;

        if (rt != NULL && rt[0] == '/' && stat(rt, &st) == 0 && S_ISDIR(st.st_mode) &&
            st.st_uid == getuid())
                n = snprintf(buf, len, "%s/proctor", rt);
        else
                n = snprintf(buf, len, "/tmp/proctor-%u", (unsigned)getuid());
        if (n < 0 || (size_t)n >= len) {
                snprintf(err, errlen, "the sessions' socket directory's path is too long");
                return -ENAMETOOLONG;
        }
        if (mkdir(buf, 0700) < 0 && errno != EEXIST) {
                int rc = -errno;
                snprintf(err, errlen, "cannot make %s: %s", buf, strerror(errno));
                return rc;
        }
        if (lstat(buf, &st) < 0) {
                int rc = -errno;
                snprintf(err, errlen, "%s: %s", buf, strerror(errno));
                return rc;
        }
        /* another user could have made it first, in /tmp */
        if (!S_ISDIR(st.st_mode) || st.st_uid != getuid() || (st.st_mode & 077) != 0) {
                snprintf(err, errlen,
                         "%s is not a private directory of this user (it must be a directory, "
                         "owned by uid %u, mode 0700): sessions cannot be reached",
                         buf, (unsigned)getuid());
                return -EPERM;
        }
        return 0;
}

/* ---- writing to clients ---- */

static void client_closed(uv_handle_t *h)
{
        struct client *c = h->data;
        struct ctl *ctl = c->ctl;

        linebuf_free(&c->in);
        free(c);
        if (--ctl->handles == 0)
                free(ctl);
}

static void tell_clients(struct ctl *ctl);

static void client_close(struct client *c)
{
        struct client **p;

        if (c->closing)
                return;
        c->closing = true;
        for (p = &c->ctl->clients; *p != NULL; p = &(*p)->next)
                if (*p == c) {
                        *p = c->next;
                        break;
                }
        uv_close((uv_handle_t *)&c->pipe, client_closed);
        if (c->mode == C_ATTACHED && !c->ctl->closing)
                tell_clients(c->ctl);
}

static void finished(uv_shutdown_t *req, int status)
{
        struct client *c = req->data;

        (void)status;
        free(req);
        client_close(c);
}

/* Ends the client once what is queued for it is written. */
static void client_finish(struct client *c)
{
        uv_shutdown_t *req = malloc(sizeof(*req));

        uv_read_stop((uv_stream_t *)&c->pipe);
        if (req == NULL) {
                client_close(c);
                return;
        }
        req->data = c;
        if (uv_shutdown(req, (uv_stream_t *)&c->pipe, finished) < 0) {
                free(req);
                client_close(c);
        }
}

struct wreq {
        uv_write_t req;
        char data[];
};

static void written(uv_write_t *req, int status)
{
        (void)status;
        free(req);
}

/* Queues bytes for the client, or cuts it off when its backlog would pass
 * the bound: the session never waits for a client. */
static void client_send(struct client *c, const char *buf, size_t n)
{
        struct wreq *w;
        uv_buf_t b;

        if (c->closing)
                return;
        if (uv_stream_get_write_queue_size((uv_stream_t *)&c->pipe) + n > CTL_BACKLOG_MAX) {
                client_close(c);
                return;
        }
        if ((w = malloc(sizeof(*w) + n)) == NULL) {
                client_close(c);
                return;
        }
        memcpy(w->data, buf, n);
        b = uv_buf_init(w->data, (unsigned)n);
        if (uv_write(&w->req, (uv_stream_t *)&c->pipe, &b, 1, written) < 0) {
                free(w);
                client_close(c);
        }
}

static void send_json(struct client *c, json_t *o)
{
        char *text = o != NULL ? json_dumps(o, JSON_COMPACT) : NULL;

        if (text != NULL) {
                size_t n = strlen(text);
                text[n] = '\n';
                client_send(c, text, n + 1);
        }
        free(text);
        json_decref(o);
}

static void send_error(struct client *c, const char *message)
{
        send_json(c, json_pack("{s:s,s:s}", "type", "error", "message", message));
}

/* A client attached or left: every attached one is told how many there
 * are now, and the front end too. A send that cuts a client off comes
 * back here: the count is sent again once this round is over. */
static void tell_clients(struct ctl *ctl)
{
        if (ctl->telling) {
                ctl->tell_again = true;
                return;
        }
        ctl->telling = true;
        do {
                unsigned ro, n = ctl_clients(ctl, &ro);
                ctl->tell_again = false;
                for (struct client *c = ctl->clients, *next; c != NULL; c = next) {
                        next = c->next;
                        if (c->mode == C_ATTACHED)
                                send_json(c, json_pack("{s:s,s:i,s:i}", "type", "ctl.clients",
                                                       "clients", (int)n, "read_only", (int)ro));
                }
        } while (ctl->tell_again);
        ctl->telling = false;
        if (ctl->hooks.clients != NULL)
                ctl->hooks.clients(ctl->hooks.ud);
}

/* ---- what the session is doing ---- */

static struct live_exec *live_find(struct ctl *ctl, uint64_t id)
{
        for (size_t i = 0; i < ctl->nlive; i++)
                if (ctl->live[i].id == id)
                        return &ctl->live[i];
        return NULL;
}

static void track(struct ctl *ctl, const json_t *ev, const char *type)
{
        uint64_t id = (uint64_t)json_integer_value(json_object_get(ev, "exec_id"));
        struct live_exec *e;

        if (strcmp(type, "exec.start") == 0 && live_find(ctl, id) == NULL) {
                if (ctl->nlive == ctl->live_cap) {
                        size_t cap = ctl->live_cap ? ctl->live_cap * 2 : 8;
                        struct live_exec *g = realloc(ctl->live, cap * sizeof(*g));
                        if (g == NULL)
                                return;
                        ctl->live = g;
                        ctl->live_cap = cap;
                }
                ctl->live[ctl->nlive++] = (struct live_exec){id, 0, 0};
        } else if (strcmp(type, "exec.stats") == 0 && (e = live_find(ctl, id)) != NULL) {
                e->cpu_pct = json_number_value(json_object_get(ev, "cpu_pct"));
                e->mem_bytes = (uint64_t)json_integer_value(json_object_get(ev, "mem_bytes"));
        } else if ((strcmp(type, "exec.exit") == 0 || strcmp(type, "exec.remove") == 0) &&
                   (e = live_find(ctl, id)) != NULL) {
                *e = ctl->live[--ctl->nlive];
        }
}

static json_t *status_json(struct ctl *ctl)
{
        const struct agent_totals *t = session_totals(ctl->s);
        unsigned waiting = session_waiting(ctl->s), clients = ctl_clients(ctl, NULL);
        double cpu = 0;
        uint64_t mem = 0;
        char state[48];

        for (size_t i = 0; i < ctl->nlive; i++) {
                cpu += ctl->live[i].cpu_pct;
                mem += ctl->live[i].mem_bytes;
        }
        if (!session_started(ctl->s))
                snprintf(state, sizeof(state), "setup");
        else if (waiting > 0)
                snprintf(state, sizeof(state), "waiting for approval");
        else if (ctl->nlive > 0)
                snprintf(state, sizeof(state), "running %zu", ctl->nlive);
        else if (session_busy(ctl->s))
                snprintf(state, sizeof(state), "thinking");
        else
                snprintf(state, sizeof(state), "idle");
        return json_pack("{s:s,s:s,s:i,s:I,s:s,s:s,s:s,s:s,s:I,s:s,s:i,s:i,s:f,s:I,s:i,s:s?}",
                         "type", "status", "session_id", session_id(ctl->s), "pid", (int)getpid(),
                         "started_ms", (json_int_t)ctl->started_ms, "kind", ctl->kind, "mode",
                         session_mode(ctl->s) == EXEC_SANDBOX ? "sandbox" : "local", "model",
                         session_model_label(ctl->s), "workspace", session_workspace(ctl->s),
                         "turn", (json_int_t)(t != NULL ? t->turns : 0), "state", state,
                         "executions", (int)ctl->nlive, "waiting", (int)waiting, "cpu_pct", cpu,
                         "mem_bytes", (json_int_t)mem, "clients", (int)clients, "trace",
                         ctl->trace);
}

/* ---- events to attached clients ---- */

static void on_event(const json_t *ev, void *ud)
{
        struct ctl *ctl = ud;
        const char *type = json_string_value(json_object_get(ev, "type"));
        json_t *clean;
        char *text;
        size_t n;

        if (type == NULL)
                return;
        track(ctl, ev, type);
        if (ctl->clients == NULL || (clean = trace_redacted(ev)) == NULL)
                return;
        text = json_dumps(clean, JSON_COMPACT);
        json_decref(clean);
        if (text == NULL)
                return;
        n = strlen(text);
        text[n] = '\n';
        for (struct client *c = ctl->clients, *next; c != NULL; c = next) {
                next = c->next;
                if (c->mode == C_ATTACHED)
                        client_send(c, text, n + 1);
        }
        free(text);
}

/* The events so far, from the trace: its last CTL_BACKLOG_MAX / 2 bytes
 * when it is longer (a ctl.history line says how much was left out). */
static void send_history(struct client *c)
{
        struct ctl *ctl = c->ctl;
        size_t cap = CTL_BACKLOG_MAX / 2, n = 0;
        char *buf;
        off_t size, from = 0;
        ssize_t r;
        int fd;

        if (ctl->trace == NULL || (fd = open(ctl->trace, O_RDONLY | O_CLOEXEC)) < 0)
                return;
        size = lseek(fd, 0, SEEK_END);
        if (size > (off_t)cap)
                from = size - (off_t)cap;
        if (size <= 0 || (buf = malloc(cap)) == NULL) {
                close(fd);
                return;
        }
        while (n < cap && (r = pread(fd, buf + n, cap - n, from + (off_t)n)) > 0)
                n += (size_t)r;
        close(fd);
        size_t start = 0;
        if (from > 0) {
                /* from the first whole line */
                while (start < n && buf[start] != '\n')
                        start++;
                start++;
                send_json(c, json_pack("{s:s,s:b,s:I}", "type", "ctl.history", "truncated", 1,
                                       "skipped_bytes", (json_int_t)(from + (off_t)start)));
        }
        /* only whole lines: the last may be mid-write elsewhere, never here */
        while (n > start && buf[n - 1] != '\n')
                n--;
        if (n > start)
                client_send(c, buf + start, n - start);
        free(buf);
}

/* ---- commands ---- */

static int exec_id_of(struct client *c, const json_t *cmd, uint64_t *id)
{
        json_t *v = json_object_get(cmd, "exec_id");

        if (!json_is_integer(v) || json_integer_value(v) <= 0) {
                send_error(c, "this command needs exec_id, a positive integer");
                return -EINVAL;
        }
        *id = (uint64_t)json_integer_value(v);
        return 0;
}

static void command(struct client *c, const json_t *cmd, const char *type)
{
        struct ctl *ctl = c->ctl;
        char err[600];
        uint64_t id;
        int rc = 0;

        if (c->read_only) {
                send_error(c, "this client attached read-only: it sends no commands");
                return;
        }
        if (strcmp(type, "kill") == 0 || strcmp(type, "pause") == 0 ||
            strcmp(type, "resume") == 0 || strcmp(type, "signal") == 0) {
                if (exec_id_of(c, cmd, &id) < 0)
                        return;
                if (strcmp(type, "kill") == 0)
                        rc = session_kill_exec(ctl->s, id);
                else if (strcmp(type, "pause") == 0)
                        rc = session_pause_exec(ctl->s, id);
                else if (strcmp(type, "resume") == 0)
                        rc = session_resume_exec(ctl->s, id);
                else
                        rc = session_signal_exec(
                            ctl->s, id, (int)json_integer_value(json_object_get(cmd, "signal")));
                if (rc < 0) {
                        snprintf(err, sizeof(err), "%s of execution %llu: %s", type,
                                 (unsigned long long)id,
                                 rc == -ESRCH      ? "no such execution runs"
                                 : rc == -EALREADY ? "it already is"
                                                   : strerror(-rc));
                        send_error(c, err);
                }
        } else if (strcmp(type, "interrupt") == 0) {
                session_interrupt(ctl->s);
        } else if (strcmp(type, "prompt") == 0) {
                const char *text = json_string_value(json_object_get(cmd, "text"));
                if (text == NULL || text[0] == '\0')
                        send_error(c, "a prompt needs text");
                else if (ctl->hooks.prompt == NULL)
                        send_error(c, "this session takes no prompt from clients (proctor run "
                                      "ends with its own prompt)");
                else if (ctl->hooks.prompt(ctl->hooks.ud, text, err, sizeof(err)) < 0)
                        send_error(c, err);
        } else if (strcmp(type, "approval.decision") == 0) {
                const char *id_s = json_string_value(json_object_get(cmd, "call_id"));
                const char *d = json_string_value(json_object_get(cmd, "decision"));
                if (id_s == NULL || d == NULL ||
                    (strcmp(d, "allow") != 0 && strcmp(d, "deny") != 0)) {
                        send_error(c, "an approval.decision needs call_id and decision (allow "
                                      "or deny)");
                        return;
                }
                if (session_approve(ctl->s, id_s, strcmp(d, "allow") == 0, "operator",
                                    json_string_value(json_object_get(cmd, "reason")),
                                    json_string_value(json_object_get(cmd, "arguments")),
                                    json_string_value(json_object_get(cmd, "rule")), err,
                                    sizeof(err)) < 0)
                        send_error(c, err);
        } else {
                snprintf(err, sizeof(err), "unknown command '%.40s'", type);
                send_error(c, err);
        }
}

static void on_line(struct client *c, const char *line)
{
        json_t *cmd = json_loads(line, 0, NULL);
        const char *type = json_string_value(json_object_get(cmd, "type"));

        if (type == NULL) {
                send_error(c, "not a JSON object with a type");
        } else if (c->mode == C_NEW && strcmp(type, "status") == 0) {
                send_json(c, status_json(c->ctl));
                client_finish(c); /* once the status is written */
        } else if (c->mode == C_NEW && strcmp(type, "attach") == 0) {
                c->read_only = json_is_true(json_object_get(cmd, "read_only"));
                c->mode = C_ATTACHED;
                send_json(c, json_pack("{s:s,s:s,s:i,s:s,s:b,s:s?}", "type", "ctl.hello",
                                       "session_id", session_id(c->ctl->s), "pid", (int)getpid(),
                                       "kind", c->ctl->kind, "read_only", c->read_only, "trace",
                                       c->ctl->trace));
                send_history(c);
                tell_clients(c->ctl);
        } else if (c->mode == C_NEW) {
                send_error(c, "say first what you want: {\"type\":\"status\"} or "
                              "{\"type\":\"attach\"}");
        } else {
                command(c, cmd, type);
        }
        json_decref(cmd);
}

static bool client_line(void *ud, char *line)
{
        struct client *c = ud;

        if (line == NULL)
                send_error(c, "a line longer than 1 MiB: dropped");
        else if (line[0] != '\0')
                on_line(c, line);
        return !c->closing;
}

static void alloc_cb(uv_handle_t *h, size_t want, uv_buf_t *buf)
{
        (void)want;
        (void)h;
        buf->base = malloc(16384);
        buf->len = buf->base != NULL ? 16384 : 0;
}

static void on_read(uv_stream_t *st, ssize_t n, const uv_buf_t *buf)
{
        struct client *c = st->data;

        if (n < 0) {
                free(buf->base);
                client_close(c);
                return;
        }
        linebuf_feed(&c->in, buf->base, (size_t)n, client_line, c);
        free(buf->base);
}

/* The same user, or root: who else could reach the directory is checked
 * again here, at the socket itself. */
static bool peer_allowed(uv_pipe_t *p)
{
        struct ucred cred;
        socklen_t len = sizeof(cred);
        uv_os_fd_t fd;

        if (uv_fileno((uv_handle_t *)p, &fd) < 0 ||
            getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) < 0)
                return false;
        return cred.uid == getuid() || cred.uid == 0;
}

static void on_connect(uv_stream_t *srv, int status)
{
        struct ctl *ctl = srv->data;
        struct client *c;

        if (status < 0 || ctl->closing || (c = calloc(1, sizeof(*c))) == NULL)
                return;
        c->ctl = ctl;
        c->in.max = LINE_MAX_BYTES;
        uv_pipe_init(ctl->loop, &c->pipe, 0);
        c->pipe.data = c;
        ctl->handles++;
        if (uv_accept(srv, (uv_stream_t *)&c->pipe) < 0 || !peer_allowed(&c->pipe)) {
                c->closing = true;
                uv_close((uv_handle_t *)&c->pipe, client_closed);
                return;
        }
        c->next = ctl->clients;
        ctl->clients = c;
        uv_read_start((uv_stream_t *)&c->pipe, alloc_cb, on_read);
}

unsigned ctl_clients(const struct ctl *c, unsigned *read_only)
{
        unsigned n = 0, ro = 0;

        for (const struct client *p = c != NULL ? c->clients : NULL; p != NULL; p = p->next) {
                n += p->mode == C_ATTACHED;
                ro += p->mode == C_ATTACHED && p->read_only;
        }
        if (read_only != NULL)
                *read_only = ro;
        return n;
}

static void server_closed(uv_handle_t *h)
{
        struct ctl *ctl = h->data;

        free(ctl->trace);
        free(ctl->live);
        ctl->trace = NULL;
        ctl->live = NULL;
        if (--ctl->handles == 0)
                free(ctl);
}

int ctl_open(uv_loop_t *loop, struct bus *bus, struct session *s, const char *kind,
             const char *trace_path, const struct ctl_hooks *hooks, struct ctl **out, char *err,
             size_t errlen)
{
        struct ctl *ctl = calloc(1, sizeof(*ctl));
        char dir[PATH_MAX > sizeof(ctl->path) ? PATH_MAX : sizeof(ctl->path)];
        int rc, n;

        if (ctl == NULL)
                return -ENOMEM;
        if ((rc = ctl_dir(dir, sizeof(dir), err, errlen)) < 0) {
                free(ctl);
                return rc;
        }
        n = snprintf(ctl->path, sizeof(ctl->path), "%s/%s.sock", dir, session_id(s));
        if (n < 0 || (size_t)n >= sizeof(ctl->path)) {
                snprintf(err, errlen, "the session's socket path under %s is too long", dir);
                free(ctl);
                return -ENAMETOOLONG;
        }
        ctl->loop = loop;
        ctl->bus = bus;
        ctl->s = s;
        ctl->started_ms = wall_ms();
        snprintf(ctl->kind, sizeof(ctl->kind), "%s", kind);
        if (hooks != NULL)
                ctl->hooks = *hooks;
        /* a client's cwd is not this one's: an absolute path */
        ctl->trace = trace_path == NULL ? NULL
                     : trace_path[0] == '/' || realpath(trace_path, dir) == NULL
                         ? strdup(trace_path)
                         : strdup(dir);
        uv_pipe_init(loop, &ctl->srv, 0);
        ctl->srv.data = ctl;
        ctl->handles = 1;
        unlink(ctl->path); /* a stale one of a dead process with this id */
        if ((rc = uv_pipe_bind(&ctl->srv, ctl->path)) < 0 ||
            (rc = uv_listen((uv_stream_t *)&ctl->srv, 16, on_connect)) < 0) {
                snprintf(err, errlen, "cannot listen on %s: %s", ctl->path, uv_strerror(rc));
                ctl->closing = true;
                unlink(ctl->path);
                /* freed once the handle is closed (run the loop) */
                uv_close((uv_handle_t *)&ctl->srv, server_closed);
                return rc;
        }
        chmod(ctl->path, 0600);
        ctl->listening = true;
        bus_subscribe(bus, on_event, ctl);
        *out = ctl;
        return 0;
}

void ctl_close(struct ctl *ctl)
{
        if (ctl == NULL || ctl->closing)
                return;
        ctl->closing = true;
        bus_unsubscribe(ctl->bus, on_event, ctl);
        unlink(ctl->path);
        while (ctl->clients != NULL)
                client_close(ctl->clients);
        uv_close((uv_handle_t *)&ctl->srv, server_closed);
}
