/* color: how many colours the terminal can show, and theme colours mapped
 * to the nearest one it has. Pure functions over facts the caller gathers
 * (environment, terminfo); this module never calls ncurses itself. */
#ifndef PROCTOR_COLOR_H
#define PROCTOR_COLOR_H

#include <stdbool.h>
#include <stdint.h>

#include "tui/theme.h"

enum color_depth {
        COLOR_MONO, /* attributes only */
        COLOR_8,    /* ANSI 0-7 */
        COLOR_16,   /* ANSI 0-15 */
        COLOR_256,  /* xterm 256-colour palette */
        COLOR_TRUE, /* 24-bit: colours are 0xRRGGBB */
};

/* The depth to draw with. no_color_env is $NO_COLOR and colorterm_env
 * $COLORTERM (either may be NULL); no_color_flag is --no-color;
 * terminfo_colors is the terminal's `colors` capability (-1 if unknown).
 * A non-empty NO_COLOR or the flag gives mono; COLORTERM "truecolor" or
 * "24bit" gives truecolor; else 256, 16 or 8 by terminfo, fewer is mono. */
enum color_depth color_detect(const char *no_color_env, const char *colorterm_env,
                              bool no_color_flag, int terminfo_colors);

/* "mono", "8", "16", "256" or "truecolor". */
const char *color_depth_name(enum color_depth depth);

/* Nearest xterm palette index to 0xRRGGBB: 16-255 (cube and grey ramp;
 * 0-15 are left out because terminals redefine them). */
int color_to_256(uint32_t rgb);

/* One of the 16 ANSI colours, 0-15: a colour with a clear hue keeps it (red
 * stays red however soft), bright when a channel is near full; greys go by
 * brightness to black, bright black, white or bright white. */
int color_to_16(uint32_t rgb);

/* One of the 8 basic ANSI colours, 0-7: the hue as in color_to_16; greys
 * black or white. */
int color_to_8(uint32_t rgb);

/* A theme colour at `depth`: THEME_COLOR_DEFAULT stays -1; truecolor keeps
 * 0xRRGGBB; mono gives -1. */
int color_map(int32_t rgb, enum color_depth depth);

/* What the TUI should set up for one role: colours in the depth's terms
 * (palette index, 0xRRGGBB for truecolor, -1 for the terminal default) and
 * THEME_ATTR_* bits. In mono both colours are -1 and the role's own
 * attribute (reverse for selection and badges, bold for titles...) is added
 * so the screen stays readable. When a foreground and background that differ
 * land on the same palette entry, the foreground becomes black or white,
 * whichever stands out. */
struct color_spec {
        int fg, bg;
        unsigned attr;
};

struct color_spec color_resolve(const struct theme *t, enum theme_role role,
                                enum color_depth depth);

#endif
