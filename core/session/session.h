/* session: one agent session. Its execution mode is chosen before it
 * starts and fixed from the first prompt on; it takes several prompts in a
 * row, each a sequence of turns, and reports everything on its bus, from
 * session.start to session.end. UI-agnostic: headless and TUI drive it the
 * same way. */
#ifndef PROCTOR_SESSION_H
#define PROCTOR_SESSION_H

#include <stdbool.h>
#include <stdint.h>
#include <uv.h>

#include "core/session/agent.h"
#include "core/session/approval.h"
#include "core/util/bus.h"
#include "core/model/provider.h"
#include "exec/exec.h"

struct image_progress;

struct session_opts {
        enum exec_isolation mode;
        const char *mode_from; /* where the mode came from (options.mode_from) */
        const char *model;     /* spec; NULL: provider_default_spec() */
        struct provider_config provider;
        const char *workspace;   /* NULL: the current directory */
        const char *config_file; /* the config file read, kept read-only in sandboxes */
        enum exec_ws_mode ws_mode;
        struct exec_limits limits;
        uint64_t max_iterations;
        unsigned max_parallel;  /* executions at once; 0: 4 */
        uint64_t memory_budget; /* bytes; 0: session_default_budget's */
        /* The mcpServers object as JSON text (options.mcp_servers); NULL:
         * none. Its servers start with the session, before its first turn. */
        const char *mcp_servers;
        /* --image: opened (unpacked if need be) by session_new, applied to
         * sandbox mode only; NULL: the host's root. */
        const char *image;
        uint64_t image_max, image_cache_max; /* its caps; 0: the defaults */
        /* a first unpack's progress and cancel flag (struct image_caps) */
        void (*image_progress)(const struct image_progress *p, void *ud);
        void *image_progress_ud;
        const volatile int *image_cancel;
        /* --runtime: NULL (native) or "docker" (the image is then the
         * engine's, handed over, never unpacked). */
        const char *runtime;
        /* Whether a call may run before it runs (core/session/approval.h):
         * the policy, and rules TOOL[:PATTERN] that allow or deny (checked
         * by session_new, whose error names a bad one). can_ask: a front
         * end answers approval.request (session_approve); without one a
         * call the policy asks about is denied at once, with a reason. */
        enum approval_policy approval;
        const char *const *allow, *const *deny;
        unsigned nallow, ndeny;
        bool can_ask;
        /* A resumed session: the conversation so far (chat messages, kept
         * by session_new) and where it came from, recorded in session.start
         * as resumed_from {session_id, trace}. NULL: a new conversation. */
        const json_t *history;
        const char *resumed_id, *resumed_trace;
};

#define SESSION_MAX_PARALLEL 4

/* The memory budget when the operator gives none: max_parallel times the
 * memory limit of one execution, but at most half of `host_total` (the
 * host's MemTotal; 0 when unknown) so that a session alone cannot take the
 * host. */
uint64_t session_default_budget(unsigned max_parallel, uint64_t memory_bytes, uint64_t host_total);

struct session;
struct image;

/* The image the session's sandboxes are rooted in (exec/image/image.h has its
 * ref, digest, Env, WorkingDir and User), or NULL for the host's root. */
const struct image *session_image(const struct session *s);

/* Opens the provider and the execution engine; emits nothing yet. Errors
 * (bad model spec, bad workspace) name the problem. */
int session_new(uv_loop_t *loop, struct bus *bus, const struct session_opts *o,
                struct session **out, char *err, size_t errlen);

/* Keeps a file of proctor's (the trace) read-only in the session's
 * sandboxes if it lies in the workspace. 0 or -errno with err filled. */
int session_protect(struct session *s, const char *path, char *err, size_t errlen);

/* Which sandbox limits cgroups enforce here (EXEC_CG_* bits); the rest
 * hold only per process. */
unsigned session_cgroup_limits(struct session *s);

/* Why sandboxes could not use the workspace as the session's workspace
 * mode asks (one sentence naming the directory, its owner and the fix), or
 * NULL when they can. Sandbox mode does not start while it says so. */
const char *session_workspace_problem(struct session *s);

/* Flips the mode; -EBUSY once the session has started. */
int session_set_mode(struct session *s, enum exec_isolation mode);
enum exec_isolation session_mode(const struct session *s);
/* Changes the limits of each execution and the workspace mode before the
 * session starts (the setup screen); -EBUSY once it has started. A memory
 * budget the operator did not give follows the new memory limit. */
int session_set_limits(struct session *s, const struct exec_limits *limits,
                       enum exec_ws_mode ws_mode);
/* The limits and workspace mode the session's executions will get. */
const struct exec_limits *session_limits(const struct session *s, enum exec_ws_mode *ws_mode);

/* The session's approval policy and rules (the setup screen changes the
 * policy, the operator's "allow always" adds a rule). */
struct approval *session_approval(struct session *s);
/* The answer to approval.request `call_id` (agent_approve; `by`: "operator",
 * or "policy" when no answer can come);
 * rule_added: the rule TOOL[:PATTERN] the operator added for calls like
 * it ("allow always"), checked and added first, or NULL. 0, -ENOENT when
 * no such call waits, -EINVAL with err (a bad rule or edited arguments:
 * the call still waits). */
int session_approve(struct session *s, const char *call_id, bool allow, const char *by,
                    const char *reason, const char *arguments, const char *rule_added, char *err,
                    size_t errlen);
/* Calls waiting for the operator's answer. */
unsigned session_waiting(const struct session *s);

/* Called when a prompt's sequence of turns ends. */
void session_on_idle(struct session *s, void (*fn)(enum agent_status, void *), void *ud);

/* Starts a prompt (the first one emits session.start). -EBUSY while a
 * sequence runs. */
int session_prompt(struct session *s, const char *text);

void session_interrupt(struct session *s);
int session_kill_exec(struct session *s, uint64_t exec_id);
/* Sends `sig` to every process of one running execution, which may then
 * exit on its own (exec_signal; an exit by that signal is reported as
 * killed), and emits operator.signal {exec_id, signal, name}. 0, -ESRCH
 * when no such execution runs, -EINVAL for a bad signal. */
int session_signal_exec(struct session *s, uint64_t exec_id, int sig);
/* Pauses or resumes one running execution (exec_pause, exec_resume) and
 * emits exec.pause or exec.resume {exec_id, how: "freezer" or "signal"}.
 * 0, -ESRCH, or -EALREADY when it already is (or is not) paused. */
int session_pause_exec(struct session *s, uint64_t exec_id);
int session_resume_exec(struct session *s, uint64_t exec_id);
/* Kills the running executions and cancels the calls not yet started
 * (*cancelled, may be NULL, tells how many). */
unsigned session_kill_all(struct session *s, unsigned *cancelled);
bool session_busy(const struct session *s);
/* The first prompt has come (session.start was emitted). */
bool session_started(const struct session *s);
/* Turns, tool calls and tokens so far; NULL before the start. */
const struct agent_totals *session_totals(const struct session *s);
/* Executions not yet removed (their exec.remove still to come). */
unsigned session_executions(const struct session *s);

/* The session's MCP client once it has started (NULL before, or without
 * servers): its servers and tools (core/tools/mcp.h). */
struct mcp *session_mcp(const struct session *s);
struct mcp_brief;

/* The setup screen's line about MCP servers (mcp_describe); 0 when none
 * are configured. Before the start, with what session_mcp_preview found. */
int session_mcp_line(const struct session *s, char *buf, size_t len, bool *network);
/* The same, server by server (mcp_briefs). */
int session_mcp_briefs(const struct session *s, struct mcp_brief *out, int max);

/* For the setup screen: starts the configured servers in the mode now
 * chosen (again after each flip), on an engine of their own, to count their
 * tools; `changed(ud)` when that may show something new. Nothing of it
 * reaches the session's events; they are stopped when the session starts,
 * which starts its own. A no-op without servers or once started. */
void session_mcp_preview(struct session *s, void (*changed)(void *ud), void *ud);

/* The session is over: stops its MCP servers, whose executions are then
 * removed (wait for session_executions to reach 0 before session_end). */
void session_stop_servers(struct session *s);
/* Executions of MCP servers not yet removed (counted in
 * session_executions too; they live as long as the session). */
unsigned session_server_executions(const struct session *s);

/* Emits session.end (once, if the session started) with the last status. */
void session_end(struct session *s);

/* Frees an idle session (interrupt it and wait for the idle callback
 * first). Run the loop afterwards to let the teardown finish. */
void session_free(struct session *s);

const char *session_id(const struct session *s);
const char *session_model_label(const struct session *s);
/* How many executions may run at once and the memory budget across live
 * sandboxes, defaults applied. */
void session_bounds(const struct session *s, unsigned *max_parallel, uint64_t *memory_budget);
/* The workspace, resolved to an absolute path. */
const char *session_workspace(const struct session *s);

#endif
