/* text: measures, fits and wraps sanitized text (core/view/safetext) in terminal
 * columns, and keeps the sanitized tail of a live output stream. Pure
 * functions, no ncurses, no locale: nothing here may ever hand a control
 * character or an escape sequence on to the terminal. */
#ifndef PROCTOR_TEXT_H
#define PROCTOR_TEXT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/view/safetext.h"

/* Flags for text_fit. */
enum {
        TEXT_FIT_ELLIPSIS = 1 << 0, /* end a cut string with "…" (1 column) */
        TEXT_FIT_PAD = 1 << 1,      /* pad with spaces to exactly `columns` */
        TEXT_FIT_ASCII = 1 << 2,    /* for a non-UTF-8 terminal: every character as its
                                       ASCII stand-in (tui/glyphs.h), measured as such, and
                                       "..." (3 columns) as the ellipsis */
};

/* Display width of a NUL-terminated string, in terminal columns. Invalid
 * UTF-8 counts one column per U+FFFD it would be shown as. */
size_t text_width(const char *utf8);

/* Writes into `dst` (size `dstlen`, always NUL-terminated when dstlen > 0)
 * the longest prefix of `src` that fits in `columns` display columns,
 * whole characters only: a wide character that would straddle the edge is
 * left out, and zero-width marks stay with their base. With
 * TEXT_FIT_ELLIPSIS a cut string ends in "…" inside the budget; with
 * TEXT_FIT_PAD spaces make the result exactly `columns` wide. Anything
 * unsafe still in `src` is drawn as U+FFFD. Returns the width written, or
 * -ENOBUFS when `dst` was too small (the result is then still valid UTF-8,
 * cut at a character boundary). */
int text_fit(char *dst, size_t dstlen, const char *src, int columns, unsigned flags);

/* True when `needle` occurs in `hay`, ASCII letters compared case-blind
 * (no locale); "" occurs everywhere. */
bool text_contains(const char *hay, const char *needle);

/* One wrapped line: `len` bytes of the wrapped string from byte `start`. */
struct text_span {
        size_t start, len;
};

/* Splits the sanitized string `s` into lines of at most `columns` columns
 * (columns < 1 counts as 1): at each "\n", then at the last space that lets
 * the line fit (the spaces at a break belong to neither line), and a word
 * longer than a line is cut at a character boundary. A wide character wider
 * than `columns` gets a line of its own. A trailing "\n" ends the last line
 * without opening another; "" has no lines. Fills up to `max` spans and
 * returns how many lines there are in all, like snprintf. */
size_t text_wrap(const char *s, int columns, struct text_span *spans, size_t max);

/* The tail of a live output stream: sanitized lines, the last `max_lines`
 * of them kept in a ring. Chunks may split characters and escape sequences
 * anywhere; the lines come out the same however the stream was cut. The
 * work per chunk is proportional to the chunk, never to the history. */
struct text_lines;

/* `max_lines` >= 1; `max_line_bytes` (0: 4096, at least 16) bounds the
 * bytes of one line, a longer one is broken before it would pass that; `flags` as for
 * safetext_sanitize (SAFETEXT_MULTILINE is implied). Returns NULL when out of memory. */
struct text_lines *text_lines_new(size_t max_lines, size_t max_line_bytes, unsigned flags);
void text_lines_free(struct text_lines *tl);

/* Appends a chunk. Returns 0 or -ENOMEM (the stream state stays usable). */
int text_lines_append(struct text_lines *tl, const void *chunk, size_t len);

/* Ends the stream: a character left incomplete becomes U+FFFD, a pending
 * CR is shown. Appending again afterwards starts a fresh line state. */
int text_lines_finish(struct text_lines *tl);

/* Lines kept, counting the unfinished last one when it is not empty. */
size_t text_lines_count(const struct text_lines *tl);

/* Line `i`, 0 being the oldest kept; NULL when out of range. Valid until
 * the next append, finish or free. */
const char *text_lines_get(const struct text_lines *tl, size_t i);

/* Lines completed since the start, including those the ring dropped. */
uint64_t text_lines_total(const struct text_lines *tl);

/* Lines the ring dropped: line 0 of text_lines_get is the stream's line
 * text_lines_dropped() + 1, counting from 1. */
uint64_t text_lines_dropped(const struct text_lines *tl);

#endif
