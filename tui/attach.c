/* attach: `proctor attach [--read-only] [ID]`, the live view of a session
 * running elsewhere, through its socket (core/session/ctl.h): its events
 * so far and as they come go into the view model as the session's own do,
 * and the operator's commands go back as the protocol's lines. Read-only,
 * it sends nothing after its request. Also the operator's commands of
 * every view: to the local session, or over the socket when attached. */
#include "tui/app.h"

#include <errno.h>
#include <locale.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "core/session/config.h"
#include "core/session/ctl_find.h"
#include "core/view/safetext.h"
#include "core/view/termout.h"
#include "tui/draw.h"
#include "tui/terminal.h"
#include "tui/tui.h"

#define LINE_MAX_BYTES (64u << 20) /* one event from the session */

struct attach {
        struct app *a;
        uv_pipe_t pipe;
        char id[128];
        bool read_only, ended, open;
        unsigned clients, clients_ro; /* attached now, as the session says */
        char *line;
        size_t len, cap;
        bool overlong;
};

/* ---- what comes from the session ---- */

static void on_line(struct attach *t, const char *line, size_t len)
{
        struct app *a = t->a;
        json_t *ev = json_loadb(line, len, 0, NULL);
        const char *type = json_string_value(json_object_get(ev, "type"));
        const struct viewmodel_session *vs;

        if (type == NULL) {
                json_decref(ev);
                return;
        }
        if (strcmp(type, "ctl.hello") == 0) {
                const char *id = json_string_value(json_object_get(ev, "session_id"));
                if (id != NULL)
                        snprintf(t->id, sizeof(t->id), "%s", id);
        } else if (strcmp(type, "ctl.history") == 0) {
                snprintf(a->status, sizeof(a->status),
                         "the session's history is long: its first %lld bytes are left out",
                         (long long)json_integer_value(json_object_get(ev, "skipped_bytes")));
        } else if (strcmp(type, "ctl.clients") == 0) {
                t->clients = (unsigned)json_integer_value(json_object_get(ev, "clients"));
                t->clients_ro = (unsigned)json_integer_value(json_object_get(ev, "read_only"));
        } else if (strcmp(type, "error") == 0) {
                const char *m = json_string_value(json_object_get(ev, "message"));
                char *safe = safetext_sanitize(m != NULL ? m : "?", m != NULL ? strlen(m) : 1, 0);
                snprintf(a->status, sizeof(a->status), "the session says: %.280s",
                         safe != NULL ? safe : "?");
                free(safe);
                if (a->approve.open)
                        snprintf(a->approve.err, sizeof(a->approve.err), "%s", a->status);
        } else {
                viewmodel_event(ev, a->vm);
                if (strcmp(type, "approval.request") == 0 && !t->read_only)
                        approve_request(a);
        }
        json_decref(ev);
        vs = viewmodel_session(a->vm);
        a->busy = vs != NULL && vs->state == VM_RUNNING && !t->ended;
        app_mark_dirty(a);
}

static void alloc_cb(uv_handle_t *h, size_t want, uv_buf_t *buf)
{
        (void)h;
        (void)want;
        buf->base = malloc(65536);
        buf->len = buf->base != NULL ? 65536 : 0;
}

static void ended(struct attach *t, const char *why)
{
        struct app *a = t->a;

        t->ended = true;
        a->busy = false;
        a->dialog = DIALOG_NONE;
        a->approve.open = false;
        a->typing = false;
        snprintf(a->status, sizeof(a->status), "%s: q quits", why);
        if (t->open) {
                uv_read_stop((uv_stream_t *)&t->pipe);
        }
        app_mark_dirty(a);
}

static void on_read(uv_stream_t *st, ssize_t n, const uv_buf_t *buf)
{
        struct attach *t = st->data;

        if (n < 0) {
                free(buf->base);
                ended(t, n == UV_EOF ? "the session ended" : "the session's socket failed");
                return;
        }
        for (ssize_t i = 0; i < n; i++) {
                char ch = buf->base[i];
                if (ch == '\n') {
                        if (!t->overlong && t->len > 0)
                                on_line(t, t->line, t->len);
                        t->len = 0;
                        t->overlong = false;
                        continue;
                }
                if (t->overlong)
                        continue;
                if (t->len + 1 > t->cap) {
                        size_t cap = t->cap ? t->cap * 2 : 4096;
                        char *g = cap > LINE_MAX_BYTES ? NULL : realloc(t->line, cap);
                        if (g == NULL) {
                                t->overlong = true; /* that event is lost */
                                continue;
                        }
                        t->line = g;
                        t->cap = cap;
                }
                t->line[t->len++] = ch;
        }
        free(buf->base);
}

/* ---- what goes to the session ---- */

static void written(uv_write_t *req, int status)
{
        (void)status;
        free(req);
}

/* One command line to the session; -EROFS for a read-only view, -EPIPE
 * once the session has ended. */
static int send_cmd(struct app *a, json_t *cmd)
{
        struct attach *t = a->att;
        char *text;
        uv_write_t *req;
        uv_buf_t b;
        size_t n;

        if (t->read_only || t->ended) {
                json_decref(cmd);
                return t->ended ? -EPIPE : -EROFS;
        }
        text = cmd != NULL ? json_dumps(cmd, JSON_COMPACT) : NULL;
        json_decref(cmd);
        if (text == NULL)
                return -ENOMEM;
        n = strlen(text);
        if ((req = malloc(sizeof(*req) + n + 1)) == NULL) {
                free(text);
                return -ENOMEM;
        }
        memcpy((char *)(req + 1), text, n);
        ((char *)(req + 1))[n] = '\n';
        free(text);
        b = uv_buf_init((char *)(req + 1), (unsigned)n + 1);
        if (uv_write(req, (uv_stream_t *)&t->pipe, &b, 1, written) < 0) {
                free(req);
                return -EPIPE;
        }
        return 0;
}

/* An execution the view model shows running: a command for another would
 * only come back as an error. */
static bool exec_live(struct app *a, uint64_t id)
{
        long k = viewmodel_exec_find(a->vm, id);

        return k >= 0 && viewmodel_exec_live(viewmodel_exec(a->vm, (size_t)k));
}

int app_kill_exec(struct app *a, uint64_t id)
{
        if (a->att == NULL)
                return a->s != NULL ? session_kill_exec(a->s, id) : -ESRCH;
        if (!exec_live(a, id))
                return -ESRCH;
        return send_cmd(a, json_pack("{s:s,s:I}", "type", "kill", "exec_id", (json_int_t)id));
}

int app_signal_exec(struct app *a, uint64_t id, int sig)
{
        if (a->att == NULL)
                return a->s != NULL ? session_signal_exec(a->s, id, sig) : -ESRCH;
        if (!exec_live(a, id))
                return -ESRCH;
        return send_cmd(a, json_pack("{s:s,s:I,s:i}", "type", "signal", "exec_id", (json_int_t)id,
                                     "signal", sig));
}

int app_pause_exec(struct app *a, uint64_t id, bool resume)
{
        if (a->att == NULL)
                return resume ? session_resume_exec(a->s, id) : session_pause_exec(a->s, id);
        if (!exec_live(a, id))
                return -ESRCH;
        return send_cmd(a, json_pack("{s:s,s:I}", "type", resume ? "resume" : "pause", "exec_id",
                                     (json_int_t)id));
}

void app_interrupt(struct app *a)
{
        if (a->att == NULL)
                session_interrupt(a->s);
        else
                send_cmd(a, json_pack("{s:s}", "type", "interrupt"));
}

unsigned app_kill_all(struct app *a, unsigned *cancelled)
{
        unsigned n = 0;

        if (a->att == NULL)
                return session_kill_all(a->s, cancelled);
        /* attached: a kill for each running execution; the queued calls
         * are the session's own to cancel */
        if (cancelled != NULL)
                *cancelled = 0;
        for (size_t i = 0; i < viewmodel_nexecs(a->vm); i++) {
                const struct viewmodel_exec *e = viewmodel_exec(a->vm, i);
                if (viewmodel_exec_live(e) &&
                    send_cmd(a, json_pack("{s:s,s:I}", "type", "kill", "exec_id",
                                          (json_int_t)e->id)) == 0)
                        n++;
        }
        return n;
}

int app_approve(struct app *a, const char *call_id, bool allow, const char *reason,
                const char *args, const char *rule, char *err, size_t errlen)
{
        int rc;

        if (a->att == NULL)
                return session_approve(a->s, call_id, allow, "operator", reason, args, rule, err,
                                       errlen);
        rc = send_cmd(a, json_pack("{s:s,s:s,s:s,s:s?,s:s?,s:s?}", "type", "approval.decision",
                                   "call_id", call_id, "decision", allow ? "allow" : "deny",
                                   "reason", reason, "arguments", args, "rule", rule));
        if (rc < 0)
                snprintf(err, errlen, "not sent: %s",
                         rc == -EROFS ? "this view is read-only" : "the session has ended");
        return rc;
}

bool app_sends_nothing(const struct app *a)
{
        return a->replay || (a->att != NULL && (a->att->read_only || a->att->ended));
}

/* ---- the attached view ---- */

void attach_submit(struct app *a)
{
        char *text = prompt_take(&a->prompt);
        int rc;

        if (text == NULL)
                return;
        rc = send_cmd(a, json_pack("{s:s,s:s}", "type", "prompt", "text", text));
        free(text);
        a->typing = false;
        snprintf(a->status, sizeof(a->status), "%s",
                 rc == 0 ? "follow-up sent to the session" : "the follow-up was not sent");
}

bool attach_key(struct app *a, wint_t ch)
{
        struct attach *t = a->att;
        bool escape = ch == 27 && !a->detail.open &&
                      !(a->focus != PANE_TRANSCRIPT && a->lists[a->focus].filter[0] != '\0');

        switch (ch) {
        case 'q':
                app_quit(a, 0); /* detaches: the session goes on */
                return true;
        case 'm':
        case 'n':
                snprintf(a->status, sizeof(a->status),
                         "attached: the mode and new sessions are the session's own");
                return true;
        case 'k':
        case 'K':
        case 'p':
        case 'i':
        case 'A':
                break;
        default:
                if (!escape)
                        return false;
        }
        if (t->read_only)
                snprintf(a->status, sizeof(a->status), "read-only: nothing is sent");
        else if (t->ended)
                snprintf(a->status, sizeof(a->status), "the session has ended: q quits");
        else
                return false;
        return true;
}

void attach_describe(const struct app *a, char *out, size_t len)
{
        const struct attach *t = a->att;
        int n = snprintf(out, len, "attached to %s%s", t->id, t->read_only ? " (read-only)" : "");

        if (n < 0 || (size_t)n >= len)
                return;
        if (t->ended)
                snprintf(out + n, len - (size_t)n, ": the session ended");
        else if (t->clients > 1)
                snprintf(out + n, len - (size_t)n, ", %u watching", t->clients);
}

/* ---- the command ---- */

static const char usage[] = "usage: proctor attach [--read-only] [--theme NAME|PATH] "
                            "[--no-color] [ID]\n";

static void print_help(void)
{
        printf("%s\n"
               "Opens the supervisor's live view on a running session of this user (the\n"
               "newest when no ID is given; proctor ls lists them), with its history so\n"
               "far. Its keys act on the session as in its own view: k kill, p pause,\n"
               "Esc interrupt, i follow-up, A approvals. q leaves the view; the session\n"
               "goes on.\n\n"
               "options:\n"
               "  --read-only                 a view that sends nothing: scroll, search and\n"
               "                              details only (for an audience, a second on-call)\n"
               "%s"
               "  --config FILE               config file (its theme)\n"
               "  -h, --help                  show this help\n",
               usage, options_help_screen);
}

/* The newest live session's id (by started_ms): 0, or -ENOENT. */
static int newest(char *id, size_t len, char *err, size_t errlen)
{
        json_t *all, *s, *best = NULL;
        size_t i;
        int rc;

        if ((rc = ctl_find_all(&all, err, errlen)) < 0)
                return rc;
        json_array_foreach (all, i, s)
                if (json_is_integer(json_object_get(s, "started_ms")) &&
                    json_is_string(json_object_get(s, "session_id")) &&
                    (best == NULL || json_integer_value(json_object_get(s, "started_ms")) >=
                                         json_integer_value(json_object_get(best, "started_ms"))))
                        best = s;
        if (best == NULL) {
                snprintf(err, errlen, "no live session to attach to (proctor ls lists them)");
                json_decref(all);
                return -ENOENT;
        }
        snprintf(id, len, "%s", json_string_value(json_object_get(best, "session_id")));
        json_decref(all);
        return 0;
}

/* Connects and asks to attach: the socket, or -errno with err. */
static int dial(const char *id, bool read_only, char *err, size_t errlen)
{
        struct sockaddr_un sa = {.sun_family = AF_UNIX};
        char path[sizeof(sa.sun_path)], req[64];
        int fd, rc, n;

        if ((rc = ctl_socket_path(id, path, sizeof(path), err, errlen)) < 0)
                return rc;
        memcpy(sa.sun_path, path, strlen(path) + 1);
        if ((fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0)) < 0 ||
            connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
                rc = -errno;
                snprintf(err, errlen, "%s",
                         rc == -ENOENT || rc == -ECONNREFUSED
                             ? "no live session has that id (proctor ls lists them)"
                             : strerror(-rc));
                if (fd >= 0)
                        close(fd);
                return rc;
        }
        n = snprintf(req, sizeof(req), "{\"type\":\"attach\",\"read_only\":%s}\n",
                     read_only ? "true" : "false");
        if (write(fd, req, (size_t)n) != n) {
                rc = -errno;
                snprintf(err, errlen, "the session did not take the request: %s", strerror(errno));
                close(fd);
                return rc;
        }
        return fd;
}

int tui_attach_main(int argc, char **argv)
{
        struct app a;
        struct attach t;
        uv_loop_t loop;
        char err[512], **rest;
        const char *id = NULL;
        int i, n = 0, fd, rc;

        memset(&a, 0, sizeof(a));
        memset(&t, 0, sizeof(t));
        setlocale(LC_ALL, "");
        if (config_resolve(argc, argv, &a.o, err, sizeof(err)) < 0) {
                termout_message(stderr, "proctor attach: %s\n%s", err, usage);
                return 2;
        }
        /* the id may come before the options or after them */
        if (a.o.argi < argc && !a.o.help) {
                if ((rest = calloc((size_t)argc + 1, sizeof(*rest))) == NULL)
                        return 1;
                for (i = 0; i < argc; i++)
                        if (i != a.o.argi)
                                rest[n++] = argv[i];
                id = argv[a.o.argi];
                rc = config_resolve(n, rest, &a.o, err, sizeof(err));
                free(rest);
                if (rc < 0 || a.o.argi < n) {
                        termout_message(stderr, "proctor attach: %s\n%s",
                                        rc < 0 ? err : "give one session id at most", usage);
                        return 2;
                }
        }
        if (a.o.help) {
                print_help();
                return 0;
        }
        if (id == NULL && newest(t.id, sizeof(t.id), err, sizeof(err)) < 0) {
                termout_message(stderr, "proctor attach: %s\n", err);
                return 1;
        }
        if (id != NULL)
                snprintf(t.id, sizeof(t.id), "%s", id);
        t.read_only = a.o.read_only;
        if ((fd = dial(t.id, t.read_only, err, sizeof(err))) < 0) {
                termout_message(stderr, "proctor attach: %s: %s\n", t.id, err);
                return 2;
        }
        if (terminal_check(err, sizeof(err)) < 0) {
                fprintf(stderr, "proctor attach: %s\n", err);
                close(fd);
                return 2;
        }
        uv_loop_init(&loop);
        a.loop = &loop;
        a.att = &t;
        t.a = &a;
        a.screen = SCREEN_LIVE;
        a.vm = viewmodel_new();
        app_reset_view(&a);
        app_find_themes_dir(&a);
        a.nthemes = theme_list(a.themes_dir, a.themes, THEME_LIST_MAX);
        theme_open(a.o.theme, a.themes_dir, &a.theme, err, sizeof(err));
        uv_pipe_init(&loop, &t.pipe, 0);
        t.pipe.data = &t;
        if ((rc = uv_pipe_open(&t.pipe, fd)) < 0 ||
            (rc = uv_read_start((uv_stream_t *)&t.pipe, alloc_cb, on_read)) < 0) {
                fprintf(stderr, "proctor attach: %s\n", uv_strerror(rc));
                close(fd);
                uv_close((uv_handle_t *)&t.pipe, NULL);
                uv_run(&loop, UV_RUN_DEFAULT);
                uv_loop_close(&loop);
                viewmodel_free(a.vm);
                return 2;
        }
        t.open = true;
        app_current = &a;
        app_start_terminal(&a);
        draw_frame(&a);
        uv_run(&loop, UV_RUN_DEFAULT);
        app_close_terminal(&a);
        uv_close((uv_handle_t *)&t.pipe, NULL); /* detached: the session goes on */
        uv_run(&loop, UV_RUN_DEFAULT);
        uv_loop_close(&loop);
        detail_close(&a);
        draw_forget(&a);
        approve_free(&a);
        prompt_free(&a.prompt);
        viewmodel_free(a.vm);
        free(t.line);
        app_current = NULL;
        return a.exit_code;
}
