/* text: what the operator sees of untrusted bytes. No escape sequence or
 * control byte survives sanitizing, invalid UTF-8 shows as U+FFFD, widths
 * match the terminal's, fitting and wrapping never split a character, and
 * the streamed tail does not depend on where the stream was cut. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <errno.h>
#include <locale.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <wchar.h>

#include "core/view/safetext.h"
#include "tui/glyphs.h"
#include "tui/text.h"

#define FFFD "\xEF\xBF\xBD"

static char *san(const char *s, unsigned flags)
{
        char *out = safetext_sanitize(s, strlen(s), flags);
        assert_non_null(out);
        return out;
}

static void assert_san(const char *in, size_t len, unsigned flags, const char *want)
{
        char *out = safetext_sanitize(in, len, flags);
        assert_non_null(out);
        assert_string_equal(out, want);
        free(out);
}

/* Nothing the terminal could act on: no C0 byte (bar "\n" when allowed), no
 * DEL, no C1 control or bidi override, and valid UTF-8 throughout. */
static void assert_drawable(const char *s, bool newline_ok)
{
        for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
                if (*p == '\n' && newline_ok)
                        continue;
                assert_true(*p >= 0x20 && *p != 0x7F);
        }
        assert_null(strstr(s, "\xC2\x9B"));     /* C1 CSI */
        assert_null(strstr(s, "\xE2\x80\xAE")); /* RLO */
        char *again = safetext_sanitize(s, strlen(s), newline_ok ? SAFETEXT_MULTILINE : 0);
        assert_non_null(again);
        assert_string_equal(again, s); /* sanitizing is idempotent on safe text */
        free(again);
}

static void test_malicious_title_and_clear(void **state)
{
        const char evil[] = "\x1b]0;owned\x07\x1b[2J";
        char *out = san(evil, 0);
        assert_null(strchr(out, 0x1B));
        assert_null(strchr(out, 0x07));
        assert_string_equal(out, "^[]0;owned^G^[[2J");
        assert_drawable(out, false);
        free(out);

        out = san(evil, SAFETEXT_MULTILINE | SAFETEXT_TABS);
        assert_string_equal(out, "^[]0;owned^G^[[2J");
        free(out);

        out = san(evil, SAFETEXT_DROP_ANSI);
        assert_string_equal(out, ""); /* dropped whole, not half-obeyed */
        free(out);
}

static void test_every_c0_and_del_escaped(void **state)
{
        for (int b = 0; b < 0x80; b++) {
                if (b >= 0x20 && b != 0x7F)
                        continue;
                char in[1] = {(char)b}, want[3] = {'^', (char)(b ^ 0x40), '\0'};
                assert_san(in, 1, 0, want);
                char *out = safetext_sanitize(in, 1, SAFETEXT_MULTILINE | SAFETEXT_TABS);
                assert_non_null(out);
                if (b == '\n')
                        assert_string_equal(out, "\n");
                else if (b == '\t')
                        assert_string_equal(out, "        ");
                else if (b == '\r')
                        assert_string_equal(out, "^M"); /* a lone CR is shown */
                else
                        assert_string_equal(out, want);
                free(out);
        }
        assert_san("\x7f", 1, 0, "^?");
        assert_san("a\0b", 3, 0, "a^@b");
        assert_san("a\nb", 3, 0, "a^Jb");
        assert_san("a\r\nb\r", 5, SAFETEXT_MULTILINE, "a\nb^M");
        assert_san("ab\tc\td", 6, SAFETEXT_TABS, "ab      c       d");
        assert_san("a\tb", 3, 0, "a^Ib");
        /* tab stops count display columns, not bytes */
        assert_san("\xE4\xB8\xAD\tx", 5, SAFETEXT_TABS, "\xE4\xB8\xAD      x");
}

static void test_c1_and_bidi_escaped(void **state)
{
        for (unsigned cp = 0x80; cp <= 0x9F; cp++) {
                char in[2] = {(char)(0xC0 | (cp >> 6)), (char)(0x80 | (cp & 0x3F))};
                char want[16];
                snprintf(want, sizeof want, "<U+%04X>", cp);
                assert_san(in, 2, 0, want);
        }
        static const unsigned bidi[] = {0x202A, 0x202B, 0x202C, 0x202D, 0x202E,
                                        0x2066, 0x2067, 0x2068, 0x2069};
        for (size_t k = 0; k < sizeof bidi / sizeof bidi[0]; k++) {
                unsigned cp = bidi[k];
                char in[3] = {(char)(0xE0 | (cp >> 12)), (char)(0x80 | ((cp >> 6) & 0x3F)),
                              (char)(0x80 | (cp & 0x3F))};
                char want[16];
                snprintf(want, sizeof want, "<U+%04X>", cp);
                assert_san(in, 3, 0, want);
        }
        /* "evil" reversed on screen by RLO ... PDF becomes visible and inert */
        char *out = san("file\xE2\x80\xAEtxt.exe\xE2\x80\xAC", 0);
        assert_string_equal(out, "file<U+202E>txt.exe<U+202C>");
        assert_drawable(out, false);
        free(out);
        /* a raw 0x9B byte (8-bit CSI) is not UTF-8 and must not pass either */
        assert_san("\x9b"
                   "2J",
                   3, 0, FFFD "2J");
}

static void test_invalid_utf8_replaced(void **state)
{
        assert_san("\xff", 1, 0, FFFD);
        assert_san("a\x80z", 3, 0, "a" FFFD "z");
        assert_san("\xc0\xaf", 2, 0, FFFD FFFD);                   /* overlong "/" */
        assert_san("\xc1\xbf", 2, 0, FFFD FFFD);                   /* overlong */
        assert_san("\xe0\x80\xaf", 3, 0, FFFD FFFD FFFD);          /* overlong 3-byte */
        assert_san("\xf0\x80\x80\xaf", 4, 0, FFFD FFFD FFFD FFFD); /* overlong 4-byte */
        assert_san("\xed\xa0\x80", 3, 0, FFFD FFFD FFFD);          /* surrogate D800 */
        assert_san("\xed\xbf\xbf", 3, 0, FFFD FFFD FFFD);          /* surrogate DFFF */
        assert_san("\xf4\x90\x80\x80", 4, 0, FFFD FFFD FFFD FFFD); /* above U+10FFFF */
        assert_san("\xf5\x80", 2, 0, FFFD FFFD);
        assert_san("\xe4\xb8", 2, 0, FFFD); /* truncated at the end */
        assert_san("\xe4\xb8"
                   "A",
                   3, 0, FFFD "A"); /* truncated mid-string */
        assert_san("\xf0\x9f\x98"
                   "\xe4\xb8\xad",
                   6, 0, FFFD "\xe4\xb8\xad");
        /* valid edge values pass unchanged */
        assert_san("\xc2\xa0\xed\x9f\xbf\xee\x80\x80\xf0\x90\x80\x80\xf4\x8f\xbf\xbf", 16, 0,
                   "\xc2\xa0\xed\x9f\xbf\xee\x80\x80\xf0\x90\x80\x80\xf4\x8f\xbf\xbf");
        assert_san("\xef\xbf\xbd", 3, 0, FFFD);
}

static void test_drop_ansi(void **state)
{
        char *out = san("\x1b[1;31mred\x1b[0m \x1b]8;;http://x\x1b\\link\x1b]8;;\x1b\\ "
                        "\x1bPq#0\x1b\\end\x1b"
                        "c!",
                        SAFETEXT_DROP_ANSI);
        assert_string_equal(out, "red link end!");
        free(out);
        /* an OSC cut short by the next sequence: both go */
        out = san("\x1b]0;t\x1b[31mX", SAFETEXT_DROP_ANSI);
        assert_string_equal(out, "X");
        free(out);
        /* a broken sequence ends at the control byte, which is shown */
        out = san("\x1b[12\nx", SAFETEXT_DROP_ANSI);
        assert_string_equal(out, "^Jx");
        free(out);
        out = san("\x1b\x1b[2Jx\x1b", SAFETEXT_DROP_ANSI);
        assert_string_equal(out, "^[x");
        free(out);
        /* an endless OSC cannot swallow the rest of the output */
        size_t n = 10000;
        char *big = malloc(n + 1);
        assert_non_null(big);
        memcpy(big, "\x1b]0;", 4);
        memset(big + 4, 'A', n - 4);
        big[n] = '\0';
        out = san(big, SAFETEXT_DROP_ANSI);
        assert_true(strlen(out) > 0);
        assert_drawable(out, false);
        free(out);
        free(big);
}

/* Against the C library in a UTF-8 locale: wide characters agree on every
 * plane; zero-width marks agree on the blocks the table covers in full (it
 * leaves rarer scripts' marks at 1, an over-estimate that cannot overflow a
 * column). Skipped where C.UTF-8 is missing. */
static void test_widths_match_libc(void **state)
{
        static const struct {
                uint32_t lo, hi;
        } full[] = {{0xA0, 0x7FF},    {0x1100, 0x11FF}, {0x1DC0, 0x2D7E},   {0x2E80, 0xA6EF},
                    {0xAC00, 0xD7FF}, {0xF900, 0xFFFD}, {0x1F000, 0x1FAFF}, {0xE0000, 0xE01EF}};
        if (!setlocale(LC_CTYPE, "C.UTF-8"))
                skip();
        for (uint32_t cp = 0xA0; cp <= 0x3FFFD; cp++) {
                int libc = cp >= 0xD800 && cp <= 0xDFFF ? -1 : wcwidth((wchar_t)cp);
                if (libc >= 0 && (libc == 2) != (safetext_cpwidth(cp) == 2))
                        fail_msg("U+%04X: libc %d, ours %d", (unsigned)cp, libc,
                                 safetext_cpwidth(cp));
        }
        for (size_t k = 0; k < sizeof full / sizeof full[0]; k++)
                for (uint32_t cp = full[k].lo; cp <= full[k].hi; cp++) {
                        int libc = cp >= 0xD800 && cp <= 0xDFFF ? -1 : wcwidth((wchar_t)cp);
                        if (libc >= 0 && libc != safetext_cpwidth(cp))
                                fail_msg("U+%04X: libc %d, ours %d", (unsigned)cp, libc,
                                         safetext_cpwidth(cp));
                }
        setlocale(LC_CTYPE, "C");
}

static void test_widths(void **state)
{
        /* CJK, Hangul, kana, fullwidth, emoji: 2 */
        static const unsigned two[] = {0x4E2D,  0x6587, 0x3042,  0x30A2,  0xAC00,
                                       0xD7A3,  0xFF21, 0x3000,  0x1F600, 0x1F680,
                                       0x1F44D, 0x2705, 0x20000, 0x1F9E0, 0x1100};
        /* combining and zero-width format characters: 0 */
        static const unsigned zero[] = {0x0301, 0x0300, 0x036F, 0x20DD, 0xFE0F,
                                        0x200B, 0x200D, 0x0E31, 0x05B0, 0x1160};
        static const unsigned one[] = {'a', 0xE9, 0x3B1, 0x416, 0x2500, 0x2026, 0xFFFD, 0x303F};
        for (size_t k = 0; k < sizeof two / sizeof two[0]; k++)
                assert_int_equal(safetext_cpwidth(two[k]), 2);
        for (size_t k = 0; k < sizeof zero / sizeof zero[0]; k++)
                assert_int_equal(safetext_cpwidth(zero[k]), 0);
        for (size_t k = 0; k < sizeof one / sizeof one[0]; k++)
                assert_int_equal(safetext_cpwidth(one[k]), 1);

        /* and the C library, in a UTF-8 locale, agrees on all of them */
        if (setlocale(LC_CTYPE, "C.UTF-8")) {
                for (size_t k = 0; k < sizeof two / sizeof two[0]; k++)
                        assert_int_equal(wcwidth((wchar_t)two[k]), 2);
                for (size_t k = 0; k < sizeof zero / sizeof zero[0]; k++)
                        assert_int_equal(wcwidth((wchar_t)zero[k]), 0);
                for (size_t k = 1; k < sizeof one / sizeof one[0]; k++)
                        assert_int_equal(wcwidth((wchar_t)one[k]), 1);
                setlocale(LC_CTYPE, "C");
        }
        /* the process locale does not change the answer */
        assert_int_equal(safetext_cpwidth(0x4E2D), 2);
        assert_int_equal(text_width("\xe4\xb8\xad"), 2);

        assert_int_equal(text_width(""), 0);
        assert_int_equal(text_width("abc"), 3);
        assert_int_equal(text_width("\xe4\xb8\xad\xe6\x96\x87"), 4); /* 中文 */
        assert_int_equal(text_width("e\xcc\x81"), 1);                /* e + acute */
        assert_int_equal(text_width("\xf0\x9f\x98\x80!"), 3);        /* 😀! */
        assert_int_equal(text_width("\xff\xfe"), 2);                 /* shown as 2 U+FFFD */
        assert_int_equal(text_width("\xe2\x80\xa6"), 1);             /* … */
}

/* Mixed text: ASCII, CJK, emoji, a combining mark, an ellipsis char. */
static const char mixed[] = "a\xe4\xb8\xad"
                            "b\xf0\x9f\x98\x80"
                            "e\xcc\x81"
                            "c\xe6\x96\x87\xe5\xad\x97"
                            "xy\xe2\x80\xa6z";

static void test_fit_exhaustive(void **state)
{
        size_t full = text_width(mixed);
        assert_int_equal(full, 16);
        for (unsigned flags = 0; flags < 4; flags++) {
                for (int cols = 0; cols <= 20; cols++) {
                        char dst[128];
                        int w = text_fit(dst, sizeof dst, mixed, cols, flags);
                        assert_true(w >= 0);
                        assert_int_equal((size_t)w, text_width(dst));
                        assert_true(w <= cols);
                        if (flags & TEXT_FIT_PAD)
                                assert_int_equal(w, cols);
                        assert_drawable(dst, false);

                        /* strip padding and a final ellipsis: what is left is
                         * a byte prefix of the source, so no character was split */
                        size_t len = strlen(dst);
                        while ((flags & TEXT_FIT_PAD) && len > 0 && dst[len - 1] == ' ')
                                dst[--len] = '\0'; /* mixed[] has no spaces */
                        bool cut = (size_t)cols < full;
                        if (cut && (flags & TEXT_FIT_ELLIPSIS) && cols > 0) {
                                assert_true(len >= 3);
                                assert_memory_equal(dst + len - 3, "\xe2\x80\xa6", 3);
                                dst[len -= 3] = '\0';
                        }
                        assert_true(len <= strlen(mixed));
                        assert_memory_equal(dst, mixed, len);
                        /* and the cut is as long as it can be */
                        int budget = cols - ((flags & TEXT_FIT_ELLIPSIS) && cut ? 1 : 0);
                        if (cut && budget > 0)
                                assert_true((int)text_width(dst) >= budget - 1);
                        if (!cut)
                                assert_string_equal(dst, mixed);
                        /* a zero-width mark is never left without its base */
                        assert_false(len > 0 && len < strlen(mixed) &&
                                     memcmp(mixed + len, "\xcc\x81", 2) == 0);
                }
        }
        char dst[64];
        assert_int_equal(text_fit(dst, sizeof dst, "\xe4\xb8\xad\xe6\x96\x87", 3, 0), 2);
        assert_string_equal(dst, "\xe4\xb8\xad");
        assert_int_equal(text_fit(dst, sizeof dst, "\xe4\xb8\xad\xe6\x96\x87", 3, TEXT_FIT_PAD), 3);
        assert_string_equal(dst, "\xe4\xb8\xad ");
        assert_int_equal(text_fit(dst, sizeof dst, "abcdef", 4, TEXT_FIT_ELLIPSIS), 4);
        assert_string_equal(dst, "abc\xe2\x80\xa6");
        assert_int_equal(text_fit(dst, sizeof dst, "abcd", 4, TEXT_FIT_ELLIPSIS), 4);
        assert_string_equal(dst, "abcd");
        assert_int_equal(text_fit(dst, sizeof dst, "ab", 4, TEXT_FIT_PAD), 4);
        assert_string_equal(dst, "ab  ");
        /* unsafe leftovers are drawn as U+FFFD, never passed on */
        assert_int_equal(text_fit(dst, sizeof dst, "a\x1b[2J", 10, 0), 5);
        assert_string_equal(dst, "a" FFFD "[2J");
        /* a small buffer cuts at a character boundary */
        char small[5];
        assert_int_equal(text_fit(small, sizeof small, "ab\xe4\xb8\xad", 10, 0), -ENOBUFS);
        assert_string_equal(small, "ab");
}

static void check_wrap(const char *s, int cols, const char *const *want, size_t nwant)
{
        struct text_span spans[32];
        size_t n = text_wrap(s, cols, spans, 32);
        assert_int_equal(n, nwant);
        for (size_t k = 0; k < n; k++) {
                assert_int_equal(spans[k].len, strlen(want[k]));
                assert_memory_equal(s + spans[k].start, want[k], spans[k].len);
        }
}

#define WRAP(s, cols, ...)                                                                         \
        do {                                                                                       \
                static const char *const w_[] = {__VA_ARGS__};                                     \
                check_wrap(s, cols, w_, sizeof w_ / sizeof w_[0]);                                 \
        } while (0)

/* For a terminal whose locale is not UTF-8: only ASCII comes out, each
 * stand-in measured as drawn, and the cut mark is "...". */
static void test_fit_ascii(void **state)
{
        char out[64], g[GLYPHS_ASCII_MAX];
        const char *bars = "\u2581\u2582\u2583\u2584\u2585\u2586\u2587\u2588";
        int w;

        assert_true(glyphs_codeset_is_utf8("UTF-8"));
        assert_true(glyphs_codeset_is_utf8("utf8"));
        assert_false(glyphs_codeset_is_utf8("ANSI_X3.4-1968"));
        assert_false(glyphs_codeset_is_utf8("ISO-8859-1"));
        assert_false(glyphs_codeset_is_utf8(NULL));
        /* nothing at all above 0x7f, whatever the code point */
        for (uint32_t cp = 0x20; cp < 0x30000; cp++) {
                size_t n = glyphs_ascii(cp, g);
                assert_true(n < GLYPHS_ASCII_MAX);
                assert_int_equal(strlen(g), n);
                for (size_t k = 0; k < n; k++)
                        assert_true((unsigned char)g[k] >= 0x20 && (unsigned char)g[k] < 0x7f);
        }
        w = text_fit(out, sizeof(out), bars, 20, TEXT_FIT_ASCII);
        assert_int_equal(w, 8);
        assert_string_equal(out, "_.-:=+*#");
        /* wide characters keep their two columns, marks their none */
        w = text_fit(out, sizeof(out), "\u5de5a\u0301\u2502", 20, TEXT_FIT_ASCII);
        assert_string_equal(out, "??a|");
        assert_int_equal(w, 4);
        w = text_fit(out, sizeof(out), "abcdefghij", 8, TEXT_FIT_ASCII | TEXT_FIT_ELLIPSIS);
        assert_string_equal(out, "abcde...");
        assert_int_equal(w, 8);
        /* a summary the model layer cut already: its ellipsis counts 3 */
        w = text_fit(out, sizeof(out), "abcd\u2026", 6, TEXT_FIT_ASCII | TEXT_FIT_ELLIPSIS);
        assert_string_equal(out, "abc...");
        assert_int_equal(w, 6);
        w = text_fit(out, sizeof(out), "abc", 2, TEXT_FIT_ASCII | TEXT_FIT_ELLIPSIS);
        assert_string_equal(out, "ab");
        w = text_fit(out, sizeof(out), "\xff\x1b", 9, TEXT_FIT_ASCII | TEXT_FIT_PAD);
        assert_string_equal(out, "??       ");
        assert_int_equal(w, 9);
}

static void test_wrap(void **state)
{
        WRAP("hello world foo", 5, "hello", "world", "foo");
        WRAP("hello world foo", 11, "hello world", "foo");
        WRAP("hello   world", 7, "hello", "world");
        WRAP("abcdefghij", 4, "abcd", "efgh", "ij");
        WRAP("ab abcdefghij", 4, "ab", "abcd", "efgh", "ij");
        WRAP("a\n\nb\n", 10, "a", "", "b");
        WRAP("\n", 10, "");
        WRAP("  indented line", 10, "  indented", "line");
        /* wide characters are never cut in half */
        WRAP("\xe4\xb8\xad\xe6\x96\x87\xe5\xad\x97", 3, "\xe4\xb8\xad", "\xe6\x96\x87",
             "\xe5\xad\x97");
        WRAP("\xe4\xb8\xad\xe6\x96\x87\xe5\xad\x97", 4, "\xe4\xb8\xad\xe6\x96\x87", "\xe5\xad\x97");
        WRAP("\xe4\xb8\xad", 1, "\xe4\xb8\xad"); /* wider than the pane: alone, not lost */
        WRAP("\xe4\xb8\xad\xcc\x81\xe4\xb8\xad", 1, "\xe4\xb8\xad\xcc\x81", "\xe4\xb8\xad");
        /* a combining mark stays with its base at the edge */
        WRAP("abe\xcc\x81xy", 3, "abe\xcc\x81", "xy");
        WRAP("abc", 0, "a", "b", "c");

        struct text_span none[1];
        assert_int_equal(text_wrap("", 5, none, 1), 0);
        /* the count is the total even when the spans run out */
        struct text_span one[1];
        assert_int_equal(text_wrap("aaaa bbbb cccc", 4, one, 1), 3);
        assert_int_equal(one[0].start, 0);
        assert_int_equal(one[0].len, 4);

        /* every width: lines fit, and together keep every non-space byte */
        for (int cols = 1; cols <= 20; cols++) {
                struct text_span sp[64];
                size_t n = text_wrap(mixed, cols, sp, 64), kept = 0;
                assert_true(n <= 64);
                for (size_t k = 0; k < n; k++) {
                        char line[64];
                        memcpy(line, mixed + sp[k].start, sp[k].len);
                        line[sp[k].len] = '\0';
                        assert_true(text_width(line) <= (size_t)(cols < 2 ? 2 : cols));
                        assert_true(k == 0 || sp[k].start >= sp[k - 1].start + sp[k - 1].len);
                        kept += sp[k].len;
                }
                assert_int_equal(kept, strlen(mixed));
        }
}

/* A stream with everything a split can land inside. */
static const char stream[] = "plain line\r\n"
                             "\x1b[31mred\x1b[0m and \x1b]0;owned\x07title\n"
                             "\xe4\xb8\xad\xe6\x96\x87 \xf0\x9f\x98\x80 e\xcc\x81\n"
                             "bad \xff\xe4\xb8 bytes\tand tab\n"
                             "bidi \xe2\x80\xae rlo\r\n"
                             "\n"
                             "progress 10%\rprogress 20%\n"
                             "tail without newline \xe6\x96";

static char *dump(struct text_lines *tl)
{
        size_t n = text_lines_count(tl), len = 1;
        for (size_t k = 0; k < n; k++)
                len += strlen(text_lines_get(tl, k)) + 1;
        char *out = calloc(1, len);
        assert_non_null(out);
        for (size_t k = 0; k < n; k++) {
                strcat(out, text_lines_get(tl, k));
                strcat(out, "|");
        }
        assert_null(text_lines_get(tl, n));
        return out;
}

static char *feed(unsigned flags, size_t max_lines, const size_t *cuts, size_t ncuts)
{
        struct text_lines *tl = text_lines_new(max_lines, 0, flags);
        size_t at = 0, len = sizeof stream - 1;
        assert_non_null(tl);
        for (size_t k = 0; k <= ncuts; k++) {
                size_t end = k < ncuts ? cuts[k] : len;
                assert_int_equal(text_lines_append(tl, stream + at, end - at), 0);
                at = end;
        }
        assert_int_equal(text_lines_finish(tl), 0);
        char *out = dump(tl);
        text_lines_free(tl);
        return out;
}

static void test_lines_split_anywhere(void **state)
{
        const unsigned modes[] = {0, SAFETEXT_TABS | SAFETEXT_DROP_ANSI};
        const char *want[] = {
            "plain line|^[[31mred^[[0m and ^[]0;owned^Gtitle|"
            "\xe4\xb8\xad\xe6\x96\x87 \xf0\x9f\x98\x80 e\xcc\x81|"
            "bad " FFFD FFFD " bytes^Iand tab|bidi <U+202E> rlo||progress 10%^Mprogress 20%|"
            "tail without newline " FFFD "|",
            "plain line|red and title|"
            "\xe4\xb8\xad\xe6\x96\x87 \xf0\x9f\x98\x80 e\xcc\x81|"
            "bad " FFFD FFFD " bytes    and tab|bidi <U+202E> rlo||progress 10%^Mprogress 20%|"
            "tail without newline " FFFD "|",
        };
        for (size_t m = 0; m < 2; m++) {
                char *whole = feed(modes[m], 100, NULL, 0);
                assert_string_equal(whole, want[m]);
                assert_drawable(whole, false);
                for (size_t cut = 0; cut <= sizeof stream - 1; cut++) {
                        char *split = feed(modes[m], 100, &cut, 1);
                        assert_string_equal(split, whole);
                        free(split);
                }
                size_t bytes[sizeof stream - 1];
                for (size_t k = 0; k < sizeof bytes / sizeof bytes[0]; k++)
                        bytes[k] = k;
                char *each = feed(modes[m], 100, bytes, sizeof bytes / sizeof bytes[0]);
                assert_string_equal(each, whole);
                free(each);
                free(whole);
        }
}

static void test_lines_ring_keeps_tail(void **state)
{
        struct text_lines *tl = text_lines_new(3, 0, 0);
        assert_non_null(tl);
        char buf[32];
        for (int k = 0; k < 1000; k++) {
                int n = snprintf(buf, sizeof buf, "line %d\n", k);
                assert_int_equal(text_lines_append(tl, buf, (size_t)n), 0);
        }
        assert_int_equal(text_lines_total(tl), 1000);
        assert_int_equal(text_lines_count(tl), 3);
        assert_string_equal(text_lines_get(tl, 0), "line 997");
        assert_string_equal(text_lines_get(tl, 2), "line 999");
        assert_int_equal(text_lines_append(tl, "part", 4), 0);
        assert_int_equal(text_lines_count(tl), 4); /* the live unfinished line */
        assert_string_equal(text_lines_get(tl, 3), "part");
        assert_int_equal(text_lines_append(tl, "ial\n", 4), 0);
        assert_int_equal(text_lines_count(tl), 3);
        assert_string_equal(text_lines_get(tl, 0), "line 998");
        assert_string_equal(text_lines_get(tl, 2), "partial");
        text_lines_free(tl);

        /* a flood without newlines is broken into bounded lines */
        tl = text_lines_new(4, 16, 0);
        assert_non_null(tl);
        for (int k = 0; k < 100; k++)
                assert_int_equal(text_lines_append(tl, "\xe4\xb8\xad\x1b", 4), 0);
        /* a line is broken before it could pass 16 bytes: once it holds 6,
         * as the next byte might add 11 (a U+FFFD it settles, then a tab):
         * lines of 8 and 7 bytes, 15 for three chunks, and one unfinished */
        assert_int_equal(text_lines_total(tl), 66);
        assert_int_equal(text_lines_count(tl), 5);
        for (size_t k = 0; k < 5; k++) {
                const char *l = text_lines_get(tl, k);
                assert_true(strlen(l) <= 16);
                assert_drawable(l, false);
        }
        text_lines_free(tl);
        assert_null(text_lines_new(0, 0, 0));
}

/* One byte can add more than its own escape: the U+FFFD of the character
 * it cuts short, a held "^M" or a lone "^[", then a tab's 8 spaces. The
 * line bound holds all the same (found by tests/fuzz/fuzz_text.c). */
static void test_lines_bound_with_pending_state(void **state)
{
        static const char *const tails[] = {"\xe2\t", "\r\t", "\x1b\t", "\x1b]x\x1b\t"};
        const char *head = "abcdefghijklmnop";

        for (size_t t = 0; t < sizeof tails / sizeof tails[0]; t++) {
                for (size_t h = 0; h <= strlen(head); h++) {
                        struct text_lines *tl = text_lines_new(
                            64, 16, SAFETEXT_TABS | (t == 3 ? SAFETEXT_DROP_ANSI : 0));
                        assert_non_null(tl);
                        for (int k = 0; k < 4; k++) {
                                assert_int_equal(text_lines_append(tl, head, h), 0);
                                assert_int_equal(text_lines_append(tl, tails[t], strlen(tails[t])),
                                                 0);
                        }
                        assert_int_equal(text_lines_finish(tl), 0);
                        for (size_t k = 0; k < text_lines_count(tl); k++) {
                                const char *l = text_lines_get(tl, k);
                                assert_true(strlen(l) <= 16);
                                assert_drawable(l, false);
                        }
                        text_lines_free(tl);
                }
        }
}

int main(void)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test(test_malicious_title_and_clear),
            cmocka_unit_test(test_every_c0_and_del_escaped),
            cmocka_unit_test(test_c1_and_bidi_escaped),
            cmocka_unit_test(test_invalid_utf8_replaced),
            cmocka_unit_test(test_drop_ansi),
            cmocka_unit_test(test_widths),
            cmocka_unit_test(test_widths_match_libc),
            cmocka_unit_test(test_fit_exhaustive),
            cmocka_unit_test(test_fit_ascii),
            cmocka_unit_test(test_wrap),
            cmocka_unit_test(test_lines_split_anywhere),
            cmocka_unit_test(test_lines_ring_keeps_tail),
            cmocka_unit_test(test_lines_bound_with_pending_state),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
