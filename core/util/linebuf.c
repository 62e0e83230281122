/* linebuf: bounded lines from a stream (see linebuf.h). */
#include "core/util/linebuf.h"

#include <stdlib.h>
#include <string.h>

#include "core/util/buf.h"

/* Hands the line gathered so far to fn, the buffer emptied first (fn may
 * close the buffer's owner). */
static bool deliver(struct linebuf *lb, linebuf_fn fn, void *ud)
{
        bool dropped = lb->overlong || buf_reserve(&lb->p, &lb->cap, lb->len, 0, 256) < 0;

        if (!dropped)
                lb->p[lb->len] = '\0';
        lb->len = 0;
        lb->overlong = false;
        return fn(ud, dropped ? NULL : lb->p);
}

void linebuf_feed(struct linebuf *lb, const char *data, size_t n, linebuf_fn fn, void *ud)
{
        while (n > 0) {
                const char *nl = memchr(data, '\n', n);
                size_t k = nl != NULL ? (size_t)(nl - data) : n;

                if (!lb->overlong) {
                        if (lb->len + k > lb->max ||
                            buf_reserve(&lb->p, &lb->cap, lb->len, k, 256) < 0) {
                                lb->overlong = true;
                        } else {
                                memcpy(lb->p + lb->len, data, k);
                                lb->len += k;
                        }
                }
                if (nl == NULL)
                        return;
                data += k + 1;
                n -= k + 1;
                if (!deliver(lb, fn, ud))
                        return;
        }
}

void linebuf_end(struct linebuf *lb, linebuf_fn fn, void *ud)
{
        if (lb->len > 0 && !lb->overlong)
                deliver(lb, fn, ud);
        lb->len = 0;
        lb->overlong = false;
}

void linebuf_free(struct linebuf *lb)
{
        free(lb->p);
        lb->p = NULL;
        lb->len = lb->cap = 0;
}
