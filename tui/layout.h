/* layout: where each part of the live view goes for a terminal size. Pure
 * arithmetic, shared by drawing and by mouse hit-testing, and unit-tested. */
#ifndef PROCTOR_LAYOUT_H
#define PROCTOR_LAYOUT_H

#define LAYOUT_MIN_COLS    80 /* below this, or LAYOUT_MIN_ROWS, a notice */
#define LAYOUT_MIN_ROWS    24
#define LAYOUT_COLUMNS_MIN 120 /* from this width the panes stand side by side */

struct layout_rect {
        int y, x, h, w;
};

enum layout_kind { LAYOUT_TOO_SMALL, LAYOUT_COLUMNS, LAYOUT_TABS };

enum layout_pane { LAYOUT_TRANSCRIPT, LAYOUT_TOOLS, LAYOUT_EXECS, LAYOUT_PANES };

struct layout {
        enum layout_kind kind;
        struct layout_rect body; /* between the header lines and the status lines */
        struct layout_rect tabs; /* the tab bar (tabs only) */
        /* side by side: all three; tabs: only `shown` has a size */
        struct layout_rect pane[LAYOUT_PANES];
};

/* Computes the layout of a cols x rows terminal; `shown` is the pane a tab
 * layout shows (the focused one). */
void layout_compute(int cols, int rows, enum layout_pane shown, struct layout *l);

/* The setup screen: a column `w` wide at `x`, the two mode boxes side by
 * side in it from row `boxes_y`. */
struct layout_setup {
        int x, w;
        struct layout_rect local, sandbox;
};

void layout_setup_compute(int cols, struct layout_setup *s);

/* The pane at a screen cell, or -1. */
int layout_pane_at(const struct layout *l, int y, int x);

#endif
