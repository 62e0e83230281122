/* fuzz_text: libFuzzer harness for core/view/safetext.h and tui/text.h, the
 * one gate between untrusted bytes and the terminal. It checks what the header promises:
 * safetext_sanitize never lets a control, escape or bidi character through,
 * text_fit and text_wrap stay within their columns, and text_lines gives
 * the same lines however the stream is cut. A broken promise aborts.
 *
 * Built by `make fuzz` (libFuzzer) and by `make test` (tests/fuzz/driver.c). */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/view/safetext.h"
#include "tui/text.h"

#define MAX_SPANS 4096

/* Decodes one strictly valid UTF-8 character of s[*i..n); false when the
 * bytes there are not one. */
static bool utf8_next(const unsigned char *s, size_t n, size_t *i, uint32_t *cp)
{
        unsigned char c = s[*i], lo = 0x80, hi = 0xbf;
        size_t need, k;

        if (c < 0x80) {
                *cp = c;
                *i += 1;
                return true;
        }
        if (c >= 0xc2 && c <= 0xdf)
                need = 1, *cp = c & 0x1fu;
        else if (c >= 0xe0 && c <= 0xef)
                need = 2, *cp = c & 0x0fu, lo = c == 0xe0 ? 0xa0 : 0x80,
                hi = c == 0xed ? 0x9f : 0xbf;
        else if (c >= 0xf0 && c <= 0xf4)
                need = 3, *cp = c & 0x07u, lo = c == 0xf0 ? 0x90 : 0x80,
                hi = c == 0xf4 ? 0x8f : 0xbf;
        else
                return false;
        for (k = 1; k <= need; k++) {
                if (*i + k >= n || s[*i + k] < lo || s[*i + k] > hi)
                        return false;
                *cp = *cp << 6 | (s[*i + k] & 0x3fu);
                lo = 0x80, hi = 0xbf;
        }
        *i += k;
        return true;
}

static bool is_unsafe(uint32_t cp)
{
        return cp < 0x20 || cp == 0x7f || (cp >= 0x80 && cp <= 0x9f) ||
               (cp >= 0x202a && cp <= 0x202e) || (cp >= 0x2066 && cp <= 0x2069) || cp == 0x2028 ||
               cp == 0x2029;
}

/* Aborts unless s is valid UTF-8 that is safe to draw ("\n" only when
 * allowed). */
static void check_safe(const char *s, bool newline_ok)
{
        const unsigned char *u = (const unsigned char *)s;
        size_t n = strlen(s), i = 0;
        uint32_t cp;

        while (i < n) {
                if (!utf8_next(u, n, &i, &cp))
                        abort();
                if (is_unsafe(cp) && !(cp == '\n' && newline_ok))
                        abort();
        }
}

static bool is_cont(char c)
{
        return ((unsigned char)c & 0xc0) == 0x80;
}

static void check_fit(const char *src, bool sanitized, int columns, unsigned flags, size_t dstlen)
{
        char *dst = malloc(dstlen ? dstlen : 1);
        size_t slen = strlen(src);
        int w;

        if (dst == NULL)
                abort();
        w = text_fit(dst, dstlen, src, columns, flags);
        if (dstlen == 0) {
                if (w != -ENOBUFS)
                        abort();
                free(dst);
                return;
        }
        if (memchr(dst, '\0', dstlen) == NULL)
                abort();
        check_safe(dst, false);
        if (w == -ENOBUFS) {
                free(dst);
                return;
        }
        if (w < 0 || w > (columns < 0 ? 0 : columns) || (size_t)w != text_width(dst))
                abort();
        if ((flags & TEXT_FIT_PAD) && w != (columns < 0 ? 0 : columns))
                abort();
        /* Clean text comes out as its head (then the padding); all of it
         * when it fits. */
        if (sanitized && strchr(src, '\n') == NULL) {
                size_t dlen = strlen(dst), same = 0, i;
                bool fits = text_width(src) <= (size_t)(columns < 0 ? 0 : columns);
                while (same < dlen && same < slen && dst[same] == src[same])
                        same++;
                if (fits && same != slen)
                        abort();
                if (!(flags & TEXT_FIT_ELLIPSIS) || fits) {
                        if (same < slen && is_cont(src[same]))
                                abort();
                        for (i = same; i < dlen; i++)
                                if (dst[i] != ' ' || !(flags & TEXT_FIT_PAD))
                                        abort();
                }
        }
        free(dst);
}

/* Width of s[start..start+len). */
static size_t span_width(const char *s, size_t start, size_t len)
{
        char *copy = strndup(s + start, len);
        size_t w;

        if (copy == NULL)
                abort();
        w = text_width(copy);
        free(copy);
        return w;
}

static void check_wrap(const char *s, int columns, size_t small)
{
        size_t cols = columns < 1 ? 1 : (size_t)columns, slen = strlen(s), n, k, prev = 0, i;
        struct text_span *spans = malloc(MAX_SPANS * sizeof(*spans)), *few;

        if (spans == NULL)
                abort();
        n = text_wrap(s, columns, spans, MAX_SPANS);
        if (slen == 0 && n != 0)
                abort();
        for (k = 0; k < n && k < MAX_SPANS; k++) {
                size_t start = spans[k].start, len = spans[k].len, first;
                uint32_t cp;
                if (start < prev || start > slen || len > slen - start)
                        abort();
                /* between lines only the spaces of a break and the "\n" */
                for (i = prev; i < start; i++)
                        if (s[i] != ' ' && s[i] != '\n')
                                abort();
                if (memchr(s + start, '\n', len) != NULL)
                        abort();
                if (len > 0 && (is_cont(s[start]) || is_cont(s[start + len])))
                        abort();
                if (len > 0 && span_width(s, start, len) > cols) {
                        /* only one character too wide for any line, with its marks */
                        first = start;
                        if (!utf8_next((const unsigned char *)s, slen, &first, &cp) ||
                            (size_t)safetext_cpwidth(cp) <= cols ||
                            span_width(s, first, start + len - first) != 0)
                                abort();
                }
                prev = start + len;
        }
        if (n <= MAX_SPANS)
                for (i = prev; i < slen; i++)
                        if (s[i] != ' ' && s[i] != '\n')
                                abort();
        /* fewer slots: the same count, the same first spans, nothing past them */
        if (small > n)
                small = n;
        few = malloc((small ? small : 1) * sizeof(*few));
        if (few == NULL)
                abort();
        if (text_wrap(s, columns, few, small) != n)
                abort();
        for (k = 0; k < small && k < MAX_SPANS; k++)
                if (few[k].start != spans[k].start || few[k].len != spans[k].len)
                        abort();
        free(few);
        free(spans);
}

struct lines_case {
        size_t max_lines, max_line_bytes;
        unsigned flags;
};

/* Feeds data into a fresh text_lines, in pieces when seed != 0. */
static struct text_lines *lines_run(const struct lines_case *lc, const uint8_t *data, size_t n,
                                    uint32_t seed)
{
        struct text_lines *tl = text_lines_new(lc->max_lines, lc->max_line_bytes, lc->flags);
        size_t off = 0, piece;

        if (tl == NULL)
                abort();
        while (off < n || seed != 0) {
                piece = n - off;
                if (seed != 0) {
                        seed = seed * 1103515245u + 12345u;
                        piece = (seed >> 16) % 23; /* empty pieces too */
                        if (piece >= n - off) {
                                piece = n - off;
                                seed = 0;
                        }
                }
                if (text_lines_append(tl, data + off, piece) != 0)
                        abort();
                off += piece;
                if (off == n && seed == 0)
                        break;
        }
        if (text_lines_finish(tl) != 0)
                abort();
        return tl;
}

static void check_lines(const struct lines_case *lc, const uint8_t *data, size_t n, uint32_t seed)
{
        struct text_lines *whole = lines_run(lc, data, n, 0), *cut = lines_run(lc, data, n, seed);
        size_t count = text_lines_count(whole), k, line_max, kept;
        uint64_t total = text_lines_total(whole);

        line_max = lc->max_line_bytes ? lc->max_line_bytes : 4096;
        if (line_max < 16)
                line_max = 16;
        kept = total < lc->max_lines ? (size_t)total : lc->max_lines;
        if (count != text_lines_count(cut) || total != text_lines_total(cut) ||
            (count != kept && count != kept + 1))
                abort();
        for (k = 0; k < count; k++) {
                const char *a = text_lines_get(whole, k), *b = text_lines_get(cut, k);
                if (a == NULL || b == NULL || strcmp(a, b) != 0)
                        abort();
                check_safe(a, false);
                if (strlen(a) > line_max)
                        abort();
        }
        if (text_lines_get(whole, count) != NULL)
                abort();
        /* Nothing dropped and no line broken: the lines are the sanitized text. */
        if (total <= lc->max_lines && n * 16 + 64 < line_max) {
                char *s = safetext_sanitize(data, n, lc->flags | SAFETEXT_MULTILINE);
                size_t off = 0, len;
                if (s == NULL)
                        abort();
                for (k = 0; k < count; k++) {
                        const char *a = text_lines_get(whole, k);
                        len = strlen(a);
                        if (strncmp(s + off, a, len) != 0)
                                abort();
                        off += len;
                        if (k < total && s[off++] != '\n')
                                abort();
                }
                if (s[off] != '\0')
                        abort();
                free(s);
        }
        text_lines_free(whole);
        text_lines_free(cut);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        static const size_t dstlens[] = {0, 1, 2, 3, 4, 5, 8, 16, 64, 4096};
        struct lines_case lc;
        unsigned flags, fit_flags, mode;
        size_t few;
        int columns;
        size_t dstlen;
        uint32_t seed;
        char *raw;

        if (size < 5)
                return 0;
        /* The first five bytes choose the columns, the buffer, the ring and
         * the cuts; the rest is the text. */
        columns = data[0] < 240 ? data[0] % 90 - 2 : (data[0] - 240) * 40;
        fit_flags = data[1] & 3;
        dstlen = dstlens[(data[1] >> 2) % (sizeof(dstlens) / sizeof(dstlens[0]))];
        mode = data[2] >> 6;
        seed = ((uint32_t)data[3] << 8 | data[4]) | 1u;
        few = data[4] % 4;
        lc.flags = data[2] & (SAFETEXT_TABS | SAFETEXT_DROP_ANSI);
        lc.max_lines = mode == 0 ? 1u << 16 : 1u + (data[2] >> 3 & 7u);
        lc.max_line_bytes = mode == 0 ? 1u << 16 : mode == 1 ? 0 : mode == 2 ? data[3] % 64 : 4096;
        data += 5;
        size -= 5;

        for (flags = 0; flags < 8; flags++) {
                char *s = safetext_sanitize(data, size, flags);
                if (s == NULL)
                        abort();
                check_safe(s, flags & SAFETEXT_MULTILINE);
                check_fit(s, true, columns, fit_flags, dstlen);
                check_fit(s, true, columns, fit_flags, 4096 * 8);
                check_wrap(s, columns, few);
                free(s);
        }
        /* Raw bytes straight into the measuring functions: they must cope. */
        raw = strndup((const char *)data, size);
        if (raw == NULL)
                abort();
        text_width(raw);
        check_fit(raw, false, columns, fit_flags, dstlen);
        check_fit(raw, false, columns, fit_flags, 4096 * 8);
        free(raw);

        check_lines(&lc, data, size, seed);
        return 0;
}
