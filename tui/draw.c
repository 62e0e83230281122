/* draw: the frame of the supervisor, from the view model: the primitives
 * every part uses, the header, the status lines, the dialogs and the help
 * overlay (the setup screen and the panes are in panes.c, the detail view
 * in detail.c). Text from tools and the model is sanitized before it is
 * drawn; nothing here changes state but the frame. */
#include "tui/draw.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/session/ctl.h"
#include "exec/image/image.h"
#include "tui/prepare.h"
#include "tui/text.h"
#include "tui/tui.h"

static int pair_of(enum theme_role r)
{
        return (int)r + 1;
}

void draw_setup_colors(struct app *a)
{
        int r;

        if (a->depth == COLOR_MONO || !has_colors()) {
                bkgdset(' ');
                return;
        }
        /* -1 is then the terminal's own colour, for roles the theme leaves
         * at "default" */
        use_default_colors();
        for (r = 0; r < THEME_ROLE_COUNT; r++) {
                struct color_spec c = color_resolve(&a->theme, (enum theme_role)r, a->depth);
                /* extended: truecolor values do not fit a short */
                init_extended_pair(pair_of((enum theme_role)r), c.fg, c.bg);
        }
        /* blank cells too take the theme's background, not the terminal's:
         * else a light theme is patchy on a dark terminal and vice versa */
        bkgdset(' ' | COLOR_PAIR(pair_of(THEME_BACKGROUND)));
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

void draw_put(struct app *a, int y, int x, int w, enum theme_role r, const char *safe)
{
        char buf[4096]; /* a full row of 4-byte characters on a wide terminal */

        if (w <= 0 || y < 0 || y >= LINES)
                return;
        if (text_fit(buf, sizeof(buf), safe, w,
                     TEXT_FIT_ELLIPSIS | (a->ascii ? TEXT_FIT_ASCII : 0)) < 0 &&
            buf[0] == '\0')
                return;
        attrset(attrs_of(a, r));
        mvaddstr(y, x, buf);
        attrset(A_NORMAL);
}

void draw_put_untrusted(struct app *a, int y, int x, int w, enum theme_role r, const char *s,
                        size_t len)
{
        char *safe = safetext_sanitize(s, len, SAFETEXT_TABS);

        if (safe != NULL)
                draw_put(a, y, x, w, r, safe);
        free(safe);
}

void draw_fill(struct app *a, int y, int x, int w, enum theme_role r)
{
        attrset(attrs_of(a, r));
        mvhline(y, x, ' ', w);
        attrset(A_NORMAL);
}

void draw_box(struct app *a, const struct layout_rect *b, const char *title, bool focused)
{
        enum theme_role r = focused ? THEME_BORDER_FOCUSED : THEME_BORDER;
        int y = b->y, x = b->x, h = b->h, w = b->w;

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
        draw_put(a, y, x + 2, w - 4, focused ? THEME_TITLE : THEME_BORDER, title);
}

void draw_rule(struct app *a, int y, int x, int w, const char *title)
{
        if (w < 4)
                return;
        attrset(attrs_of(a, THEME_BORDER));
        mvhline(y, x, ACS_HLINE, w);
        attrset(A_NORMAL);
        draw_put(a, y, x + 2, w - 4, THEME_TITLE, title);
}

void fmt_bytes(char *buf, size_t len, uint64_t b)
{
        if (b >= (1ull << 30))
                snprintf(buf, len, "%.1fG", (double)b / (double)(1ull << 30));
        else if (b >= (1ull << 20))
                snprintf(buf, len, "%.0fM", (double)b / (double)(1ull << 20));
        else if (b >= 1024)
                snprintf(buf, len, "%lluK", (unsigned long long)(b >> 10));
        else
                snprintf(buf, len, "%lluB", (unsigned long long)b);
}

void fmt_ms(char *buf, size_t len, uint64_t ms)
{
        if (ms >= 60000)
                snprintf(buf, len, "%llum%02llus", (unsigned long long)(ms / 60000),
                         (unsigned long long)(ms / 1000 % 60));
        else if (ms >= 1000)
                snprintf(buf, len, "%.1fs", (double)ms / 1000.0);
        else
                snprintf(buf, len, "%llums", (unsigned long long)ms);
}

enum theme_role draw_exec_role(enum vm_exec_state st)
{
        static const enum theme_role roles[] = {
            [VM_EXEC_CREATING] = THEME_STATE_CREATING,
            [VM_EXEC_RUNNING] = THEME_STATE_RUNNING,
            /* stopped but alive: as a warning, not as an end */
            [VM_EXEC_PAUSED] = THEME_WARNING,
            [VM_EXEC_EXITED] = THEME_STATE_EXITED,
            [VM_EXEC_SIGNALED] = THEME_STATE_SIGNALED,
            [VM_EXEC_TIMEOUT] = THEME_STATE_TIMEOUT,
            [VM_EXEC_OOM] = THEME_STATE_OOM,
            [VM_EXEC_CPU_LIMIT] = THEME_STATE_CPU_LIMIT,
            [VM_EXEC_PIDS_LIMIT] = THEME_STATE_PIDS_LIMIT,
            [VM_EXEC_KILLED] = THEME_STATE_KILLED,
            [VM_EXEC_SETUP_FAILED] = THEME_STATE_SETUP_FAILED,
            /* a limit reached, coloured like the others */
            [VM_EXEC_DISK_LIMIT] = THEME_STATE_PIDS_LIMIT,
        };
        return (unsigned)st < sizeof(roles) / sizeof(roles[0]) ? roles[st] : THEME_TEXT;
}

enum theme_role draw_call_role(enum vm_call_state st)
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

bool draw_shows_sandbox(struct app *a)
{
        const struct viewmodel_session *vs = a->vm != NULL ? viewmodel_session(a->vm) : NULL;

        if (a->replay || a->att != NULL)
                return vs != NULL && vs->mode != NULL && strcmp(vs->mode, "sandbox") == 0;
        return a->mode == EXEC_SANDBOX;
}

const char *draw_spinner(struct app *a)
{
        static const char *const frames[] = {"|", "/", "-", "\\"};

        return frames[a->spin % 4];
}

static double sample_value(const struct viewmodel_sample *s, enum metric m)
{
        return m == METRIC_CPU ? s->cpu_pct : m == METRIC_MEM ? (double)s->mem_bytes : s->pids;
}

double draw_metric_top(const struct viewmodel_exec *e, enum metric m)
{
        double top = m == METRIC_MEM ? (double)e->limits.memory_bytes : (double)e->limits.pids;
        size_t n = viewmodel_exec_nsamples(e), i;

        if (m == METRIC_CPU)
                return 100.0;
        if (top > 0)
                return top;
        top = m == METRIC_MEM ? 64.0 * 1024 * 1024 : 16;
        for (i = 0; i < n; i++)
                while (sample_value(viewmodel_exec_sample(e, i), m) > top)
                        top *= 2;
        return top;
}

void draw_sparkline(char *out, size_t len, const struct viewmodel_exec *e, int width, enum metric m)
{
        static const char *const bars[] = {"\u2581", "\u2582", "\u2583", "\u2584",
                                           "\u2585", "\u2586", "\u2587", "\u2588"};
        size_t n = viewmodel_exec_nsamples(e), cols, j, i, o = 0;
        double top = draw_metric_top(e, m);

        out[0] = '\0';
        if (width <= 0 || n == 0)
                return;
        cols = n < (size_t)width ? n : (size_t)width;
        /* the whole history: a column per bucket, or the highest of the
         * buckets that share one when there are more than columns */
        for (j = 0; j < cols && o + 4 < len; j++) {
                double v = 0;
                for (i = j * n / cols; i < (j + 1) * n / cols; i++) {
                        double x = sample_value(viewmodel_exec_sample(e, i), m);
                        v = x > v ? x : v;
                }
                int k = v <= 0 ? 0 : v >= top ? 7 : (int)(v * 8.0 / top);
                memcpy(out + o, bars[k > 7 ? 7 : k], 3);
                o += 3;
        }
        out[o] = '\0';
}

void draw_metric_label(char *out, size_t len, const struct viewmodel_exec *e, enum metric m)
{
        bool ended = !viewmodel_exec_live(e);
        char v[16], l[16];

        /* live: the last sample; ended: CPU time and peak memory */
        if (m == METRIC_CPU && ended) {
                fmt_ms(v, sizeof(v), e->cpu_ms);
                snprintf(out, len, "cpu %s", v);
        } else if (m == METRIC_CPU) {
                snprintf(out, len, "cpu %3.0f%%", e->stats.cpu_pct);
        } else if (m == METRIC_MEM) {
                fmt_bytes(v, sizeof(v), ended ? e->mem_peak_bytes : e->stats.mem_bytes);
                fmt_bytes(l, sizeof(l), e->limits.memory_bytes);
                snprintf(out, len, "%s %s/%s", ended ? "peak" : "mem", v,
                         e->limits.memory_bytes ? l : "-");
        } else {
                snprintf(l, sizeof(l), "%llu", (unsigned long long)e->limits.pids);
                snprintf(out, len, "pids %llu/%s", (unsigned long long)e->stats.pids,
                         e->limits.pids ? l : "-");
        }
}

void draw_metric(struct app *a, int y, int x, int w, int label_w, const struct viewmodel_exec *e,
                 enum metric m)
{
        static const enum theme_role roles[] = {THEME_GRAPH_CPU, THEME_GRAPH_MEMORY,
                                                THEME_GRAPH_PIDS};
        char label[64], graph[3 * VM_HISTORY + 4];
        int gw;

        draw_metric_label(label, sizeof(label), e, m);
        if (label_w < (int)strlen(label))
                label_w = (int)strlen(label);
        draw_put(a, y, x, w, THEME_TEXT_DIM, label);
        gw = w - label_w - 1;
        if (gw <= 0)
                return;
        draw_sparkline(graph, sizeof(graph), e, gw, m);
        draw_put(a, y, x + label_w + 1, gw, roles[m], graph);
}

static void draw_header(struct app *a)
{
        const struct viewmodel_session *vs = a->vm != NULL ? viewmodel_session(a->vm) : NULL;
        struct viewmodel_host h = {0};
        char line[512], el[32];
        bool sandbox = draw_shows_sandbox(a);
        int x;

        draw_fill(a, 0, 0, COLS, THEME_HEADER);
        draw_put(a, 0, 1, 8, THEME_HEADER, "proctor");
        draw_put(a, 0, 10, 22, sandbox ? THEME_BADGE_SANDBOX : THEME_BADGE_LOCAL,
                 sandbox ? " SANDBOX (isolated) " : " LOCAL (not isolated) ");
        x = 33;
        /* Limits that fell back to rlimits: the badge must not overstate. */
        if (sandbox &&
            (a->screen == SCREEN_SETUP ? (a->cg_limits & EXEC_CG_ALL) != EXEC_CG_ALL
                                       : vs != NULL && vs->limits_per_process[0] != '\0')) {
                draw_put(a, 0, x, 21, THEME_BADGE_LOCAL, " LIMITS PER PROCESS ");
                x += 22;
        }
        if (a->vm != NULL && viewmodel_readonly(a->vm)) {
                draw_put(a, 0, x, 8, THEME_BADGE_REPLAY, " REPLAY ");
                x += 9;
        }
        if (a->att != NULL) {
                attach_describe(a, line, sizeof(line) - 2);
                memmove(line + 1, line, strlen(line) + 1);
                line[0] = ' ';
                strcat(line, " ");
                draw_put_untrusted(a, 0, x, COLS - x - 1, THEME_BADGE_REPLAY, line, strlen(line));
                x += (int)text_width(line) + 1;
        } else if (a->ctl != NULL && ctl_clients(a->ctl, NULL) > 0) {
                unsigned ro, n = ctl_clients(a->ctl, &ro);
                if (ro > 0)
                        snprintf(line, sizeof(line), " %u watching (%u read-only) ", n, ro);
                else
                        snprintf(line, sizeof(line), " %u watching ", n);
                draw_put(a, 0, x, (int)strlen(line), THEME_BADGE_REPLAY, line);
                x += (int)strlen(line) + 1;
        }
        /* sandboxes rooted in an image, not the host: which one */
        if (sandbox && a->s != NULL && session_image(a->s) != NULL) {
                const char *ref = image_ref(session_image(a->s)), *base = strrchr(ref, '/');
                snprintf(line, sizeof(line), " IMAGE %.24s ", base != NULL ? base + 1 : ref);
                draw_put_untrusted(a, 0, x, (int)strlen(line), THEME_BADGE_SANDBOX, line,
                                   strlen(line));
                x += (int)text_width(line) + 1;
        }
        /* sandboxes that are containers of an engine (--runtime): which image */
        if (sandbox && a->o.runtime != NULL) {
                const char *ref = a->o.image != NULL ? a->o.image : "", *base = strrchr(ref, '/');
                char name[16];
                size_t i;
                for (i = 0; i + 1 < sizeof(name) && a->o.runtime[i] != '\0'; i++)
                        name[i] = (char)toupper((unsigned char)a->o.runtime[i]);
                name[i] = '\0';
                snprintf(line, sizeof(line), " %s %.24s ", name, base != NULL ? base + 1 : ref);
                draw_put_untrusted(a, 0, x, (int)strlen(line), THEME_BADGE_SANDBOX, line,
                                   strlen(line));
                x += (int)text_width(line) + 1;
        }
        if (vs != NULL && a->screen == SCREEN_LIVE) {
                fmt_ms(el, sizeof(el), vs->elapsed_ms);
                /* a replay shows the recorded session's state */
                snprintf(line, sizeof(line), "%s  %s  turn %lld/%lld  tokens %llu/%llu  %s",
                         a->replay || a->att != NULL ? viewmodel_session_state_name(vs->state)
                         : a->busy                   ? "running"
                         : a->last != NULL           ? a->last
                                                     : "idle",
                         el, (long long)vs->turn, (long long)vs->max_turns,
                         (unsigned long long)vs->tokens_in, (unsigned long long)vs->tokens_out,
                         vs->model != NULL ? vs->model : "");
                draw_put(a, 0, x, COLS - x - 1, THEME_HEADER, line);
        } else {
                draw_put(a, 0, x, COLS - x - 1, THEME_HEADER,
                         a->screen == SCREEN_SETUP       ? "setup: pick where tools run"
                         : a->screen == SCREEN_PREPARING ? "preparing the image"
                                                         : "");
        }
        /* a trace that stopped takes the meter's row: the operator must not
         * believe a session recorded that is not */
        if (a->trace != NULL && trace_status(a->trace) < 0) {
                draw_fill(a, 1, 0, COLS, THEME_DIALOG_DANGER);
                draw_put(a, 1, 1, COLS - 2, THEME_DIALOG_DANGER, trace_error(a->trace));
                return;
        }
        if (a->vm != NULL)
                viewmodel_host(a->vm, &h);
        fmt_bytes(el, sizeof(el), h.mem_bytes);
        snprintf(line, sizeof(line), " host: %u running   cpu %.0f%%   mem %s", h.running,
                 h.cpu_pct, el);
        if (h.queued > 0)
                snprintf(line + strlen(line), sizeof(line) - strlen(line), "   %u calls queued",
                         h.queued);
        draw_fill(a, 1, 0, COLS, THEME_METER);
        draw_put(a, 1, 0, COLS, THEME_METER, line);
        if (h.approvals > 0) {
                int at = (int)strlen(line) + 3;
                snprintf(line, sizeof(line), " %u awaiting approval%s ", h.approvals,
                         app_sends_nothing(a) || approve_active(a) ? "" : " (A) ");
                draw_put(a, 1, at, COLS - at, THEME_WARNING, line);
        }
}

static void draw_prompt(struct app *a);

static void draw_status(struct app *a)
{
        const char *hint;
        char replay[160];

        if (a->replay) {
                uint64_t end, at = replay_position(a, &end);
                char p[16], e[16];
                fmt_ms(p, sizeof(p), at);
                fmt_ms(e, sizeof(e), end);
                snprintf(replay, sizeof(replay),
                         a->paused ? "REPLAY %s/%s paused: space resume  s step  Left/Right seek  "
                                     "Enter details  q quit"
                                   : "REPLAY %s/%s: space pause  Left/Right seek  +/- speed  "
                                     "Enter details  ? help  q quit",
                         p, e);
                hint = replay;
        } else if (a->att != NULL && app_sends_nothing(a)) {
                hint = "read-only: Tab focus  arrows scroll  Enter details  / search  t theme  "
                       "? help  q quit";
        } else if (a->att != NULL && !a->typing) {
                hint = "k kill  p pause  Esc interrupt  i follow-up  A approve  Tab focus  "
                       "Enter details  ? help  q quit (the session goes on)";
        } else if (a->screen == SCREEN_PREPARING)
                hint = "unpacking the image  Esc, q or Ctrl-C cancel (nothing of it is kept)";
        else if (a->screen == SCREEN_SETUP && a->setup_focus == SETUP_LIMITS)
                hint = "Left/Right pick a limit  Up/Down change it  Tab back to the prompt  "
                       "Esc prompt";
        else if (a->screen == SCREEN_SETUP && a->setup_focus == SETUP_MODE)
                hint = "arrows/space flip the mode  Tab the limits  F3 approval  F1 help  F10 quit";
        else if (a->screen == SCREEN_SETUP)
                hint = "type a prompt, Enter starts  Tab mode, limits  F2 flip mode  F3 approval  "
                       "F1 help  F10 quit";
        else if (a->typing)
                hint = a->busy
                           ? "Enter queues it for when the turn ends  Ctrl-J new line  Esc leave"
                           : "Enter sends  Ctrl-J/Alt-Enter new line  Up/Down history  Esc leave";
        else if (a->busy && a->vm != NULL && viewmodel_next_approval(a->vm, -1) >= 0)
                hint =
                    "A approve the waiting calls  Tab focus  Enter details  Esc interrupt (denies "
                    "them)  ? help  q quit";
        else if (a->busy)
                hint =
                    "Tab focus  Enter details  k kill  K kill all  Esc interrupt  ? help  q quit";
        else
                hint =
                    "i follow-up  n new session  Tab focus  Enter details  t theme  ? help  q quit";
        draw_fill(a, LINES - 2, 0, COLS, THEME_STATUS);
        draw_put(a, LINES - 2, 1, COLS - 2, THEME_STATUS, a->status[0] ? a->status : hint);
        draw_fill(a, LINES - 1, 0, COLS, THEME_TEXT);
        draw_prompt(a);
}

/* The prompt's row: "> " and the text, scrolled to keep the cursor in
 * view, a new line shown as one glyph; the terminal's cursor sits in it
 * while the prompt has the keys. */
static void draw_prompt(struct app *a)
{
        const bool utf8 = !a->ascii;
        bool focused = !app_sends_nothing(a) &&
                       (a->screen == SCREEN_SETUP ? a->setup_focus == SETUP_PROMPT : a->typing);
        char view[1024], tag[32] = "";
        size_t lines, at;
        int col, w = COLS - 3;

        a->cursor_y = -1;
        if (!(a->screen == SCREEN_SETUP || a->typing || a->prompt.len > 0) || app_sends_nothing(a))
                return;
        prompt_lines(&a->prompt, &lines, &at);
        if (lines > 1)
                snprintf(tag, sizeof(tag), " [line %zu/%zu]", at, lines);
        w -= (int)strlen(tag);
        prompt_view(&a->prompt, w, utf8 ? "\u21b5" : "|", view, sizeof(view), &col);
        draw_put(a, LINES - 1, 0, 2, focused ? THEME_TITLE : THEME_TEXT_DIM, "> ");
        draw_put(a, LINES - 1, 2, w, focused ? THEME_TEXT : THEME_TEXT_DIM, view);
        if (tag[0] != '\0')
                draw_put(a, LINES - 1, COLS - 1 - (int)strlen(tag), (int)strlen(tag),
                         THEME_TEXT_DIM, tag);
        if (focused) {
                a->cursor_y = LINES - 1;
                a->cursor_x = 2 + col;
        }
}

static void draw_help(struct app *a)
{
        static const char *const keys[] = {
            "F2 F3        setup: flip the mode / the approval policy (host...)",
            "F4           setup: resume one of this workspace's newest sessions",
            "A            approve waiting calls: y once, a always, n deny, e edit",
            "Enter        start with the prompt / open details",
            "in a prompt  arrows Home/End Ctrl-A/E/U/K/W Alt-b/f, Up/Down history,",
            "             Ctrl-J or Alt-Enter a new line; a paste stays text",
            "Tab S-Tab    focus; arrows PgUp PgDn Home End move (details: scroll)",
            "mouse        click selects, again opens; wheel scrolls; F12 off/on",
            "/ F6 P M T   filter the list; sort it: cycle, CPU, memory, age",
            "o O          select the execution using the most CPU / memory",
            "in details   / search the output, n N next / previous, s save it",
            "k p          kill (y SIGKILL, t SIGTERM first) / pause or resume the",
            "             selected (or latest) running execution",
            "K            kill every running execution, cancel queued calls",
            "Esc          close / clear filter / interrupt (twice while tools run)",
            "i            type a follow-up (queued while a turn runs)",
            "n t e        new session (the mode may change) / next theme /",
            "             tool calls in the transcript with their output, or not",
            "q F10        quit (asks while a session runs)",
            "Ctrl-C       quit (twice within 2 s while tools run)",
            "? F1 Ctrl-L  this help / redraw",
        };
        int h = (int)(sizeof(keys) / sizeof(keys[0])) + 4, w = 72;
        int y = (LINES - h) / 2, x = (COLS - w) / 2, i;

        for (i = 0; i < h; i++)
                draw_fill(a, y + i, x, w, THEME_HELP);
        draw_box(a, &(struct layout_rect){y, x, h, w}, "keys (any key closes)", true);
        for (i = 0; i < (int)(sizeof(keys) / sizeof(keys[0])); i++)
                draw_put(a, y + 2 + i, x + 2, w - 4, THEME_HELP, keys[i]);
}

/* A question over two lines: what would happen, cut to fit when it names a
 * long command, then the keys, which always show whole. */
static void draw_dialog(struct app *a)
{
        char q[400];
        const char *keys = "y kills, n/Esc cancel";
        int w, h = 6, y = LINES / 2 - 3, x, i;

        if (a->dialog == DIALOG_KILL) {
                long k = viewmodel_exec_find(a->vm, a->dialog_exec);
                const struct viewmodel_exec *e = k >= 0 ? viewmodel_exec(a->vm, (size_t)k) : NULL;
                long c = e != NULL && e->call >= 0 ? e->call : -1;
                snprintf(q, sizeof(q), "Kill execution #%llu (%s)?",
                         (unsigned long long)a->dialog_exec,
                         c >= 0 ? viewmodel_call(a->vm, (size_t)c)->summary : "no call");
                keys = "y kills (SIGKILL), t SIGTERM first (SIGKILL 5 s on), n/Esc cancel";
        } else if (a->dialog == DIALOG_KILL_ALL) {
                struct viewmodel_host hh;
                viewmodel_host(a->vm, &hh);
                if (hh.queued > 0)
                        snprintf(q, sizeof(q), "Kill %u executions, cancel %u queued calls?",
                                 hh.running, hh.queued);
                else
                        snprintf(q, sizeof(q), "Kill all %u running executions?", hh.running);
        } else {
                snprintf(q, sizeof(q), "A session is running. Quit and kill everything?");
                keys = "y quits, n/Esc stay";
        }
        /* as wide as the question needs, within the screen */
        w = (int)text_width(q) + 6;
        w = w < 50 ? 50 : w > COLS - 4 ? COLS - 4 : w;
        x = (COLS - w) / 2;
        for (i = 0; i < h; i++)
                draw_fill(a, y + i, x, w, THEME_DIALOG);
        draw_box(a, &(struct layout_rect){y, x, h, w}, "confirm", true);
        draw_put_untrusted(a, y + 2, x + 2, w - 4, THEME_DIALOG_DANGER, q, strlen(q));
        draw_put(a, y + 3, x + 2, w - 4, THEME_DIALOG, keys);
}

/* The tab bar of a narrow terminal, the focused pane's tab highlighted. */
static void draw_tabs(struct app *a, const struct layout_rect *r)
{
        static const char *const names[PANE_COUNT] = {" transcript ", " tool calls ",
                                                      " executions "};
        int i, x = r->x + 1;

        for (i = 0; i < PANE_COUNT; i++) {
                draw_put(a, r->y, x, 12, i == (int)a->focus ? THEME_SELECTION : THEME_TEXT_DIM,
                         names[i]);
                x += 13;
        }
        draw_put(a, r->y, x + 2, r->w - x - 3, THEME_TEXT_DIM, "(Tab switches)");
}

/* The terminal's cursor: in the prompt while it has the keys, else hidden. */
static void draw_cursor(struct app *a)
{
        bool show = a->cursor_y >= 0 && a->dialog == DIALOG_NONE && !a->help;

        /* the approval dialog hides the prompt's cursor, and shows its own
         * while a line is typed (approve_draw set it) */
        if (a->screen == SCREEN_LIVE && a->approve.open && a->approve.stage == APPROVE_CHOOSE)
                show = false;

        if (show)
                move(a->cursor_y, a->cursor_x);
        if (show != a->cursor_shown) {
                curs_set(show ? 1 : 0);
                a->cursor_shown = show;
        }
}

void draw_frame(struct app *a)
{
        static void (*const panes[LAYOUT_PANES])(struct app *, const struct layout_rect *) = {
            draw_transcript, draw_tools, draw_execs};
        struct layout l;
        int i;

        erase();
        memset(a->hit, 0xff, sizeof(a->hit)); /* all -1: no item */
        layout_compute(COLS, LINES, (enum layout_pane)a->focus, &l);
        if (l.kind == LAYOUT_TOO_SMALL) {
                draw_put(a, LINES / 2, (COLS > 30 ? (COLS - 30) / 2 : 0), COLS, THEME_WARNING,
                         "terminal too small (80x24 at least)");
                refresh();
                return;
        }
        draw_header(a);
        if (a->screen == SCREEN_PREPARING) {
                prepare_draw(a);
        } else if (a->screen == SCREEN_SETUP) {
                draw_setup(a);
        } else if (a->detail.open) {
                draw_detail(a, &l.body);
        } else {
                if (l.kind == LAYOUT_TABS)
                        draw_tabs(a, &l.tabs);
                for (i = 0; i < LAYOUT_PANES; i++)
                        if (l.pane[i].w > 0)
                                panes[i](a, &l.pane[i]);
        }
        draw_status(a);
        if (a->screen == SCREEN_LIVE && approve_active(a))
                approve_draw(a);
        if (a->approve.ring) { /* once per batch of requests */
                beep();
                a->approve.ring = false;
        }
        if (a->dialog != DIALOG_NONE)
                draw_dialog(a);
        if (a->help)
                draw_help(a);
        draw_cursor(a);
        refresh();
        a->last_frame_ms = app_now_ms();
}

int tui_bench_frames(struct viewmodel *vm, const struct tui_bench *b, uint64_t *ns)
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
        resize_term(b->rows, b->cols);
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
        draw_setup_colors(&a);
        a.follow[PANE_TOOLS] = a.follow[PANE_EXECS] = true;
        a.sel[PANE_TOOLS] = (long)viewmodel_ncalls(vm) - 1;
        if (b->detail)
                detail_open(&a);
        for (i = 0; i < b->frames; i++) {
                struct timespec t0, t1;
                if (b->before != NULL)
                        b->before(vm, i, b->ud);
                clock_gettime(CLOCK_MONOTONIC, &t0);
                a.spin++;
                draw_frame(&a);
                clock_gettime(CLOCK_MONOTONIC, &t1);
                ns[i] = (uint64_t)(t1.tv_sec - t0.tv_sec) * 1000000000u +
                        (uint64_t)(t1.tv_nsec - t0.tv_nsec);
        }
        detail_close(&a);
        listview_free(&a.lists[PANE_TOOLS]);
        listview_free(&a.lists[PANE_EXECS]);
        draw_forget(&a);
        endwin();
        delscreen(scr);
        fclose(out);
        fclose(in);
        return 0;
}
