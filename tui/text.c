/* text: measuring, fitting and wrapping sanitized text for the TUI, and the
 * live tail of an output stream, sanitized by core/view/safetext's decoder so a
 * split never changes the result. Never draws a byte that decoder would
 * have escaped; never reads the locale (the caller asks for ASCII). */
#include "tui/text.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "tui/glyphs.h"

#define REPLACEMENT SAFETEXT_REPLACEMENT
/* Most bytes one input byte can add: what it settles of the state before it
 * (the U+FFFD of a cut-off character, a held "^M" or "^["; 3 at most), then
 * its own "<U+XXXX>" or a tab's spaces (8 at most). */
#define UNIT_MAX 11
#define LINE_MIN 16 /* the smallest max_line_bytes of text_lines_new */

/* ---- measuring already-sanitized text ---- */

/* Decodes one character of `s` (NUL-terminated) at `*i`, advancing `*i`
 * past it. Invalid sequences and anything safetext_sanitize would have escaped
 * come back as U+FFFD, so width and drawing agree even on raw input. */
static uint32_t next_cp(const char *s, size_t *i)
{
        const unsigned char *p = (const unsigned char *)s + *i;
        uint32_t cp;
        size_t need, k;
        unsigned char lo = 0x80, hi = 0xBF;
        if (p[0] < 0x80) {
                *i += 1;
                return p[0] < 0x20 || p[0] == 0x7F ? REPLACEMENT : p[0];
        }
        if (p[0] >= 0xC2 && p[0] <= 0xDF)
                need = 1, cp = p[0] & 0x1Fu;
        else if (p[0] >= 0xE0 && p[0] <= 0xEF)
                need = 2, cp = p[0] & 0x0Fu, lo = p[0] == 0xE0 ? 0xA0 : 0x80,
                hi = p[0] == 0xED ? 0x9F : 0xBF;
        else if (p[0] >= 0xF0 && p[0] <= 0xF4)
                need = 3, cp = p[0] & 0x07u, lo = p[0] == 0xF0 ? 0x90 : 0x80,
                hi = p[0] == 0xF4 ? 0x8F : 0xBF;
        else {
                *i += 1;
                return REPLACEMENT;
        }
        for (k = 1; k <= need; k++) {
                if (p[k] < lo || p[k] > hi) {
                        *i += k;
                        return REPLACEMENT;
                }
                cp = cp << 6 | (p[k] & 0x3Fu);
                lo = 0x80, hi = 0xBF;
        }
        *i += k;
        return safetext_cp_escaped(cp) ? REPLACEMENT : cp;
}

bool text_contains(const char *hay, const char *needle)
{
        size_t n = strlen(needle);

        for (; *hay != '\0'; hay++)
                if (strncasecmp(hay, needle, n) == 0)
                        return true;
        return n == 0;
}

size_t text_width(const char *utf8)
{
        size_t w = 0, i = 0;
        while (utf8[i])
                w += (size_t)safetext_cpwidth(next_cp(utf8, &i));
        return w;
}

/* Appends `n` bytes when they fit with the NUL; never a partial character. */
static bool fit_put(char *dst, size_t dstlen, size_t *len, const char *bytes, size_t n)
{
        if (*len + n + 1 > dstlen)
                return false;
        memcpy(dst + *len, bytes, n);
        *len += n;
        dst[*len] = '\0';
        return true;
}

/* One character of sanitized text as drawn: its bytes and columns, in
 * UTF-8 or, with `ascii`, as its ASCII stand-in. `buf` holds what is not a
 * slice of `src`. */
static const char *drawn(const char *src, size_t start, size_t end, uint32_t cp, bool ascii,
                         char *buf, size_t *n, int *w)
{
        if (ascii) {
                *n = glyphs_ascii(cp, buf);
                *w = (int)*n;
                return buf;
        }
        *w = safetext_cpwidth(cp);
        if (cp == REPLACEMENT) {
                *n = safetext_utf8_encode(cp, buf);
                return buf;
        }
        *n = end - start;
        return src + start;
}

static size_t drawn_width(const char *s, bool ascii)
{
        size_t w = 0, i = 0, n;
        char buf[GLYPHS_ASCII_MAX];
        int cw;

        if (!ascii)
                return text_width(s);
        while (s[i]) {
                size_t start = i;
                uint32_t cp = next_cp(s, &i);
                drawn(s, start, i, cp, true, buf, &n, &cw);
                w += (size_t)cw;
        }
        return w;
}

int text_fit(char *dst, size_t dstlen, const char *src, int columns, unsigned flags)
{
        bool ascii = flags & TEXT_FIT_ASCII, cut = false, room = true;
        const char *mark = ascii ? "..." : "\u2026";
        int mark_w = ascii ? 3 : 1, used = 0, budget;
        size_t len = 0, i = 0;
        char buf[GLYPHS_ASCII_MAX];
        if (dstlen == 0)
                return -ENOBUFS;
        dst[0] = '\0';
        if (columns < 0)
                columns = 0;
        budget = columns;
        if (mark_w > columns)
                flags &= ~(unsigned)TEXT_FIT_ELLIPSIS; /* no room for the mark: just cut */
        if ((flags & TEXT_FIT_ELLIPSIS) && drawn_width(src, ascii) > (size_t)columns)
                budget = columns - mark_w; /* keep room for the ellipsis */
        while (src[i] && room) {
                size_t start = i, n;
                uint32_t cp = next_cp(src, &i);
                int w;
                const char *bytes = drawn(src, start, i, cp, ascii, buf, &n, &w);
                if (used + w > budget) {
                        cut = true;
                        break;
                }
                room = fit_put(dst, dstlen, &len, bytes, n);
                used += room ? w : 0;
        }
        if (cut && (flags & TEXT_FIT_ELLIPSIS) && room)
                used += (room = fit_put(dst, dstlen, &len, mark, strlen(mark))) ? mark_w : 0;
        while ((flags & TEXT_FIT_PAD) && used < columns && room)
                used += (room = fit_put(dst, dstlen, &len, " ", 1)) ? 1 : 0;
        return room ? used : -ENOBUFS;
}

/* ---- wrapping ---- */

static void wrap_emit(struct text_span *spans, size_t max, size_t *n, size_t off, size_t end)
{
        if (*n < max) {
                spans[*n].start = off;
                spans[*n].len = end - off;
        }
        (*n)++;
}

/* Wraps one paragraph s[p..end) (no "\n" inside). */
static void wrap_para(const char *s, size_t p, size_t end, size_t cols, struct text_span *spans,
                      size_t max, size_t *n)
{
        do {
                size_t i = p, width = 0, brk = 0, brk_end = 0;
                bool word = false, over = false;
                while (i < end) {
                        size_t at = i;
                        uint32_t cp = next_cp(s, &i);
                        size_t w = (size_t)safetext_cpwidth(cp);
                        if (cp == ' ' && word) {
                                if (brk_end != at)
                                        brk = at; /* start of this run of spaces */
                                brk_end = i;
                        }
                        if (w > 0 && width + w > cols && at > p) {
                                i = at;
                                over = true;
                                break;
                        }
                        word = word || cp != ' ';
                        width += w;
                }
                if (!over) {
                        wrap_emit(spans, max, n, p, end);
                        return;
                }
                if (brk_end) { /* break at the last run of spaces, dropping it */
                        wrap_emit(spans, max, n, p, brk);
                        i = brk_end;
                } else {
                        wrap_emit(spans, max, n, p, i);
                }
                while (i < end && s[i] == ' ')
                        i++;
                p = i;
        } while (p < end);
}

size_t text_wrap(const char *s, int columns, struct text_span *spans, size_t max)
{
        size_t n = 0, p = 0, cols = columns < 1 ? 1 : (size_t)columns;
        while (s[p]) {
                const char *nl = strchr(s + p, '\n');
                size_t end = nl ? (size_t)(nl - s) : strlen(s);
                if (end == p)
                        wrap_emit(spans, max, &n, p, p);
                else
                        wrap_para(s, p, end, cols, spans, max, &n);
                p = nl ? end + 1 : end;
        }
        return n;
}

/* ---- the live tail ---- */

struct text_lines {
        char **ring;
        size_t max, head, count; /* head: slot of the oldest kept line */
        size_t max_line;
        uint64_t total;
        struct safetext_buf cur; /* the unfinished last line */
        struct safetext dec;
};

static int lines_commit(void *ctx)
{
        struct text_lines *tl = ctx;
        char *line = tl->cur.p ? tl->cur.p : strdup("");
        size_t slot;
        if (!line)
                return -ENOMEM;
        if (tl->count == tl->max) {
                free(tl->ring[tl->head]);
                tl->ring[tl->head] = NULL;
                tl->head = (tl->head + 1) % tl->max;
                tl->count--;
        }
        slot = (tl->head + tl->count) % tl->max;
        tl->ring[slot] = line;
        tl->count++;
        tl->total++;
        memset(&tl->cur, 0, sizeof tl->cur);
        return 0;
}

struct text_lines *text_lines_new(size_t max_lines, size_t max_line_bytes, unsigned flags)
{
        struct text_lines *tl = calloc(1, sizeof *tl);
        if (!tl || max_lines == 0)
                goto fail;
        tl->ring = calloc(max_lines, sizeof *tl->ring);
        if (!tl->ring)
                goto fail;
        tl->max = max_lines;
        tl->max_line = max_line_bytes ? max_line_bytes : 4096;
        if (tl->max_line < LINE_MIN)
                tl->max_line = LINE_MIN;
        safetext_init(&tl->dec, flags | SAFETEXT_MULTILINE);
        tl->dec.newline = lines_commit;
        tl->dec.ctx = tl;
        return tl;
fail:
        free(tl);
        return NULL;
}

void text_lines_free(struct text_lines *tl)
{
        if (!tl)
                return;
        for (size_t k = 0; k < tl->count; k++)
                free(tl->ring[(tl->head + k) % tl->max]);
        free(tl->ring);
        free(tl->cur.p);
        free(tl);
}

/* A failed allocation loses the unfinished line, never the stream state. */
static int lines_check(struct text_lines *tl)
{
        if (!tl->cur.oom)
                return 0;
        free(tl->cur.p);
        memset(&tl->cur, 0, sizeof tl->cur);
        return -ENOMEM;
}

int text_lines_append(struct text_lines *tl, const void *chunk, size_t len)
{
        const unsigned char *s = chunk;
        int rc = 0;
        for (size_t i = 0; i < len; i++) {
                safetext_byte(&tl->dec, &tl->cur, s[i]);
                if (tl->cur.len + UNIT_MAX > tl->max_line && !tl->cur.oom) {
                        tl->dec.col = 0; /* an overlong line is broken here */
                        if (lines_commit(tl) < 0)
                                rc = -ENOMEM;
                }
                if (lines_check(tl) < 0)
                        rc = -ENOMEM;
        }
        return rc;
}

int text_lines_finish(struct text_lines *tl)
{
        safetext_end(&tl->dec, &tl->cur);
        return lines_check(tl);
}

size_t text_lines_count(const struct text_lines *tl)
{
        return tl->count + (tl->cur.len > 0);
}

const char *text_lines_get(const struct text_lines *tl, size_t i)
{
        if (i < tl->count)
                return tl->ring[(tl->head + i) % tl->max];
        if (i == tl->count && tl->cur.len > 0)
                return tl->cur.p;
        return NULL;
}

uint64_t text_lines_total(const struct text_lines *tl)
{
        return tl->total;
}

uint64_t text_lines_dropped(const struct text_lines *tl)
{
        return tl->total - tl->count;
}
