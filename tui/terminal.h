/* terminal: whether this process's terminal can show the supervisor, asked
 * before curses starts, so that a refusal leaves the terminal untouched. */
#ifndef PROCTOR_TERMINAL_H
#define PROCTOR_TERMINAL_H

#include <stddef.h>

/* 0 when stdin and stdout are a terminal whose description (TERM) is known
 * and can address the cursor; else -ENOTTY or -ENOENT, with err saying why
 * for people (without a "proctor:" prefix or a hint; callers add theirs). */
int terminal_check(char *err, size_t errlen);

#endif
