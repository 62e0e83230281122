/* app: the supervisor's state, input and session. Input, the session, its
 * executions and the redraw timer all share one libuv loop; drawing is
 * coalesced (at most ~30 frames a second, none when nothing changed). The
 * terminal is restored on every way out. */
#include "tui/app.h"

#include <errno.h>
#include <langinfo.h>
#include <locale.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "core/config.h"
#include "tui/draw.h"
#include "tui/glyphs.h"
#include "tui/layout.h"
#include "tui/tui.h"

struct app *app_current; /* for the crash handler only */

/* ---- terminal ---- */

static void restore_terminal(void)
{
        if (!isendwin())
                endwin();
}

void app_close_terminal(struct app *a)
{
        int i;

        restore_terminal();
        if (a->replay)
                uv_close((uv_handle_t *)&a->play, NULL);
        uv_close((uv_handle_t *)&a->in, NULL);
        uv_close((uv_handle_t *)&a->frame, NULL);
        uv_close((uv_handle_t *)&a->tick, NULL);
        for (i = 0; i < 4; i++)
                uv_close((uv_handle_t *)&a->sigs[i], NULL);
}

static void on_crash(int sig)
{
        restore_terminal();
        signal(sig, SIG_DFL);
        raise(sig);
}

static void on_frame(uv_timer_t *t)
{
        struct app *a = t->data;

        a->dirty = false;
        if (!a->done)
                draw_frame(a);
}

/* Coalesces redraws: at most one frame every FRAME_MS. */
void app_mark_dirty(struct app *a)
{
        uint64_t since = app_now_ms() - a->last_frame_ms;

        if (a->dirty || a->done)
                return;
        a->dirty = true;
        uv_timer_start(&a->frame, on_frame, since >= FRAME_MS ? 0 : FRAME_MS - since, 0);
}

/* While something runs: the clock, the spinner and the ages move. */
static void on_tick(uv_timer_t *t)
{
        struct app *a = t->data;

        a->spin++;
        app_mark_dirty(a);
        if (!a->busy)
                uv_timer_stop(t);
}

static void on_event(const json_t *ev, void *ud)
{
        app_mark_dirty(ud);
}

void app_reset_view(struct app *a)
{
        int p;

        for (p = 0; p < PANE_COUNT; p++) {
                a->sel[p] = -1;
                a->follow[p] = true;
                a->top[p] = 0;
        }
        a->scroll = 0;
        detail_close(a);
        draw_forget(a);
}

/* ---- the session ---- */

static void on_idle(enum agent_status st, void *ud);

static int open_session(struct app *a, char *err, size_t errlen)
{
        struct session_opts so = {0};
        int rc;

        a->bus = bus_new();
        a->vm = viewmodel_new();
        if (a->bus == NULL || a->vm == NULL)
                return -ENOMEM;
        bus_subscribe(a->bus, viewmodel_event, a->vm);
        so.mode = a->mode;
        so.mode_from = a->mode == a->o.mode ? a->o.mode_from : "the setup screen";
        so.model = a->o.model;
        so.provider.base_url = a->o.base_url;
        so.provider.retries = a->o.provider_retries;
        so.provider.idle_timeout_ms = (uint32_t)a->o.provider_timeout_ms;
        so.workspace = a->o.workspace;
        so.config_file = a->o.config;
        so.ws_mode = a->o.ws_mode;
        so.limits = a->o.limits;
        so.max_iterations = a->o.max_iterations;
        so.max_parallel = (unsigned)a->o.max_parallel;
        so.memory_budget = a->o.memory_budget;
        rc = session_new(a->loop, a->bus, &so, &a->s, err, errlen);
        if (rc < 0)
                return rc;
        a->cg_limits = session_cgroup_limits(a->s);
        /* the file comes with the first event: none for a session never started */
        rc = trace_prepare(a->o.trace, session_id(a->s), &a->trace, err, errlen);
        if (rc == 0)
                rc = session_protect(a->s, trace_path(a->trace), err, errlen);
        if (rc < 0)
                return rc;
        bus_subscribe(a->bus, trace_event, a->trace);
        bus_subscribe(a->bus, on_event, a);
        session_on_idle(a->s, on_idle, a);
        a->screen = SCREEN_SETUP;
        a->last = NULL;
        app_reset_view(a);
        return 0;
}

/* Only once every execution is gone, so that no event comes after. */
static void close_session(struct app *a)
{
        if (a->s == NULL)
                return;
        while (session_executions(a->s) > 0)
                uv_run(a->loop, UV_RUN_ONCE);
        session_end(a->s);
        session_free(a->s);
        a->s = NULL;
        trace_close(a->trace);
        a->trace = NULL;
        detail_close(a);
        draw_forget(a);
        viewmodel_free(a->vm);
        a->vm = NULL;
        bus_free(a->bus);
        a->bus = NULL;
}

static void finish(struct app *a)
{
        int i;

        a->done = true;
        if (a->replay)
                uv_timer_stop(&a->play);
        uv_timer_stop(&a->frame);
        uv_timer_stop(&a->tick);
        uv_poll_stop(&a->in);
        for (i = 0; i < 4; i++)
                uv_signal_stop(&a->sigs[i]);
        uv_stop(a->loop);
}

static void on_idle(enum agent_status st, void *ud)
{
        struct app *a = ud;

        a->busy = false;
        a->last = agent_status_name(st);
        snprintf(a->status, sizeof(a->status), "session %s: i follow-up, n new session, q quit",
                 agent_status_name(st));
        if (a->quitting)
                finish(a);
        app_mark_dirty(a);
}

static void start_prompt(struct app *a)
{
        int rc;

        if (a->plen == 0) {
                snprintf(a->status, sizeof(a->status), "type a prompt first");
                return;
        }
        a->prompt[a->plen] = '\0';
        rc = session_prompt(a->s, a->prompt);
        if (rc < 0) {
                snprintf(a->status, sizeof(a->status), "cannot start: %s", strerror(-rc));
                return;
        }
        a->screen = SCREEN_LIVE;
        a->busy = true;
        a->typing = false;
        a->plen = 0;
        a->status[0] = '\0';
        a->scroll = 0;
        uv_timer_start(&a->tick, on_tick, 120, 120);
}

static void flip_mode(struct app *a)
{
        enum exec_isolation m = a->mode == EXEC_LOCAL ? EXEC_SANDBOX : EXEC_LOCAL;

        if (session_set_mode(a->s, m) == -EBUSY) {
                snprintf(a->status, sizeof(a->status),
                         "the mode is fixed once the session has started (n starts a new one)");
                return;
        }
        a->mode = m;
        a->status[0] = '\0';
}

/* The selected running execution, or the most recent running one. */
static uint64_t kill_target(struct app *a)
{
        size_t n = viewmodel_nexecs(a->vm), i;

        if (a->focus == PANE_EXECS && a->sel[PANE_EXECS] >= 0 && (size_t)a->sel[PANE_EXECS] < n) {
                const struct viewmodel_exec *e = viewmodel_exec(a->vm, (size_t)a->sel[PANE_EXECS]);
                if (e->state == VM_EXEC_RUNNING || e->state == VM_EXEC_CREATING)
                        return e->id;
        }
        for (i = n; i-- > 0;) {
                const struct viewmodel_exec *e = viewmodel_exec(a->vm, i);
                if (e->state == VM_EXEC_RUNNING || e->state == VM_EXEC_CREATING)
                        return e->id;
        }
        return 0;
}

static void next_theme(struct app *a)
{
        char err[300];

        if (a->nthemes == 0)
                return;
        a->theme_i = (a->theme_i + 1) % a->nthemes;
        if (theme_open(a->themes[a->theme_i], a->themes_dir, &a->theme, err, sizeof(err)) < 0)
                snprintf(a->status, sizeof(a->status), "%s", err);
        else
                snprintf(a->status, sizeof(a->status), "theme: %s", a->theme.name);
        draw_setup_colors(a);
}

static void quit(struct app *a)
{
        a->quitting = true;
        if (a->busy && a->s != NULL) {
                session_kill_all(a->s, NULL);
                session_interrupt(a->s);
        } else {
                finish(a);
        }
}

/* ---- input ---- */

static void key_dialog(struct app *a, wint_t ch)
{
        enum dialog d = a->dialog;

        a->dialog = DIALOG_NONE;
        if (ch != 'y' && ch != 'Y')
                return;
        if (d == DIALOG_KILL) {
                if (session_kill_exec(a->s, a->dialog_exec) == 0)
                        snprintf(a->status, sizeof(a->status), "killed execution #%llu",
                                 (unsigned long long)a->dialog_exec);
                else
                        snprintf(a->status, sizeof(a->status), "execution #%llu had ended",
                                 (unsigned long long)a->dialog_exec);
        } else if (d == DIALOG_KILL_ALL) {
                unsigned cancelled, killed = session_kill_all(a->s, &cancelled);
                if (cancelled > 0)
                        snprintf(a->status, sizeof(a->status),
                                 "killed %u executions, cancelled %u queued calls", killed,
                                 cancelled);
                else
                        snprintf(a->status, sizeof(a->status), "killed %u executions", killed);
        } else if (d == DIALOG_QUIT) {
                quit(a);
        }
}

static bool key_prompt(struct app *a, int kind, wint_t ch)
{
        if (kind == KEY_CODE_YES) {
                if (ch == KEY_BACKSPACE && a->plen > 0) {
                        /* drop a whole UTF-8 character */
                        do
                                a->plen--;
                        while (a->plen > 0 && ((unsigned char)a->prompt[a->plen] & 0xc0) == 0x80);
                        return true;
                }
                return false;
        }
        if (ch == '\n' || ch == '\r') {
                start_prompt(a);
                return true;
        }
        if (ch == 27) {
                a->typing = false;
                return true;
        }
        if (ch == 127 || ch == 8) {
                return key_prompt(a, KEY_CODE_YES, KEY_BACKSPACE);
        }
        if (ch >= 32 && a->plen + 5 < sizeof(a->prompt)) {
                char mb[8];
                wchar_t w = (wchar_t)ch;
                int n = wctomb(mb, w);
                if (n > 0) {
                        memcpy(a->prompt + a->plen, mb, (size_t)n);
                        a->plen += (size_t)n;
                }
                return true;
        }
        return false;
}

static void move_sel(struct app *a, long delta)
{
        long n;

        if (a->detail.open) {
                detail_scroll(a, delta);
        } else if (a->focus == PANE_TRANSCRIPT) {
                a->scroll -= delta;
                if (a->scroll < 0)
                        a->scroll = 0;
        } else {
                n = app_pane_items(a, a->focus);
                a->sel[a->focus] += delta;
                if (a->sel[a->focus] >= n)
                        a->sel[a->focus] = n - 1;
                if (a->sel[a->focus] < 0)
                        a->sel[a->focus] = n > 0 ? 0 : -1;
                /* back on the newest item: follow new ones again */
                a->follow[a->focus] = a->sel[a->focus] == n - 1;
        }
}

/* The pane and item under a screen cell, as last drawn; false for none. */
static bool item_at(struct app *a, int y, int x, enum pane *p, long *item)
{
        struct layout l;
        int k;

        layout_compute(COLS, LINES, (enum layout_pane)a->focus, &l);
        k = layout_pane_at(&l, y, x);
        if (k < 0)
                return false;
        *p = (enum pane)k;
        *item = y >= 0 && y < HIT_ROWS ? a->hit[k][y] : -1;
        return true;
}

/* Click: on a pane, focus it; on a row, select it; on the selected row
 * (or a double click), open its details. Wheel: scroll what is under the
 * pointer (the details when open). */
static void key_mouse(struct app *a)
{
        MEVENT m;
        enum pane p;
        long item;
        bool click, dbl;

        if (getmouse(&m) != OK)
                return;
        click = (m.bstate & (BUTTON1_CLICKED | BUTTON1_PRESSED)) != 0;
        dbl = (m.bstate & BUTTON1_DOUBLE_CLICKED) != 0;
        if (a->screen == SCREEN_SETUP) {
                struct layout_setup ls;
                layout_setup_compute(COLS, &ls);
                if ((click || dbl) && m.y >= ls.local.y && m.y < ls.local.y + ls.local.h) {
                        if (m.x >= ls.local.x && m.x < ls.local.x + ls.local.w &&
                            a->mode != EXEC_LOCAL)
                                flip_mode(a);
                        else if (m.x >= ls.sandbox.x && m.x < ls.sandbox.x + ls.sandbox.w &&
                                 a->mode != EXEC_SANDBOX)
                                flip_mode(a);
                }
                return;
        }
        if (a->detail.open) {
                if (m.bstate & BUTTON4_PRESSED)
                        detail_scroll(a, -3);
                else if (m.bstate & BUTTON5_PRESSED)
                        detail_scroll(a, 3);
                return;
        }
        if (!item_at(a, m.y, m.x, &p, &item))
                return;
        if (m.bstate & (BUTTON4_PRESSED | BUTTON5_PRESSED)) {
                a->focus = p;
                move_sel(a, m.bstate & BUTTON4_PRESSED ? -3 : 3);
                return;
        }
        if (!click && !dbl)
                return;
        if (item >= 0 && (dbl || (a->focus == p && a->sel[p] == item))) {
                a->focus = p;
                a->sel[p] = item;
                detail_open(a);
                return;
        }
        a->focus = p;
        if (item >= 0) {
                long n = app_pane_items(a, p);
                a->sel[p] = item;
                a->follow[p] = item == n - 1;
        }
}

void replay_next(uv_timer_t *t);

static void key(struct app *a, int kind, wint_t ch)
{
        if (a->help) {
                a->help = false;
                return;
        }
        if (a->dialog != DIALOG_NONE) {
                key_dialog(a, ch);
                return;
        }
        if (kind == KEY_CODE_YES && ch == KEY_MOUSE) {
                key_mouse(a);
                return;
        }
        if (kind == KEY_CODE_YES && ch == KEY_RESIZE)
                return;
        if (kind != KEY_CODE_YES && ch == 12) { /* Ctrl-L */
                clearok(curscr, TRUE);
                return;
        }
        /* On the setup screen m, q and ? are commands until a prompt is
         * being typed; after that every key types. */
        if ((a->typing || a->screen == SCREEN_SETUP) && kind != KEY_CODE_YES &&
            !(a->plen == 0 && !a->typing && (ch == 'm' || ch == 'q' || ch == '?')) &&
            key_prompt(a, kind, ch))
                return;
        if ((a->typing || a->screen == SCREEN_SETUP) && kind == KEY_CODE_YES &&
            key_prompt(a, kind, ch))
                return;
        a->status[0] = '\0';
        if (a->replay && kind != KEY_CODE_YES && replay_key(a, ch))
                return;
        if (kind == KEY_CODE_YES) {
                switch (ch) {
                case KEY_UP:
                        move_sel(a, -1);
                        break;
                case KEY_DOWN:
                        move_sel(a, 1);
                        break;
                case KEY_PPAGE:
                        move_sel(a, -(LINES / 2));
                        break;
                case KEY_NPAGE:
                        move_sel(a, LINES / 2);
                        break;
                case KEY_HOME:
                        move_sel(a, -1000000);
                        break;
                case KEY_END:
                        move_sel(a, 1000000);
                        break;
                case KEY_BTAB:
                        a->focus = (enum pane)((a->focus + PANE_COUNT - 1) % PANE_COUNT);
                        break;
                }
                return;
        }
        switch (ch) {
        case 'q':
                if (a->busy)
                        a->dialog = DIALOG_QUIT;
                else
                        quit(a);
                break;
        case '?':
                a->help = true;
                break;
        case 'm':
                flip_mode(a);
                break;
        case '\t':
                a->focus = (enum pane)((a->focus + 1) % PANE_COUNT);
                break;
        case '\n':
        case '\r':
                if (a->screen == SCREEN_LIVE && !a->detail.open && !detail_open(a))
                        snprintf(a->status, sizeof(a->status),
                                 "nothing selected: Tab to the tool calls or executions");
                break;
        case 27: /* Esc */
                if (a->detail.open)
                        detail_close(a);
                else if (a->busy)
                        session_interrupt(a->s);
                break;
        case 'k':
                if (a->screen != SCREEN_LIVE)
                        break;
                a->dialog_exec = kill_target(a);
                if (a->dialog_exec != 0)
                        a->dialog = DIALOG_KILL;
                else
                        snprintf(a->status, sizeof(a->status), "no running execution to kill");
                break;
        case 'K':
                if (a->screen == SCREEN_LIVE && kill_target(a) != 0)
                        a->dialog = DIALOG_KILL_ALL;
                break;
        case 'i':
                if (a->busy)
                        snprintf(a->status, sizeof(a->status),
                                 "wait for the turn to end (Esc interrupts it)");
                else if (a->screen == SCREEN_LIVE)
                        a->typing = true;
                break;
        case 'n':
                if (!a->busy && a->screen == SCREEN_LIVE && session_executions(a->s) > 0) {
                        /* its last exec.remove is due in moments; closing now
                         * would mean running the loop from inside it */
                        snprintf(a->status, sizeof(a->status),
                                 "the last execution is still being removed: n again in a moment");
                } else if (!a->busy && a->screen == SCREEN_LIVE) {
                        char err[512];
                        close_session(a);
                        if (open_session(a, err, sizeof(err)) < 0) {
                                snprintf(a->status, sizeof(a->status), "%.300s", err);
                                quit(a);
                        }
                }
                break;
        case 't':
                next_theme(a);
                break;
        }
}

static void on_input(uv_poll_t *p, int status, int events)
{
        struct app *a = p->data;
        wint_t ch;
        int kind;

        while ((kind = get_wch(&ch)) != ERR) {
                key(a, kind, ch);
                if (a->done)
                        return;
        }
        app_mark_dirty(a);
}

static void on_signal(uv_signal_t *h, int signum)
{
        struct app *a = h->data;
        struct winsize ws;

        if (signum == SIGWINCH) {
                if (ioctl(1, TIOCGWINSZ, &ws) == 0)
                        resizeterm(ws.ws_row, ws.ws_col);
                clearok(curscr, TRUE);
                app_mark_dirty(a);
                return;
        }
        quit(a); /* SIGINT, SIGTERM, SIGHUP: wind down and restore */
}

/* ---- entry ---- */

/* The bundled themes: beside the binary, or up to two levels above it (a
 * build kept in build/asan/ of a checkout), else the installed ones. */
void app_find_themes_dir(struct app *a)
{
        char exe[PATH_MAX - 32], probe[PATH_MAX];
        ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
        char *slash;
        int up;

        snprintf(a->themes_dir, sizeof(a->themes_dir), "/usr/share/proctor/themes");
        if (n <= 0)
                return;
        exe[n] = '\0';
        for (up = 0; up < 3 && (slash = strrchr(exe, '/')) != NULL; up++) {
                *slash = '\0';
                snprintf(probe, sizeof(probe), "%s/themes/default.theme", exe);
                if (access(probe, R_OK) == 0) {
                        snprintf(a->themes_dir, sizeof(a->themes_dir), "%s/themes", exe);
                        return;
                }
        }
}

static int init_app(struct app *a, int argc, char **argv, char *err, size_t errlen)
{
        char terr[300];
        size_t i;

        if (config_resolve(argc, argv, &a->o, err, errlen) < 0)
                return -EINVAL;
        if (a->o.argi < argc) {
                snprintf(err, errlen, "unexpected argument '%s' (try 'proctor --help')",
                         argv[a->o.argi]);
                return -EINVAL;
        }
        a->mode = a->o.mode;
        app_find_themes_dir(a);
        a->nthemes = theme_list(a->themes_dir, a->themes, THEME_LIST_MAX);
        if (theme_open(a->o.theme, a->themes_dir, &a->theme, terr, sizeof(terr)) < 0)
                snprintf(a->status, sizeof(a->status), "%s", terr);
        for (i = 0; i < a->nthemes; i++)
                if (a->o.theme != NULL && strcmp(a->themes[i], a->o.theme) == 0)
                        a->theme_i = i;
        return open_session(a, err, errlen);
}

void app_start_terminal(struct app *a)
{
        static const int sigs[4] = {SIGINT, SIGTERM, SIGHUP, SIGWINCH};
        int i;

        signal(SIGSEGV, on_crash);
        signal(SIGABRT, on_crash);
        signal(SIGBUS, on_crash);
        signal(SIGFPE, on_crash);
        initscr();
        cbreak();
        noecho();
        nonl();
        keypad(stdscr, TRUE);
        nodelay(stdscr, TRUE);
        curs_set(0);
        set_escdelay(25);
        mousemask(BUTTON1_CLICKED | BUTTON1_DOUBLE_CLICKED | BUTTON4_PRESSED | BUTTON5_PRESSED,
                  NULL);
        /* a UTF-8 byte in another locale is drawn as "~V", spilling over */
        a->ascii = !glyphs_codeset_is_utf8(nl_langinfo(CODESET));
        /* start_color only when colours are wanted: it alone makes ncurses
         * paint every cell white on black, NO_COLOR or not */
        a->depth = color_detect(getenv("NO_COLOR"), getenv("COLORTERM"), a->o.no_color,
                                has_colors() ? tigetnum("colors") : -1);
        if (a->depth != COLOR_MONO)
                start_color();
        /* ncurses draws 24-bit colour only with a direct-colour terminfo */
        if (a->depth == COLOR_TRUE && COLORS < 0x1000000)
                a->depth = COLORS >= 256 ? COLOR_256 : COLORS >= 16 ? COLOR_16 : COLOR_8;
        draw_setup_colors(a);
        uv_poll_init(a->loop, &a->in, 0);
        a->in.data = a;
        uv_poll_start(&a->in, UV_READABLE, on_input);
        uv_timer_init(a->loop, &a->frame);
        uv_timer_init(a->loop, &a->tick);
        a->frame.data = a->tick.data = a;
        for (i = 0; i < 4; i++) {
                uv_signal_init(a->loop, &a->sigs[i]);
                a->sigs[i].data = a;
                uv_signal_start(&a->sigs[i], on_signal, sigs[i]);
        }
}

static void print_help(void)
{
        printf("usage: proctor [options]\n\n"
               "Opens the supervisor on its setup screen: pick where tools run (m), type a\n"
               "prompt, Enter. The options below are the screen's starting values.\n\n"
               "options:\n%s%s"
               "  --model SPEC                demo, script:FILE.jsonl or openai:MODEL\n"
               "  --base-url URL              OpenAI-compatible endpoint\n"
               "  --max-iterations N          turns before the session stops\n"
               "  --trace FILE                where the session's events go\n"
               "  --theme NAME|PATH           colours (t cycles them at run time)\n"
               "  --no-color                  monochrome (also NO_COLOR)\n"
               "  --config FILE               config file\n",
               options_help, options_help_session);
}

int tui_main(int argc, char **argv)
{
        struct app a;
        uv_loop_t loop;
        char err[512];

        memset(&a, 0, sizeof(a));
        setlocale(LC_ALL, "");
        uv_loop_init(&loop);
        a.loop = &loop;
        if (init_app(&a, argc, argv, err, sizeof(err)) < 0 || a.o.help) {
                if (a.o.help)
                        print_help();
                else
                        fprintf(stderr, "proctor: %s\n", err);
                close_session(&a);
                uv_run(&loop, UV_RUN_DEFAULT);
                uv_loop_close(&loop);
                return a.o.help ? 0 : 2;
        }
        if (!isatty(0) || !isatty(1)) {
                fprintf(stderr, "proctor: the supervisor needs a terminal; for scripts use "
                                "'proctor run' (try 'proctor --help')\n");
                close_session(&a);
                uv_run(&loop, UV_RUN_DEFAULT);
                uv_loop_close(&loop);
                return 2;
        }
        app_current = &a;
        app_start_terminal(&a);
        draw_frame(&a);
        uv_run(&loop, UV_RUN_DEFAULT);
        app_close_terminal(&a);
        /* after the screen is back: wind the session down for good */
        close_session(&a);
        uv_run(&loop, UV_RUN_DEFAULT);
        uv_loop_close(&loop);
        app_current = NULL;
        return 0;
}
