/* termout: headless output of untrusted bytes (the model's text, a tool's
 * output) to stdout or stderr. On a terminal it is sanitized as the TUI
 * draws it, so no escape sequence is ever obeyed; to a pipe or a file, and
 * with --raw, the bytes pass untouched. */
#ifndef PROCTOR_TERMOUT_H
#define PROCTOR_TERMOUT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "core/view/safetext.h"

struct termout {
        int fd;
        bool sanitize;
        struct safetext st;
        struct safetext_buf buf; /* one chunk's sanitized bytes, reused */
};

/* Sanitizes what goes to `fd` when it is a terminal and `raw` is false. */
void termout_init(struct termout *t, int fd, bool raw);

/* Writes one chunk of the stream; chunks may cut characters and escape
 * sequences anywhere (the cut part is held until the next chunk). */
void termout_write(struct termout *t, const void *chunk, size_t len);

/* printf to the stream, then termout_end: a whole message, one call. */
void termout_printf(struct termout *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Ends the stream: whatever is held (a cut character, a "\r") is shown. */
void termout_end(struct termout *t);

void termout_free(struct termout *t);

/* printf of a message for people (an error, a note) to f, always through
 * core/view/safetext: what it quotes (a name from an image, a file name, an
 * engine's reply) may hold escape sequences, shown and never obeyed. */
void termout_message(FILE *f, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#endif
