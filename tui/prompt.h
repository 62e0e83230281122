/* prompt: the operator's line editor: a UTF-8 buffer with a cursor, the
 * readline-style edits, multi-line text and a history of earlier prompts.
 * Pure data, no ncurses: the buffer only ever holds printable text and
 * "\n", so nothing in it can reach the terminal as a control sequence. */
#ifndef PROCTOR_PROMPT_H
#define PROCTOR_PROMPT_H

#include <stdbool.h>
#include <stddef.h>

#define PROMPT_MAX     (64 * 1024) /* bytes of text a prompt holds */
#define PROMPT_HISTORY 100         /* earlier prompts kept */

struct prompt {
        char *buf;
        size_t len, cap;
        size_t cur;  /* byte offset of the cursor, on a character boundary */
        int scroll;  /* first display column shown (prompt_view keeps it) */
        char **hist; /* oldest first */
        size_t nhist;
        size_t hpos; /* nhist: editing the draft, else a history entry */
        char *draft; /* the text being typed while history is browsed */
};

enum prompt_edit {
        PROMPT_LEFT,
        PROMPT_RIGHT,
        PROMPT_WORD_LEFT,
        PROMPT_WORD_RIGHT,
        PROMPT_HOME, /* start of the cursor's line */
        PROMPT_END,  /* end of the cursor's line */
        PROMPT_BACKSPACE,
        PROMPT_DELETE,
        PROMPT_KILL_START, /* Ctrl-U: to the start of the line */
        PROMPT_KILL_END,   /* Ctrl-K: to the end of the line */
        PROMPT_KILL_WORD,  /* Ctrl-W: the word before the cursor */
        PROMPT_UP,         /* the line above, or the previous prompt */
        PROMPT_DOWN,       /* the line below, or the next prompt */
};

void prompt_init(struct prompt *p);
void prompt_free(struct prompt *p);

/* Inserts text at the cursor. Control characters are dropped, except
 * "\n" (kept), "\r\n" and "\r" (made "\n") and tabs (made a space); invalid
 * UTF-8 is dropped. Text past PROMPT_MAX is cut at a character boundary.
 * Returns the bytes inserted, or -ENOMEM. */
int prompt_insert(struct prompt *p, const char *text, size_t len);

/* Applies one edit; false when it changed nothing (at an edge). */
bool prompt_edit(struct prompt *p, enum prompt_edit e);

/* The text, NUL-terminated (never NULL). */
const char *prompt_text(const struct prompt *p);

/* True when the text holds anything but spaces and newlines. */
bool prompt_has_text(const struct prompt *p);

/* Empties the buffer. */
void prompt_clear(struct prompt *p);

/* Adds the text to the history (not a repeat of the last entry) and
 * empties the buffer. Returns a copy of the text for the caller to free,
 * or NULL when out of memory. */
char *prompt_take(struct prompt *p);

/* One screen row of the prompt, `columns` wide: the text with each "\n"
 * shown as `newline` (a glyph of one column), scrolled sideways so that
 * the cursor stays in view. Writes it to `out` (NUL-terminated) and the
 * cursor's column within it to *cursor_col. */
void prompt_view(struct prompt *p, int columns, const char *newline, char *out, size_t outlen,
                 int *cursor_col);

/* Lines of the text (1 for a single line) and the cursor's line, 1-based. */
void prompt_lines(const struct prompt *p, size_t *lines, size_t *cursor_line);

#endif
