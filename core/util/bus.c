/* bus: fan-out of events to subscribers, synchronously on the loop thread.
 * Subscribers must not emit from inside their callback. */
#include "core/util/bus.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "exec/fdio.h"

struct sub {
        bus_fn fn;
        void *ud;
};

struct bus {
        struct sub *subs;
        size_t nsubs;
        uint64_t seq;
        uint64_t t0_us;
};

static uint64_t mono_us(void)
{
        struct timespec ts;

        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (uint64_t)ts.tv_sec * 1000000u + (uint64_t)ts.tv_nsec / 1000u;
}

struct bus *bus_new(void)
{
        struct bus *b = calloc(1, sizeof(*b));

        if (b != NULL)
                b->t0_us = mono_us();
        return b;
}

void bus_free(struct bus *b)
{
        if (b == NULL)
                return;
        free(b->subs);
        free(b);
}

int bus_subscribe(struct bus *b, bus_fn fn, void *ud)
{
        struct sub *s = realloc(b->subs, (b->nsubs + 1) * sizeof(*s));

        if (s == NULL)
                return -ENOMEM;
        b->subs = s;
        b->subs[b->nsubs].fn = fn;
        b->subs[b->nsubs].ud = ud;
        b->nsubs++;
        return 0;
}

void bus_unsubscribe(struct bus *b, bus_fn fn, void *ud)
{
        size_t i;

        /* a tombstone: an emit under way keeps its place in the array */
        for (i = 0; i < b->nsubs; i++)
                if (b->subs[i].fn == fn && b->subs[i].ud == ud)
                        b->subs[i].fn = NULL;
}

uint64_t bus_now_ms(const struct bus *b)
{
        return (mono_us() - b->t0_us) / 1000u;
}

void bus_emit(struct bus *b, const char *type, json_t *fields)
{
        json_t *ev = json_object();
        size_t i;

        if (ev == NULL) {
                json_decref(fields);
                return;
        }
        /* t_ms counts from the session's start, its first event, not from
         * when the supervisor's setup screen opened */
        if (b->seq == 0)
                b->t0_us = mono_us();
        json_object_set_new(ev, "seq", json_integer((json_int_t)++b->seq));
        json_object_set_new(ev, "t_ms", json_integer((json_int_t)bus_now_ms(b)));
        json_object_set_new(ev, "type", json_string(type));
        if (fields != NULL) {
                json_object_update(ev, fields);
                json_decref(fields);
        }
        for (i = 0; i < b->nsubs; i++)
                if (b->subs[i].fn != NULL)
                        b->subs[i].fn(ev, b->subs[i].ud);
        json_decref(ev);
}

/* Length of the valid UTF-8 sequence at s (1-4), or 0 when invalid. */
static size_t utf8_len(const unsigned char *s, size_t n)
{
        size_t len, i;
        uint32_t cp;

        if (s[0] < 0x80)
                return 1;
        if ((s[0] & 0xe0) == 0xc0) {
                len = 2;
                cp = s[0] & 0x1f;
        } else if ((s[0] & 0xf0) == 0xe0) {
                len = 3;
                cp = s[0] & 0x0f;
        } else if ((s[0] & 0xf8) == 0xf0) {
                len = 4;
                cp = s[0] & 0x07;
        } else {
                return 0;
        }
        if (len > n)
                return 0;
        for (i = 1; i < len; i++) {
                if ((s[i] & 0xc0) != 0x80)
                        return 0;
                cp = (cp << 6) | (s[i] & 0x3f);
        }
        if ((len == 2 && cp < 0x80) || (len == 3 && cp < 0x800) || (len == 4 && cp < 0x10000) ||
            cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
                return 0;
        return len;
}

json_t *bus_string(const char *buf, size_t n)
{
        const unsigned char *s = (const unsigned char *)buf;
        char *out;
        size_t i = 0, o = 0;
        json_t *j;

        out = malloc(n * 3 + 1);
        if (out == NULL)
                return NULL;
        while (i < n) {
                size_t len = utf8_len(s + i, n - i);
                if (len == 0) {
                        memcpy(out + o, "\xef\xbf\xbd", 3);
                        o += 3;
                        i++;
                        continue;
                }
                memcpy(out + o, s + i, len);
                o += len;
                i += len;
        }
        j = json_stringn(out, o);
        free(out);
        return j;
}

void bus_write_all(int fd, const char *buf, size_t n)
{
        (void)fdio_write_all(fd, buf, n);
}

void bus_print_jsonl(const json_t *event, void *ud)
{
        char *s = json_dumps(event, JSON_COMPACT);

        (void)ud;
        if (s == NULL)
                return;
        bus_write_all(1, s, strlen(s));
        bus_write_all(1, "\n", 1);
        free(s);
}
