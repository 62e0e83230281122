/* Unit tests for the line diff: the changed lines and their context, folded
 * runs, new and emptied files, and the bound on what it will compare. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "core/view/linediff.h"

/* The diff as text: each line "OPtext\n", a fold "@N\n". */
static char *render(const char *old, const char *new, size_t context, int *rc)
{
        struct linediff d;
        static char out[8192];
        size_t i, o = 0;

        *rc = linediff_compute(old, strlen(old), new, strlen(new), context, &d);
        out[0] = '\0';
        for (i = 0; *rc == 0 && i < d.n; i++) {
                const struct linediff_line *l = &d.lines[i];
                if (l->op == '@')
                        o += (size_t)snprintf(out + o, sizeof(out) - o, "@%zu\n", l->skipped);
                else
                        o += (size_t)snprintf(out + o, sizeof(out) - o, "%c%.*s\n", l->op,
                                              (int)l->len, l->text);
        }
        linediff_free(&d);
        return out;
}

static void test_change_in_the_middle(void **state)
{
        int rc;
        const char *old = "a\nb\nc\nd\ne\nf\ng\nh\n", *new = "a\nb\nc\nd\nE\nf\ng\nh\n";

        assert_string_equal(render(old, new, 1, &rc), "@3\n d\n-e\n+E\n f\n@2\n");
        assert_int_equal(rc, 0);
        assert_string_equal(render(old, new, 10, &rc), " a\n b\n c\n d\n-e\n+E\n f\n g\n h\n");
}

static void test_insert_and_delete(void **state)
{
        int rc;

        assert_string_equal(render("one\nthree\n", "one\ntwo\nthree\n", 3, &rc),
                            " one\n+two\n three\n");
        assert_string_equal(render("x\ny\nz", "x\nz", 3, &rc), " x\n-y\n z\n");
        /* a new file is all added, an emptied one all removed */
        assert_string_equal(render("", "l1\nl2\n", 3, &rc), "+l1\n+l2\n");
        assert_string_equal(render("l1\n", "", 3, &rc), "-l1\n");
        /* the same text: one fold */
        assert_string_equal(render("s\nt\n", "s\nt\n", 3, &rc), "@2\n");
}

static void test_counts_and_bound(void **state)
{
        struct linediff d;
        size_t n = LINEDIFF_MAX_LINES + 1, i;
        char *big = malloc(n * 4 + 1), *other = malloc(n * 4 + 1);

        assert_int_equal(linediff_compute("a\nb\n", 4, "a\nB\nc\n", 6, 3, &d), 0);
        assert_int_equal(d.added, 2);
        assert_int_equal(d.removed, 1);
        linediff_free(&d);
        for (i = 0; i < n; i++) {
                memcpy(big + i * 4, "abc\n", 4);
                memcpy(other + i * 4, "xyz\n", 4);
        }
        assert_int_equal(linediff_compute(big, n * 4, other, n * 4, 3, &d), -E2BIG);
        assert_null(d.lines);
        /* a small change in a long file is cheap: the common ends are set aside */
        other[n * 2] = 'Q';
        memcpy(other, big, n * 4);
        other[n * 2] = 'Q';
        assert_int_equal(linediff_compute(big, n * 4, other, n * 4, 3, &d), 0);
        assert_int_equal(d.added, 1);
        assert_int_equal(d.removed, 1);
        linediff_free(&d);
        free(big);
        free(other);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test(test_change_in_the_middle),
            cmocka_unit_test(test_insert_and_delete),
            cmocka_unit_test(test_counts_and_bound),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
