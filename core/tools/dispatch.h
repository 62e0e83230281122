/* dispatch: runs one validated tool call where the session's mode says.
 * Local mode: file and cache tools are function calls in proctor, bash and
 * Python are child processes. Sandbox mode: every call is a fresh sandbox
 * (file tools through `proctor tool` inside it). A session's executions are
 * bounded (so many at once, a memory budget across them); calls beyond that
 * wait in a FIFO queue and get their execution, and its exec.create, only
 * when one is free. Emits tool.output and the execution's exec.* events;
 * the caller emits tool.call and tool.result. */
#ifndef PROCTOR_DISPATCH_H
#define PROCTOR_DISPATCH_H

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>

#include "core/util/bus.h"
#include "core/tools/tools.h"
#include "exec/exec.h"

struct dispatch_ctx {
        struct exec_engine *eng;
        struct bus *bus;
        enum exec_isolation mode;
        const char *workspace;     /* resolved directory */
        struct exec_workspace *ws; /* the same, opened once for the session */
        enum exec_ws_mode ws_mode;
        struct exec_limits limits;
        const char *image;         /* the engine's image root, for events; or NULL */
        char *const *env_extra;    /* the image's Env for sandboxes; or NULL */
        struct tools_cache *cache; /* local mode's cache; persists across calls */
        struct mcp *mcp;           /* the session's MCP servers (mcp__ tools); may be NULL */
        unsigned max_parallel;     /* executions live at once; 0: no cap */
        /* Sum of the memory limits of live sandbox executions; 0: none. */
        uint64_t memory_budget;
        /* internal: what is live and what waits */
        unsigned running__;
        uint64_t mem_used__;
        struct tool_run *queue__, **queue_tail__, *live__;
        bool pumping__;
};

struct tool_outcome {
        bool ok;
        char *output; /* full text (stdout and stderr as they came), NUL-terminated */
        size_t len;
        int exit_code; /* -1 when none */
        uint64_t duration_ms;
        bool killed;        /* ended by proctor (operator kill, interrupt) */
        bool cancelled;     /* killed while queued: it never started */
        const char *reason; /* the execution's exit reason, or NULL for a builtin */
};

struct tool_run;

/* Called once per run, possibly before dispatch_start returns (a local
 * builtin completes at once). The outcome is valid during the call. */
typedef void (*dispatch_done_fn)(struct tool_run *r, const struct tool_outcome *o, void *ud);

/* The exec engine's warm-room callback (exec_engine_set_warm_room) for a
 * session: room for one more waiting warm sandbox when no call is queued
 * and `idle` + 1 more fit --max-parallel and the memory budget beside the
 * live executions. `ud` is the dispatch_ctx. */
bool dispatch_warm_room(void *ud, unsigned idle);

/* Starts `name` with validated `args`, or queues it until the session's
 * bounds let it start. Returns 0 (done will be called) or -errno with err
 * filled when nothing could be started (including limits in `args` that
 * make no sense, and a call that could never fit the memory budget). */
int dispatch_start(struct dispatch_ctx *dx, const char *call_id, const char *name,
                   const json_t *args, dispatch_done_fn done, void *ud, struct tool_run **out,
                   char *err, size_t errlen);

/* Kills the run's execution, if it has one still running; `note` (static
 * text, e.g. "interrupted by the operator") ends the output the model reads.
 * Returns its exec_id, or 0 when there was nothing to kill. A run still in
 * the queue is cancelled instead: done is called before this returns, with
 * an error result saying it never started, and 0 is returned. */
uint64_t dispatch_kill(struct tool_run *r, const char *note);

/* True while the run waits in the queue. */
bool dispatch_queued(const struct tool_run *r);

/* The owner of `dx` goes away: runs still queued are cancelled (done is
 * called), and executions still being torn down no longer report to it. */
void dispatch_close(struct dispatch_ctx *dx);

/* The limits one call runs under: the operator's, with what the model may
 * ask for in `args` ("timeout", seconds) clamped to [1 s, the operator's
 * limit] (a smaller operator limit wins). Zero, negative and non-finite
 * numbers and non-numbers are refused: -EINVAL with err filled. */
int dispatch_call_limits(const struct exec_limits *op, const json_t *args, struct exec_limits *out,
                         char *err, size_t errlen);

/* The argv that runs `command` as `bash -c` would. A command longer than
 * one argument may be (the kernel's MAX_ARG_STRLEN) goes in pieces that a
 * short bash wrapper joins and evals, with no positional parameters and $0
 * "bash" as under bash -c. NULL-terminated; free it with free() (one
 * block). NULL with errno: ENOMEM, or E2BIG when the whole command cannot
 * be passed to a program at all (argv and environment over ARG_MAX), with
 * err naming the sizes. */
char **dispatch_bash_argv(const char *command, size_t len, char *err, size_t errlen);

/* Where a call of `name` would run, for the operator deciding on it:
 * "this host (local mode)", "a sandbox", "a sandbox rooted in image REF",
 * "a docker container of image REF", "MCP server S (on this host)", "MCP
 * server S (sandbox, with the host's network)"... Written to buf. */
void dispatch_where(const struct dispatch_ctx *dx, const char *name, char *buf, size_t len);

/* Whether an MCP tool's server runs on this host or shares its network
 * (what the approval policy `host` asks about in sandbox mode). */
bool dispatch_mcp_reaches_host(const struct dispatch_ctx *dx, const char *name);

/* The execution behind a run (0 for an in-process builtin or once done). */
uint64_t dispatch_exec_id(const struct tool_run *r);

#endif
