/* fuzz_mcp_rpc: libFuzzer harness for the framing of MCP's stdio transport:
 * arbitrary bytes through mcp_rpc_feed, every message classified and
 * written back with the writers. Besides memory errors it checks that
 * where the stream is cut never changes the messages, and that the reader
 * never holds more than its line limit.
 *
 * Built by `make fuzz` (libFuzzer) and by `make test` (tests/fuzz/driver.c). */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/tools/mcp_rpc.h"
#include "tests/fuzz/fuzz_stream.h"

struct run {
        uint64_t hash; /* of every message and bad line, in order */
        size_t msgs, bad;
};

static void on_msg(json_t *msg, enum mcp_rpc_kind kind, void *ud)
{
        struct run *r = ud;
        char *text = json_dumps(msg, JSON_COMPACT | JSON_SORT_KEYS);
        const json_t *id = json_object_get(msg, "id");
        char *line;

        if (text == NULL || kind == MCP_RPC_INVALID || mcp_rpc_classify(msg) != kind)
                abort();
        r->hash = fuzz_hash(r->hash, text, strlen(text) + 1);
        r->hash = fuzz_hash(r->hash, &kind, sizeof(kind));
        r->msgs++;
        free(text);
        /* what proctor answers with must be one line, and parse back */
        line = mcp_rpc_error(id, MCP_RPC_METHOD_NOT_FOUND, "x", NULL);
        if (line == NULL || strchr(line, '\n') != line + strlen(line) - 1)
                abort();
        free(line);
}

static void on_bad(int code, const char *why, void *ud)
{
        struct run *r = ud;

        if (code != -EBADMSG && code != -E2BIG)
                abort();
        r->hash = fuzz_hash(r->hash, &code, sizeof(code));
        r->hash = fuzz_hash(r->hash, why, strlen(why) + 1);
        r->bad++;
}

static void feed(void *ud, const char *p, size_t n)
{
        struct mcp_rpc_reader *rd = ud;

        mcp_rpc_feed(rd, p, n);
        if (rd->cap > rd->max)
                abort();
}

static void run_stream(const uint8_t *buf, size_t n, uint32_t seed, size_t limit, struct run *r)
{
        struct mcp_rpc_reader rd;

        memset(r, 0, sizeof(*r));
        r->hash = FUZZ_HASH_START;
        mcp_rpc_reader_init(&rd, limit, on_msg, on_bad, r);
        fuzz_stream_feed(buf, n, seed, feed, &rd);
        mcp_rpc_reader_free(&rd);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        struct run whole, cut;
        uint32_t seed;
        size_t limit;

        if (!fuzz_stream_head(&data, &size, &seed, &limit))
                return 0;
        run_stream(data, size, 0, limit, &whole);
        run_stream(data, size, seed, limit, &cut);
        if (whole.msgs != cut.msgs || whole.bad != cut.bad || whole.hash != cut.hash)
                abort();
        return 0;
}
