/* fuzz_stream: what the harnesses of stream readers (fuzz_sse,
 * fuzz_mcp_rpc) share: a hash of what a reader gave, the two bytes of an
 * input that choose how it is cut, and feeding it whole or in those cuts,
 * so that a harness can check that where a stream is cut changes nothing.
 * A header: libFuzzer builds each harness from its one file. */
#ifndef PROCTOR_FUZZ_STREAM_H
#define PROCTOR_FUZZ_STREAM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define FUZZ_HASH_START 1469598103934665603ull /* FNV-1a's offset basis */

/* FNV-1a over n bytes at p, on from h. */
static inline uint64_t fuzz_hash(uint64_t h, const void *p, size_t n)
{
        const unsigned char *b = p;
        size_t i;

        for (i = 0; i < n; i++) {
                h ^= b[i];
                h *= 1099511628211ull;
        }
        return h;
}

/* The first two bytes of an input pick the cuts (an odd seed) and a small
 * limit, or 0 for the reader's default; they are taken off the input.
 * False when it has fewer than two. */
static inline bool fuzz_stream_head(const uint8_t **data, size_t *size, uint32_t *seed,
                                    size_t *limit)
{
        if (*size < 2)
                return false;
        *seed = (uint32_t)(*data)[0] | 1u;
        *limit = ((*data)[1] & 1) ? 16 + (*data)[1] : 0;
        *data += 2;
        *size -= 2;
        return true;
}

/* Gives buf to feed whole when seed is 0, else in pieces of 1 to 17
 * bytes whose sizes come from the seed. */
static inline void fuzz_stream_feed(const uint8_t *buf, size_t n, uint32_t seed,
                                    void (*feed)(void *ud, const char *p, size_t len), void *ud)
{
        size_t off = 0, piece;

        while (off < n) {
                piece = n - off;
                if (seed != 0) {
                        seed = seed * 1103515245u + 12345u;
                        piece = 1 + (seed >> 16) % 17;
                        if (piece > n - off)
                                piece = n - off;
                }
                feed(ud, (const char *)buf + off, piece);
                off += piece;
        }
}

#endif
