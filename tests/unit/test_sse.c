/* Unit tests for the server-sent events parser: line endings, splits at
 * every offset, comments, multi-line data, event names, the size limit,
 * the BOM and the end of a stream without its blank line. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "core/model/sse.h"

#define MAX_EVENTS 32

/* Feeds a string literal (which may hold a NUL). */
#define FEED(p, lit) sse_feed((p), (lit), sizeof(lit) - 1)

struct events {
        size_t n;
        char *name[MAX_EVENTS];
        char *data[MAX_EVENTS];
        size_t len[MAX_EVENTS];
};

static void on_event(const char *event, const char *data, size_t len, void *ud)
{
        struct events *ev = ud;

        assert_true(ev->n < MAX_EVENTS);
        assert_int_equal(data[len], '\0');
        ev->name[ev->n] = strdup(event);
        ev->data[ev->n] = malloc(len + 1);
        memcpy(ev->data[ev->n], data, len + 1);
        ev->len[ev->n] = len;
        ev->n++;
}

static void events_clear(struct events *ev)
{
        size_t i;

        for (i = 0; i < ev->n; i++) {
                free(ev->name[i]);
                free(ev->data[i]);
        }
        ev->n = 0;
}

static void assert_event(const struct events *ev, size_t i, const char *name, const char *data)
{
        assert_true(i < ev->n);
        assert_string_equal(ev->name[i], name);
        assert_int_equal(ev->len[i], strlen(data));
        assert_memory_equal(ev->data[i], data, ev->len[i]);
}

static void assert_same_events(const struct events *a, const struct events *b)
{
        size_t i;

        assert_int_equal(a->n, b->n);
        for (i = 0; i < a->n; i++) {
                assert_string_equal(a->name[i], b->name[i]);
                assert_int_equal(a->len[i], b->len[i]);
                assert_memory_equal(a->data[i], b->data[i], a->len[i]);
        }
}

/* Parses `s` in one feed, then finishes the stream. */
static void parse_all(const char *s, size_t n, struct events *ev)
{
        struct sse_parser *p = sse_new(on_event, ev);

        assert_non_null(p);
        assert_int_equal(sse_feed(p, s, n), 0);
        sse_finish(p);
        sse_free(p);
}

static void test_line_endings(void **state)
{
        static const char *const streams[] = {
            "event: a\ndata: one\ndata: two\n\ndata: three\n\n",
            "event: a\r\ndata: one\r\ndata: two\r\n\r\ndata: three\r\n\r\n",
            "event: a\rdata: one\rdata: two\r\rdata: three\r\r",
            "event: a\r\ndata: one\rdata: two\n\r\ndata: three\r\r\n",
        };
        struct events ev = {0};
        size_t i;

        for (i = 0; i < sizeof(streams) / sizeof(streams[0]); i++) {
                parse_all(streams[i], strlen(streams[i]), &ev);
                assert_int_equal(ev.n, 2);
                assert_event(&ev, 0, "a", "one\ntwo");
                assert_event(&ev, 1, "message", "three");
                events_clear(&ev);
        }
}

/* "\r" ends a line at once; a "\n" in the next feed belongs to it and must
 * not count as a second, blank line (which would dispatch early). */
static void test_crlf_split_across_feeds(void **state)
{
        struct sse_parser *p;
        struct events ev = {0};

        p = sse_new(on_event, &ev);
        assert_int_equal(FEED(p, "data: a\r"), 0);
        assert_int_equal(sse_feed(p, "", 0), 0); /* an empty read changes nothing */
        assert_int_equal(FEED(p, "\ndata: b\r"), 0);
        assert_int_equal(ev.n, 0);
        assert_int_equal(FEED(p, "\n\r"), 0);
        assert_int_equal(ev.n, 1);
        assert_event(&ev, 0, "message", "a\nb");
        assert_int_equal(FEED(p, "\n"), 0);
        assert_int_equal(FEED(p, "data: c\r\r"), 0);
        assert_int_equal(ev.n, 2);
        assert_event(&ev, 1, "message", "c");
        sse_free(p);
        events_clear(&ev);
}

/* A stream with a bit of everything: a BOM, comments, CRLF and lone CR,
 * multi-line data, names, ids, retry, UTF-8 text, an event without data. */
static const char sample[] =
    "\xEF\xBB\xBF: OPENROUTER PROCESSING\r\n\r\n"
    "retry: 1500\n"
    "id: 7\n"
    "data: {\"choices\":[{\"delta\":{\"content\":\"h\xC3\xA9llo \xE2\x9C\x93\"}}]}\n\n"
    "event: ping\r\ndata\r\n\r\n"
    ": keep-alive\n"
    "event: tool\rdata:line one\rdata: line two\r\r"
    "event: lost\nid: 8\n\n"
    "data: \xE6\x97\xA5\xE6\x9C\xAC\xE8\xAA\x9E\n"
    "unknown: field\n"
    "data:  two spaces\n\n"
    "data: [DONE]\n\n";

static void test_split_every_offset(void **state)
{
        const size_t n = sizeof(sample) - 1;
        struct events ref = {0}, ev = {0};
        struct sse_parser *p;
        size_t i, j;

        parse_all(sample, n, &ref);
        assert_int_equal(ref.n, 5);
        assert_event(&ref, 0, "message",
                     "{\"choices\":[{\"delta\":{\"content\":\"h\xC3\xA9llo \xE2\x9C\x93\"}}]}");
        assert_event(&ref, 1, "ping", "");
        assert_event(&ref, 2, "tool", "line one\nline two");
        assert_event(&ref, 3, "message", "\xE6\x97\xA5\xE6\x9C\xAC\xE8\xAA\x9E\n two spaces");
        assert_event(&ref, 4, "message", "[DONE]");

        /* Every way to cut the stream in two, then in three pieces. */
        for (i = 0; i <= n; i++) {
                for (j = i; j <= n; j++) {
                        p = sse_new(on_event, &ev);
                        assert_int_equal(sse_feed(p, sample, i), 0);
                        assert_int_equal(sse_feed(p, sample + i, j - i), 0);
                        assert_int_equal(sse_feed(p, sample + j, n - j), 0);
                        sse_finish(p);
                        assert_same_events(&ref, &ev);
                        assert_string_equal(sse_last_id(p), "8");
                        assert_int_equal(sse_retry_ms(p), 1500);
                        sse_free(p);
                        events_clear(&ev);
                }
        }
        /* And one byte at a time. */
        p = sse_new(on_event, &ev);
        for (i = 0; i < n; i++)
                assert_int_equal(sse_feed(p, sample + i, 1), 0);
        sse_finish(p);
        assert_same_events(&ref, &ev);
        sse_free(p);
        events_clear(&ev);
        events_clear(&ref);
}

static void test_comments(void **state)
{
        static const char s[] = ": keep-alive\n\n"
                                ": OPENROUTER PROCESSING\n\n"
                                ":\n\n"
                                "data: a\n"
                                ": a comment inside an event\n"
                                "data: b\n\n";
        struct events ev = {0};

        parse_all(s, sizeof(s) - 1, &ev);
        assert_int_equal(ev.n, 1);
        assert_event(&ev, 0, "message", "a\nb");
        events_clear(&ev);
}

static void test_multiline_data(void **state)
{
        /* "data" without a colon is an empty data line; only one space
         * after the colon is eaten. */
        static const char s[] = "data: first\n"
                                "data:second\n"
                                "data\n"
                                "data:  third\n"
                                "data: \n\n";
        struct events ev = {0};

        parse_all(s, sizeof(s) - 1, &ev);
        assert_int_equal(ev.n, 1);
        assert_event(&ev, 0, "message", "first\nsecond\n\n third\n");
        events_clear(&ev);
}

static void test_event_names(void **state)
{
        static const char s[] = "event: tool_call\ndata: 1\n\n"
                                "data: 2\n\n"
                                "event:\ndata: 3\n\n"
                                "event: a\nevent: b\ndata: 4\n\n"
                                "event:error\ndata: 5\n\n"
                                "event: \0nul\ndata: 6\n\n";
        struct events ev = {0};

        parse_all(s, sizeof(s) - 1, &ev);
        assert_int_equal(ev.n, 6);
        assert_event(&ev, 0, "tool_call", "1");
        assert_event(&ev, 1, "message", "2");
        assert_event(&ev, 2, "message", "3");
        assert_event(&ev, 3, "b", "4");
        assert_event(&ev, 4, "error", "5");
        assert_event(&ev, 5, "message", "6");
        events_clear(&ev);
}

static void test_events_without_data(void **state)
{
        static const char s[] = "event: nothing\n\n"
                                "id: 42\n\n"
                                "retry: 10\n\n"
                                "\n\n\n"
                                "data:\n\n";
        struct events ev = {0};
        struct sse_parser *p = sse_new(on_event, &ev);

        assert_int_equal(sse_feed(p, s, sizeof(s) - 1), 0);
        /* Only the last one has a data field, even if empty. */
        assert_int_equal(ev.n, 1);
        assert_event(&ev, 0, "message", "");
        assert_string_equal(sse_last_id(p), "42");
        assert_int_equal(sse_retry_ms(p), 10);
        sse_free(p);
        events_clear(&ev);
}

static void test_id_and_retry(void **state)
{
        static const char s[] = "retry: 3000\nretry: 12x\nretry:\nretry: -5\n"
                                "id: abc\nid: a\0b\ndata: x\n\n";
        struct events ev = {0};
        struct sse_parser *p = sse_new(on_event, &ev);

        assert_string_equal(sse_last_id(p), "");
        assert_int_equal(sse_retry_ms(p), -1);
        assert_int_equal(sse_feed(p, s, sizeof(s) - 1), 0);
        assert_int_equal(ev.n, 1);
        /* Malformed retry values and an id with a NUL are ignored. */
        assert_int_equal(sse_retry_ms(p), 3000);
        assert_string_equal(sse_last_id(p), "abc");
        assert_int_equal(FEED(p, "id\n\n"), 0);
        assert_string_equal(sse_last_id(p), "");
        sse_free(p);
        events_clear(&ev);
}

static void test_oversize_recovers(void **state)
{
        char big[200];
        struct events ev = {0};
        struct sse_parser *p = sse_new(on_event, &ev);
        int i, r, rc = 0;

        sse_set_limit(p, 64);
        memset(big, 'x', sizeof(big));

        /* One data line over the limit, in a single feed. */
        assert_int_equal(FEED(p, "data: "), 0);
        assert_int_equal(sse_feed(p, big, 100), -E2BIG);
        assert_int_equal(FEED(p, "\ndata: more of the same\n\n"), 0);
        assert_int_equal(ev.n, 0);
        assert_int_equal(FEED(p, "data: ok1\n\n"), 0);
        assert_int_equal(ev.n, 1);
        assert_event(&ev, 0, "message", "ok1");

        /* Many short lines adding up to more than the limit; the rest of
         * the feed is still parsed. */
        assert_int_equal(FEED(p, "event: big\n"), 0);
        for (i = 0; i < 5; i++)
                assert_int_equal(FEED(p, "data: 0123456789\n"), 0);
        assert_int_equal(FEED(p, "data: 0123456789\ndata: 0123\n\ndata: ok2\n\n"), -E2BIG);
        assert_int_equal(ev.n, 2);
        assert_event(&ev, 1, "message", "ok2");

        /* A line that never ends within the limit, fed in small pieces;
         * the event after the next blank line arrives intact. */
        assert_int_equal(FEED(p, "data: "), 0);
        for (i = 0; i < 10; i++) {
                r = sse_feed(p, big, 20);
                if (r != 0)
                        rc = r;
        }
        assert_int_equal(rc, -E2BIG);
        assert_int_equal(FEED(p, "\r\n\r\nevent: after\r\ndata: ok3\r\n\r\n"), 0);
        assert_int_equal(ev.n, 3);
        assert_event(&ev, 2, "after", "ok3");

        /* sse_finish does not dispatch a dropped event. */
        assert_int_equal(FEED(p, "data: "), 0);
        assert_int_equal(sse_feed(p, big, 100), -E2BIG);
        sse_finish(p);
        assert_int_equal(ev.n, 3);
        sse_free(p);
        events_clear(&ev);
}

/* The default limit is 8 MiB, and it bounds a line too: a data line of
 * exactly 8 MiB passes, one byte more does not. */
static void test_default_limit(void **state)
{
        const size_t limit = (size_t)8 << 20;
        char *buf = malloc(limit + 16);
        struct events ev = {0};
        struct sse_parser *p = sse_new(on_event, &ev);

        memcpy(buf, "data: ", 6);
        memset(buf + 6, 'y', limit - 6);
        memcpy(buf + limit, "\n\n", 2);
        assert_int_equal(sse_feed(p, buf, limit + 2), 0);
        assert_int_equal(ev.n, 1);
        assert_int_equal(ev.len[0], limit - 6);
        memset(buf + 6, 'z', limit - 5);
        memcpy(buf + limit + 1, "\n\n", 2);
        assert_int_equal(sse_feed(p, buf, limit + 3), -E2BIG);
        assert_int_equal(ev.n, 1);
        assert_int_equal(FEED(p, "data: small\n\n"), 0);
        assert_int_equal(ev.n, 2);
        assert_event(&ev, 1, "message", "small");
        sse_free(p);
        events_clear(&ev);
        free(buf);
}

static void test_bom(void **state)
{
        struct events ev = {0};
        struct sse_parser *p;

        /* Whole, then split after each of its bytes. */
        for (int cut = 0; cut <= 3; cut++) {
                static const char s[] = "\xEF\xBB\xBF"
                                        "data: x\n\n";

                p = sse_new(on_event, &ev);
                assert_int_equal(sse_feed(p, s, (size_t)cut), 0);
                assert_int_equal(sse_feed(p, s + cut, sizeof(s) - 1 - (size_t)cut), 0);
                assert_int_equal(ev.n, 1);
                assert_event(&ev, 0, "message", "x");
                sse_free(p);
                events_clear(&ev);
        }

        /* Only at the very start: later it is part of the text, and an
         * unfinished BOM is text too (here it spoils the field name). */
        p = sse_new(on_event, &ev);
        assert_int_equal(FEED(p, "data: a\n\n\xEF\xBB\xBF"
                                 "data: b\n\n"),
                         0);
        assert_int_equal(ev.n, 1);
        assert_event(&ev, 0, "message", "a");
        sse_free(p);
        events_clear(&ev);

        p = sse_new(on_event, &ev);
        assert_int_equal(FEED(p, "\xEF\xBB"), 0);
        assert_int_equal(FEED(p, "data: c\n\ndata: d\n\n"), 0);
        assert_int_equal(ev.n, 1);
        assert_event(&ev, 0, "message", "d");
        sse_free(p);
        events_clear(&ev);

        /* Data may start with a BOM of its own. */
        p = sse_new(on_event, &ev);
        assert_int_equal(FEED(p, "\xEF\xBB\xBF"
                                 "data: \xEF\xBB\xBFq\n\n"),
                         0);
        assert_int_equal(ev.n, 1);
        assert_event(&ev, 0, "message", "\xEF\xBB\xBFq");
        sse_free(p);
        events_clear(&ev);
}

static void test_finish(void **state)
{
        struct events ev = {0};
        struct sse_parser *p = sse_new(on_event, &ev);

        /* No final blank line, and not even a final line end. */
        assert_int_equal(FEED(p, "event: last\ndata: a\ndata: b"), 0);
        assert_int_equal(ev.n, 0);
        sse_finish(p);
        assert_int_equal(ev.n, 1);
        assert_event(&ev, 0, "last", "a\nb");

        /* The parser starts over: a new stream may begin with a BOM. */
        assert_int_equal(FEED(p, "\xEF\xBB\xBF"
                                 "data: c\r"),
                         0);
        sse_finish(p);
        assert_int_equal(ev.n, 2);
        assert_event(&ev, 1, "message", "c");

        /* Nothing pending: nothing dispatched; a lone comment neither. */
        sse_finish(p);
        assert_int_equal(FEED(p, ": bye"), 0);
        sse_finish(p);
        assert_int_equal(ev.n, 2);
        sse_free(p);
        events_clear(&ev);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test(test_line_endings),
            cmocka_unit_test(test_crlf_split_across_feeds),
            cmocka_unit_test(test_split_every_offset),
            cmocka_unit_test(test_comments),
            cmocka_unit_test(test_multiline_data),
            cmocka_unit_test(test_event_names),
            cmocka_unit_test(test_events_without_data),
            cmocka_unit_test(test_id_and_retry),
            cmocka_unit_test(test_oversize_recovers),
            cmocka_unit_test(test_default_limit),
            cmocka_unit_test(test_bom),
            cmocka_unit_test(test_finish),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
