/* fuzz_sse: libFuzzer harness for the streaming path of a model response:
 * arbitrary bytes through sse_feed, every event through chat_stream_chunk,
 * the result through chat_message_json. Besides memory errors it checks
 * that where the stream is cut never changes the events.
 *
 * Built by `make fuzz` (libFuzzer) and by `make test` (tests/fuzz/driver.c). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/chat.h"
#include "core/sse.h"
#include "tests/fuzz/fuzz_stream.h"

struct run {
        struct chat_stream *chat;
        uint64_t hash; /* of every event, in order */
        size_t events;
};

static void check_message(struct chat_message *m)
{
        json_t *j;
        char *text;
        size_t i;

        if (m->content == NULL)
                abort();
        for (i = 0; i < m->ncalls; i++) {
                if (m->calls[i].id == NULL || m->calls[i].name == NULL ||
                    m->calls[i].arguments == NULL)
                        abort();
        }
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
        rc = chat_stream_chunk(r->chat, data, len, err, sizeof(err));
        if (rc < 0 && memchr(err, '\0', sizeof(err)) == NULL)
                abort();
        if (rc == 1) {
                chat_stream_take(r->chat, &m);
                check_message(&m);
        }
}

static void feed(void *p, const char *buf, size_t n)
{
        sse_feed(p, buf, n);
}

/* Feeds `buf` in pieces whose sizes come from `seed`; 0 means whole. */
static void run_stream(const uint8_t *buf, size_t n, uint32_t seed, size_t limit, struct run *r)
{
        struct sse_parser *p = sse_new(on_event, r);
        struct chat_message m;

        memset(r, 0, sizeof(*r));
        r->hash = FUZZ_HASH_START;
        r->chat = chat_stream_new(NULL, NULL);
        if (p == NULL || r->chat == NULL)
                abort();
        sse_set_limit(p, limit);
        fuzz_stream_feed(buf, n, seed, feed, p);
        sse_finish(p);
        sse_free(p);
        chat_stream_take(r->chat, &m);
        check_message(&m);
        chat_stream_free(r->chat);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        struct chat_stream *s;
        struct chat_message m;
        struct run whole, cut;
        uint32_t seed;
        size_t limit;
        char err[64];

        if (!fuzz_stream_head(&data, &size, &seed, &limit))
                return 0;
        run_stream(data, size, 0, limit, &whole);
        run_stream(data, size, seed, limit, &cut);
        if (whole.events != cut.events || whole.hash != cut.hash)
                abort();

        /* The same bytes as one payload, straight into the assembler. */
        s = chat_stream_new(NULL, NULL);
        chat_stream_chunk(s, (const char *)data, size, err, sizeof(err));
        chat_stream_take(s, &m);
        check_message(&m);
        chat_stream_free(s);
        return 0;
}
