/* dispatch: runs one validated tool call where the session's mode says.
 * Local mode: file and cache tools are function calls in proctor, bash and
 * Python are child processes. Sandbox mode: every call is a fresh sandbox
 * (file tools through `proctor tool` inside it). Emits tool.output and the
 * execution's exec.* events; the caller emits tool.call and tool.result. */
#ifndef PROCTOR_DISPATCH_H
#define PROCTOR_DISPATCH_H

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>

#include "core/bus.h"
#include "core/tools.h"
#include "exec/exec.h"

struct dispatch_ctx {
        struct exec_engine *eng;
        struct bus *bus;
        enum exec_isolation mode;
        const char *workspace;     /* resolved directory */
        struct exec_workspace *ws; /* the same, opened once for the session */
        enum exec_ws_mode ws_mode;
        struct exec_limits limits;
        struct tools_cache *cache; /* local mode's cache; persists across calls */
};

struct tool_outcome {
        bool ok;
        char *output; /* full text (stdout and stderr as they came), NUL-terminated */
        size_t len;
        int exit_code; /* -1 when none */
        uint64_t duration_ms;
        bool killed;        /* ended by proctor (operator kill, interrupt) */
        const char *reason; /* the execution's exit reason, or NULL for a builtin */
};

struct tool_run;

/* Called once per run, possibly before dispatch_start returns (a local
 * builtin completes at once). The outcome is valid during the call. */
typedef void (*dispatch_done_fn)(struct tool_run *r, const struct tool_outcome *o, void *ud);

/* Starts `name` with validated `args`. Returns 0 (done will be called) or
 * -errno with err filled when nothing could be started. */
int dispatch_start(struct dispatch_ctx *dx, const char *call_id, const char *name,
                   const json_t *args, dispatch_done_fn done, void *ud, struct tool_run **out,
                   char *err, size_t errlen);

/* Kills the run's execution, if it has one still running; `note` (static
 * text, e.g. "interrupted by the operator") ends the output the model reads.
 * Returns its exec_id, or 0 when there was nothing to kill. */
uint64_t dispatch_kill(struct tool_run *r, const char *note);

/* The execution behind a run (0 for an in-process builtin or once done). */
uint64_t dispatch_exec_id(const struct tool_run *r);

#endif
