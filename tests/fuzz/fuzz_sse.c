/* fuzz_sse: libFuzzer harness for the streaming path of a model response:
 * arbitrary bytes through sse_feed, every event through chat_stream_chunk,
 * the result through chat_message_json. Besides memory errors it checks
 * that where the stream is cut never changes the events, and that the
 * assembled answer never passes its bounds (small ones, picked by the
 * input's first byte, so that short inputs reach them), each refusal
 * naming its bound.
 *
 * Built by `make fuzz` (libFuzzer) and by `make test` (tests/fuzz/driver.c). */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/model/chat.h"
#include "core/model/sse.h"
#include "tests/fuzz/fuzz_stream.h"

struct run {
        struct chat_stream *chat;
        const struct chat_bounds *bounds;
        uint64_t hash; /* of every event, in order */
        size_t events;
};

/* Bounds small enough for short inputs, from bits of the seed (the
 * input's first byte) that the cuts hardly depend on; NULL for the real
 * ones (core/util/bounds.h). Independent of the SSE limit, which would
 * otherwise drop every event before it reached them. */
static const struct chat_bounds *pick_bounds(uint32_t seed, struct chat_bounds *b)
{
        size_t base = 8 + (seed >> 2) % 64;

        if ((seed & 2) == 0)
                return NULL;
        *b = (struct chat_bounds){
            .tool_args = base, .text = 2 * base, .calls = 1 + base % 4, .answer = 3 * base};
        return b;
}

static void check_message(struct chat_message *m, const struct chat_bounds *b)
{
        size_t i, total;
        json_t *j;
        char *text;

        if (m->content == NULL)
                abort();
        total = strlen(m->content);
        if (b != NULL && (total > b->text || m->ncalls > b->calls))
                abort();
        for (i = 0; i < m->ncalls; i++) {
                if (m->calls[i].id == NULL || m->calls[i].name == NULL ||
                    m->calls[i].arguments == NULL)
                        abort();
                if (b != NULL && strlen(m->calls[i].arguments) > b->tool_args)
                        abort();
                total += strlen(m->calls[i].arguments) + strlen(m->calls[i].name);
        }
        if (b != NULL && total > b->answer)
                abort();
        /* Everything came out of valid JSON strings: it must go back. */
        j = chat_message_json(m);
        if (j == NULL)
                abort();
        text = json_dumps(j, JSON_COMPACT);
        if (text == NULL)
                abort();
        free(text);
        json_decref(j);
        chat_message_free(m);
}

static void on_event(const char *event, const char *data, size_t len, void *ud)
{
        struct run *r = ud;
        struct chat_message m;
        char err[128];
        int rc;

        if (data[len] != '\0' || event[0] == '\0')
                abort();
        r->hash = fuzz_hash(r->hash, event, strlen(event) + 1);
        r->hash = fuzz_hash(r->hash, data, len);
        r->hash = fuzz_hash(r->hash, &len, sizeof(len));
        r->events++;
        err[0] = '\0';
        rc = chat_stream_chunk(r->chat, data, len, err, sizeof(err));
        if (rc < 0 && memchr(err, '\0', sizeof(err)) == NULL)
                abort();
        /* a refusal says which bound */
        if (rc == -E2BIG && strstr(err, "proctor's bound for") == NULL)
                abort();
        if (rc == 1) {
                chat_stream_take(r->chat, &m);
                check_message(&m, r->bounds);
        }
}

static void feed(void *p, const char *buf, size_t n)
{
        sse_feed(p, buf, n);
}

/* Feeds `buf` in pieces whose sizes come from `seed`; 0 means whole. */
static void run_stream(const uint8_t *buf, size_t n, uint32_t seed, size_t limit,
                       const struct chat_bounds *b, struct run *r)
{
        struct sse_parser *p = sse_new(on_event, r);
        struct chat_message m;

        memset(r, 0, sizeof(*r));
        r->hash = FUZZ_HASH_START;
        r->chat = chat_stream_new(NULL, NULL);
        r->bounds = b;
        if (p == NULL || r->chat == NULL)
                abort();
        if (b != NULL)
                chat_stream_set_bounds(r->chat, b);
        sse_set_limit(p, limit);
        fuzz_stream_feed(buf, n, seed, feed, p);
        sse_finish(p);
        sse_free(p);
        chat_stream_take(r->chat, &m);
        check_message(&m, b);
        chat_stream_free(r->chat);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        const struct chat_bounds *b;
        struct chat_bounds small;
        struct chat_stream *s;
        struct chat_message m;
        struct run whole, cut;
        uint32_t seed;
        size_t limit;
        char err[64];

        if (!fuzz_stream_head(&data, &size, &seed, &limit))
                return 0;
        b = pick_bounds(seed, &small);
        run_stream(data, size, 0, limit, b, &whole);
        run_stream(data, size, seed, limit, b, &cut);
        if (whole.events != cut.events || whole.hash != cut.hash)
                abort();

        /* The same bytes as one payload, straight into the assembler. */
        s = chat_stream_new(NULL, NULL);
        if (b != NULL)
                chat_stream_set_bounds(s, b);
        chat_stream_chunk(s, (const char *)data, size, err, sizeof(err));
        chat_stream_take(s, &m);
        check_message(&m, b);
        chat_stream_free(s);
        return 0;
}
