/* Unit tests of the live view's layout: sizes, no overlap, full coverage,
 * tabs on narrow terminals, a notice below 80x24, hit-testing. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "tui/layout.h"

static void test_too_small(void **state)
{
        static const int sizes[][2] = {{79, 24}, {80, 23}, {40, 100}, {200, 10}, {0, 0}};
        struct layout l;
        size_t i;

        for (i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
                layout_compute(sizes[i][0], sizes[i][1], LAYOUT_TOOLS, &l);
                assert_int_equal(l.kind, LAYOUT_TOO_SMALL);
                assert_int_equal(layout_pane_at(&l, 5, 5), -1);
        }
        layout_compute(80, 24, LAYOUT_TOOLS, &l);
        assert_int_not_equal(l.kind, LAYOUT_TOO_SMALL);
}

/* Side by side: the three panes tile the body exactly, left to right. */
static void test_columns_tile(void **state)
{
        struct layout l;
        int cols, rows, p, x, y;

        for (cols = LAYOUT_COLUMNS_MIN; cols <= 300; cols += 7) {
                for (rows = 24; rows <= 80; rows += 13) {
                        layout_compute(cols, rows, LAYOUT_TRANSCRIPT, &l);
                        assert_int_equal(l.kind, LAYOUT_COLUMNS);
                        assert_int_equal(l.pane[0].x, 0);
                        for (p = 0; p < LAYOUT_PANES; p++) {
                                assert_true(l.pane[p].w >= 30);
                                assert_int_equal(l.pane[p].y, 2);
                                assert_int_equal(l.pane[p].h, rows - 4);
                                if (p > 0)
                                        assert_int_equal(l.pane[p].x,
                                                         l.pane[p - 1].x + l.pane[p - 1].w);
                        }
                        assert_int_equal(l.pane[2].x + l.pane[2].w, cols);
                        /* every body cell belongs to exactly the pane hit-testing names */
                        for (x = 0; x < cols; x += 3) {
                                for (y = 2; y < rows - 2; y += 5) {
                                        int hit = layout_pane_at(&l, y, x);
                                        assert_true(hit >= 0);
                                        assert_true(x >= l.pane[hit].x &&
                                                    x < l.pane[hit].x + l.pane[hit].w);
                                }
                        }
                        assert_int_equal(layout_pane_at(&l, 0, 10), -1);
                        assert_int_equal(layout_pane_at(&l, rows - 1, 10), -1);
                }
        }
}

static void test_tabs(void **state)
{
        struct layout l;
        int p, q;

        for (p = 0; p < LAYOUT_PANES; p++) {
                layout_compute(100, 30, (enum layout_pane)p, &l);
                assert_int_equal(l.kind, LAYOUT_TABS);
                assert_int_equal(l.tabs.y, 2);
                assert_int_equal(l.tabs.w, 100);
                for (q = 0; q < LAYOUT_PANES; q++)
                        assert_int_equal(l.pane[q].w, q == p ? 100 : 0);
                assert_int_equal(l.pane[p].y, 3);
                assert_int_equal(l.pane[p].h, 25);
                assert_int_equal(layout_pane_at(&l, 10, 50), p);
                assert_int_equal(layout_pane_at(&l, 2, 50), -1);
        }
        layout_compute(LAYOUT_COLUMNS_MIN - 1, 40, LAYOUT_EXECS, &l);
        assert_int_equal(l.kind, LAYOUT_TABS);
        layout_compute(100, 30, (enum layout_pane)7, &l);
        assert_int_equal(l.pane[LAYOUT_TRANSCRIPT].w, 100);
}

/* The setup screen's mode boxes: side by side, apart, inside the column
 * and the screen at every supported width; the column centred. */
static void test_setup_boxes(void **state)
{
        struct layout_setup s;
        int cols;

        for (cols = LAYOUT_MIN_COLS; cols <= 300; cols++) {
                layout_setup_compute(cols, &s);
                assert_true(s.x >= 0 && s.x + s.w <= cols);
                assert_true(s.x - (cols - s.x - s.w) <= 1 && s.x - (cols - s.x - s.w) >= -1);
                assert_int_equal(s.local.y, s.sandbox.y);
                assert_int_equal(s.local.h, s.sandbox.h);
                assert_int_equal(s.local.w, s.sandbox.w);
                assert_true(s.local.w >= 36); /* the longest line of a box fits */
                assert_int_equal(s.local.x, s.x);
                assert_true(s.local.x + s.local.w < s.sandbox.x);
                assert_true(s.sandbox.x + s.sandbox.w <= s.x + s.w);
                assert_true(s.local.y + s.local.h <= LAYOUT_MIN_ROWS - 2);
        }
        layout_setup_compute(160, &s);
        assert_int_equal(s.w, 96);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test(test_too_small),
            cmocka_unit_test(test_columns_tile),
            cmocka_unit_test(test_tabs),
            cmocka_unit_test(test_setup_boxes),
        };
        return cmocka_run_group_tests_name("layout", tests, NULL, NULL);
}
