/* sha256: SHA-256 as FIPS 180-4 section 6.2 describes it: the message
 * padded to a multiple of 512 bits, each block expanded to 64 words and
 * mixed into eight 32-bit working variables. Written here from the
 * standard so that proctor links no crypto library for it; on x86-64
 * processors with the SHA extensions the blocks go through those
 * instructions instead (the same rounds, several times faster). */
#include "exec/image/sha256.h"

#include <stdbool.h>
#include <string.h>

#if defined(__x86_64__)
#include <cpuid.h>
#include <immintrin.h>
#endif

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

static void blocks_portable(uint32_t h[8], const unsigned char *p, size_t n)
{
        for (; n > 0; n--, p += 64)
                compress(h, p);
}

#if defined(__x86_64__)
/* The same rounds with SHA256RNDS2 (two rounds per instruction on the
 * state split as ABEF and CDGH, A in the highest lane) and the message
 * schedule with SHA256MSG1/MSG2 (W[t-16] + s0(W[t-15]), then + W[t-7] and
 * s1(W[t-2])), four words at a time. */
__attribute__((target("sha,sse4.1"))) static void blocks_shani(uint32_t h[8],
                                                               const unsigned char *p, size_t n)
{
        const __m128i bswap = _mm_set_epi8(12, 13, 14, 15, 8, 9, 10, 11, 4, 5, 6, 7, 0, 1, 2, 3);
        __m128i abef, cdgh, t = _mm_loadu_si128((const __m128i *)&h[0]);

        cdgh = _mm_shuffle_epi32(_mm_loadu_si128((const __m128i *)&h[4]), 0x1B); /* h g f e */
        t = _mm_shuffle_epi32(t, 0xB1);                                          /* b a d c */
        abef = _mm_alignr_epi8(t, cdgh, 8);                                      /* f e b a */
        cdgh = _mm_blend_epi16(cdgh, t, 0xF0);                                   /* h g d c */
        for (; n > 0; n--, p += 64) {
                __m128i m[4], save_abef = abef, save_cdgh = cdgh;
                for (int j = 0; j < 16; j++) {
                        __m128i wk;
                        if (j < 4)
                                m[j] = _mm_shuffle_epi8(
                                    _mm_loadu_si128((const __m128i *)(p + 16 * j)), bswap);
                        else
                                m[j & 3] = _mm_sha256msg2_epu32(
                                    _mm_add_epi32(
                                        _mm_sha256msg1_epu32(m[j & 3], m[(j + 1) & 3]),
                                        _mm_alignr_epi8(m[(j + 3) & 3], m[(j + 2) & 3], 4)),
                                    m[(j + 3) & 3]);
                        wk = _mm_add_epi32(m[j & 3], _mm_loadu_si128((const __m128i *)&K[4 * j]));
                        cdgh = _mm_sha256rnds2_epu32(cdgh, abef, wk);
                        abef = _mm_sha256rnds2_epu32(abef, cdgh, _mm_shuffle_epi32(wk, 0x0E));
                }
                abef = _mm_add_epi32(abef, save_abef);
                cdgh = _mm_add_epi32(cdgh, save_cdgh);
        }
        t = _mm_shuffle_epi32(abef, 0x1B);    /* a b e f */
        cdgh = _mm_shuffle_epi32(cdgh, 0xB1); /* g h c d */
        _mm_storeu_si128((__m128i *)&h[0], _mm_blend_epi16(t, cdgh, 0xF0));
        _mm_storeu_si128((__m128i *)&h[4], _mm_alignr_epi8(cdgh, t, 8));
}

static bool cpu_has_sha(void)
{
        unsigned a, b, c, d;

        /* leaf 1: SSE4.1 (ecx bit 19); leaf 7: SHA (ebx bit 29) */
        if (!__get_cpuid(1, &a, &b, &c, &d) || !(c & (1u << 19)))
                return false;
        return __get_cpuid_count(7, 0, &a, &b, &c, &d) && (b & (1u << 29));
}
#endif

static void (*blocks)(uint32_t h[8], const unsigned char *p, size_t n);

void sha256_use_cpu(bool on)
{
        blocks = blocks_portable;
#if defined(__x86_64__)
        if (on && cpu_has_sha())
                blocks = blocks_shani;
#endif
}

bool sha256_cpu(void)
{
        if (blocks == NULL)
                sha256_use_cpu(true);
        return blocks != blocks_portable;
}

void sha256_init(struct sha256 *s)
{
        /* The fractional parts of the square roots of the first 8 primes. */
        static const uint32_t iv[8] = {0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a,
                                       0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19};

        if (blocks == NULL)
                sha256_use_cpu(true);
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
                blocks(s->h, s->block, 1);
                s->fill = 0;
        }
        blocks(s->h, p, len / 64);
        p += len / 64 * 64;
        len %= 64;
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
                blocks(s->h, s->block, 1);
                s->fill = 0;
        }
        memset(s->block + s->fill, 0, 56 - s->fill);
        for (i = 0; i < 8; i++)
                s->block[56 + i] = (unsigned char)(bits >> (56 - 8 * i));
        blocks(s->h, s->block, 1);
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
