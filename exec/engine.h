/* engine: internal to exec/, for the files that make up exec/exec.h's API
 * (the backends use exec/runtime.h): the engine's and an execution's
 * state, and the calls these files make of each other. Each file holds:
 *   exec.c     the API: engine, requests and spawn, accessors and names
 *   spawn.c    a child: clone, id maps, cgroup, handles; a request handed over
 *   pool.c     prewarmed children, warm sandboxes and the warm policy
 *   exit.c     the status channel, kill, reaping, the exit's report, removal
 *   output.c   stdout and stderr: the output cap, floods
 *   stats.c    sampled counters and the limits they hold
 *   control.c  the operator's signal, pause and resume
 *   disk.c     the glue to the session's disk quota (native/quota.c)
 *   runtime.c  the seam to other runtimes (runtime.h)
 * None of it blocks the loop: no waitpid without WNOHANG, no sleeping. */
#ifndef PROCTOR_EXEC_ENGINE_H
#define PROCTOR_EXEC_ENGINE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/resource.h>
#include <sys/types.h>
#include <uv.h>

#include "exec/exec.h"
#include "exec/native/cgroup.h"
#include "exec/native/sandbox.h"
#include "exec/runtime.h"

/* The v1 hierarchies an execution is made in. A sandbox needs no freezer
 * to be killed: its init's death ends every process of its pid namespace;
 * its first pause makes its freezer directory then (cgroup_freeze), so no
 * spawn pays for one. Local mode sets no cpu bandwidth limit. */
#define CG_FOR_SANDBOX (CG_MEMORY | CG_PIDS | CG_CPU | CG_CPUACCT)

/* A sandbox weighs a tenth of a normal process when the CPU is contended,
 * so the supervisor (and the rest of the host) stays responsive while many
 * sandboxes spin; an idle host still gives a sandbox whole cores. */
#define EXEC_SANDBOX_CPU_WEIGHT 10
#define CG_FOR_LOCAL            (CG_MEMORY | CG_PIDS | CG_CPUACCT | CG_FREEZER)

struct exec_engine {
        uv_loop_t *loop;
        struct cgroup_sys *cg;
        const struct seccomp_policy *seccomp;
        struct sandbox_host *host;
        uint32_t stats_ms;
        uint64_t next_id;
        unsigned live;
        bool freeing;
        struct exec *list; /* every child, waiting or assigned */
        unsigned children; /* length of list */
        /* Children made ahead of time for the next spawn (see pool_refill). */
        struct exec *pool;
        unsigned prewarm;
        bool proven; /* a group was made: the hierarchies are known */
        enum exec_isolation want_iso;
        uint32_t want_uid, want_gid;
        uv_timer_t refill;
        /* Warm sandboxes: up to `warm` (the cap) kept started with the
         * last warm request (see warm_remember); those of an older one are
         * let go. warm_target: how many the policy wants now. */
        unsigned warm, warm_target;
        uint32_t warm_idle_ms;
        uv_timer_t warm_idle;
        exec_warm_room_fn warm_room;
        void *warm_room_ud;
        exec_warm_watch_fn warm_watch;
        void *warm_watch_ud;
        unsigned handles; /* the engine's own handles still open */
        struct warm_want {
                bool set;
                uint64_t gen; /* bumped when the request changes */
                struct exec_request req;
                char **argv, **env_extra; /* req's own copies */
                uint32_t uid, gid;
        } ww;
        /* Sandboxed executions go to this runtime instead (NULL: native). */
        const struct exec_runtime *rt;
        void *rt_state;
};

/* One output pipe, read through a poll handle rather than uv_read so that
 * what passes the output cap can be spliced away without a copy. */
struct exec_output {
        uv_poll_t poll;
        int fd;           /* the read end, -1 once closed */
        bool eof;         /* the last byte was read */
        bool flooding;    /* drained by out_tick instead of polled */
        bool ended;       /* no longer counted in open_streams */
        bool grown;       /* the pipe was given OUTPUT_PIPE_BYTES */
        uint64_t last_us; /* when it was last drained */
};

struct exec {
        struct exec_engine *eng;
        struct exec *next;
        uint64_t id;
        enum exec_isolation iso;
        struct exec_limits lim;
        struct exec_callbacks cb;
        void *ud;

        bool assigned;  /* false while waiting in the pool */
        bool warm;      /* its command was started ahead (warm_start) */
        bool share_net; /* a sandbox in the host's network namespace */
        /* warm, taken before its command ran: the CPU rlimit and stdin
         * (stdin_copy, stdin_len) are handed over once it does */
        bool stdin_due;
        size_t stdin_len;
        bool start_due; /* warm: on_start is yet to be reported */
        uint64_t warm_gen;
        uint64_t cpu_base_ns; /* warm: the cgroup's CPU time before the call */
        bool waiting;         /* its base is built and it waits for a request */
        bool in_pool;
        struct exec *pool_next;
        uint32_t uid, gid; /* host ids the child runs as */
        int ctl_fd;        /* request socket, until the request is sent */

        pid_t pid;     /* the init, host view */
        pid_t cmd_pid; /* the command, host view, 0 until known */
        int pidfd;
        struct cgroup *cg;
        struct exec_workspace *ws;     /* set when its disk quota applies */
        struct exec_workspace *own_ws; /* opened for this execution alone */
        uint64_t t0_us, exit_us;
        uint64_t end_us; /* when the init saw the command end (CLOCK_MONOTONIC), 0: unknown */
        /* No cgroup, the status told on the exit channel: the command's CPU
         * time then, from /proc, instead of the init's rusage at its reap. */
        bool early_cpu;
        uint64_t early_cpu_ns, early_rss;

        uv_pipe_t status, in;
        struct exec_output out, err;
        uv_poll_t exit_poll;
        uv_timer_t timeout, stats, grace;
        unsigned open_handles;
        char *stdin_copy;
        uv_write_t in_req;

        char msgbuf[sizeof(struct sandbox_msg)];
        size_t msglen;

        bool started, reaped, have_status, setup_failed, exit_reported, killed_sent;
        int open_streams; /* stdout and stderr still to reach EOF */
        int wait_status, init_status;
        enum exec_reason pending; /* set by proctor's own kill */
        bool has_pending;
        enum exec_pause_how paused; /* 0 while it runs */
        uint64_t op_signals;        /* bit N-1: the operator sent signal N (exec_signal) */
        uint64_t out_bytes;         /* stdout and stderr together, past the cap too */
        bool truncated;
        uv_timer_t out_tick; /* drains flooding streams (see output_tick) */
        struct rusage ru;
        struct exec_stats last;
        uint64_t last_cpu_ns, last_sample_us;
        char error[256];
        const struct exec_runtime *rt; /* NULL: native */
        void *rt_priv;
};

/* exec.c: the clock every part reads, and the engine's end once its last child is gone. */
uint64_t now_us(void);
void strv_free(char **v);
void engine_destroy(struct exec_engine *eng);

/* spawn.c: children and the requests they are handed. */
void close_fd(int *fd);
int stdin_write_kept(struct exec *e);
void pick_ids(const struct exec_request *req, const struct exec_workspace *ws, uint32_t *uid,
              uint32_t *gid);
int child_new_net(struct exec_engine *eng, enum exec_isolation iso, bool share_net, uint32_t uid,
                  uint32_t gid, struct exec **out, char *err, size_t errlen);
int child_new(struct exec_engine *eng, enum exec_isolation iso, uint32_t uid, uint32_t gid,
              struct exec **out, char *err, size_t errlen);
int child_request(struct exec *e, const struct exec_request *req, struct exec_workspace *ws,
                  struct exec_workspace *quota_ws, bool clock);
void child_arm(struct exec *e, const struct exec_request *req, int rc);
void child_assign(struct exec *e, const struct exec_request *req, struct exec_workspace *ws);

/* pool.c: the pool and warm sandboxes. */
void refill_soon(struct exec_engine *eng);
void warm_announce(struct exec *e);
void warm_settled(uv_timer_t *t);
void warm_changed(struct exec_engine *eng);
void pool_unlink(struct exec *e);
struct exec *pool_take(struct exec_engine *eng, enum exec_isolation iso, uint32_t uid,
                       uint32_t gid);
void warm_remember(struct exec_engine *eng, const struct exec_request *req, uint32_t uid,
                   uint32_t gid);
struct exec *warm_take(struct exec_engine *eng, const struct exec_request *req, uint32_t uid,
                       uint32_t gid);
void warm_due(struct exec *e);
void warm_assign(struct exec *e, const struct exec_request *req);
void warm_note_call(struct exec_engine *eng, bool hit);

/* exit.c: handles closed, the status channel, kill, the exit and removal. */
void on_handle_closed(uv_handle_t *h);
void close_handle(struct exec *e, uv_handle_t *h);
void exec_finish_remove(struct exec *e);
void report_exit(struct exec *e);
void maybe_report(struct exec *e);
void send_kill(struct exec *e);
void kill_for(struct exec *e, enum exec_reason why);
void on_exit_readable(uv_poll_t *p, int status, int events);
void on_timeout(uv_timer_t *t);
void on_status(uv_stream_t *s, ssize_t n, const uv_buf_t *buf);
void drain_status(struct exec *e);

/* output.c: stdout and stderr. */
void output_stop(struct exec *e, struct exec_output *o);
int start_output(struct exec *e, int *out_fd, int *err_fd);
void close_output(struct exec *e, struct exec_output *o);

/* stats.c: counters and their sample. */
void read_stats(struct exec *e, struct cgroup_stats *cs, bool proc_too);
void on_stats(uv_timer_t *t);

/* disk.c: the disk quota's callbacks (ws_quota_start). */
void quota_over(struct exec_workspace *w, void *ud);
size_t quota_pids(struct exec_workspace *w, void *ud, pid_t *out, size_t max);

/* runtime.c: a sandbox spawned by another runtime. */
int rt_spawn(struct exec_engine *eng, const struct exec_request *req, struct exec_workspace *ws,
             struct exec_workspace *own_ws, const struct exec_callbacks *cb, void *ud,
             struct exec **out, char *err, size_t errlen);

#endif
