/* safetext: turns untrusted bytes (tool output, model text) into UTF-8 that
 * is safe to hand to a terminal, whole or streamed in chunks cut anywhere.
 * Pure functions, no locale, no I/O: nothing here may ever pass on a control
 * character or an escape sequence. The TUI and headless output share it. */
#ifndef PROCTOR_SAFETEXT_H
#define PROCTOR_SAFETEXT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Flags for safetext_sanitize and safetext_init.
 *
 * Escape style, always the same: C0 controls and DEL in caret notation
 * ("\x1b" is "^[", "\x07" is "^G", "\x00" is "^@", DEL is "^?"); C1 controls
 * (U+0080..U+009F), bidi embeddings, overrides and isolates (U+202A..U+202E,
 * U+2066..U+2069) and the line/paragraph separators U+2028/U+2029 as
 * "<U+XXXX>"; invalid UTF-8 (stray or truncated bytes, overlong forms,
 * surrogates, anything above U+10FFFF) as U+FFFD, one per maximal invalid
 * subpart. A caret sequence is plain printable ASCII, so an escape sequence
 * written by a tool is shown, e.g. "^[]0;owned^G^[[2J", and never obeyed. */
enum {
        SAFETEXT_MULTILINE = 1 << 0, /* keep "\n" (and fold "\r\n" to "\n"); else "^J", "^M" */
        SAFETEXT_TABS = 1 << 1,      /* expand "\t" to spaces up to the next stop of 8; else "^I" */
        SAFETEXT_DROP_ANSI = 1 << 2, /* drop whole CSI/OSC/DCS/ESC sequences instead of showing
                                        them (colour codes vanish); a malformed or overlong one
                                        is cut short and the rest shown as text */
};

#define SAFETEXT_REPLACEMENT 0xFFFDu

/* Sanitizes `len` bytes of `src` (NULs included) into a new NUL-terminated
 * UTF-8 string the caller frees. Returns NULL only when out of memory. */
char *safetext_sanitize(const void *src, size_t len, unsigned flags);

/* Display width of one code point, from proctor's own tables (Unicode 15
 * East Asian Wide/Fullwidth and emoji presentation = 2; nonspacing and
 * enclosing marks, zero-width format characters and Hangul medial/final
 * jamo = 0; everything else 1), so the result never depends on the process
 * locale or the C library. Controls count 1. Tab stops are counted with it. */
int safetext_cpwidth(uint32_t cp);

/* True for the code points shown as "<U+XXXX>" rather than drawn. */
bool safetext_cp_escaped(uint32_t cp);

/* Encodes a code point (at most U+10FFFF) as UTF-8 into `out` (4 bytes of
 * room); returns the length. */
size_t safetext_utf8_encode(uint32_t cp, char *out);

/* A growable NUL-terminated output buffer. After a failed allocation `oom`
 * is set and every later put fails, so a caller checks once at the end. */
struct safetext_buf {
        char *p;
        size_t len, cap;
        bool oom;
};

bool safetext_buf_put(struct safetext_buf *b, const char *s, size_t n);

/* The state of one stream being sanitized: a character or escape sequence
 * cut by a chunk boundary is held here until the bytes that settle it
 * arrive, so the output never depends on where the stream was cut. */
struct safetext {
        unsigned flags;
        uint32_t cp;
        uint8_t need, lo, hi; /* continuation bytes awaited, and the next one's range */
        uint8_t esc;          /* where in a dropped escape sequence (SAFETEXT_DROP_ANSI) */
        bool cr;              /* a "\r" awaiting the next byte (SAFETEXT_MULTILINE) */
        size_t esc_len;
        size_t col; /* display column, for tab stops; a caller breaking lines resets it */
        /* called at each line end; NULL appends "\n" to the output */
        int (*newline)(void *ctx);
        void *ctx;
};

void safetext_init(struct safetext *st, unsigned flags);

/* Sanitizes one byte of the stream, appending whatever it settles to `out`. */
void safetext_byte(struct safetext *st, struct safetext_buf *out, unsigned char c);

/* Sanitizes a chunk; returns 0 or -ENOMEM (out->oom). */
int safetext_feed(struct safetext *st, struct safetext_buf *out, const void *chunk, size_t len);

/* Ends the stream: a character left incomplete becomes U+FFFD, a pending
 * "\r" is shown; nothing stays hidden in the state. The stream may go on
 * afterwards as if fresh (the column is kept). */
void safetext_end(struct safetext *st, struct safetext_buf *out);

#endif
