/* detail: the detail view of one tool call or one execution, over the whole
 * body: what it was asked, how it ran (timings, exit, limits, the history
 * graphs of an execution) and the call's output, scrollable, following the
 * stream while it runs. The output is kept as sanitized lines and fed only
 * what arrived since the last frame, so a flooding tool costs each frame
 * its new bytes, never the whole megabyte kept. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tui/draw.h"
#include "tui/text.h"

#define DETAIL_LINES     50000 /* output lines kept for scrolling */
#define DETAIL_ARG_ROWS  3     /* rows of a call's arguments */
#define DETAIL_ARG_BYTES 4096  /* of which this much is laid out */
#define DETAIL_EXEC_ROWS 4     /* executions listed under a call */
#define DETAIL_WRAP_MAX  32    /* rows one output line may wrap into */

bool detail_open(struct app *a)
{
        struct detail_view *d = &a->detail;
        enum pane p = a->focus == PANE_EXECS ? PANE_EXECS : PANE_TOOLS;
        long n = app_pane_items(a, p);

        if (a->sel[p] < 0 || a->sel[p] >= n)
                return false;
        d->open = true;
        d->of = p;
        d->item = a->sel[p];
        d->scroll = 0;
        d->follow = true;
        d->match = -1;
        return true;
}

void detail_close(struct app *a)
{
        struct detail_view *d = &a->detail;

        text_lines_free(d->lines);
        memset(d, 0, sizeof(*d));
}

void detail_scroll(struct app *a, long delta)
{
        struct detail_view *d = &a->detail;
        long n = d->lines != NULL ? (long)text_lines_count(d->lines) : 0;

        d->scroll += delta;
        if (d->scroll < 0)
                d->scroll = 0;
        d->follow = delta > 0 && d->scroll + d->shown >= n;
        if (d->follow || d->scroll > n - 1)
                d->scroll = n > 0 ? n - 1 : 0;
}

/* The call's output as lines, brought up to date: the bytes that arrived
 * since the last frame are appended; a different call, a new view model or
 * a gap (more arrived than the model kept) starts over from what is kept. */
static struct text_lines *output_lines(struct app *a, long call)
{
        struct detail_view *d = &a->detail;
        const struct viewmodel_call *c;
        uint64_t delta;

        if (call < 0 || (size_t)call >= viewmodel_ncalls(a->vm))
                return NULL;
        c = viewmodel_call(a->vm, (size_t)call);
        delta = c->output_bytes - d->fed;
        if (d->lines == NULL || d->vm != a->vm || d->call != call || c->output_bytes < d->fed ||
            delta > c->output_len) {
                text_lines_free(d->lines);
                d->lines = text_lines_new(DETAIL_LINES, 0, SAFETEXT_TABS);
                if (d->lines == NULL)
                        return NULL;
                d->vm = a->vm;
                d->call = call;
                d->finished = false;
                /* the model kept only the tail: number lines from the start */
                d->before = c->output_dropped_lines;
                text_lines_append(d->lines, c->output, c->output_len);
        } else if (delta > 0) {
                text_lines_append(d->lines, c->output + c->output_len - delta, (size_t)delta);
        }
        d->fed = c->output_bytes;
        if (c->state != VM_CALL_RUNNING && !d->finished) {
                text_lines_finish(d->lines);
                d->finished = true;
        }
        return d->lines;
}

/* The call whose output the view shows, or -1. */
static long shown_call(const struct app *a)
{
        const struct detail_view *d = &a->detail;

        if (d->of == PANE_EXECS)
                return d->item >= 0 && (size_t)d->item < viewmodel_nexecs(a->vm)
                           ? viewmodel_exec(a->vm, (size_t)d->item)->call
                           : -1;
        return d->item;
}

uint64_t detail_line_no(const struct app *a, long i)
{
        const struct detail_view *d = &a->detail;

        return (d->lines != NULL ? d->before + text_lines_dropped(d->lines) : 0) + (uint64_t)i + 1;
}

bool detail_search(struct app *a, int dir)
{
        struct detail_view *d = &a->detail;
        long n = d->lines != NULL ? (long)text_lines_count(d->lines) : 0, i;

        if (d->search[0] == '\0' || n == 0)
                return false;
        i = d->match >= 0 ? d->match + dir : dir > 0 ? d->scroll : d->scroll + d->shown - 1;
        for (; i >= 0 && i < n; i += dir)
                if (text_contains(text_lines_get(d->lines, (size_t)i), d->search)) {
                        d->match = i;
                        d->scroll = i;
                        d->follow = false;
                        return true;
                }
        /* a first search finds a match above the view too */
        if (d->match < 0 && dir > 0 && d->scroll > 0) {
                d->scroll = 0;
                return detail_search(a, dir);
        }
        return false;
}

static void name_part(char *out, size_t len, const char *id)
{
        size_t o = 0;

        for (; id != NULL && *id != '\0' && o + 1 < len; id++)
                if ((*id >= 'a' && *id <= 'z') || (*id >= 'A' && *id <= 'Z') ||
                    (*id >= '0' && *id <= '9') || *id == '-' || *id == '_')
                        out[o++] = *id;
        out[o] = '\0';
}

void detail_save(struct app *a)
{
        long call = shown_call(a);
        const struct viewmodel_call *c;
        char path[PATH_MAX], size[16], sid[48], cid[48];
        ssize_t w = 0;
        size_t done = 0;
        int fd;

        if (call < 0 || (size_t)call >= viewmodel_ncalls(a->vm)) {
                snprintf(a->status, sizeof(a->status), "no output to save");
                return;
        }
        c = viewmodel_call(a->vm, (size_t)call);
        /* a new file of the operator's alone, never through a link, named
         * from ids that a replayed trace may have made up: only [-_A-Za-z0-9] */
        name_part(sid, sizeof(sid), viewmodel_session(a->vm)->id);
        name_part(cid, sizeof(cid), c->id);
        snprintf(path, sizeof(path), "proctor-output-%s-%s.txt", sid[0] ? sid : "session",
                 cid[0] ? cid : "call");
        fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
        if (fd < 0) {
                snprintf(a->status, sizeof(a->status), "cannot save to %.200s: %s", path,
                         strerror(errno));
                return;
        }
        while (done < c->output_len && (w = write(fd, c->output + done, c->output_len - done)) > 0)
                done += (size_t)w;
        if (close(fd) < 0 || w < 0) {
                snprintf(a->status, sizeof(a->status), "saving %.200s failed: %s", path,
                         strerror(errno));
                return;
        }
        fmt_bytes(size, sizeof(size), done);
        snprintf(a->status, sizeof(a->status), "saved %s of %s's output to %.200s%s", size, c->id,
                 path, c->output_dropped ? " (its start was dropped: the trace has it whole)" : "");
}

/* Draws one output line wrapped, from screen row y, at most `max` rows;
 * returns the rows it takes (drawn or not when `draw` is false). */
static int output_line(struct app *a, const char *line, int y, int x, int w, int max, bool draw,
                       enum theme_role role)
{
        struct text_span spans[DETAIL_WRAP_MAX];
        size_t ns = text_wrap(line, w, spans, DETAIL_WRAP_MAX), k;
        char piece[4096];

        if (ns == 0)
                ns = 1; /* an empty line still takes a row */
        if (ns > DETAIL_WRAP_MAX)
                ns = DETAIL_WRAP_MAX;
        if (!draw)
                return (int)ns;
        for (k = 0; k < ns && (int)k < max; k++) {
                if (line[0] == '\0')
                        break;
                snprintf(piece, sizeof(piece), "%.*s", (int)spans[k].len, line + spans[k].start);
                if (role == THEME_SELECTION)
                        draw_fill(a, y + (int)k, x, w, role);
                draw_put(a, y + (int)k, x, w, role, piece);
        }
        return (int)ns;
}

/* The output section from row y to the box's bottom: a rule that says where
 * the view is, then the lines (the newest at the bottom while following). */
static void draw_output(struct app *a, const struct layout_rect *r, int y, long call)
{
        struct detail_view *d = &a->detail;
        struct text_lines *tl = output_lines(a, call);
        const struct viewmodel_call *c = call >= 0 && (size_t)call < viewmodel_ncalls(a->vm)
                                             ? viewmodel_call(a->vm, (size_t)call)
                                             : NULL;
        int bottom = r->y + r->h - 1, x = r->x + 2, w = r->w - 4, rows = bottom - y - 1, used;
        long n = tl != NULL ? (long)text_lines_count(tl) : 0, first, i;
        char title[256], got[16];
        uint64_t before;

        if (rows < 1)
                return;
        /* which lines fit: back from the end while following, else from scroll */
        if (d->follow || d->scroll > n - 1)
                d->scroll = n - 1;
        if (d->scroll < 0)
                d->scroll = 0;
        first = d->scroll;
        if (d->follow) {
                for (used = 0, i = n - 1; i >= 0; i--) {
                        int h = output_line(a, text_lines_get(tl, (size_t)i), 0, x, w, 0, false,
                                            THEME_TEXT);
                        if (used + h > rows && used > 0)
                                break;
                        used += h;
                        first = i;
                }
                d->scroll = first;
        }
        for (d->shown = 0, i = first, used = y + 1; i < n && used < bottom; i++, d->shown++)
                used += output_line(a, text_lines_get(tl, (size_t)i), used, x, w, bottom - used,
                                    true, i == d->match ? THEME_SELECTION : THEME_TEXT);
        fmt_bytes(got, sizeof(got), c != NULL ? c->output_bytes : 0);
        /* lines counted from the output's start, whatever was let go */
        before = tl != NULL ? d->before + text_lines_dropped(tl) : 0;
        if (c == NULL)
                snprintf(title, sizeof(title), " output: none (no tool call) ");
        else if (n == 0)
                snprintf(title, sizeof(title), " output of %s: %s ", c->id,
                         c->state == VM_CALL_RUNNING ? "nothing yet" : "none");
        else
                snprintf(title, sizeof(title), " output of %s: %s, lines %llu-%llu of %llu%s%s ",
                         c->id, got, (unsigned long long)(before + (uint64_t)first + 1),
                         (unsigned long long)(before + (uint64_t)(first + d->shown)),
                         (unsigned long long)(before + (uint64_t)n),
                         before > 0 ? " (older dropped)" : "",
                         d->follow ? ", following" : ", End follows");
        draw_rule(a, y, r->x + 1, r->w - 2, title);
}

static void draw_call(struct app *a, const struct layout_rect *r, long i)
{
        const struct viewmodel_call *c = viewmodel_call(a->vm, (size_t)i);
        int y = r->y + 1, x = r->x + 2, w = r->w - 4;
        char line[512], took[16], *args;
        struct text_span spans[DETAIL_ARG_ROWS];
        size_t ns, k;

        snprintf(line, sizeof(line), "tool call %s (Esc closes)", c->id);
        draw_box(a, r, line, true);
        fmt_ms(took, sizeof(took),
               c->state == VM_CALL_RUNNING ? viewmodel_session(a->vm)->elapsed_ms - c->start_ms
                                           : c->duration_ms);
        snprintf(line, sizeof(line), "%s  %s  %s %s  turn %lld%s", c->name, viewmodel_call_label(c),
                 viewmodel_call_queued(c)      ? "waiting for"
                 : c->state == VM_CALL_RUNNING ? "running for"
                                               : "took",
                 took, (long long)c->turn, c->truncated ? "  (result capped for the model)" : "");
        draw_put_untrusted(a, y, x, w, draw_call_role(c->state), line, strlen(line));
        if (c->exit_code >= 0) {
                snprintf(line, sizeof(line), "exit %d", c->exit_code);
                draw_put(a, y, x + w - 9, 9, draw_call_role(c->state), line);
        }
        y++;
        /* a few rows show: the head is enough, however big the arguments */
        args =
            safetext_sanitize(c->arguments, strnlen(c->arguments, DETAIL_ARG_BYTES), SAFETEXT_TABS);
        if (args != NULL) {
                ns = text_wrap(args, w - 10, spans, DETAIL_ARG_ROWS);
                draw_put(a, y, x, 10, THEME_TEXT_DIM, "arguments");
                for (k = 0; k < ns && k < DETAIL_ARG_ROWS; k++) {
                        char piece[4096];
                        snprintf(piece, sizeof(piece), "%.*s%s", (int)spans[k].len,
                                 args + spans[k].start,
                                 k + 1 == DETAIL_ARG_ROWS && ns > DETAIL_ARG_ROWS ? " …" : "");
                        draw_put(a, y++, x + 10, w - 10, THEME_TEXT, piece);
                }
                if (ns == 0)
                        y++;
                free(args);
        }
        for (k = 0; k < c->nexecs && k < DETAIL_EXEC_ROWS; k++) {
                long ei = viewmodel_exec_find(a->vm, c->exec_ids[k]);
                const struct viewmodel_exec *e = ei >= 0 ? viewmodel_exec(a->vm, (size_t)ei) : NULL;
                char peak[16], wall[16];
                if (e == NULL)
                        continue;
                fmt_bytes(peak, sizeof(peak), e->mem_peak_bytes);
                fmt_ms(wall, sizeof(wall), e->wall_ms);
                snprintf(line, sizeof(line),
                         "#%llu %s %-12s setup %.1fms  wall %s  cpu %llums  peak %s",
                         (unsigned long long)e->id, e->sandbox ? "sandbox" : "process",
                         viewmodel_exec_state_name(e->state), (double)e->setup_us / 1000.0, wall,
                         (unsigned long long)e->cpu_ms, peak);
                draw_put(a, y, x, 10, THEME_TEXT_DIM, k == 0 ? "ran in" : "");
                draw_put(a, y++, x + 10, w - 10, draw_exec_role(e->state), line);
        }
        draw_output(a, r, y, i);
}

/* What the graphs above span: the time from the first sample to the last,
 * and what a full-height bar stands for. */
static void graph_scale(struct app *a, int y, int x, int w, const struct viewmodel_exec *e)
{
        char line[256], span[16], mem[16];
        double mtop = draw_metric_top(e, METRIC_MEM), ptop = draw_metric_top(e, METRIC_PIDS);

        if (viewmodel_exec_nsamples(e) == 0) {
                draw_put(a, y, x, w, THEME_TEXT_DIM,
                         "graphs   no samples: it ended before the first");
                return;
        }
        fmt_ms(span, sizeof(span), viewmodel_exec_history_ms(e));
        fmt_bytes(mem, sizeof(mem), (uint64_t)mtop);
        snprintf(line, sizeof(line),
                 "graphs   the whole run, %s, oldest left; full height: cpu 100%%, mem %s%s, "
                 "pids %.0f%s",
                 span, mem, e->limits.memory_bytes ? "" : " (no limit)", ptop,
                 e->limits.pids ? "" : " (no limit)");
        draw_put(a, y, x, w, THEME_TEXT_DIM, line);
}

static void draw_exec(struct app *a, const struct layout_rect *r, long i)
{
        const struct viewmodel_exec *e = viewmodel_exec(a->vm, (size_t)i);
        const struct viewmodel_limits *l = &e->limits;
        const struct viewmodel_call *c =
            e->call >= 0 ? viewmodel_call(a->vm, (size_t)e->call) : NULL;
        int y = r->y + 1, x = r->x + 2, w = r->w - 4, m;
        char line[512], b1[16], b2[16], b3[16], b4[16];

        snprintf(line, sizeof(line), "execution #%llu (Esc closes)", (unsigned long long)e->id);
        draw_box(a, r, line, true);
        snprintf(line, sizeof(line), "%s  %s  pid %d  for %s%s%s",
                 e->sandbox ? "sandbox" : "process", viewmodel_exec_state_name(e->state), e->pid,
                 c != NULL             ? c->id
                 : e->label[0] != '\0' ? e->label
                                       : "no call",
                 c != NULL ? ": " : "", c != NULL ? c->summary : "");
        draw_put_untrusted(a, y++, x, w, draw_exec_role(e->state), line, strlen(line));
        fmt_ms(b1, sizeof(b1),
               e->exited_ms ? e->exited_ms - e->created_ms
                            : viewmodel_session(a->vm)->elapsed_ms - e->created_ms);
        snprintf(line, sizeof(line), "age %s  setup %.2f ms  teardown %s", b1,
                 (double)e->setup_us / 1000.0, e->removed ? "" : "-");
        if (e->removed)
                snprintf(line + strlen(line), sizeof(line) - strlen(line), "%.2f ms",
                         (double)e->teardown_us / 1000.0);
        draw_put(a, y++, x, w, THEME_TEXT, line);
        if (e->image[0] != '\0') {
                snprintf(line, sizeof(line), "image    %s (its root filesystem)", e->image);
                draw_put_untrusted(a, y++, x, w, THEME_TEXT, line, strlen(line));
        }
        fmt_bytes(b1, sizeof(b1), l->memory_bytes);
        fmt_bytes(b2, sizeof(b2), l->tmpfs_bytes);
        fmt_bytes(b3, sizeof(b3), l->output_bytes);
        fmt_bytes(b4, sizeof(b4), l->disk_bytes);
        snprintf(line, sizeof(line),
                 "limits   memory %s  cpu %.0fs  pids %llu  wall %.0fs  /tmp %s  output %s  "
                 "disk %s",
                 l->memory_bytes ? b1 : "-", (double)l->cpu_ms / 1000.0,
                 (unsigned long long)l->pids, (double)l->timeout_ms / 1000.0,
                 l->tmpfs_bytes ? b2 : "-", l->output_bytes ? b3 : "-", l->disk_bytes ? b4 : "-");
        draw_put(a, y++, x, w, THEME_TEXT, line);
        if (viewmodel_exec_live(e)) {
                fmt_bytes(b1, sizeof(b1), e->stats.mem_peak_bytes);
                snprintf(line, sizeof(line), "now      cpu time %llums  memory peak %s",
                         (unsigned long long)e->stats.cpu_ms, b1);
                draw_put(a, y++, x, w, THEME_TEXT, line);
        } else {
                fmt_bytes(b1, sizeof(b1), e->mem_peak_bytes);
                fmt_ms(b2, sizeof(b2), e->wall_ms);
                fmt_bytes(b4, sizeof(b4), e->output_bytes);
                snprintf(line, sizeof(line),
                         "ended    %s  exit %d  signal %d  wall %s  cpu %llums  peak %s  output "
                         "%s%s",
                         viewmodel_exec_state_name(e->state), e->exit_code, e->signal, b2,
                         (unsigned long long)e->cpu_ms, b1, b4, e->truncated ? " (truncated)" : "");
                draw_put(a, y++, x, w, draw_exec_role(e->state), line);
        }
        if (e->error[0])
                draw_put_untrusted(a, y++, x, w, THEME_ERROR, e->error, strlen(e->error));
        for (m = 0; m < METRIC_COUNT; m++)
                draw_metric(a, y++, x, w, 13, e, (enum metric)m);
        graph_scale(a, y++, x, w, e);
        draw_output(a, r, y, e->call);
}

void draw_detail(struct app *a, const struct layout_rect *r)
{
        struct detail_view *d = &a->detail;
        long n = app_pane_items(a, d->of);

        if (d->item < 0 || d->item >= n) {
                draw_box(a, r, "details (Esc closes)", true);
                draw_put(a, r->y + 1, r->x + 2, r->w - 4, THEME_TEXT_DIM, "nothing selected");
                return;
        }
        if (d->of == PANE_EXECS)
                draw_exec(a, r, d->item);
        else
                draw_call(a, r, d->item);
}
