/* mcp_rpc: the framing of MCP's stdio transport. A message is one line of
 * JSON with no embedded newline; anything else on a line is the peer's
 * fault and is reported, never fatal, never allowed to grow memory past
 * the line limit. */
#include "core/tools/mcp_rpc.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void mcp_rpc_reader_init(struct mcp_rpc_reader *r, size_t max, mcp_rpc_msg_fn on_msg,
                         mcp_rpc_bad_fn on_bad, void *ud)
{
        memset(r, 0, sizeof(*r));
        r->max = max ? max : MCP_RPC_LINE_MAX;
        r->on_msg = on_msg;
        r->on_bad = on_bad;
        r->ud = ud;
}

void mcp_rpc_reader_free(struct mcp_rpc_reader *r)
{
        free(r->buf);
        r->buf = NULL;
        r->len = r->cap = 0;
}

static bool valid_id(const json_t *id)
{
        return json_is_string(id) || json_is_integer(id);
}

enum mcp_rpc_kind mcp_rpc_classify(const json_t *msg)
{
        const json_t *v = json_object_get(msg, "jsonrpc");
        const json_t *id = json_object_get(msg, "id");
        const json_t *method = json_object_get(msg, "method");
        bool has_result = json_object_get(msg, "result") != NULL;
        bool has_error = json_object_get(msg, "error") != NULL;

        if (!json_is_object(msg) || !json_is_string(v) || strcmp(json_string_value(v), "2.0") != 0)
                return MCP_RPC_INVALID;
        if (method != NULL) {
                if (!json_is_string(method) || has_result || has_error)
                        return MCP_RPC_INVALID;
                if (id == NULL)
                        return MCP_RPC_NOTIFICATION;
                return valid_id(id) ? MCP_RPC_REQUEST : MCP_RPC_INVALID;
        }
        /* An error reply to a message whose id could not be read has id null. */
        if (has_result == has_error || id == NULL || (!valid_id(id) && !json_is_null(id)))
                return MCP_RPC_INVALID;
        if (has_error && !json_is_object(json_object_get(msg, "error")))
                return MCP_RPC_INVALID;
        return MCP_RPC_RESPONSE;
}

static void handle_line(struct mcp_rpc_reader *r, const char *line, size_t n)
{
        enum mcp_rpc_kind kind;
        json_error_t jerr;
        json_t *msg;

        if (n > 0 && line[n - 1] == '\r')
                n--;
        if (n == 0)
                return;
        /* counted before parsing: parsed, they would cost far more */
        if (bounds_json_values_over(line, n, BOUNDS_MCP_JSON_VALUES)) {
                char why[128];

                snprintf(why, sizeof(why),
                         "a message of more than %u JSON values, proctor's bound for one MCP "
                         "message (dropped)",
                         BOUNDS_MCP_JSON_VALUES);
                if (r->on_bad != NULL)
                        r->on_bad(-E2BIG, why, r->ud);
                return;
        }
        msg = json_loadb(line, n, JSON_REJECT_DUPLICATES, &jerr);
        if (msg == NULL) {
                if (r->on_bad != NULL)
                        r->on_bad(-EBADMSG, "a line that is not JSON", r->ud);
                return;
        }
        kind = mcp_rpc_classify(msg);
        if (kind == MCP_RPC_INVALID) {
                if (r->on_bad != NULL)
                        r->on_bad(-EBADMSG, "JSON that is not a JSON-RPC 2.0 message", r->ud);
        } else if (r->on_msg != NULL) {
                r->on_msg(msg, kind, r->ud);
        }
        json_decref(msg);
}

/* Keeps a partial line; false when it would pass the limit. */
static bool keep(struct mcp_rpc_reader *r, const char *p, size_t n)
{
        if (r->len + n > r->max)
                return false;
        if (r->len + n > r->cap) {
                size_t cap = r->cap ? r->cap : 4096;
                char *grown;
                while (cap < r->len + n)
                        cap *= 2;
                if (cap > r->max)
                        cap = r->max;
                grown = realloc(r->buf, cap);
                if (grown == NULL)
                        return false;
                r->buf = grown;
                r->cap = cap;
        }
        memcpy(r->buf + r->len, p, n);
        r->len += n;
        return true;
}

static void overlong(struct mcp_rpc_reader *r)
{
        char why[128], size[32];

        r->len = 0;
        r->skipping = true;
        snprintf(why, sizeof(why),
                 "a message over %s, proctor's bound for one MCP message (dropped)",
                 bounds_size_text(r->max, size, sizeof(size)));
        if (r->on_bad != NULL)
                r->on_bad(-E2BIG, why, r->ud);
}

void mcp_rpc_feed(struct mcp_rpc_reader *r, const char *buf, size_t n)
{
        while (n > 0) {
                const char *nl = memchr(buf, '\n', n);
                size_t k = nl != NULL ? (size_t)(nl - buf) : n;

                if (r->skipping) {
                        /* the rest of a dropped line */
                } else if (nl == NULL) {
                        if (!keep(r, buf, k))
                                overlong(r);
                } else if (r->len == 0) {
                        /* the common case: a whole line in this piece */
                        if (k > r->max)
                                overlong(r);
                        else
                                handle_line(r, buf, k);
                } else if (!keep(r, buf, k)) {
                        overlong(r);
                } else {
                        size_t len = r->len;
                        r->len = 0;
                        handle_line(r, r->buf, len);
                }
                if (nl == NULL)
                        return;
                r->skipping = false;
                buf += k + 1;
                n -= k + 1;
        }
}

static char *line(json_t *msg, size_t *len)
{
        char *text, *out;
        size_t n;

        if (msg == NULL)
                return NULL;
        /* compact output escapes any newline inside strings */
        text = json_dumps(msg, JSON_COMPACT);
        json_decref(msg);
        if (text == NULL)
                return NULL;
        n = strlen(text);
        out = realloc(text, n + 2);
        if (out == NULL) {
                free(text);
                return NULL;
        }
        out[n] = '\n';
        out[n + 1] = '\0';
        if (len != NULL)
                *len = n + 1;
        return out;
}

static json_t *base(void)
{
        return json_pack("{s:s}", "jsonrpc", "2.0");
}

char *mcp_rpc_request(long long id, const char *method, json_t *params, size_t *len)
{
        json_t *m = base();

        json_object_set_new(m, "id", json_integer(id));
        json_object_set_new(m, "method", json_string(method));
        if (params != NULL)
                json_object_set_new(m, "params", params);
        return line(m, len);
}

char *mcp_rpc_notification(const char *method, json_t *params, size_t *len)
{
        json_t *m = base();

        json_object_set_new(m, "method", json_string(method));
        if (params != NULL)
                json_object_set_new(m, "params", params);
        return line(m, len);
}

char *mcp_rpc_result(const json_t *id, json_t *result, size_t *len)
{
        json_t *m = base();

        json_object_set_new(m, "id", json_deep_copy(id));
        json_object_set_new(m, "result", result != NULL ? result : json_object());
        return line(m, len);
}

char *mcp_rpc_error(const json_t *id, int code, const char *message, size_t *len)
{
        json_t *m = base();

        json_object_set_new(m, "id", id != NULL ? json_deep_copy(id) : json_null());
        json_object_set_new(m, "error", json_pack("{s:i,s:s}", "code", code, "message", message));
        return line(m, len);
}
