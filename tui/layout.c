/* layout: the live view's geometry: two header lines, the body, two status
 * lines; the body holds three panes side by side, or one as a tab. */
#include "tui/layout.h"

#include <string.h>

static struct layout_rect rect(int y, int x, int h, int w)
{
        struct layout_rect r = {y, x, h, w};

        return r;
}

void layout_compute(int cols, int rows, enum layout_pane shown, struct layout *l)
{
        memset(l, 0, sizeof(*l));
        if (cols < LAYOUT_MIN_COLS || rows < LAYOUT_MIN_ROWS) {
                l->kind = LAYOUT_TOO_SMALL;
                return;
        }
        l->body = rect(2, 0, rows - 4, cols);
        if (cols >= LAYOUT_COLUMNS_MIN) {
                /* the transcript gets two fifths, the others share the rest */
                int w1 = cols * 2 / 5, w2 = (cols - w1) / 2;
                l->kind = LAYOUT_COLUMNS;
                l->pane[LAYOUT_TRANSCRIPT] = rect(2, 0, rows - 4, w1);
                l->pane[LAYOUT_TOOLS] = rect(2, w1, rows - 4, w2);
                l->pane[LAYOUT_EXECS] = rect(2, w1 + w2, rows - 4, cols - w1 - w2);
                return;
        }
        l->kind = LAYOUT_TABS;
        l->tabs = rect(2, 0, 1, cols);
        if ((unsigned)shown >= LAYOUT_PANES)
                shown = LAYOUT_TRANSCRIPT;
        l->pane[shown] = rect(3, 0, rows - 5, cols);
}

void layout_setup_compute(int cols, struct layout_setup *s)
{
        int half;

        s->w = cols > 100 ? 96 : cols - 4;
        s->x = (cols - s->w) / 2;
        half = s->w / 2 - 1;
        s->local = rect(5, s->x, 7, half);
        s->sandbox = rect(5, s->x + half + 2, 7, half);
}

int layout_pane_at(const struct layout *l, int y, int x)
{
        int i;

        for (i = 0; i < LAYOUT_PANES; i++) {
                const struct layout_rect *r = &l->pane[i];
                if (r->w > 0 && y >= r->y && y < r->y + r->h && x >= r->x && x < r->x + r->w)
                        return i;
        }
        return -1;
}
