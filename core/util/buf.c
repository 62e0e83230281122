/* buf: growing a heap block of bytes by doubling (see buf.h). It must
 * never compute a size that wraps around, nor touch the block on failure. */
#include "core/util/buf.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int buf_reserve(char **p, size_t *cap, size_t len, size_t more, size_t first)
{
        size_t need, c = *cap ? *cap : first ? first : 1;
        char *grown;

        if (len > SIZE_MAX - 1 || more > SIZE_MAX - 1 - len)
                return -EOVERFLOW;
        need = len + more + 1;
        if (need <= *cap)
                return 0;
        while (c < need) {
                if (c > SIZE_MAX / 2)
                        return -EOVERFLOW;
                c *= 2;
        }
        grown = realloc(*cap ? *p : NULL, c);
        if (grown == NULL)
                return -ENOMEM;
        *p = grown;
        *cap = c;
        return 0;
}

int buf_append(char **p, size_t *len, size_t *cap, const void *data, size_t n)
{
        int rc = buf_reserve(p, cap, *len, n, 64);

        if (rc < 0)
                return rc;
        if (n > 0)
                memcpy(*p + *len, data, n);
        *len += n;
        (*p)[*len] = '\0';
        return 0;
}
