/* draw: the parts of a frame and the primitives they share. Internal to
 * tui/: draw.c holds the primitives, the header, the status lines, the
 * overlays and the frame itself; panes.c the setup screen and the three
 * panes; detail.c the detail view. Nothing here changes the session. */
#ifndef PROCTOR_TUI_DRAW_H
#define PROCTOR_TUI_DRAW_H

#include "tui/app.h"
#include "tui/layout.h"

/* Draws already-safe text fitted to w columns. */
void draw_put(struct app *a, int y, int x, int w, enum theme_role r, const char *safe);
/* Draws untrusted text: escapes and controls become visible, never obeyed. */
void draw_put_untrusted(struct app *a, int y, int x, int w, enum theme_role r, const char *s,
                        size_t len);
void draw_fill(struct app *a, int y, int x, int w, enum theme_role r);
void draw_box(struct app *a, const struct layout_rect *r, const char *title, bool focused);
/* A horizontal rule with a title, inside a box. */
void draw_rule(struct app *a, int y, int x, int w, const char *title);

void fmt_bytes(char *buf, size_t len, uint64_t b);
void fmt_ms(char *buf, size_t len, uint64_t ms);

enum theme_role draw_exec_role(enum vm_exec_state st);
enum theme_role draw_call_role(enum vm_call_state st);
/* The mode shown: the session's, or the recorded one in a replay. */
bool draw_shows_sandbox(struct app *a);
const char *draw_spinner(struct app *a);

enum metric { METRIC_CPU, METRIC_MEM, METRIC_PIDS, METRIC_COUNT };

/* What a full-height bar of a metric's graph stands for: its limit; with
 * none, 100% for CPU (one core) and for memory and pids the smallest of
 * 64M, 128M... (16, 32... pids) the history stays under, so that a small
 * process draws low bars, not full ones. */
double draw_metric_top(const struct viewmodel_exec *e, enum metric m);
/* One metric's whole history (viewmodel_exec_sample) as at most `width`
 * bars, scaled to draw_metric_top; several buckets to a column, the highest
 * of them, once there are more buckets than columns. */
void draw_sparkline(char *out, size_t len, const struct viewmodel_exec *e, int width,
                    enum metric m);
/* "cpu  45%", "mem 12M/512M", "pids 3/128": a metric's value and limit
 * (once ended: "cpu 1.2s", "peak 14M/512M"). */
void draw_metric_label(char *out, size_t len, const struct viewmodel_exec *e, enum metric m);
/* label, then the graph in what is left of w columns; the label padded to
 * label_w columns so that graphs line up. */
void draw_metric(struct app *a, int y, int x, int w, int label_w, const struct viewmodel_exec *e,
                 enum metric m);

/* panes.c */
void draw_setup(struct app *a);
void draw_transcript(struct app *a, const struct layout_rect *r);
/* Drops what the panes keep between frames (the transcript's layout). */
void draw_forget(struct app *a);
void draw_tools(struct app *a, const struct layout_rect *r);
void draw_execs(struct app *a, const struct layout_rect *r);
/* Screen rows one execution takes in a pane `w` columns wide. */
int draw_exec_rows(int w);

/* detail.c */
void draw_detail(struct app *a, const struct layout_rect *r);

#endif
