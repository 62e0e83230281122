/* units: parsing of sizes and durations given by a person (CLI, config). */
#ifndef PROCTOR_UNITS_H
#define PROCTOR_UNITS_H

#include <stdint.h>

/* "512M", "64MiB", "1g", "4096": bytes (K, M, G, T are powers of 1024).
 * Returns 0 or -EINVAL for anything else, including overflow. */
int units_parse_size(const char *s, uint64_t *bytes);

/* "5", "0.5", "90s", "250ms", "2m": milliseconds. 0 or -EINVAL. */
int units_parse_duration(const char *s, uint64_t *ms);

/* v (0 <= v < 2^64) rounded to the nearest integer, halves up: llround
 * without libm, which proctor would otherwise load for this alone. */
uint64_t units_round(double v);

/* Non-negative decimal integer that fits in max. 0 or -EINVAL. */
int units_parse_uint(const char *s, uint64_t max, uint64_t *out);

#endif
