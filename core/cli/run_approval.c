/* run_approval: a headless session's answers to approval requests (see
 * run_approval.h). Requests are queued as their events pass on the bus and
 * answered from the loop (a zero timer), never from inside an event. */
#include "core/cli/run_approval.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/session/approval.h"
#include "core/util/linebuf.h"
#include "core/view/termout.h"

#define LINE_MAX_BYTES (1u << 20) /* one line of stdin: a decision, an answer */

struct pending {
        char *id, *tool, *args, *where, *asked_by;
        struct pending *next;
};

enum stage { ASK_NONE, ASK_CHOICE, ASK_REASON, ASK_RULE };

struct run_approval {
        uv_loop_t *loop;
        struct bus *bus;
        struct session *s;
        bool json;
        union {
                uv_handle_t h;
                uv_stream_t stream;
                uv_tty_t tty;
                uv_pipe_t pipe;
        } in;
        bool in_open, eof, closing;
        uv_timer_t kick;
        struct pending *head;
        enum stage stage;
        char *suggest;        /* the rule "always" would add */
        struct linebuf lines; /* stdin, a line at a time */
        unsigned handles;     /* open: kick and in */
};

static void pending_free(struct pending *p)
{
        free(p->id);
        free(p->tool);
        free(p->args);
        free(p->where);
        free(p->asked_by);
        free(p);
}

static const char *str(const json_t *o, const char *key)
{
        const char *v = json_string_value(json_object_get(o, key));

        return v != NULL ? v : "";
}

static void emit_error(struct run_approval *ra, const char *message, const char *line)
{
        json_t *ev = json_pack("{s:s}", "message", message);

        if (line != NULL)
                json_object_set_new(ev, "line",
                                    bus_string(line, strlen(line) > 200 ? 200 : strlen(line)));
        bus_emit(ra->bus, "error", ev);
}

static void on_kick(uv_timer_t *t);

static void kick(struct run_approval *ra)
{
        if (!ra->closing)
                uv_timer_start(&ra->kick, on_kick, 0, 0);
}

static void on_event(const json_t *ev, void *ud)
{
        struct run_approval *ra = ud;
        const char *type = str(ev, "type");

        if (strcmp(type, "approval.request") == 0) {
                struct pending *p = calloc(1, sizeof(*p)), **t;
                if (p == NULL)
                        return;
                p->id = strdup(str(ev, "call_id"));
                p->tool = strdup(str(ev, "tool"));
                p->args = strdup(str(ev, "arguments"));
                p->where = strdup(str(ev, "where"));
                p->asked_by = strdup(str(ev, "asked_by"));
                for (t = &ra->head; *t != NULL; t = &(*t)->next)
                        ;
                *t = p;
                kick(ra);
        } else if (strcmp(type, "approval.decision") == 0) {
                const char *id = str(ev, "call_id");
                for (struct pending **t = &ra->head; *t != NULL; t = &(*t)->next) {
                        if (strcmp((*t)->id, id) != 0)
                                continue;
                        struct pending *p = *t;
                        if (p == ra->head && ra->stage != ASK_NONE && !ra->json) {
                                /* decided while its prompt was up (an interrupt) */
                                ra->stage = ASK_NONE;
                                fprintf(stderr, "\n");
                        }
                        *t = p->next;
                        pending_free(p);
                        break;
                }
                kick(ra);
        }
}

static void decide(struct run_approval *ra, const char *id, bool allow, const char *reason,
                   const char *arguments, const char *rule)
{
        char err[600];

        if (session_approve(ra->s, id, allow, ra->eof ? "policy" : "operator", reason, arguments,
                            rule, err, sizeof(err)) < 0) {
                if (ra->json)
                        emit_error(ra, err, NULL);
                else
                        termout_message(stderr, "proctor: %s\n", err);
        }
}

static void show_prompt(struct run_approval *ra)
{
        struct pending *p = ra->head;

        termout_message(stderr, "proctor: %s asks: allow %s %s\n         in %s?\n", p->asked_by,
                        p->tool, p->args, p->where);
        fprintf(stderr, "[y]es [n]o [a]lways: ");
        fflush(stderr);
        ra->stage = ASK_CHOICE;
}

static void feed(struct run_approval *ra, ssize_t n, const char *base);

static void on_read(uv_stream_t *st, ssize_t n, const uv_buf_t *buf)
{
        feed(st->data, n, buf->base);
}

static void alloc_cb(uv_handle_t *h, size_t want, uv_buf_t *buf)
{
        static char chunk[65536];

        (void)h;
        (void)want;
        buf->base = chunk;
        buf->len = sizeof(chunk);
}

static void start_reading(struct run_approval *ra)
{
        if (ra->in_open || ra->eof || ra->closing)
                return;
        uv_handle_type t = uv_guess_handle(0);
        int rc = -EINVAL;

        if (t == UV_TTY)
                rc = uv_tty_init(ra->loop, &ra->in.tty, 0, 1);
        else if (t == UV_NAMED_PIPE && (rc = uv_pipe_init(ra->loop, &ra->in.pipe, 0)) == 0 &&
                 (rc = uv_pipe_open(&ra->in.pipe, 0)) < 0)
                uv_close(&ra->in.h, NULL);
        if (rc == 0) {
                ra->in.h.data = ra;
                ra->in_open = true;
                ra->handles++;
                uv_read_start(&ra->in.stream, alloc_cb, on_read);
                return;
        }
        /* A file or /dev/null: read as it is needed (it never blocks long);
         * anything else cannot bring an answer. */
        if (t != UV_FILE && t != UV_UNKNOWN_HANDLE) {
                ra->eof = true;
                return;
        }
        while (ra->head != NULL && !ra->eof) {
                char ch;
                ssize_t r =
                    read(0, &ch, 1); /* a line at a time: the next may be for a later call */
                if (r < 0 && errno == EINTR)
                        continue;
                feed(ra, r <= 0 ? UV_EOF : 1, &ch);
        }
}

static void answer_json(struct run_approval *ra, const char *line)
{
        json_error_t jerr;
        json_t *d = json_loads(line, 0, &jerr);
        const char *decision = str(d, "decision"), *id = str(d, "call_id");

        if (d == NULL || !json_is_object(d)) {
                emit_error(ra, "not a JSON object: expected {\"type\":\"approval.decision\", ...}",
                           line);
        } else if (strcmp(str(d, "type"), "approval.decision") != 0) {
                emit_error(ra, "unknown message type: expected \"approval.decision\"", line);
        } else if (id[0] == '\0' ||
                   (strcmp(decision, "allow") != 0 && strcmp(decision, "deny") != 0)) {
                emit_error(ra, "an approval.decision needs call_id and decision (allow or deny)",
                           line);
        } else {
                const char *args = json_string_value(json_object_get(d, "arguments"));
                const char *rule = json_string_value(json_object_get(d, "rule"));
                const char *reason = json_string_value(json_object_get(d, "reason"));
                decide(ra, id, strcmp(decision, "allow") == 0, reason, args, rule);
        }
        json_decref(d);
}

static void answer_tty(struct run_approval *ra, char *line)
{
        struct pending *p = ra->head;
        char *a = line + strspn(line, " \t");

        if (p == NULL || ra->stage == ASK_NONE)
                return;
        for (size_t n = strlen(a); n > 0 && (a[n - 1] == ' ' || a[n - 1] == '\r'); n--)
                a[n - 1] = '\0';
        if (ra->stage == ASK_REASON) {
                ra->stage = ASK_NONE;
                decide(ra, p->id, false, a, NULL, NULL);
                return;
        }
        if (ra->stage == ASK_RULE) {
                char err[600];
                const char *rule = a[0] != '\0' ? a : ra->suggest;
                if (session_approve(ra->s, p->id, true, "operator", NULL, NULL, rule, err,
                                    sizeof(err)) < 0) {
                        termout_message(stderr, "proctor: %s\nrule to add [%s]: ", err,
                                        ra->suggest);
                        return;
                }
                ra->stage = ASK_NONE;
                return;
        }
        if (strcmp(a, "y") == 0 || strcmp(a, "yes") == 0) {
                ra->stage = ASK_NONE;
                decide(ra, p->id, true, NULL, NULL, NULL);
        } else if (strcmp(a, "n") == 0 || strcmp(a, "no") == 0) {
                ra->stage = ASK_REASON;
                fprintf(stderr, "reason, for the model (Enter for none): ");
        } else if (strcmp(a, "a") == 0 || strcmp(a, "always") == 0) {
                json_t *args = json_loads(p->args, 0, NULL);
                free(ra->suggest);
                ra->suggest = approval_suggest(p->tool, args);
                json_decref(args);
                if (ra->suggest == NULL) {
                        ra->stage = ASK_NONE;
                        return;
                }
                ra->stage = ASK_RULE;
                termout_message(stderr, "rule to add, Enter to keep it [%s]: ", ra->suggest);
        } else {
                fprintf(stderr, "[y]es [n]o [a]lways: ");
        }
        fflush(stderr);
}

static void on_line(struct run_approval *ra, char *line)
{
        if (ra->json)
                answer_json(ra, line);
        else
                answer_tty(ra, line);
}

static bool take_line(void *ud, char *line)
{
        struct run_approval *ra = ud;

        if (line == NULL)
                emit_error(ra, "a line of stdin longer than 1 MiB: dropped", NULL);
        else
                on_line(ra, line);
        return true;
}

static void feed(struct run_approval *ra, ssize_t n, const char *base)
{
        if (n >= 0) {
                linebuf_feed(&ra->lines, base, (size_t)n, take_line, ra);
                return;
        }
        /* stdin ended: no answer can come any more */
        ra->eof = true;
        if (ra->in_open && !ra->closing)
                uv_read_stop(&ra->in.stream);
        linebuf_end(&ra->lines, take_line, ra);
        kick(ra);
}

static void on_kick(uv_timer_t *t)
{
        struct run_approval *ra = t->data;

        if (ra->closing)
                return;
        if (ra->head == NULL)
                return;
        if (!ra->eof)
                start_reading(ra);
        if (ra->eof) {
                /* never a hang: what waits is denied, saying why */
                while (ra->head != NULL) {
                        char id[256];
                        snprintf(id, sizeof(id), "%s", ra->head->id);
                        ra->stage = ASK_NONE;
                        decide(ra, id, false,
                               "no answer could come: stdin ended (allow such calls with "
                               "--approval never or --allow RULE)",
                               NULL, NULL);
                        /* decided elsewhere already: drop it */
                        if (ra->head != NULL && strcmp(ra->head->id, id) == 0) {
                                struct pending *p = ra->head;
                                ra->head = p->next;
                                pending_free(p);
                        }
                }
                return;
        }
        if (!ra->json && ra->stage == ASK_NONE)
                show_prompt(ra);
}

struct run_approval *run_approval_new(uv_loop_t *loop, struct bus *bus, struct session *s,
                                      bool json)
{
        struct run_approval *ra = calloc(1, sizeof(*ra));

        if (ra == NULL)
                return NULL;
        ra->loop = loop;
        ra->bus = bus;
        ra->s = s;
        ra->json = json;
        ra->lines.max = LINE_MAX_BYTES;
        uv_timer_init(loop, &ra->kick);
        ra->kick.data = ra;
        ra->handles = 1;
        if (bus_subscribe(bus, on_event, ra) < 0) {
                run_approval_close(ra);
                return NULL;
        }
        return ra;
}

static void closed(uv_handle_t *h)
{
        struct run_approval *ra = h->data;

        if (--ra->handles == 0) {
                linebuf_free(&ra->lines);
                free(ra->suggest);
                while (ra->head != NULL) {
                        struct pending *p = ra->head;
                        ra->head = p->next;
                        pending_free(p);
                }
                free(ra);
        }
}

void run_approval_close(struct run_approval *ra)
{
        if (ra == NULL || ra->closing)
                return;
        ra->closing = true;
        uv_close((uv_handle_t *)&ra->kick, closed);
        if (ra->in_open)
                uv_close(&ra->in.h, closed);
}

void run_approval_free(struct run_approval *ra)
{
        run_approval_close(ra);
}
