/* mcp: one client per session for its stdio MCP servers. Each server is an
 * execution whose stdin stays open (exec_write) and whose stdout is read as
 * JSON-RPC lines (mcp_rpc); its stderr goes to the trace as exec.output.
 * A server that breaks the protocol, hangs or dies fails its own calls and
 * nothing else; no reply from a server is ever waited for without a timer. */
#include "core/tools/mcp.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/util/bounds.h"
#include "core/util/buf.h"
#include "core/view/exec_report.h"
#include "core/tools/mcp_rpc.h"
#include "core/tools/tools.h"

enum state { S_STARTING, S_READY, S_FAILED, S_EXITED };

static const char *const state_names[] = {"starting", "ready", "failed", "exited"};

#define TAIL_MAX     2048 /* bytes of a server's stderr kept for messages */
#define NAME_MAX_LEN 64   /* what chat-completions APIs accept as a tool name */
#define START_MIN_MS 30000

struct mcp_server {
        struct mcp *m;
        char *name;
        json_t *cfg; /* its mcpServers entry */
        bool said;   /* the last mcp.server event's state and tool count */
        int said_tools;
        enum state said_st;
        bool network;
        enum state st;
        struct exec *e; /* NULL once exited */
        uint64_t exec_id;
        bool removed; /* its execution is gone: nothing calls back any more */
        struct mcp_rpc_reader rd;
        long long next_id, init_id, list_id;
        bool relist;    /* tools/list_changed came while a list was running */
        json_t *tools;  /* the server's tools as listed */
        json_t *paging; /* tools gathered while a list goes page by page */
        /* the listing running: its pages so far, each one's cursor (as a
         * hash: a cursor may be long), and the size of its tools as JSON */
        unsigned pages;
        uint64_t cursors[BOUNDS_MCP_PAGES];
        size_t listed_bytes;
        json_t *offered; /* mcp__S__T -> the server's tool name */
        char protocol[16];
        const char *kill_note;
        char tail[TAIL_MAX + 1];
        size_t tail_len;
        char error[768];
        uv_timer_t start_timer;
        struct mcp_call *calls; /* in flight */
};

struct mcp_call {
        struct mcp_server *s;
        long long id;
        mcp_done_fn done;
        void *ud;
        uint64_t t0_ms;
        uv_timer_t timer;
        struct mcp_call *next;
};

struct mcp {
        uv_loop_t *loop;
        struct mcp_opts o;
        struct mcp_server *servers;
        size_t n;
        json_t *schemas;
        void (*ready)(void *ud);
        void *ready_ud;
        bool ready_said, freeing;
        unsigned refs; /* handles and executions still to close, and the owner */
};

static uint64_t now_ms(void)
{
        struct timespec ts;

        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

/* ---- configuration ---- */

static bool valid_name(const char *s, size_t max)
{
        size_t n = strlen(s), i;

        if (n == 0 || n > max)
                return false;
        for (i = 0; i < n; i++)
                if (!((s[i] >= 'a' && s[i] <= 'z') || (s[i] >= 'A' && s[i] <= 'Z') ||
                      (s[i] >= '0' && s[i] <= '9') || s[i] == '_' || s[i] == '-'))
                        return false;
        return true;
}

static int bad(char *err, size_t errlen, const char *server, const char *key, const char *what)
{
        snprintf(err, errlen, "mcpServers.%s%s%s: %s", server, key[0] ? "." : "", key, what);
        return -EINVAL;
}

static int check_server(const char *name, const json_t *v, char *err, size_t errlen)
{
        const char *key;
        const json_t *x, *item;
        size_t i;

        if (!valid_name(name, 32))
                return bad(err, errlen, name, "",
                           "a server's name must be 1-32 letters, digits, '_' or '-'");
        if (!json_is_object(v))
                return bad(err, errlen, name, "", "expected an object");
        json_object_foreach ((json_t *)v, key, x) {
                if (strcmp(key, "command") == 0) {
                        if (!json_is_string(x) || json_string_length(x) == 0)
                                return bad(err, errlen, name, key, "expected a command name");
                } else if (strcmp(key, "args") == 0) {
                        if (!json_is_array(x))
                                return bad(err, errlen, name, key, "expected an array of strings");
                        json_array_foreach (x, i, item)
                                if (!json_is_string(item))
                                        return bad(err, errlen, name, key,
                                                   "expected an array of strings");
                } else if (strcmp(key, "env") == 0) {
                        const char *k;
                        const json_t *ev;
                        if (!json_is_object(x))
                                return bad(err, errlen, name, key, "expected an object of strings");
                        json_object_foreach ((json_t *)x, k, ev)
                                if (!json_is_string(ev) || k[0] == '\0' || strchr(k, '=') != NULL)
                                        return bad(err, errlen, name, key,
                                                   "expected an object of strings");
                } else if (strcmp(key, "network") == 0) {
                        if (!json_is_boolean(x))
                                return bad(err, errlen, name, key, "expected true or false");
                } else if (strcmp(key, "type") == 0) {
                        if (!json_is_string(x) || strcmp(json_string_value(x), "stdio") != 0)
                                return bad(err, errlen, name, key,
                                           "only stdio servers are supported (\"type\": "
                                           "\"stdio\")");
                } else if (strcmp(key, "url") == 0) {
                        return bad(err, errlen, name, key,
                                   "only stdio servers (a \"command\") are supported, not a URL");
                } else {
                        return bad(err, errlen, name, key,
                                   "unknown key (known keys: command, args, env, network, type)");
                }
        }
        if (json_object_get(v, "command") == NULL)
                return bad(err, errlen, name, "command", "missing");
        return 0;
}

int mcp_config_check(const json_t *servers, char *err, size_t errlen)
{
        const char *name;
        const json_t *v;
        int rc;

        if (!json_is_object(servers)) {
                snprintf(err, errlen, "mcpServers: expected an object of servers");
                return -EINVAL;
        }
        json_object_foreach ((json_t *)servers, name, v)
                if ((rc = check_server(name, v, err, errlen)) < 0)
                        return rc;
        return 0;
}

/* ---- lifetime ---- */

static void unref(struct mcp *m)
{
        void (*gone)(void *) = m->o.gone;
        void *ud = m->o.ud;
        size_t i;

        if (--m->refs > 0)
                return;
        for (i = 0; i < m->n; i++) {
                struct mcp_server *s = &m->servers[i];
                free(s->name);
                json_decref(s->cfg);
                json_decref(s->tools);
                json_decref(s->paging);
                json_decref(s->offered);
                mcp_rpc_reader_free(&s->rd);
        }
        free(m->servers);
        json_decref(m->schemas);
        if (m->o.own_bus)
                bus_free(m->o.bus);
        free(m);
        if (gone != NULL)
                gone(ud);
}

static void on_timer_closed(uv_handle_t *h)
{
        struct mcp_server *s = h->data;

        unref(s->m);
}

static void on_call_closed(uv_handle_t *h)
{
        struct mcp_call *c = h->data;
        struct mcp *m = c->s->m;

        free(c);
        unref(m);
}

/* ---- the tools the model sees ---- */

/* mcp__SERVER__TOOL with any character an API would refuse made '_';
 * false when it would be too long to offer. */
static bool offered_name(const char *server, const char *tool, char *buf, size_t len)
{
        int n = snprintf(buf, len, "%s%s__%s", TOOLS_MCP_PREFIX, server, tool);
        char *p;

        if (n < 0 || (size_t)n >= len || n > NAME_MAX_LEN)
                return false;
        for (p = buf; *p != '\0'; p++)
                if (!valid_name((char[]){*p, '\0'}, 1))
                        *p = '_';
        return true;
}

static json_t *tool_schema(const char *name, const json_t *tool)
{
        const json_t *desc = json_object_get(tool, "description");
        const json_t *schema = json_object_get(tool, "inputSchema");
        json_t *params = json_is_object(schema)
                             ? json_deep_copy(schema)
                             : json_pack("{s:s,s:{}}", "type", "object", "properties");

        return json_pack("{s:s,s:{s:s,s:s,s:o}}", "type", "function", "function", "name", name,
                         "description", json_is_string(desc) ? json_string_value(desc) : "",
                         "parameters", params);
}

/* Rebuilds the one array the agent holds, in place. */
static void rebuild_schemas(struct mcp *m)
{
        size_t i, k;

        json_array_clear(m->schemas);
        json_array_extend(m->schemas, (json_t *)tools_schemas());
        for (i = 0; i < m->n; i++) {
                struct mcp_server *s = &m->servers[i];
                const json_t *t;
                json_decref(s->offered);
                s->offered = json_object();
                if (s->st != S_READY)
                        continue;
                json_array_foreach (s->tools, k, t) {
                        const char *tn = json_string_value(json_object_get(t, "name"));
                        char name[NAME_MAX_LEN + 1];
                        if (tn == NULL || !offered_name(s->name, tn, name, sizeof(name)) ||
                            json_object_get(s->offered, name) != NULL)
                                continue;
                        json_object_set_new(s->offered, name, json_string(tn));
                        json_array_append_new(m->schemas, tool_schema(name, t));
                }
        }
}

/* ---- events and state ---- */

static void emit_state(struct mcp_server *s)
{
        int tools = (int)json_object_size(s->offered);

        if (s->m->freeing)
                return; /* the session is over: its servers go with it */
        /* a tools/list_changed that changed nothing says nothing new */
        if (s->said && s->said_st == s->st && s->said_tools == tools)
                return;
        s->said = true;
        s->said_st = s->st;
        s->said_tools = tools;
        bus_emit(s->m->o.bus, "mcp.server",
                 json_pack("{s:s,s:s,s:I,s:i,s:s,s:s,s:b}", "server", s->name, "state",
                           state_names[s->st], "exec_id", (json_int_t)s->exec_id, "tools",
                           (int)json_object_size(s->offered), "protocol_version", s->protocol,
                           "error", s->error, "network", s->network));
        if (s->m->o.changed != NULL)
                s->m->o.changed(s->m->o.ud);
}

static void check_ready(struct mcp *m)
{
        size_t i;

        if (m->ready_said || m->freeing)
                return;
        for (i = 0; i < m->n; i++)
                if (m->servers[i].st == S_STARTING)
                        return;
        m->ready_said = true;
        if (m->ready != NULL)
                m->ready(m->ready_ud);
}

/* The last lines of the server's stderr, for messages: from a line's
 * start when the tail was cut, without the last newline. */
static const char *tail_text(struct mcp_server *s)
{
        size_t i = 0, n = s->tail_len;

        if (n == TAIL_MAX) {
                while (i < n / 2 && s->tail[i] != '\n')
                        i++;
                if (s->tail[i] == '\n')
                        i++;
        }
        while (n > i && (s->tail[n - 1] == '\n' || s->tail[n - 1] == '\r'))
                n--;
        s->tail[n] = '\0';
        s->tail_len = n;
        return s->tail + i;
}

static void finish_call(struct mcp_call *c, bool ok, bool killed, const char *text, size_t len);

/* The server is out of the session: its calls fail with `why`. */
static void server_down(struct mcp_server *s, enum state st, const char *why)
{
        const char *tail = tail_text(s);
        char msg[1200];

        if (s->st == S_FAILED || s->st == S_EXITED)
                return;
        snprintf(s->error, sizeof(s->error), "%s%s%s", why, tail[0] ? "; its stderr ended: " : "",
                 tail);
        s->st = st;
        uv_timer_stop(&s->start_timer);
        rebuild_schemas(s->m);
        emit_state(s);
        snprintf(msg, sizeof(msg), "[the MCP server '%s' %s]", s->name, s->error);
        while (s->calls != NULL)
                finish_call(s->calls, false, false, msg, strlen(msg));
        if (s->e != NULL)
                exec_kill(s->e);
        check_ready(s->m);
}

/* Sends one framed message (taken over; NULL when out of memory). A line
 * holds no NUL: JSON escapes one inside a string. */
static int send_line(struct mcp_server *s, char *line)
{
        int rc;

        if (line == NULL)
                return -ENOMEM;
        rc = s->e != NULL ? exec_write(s->e, line, strlen(line)) : -EPIPE;
        free(line);
        return rc;
}

static int send_request(struct mcp_server *s, const char *method, json_t *params, long long *id)
{
        *id = ++s->next_id;
        return send_line(s, mcp_rpc_request(*id, method, params, NULL));
}

static void list_tools(struct mcp_server *s, const char *cursor)
{
        json_t *params = cursor != NULL ? json_pack("{s:s}", "cursor", cursor) : NULL;

        if (cursor == NULL) {
                json_decref(s->paging);
                s->paging = json_array();
                s->pages = 0;
                s->listed_bytes = 0;
        }
        s->relist = false;
        if (send_request(s, "tools/list", params, &s->list_id) < 0)
                server_down(s, S_FAILED, "could not be written to");
}

/* ---- replies ---- */

static void on_initialized(struct mcp_server *s, const json_t *result)
{
        const char *v = json_string_value(json_object_get(result, "protocolVersion"));
        if (v == NULL ||
            (strcmp(v, MCP_PROTOCOL_LATEST) != 0 && strcmp(v, MCP_PROTOCOL_OLDER) != 0 &&
             strcmp(v, MCP_PROTOCOL_OLDEST) != 0)) {
                char why[160];
                snprintf(why, sizeof(why),
                         "answered initialize with protocol version %.40s; proctor speaks "
                         "%s, %s and %s",
                         v != NULL ? v : "(none)", MCP_PROTOCOL_LATEST, MCP_PROTOCOL_OLDER,
                         MCP_PROTOCOL_OLDEST);
                server_down(s, S_FAILED, why);
                return;
        }
        snprintf(s->protocol, sizeof(s->protocol), "%s", v);
        if (send_line(s, mcp_rpc_notification("notifications/initialized", NULL, NULL)) < 0) {
                server_down(s, S_FAILED, "could not be written to");
                return;
        }
        list_tools(s, NULL);
}

/* FNV-1a: cursors are compared by this, not kept. */
static uint64_t cursor_hash(const char *c)
{
        uint64_t h = 1469598103934665603ull;

        for (; *c != '\0'; c++)
                h = (h ^ (unsigned char)*c) * 1099511628211ull;
        return h;
}

/* Why the listing cannot go on to the page at `next`, in why; false
 * when it can. A listing ends within BOUNDS_MCP_PAGES pages, and a cursor
 * seen before in it means the server would page forever. */
static bool paging_ends(struct mcp_server *s, const char *next, char *why, size_t len)
{
        uint64_t h = cursor_hash(next);
        unsigned i;

        if (s->pages >= BOUNDS_MCP_PAGES) {
                snprintf(why, len,
                         "answered tools/list with more than %d pages, proctor's bound for one "
                         "listing",
                         BOUNDS_MCP_PAGES);
                return true;
        }
        for (i = 0; i + 1 < s->pages; i++) {
                if (s->cursors[i] == h) {
                        snprintf(why, len,
                                 "answered tools/list page %u with the cursor of page %u (a "
                                 "cursor seen before): the listing would never end",
                                 s->pages, i + 1);
                        return true;
                }
        }
        s->cursors[s->pages - 1] = h;
        return false;
}

/* Takes a page's tools into the listing; false, with why, when the
 * listing would pass its bounds. */
static bool take_tools(struct mcp_server *s, const json_t *tools, char *why, size_t len)
{
        const json_t *t;
        char size[32];
        size_t i;

        json_array_foreach (tools, i, t) {
                if (!json_is_object(t) || !json_is_string(json_object_get(t, "name")))
                        continue;
                if (json_array_size(s->paging) >= BOUNDS_MCP_TOOLS) {
                        snprintf(why, len,
                                 "listed more than %d tools, proctor's bound for one server",
                                 BOUNDS_MCP_TOOLS);
                        return false;
                }
                s->listed_bytes += json_dumpb(t, NULL, 0, JSON_COMPACT);
                if (s->listed_bytes > BOUNDS_MCP_LISTING) {
                        snprintf(why, len,
                                 "listed tools of more than %s together, proctor's bound for "
                                 "one server's tools",
                                 bounds_size_text(BOUNDS_MCP_LISTING, size, sizeof(size)));
                        return false;
                }
                json_array_append(s->paging, (json_t *)t);
        }
        return true;
}

static void on_tools_page(struct mcp_server *s, const json_t *result)
{
        const char *next = json_string_value(json_object_get(result, "nextCursor"));
        char why[200];

        s->list_id = 0;
        s->pages++;
        if (!take_tools(s, json_object_get(result, "tools"), why, sizeof(why))) {
                server_down(s, S_FAILED, why);
                return;
        }
        if (next != NULL && next[0] != '\0' && !s->relist) {
                if (paging_ends(s, next, why, sizeof(why)))
                        server_down(s, S_FAILED, why);
                else
                        list_tools(s, next);
                return;
        }
        json_decref(s->tools);
        s->tools = s->paging;
        s->paging = NULL;
        if (s->st == S_STARTING) {
                s->st = S_READY;
                uv_timer_stop(&s->start_timer);
        }
        rebuild_schemas(s->m);
        emit_state(s);
        if (s->relist)
                list_tools(s, NULL);
        check_ready(s->m);
}

/* A call's result as text for the model, as it is assembled from the
 * result's parts: one growing block (a result may have a million parts),
 * within BOUNDS_MCP_RESULT; what does not fit is cut, with a note. */
struct result_text {
        char *p;
        size_t len, cap;
        bool cut;
};

static void add_part(struct result_text *r, const char *text)
{
        size_t sep = r->len > 0, k = strlen(text), room;

        if (r->cut)
                return;
        room = BOUNDS_MCP_RESULT - r->len; /* len never passes the bound */
        if (sep + k > room) {
                r->cut = true;
                k = room > sep ? room - sep : 0;
                /* not in the middle of a character */
                while (k > 0 && ((unsigned char)text[k] & 0xC0) == 0x80)
                        k--;
        }
        if (k == 0 || buf_reserve(&r->p, &r->cap, r->len, sep + k, 256) < 0)
                return;
        if (sep)
                r->p[r->len++] = '\n';
        memcpy(r->p + r->len, text, k);
        r->len += k;
        r->p[r->len] = '\0';
}

/* One content block as text for the model; binary data as a placeholder. */
static void content_text(struct result_text *out, const json_t *b)
{
        const char *type = json_string_value(json_object_get(b, "type"));
        const char *mime = json_string_value(json_object_get(b, "mimeType"));
        const json_t *res = json_object_get(b, "resource");
        char line[512];

        if (type == NULL)
                return;
        if (strcmp(type, "text") == 0 && json_is_string(json_object_get(b, "text"))) {
                add_part(out, json_string_value(json_object_get(b, "text")));
                return;
        }
        if (strcmp(type, "image") == 0 || strcmp(type, "audio") == 0) {
                snprintf(line, sizeof(line), "[%s: %.100s, %zu bytes of base64 not shown]", type,
                         mime != NULL ? mime : "unknown type",
                         json_string_length(json_object_get(b, "data")));
        } else if (strcmp(type, "resource") == 0 && json_is_string(json_object_get(res, "text"))) {
                add_part(out, json_string_value(json_object_get(res, "text")));
                return;
        } else if (strcmp(type, "resource") == 0 || strcmp(type, "resource_link") == 0) {
                const char *uri = json_string_value(json_object_get(res != NULL ? res : b, "uri"));
                snprintf(line, sizeof(line), "[%s: %.400s]", type, uri != NULL ? uri : "?");
        } else {
                snprintf(line, sizeof(line), "[content of type %.100s not shown]", type);
        }
        add_part(out, line);
}

static void on_call_result(struct mcp_call *c, const json_t *result, const json_t *error)
{
        struct result_text out = {0};
        const json_t *b, *sc;
        char size[32], note[160];
        size_t i;
        bool ok = !json_is_true(json_object_get(result, "isError"));

        if (error != NULL) {
                const char *msg = json_string_value(json_object_get(error, "message"));
                char line[600];
                snprintf(line, sizeof(line), "[MCP error %lld: %.500s]",
                         (long long)json_integer_value(json_object_get(error, "code")),
                         msg != NULL ? msg : "no message");
                add_part(&out, line);
                ok = false;
        }
        json_array_foreach (json_object_get(result, "content"), i, b)
                content_text(&out, b);
        sc = json_object_get(result, "structuredContent");
        if (sc != NULL && out.len == 0) {
                char *text = json_dumps(sc, JSON_COMPACT | JSON_ENCODE_ANY);
                if (text != NULL)
                        add_part(&out, text);
                free(text);
        }
        if (out.cut) {
                snprintf(note, sizeof(note),
                         "\n[the rest is cut: the result passed %s, proctor's bound for one MCP "
                         "result]",
                         bounds_size_text(BOUNDS_MCP_RESULT, size, sizeof(size)));
                buf_append(&out.p, &out.len, &out.cap, note, strlen(note));
        }
        finish_call(c, ok, false, out.p != NULL ? out.p : "", out.len);
        free(out.p);
}

static void on_response(struct mcp_server *s, const json_t *msg)
{
        const json_t *id = json_object_get(msg, "id");
        const json_t *result = json_object_get(msg, "result");
        const json_t *error = json_object_get(msg, "error");
        long long n = json_is_integer(id) ? (long long)json_integer_value(id) : -1;
        struct mcp_call *c;

        if (n <= 0)
                return; /* not one of ours: proctor's ids are integers from 1 */
        if (n == s->init_id || n == s->list_id) {
                if (error != NULL) {
                        const char *m = json_string_value(json_object_get(error, "message"));
                        char why[400];
                        snprintf(why, sizeof(why), "answered %s with an error: %.300s",
                                 n == s->init_id ? "initialize" : "tools/list",
                                 m != NULL ? m : "no message");
                        server_down(s, S_FAILED, why);
                } else if (n == s->init_id) {
                        s->init_id = 0;
                        on_initialized(s, result);
                } else {
                        on_tools_page(s, result);
                }
                return;
        }
        for (c = s->calls; c != NULL && c->id != n; c = c->next)
                ;
        if (c != NULL)
                on_call_result(c, result, error);
        /* else: a call already timed out or cancelled */
}

static void reply_error(struct mcp_server *s, const json_t *id, int code, const char *text)
{
        send_line(s, mcp_rpc_error(id, code, text, NULL));
}

static void on_message(json_t *msg, enum mcp_rpc_kind kind, void *ud)
{
        struct mcp_server *s = ud;
        const char *method = json_string_value(json_object_get(msg, "method"));
        const json_t *id = json_object_get(msg, "id");

        if (s->st == S_FAILED || s->st == S_EXITED)
                return;
        if (kind == MCP_RPC_RESPONSE) {
                on_response(s, msg);
        } else if (kind == MCP_RPC_REQUEST && strcmp(method, "ping") == 0) {
                send_line(s, mcp_rpc_result(id, NULL, NULL));
        } else if (kind == MCP_RPC_REQUEST) {
                char text[200];
                snprintf(text, sizeof(text),
                         "%.80s is not supported by proctor (it offers no sampling, "
                         "elicitation or roots)",
                         method);
                reply_error(s, id, MCP_RPC_METHOD_NOT_FOUND, text);
        } else if (strcmp(method, "notifications/tools/list_changed") == 0) {
                if (s->list_id != 0)
                        s->relist = true;
                else if (s->st == S_READY)
                        list_tools(s, NULL);
        }
        /* other notifications (logging, progress) change nothing here */
}

static void on_bad_line(int code, const char *why, void *ud)
{
        struct mcp_server *s = ud;
        char down[200];

        bus_emit(s->m->o.bus, "mcp.protocol_error",
                 json_pack("{s:s,s:s}", "server", s->name, "error", why));
        /* A message dropped unread may have been the answer to a call, which
         * would then wait for its timeout: the server is out instead. */
        if (code == -E2BIG) {
                snprintf(down, sizeof(down), "sent %s", why);
                server_down(s, S_FAILED, down);
        }
}

/* ---- the server's execution ---- */

static void keep_tail(struct mcp_server *s, const char *buf, size_t n)
{
        if (n >= TAIL_MAX) {
                memcpy(s->tail, buf + n - TAIL_MAX, TAIL_MAX);
                s->tail_len = TAIL_MAX;
                return;
        }
        if (s->tail_len + n > TAIL_MAX) {
                size_t drop = s->tail_len + n - TAIL_MAX;
                memmove(s->tail, s->tail + drop, s->tail_len - drop);
                s->tail_len -= drop;
        }
        memcpy(s->tail + s->tail_len, buf, n);
        s->tail_len += n;
}

static void on_output(const char *buf, size_t n, enum exec_stream st, void *ud)
{
        struct mcp_server *s = ud;

        if (st == EXEC_STDERR)
                keep_tail(s, buf, n);
        else
                mcp_rpc_feed(&s->rd, buf, n);
}

static void on_server_exit(const struct exec_result *r, void *ud)
{
        struct mcp_server *s = ud;
        char why[400];

        s->e = NULL;
        if (s->kill_note != NULL)
                snprintf(why, sizeof(why), "was %s", s->kill_note);
        else if (r->reason == EXEC_EXITED)
                snprintf(why, sizeof(why), "exited with code %d%s%s", r->exit_code,
                         r->error[0] ? ": " : "", r->error);
        else if (r->reason == EXEC_SIGNALED)
                snprintf(why, sizeof(why), "was killed by signal %d", r->signal);
        else
                snprintf(why, sizeof(why), "stopped (%s)%s%s", exec_reason_name(r->reason),
                         r->error[0] ? ": " : "", r->error);
        server_down(s, s->st == S_STARTING ? S_FAILED : S_EXITED, why);
}

static void on_remove(void *ud)
{
        struct mcp_server *s = ud;

        s->removed = true;
        unref(s->m);
}

static void on_start_timeout(uv_timer_t *t)
{
        struct mcp_server *s = t->data;
        char why[120];

        snprintf(why, sizeof(why), "did not finish starting within %.0f s",
                 (double)uv_timer_get_repeat(t) / 1000.0);
        server_down(s, S_FAILED, why);
}

/* argv and env_own from the entry; one block each, for free(). */
static char **entry_argv(const json_t *cfg)
{
        const json_t *args = json_object_get(cfg, "args"), *a;
        size_t n = json_array_size(args), i;
        char **argv = calloc(n + 2, sizeof(char *));

        if (argv == NULL)
                return NULL;
        argv[0] = (char *)json_string_value(json_object_get(cfg, "command"));
        json_array_foreach (args, i, a)
                argv[i + 1] = (char *)json_string_value(a);
        return argv;
}

static char **entry_env(const json_t *cfg)
{
        const json_t *env = json_object_get(cfg, "env"), *v;
        size_t n = json_object_size(env), i = 0, size = (n + 1) * sizeof(char *);
        const char *k;
        char **out, *p;

        json_object_foreach ((json_t *)env, k, v)
                size += strlen(k) + json_string_length(v) + 2;
        if ((out = malloc(size)) == NULL)
                return NULL;
        p = (char *)(out + n + 1);
        json_object_foreach ((json_t *)env, k, v) {
                out[i++] = p;
                p += sprintf(p, "%s=%s", k, json_string_value(v)) + 1;
        }
        out[i] = NULL;
        return out;
}

static void start_server(struct mcp_server *s)
{
        struct exec_report_hooks hooks = {.on_output = on_output,
                                          .on_exit = on_server_exit,
                                          .on_remove = on_remove,
                                          .quiet_stdout = true};
        char label[128];
        struct mcp *m = s->m;
        struct exec_request req = {0};
        json_t *params;
        char err[512];
        uint64_t start_ms = m->o.limits.timeout_ms;
        int rc;

        char **argv = entry_argv(s->cfg), **env = entry_env(s->cfg);

        req.isolation = m->o.mode;
        req.argv = argv;
        /* the entry's env is the operator's, written in the config for this
         * server: its tokens pass (to it alone); nothing is expanded */
        req.env_own = env;
        req.ws = m->o.ws;
        req.ws_mode = m->o.ws_mode;
        /* long-lived: no wall clock or CPU budget for its whole life (each
         * call has its timeout), and no cut in the protocol stream */
        req.limits.memory_bytes = m->o.limits.memory_bytes;
        req.limits.pids = m->o.limits.pids;
        req.limits.tmpfs_bytes = m->o.limits.tmpfs_bytes;
        req.limits.disk_bytes = m->o.limits.disk_bytes;
        req.keep_stdin = true;
        /* "network": true keeps the host's network namespace, and nothing
         * else of the host: the rest of the sandbox stays */
        req.share_net = s->network && m->o.mode == EXEC_SANDBOX;
        /* the executions pane says which server shares the host's network */
        snprintf(label, sizeof(label), "mcp server %.100s%s", s->name,
                 s->network && m->o.mode == EXEC_SANDBOX ? " (host network)" : "");
        hooks.label = label;
        if (req.argv == NULL || req.env_own == NULL) {
                rc = -ENOMEM;
                snprintf(err, sizeof(err), "out of memory");
        } else {
                rc = exec_report_spawn(m->o.eng, m->o.bus, &req, NULL, &hooks, s, &s->e, err,
                                       sizeof(err));
        }
        free(argv);
        free(env);
        if (rc < 0) {
                char why[600];
                snprintf(why, sizeof(why), "could not be started: %s", err);
                server_down(s, S_FAILED, why);
                return;
        }
        m->refs++; /* until on_remove */
        s->exec_id = exec_id(s->e);
        emit_state(s);
        params =
            json_pack("{s:s,s:{},s:{s:s,s:s}}", "protocolVersion", MCP_PROTOCOL_LATEST,
                      "capabilities", "clientInfo", "name", "proctor", "version", PROCTOR_VERSION);
        if (send_request(s, "initialize", params, &s->init_id) < 0) {
                server_down(s, S_FAILED, "could not be written to");
                return;
        }
        if (start_ms == 0 || start_ms < START_MIN_MS)
                start_ms = START_MIN_MS; /* npx may download the server first */
        /* the repeat only remembers the limit for the message */
        uv_timer_start(&s->start_timer, on_start_timeout, start_ms, start_ms);
}

/* ---- public ---- */

int mcp_new(uv_loop_t *loop, const struct mcp_opts *o, const char *servers_json, struct mcp **out,
            char *err, size_t errlen)
{
        json_t *servers = NULL, *v;
        json_error_t jerr;
        struct mcp *m;
        const char *name;
        size_t i = 0;
        int rc;

        if (servers_json != NULL &&
            (servers = json_loads(servers_json, JSON_REJECT_DUPLICATES, &jerr)) == NULL) {
                snprintf(err, errlen, "mcpServers: invalid JSON: %s", jerr.text);
                return -EINVAL;
        }
        if (servers != NULL && (rc = mcp_config_check(servers, err, errlen)) < 0) {
                json_decref(servers);
                return rc;
        }
        m = calloc(1, sizeof(*m));
        if (m == NULL) {
                json_decref(servers);
                return -ENOMEM;
        }
        m->loop = loop;
        m->o = *o;
        m->refs = 1;
        m->n = json_object_size(servers);
        m->servers = calloc(m->n ? m->n : 1, sizeof(*m->servers));
        m->schemas = json_array();
        json_object_foreach (servers, name, v) {
                struct mcp_server *s = &m->servers[i++];
                s->m = m;
                s->name = strdup(name);
                s->cfg = json_incref(v);
                s->network = json_is_true(json_object_get(v, "network"));
                s->offered = json_object();
                s->tools = json_array();
                mcp_rpc_reader_init(&s->rd, 0, on_message, on_bad_line, s);
                uv_timer_init(loop, &s->start_timer);
                s->start_timer.data = s;
                m->refs++; /* until the timer is closed */
        }
        json_decref(servers);
        rebuild_schemas(m);
        *out = m;
        return 0;
}

void mcp_start(struct mcp *m, void (*ready)(void *ud), void *ud)
{
        size_t i;

        m->ready = ready;
        m->ready_ud = ud;
        m->refs++; /* a ready callback may free m */
        for (i = 0; i < m->n; i++)
                if (m->servers[i].st == S_STARTING && m->servers[i].e == NULL)
                        start_server(&m->servers[i]);
        check_ready(m);
        unref(m);
}

const json_t *mcp_tools(struct mcp *m)
{
        return m->schemas;
}

size_t mcp_server_count(const struct mcp *m)
{
        return m->n;
}

void mcp_server_info(const struct mcp *m, size_t i, struct mcp_server_info *out)
{
        const struct mcp_server *s = &m->servers[i];

        out->name = s->name;
        out->state = state_names[s->st];
        out->ntools = (unsigned)json_object_size(s->offered);
        out->exec_id = s->e != NULL ? s->exec_id : 0;
        out->network = s->network;
        out->error = s->error;
        out->tools = s->tools;
}

int mcp_server_tools(const struct mcp *m, const char *name)
{
        size_t i;

        for (i = 0; i < m->n; i++)
                if (strcmp(m->servers[i].name, name) == 0)
                        return (int)json_object_size(m->servers[i].offered);
        return -1;
}

static const struct mcp_server *server_named(const struct mcp *m, const char *name)
{
        size_t i;

        for (i = 0; m != NULL && i < m->n; i++)
                if (strcmp(m->servers[i].name, name) == 0)
                        return &m->servers[i];
        return NULL;
}

/* "failed: " and the first line of why, as printable ASCII. */
static void brief_state(const struct mcp_server *s, char *out, size_t len)
{
        size_t o;

        if (s->st == S_STARTING) {
                snprintf(out, len, "starting");
                return;
        }
        if (s->st == S_READY) {
                snprintf(out, len, "%zu tools", json_object_size(s->offered));
                return;
        }
        o = (size_t)snprintf(out, len, "%s: ", s->st == S_FAILED ? "failed" : "ended");
        for (const char *p = s->error; *p != '\0' && *p != '\n' && o + 1 < len; p++)
                out[o++] = *p >= 0x20 && *p < 0x7f ? *p : '?';
        out[o < len ? o : len - 1] = '\0';
}

/* A failed server's whole reason on one line, and whether it is a name
 * lookup or a connection that failed for want of a network. */
static void brief_why(const struct mcp_server *s, struct mcp_brief *b)
{
        static const char *const net_words[] = {"name resolution",
                                                "getaddrinfo",
                                                "ENOTFOUND",
                                                "EAI_AGAIN",
                                                "Could not resolve",
                                                "Name or service not known",
                                                "Network is unreachable",
                                                "ENETUNREACH",
                                                "Connection refused",
                                                "ECONNREFUSED",
                                                "fetch failed"};
        size_t o = 0;

        for (const char *p = s->error; *p != '\0' && o + 1 < sizeof(b->why); p++)
                b->why[o++] = *p == '\n' ? ' ' : *p >= 0x20 && *p < 0x7f ? *p : '?';
        b->why[o] = '\0';
        for (size_t i = 0; !b->network && i < sizeof(net_words) / sizeof(net_words[0]); i++)
                b->net_hint = b->net_hint || strstr(b->why, net_words[i]) != NULL;
}

int mcp_briefs(const char *servers_json, const struct mcp *m, struct mcp_brief *out, int max)
{
        json_t *servers = servers_json != NULL ? json_loads(servers_json, 0, NULL) : NULL;
        const char *name;
        const json_t *v;
        int n = 0;

        json_object_foreach (servers, name, v) {
                const struct mcp_server *s = server_named(m, name);
                if (n < max) {
                        struct mcp_brief *b = &out[n];
                        memset(b, 0, sizeof(*b));
                        snprintf(b->name, sizeof(b->name), "%s", name);
                        b->network = json_is_true(json_object_get(v, "network"));
                        if (s != NULL)
                                brief_state(s, b->state, sizeof(b->state));
                        b->failed = s != NULL && (s->st == S_FAILED || s->st == S_EXITED);
                        if (b->failed)
                                brief_why(s, b);
                }
                n++;
        }
        json_decref(servers);
        return n;
}

int mcp_describe(const char *servers_json, const struct mcp *m, char *buf, size_t len,
                 bool *network)
{
        struct mcp_brief b[32];
        int n = mcp_briefs(servers_json, m, b, 32), i;
        size_t o;

        *network = false;
        o = (size_t)snprintf(buf, len, "mcp       ");
        for (i = 0; i < n && i < 32 && o < len; i++) {
                bool paren = b[i].state[0] != '\0' || b[i].network;
                *network |= b[i].network;
                o += (size_t)snprintf(buf + o, len - o, "%s %s%s%s%s%s%s", i ? "," : "", b[i].name,
                                      paren ? " (" : "", b[i].state,
                                      b[i].state[0] && b[i].network ? ", " : "",
                                      b[i].network ? "network" : "", paren ? ")" : "");
        }
        return n;
}

static void finish_call(struct mcp_call *c, bool ok, bool killed, const char *text, size_t len)
{
        struct mcp_server *s = c->s;
        struct tool_outcome o = {0};
        struct mcp_call **pp;

        for (pp = &s->calls; *pp != NULL && *pp != c; pp = &(*pp)->next)
                ;
        if (*pp == c)
                *pp = c->next;
        uv_timer_stop(&c->timer);
        o.ok = ok;
        o.output = (char *)text;
        o.len = len;
        o.exit_code = -1;
        o.duration_ms = now_ms() - c->t0_ms;
        o.killed = killed;
        if (c->done != NULL)
                c->done(&o, c->ud);
        uv_close((uv_handle_t *)&c->timer, on_call_closed);
}

static void send_cancelled(struct mcp_call *c, const char *reason)
{
        send_line(c->s, mcp_rpc_notification("notifications/cancelled",
                                             json_pack("{s:I,s:s}", "requestId", (json_int_t)c->id,
                                                       "reason", reason),
                                             NULL));
}

static void on_call_timeout(uv_timer_t *t)
{
        struct mcp_call *c = t->data;
        char msg[200];

        snprintf(msg, sizeof(msg), "[stopped: no answer from the MCP server '%s' within %.1f s]",
                 c->s->name, (double)uv_timer_get_repeat(t) / 1000.0);
        send_cancelled(c, "timed out");
        finish_call(c, false, false, msg, strlen(msg));
}

/* The server a name mcp__SERVER__TOOL points at, offered or not. */
static struct mcp_server *server_of(struct mcp *m, const char *name)
{
        size_t p = strlen(TOOLS_MCP_PREFIX), i;

        if (strncmp(name, TOOLS_MCP_PREFIX, p) != 0)
                return NULL;
        for (i = 0; i < m->n; i++) {
                size_t n = strlen(m->servers[i].name);
                if (strncmp(name + p, m->servers[i].name, n) == 0 &&
                    strncmp(name + p + n, "__", 2) == 0)
                        return &m->servers[i];
        }
        return NULL;
}

int mcp_call(struct mcp *m, const char *name, const json_t *args, mcp_done_fn done, void *ud,
             struct mcp_call **out, char *err, size_t errlen)
{
        struct mcp_server *s = NULL;
        const char *tool = NULL;
        struct mcp_call *c;
        size_t i;

        for (i = 0; i < m->n && tool == NULL; i++) {
                s = &m->servers[i];
                tool = json_string_value(json_object_get(s->offered, name));
        }
        if (tool == NULL) {
                s = server_of(m, name);
                if (s != NULL && s->st != S_READY)
                        snprintf(err, errlen, "the MCP server '%s' is not running: %s", s->name,
                                 s->error);
                else
                        snprintf(err, errlen, "unknown tool '%s': no running MCP server offers it",
                                 name);
                return s != NULL && s->st != S_READY ? -ESRCH : -ENOENT;
        }
        if (s->st != S_READY || s->e == NULL) {
                snprintf(err, errlen, "the MCP server '%s' is not running: %s", s->name, s->error);
                return -ESRCH;
        }
        if ((c = calloc(1, sizeof(*c))) == NULL)
                return -ENOMEM;
        c->s = s;
        c->done = done;
        c->ud = ud;
        c->t0_ms = now_ms();
        if (send_request(s, "tools/call",
                         json_pack("{s:s,s:O}", "name", tool, "arguments", (json_t *)args),
                         &c->id) < 0) {
                snprintf(err, errlen, "the MCP server '%s' cannot be written to", s->name);
                free(c);
                return -EPIPE;
        }
        uv_timer_init(m->loop, &c->timer);
        c->timer.data = c;
        m->refs++; /* until the timer is closed */
        if (m->o.limits.timeout_ms > 0)
                uv_timer_start(&c->timer, on_call_timeout, m->o.limits.timeout_ms,
                               m->o.limits.timeout_ms);
        c->next = s->calls;
        s->calls = c;
        *out = c;
        return 0;
}

void mcp_call_cancel(struct mcp_call *c, const char *note)
{
        char msg[200];

        snprintf(msg, sizeof(msg), "[%s]", note != NULL ? note : "cancelled");
        send_cancelled(c, note != NULL ? note : "cancelled");
        finish_call(c, false, true, msg, strlen(msg));
}

bool mcp_kill_exec(struct mcp *m, uint64_t exec_id)
{
        size_t i;

        for (i = 0; i < m->n; i++) {
                struct mcp_server *s = &m->servers[i];
                if (s->e != NULL && s->exec_id == exec_id) {
                        s->kill_note = "killed by the operator";
                        exec_kill(s->e);
                        return true;
                }
        }
        return false;
}

unsigned mcp_live(const struct mcp *m)
{
        unsigned n = 0;
        size_t i;

        for (i = 0; m != NULL && i < m->n; i++)
                n += m->servers[i].exec_id != 0 && !m->servers[i].removed;
        return n;
}

void mcp_stop(struct mcp *m)
{
        size_t i;

        if (m == NULL || m->freeing)
                return;
        m->freeing = true;
        for (i = 0; i < m->n; i++) {
                struct mcp_server *s = &m->servers[i];
                while (s->calls != NULL) {
                        s->calls->done = NULL;
                        finish_call(s->calls, false, true, "", 0);
                }
                s->kill_note = "stopped at the end of the session";
                if (s->e != NULL)
                        exec_kill(s->e);
        }
}

void mcp_free(struct mcp *m)
{
        size_t i;

        if (m == NULL)
                return;
        mcp_stop(m);
        for (i = 0; i < m->n; i++)
                uv_close((uv_handle_t *)&m->servers[i].start_timer, on_timer_closed);
        unref(m);
}
