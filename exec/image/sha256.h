/* sha256: SHA-256 (FIPS 180-4), streamed, for verifying the digests an
 * image claims (exec/image). Pure computation: no I/O, no allocation. */
#ifndef PROCTOR_SHA256_H
#define PROCTOR_SHA256_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct sha256 {
        uint32_t h[8];
        uint64_t bytes; /* message length so far */
        unsigned char block[64];
        size_t fill; /* bytes waiting in block */
};

void sha256_init(struct sha256 *s);
void sha256_update(struct sha256 *s, const void *data, size_t len);
/* The digest as 32 bytes; s must be initialized again before reuse. */
void sha256_final(struct sha256 *s, unsigned char out[32]);
/* The digest as 64 lowercase hex digits and a NUL. */
void sha256_final_hex(struct sha256 *s, char out[65]);

/* Whether the processor's SHA instructions are used (where it has them,
 * the default); off: the portable code, for tests and benchmarks. */
void sha256_use_cpu(bool on);
bool sha256_cpu(void);

#endif
