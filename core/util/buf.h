/* buf: growing a heap block of bytes by doubling, the one place that does
 * it for core and tui. It never lets a size wrap around: a size that does
 * not fit in size_t is refused, not allocated small. */
#ifndef PROCTOR_BUF_H
#define PROCTOR_BUF_H

#include <stddef.h>

/* Makes *p (a block of *cap bytes) big enough for `len` bytes already in
 * it, `more` to come and a NUL after them: when it is not, the block is
 * reallocated to the first of first, 2*first, 4*first... (or, once it has
 * a size, *cap doubled) that holds them. When *cap is 0, *p is taken to
 * hold no block: it is not read and may point to a static "". Returns 0,
 * -ENOMEM, or -EOVERFLOW when the size does not fit in size_t; on an error
 * *p and *cap are as they were. */
int buf_reserve(char **p, size_t *cap, size_t len, size_t more, size_t first);

/* Appends n bytes of data at *len (growing from 64 bytes as buf_reserve
 * does) and a NUL after them, so that *p is always a string. Returns 0 or
 * the error of buf_reserve, with *p, *len and *cap as they were. */
int buf_append(char **p, size_t *len, size_t *cap, const void *data, size_t n);

#endif
