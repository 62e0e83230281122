/* sse: throughput of a streamed model response on its way in: SSE parsing
 * alone, then SSE plus chunk assembly, over a synthetic stream of realistic
 * chat-completion chunks (content deltas and tool-call argument deltas)
 * fed in 4 KiB pieces, as reads from a socket deliver them.
 *
 * Usage: sse [-n ROUNDS] [-m MB]
 *   -n: passes over the stream per stage (default 5; the median is shown)
 *   -m: size of the stream in MB (default 50) */
#include "bench.h"

#include "core/model/chat.h"
#include "core/model/sse.h"

#define PIECE 4096

static const char *const words[] = {
    " the",      " file",         " is",  " not",  " found",   ";",     " let",  " me",
    " check",    " with",         " `ls", " -la`", ".",        " I",    " will", " run",
    " the",      " tests",        " and", " fix",  " failing", " ones", "\\n",   " \\\"",
    "ok",        "\\\"",          " in",  " src/", "main",     ".c",    ":",     " 42",
    " \xC3\xA9", " \xE2\x9C\x93",
};

/* Tool-call arguments as a model writes them, already escaped for a JSON
 * string: they are streamed in fragments of a few characters. */
static const char *const arguments[] = {
    "{\\\"command\\\":\\\"cd /workspace && make -j2 test 2>&1 | tail -n 40\\\","
    "\\\"timeout\\\":120}",
    "{\\\"path\\\":\\\"src/parser.c\\\",\\\"old_str\\\":\\\"if (n > len)\\\\n\\\\t\\\\treturn -1;"
    "\\\",\\\"new_str\\\":\\\"if (n >= len)\\\\n\\\\t\\\\treturn -EINVAL;\\\"}",
};

struct text {
        char *p;
        size_t len, cap;
        size_t chunks, responses;
};

__attribute__((format(printf, 2, 3))) static void put(struct text *t, const char *fmt, ...)
{
        va_list ap;
        int n;

        if (t->cap - t->len < 1024) {
                t->cap = t->cap ? t->cap * 2 : 1 << 20;
                t->p = realloc(t->p, t->cap);
                if (t->p == NULL)
                        bench_die("out of memory");
        }
        va_start(ap, fmt);
        n = vsnprintf(t->p + t->len, t->cap - t->len, fmt, ap);
        va_end(ap);
        if (n < 0 || (size_t)n >= t->cap - t->len)
                bench_die("chunk too long");
        t->len += (size_t)n;
}

/* One chunk, framed as OpenAI frames it. */
static void put_chunk(struct text *t, unsigned resp, const char *delta, const char *reason)
{
        put(t,
            "data: {\"id\":\"chatcmpl-B%07u\",\"object\":\"chat.completion.chunk\","
            "\"created\":1720000000,\"model\":\"gpt-4o-mini-2024-07-18\","
            "\"system_fingerprint\":\"fp_8b761cb050\",\"choices\":[{\"index\":0,\"delta\":%s,"
            "\"logprobs\":null,\"finish_reason\":%s}],\"usage\":null}\n\n",
            resp, delta, reason);
        t->chunks++;
}

/* Cuts `s` after 2 to 7 characters, never inside an escape sequence. */
static size_t fragment_len(const char *s, unsigned *seed)
{
        size_t want, n = 0;

        *seed = *seed * 1103515245u + 12345u;
        want = 2 + (*seed >> 16) % 6;
        while (s[n] != '\0' && n < want)
                n += s[n] == '\\' && s[n + 1] != '\0' ? 2 : 1;
        return n;
}

/* A response: some text, two tool calls, the finish and usage chunks. */
static void put_response(struct text *t, unsigned resp, unsigned *seed)
{
        char delta[512];
        unsigned i, k;

        put_chunk(t, resp, "{\"role\":\"assistant\",\"content\":\"\",\"refusal\":null}", "null");
        for (i = 0; i < 40; i++) {
                *seed = *seed * 1103515245u + 12345u;
                snprintf(delta, sizeof(delta), "{\"content\":\"%s\"}",
                         words[(*seed >> 16) % (sizeof(words) / sizeof(words[0]))]);
                put_chunk(t, resp, delta, "null");
        }
        for (k = 0; k < 2; k++) {
                const char *a = arguments[k];
                size_t n;

                snprintf(
                    delta, sizeof(delta),
                    "{\"tool_calls\":[{\"index\":%u,\"id\":\"call_%u_%u\",\"type\":\"function\","
                    "\"function\":{\"name\":\"%s\",\"arguments\":\"\"}}]}",
                    k, resp, k, k == 0 ? "bash" : "edit");
                put_chunk(t, resp, delta, "null");
                while (*a != '\0') {
                        n = fragment_len(a, seed);
                        snprintf(delta, sizeof(delta),
                                 "{\"tool_calls\":[{\"index\":%u,\"function\":{\"arguments\":"
                                 "\"%.*s\"}}]}",
                                 k, (int)n, a);
                        put_chunk(t, resp, delta, "null");
                        a += n;
                }
        }
        put_chunk(t, resp, "{}", "\"tool_calls\"");
        put(t, ": OPENROUTER PROCESSING\n\n");
        put(t,
            "data: {\"id\":\"chatcmpl-B%07u\",\"object\":\"chat.completion.chunk\","
            "\"created\":1720000000,\"model\":\"gpt-4o-mini-2024-07-18\",\"choices\":[],"
            "\"usage\":{\"prompt_tokens\":1812,\"completion_tokens\":131,"
            "\"total_tokens\":1943}}\n\ndata: [DONE]\n\n",
            resp);
        t->chunks += 2;
        t->responses++;
}

struct sink {
        struct chat_stream *chat; /* NULL: parse only */
        size_t events, messages, calls;
};

static void on_event(const char *event, const char *data, size_t len, void *ud)
{
        struct sink *k = ud;
        struct chat_message m;
        char err[256];
        int rc;

        k->events++;
        if (k->chat == NULL)
                return;
        rc = chat_stream_chunk(k->chat, data, len, err, sizeof(err));
        if (rc < 0)
                bench_die("chunk rejected: %s", err);
        if (rc == 1) {
                chat_stream_take(k->chat, &m);
                k->messages++;
                k->calls += m.ncalls;
                chat_message_free(&m);
        }
}

static uint64_t run_once(const struct text *t, bool assemble, struct sink *k)
{
        struct sse_parser *p;
        uint64_t t0, t1;
        size_t off;

        memset(k, 0, sizeof(*k));
        if (assemble && (k->chat = chat_stream_new(NULL, NULL)) == NULL)
                bench_die("out of memory");
        if ((p = sse_new(on_event, k)) == NULL)
                bench_die("out of memory");
        t0 = bench_now_ns();
        for (off = 0; off < t->len; off += PIECE) {
                if (sse_feed(p, t->p + off, t->len - off < PIECE ? t->len - off : PIECE) != 0)
                        bench_die("sse_feed failed at offset %zu", off);
        }
        sse_finish(p);
        t1 = bench_now_ns();
        sse_free(p);
        chat_stream_free(k->chat);
        return t1 - t0;
}

static void stage(const struct text *t, const char *name, bool assemble, unsigned rounds)
{
        struct bench_series s;
        struct sink k;
        double sec, mb = (double)t->len / 1e6;
        unsigned i;

        series_init(&s, name, rounds);
        for (i = 0; i < rounds; i++) {
                series_add(&s, run_once(t, assemble, &k));
                if (k.events != t->chunks)
                        bench_die("%s: %zu events for %zu chunks", name, k.events, t->chunks);
                if (assemble && (k.messages != t->responses || k.calls != 2 * t->responses))
                        bench_die("%s: %zu messages, %zu tool calls for %zu responses", name,
                                  k.messages, k.calls, t->responses);
        }
        sec = series_median_us(&s) / 1e6;
        printf("| %-16s | %7.1f | %9zu | %10.1f | %8.0f | %10.0f |\n", name, mb, t->chunks,
               sec * 1e3, mb / sec, (double)t->chunks / sec);
        free(s.ns);
}

int main(int argc, char **argv)
{
        unsigned rounds = 5, mb = 50, seed = 1, resp = 0;
        struct text t = {0};
        int opt;

        while ((opt = getopt(argc, argv, "n:m:")) != -1) {
                if (opt == 'n')
                        rounds = (unsigned)atoi(optarg);
                else if (opt == 'm')
                        mb = (unsigned)atoi(optarg);
                else
                        bench_die("usage: sse [-n ROUNDS] [-m MB]");
        }
        if (rounds == 0 || mb == 0)
                bench_die("usage: sse [-n ROUNDS] [-m MB]");
        while (t.len < (size_t)mb * 1000000)
                put_response(&t, resp++, &seed);

        printf("### sse: streamed chat completions, %zu KiB reads (median of %u)\n\n",
               (size_t)PIECE / 1024, rounds);
        printf("| stage            |      MB |    chunks |  median ms |     MB/s |   chunks/s |\n");
        printf("|------------------|--------:|----------:|-----------:|---------:|-----------:|\n");
        stage(&t, "sse only", false, rounds);
        stage(&t, "sse + assembly", true, rounds);
        free(t.p);
        return 0;
}
