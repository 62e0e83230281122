/* termout: what `proctor run` and `proctor exec` print of the model and
 * the tools. A terminal gets core/view/safetext's rendering, "\n" and tabs kept;
 * anything else gets the bytes as they came, since scripts rely on that. */
#include "core/view/termout.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/util/bus.h"

void termout_init(struct termout *t, int fd, bool raw)
{
        memset(t, 0, sizeof(*t));
        t->fd = fd;
        t->sanitize = !raw && isatty(fd);
        safetext_init(&t->st, SAFETEXT_MULTILINE | SAFETEXT_TABS);
}

static void flush_buf(struct termout *t)
{
        if (t->buf.oom) {
                /* Never fall back to the raw bytes: say what was lost. */
                static const char lost[] = "[output lost: out of memory]";
                bus_write_all(t->fd, lost, sizeof(lost) - 1);
                free(t->buf.p);
                memset(&t->buf, 0, sizeof(t->buf));
                return;
        }
        bus_write_all(t->fd, t->buf.p, t->buf.len);
        t->buf.len = 0;
}

void termout_write(struct termout *t, const void *chunk, size_t len)
{
        if (!t->sanitize) {
                bus_write_all(t->fd, chunk, len);
                return;
        }
        safetext_feed(&t->st, &t->buf, chunk, len);
        flush_buf(t);
}

void termout_end(struct termout *t)
{
        if (!t->sanitize)
                return;
        safetext_end(&t->st, &t->buf);
        flush_buf(t);
}

void termout_printf(struct termout *t, const char *fmt, ...)
{
        va_list ap;
        char *s;
        int n;

        va_start(ap, fmt);
        n = vasprintf(&s, fmt, ap);
        va_end(ap);
        if (n < 0)
                return;
        termout_write(t, s, (size_t)n);
        termout_end(t);
        free(s);
}

void termout_message(FILE *f, const char *fmt, ...)
{
        va_list ap;
        char *s, *safe;
        int n;

        va_start(ap, fmt);
        n = vasprintf(&s, fmt, ap);
        va_end(ap);
        if (n < 0)
                return;
        safe = safetext_sanitize(s, (size_t)n, SAFETEXT_MULTILINE | SAFETEXT_TABS);
        fputs(safe != NULL ? safe : "[message lost: out of memory]\n", f);
        free(safe);
        free(s);
}

void termout_free(struct termout *t)
{
        free(t->buf.p);
        t->buf.p = NULL;
        t->buf.len = t->buf.cap = 0;
}
