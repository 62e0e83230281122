/* glyphs: what the TUI draws on a terminal whose locale is not UTF-8: the
 * codeset test, and an ASCII stand-in for every character, its own (graph
 * bars, the cut-text mark) and those in tool and model text. Pure: the
 * caller reads the locale; nothing here ever returns a byte >= 0x80. */
#ifndef PROCTOR_GLYPHS_H
#define PROCTOR_GLYPHS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Bytes glyphs_ascii may write, the NUL included. */
#define GLYPHS_ASCII_MAX 4

/* True when `codeset` (nl_langinfo(CODESET)) is UTF-8 under any of its
 * spellings ("UTF-8", "utf8"); NULL or anything else is false. */
bool glyphs_codeset_is_utf8(const char *codeset);

/* Writes the ASCII drawn for code point `cp` into `out` (GLYPHS_ASCII_MAX
 * bytes, NUL-terminated) and returns its length, which is also its width
 * in columns. ASCII stays itself; the graph bars U+2581-U+2588 become the
 * ramp "_.-:=+*#"; the ellipsis "..."; box drawing "-", "|" or "+"; arrows,
 * dashes, quotes and bullets their usual ASCII; any other character "?",
 * "??" when it is two columns wide, nothing when it has no width. */
size_t glyphs_ascii(uint32_t cp, char *out);

#endif
