/* draw: every frame of the supervisor, from the view model: header, setup
 * screen, panes, details, dialogs, help. Text from tools and the model is
 * sanitized before it is drawn; nothing here changes state but the frame. */
#include "tui/app.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tui/layout.h"
#include "tui/text.h"
#include "tui/tui.h"

static int pair_of(enum theme_role r)
{
        return (int)r + 1;
}

void draw_setup_colors(struct app *a)
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
                 a->s != NULL ? session_workspace(a->s) : ".", exec_ws_mode_name(a->o.ws_mode));
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

enum metric { METRIC_CPU, METRIC_MEM, METRIC_PIDS };

static double sample_value(const struct viewmodel_sample *s, enum metric m)
{
        return m == METRIC_CPU ? s->cpu_pct : m == METRIC_MEM ? (double)s->mem_bytes : s->pids;
}

/* The last `width` samples of one metric as bars, scaled to its limit (or
 * to the highest sample when there is no limit; CPU to 100%). */
static void sparkline(char *out, size_t len, const struct viewmodel_exec *e, int width,
                      enum metric m)
{
        static const char *const bars[] = {"\u2581", "\u2582", "\u2583", "\u2584",
                                           "\u2585", "\u2586", "\u2587", "\u2588"};
        size_t n = viewmodel_exec_nsamples(e), i, o = 0;
        size_t from = width > 0 && n > (size_t)width ? n - (size_t)width : 0;
        double top = m == METRIC_CPU   ? 100.0
                     : m == METRIC_MEM ? (double)e->limits.memory_bytes
                                       : (double)e->limits.pids;

        out[0] = '\0';
        if (width <= 0)
                return;
        if (top <= 0)
                for (i = from; i < n; i++)
                        if (sample_value(viewmodel_exec_sample(e, i), m) > top)
                                top = sample_value(viewmodel_exec_sample(e, i), m);
        for (i = from; i < n && o + 4 < len; i++) {
                double v = sample_value(viewmodel_exec_sample(e, i), m);
                int k = top <= 0 || v <= 0 ? 0 : v >= top ? 7 : (int)(v * 8.0 / top);
                memcpy(out + o, bars[k > 7 ? 7 : k], 3);
                o += 3;
        }
        out[o] = '\0';
}

/* "label value graph" at x, the graph `gw` columns wide; returns the next x. */
static int stat_graph(struct app *a, int y, int x, const char *text, const struct viewmodel_exec *e,
                      int gw, enum metric m, enum theme_role role)
{
        char graph[256];

        put(a, y, x, (int)strlen(text), THEME_TEXT_DIM, text);
        x += (int)strlen(text);
        sparkline(graph, sizeof(graph), e, gw, m);
        put(a, y, x, gw, role, graph);
        return x + gw + 1;
}

static void draw_execs(struct app *a, int y, int x, int h, int w)
{
        size_t n = viewmodel_nexecs(a->vm);
        long top, i;
        char line[512], mem[16], lim[16], age[16], plim[24];

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
                {
                        char cpu[32], memt[48], pidt[48];
                        int gx = x + 3, gw;
                        snprintf(cpu, sizeof(cpu), "cpu %3.0f%% ", e->stats.cpu_pct);
                        snprintf(memt, sizeof(memt), "mem %s/%s ", mem,
                                 e->limits.memory_bytes ? lim : "-");
                        snprintf(pidt, sizeof(pidt), "pids %llu/%s ",
                                 (unsigned long long)e->stats.pids, e->limits.pids ? plim : "-");
                        gw = (w - 6 - (int)(strlen(cpu) + strlen(memt) + strlen(pidt))) / 3;
                        gx = stat_graph(a, row + 1, gx, cpu, e, gw, METRIC_CPU, THEME_GRAPH_CPU);
                        gx =
                            stat_graph(a, row + 1, gx, memt, e, gw, METRIC_MEM, THEME_GRAPH_MEMORY);
                        stat_graph(a, row + 1, gx, pidt, e, gw, METRIC_PIDS, THEME_GRAPH_PIDS);
                }
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

void draw_frame(struct app *a)
{
        static void (*const panes[LAYOUT_PANES])(struct app *, int, int, int,
                                                 int) = {draw_transcript, draw_tools, draw_execs};
        struct layout l;
        int i;

        erase();
        layout_compute(COLS, LINES, (enum layout_pane)a->focus, &l);
        if (l.kind == LAYOUT_TOO_SMALL) {
                put(a, LINES / 2, (COLS > 30 ? (COLS - 30) / 2 : 0), COLS, THEME_WARNING,
                    "terminal too small (80x24 at least)");
                refresh();
                return;
        }
        draw_header(a);
        if (a->screen == SCREEN_SETUP) {
                draw_setup(a);
        } else if (a->detail) {
                draw_detail(a, l.body.y, l.body.x, l.body.h, l.body.w);
        } else {
                if (l.kind == LAYOUT_TABS)
                        put(a, l.tabs.y, l.tabs.x, l.tabs.w, THEME_TEXT_DIM,
                            " [transcript] [tool calls] [executions]   (Tab switches)");
                for (i = 0; i < LAYOUT_PANES; i++)
                        if (l.pane[i].w > 0)
                                panes[i](a, l.pane[i].y, l.pane[i].x, l.pane[i].h, l.pane[i].w);
        }
        draw_status(a);
        if (a->dialog != DIALOG_NONE)
                draw_dialog(a);
        if (a->help)
                draw_help(a);
        refresh();
        a->last_frame_ms = app_now_ms();
}

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
        draw_setup_colors(&a);
        for (i = 0; i < frames; i++) {
                struct timespec t0, t1;
                clock_gettime(CLOCK_MONOTONIC, &t0);
                a.spin++;
                draw_frame(&a);
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
