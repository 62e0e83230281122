/* Unit tests of the prompt editor: what insertion keeps and drops, the
 * cursor moves and kills on multi-byte text and several lines, history,
 * and the one-row view that keeps the cursor in sight. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "tui/prompt.h"

static void type(struct prompt *p, const char *s)
{
        assert_true(prompt_insert(p, s, strlen(s)) >= 0);
}

static void test_insert_filters(void **state)
{
        struct prompt p;

        prompt_init(&p);
        assert_string_equal(prompt_text(&p), "");
        /* ESC sequences, C0 and C1 controls and invalid bytes never get in */
        type(&p, "a\033[2Jb\x07\xc2\x9b"
                 "c\xff\xc3(d");
        assert_string_equal(prompt_text(&p), "a[2Jbc(d");
        prompt_clear(&p);
        /* CR LF and CR become LF; a tab a space; UTF-8 stays whole */
        type(&p, "one\r\ntwo\rthree\tf\xc3\xbcr \xf0\x9f\x98\x80");
        assert_string_equal(prompt_text(&p), "one\ntwo\nthree f\xc3\xbcr \xf0\x9f\x98\x80");
        /* overlong forms and surrogates are invalid */
        prompt_clear(&p);
        type(&p, "x\xc0\xafy\xed\xa0\x80z");
        assert_string_equal(prompt_text(&p), "xyz");
        assert_false(prompt_has_text(&(struct prompt){0}));
        prompt_clear(&p);
        type(&p, " \n ");
        assert_false(prompt_has_text(&p));
        type(&p, "q");
        assert_true(prompt_has_text(&p));
        prompt_free(&p);
}

static void test_cap(void **state)
{
        struct prompt p;
        char *big = malloc(PROMPT_MAX + 10);

        assert_non_null(big);
        memset(big, 'x', PROMPT_MAX + 9);
        big[PROMPT_MAX + 9] = '\0';
        prompt_init(&p);
        assert_int_equal(prompt_insert(&p, big, strlen(big)), PROMPT_MAX);
        assert_int_equal(prompt_insert(&p, "y", 1), 0);
        assert_int_equal(strlen(prompt_text(&p)), PROMPT_MAX);
        free(big);
        prompt_free(&p);
}

static void test_moves_and_edits(void **state)
{
        struct prompt p;

        prompt_init(&p);
        type(&p, "h\xc3\xa9llo world");
        prompt_edit(&p, PROMPT_HOME);
        type(&p, "X");
        assert_string_equal(prompt_text(&p), "Xh\xc3\xa9llo world");
        /* one character right steps over both bytes of é */
        prompt_edit(&p, PROMPT_RIGHT);
        prompt_edit(&p, PROMPT_RIGHT);
        type(&p, "-");
        assert_string_equal(prompt_text(&p), "Xh\xc3\xa9-llo world");
        prompt_edit(&p, PROMPT_LEFT);
        prompt_edit(&p, PROMPT_BACKSPACE);
        assert_string_equal(prompt_text(&p), "Xh-llo world");
        prompt_edit(&p, PROMPT_DELETE);
        assert_string_equal(prompt_text(&p), "Xhllo world");
        prompt_edit(&p, PROMPT_END);
        assert_true(prompt_edit(&p, PROMPT_KILL_WORD));
        assert_string_equal(prompt_text(&p), "Xhllo ");
        type(&p, "there friend");
        prompt_edit(&p, PROMPT_WORD_LEFT);
        prompt_edit(&p, PROMPT_WORD_LEFT);
        type(&p, "my ");
        assert_string_equal(prompt_text(&p), "Xhllo my there friend");
        prompt_edit(&p, PROMPT_WORD_RIGHT);
        assert_true(prompt_edit(&p, PROMPT_KILL_END));
        assert_string_equal(prompt_text(&p), "Xhllo my there");
        assert_false(prompt_edit(&p, PROMPT_KILL_END));
        assert_true(prompt_edit(&p, PROMPT_KILL_START));
        assert_string_equal(prompt_text(&p), "");
        assert_false(prompt_edit(&p, PROMPT_BACKSPACE));
        assert_false(prompt_edit(&p, PROMPT_LEFT));
        prompt_free(&p);
}

static void test_lines(void **state)
{
        struct prompt p;
        size_t n, at;

        prompt_init(&p);
        type(&p, "first line\nsecond\nthird one");
        prompt_lines(&p, &n, &at);
        assert_int_equal(n, 3);
        assert_int_equal(at, 3);
        /* Home and Ctrl-U work on the cursor's line only */
        prompt_edit(&p, PROMPT_HOME);
        type(&p, ">");
        assert_string_equal(prompt_text(&p), "first line\nsecond\n>third one");
        /* up keeps the column, clamped to the shorter line */
        prompt_edit(&p, PROMPT_END);
        prompt_edit(&p, PROMPT_UP);
        type(&p, "!");
        assert_string_equal(prompt_text(&p), "first line\nsecond!\n>third one");
        prompt_edit(&p, PROMPT_UP);
        prompt_lines(&p, &n, &at);
        assert_int_equal(at, 1);
        prompt_edit(&p, PROMPT_KILL_START);
        assert_string_equal(prompt_text(&p), "ine\nsecond!\n>third one");
        /* Ctrl-K at a line's end joins the next line */
        prompt_edit(&p, PROMPT_END);
        prompt_edit(&p, PROMPT_KILL_END);
        assert_string_equal(prompt_text(&p), "inesecond!\n>third one");
        prompt_edit(&p, PROMPT_DOWN);
        prompt_lines(&p, &n, &at);
        assert_int_equal(n, 2);
        assert_int_equal(at, 2);
        prompt_free(&p);
}

static void test_history(void **state)
{
        struct prompt p;
        char *t;

        prompt_init(&p);
        type(&p, "one");
        t = prompt_take(&p);
        assert_string_equal(t, "one");
        free(t);
        assert_string_equal(prompt_text(&p), "");
        type(&p, "two");
        free(prompt_take(&p));
        type(&p, "two"); /* a repeat is kept once */
        free(prompt_take(&p));
        type(&p, "draft");
        assert_true(prompt_edit(&p, PROMPT_UP));
        assert_string_equal(prompt_text(&p), "two");
        assert_true(prompt_edit(&p, PROMPT_UP));
        assert_string_equal(prompt_text(&p), "one");
        assert_false(prompt_edit(&p, PROMPT_UP));
        assert_true(prompt_edit(&p, PROMPT_DOWN));
        assert_string_equal(prompt_text(&p), "two");
        assert_true(prompt_edit(&p, PROMPT_DOWN));
        assert_string_equal(prompt_text(&p), "draft");
        assert_false(prompt_edit(&p, PROMPT_DOWN));
        prompt_free(&p);
}

static void test_history_bounded(void **state)
{
        struct prompt p;
        char s[16];
        int i;

        prompt_init(&p);
        for (i = 0; i < PROMPT_HISTORY + 5; i++) {
                snprintf(s, sizeof(s), "p%d", i);
                type(&p, s);
                free(prompt_take(&p));
        }
        assert_int_equal(p.nhist, PROMPT_HISTORY);
        for (i = 0; prompt_edit(&p, PROMPT_UP); i++)
                ;
        assert_int_equal(i, PROMPT_HISTORY);
        assert_string_equal(prompt_text(&p), "p5");
        prompt_free(&p);
}

static void test_view(void **state)
{
        struct prompt p;
        char out[256];
        int col, i;

        prompt_init(&p);
        type(&p, "ab\ncd");
        prompt_view(&p, 20, "|", out, sizeof(out), &col);
        assert_string_equal(out, "ab|cd");
        assert_int_equal(col, 5);
        /* a long line scrolls so that the cursor stays in view */
        prompt_clear(&p);
        for (i = 0; i < 50; i++)
                type(&p, i % 10 == 0 ? "#" : "x");
        prompt_view(&p, 20, "|", out, sizeof(out), &col);
        assert_true(col >= 0 && col < 20);
        assert_true(strlen(out) <= 20);
        assert_int_equal(out[strlen(out) - 1], 'x');
        prompt_edit(&p, PROMPT_HOME);
        prompt_view(&p, 20, "|", out, sizeof(out), &col);
        assert_int_equal(col, 0);
        assert_int_equal(out[0], '#');
        /* wide characters count two columns and are never cut in half */
        prompt_clear(&p);
        for (i = 0; i < 30; i++)
                type(&p, "\xe5\xb7\xa5");
        prompt_view(&p, 9, "|", out, sizeof(out), &col);
        assert_true(col >= 0 && col < 9);
        assert_int_equal(strlen(out) % 3, 0);
        prompt_free(&p);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test(test_insert_filters),
            cmocka_unit_test(test_cap),
            cmocka_unit_test(test_moves_and_edits),
            cmocka_unit_test(test_lines),
            cmocka_unit_test(test_history),
            cmocka_unit_test(test_history_bounded),
            cmocka_unit_test(test_view),
        };
        return cmocka_run_group_tests_name("prompt", tests, NULL, NULL);
}
