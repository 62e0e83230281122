/* session: wires a provider, the exec engine and the agent loop for one
 * session, frames its events with session.start and session.end, and
 * passes the operator's signal, pause and resume to its executions. */
#include "core/session/session.h"

#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "core/session/config.h"
#include "core/tools/dispatch.h"
#include "exec/image/image.h"
#include "core/view/exec_report.h"
#include "core/tools/mcp.h"
#include "core/tools/mcp_preview.h"
#include "core/session/options.h"
#include "core/tools/tools.h"

/* At most this many warm sandboxes wait at once; how many do follows the
 * calls (exec_warm_policy_next), within the session's bounds. */
#define SESSION_WARM_MAX 3

struct session {
        uv_loop_t *loop;
        struct bus *bus;
        struct session_opts opts;
        struct provider *provider;
        struct exec_engine *eng;
        struct tools_cache *cache;
        struct dispatch_ctx dx;
        struct agent *agent;
        struct mcp *mcp;
        char ws_problem[512]; /* session_workspace_problem, for ws_problem_mode */
        int ws_problem_mode;  /* -1: not looked at yet */
        /* Before the start, for the setup screen (session_mcp_preview):
         * the servers in the mode then chosen; earlier ones still going. */
        struct mcp_preview *preview, *old_previews[4];
        void (*preview_fn)(void *);
        void *preview_ud;
        bool mcp_starting;    /* its servers start; the first prompt waits */
        char *pending_prompt; /* that prompt */
        char id[48];
        struct exec_workspace *ws; /* opened once: every call gets this directory */
        struct image *img;         /* opts.image, opened */
        struct approval *approval;
        json_t *resumed;       /* session.start's resumed_from, or NULL */
        bool budget_defaulted; /* the memory budget follows the memory limit */
        const char *workspace; /* its path */
        char system[PATH_MAX + 512];
        bool started, ended;
        enum agent_status last;
        uint64_t t0_ms;
        void (*on_idle)(enum agent_status, void *);
        void *ud;
        /* the waiting warm sandboxes last reported (exec.warm) */
        unsigned warm_n;
        struct session_warm {
                bool ready;
                uint64_t mem_kib64; /* memory in 64 KiB steps */
        } warm[SESSION_WARM_MAX];
};

static void make_id(char *buf, size_t len)
{
        unsigned char r[3] = {0};
        time_t now = time(NULL);
        struct tm tm;

        (void)!getrandom(r, sizeof(r), 0);
        localtime_r(&now, &tm);
        snprintf(buf, len, "%04d%02d%02d-%02d%02d%02d-%02x%02x%02x", tm.tm_year + 1900,
                 tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, r[0], r[1], r[2]);
}

/* What the model is told about where its tools run. */
static void make_system_prompt(struct session *s)
{
        snprintf(s->system, sizeof(s->system),
                 "You are an agent working on the user's behalf with tools. The workspace is "
                 "%s. %s Prefer short, direct tool calls, and answer when you are done.",
                 s->opts.mode == EXEC_SANDBOX ? "/workspace" : s->workspace,
                 s->opts.mode == EXEC_SANDBOX
                     ? "Every tool call runs in a fresh, isolated sandbox without network: "
                       "only files in the workspace persist between calls."
                     : "Tools run directly on the user's machine; state persists between "
                       "calls.");
}

uint64_t session_default_budget(unsigned max_parallel, uint64_t memory_bytes, uint64_t host_total)
{
        uint64_t b = memory_bytes;

        if (max_parallel > 0 && b <= UINT64_MAX / max_parallel)
                b *= max_parallel;
        else if (max_parallel > 0)
                b = UINT64_MAX;
        if (host_total > 0 && b > host_total / 2)
                b = host_total / 2;
        return b;
}

/* MemTotal from /proc/meminfo, in bytes; 0 when it cannot be read. */
static uint64_t host_mem_total(void)
{
        FILE *f = fopen("/proc/meminfo", "re");
        unsigned long long kib = 0;
        char line[128];

        if (f == NULL)
                return 0;
        while (fgets(line, sizeof(line), f) != NULL)
                if (sscanf(line, "MemTotal: %llu kB", &kib) == 1)
                        break;
        fclose(f);
        return (uint64_t)kib * 1024;
}

int session_new(uv_loop_t *loop, struct bus *bus, const struct session_opts *o,
                struct session **out, char *err, size_t errlen)
{
        struct exec_engine_opts eo = {.prewarm = 1, .warm = SESSION_WARM_MAX};
        struct session *s = calloc(1, sizeof(*s));
        int rc;

        if (s == NULL)
                return -ENOMEM;
        if ((rc = exec_workspace_open(o->workspace, &s->ws, err, errlen)) < 0) {
                free(s);
                return rc;
        }
        s->workspace = exec_workspace_path(s->ws);
        if ((rc = config_protect_own(s->ws, o->config_file, err, errlen)) < 0) {
                exec_workspace_free(s->ws);
                free(s);
                return rc;
        }
        s->loop = loop;
        s->bus = bus;
        s->ws_problem_mode = -1;
        s->opts = *o;
        s->opts.workspace = s->workspace;
        s->opts.history = json_incref((json_t *)o->history);
        s->opts.resumed_id = s->opts.resumed_trace = NULL;
        if (o->resumed_trace != NULL &&
            (s->resumed =
                 json_pack("{s:s,s:s}", "session_id", o->resumed_id != NULL ? o->resumed_id : "",
                           "trace", o->resumed_trace)) == NULL) {
                rc = -ENOMEM;
                goto fail;
        }
        if (s->opts.max_parallel == 0)
                s->opts.max_parallel = SESSION_MAX_PARALLEL;
        s->budget_defaulted = s->opts.memory_budget == 0;
        if (s->opts.memory_budget == 0)
                s->opts.memory_budget = session_default_budget(
                    s->opts.max_parallel, s->opts.limits.memory_bytes, host_mem_total());
        make_id(s->id, sizeof(s->id));
        if ((s->approval = approval_new(o->approval)) == NULL) {
                rc = -ENOMEM;
                goto fail;
        }
        for (unsigned i = 0; i < o->ndeny; i++)
                if ((rc = approval_add_rule(s->approval, true, o->deny[i], "--deny", err, errlen)) <
                    0)
                        goto fail;
        for (unsigned i = 0; i < o->nallow; i++)
                if ((rc = approval_add_rule(s->approval, false, o->allow[i], "--allow", err,
                                            errlen)) < 0)
                        goto fail;
        rc = provider_open(loop, o->model, &o->provider, &s->provider, err, errlen);
        if (rc < 0)
                goto fail;
        eo.runtime = o->runtime;
        eo.docker_image = o->image;
        eo.session_id = s->id;
        if (o->image != NULL && o->runtime == NULL) {
                struct image_caps caps = {o->image_max, o->image_cache_max, o->image_progress,
                                          o->image_progress_ud, o->image_cancel};
                if ((rc = image_open(o->image, &caps, &s->img, err, errlen)) < 0)
                        goto fail;
                eo.image_root = image_root(s->img);
        }
        rc = exec_engine_new(loop, &eo, &s->eng, err, errlen);
        if (rc < 0)
                goto fail;
        s->cache = tools_cache_new();
        if (s->cache == NULL) {
                rc = -ENOMEM;
                goto fail;
        }
        *out = s;
        return 0;
fail:
        json_decref((json_t *)s->opts.history);
        json_decref(s->resumed);
        approval_free(s->approval);
        provider_free(s->provider);
        exec_workspace_free(s->ws);
        image_free(s->img);
        free(s);
        return rc;
}

unsigned session_cgroup_limits(struct session *s)
{
        return exec_engine_cgroup_limits(s->eng);
}

int session_protect(struct session *s, const char *path, char *err, size_t errlen)
{
        return exec_workspace_protect(s->ws, path, false, err, errlen);
}

static void preview_restart(struct session *s);

int session_set_mode(struct session *s, enum exec_isolation mode)
{
        bool flip = mode != s->opts.mode;

        if (s->started)
                return -EBUSY;
        if (flip)
                s->opts.mode_from = "the setup screen";
        s->opts.mode = mode;
        if (flip && s->preview != NULL)
                preview_restart(s);
        return 0;
}

int session_set_limits(struct session *s, const struct exec_limits *limits,
                       enum exec_ws_mode ws_mode)
{
        if (s->started)
                return -EBUSY;
        s->opts.limits = *limits;
        s->opts.ws_mode = ws_mode;
        if (s->budget_defaulted)
                s->opts.memory_budget = session_default_budget(
                    s->opts.max_parallel, s->opts.limits.memory_bytes, host_mem_total());
        return 0;
}

const struct exec_limits *session_limits(const struct session *s, enum exec_ws_mode *ws_mode)
{
        if (ws_mode != NULL)
                *ws_mode = s->opts.ws_mode;
        return &s->opts.limits;
}

enum exec_isolation session_mode(const struct session *s)
{
        return s->opts.mode;
}

void session_on_idle(struct session *s, void (*fn)(enum agent_status, void *), void *ud)
{
        s->on_idle = fn;
        s->ud = ud;
}

const char *session_id(const struct session *s)
{
        return s->id;
}

const char *session_workspace(const struct session *s)
{
        return s->workspace;
}

void session_bounds(const struct session *s, unsigned *max_parallel, uint64_t *memory_budget)
{
        *max_parallel = s->opts.max_parallel;
        *memory_budget = s->opts.memory_budget;
}

const char *session_model_label(const struct session *s)
{
        return s->provider->label;
}

static unsigned preview_live(const struct session *s)
{
        unsigned n = s->preview != NULL ? mcp_preview_live(s->preview) : 0, i;

        for (i = 0; i < sizeof(s->old_previews) / sizeof(s->old_previews[0]); i++)
                n += s->old_previews[i] != NULL ? mcp_preview_live(s->old_previews[i]) : 0;
        return n;
}

unsigned session_executions(const struct session *s)
{
        return exec_engine_live(s->eng) + preview_live(s);
}

bool session_started(const struct session *s)
{
        return s->started;
}

const struct agent_totals *session_totals(const struct session *s)
{
        return s->agent != NULL ? agent_totals(s->agent) : NULL;
}

bool session_busy(const struct session *s)
{
        return (s->agent != NULL && agent_busy(s->agent)) || s->pending_prompt != NULL;
}

struct mcp *session_mcp(const struct session *s)
{
        return s->mcp;
}

static const struct mcp *shown_mcp(const struct session *s)
{
        return s->mcp != NULL || s->preview == NULL ? s->mcp : mcp_preview_mcp(s->preview);
}

int session_mcp_line(const struct session *s, char *buf, size_t len, bool *network)
{
        return mcp_describe(s->opts.mcp_servers, shown_mcp(s), buf, len, network);
}

int session_mcp_briefs(const struct session *s, struct mcp_brief *out, int max)
{
        return mcp_briefs(s->opts.mcp_servers, shown_mcp(s), out, max);
}

/* The preview goes (stopped, its executions dying); one slot of the old
 * ones is freed for it, the oldest let go (its executions were killed
 * long ago: a mode flip takes a key press). */
static void preview_retire(struct session *s)
{
        size_t n = sizeof(s->old_previews) / sizeof(s->old_previews[0]), i;

        if (s->preview == NULL)
                return;
        mcp_preview_stop(s->preview);
        mcp_preview_free(s->old_previews[n - 1]);
        for (i = n - 1; i > 0; i--)
                s->old_previews[i] = s->old_previews[i - 1];
        s->old_previews[0] = s->preview;
        s->preview = NULL;
}

static void preview_restart(struct session *s)
{
        struct mcp_opts mo = {.mode = s->opts.mode,
                              .ws = s->ws,
                              .ws_mode = s->opts.ws_mode,
                              .limits = s->opts.limits};
        struct exec_engine_opts eo = {0};
        char err[512];

        preview_retire(s);
        if (s->img != NULL && s->opts.mode == EXEC_SANDBOX)
                eo.image_root = image_root(s->img);
        if (mcp_preview_new(s->loop, &eo, &mo, s->opts.mcp_servers, s->preview_fn, s->preview_ud,
                            &s->preview, err, sizeof(err)) < 0)
                s->preview = NULL; /* the line then names the servers alone */
}

void session_mcp_preview(struct session *s, void (*changed)(void *ud), void *ud)
{
        if (s->started || s->opts.mcp_servers == NULL)
                return;
        s->preview_fn = changed;
        s->preview_ud = ud;
        preview_restart(s);
}

void session_stop_servers(struct session *s)
{
        mcp_stop(s->mcp);
        preview_retire(s);
}

unsigned session_server_executions(const struct session *s)
{
        return mcp_live(s->mcp) + preview_live(s);
}

static uint64_t now_ms(void)
{
        struct timespec ts;

        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

static void on_end(enum agent_status st, void *ud);

static void on_mcp_ready(void *ud)
{
        struct session *s = ud;
        char *text = s->pending_prompt;

        s->mcp_starting = false;
        s->pending_prompt = NULL;
        if (text != NULL && agent_prompt(s->agent, text, on_end, s) < 0)
                on_end(AGENT_FAILED, s);
        free(text);
}

/* Servers are started in the session's mode, which is fixed by now. */
static int start_mcp(struct session *s)
{
        struct mcp_opts mo = {.eng = s->eng,
                              .bus = s->bus,
                              .mode = s->opts.mode,
                              .ws = s->ws,
                              .ws_mode = s->opts.ws_mode,
                              .limits = s->opts.limits};
        char err[512];
        int rc;

        rc = mcp_new(s->loop, &mo, s->opts.mcp_servers, &s->mcp, err, sizeof(err));
        if (rc < 0) {
                /* the config was checked when it was read: this is memory */
                fprintf(stderr, "proctor: MCP: %s\n", err);
                return rc;
        }
        s->dx.mcp = s->mcp;
        return 0;
}

/* What session.start says of the image: everything shown, even what is not
 * applied (User, WorkingDir). */
static json_t *image_json(const struct image *img)
{
        json_t *env;

        if (img == NULL)
                return json_null();
        env = json_array();
        for (char *const *e = image_env(img); *e != NULL; e++)
                json_array_append_new(env, json_string(*e));
        return json_pack("{s:s,s:s,s:o,s:s,s:s}", "ref", image_ref(img), "digest",
                         image_digest(img), "env", env, "workdir", image_workdir(img), "user",
                         image_user(img));
}

static json_t *with_image(json_t *ev, const struct image *img)
{
        json_object_set_new(ev, "image", image_json(img));
        return ev;
}

/* The waiting warm sandboxes changed: exec.warm says which wait now, each
 * with its memory, when that differs from what it said last. */
static void on_warm_change(void *ud)
{
        struct session *s = ud;
        struct exec_stats st[SESSION_WARM_MAX];
        bool ready[SESSION_WARM_MAX];
        struct session_warm now[SESSION_WARM_MAX];
        unsigned n = exec_engine_warm_list(s->eng, st, ready, SESSION_WARM_MAX), i;
        json_t *list;

        if (n > SESSION_WARM_MAX)
                n = SESSION_WARM_MAX;
        for (i = 0; i < n; i++) {
                now[i].ready = ready[i];
                now[i].mem_kib64 = st[i].mem_bytes >> 16;
        }
        if (n == s->warm_n && memcmp(now, s->warm, n * sizeof(now[0])) == 0)
                return;
        s->warm_n = n;
        memcpy(s->warm, now, n * sizeof(now[0]));
        if ((list = json_array()) == NULL)
                return;
        for (i = 0; i < n; i++)
                json_array_append_new(list, json_pack("{s:s,s:I,s:I}", "state",
                                                      ready[i] ? "ready" : "starting", "mem_bytes",
                                                      (json_int_t)st[i].mem_bytes, "cpu_ms",
                                                      (json_int_t)st[i].cpu_ms));
        bus_emit(s->bus, "exec.warm", json_pack("{s:o}", "waiting", list));
}

const char *session_workspace_problem(struct session *s)
{
        if (s->ws_problem_mode != (int)s->opts.ws_mode) {
                s->ws_problem_mode = (int)s->opts.ws_mode;
                s->ws_problem[0] = '\0';
                exec_workspace_usable(s->ws, s->opts.ws_mode, s->opts.runtime == NULL,
                                      s->ws_problem, sizeof(s->ws_problem));
        }
        return s->ws_problem[0] != '\0' ? s->ws_problem : NULL;
}

/* session.start's "approval": the policy and the rules, in their order. */
static json_t *with_approval(struct session *s, json_t *ev)
{
        json_t *rules = json_array();

        for (size_t i = 0; i < approval_rule_count(s->approval); i++) {
                const struct approval_rule *r = approval_rule_at(s->approval, i);
                json_array_append_new(rules,
                                      json_pack("{s:s,s:s,s:s}", "rule", r->text, "decision",
                                                r->deny ? "deny" : "allow", "from", r->from));
        }
        json_object_set_new(ev, "approval",
                            json_pack("{s:s,s:o}", "policy",
                                      approval_policy_name(approval_policy(s->approval)), "rules",
                                      rules));
        return ev;
}

/* session.start's "resumed_from", for a resumed session. */
static json_t *with_resumed(struct session *s, json_t *ev)
{
        if (s->resumed != NULL) {
                json_object_set(ev, "resumed_from", s->resumed);
                json_object_set_new(ev, "resumed_messages",
                                    json_integer((json_int_t)json_array_size(s->opts.history)));
        }
        return ev;
}

struct approval *session_approval(struct session *s)
{
        return s->approval;
}

int session_approve(struct session *s, const char *call_id, bool allow, const char *by,
                    const char *reason, const char *arguments, const char *rule_added, char *err,
                    size_t errlen)
{
        int rc;

        if (s->agent == NULL || agent_waiting(s->agent) == 0) {
                snprintf(err, errlen, "no call '%.200s' waits for approval", call_id);
                return -ENOENT;
        }
        if (rule_added != NULL && (rc = approval_add_rule(s->approval, !allow, rule_added,
                                                          "the operator", err, errlen)) < 0)
                return rc;
        rc =
            agent_approve(s->agent, call_id, allow, by, reason, arguments, rule_added, err, errlen);
        if (rc < 0 && rule_added != NULL)
                approval_drop_last(s->approval); /* nothing was decided */
        return rc;
}

unsigned session_waiting(const struct session *s)
{
        return s->agent != NULL ? agent_waiting(s->agent) : 0;
}

/* The mode is fixed from here on. */
static int start(struct session *s)
{
        struct agent_config ac = {0};
        json_t *limits;
        int rc;

        if (s->opts.mode == EXEC_SANDBOX && session_workspace_problem(s) != NULL)
                return -EACCES;
        s->dx.eng = s->eng;
        s->dx.bus = s->bus;
        s->dx.mode = s->opts.mode;
        s->dx.workspace = s->workspace;
        s->dx.ws = s->ws;
        s->dx.ws_mode = s->opts.ws_mode;
        s->dx.limits = s->opts.limits;
        if (s->img != NULL && s->opts.mode == EXEC_SANDBOX) {
                s->dx.image = image_ref(s->img);
                s->dx.env_extra = image_env(s->img);
        } else if (s->opts.runtime != NULL && s->opts.mode == EXEC_SANDBOX) {
                s->dx.image = s->opts.image;
        }
        s->dx.cache = s->cache;
        s->dx.max_parallel = s->opts.max_parallel;
        s->dx.memory_budget = s->opts.memory_budget;
        /* Waiting warm sandboxes count against the session's bounds. */
        exec_engine_set_warm_room(s->eng, dispatch_warm_room, &s->dx);
        exec_engine_set_warm_watch(s->eng, on_warm_change, s);
        make_system_prompt(s);
        ac.provider = s->provider;
        ac.bus = s->bus;
        ac.dx = &s->dx;
        ac.max_iterations = s->opts.max_iterations;
        ac.system_prompt = s->system;
        ac.approval = s->approval;
        ac.can_ask = s->opts.can_ask;
        ac.history = s->opts.history;
        preview_retire(s); /* the session's servers are its own */
        if (s->opts.mcp_servers != NULL && (rc = start_mcp(s)) < 0)
                return rc;
        if (s->mcp != NULL)
                ac.tools = mcp_tools(s->mcp);
        s->agent = agent_new(&ac);
        if (s->agent == NULL)
                return -ENOMEM;
        s->started = true;
        s->t0_ms = now_ms();
        limits = exec_report_limits_json(&s->opts.limits);
        json_object_set_new(limits, "max_parallel", json_integer(s->opts.max_parallel));
        json_object_set_new(limits, "memory_budget_bytes",
                            json_integer((json_int_t)s->opts.memory_budget));
        bus_emit(
            s->bus, "session.start",
            with_resumed(
                s,
                with_approval(
                    s, with_image(
                           json_pack(
                               "{s:s,s:s,s:s,s:s,s:b,s:s,s:s,s:o,s:o,s:I,s:s}", "session_id", s->id,
                               "mode", options_mode_name(s->opts.mode), "mode_from",
                               s->opts.mode_from != NULL ? s->opts.mode_from : "default", "model",
                               s->provider->label, "scripted", s->provider->scripted, "workspace",
                               s->workspace, "workspace_mode", exec_ws_mode_name(s->opts.ws_mode),
                               "limits", limits, "limits_per_process",
                               exec_report_fallback_json(s->opts.mode == EXEC_SANDBOX,
                                                         session_cgroup_limits(s)),
                               "max_iterations",
                               (json_int_t)(s->opts.max_iterations ? s->opts.max_iterations : 100),
                               "version", PROCTOR_VERSION),
                           session_image(s)))));
        if (s->mcp != NULL && mcp_server_count(s->mcp) > 0) {
                s->mcp_starting = true;
                mcp_start(s->mcp, on_mcp_ready, s);
        }
        return 0;
}

const struct image *session_image(const struct session *s)
{
        return s->opts.mode == EXEC_SANDBOX ? s->img : NULL;
}

static void on_end(enum agent_status st, void *ud)
{
        struct session *s = ud;

        s->last = st;
        if (s->on_idle != NULL)
                s->on_idle(st, s->ud);
}

int session_prompt(struct session *s, const char *text)
{
        int rc;

        if (session_busy(s))
                return -EBUSY;
        if (s->ended)
                return -ESHUTDOWN;
        if (!s->started && (rc = start(s)) < 0)
                return rc;
        if (s->mcp_starting) {
                s->pending_prompt = strdup(text);
                return s->pending_prompt != NULL ? 0 : -ENOMEM;
        }
        return agent_prompt(s->agent, text, on_end, s);
}

void session_interrupt(struct session *s)
{
        if (s->pending_prompt != NULL) {
                /* still waiting for the MCP servers: the prompt never ran */
                free(s->pending_prompt);
                s->pending_prompt = NULL;
                on_end(AGENT_INTERRUPTED, s);
                return;
        }
        if (s->agent != NULL)
                agent_interrupt(s->agent);
}

int session_kill_exec(struct session *s, uint64_t exec_id)
{
        if (s->mcp != NULL && mcp_kill_exec(s->mcp, exec_id)) {
                bus_emit(s->bus, "operator.kill",
                         json_pack("{s:I}", "exec_id", (json_int_t)exec_id));
                return 0;
        }
        return s->agent != NULL ? agent_kill_exec(s->agent, exec_id) : -ESRCH;
}

/* The session's own execution `exec_id`, still running, or NULL. */
static struct exec *live_exec(struct session *s, uint64_t exec_id)
{
        return s->eng != NULL ? exec_engine_find(s->eng, exec_id) : NULL;
}

int session_signal_exec(struct session *s, uint64_t exec_id, int sig)
{
        struct exec *e = live_exec(s, exec_id);
        const char *name = sig > 0 && sig < NSIG ? sigabbrev_np(sig) : NULL;
        char sname[16];
        int rc;

        if (e == NULL)
                return -ESRCH;
        if ((rc = exec_signal(e, sig)) < 0)
                return rc;
        if (name != NULL)
                snprintf(sname, sizeof(sname), "SIG%s", name);
        else
                snprintf(sname, sizeof(sname), "SIGRT%d", sig - SIGRTMIN);
        bus_emit(s->bus, "operator.signal",
                 json_pack("{s:I,s:i,s:s}", "exec_id", (json_int_t)exec_id, "signal", sig, "name",
                           sname));
        return 0;
}

/* Pauses (pause true) or resumes one execution and says so on the bus. */
static int pause_exec(struct session *s, uint64_t exec_id, bool pause)
{
        struct exec *e = live_exec(s, exec_id);
        enum exec_pause_how how = 0;
        int rc;

        if (e == NULL)
                return -ESRCH;
        rc = pause ? exec_pause(e, &how) : exec_resume(e, &how);
        if (rc < 0)
                return rc;
        bus_emit(s->bus, pause ? "exec.pause" : "exec.resume",
                 json_pack("{s:I,s:s}", "exec_id", (json_int_t)exec_id, "how",
                           exec_pause_how_name(how)));
        return 0;
}

int session_pause_exec(struct session *s, uint64_t exec_id)
{
        return pause_exec(s, exec_id, true);
}

int session_resume_exec(struct session *s, uint64_t exec_id)
{
        return pause_exec(s, exec_id, false);
}

unsigned session_kill_all(struct session *s, unsigned *cancelled)
{
        if (cancelled != NULL)
                *cancelled = 0;
        return s->agent != NULL ? agent_kill_all(s->agent, cancelled) : 0;
}

static bool no_warm_room(void *ud, unsigned idle)
{
        return false;
}

void session_end(struct session *s)
{
        const struct agent_totals *t;

        if (!s->started || s->ended)
                return;
        s->ended = true;
        /* No call will take a warm sandbox any more: none waits, none is made. */
        exec_engine_set_warm_room(s->eng, no_warm_room, NULL);
        exec_engine_warm_trim(s->eng, 0);
        t = agent_totals(s->agent);
        bus_emit(s->bus, "session.end",
                 json_pack("{s:s,s:I,s:I,s:{s:I,s:I},s:I}", "status", agent_status_name(s->last),
                           "turns", (json_int_t)t->turns, "tool_calls", (json_int_t)t->tool_calls,
                           "usage", "prompt_tokens", (json_int_t)t->prompt_tokens,
                           "completion_tokens", (json_int_t)t->completion_tokens, "duration_ms",
                           (json_int_t)(now_ms() - s->t0_ms)));
}

void session_free(struct session *s)
{
        if (s == NULL)
                return;
        /* Executions of a running turn call back into the agent. */
        if (session_busy(s))
                abort();
        /* executions still being torn down outlive the session */
        dispatch_close(&s->dx);
        free(s->pending_prompt);
        mcp_free(s->mcp);
        preview_retire(s);
        for (size_t i = 0; i < sizeof(s->old_previews) / sizeof(s->old_previews[0]); i++)
                mcp_preview_free(s->old_previews[i]);
        exec_engine_free(s->eng);
        agent_free(s->agent);
        provider_free(s->provider);
        tools_cache_free(s->cache);
        exec_workspace_free(s->ws);
        image_free(s->img);
        approval_free(s->approval);
        json_decref((json_t *)s->opts.history);
        json_decref(s->resumed);
        free(s);
}
