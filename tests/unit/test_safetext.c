/* safetext: the streaming sanitizer that headless output shares with the
 * TUI. An escape sequence or a UTF-8 character cut by a chunk boundary
 * comes out exactly as if the stream had arrived whole, and nothing the
 * terminal could obey is left hidden in the state at the end. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "core/view/safetext.h"

/* Feeds `s` in chunks ending at each of `cuts`, then ends the stream. */
static char *stream(const char *s, size_t len, unsigned flags, const size_t *cuts, size_t ncuts)
{
        struct safetext st;
        struct safetext_buf out = {0};
        size_t at = 0;

        safetext_init(&st, flags);
        safetext_buf_put(&out, "", 0);
        for (size_t k = 0; k <= ncuts; k++) {
                size_t end = k < ncuts ? cuts[k] : len;
                assert_int_equal(safetext_feed(&st, &out, s + at, end - at), 0);
                at = end;
        }
        safetext_end(&st, &out);
        assert_false(out.oom);
        return out.p;
}

/* Every single cut and every byte on its own give the whole-string result. */
static void assert_split_anywhere(const char *s, unsigned flags, const char *want)
{
        size_t len = strlen(s);
        char *whole = safetext_sanitize(s, len, flags);

        assert_non_null(whole);
        assert_string_equal(whole, want);
        for (size_t cut = 0; cut <= len; cut++) {
                char *split = stream(s, len, flags, &cut, 1);
                assert_string_equal(split, want);
                free(split);
        }
        size_t *bytes = calloc(len + 1, sizeof *bytes);
        assert_non_null(bytes);
        for (size_t k = 0; k < len; k++)
                bytes[k] = k;
        char *each = stream(s, len, flags, bytes, len);
        assert_string_equal(each, want);
        free(each);
        free(bytes);
        free(whole);
}

static void test_split_escape_is_shown(void **state)
{
        /* OSC 52 clipboard write, title change, alternate screen */
        assert_split_anywhere("a\x1b]52;c;b3duZWQ=\x07\x1b]2;owned\x1b\\\x1b[?1049hb",
                              SAFETEXT_MULTILINE, "a^[]52;c;b3duZWQ=^G^[]2;owned^[\\^[[?1049hb");
        /* C1 CSI, itself a two-byte UTF-8 character */
        assert_split_anywhere("x\xc2\x9b"
                              "2Jy",
                              SAFETEXT_MULTILINE, "x<U+009B>2Jy");
        /* dropped sequences: the held state spans the cut too */
        assert_split_anywhere("a\x1b]2;owned\x1b\\b\x1b[31mc", SAFETEXT_DROP_ANSI, "abc");
}

static void test_split_utf8_is_whole(void **state)
{
        assert_split_anywhere("caf\xc3\xa9 \xe4\xb8\xad \xf0\x9f\x98\x80!\n", SAFETEXT_MULTILINE,
                              "caf\xc3\xa9 \xe4\xb8\xad \xf0\x9f\x98\x80!\n");
        /* a bad continuation is one U+FFFD, and the byte is read afresh */
        assert_split_anywhere("\xc3(\xe4\xb8", SAFETEXT_MULTILINE, "\xEF\xBF\xBD(\xEF\xBF\xBD");
}

static void test_newlines_and_tabs_keep_their_meaning(void **state)
{
        assert_split_anywhere("one\r\ntwo\n\tthree\rfour", SAFETEXT_MULTILINE | SAFETEXT_TABS,
                              "one\ntwo\n        three^Mfour");
        assert_split_anywhere("a\nb", 0, "a^Jb");
}

/* A chunk's output is everything it settles: a held byte shows up with the
 * chunk that completes it, and safetext_end releases what is left. */
static void test_held_bytes_are_released(void **state)
{
        struct safetext st;
        struct safetext_buf out = {0};

        safetext_init(&st, SAFETEXT_MULTILINE);
        assert_int_equal(safetext_feed(&st, &out, "caf\xc3", 4), 0);
        assert_string_equal(out.p, "caf");
        out.len = 0;
        assert_int_equal(safetext_feed(&st, &out, "\xa9\r", 2), 0);
        assert_string_equal(out.p, "\xc3\xa9");
        out.len = 0;
        out.p[0] = '\0';
        safetext_end(&st, &out);
        assert_string_equal(out.p, "^M");
        out.len = 0;
        assert_int_equal(safetext_feed(&st, &out, "\xe4\xb8", 2), 0);
        safetext_end(&st, &out);
        assert_string_equal(out.p, "\xEF\xBF\xBD");
        free(out.p);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test(test_split_escape_is_shown),
            cmocka_unit_test(test_split_utf8_is_whole),
            cmocka_unit_test(test_newlines_and_tabs_keep_their_meaning),
            cmocka_unit_test(test_held_bytes_are_released),
        };
        return cmocka_run_group_tests_name("safetext", tests, NULL, NULL);
}
