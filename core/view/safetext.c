/* safetext: sanitizing untrusted bytes for a terminal. One byte-at-a-time
 * decoder serves whole strings and streamed chunks alike, so a split never
 * changes the result. Never emits a byte below 0x20 (bar "\n" when asked),
 * DEL, a C1 control or a bidi override; never reads the locale. */
#include "core/view/safetext.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/util/buf.h"

#define ESC_CAP 4096 /* bytes of one dropped escape sequence before we give up on it */

/* ---- growable output buffer ---- */

bool safetext_buf_put(struct safetext_buf *b, const char *s, size_t n)
{
        if (!b->oom && buf_append(&b->p, &b->len, &b->cap, s, n) < 0)
                b->oom = true;
        return !b->oom;
}

/* ---- width tables ---- */

struct range {
        uint32_t lo, hi;
};

/* Nonspacing/enclosing marks and zero-width format characters, the
 * commonly met blocks. */
static const struct range zero_width[] = {
    {0x0300, 0x036F},   {0x0483, 0x0489},   {0x0591, 0x05BD},   {0x05BF, 0x05BF},
    {0x05C1, 0x05C2},   {0x05C4, 0x05C5},   {0x05C7, 0x05C7},   {0x0610, 0x061A},
    {0x061C, 0x061C},   {0x064B, 0x065F},   {0x0670, 0x0670},   {0x06D6, 0x06DC},
    {0x06DF, 0x06E4},   {0x06E7, 0x06E8},   {0x06EA, 0x06ED},   {0x0711, 0x0711},
    {0x0730, 0x074A},   {0x07A6, 0x07B0},   {0x07EB, 0x07F3},   {0x07FD, 0x07FD},
    {0x0816, 0x0819},   {0x081B, 0x0823},   {0x0825, 0x0827},   {0x0829, 0x082D},
    {0x0859, 0x085B},   {0x0898, 0x089F},   {0x08CA, 0x08E1},   {0x08E3, 0x0902},
    {0x093A, 0x093A},   {0x093C, 0x093C},   {0x0941, 0x0948},   {0x094D, 0x094D},
    {0x0951, 0x0957},   {0x0962, 0x0963},   {0x0981, 0x0981},   {0x09BC, 0x09BC},
    {0x09C1, 0x09C4},   {0x09CD, 0x09CD},   {0x09E2, 0x09E3},   {0x0A01, 0x0A02},
    {0x0A3C, 0x0A3C},   {0x0A41, 0x0A51},   {0x0A70, 0x0A71},   {0x0A75, 0x0A75},
    {0x0A81, 0x0A82},   {0x0ABC, 0x0ABC},   {0x0AC1, 0x0AC8},   {0x0ACD, 0x0ACD},
    {0x0AE2, 0x0AE3},   {0x0B01, 0x0B01},   {0x0B3C, 0x0B3C},   {0x0B3F, 0x0B3F},
    {0x0B41, 0x0B44},   {0x0B4D, 0x0B4D},   {0x0B82, 0x0B82},   {0x0BC0, 0x0BC0},
    {0x0BCD, 0x0BCD},   {0x0C00, 0x0C00},   {0x0C3E, 0x0C40},   {0x0C46, 0x0C56},
    {0x0CBC, 0x0CBC},   {0x0CCC, 0x0CCD},   {0x0D41, 0x0D44},   {0x0D4D, 0x0D4D},
    {0x0DCA, 0x0DCA},   {0x0DD2, 0x0DD6},   {0x0E31, 0x0E31},   {0x0E34, 0x0E3A},
    {0x0E47, 0x0E4E},   {0x0EB1, 0x0EB1},   {0x0EB4, 0x0EBC},   {0x0EC8, 0x0ECE},
    {0x0F18, 0x0F19},   {0x0F35, 0x0F35},   {0x0F37, 0x0F37},   {0x0F39, 0x0F39},
    {0x0F71, 0x0F7E},   {0x0F80, 0x0F84},   {0x0F86, 0x0F87},   {0x0F8D, 0x0FBC},
    {0x102D, 0x1030},   {0x1032, 0x1037},   {0x1039, 0x103A},   {0x1160, 0x11FF},
    {0x135D, 0x135F},   {0x1712, 0x1714},   {0x17B4, 0x17B5},   {0x17B7, 0x17BD},
    {0x17C6, 0x17C6},   {0x17C9, 0x17D3},   {0x180B, 0x180F},   {0x1AB0, 0x1AFF},
    {0x1DC0, 0x1DFF},   {0x200B, 0x200F},   {0x202A, 0x202E},   {0x2060, 0x206F},
    {0x20D0, 0x20F0},   {0x2CEF, 0x2CF1},   {0x2DE0, 0x2DFF},   {0x302A, 0x302D},
    {0x3099, 0x309A},   {0xA66F, 0xA672},   {0xA674, 0xA67D},   {0xA69E, 0xA69F},
    {0xA8E0, 0xA8F1},   {0xD7B0, 0xD7FF},   {0xFB1E, 0xFB1E},   {0xFE00, 0xFE0F},
    {0xFE20, 0xFE2F},   {0xFEFF, 0xFEFF},   {0xFFF9, 0xFFFB},   {0x16FE4, 0x16FE4},
    {0x1D167, 0x1D169}, {0x1D173, 0x1D182}, {0x1D185, 0x1D18B}, {0x1D1AA, 0x1D1AD},
    {0xE0001, 0xE0001}, {0xE0020, 0xE007F}, {0xE0100, 0xE01EF},
};

/* East Asian Wide and Fullwidth, and emoji shown wide by default. */
static const struct range wide[] = {
    {0x1100, 0x115F},   {0x231A, 0x231B},   {0x2329, 0x232A},   {0x23E9, 0x23EC},
    {0x23F0, 0x23F0},   {0x23F3, 0x23F3},   {0x25FD, 0x25FE},   {0x2614, 0x2615},
    {0x2648, 0x2653},   {0x267F, 0x267F},   {0x2693, 0x2693},   {0x26A1, 0x26A1},
    {0x26AA, 0x26AB},   {0x26BD, 0x26BE},   {0x26C4, 0x26C5},   {0x26CE, 0x26CE},
    {0x26D4, 0x26D4},   {0x26EA, 0x26EA},   {0x26F2, 0x26F3},   {0x26F5, 0x26F5},
    {0x26FA, 0x26FA},   {0x26FD, 0x26FD},   {0x2705, 0x2705},   {0x270A, 0x270B},
    {0x2728, 0x2728},   {0x274C, 0x274C},   {0x274E, 0x274E},   {0x2753, 0x2755},
    {0x2757, 0x2757},   {0x2795, 0x2797},   {0x27B0, 0x27B0},   {0x27BF, 0x27BF},
    {0x2B1B, 0x2B1C},   {0x2B50, 0x2B50},   {0x2B55, 0x2B55},   {0x2E80, 0x303E},
    {0x3041, 0xA4CF},   {0xA960, 0xA97F},   {0xAC00, 0xD7A3},   {0xF900, 0xFAFF},
    {0xFE10, 0xFE19},   {0xFE30, 0xFE6F},   {0xFF00, 0xFF60},   {0xFFE0, 0xFFE6},
    {0x16FE0, 0x16FE3}, {0x16FF0, 0x16FF1}, {0x17000, 0x18D08}, {0x1AFF0, 0x1B2FF},
    {0x1F004, 0x1F004}, {0x1F0CF, 0x1F0CF}, {0x1F18E, 0x1F18E}, {0x1F191, 0x1F19A},
    {0x1F200, 0x1F202}, {0x1F210, 0x1F23B}, {0x1F240, 0x1F248}, {0x1F250, 0x1F251},
    {0x1F260, 0x1F265}, {0x1F300, 0x1F320}, {0x1F32D, 0x1F335}, {0x1F337, 0x1F37C},
    {0x1F37E, 0x1F393}, {0x1F3A0, 0x1F3CA}, {0x1F3CF, 0x1F3D3}, {0x1F3E0, 0x1F3F0},
    {0x1F3F4, 0x1F3F4}, {0x1F3F8, 0x1F43E}, {0x1F440, 0x1F440}, {0x1F442, 0x1F4FC},
    {0x1F4FF, 0x1F53D}, {0x1F54B, 0x1F54E}, {0x1F550, 0x1F567}, {0x1F57A, 0x1F57A},
    {0x1F595, 0x1F596}, {0x1F5A4, 0x1F5A4}, {0x1F5FB, 0x1F64F}, {0x1F680, 0x1F6C5},
    {0x1F6CC, 0x1F6CC}, {0x1F6D0, 0x1F6D2}, {0x1F6D5, 0x1F6D7}, {0x1F6DC, 0x1F6DF},
    {0x1F6EB, 0x1F6EC}, {0x1F6F4, 0x1F6FC}, {0x1F7E0, 0x1F7EB}, {0x1F7F0, 0x1F7F0},
    {0x1F90C, 0x1F93A}, {0x1F93C, 0x1F945}, {0x1F947, 0x1F9FF}, {0x1FA70, 0x1FAFF},
    {0x20000, 0x2FFFD}, {0x30000, 0x3FFFD},
};

static bool in_table(uint32_t cp, const struct range *t, size_t n)
{
        size_t lo = 0, hi = n;
        if (cp < t[0].lo || cp > t[n - 1].hi)
                return false;
        while (lo < hi) {
                size_t mid = lo + (hi - lo) / 2;
                if (cp > t[mid].hi)
                        lo = mid + 1;
                else if (cp < t[mid].lo)
                        hi = mid;
                else
                        return true;
        }
        return false;
}

int safetext_cpwidth(uint32_t cp)
{
        if (cp < 0x300)
                return 1;
        if (in_table(cp, zero_width, sizeof zero_width / sizeof zero_width[0]))
                return 0;
        if (in_table(cp, wide, sizeof wide / sizeof wide[0]))
                return 2;
        return 1;
}

/* Code points that are shown as "<U+XXXX>" rather than drawn: C1 controls,
 * which some terminals obey, and what can reorder or split the line the
 * operator reads. */
bool safetext_cp_escaped(uint32_t cp)
{
        return (cp >= 0x80 && cp <= 0x9F) || (cp >= 0x202A && cp <= 0x202E) ||
               (cp >= 0x2066 && cp <= 0x2069) || cp == 0x2028 || cp == 0x2029;
}

size_t safetext_utf8_encode(uint32_t cp, char *out)
{
        if (cp < 0x80) {
                out[0] = (char)cp;
                return 1;
        }
        if (cp < 0x800) {
                out[0] = (char)(0xC0 | (cp >> 6));
                out[1] = (char)(0x80 | (cp & 0x3F));
                return 2;
        }
        if (cp < 0x10000) {
                out[0] = (char)(0xE0 | (cp >> 12));
                out[1] = (char)(0x80 | ((cp >> 6) & 0x3F));
                out[2] = (char)(0x80 | (cp & 0x3F));
                return 3;
        }
        out[0] = (char)(0xF0 | (cp >> 18));
        out[1] = (char)(0x80 | ((cp >> 12) & 0x3F));
        out[2] = (char)(0x80 | ((cp >> 6) & 0x3F));
        out[3] = (char)(0x80 | (cp & 0x3F));
        return 4;
}

/* ---- the streaming decoder ---- */

enum esc_state { ESC_NONE, ESC_START, ESC_CSI, ESC_NF, ESC_STR, ESC_STR_ESC };

void safetext_init(struct safetext *d, unsigned flags)
{
        memset(d, 0, sizeof *d);
        d->flags = flags;
}

static void emit_cp(struct safetext *d, struct safetext_buf *out, uint32_t cp)
{
        char buf[16];
        if (safetext_cp_escaped(cp)) {
                int n = snprintf(buf, sizeof buf, "<U+%04X>", (unsigned)cp);
                safetext_buf_put(out, buf, (size_t)n);
                d->col += (size_t)n;
                return;
        }
        safetext_buf_put(out, buf, safetext_utf8_encode(cp, buf));
        d->col += (size_t)safetext_cpwidth(cp);
}

static void emit_caret(struct safetext *d, struct safetext_buf *out, unsigned char c)
{
        char buf[2] = {'^', (char)(c ^ 0x40)};
        safetext_buf_put(out, buf, 2);
        d->col += 2;
}

static int emit_newline(struct safetext *d, struct safetext_buf *out)
{
        d->col = 0;
        if (d->newline)
                return d->newline(d->ctx);
        return safetext_buf_put(out, "\n", 1) ? 0 : -ENOMEM;
}

static void emit_control(struct safetext *d, struct safetext_buf *out, unsigned char c)
{
        if (c == '\n' && (d->flags & SAFETEXT_MULTILINE)) {
                emit_newline(d, out);
        } else if (c == '\r' && (d->flags & SAFETEXT_MULTILINE)) {
                d->cr = true; /* decided by the next byte: "\r\n" is one line end */
        } else if (c == '\t' && (d->flags & SAFETEXT_TABS)) {
                static const char spaces[8] = "        ";
                size_t n = 8 - d->col % 8;
                safetext_buf_put(out, spaces, n);
                d->col += n;
        } else if (c == 0x1B && (d->flags & SAFETEXT_DROP_ANSI)) {
                d->esc = ESC_START;
                d->esc_len = 0;
        } else {
                emit_caret(d, out, c);
        }
}

/* Inside a sequence being dropped. Returns true when `c` was consumed; on
 * false the sequence is over and `c` must be read as ordinary input. */
static bool dec_escape(struct safetext *d, struct safetext_buf *out, unsigned char c)
{
        if (++d->esc_len > ESC_CAP) {
                d->esc = ESC_NONE;
                return false;
        }
        switch (d->esc) {
        case ESC_START:
                if (c == '[')
                        d->esc = ESC_CSI;
                else if (c == ']' || c == 'P' || c == 'X' || c == '^' || c == '_')
                        d->esc = ESC_STR;
                else if (c >= 0x20 && c <= 0x2F)
                        d->esc = ESC_NF;
                else if (c >= 0x30 && c <= 0x7E)
                        d->esc = ESC_NONE;
                else {
                        d->esc = ESC_NONE; /* not a sequence: show the lone ESC */
                        emit_caret(d, out, 0x1B);
                        return false;
                }
                return true;
        case ESC_CSI:
        case ESC_NF: {
                unsigned char final_lo = d->esc == ESC_CSI ? 0x40 : 0x30;
                if (c >= 0x20 && c < final_lo)
                        return true;
                d->esc = ESC_NONE;
                return c >= final_lo && c <= 0x7E;
        }
        case ESC_STR:
                if (c == 0x07)
                        d->esc = ESC_NONE;
                else if (c == 0x1B)
                        d->esc = ESC_STR_ESC;
                return true;
        case ESC_STR_ESC:
                if (c == '\\') {
                        d->esc = ESC_NONE;
                        return true;
                }
                d->esc = ESC_START; /* an ESC that starts the next sequence */
                return dec_escape(d, out, c);
        }
        return false;
}

/* Starting a multi-byte sequence: how many continuation bytes follow and
 * the range the first of them must fall in. Narrowing that first range is
 * what rejects overlong forms (E0, F0), surrogates (ED) and values above
 * U+10FFFF (F4); C0, C1 and F5..FF can never start a valid sequence. */
void safetext_byte(struct safetext *d, struct safetext_buf *out, unsigned char c)
{
        if (d->cr) {
                d->cr = false;
                if (c == '\n') {
                        emit_newline(d, out);
                        return;
                }
                emit_caret(d, out, '\r');
        }
        if (d->esc != ESC_NONE && dec_escape(d, out, c))
                return;
        if (d->need) {
                if (c >= d->lo && c <= d->hi) {
                        d->cp = d->cp << 6 | (c & 0x3Fu);
                        d->lo = 0x80;
                        d->hi = 0xBF;
                        if (--d->need == 0)
                                emit_cp(d, out, d->cp);
                        return;
                }
                d->need = 0; /* truncated: replace what we had, then read c afresh */
                emit_cp(d, out, SAFETEXT_REPLACEMENT);
        }
        if (c < 0x20 || c == 0x7F) {
                emit_control(d, out, c);
        } else if (c < 0x80) {
                char ch = (char)c;
                safetext_buf_put(out, &ch, 1);
                d->col++;
        } else if (c >= 0xC2 && c <= 0xDF) {
                d->need = 1, d->cp = c & 0x1Fu, d->lo = 0x80, d->hi = 0xBF;
        } else if (c >= 0xE0 && c <= 0xEF) {
                d->need = 2, d->cp = c & 0x0Fu;
                d->lo = c == 0xE0 ? 0xA0 : 0x80;
                d->hi = c == 0xED ? 0x9F : 0xBF;
        } else if (c >= 0xF0 && c <= 0xF4) {
                d->need = 3, d->cp = c & 0x07u;
                d->lo = c == 0xF0 ? 0x90 : 0x80;
                d->hi = c == 0xF4 ? 0x8F : 0xBF;
        } else {
                emit_cp(d, out, SAFETEXT_REPLACEMENT);
        }
}

/* End of input: nothing may stay hidden in the decoder's state. */
void safetext_end(struct safetext *d, struct safetext_buf *out)
{
        if (d->need) {
                d->need = 0;
                emit_cp(d, out, SAFETEXT_REPLACEMENT);
        }
        if (d->cr) {
                d->cr = false;
                emit_caret(d, out, '\r');
        }
        d->esc = ESC_NONE;
}

int safetext_feed(struct safetext *st, struct safetext_buf *out, const void *chunk, size_t len)
{
        const unsigned char *s = chunk;
        for (size_t i = 0; i < len; i++)
                safetext_byte(st, out, s[i]);
        return out->oom ? -ENOMEM : 0;
}

char *safetext_sanitize(const void *src, size_t len, unsigned flags)
{
        struct safetext_buf out = {0};
        struct safetext d;
        safetext_init(&d, flags);
        safetext_buf_put(&out, "", 0);
        safetext_feed(&d, &out, src, len);
        safetext_end(&d, &out);
        if (out.oom) {
                free(out.p);
                return NULL;
        }
        return out.p;
}
