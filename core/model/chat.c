/* chat: the OpenAI chat-completions wire format: request bodies, and one
 * assistant message assembled from its streamed chunks. Tool-call arguments
 * are kept byte for byte as streamed: this module never repairs, parses or
 * re-encodes them, so what the model sent is what the operator sees. */
#include "core/model/chat.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/util/bounds.h"
#include "core/util/buf.h"

/* What the stream keeps about each call beside the call itself. */
struct call_state {
        int64_t index; /* the wire "index": calls are kept sorted by it */
        size_t args_len, args_cap;
        bool id_generated; /* id is made up until the model sends one */
};

/* Made-up call ids count up over the whole process: the conversation
 * sent back to the model must never hold two calls with one id, and a
 * server that sends none sends none in every turn. */
static unsigned long long generated_ids;

struct chat_stream {
        void (*on_delta)(const char *text, size_t n, void *ud);
        void *ud;
        char *content;
        size_t content_len, content_cap;
        /* Two parallel arrays, so that chat_stream_take can hand `calls`
         * over without allocating. */
        struct chat_tool_call *calls;
        struct call_state *state;
        size_t ncalls, cap;
        int64_t last_index; /* where a fragment without "index" goes; -1: none */
        struct chat_usage usage;
        char *finish_reason;
        bool refusal;
        json_t *error;      /* the last "error" payload, until the next chunk */
        uint32_t high_half; /* a UTF-16 high surrogate that ended a string; 0: none */
        struct chat_bounds bounds;
        size_t total; /* the model's bytes kept: text, ids, names, arguments */
};

__attribute__((format(printf, 3, 4))) static int fail(char *err, size_t errlen, const char *fmt,
                                                      ...)
{
        va_list ap;

        if (err != NULL && errlen > 0) {
                va_start(ap, fmt);
                vsnprintf(err, errlen, fmt, ap);
                va_end(ap);
        }
        return -EBADMSG;
}

/* The answer passed one of its bounds: `what` did, and `of` says what
 * the bound is for. Nothing of the fragment is kept. */
static int too_big(char *err, size_t errlen, const char *what, size_t bound, const char *of)
{
        char size[32];

        if (err != NULL && errlen > 0)
                snprintf(err, errlen, "%s passed %s, proctor's bound for %s", what,
                         bounds_size_text(bound, size, sizeof(size)), of);
        return -E2BIG;
}

static void reset(struct chat_stream *s)
{
        s->content = NULL;
        s->content_len = s->content_cap = 0;
        s->calls = NULL;
        s->state = NULL;
        s->ncalls = s->cap = 0;
        s->last_index = -1;
        s->usage.prompt_tokens = s->usage.completion_tokens = -1;
        s->finish_reason = NULL;
        s->refusal = false;
        s->high_half = 0;
        s->total = 0;
}

struct chat_stream *chat_stream_new(void (*on_delta)(const char *text, size_t n, void *ud),
                                    void *ud)
{
        struct chat_stream *s = calloc(1, sizeof(*s));

        if (s == NULL)
                return NULL;
        s->on_delta = on_delta;
        s->ud = ud;
        s->bounds = (struct chat_bounds){.tool_args = BOUNDS_TOOL_ARGS,
                                         .text = BOUNDS_ANSWER_TEXT,
                                         .calls = BOUNDS_TOOL_CALLS,
                                         .answer = BOUNDS_ANSWER};
        reset(s);
        return s;
}

void chat_stream_set_bounds(struct chat_stream *s, const struct chat_bounds *b)
{
        s->bounds = *b;
}

/* Whether n more of the model's bytes keep the whole answer within its
 * bound; its parts have their own bounds besides. */
static int answer_room(struct chat_stream *s, size_t n, char *err, size_t errlen)
{
        if (n <= s->bounds.answer && s->total <= s->bounds.answer - n)
                return 0;
        return too_big(err, errlen, "the answer", s->bounds.answer,
                       "one answer (its text and tool calls together)");
}

static void free_calls(struct chat_tool_call *calls, size_t n)
{
        size_t i;

        for (i = 0; i < n; i++) {
                free(calls[i].id);
                free(calls[i].name);
                free(calls[i].arguments);
        }
        free(calls);
}

void chat_stream_free(struct chat_stream *s)
{
        if (s == NULL)
                return;
        free(s->content);
        free_calls(s->calls, s->ncalls);
        free(s->state);
        free(s->finish_reason);
        json_decref(s->error);
        free(s);
}

void chat_message_free(struct chat_message *m)
{
        if (m == NULL)
                return;
        free(m->content);
        free_calls(m->calls, m->ncalls);
        free(m->finish_reason);
        memset(m, 0, sizeof(*m));
}

static int grow_calls(struct chat_stream *s)
{
        size_t ncap = s->cap ? s->cap * 2 : 4;
        struct chat_tool_call *nc;
        struct call_state *ns;

        nc = realloc(s->calls, ncap * sizeof(*nc));
        if (nc == NULL)
                return -ENOMEM;
        s->calls = nc;
        ns = realloc(s->state, ncap * sizeof(*ns));
        if (ns == NULL)
                return -ENOMEM;
        s->state = ns;
        s->cap = ncap;
        return 0;
}

/* Everything a call needs is allocated here, so that taking the message
 * later cannot fail: an empty name and arguments, and a made-up id
 * ("call_p<n>", unique in the process) until the model sends its own. */
static int insert_call(struct chat_stream *s, size_t pos, int64_t index)
{
        struct chat_tool_call c = {0};
        char id[32];

        if (s->ncalls >= s->bounds.calls)
                return -E2BIG;
        if (s->ncalls == s->cap && grow_calls(s) < 0)
                return -ENOMEM;
        snprintf(id, sizeof(id), "call_p%llu", ++generated_ids);
        c.id = strdup(id);
        c.name = strdup("");
        c.arguments = calloc(1, 16);
        if (c.id == NULL || c.name == NULL || c.arguments == NULL) {
                free(c.id);
                free(c.name);
                free(c.arguments);
                return -ENOMEM;
        }
        memmove(s->calls + pos + 1, s->calls + pos, (s->ncalls - pos) * sizeof(*s->calls));
        memmove(s->state + pos + 1, s->state + pos, (s->ncalls - pos) * sizeof(*s->state));
        s->calls[pos] = c;
        s->state[pos] = (struct call_state){
            .index = index, .args_len = 0, .args_cap = 16, .id_generated = true};
        s->ncalls++;
        return 0;
}

/* The position of the call with this index, created when new. */
static int call_at(struct chat_stream *s, int64_t index, size_t *pos)
{
        size_t i;
        int rc;

        for (i = 0; i < s->ncalls && s->state[i].index < index; i++)
                ;
        if (i == s->ncalls || s->state[i].index != index) {
                rc = insert_call(s, i, index);
                if (rc < 0)
                        return rc;
        }
        *pos = i;
        return 0;
}

/* Some servers leave "index" out. A new id starts a new call; so does a
 * name when the call before already has its name and some arguments
 * (parallel calls sent with neither index nor id); any other fragment
 * continues the call before it. */
static int call_without_index(struct chat_stream *s, const char *id, const char *name, size_t *pos)
{
        int64_t index = 0;
        size_t i;

        if (id == NULL && name != NULL && s->last_index >= 0 &&
            call_at(s, s->last_index, pos) == 0 && s->calls[*pos].name[0] != '\0' &&
            s->state[*pos].args_len > 0)
                return call_at(s, s->state[s->ncalls - 1].index + 1, pos);
        if (id != NULL) {
                for (i = 0; i < s->ncalls; i++) {
                        if (!s->state[i].id_generated && strcmp(s->calls[i].id, id) == 0) {
                                *pos = i;
                                return 0;
                        }
                }
                if (s->ncalls > 0)
                        index = s->state[s->ncalls - 1].index + 1;
        } else if (s->last_index >= 0) {
                index = s->last_index;
        }
        return call_at(s, index, pos);
}

static int replace(char **dst, const char *src)
{
        char *copy = strdup(src);

        if (copy == NULL)
                return -ENOMEM;
        free(*dst);
        *dst = copy;
        return 0;
}

/* A call's name or id as the model sent it, in place of *dst. */
static int set_call_text(struct chat_stream *s, char **dst, const char *src, char *err,
                         size_t errlen)
{
        size_t n = strlen(src);
        int rc = answer_room(s, n, err, errlen);

        if (rc < 0)
                return rc;
        if (replace(dst, src) < 0)
                return -ENOMEM;
        s->total += n;
        return 0;
}

/* Appends n bytes to call pos's arguments, within their bounds. */
static int append_arguments(struct chat_stream *s, size_t pos, const char *text, size_t n,
                            char *err, size_t errlen)
{
        struct call_state *st = &s->state[pos];
        char what[128];
        int rc;

        if (n > s->bounds.tool_args || st->args_len > s->bounds.tool_args - n) {
                snprintf(what, sizeof(what), "the arguments of tool call %zu (%.64s)", pos + 1,
                         s->calls[pos].name[0] != '\0' ? s->calls[pos].name : "no name yet");
                return too_big(err, errlen, what, s->bounds.tool_args, "one call's arguments");
        }
        if ((rc = answer_room(s, n, err, errlen)) < 0)
                return rc;
        rc = buf_append(&s->calls[pos].arguments, &st->args_len, &st->args_cap, text, n);
        if (rc == 0)
                s->total += n;
        return rc;
}

static int add_arguments(struct chat_stream *s, size_t pos, const json_t *args, char *err,
                         size_t errlen)
{
        char *text;
        int rc;

        if (json_is_string(args))
                return append_arguments(s, pos, json_string_value(args), json_string_length(args),
                                        err, errlen);
        /* Some servers send the arguments already parsed. */
        if (!json_is_object(args) && !json_is_array(args))
                return 0;
        text = json_dumps(args, JSON_COMPACT | JSON_ENCODE_ANY);
        if (text == NULL)
                return -ENOMEM;
        rc = append_arguments(s, pos, text, strlen(text), err, errlen);
        free(text);
        return rc;
}

/* One entry of delta.tool_calls: the first fragment of a call brings its
 * id and name, the rest bring pieces of its arguments. */
static int add_tool_fragment(struct chat_stream *s, const json_t *tc, char *err, size_t errlen)
{
        const json_t *jindex = json_object_get(tc, "index");
        const json_t *fn = json_object_get(tc, "function");
        const char *id = json_string_value(json_object_get(tc, "id"));
        const char *name = json_string_value(json_object_get(fn, "name"));
        size_t pos;
        int rc;

        if (id != NULL && *id == '\0')
                id = NULL;
        if (json_is_integer(jindex) && json_integer_value(jindex) >= 0)
                rc = call_at(s, json_integer_value(jindex), &pos);
        else
                rc = call_without_index(s, id, name != NULL && *name != '\0' ? name : NULL, &pos);
        if (rc == -E2BIG) {
                if (err != NULL && errlen > 0)
                        snprintf(err, errlen,
                                 "the answer has more than %zu tool calls, proctor's bound for "
                                 "one answer",
                                 s->bounds.calls);
                return rc;
        }
        if (rc < 0)
                return rc;
        s->last_index = s->state[pos].index;
        if (id != NULL && s->state[pos].id_generated) {
                if ((rc = set_call_text(s, &s->calls[pos].id, id, err, errlen)) < 0)
                        return rc;
                s->state[pos].id_generated = false;
        }
        /* The name comes whole, once; servers that repeat it are not
         * appending to it. */
        if (name != NULL && *name != '\0' && s->calls[pos].name[0] == '\0') {
                if ((rc = set_call_text(s, &s->calls[pos].name, name, err, errlen)) < 0)
                        return rc;
        }
        return add_arguments(s, pos, json_object_get(fn, "arguments"), err, errlen);
}

static int add_text(struct chat_stream *s, const json_t *text, char *err, size_t errlen)
{
        size_t n = json_string_length(text);
        int rc;

        if (!json_is_string(text) || n == 0)
                return 0;
        if (n > s->bounds.text || s->content_len > s->bounds.text - n)
                return too_big(err, errlen, "the answer's text", s->bounds.text,
                               "one answer's text");
        if ((rc = answer_room(s, n, err, errlen)) < 0)
                return rc;
        rc = buf_append(&s->content, &s->content_len, &s->content_cap, json_string_value(text), n);
        if (rc < 0)
                return rc;
        s->total += n;
        if (s->on_delta != NULL)
                s->on_delta(json_string_value(text), n, s->ud);
        return 0;
}

/* "content" is a string, or (some servers, as in requests) an array of
 * parts of which the text ones count: {"type": "text", "text": "..."}. */
static int add_content(struct chat_stream *s, const json_t *content, char *err, size_t errlen)
{
        size_t i;
        int rc = 0;

        if (!json_is_array(content))
                return add_text(s, content, err, errlen);
        for (i = 0; rc == 0 && i < json_array_size(content); i++) {
                const json_t *part = json_array_get(content, i);
                const char *type = json_string_value(json_object_get(part, "type"));

                if (json_is_string(part))
                        rc = add_text(s, part, err, errlen);
                else if (type == NULL || strcmp(type, "text") == 0 ||
                         strcmp(type, "output_text") == 0)
                        rc = add_text(s, json_object_get(part, "text"), err, errlen);
        }
        return rc;
}

/* A refusal is the model's answer as much as content is: the operator
 * must read it, so it streams and is kept as the message's text. */
static int add_refusal(struct chat_stream *s, const json_t *refusal, char *err, size_t errlen)
{
        if (!json_is_string(refusal) || json_string_length(refusal) == 0)
                return 0;
        s->refusal = true;
        return add_text(s, refusal, err, errlen);
}

static void read_usage(struct chat_stream *s, const json_t *usage)
{
        const json_t *p = json_object_get(usage, "prompt_tokens");
        const json_t *c = json_object_get(usage, "completion_tokens");

        if (json_is_integer(p))
                s->usage.prompt_tokens = json_integer_value(p);
        if (json_is_integer(c))
                s->usage.completion_tokens = json_integer_value(c);
}

/* The first choice (n is always 1 here); other choices are ignored. */
static const json_t *first_choice(const json_t *choices)
{
        size_t i;

        for (i = 0; i < json_array_size(choices); i++) {
                const json_t *c = json_array_get(choices, i);
                const json_t *index = json_object_get(c, "index");

                if (json_is_object(c) && (index == NULL || json_integer_value(index) == 0))
                        return c;
        }
        return NULL;
}

static int add_chunk(struct chat_stream *s, const json_t *root, char *err, size_t errlen)
{
        const json_t *choice, *delta, *reason, *calls;
        size_t i;
        int rc;

        if (json_is_object(json_object_get(root, "usage")))
                read_usage(s, json_object_get(root, "usage"));
        choice = first_choice(json_object_get(root, "choices"));
        if (choice == NULL)
                return 0;
        reason = json_object_get(choice, "finish_reason");
        if (json_is_string(reason) && replace(&s->finish_reason, json_string_value(reason)) < 0)
                return -ENOMEM;
        delta = json_object_get(choice, "delta");
        if (!json_is_object(delta))
                delta = json_object_get(choice, "message");
        rc = add_content(s, json_object_get(delta, "content"), err, errlen);
        if (rc == 0)
                rc = add_refusal(s, json_object_get(delta, "refusal"), err, errlen);
        calls = json_object_get(delta, "tool_calls");
        for (i = 0; rc == 0 && i < json_array_size(calls); i++) {
                if (json_is_object(json_array_get(calls, i)))
                        rc = add_tool_fragment(s, json_array_get(calls, i), err, errlen);
        }
        /* The legacy form ("function_call", one call, no id) that some
         * servers still answer with: read as the first tool call. */
        if (rc == 0 && json_is_object(json_object_get(delta, "function_call"))) {
                json_t *tc = json_pack("{s:i,s:O}", "index", 0, "function",
                                       json_object_get(delta, "function_call"));
                rc = tc != NULL ? add_tool_fragment(s, tc, err, errlen) : -ENOMEM;
                json_decref(tc);
        }
        return rc;
}

/* The text of an "error" member: its message when it has one. */
static int stream_error(const json_t *error, char *err, size_t errlen)
{
        const json_t *msg = json_is_object(error) ? json_object_get(error, "message") : error;
        char *text;
        int rc;

        if (json_is_string(msg) && json_string_length(msg) > 0)
                return fail(err, errlen, "%s", json_string_value(msg));
        text = json_dumps(error, JSON_COMPACT | JSON_ENCODE_ANY);
        rc = fail(err, errlen, "the server reported an error: %s", text != NULL ? text : "?");
        free(text);
        return rc;
}

static bool is_space(char c)
{
        return c == ' ' || c == '\t' || c == '\r' || c == '\n';
}

/* The \uXXXX escape at p, when there is one there: its value. */
static bool escape_at(const char *p, const char *end, uint32_t *v)
{
        uint32_t x = 0;
        int i;

        if (end - p < 6 || p[0] != '\\' || p[1] != 'u')
                return false;
        for (i = 2; i < 6; i++) {
                char c = p[i];
                int d = c >= '0' && c <= '9'   ? c - '0'
                        : c >= 'a' && c <= 'f' ? c - 'a' + 10
                        : c >= 'A' && c <= 'F' ? c - 'A' + 10
                                               : -1;
                if (d < 0)
                        return false;
                x = x * 16 + (uint32_t)d;
        }
        *v = x;
        return true;
}

static bool has_surrogate_escape(const char *p, size_t len)
{
        const char *end = p + len, *at;
        uint32_t v;

        while ((at = memchr(p, '\\', (size_t)(end - p))) != NULL) {
                if (escape_at(at, end, &v) && v >= 0xD800 && v <= 0xDFFF)
                        return true;
                p = at + 2 < end ? at + 2 : end;
        }
        return false;
}

/* One character beyond the BMP as UTF-8 (four bytes). */
static size_t put_utf8(char *o, uint32_t cp)
{
        o[0] = (char)(0xF0 | (cp >> 18));
        o[1] = (char)(0x80 | ((cp >> 12) & 0x3F));
        o[2] = (char)(0x80 | ((cp >> 6) & 0x3F));
        o[3] = (char)(0x80 | (cp & 0x3F));
        return 4;
}

/* Characters beyond the BMP (emoji) are escaped as a UTF-16 surrogate
 * pair, and servers cut deltas between its halves, which no JSON parser
 * takes alone. A high half that ends a string is held back and joined,
 * as UTF-8, to a low half that starts a string of the next chunk; any
 * other lone half becomes U+FFFD rather than costing the whole answer.
 * *out is NULL when the text needs no change. Never grows the text. */
static int join_surrogates(struct chat_stream *s, const char *data, size_t len, char **out)
{
        const char *p = data, *end = data + len;
        uint32_t held = s->high_half, v, w;
        bool in_str = false, at_start = false;
        char *o;

        *out = NULL;
        s->high_half = 0;
        if (!has_surrogate_escape(data, len))
                return 0;
        o = *out = malloc(len + 1);
        if (o == NULL)
                return -ENOMEM;
        while (p < end) {
                if (*p == '"' || !in_str) {
                        if (*p == '"')
                                in_str = at_start = !in_str;
                        *o++ = *p++;
                        continue;
                }
                if (!escape_at(p, end, &v) || v < 0xD800 || v > 0xDFFF) {
                        size_t n = *p == '\\' && p + 1 < end ? 2 : 1;

                        memcpy(o, p, n);
                        o += n;
                        p += n;
                        at_start = false;
                        continue;
                }
                if (v < 0xDC00 && escape_at(p + 6, end, &w) && w >= 0xDC00 && w <= 0xDFFF) {
                        memcpy(o, p, 12); /* a whole pair */
                        o += 12;
                        p += 12;
                } else if (v < 0xDC00 && p + 6 < end && p[6] == '"') {
                        s->high_half = v;
                        p += 6;
                        continue;
                } else if (v >= 0xDC00 && at_start && held != 0) {
                        o += put_utf8(o, 0x10000 + ((held - 0xD800) << 10) + (v - 0xDC00));
                        held = 0;
                        p += 6;
                } else {
                        memcpy(o, "\\uFFFD", 6);
                        o += 6;
                        p += 6;
                }
                at_start = false;
        }
        *o = '\0';
        return (int)(o - *out);
}

int chat_stream_chunk(struct chat_stream *s, const char *data, size_t len, char *err, size_t errlen)
{
        const json_t *error;
        json_error_t jerr;
        json_t *root;
        char *joined;
        int rc;

        json_decref(s->error);
        s->error = NULL;
        while (len > 0 && is_space(data[0])) {
                data++;
                len--;
        }
        while (len > 0 && is_space(data[len - 1]))
                len--;
        /* An empty payload carries nothing: servers use it as a keep-alive. */
        if (len == 0)
                return 0;
        if (len == 6 && memcmp(data, "[DONE]", 6) == 0)
                return 1;
        /* counted before parsing: parsed, they would cost far more */
        if (bounds_json_values_over(data, len, BOUNDS_ANSWER_JSON_VALUES)) {
                if (err != NULL && errlen > 0)
                        snprintf(err, errlen,
                                 "a chunk of the answer holds more than %u JSON values, "
                                 "proctor's bound for one chunk",
                                 BOUNDS_ANSWER_JSON_VALUES);
                return -E2BIG;
        }
        rc = join_surrogates(s, data, len, &joined);
        if (rc < 0)
                return rc;
        root = json_loadb(joined != NULL ? joined : data, joined != NULL ? (size_t)rc : len,
                          JSON_ALLOW_NUL, &jerr);
        free(joined);
        if (root == NULL)
                return fail(err, errlen, "malformed stream chunk: %s", jerr.text);
        error = json_object_get(root, "error");
        /* Older vLLM (and servers made after it) send the error object
         * itself: {"object": "error", "message", "type", "code"}. */
        if ((error == NULL || json_is_null(error)) &&
            json_is_string(json_object_get(root, "object")) &&
            strcmp(json_string_value(json_object_get(root, "object")), "error") == 0)
                error = root;
        if (!json_is_object(root)) {
                rc = fail(err, errlen, "malformed stream chunk: not a JSON object");
        } else if (error != NULL && !json_is_null(error)) {
                s->error = json_incref((json_t *)error);
                rc = stream_error(error, err, errlen);
        } else {
                rc = add_chunk(s, root, err, errlen);
        }
        json_decref(root);
        return rc;
}

const json_t *chat_stream_error(const struct chat_stream *s)
{
        return s->error;
}

const char *chat_stream_finish_reason(const struct chat_stream *s)
{
        return s->finish_reason;
}

void chat_stream_take(struct chat_stream *s, struct chat_message *out)
{
        out->content = s->content != NULL ? s->content : strdup("");
        out->calls = s->calls;
        out->ncalls = s->ncalls;
        out->usage = s->usage;
        out->finish_reason = s->finish_reason;
        out->refusal = s->refusal;
        free(s->state);
        reset(s);
}

json_t *chat_request(const char *model, const json_t *messages, const json_t *tools,
                     bool stream_options)
{
        json_t *body = json_object();
        json_t *opts = json_object();
        int rc = 0;

        if (body == NULL || opts == NULL || model == NULL) {
                json_decref(body);
                json_decref(opts);
                return NULL;
        }
        rc |= json_object_set_new(body, "model", json_string(model));
        /* A copy: the caller goes on appending to its conversation while
         * this body may still be sent again on a retry. */
        rc |= json_object_set_new(body, "messages",
                                  messages != NULL ? json_deep_copy(messages) : json_array());
        if (tools != NULL && !(json_is_array(tools) && json_array_size(tools) == 0))
                rc |= json_object_set_new(body, "tools", json_deep_copy(tools));
        rc |= json_object_set_new(body, "stream", json_true());
        rc |= json_object_set_new(opts, "include_usage", json_true());
        if (stream_options)
                rc |= json_object_set_new(body, "stream_options", opts);
        else
                json_decref(opts);
        if (rc != 0) {
                json_decref(body);
                return NULL;
        }
        return body;
}

bool chat_finish_note(const char *reason, char *out, size_t len)
{
        if (len > 0)
                out[0] = '\0';
        if (reason == NULL || reason[0] == '\0' || strcmp(reason, "stop") == 0 ||
            strcmp(reason, "tool_calls") == 0 || strcmp(reason, "function_call") == 0)
                return false;
        if (strcmp(reason, "length") == 0)
                snprintf(out, len,
                         "the answer is incomplete: it reached the model's token limit "
                         "(finish_reason length)");
        else if (strcmp(reason, "content_filter") == 0)
                snprintf(out, len,
                         "the provider's content filter stopped the answer "
                         "(finish_reason content_filter)");
        else
                snprintf(out, len, "the answer ended with finish_reason %.40s", reason);
        return true;
}

static json_t *tool_call_json(const struct chat_tool_call *c)
{
        return json_pack("{s:s, s:s, s:{s:s, s:s}}", "id", c->id != NULL ? c->id : "", "type",
                         "function", "function", "name", c->name != NULL ? c->name : "",
                         "arguments", c->arguments != NULL ? c->arguments : "");
}

json_t *chat_message_json(const struct chat_message *m)
{
        const char *content = m->content != NULL ? m->content : "";
        json_t *msg, *calls;
        int rc = 0;
        size_t i;

        msg = json_object();
        if (msg == NULL)
                return NULL;
        rc |= json_object_set_new(msg, "role", json_string("assistant"));
        /* Like OpenAI itself: no text beside tool calls is null, not "". */
        rc |= json_object_set_new(
            msg, "content", *content == '\0' && m->ncalls > 0 ? json_null() : json_string(content));
        if (m->ncalls > 0) {
                calls = json_array();
                rc |= json_object_set_new(msg, "tool_calls", calls);
                for (i = 0; rc == 0 && i < m->ncalls; i++)
                        rc |= json_array_append_new(calls, tool_call_json(&m->calls[i]));
        }
        if (rc != 0) {
                json_decref(msg);
                return NULL;
        }
        return msg;
}
