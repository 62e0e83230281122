/* runtime: the seam between exec's public API and what runs an execution.
 * `native` is exec's own sandbox (an execution with no runtime pointer);
 * any other runtime (exec/docker/docker.c) fills this table and reports through
 * the exec__rt_* calls below, so that callers of exec.h see one contract.
 * A runtime never touches struct exec's fields: exec/engine.h holds them,
 * for exec's own files alone. */
#ifndef PROCTOR_EXEC_RUNTIME_H
#define PROCTOR_EXEC_RUNTIME_H

#include "exec/exec.h"

struct exec_runtime {
        const char *name;
        /* Opens the runtime's side of an engine (endpoint, sweep of what
         * dead proctor processes left): 0 or -errno with err filled. */
        int (*engine_new)(uv_loop_t *loop, const struct exec_engine_opts *o, void **state,
                          char *err, size_t errlen);
        /* Releases it; called once every execution has been removed. */
        void (*engine_free)(void *state);
        /* Starts `e` for `req`. 0: it reports through exec__rt_* until
         * exec__rt_removed; -errno: nothing was started, err says why. */
        int (*spawn)(void *state, struct exec *e, const struct exec_request *req, char *err,
                     size_t errlen);
        int (*write)(struct exec *e, const char *data, size_t len);
        /* Ends the execution; its exit is reported with reason `why`. */
        void (*kill)(struct exec *e, enum exec_reason why);
        int (*signal)(struct exec *e, int sig);
        int (*pause)(struct exec *e, bool on); /* 0 or -errno (freezer semantics) */
        /* A per-execution id for events (a container id), or NULL. */
        const char *(*handle)(const struct exec *e);
        /* Whether the workspace the runtime mounts is this host's directory
         * (a local engine), so that the session's disk quota can measure
         * it; NULL: no. */
        bool (*workspace_here)(void *state);
};

extern const struct exec_runtime exec_runtime_docker;

/* The runtime's private state of `e` (set once by its spawn). */
void *exec__rt_priv(const struct exec *e);
void exec__rt_set_priv(struct exec *e, void *priv);
/* The engine's loop, and when exec_spawn was called (CLOCK_MONOTONIC, us). */
uv_loop_t *exec__rt_loop(const struct exec *e);
uint64_t exec__rt_t0_us(const struct exec *e);
uint64_t exec__rt_now_us(void);

/* What the runtime saw, reported to the caller in the contract's order. */
void exec__rt_start(struct exec *e, int pid);
/* Applies limits.output_bytes as native executions do. */
void exec__rt_output(struct exec *e, enum exec_stream s, const char *buf, size_t n);
void exec__rt_stats(struct exec *e, const struct exec_stats *st);
void exec__rt_state(struct exec *e, const char *state);
/* Reports the exit (r->truncated is filled here). */
void exec__rt_exit(struct exec *e, struct exec_result *r);
/* What the execution may still add to the workspace under the session's
 * disk quota (for RLIMIT_FSIZE), or UINT64_MAX where no quota applies. */
uint64_t exec__rt_disk_room(const struct exec *e);
/* Everything is released: on_remove, then `e` is freed. */
void exec__rt_removed(struct exec *e);

#endif
