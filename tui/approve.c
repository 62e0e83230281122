/* approve: the approval dialog. A call the policy asks about waits until the
 * operator answers here: the whole call (tool, where it runs, its limits,
 * who asked, its arguments, and for a write or an edit the diff against the
 * file as it is now), then y, a (with the rule, editable), n (with a
 * reason) or e (edited arguments). Calls that wait together come one after
 * another. Every string from the model is sanitized before it is drawn, and
 * the file a diff reads is opened beneath the workspace only. */
#include <errno.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "core/view/linediff.h"
#include "tui/draw.h"
#include "tui/text.h"

#define FILE_MAX      (1u << 20) /* bytes of a file read for a diff */
#define BODY_MAX      5000       /* lines of a dialog's body */
#define DIFF_CONTEXT  3          /* unchanged lines around a change */
#define SANDBOX_MOUNT "/workspace/"

/* One line of the body: sanitized, one screen line or more once wrapped. */
struct approve_line {
        enum theme_role role;
        char *safe;
};

static const struct viewmodel_call *shown_call(const struct app *a)
{
        const struct approve_view *v = &a->approve;

        if (a->vm == NULL || v->call < 0 || (size_t)v->call >= viewmodel_ncalls(a->vm))
                return NULL;
        return viewmodel_call(a->vm, (size_t)v->call);
}

static void body_free(struct approve_view *v)
{
        size_t i;

        for (i = 0; i < v->nlines; i++)
                free(v->lines[i].safe);
        free(v->lines);
        v->lines = NULL;
        v->nlines = 0;
}

/* Adds text as lines (split at each "\n"), each prefixed. */
static void body_add(struct approve_view *v, enum theme_role r, const char *prefix, const char *s,
                     size_t len)
{
        const char *end = s + len, *nl;

        do {
                struct approve_line *g;
                char *raw;
                size_t n;
                if (v->nlines >= BODY_MAX)
                        return;
                nl = memchr(s, '\n', (size_t)(end - s));
                n = nl != NULL ? (size_t)(nl - s) : (size_t)(end - s);
                g = realloc(v->lines, (v->nlines + 1) * sizeof(*g));
                if (g == NULL)
                        return;
                v->lines = g;
                if (asprintf(&raw, "%s%.*s", prefix, (int)n, s) < 0)
                        return;
                /* "\r" and the rest of the C0 set show as ^M..., never obeyed */
                g[v->nlines].safe = safetext_sanitize(raw, strlen(raw), SAFETEXT_TABS);
                g[v->nlines].role = r;
                free(raw);
                if (g[v->nlines].safe != NULL)
                        v->nlines++;
                s += n + 1;
        } while (nl != NULL && s < end);
}

static void body_addf(struct approve_view *v, enum theme_role r, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static void body_addf(struct approve_view *v, enum theme_role r, const char *fmt, ...)
{
        char line[1024];
        va_list ap;

        va_start(ap, fmt);
        vsnprintf(line, sizeof(line), fmt, ap);
        va_end(ap);
        body_add(v, r, "", line, strlen(line));
}

/* The arguments one key a line; a string's own lines under its key. */
static void body_args(struct approve_view *v, const json_t *args, const char *raw)
{
        const char *k;
        json_t *val;

        if (!json_is_object(args)) {
                body_add(v, THEME_TEXT, "", raw, strlen(raw));
                return;
        }
        json_object_foreach ((json_t *)args, k, val) {
                if (json_is_string(val) &&
                    memchr(json_string_value(val), '\n', json_string_length(val)) != NULL) {
                        body_addf(v, THEME_TITLE, "%.100s:", k);
                        body_add(v, THEME_TEXT, "  ", json_string_value(val),
                                 json_string_length(val));
                } else if (json_is_string(val)) {
                        char *line;
                        if (asprintf(&line, "%.100s: %s", k, json_string_value(val)) < 0)
                                continue;
                        body_add(v, THEME_TEXT, "", line, strlen(line));
                        free(line);
                } else {
                        char *d = json_dumps(val, JSON_COMPACT | JSON_ENCODE_ANY), *line;
                        if (d != NULL && asprintf(&line, "%.100s: %s", k, d) >= 0) {
                                body_add(v, THEME_TEXT, "", line, strlen(line));
                                free(line);
                        }
                        free(d);
                }
        }
}

/* ---- the file as it is now ---- */

/* The path relative to the workspace, or NULL (with *why) when it does not
 * lie beneath it: a sandbox sees the workspace at /workspace. */
static const char *beneath(const struct app *a, const char *path, const char **why)
{
        const char *ws = a->s != NULL ? session_workspace(a->s) : NULL;
        size_t n = ws != NULL ? strlen(ws) : 0;

        if (a->s == NULL) { /* attached: the files are the session's host's */
                *why = "the workspace is not this view's to read";
                return NULL;
        }
        if (a->mode == EXEC_SANDBOX && strncmp(path, SANDBOX_MOUNT, strlen(SANDBOX_MOUNT)) == 0)
                path += strlen(SANDBOX_MOUNT);
        else if (n > 0 && strncmp(path, ws, n) == 0 && path[n] == '/')
                path += n + 1;
        if (path[0] == '/' || path[0] == '\0') {
                *why = "it lies outside the workspace";
                return NULL;
        }
        return path;
}

/* openat2 beneath the workspace, or where the kernel lacks it a walk that
 * refuses "..": a symlink or a path may not lead out. */
static int open_beneath(int dirfd, const char *rel)
{
        struct open_how how = {.flags = O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK,
                               .resolve = RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS};
        int fd = (int)syscall(SYS_openat2, dirfd, rel, &how, sizeof(how));
        const char *p;

        if (fd >= 0 || errno != ENOSYS)
                return fd;
        for (p = rel; p != NULL; p = strchr(p, '/'), p = p != NULL ? p + 1 : NULL)
                if (strncmp(p, "..", 2) == 0 && (p[2] == '/' || p[2] == '\0')) {
                        errno = EXDEV;
                        return -1;
                }
        return openat(dirfd, rel, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK | O_NOFOLLOW);
}

/* Reads the file a call would change: 0 with *out (malloc'd, NUL-ended) and
 * *len, -ENOENT when there is none, or -errno with *why. */
static int read_now(const struct app *a, const char *path, char **out, size_t *len,
                    const char **why)
{
        const char *rel = beneath(a, path, why);
        int dfd, fd, rc = 0;
        struct stat st;
        ssize_t got;

        *out = NULL;
        if (rel == NULL)
                return -EXDEV;
        dfd = open(session_workspace(a->s), O_PATH | O_DIRECTORY | O_CLOEXEC);
        if (dfd < 0) {
                *why = "the workspace cannot be opened";
                return -errno;
        }
        fd = open_beneath(dfd, rel);
        rc = fd < 0 ? -errno : 0;
        close(dfd);
        if (rc == -ENOENT)
                return rc;
        if (rc < 0) {
                *why = rc == -EXDEV ? "it lies outside the workspace" : "it cannot be read";
                return rc;
        }
        if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || st.st_size > FILE_MAX) {
                *why = S_ISREG(st.st_mode) ? "it is larger than 1 MiB" : "it is not a regular file";
                close(fd);
                return -EFBIG;
        }
        *out = malloc((size_t)st.st_size + 1);
        got = *out != NULL ? read(fd, *out, (size_t)st.st_size) : -1;
        close(fd);
        if (got < 0) {
                free(*out);
                *out = NULL;
                *why = "it cannot be read";
                return -EIO;
        }
        (*out)[got] = '\0';
        *len = (size_t)got;
        return 0;
}

/* What an edit makes of the file: old_str replaced by new_str, once or
 * every time; NULL with *why when the tool would refuse. */
static char *apply_edit(const char *now, size_t len, const json_t *args, size_t *outlen,
                        const char **why)
{
        const char *old = json_string_value(json_object_get(args, "old_str"));
        const char *new = json_string_value(json_object_get(args, "new_str"));
        bool all = json_is_true(json_object_get(args, "replace_all"));
        size_t olen = old != NULL ? strlen(old) : 0, nlen = new != NULL ? strlen(new) : 0;
        size_t k = 0, o = 0;
        const char *p = now, *end = now + len, *hit;
        char *out;

        if (olen == 0 || new == NULL) {
                *why = "old_str is empty";
                return NULL;
        }
        for (hit = now; (hit = memmem(hit, (size_t)(end - hit), old, olen)) != NULL; hit += olen)
                k++;
        if (k == 0 || (k > 1 && !all)) {
                *why = k == 0 ? "old_str is not in the file as it is now: the edit would fail"
                              : "old_str occurs more than once: the edit would fail";
                return NULL;
        }
        out = malloc(len + k * nlen + 1);
        if (out == NULL)
                return NULL;
        while ((hit = memmem(p, (size_t)(end - p), old, olen)) != NULL) {
                memcpy(out + o, p, (size_t)(hit - p));
                o += (size_t)(hit - p);
                memcpy(out + o, new, nlen);
                o += nlen;
                p = hit + olen;
        }
        memcpy(out + o, p, (size_t)(end - p));
        o += (size_t)(end - p);
        out[o] = '\0';
        *outlen = o;
        return out;
}

static void body_diff(struct approve_view *v, const struct linediff *d)
{
        size_t i;

        for (i = 0; i < d->n; i++) {
                const struct linediff_line *l = &d->lines[i];
                if (l->op == '@') {
                        body_addf(v, THEME_TEXT_DIM, "  ... %zu unchanged line%s", l->skipped,
                                  l->skipped == 1 ? "" : "s");
                        continue;
                }
                body_add(v,
                         l->op == '+'   ? THEME_TOOL_OK
                         : l->op == '-' ? THEME_TOOL_ERROR
                                        : THEME_TEXT,
                         l->op == '+'   ? "+ "
                         : l->op == '-' ? "- "
                                        : "  ",
                         l->text, l->len);
        }
}

/* write and edit: the diff from the file as it is now to what the call
 * would leave; false (with the heading saying why) to show the arguments. */
static bool body_file(struct app *a, const char *tool, const json_t *args)
{
        struct approve_view *v = &a->approve;
        const char *path = json_string_value(json_object_get(args, "path"));
        const char *content = json_string_value(json_object_get(args, "content"));
        const char *why = NULL;
        char *now = NULL, *after = NULL;
        size_t nowlen = 0, afterlen = 0;
        struct linediff d;
        int rc;

        if (path == NULL || a->s == NULL)
                return false;
        rc = read_now(a, path, &now, &nowlen, &why);
        if (rc < 0 && rc != -ENOENT) {
                snprintf(v->heading, sizeof(v->heading), "arguments (no diff of %.200s: %s)", path,
                         why);
                return false;
        }
        if (strcmp(tool, "write") == 0 && content != NULL) {
                afterlen = json_string_length(json_object_get(args, "content"));
                after = malloc(afterlen + 1);
                if (after != NULL)
                        memcpy(after, content, afterlen + 1);
        } else if (strcmp(tool, "edit") == 0 && rc == 0) {
                after = apply_edit(now, nowlen, args, &afterlen, &why);
        } else {
                why = "there is no such file: the edit would fail";
        }
        if (after == NULL) {
                snprintf(v->heading, sizeof(v->heading), "arguments (%s)",
                         why != NULL ? why : "out of memory");
                free(now);
                return false;
        }
        rc = linediff_compute(now != NULL ? now : "", nowlen, after, afterlen, DIFF_CONTEXT, &d);
        if (rc == 0) {
                snprintf(v->heading, sizeof(v->heading), "diff of %.200s%s (+%zu -%zu)", path,
                         now == NULL ? " (new file)" : "", d.added, d.removed);
                body_diff(v, &d);
                linediff_free(&d);
        } else {
                snprintf(v->heading, sizeof(v->heading),
                         "arguments (%.200s: too many changed lines to compare, more than %d)",
                         path, LINEDIFF_MAX_LINES);
        }
        free(now);
        free(after);
        return rc == 0;
}

/* The body of the call shown, built once per call. */
static void body_build(struct app *a, const struct viewmodel_call *c)
{
        struct approve_view *v = &a->approve;
        json_t *args = json_loads(c->arguments, JSON_DECODE_ANY, NULL);

        body_free(v);
        snprintf(v->heading, sizeof(v->heading), "arguments");
        if ((strcmp(c->name, "write") == 0 || strcmp(c->name, "edit") == 0) &&
            json_is_object(args) && body_file(a, c->name, args)) {
                json_t *rest = json_deep_copy(args);
                /* the path is in the heading, the change in the diff */
                json_object_del(rest, "path");
                json_object_del(rest, "content");
                json_object_del(rest, "old_str");
                json_object_del(rest, "new_str");
                if (json_object_size(rest) > 0)
                        body_args(v, rest, "");
                json_decref(rest);
        } else {
                body_args(v, args, c->arguments);
        }
        json_decref(args);
}

/* ---- the call shown ---- */

static void show(struct app *a, long call)
{
        struct approve_view *v = &a->approve;

        v->call = call;
        v->vm = a->vm;
        v->stage = APPROVE_CHOOSE;
        v->err[0] = '\0';
        v->scroll = 0;
        v->shown_ms = app_now_ms();
        prompt_clear(&v->field);
        body_free(v);
        if (call >= 0)
                body_build(a, viewmodel_call(a->vm, (size_t)call));
}

/* A call decided (here, by an interrupt or by a rule just added) gives way
 * to the next that waits; none left closes the dialog. */
static void follow_queue(struct app *a)
{
        struct approve_view *v = &a->approve;
        const struct viewmodel_call *c = v->vm == a->vm ? shown_call(a) : NULL;
        long next;

        if (c != NULL && viewmodel_call_waiting(c))
                return;
        next = a->vm != NULL && !app_sends_nothing(a) ? viewmodel_next_approval(a->vm, -1) : -1;
        if (next != v->call || v->vm != a->vm)
                show(a, next);
        if (next < 0)
                v->open = false;
}

bool approve_active(struct app *a)
{
        if (!a->approve.open)
                return false;
        follow_queue(a);
        return a->approve.open;
}

void approve_request(struct app *a)
{
        a->approve.ring = !a->o.no_bell;
        a->approve.open = true;
        app_mark_dirty(a);
}

bool approve_show(struct app *a, long call)
{
        struct approve_view *v = &a->approve;

        if (app_sends_nothing(a) || a->vm == NULL)
                return false;
        if (call < 0)
                call = viewmodel_next_approval(a->vm, -1);
        if (call < 0 || (size_t)call >= viewmodel_ncalls(a->vm) ||
            !viewmodel_call_waiting(viewmodel_call(a->vm, (size_t)call)))
                return false;
        v->open = true;
        if (call != v->call || v->vm != a->vm)
                show(a, call);
        return true;
}

void approve_free(struct app *a)
{
        body_free(&a->approve);
        prompt_free(&a->approve.field);
}

/* ---- answers ---- */

/* Sends the answer; the dialog moves on once the decision's event has
 * passed, or keeps the call with the error shown. */
static void decide(struct app *a, bool allow, const char *reason, const char *args,
                   const char *rule)
{
        struct approve_view *v = &a->approve;
        const struct viewmodel_call *c = shown_call(a);
        char id[256], what[VM_SUMMARY_MAX], err[600];
        int rc;

        if (c == NULL)
                return;
        /* the events of the answer may move the view model's arrays */
        snprintf(id, sizeof(id), "%s", c->id);
        snprintf(what, sizeof(what), "%s", c->summary);
        rc = app_approve(a, id, allow, reason, args, rule, err, sizeof(err));
        if (rc < 0) {
                snprintf(v->err, sizeof(v->err), "%s", err);
                return;
        }
        snprintf(a->status, sizeof(a->status), "%s %s%s%s", allow ? "allowed" : "denied", what,
                 rule != NULL ? "; from now on also calls like it: " : "",
                 rule != NULL ? rule : "");
        v->stage = APPROVE_CHOOSE;
        prompt_clear(&v->field);
        follow_queue(a);
}

/* The edited arguments as the call's JSON: for bash, the command put back
 * into its arguments; for the rest, the text itself. Malloc'd. */
static char *edited_args(const struct viewmodel_call *c, const char *text)
{
        json_t *args;
        char *out;

        if (strcmp(c->name, "bash") != 0)
                return strdup(text);
        args = json_loads(c->arguments, 0, NULL);
        if (!json_is_object(args)) {
                json_decref(args);
                return strdup(text);
        }
        json_object_set_new(args, "command", json_string(text));
        out = json_dumps(args, JSON_COMPACT);
        json_decref(args);
        return out;
}

static void start_stage(struct app *a, enum approve_stage st)
{
        struct approve_view *v = &a->approve;
        const struct viewmodel_call *c = shown_call(a);
        const char *text = "";
        json_t *args = NULL;
        char *rule = NULL;

        v->err[0] = '\0';
        prompt_clear(&v->field);
        if (st == APPROVE_RULE) {
                args = json_loads(c->arguments, 0, NULL);
                rule = approval_suggest(c->name, args);
                text = rule != NULL ? rule : c->name;
        } else if (st == APPROVE_EDIT) {
                args = json_loads(c->arguments, 0, NULL);
                text =
                    strcmp(c->name, "bash") == 0 && json_is_string(json_object_get(args, "command"))
                        ? json_string_value(json_object_get(args, "command"))
                        : c->arguments;
                if (strlen(text) >= PROMPT_MAX) {
                        snprintf(v->err, sizeof(v->err),
                                 "the arguments are longer than the editor holds (%d KiB)",
                                 PROMPT_MAX >> 10);
                        json_decref(args);
                        return;
                }
        }
        prompt_insert(&v->field, text, strlen(text));
        v->stage = st;
        free(rule);
        json_decref(args);
}

/* Enter in a stage that types a line. */
static void submit(struct app *a)
{
        struct approve_view *v = &a->approve;
        const struct viewmodel_call *c = shown_call(a);
        char *text = strdup(prompt_text(&v->field)), *args;

        if (text == NULL || c == NULL) {
                free(text);
                return;
        }
        if (v->stage == APPROVE_REASON) {
                decide(a, false, text, NULL, NULL);
        } else if (v->stage == APPROVE_RULE) {
                if (!prompt_has_text(&v->field))
                        snprintf(v->err, sizeof(v->err),
                                 "type a rule (TOOL or TOOL:PATTERN), or Esc to go back");
                else
                        decide(a, true, NULL, NULL, text);
        } else if (v->stage == APPROVE_EDIT) {
                args = edited_args(c, text);
                if (args != NULL)
                        decide(a, true, NULL, args, NULL);
                free(args);
        }
        free(text);
}

static void body_scroll(struct app *a, long delta)
{
        a->approve.scroll += delta;
        if (a->approve.scroll > (long)a->approve.nlines - 1)
                a->approve.scroll = (long)a->approve.nlines - 1;
        if (a->approve.scroll < 0)
                a->approve.scroll = 0;
}

static void key_choose(struct app *a, int kind, wint_t ch)
{
        struct approve_view *v = &a->approve;
        long page = LINES / 2;

        if (kind == KEY_CODE_YES) {
                body_scroll(a, ch == KEY_UP      ? -1
                               : ch == KEY_DOWN  ? 1
                               : ch == KEY_PPAGE ? -page
                               : ch == KEY_NPAGE ? page
                               : ch == KEY_HOME  ? -1000000
                               : ch == KEY_END   ? 1000000
                                                 : 0);
                return;
        }
        if (ch == 27) {
                struct viewmodel_host h;
                unsigned n;
                v->open = false;
                viewmodel_host(a->vm, &h);
                n = h.approvals;
                snprintf(a->status, sizeof(a->status),
                         "%u call%s wait%s for approval: A shows %s again, Esc interrupts the "
                         "turn (denying %s)",
                         n, n == 1 ? "" : "s", n == 1 ? "s" : "", n == 1 ? "it" : "them",
                         n == 1 ? "it" : "them");
                return;
        }
        /* typed-ahead text must not answer a dialog that just showed */
        if (app_now_ms() - v->shown_ms < DIALOG_GUARD_MS)
                return;
        switch (ch) {
        case 'y':
        case 'Y':
                decide(a, true, NULL, NULL, NULL);
                break;
        case 'a':
        case 'A':
                start_stage(a, APPROVE_RULE);
                break;
        case 'n':
        case 'N':
                start_stage(a, APPROVE_REASON);
                break;
        case 'e':
        case 'E':
                start_stage(a, APPROVE_EDIT);
                break;
        }
}

void approve_key(struct app *a, int kind, wint_t ch)
{
        struct approve_view *v = &a->approve;

        if (kind == KEY_CODE_YES && ch == KEY_MOUSE) {
                MEVENT m;
                if (getmouse(&m) == OK && (m.bstate & (BUTTON4_PRESSED | BUTTON5_PRESSED)))
                        body_scroll(a, m.bstate & BUTTON4_PRESSED ? -3 : 3);
                return;
        }
        if (v->stage == APPROVE_CHOOSE) {
                key_choose(a, kind, ch);
                return;
        }
        if (kind != KEY_CODE_YES && ch == 27) {
                v->stage = APPROVE_CHOOSE;
                v->err[0] = '\0';
                prompt_clear(&v->field);
                return;
        }
        if (kind == KEY_CODE_YES ? ch == KEY_ENTER : ch == '\r') {
                submit(a);
                return;
        }
        if (kind != KEY_CODE_YES && ch == '\n') { /* Ctrl-J: a new line in an edit */
                if (v->stage == APPROVE_EDIT)
                        prompt_insert(&v->field, "\n", 1);
                return;
        }
        input_edit(&v->field, kind, ch, false);
}

/* ---- drawing ---- */

static void limits_text(const struct viewmodel_limits *l, char *out, size_t len)
{
        char t[16], c[16], m[16];
        size_t o = 0;

        out[0] = '\0';
        fmt_ms(t, sizeof(t), l->timeout_ms);
        fmt_ms(c, sizeof(c), l->cpu_ms);
        fmt_bytes(m, sizeof(m), l->memory_bytes);
        if (l->timeout_ms > 0)
                o += (size_t)snprintf(out + o, len - o, "wall clock %s", t);
        if (l->cpu_ms > 0 && o < len)
                o += (size_t)snprintf(out + o, len - o, "%sCPU %s", o ? ", " : "", c);
        if (l->memory_bytes > 0 && o < len)
                o += (size_t)snprintf(out + o, len - o, "%smemory %s", o ? ", " : "", m);
        if (l->pids > 0 && o < len)
                snprintf(out + o, len - o, "%s%llu pids", o ? ", " : "",
                         (unsigned long long)l->pids);
        if (out[0] == '\0')
                snprintf(out, len, "none of its own");
}

/* "label     value", the value untrusted. */
static void field_row(struct app *a, int y, int x, int w, const char *label, const char *value,
                      enum theme_role r)
{
        draw_put(a, y, x, 10, THEME_DIALOG, label);
        draw_put_untrusted(a, y, x + 10, w - 10, r, value, strlen(value));
}

/* The body from line `scroll`, wrapped, in rows y..y+h-1. */
static void draw_body(struct app *a, int y, int x, int w, int h)
{
        struct approve_view *v = &a->approve;
        struct text_span spans[64];
        char line[4096];
        size_t i, k, n;
        int row = 0;

        for (i = (size_t)v->scroll; i < v->nlines && row < h; i++) {
                n = text_wrap(v->lines[i].safe, w, spans, 64);
                if (n == 0) { /* an empty line */
                        row++;
                        continue;
                }
                for (k = 0; k < n && k < 64 && row < h; k++, row++) {
                        snprintf(line, sizeof(line), "%.*s", (int)spans[k].len,
                                 v->lines[i].safe + spans[k].start);
                        draw_put(a, y + row, x, w, v->lines[i].role, line);
                }
        }
        if (i < v->nlines || v->scroll > 0) {
                snprintf(line, sizeof(line), " lines %ld-%zu of %zu (Up/Down, PgUp/PgDn) ",
                         v->scroll + 1, i, v->nlines);
                draw_put(a, y + h, x + w - (int)strlen(line), (int)strlen(line), THEME_TEXT_DIM,
                         line);
        }
}

/* The line being typed: "label  > text", the terminal's cursor in it. */
static void draw_field(struct app *a, int y, int x, int w, const char *label)
{
        char view[1024];
        int col;

        draw_put(a, y, x, 10, THEME_TITLE, label);
        draw_put(a, y, x + 10, 2, THEME_TITLE, "> ");
        prompt_view(&a->approve.field, w - 12, a->ascii ? "|" : "\u21b5", view, sizeof(view), &col);
        draw_put(a, y, x + 12, w - 12, THEME_TEXT, view);
        a->cursor_y = y;
        a->cursor_x = x + 12 + col;
}

static const char *stage_keys(enum approve_stage st)
{
        switch (st) {
        case APPROVE_REASON:
                return "Enter denies with this reason (it goes to the model; may be empty)  Esc "
                       "back";
        case APPROVE_RULE:
                return "Enter allows it and calls this rule matches, for the rest of the session  "
                       "Esc back";
        case APPROVE_EDIT:
                return "Enter allows it as edited  Ctrl-J new line  Esc back";
        default:
                return "y allow once  a allow always (rule)  n deny (reason)  e edit, then allow  "
                       "Esc later";
        }
}

void approve_draw(struct app *a)
{
        struct approve_view *v = &a->approve;
        const struct viewmodel_call *c = shown_call(a);
        int y = 2, x = 0, w = COLS, h = LINES - 4, i, iw, body_y, body_h;
        struct viewmodel_host hh;
        char title[200], lim[200], *rule;
        json_t *args;

        if (c == NULL)
                return;
        viewmodel_host(a->vm, &hh);
        iw = w - 4;
        for (i = 0; i < h; i++)
                draw_fill(a, y + i, x, w, THEME_DIALOG);
        snprintf(title, sizeof(title), "approve this call?%s%u waiting",
                 hh.approvals > 1 ? "  1 of " : "  ", hh.approvals);
        draw_box(a, &(struct layout_rect){y, x, h, w}, title, true);
        x += 2;
        field_row(a, y + 1, x, iw, "tool", c->name, THEME_DIALOG_DANGER);
        field_row(a, y + 2, x, iw, "where", c->where[0] ? c->where : "?", THEME_DIALOG);
        limits_text(&c->approval_limits, lim, sizeof(lim));
        field_row(a, y + 3, x, iw, "limits", lim, THEME_DIALOG);
        field_row(a, y + 4, x, iw, "asked by", c->asked_by[0] ? c->asked_by : "?", THEME_DIALOG);
        a->cursor_y = -1;
        if (v->stage == APPROVE_RULE) {
                draw_field(a, y + 5, x, iw, "rule");
        } else {
                args = json_loads(c->arguments, 0, NULL);
                rule = approval_suggest(c->name, args);
                field_row(a, y + 5, x, iw, "a adds", rule != NULL ? rule : c->name, THEME_TEXT_DIM);
                free(rule);
                json_decref(args);
        }
        draw_rule(a, y + 6, x - 1, iw + 2, v->heading);
        body_y = y + 7;
        body_h = y + h - 3 - body_y - (v->err[0] != '\0') - (v->stage != APPROVE_CHOOSE);
        draw_body(a, body_y, x, iw, body_h);
        i = y + h - 2;
        draw_put(a, i, x, iw, THEME_TITLE, stage_keys(v->stage));
        if (v->stage == APPROVE_REASON)
                draw_field(a, --i, x, iw, "reason");
        else if (v->stage == APPROVE_EDIT)
                draw_field(a, --i, x, iw, strcmp(c->name, "bash") == 0 ? "command" : "arguments");
        if (v->err[0] != '\0')
                draw_put_untrusted(a, --i, x, iw, THEME_DIALOG_DANGER, v->err, strlen(v->err));
}
