/* linebuf: lines out of a byte stream that arrives in pieces (a socket, a
 * pipe), each bounded: a line longer than its bound is dropped whole and
 * said so, never grown without end. */
#ifndef PROCTOR_LINEBUF_H
#define PROCTOR_LINEBUF_H

#include <stdbool.h>
#include <stddef.h>

struct linebuf {
        char *p;
        size_t len, cap;
        size_t max; /* bytes of one line, its '\n' left out */
        bool overlong;
};

/* Called for each whole line, its '\n' removed and a NUL after it; `line`
 * is NULL for a line that passed the bound (dropped). The line is the
 * buffer's until the next call. Returns false to stop reading what is left
 * of the bytes fed (its owner is closing). */
typedef bool (*linebuf_fn)(void *ud, char *line);

void linebuf_feed(struct linebuf *lb, const char *data, size_t n, linebuf_fn fn, void *ud);
/* The stream ended: a last line without its '\n' is delivered. */
void linebuf_end(struct linebuf *lb, linebuf_fn fn, void *ud);
void linebuf_free(struct linebuf *lb);

#endif
