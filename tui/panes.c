/* panes: the setup screen and the three panes of the live view: the
 * transcript, the tool calls and the executions with their live graphs.
 * Each pane records which item sits on which screen row, for the mouse. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/tools/mcp.h"
#include "exec/image/image.h"
#include "tui/draw.h"
#include "tui/text.h"

/* The limits line: each limit editable once Tab has given it the keys,
 * the one the arrows change highlighted. */
static void draw_setup_limits(struct app *a, int y, int x, int w)
{
        static const char *const names[LIMIT_COUNT] = {"memory", "cpu", "timeout", "pids",
                                                       "workspace"};
        bool focused = a->setup_focus == SETUP_LIMITS;
        char v[32], item[64];
        int i, at = x + 11;

        draw_put(a, y, x, w, focused ? THEME_TITLE : THEME_TEXT, "limits");
        for (i = 0; i < LIMIT_COUNT && at < x + w; i++) {
                bool sel = focused && (int)a->limit_field == i;
                app_limit_text(a, (enum setup_limit)i, v, sizeof(v));
                snprintf(item, sizeof(item), sel ? "%s [%s]" : "%s %s", names[i], v);
                draw_put(a, y, at, x + w - at, sel ? THEME_SELECTION : THEME_TEXT, item);
                at += (int)strlen(item) + 2;
        }
        if (!focused && at + 12 < x + w)
                draw_put(a, y, at, x + w - at, THEME_TEXT_DIM, "(Tab to edit)");
}

/* The image sandboxes are rooted in (--image), if any: what it is, and that
 * its User and WorkingDir are shown, not applied. */
static void draw_setup_image(struct app *a, int *y, int x, int w)
{
        const struct image *img = a->s != NULL ? session_image(a->s) : NULL;
        const char *d = img != NULL ? image_digest(img) : "";
        char line[512];

        /* In local mode an image or a runtime means nothing: say so. */
        if (a->mode != EXEC_SANDBOX && (a->o.image != NULL || a->o.runtime != NULL)) {
                snprintf(line, sizeof(line),
                         "%s %s: not used in local mode (tools run on this host)",
                         a->o.runtime != NULL ? "runtime   " : "image     ",
                         a->o.runtime != NULL ? a->o.runtime : a->o.image);
                draw_put_untrusted(a, (*y)++, x, w, THEME_TEXT_DIM, line, strlen(line));
                return;
        }
        if (img == NULL && a->o.runtime != NULL) {
                snprintf(line, sizeof(line), "runtime    %s: one container per call of image %s",
                         a->o.runtime, a->o.image != NULL ? a->o.image : "");
                draw_put_untrusted(a, (*y)++, x, w,
                                   a->mode == EXEC_SANDBOX ? THEME_TEXT : THEME_TEXT_DIM, line,
                                   strlen(line));
        }
        if (img == NULL)
                return;
        if (strncmp(d, "sha256:", 7) == 0)
                d += 7;
        snprintf(line, sizeof(line), "image      %s (%.12s)%s%s%s%s%s", image_ref(img), d,
                 image_user(img)[0] || image_workdir(img)[0] ? "; not applied:" : "",
                 image_user(img)[0] ? " User " : "", image_user(img),
                 image_workdir(img)[0] ? " WorkingDir " : "", image_workdir(img));
        draw_put_untrusted(a, (*y)++, x, w, a->mode == EXEC_SANDBOX ? THEME_TEXT : THEME_TEXT_DIM,
                           line, strlen(line));
}

/* "approval   host: what it asks before, here (F3 changes it)". */
static void draw_setup_policy(struct app *a, int y, int x, int w)
{
        bool sb = a->mode == EXEC_SANDBOX;
        const char *what = a->policy == APPROVAL_ALWAYS  ? "asks before every call"
                           : a->policy == APPROVAL_NEVER ? "never asks (rules still apply)"
                           : sb ? "asks before MCP servers that reach this host"
                                : "asks before shell, Python and file writes here";
        char line[256];

        snprintf(line, sizeof(line), "approval   %s (%s): %s  [F3]",
                 approval_policy_name(a->policy), a->policy_from, what);
        draw_put(a, y, x, w, a->policy == APPROVAL_NEVER && !sb ? THEME_WARNING : THEME_TEXT, line);
}

/* One piece of a line, at *col, while it fits within x + w. */
static void put_piece(struct app *a, int y, int *col, int end, enum theme_role r, const char *safe)
{
        int n = (int)strlen(safe);

        if (*col < end)
                draw_put(a, y, *col, end - *col, r, safe);
        *col += n;
}

/* "mcp        NAME (N tools), NAME2 (starting, network)": each server's
 * tool count as discovered for the setup screen, a failure as a warning
 * and a network the sandbox shares with the host in the danger colour.
 * Names are letters, digits, '_' and '-'; states printable ASCII. */
static bool draw_setup_mcp(struct app *a, int y, int x, int w)
{
        struct mcp_brief b[16];
        int n = session_mcp_briefs(a->s, b, 16), i, col = x, end = x + w;
        char more[32];

        if (n <= 0)
                return false;
        put_piece(a, y, &col, end, THEME_TEXT, "mcp        ");
        for (i = 0; i < n && i < 16; i++) {
                bool paren = b[i].state[0] != '\0' || b[i].network;
                put_piece(a, y, &col, end, THEME_TEXT, i > 0 ? ", " : "");
                put_piece(a, y, &col, end, THEME_TEXT, b[i].name);
                put_piece(a, y, &col, end, THEME_TEXT, paren ? " (" : "");
                put_piece(a, y, &col, end,
                          b[i].failed                           ? THEME_WARNING
                          : strcmp(b[i].state, "starting") == 0 ? THEME_TEXT_DIM
                                                                : THEME_TEXT,
                          b[i].state);
                put_piece(a, y, &col, end, THEME_TEXT,
                          b[i].state[0] != '\0' && b[i].network ? ", " : "");
                put_piece(a, y, &col, end, THEME_ERROR, b[i].network ? "network" : "");
                put_piece(a, y, &col, end, THEME_TEXT, paren ? ")" : "");
        }
        snprintf(more, sizeof(more), ", %d more", n - 16);
        put_piece(a, y, &col, end, THEME_TEXT, n > 16 ? more : "");
        return true;
}

/* Untrusted text over at most `max` lines of width w, broken at spaces;
 * returns the line after it. */
static int draw_setup_wrapped(struct app *a, int y, int x, int w, enum theme_role r, const char *s,
                              int max)
{
        size_t len = strlen(s);

        for (int n = 0; len > 0 && n < max && w > 0; n++) {
                size_t cut = len;
                if (cut > (size_t)w) {
                        cut = (size_t)w;
                        while (cut > 0 && s[cut] != ' ')
                                cut--;
                        if (cut == 0)
                                cut = (size_t)w;
                }
                draw_put_untrusted(a, y++, x, w, r, s, cut);
                while (cut < len && s[cut] == ' ')
                        cut++;
                s += cut;
                len -= cut;
        }
        return y;
}

/* Under the mcp line, each failed server's whole reason (three lines at
 * most, four servers at most), and in sandbox mode, when the reason reads
 * as a network failure of a server without network, the likely fix. */
static int draw_setup_mcp_failures(struct app *a, int y, int x, int w)
{
        struct mcp_brief b[16];
        int n = session_mcp_briefs(a->s, b, 16), shown = 0;
        char line[1024];

        for (int i = 0; i < n && i < 16 && shown < 4; i++) {
                if (!b[i].failed)
                        continue;
                snprintf(line, sizeof(line), "  %.40s: %.800s%s", b[i].name, b[i].why,
                         a->mode == EXEC_SANDBOX && b[i].net_hint
                             ? " -- it has no network in its sandbox: \"network\": true in its "
                               "entry gives it the host's"
                             : "");
                y = draw_setup_wrapped(a, y, x + 11, w - 11, THEME_WARNING, line, 3);
                shown++;
        }
        return y;
}

void draw_setup(struct app *a)
{
        struct layout_setup ls;
        bool sb = a->mode == EXEC_SANDBOX;
        const char *problem = a->s != NULL ? session_workspace_problem(a->s) : NULL;
        char line[512], mem[16], tmp[16], disk[16];
        int x, y, w, iw;

        layout_setup_compute(COLS, &ls);
        x = ls.x;
        w = ls.w;
        iw = ls.local.w - 4;
        draw_put(a, 3, x, w, THEME_TITLE,
                 "Where should this session's tools run?  (F2 flips, or Tab and "
                 "arrows, or a click; fixed once it starts)");
        y = ls.local.y;
        draw_box(a, &ls.local, sb ? "local" : "[x] local", !sb);
        x = ls.local.x + 2;
        draw_put(a, y + 1, x, iw, !sb ? THEME_BADGE_LOCAL : THEME_TEXT_DIM,
                 "on this host, not isolated");
        draw_put(a, y + 2, x, iw, THEME_TEXT, "fast: file tools are function calls,");
        draw_put(a, y + 3, x, iw, THEME_TEXT, "shell and Python are child processes;");
        draw_put(a, y + 4, x, iw, THEME_TEXT, "state persists between calls.");
        draw_put(a, y + 5, x, iw, THEME_WARNING, "tools can touch your files and network");
        draw_box(a, &ls.sandbox, sb ? "[x] sandbox" : "sandbox", sb);
        x = ls.sandbox.x + 2;
        draw_put(a, y + 1, x, iw, sb ? THEME_BADGE_SANDBOX : THEME_TEXT_DIM,
                 "fresh isolated sandbox per call");
        fmt_bytes(mem, sizeof(mem), a->o.limits.memory_bytes);
        fmt_bytes(tmp, sizeof(tmp), a->o.limits.tmpfs_bytes);
        snprintf(line, sizeof(line), "limits: %s memory, %.0fs CPU, %u pids,", mem,
                 (double)a->o.limits.cpu_ms / 1000.0, a->o.limits.pids);
        draw_put(a, y + 2, x, iw, THEME_TEXT, line);
        fmt_bytes(disk, sizeof(disk), a->o.limits.disk_bytes);
        snprintf(line, sizeof(line), "%.0fs wall, %s /tmp, %s disk; no network;",
                 (double)a->o.limits.timeout_ms / 1000.0, tmp, disk);
        draw_put(a, y + 3, x, iw, THEME_TEXT, line);
        draw_put(a, y + 4, x, iw, THEME_TEXT, "only the workspace persists.");
        /* The header badge says it too; `proctor doctor` says which. */
        if (problem != NULL)
                draw_put(a, y + 5, x, iw, THEME_ERROR, "the workspace cannot be used: see below");
        else if ((a->cg_limits & EXEC_CG_ALL) != EXEC_CG_ALL)
                draw_put(a, y + 5, x, iw, THEME_WARNING, "no cgroup here: limits per process only");
        x = ls.x;
        y += ls.local.h + 1;
        snprintf(line, sizeof(line), "model      %s",
                 a->s != NULL ? session_model_label(a->s) : "");
        draw_put_untrusted(a, y++, x, w, THEME_TEXT, line, strlen(line));
        snprintf(line, sizeof(line), "workspace  %s (%s)",
                 a->s != NULL ? session_workspace(a->s) : ".", exec_ws_mode_name(a->o.ws_mode));
        draw_put_untrusted(a, y++, x, w, THEME_TEXT, line, strlen(line));
        if (problem != NULL)
                y = draw_setup_wrapped(a, y, x, w, sb ? THEME_ERROR : THEME_TEXT_DIM, problem, 3);
        /* A config file changed behind the operator's back must show. */
        snprintf(line, sizeof(line), "mode from  %s",
                 a->mode == a->o.mode ? a->o.mode_from : "the setup screen (F2)");
        draw_put_untrusted(a, y++, x, w, THEME_TEXT, line, strlen(line));
        draw_setup_policy(a, y++, x, w);
        if (a->s != NULL) {
                unsigned par;
                uint64_t budget;
                session_bounds(a->s, &par, &budget);
                fmt_bytes(mem, sizeof(mem), budget);
                snprintf(line, sizeof(line),
                         "bounds     %u executions at once (the rest queued)%s%s%s", par,
                         sb ? ", " : "", sb ? mem : "", sb ? " memory across sandboxes" : "");
                draw_put(a, y++, x, w, THEME_TEXT, line);
        }
        if (a->s != NULL && draw_setup_mcp(a, y, x, w))
                y++;
        if (a->s != NULL)
                y = draw_setup_mcp_failures(a, y, x, w);
        draw_setup_limits(a, y++, x, w);
        draw_setup_image(a, &y, x, w);
        resume_draw(a, &y, x, w);
        y++;
        draw_put(a, y, x, w, THEME_TEXT_DIM, "Type a prompt below and press Enter to start.");
}

/* One transcript entry as drawn: its prefix and text sanitized and wrapped
 * at a width, kept until the entry changes (a streaming message) or the
 * width does, so a frame lays out only what changed. */
struct wrapped {
        uint64_t gen;
        int width;
        char wait[40]; /* a retry's countdown, drawn after its error */
        char *safe;
        struct text_span *spans;
        size_t n;
};

void draw_forget(struct app *a)
{
        size_t i;

        for (i = 0; i < a->nwrapped; i++) {
                free(a->wrapped[i].safe);
                free(a->wrapped[i].spans);
        }
        free(a->wrapped);
        a->wrapped = NULL;
        a->nwrapped = 0;
        a->wrapped_vm = NULL;
}

/* The newest error's retry counts down while the session waits for it.
 * The view model has event times only, which stand still during the
 * wait: the countdown runs from when the entry was first drawn. */
static void retry_countdown(struct app *a, size_t i, const struct viewmodel_entry *e, char *out,
                            size_t len)
{
        static struct {
                size_t i;
                uint64_t t_ms, since_ms;
        } seen = {SIZE_MAX, 0, 0};
        uint64_t now = app_now_ms(), left;

        out[0] = '\0';
        if (e->kind != VM_ENTRY_ERROR || e->retry_in_ms < 0 ||
            i + 1 != viewmodel_ntranscript(a->vm) || viewmodel_session(a->vm)->state != VM_RUNNING)
                return;
        if (seen.i != i || seen.t_ms != e->t_ms) {
                seen.i = i;
                seen.t_ms = e->t_ms;
                seen.since_ms = now;
        }
        left = now - seen.since_ms < (uint64_t)e->retry_in_ms
                   ? (uint64_t)e->retry_in_ms - (now - seen.since_ms)
                   : 0;
        if (left > 0)
                snprintf(out, len, " - retrying in %llu s",
                         (unsigned long long)(left + 999) / 1000);
        else
                snprintf(out, len, " - retrying now");
}

#define TOOL_TAIL_LINES 6          /* output lines an expanded call shows */
#define TOOL_TAIL_SCAN  (64 << 10) /* bytes of output searched for them */

/* A call inline in the transcript: one line ("[+] bash: ls  ok 12ms"), or
 * expanded (e) with the last lines of its output under it. Malloc'd. */
static char *tool_text(struct app *a, const struct viewmodel_entry *e, size_t *len)
{
        const struct viewmodel_call *c = viewmodel_call(a->vm, (size_t)e->call);
        size_t from = c->output_len, lines = 0, scan = 0, n;
        char head[VM_SUMMARY_MAX + 64], took[16], *out;

        fmt_ms(took, sizeof(took), c->duration_ms);
        snprintf(head, sizeof(head), "%s %s  %s%s%s", a->expand_tools ? "[-]" : "[+]", c->summary,
                 viewmodel_call_label(c), c->state == VM_CALL_RUNNING ? "" : " ",
                 c->state == VM_CALL_RUNNING ? "" : took);
        for (n = 0; head[n] != '\0'; n++) /* a summary is one line here */
                if ((unsigned char)head[n] < 32)
                        head[n] = ' ';
        if (!a->expand_tools || c->output_len == 0) {
                *len = strlen(head);
                return strdup(head);
        }
        /* the start of the last TOOL_TAIL_LINES lines (a final newline ends
         * the last one, it opens none) */
        if (from > 0 && c->output[from - 1] == '\n')
                from--;
        while (from > 0 && scan++ < TOOL_TAIL_SCAN) {
                if (c->output[from - 1] == '\n' && ++lines == TOOL_TAIL_LINES)
                        break;
                from--;
        }
        n = strlen(head) + 1 + (c->output_len - from) * 2 + 64;
        out = malloc(n);
        if (out == NULL)
                return NULL;
        *len = (size_t)snprintf(out, n, "%s\n%s", head,
                                from > 0 ? "    ... (earlier output: Enter on the call)\n" : "");
        /* each output line indented under its call */
        for (; from < c->output_len && *len + 6 < n; from++) {
                if (*len == 0 || out[*len - 1] == '\n') {
                        memcpy(out + *len, "    ", 4);
                        *len += 4;
                }
                out[(*len)++] = c->output[from];
        }
        out[*len] = '\0';
        return out;
}

static const struct wrapped *wrap_entry(struct app *a, size_t i, int width)
{
        const struct viewmodel_entry *e = viewmodel_entry(a->vm, i);
        bool tool =
            e->kind == VM_ENTRY_TOOL && e->call >= 0 && (size_t)e->call < viewmodel_ncalls(a->vm);
        /* a call's entry changes with the call, and with e */
        uint64_t gen =
            tool ? viewmodel_call(a->vm, (size_t)e->call)->gen * 2 + a->expand_tools : e->gen;
        const char *who = e->kind == VM_ENTRY_USER        ? "you: "
                          : e->kind == VM_ENTRY_ASSISTANT ? (e->refusal ? "refused: " : "")
                          : tool                          ? ""
                                                          : "* ";
        char *text = NULL;
        size_t tlen = 0;
        struct text_span none[1];
        struct wrapped *w;
        char *raw, wait[40];
        size_t n;

        if (a->wrapped_vm != a->vm)
                draw_forget(a);
        a->wrapped_vm = a->vm;
        if (i >= a->nwrapped) {
                size_t cap = viewmodel_ntranscript(a->vm) + 16;
                struct wrapped *grown = realloc(a->wrapped, cap * sizeof(*grown));
                if (grown == NULL)
                        return NULL;
                memset(grown + a->nwrapped, 0, (cap - a->nwrapped) * sizeof(*grown));
                a->wrapped = grown;
                a->nwrapped = cap;
        }
        w = &a->wrapped[i];
        retry_countdown(a, i, e, wait, sizeof(wait));
        if (w->safe != NULL && w->gen == gen && w->width == width && strcmp(w->wait, wait) == 0)
                return w;
        free(w->safe);
        free(w->spans);
        memset(w, 0, sizeof(*w));
        if (tool && (text = tool_text(a, e, &tlen)) == NULL)
                return NULL;
        if (!tool) {
                text = e->text;
                tlen = e->len;
        }
        raw = malloc(strlen(who) + tlen + strlen(wait) + 1);
        if (raw != NULL) {
                memcpy(raw, who, strlen(who));
                memcpy(raw + strlen(who), text, tlen);
                memcpy(raw + strlen(who) + tlen, wait, strlen(wait));
        }
        if (tool)
                free(text);
        if (raw == NULL)
                return NULL;
        w->safe = safetext_sanitize(raw, strlen(who) + tlen + strlen(wait),
                                    SAFETEXT_MULTILINE | SAFETEXT_TABS);
        free(raw);
        if (w->safe == NULL)
                return NULL;
        n = text_wrap(w->safe, width, none, 0);
        w->spans = malloc((n ? n : 1) * sizeof(*w->spans));
        if (w->spans == NULL) {
                free(w->safe);
                w->safe = NULL;
                return NULL;
        }
        w->n = text_wrap(w->safe, width, w->spans, n);
        w->gen = gen;
        w->width = width;
        snprintf(w->wait, sizeof(w->wait), "%s", wait);
        return w;
}

static enum theme_role entry_role(struct app *a, const struct viewmodel_entry *e)
{
        enum vm_entry_kind k = e->kind;

        if (k == VM_ENTRY_TOOL && e->call >= 0 && (size_t)e->call < viewmodel_ncalls(a->vm))
                return viewmodel_call(a->vm, (size_t)e->call)->state == VM_CALL_OK
                           ? THEME_TEXT_DIM
                           : draw_call_role(viewmodel_call(a->vm, (size_t)e->call)->state);
        return k == VM_ENTRY_USER        ? THEME_TITLE
               : k == VM_ENTRY_ERROR     ? THEME_ERROR
               : k == VM_ENTRY_ASSISTANT ? THEME_TEXT
                                         : THEME_WARNING;
}

/* The newest entries at the bottom; `scroll` rows up from the end. */
void draw_transcript(struct app *a, const struct layout_rect *r)
{
        size_t n = viewmodel_ntranscript(a->vm), i = n;
        long rows = r->h - 2, skip, total = 0;
        int y = r->y + r->h - 2, width = r->w - 2;
        char line[4096];

        draw_box(a, r, "transcript", a->focus == PANE_TRANSCRIPT);
        if (rows <= 0 || width <= 0)
                return;
        /* how far up the view can go: only as far as there is text */
        while (i-- > 0 && total < a->scroll + rows) {
                const struct wrapped *w = wrap_entry(a, i, width);
                total += w != NULL ? (long)w->n : 0;
        }
        if (a->scroll > total - rows)
                a->scroll = total - rows > 0 ? total - rows : 0;
        skip = a->scroll;
        for (i = n; i-- > 0 && y > r->y;) {
                const struct wrapped *w = wrap_entry(a, i, width);
                enum theme_role role = entry_role(a, viewmodel_entry(a->vm, i));
                size_t k;
                if (w == NULL)
                        continue;
                for (k = w->n; k-- > 0 && y > r->y;) {
                        if (skip > 0) {
                                skip--;
                                continue;
                        }
                        snprintf(line, sizeof(line), "%.*s", (int)w->spans[k].len,
                                 w->safe + w->spans[k].start);
                        draw_put(a, y--, r->x + 1, width, role, line);
                }
        }
}

/* Builds the pane's rows (filter, sort), keeps the selection on a shown
 * item (the newest while following), and the first row drawn such that
 * the selection shows, for items `rows` rows high in `avail` rows. */
static void place(struct app *a, enum pane p, int avail, int rows)
{
        struct list_view *lv = &a->lists[p];
        long fit = avail / rows > 0 ? avail / rows : 1, n, srow;

        app_list_sync(a, p);
        n = (long)lv->n;
        srow = listview_row(lv, a->sel[p]);
        if (srow < 0) { /* hidden by the filter, or gone: the first row */
                a->sel[p] = n > 0 ? lv->rows[0] : -1;
                srow = n > 0 ? 0 : -1;
        }
        if (a->top[p] > srow)
                a->top[p] = srow;
        if (a->top[p] < srow - fit + 1)
                a->top[p] = srow - fit + 1;
        /* no empty rows at the end while there is more above (after a resize) */
        if (a->top[p] > n - fit)
                a->top[p] = n - fit;
        if (a->top[p] < 0)
                a->top[p] = 0;
}

/* A list pane's title: its name, the selection's place among the rows
 * shown ("[3/12]", "of 340" when a filter hides some), sort and filter. */
static void list_title(struct app *a, enum pane p, const char *name, char *out, size_t len)
{
        const struct list_view *lv = &a->lists[p];
        long row = listview_row(lv, a->sel[p]), all = app_pane_items(a, p);
        size_t o;

        o = (size_t)snprintf(out, len, "%s [%ld/%zu", name, row + 1, lv->n);
        if ((long)lv->n != all && o < len)
                o += (size_t)snprintf(out + o, len - o, " of %ld", all);
        if (o < len)
                o += (size_t)snprintf(out + o, len - o, "]");
        if (lv->sort != LIST_SORT_ARRIVAL && o < len)
                o += (size_t)snprintf(out + o, len - o, " sort %s", listview_sort_name(lv->sort));
        if ((lv->filter[0] != '\0' || a->filtering == (int)p) && o < len)
                snprintf(out + o, len - o, " /%s%s", lv->filter, a->filtering == (int)p ? "_" : "");
}

static void mark_rows(struct app *a, enum pane p, int y, int h, long item)
{
        for (; h > 0; y++, h--)
                if (y >= 0 && y < HIT_ROWS)
                        a->hit[p][y] = item;
}

/* "ok", "error", or how its execution ended when not by itself
 * ("cpu_limit", "killed", "timeout"...). */
static const char *call_outcome(struct app *a, const struct viewmodel_call *c)
{
        long k;

        if (c->state != VM_CALL_RUNNING && c->nexecs > 0) {
                k = viewmodel_exec_find(a->vm, c->exec_ids[c->nexecs - 1]);
                if (k >= 0) {
                        const struct viewmodel_exec *e = viewmodel_exec(a->vm, (size_t)k);
                        switch (e->state) {
                        case VM_EXEC_CREATING:
                        case VM_EXEC_RUNNING:
                        case VM_EXEC_PAUSED:
                        case VM_EXEC_EXITED:
                        case VM_EXEC_SIGNALED:
                                break;
                        default: /* a limit, a kill, a setup failure */
                                return viewmodel_exec_state_name(e->state);
                        }
                }
        }
        return viewmodel_call_label(c);
}

void draw_tools(struct app *a, const struct layout_rect *r)
{
        const struct list_view *lv = &a->lists[PANE_TOOLS];
        long n, row, i;
        int y = r->y + 1, x = r->x, w = r->w;
        char line[512], d[32], title[200];
        size_t k, queued = 0;

        for (k = 0; k < viewmodel_nrunning_calls(a->vm); k++)
                queued += viewmodel_call_queued(viewmodel_running_call(a->vm, k));
        place(a, PANE_TOOLS, r->h - 2, 1);
        n = (long)lv->n;
        if (queued > 0)
                snprintf(line, sizeof(line), "tool calls (%zu queued)", queued);
        list_title(a, PANE_TOOLS, queued > 0 ? line : "tool calls", title, sizeof(title));
        draw_box(a, r, title, a->focus == PANE_TOOLS);
        for (row = a->top[PANE_TOOLS]; row < n && y < r->y + r->h - 1; row++, y++) {
                const struct viewmodel_call *c = viewmodel_call(a->vm, (size_t)(i = lv->rows[row]));
                bool sel = a->focus == PANE_TOOLS && i == a->sel[PANE_TOOLS];
                bool q = viewmodel_call_queued(c);
                enum theme_role role = sel                         ? THEME_SELECTION
                                       : viewmodel_call_waiting(c) ? THEME_WARNING
                                       : q                         ? THEME_TEXT_DIM
                                                                   : draw_call_role(c->state);
                bool asks = viewmodel_call_waiting(c);
                const char *mark = asks                          ? "?"
                                   : q                           ? "."
                                   : c->state == VM_CALL_RUNNING ? draw_spinner(a)
                                   : c->state == VM_CALL_OK      ? "+"
                                                                 : "x";
                fmt_ms(d, sizeof(d),
                       c->state == VM_CALL_RUNNING
                           ? viewmodel_session(a->vm)->elapsed_ms - c->start_ms
                           : c->duration_ms);
                if (sel)
                        draw_fill(a, y, x + 1, w - 2, THEME_SELECTION);
                draw_put(a, y, x + 1, 2, role, mark);
                snprintf(line, sizeof(line), "%-7s %s", d, call_outcome(a, c));
                draw_put(a, y, x + w - 19, 18, role, line);
                draw_put_untrusted(a, y, x + 3, w - 23, sel ? THEME_SELECTION : THEME_TEXT,
                                   c->summary, strlen(c->summary));
                mark_rows(a, PANE_TOOLS, y, 1, i);
        }
}

/* Graphs per row: one per metric in a narrow pane, all three in a wide one. */
static int metrics_per_row(int w)
{
        return w - 4 >= 96 ? 3 : w - 4 >= 60 ? 2 : 1;
}

int draw_exec_rows(int w)
{
        int per = metrics_per_row(w);

        return 1 + (METRIC_COUNT + per - 1) / per;
}

/* "#3 running 1.2s setup 1.1ms", how it ended once it has, and the image
 * its root comes from (untrusted text: drawn by draw_put_untrusted). */
static void exec_title(struct app *a, char *line, size_t len, const struct viewmodel_exec *e)
{
        uint64_t now = viewmodel_session(a->vm)->elapsed_ms;
        char age[16], end[48] = "";
        /* the image's last path part, as the header's badge names it */
        const char *img = strrchr(e->image, '/');

        fmt_ms(age, sizeof(age), e->exited_ms ? e->exited_ms - e->created_ms : now - e->created_ms);
        if (e->state == VM_EXEC_EXITED)
                snprintf(end, sizeof(end), "  exit %d", e->exit_code);
        else if (e->signal > 0)
                snprintf(end, sizeof(end), "  signal %d", e->signal);
        /* a container the engine is still removing */
        if (!e->removed && strcmp(e->runtime_state, "removing") == 0) {
                size_t n = strlen(end);
                snprintf(end + n, sizeof(end) - n, "  removing");
        }
        snprintf(line, len, "#%llu %-12s %6s  setup %.1fms%s%s%s%s%s%.24s",
                 (unsigned long long)e->id, viewmodel_exec_state_name(e->state), age,
                 (double)e->setup_us / 1000.0, e->warm ? " warm" : "", end,
                 e->label[0] != '\0' ? "  " : "", e->label, e->image[0] != '\0' ? "  image " : "",
                 img != NULL ? img + 1 : e->image);
}

void draw_execs(struct app *a, const struct layout_rect *r)
{
        const struct list_view *lv = &a->lists[PANE_EXECS];
        long n, row, i;
        int y = r->y + 1, bottom = r->y + r->h - 1, per = metrics_per_row(r->w);
        int cw = (r->w - 4) / per, rows = draw_exec_rows(r->w);
        char line[512], title[200];
        const struct viewmodel_warm *wv;
        int nw = (int)viewmodel_warm(a->vm, &wv), k;

        /* Warm sandboxes waiting for a call: a line each, above the
         * executions, as long as one execution still fits below. */
        if (nw > r->h - 2 - rows)
                nw = r->h - 2 - rows > 0 ? r->h - 2 - rows : 0;
        place(a, PANE_EXECS, r->h - 2 - nw, rows);
        n = (long)lv->n;
        list_title(a, PANE_EXECS, draw_shows_sandbox(a) ? "sandboxes" : "processes", title,
                   sizeof(title));
        draw_box(a, r, title, a->focus == PANE_EXECS);
        for (k = 0; k < nw; k++, y++) {
                char mem[16];
                fmt_bytes(mem, sizeof(mem), wv[k].mem_bytes);
                snprintf(line, sizeof(line), "warm   %-8s  mem %-6s start cpu %llums",
                         wv[k].ready ? "waiting" : "starting", mem,
                         (unsigned long long)wv[k].cpu_ms);
                draw_put(a, y, r->x + 1, r->w - 2, THEME_TEXT_DIM, line);
        }
        for (row = a->top[PANE_EXECS]; row < n && y < bottom; row++) {
                const struct viewmodel_exec *e = viewmodel_exec(a->vm, (size_t)(i = lv->rows[row]));
                bool sel = a->focus == PANE_EXECS && i == a->sel[PANE_EXECS];
                int m;

                if (sel)
                        draw_fill(a, y, r->x + 1, r->w - 2, THEME_SELECTION);
                exec_title(a, line, sizeof(line), e);
                draw_put_untrusted(a, y, r->x + 1, r->w - 2,
                                   sel ? THEME_SELECTION : draw_exec_role(e->state), line,
                                   strlen(line));
                for (m = 0; m < METRIC_COUNT; m++) {
                        int gy = y + 1 + m / per, gx = r->x + 3 + (m % per) * cw;
                        if (gy < bottom)
                                draw_metric(a, gy, gx, cw - 1, 13, e, (enum metric)m);
                }
                mark_rows(a, PANE_EXECS, y, rows < bottom - y ? rows : bottom - y, i);
                y += rows;
        }
}
