/* agent: the turn loop as a small state machine driven by callbacks:
 * model call -> tool calls -> results -> next turn. It owns the
 * conversation and keeps it consistent: an interrupted call still gets a
 * result, and a cancelled model turn leaves no half message behind. */
#include "core/session/agent.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/tools/tools.h"

#define HISTORY 6 /* tool-call signatures remembered by the repetition guard */

struct call {
        char *id, *name, *arguments;
        json_t *args; /* validated arguments, NULL when invalid */
        struct tool_run *run;
        int wait_for; /* index of an earlier call on the same path or key, or -1 */
        bool started, done, ok;
        bool cancelled; /* never started: interrupt or kill-all came first */
        bool waiting;   /* for the operator's approval (approval.request) */
        uint64_t asked_ms;
        char *edited; /* the arguments as the operator edited them */
        char *result; /* what the model reads, capped */
};

struct agent {
        struct agent_config cfg;
        json_t *messages;
        bool busy, in_model, interrupted, dispatching;
        struct call *calls;
        size_t ncalls, pending;
        void (*on_end)(enum agent_status, void *);
        void *ud;
        struct agent_totals totals;
        char *history[HISTORY];
        /* Hashes of the call ids the session has seen (open addressing; 0:
         * empty): some servers number calls per answer ("call_0" every
         * turn), and a reused id would merge two calls. */
        uint64_t *ids;
        size_t nids, ids_cap;
        unsigned long long renamed;
        const char *note;      /* for the model after this turn's results */
        uint64_t prompt_turn0; /* totals.turns when the current prompt came */
};

static void start_turn(struct agent *a);
static void start_ready_calls(struct agent *a);
static uint64_t id_hash(const char *s);
static bool id_add(struct agent *a, uint64_t h);

const char *agent_status_name(enum agent_status s)
{
        static const char *const names[] = {"completed", "interrupted", "failed", "max_iterations"};
        return (unsigned)s < 4 ? names[s] : "unknown";
}

/* The conversation of a resumed session goes on: its messages follow the
 * system prompt, and its call ids count as seen, so that a server that
 * numbers calls afresh cannot reuse one. */
static void seed(struct agent *a, const json_t *history)
{
        size_t i, j;
        json_t *m, *c;

        json_array_foreach (history, i, m) {
                const char *role = json_string_value(json_object_get(m, "role"));
                if (role == NULL || strcmp(role, "system") == 0)
                        continue;
                json_array_append_new(a->messages, json_deep_copy(m));
                json_array_foreach (json_object_get(m, "tool_calls"), j, c) {
                        const char *id = json_string_value(json_object_get(c, "id"));
                        if (id != NULL)
                                id_add(a, id_hash(id));
                }
        }
}

struct agent *agent_new(const struct agent_config *cfg)
{
        struct agent *a = calloc(1, sizeof(*a));

        if (a == NULL)
                return NULL;
        a->cfg = *cfg;
        if (a->cfg.max_iterations == 0)
                a->cfg.max_iterations = 100;
        if (a->cfg.output_cap == 0)
                a->cfg.output_cap = TOOLS_OUTPUT_CAP;
        a->messages = json_array();
        if (cfg->system_prompt != NULL)
                json_array_append_new(a->messages, json_pack("{s:s,s:s}", "role", "system",
                                                             "content", cfg->system_prompt));
        seed(a, cfg->history);
        return a;
}

static void free_calls(struct agent *a)
{
        size_t i;

        for (i = 0; i < a->ncalls; i++) {
                free(a->calls[i].id);
                free(a->calls[i].name);
                free(a->calls[i].arguments);
                free(a->calls[i].result);
                free(a->calls[i].edited);
                json_decref(a->calls[i].args);
        }
        free(a->calls);
        a->calls = NULL;
        a->ncalls = 0;
}

void agent_free(struct agent *a)
{
        size_t i;

        if (a == NULL)
                return;
        free_calls(a);
        for (i = 0; i < HISTORY; i++)
                free(a->history[i]);
        json_decref(a->messages);
        free(a->ids);
        free(a);
}

bool agent_busy(const struct agent *a)
{
        return a->busy;
}

const struct agent_totals *agent_totals(const struct agent *a)
{
        return &a->totals;
}

static void emit(struct agent *a, const char *type, json_t *fields)
{
        bus_emit(a->cfg.bus, type, fields);
}

static void end_sequence(struct agent *a, enum agent_status st)
{
        a->busy = false;
        a->in_model = false;
        free_calls(a);
        if (a->on_end != NULL)
                a->on_end(st, a->ud);
}

static void end_turn(struct agent *a, enum agent_status st, bool sequence_over)
{
        emit(a, "turn.end", json_pack("{s:I}", "turn", (json_int_t)a->totals.turns));
        if (sequence_over)
                end_sequence(a, st);
}

int agent_prompt(struct agent *a, const char *text, void (*on_end)(enum agent_status, void *),
                 void *ud)
{
        if (a->busy)
                return -EBUSY;
        a->busy = true;
        a->interrupted = false;
        a->prompt_turn0 = a->totals.turns;
        a->on_end = on_end;
        a->ud = ud;
        json_array_append_new(a->messages, json_pack("{s:s,s:s}", "role", "user", "content", text));
        emit(a, "user.message", json_pack("{s:s}", "text", text));
        start_turn(a);
        return 0;
}

/* ---- the model's turn ---- */

static void on_delta(const char *text, size_t n, void *ud)
{
        emit(ud, "model.delta", json_pack("{s:o}", "text", bus_string(text, n)));
}

/* A retried answer differs from what was streamed: the last `bytes` of
 * it no longer hold, and every printer takes them back. */
static void on_discard(size_t bytes, void *ud)
{
        emit(ud, "model.discard", json_pack("{s:I}", "bytes", (json_int_t)bytes));
}

static void on_error(const char *message, int http_status, int64_t retry_in_ms, bool final,
                     void *ud)
{
        struct agent *a = ud;
        /* an event cannot carry text that is not UTF-8: the rest of the
         * error still goes out */
        json_t *text = json_string(message);

        emit(a, "model.error",
             json_pack("{s:o,s:i,s:I,s:b}", "message",
                       text != NULL ? text : json_string("(the error's text is not UTF-8)"),
                       "http_status", http_status, "retry_in_ms",
                       (json_int_t)(final ? 0 : retry_in_ms), "final", final));
        if (final) {
                a->in_model = false;
                end_turn(a, AGENT_FAILED, true);
        }
}

static json_t *usage_json(const struct chat_usage *u)
{
        json_t *j = json_object();

        if (u->prompt_tokens >= 0)
                json_object_set_new(j, "prompt_tokens", json_integer(u->prompt_tokens));
        if (u->completion_tokens >= 0)
                json_object_set_new(j, "completion_tokens", json_integer(u->completion_tokens));
        return j;
}

static void emit_message(struct agent *a, const struct chat_message *m)
{
        json_t *calls = json_array();
        size_t i;

        for (i = 0; i < m->ncalls; i++)
                json_array_append_new(calls, json_pack("{s:s,s:s,s:s}", "id", m->calls[i].id,
                                                       "name", m->calls[i].name, "arguments",
                                                       m->calls[i].arguments));
        emit(a, "model.message",
             json_pack("{s:o,s:o,s:o,s:s?,s:b}", "content",
                       bus_string(m->content, strlen(m->content)), "tool_calls", calls, "usage",
                       usage_json(&m->usage), "finish_reason", m->finish_reason, "refusal",
                       m->refusal));
}

/* An answer the provider stopped short (the token limit, its content
 * filter) is not a completed one, however cleanly it streamed. */
static bool cut_short(const struct chat_message *m)
{
        return m->finish_reason != NULL && (strcmp(m->finish_reason, "length") == 0 ||
                                            strcmp(m->finish_reason, "content_filter") == 0);
}

/* The repetition guard: three identical calls in a row, or a short cycle
 * (ABAB, ABCABC) repeated, gets a note to the model instead of a loop. */
static const char *check_repetition(struct agent *a, const struct call *c)
{
        size_t len = strlen(c->name) + strlen(c->arguments) + 2;
        char *sig = malloc(len);
        char **h = a->history;
        int p;

        if (sig == NULL)
                return NULL;
        snprintf(sig, len, "%s\x1f%s", c->name, c->arguments);
        free(h[0]);
        memmove(h, h + 1, (HISTORY - 1) * sizeof(*h));
        h[HISTORY - 1] = sig;
        if (h[HISTORY - 3] != NULL && strcmp(h[HISTORY - 3], sig) == 0 &&
            strcmp(h[HISTORY - 2], sig) == 0)
                return "proctor: you have made the same tool call three times in a row; its "
                       "result will not change. Try something different, or answer with what "
                       "you have.";
        for (p = 2; p <= 3; p++) {
                int i, same = h[HISTORY - 2 * p] != NULL;
                for (i = 0; same && i < p; i++)
                        same = strcmp(h[HISTORY - 1 - i], h[HISTORY - 1 - i - p]) == 0;
                if (same)
                        return "proctor: you are repeating the same short cycle of tool calls; "
                               "the results will not change. Try something different, or "
                               "answer with what you have.";
        }
        return NULL;
}

/* A call that names the same path or cache key as an earlier one in the
 * message waits for it; all others run at once. */
static int dependency(struct agent *a, size_t i)
{
        const char *key = NULL;
        size_t j;

        if (a->calls[i].args != NULL) {
                json_t *k = json_object_get(a->calls[i].args, "path");
                if (k == NULL)
                        k = json_object_get(a->calls[i].args, "key");
                key = json_string_value(k);
        }
        for (j = i; key != NULL && j-- > 0;) {
                json_t *k;
                if (a->calls[j].args == NULL)
                        continue;
                k = json_object_get(a->calls[j].args, "path");
                if (k == NULL)
                        k = json_object_get(a->calls[j].args, "key");
                if (json_is_string(k) && strcmp(json_string_value(k), key) == 0)
                        return (int)j;
        }
        return -1;
}

static uint64_t id_hash(const char *s)
{
        uint64_t h = 1469598103934665603ull;

        for (; *s != '\0'; s++)
                h = (h ^ (unsigned char)*s) * 1099511628211ull;
        return h != 0 ? h : 1;
}

/* Adds h to the set; false when it was there already (or no room could be
 * had: then every id counts as new, as before). */
static bool id_add(struct agent *a, uint64_t h)
{
        size_t i;

        if (2 * (a->nids + 1) > a->ids_cap) {
                size_t cap = a->ids_cap ? 2 * a->ids_cap : 64;
                uint64_t *n = calloc(cap, sizeof(*n)), *old = a->ids;
                if (n == NULL)
                        return true;
                for (i = 0; i < a->ids_cap; i++)
                        for (size_t j = old[i] % cap; old[i] != 0; j = (j + 1) % cap)
                                if (n[j] == 0) {
                                        n[j] = old[i];
                                        break;
                                }
                free(old);
                a->ids = n;
                a->ids_cap = cap;
        }
        for (i = h % a->ids_cap; a->ids[i] != 0; i = (i + 1) % a->ids_cap)
                if (a->ids[i] == h)
                        return false;
        a->ids[i] = h;
        a->nids++;
        return true;
}

/* A call id seen before in the session gets a unique one, as a missing id
 * does, before anything records it. */
static void unique_call_ids(struct agent *a, struct chat_message *m)
{
        for (size_t i = 0; i < m->ncalls; i++) {
                char id[48], *dup;
                if (id_add(a, id_hash(m->calls[i].id)))
                        continue;
                do
                        snprintf(id, sizeof(id), "call_r%llu", ++a->renamed);
                while (!id_add(a, id_hash(id)));
                if ((dup = strdup(id)) != NULL) {
                        free(m->calls[i].id);
                        m->calls[i].id = dup;
                }
        }
}

static void on_message(struct chat_message *m, void *ud)
{
        struct agent *a = ud;
        size_t i;

        a->in_model = false;
        if (m->usage.prompt_tokens > 0)
                a->totals.prompt_tokens += m->usage.prompt_tokens;
        if (m->usage.completion_tokens > 0)
                a->totals.completion_tokens += m->usage.completion_tokens;
        unique_call_ids(a, m);
        emit_message(a, m);
        json_array_append_new(a->messages, chat_message_json(m));
        if (m->ncalls == 0) {
                enum agent_status st = cut_short(m) ? AGENT_FAILED : AGENT_COMPLETED;

                chat_message_free(m);
                free(m);
                end_turn(a, st, true);
                return;
        }
        a->calls = calloc(m->ncalls, sizeof(*a->calls));
        a->ncalls = a->calls != NULL ? m->ncalls : 0;
        a->note = NULL;
        for (i = 0; i < a->ncalls; i++) {
                struct call *c = &a->calls[i];
                char err[512];
                c->id = strdup(m->calls[i].id);
                c->name = strdup(m->calls[i].name);
                c->arguments = strdup(m->calls[i].arguments);
                emit(a, "tool.call",
                     json_pack("{s:s,s:s,s:s}", "call_id", c->id, "name", c->name, "arguments",
                               c->arguments));
                a->totals.tool_calls++;
                if (tools_parse_args(c->name, c->arguments, &c->args, err, sizeof(err)) < 0) {
                        c->args = NULL;
                        c->result = strdup(err);
                }
                if (a->note == NULL)
                        a->note = check_repetition(a, c);
                c->wait_for = dependency(a, i);
        }
        chat_message_free(m);
        free(m);
        a->pending = a->ncalls;
        start_ready_calls(a);
}

static void start_turn(struct agent *a)
{
        static const struct provider_callbacks cbs = {on_delta, on_message, on_error, on_discard};
        struct provider *p = a->cfg.provider;
        int rc;

        if (a->interrupted) {
                end_sequence(a, AGENT_INTERRUPTED);
                return;
        }
        if (p->scripted && p->exhausted && a->totals.turns == a->prompt_turn0) {
                /* a follow-up after the last line: nothing will answer it */
                emit(a, "model.error",
                     json_pack("{s:s,s:i,s:I,s:b}", "message",
                               "the scripted model has no turns left to answer this; a new "
                               "session plays the script again",
                               "http_status", 0, "retry_in_ms", (json_int_t)0, "final", true));
                end_sequence(a, AGENT_FAILED);
                return;
        }
        if (p->scripted && p->exhausted) {
                end_sequence(a, AGENT_COMPLETED);
                return;
        }
        if (a->totals.turns >= a->cfg.max_iterations) {
                end_sequence(a, AGENT_MAX_ITERATIONS);
                return;
        }
        a->totals.turns++;
        emit(a, "turn.start", json_pack("{s:I}", "turn", (json_int_t)a->totals.turns));
        a->in_model = true;
        rc = p->ops->request(p, a->messages, a->cfg.tools != NULL ? a->cfg.tools : tools_schemas(),
                             &cbs, a);
        if (rc < 0) {
                char msg[128];
                snprintf(msg, sizeof(msg), "the model could not be called: %s", strerror(-rc));
                on_error(msg, 0, 0, true, a);
        }
}

/* ---- tool calls ---- */

static void finish_turn(struct agent *a)
{
        size_t i;

        for (i = 0; i < a->ncalls; i++)
                json_array_append_new(a->messages,
                                      json_pack("{s:s,s:s,s:s}", "role", "tool", "tool_call_id",
                                                a->calls[i].id, "content", a->calls[i].result));
        if (a->note != NULL && !a->interrupted) {
                json_array_append_new(a->messages,
                                      json_pack("{s:s,s:s}", "role", "user", "content", a->note));
                emit(a, "session.note", json_pack("{s:s}", "text", a->note));
        }
        free_calls(a);
        end_turn(a, AGENT_INTERRUPTED, a->interrupted);
        if (a->busy)
                start_turn(a);
}

static void complete_call(struct agent *a, struct call *c, bool ok, const char *text, size_t len,
                          int exit_code, uint64_t duration_ms)
{
        size_t out_len;
        bool truncated;
        char *capped, *noted = NULL;
        json_t *ev;

        /* the model asked for other arguments than those that ran */
        if (c->edited != NULL &&
            asprintf(&noted, "[the operator edited this call's arguments before it ran: %s]\n%.*s",
                     c->edited, (int)len, text) >= 0) {
                text = noted;
                len = strlen(noted);
        }
        capped = tools_cap(text, len, a->cfg.output_cap, &out_len, &truncated);
        free(noted);

        free(c->result);
        c->result = capped != NULL ? capped : strdup("");
        c->ok = ok;
        c->done = true;
        c->run = NULL;
        ev = json_pack("{s:s,s:b,s:o,s:i,s:I,s:b}", "call_id", c->id, "ok", ok, "output",
                       bus_string(c->result, strlen(c->result)), "exit_code", exit_code,
                       "duration_ms", (json_int_t)duration_ms, "truncated", truncated);
        if (c->cancelled)
                json_object_set_new(ev, "cancelled", json_true());
        emit(a, "tool.result", ev);
        a->pending--;
        if (a->dispatching)
                return;
        if (a->pending == 0)
                finish_turn(a);
        else
                start_ready_calls(a);
}

static void on_done(struct tool_run *r, const struct tool_outcome *o, void *ud)
{
        struct agent *a = ud;
        size_t i;

        for (i = 0; i < a->ncalls && a->calls[i].run != r; i++)
                ;
        if (i < a->ncalls) {
                a->calls[i].cancelled = o->cancelled;
                complete_call(a, &a->calls[i], o->ok, o->output, o->len, o->exit_code,
                              o->duration_ms);
        }
}

static void dispatch_call(struct agent *a, struct call *c)
{
        char err[512];

        /* dispatch_start sets c->run before a builtin completes at once */
        if (dispatch_start(a->cfg.dx, c->id, c->name, c->args, on_done, a, &c->run, err,
                           sizeof(err)) < 0) {
                char msg[600];
                c->run = NULL;
                snprintf(msg, sizeof(msg), "the tool could not be started: %s", err);
                complete_call(a, c, false, msg, strlen(msg), -1, 0);
        }
}

static uint64_t mono_ms(void)
{
        struct timespec ts;

        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

/* approval.decision: who decided, and how long the call waited. */
static void emit_decision(struct agent *a, struct call *c, bool allow, const char *by,
                          const struct approval_rule *rule, const char *reason,
                          const char *rule_added)
{
        json_t *ev = json_pack("{s:s,s:s,s:s,s:I}", "call_id", c->id, "decision",
                               allow ? "allow" : "deny", "by", by, "waited_ms",
                               (json_int_t)(c->waiting ? mono_ms() - c->asked_ms : 0));

        if (rule != NULL)
                json_object_set_new(ev, "rule", json_string(rule->text));
        if (reason != NULL && reason[0] != '\0')
                json_object_set_new(ev, "reason", bus_string(reason, strlen(reason)));
        if (c->edited != NULL)
                json_object_set_new(ev, "arguments", bus_string(c->edited, strlen(c->edited)));
        if (rule_added != NULL)
                json_object_set_new(ev, "rule_added", json_string(rule_added));
        emit(a, "approval.decision", ev);
}

static void deny_by_rule(struct agent *a, struct call *c, const struct approval_rule *rule)
{
        char msg[700];

        emit_decision(a, c, false, "rule", rule, NULL, NULL);
        c->waiting = false;
        snprintf(msg, sizeof(msg), "denied by the operator's rule '%.600s': this call was not run",
                 rule->text);
        complete_call(a, c, false, msg, strlen(msg), -1, 0);
}

/* The limits the call would run under, as the operator sees them before
 * it runs: an execution's (a builtin in local mode has none), an MCP
 * call's none of its own. */
static json_t *call_limits(struct agent *a, struct call *c)
{
        const struct dispatch_ctx *dx = a->cfg.dx;
        struct exec_limits lim;
        char err[200];

        if (strncmp(c->name, TOOLS_MCP_PREFIX, strlen(TOOLS_MCP_PREFIX)) == 0 ||
            (dx->mode == EXEC_LOCAL && !tools_runs_process(c->name)) ||
            dispatch_call_limits(&dx->limits, c->args, &lim, err, sizeof(err)) < 0)
                return json_object();
        if (dx->mode == EXEC_LOCAL)
                return json_pack("{s:I}", "timeout_ms", (json_int_t)lim.timeout_ms);
        return json_pack("{s:I,s:I,s:I,s:I}", "timeout_ms", (json_int_t)lim.timeout_ms, "cpu_ms",
                         (json_int_t)lim.cpu_ms, "memory_bytes", (json_int_t)lim.memory_bytes,
                         "pids", (json_int_t)lim.pids);
}

/* The policy and the rules decide, or the call waits for the operator:
 * true when it may start now. */
static bool approved(struct agent *a, struct call *c)
{
        struct approval_call ac = {c->name, c->args, a->cfg.dx->mode == EXEC_LOCAL, false};
        struct approval_result res;
        char where[300], msg[700];

        if (a->cfg.approval == NULL)
                return true;
        ac.mcp_reaches_host = dispatch_mcp_reaches_host(a->cfg.dx, c->name);
        approval_check(a->cfg.approval, &ac, &res);
        if (res.verdict == APPROVAL_ALLOW) {
                if (res.rule != NULL)
                        emit_decision(a, c, true, "rule", res.rule, NULL, NULL);
                return true;
        }
        if (res.verdict == APPROVAL_DENY) {
                deny_by_rule(a, c, res.rule);
                return false;
        }
        dispatch_where(a->cfg.dx, c->name, where, sizeof(where));
        emit(a, "approval.request",
             json_pack("{s:s,s:s,s:s,s:s,s:s,s:o}", "call_id", c->id, "tool", c->name, "arguments",
                       c->arguments, "where", where, "asked_by", res.asked_by, "limits",
                       call_limits(a, c)));
        c->waiting = true;
        c->asked_ms = mono_ms();
        if (a->cfg.can_ask)
                return false;
        /* no one to ask: never a hang */
        emit_decision(a, c, false, "policy", NULL,
                      "no one can approve it here (no terminal, no --json)", NULL);
        c->waiting = false;
        snprintf(msg, sizeof(msg),
                 "denied: proctor's approval policy '%s' asks the operator before this call, and "
                 "no one could answer; the operator may allow it with --approval never or a rule "
                 "(--allow %s)",
                 approval_policy_name(approval_policy(a->cfg.approval)), c->name);
        complete_call(a, c, false, msg, strlen(msg), -1, 0);
        return false;
}

static void start_call(struct agent *a, struct call *c)
{
        c->started = true;
        if (c->args == NULL) {
                complete_call(a, c, false, c->result, strlen(c->result), -1, 0);
                return;
        }
        if (a->interrupted) {
                complete_call(a, c, false, "interrupted by the operator", 27, -1, 0);
                return;
        }
        if (approved(a, c))
                dispatch_call(a, c);
}

static void start_ready_calls(struct agent *a)
{
        size_t i;

        a->dispatching = true;
        for (i = 0; i < a->ncalls; i++) {
                struct call *c = &a->calls[i];
                if (!c->started && (c->wait_for < 0 || a->calls[c->wait_for].done))
                        start_call(a, c);
        }
        a->dispatching = false;
        if (a->pending == 0)
                finish_turn(a);
}

/* ---- the operator ---- */

unsigned agent_kill_all(struct agent *a, unsigned *cancelled)
{
        const char *note =
            a->interrupted ? "interrupted by the operator" : "killed by the operator";
        bool was = a->dispatching;
        unsigned n = 0, nc = 0, ended = 0;
        size_t i;

        /* Cancelled calls complete inside this loop: the turn may only end
         * after it. */
        a->dispatching = true;
        for (i = 0; i < a->ncalls; i++) {
                struct call *c = &a->calls[i];
                uint64_t id;
                if (c->done)
                        continue;
                if (!c->started) {
                        /* waits for an earlier call: it will not start now */
                        char msg[160];
                        snprintf(msg, sizeof(msg), "cancelled before it started (%s)", note);
                        c->started = true;
                        c->cancelled = true;
                        complete_call(a, c, false, msg, strlen(msg), -1, 0);
                        nc++;
                        continue;
                }
                if (c->waiting) {
                        /* the operator's answer will not come: denied */
                        char msg[160];
                        snprintf(msg, sizeof(msg), "denied: %s while it waited for approval", note);
                        emit_decision(a, c, false, "operator", NULL, note, NULL);
                        c->waiting = false;
                        c->cancelled = true;
                        complete_call(a, c, false, msg, strlen(msg), -1, 0);
                        nc++;
                        continue;
                }
                if (c->run == NULL)
                        continue;
                if (dispatch_queued(c->run)) {
                        dispatch_kill(c->run, note); /* completes the call */
                        nc++;
                        continue;
                }
                id = dispatch_kill(c->run, note);
                /* an MCP call is cancelled at once, with no execution */
                if (c->done)
                        ended++;
                if (id != 0) {
                        emit(a, "operator.kill", json_pack("{s:I}", "exec_id", (json_int_t)id));
                        n++;
                }
        }
        a->dispatching = was;
        if (!was && (nc > 0 || ended > 0) && a->pending == 0)
                finish_turn(a);
        if (cancelled != NULL)
                *cancelled = nc;
        return n;
}

void agent_interrupt(struct agent *a)
{
        if (!a->busy || a->interrupted)
                return;
        a->interrupted = true;
        emit(a, "operator.interrupt", json_pack("{s:I}", "turn", (json_int_t)a->totals.turns));
        if (a->in_model) {
                a->cfg.provider->ops->cancel(a->cfg.provider);
                a->in_model = false;
                end_turn(a, AGENT_INTERRUPTED, true);
                return;
        }
        agent_kill_all(a, NULL); /* queued and waiting calls are cancelled */
}

int agent_approve(struct agent *a, const char *call_id, bool allow, const char *by,
                  const char *reason, const char *arguments, const char *rule_added, char *err,
                  size_t errlen)
{
        struct call *c = NULL;
        size_t i;

        for (i = 0; i < a->ncalls; i++)
                if (a->calls[i].waiting && strcmp(a->calls[i].id, call_id) == 0)
                        c = &a->calls[i];
        if (c == NULL) {
                snprintf(err, errlen, "no call '%.200s' waits for approval", call_id);
                return -ENOENT;
        }
        if (allow && arguments != NULL && strcmp(arguments, c->arguments) != 0) {
                json_t *args = NULL;
                if (tools_parse_args(c->name, arguments, &args, err, errlen) < 0)
                        return -EINVAL;
                json_decref(c->args);
                c->args = args;
                free(c->edited);
                c->edited = strdup(arguments);
        }
        emit_decision(a, c, allow, by, NULL, reason, rule_added);
        c->waiting = false;
        a->dispatching = true;
        if (allow) {
                dispatch_call(a, c);
        } else {
                char msg[1200];
                snprintf(msg, sizeof(msg), "denied by the operator%s%.1000s",
                         reason != NULL && reason[0] ? ": " : "", reason != NULL ? reason : "");
                complete_call(a, c, false, msg, strlen(msg), -1, 0);
        }
        /* a rule just added may decide the other calls that wait */
        for (i = 0; rule_added != NULL && i < a->ncalls; i++) {
                struct call *o = &a->calls[i];
                struct approval_call ac = {o->name, o->args, a->cfg.dx->mode == EXEC_LOCAL,
                                           dispatch_mcp_reaches_host(a->cfg.dx, o->name)};
                struct approval_result res;
                if (!o->waiting)
                        continue;
                approval_check(a->cfg.approval, &ac, &res);
                if (res.rule == NULL)
                        continue;
                if (res.verdict == APPROVAL_ALLOW) {
                        emit_decision(a, o, true, "rule", res.rule, NULL, NULL);
                        o->waiting = false;
                        dispatch_call(a, o);
                } else {
                        deny_by_rule(a, o, res.rule);
                }
        }
        a->dispatching = false;
        if (a->pending == 0)
                finish_turn(a);
        else
                start_ready_calls(a);
        return 0;
}

unsigned agent_waiting(const struct agent *a)
{
        unsigned n = 0;
        size_t i;

        for (i = 0; i < a->ncalls; i++)
                n += a->calls[i].waiting;
        return n;
}

int agent_kill_exec(struct agent *a, uint64_t exec_id)
{
        size_t i;

        for (i = 0; i < a->ncalls; i++) {
                struct call *c = &a->calls[i];
                if (c->run != NULL && !c->done && dispatch_exec_id(c->run) == exec_id &&
                    dispatch_kill(c->run, "killed by the operator") == exec_id) {
                        emit(a, "operator.kill",
                             json_pack("{s:I}", "exec_id", (json_int_t)exec_id));
                        return 0;
                }
        }
        return -ESRCH;
}
