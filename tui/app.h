/* app: the supervisor's state, shared by its parts inside tui/: input and
 * the session (app.c), drawing (draw.c), replay (replay.c). Internal. */
#ifndef PROCTOR_TUI_APP_H
#define PROCTOR_TUI_APP_H

#define _XOPEN_SOURCE_EXTENDED 1
#include <limits.h>
#include <ncurses.h>
#include <stdbool.h>
#include <stdint.h>
#include <time.h>
#include <uv.h>

#include "core/options.h"
#include "core/session.h"
#include "core/trace.h"
#include "core/viewmodel.h"
#include "tui/color.h"
#include "tui/theme.h"

enum app_screen { SCREEN_SETUP, SCREEN_LIVE };
enum pane { PANE_TRANSCRIPT, PANE_TOOLS, PANE_EXECS, PANE_COUNT };
enum dialog { DIALOG_NONE, DIALOG_KILL, DIALOG_KILL_ALL, DIALOG_QUIT };

#define FRAME_MS 33
#define HIT_ROWS 512 /* screen rows the mouse map covers */

struct text_lines;
struct wrapped;

/* The detail view of one tool call or execution, and its output: the call's
 * output as sanitized lines, fed incrementally as it streams. */
struct detail_view {
        bool open;
        enum pane of; /* PANE_TOOLS: a call; PANE_EXECS: an execution */
        long item;    /* its index */
        long scroll;  /* first output line shown */
        bool follow;  /* keep the newest output line in view */
        long shown;   /* output lines that fit in the last frame */
        /* the output cache: whose it is and how much of it went in */
        struct text_lines *lines;
        const struct viewmodel *vm;
        long call;
        uint64_t fed;
        bool finished;
        uint64_t before; /* lines of the output before the cache's first */
};

struct app {
        uv_loop_t *loop;
        struct options o;
        struct bus *bus;
        struct viewmodel *vm;
        struct session *s;
        struct trace *trace;
        enum exec_isolation mode;
        unsigned cg_limits; /* sandbox limits cgroups enforce here (EXEC_CG_*) */
        enum app_screen screen;
        bool busy, quitting, done;
        const char *last; /* how the last prompt's turns ended, NULL before */
        char prompt[2048];
        size_t plen;
        bool typing;
        enum pane focus;
        long sel[PANE_COUNT];
        bool follow[PANE_COUNT]; /* the selection stays on the newest item */
        long top[PANE_COUNT];    /* first item drawn */
        long scroll;             /* transcript lines up from the bottom */
        /* item under each screen row of the tools and executions panes, -1
         * for none, as last drawn: for the mouse */
        long hit[PANE_COUNT][HIT_ROWS];
        bool help;
        struct detail_view detail;
        /* the transcript's entries as laid out (panes.c), for this model */
        struct wrapped *wrapped;
        size_t nwrapped;
        const struct viewmodel *wrapped_vm;
        enum dialog dialog;
        uint64_t dialog_exec;
        char status[320];
        uv_poll_t in;
        uv_timer_t frame, tick;
        uv_signal_t sigs[4];
        bool dirty;
        uint64_t last_frame_ms;
        struct theme theme;
        enum color_depth depth;
        bool ascii; /* the locale is not UTF-8: draw ASCII only (tui/glyphs.h) */
        char themes[THEME_LIST_MAX][THEME_NAME_MAX];
        size_t nthemes, theme_i;
        char themes_dir[PATH_MAX];
        unsigned spin;
        /* replay: a recorded session played into the view model, read-only */
        bool replay, paused;
        json_t **events;
        size_t nevents, next;
        double speed; /* 0: as fast as possible */
        uv_timer_t play;
};

/* Items in a list pane: the tool calls, or the executions. */
static inline long app_pane_items(const struct app *a, enum pane p)
{
        return (long)(p == PANE_EXECS ? viewmodel_nexecs(a->vm) : viewmodel_ncalls(a->vm));
}

static inline uint64_t app_now_ms(void)
{
        struct timespec ts;

        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

/* app.c */
void app_mark_dirty(struct app *a);
/* Selections on the newest items, following; nothing scrolled; no detail. */
void app_reset_view(struct app *a);
void app_find_themes_dir(struct app *a);
void app_start_terminal(struct app *a);
/* Gives the terminal back and closes the handles app_start_terminal made. */
void app_close_terminal(struct app *a);
extern struct app *app_current; /* for the crash handler */

/* draw.c: one whole frame; the colour pairs of the current theme */
void draw_frame(struct app *a);
void draw_setup_colors(struct app *a);

/* detail.c: open the detail view of the selection in the focused pane
 * (false when nothing is selected); scroll it; close it and free its cache */
bool detail_open(struct app *a);
void detail_scroll(struct app *a, long delta);
void detail_close(struct app *a);

/* replay.c: feeds the recorded events due; the replay's own keys */
void replay_next(uv_timer_t *t);
bool replay_key(struct app *a, wint_t ch);

#endif
