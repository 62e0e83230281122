/* prompt: the operator's line editor (see prompt.h). Offsets are bytes and
 * always fall on character boundaries; what is inserted is filtered first,
 * so every later step may assume valid, printable UTF-8 and "\n". */
#include "tui/prompt.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core/util/buf.h"
#include "tui/text.h"

void prompt_init(struct prompt *p)
{
        memset(p, 0, sizeof(*p));
}

void prompt_free(struct prompt *p)
{
        size_t i;

        for (i = 0; i < p->nhist; i++)
                free(p->hist[i]);
        free(p->hist);
        free(p->buf);
        free(p->draft);
        memset(p, 0, sizeof(*p));
}

static bool is_cont(unsigned char c)
{
        return (c & 0xc0) == 0x80;
}

/* Length of the valid, printable UTF-8 character at s (n bytes left), or 0
 * when it is invalid or a control character. */
static size_t char_len(const unsigned char *s, size_t n)
{
        uint32_t cp;
        size_t len, i;

        if (s[0] < 0x80)
                return s[0] >= 0x20 && s[0] != 0x7f ? 1 : 0;
        len = s[0] >= 0xf0 ? 4 : s[0] >= 0xe0 ? 3 : s[0] >= 0xc2 ? 2 : 0;
        if (len == 0 || s[0] > 0xf4 || n < len)
                return 0;
        cp = s[0] & (0x7f >> len);
        for (i = 1; i < len; i++) {
                if (!is_cont(s[i]))
                        return 0;
                cp = cp << 6 | (s[i] & 0x3f);
        }
        if ((len == 3 && cp < 0x800) || (len == 4 && (cp < 0x10000 || cp > 0x10ffff)) ||
            (cp >= 0xd800 && cp <= 0xdfff) || (cp >= 0x80 && cp < 0xa0))
                return 0;
        return len;
}

static void splice_in(struct prompt *p, const char *s, size_t n)
{
        memmove(p->buf + p->cur + n, p->buf + p->cur, p->len - p->cur);
        memcpy(p->buf + p->cur, s, n);
        p->len += n;
        p->cur += n;
        p->buf[p->len] = '\0';
}

int prompt_insert(struct prompt *p, const char *text, size_t len)
{
        const unsigned char *s = (const unsigned char *)text;
        size_t i = 0, added = 0;

        if (buf_reserve(&p->buf, &p->cap, p->len, len, 256) < 0)
                return -ENOMEM;
        while (i < len) {
                size_t n = char_len(s + i, len - i);
                const char *put = (const char *)s + i;
                size_t step = n;

                if (n == 0) {
                        step = 1;
                        put = s[i] == '\n' || s[i] == '\r' ? "\n" : s[i] == '\t' ? " " : NULL;
                        n = put != NULL;
                        if (s[i] == '\r' && i + 1 < len && s[i + 1] == '\n')
                                step = 2;
                }
                if (p->len + n > PROMPT_MAX)
                        break;
                if (n > 0)
                        splice_in(p, put, n);
                added += n;
                i += step;
        }
        return (int)added;
}

const char *prompt_text(const struct prompt *p)
{
        return p->buf != NULL ? p->buf : "";
}

bool prompt_has_text(const struct prompt *p)
{
        size_t i;

        for (i = 0; i < p->len; i++)
                if (p->buf[i] != ' ' && p->buf[i] != '\n')
                        return true;
        return false;
}

void prompt_clear(struct prompt *p)
{
        p->len = p->cur = 0;
        p->scroll = 0;
        if (p->buf != NULL)
                p->buf[0] = '\0';
}

/* ---- moving ---- */

static size_t prev_char(const struct prompt *p, size_t at)
{
        if (at == 0)
                return 0;
        do
                at--;
        while (at > 0 && is_cont((unsigned char)p->buf[at]));
        return at;
}

static size_t next_char(const struct prompt *p, size_t at)
{
        if (at >= p->len)
                return p->len;
        do
                at++;
        while (at < p->len && is_cont((unsigned char)p->buf[at]));
        return at;
}

static size_t line_start(const struct prompt *p, size_t at)
{
        while (at > 0 && p->buf[at - 1] != '\n')
                at--;
        return at;
}

static size_t line_end(const struct prompt *p, size_t at)
{
        while (at < p->len && p->buf[at] != '\n')
                at++;
        return at;
}

static bool is_gap(char c)
{
        return c == ' ' || c == '\n';
}

static size_t word_left(const struct prompt *p, size_t at)
{
        while (at > 0 && is_gap(p->buf[at - 1]))
                at--;
        while (at > 0 && !is_gap(p->buf[at - 1]))
                at--;
        return at;
}

static size_t word_right(const struct prompt *p, size_t at)
{
        while (at < p->len && is_gap(p->buf[at]))
                at++;
        while (at < p->len && !is_gap(p->buf[at]))
                at++;
        return at;
}

/* Characters from the start of the cursor's line to the cursor. */
static size_t column_of(const struct prompt *p, size_t at)
{
        size_t i = line_start(p, at), n = 0;

        while (i < at) {
                i = next_char(p, i);
                n++;
        }
        return n;
}

/* The offset `col` characters into the line starting at `start`, or its end. */
static size_t at_column(const struct prompt *p, size_t start, size_t col)
{
        size_t end = line_end(p, start);

        while (col-- > 0 && start < end)
                start = next_char(p, start);
        return start;
}

static void cut(struct prompt *p, size_t from, size_t to)
{
        memmove(p->buf + from, p->buf + to, p->len - to);
        p->len -= to - from;
        p->buf[p->len] = '\0';
        p->cur = from;
}

/* Replaces the buffer with `s` (history browsing), cursor at its end. */
static void load(struct prompt *p, const char *s)
{
        prompt_clear(p);
        prompt_insert(p, s, strlen(s));
}

static bool history_step(struct prompt *p, bool back)
{
        if (back ? p->hpos == 0 : p->hpos >= p->nhist)
                return false;
        if (back && p->hpos == p->nhist) {
                free(p->draft);
                p->draft = strdup(prompt_text(p));
        }
        p->hpos += back ? -1 : 1;
        load(p, p->hpos < p->nhist ? p->hist[p->hpos] : p->draft != NULL ? p->draft : "");
        return true;
}

bool prompt_edit(struct prompt *p, enum prompt_edit e)
{
        size_t at = p->cur, ls;

        switch (e) {
        case PROMPT_LEFT:
                p->cur = prev_char(p, at);
                break;
        case PROMPT_RIGHT:
                p->cur = next_char(p, at);
                break;
        case PROMPT_WORD_LEFT:
                p->cur = word_left(p, at);
                break;
        case PROMPT_WORD_RIGHT:
                p->cur = word_right(p, at);
                break;
        case PROMPT_HOME:
                p->cur = line_start(p, at);
                break;
        case PROMPT_END:
                p->cur = line_end(p, at);
                break;
        case PROMPT_BACKSPACE:
                if (at == 0)
                        return false;
                cut(p, prev_char(p, at), at);
                return true;
        case PROMPT_DELETE:
                if (at >= p->len)
                        return false;
                cut(p, at, next_char(p, at));
                return true;
        case PROMPT_KILL_START:
                ls = line_start(p, at);
                if (ls == at)
                        return false;
                cut(p, ls, at);
                return true;
        case PROMPT_KILL_END:
                ls = line_end(p, at);
                if (ls == at)
                        ls = next_char(p, at); /* at a line's end: join the next */
                if (ls == at)
                        return false;
                cut(p, at, ls);
                return true;
        case PROMPT_KILL_WORD:
                ls = word_left(p, at);
                if (ls == at)
                        return false;
                cut(p, ls, at);
                return true;
        case PROMPT_UP:
                ls = line_start(p, at);
                if (ls == 0)
                        return history_step(p, true);
                p->cur = at_column(p, line_start(p, ls - 1), column_of(p, at));
                break;
        case PROMPT_DOWN:
                ls = line_end(p, at);
                if (ls >= p->len)
                        return history_step(p, false);
                p->cur = at_column(p, ls + 1, column_of(p, at));
                break;
        }
        return p->cur != at;
}

char *prompt_take(struct prompt *p)
{
        char *text = strdup(prompt_text(p));

        if (text == NULL)
                return NULL;
        if (text[0] != '\0' && (p->nhist == 0 || strcmp(p->hist[p->nhist - 1], text) != 0)) {
                char *copy = strdup(text);
                if (copy != NULL && p->nhist == PROMPT_HISTORY) {
                        free(p->hist[0]);
                        memmove(p->hist, p->hist + 1, (PROMPT_HISTORY - 1) * sizeof(*p->hist));
                        p->nhist--;
                }
                if (copy != NULL && p->hist == NULL)
                        p->hist = calloc(PROMPT_HISTORY, sizeof(*p->hist));
                if (copy != NULL && p->hist != NULL)
                        p->hist[p->nhist++] = copy;
                else
                        free(copy);
        }
        p->hpos = p->nhist;
        free(p->draft);
        p->draft = NULL;
        prompt_clear(p);
        return text;
}

/* ---- showing ---- */

/* Display columns of the character at `at` ("\n" is the one-column glyph). */
static int char_cols(const struct prompt *p, size_t at)
{
        char one[5] = {0};
        size_t n = next_char(p, at) - at;

        if (p->buf[at] == '\n')
                return 1;
        memcpy(one, p->buf + at, n < 4 ? n : 4);
        return (int)text_width(one);
}

void prompt_view(struct prompt *p, int columns, const char *newline, char *out, size_t outlen,
                 int *cursor_col)
{
        size_t i, o = 0, nl = strlen(newline);
        int col = 0, cur = 0;

        if (outlen == 0)
                return;
        out[0] = '\0';
        if (columns < 1)
                columns = 1;
        for (i = 0; i < p->cur && i < p->len; i = next_char(p, i))
                cur += char_cols(p, i);
        /* keep the cursor in view with a quarter of a row of context */
        if (cur < p->scroll)
                p->scroll = cur - columns / 4 > 0 ? cur - columns / 4 : 0;
        if (cur >= p->scroll + columns)
                p->scroll = cur - columns + 1 + columns / 4;
        if (p->scroll > cur)
                p->scroll = cur;
        for (i = 0; i < p->len; i = next_char(p, i)) {
                int w = char_cols(p, i);
                size_t n = p->buf[i] == '\n' ? nl : next_char(p, i) - i;
                if (col >= p->scroll && col + w <= p->scroll + columns) {
                        if (o + n + 1 > outlen)
                                break;
                        memcpy(out + o, p->buf[i] == '\n' ? newline : p->buf + i, n);
                        o += n;
                }
                col += w;
                if (col >= p->scroll + columns)
                        break;
        }
        out[o] = '\0';
        *cursor_col = cur - p->scroll;
}

void prompt_lines(const struct prompt *p, size_t *lines, size_t *cursor_line)
{
        size_t i;

        *lines = *cursor_line = 1;
        for (i = 0; i < p->len; i++) {
                if (p->buf[i] != '\n')
                        continue;
                (*lines)++;
                if (i < p->cur)
                        (*cursor_line)++;
        }
}
