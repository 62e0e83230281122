/* resume: the supervisor's side of resuming an ended session: `proctor
 * resume`, the earlier conversation shown above the new one, and the setup
 * screen's offer of this workspace's newest sessions (F4). The reading and
 * rebuilding are core's (core/session/resume.c); nothing here reads a trace. */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/session/resume.h"
#include "tui/app.h"
#include "tui/draw.h"

/* The workspace the session will work in, resolved as session.start says it. */
static void workspace_of(const struct options *o, char *buf, size_t len)
{
        const char *ws = o->workspace != NULL ? o->workspace : ".";
        char path[PATH_MAX];

        if (realpath(ws, path) != NULL)
                snprintf(buf, len, "%s", path);
        else
                snprintf(buf, len, "%s", ws);
}

int resume_start(struct app *a, const char *what, char *err, size_t errlen)
{
        struct resume_brief newest;
        char ws[PATH_MAX];
        int rc;

        if (what == NULL) {
                workspace_of(&a->o, ws, sizeof(ws));
                if (resume_recent(ws, true, &newest, 1) < 1) {
                        snprintf(err, errlen,
                                 "no ended session of this workspace (%s) to resume; name one: "
                                 "proctor resume ID|TRACE",
                                 ws);
                        return -ENOENT;
                }
                what = newest.path;
        }
        if ((rc = resume_load(what, &a->resume, err, errlen)) < 0)
                return rc;
        resume_apply(a->resume, &a->o);
        return 0;
}

void resume_offer(struct app *a)
{
        char ws[PATH_MAX];

        a->offered = calloc(RESUME_OFFERED, sizeof(*a->offered));
        if (a->offered == NULL)
                return;
        workspace_of(&a->o, ws, sizeof(ws));
        a->noffered = resume_recent(ws, true, a->offered, RESUME_OFFERED);
}

static void note(struct app *a, const char *text)
{
        json_t *ev = json_pack("{s:s,s:s}", "type", "session.note", "text", text);

        viewmodel_event(ev, a->vm);
        json_decref(ev);
}

static void note_cb(const char *line, void *ud)
{
        note(ud, line);
}

void resume_feed(struct app *a)
{
        size_t i;
        json_t *ev;

        if (a->resume == NULL || a->vm == NULL)
                return;
        json_array_foreach (a->resume->events, i, ev)
                viewmodel_event(ev, a->vm);
        resume_notes(a->resume, &a->o, note_cb, a);
        snprintf(a->status, sizeof(a->status),
                 "resumed session %s: type the next prompt, Enter sends it", a->resume->session_id);
}

void resume_pick(struct app *a)
{
        struct resume *old = a->resume;
        char err[512];

        if (a->screen != SCREEN_SETUP || a->replay || a->noffered == 0) {
                snprintf(a->status, sizeof(a->status), "%s",
                         a->noffered == 0 ? "no earlier session of this workspace to resume"
                                          : "a session is picked on the setup screen only");
                return;
        }
        a->picked = a->picked + 1 < a->noffered ? a->picked + 1 : -1;
        a->resume = NULL;
        a->o = a->given;
        if (a->picked >= 0 &&
            resume_load(a->offered[a->picked].path, &a->resume, err, sizeof(err)) < 0) {
                a->picked = -1;
                a->resume = NULL;
        } else {
                err[0] = '\0';
        }
        if (a->resume != NULL)
                resume_apply(a->resume, &a->o);
        a->mode = a->o.mode;
        app_default_policy(a);
        if (app_reopen(a, a->status, sizeof(a->status)) < 0) {
                app_quit(a, 1);
        } else if (err[0] != '\0') {
                snprintf(a->status, sizeof(a->status), "%.300s", err);
        } else if (a->resume == NULL) {
                snprintf(a->status, sizeof(a->status),
                         "a new conversation (F4 picks one to resume)");
        }
        resume_free(old);
}

void resume_draw(struct app *a, int *y, int x, int w)
{
        char line[400];

        if (a->resume != NULL) {
                snprintf(line, sizeof(line), "resuming  %s: %zu earlier messages%s",
                         a->resume->session_id, json_array_size(a->resume->messages),
                         a->noffered > 0 ? "  [F4: another, or none]" : "");
                draw_put_untrusted(a, (*y)++, x, w, THEME_TEXT, line, strlen(line));
                return;
        }
        for (int i = 0; i < a->noffered; i++) {
                snprintf(line, sizeof(line), "%s %s  \"%.60s\"%s",
                         i == 0 ? "earlier   " : "          ", a->offered[i].id,
                         a->offered[i].prompt, i == 0 ? "  [F4 resumes]" : "");
                draw_put_untrusted(a, (*y)++, x, w, THEME_TEXT_DIM, line, strlen(line));
        }
}

void resume_end(struct app *a)
{
        resume_free(a->resume);
        a->resume = NULL;
        free(a->offered);
        a->offered = NULL;
        a->noffered = 0;
}
