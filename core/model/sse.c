/* sse: an incremental text/event-stream parser, following the WHATWG
 * event-stream rules. Lines are cut out of the caller's bytes in place; only
 * a line split across feeds is copied. It must never allocate per byte or
 * per line, and never let one event or one line grow past the limit. */
#include "core/model/sse.h"

#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core/util/bounds.h"
#include "core/util/buf.h"

#define SSE_DEFAULT_LIMIT ((size_t)BOUNDS_SSE_EVENT)
/* A buffer grown past this for one large event is released after it, so
 * that one big event does not pin memory for the rest of a session. */
#define SSE_KEEP_MAX ((size_t)1 << 20)

static const char bom[3] = {'\xEF', '\xBB', '\xBF'};

struct sse_buf {
        char *p;
        size_t len, cap; /* cap > len whenever p != NULL: room for a NUL */
};

struct sse_parser {
        sse_event_fn fn;
        void *ud;
        size_t limit;
        struct sse_buf line;  /* the start of a line split across feeds */
        struct sse_buf data;  /* the event's data lines, joined with '\n' */
        struct sse_buf event; /* the event name; empty means "message" */
        struct sse_buf id;    /* the last event ID; outlives events */
        long long retry_ms;
        unsigned bom;      /* BOM bytes matched at the stream start; 3: past it */
        bool has_data;     /* "data:" alone still makes an (empty) event */
        bool after_cr;     /* the last byte fed was '\r': a '\n' next is its pair */
        bool skipping;     /* over the limit: dropping lines up to a blank one */
        bool skip_partial; /* while skipping: the current line is not empty */
};

static int add(struct sse_buf *b, const char *s, size_t n)
{
        return buf_append(&b->p, &b->len, &b->cap, s, n);
}

static int buf_set(struct sse_buf *b, const char *s, size_t n)
{
        b->len = 0;
        return add(b, s, n);
}

static void buf_trim(struct sse_buf *b)
{
        b->len = 0;
        if (b->cap > SSE_KEEP_MAX) {
                free(b->p);
                b->p = NULL;
                b->cap = 0;
        }
}

/* Whether `extra` more bytes keep the event (data and name) within the
 * limit. Lines are bounded on their own, by their length, so that where the
 * stream was split never changes which events are too big. */
static bool fits(const struct sse_parser *p, size_t extra)
{
        size_t used = p->data.len + p->event.len;

        return extra <= p->limit && used <= p->limit - extra;
}

static bool line_fits(const struct sse_parser *p, size_t extra)
{
        return p->line.len <= p->limit && extra <= p->limit - p->line.len;
}

static void drop_event(struct sse_parser *p)
{
        buf_trim(&p->data);
        buf_trim(&p->event);
        buf_trim(&p->line);
        p->has_data = false;
}

/* The event is too big: drop it and skip to the next blank line. */
static int overflow(struct sse_parser *p, bool mid_line)
{
        drop_event(p);
        p->skipping = true;
        p->skip_partial = mid_line;
        return -E2BIG;
}

static void dispatch(struct sse_parser *p)
{
        if (p->has_data) {
                /* A name is a C string: one cut to nothing by a NUL is none. */
                const char *name =
                    p->event.len > 0 && p->event.p[0] != '\0' ? p->event.p : "message";

                p->fn(name, p->data.p != NULL ? p->data.p : "", p->data.len, p->ud);
        }
        drop_event(p);
}

static bool field_is(const char *f, size_t n, const char *name)
{
        return strlen(name) == n && memcmp(f, name, n) == 0;
}

static int add_data(struct sse_parser *p, const char *v, size_t n)
{
        size_t extra = n + (p->has_data ? 1 : 0);

        if (!fits(p, extra))
                return overflow(p, false);
        if (buf_reserve(&p->data.p, &p->data.cap, p->data.len, extra, 256) < 0)
                return -ENOMEM;
        if (p->has_data)
                add(&p->data, "\n", 1);
        add(&p->data, v, n);
        p->has_data = true;
        return 0;
}

static void set_retry(struct sse_parser *p, const char *v, size_t n)
{
        long long ms = 0;
        size_t i;

        if (n == 0)
                return;
        for (i = 0; i < n; i++) {
                if (v[i] < '0' || v[i] > '9' || ms > (LLONG_MAX - 9) / 10)
                        return;
                ms = ms * 10 + (v[i] - '0');
        }
        p->retry_ms = ms;
}

/* One complete line, without its terminator. */
static int process_line(struct sse_parser *p, const char *s, size_t n)
{
        const char *colon, *v;
        size_t flen, vlen;

        if (n == 0) {
                dispatch(p);
                return 0;
        }
        if (n > p->limit)
                return overflow(p, false);
        if (s[0] == ':')
                return 0;
        colon = memchr(s, ':', n);
        flen = colon != NULL ? (size_t)(colon - s) : n;
        v = colon != NULL ? colon + 1 : s + n;
        vlen = (size_t)(s + n - v);
        if (vlen > 0 && v[0] == ' ') {
                v++;
                vlen--;
        }
        if (field_is(s, flen, "data"))
                return add_data(p, v, vlen);
        if (field_is(s, flen, "event")) {
                if (!fits(p, vlen))
                        return overflow(p, false);
                return buf_set(&p->event, v, vlen);
        }
        if (field_is(s, flen, "id")) {
                if (memchr(v, '\0', vlen) == NULL)
                        return buf_set(&p->id, v, vlen);
                return 0;
        }
        if (field_is(s, flen, "retry"))
                set_retry(p, v, vlen);
        return 0;
}

/* A line ended in this feed; its start may be in the line buffer. */
static int end_line(struct sse_parser *p, const char *s, size_t n)
{
        struct sse_buf line;
        int rc;

        if (p->skipping) {
                if (n == 0 && !p->skip_partial)
                        p->skipping = false;
                p->skip_partial = false;
                return 0;
        }
        if (p->line.len == 0)
                return process_line(p, s, n);
        if (!line_fits(p, n))
                return overflow(p, false);
        if (add(&p->line, s, n) < 0)
                return -ENOMEM;
        /* Taken out while it is read: an overflow drops p->line. */
        line = p->line;
        p->line = (struct sse_buf){0};
        rc = process_line(p, line.p, line.len);
        p->line = line;
        buf_trim(&p->line);
        return rc;
}

/* The feed ended inside a line: keep its start for the next feed. */
static int keep_partial(struct sse_parser *p, const char *s, size_t n)
{
        if (n == 0)
                return 0;
        if (p->skipping) {
                p->skip_partial = true;
                return 0;
        }
        if (!line_fits(p, n))
                return overflow(p, true);
        return add(&p->line, s, n);
}

static int feed_bytes(struct sse_parser *p, const char *s, size_t n)
{
        const char *end = s + n, *cr = NULL;
        int rc = 0, r;

        if (n == 0)
                return 0;
        if (p->after_cr && s[0] == '\n')
                s++;
        p->after_cr = false;
        while (s < end) {
                const char *eol;

                /* Most streams have no '\r' at all: look for it once per
                 * feed, not once per line. */
                if (cr == NULL || cr < s) {
                        cr = memchr(s, '\r', (size_t)(end - s));
                        if (cr == NULL)
                                cr = end;
                }
                eol = memchr(s, '\n', (size_t)(cr - s));
                if (eol == NULL)
                        eol = cr;
                if (eol == end) {
                        r = keep_partial(p, s, (size_t)(end - s));
                        if (rc == 0)
                                rc = r;
                        break;
                }
                r = end_line(p, s, (size_t)(eol - s));
                if (rc == 0)
                        rc = r;
                if (*eol == '\r') {
                        if (eol + 1 == end)
                                p->after_cr = true;
                        else if (eol[1] == '\n')
                                eol++;
                }
                s = eol + 1;
        }
        return rc;
}

struct sse_parser *sse_new(sse_event_fn fn, void *ud)
{
        struct sse_parser *p = calloc(1, sizeof(*p));

        if (p == NULL)
                return NULL;
        p->fn = fn;
        p->ud = ud;
        p->limit = SSE_DEFAULT_LIMIT;
        p->retry_ms = -1;
        return p;
}

void sse_free(struct sse_parser *p)
{
        if (p == NULL)
                return;
        free(p->line.p);
        free(p->data.p);
        free(p->event.p);
        free(p->id.p);
        free(p);
}

void sse_set_limit(struct sse_parser *p, size_t max)
{
        p->limit = max > 0 ? max : SSE_DEFAULT_LIMIT;
}

int sse_feed(struct sse_parser *p, const char *buf, size_t n)
{
        int rc = 0, r;

        /* A BOM only counts at the very start, and may itself be split. */
        while (p->bom < 3 && n > 0) {
                if (buf[0] != bom[p->bom]) {
                        unsigned matched = p->bom;

                        p->bom = 3;
                        rc = feed_bytes(p, bom, matched);
                        break;
                }
                p->bom++;
                buf++;
                n--;
        }
        r = feed_bytes(p, buf, n);
        return rc != 0 ? rc : r;
}

void sse_finish(struct sse_parser *p)
{
        if (p->bom > 0 && p->bom < 3) {
                unsigned matched = p->bom;

                p->bom = 3;
                feed_bytes(p, bom, matched);
        }
        if (!p->skipping && p->line.len > 0)
                end_line(p, "", 0);
        if (!p->skipping)
                dispatch(p);
        /* Ready for the next stream (a reconnection); the last event ID and
         * the retry delay carry over, as a reconnecting client needs them. */
        drop_event(p);
        p->bom = 0;
        p->after_cr = false;
        p->skipping = false;
        p->skip_partial = false;
}

const char *sse_last_id(const struct sse_parser *p)
{
        return p->id.len > 0 ? p->id.p : "";
}

long long sse_retry_ms(const struct sse_parser *p)
{
        return p->retry_ms;
}
