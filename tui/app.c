/* app: the supervisor's state, input and screens. Input, the session, its
 * executions and the redraw timer all share one libuv loop; drawing is
 * coalesced (at most ~30 frames a second, none when nothing changed). All
 * text from tools and the model goes through text_sanitize before it can
 * reach the terminal. The terminal is restored on every way out. */
#define _XOPEN_SOURCE_EXTENDED 1
#include "tui/tui.h"

#include <errno.h>
#include <limits.h>
#include <locale.h>
#include <ncurses.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <time.h>
#include <unistd.h>

#include "core/config.h"
#include "core/options.h"
#include "core/session.h"
#include "core/trace.h"
#include "core/viewmodel.h"
#include "tui/color.h"
#include "tui/text.h"
#include "tui/theme.h"

enum app_screen { SCREEN_SETUP, SCREEN_LIVE };
enum pane { PANE_TRANSCRIPT, PANE_TOOLS, PANE_EXECS, PANE_COUNT };
enum dialog { DIALOG_NONE, DIALOG_KILL, DIALOG_KILL_ALL, DIALOG_QUIT };

#define FRAME_MS 33

struct app {
        uv_loop_t *loop;
        struct options o;
        struct bus *bus;
        struct viewmodel *vm;
        struct session *s;
        struct trace *trace;
        enum exec_isolation mode;
        enum app_screen screen;
        bool busy, quitting, done;
        const char *last; /* how the last prompt's turns ended, NULL before */
        char prompt[2048];
        size_t plen;
        bool typing;
        enum pane focus;
        long sel[PANE_COUNT];
        long scroll; /* transcript lines up from the bottom */
        bool help, detail;
        long detail_scroll;
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

static struct app *g_app; /* for the crash handler only */

/* ---- terminal ---- */

static void restore_terminal(void)
{
        if (!isendwin())
                endwin();
}

static void on_crash(int sig)
{
        restore_terminal();
        signal(sig, SIG_DFL);
        raise(sig);
}

static uint64_t now_ms(void)
{
        struct timespec ts;

        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

static int pair_of(enum theme_role r)
{
        return (int)r + 1;
}

static void setup_colors(struct app *a)
{
        int r;

        if (a->depth == COLOR_MONO || !has_colors())
                return;
        use_default_colors();
        for (r = 0; r < THEME_ROLE_COUNT; r++) {
                struct color_spec c = color_resolve(&a->theme, (enum theme_role)r, a->depth);
                init_pair((short)pair_of((enum theme_role)r), (short)c.fg, (short)c.bg);
        }
}

static attr_t attrs_of(struct app *a, enum theme_role r)
{
        struct color_spec c = color_resolve(&a->theme, r, a->depth);
        attr_t at = 0;

        if (c.attr & THEME_ATTR_BOLD)
                at |= A_BOLD;
        if (c.attr & THEME_ATTR_UNDERLINE)
                at |= A_UNDERLINE;
        if (c.attr & THEME_ATTR_REVERSE)
                at |= A_REVERSE;
        if (c.attr & THEME_ATTR_DIM)
                at |= A_DIM;
        if (a->depth != COLOR_MONO && has_colors())
                at |= COLOR_PAIR(pair_of(r));
        return at;
}

/* Draws already-safe text fitted to w columns. */
static void put(struct app *a, int y, int x, int w, enum theme_role r, const char *safe)
{
        char buf[1024];

        if (w <= 0 || y < 0 || y >= LINES)
                return;
        if (text_fit(buf, sizeof(buf), safe, w, TEXT_FIT_ELLIPSIS) < 0 && buf[0] == '\0')
                return;
        attrset(attrs_of(a, r));
        mvaddstr(y, x, buf);
        attrset(A_NORMAL);
}

/* Draws untrusted text: escapes and controls become visible, never obeyed. */
static void put_untrusted(struct app *a, int y, int x, int w, enum theme_role r, const char *s,
                          size_t len)
{
        char *safe = text_sanitize(s, len, TEXT_TABS);

        if (safe != NULL)
                put(a, y, x, w, r, safe);
        free(safe);
}

static void fill(struct app *a, int y, int x, int w, enum theme_role r)
{
        attrset(attrs_of(a, r));
        mvhline(y, x, ' ', w);
        attrset(A_NORMAL);
}

static void frame_box(struct app *a, int y, int x, int h, int w, const char *title, bool focused)
{
        enum theme_role r = focused ? THEME_BORDER_FOCUSED : THEME_BORDER;

        if (h < 2 || w < 4)
                return;
        attrset(attrs_of(a, r));
        mvhline(y, x + 1, ACS_HLINE, w - 2);
        mvhline(y + h - 1, x + 1, ACS_HLINE, w - 2);
        mvvline(y + 1, x, ACS_VLINE, h - 2);
        mvvline(y + 1, x + w - 1, ACS_VLINE, h - 2);
        mvaddch(y, x, ACS_ULCORNER);
        mvaddch(y, x + w - 1, ACS_URCORNER);
        mvaddch(y + h - 1, x, ACS_LLCORNER);
        mvaddch(y + h - 1, x + w - 1, ACS_LRCORNER);
        attrset(A_NORMAL);
        put(a, y, x + 2, w - 4, focused ? THEME_TITLE : THEME_BORDER, title);
}

/* ---- small formatting ---- */

static void fmt_bytes(char *buf, size_t len, uint64_t b)
{
        if (b >= (1ull << 30))
                snprintf(buf, len, "%.1fG", (double)b / (double)(1ull << 30));
        else if (b >= (1ull << 20))
                snprintf(buf, len, "%.0fM", (double)b / (double)(1ull << 20));
        else
                snprintf(buf, len, "%lluK", (unsigned long long)(b >> 10));
}

static void fmt_ms(char *buf, size_t len, uint64_t ms)
{
        if (ms >= 60000)
                snprintf(buf, len, "%llum%02llus", (unsigned long long)(ms / 60000),
                         (unsigned long long)(ms / 1000 % 60));
        else if (ms >= 1000)
                snprintf(buf, len, "%.1fs", (double)ms / 1000.0);
        else
                snprintf(buf, len, "%llums", (unsigned long long)ms);
}

static enum theme_role exec_role(enum vm_exec_state st)
{
        static const enum theme_role roles[] = {
            THEME_STATE_CREATING,  THEME_STATE_RUNNING,    THEME_STATE_EXITED,
            THEME_STATE_KILLED,    THEME_STATE_TIMEOUT,    THEME_STATE_OOM,
            THEME_STATE_CPU_LIMIT, THEME_STATE_PIDS_LIMIT, THEME_STATE_SETUP_FAILED,
            THEME_STATE_SIGNALED,
        };
        return (unsigned)st < sizeof(roles) / sizeof(roles[0]) ? roles[st] : THEME_TEXT;
}

static enum theme_role call_role(enum vm_call_state st)
{
        switch (st) {
        case VM_CALL_RUNNING:
                return THEME_TOOL_RUNNING;
        case VM_CALL_OK:
                return THEME_TOOL_OK;
        case VM_CALL_ERROR:
                return THEME_TOOL_ERROR;
        default:
                return THEME_TOOL_INTERRUPTED;
        }
}

/* The mode shown: the session's, or the recorded one in a replay. */
static bool shows_sandbox(struct app *a)
{
        const struct viewmodel_session *vs = a->vm != NULL ? viewmodel_session(a->vm) : NULL;

        if (a->replay)
                return vs != NULL && vs->mode != NULL && strcmp(vs->mode, "sandbox") == 0;
        return a->mode == EXEC_SANDBOX;
}

static const char *spinner(struct app *a)
{
        static const char *const frames[] = {"|", "/", "-", "\\"};

        return frames[a->spin % 4];
}

/* ---- drawing: header, setup, panes ---- */

static void draw_header(struct app *a)
{
        const struct viewmodel_session *vs = a->vm != NULL ? viewmodel_session(a->vm) : NULL;
        struct viewmodel_host h = {0};
        char line[512], el[32];
        bool sandbox = a->replay
                           ? vs != NULL && vs->mode != NULL && strcmp(vs->mode, "sandbox") == 0
                           : a->mode == EXEC_SANDBOX;
        int x;

        fill(a, 0, 0, COLS, THEME_HEADER);
        put(a, 0, 1, 8, THEME_HEADER, "proctor");
        put(a, 0, 10, 22, sandbox ? THEME_BADGE_SANDBOX : THEME_BADGE_LOCAL,
            sandbox ? " SANDBOX (isolated) " : " LOCAL (not isolated) ");
        x = 33;
        if (a->vm != NULL && viewmodel_readonly(a->vm)) {
                put(a, 0, x, 8, THEME_BADGE_REPLAY, " REPLAY ");
                x += 9;
        }
        if (vs != NULL && a->screen == SCREEN_LIVE) {
                fmt_ms(el, sizeof(el), vs->elapsed_ms);
                snprintf(line, sizeof(line), "%s  %s  turn %lld/%lld  tokens %llu/%llu  %s",
                         a->busy           ? "running"
                         : a->last != NULL ? a->last
                                           : "idle",
                         el, (long long)vs->turn, (long long)vs->max_turns,
                         (unsigned long long)vs->tokens_in, (unsigned long long)vs->tokens_out,
                         vs->model != NULL ? vs->model : "");
                put(a, 0, x, COLS - x - 1, THEME_HEADER, line);
        } else {
                put(a, 0, x, COLS - x - 1, THEME_HEADER,
                    a->screen == SCREEN_SETUP ? "setup: pick where tools run" : "");
        }
        if (a->vm != NULL)
                viewmodel_host(a->vm, &h);
        fmt_bytes(el, sizeof(el), h.mem_bytes);
        snprintf(line, sizeof(line), " host: %u running   cpu %.0f%%   mem %s", h.running,
                 h.cpu_pct, el);
        fill(a, 1, 0, COLS, THEME_METER);
        put(a, 1, 0, COLS, THEME_METER, line);
}

static void draw_status(struct app *a)
{
        const char *hint;

        if (a->replay)
                hint = a->paused
                           ? "REPLAY paused: space resume  s step  Tab focus  Enter details  q quit"
                           : "REPLAY: space pause  Tab focus  Enter details  ? help  q quit";
        else if (a->screen == SCREEN_SETUP)
                hint = "m mode  Enter start  ? help  q quit";
        else if (a->busy)
                hint =
                    "Tab focus  Enter details  k kill  K kill all  Esc interrupt  ? help  q quit";
        else
                hint =
                    "i follow-up  n new session  Tab focus  Enter details  t theme  ? help  q quit";
        fill(a, LINES - 2, 0, COLS, THEME_STATUS);
        put(a, LINES - 2, 1, COLS - 2, THEME_STATUS, a->status[0] ? a->status : hint);
        fill(a, LINES - 1, 0, COLS, THEME_TEXT);
        if (a->typing || a->screen == SCREEN_SETUP) {
                char *safe = text_sanitize(a->prompt, a->plen, 0);
                put(a, LINES - 1, 0, 2, THEME_TITLE, "> ");
                if (safe != NULL)
                        put(a, LINES - 1, 2, COLS - 3, THEME_TEXT, safe);
                free(safe);
        }
}

static void draw_setup(struct app *a)
{
        int w = COLS > 100 ? 96 : COLS - 4, x = (COLS - w) / 2, y = 3, half = w / 2 - 1;
        bool sb = a->mode == EXEC_SANDBOX;
        char line[512], mem[16], tmp[16];

        put(a, y, x, w, THEME_TITLE,
            "Where should this session's tools run?  (m flips, click to "
            "choose; fixed once the session starts)");
        y += 2;
        frame_box(a, y, x, 7, half, sb ? "local" : "[x] local", !sb);
        put(a, y + 1, x + 2, half - 4, !sb ? THEME_BADGE_LOCAL : THEME_TEXT_DIM,
            "on this host, not isolated");
        put(a, y + 2, x + 2, half - 4, THEME_TEXT, "fast: file tools are function calls,");
        put(a, y + 3, x + 2, half - 4, THEME_TEXT, "shell and Python are child processes;");
        put(a, y + 4, x + 2, half - 4, THEME_TEXT, "state persists between calls.");
        put(a, y + 5, x + 2, half - 4, THEME_WARNING, "tools can touch your files and network");
        frame_box(a, y, x + half + 2, 7, half, sb ? "[x] sandbox" : "sandbox", sb);
        put(a, y + 1, x + half + 4, half - 4, sb ? THEME_BADGE_SANDBOX : THEME_TEXT_DIM,
            "fresh isolated sandbox per call");
        fmt_bytes(mem, sizeof(mem), a->o.limits.memory_bytes);
        fmt_bytes(tmp, sizeof(tmp), a->o.limits.tmpfs_bytes);
        snprintf(line, sizeof(line), "limits: %s memory, %.0fs CPU, %u pids,", mem,
                 (double)a->o.limits.cpu_ms / 1000.0, a->o.limits.pids);
        put(a, y + 2, x + half + 4, half - 4, THEME_TEXT, line);
        snprintf(line, sizeof(line), "%.0fs wall clock, %s /tmp; no network;",
                 (double)a->o.limits.timeout_ms / 1000.0, tmp);
        put(a, y + 3, x + half + 4, half - 4, THEME_TEXT, line);
        put(a, y + 4, x + half + 4, half - 4, THEME_TEXT, "only the workspace persists.");
        y += 8;
        snprintf(line, sizeof(line), "model      %s",
                 a->s != NULL ? session_model_label(a->s) : "");
        put_untrusted(a, y++, x, w, THEME_TEXT, line, strlen(line));
        snprintf(line, sizeof(line), "workspace  %s (%s)",
                 a->o.workspace != NULL ? a->o.workspace : ".", exec_ws_mode_name(a->o.ws_mode));
        put_untrusted(a, y++, x, w, THEME_TEXT, line, strlen(line));
        y++;
        put(a, y, x, w, THEME_TEXT_DIM, "Type a prompt below and press Enter to start.");
}

static void draw_transcript(struct app *a, int y, int x, int h, int w)
{
        size_t n = viewmodel_ntranscript(a->vm), i;
        char **lines = NULL;
        enum theme_role *roles = NULL;
        size_t nl = 0, cap = 0;
        long first;
        int row;

        frame_box(a, y, x, h, w, "transcript", a->focus == PANE_TRANSCRIPT);
        /* Only the tail that can show is laid out: walk back from the end. */
        for (i = n; i-- > 0 && nl < (size_t)(h * 4 + a->scroll + 64);) {
                const struct viewmodel_entry *e = viewmodel_entry(a->vm, i);
                const char *who = e->kind == VM_ENTRY_USER        ? "you: "
                                  : e->kind == VM_ENTRY_ASSISTANT ? ""
                                                                  : "* ";
                enum theme_role r = e->kind == VM_ENTRY_USER        ? THEME_TITLE
                                    : e->kind == VM_ENTRY_ERROR     ? THEME_ERROR
                                    : e->kind == VM_ENTRY_ASSISTANT ? THEME_TEXT
                                                                    : THEME_WARNING;
                size_t wl = strlen(who) + e->len;
                char *raw = malloc(wl + 1), *safe;
                struct text_span spans[512];
                size_t ns, k;
                if (raw == NULL)
                        break;
                snprintf(raw, wl + 1, "%s%.*s", who, (int)e->len, e->text);
                safe = text_sanitize(raw, strlen(raw), TEXT_MULTILINE | TEXT_TABS);
                free(raw);
                if (safe == NULL)
                        break;
                ns = text_wrap(safe, w - 2, spans, 512);
                if (ns > 512)
                        ns = 512;
                for (k = ns; k-- > 0;) {
                        if (nl == cap) {
                                cap = cap ? cap * 2 : 64;
                                lines = realloc(lines, cap * sizeof(*lines));
                                roles = realloc(roles, cap * sizeof(*roles));
                        }
                        lines[nl] = strndup(safe + spans[k].start, spans[k].len);
                        roles[nl++] = r;
                }
                free(safe);
        }
        /* lines[] holds the newest first */
        first = a->scroll;
        for (row = h - 2; row >= 1 && (size_t)first < nl; row--, first++)
                put(a, y + row, x + 1, w - 2, roles[first], lines[first]);
        for (i = 0; i < nl; i++)
                free(lines[i]);
        free(lines);
        free(roles);
}

static void draw_tools(struct app *a, int y, int x, int h, int w)
{
        size_t n = viewmodel_ncalls(a->vm);
        long top, i;
        char line[512], d[32];

        frame_box(a, y, x, h, w, "tool calls", a->focus == PANE_TOOLS);
        if (a->sel[PANE_TOOLS] < 0 || (size_t)a->sel[PANE_TOOLS] >= n)
                a->sel[PANE_TOOLS] = (long)n - 1;
        top = a->sel[PANE_TOOLS] - (h - 3);
        if (top < 0)
                top = 0;
        for (i = top; i < (long)n && i - top < h - 2; i++) {
                const struct viewmodel_call *c = viewmodel_call(a->vm, (size_t)i);
                bool sel = a->focus == PANE_TOOLS && i == a->sel[PANE_TOOLS];
                const char *mark = c->state == VM_CALL_RUNNING ? spinner(a)
                                   : c->state == VM_CALL_OK    ? "+"
                                                               : "x";
                fmt_ms(d, sizeof(d),
                       c->state == VM_CALL_RUNNING
                           ? viewmodel_session(a->vm)->elapsed_ms - c->start_ms
                           : c->duration_ms);
                if (sel)
                        fill(a, y + 1 + (int)(i - top), x + 1, w - 2, THEME_SELECTION);
                put(a, y + 1 + (int)(i - top), x + 1, 2,
                    sel ? THEME_SELECTION : call_role(c->state), mark);
                snprintf(line, sizeof(line), "%-7s %s", d, viewmodel_call_state_name(c->state));
                put(a, y + 1 + (int)(i - top), x + w - 19, 18,
                    sel ? THEME_SELECTION : call_role(c->state), line);
                put_untrusted(a, y + 1 + (int)(i - top), x + 3, w - 23,
                              sel ? THEME_SELECTION : THEME_TEXT, c->summary, strlen(c->summary));
        }
}

static void sparkline(char *out, size_t len, const struct viewmodel_exec *e, int width)
{
        static const char *const bars[] = {"\u2581", "\u2582", "\u2583", "\u2584",
                                           "\u2585", "\u2586", "\u2587", "\u2588"};
        size_t n = viewmodel_exec_nsamples(e), i, o = 0;
        size_t from = n > (size_t)width ? n - (size_t)width : 0;

        out[0] = '\0';
        for (i = from; i < n && o + 4 < len; i++) {
                float p = viewmodel_exec_sample(e, i)->cpu_pct;
                int k = p <= 0 ? 0 : p >= 100 ? 7 : (int)(p / 12.5f);
                memcpy(out + o, bars[k], 3);
                o += 3;
        }
        out[o] = '\0';
}

static void draw_execs(struct app *a, int y, int x, int h, int w)
{
        size_t n = viewmodel_nexecs(a->vm);
        long top, i;
        char line[512], mem[16], lim[16], age[16], plim[24], graph[256];

        frame_box(a, y, x, h, w, shows_sandbox(a) ? "sandboxes" : "processes",
                  a->focus == PANE_EXECS);
        if (a->sel[PANE_EXECS] < 0 || (size_t)a->sel[PANE_EXECS] >= n)
                a->sel[PANE_EXECS] = (long)n - 1;
        top = a->sel[PANE_EXECS] - (h - 3) / 2;
        if (top < 0)
                top = 0;
        for (i = top; i < (long)n && (i - top) * 2 < h - 3; i++) {
                const struct viewmodel_exec *e = viewmodel_exec(a->vm, (size_t)i);
                int row = y + 1 + (int)(i - top) * 2;
                bool sel = a->focus == PANE_EXECS && i == a->sel[PANE_EXECS];
                uint64_t now = viewmodel_session(a->vm)->elapsed_ms;
                fmt_bytes(mem, sizeof(mem), e->stats.mem_bytes);
                fmt_bytes(lim, sizeof(lim), e->limits.memory_bytes);
                fmt_ms(age, sizeof(age),
                       e->exited_ms ? e->exited_ms - e->created_ms : now - e->created_ms);
                if (sel)
                        fill(a, row, x + 1, w - 2, THEME_SELECTION);
                snprintf(line, sizeof(line), "#%llu %-12s %6s setup %.1fms",
                         (unsigned long long)e->id, viewmodel_exec_state_name(e->state), age,
                         (double)e->setup_us / 1000.0);
                put(a, row, x + 1, w - 2, sel ? THEME_SELECTION : exec_role(e->state), line);
                snprintf(plim, sizeof(plim), "%llu", (unsigned long long)e->limits.pids);
                snprintf(line, sizeof(line), "cpu %3.0f%% mem %s/%s pids %llu/%s ",
                         e->stats.cpu_pct, mem, e->limits.memory_bytes ? lim : "-",
                         (unsigned long long)e->stats.pids, e->limits.pids ? plim : "-");
                put(a, row + 1, x + 3, w - 4, THEME_TEXT_DIM, line);
                sparkline(graph, sizeof(graph), e, w - 4 - (int)strlen(line));
                put(a, row + 1, x + 3 + (int)strlen(line), w - 4 - (int)strlen(line),
                    THEME_GRAPH_CPU, graph);
        }
}

static void draw_detail(struct app *a, int y, int x, int h, int w)
{
        char line[512], d[32];
        char *safe = NULL;
        struct text_span spans[4096];
        size_t ns, k;
        int row = y + 1;

        if (a->focus == PANE_EXECS && a->sel[PANE_EXECS] >= 0 &&
            (size_t)a->sel[PANE_EXECS] < viewmodel_nexecs(a->vm)) {
                const struct viewmodel_exec *e = viewmodel_exec(a->vm, (size_t)a->sel[PANE_EXECS]);
                frame_box(a, y, x, h, w, "execution (Esc closes)", true);
                snprintf(line, sizeof(line), "#%llu  %s  %s  pid %d  call %s",
                         (unsigned long long)e->id, e->sandbox ? "sandbox" : "process",
                         viewmodel_exec_state_name(e->state), e->pid, e->call_id);
                put_untrusted(a, row++, x + 2, w - 4, exec_role(e->state), line, strlen(line));
                snprintf(line, sizeof(line),
                         "setup %.2f ms  teardown %.2f ms  wall %llu ms  cpu %llu ms  peak %llu "
                         "KiB  exit %d signal %d",
                         (double)e->setup_us / 1000.0, (double)e->teardown_us / 1000.0,
                         (unsigned long long)e->wall_ms, (unsigned long long)e->cpu_ms,
                         (unsigned long long)(e->mem_peak_bytes >> 10), e->exit_code, e->signal);
                put(a, row++, x + 2, w - 4, THEME_TEXT, line);
                if (e->error != NULL && e->error[0])
                        put_untrusted(a, row++, x + 2, w - 4, THEME_ERROR, e->error,
                                      strlen(e->error));
                return;
        }
        if (a->sel[PANE_TOOLS] < 0 || (size_t)a->sel[PANE_TOOLS] >= viewmodel_ncalls(a->vm)) {
                frame_box(a, y, x, h, w, "details", true);
                put(a, row, x + 2, w - 4, THEME_TEXT_DIM, "nothing selected");
                return;
        }
        const struct viewmodel_call *c = viewmodel_call(a->vm, (size_t)a->sel[PANE_TOOLS]);
        frame_box(a, y, x, h, w, "tool call (Esc closes, arrows scroll)", true);
        fmt_ms(d, sizeof(d), c->duration_ms);
        snprintf(line, sizeof(line), "%s  %s  %s  exit %d%s", c->id, c->name,
                 viewmodel_call_state_name(c->state), c->exit_code,
                 c->truncated ? "  (capped for the model)" : "");
        put_untrusted(a, row++, x + 2, w - 4, call_role(c->state), line, strlen(line));
        put_untrusted(a, row++, x + 2, w - 4, THEME_TEXT_DIM, c->arguments, strlen(c->arguments));
        row++;
        safe = text_sanitize(c->output != NULL ? c->output : "", c->output_len,
                             TEXT_MULTILINE | TEXT_TABS);
        if (safe == NULL)
                return;
        ns = text_wrap(safe, w - 4, spans, 4096);
        if (ns > 4096)
                ns = 4096;
        if (a->detail_scroll > (long)ns)
                a->detail_scroll = (long)ns;
        for (k = (size_t)a->detail_scroll; k < ns && row < y + h - 1; k++) {
                char piece[1024];
                snprintf(piece, sizeof(piece), "%.*s", (int)spans[k].len, safe + spans[k].start);
                put(a, row++, x + 2, w - 4, THEME_TEXT, piece);
        }
        free(safe);
}

static void draw_help(struct app *a)
{
        static const char *const keys[] = {
            "m            flip the mode (before the session starts)",
            "Enter        start with the prompt / open details",
            "Tab S-Tab    move focus between panes",
            "arrows PgUp PgDn Home End   move and scroll",
            "k            kill the selected (or latest) running execution",
            "K            kill every running execution",
            "Esc          interrupt the current turn / close",
            "i            type a follow-up prompt",
            "n            new session (the mode may change)",
            "t            next theme",
            "Ctrl-L       redraw",
            "q            quit (asks while a session runs)",
            "?            this help",
        };
        int h = (int)(sizeof(keys) / sizeof(keys[0])) + 4, w = 64;
        int y = (LINES - h) / 2, x = (COLS - w) / 2, i;

        for (i = 0; i < h; i++)
                fill(a, y + i, x, w, THEME_HELP);
        frame_box(a, y, x, h, w, "keys (any key closes)", true);
        for (i = 0; i < (int)(sizeof(keys) / sizeof(keys[0])); i++)
                put(a, y + 2 + i, x + 2, w - 4, THEME_HELP, keys[i]);
}

static void draw_dialog(struct app *a)
{
        char line[400];
        int w = 70, h = 5, y = LINES / 2 - 2, x = (COLS - w) / 2, i;

        if (a->dialog == DIALOG_KILL) {
                long k = viewmodel_exec_find(a->vm, a->dialog_exec);
                const struct viewmodel_exec *e = k >= 0 ? viewmodel_exec(a->vm, (size_t)k) : NULL;
                long c = e != NULL && e->call >= 0 ? e->call : -1;
                snprintf(line, sizeof(line), "Kill execution #%llu (%s)?  y kills, n/Esc cancel",
                         (unsigned long long)a->dialog_exec,
                         c >= 0 ? viewmodel_call(a->vm, (size_t)c)->summary : "no call");
        } else if (a->dialog == DIALOG_KILL_ALL) {
                struct viewmodel_host hh;
                viewmodel_host(a->vm, &hh);
                snprintf(line, sizeof(line),
                         "Kill all %u running executions?  y kills, n/Esc cancel", hh.running);
        } else {
                snprintf(line, sizeof(line),
                         "A session is running. Quit and kill everything?  y quits, n/Esc stay");
        }
        for (i = 0; i < h; i++)
                fill(a, y + i, x, w, THEME_DIALOG);
        frame_box(a, y, x, h, w, "confirm", true);
        put_untrusted(a, y + 2, x + 2, w - 4, THEME_DIALOG_DANGER, line, strlen(line));
}

static void draw(struct app *a)
{
        int body = LINES - 4;

        erase();
        if (LINES < 24 || COLS < 80) {
                put(a, LINES / 2, (COLS > 30 ? (COLS - 30) / 2 : 0), COLS, THEME_WARNING,
                    "terminal too small (80x24 at least)");
                refresh();
                return;
        }
        draw_header(a);
        if (a->screen == SCREEN_SETUP) {
                draw_setup(a);
        } else if (a->detail) {
                draw_detail(a, 2, 0, body, COLS);
        } else if (COLS >= 120) {
                int w1 = COLS * 2 / 5, w2 = (COLS - w1) / 2;
                draw_transcript(a, 2, 0, body, w1);
                draw_tools(a, 2, w1, body, w2);
                draw_execs(a, 2, w1 + w2, body, COLS - w1 - w2);
        } else {
                /* narrow: the focused pane is shown alone, as a tab */
                static const char *const tabs = " [transcript] [tool calls] [executions] ";
                put(a, 2, 0, COLS, THEME_TEXT_DIM, tabs);
                if (a->focus == PANE_TRANSCRIPT)
                        draw_transcript(a, 3, 0, body - 1, COLS);
                else if (a->focus == PANE_TOOLS)
                        draw_tools(a, 3, 0, body - 1, COLS);
                else
                        draw_execs(a, 3, 0, body - 1, COLS);
        }
        draw_status(a);
        if (a->dialog != DIALOG_NONE)
                draw_dialog(a);
        if (a->help)
                draw_help(a);
        refresh();
        a->last_frame_ms = now_ms();
}

static void on_frame(uv_timer_t *t)
{
        struct app *a = t->data;

        a->dirty = false;
        if (!a->done)
                draw(a);
}

/* Coalesces redraws: at most one frame every FRAME_MS. */
static void mark_dirty(struct app *a)
{
        uint64_t since = now_ms() - a->last_frame_ms;

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
        mark_dirty(a);
        if (!a->busy)
                uv_timer_stop(t);
}

static void on_event(const json_t *ev, void *ud)
{
        mark_dirty(ud);
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
        so.model = a->o.model;
        so.provider.base_url = a->o.base_url;
        so.provider.retries = a->o.provider_retries;
        so.provider.idle_timeout_ms = (uint32_t)a->o.provider_timeout_ms;
        so.workspace = a->o.workspace;
        so.ws_mode = a->o.ws_mode;
        so.limits = a->o.limits;
        so.max_iterations = a->o.max_iterations;
        rc = session_new(a->loop, a->bus, &so, &a->s, err, errlen);
        if (rc < 0)
                return rc;
        rc = trace_open(a->o.trace, session_id(a->s), &a->trace, err, errlen);
        if (rc < 0)
                return rc;
        bus_subscribe(a->bus, trace_event, a->trace);
        bus_subscribe(a->bus, on_event, a);
        session_on_idle(a->s, on_idle, a);
        a->screen = SCREEN_SETUP;
        a->last = NULL;
        a->sel[PANE_TOOLS] = a->sel[PANE_EXECS] = -1;
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
        mark_dirty(a);
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
        setup_colors(a);
}

static void quit(struct app *a)
{
        a->quitting = true;
        if (a->busy && a->s != NULL) {
                session_kill_all(a->s);
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
                snprintf(a->status, sizeof(a->status), "killed %u executions",
                         session_kill_all(a->s));
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
        if (a->detail) {
                a->detail_scroll += delta;
                if (a->detail_scroll < 0)
                        a->detail_scroll = 0;
        } else if (a->focus == PANE_TRANSCRIPT) {
                a->scroll -= delta;
                if (a->scroll < 0)
                        a->scroll = 0;
        } else {
                long n = (long)(a->focus == PANE_TOOLS ? viewmodel_ncalls(a->vm)
                                                       : viewmodel_nexecs(a->vm));
                a->sel[a->focus] += delta;
                if (a->sel[a->focus] >= n)
                        a->sel[a->focus] = n - 1;
                if (a->sel[a->focus] < 0)
                        a->sel[a->focus] = n > 0 ? 0 : -1;
        }
}

static void key_mouse(struct app *a)
{
        MEVENT m;
        int half = (COLS > 100 ? 96 : COLS - 4) / 2 - 1,
            x0 = (COLS - (COLS > 100 ? 96 : COLS - 4)) / 2;

        if (getmouse(&m) != OK)
                return;
        if (m.bstate & BUTTON4_PRESSED)
                move_sel(a, -3);
        else if (m.bstate & BUTTON5_PRESSED)
                move_sel(a, 3);
        else if (a->screen == SCREEN_SETUP && (m.bstate & BUTTON1_CLICKED) && m.y >= 5 && m.y < 12)
                session_set_mode(a->s, a->mode = m.x < x0 + half + 1 ? EXEC_LOCAL : EXEC_SANDBOX);
        else if (a->screen == SCREEN_LIVE && (m.bstate & BUTTON1_CLICKED) && COLS >= 120)
                a->focus = m.x < COLS * 2 / 5    ? PANE_TRANSCRIPT
                           : m.x < COLS * 7 / 10 ? PANE_TOOLS
                                                 : PANE_EXECS;
}

static void play_next(uv_timer_t *t);

/* Replay keys; true when the key was taken (or refused: read-only). */
static bool key_replay(struct app *a, wint_t ch)
{
        switch (ch) {
        case ' ':
                a->paused = !a->paused;
                if (a->paused)
                        uv_timer_stop(&a->play);
                else
                        uv_timer_start(&a->play, play_next, 0, 0);
                return true;
        case 's':
                if (a->paused && a->next < a->nevents)
                        viewmodel_event(a->events[a->next++], a->vm);
                return true;
        case 'm':
        case 'k':
        case 'K':
        case 'i':
        case 'n':
                snprintf(a->status, sizeof(a->status),
                         "replay is read-only: no mode flip, kill or prompt");
                return true;
        case 27:
                if (!a->detail)
                        return true;
                return false;
        }
        return false;
}

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
        if (a->replay && kind != KEY_CODE_YES && key_replay(a, ch))
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
                if (a->screen == SCREEN_LIVE)
                        a->detail = true;
                break;
        case 27: /* Esc */
                if (a->detail)
                        a->detail = false;
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
                if (!a->busy && a->screen == SCREEN_LIVE) {
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
        mark_dirty(a);
}

static void on_signal(uv_signal_t *h, int signum)
{
        struct app *a = h->data;
        struct winsize ws;

        if (signum == SIGWINCH) {
                if (ioctl(1, TIOCGWINSZ, &ws) == 0)
                        resizeterm(ws.ws_row, ws.ws_col);
                clearok(curscr, TRUE);
                mark_dirty(a);
                return;
        }
        quit(a); /* SIGINT, SIGTERM, SIGHUP: wind down and restore */
}

/* ---- entry ---- */

static void find_themes_dir(struct app *a)
{
        char exe[PATH_MAX - 16];
        ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
        char *slash;

        a->themes_dir[0] = '\0';
        if (n <= 0)
                return;
        exe[n] = '\0';
        slash = strrchr(exe, '/');
        if (slash != NULL)
                *slash = '\0';
        snprintf(a->themes_dir, sizeof(a->themes_dir), "%s/themes", exe);
        if (access(a->themes_dir, R_OK) != 0)
                snprintf(a->themes_dir, sizeof(a->themes_dir), "/usr/share/proctor/themes");
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
        find_themes_dir(a);
        a->nthemes = theme_list(a->themes_dir, a->themes, THEME_LIST_MAX);
        if (theme_open(a->o.theme, a->themes_dir, &a->theme, terr, sizeof(terr)) < 0)
                snprintf(a->status, sizeof(a->status), "%s", terr);
        for (i = 0; i < a->nthemes; i++)
                if (a->o.theme != NULL && strcmp(a->themes[i], a->o.theme) == 0)
                        a->theme_i = i;
        return open_session(a, err, errlen);
}

static void start_terminal(struct app *a)
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
        mousemask(BUTTON1_CLICKED | BUTTON4_PRESSED | BUTTON5_PRESSED, NULL);
        if (has_colors())
                start_color(); /* COLORS is known only after this */
        a->depth = color_detect(getenv("NO_COLOR"), getenv("COLORTERM"), a->o.no_color,
                                has_colors() ? COLORS : -1);
        /* ncurses draws 24-bit colour only with a direct-colour terminfo */
        if (a->depth == COLOR_TRUE && COLORS < 0x1000000)
                a->depth = COLORS >= 256 ? COLOR_256 : COLORS >= 16 ? COLOR_16 : COLOR_8;
        setup_colors(a);
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
               "options:\n%s"
               "  --model SPEC                demo, script:FILE.jsonl or openai:MODEL\n"
               "  --base-url URL              OpenAI-compatible endpoint\n"
               "  --max-iterations N          turns before the session stops\n"
               "  --trace FILE                where the session's events go\n"
               "  --theme NAME|PATH           colours (t cycles them at run time)\n"
               "  --no-color                  monochrome (also NO_COLOR)\n"
               "  --config FILE               config file\n",
               options_help);
}

int tui_main(int argc, char **argv)
{
        struct app a;
        uv_loop_t loop;
        char err[512];
        int i;

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
        g_app = &a;
        start_terminal(&a);
        draw(&a);
        uv_run(&loop, UV_RUN_DEFAULT);
        restore_terminal();
        /* after the screen is back: wind the session down for good */
        close_session(&a);
        uv_close((uv_handle_t *)&a.in, NULL);
        uv_close((uv_handle_t *)&a.frame, NULL);
        uv_close((uv_handle_t *)&a.tick, NULL);
        for (i = 0; i < 4; i++)
                uv_close((uv_handle_t *)&a.sigs[i], NULL);
        uv_run(&loop, UV_RUN_DEFAULT);
        uv_loop_close(&loop);
        g_app = NULL;
        return 0;
}

/* ---- replay ---- */

static uint64_t event_ms(const json_t *ev)
{
        json_int_t t = json_integer_value(json_object_get(ev, "t_ms"));

        return t > 0 ? (uint64_t)t : 0;
}

/* Feeds the events due now, then sleeps until the next one (scaled by the
 * speed; long idle stretches are shortened to two seconds). */
static void play_next(uv_timer_t *t)
{
        struct app *a = t->data;
        uint64_t now, gap;
        size_t batch = 0;

        if (a->paused || a->next >= a->nevents)
                return;
        now = event_ms(a->events[a->next]);
        while (a->next < a->nevents &&
               (a->speed == 0 ? batch < 2000 : event_ms(a->events[a->next]) <= now)) {
                viewmodel_event(a->events[a->next++], a->vm);
                batch++;
        }
        mark_dirty(a);
        if (a->next >= a->nevents) {
                snprintf(a->status, sizeof(a->status), "replay finished (%zu events): q quits",
                         a->nevents);
                return;
        }
        gap =
            a->speed == 0 ? 0 : (uint64_t)((double)(event_ms(a->events[a->next]) - now) / a->speed);
        uv_timer_start(&a->play, play_next, gap > 2000 ? 2000 : gap, 0);
}

static int load_trace(struct app *a, const char *path, char *err, size_t errlen)
{
        FILE *f = fopen(path, "r");
        char *line = NULL;
        size_t cap = 0, bad = 0;
        ssize_t n;

        if (f == NULL) {
                snprintf(err, errlen, "%s: %s", path, strerror(errno));
                return -errno;
        }
        while ((n = getline(&line, &cap, f)) > 0) {
                json_t *ev = json_loadb(line, (size_t)n, 0, NULL);
                json_t **grown;
                if (!json_is_object(ev) || !json_is_string(json_object_get(ev, "type"))) {
                        json_decref(ev);
                        bad++;
                        continue;
                }
                grown = realloc(a->events, (a->nevents + 1) * sizeof(*grown));
                if (grown == NULL) {
                        json_decref(ev);
                        break;
                }
                a->events = grown;
                a->events[a->nevents++] = ev;
        }
        free(line);
        fclose(f);
        if (a->nevents == 0) {
                snprintf(err, errlen, "%s: no events in it", path);
                return -EINVAL;
        }
        if (bad > 0)
                snprintf(a->status, sizeof(a->status),
                         "%zu lines of the trace were not valid events and are skipped "
                         "(proctor replay --summary says which)",
                         bad);
        return 0;
}

int tui_replay_main(int argc, char **argv)
{
        struct app a;
        uv_loop_t loop;
        char err[512];
        size_t i;
        int rc = 0;

        memset(&a, 0, sizeof(a));
        setlocale(LC_ALL, "");
        if (config_resolve(argc, argv, &a.o, err, sizeof(err)) < 0 || a.o.argi != argc - 1) {
                fprintf(stderr,
                        "proctor replay: %s\nusage: proctor replay [--speed N|max] TRACE"
                        "\n       proctor replay --summary TRACE\n",
                        a.o.argi != argc - 1 && err[0] == '\0' ? "give one trace file" : err);
                return 2;
        }
        a.speed = 1.0;
        if (a.o.speed != NULL) {
                char *end;
                a.speed = strcmp(a.o.speed, "max") == 0 ? 0 : strtod(a.o.speed, &end);
                if (strcmp(a.o.speed, "max") != 0 && (*end != '\0' || !(a.speed > 0))) {
                        fprintf(stderr,
                                "proctor replay: --speed: expected a positive number "
                                "or max, got '%s'\n",
                                a.o.speed);
                        return 2;
                }
        }
        if (load_trace(&a, argv[argc - 1], err, sizeof(err)) < 0) {
                fprintf(stderr, "proctor replay: %s\n", err);
                free(a.events);
                return 2;
        }
        if (!isatty(0) || !isatty(1)) {
                fprintf(stderr, "proctor replay: needs a terminal (try --summary)\n");
                rc = 2;
                goto out;
        }
        uv_loop_init(&loop);
        a.loop = &loop;
        a.replay = true;
        a.screen = SCREEN_LIVE;
        a.vm = viewmodel_new();
        viewmodel_set_readonly(a.vm, true);
        a.sel[PANE_TOOLS] = a.sel[PANE_EXECS] = -1;
        find_themes_dir(&a);
        a.nthemes = theme_list(a.themes_dir, a.themes, THEME_LIST_MAX);
        theme_open(a.o.theme, a.themes_dir, &a.theme, err, sizeof(err));
        g_app = &a;
        start_terminal(&a);
        uv_timer_init(&loop, &a.play);
        a.play.data = &a;
        uv_timer_start(&a.play, play_next, 0, 0);
        draw(&a);
        uv_run(&loop, UV_RUN_DEFAULT);
        restore_terminal();
        uv_close((uv_handle_t *)&a.play, NULL);
        uv_close((uv_handle_t *)&a.in, NULL);
        uv_close((uv_handle_t *)&a.frame, NULL);
        uv_close((uv_handle_t *)&a.tick, NULL);
        for (i = 0; i < 4; i++)
                uv_close((uv_handle_t *)&a.sigs[i], NULL);
        uv_run(&loop, UV_RUN_DEFAULT);
        uv_loop_close(&loop);
        viewmodel_free(a.vm);
        g_app = NULL;
out:
        for (i = 0; i < a.nevents; i++)
                json_decref(a.events[i]);
        free(a.events);
        return rc;
}

/* ---- benchmark hook ---- */

int tui_bench_frames(struct viewmodel *vm, int cols, int rows, int frames, uint64_t *ns)
{
        FILE *out = fopen("/dev/null", "w"), *in = fopen("/dev/null", "r");
        struct app a;
        SCREEN *scr;
        int i;

        if (out == NULL || in == NULL) {
                if (out != NULL)
                        fclose(out);
                if (in != NULL)
                        fclose(in);
                return -errno;
        }
        scr = newterm("xterm-256color", out, in);
        if (scr == NULL) {
                fclose(out);
                fclose(in);
                return -ENOTTY;
        }
        set_term(scr);
        resize_term(rows, cols);
        memset(&a, 0, sizeof(a));
        a.vm = vm;
        a.screen = SCREEN_LIVE;
        a.mode = EXEC_SANDBOX;
        a.busy = true;
        a.focus = PANE_TOOLS;
        a.sel[PANE_TOOLS] = a.sel[PANE_EXECS] = -1;
        theme_default(&a.theme);
        if (has_colors())
                start_color();
        a.depth = COLOR_256;
        setup_colors(&a);
        for (i = 0; i < frames; i++) {
                struct timespec t0, t1;
                clock_gettime(CLOCK_MONOTONIC, &t0);
                a.spin++;
                draw(&a);
                clock_gettime(CLOCK_MONOTONIC, &t1);
                ns[i] = (uint64_t)(t1.tv_sec - t0.tv_sec) * 1000000000u +
                        (uint64_t)(t1.tv_nsec - t0.tv_nsec);
        }
        endwin();
        delscreen(scr);
        fclose(out);
        fclose(in);
        return 0;
}
