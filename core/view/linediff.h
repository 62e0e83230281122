/* linediff: a small line diff for showing what a change to a file would do
 * (the approval dialog's view of a write or an edit): the longest common
 * subsequence of lines, with the unchanged runs away from a change folded.
 * Pure: no I/O, no drawing; bounded, so that a huge file says so instead
 * of taking the screen's time. */
#ifndef PROCTOR_LINEDIFF_H
#define PROCTOR_LINEDIFF_H

#include <stddef.h>

/* Lines each side may have once their common start and end are set aside. */
#define LINEDIFF_MAX_LINES 2000

/* One line of the diff: ' ' unchanged, '-' only in the old text, '+' only in
 * the new one, '@' a folded run of `skipped` unchanged lines (no text). */
struct linediff_line {
        char op;
        const char *text; /* into the texts given; no "\n" */
        size_t len;
        size_t skipped;
};

struct linediff {
        struct linediff_line *lines;
        size_t n;
        size_t added, removed;
};

/* The diff from old to new, keeping `context` unchanged lines around each
 * change. 0; -E2BIG when the changed middle has more than
 * LINEDIFF_MAX_LINES lines on a side; -ENOMEM. The lines point into the
 * texts, which must outlive the diff. */
int linediff_compute(const char *old, size_t oldlen, const char *new, size_t newlen, size_t context,
                     struct linediff *out);
void linediff_free(struct linediff *d);

#endif
