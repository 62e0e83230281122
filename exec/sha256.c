/* sha256: SHA-256 as FIPS 180-4 section 6.2 describes it: the message
 * padded to a multiple of 512 bits, each block expanded to 64 words and
 * mixed into eight 32-bit working variables. Written here from the
 * standard so that proctor links no crypto library for it. */
#include "exec/sha256.h"

#include <string.h>

/* The first 32 bits of the fractional parts of the cube roots of the
 * first 64 primes (FIPS 180-4, 4.2.2). */
static const uint32_t K[64] = {
    0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
    0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
    0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
    0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
    0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
    0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
    0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
    0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2,
};

static inline uint32_t rotr(uint32_t x, unsigned n)
{
        return (x >> n) | (x << (32 - n));
}

/* One round t (FIPS 180-4, 6.2.2 step 3) with the working variables
 * named in rotation, so that no round moves them: the caller's order of
 * arguments does what "h = g, g = f, ..." says. */
#define ROUND(a, b, c, d, e, f, g, h, t)                                                           \
        do {                                                                                       \
                uint32_t t1 = (h) + (rotr(e, 6) ^ rotr(e, 11) ^ rotr(e, 25)) +                     \
                              (((e) & (f)) ^ (~(e) & (g))) + K[t] + W(t);                          \
                uint32_t t2 = (rotr(a, 2) ^ rotr(a, 13) ^ rotr(a, 22)) +                           \
                              (((a) & (b)) ^ ((a) & (c)) ^ ((b) & (c)));                           \
                (d) += t1;                                                                         \
                (h) = t1 + t2;                                                                     \
        } while (0)

/* The message schedule (6.2.2 step 1) kept as the last 16 words only. */
#define W(t)                                                                                       \
        ((t) < 16 ? w[t]                                                                           \
                  : (w[(t)&15] += (rotr(w[((t)-2) & 15], 17) ^ rotr(w[((t)-2) & 15], 19) ^         \
                                   (w[((t)-2) & 15] >> 10)) +                                      \
                                  w[((t)-7) & 15] +                                                \
                                  (rotr(w[((t)-15) & 15], 7) ^ rotr(w[((t)-15) & 15], 18) ^        \
                                   (w[((t)-15) & 15] >> 3))))

static void compress(uint32_t hs[8], const unsigned char *p)
{
        uint32_t w[16], a = hs[0], b = hs[1], c = hs[2], d = hs[3], e = hs[4], f = hs[5], g = hs[6],
                        h = hs[7];
        unsigned t;

        for (t = 0; t < 16; t++)
                w[t] = (uint32_t)p[4 * t] << 24 | (uint32_t)p[4 * t + 1] << 16 |
                       (uint32_t)p[4 * t + 2] << 8 | (uint32_t)p[4 * t + 3];
        for (t = 0; t < 64; t += 8) {
                ROUND(a, b, c, d, e, f, g, h, t);
                ROUND(h, a, b, c, d, e, f, g, t + 1);
                ROUND(g, h, a, b, c, d, e, f, t + 2);
                ROUND(f, g, h, a, b, c, d, e, t + 3);
                ROUND(e, f, g, h, a, b, c, d, t + 4);
                ROUND(d, e, f, g, h, a, b, c, t + 5);
                ROUND(c, d, e, f, g, h, a, b, t + 6);
                ROUND(b, c, d, e, f, g, h, a, t + 7);
        }
        hs[0] += a, hs[1] += b, hs[2] += c, hs[3] += d, hs[4] += e, hs[5] += f, hs[6] += g,
            hs[7] += h;
}

void sha256_init(struct sha256 *s)
{
        /* The fractional parts of the square roots of the first 8 primes. */
        static const uint32_t iv[8] = {0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a,
                                       0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19};

        memcpy(s->h, iv, sizeof(iv));
        s->bytes = 0;
        s->fill = 0;
}

void sha256_update(struct sha256 *s, const void *data, size_t len)
{
        const unsigned char *p = data;

        s->bytes += len;
        if (s->fill > 0) {
                size_t k = 64 - s->fill < len ? 64 - s->fill : len;
                memcpy(s->block + s->fill, p, k);
                s->fill += k;
                p += k;
                len -= k;
                if (s->fill < 64)
                        return;
                compress(s->h, s->block);
                s->fill = 0;
        }
        for (; len >= 64; p += 64, len -= 64)
                compress(s->h, p);
        memcpy(s->block, p, len);
        s->fill = len;
}

void sha256_final(struct sha256 *s, unsigned char out[32])
{
        uint64_t bits = s->bytes * 8;
        unsigned i;

        /* a 1 bit, zeros up to 56 bytes mod 64, the length in bits (big endian) */
        s->block[s->fill++] = 0x80;
        if (s->fill > 56) {
                memset(s->block + s->fill, 0, 64 - s->fill);
                compress(s->h, s->block);
                s->fill = 0;
        }
        memset(s->block + s->fill, 0, 56 - s->fill);
        for (i = 0; i < 8; i++)
                s->block[56 + i] = (unsigned char)(bits >> (56 - 8 * i));
        compress(s->h, s->block);
        for (i = 0; i < 32; i++)
                out[i] = (unsigned char)(s->h[i / 4] >> (24 - 8 * (i % 4)));
}

void sha256_final_hex(struct sha256 *s, char out[65])
{
        static const char hex[] = "0123456789abcdef";
        unsigned char d[32];

        sha256_final(s, d);
        for (unsigned i = 0; i < 32; i++) {
                out[2 * i] = hex[d[i] >> 4];
                out[2 * i + 1] = hex[d[i] & 15];
        }
        out[64] = '\0';
}
