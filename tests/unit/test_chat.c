/* Unit tests for the chat-completions wire format: assembling streamed
 * chunks (content, tool calls split across chunks, usage, errors) and the
 * JSON that goes to and comes back from the server. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "core/model/chat.h"
#include "core/model/sse.h"

struct deltas {
        char text[4096];
        size_t len, calls;
};

static void on_delta(const char *text, size_t n, void *ud)
{
        struct deltas *d = ud;

        assert_true(n > 0);
        assert_true(d->len + n < sizeof(d->text));
        memcpy(d->text + d->len, text, n);
        d->len += n;
        d->text[d->len] = '\0';
        d->calls++;
}

/* Feeds one payload, which must be accepted. */
static void chunk_ok(struct chat_stream *s, const char *payload)
{
        char err[256] = "";

        assert_int_equal(chat_stream_chunk(s, payload, strlen(payload), err, sizeof(err)), 0);
        assert_string_equal(err, "");
}

static int chunk(struct chat_stream *s, const char *payload, char *err, size_t errlen)
{
        return chat_stream_chunk(s, payload, strlen(payload), err, errlen);
}

/* A whole response as it comes over the wire: SSE framing included. */
struct wire {
        struct chat_stream *s;
        int done, rc;
        char err[256];
};

static void on_event(const char *event, const char *data, size_t len, void *ud)
{
        struct wire *w = ud;
        int rc;

        assert_false(w->done); /* nothing may follow [DONE] here */
        rc = chat_stream_chunk(w->s, data, len, w->err, sizeof(w->err));
        if (rc == 1)
                w->done = 1;
        else if (rc < 0 && w->rc == 0)
                w->rc = rc;
}

/* Parses `text` fed in pieces of `piece` bytes. */
static void run_wire(struct chat_stream *s, const char *text, size_t piece, struct wire *w)
{
        struct sse_parser *p;
        size_t off, n = strlen(text);

        memset(w, 0, sizeof(*w));
        w->s = s;
        p = sse_new(on_event, w);
        assert_non_null(p);
        for (off = 0; off < n; off += piece)
                assert_int_equal(sse_feed(p, text + off, n - off < piece ? n - off : piece), 0);
        sse_finish(p);
        sse_free(p);
}

/* What api.openai.com streams for a turn with two tool calls. */
#define HEAD                                                                                       \
        "data: {\"id\":\"chatcmpl-9hT2xQ\",\"object\":\"chat.completion.chunk\","                  \
        "\"created\":1720000000,\"model\":\"gpt-4o-mini-2024-07-18\","                             \
        "\"system_fingerprint\":\"fp_8b761cb050\",\"choices\":["
#define DELTA(d, reason)                                                                           \
        HEAD "{\"index\":0,\"delta\":" d ",\"logprobs\":null,\"finish_reason\":" reason            \
             "}],\"usage\":null}\n\n"
#define ARGS(i, frag)                                                                              \
        DELTA("{\"tool_calls\":[{\"index\":" #i ",\"function\":{\"arguments\":\"" frag "\"}}]}",   \
              "null")

/* clang-format off */
static const char openai_stream[] =
    DELTA("{\"role\":\"assistant\",\"content\":null,\"refusal\":null}", "null")
    DELTA("{\"tool_calls\":[{\"index\":0,\"id\":\"call_Qm3bX1\",\"type\":\"function\","
          "\"function\":{\"name\":\"bash\",\"arguments\":\"\"}}]}", "null")
    ARGS(0, "{\\\"")
    ARGS(0, "command")
    ARGS(0, "\\\":\\\"")
    ARGS(0, "ls")
    ARGS(0, " -la")
    ARGS(0, " /")
    ARGS(0, "workspace")
    ARGS(0, " &&")
    ARGS(0, " echo")
    ARGS(0, " done")
    ARGS(0, "\\\",\\\"")
    ARGS(0, "timeout")
    ARGS(0, "\\\":")
    ARGS(0, "30")
    ARGS(0, "}")
    DELTA("{\"tool_calls\":[{\"index\":1,\"id\":\"call_Zr8kP2\",\"type\":\"function\","
          "\"function\":{\"name\":\"write\",\"arguments\":\"\"}}]}", "null")
    ARGS(1, "{\\\"")
    ARGS(1, "path")
    ARGS(1, "\\\":\\\"")
    ARGS(1, "notes")
    ARGS(1, ".txt")
    ARGS(1, "\\\",\\\"")
    ARGS(1, "content")
    ARGS(1, "\\\":\\\"")
    ARGS(1, "line 1\\\\n")
    ARGS(1, "line 2 \\\\\\\"q\\\\\\\"")
    ARGS(1, "\\\"}")
    DELTA("{}", "\"tool_calls\"")
    HEAD "],\"usage\":{\"prompt_tokens\":412,\"completion_tokens\":57,\"total_tokens\":469,"
         "\"prompt_tokens_details\":{\"cached_tokens\":0}}}\n\n"
    "data: [DONE]\n\n";
/* clang-format on */

static void test_openai_stream_two_tool_calls(void **state)
{
        static const size_t pieces[] = {1, 7, 64, 4096};
        struct deltas d = {0};
        struct chat_message m;
        struct wire w;
        size_t i;

        for (i = 0; i < sizeof(pieces) / sizeof(pieces[0]); i++) {
                struct chat_stream *s = chat_stream_new(on_delta, &d);

                run_wire(s, openai_stream, pieces[i], &w);
                assert_int_equal(w.rc, 0);
                assert_int_equal(w.done, 1);
                chat_stream_take(s, &m);
                assert_string_equal(m.content, "");
                assert_int_equal(d.calls, 0);
                assert_int_equal(m.ncalls, 2);
                assert_string_equal(m.calls[0].id, "call_Qm3bX1");
                assert_string_equal(m.calls[0].name, "bash");
                assert_string_equal(
                    m.calls[0].arguments,
                    "{\"command\":\"ls -la /workspace && echo done\",\"timeout\":30}");
                assert_string_equal(m.calls[1].id, "call_Zr8kP2");
                assert_string_equal(m.calls[1].name, "write");
                assert_string_equal(m.calls[1].arguments,
                                    "{\"path\":\"notes.txt\",\"content\":\"line 1\\nline 2 "
                                    "\\\"q\\\"\"}");
                assert_string_equal(m.finish_reason, "tool_calls");
                assert_int_equal(m.usage.prompt_tokens, 412);
                assert_int_equal(m.usage.completion_tokens, 57);
                chat_message_free(&m);
                chat_stream_free(s);
        }
}

static void test_content_and_tool_calls(void **state)
{
        struct deltas d = {0};
        struct chat_stream *s = chat_stream_new(on_delta, &d);
        struct chat_message m;
        json_t *j;

        chunk_ok(
            s, "{\"choices\":[{\"index\":0,\"delta\":{\"role\":\"assistant\",\"content\":\"\"}}]}");
        chunk_ok(s, "{\"choices\":[{\"index\":0,\"delta\":{\"content\":\"Let me \"}}]}");
        chunk_ok(s, "{\"choices\":[{\"index\":0,\"delta\":{\"content\":\"\"}}]}");
        chunk_ok(s, "{\"choices\":[{\"index\":0,\"delta\":{\"content\":\"look \\u2713\"}}]}");
        chunk_ok(s, "{\"choices\":[{\"index\":0,\"delta\":{\"content\":\"!\"}}]}");
        chunk_ok(s, "{\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":0,\"id\":"
                    "\"call_1\",\"type\":\"function\",\"function\":{\"name\":\"read\","
                    "\"arguments\":\"{\\\"path\\\":\"}}]}}]}");
        chunk_ok(s, "{\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":0,"
                    "\"function\":{\"arguments\":\"\\\"a.c\\\"}\"}}]}}]}");
        chunk_ok(s, "{\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"tool_calls\"}]}");

        /* One callback per non-empty fragment, in order. */
        assert_int_equal(d.calls, 3);
        assert_string_equal(d.text, "Let me look \xE2\x9C\x93!");
        chat_stream_take(s, &m);
        assert_string_equal(m.content, "Let me look \xE2\x9C\x93!");
        assert_int_equal(m.ncalls, 1);
        assert_string_equal(m.calls[0].arguments, "{\"path\":\"a.c\"}");
        assert_string_equal(m.finish_reason, "tool_calls");

        j = chat_message_json(&m);
        assert_non_null(j);
        assert_string_equal(json_string_value(json_object_get(j, "content")),
                            "Let me look \xE2\x9C\x93!");
        assert_int_equal(json_array_size(json_object_get(j, "tool_calls")), 1);
        json_decref(j);
        chat_message_free(&m);
        chat_stream_free(s);
}

static void test_usage_in_trailing_chunk(void **state)
{
        struct chat_stream *s = chat_stream_new(NULL, NULL);
        struct chat_message m;
        char err[128];

        chunk_ok(s, "{\"choices\":[{\"index\":0,\"delta\":{\"content\":\"ok\"}}],\"usage\":null}");
        chunk_ok(s, "{\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}],"
                    "\"usage\":null}");
        chunk_ok(s, "{\"id\":\"x\",\"choices\":[],\"usage\":{\"prompt_tokens\":9,"
                    "\"completion_tokens\":1,\"total_tokens\":10}}");
        assert_int_equal(chunk(s, "[DONE]", err, sizeof(err)), 1);
        chat_stream_take(s, &m);
        assert_string_equal(m.content, "ok");
        assert_string_equal(m.finish_reason, "stop");
        assert_int_equal(m.usage.prompt_tokens, 9);
        assert_int_equal(m.usage.completion_tokens, 1);
        chat_message_free(&m);

        /* Taken: the next message starts from nothing, usage unreported. */
        chunk_ok(s, "{\"choices\":[{\"index\":0,\"delta\":{\"content\":\"again\"}}]}");
        chat_stream_take(s, &m);
        assert_string_equal(m.content, "again");
        assert_int_equal(m.ncalls, 0);
        assert_null(m.finish_reason);
        assert_int_equal(m.usage.prompt_tokens, -1);
        assert_int_equal(m.usage.completion_tokens, -1);
        chat_message_free(&m);
        chat_stream_free(s);
}

static void test_done(void **state)
{
        struct chat_stream *s = chat_stream_new(NULL, NULL);
        char err[128] = "";

        assert_int_equal(chunk(s, "[DONE]", err, sizeof(err)), 1);
        assert_int_equal(chunk(s, " [DONE]\r\n", err, sizeof(err)), 1);
        assert_int_equal(chunk(s, "[DONE]!", err, sizeof(err)), -EBADMSG);
        assert_int_equal(chunk(s, "[DONE", err, sizeof(err)), -EBADMSG);
        chat_stream_free(s);
}

static void test_error_object(void **state)
{
        struct deltas d = {0};
        struct chat_stream *s = chat_stream_new(on_delta, &d);
        struct chat_message m;
        char err[256] = "";
        char tiny[8];

        assert_int_equal(
            chunk(s,
                  "{\"error\":{\"message\":\"Rate limit reached for gpt-4o-mini\","
                  "\"type\":\"requests\",\"param\":null,\"code\":\"rate_limit_exceeded\"}}",
                  err, sizeof(err)),
            -EBADMSG);
        assert_string_equal(err, "Rate limit reached for gpt-4o-mini");

        /* OpenRouter reports a failure mid-stream beside a last choice,
         * which must not count as content. */
        assert_int_equal(chunk(s,
                               "{\"id\":\"gen-1\",\"error\":{\"code\":502,\"message\":\"Provider "
                               "returned error\"},\"choices\":[{\"index\":0,\"delta\":{\"content\":"
                               "\"partial\"},\"finish_reason\":\"error\"}]}",
                               err, sizeof(err)),
                         -EBADMSG);
        assert_string_equal(err, "Provider returned error");
        assert_int_equal(d.calls, 0);

        assert_int_equal(chunk(s, "{\"error\":\"upstream timed out\"}", err, sizeof(err)),
                         -EBADMSG);
        assert_string_equal(err, "upstream timed out");
        assert_int_equal(chunk(s, "{\"error\":{\"code\":429}}", err, sizeof(err)), -EBADMSG);
        assert_non_null(strstr(err, "429"));

        /* A short or missing buffer is not overrun. */
        assert_int_equal(
            chunk(s, "{\"error\":{\"message\":\"a long message\"}}", tiny, sizeof(tiny)), -EBADMSG);
        assert_string_equal(tiny, "a long ");
        assert_int_equal(chunk(s, "{\"error\":{\"message\":\"x\"}}", NULL, 0), -EBADMSG);

        /* "error": null is no error. */
        chunk_ok(s,
                 "{\"error\":null,\"choices\":[{\"index\":0,\"delta\":{\"content\":\"fine\"}}]}");
        chat_stream_take(s, &m);
        assert_string_equal(m.content, "fine");
        chat_message_free(&m);
        chat_stream_free(s);
}

static void test_invalid_json(void **state)
{
        static const char *const bad[] = {
            "{\"choices\": [", "hello", "[1, 2]", "42", "\"text\"", "{\"a\":1}{\"b\":2}", "null",
        };
        struct chat_stream *s = chat_stream_new(NULL, NULL);
        struct chat_message m;
        char err[256];
        size_t i;

        chunk_ok(s, "{\"choices\":[{\"index\":0,\"delta\":{\"content\":\"before \"}}]}");
        for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
                err[0] = '\0';
                assert_int_equal(chunk(s, bad[i], err, sizeof(err)), -EBADMSG);
                assert_non_null(strstr(err, "malformed"));
        }
        /* Blank payloads are keep-alives, not errors. */
        chunk_ok(s, "");
        chunk_ok(s, " \r\n");
        /* The stream is still usable after a bad chunk. */
        chunk_ok(s, "{\"choices\":[{\"index\":0,\"delta\":{\"content\":\"after\"}}]}");
        chat_stream_take(s, &m);
        assert_string_equal(m.content, "before after");
        chat_message_free(&m);
        chat_stream_free(s);
}

static void test_arguments_kept_verbatim(void **state)
{
        struct chat_stream *s = chat_stream_new(NULL, NULL);
        struct chat_message m;

        chunk_ok(s, "{\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":0,\"id\":"
                    "\"c0\",\"function\":{\"name\":\"write\",\"arguments\":\"{\\\"path\\\": "
                    "\\\"a.txt\\\", \"}}]}}]}");
        chunk_ok(s, "{\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":0,"
                    "\"function\":{\"arguments\":\"\\\"content\\\": \"}}]}}]}");
        chunk_ok(s, "{\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":1,\"id\":"
                    "\"c1\",\"function\":{\"name\":\"bash\",\"arguments\":\"  { 'cmd' : "
                    "ls }}\\t\"}}]}}]}");
        chunk_ok(s, "{\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"length\"}]}");
        chat_stream_take(s, &m);
        assert_int_equal(m.ncalls, 2);
        /* Cut off by the length limit: kept as it came, not repaired. */
        assert_string_equal(m.calls[0].arguments, "{\"path\": \"a.txt\", \"content\": ");
        assert_string_equal(m.calls[1].arguments, "  { 'cmd' : ls }}\t");
        assert_string_equal(m.finish_reason, "length");
        chat_message_free(&m);
        chat_stream_free(s);
}

static void test_missing_ids_and_indices(void **state)
{
        struct chat_stream *s = chat_stream_new(NULL, NULL);
        struct chat_message m;

        /* No ids at all (some local servers): made-up ones, all different. */
        chunk_ok(s, "{\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":["
                    "{\"index\":0,\"function\":{\"name\":\"read\",\"arguments\":\"{}\"}},"
                    "{\"index\":1,\"function\":{\"name\":\"bash\",\"arguments\":\"{\"}}]}}]}");
        chunk_ok(s, "{\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":["
                    "{\"index\":1,\"id\":\"\",\"function\":{\"arguments\":\"}\"}}]}}]}");
        /* An id may also come late; it then replaces the made-up one. */
        chunk_ok(s, "{\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":["
                    "{\"index\":2,\"function\":{\"name\":\"edit\"}}]}}]}");
        chunk_ok(s, "{\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":["
                    "{\"index\":2,\"id\":\"call_late\",\"function\":{\"arguments\":\"{}\"}}]}}]}");
        chat_stream_take(s, &m);
        assert_int_equal(m.ncalls, 3);
        assert_memory_equal(m.calls[0].id, "call_p", 6);
        assert_string_equal(m.calls[0].name, "read");
        assert_memory_equal(m.calls[1].id, "call_p", 6);
        assert_string_not_equal(m.calls[0].id, m.calls[1].id);
        assert_string_equal(m.calls[1].arguments, "{}");
        assert_string_equal(m.calls[2].id, "call_late");
        assert_string_equal(m.calls[2].name, "edit");
        chat_message_free(&m);

        /* No "index" either: a new id starts a call, a fragment with
         * neither continues the one before. */
        chunk_ok(s, "{\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"id\":\"a\","
                    "\"function\":{\"name\":\"read\",\"arguments\":\"{\\\"path\\\"\"}}]}}]}");
        chunk_ok(s, "{\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":["
                    "{\"function\":{\"arguments\":\":\\\"x\\\"}\"}}]}}]}");
        chunk_ok(s, "{\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"id\":\"b\","
                    "\"function\":{\"name\":\"bash\",\"arguments\":{\"command\":\"ls\"}}}]}}]}");
        chunk_ok(s, "{\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":["
                    "{\"function\":{\"arguments\":\" \"}}]}}]}");
        /* A repeated id (and name) continues its call. */
        chunk_ok(s, "{\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"id\":\"a\","
                    "\"function\":{\"name\":\"read\",\"arguments\":\"\\n\"}}]}}]}");
        chat_stream_take(s, &m);
        assert_int_equal(m.ncalls, 2);
        assert_string_equal(m.calls[0].id, "a");
        assert_string_equal(m.calls[0].name, "read");
        assert_string_equal(m.calls[0].arguments, "{\"path\":\"x\"}\n");
        assert_string_equal(m.calls[1].id, "b");
        /* Arguments sent as an object are taken as its JSON text. */
        assert_string_equal(m.calls[1].arguments, "{\"command\":\"ls\"} ");
        chat_message_free(&m);
        chat_stream_free(s);
}

/* Ids made up for a server that sends none differ across messages too:
 * two turns' "call_0" would give the model two results for one call. */
static void test_generated_ids_unique_across_turns(void **state)
{
        static const char one[] = "{\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":["
                                  "{\"index\":0,\"function\":{\"name\":\"read\",\"arguments\":"
                                  "\"{}\"}}]}}]}";
        struct chat_message m1, m2;
        struct chat_stream *s = chat_stream_new(NULL, NULL);

        chunk_ok(s, one);
        chat_stream_take(s, &m1);
        chat_stream_free(s);
        s = chat_stream_new(NULL, NULL);
        chunk_ok(s, one);
        chat_stream_take(s, &m2);
        assert_int_equal(m1.ncalls, 1);
        assert_int_equal(m2.ncalls, 1);
        assert_string_not_equal(m1.calls[0].id, m2.calls[0].id);
        chat_message_free(&m1);
        chat_message_free(&m2);
        chat_stream_free(s);
}

/* Parallel calls with neither index nor id: a new name after a call that
 * has its name and arguments starts the next call. */
static void test_parallel_calls_without_index_or_id(void **state)
{
        struct chat_stream *s = chat_stream_new(NULL, NULL);
        struct chat_message m;

        chunk_ok(s, "{\"choices\":[{\"delta\":{\"tool_calls\":[{\"function\":{\"name\":\"read\","
                    "\"arguments\":\"\"}}]}}]}");
        chunk_ok(s, "{\"choices\":[{\"delta\":{\"tool_calls\":[{\"function\":{\"arguments\":"
                    "\"{\\\"path\\\":\\\"a\\\"}\"}}]}}]}");
        chunk_ok(s, "{\"choices\":[{\"delta\":{\"tool_calls\":[{\"function\":{\"name\":\"bash\","
                    "\"arguments\":\"{\\\"command\\\"\"}}]}}]}");
        chunk_ok(s, "{\"choices\":[{\"delta\":{\"tool_calls\":[{\"function\":{\"arguments\":"
                    "\":\\\"ls\\\"}\"}}]}}]}");
        chunk_ok(s, "{\"choices\":[{\"delta\":{\"tool_calls\":[{\"function\":{\"name\":\"read\","
                    "\"arguments\":\"{\\\"path\\\":\\\"b\\\"}\"}}]}}]}");
        chat_stream_take(s, &m);
        assert_int_equal(m.ncalls, 3);
        assert_string_equal(m.calls[0].name, "read");
        assert_string_equal(m.calls[0].arguments, "{\"path\":\"a\"}");
        assert_string_equal(m.calls[1].name, "bash");
        assert_string_equal(m.calls[1].arguments, "{\"command\":\"ls\"}");
        assert_string_equal(m.calls[2].name, "read");
        assert_string_equal(m.calls[2].arguments, "{\"path\":\"b\"}");
        assert_string_not_equal(m.calls[0].id, m.calls[2].id);
        chat_message_free(&m);
        chat_stream_free(s);
}

/* U+1F389 is \uD83C\uDF89: cut between the halves, as mock-llm does. */
static void test_surrogate_pair_split_across_chunks(void **state)
{
        struct deltas d = {0};
        struct chat_stream *s = chat_stream_new(on_delta, &d);
        struct chat_message m;

        chunk_ok(s, "{\"choices\":[{\"delta\":{\"content\":\"party \\uD83C\"}}]}");
        chunk_ok(s, "{\"id\":\"x\",\"choices\":[{\"delta\":{\"content\":\"\\uDF89 time\"}}]}");
        /* a whole pair in one chunk, in lower case, stays as it is */
        chunk_ok(s, "{\"choices\":[{\"delta\":{\"content\":\" \\ud83c\\udf89\"}}]}");
        /* halves that pair with nothing are replaced, not fatal */
        chunk_ok(s, "{\"choices\":[{\"delta\":{\"content\":\" \\uDF89\\uD83Cx \\\\uD83C\"}}]}");
        chat_stream_take(s, &m);
        assert_string_equal(m.content, "party \xF0\x9F\x8E\x89 time \xF0\x9F\x8E\x89 "
                                       "\xEF\xBF\xBD\xEF\xBF\xBDx \\uD83C");
        assert_string_equal(d.text, m.content);
        chat_message_free(&m);

        /* a held half with no partner in the next chunk is dropped */
        chunk_ok(s, "{\"choices\":[{\"delta\":{\"content\":\"a\\uD83C\"}}]}");
        chunk_ok(s, "{\"choices\":[{\"delta\":{\"content\":\"b\"}}]}");
        chat_stream_take(s, &m);
        assert_string_equal(m.content, "ab");
        chat_message_free(&m);
        chat_stream_free(s);
}

/* Content as an array of parts; a refusal is the answer. */
static void test_content_parts_and_refusal(void **state)
{
        struct deltas d = {0};
        struct chat_stream *s = chat_stream_new(on_delta, &d);
        struct chat_message m;

        chunk_ok(s, "{\"choices\":[{\"delta\":{\"content\":[{\"type\":\"text\",\"text\":\"one \"},"
                    "{\"type\":\"image_url\",\"image_url\":{\"url\":\"x\"}},"
                    "{\"type\":\"text\",\"text\":\"two\"}]}}]}");
        chat_stream_take(s, &m);
        assert_string_equal(m.content, "one two");
        assert_false(m.refusal);
        chat_message_free(&m);

        chunk_ok(s, "{\"choices\":[{\"delta\":{\"content\":null,\"refusal\":\"I can't \"}}]}");
        chunk_ok(s, "{\"choices\":[{\"delta\":{\"refusal\":\"help with that.\"},"
                    "\"finish_reason\":\"stop\"}]}");
        assert_string_equal(chat_stream_finish_reason(s), "stop");
        chat_stream_take(s, &m);
        assert_string_equal(m.content, "I can't help with that.");
        assert_true(m.refusal);
        assert_string_equal(m.finish_reason, "stop");
        assert_string_equal(d.text, "one twoI can't help with that.");
        chat_message_free(&m);
        assert_null(chat_stream_finish_reason(s));
        chat_stream_free(s);
}

/* An "error" payload is kept for its code until the next chunk. */
static void test_error_payload_kept(void **state)
{
        struct chat_stream *s = chat_stream_new(NULL, NULL);
        char err[128];

        assert_int_equal(
            chunk(s, "{\"error\":{\"message\":\"slow down\",\"code\":429}}", err, sizeof(err)),
            -EBADMSG);
        assert_string_equal(err, "slow down");
        assert_non_null(chat_stream_error(s));
        assert_int_equal(json_integer_value(json_object_get(chat_stream_error(s), "code")), 429);
        assert_int_equal(chunk(s, "{nope", err, sizeof(err)), -EBADMSG);
        assert_null(chat_stream_error(s));
        chat_stream_free(s);
}

static void test_calls_in_index_order(void **state)
{
        struct chat_stream *s = chat_stream_new(NULL, NULL);
        struct chat_message m;

        /* Interleaved fragments, a later index first, a gap in indices. */
        chunk_ok(s, "{\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":5,\"id\":"
                    "\"c5\",\"function\":{\"name\":\"five\",\"arguments\":\"[5\"}}]}}]}");
        chunk_ok(s, "{\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":0,\"id\":"
                    "\"c0\",\"function\":{\"name\":\"zero\",\"arguments\":\"[0\"}}]}}]}");
        chunk_ok(s, "{\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":["
                    "{\"index\":5,\"function\":{\"arguments\":\"]\"}},"
                    "{\"index\":0,\"function\":{\"arguments\":\"]\"}}]}}]}");
        chat_stream_take(s, &m);
        assert_int_equal(m.ncalls, 2);
        assert_string_equal(m.calls[0].id, "c0");
        assert_string_equal(m.calls[0].arguments, "[0]");
        assert_string_equal(m.calls[1].id, "c5");
        assert_string_equal(m.calls[1].name, "five");
        assert_string_equal(m.calls[1].arguments, "[5]");
        chat_message_free(&m);
        chat_stream_free(s);
}

static void test_unknown_fields_and_empty_choices(void **state)
{
        struct deltas d = {0};
        struct chat_stream *s = chat_stream_new(on_delta, &d);
        struct chat_message m;

        chunk_ok(s, "{\"choices\":[]}");
        chunk_ok(s, "{\"choices\":null}");
        chunk_ok(s, "{\"object\":\"chat.completion.chunk\"}");
        chunk_ok(s, "{\"choices\":[{\"index\":0,\"delta\":{\"role\":\"assistant\","
                    "\"reasoning_content\":\"thinking...\",\"refusal\":null}}],"
                    "\"provider\":\"Together\",\"x_groq\":{\"id\":\"req_1\"}}");
        /* Only the first choice makes the message. */
        chunk_ok(s, "{\"choices\":[{\"index\":1,\"delta\":{\"content\":\"other\"}},"
                    "{\"index\":0,\"delta\":{\"content\":\"mine\",\"future\":[1,2]},"
                    "\"logprobs\":{\"content\":[]}}]}");
        chunk_ok(s,
                 "{\"choices\":[{\"index\":0,\"delta\":{\"content\":null,\"tool_calls\":null}}]}");
        chat_stream_take(s, &m);
        assert_string_equal(m.content, "mine");
        assert_int_equal(d.calls, 1);
        assert_int_equal(m.ncalls, 0);
        chat_message_free(&m);
        chat_stream_free(s);
}

/* The message goes back to the server as JSON; reading that JSON as a
 * (non-streamed) choice gives back the same message. */
static void test_message_json_round_trip(void **state)
{
        struct chat_stream *s = chat_stream_new(NULL, NULL);
        struct chat_message m, back;
        json_t *j, *again, *calls, *fn;
        char *text, *payload;
        size_t i;

        chunk_ok(s, "{\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":0,\"id\":"
                    "\"call_A\",\"function\":{\"name\":\"bash\",\"arguments\":\"{\\\"command\\\":"
                    "\\\"echo \\\\\\\"\\u00e9\\\\\\\"\\\"}\"}},{\"index\":1,\"function\":{\"name\":"
                    "\"read\",\"arguments\":\"{broken\"}}]}}]}");
        chat_stream_take(s, &m);
        assert_string_equal(m.calls[0].arguments, "{\"command\":\"echo \\\"\xC3\xA9\\\"\"}");

        j = chat_message_json(&m);
        assert_non_null(j);
        text = json_dumps(j, JSON_COMPACT);
        json_decref(j);
        again = json_loads(text, 0, NULL);
        assert_non_null(again);
        assert_string_equal(json_string_value(json_object_get(again, "role")), "assistant");
        /* No text beside tool calls: null, as OpenAI sends it. */
        assert_true(json_is_null(json_object_get(again, "content")));
        calls = json_object_get(again, "tool_calls");
        assert_int_equal(json_array_size(calls), 2);
        for (i = 0; i < 2; i++) {
                fn = json_object_get(json_array_get(calls, i), "function");
                assert_string_equal(
                    json_string_value(json_object_get(json_array_get(calls, i), "type")),
                    "function");
                assert_string_equal(
                    json_string_value(json_object_get(json_array_get(calls, i), "id")),
                    m.calls[i].id);
                assert_string_equal(json_string_value(json_object_get(fn, "name")),
                                    m.calls[i].name);
                assert_string_equal(json_string_value(json_object_get(fn, "arguments")),
                                    m.calls[i].arguments);
        }
        assert_int_equal(json_object_size(again), 3);

        assert_true(asprintf(&payload, "{\"choices\":[{\"index\":0,\"message\":%s}]}", text) > 0);
        chunk_ok(s, payload);
        chat_stream_take(s, &back);
        assert_string_equal(back.content, "");
        assert_int_equal(back.ncalls, m.ncalls);
        for (i = 0; i < m.ncalls; i++) {
                assert_string_equal(back.calls[i].id, m.calls[i].id);
                assert_string_equal(back.calls[i].name, m.calls[i].name);
                assert_string_equal(back.calls[i].arguments, m.calls[i].arguments);
        }
        free(payload);
        free(text);
        json_decref(again);
        chat_message_free(&back);
        chat_message_free(&m);

        /* Text only: a string, and no tool_calls member at all. */
        chunk_ok(s, "{\"choices\":[{\"index\":0,\"delta\":{\"content\":\"hi\"}}]}");
        chat_stream_take(s, &m);
        j = chat_message_json(&m);
        assert_string_equal(json_string_value(json_object_get(j, "content")), "hi");
        assert_null(json_object_get(j, "tool_calls"));
        json_decref(j);
        chat_message_free(&m);

        /* Nothing at all: "" rather than null. */
        chat_stream_take(s, &m);
        j = chat_message_json(&m);
        assert_string_equal(json_string_value(json_object_get(j, "content")), "");
        json_decref(j);
        chat_message_free(&m);
        chat_stream_free(s);
}

static void test_request_body(void **state)
{
        json_t *messages = json_pack("[{s:s, s:s}]", "role", "user", "content", "list files");
        json_t *tools =
            json_pack("[{s:s, s:{s:s}}]", "type", "function", "function", "name", "bash");
        json_t *empty = json_array();
        json_t *body, *opts;

        body = chat_request("gpt-4o-mini", messages, tools, true);
        assert_non_null(body);
        assert_string_equal(json_string_value(json_object_get(body, "model")), "gpt-4o-mini");
        assert_true(json_equal(json_object_get(body, "messages"), messages));
        assert_true(json_equal(json_object_get(body, "tools"), tools));
        assert_true(json_is_true(json_object_get(body, "stream")));
        opts = json_object_get(body, "stream_options");
        assert_true(json_is_true(json_object_get(opts, "include_usage")));
        assert_int_equal(json_object_size(body), 5);
        /* The conversation goes on; a body kept for a retry does not. */
        json_array_append_new(messages, json_pack("{s:s}", "role", "assistant"));
        assert_int_equal(json_array_size(json_object_get(body, "messages")), 1);
        json_decref(body);

        body = chat_request("m", messages, empty, true);
        assert_null(json_object_get(body, "tools"));
        json_decref(body);
        body = chat_request("m", messages, NULL, true);
        assert_null(json_object_get(body, "tools"));
        assert_int_equal(json_object_size(body), 4);
        json_decref(body);
        /* for servers that refuse it, without stream_options */
        body = chat_request("m", messages, NULL, false);
        assert_null(json_object_get(body, "stream_options"));
        assert_int_equal(json_object_size(body), 3);
        json_decref(body);
        assert_null(chat_request(NULL, messages, NULL, true));

        json_decref(messages);
        json_decref(tools);
        json_decref(empty);
}

/* Each bound of an answer: the fragment that would pass it is refused
 * whole, with -E2BIG and a message naming the bound, and what came before
 * it stays as it was. */
static void test_bounds(void **state)
{
        const struct chat_bounds b = {.tool_args = 10, .text = 8, .calls = 2, .answer = 24};
        struct chat_stream *s = chat_stream_new(NULL, NULL);
        struct chat_message m;
        char err[256];

        chat_stream_set_bounds(s, &b);
        chunk_ok(s, "{\"choices\":[{\"delta\":{\"content\":\"12345\"}}]}");
        assert_int_equal(
            chunk(s, "{\"choices\":[{\"delta\":{\"content\":\"6789\"}}]}", err, sizeof(err)),
            -E2BIG);
        assert_string_equal(err, "the answer's text passed 8 bytes, proctor's bound for one "
                                 "answer's text");
        chunk_ok(s, "{\"choices\":[{\"delta\":{\"tool_calls\":[{\"index\":0,\"id\":\"a\","
                    "\"function\":{\"name\":\"bash\",\"arguments\":\"{\\\"c\\\":\"}}]}}]}");
        assert_int_equal(chunk(s,
                               "{\"choices\":[{\"delta\":{\"tool_calls\":[{\"index\":0,"
                               "\"function\":{\"arguments\":\"\\\"abcdef\\\"}\"}}]}}]}",
                               err, sizeof(err)),
                         -E2BIG);
        assert_string_equal(err, "the arguments of tool call 1 (bash) passed 10 bytes, proctor's "
                                 "bound for one call's arguments");
        chunk_ok(s, "{\"choices\":[{\"delta\":{\"tool_calls\":[{\"index\":1,\"id\":\"b\","
                    "\"function\":{\"name\":\"read\",\"arguments\":\"{}\"}}]}}]}");
        assert_int_equal(chunk(s,
                               "{\"choices\":[{\"delta\":{\"tool_calls\":[{\"index\":2,"
                               "\"function\":{\"name\":\"x\"}}]}}]}",
                               err, sizeof(err)),
                         -E2BIG);
        assert_string_equal(err, "the answer has more than 2 tool calls, proctor's bound for one "
                                 "answer");
        /* 5 + 1 + 4 + 5 + 1 + 4 + 2 = 22 of 24: three more bytes pass the whole */
        assert_int_equal(
            chunk(s, "{\"choices\":[{\"delta\":{\"content\":\"abc\"}}]}", err, sizeof(err)),
            -E2BIG);
        assert_string_equal(err, "the answer passed 24 bytes, proctor's bound for one answer (its "
                                 "text and tool calls together)");
        chunk_ok(s, "{\"choices\":[{\"delta\":{\"content\":\"ab\"}}]}");
        chat_stream_take(s, &m);
        assert_string_equal(m.content, "12345ab");
        assert_int_equal(m.ncalls, 2);
        assert_string_equal(m.calls[0].arguments, "{\"c\":");
        assert_string_equal(m.calls[1].arguments, "{}");
        chat_message_free(&m);
        chat_stream_free(s);
}

/* The real bounds (core/util/bounds.h) hold for arguments sent already parsed
 * too: a 2 MiB object is refused as arguments over 1 MiB. */
static void test_bounds_default_parsed_arguments(void **state)
{
        struct chat_stream *s = chat_stream_new(NULL, NULL);
        size_t n = 2u << 20;
        char *payload = malloc(n + 256), err[256];
        int len;

        assert_non_null(payload);
        len = snprintf(payload, 256,
                       "{\"choices\":[{\"delta\":{\"tool_calls\":[{\"index\":0,\"function\":"
                       "{\"name\":\"write\",\"arguments\":{\"content\":\"");
        memset(payload + len, 'y', n);
        strcpy(payload + len + n, "\"}}}]}}]}");
        assert_int_equal(chat_stream_chunk(s, payload, strlen(payload), err, sizeof(err)), -E2BIG);
        assert_string_equal(err, "the arguments of tool call 1 (write) passed 1 MiB, proctor's "
                                 "bound for one call's arguments");
        free(payload);
        chat_stream_free(s);
}

/* A chunk of more JSON values than its bound is refused before it is
 * parsed; commas, colons and brackets inside strings are not values. */
static void test_bounds_json_values(void **state)
{
        struct chat_stream *s = chat_stream_new(NULL, NULL);
        size_t n = 200000, i, o;
        char *payload = malloc(2 * n + 256), err[256];

        assert_non_null(payload);
        o = (size_t)sprintf(payload, "{\"choices\":[{\"delta\":{\"content\":\"");
        for (i = 0; i < n; i++, o += 2)
                memcpy(payload + o, ",[", 2);
        strcpy(payload + o, "\"}}]}");
        chunk_ok(s, payload); /* all inside a string: one value */
        o = (size_t)sprintf(payload, "{\"x\":[");
        for (i = 0; i < n; i++, o += 2)
                memcpy(payload + o, "0,", 2);
        strcpy(payload + o, "0]}");
        assert_int_equal(chunk(s, payload, err, sizeof(err)), -E2BIG);
        assert_string_equal(err, "a chunk of the answer holds more than 131072 JSON values, "
                                 "proctor's bound for one chunk");
        free(payload);
        chat_stream_free(s);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test(test_openai_stream_two_tool_calls),
            cmocka_unit_test(test_content_and_tool_calls),
            cmocka_unit_test(test_usage_in_trailing_chunk),
            cmocka_unit_test(test_done),
            cmocka_unit_test(test_error_object),
            cmocka_unit_test(test_invalid_json),
            cmocka_unit_test(test_arguments_kept_verbatim),
            cmocka_unit_test(test_missing_ids_and_indices),
            cmocka_unit_test(test_generated_ids_unique_across_turns),
            cmocka_unit_test(test_parallel_calls_without_index_or_id),
            cmocka_unit_test(test_surrogate_pair_split_across_chunks),
            cmocka_unit_test(test_content_parts_and_refusal),
            cmocka_unit_test(test_error_payload_kept),
            cmocka_unit_test(test_calls_in_index_order),
            cmocka_unit_test(test_unknown_fields_and_empty_choices),
            cmocka_unit_test(test_message_json_round_trip),
            cmocka_unit_test(test_request_body),
            cmocka_unit_test(test_bounds),
            cmocka_unit_test(test_bounds_default_parsed_arguments),
            cmocka_unit_test(test_bounds_json_values),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
