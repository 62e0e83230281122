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

#include "core/session/options.h"
#include "core/session/session.h"
#include "core/session/trace.h"
#include "core/view/viewmodel.h"
#include "tui/color.h"
#include "tui/listview.h"
#include "tui/prompt.h"
#include "tui/theme.h"

/* SCREEN_PREPARING: the image's first unpack, before there is a session */
enum app_screen { SCREEN_SETUP, SCREEN_LIVE, SCREEN_PREPARING };
enum pane { PANE_TRANSCRIPT, PANE_TOOLS, PANE_EXECS, PANE_COUNT };
enum dialog { DIALOG_NONE, DIALOG_KILL, DIALOG_KILL_ALL, DIALOG_QUIT };
/* Where the setup screen's keys go: the prompt, or the mode cards. */
enum setup_focus { SETUP_PROMPT, SETUP_MODE, SETUP_LIMITS };
/* The limits the setup screen edits, in the order shown. */
enum setup_limit {
        LIMIT_MEMORY,
        LIMIT_CPU,
        LIMIT_TIMEOUT,
        LIMIT_PIDS,
        LIMIT_WORKSPACE,
        LIMIT_COUNT
};

/* The approval dialog's stages: choosing, then a line being typed. */
enum approve_stage { APPROVE_CHOOSE, APPROVE_REASON, APPROVE_RULE, APPROVE_EDIT };

#define FRAME_MS        33
#define DIALOG_GUARD_MS 250  /* a dialog's y counts only after this long */
#define STOP_GRACE_MS   5000 /* SIGTERM, then SIGKILL this much later */
#define STOP_PENDING    16   /* stops waiting for their SIGKILL at once */
#define HIT_ROWS        512  /* screen rows the mouse map covers */

struct text_lines;
struct wrapped;
struct prepare;
struct resume;
struct resume_brief;

/* The newest ended sessions of the workspace the setup screen offers. */
#define RESUME_OFFERED 3

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
        /* searching the output: the text, whether it is being typed, and
         * the line of the last match (-1: none) */
        char search[64];
        bool searching;
        long match;
};

struct approve_line;
struct attach;

/* The approval dialog (approve.c): the waiting call it shows (the oldest,
 * or the one the operator picked), the line being typed, and the call's
 * arguments or diff as lines, built once per call. */
struct approve_view {
        bool open; /* shown; Esc hides it, A (or Enter on the call) shows it */
        long call; /* the call shown, -1 for none */
        const struct viewmodel *vm;
        enum approve_stage stage;
        struct prompt field; /* the reason, the rule or the edited arguments */
        char err[640];       /* why the last answer was refused */
        long scroll;         /* first body line shown */
        bool ring;           /* a request came: the bell rings at the next frame */
        uint64_t shown_ms;   /* when this call showed: keys count only DIALOG_GUARD_MS later */
        struct approve_line *lines;
        size_t nlines;
        char heading[300]; /* above the body: "arguments", "diff of PATH (+2 -1)" */
};

struct app {
        uv_loop_t *loop;
        struct options o;
        struct bus *bus;
        struct viewmodel *vm;
        struct session *s;
        struct ctl *ctl; /* the session's socket, or NULL */
        struct trace *trace;
        enum exec_isolation mode;
        enum approval_policy policy; /* the setup screen's (F3), the next session's */
        const char *policy_from;     /* "--approval", "the demo", "default", "F3" */
        struct approve_view approve;
        unsigned cg_limits; /* sandbox limits cgroups enforce here (EXEC_CG_*) */
        enum app_screen screen;
        bool busy, quitting, done;
        const char *last; /* how the last prompt's turns ended, NULL before */
        /* The prompt: it has the keys on the setup screen (unless the mode
         * cards have them) and while a follow-up is typed (typing). */
        struct prompt prompt;
        bool typing;
        enum setup_focus setup_focus;
        enum setup_limit limit_field; /* the one the arrows change */
        int cursor_y, cursor_x;       /* the prompt's cursor as drawn; y -1: none */
        bool cursor_shown;
        bool mouse_off;    /* capture given back to the terminal for copying */
        bool expand_tools; /* inline calls in the transcript show their output */
        bool pasting;      /* inside a bracketed paste: everything is text */
        bool early_input;  /* the first read: typed before the terminal was set */
        char *queued;      /* a follow-up sent when the running turn ends */
        char **traces;     /* the traces this run wrote, named at exit */
        size_t ntraces;
        int exit_code; /* 0 after q; 128+N after signal N */
        /* when a dialog opened, and the first Esc or Ctrl-C of a pair */
        uint64_t dialog_ms, esc_ms, sigint_ms;
        enum pane focus;
        long sel[PANE_COUNT];
        bool follow[PANE_COUNT]; /* the selection stays on the newest item */
        long top[PANE_COUNT];    /* first row drawn */
        /* the list panes' rows, as last drawn: filter and sort (listview) */
        struct list_view lists[PANE_COUNT];
        int filtering; /* the pane whose filter is being typed, -1 none */
        long scroll;   /* transcript lines up from the bottom */
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
        uv_timer_t later;    /* starts a queued follow-up outside callbacks */
        uv_timer_t watchdog; /* a quit that waits too long goes anyway */
        uv_timer_t escalate; /* SIGKILL for the stops whose grace ran out */
        struct {
                uint64_t exec_id, at_ms;
        } stops[STOP_PENDING];
        size_t nstops;
        uv_signal_t sigs[4];
        struct prepare *prep; /* the image being unpacked, NULL when none */
        /* resuming (resume.c): the earlier session whose conversation the
         * session goes on with, NULL for a new one; the options as given,
         * before its settings were applied; the ended sessions offered on
         * the setup screen and the one picked there (-1: none) */
        struct resume *resume;
        struct options given;
        struct resume_brief *offered;
        int noffered, picked;
        char fatal[512]; /* why the supervisor could not go on, said at exit */
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
        /* attach: a session running elsewhere, seen through its socket
         * (attach.c); NULL for the supervisor's own and a replay */
        struct attach *att;
};

/* The newest item a list pane shows: what a following selection takes. */
static inline long app_list_newest(const struct app *a, enum pane p)
{
        const struct list_view *lv = &a->lists[p];
        long best = -1;
        size_t i;

        for (i = 0; i < lv->n; i++)
                if (lv->rows[i] > best)
                        best = lv->rows[i];
        return best;
}

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
/* Starts the session with the prompt's text, or sends it as a follow-up. */
void app_start_prompt(struct app *a);
/* Keeps the prompt's text to send when the running turn ends. */
void app_queue_prompt(struct app *a);
void app_flip_mode(struct app *a);
/* Steps the setup screen's limit `which` to the next (dir > 0) or previous
 * preset; the session's executions get the new value. */
void app_step_limit(struct app *a, enum setup_limit which, int dir);
/* The setup screen's text for a limit: "512M", "5s", "rw" ... */
void app_limit_text(const struct app *a, enum setup_limit which, char *out, size_t len);
/* Winds the session down (killing what runs) and leaves with exit_code. */
void app_quit(struct app *a, int exit_code);
/* The execution k kills: the selected running one, else the newest running
 * one; 0 with *why set when there is none. */
uint64_t app_kill_target(struct app *a, const char **why);
/* Executions running now, and (queued, may be NULL) calls waiting. */
unsigned app_running(struct app *a, unsigned *queued);
void app_next_theme(struct app *a);
/* SIGTERM to an execution, and SIGKILL STOP_GRACE_MS later if it still
 * runs then (docker stop, htop's F9 then F9 again). */
void app_stop_exec(struct app *a, uint64_t exec_id);
/* p: pauses the execution k would kill, or resumes it. */
void app_toggle_pause(struct app *a);

/* Mouse capture off (the terminal's own selection copies text) and on. */
void app_toggle_mouse(struct app *a);
/* n: a new session on the setup screen, once the last one is idle. */
void app_new_session(struct app *a);
/* The pane's rows rebuilt as the next frame will show them, the selection
 * on the newest while the pane follows: before a key acts on them. */
void app_list_sync(struct app *a, enum pane p);
/* Selections on the newest items, following; nothing scrolled; no detail. */
void app_reset_view(struct app *a);
void app_find_themes_dir(struct app *a);
void app_start_terminal(struct app *a);
/* Gives the terminal back and closes the handles app_start_terminal made. */
void app_close_terminal(struct app *a);
extern struct app *app_current; /* for the crash handler */

/* Steps the approval policy the session will start with (F3 on the
 * setup screen): host, always, never. */
void app_cycle_policy(struct app *a);

/* Closes the session (not started) and opens a new one with a->o, the
 * resumed conversation if any: 0, or -errno with err. */
int app_reopen(struct app *a, char *err, size_t errlen);
/* The approval policy from a->o.approval, or the default. */
void app_default_policy(struct app *a);

/* resume.c: `proctor resume` and the setup screen's offer.
 * resume_start: loads `what` (NULL: the newest ended session of the
 * workspace) and applies its settings over a->o (a->given keeps them as
 * given); resume_offer: finds the sessions to offer; resume_feed: shows the
 * earlier conversation in the new view model, with notes; resume_pick (F4):
 * the next offered session (or none again) for the session about to start;
 * resume_draw: the setup screen's lines, from row *y; resume_end at exit. */
int resume_start(struct app *a, const char *what, char *err, size_t errlen);
void resume_offer(struct app *a);
void resume_feed(struct app *a);
void resume_pick(struct app *a);
void resume_draw(struct app *a, int *y, int x, int w);
void resume_end(struct app *a);

/* input.c: the keys the terminal description lacks (paste markers,
 * Ctrl-arrows); reads and acts on every key waiting */
void input_setup(void);
void input_read(struct app *a);
/* A key that edits a line (moves, deletes, inserts text) applied to p;
 * false for any other key (Enter, Esc, Tab, function keys). */
bool input_edit(struct prompt *p, int kind, wint_t ch, bool alt);

/* approve.c: the approval dialog. approve_request: an approval.request
 * passed (the dialog shows, the bell rings); approve_show: shows it for
 * `call`, or the first waiting one (-1), false when none waits;
 * approve_active: it is shown and has a call (after bringing it up to date:
 * a decided call gives way to the next); approve_key: its keys; the
 * frame's part; approve_free at exit. */
void approve_request(struct app *a);
bool approve_show(struct app *a, long call);
bool approve_active(struct app *a);
void approve_key(struct app *a, int kind, wint_t ch);
void approve_draw(struct app *a);
void approve_free(struct app *a);

/* draw.c: one whole frame; the colour pairs of the current theme */
void draw_frame(struct app *a);
void draw_setup_colors(struct app *a);

/* detail.c: open the detail view of the selection in the focused pane
 * (false when nothing is selected); scroll it; close it and free its cache */
bool detail_open(struct app *a);
void detail_scroll(struct app *a, long delta);
void detail_close(struct app *a);
/* Moves to the next (dir 1) or previous (-1) output line holding the
 * search text; false when there is none. */
bool detail_search(struct app *a, int dir);
/* Saves the shown call's output, as the bytes came, to a new file in the
 * current directory; the status says where, or why not. */
void detail_save(struct app *a);
/* The line number, counted from the output's start, of cached line i. */
uint64_t detail_line_no(const struct app *a, long i);

/* attach.c: the operator's commands, to the local session or, attached,
 * sent over the socket (0 once sent: the effect comes back as events, a
 * refusal as an error line in the status): 0 or -errno */
int app_kill_exec(struct app *a, uint64_t id);
int app_signal_exec(struct app *a, uint64_t id, int sig);
int app_pause_exec(struct app *a, uint64_t id, bool resume);
void app_interrupt(struct app *a);
unsigned app_kill_all(struct app *a, unsigned *cancelled);
int app_approve(struct app *a, const char *call_id, bool allow, const char *reason,
                const char *args, const char *rule, char *err, size_t errlen);
/* The view can send nothing: a replay, or a read-only or ended attach. */
bool app_sends_nothing(const struct app *a);
/* The attached view: its own keys (true when taken: q, and the action keys
 * of a read-only view, refused); Enter in the prompt (a follow-up sent);
 * the header's "attached to ID (read-only), N watching". */
bool attach_key(struct app *a, wint_t ch);
void attach_submit(struct app *a);
void attach_describe(const struct app *a, char *out, size_t len);

/* replay.c: feeds the recorded events due; the replay's own keys */
void replay_next(uv_timer_t *t);
bool replay_key(struct app *a, wint_t ch);
/* Left and Right seek 10 s of recorded time; true when the key was taken. */
bool replay_code_key(struct app *a, wint_t ch);
/* Recorded time of the last event shown, and (end_ms) of the last one. */
uint64_t replay_position(const struct app *a, uint64_t *end_ms);

#endif
