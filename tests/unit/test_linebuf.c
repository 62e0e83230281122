/* Unit tests for linebuf: lines split anywhere across pieces, empty lines,
 * a line past the bound dropped whole with the next one intact, a last
 * line without its newline at the end, and a stop asked by the reader. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "core/util/linebuf.h"

struct got {
        char text[512]; /* the lines, each as "[LINE]", a dropped one as "!" */
        int stop_after; /* lines before the reader says stop; 0: never */
        int n;
};

static bool take(void *ud, char *line)
{
        struct got *g = ud;
        size_t o = strlen(g->text);

        if (line == NULL)
                snprintf(g->text + o, sizeof(g->text) - o, "!");
        else
                snprintf(g->text + o, sizeof(g->text) - o, "[%s]", line);
        return ++g->n != g->stop_after;
}

static void test_pieces(void **state)
{
        static const char stream[] = "one\n\ntwo three\nfour";
        struct got g = {0};

        (void)state;
        /* every way to cut the stream in two gives the same lines */
        for (size_t cut = 0; cut <= sizeof(stream) - 1; cut++) {
                struct linebuf lb = {.max = 64};
                memset(&g, 0, sizeof(g));
                linebuf_feed(&lb, stream, cut, take, &g);
                linebuf_feed(&lb, stream + cut, sizeof(stream) - 1 - cut, take, &g);
                assert_string_equal(g.text, "[one][][two three]");
                linebuf_end(&lb, take, &g);
                assert_string_equal(g.text, "[one][][two three][four]");
                linebuf_free(&lb);
        }
}

static void test_bound(void **state)
{
        struct linebuf lb = {.max = 8};
        struct got g = {0};

        (void)state;
        linebuf_feed(&lb, "12345678\n123", 12, take, &g);
        linebuf_feed(&lb, "456789", 6, take, &g); /* past 8 bytes: dropped */
        linebuf_feed(&lb, "abc\nok\n", 7, take, &g);
        assert_string_equal(g.text, "[12345678]![ok]");
        linebuf_feed(&lb, "much too long", 13, take, &g);
        linebuf_end(&lb, take, &g); /* a dropped last line says nothing */
        assert_string_equal(g.text, "[12345678]![ok]");
        linebuf_feed(&lb, "after\n", 6, take, &g);
        assert_string_equal(g.text, "[12345678]![ok][after]");
        linebuf_free(&lb);
}

static void test_stop(void **state)
{
        struct linebuf lb = {.max = 64};
        struct got g = {.stop_after = 2};

        (void)state;
        linebuf_feed(&lb, "a\nb\nc\nd\n", 8, take, &g);
        assert_string_equal(g.text, "[a][b]");
        linebuf_free(&lb);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test(test_pieces),
            cmocka_unit_test(test_bound),
            cmocka_unit_test(test_stop),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
