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
#include <sys/stat.h>
#include <unistd.h>

#include "core/session/config.h"
#include "core/session/ctl.h"
#include "core/session/resume.h"
#include "core/view/termout.h"
#include "tui/datadir.h"
#include "tui/draw.h"
#include "tui/glyphs.h"
#include "tui/layout.h"
#include "tui/prepare.h"
#include "tui/terminal.h"
#include "tui/tui.h"

struct app *app_current; /* for the crash handler only */

#define QUIT_GRACE_MS 3000 /* a quit waits at most this for the session */
#define MOUSE_EVENTS  (BUTTON1_CLICKED | BUTTON1_DOUBLE_CLICKED | BUTTON4_PRESSED | BUTTON5_PRESSED)

/* ---- terminal ---- */

static void restore_terminal(void)
{
        if (!isendwin()) {
                fputs("\033[?2004l", stdout); /* bracketed paste off */
                fflush(stdout);
                endwin();
        }
}

void app_close_terminal(struct app *a)
{
        int i;

        restore_terminal();
        listview_free(&a->lists[PANE_TOOLS]);
        listview_free(&a->lists[PANE_EXECS]);
        if (a->replay)
                uv_close((uv_handle_t *)&a->play, NULL);
        uv_close((uv_handle_t *)&a->in, NULL);
        uv_close((uv_handle_t *)&a->frame, NULL);
        uv_close((uv_handle_t *)&a->tick, NULL);
        uv_close((uv_handle_t *)&a->later, NULL);
        uv_close((uv_handle_t *)&a->watchdog, NULL);
        uv_close((uv_handle_t *)&a->escalate, NULL);
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
        if (!a->busy && a->prep == NULL)
                uv_timer_stop(t);
}

static void on_event(const json_t *ev, void *ud)
{
        const char *type = json_string_value(json_object_get(ev, "type"));

        if (type != NULL && strcmp(type, "approval.request") == 0)
                approve_request(ud);
        app_mark_dirty(ud);
}

/* The pane's rows rebuilt from the view model (filter, sort) and, while it
 * follows, the selection on the newest: what the next frame will show, so
 * a key acts on that and not on the rows of the last frame drawn. */
void app_list_sync(struct app *a, enum pane p)
{
        listview_build(&a->lists[p], a->vm, p == PANE_EXECS);
        if (a->follow[p])
                a->sel[p] = app_list_newest(a, p);
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
        a->filtering = -1;
        detail_close(a);
        draw_forget(a);
}

/* ---- the session ---- */

static void on_idle(enum agent_status st, void *ud);

static void on_preview_changed(void *ud)
{
        app_mark_dirty(ud);
}

static int remote_prompt(void *ud, const char *text, char *err, size_t errlen);

/* A client attached or left: the header says how many watch. */
static void on_clients(void *ud)
{
        app_mark_dirty(ud);
}

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
        so.provider.no_stream_options = !a->o.provider_stream_options;
        so.provider.ca_file = a->o.ca_cert;
        so.workspace = a->o.workspace;
        so.config_file = a->o.config;
        so.mcp_servers = a->o.mcp_servers;
        so.ws_mode = a->o.ws_mode;
        so.limits = a->o.limits;
        so.max_iterations = a->o.max_iterations;
        so.max_parallel = (unsigned)a->o.max_parallel;
        so.memory_budget = a->o.memory_budget;
        so.image = a->o.image;
        so.image_max = a->o.image_max;
        so.image_cache_max = a->o.image_cache_max;
        so.runtime = a->o.runtime;
        /* the operator answers in the approval dialog (approve.c) */
        so.approval = a->policy;
        so.can_ask = true;
        so.allow = a->o.allow.v;
        so.nallow = a->o.allow.n;
        so.deny = a->o.deny.v;
        so.ndeny = a->o.deny.n;
        if (a->resume != NULL) {
                so.history = a->resume->messages;
                so.resumed_id = a->resume->session_id;
                so.resumed_trace = a->resume->path;
        }
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
        /* reachable from `proctor ls` and clients while it lives; without
         * its socket the session runs on, and the status line says why */
        struct ctl_hooks hooks = {remote_prompt, a, on_clients};
        char why[400];
        if (ctl_open(a->loop, a->bus, a->s, "supervisor", trace_path(a->trace), &hooks, &a->ctl,
                     why, sizeof(why)) < 0) {
                a->ctl = NULL;
                snprintf(a->status, sizeof(a->status), "not reachable by proctor ls: %.280s", why);
        }
        session_on_idle(a->s, on_idle, a);
        a->screen = SCREEN_SETUP;
        a->last = NULL;
        app_reset_view(a);
        resume_feed(a);
        return 0;
}

static int close_session(struct app *a);

int app_reopen(struct app *a, char *err, size_t errlen)
{
        int rc;

        if ((rc = close_session(a)) < 0) {
                snprintf(err, errlen, "the last execution is still being removed");
                return rc;
        }
        if ((rc = open_session(a, err, errlen)) < 0)
                return rc;
        session_mcp_preview(a->s, on_preview_changed, a);
        return 0;
}

static void on_wait_tick(uv_timer_t *t)
{
}

/* A trace with anything in it is named at exit, for replay and triage. */
static void keep_trace_name(struct app *a)
{
        const char *path = a->trace != NULL ? trace_path(a->trace) : NULL;
        struct stat st;
        char **grown;

        if (path == NULL || stat(path, &st) < 0 || st.st_size == 0)
                return;
        grown = realloc(a->traces, (a->ntraces + 1) * sizeof(*grown));
        if (grown == NULL)
                return;
        a->traces = grown;
        if ((a->traces[a->ntraces] = strdup(path)) != NULL)
                a->ntraces++;
}

static void say_traces(struct app *a)
{
        size_t i;

        for (i = 0; i < a->ntraces; i++) {
                fprintf(stderr, "proctor: session trace: %s (proctor replay %s)\n", a->traces[i],
                        a->traces[i]);
                free(a->traces[i]);
        }
        free(a->traces);
        a->traces = NULL;
        a->ntraces = 0;
}

/* Only once every execution is gone, so that no event comes after; an
 * execution that outlives QUIT_GRACE_MS more (it cannot, being killed) is
 * left to die with proctor rather than hang its exit. */
static int close_session(struct app *a)
{
        uv_timer_t wake;
        uint64_t until = app_now_ms() + QUIT_GRACE_MS;

        if (a->s == NULL)
                return 0;
        keep_trace_name(a);
        uv_timer_init(a->loop, &wake);
        uv_timer_start(&wake, on_wait_tick, 50, 50);
        session_stop_servers(a->s);
        while (session_executions(a->s) > 0 && app_now_ms() < until)
                uv_run(a->loop, UV_RUN_ONCE);
        uv_close((uv_handle_t *)&wake, NULL);
        uv_run(a->loop, UV_RUN_NOWAIT); /* wake is on this stack: closed now */
        if (session_executions(a->s) > 0)
                return -EBUSY;
        session_end(a->s);
        ctl_close(a->ctl);
        a->ctl = NULL;
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
        return 0;
}

static void finish(struct app *a)
{
        int i;

        a->done = true;
        if (a->replay)
                uv_timer_stop(&a->play);
        uv_timer_stop(&a->frame);
        uv_timer_stop(&a->tick);
        uv_timer_stop(&a->later);
        uv_timer_stop(&a->watchdog);
        uv_timer_stop(&a->escalate);
        uv_poll_stop(&a->in);
        for (i = 0; i < 4; i++)
                uv_signal_stop(&a->sigs[i]);
        uv_stop(a->loop);
}

static void app_submit_text(struct app *a, const char *text);

static void send_queued(uv_timer_t *t)
{
        struct app *a = t->data;
        char *text = a->queued;

        a->queued = NULL;
        if (text == NULL || a->quitting || a->done || a->busy)
                goto out;
        a->status[0] = '\0';
        app_submit_text(a, text);
out:
        free(text);
        app_mark_dirty(a);
}

static void on_idle(enum agent_status st, void *ud)
{
        struct app *a = ud;

        a->busy = false;
        a->last = agent_status_name(st);
        snprintf(a->status, sizeof(a->status), "session %s: i follow-up, n new session, q quit",
                 agent_status_name(st));
        if (a->quitting) {
                finish(a);
        } else if (a->queued != NULL && st == AGENT_INTERRUPTED) {
                /* interrupted: the queued message goes back for editing */
                prompt_clear(&a->prompt);
                prompt_insert(&a->prompt, a->queued, strlen(a->queued));
                free(a->queued);
                a->queued = NULL;
                a->typing = true;
                snprintf(a->status, sizeof(a->status),
                         "interrupted: your queued message is back in the prompt");
        } else if (a->queued != NULL) {
                /* not from inside the session's own callback */
                uv_timer_start(&a->later, send_queued, 0, 0);
        }
        app_mark_dirty(a);
}

/* Sends text as the next prompt. busy is set first: the session may end
 * the prompt at once (a script with no turns left), calling on_idle before
 * session_prompt returns. */
static void app_submit_text(struct app *a, const char *text)
{
        enum app_screen was = a->screen;
        int rc;

        if (a->mode == EXEC_SANDBOX && session_workspace_problem(a->s) != NULL) {
                snprintf(a->status, sizeof(a->status), "cannot start: %s",
                         session_workspace_problem(a->s));
                return;
        }
        a->screen = SCREEN_LIVE;
        a->busy = true;
        a->typing = false;
        a->status[0] = '\0';
        a->scroll = 0;
        rc = session_prompt(a->s, text);
        if (rc < 0) {
                a->busy = false;
                a->screen = was;
                snprintf(a->status, sizeof(a->status), "cannot start: %s", strerror(-rc));
                return;
        }
        uv_timer_start(&a->tick, on_tick, 120, 120);
}

/* A follow-up sent by a client of the session's socket: as if typed. */
static int remote_prompt(void *ud, const char *text, char *err, size_t errlen)
{
        struct app *a = ud;

        if (a->screen == SCREEN_SETUP || a->screen == SCREEN_PREPARING) {
                snprintf(err, errlen, "the session has not started: its own operator starts it");
                return -EAGAIN;
        }
        if (a->busy || session_busy(a->s)) {
                snprintf(err, errlen, "the session is busy: send the follow-up once its turn ends");
                return -EBUSY;
        }
        app_submit_text(a, text);
        return 0;
}

void app_start_prompt(struct app *a)
{
        char *text = prompt_take(&a->prompt);

        if (text == NULL) {
                snprintf(a->status, sizeof(a->status), "out of memory");
                return;
        }
        app_submit_text(a, text);
        free(text);
}

void app_queue_prompt(struct app *a)
{
        char *text = prompt_take(&a->prompt);

        if (text == NULL)
                return;
        if (a->queued != NULL) { /* a second one joins the first */
                size_t n = strlen(a->queued), m = strlen(text);
                char *both = realloc(a->queued, n + m + 2);
                if (both != NULL) {
                        both[n] = '\n';
                        memcpy(both + n + 1, text, m + 1);
                        a->queued = both;
                }
                free(text);
        } else {
                a->queued = text;
        }
        a->typing = false;
        snprintf(a->status, sizeof(a->status),
                 "queued: sent when this turn ends (Esc interrupts and gives it back)");
}

void app_cycle_policy(struct app *a)
{
        static const enum approval_policy next[] = {
            [APPROVAL_HOST] = APPROVAL_ALWAYS,
            [APPROVAL_ALWAYS] = APPROVAL_NEVER,
            [APPROVAL_NEVER] = APPROVAL_HOST,
        };

        if (a->replay) {
                snprintf(a->status, sizeof(a->status), "replay is read-only: no approval policy");
                return;
        }
        if (a->screen != SCREEN_SETUP || a->s == NULL) {
                snprintf(a->status, sizeof(a->status),
                         "the approval policy is fixed once the session has started (n starts a "
                         "new one)");
                return;
        }
        a->policy = next[a->policy];
        a->policy_from = "the setup screen (F3)";
        approval_set_policy(session_approval(a->s), a->policy);
        a->status[0] = '\0';
}

void app_flip_mode(struct app *a)
{
        enum exec_isolation m = a->mode == EXEC_LOCAL ? EXEC_SANDBOX : EXEC_LOCAL;

        if (a->replay) {
                snprintf(a->status, sizeof(a->status), "replay is read-only: no mode flip");
                return;
        }
        if (session_set_mode(a->s, m) == -EBUSY) {
                snprintf(a->status, sizeof(a->status),
                         "the mode is fixed once the session has started (n starts a new one)");
                return;
        }
        a->mode = m;
        a->status[0] = '\0';
}

/* Presets the setup screen steps through; a value given on the command
 * line between two presets steps to the nearer one in that direction. */
static const uint64_t memory_presets[] = {64ull << 20, 128ull << 20, 256ull << 20, 512ull << 20,
                                          1ull << 30,  2ull << 30,   4ull << 30,   8ull << 30};
static const uint64_t cpu_presets[] = {1000, 2000, 5000, 10000, 30000, 60000, 120000, 300000};
static const uint64_t timeout_presets[] = {10000,  30000,  60000,   120000,
                                           300000, 600000, 1800000, 3600000};
static const uint64_t pids_presets[] = {16, 32, 64, 128, 256, 512, 1024, 4096};

static uint64_t step_preset(const uint64_t *p, size_t n, uint64_t v, int dir)
{
        size_t i;

        if (dir > 0) {
                for (i = 0; i < n; i++)
                        if (p[i] > v)
                                return p[i];
                return v;
        }
        for (i = n; i-- > 0;)
                if (p[i] < v)
                        return p[i];
        return v;
}

#define STEP(arr, v, dir) step_preset(arr, sizeof(arr) / sizeof(arr[0]), v, dir)

void app_step_limit(struct app *a, enum setup_limit which, int dir)
{
        struct exec_limits l = a->o.limits;
        enum exec_ws_mode ws = a->o.ws_mode;

        switch (which) {
        case LIMIT_MEMORY:
                l.memory_bytes = STEP(memory_presets, l.memory_bytes, dir);
                break;
        case LIMIT_CPU:
                l.cpu_ms = STEP(cpu_presets, l.cpu_ms, dir);
                break;
        case LIMIT_TIMEOUT:
                l.timeout_ms = STEP(timeout_presets, l.timeout_ms, dir);
                break;
        case LIMIT_PIDS:
                l.pids = (uint32_t)STEP(pids_presets, l.pids, dir);
                break;
        case LIMIT_WORKSPACE:
                ws = (enum exec_ws_mode)(((int)ws + (dir > 0 ? 1 : 3)) % 4);
                break;
        case LIMIT_COUNT:
                return;
        }
        if (session_set_limits(a->s, &l, ws) == -EBUSY) {
                snprintf(a->status, sizeof(a->status),
                         "limits are fixed once the session has started (n starts a new one)");
                return;
        }
        a->o.limits = l;
        a->o.ws_mode = ws;
}

void app_limit_text(const struct app *a, enum setup_limit which, char *out, size_t len)
{
        const struct exec_limits *l = &a->o.limits;

        switch (which) {
        case LIMIT_MEMORY:
                fmt_bytes(out, len, l->memory_bytes);
                break;
        case LIMIT_CPU:
        case LIMIT_TIMEOUT: /* in seconds, as the sandbox card says them */
                snprintf(out, len, "%gs",
                         (double)(which == LIMIT_CPU ? l->cpu_ms : l->timeout_ms) / 1000.0);
                break;
        case LIMIT_PIDS:
                snprintf(out, len, "%u", l->pids);
                break;
        default:
                snprintf(out, len, "%s", exec_ws_mode_name(a->o.ws_mode));
                break;
        }
}

uint64_t app_kill_target(struct app *a, const char **why)
{
        size_t n = a->vm != NULL ? viewmodel_nexecs(a->vm) : 0, i;

        *why = "no running execution to kill";
        if (a->screen != SCREEN_LIVE)
                return 0;
        /* a selected execution that ended: say so, never another one */
        if (a->focus == PANE_EXECS && a->sel[PANE_EXECS] >= 0 && (size_t)a->sel[PANE_EXECS] < n &&
            !a->follow[PANE_EXECS]) {
                const struct viewmodel_exec *e = viewmodel_exec(a->vm, (size_t)a->sel[PANE_EXECS]);
                if (viewmodel_exec_live(e))
                        return e->id;
                *why = "the selected execution is not running (End selects the newest)";
                return 0;
        }
        for (i = n; i-- > 0;)
                if (viewmodel_exec_live(viewmodel_exec(a->vm, i)))
                        return viewmodel_exec(a->vm, i)->id;
        return 0;
}

unsigned app_running(struct app *a, unsigned *queued)
{
        struct viewmodel_host h = {0};

        if (a->vm != NULL)
                viewmodel_host(a->vm, &h);
        if (queued != NULL)
                *queued = h.queued;
        return h.running;
}

/* The stops whose grace has run out get their SIGKILL. */
static void on_escalate(uv_timer_t *t)
{
        struct app *a = t->data;
        uint64_t now = app_now_ms();
        size_t i = 0;

        while (i < a->nstops) {
                if (a->stops[i].at_ms > now) {
                        i++;
                        continue;
                }
                if (app_kill_exec(a, a->stops[i].exec_id) == 0)
                        snprintf(a->status, sizeof(a->status),
                                 "#%llu was still running %d s after SIGTERM: killed",
                                 (unsigned long long)a->stops[i].exec_id, STOP_GRACE_MS / 1000);
                a->stops[i] = a->stops[--a->nstops];
        }
        if (a->nstops == 0)
                uv_timer_stop(t);
        app_mark_dirty(a);
}

void app_stop_exec(struct app *a, uint64_t exec_id)
{
        int rc = app_signal_exec(a, exec_id, SIGTERM);

        if (rc < 0) {
                snprintf(a->status, sizeof(a->status), "#%llu: %s", (unsigned long long)exec_id,
                         rc == -ESRCH ? "it had ended" : strerror(-rc));
                return;
        }
        if (a->nstops < STOP_PENDING) {
                a->stops[a->nstops].exec_id = exec_id;
                a->stops[a->nstops++].at_ms = app_now_ms() + STOP_GRACE_MS;
                uv_timer_start(&a->escalate, on_escalate, 250, 250);
        }
        snprintf(a->status, sizeof(a->status),
                 "sent SIGTERM to #%llu: it is killed in %d s if it has not ended",
                 (unsigned long long)exec_id, STOP_GRACE_MS / 1000);
}

void app_toggle_pause(struct app *a)
{
        const char *why = NULL;
        uint64_t id = app_kill_target(a, &why);
        long k = id != 0 ? viewmodel_exec_find(a->vm, id) : -1;
        bool paused = k >= 0 && viewmodel_exec(a->vm, (size_t)k)->state == VM_EXEC_PAUSED;
        int rc;

        if (id == 0) {
                snprintf(a->status, sizeof(a->status), "%s", why);
                return;
        }
        rc = app_pause_exec(a, id, paused);
        if (rc < 0)
                snprintf(a->status, sizeof(a->status), "#%llu: %s", (unsigned long long)id,
                         rc == -ESRCH ? "it had ended" : strerror(-rc));
        else
                snprintf(a->status, sizeof(a->status), "#%llu %s%s", (unsigned long long)id,
                         paused ? "resumed" : "paused",
                         paused ? "" : " (p resumes; its wall clock goes on)");
}

void app_toggle_mouse(struct app *a)
{
        a->mouse_off = !a->mouse_off;
        mousemask(a->mouse_off ? 0 : MOUSE_EVENTS, NULL);
        snprintf(a->status, sizeof(a->status), "%s",
                 a->mouse_off ? "mouse capture off: the terminal selects and copies text; "
                                "F12 turns it back on"
                              : "mouse capture on: clicks select, the wheel scrolls");
}

void app_next_theme(struct app *a)
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

void app_new_session(struct app *a)
{
        char err[512];

        if (a->replay) {
                snprintf(a->status, sizeof(a->status), "replay is read-only: no new session");
        } else if (a->busy) {
                snprintf(a->status, sizeof(a->status),
                         "a turn is running: Esc interrupts it, then n starts a new session");
        } else if (session_executions(a->s) > session_server_executions(a->s)) {
                /* its last exec.remove is due in moments; closing now
                 * would mean running the loop from inside it */
                snprintf(a->status, sizeof(a->status),
                         "the last execution is still being removed: n again in a moment");
        } else {
                close_session(a);
                if (a->resume != NULL) { /* a new conversation, with the options as given */
                        resume_free(a->resume);
                        a->resume = NULL;
                        a->picked = -1;
                        a->o = a->given;
                        a->mode = a->o.mode;
                        app_default_policy(a);
                }
                if (open_session(a, err, sizeof(err)) < 0) {
                        snprintf(a->status, sizeof(a->status), "%.300s", err);
                        app_quit(a, 1);
                } else {
                        session_mcp_preview(a->s, on_preview_changed, a);
                }
        }
}

static void on_watchdog(uv_timer_t *t)
{
        finish(t->data);
}

/* While a turn runs, the session is wound down first (kill, interrupt)
 * and on_idle finishes; the watchdog makes sure that nothing, not even a
 * stuck provider, can keep a quit from happening. */
void app_quit(struct app *a, int exit_code)
{
        if (!a->quitting || exit_code != 0)
                a->exit_code = exit_code;
        if (a->prep != NULL) { /* the unpack ends first (prepared() finishes) */
                a->quitting = true;
                prepare_cancel(a);
                app_mark_dirty(a);
                return;
        }
        if (a->quitting && a->busy)
                return;
        a->quitting = true;
        if (a->busy && a->s != NULL) {
                uv_timer_start(&a->watchdog, on_watchdog, QUIT_GRACE_MS, 0);
                session_kill_all(a->s, NULL);
                session_interrupt(a->s);
        } else {
                finish(a);
        }
}

static void on_input(uv_poll_t *p, int status, int events)
{
        input_read(p->data);
}

/* SIGTERM and SIGHUP (the terminal is gone) quit at once; SIGINT (Ctrl-C)
 * too, except while executions run, when only a second one within 2 s
 * does (it kills them). Every way out restores the terminal. */
static void on_signal(uv_signal_t *h, int signum)
{
        struct app *a = h->data;
        struct winsize ws;
        unsigned running;

        if (signum == SIGWINCH) {
                if (ioctl(1, TIOCGWINSZ, &ws) == 0)
                        resizeterm(ws.ws_row, ws.ws_col);
                clearok(curscr, TRUE);
                app_mark_dirty(a);
                return;
        }
        if (signum == SIGINT && !a->quitting && a->att == NULL &&
            (running = app_running(a, NULL)) > 0 && app_now_ms() - a->sigint_ms > 2000) {
                a->sigint_ms = app_now_ms();
                snprintf(a->status, sizeof(a->status),
                         "Ctrl-C again to quit and kill %u running execution%s", running,
                         running == 1 ? "" : "s");
                app_mark_dirty(a);
                return;
        }
        app_quit(a, 128 + signum);
}

/* ---- entry ---- */

/* The bundled themes (tui/datadir.c); when there are none, and
 * PROCTOR_THEMES_DIR (theme.c) names no others, the status says where they
 * were looked for. */
void app_find_themes_dir(struct app *a)
{
        const char *env = getenv("PROCTOR_THEMES_DIR");
        char why[sizeof(a->status)];

        if (datadir_themes(a->themes_dir, sizeof(a->themes_dir), why, sizeof(why)) < 0 &&
            (env == NULL || env[0] == '\0') && a->status[0] == '\0')
                snprintf(a->status, sizeof(a->status), "%s", why);
}

void app_default_policy(struct app *a)
{
        /* host, unless told; the bundled demo runs hands-free for
         * presenters unless a policy is named */
        a->policy_from = a->resume != NULL && !options_given(&a->o, "approval")
                             ? "the resumed session's"
                             : "configured";
        if (a->o.approval == NULL || approval_policy_parse(a->o.approval, &a->policy) < 0) {
                const char *model = a->o.model != NULL ? a->o.model : provider_default_spec();
                bool demo = strcmp(model, "demo") == 0;
                a->policy = demo ? APPROVAL_NEVER : APPROVAL_HOST;
                a->policy_from = demo ? "the demo's default" : "default";
        }
}

/* `proctor resume` gives `resume` (its ID|TRACE, or "" for the newest). */
static int init_app(struct app *a, int argc, char **argv, const char *resume, char *err,
                    size_t errlen)
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
        a->given = a->o;
        a->picked = -1;
        if (resume == NULL)
                resume = a->o.resume;
        if (resume != NULL && !a->o.help &&
            resume_start(a, resume[0] != '\0' ? resume : NULL, err, errlen) < 0)
                return -EINVAL;
        if (resume == NULL && !a->o.help)
                resume_offer(a);
        a->mode = a->o.mode;
        app_default_policy(a);
        app_find_themes_dir(a);
        a->nthemes = theme_list(a->themes_dir, a->themes, THEME_LIST_MAX);
        if (theme_open(a->o.theme, a->themes_dir, &a->theme, terr, sizeof(terr)) < 0)
                snprintf(a->status, sizeof(a->status), "%s", terr);
        for (i = 0; i < a->nthemes; i++)
                if (a->o.theme != NULL && strcmp(a->themes[i], a->o.theme) == 0)
                        a->theme_i = i;
        return 0;
}

/* The image's first unpack has ended (on the loop): the session opens, from
 * the cache now, or the supervisor leaves saying why. */
static void prepared(struct app *a, int rc, const char *err)
{
        char why[sizeof(a->fatal)];

        if (a->quitting) {
                snprintf(a->fatal, sizeof(a->fatal), "image %s: %s", a->o.image,
                         rc == 0 ? "unpacked and cached, but quit before the session started"
                                 : err);
                finish(a);
                return;
        }
        if (rc == 0 && (rc = open_session(a, why, sizeof(why))) < 0)
                err = why;
        if (rc < 0) {
                snprintf(a->fatal, sizeof(a->fatal), "%s", err);
                a->exit_code = rc == -ECANCELED ? 128 + SIGINT : 2;
                finish(a);
                return;
        }
        session_mcp_preview(a->s, on_preview_changed, a);
        app_mark_dirty(a);
}

/* An image of its own (not an engine's container) is unpacked before the
 * session, off the loop, with the terminal up to show how far it is. */
static bool needs_prepare(const struct app *a)
{
        return a->o.image != NULL && a->o.runtime == NULL;
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
        input_setup();
        a->early_input = true;
        /* pasted text comes marked, so it stays text (input.c) */
        fputs("\033[?2004h", stdout);
        fflush(stdout);
        mousemask(MOUSE_EVENTS, NULL);
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
        uv_timer_init(a->loop, &a->later);
        uv_timer_init(a->loop, &a->watchdog);
        uv_timer_init(a->loop, &a->escalate);
        a->frame.data = a->tick.data = a->later.data = a->watchdog.data = a->escalate.data = a;
        for (i = 0; i < 4; i++) {
                uv_signal_init(a->loop, &a->sigs[i]);
                a->sigs[i].data = a;
                uv_signal_start(&a->sigs[i], on_signal, sigs[i]);
        }
        /* the setup screen counts each MCP server's tools (again after a flip) */
        if (a->s != NULL && !a->replay)
                session_mcp_preview(a->s, on_preview_changed, a);
}

static void print_help(void)
{
        printf("usage: proctor [options]\n\n"
               "Opens the supervisor on its setup screen: pick where tools run (F2), type a\n"
               "prompt, Enter. The options below are the screen's starting values; F1 on the\n"
               "screen lists the keys.\n\n"
               "options:\n%s%s%s%s",
               options_help, options_help_session, options_help_agent, options_help_screen);
}

static int run_app(int argc, char **argv, const char *resume);

int tui_main(int argc, char **argv)
{
        return run_app(argc, argv, NULL);
}

/* `proctor resume [ID|TRACE] [options]`: the argument may come before or
 * after the options. */
int tui_resume_main(int argc, char **argv)
{
        struct options o;
        char err[512], **rest;
        const char *what = "";
        int i, n = 0, rc;

        if (config_resolve(argc, argv, &o, err, sizeof(err)) < 0) {
                termout_message(stderr, "proctor resume: %s (try 'proctor resume --help')\n", err);
                return 2;
        }
        if (o.argi + 1 < argc && strncmp(argv[o.argi + 1], "-", 1) != 0) {
                fprintf(stderr, "proctor resume: unexpected argument '%s'\n", argv[o.argi + 1]);
                return 2;
        }
        if ((rest = calloc((size_t)argc + 1, sizeof(*rest))) == NULL)
                return 1;
        for (i = 0; i < argc; i++)
                if (i != o.argi)
                        rest[n++] = argv[i];
                else
                        what = argv[i];
        rc = run_app(n, rest, what);
        free(rest);
        return rc;
}

static int run_app(int argc, char **argv, const char *resume)
{
        struct app a;
        uv_loop_t loop;
        char err[512];
        int rc;

        memset(&a, 0, sizeof(a));
        setlocale(LC_ALL, "");
        uv_loop_init(&loop);
        a.loop = &loop;
        if (init_app(&a, argc, argv, resume, err, sizeof(err)) < 0 || a.o.help ||
            (!needs_prepare(&a) && open_session(&a, err, sizeof(err)) < 0)) {
                if (a.o.help)
                        print_help();
                else /* it may quote an image's entry or a path: escaped */
                        termout_message(stderr, "proctor: %s\n", err);
                close_session(&a);
                uv_run(&loop, UV_RUN_DEFAULT);
                uv_loop_close(&loop);
                resume_end(&a);
                return a.o.help ? 0 : 2;
        }
        /* resumed: the earlier conversation on screen, the prompt ready */
        if (a.resume != NULL && a.s != NULL) {
                a.screen = SCREEN_LIVE;
                a.typing = true;
        }
        if (terminal_check(err, sizeof(err)) < 0) {
                fprintf(stderr,
                        "proctor: %s; for a session without a screen use 'proctor run' "
                        "(try 'proctor --help')\n",
                        err);
                close_session(&a);
                uv_run(&loop, UV_RUN_DEFAULT);
                uv_loop_close(&loop);
                resume_end(&a);
                return 2;
        }
        app_current = &a;
        app_start_terminal(&a);
        if (a.s == NULL &&
            (rc = prepare_start(&a, a.o.image, a.o.image_max, a.o.image_cache_max, prepared)) < 0) {
                snprintf(a.fatal, sizeof(a.fatal), "cannot unpack the image: %s", strerror(-rc));
                a.exit_code = 2;
        } else if (a.s == NULL) {
                a.screen = SCREEN_PREPARING;
                uv_timer_start(&a.tick, on_tick, 250, 250);
        }
        draw_frame(&a);
        if (a.fatal[0] == '\0')
                uv_run(&loop, UV_RUN_DEFAULT);
        app_close_terminal(&a);
        if (a.fatal[0] != '\0') /* it may quote an image's entry or a path: escaped */
                termout_message(stderr, "proctor: %s\n", a.fatal);
        /* after the screen is back: wind the session down for good (an
         * execution that will not go dies with proctor, PR_SET_PDEATHSIG) */
        if (close_session(&a) == 0) {
                uv_run(&loop, UV_RUN_DEFAULT);
                uv_loop_close(&loop);
        }
        app_current = NULL;
        say_traces(&a);
        prompt_free(&a.prompt);
        approve_free(&a);
        free(a.queued);
        resume_end(&a);
        return a.exit_code;
}
