/* exec: run one command as one execution, on the host (local) or in a fresh
 * native sandbox, with limits, streamed output, sampled stats and kill.
 * Knows nothing of agents or sessions; never blocks the libuv loop. */
#ifndef PROCTOR_EXEC_H
#define PROCTOR_EXEC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <uv.h>

enum exec_isolation { EXEC_LOCAL, EXEC_SANDBOX };

/* proctor's own binary as every sandbox sees it (read-only): sandbox mode
 * runs the file tools with it (`proctor tool NAME`). */
#define EXEC_SANDBOX_SELF "/.proctor/proctor"

enum exec_ws_mode { EXEC_WS_RW, EXEC_WS_RO, EXEC_WS_OVERLAY, EXEC_WS_NONE };

enum exec_reason {
        EXEC_EXITED,
        EXEC_SIGNALED,
        EXEC_TIMEOUT,
        EXEC_OOM,
        EXEC_CPU_LIMIT,
        EXEC_PIDS_LIMIT,
        EXEC_KILLED,
        EXEC_SETUP_FAILED,
        EXEC_DISK_LIMIT, /* the workspace grew past the session's disk quota */
};

enum exec_stream { EXEC_STDOUT = 1, EXEC_STDERR = 2 };

/* Zero in any field means "no limit" (local mode ignores all but timeout). */
struct exec_limits {
        uint64_t memory_bytes;
        uint64_t cpu_ms;
        uint64_t timeout_ms;
        uint32_t pids;
        uint64_t tmpfs_bytes;
        uint64_t output_bytes;
        /* What sandboxes (rw workspace) may add to the workspace, counted
         * across every execution given the same exec_workspace: a session. */
        uint64_t disk_bytes;
};

struct exec_stats {
        double cpu_pct;
        uint64_t cpu_ms;
        uint64_t mem_bytes;
        uint64_t mem_peak_bytes;
        uint32_t pids;
};

struct exec_result {
        enum exec_reason reason;
        int exit_code; /* valid when reason is EXEC_EXITED, else -1 */
        int signal;    /* terminating signal, 0 when none */
        uint64_t wall_ms;
        uint64_t cpu_ms;
        uint64_t mem_peak_bytes;
        bool truncated;  /* output exceeded limits.output_bytes */
        char error[256]; /* setup_failed: why, for a person */
        /* The session's disk quota, when it has one (disk_known): what its
         * sandboxes had added to the workspace at its last walk, how many
         * walks it has made, and how long the last took. */
        bool disk_known;
        uint64_t disk_added_bytes, disk_walk_ms;
        unsigned disk_walks;
};

struct exec_request {
        enum exec_isolation isolation;
        char *const *argv;         /* argv[0] resolved through PATH in the target */
        struct exec_workspace *ws; /* NULL: `workspace` is opened for this call */
        const char *workspace;     /* host directory; NULL: current directory */
        enum exec_ws_mode ws_mode; /* sandbox only */
        struct exec_limits limits;
        const char *stdin_data; /* fed to the command's stdin, then EOF; NULL: /dev/null */
        size_t stdin_len;
        char *const *env_extra; /* "K=V" added after the allowlist; NULL-terminated or NULL */
        /* "K=V" added last and passed whatever the name (tokens included):
         * what the operator wrote for this execution alone, such as an MCP
         * server entry's "env"; never pass inherited values here. With it,
         * local mode too starts from an allowlist, not the host's whole
         * environment (env_build_own). */
        char *const *env_own;
        /* stdin stays open for exec_write (a long-lived server speaking a
         * protocol on it); stdin_data is ignored then. */
        bool keep_stdin;
        /* The command reads all of stdin before it does anything the call
         * could see (exec_python_argv): a sandbox with a session workspace
         * may then be one the engine started ahead with the same request,
         * handed stdin_data at the call (see exec_engine_opts.warm). */
        bool warm;
        const char *image; /* the image the engine's root comes from, for events; or NULL */
        /* Sandbox only: keep the host's network namespace (an MCP server
         * whose entry says "network": true). Everything else of the sandbox
         * stays: mounts, seccomp, limits, the user, pid, ipc and uts
         * namespaces; socket(AF_UNIX) is refused, since the host's abstract
         * unix sockets belong to its network namespace. Never pooled. */
        bool share_net;
};

/* A workspace directory opened once, so that every execution of a session
 * gets the same directory even if its path is later renamed or replaced by
 * a symbolic link. The last part of the path may not be a symbolic link.
 * Root's sandboxes act on it as its owner (on a root-owned one as root,
 * through an idmapped mount: exec_workspace_tree); the group is the owner's
 * primary group, never the directory's. */
struct exec_workspace;
int exec_workspace_open(const char *path, struct exec_workspace **out, char *err, size_t errlen);
void exec_workspace_free(struct exec_workspace *w);
/* The directory's absolute path as the kernel names it. */
const char *exec_workspace_path(const struct exec_workspace *w);
/* Whether sandboxes can use the workspace as `mode` asks: enter it, and
 * write it for rw. `native`: proctor's own sandboxes (a root operator's act
 * as root on a root-owned workspace); else containers, which act as nobody
 * there. 0, or -EACCES with one sentence in err naming the directory, whose
 * it is, whom sandboxes act as there, and the fix. */
int exec_workspace_usable(struct exec_workspace *w, enum exec_ws_mode mode, bool native, char *err,
                          size_t errlen);
/* Keeps `host_path` (proctor's own config, state or trace file) read-only in
 * every sandbox, if it lies inside the workspace; a directory is made first
 * (0700) when missing. Its ancestors inside the workspace cannot be renamed
 * from a sandbox either, so the path keeps leading to it. 0 or -errno. */
int exec_workspace_protect(struct exec_workspace *w, const char *host_path, bool is_dir, char *err,
                           size_t errlen);

struct exec;

/* What an execution reports, in order: start (or exit with setup_failed),
 * output and stats while it runs, exit, then remove once every resource is
 * released. `exec` stays valid until on_remove returns. */
struct exec_callbacks {
        void (*on_start)(struct exec *e, int pid, uint64_t setup_us, void *ud);
        void (*on_output)(struct exec *e, enum exec_stream s, const char *buf, size_t n, void *ud);
        void (*on_stats)(struct exec *e, const struct exec_stats *st, void *ud);
        void (*on_exit)(struct exec *e, const struct exec_result *r, void *ud);
        void (*on_remove)(struct exec *e, uint64_t teardown_us, void *ud);
        /* A runtime with its own lifecycle (docker) names each state it
         * enters: "created", "running", "exited", "removing". May be NULL. */
        void (*on_state)(struct exec *e, const char *state, void *ud);
};

struct exec_engine;

struct exec_engine_opts {
        const char *cgroup_root;    /* NULL: /sys/fs/cgroup (tests pass a fake tree) */
        const char *proc_root;      /* NULL: /proc, for /proc/self/cgroup and mountinfo */
        uint32_t stats_interval_ms; /* 0: 250 */
        bool no_cgroups;            /* force the rlimit-only path */
        unsigned prewarm;           /* children kept ready for the next spawn (0: none) */
        /* At most this many sandboxes kept with the command of the last
         * warm request already started, waiting for its stdin (0: none).
         * Each is its own clone, used once. Their wall clock, reported CPU
         * time and CPU limits start at the call. How many are kept follows
         * the calls (exec_warm_policy_next), within what the room callback
         * allows (exec_engine_set_warm_room). */
        unsigned warm;
        /* A warm pool with no warm call for this long shrinks by one (0: 30 s). */
        uint32_t warm_idle_ms;
        /* An image's root (exec/image) that every sandbox gets read-only
         * instead of the host's /usr and /etc entries; NULL: the host's. */
        const char *image_root;
        /* What runs sandboxed executions: NULL or "native" (this host's
         * sandbox), or "docker": one container per execution through the
         * Docker Engine API (local executions stay native). */
        const char *runtime;
        /* docker: the engine's address (unix:///PATH or tcp://HOST:PORT);
         * NULL: $DOCKER_HOST, else unix:///var/run/docker.sock. TLS comes
         * from $DOCKER_TLS_VERIFY and $DOCKER_CERT_PATH as for the CLI. */
        const char *docker_host;
        /* docker: the engine's image every container runs (required). */
        const char *docker_image;
        /* docker: the proctor.session label of its containers; NULL: none. */
        const char *session_id;
};

/* "native" or "docker". */
const char *exec_engine_runtime(const struct exec_engine *eng);
/* The runtime's own id for the execution (a container id), or NULL while
 * there is none (native, or not yet created). */
const char *exec_runtime_handle(const struct exec *e);
/* "native" or "docker": what runs this execution. */
const char *exec_runtime_name(const struct exec *e);

/* Creates the engine: detects cgroups, removes stale cgroups that dead
 * proctor processes left, and compiles the seccomp policy once. With the
 * docker runtime it checks the engine's socket (the error names the fix)
 * and removes the containers of dead proctor processes. */
int exec_engine_new(uv_loop_t *loop, const struct exec_engine_opts *o, struct exec_engine **out,
                    char *err, size_t errlen);
/* Kills every live execution and frees the engine once they are removed;
 * call uv_run afterwards to let teardown finish. */
void exec_engine_free(struct exec_engine *eng);

/* Starts one execution. On success *out is live until on_remove. Returns
 * -errno with a reason in err when nothing could be started (bad request,
 * missing workspace, clone or id maps refused): nothing is left behind then.
 * A failure inside the sandbox's own setup is reported through on_exit as
 * setup_failed, with the reason in the result's error. */
int exec_spawn(struct exec_engine *eng, const struct exec_request *req,
               const struct exec_callbacks *cb, void *ud, struct exec **out, char *err,
               size_t errlen);

/* Queues `len` bytes (copied) for the stdin of an execution spawned with
 * keep_stdin; writes go out in order without blocking the loop. 0, or
 * -EPIPE once its stdin is closed (it exited, or was never kept open). */
int exec_write(struct exec *e, const char *data, size_t len);

/* Kills the whole execution (every process of the sandbox); the exit is
 * reported as killed. Returns -ESRCH when it has already exited. */
int exec_kill(struct exec *e);

/* How an execution was paused: its cgroup frozen, or, with no freezer for
 * it (no cgroup: unprivileged without delegation), every process but its
 * init stopped by SIGSTOP. */
enum exec_pause_how { EXEC_PAUSE_FREEZER = 1, EXEC_PAUSE_SIGNAL = 2 };

/* Sends `sig` (1..64) to every process of the execution but its init (the
 * whole sandbox; in local mode the init's tree), without tearing anything
 * down: the command may exit on its own. An exit by a signal sent this way
 * is reported as killed, with the signal. A paused execution gets it when
 * resumed. 0, -EINVAL, or -ESRCH when no command runs (not yet started,
 * ended, or being killed). */
int exec_signal(struct exec *e, int sig);
/* Pauses every process of the execution (*how, may be NULL, says how).
 * The wall clock keeps running: a paused execution still times out, and
 * exec_kill ends it as any other. -EALREADY when already paused, -ESRCH
 * as for exec_signal. On cgroup v1 a frozen process cannot die until
 * thawed: should proctor be killed by SIGKILL while an execution is
 * frozen, its processes stay until the next engine starts, which reaps the
 * groups of dead proctor processes (thaws and kills them). */
int exec_pause(struct exec *e, enum exec_pause_how *how);
/* Lets a paused execution go on (*how: how it had been paused).
 * -EALREADY when it is not paused, -ESRCH as for exec_signal. */
int exec_resume(struct exec *e, enum exec_pause_how *how);
/* 0 when not paused. */
enum exec_pause_how exec_paused(const struct exec *e);
/* "freezer" or "signal", for events. */
const char *exec_pause_how_name(enum exec_pause_how how);
/* The live execution with that id (spawned and not yet removed), or NULL. */
struct exec *exec_engine_find(struct exec_engine *eng, uint64_t id);

/* Monotonic id of this execution within the engine, from 1. */
uint64_t exec_id(const struct exec *e);
int exec_pid(const struct exec *e);
const struct exec_limits *exec_limits(const struct exec *e);
enum exec_isolation exec_isolation(const struct exec *e);
/* True when the execution ran in a sandbox started ahead (warm). */
bool exec_warm(const struct exec *e);
/* True for a sandbox spawned with share_net. */
bool exec_shares_net(const struct exec *e);
/* True when the request asks for the session's disk quota: a sandbox with
 * the workspace rw and limits.disk_bytes set. */
bool exec_request_disk_quota(const struct exec_request *req);
/* True when the session's disk quota counts what this execution writes
 * to the workspace (it asked for one; with --runtime docker, on a local
 * engine). */
bool exec_disk_quota(const struct exec *e);

/* Limits a sandbox gets from cgroups (for the whole sandbox); those
 * missing hold only per process, through rlimits. */
enum { EXEC_CG_MEMORY = 1u << 0, EXEC_CG_CPU = 1u << 1, EXEC_CG_PIDS = 1u << 2 };
#define EXEC_CG_ALL (EXEC_CG_MEMORY | EXEC_CG_CPU | EXEC_CG_PIDS)
/* For this execution (0 for local ones, which get no sandbox limits). */
unsigned exec_cgroup_limits(const struct exec *e);
/* For the engine's sandboxes: makes and removes a trial group if none was
 * made yet, so the answer holds before the first execution. */
unsigned exec_engine_cgroup_limits(struct exec_engine *eng);
/* "memory, CPU and pids" for the bits missing from `have`, for people. */
const char *exec_cgroup_missing_text(unsigned have);

/* A pooled warm sandbox whose command runs, waiting for a call: its
 * counters so far (cpu_ms: what starting it cost; mem_bytes: the memory
 * it holds while it waits). -ENOENT when none is ready. */
int exec_engine_warm_stats(struct exec_engine *eng, struct exec_stats *st);

/* What happened to the warm pool's size: a warm call found a warm sandbox
 * (HIT) or none (MISS), or no warm call came for warm_idle_ms (IDLE). */
enum exec_warm_event { EXEC_WARM_HIT, EXEC_WARM_MISS, EXEC_WARM_IDLE };
/* The policy for the number of warm sandboxes to keep: one more for each
 * call that found none (a burst, or calls closer together than a start),
 * one less for each idle period, within [0, cap]. Pure. */
unsigned exec_warm_policy_next(unsigned target, unsigned cap, enum exec_warm_event ev);
/* Asked before each warm sandbox is added to the pool, with the number
 * already there (started or starting): whether the session's bounds leave
 * room for one more. NULL (the default): always. */
typedef bool (*exec_warm_room_fn)(void *ud, unsigned idle);
void exec_engine_set_warm_room(struct exec_engine *eng, exec_warm_room_fn fn, void *ud);
/* Warm sandboxes waiting in the pool (started or starting), and how many
 * the policy wants now. */
unsigned exec_engine_warm_idle(const struct exec_engine *eng);
unsigned exec_engine_warm_target(const struct exec_engine *eng);
/* Lets go of waiting warm sandboxes beyond `keep` (a real call needs their
 * room); the policy's size is unchanged. */
void exec_engine_warm_trim(struct exec_engine *eng, unsigned keep);

/* Called when the set of waiting warm sandboxes changes (one added, its
 * command started, taken by a call, or let go); not while the engine is
 * being freed. NULL: none. */
typedef void (*exec_warm_watch_fn)(void *ud);
void exec_engine_set_warm_watch(struct exec_engine *eng, exec_warm_watch_fn fn, void *ud);
/* The waiting warm sandboxes now, oldest first: up to `max` counters (from
 * their cgroups, or their command's /proc entry) and whether each one's
 * command runs (`ready`, may be NULL). Returns how many wait. */
unsigned exec_engine_warm_list(struct exec_engine *eng, struct exec_stats *st, bool *ready,
                               unsigned max);

/* Number of live executions (spawned and not yet removed). */
unsigned exec_engine_live(const struct exec_engine *eng);

const char *exec_reason_name(enum exec_reason r);

/* The conventional exit status for a result: the command's own code,
 * 128+N for signal N, 124 on timeout, 125 when setup failed. */
int exec_result_status(const struct exec_result *r);
const char *exec_ws_mode_name(enum exec_ws_mode m);
int exec_ws_mode_parse(const char *s, enum exec_ws_mode *out);

/* The defaults documented for the CLI: 512M, 5 s CPU, 120 s, 128 pids,
 * 64M tmpfs, 1M output, 4G disk. */
struct exec_limits exec_limits_default(void);

#endif
