/* exec: the parent side of every execution, on the caller's libuv loop:
 * clone, id maps and cgroup, then output pipes, the status pipe, a pidfd for
 * the exit, timers for the wall clock (a backstop to the init's) and stats,
 * the operator's signal, pause and resume, kill and classification.
 * Never blocks the loop: no waitpid without WNOHANG, no sleeping. */
#include "exec/exec.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <limits.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "exec/native/cgroup.h"
#include "exec/native/env.h"
#include "exec/runtime.h"
#include "exec/native/sandbox.h"
#include "exec/native/seccomp.h"
#include "exec/native/workspace.h"

#ifndef CLONE_PIDFD
#define CLONE_PIDFD 0x00001000
#endif
#ifndef CLONE_NEWCGROUP
#define CLONE_NEWCGROUP 0x02000000
#endif
#ifndef CLONE_INTO_CGROUP
#define CLONE_INTO_CGROUP 0x200000000ULL
#endif

#define SANDBOX_UID   1000u /* the command's uid and gid inside */
#define EXIT_GRACE_MS 200   /* wait for pipes after the init is gone */
/* The wall clock is held by each execution's init (see init_wait), which
 * keeps it while proctor is stopped. proctor's own timer is the backstop,
 * this much later so that the init, which ends the whole tree, normally
 * comes first: it acts alone for an init that cannot, frozen with its
 * command by exec_pause. */
#define DEADLINE_BACKSTOP_MS 100

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

struct clone_args_v2 {
        uint64_t flags, pidfd, child_tid, parent_tid, exit_signal, stack, stack_size, tls, set_tid,
            set_tid_size, cgroup;
};

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

static const char *const reason_names[] = {
    [EXEC_EXITED] = "exited",         [EXEC_SIGNALED] = "signaled",
    [EXEC_TIMEOUT] = "timeout",       [EXEC_OOM] = "oom",
    [EXEC_CPU_LIMIT] = "cpu_limit",   [EXEC_PIDS_LIMIT] = "pids_limit",
    [EXEC_KILLED] = "killed",         [EXEC_SETUP_FAILED] = "setup_failed",
    [EXEC_DISK_LIMIT] = "disk_limit",
};

static const char *const ws_names[] = {
    [EXEC_WS_RW] = "rw",
    [EXEC_WS_RO] = "ro",
    [EXEC_WS_OVERLAY] = "overlay",
    [EXEC_WS_NONE] = "none",
};

const char *exec_reason_name(enum exec_reason r)
{
        return (unsigned)r < sizeof(reason_names) / sizeof(reason_names[0]) ? reason_names[r]
                                                                            : "unknown";
}

int exec_result_status(const struct exec_result *r)
{
        if (r->reason == EXEC_SETUP_FAILED)
                return 125;
        if (r->reason == EXEC_TIMEOUT)
                return 124;
        if (r->signal != 0)
                return 128 + r->signal;
        return r->exit_code >= 0 ? r->exit_code : 1;
}

const char *exec_ws_mode_name(enum exec_ws_mode m)
{
        return (unsigned)m < sizeof(ws_names) / sizeof(ws_names[0]) ? ws_names[m] : "unknown";
}

int exec_ws_mode_parse(const char *s, enum exec_ws_mode *out)
{
        unsigned i;

        for (i = 0; i < sizeof(ws_names) / sizeof(ws_names[0]); i++) {
                if (strcmp(s, ws_names[i]) == 0) {
                        *out = (enum exec_ws_mode)i;
                        return 0;
                }
        }
        return -EINVAL;
}

struct exec_limits exec_limits_default(void)
{
        struct exec_limits l = {
            .memory_bytes = 512ull << 20,
            .cpu_ms = 5000,
            .timeout_ms = 120000,
            .pids = 128,
            .tmpfs_bytes = 64ull << 20,
            .output_bytes = 1ull << 20,
            .disk_bytes = 4ull << 30,
        };
        return l;
}

uint64_t exec_id(const struct exec *e)
{
        return e->id;
}

int exec_pid(const struct exec *e)
{
        return e->pid;
}

const struct exec_limits *exec_limits(const struct exec *e)
{
        return &e->lim;
}

enum exec_isolation exec_isolation(const struct exec *e)
{
        return e->iso;
}

bool exec_warm(const struct exec *e)
{
        return e->warm;
}

bool exec_shares_net(const struct exec *e)
{
        return e->share_net;
}

bool exec_request_disk_quota(const struct exec_request *req)
{
        return req->isolation == EXEC_SANDBOX && req->ws_mode == EXEC_WS_RW &&
               req->limits.disk_bytes > 0;
}

bool exec_disk_quota(const struct exec *e)
{
        return e->ws != NULL;
}

static unsigned cg_limit_bits(unsigned controllers)
{
        return ((controllers & CG_MEMORY) ? EXEC_CG_MEMORY : 0) |
               ((controllers & CG_CPU) ? EXEC_CG_CPU : 0) |
               ((controllers & CG_PIDS) ? EXEC_CG_PIDS : 0);
}

unsigned exec_cgroup_limits(const struct exec *e)
{
        if (e->rt != NULL)
                return EXEC_CG_ALL; /* the engine limits the container as a whole */
        if (e->iso != EXEC_SANDBOX || e->cg == NULL)
                return 0;
        return cg_limit_bits(cgroup_sys_controllers(e->eng->cg));
}

unsigned exec_engine_cgroup_limits(struct exec_engine *eng)
{
        static uint64_t trial;
        struct cgroup *cg = NULL;
        char name[64], err[256];

        if (eng->rt != NULL)
                return EXEC_CG_ALL; /* the engine limits each container as a whole */
        if (eng->cg != NULL && !eng->proven) {
                snprintf(name, sizeof(name), "proctor-%d-trial%" PRIu64, getpid(), ++trial);
                if (cgroup_create_with(eng->cg, name, CG_FOR_SANDBOX, NULL, &cg, err,
                                       sizeof(err)) == 0)
                        cgroup_destroy(cg);
                eng->proven = true;
                if (cgroup_sys_version(eng->cg) == CGROUP_NONE) {
                        cgroup_sys_free(eng->cg);
                        eng->cg = NULL;
                }
        }
        return eng->cg != NULL ? cg_limit_bits(cgroup_sys_controllers(eng->cg)) : 0;
}

const char *exec_cgroup_missing_text(unsigned have)
{
        static const char *const names[8] = {
            "memory, CPU and pids", "CPU and pids", "memory and pids", "pids",
            "memory and CPU",       "CPU",          "memory",          "",
        };
        return names[have & EXEC_CG_ALL];
}

unsigned exec_engine_live(const struct exec_engine *eng)
{
        return eng->live;
}

static uint64_t now_us(void)
{
        struct timespec ts;

        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (uint64_t)ts.tv_sec * 1000000u + (uint64_t)ts.tv_nsec / 1000u;
}

/* ---- engine ---- */

static int write_str(const char *path, const char *s)
{
        int fd = open(path, O_WRONLY | O_CLOEXEC);
        ssize_t n;
        int e;

        if (fd < 0)
                return -errno;
        n = write(fd, s, strlen(s));
        e = errno;
        close(fd);
        return n == (ssize_t)strlen(s) ? 0 : -e;
}

static int write_id_maps(pid_t pid, uint32_t uid, uint32_t gid)
{
        char path[64], map[64];
        int rc;

        /* Root keeps setgroups so the child can drop root's groups; others
         * must deny it before they may write a gid map. */
        if (geteuid() != 0) {
                snprintf(path, sizeof(path), "/proc/%d/setgroups", pid);
                rc = write_str(path, "deny");
                if (rc < 0 && rc != -ENOENT)
                        return rc;
        }
        snprintf(path, sizeof(path), "/proc/%d/uid_map", pid);
        snprintf(map, sizeof(map), "%u %u 1\n", SANDBOX_UID, uid);
        if ((rc = write_str(path, map)) < 0)
                return rc;
        snprintf(path, sizeof(path), "/proc/%d/gid_map", pid);
        snprintf(map, sizeof(map), "%u %u 1\n", SANDBOX_UID, gid);
        return write_str(path, map);
}

/* The runtime named in `o`: sandboxes of a runtime other than native are
 * never pooled or started warm, as each is the runtime's own. */
static int engine_runtime(struct exec_engine *eng, uv_loop_t *loop,
                          const struct exec_engine_opts *o, char *err, size_t errlen)
{
        if (o == NULL || o->runtime == NULL || strcmp(o->runtime, "native") == 0)
                return 0;
        if (strcmp(o->runtime, "docker") != 0) {
                snprintf(err, errlen, "unknown runtime '%s' (expected native or docker)",
                         o->runtime);
                return -EINVAL;
        }
        eng->rt = &exec_runtime_docker;
        eng->prewarm = 0;
        eng->warm = 0;
        return eng->rt->engine_new(loop, o, &eng->rt_state, err, errlen);
}

const char *exec_engine_runtime(const struct exec_engine *eng)
{
        return eng->rt != NULL ? eng->rt->name : "native";
}

const char *exec_runtime_name(const struct exec *e)
{
        return e->rt != NULL ? e->rt->name : "native";
}

const char *exec_runtime_handle(const struct exec *e)
{
        return e->rt != NULL ? e->rt->handle(e) : NULL;
}

int exec_engine_new(uv_loop_t *loop, const struct exec_engine_opts *o, struct exec_engine **out,
                    char *err, size_t errlen)
{
        struct exec_engine *eng = calloc(1, sizeof(*eng));
        char why[256] = "";
        char selfcg[300];
        int rc;

        if (eng == NULL)
                return -ENOMEM;
        eng->loop = loop;
        /* An image's root replaces the host's in every sandbox (exec/image). */
        if (o != NULL && o->image_root != NULL &&
            (rc = sandbox_host_open_root(&eng->host, o->image_root, err, errlen)) < 0) {
                free(eng);
                return rc;
        }
        eng->stats_ms = o != NULL && o->stats_interval_ms ? o->stats_interval_ms : 250;
        eng->prewarm = o != NULL ? o->prewarm : 0;
        eng->warm = o != NULL ? o->warm : 0;
        eng->warm_idle_ms = o != NULL && o->warm_idle_ms ? o->warm_idle_ms : 30000;
        if ((rc = engine_runtime(eng, loop, o, err, errlen)) < 0) {
                sandbox_host_free(eng->host);
                free(eng);
                return rc;
        }
        uv_timer_init(loop, &eng->refill);
        eng->refill.data = eng;
        uv_timer_init(loop, &eng->warm_idle);
        eng->warm_idle.data = eng;
        /* Shrinking an idle pool is no reason to keep a loop running. */
        uv_unref((uv_handle_t *)&eng->warm_idle);
        eng->handles = 2;
        if (o == NULL || !o->no_cgroups) {
                snprintf(selfcg, sizeof(selfcg), "%s/self/cgroup",
                         o != NULL && o->proc_root ? o->proc_root : "/proc");
                /* The first group proves the hierarchies (see child_new). */
                rc = cgroup_sys_open_unproven(o != NULL && o->cgroup_root ? o->cgroup_root
                                                                          : "/sys/fs/cgroup",
                                              selfcg, &eng->cg, why, sizeof(why));
                if (rc < 0 || cgroup_sys_version(eng->cg) == CGROUP_NONE) {
                        cgroup_sys_free(eng->cg);
                        eng->cg = NULL;
                } else {
                        cgroup_sys_reap_stale(eng->cg);
                }
        }
        *out = eng;
        return 0;
}

/* The sandbox's root template and seccomp policy, made on first use so that
 * local-only processes never pay for them. */
static int engine_prepare_sandbox(struct exec_engine *eng, char *err, size_t errlen)
{
        int rc;

        if (eng->host == NULL && (rc = sandbox_host_open(&eng->host, err, errlen)) < 0)
                return rc;
        eng->seccomp = seccomp_policy_builtin();
        return 0;
}

static void engine_freed(uv_handle_t *h)
{
        struct exec_engine *eng = h->data;

        if (--eng->handles == 0)
                free(eng);
}

static void strv_free(char **v)
{
        for (char **p = v; p != NULL && *p != NULL; p++)
                free(*p);
        free(v);
}

static void engine_destroy(struct exec_engine *eng)
{
        if (eng->rt != NULL)
                eng->rt->engine_free(eng->rt_state);
        strv_free(eng->ww.argv);
        strv_free(eng->ww.env_extra);
        cgroup_sys_free(eng->cg);
        sandbox_host_free(eng->host);
        uv_close((uv_handle_t *)&eng->refill, engine_freed);
        uv_close((uv_handle_t *)&eng->warm_idle, engine_freed);
}

static void kill_for(struct exec *e, enum exec_reason why);

void exec_engine_free(struct exec_engine *eng)
{
        struct exec *e;

        if (eng == NULL)
                return;
        eng->freeing = true;
        uv_timer_stop(&eng->refill);
        uv_timer_stop(&eng->warm_idle);
        for (e = eng->list; e != NULL; e = e->next)
                if (!e->exit_reported)
                        kill_for(e, EXEC_KILLED);
        if (eng->children == 0)
                engine_destroy(eng);
}

/* ---- lifecycle ---- */

static void exec_finish_remove(struct exec *e);
static void pool_unlink(struct exec *e);
static void pool_refill(uv_timer_t *t);
static void warm_start(struct exec_engine *eng, struct exec *e);
static void close_fd(int *fd);
static void close_output(struct exec *e, struct exec_output *o);

/* Refills the pool from the loop, soon. One already due keeps its place:
 * restarting the timer would put it behind whatever was queued since (the
 * next model turn, whose call would then find the pool empty). */
static void refill_soon(struct exec_engine *eng)
{
        if (!uv_is_active((uv_handle_t *)&eng->refill))
                uv_timer_start(&eng->refill, pool_refill, 0, 0);
}

static void on_handle_closed(uv_handle_t *h)
{
        struct exec *e = h->data;

        if (--e->open_handles == 0)
                exec_finish_remove(e);
}

static void close_handle(struct exec *e, uv_handle_t *h)
{
        if (h->data == e && !uv_is_closing(h))
                uv_close(h, on_handle_closed);
}

static void destroy_retry(uv_timer_t *t);

static void exec_finish_remove(struct exec *e)
{
        struct exec_engine *eng = e->eng;
        struct exec **pp;

        if (e->cg != NULL) {
                int rc = cgroup_destroy(e->cg);
                if (rc == -EBUSY) {
                        /* Processes still leaving: try again shortly. */
                        uv_timer_init(eng->loop, &e->grace);
                        e->grace.data = e;
                        e->open_handles++;
                        uv_timer_start(&e->grace, destroy_retry, 5, 0);
                        return;
                }
                e->cg = NULL;
        }
        if (e->pidfd >= 0)
                close(e->pidfd);
        close_fd(&e->ctl_fd);
        for (pp = &eng->list; *pp != NULL; pp = &(*pp)->next) {
                if (*pp == e) {
                        *pp = e->next;
                        break;
                }
        }
        if (e->in_pool)
                pool_unlink(e);
        if (e->assigned) {
                if (e->cb.on_remove != NULL)
                        e->cb.on_remove(e, now_us() - e->exit_us, e->ud);
                eng->live--;
                /* Make the next child now that this one's cgroup work is
                 * done, rather than during a call; its room may have been
                 * what a warm sandbox waited for. */
                if ((eng->prewarm > 0 || eng->warm_target > 0) && !eng->freeing)
                        refill_soon(eng);
        }
        free(e->stdin_copy);
        exec_workspace_free(e->own_ws);
        free(e);
        eng->children--;
        if (eng->freeing && eng->children == 0)
                engine_destroy(eng);
}

static void destroy_retry(uv_timer_t *t)
{
        struct exec *e = t->data;

        if (e->cg != NULL) {
                cgroup_kill(e->cg);
                if (cgroup_destroy(e->cg) == -EBUSY) {
                        uv_timer_start(&e->grace, destroy_retry, 20, 0);
                        return;
                }
                e->cg = NULL;
        }
        uv_close((uv_handle_t *)t, on_handle_closed);
}

static void proc_stats(struct exec *e, struct cgroup_stats *cs);

/* A warm sandbox's command was already running when the call took it: its
 * start is reported after exec_spawn has returned (from the grace timer,
 * idle until the command ends), and before anything else of the call. */
static void warm_announce(struct exec *e)
{
        if (!e->start_due)
                return;
        e->start_due = false;
        uv_timer_stop(&e->grace);
        if (e->cb.on_start != NULL)
                e->cb.on_start(e, e->pid, now_us() - e->t0_us, e->ud);
}

static void warm_announce_due(uv_timer_t *t)
{
        warm_announce(t->data);
}

/* The execution's counters now; a warm sandbox's CPU time counts from the
 * call, not from its interpreter's start. */
static void read_stats(struct exec *e, struct cgroup_stats *cs, bool proc_too)
{
        memset(cs, 0, sizeof(*cs));
        if (e->cg != NULL)
                cgroup_read_stats(e->cg, cs);
        else if (proc_too)
                proc_stats(e, cs);
        cs->cpu_ns = cs->cpu_ns > e->cpu_base_ns ? cs->cpu_ns - e->cpu_base_ns : 0;
}

static enum exec_reason classify(struct exec *e, const struct cgroup_stats *cs,
                                 struct exec_result *r)
{
        int st = e->have_status ? e->wait_status : e->init_status;
        bool over_cpu = e->lim.cpu_ms > 0 && r->cpu_ms >= e->lim.cpu_ms;

        r->exit_code = -1;
        r->signal = 0;
        if (WIFEXITED(st))
                r->exit_code = WEXITSTATUS(st);
        else if (WIFSIGNALED(st))
                r->signal = WTERMSIG(st);
        if (e->setup_failed)
                return EXEC_SETUP_FAILED;
        if (e->has_pending)
                return e->pending;
        /* Ended by a signal the operator chose to send (exec_signal). */
        if (r->signal > 0 && r->signal <= 64 && (e->op_signals & (1ull << (r->signal - 1))))
                return EXEC_KILLED;
        /* The memory limit ended a process of the sandbox: that is what the
         * operator needs to know, even when the command shrugged it off. */
        if (cs->oom_kills > 0)
                return EXEC_OOM;
        if (r->signal == SIGXCPU || (over_cpu && (r->signal != 0 || r->exit_code > 128)))
                return EXEC_CPU_LIMIT;
        /* RLIMIT_FSIZE held a file to what the disk quota had left. */
        if (e->ws != NULL && r->signal == SIGXFSZ)
                return EXEC_DISK_LIMIT;
        return r->signal != 0 ? EXEC_SIGNALED : EXEC_EXITED;
}

static void report_exit(struct exec *e)
{
        struct exec_result r;
        struct cgroup_stats cs;

        if (e->exit_reported)
                return;
        warm_announce(e);
        e->exit_reported = true;
        e->exit_us = now_us();
        memset(&r, 0, sizeof(r));
        read_stats(e, &cs, false);
        /* The init's clock, not the report's: a supervisor stopped for a
         * while reports late, but the command ended when it ended. */
        r.wall_ms = ((e->end_us > e->t0_us ? e->end_us : e->exit_us) - e->t0_us) / 1000;
        if (e->cg != NULL) {
                r.cpu_ms = cs.cpu_ns / 1000000u;
                r.mem_peak_bytes = cs.mem_peak_bytes;
        } else if (!e->reaped && e->early_cpu) {
                r.cpu_ms = e->early_cpu_ns / 1000000u;
                r.mem_peak_bytes = e->early_rss;
        } else {
                r.cpu_ms = (uint64_t)(e->ru.ru_utime.tv_sec + e->ru.ru_stime.tv_sec) * 1000u +
                           (uint64_t)(e->ru.ru_utime.tv_usec + e->ru.ru_stime.tv_usec) / 1000u;
                r.cpu_ms -=
                    r.cpu_ms > e->cpu_base_ns / 1000000u ? e->cpu_base_ns / 1000000u : r.cpu_ms;
                r.mem_peak_bytes = (uint64_t)e->ru.ru_maxrss * 1024u;
        }
        if (e->last.mem_peak_bytes > r.mem_peak_bytes)
                r.mem_peak_bytes = e->last.mem_peak_bytes;
        r.reason = classify(e, &cs, &r);
        if (e->ws != NULL)
                ws_quota_sample(e->ws); /* what it left behind counts for the next */
        r.truncated = e->truncated;
        snprintf(r.error, sizeof(r.error), "%s", e->error);
        /* A warm call's successor starts once its result is out (the timer
         * runs after on_exit's work, before what that work started), so
         * that its interpreter's start never competes with the call. */
        if (e->assigned && e->warm && !e->eng->freeing)
                refill_soon(e->eng);
        if (e->assigned && e->cb.on_exit != NULL)
                e->cb.on_exit(e, &r, e->ud);
        close_output(e, &e->out);
        close_output(e, &e->err);
        close_handle(e, (uv_handle_t *)&e->out_tick);
        close_handle(e, (uv_handle_t *)&e->status);
        close_handle(e, (uv_handle_t *)&e->in);
        if (e->reaped)
                close_handle(e, (uv_handle_t *)&e->exit_poll);
        close_handle(e, (uv_handle_t *)&e->timeout);
        close_handle(e, (uv_handle_t *)&e->stats);
        close_handle(e, (uv_handle_t *)&e->grace);
}

static void grace_expired(uv_timer_t *t);

/* The exit is reported once the command's status is known (from the init,
 * or from reaping the init; without cgroups only the reap gives its CPU
 * time) and stdout and stderr have delivered their last byte, so output
 * never arrives after exit. The init may be reaped after that. */
static void maybe_report(struct exec *e)
{
        bool known = e->reaped || (e->have_status && (e->cg != NULL || e->early_cpu));

        if (known && e->open_streams == 0)
                report_exit(e);
}

/* The command is over: its clocks stop, and leftovers get a grace period to
 * let go of the output pipes. */
static void command_over(struct exec *e)
{
        warm_announce(e);
        uv_timer_stop(&e->timeout);
        uv_timer_stop(&e->stats);
        if (e->open_streams > 0 && !uv_is_active((uv_handle_t *)&e->grace))
                uv_timer_start(&e->grace, grace_expired, EXIT_GRACE_MS, 0);
        maybe_report(e);
}

static void output_stop(struct exec *e, struct exec_output *o);

static void grace_expired(uv_timer_t *t)
{
        struct exec *e = t->data;

        /* A local leftover still holds a pipe open: stop waiting for it.
         * The streams stop for good, so that an end-of-file read later
         * cannot count them off a second time (which held the exit back
         * forever on a loaded host). */
        output_stop(e, &e->out);
        output_stop(e, &e->err);
        maybe_report(e);
}

static void send_kill(struct exec *e)
{
        if (e->reaped)
                return;
        if (e->in_pool)
                pool_unlink(e);
        if (e->iso == EXEC_SANDBOX) {
                /* The init is pid 1: its death makes the kernel kill every
                 * process of the namespace; nothing can fork out of it. */
                if (syscall(SYS_pidfd_send_signal, e->pidfd, SIGKILL, NULL, 0) != 0)
                        kill(e->pid, SIGKILL);
                /* A frozen init dies only once thawed (v1); cgroup_kill
                 * kills the whole group while it is still frozen, then
                 * thaws it, so nothing of it runs again. */
                if (e->paused == EXEC_PAUSE_FREEZER && e->cg != NULL)
                        cgroup_kill(e->cg);
        } else {
                /* The init itself first: it may not lead its group yet. */
                if (syscall(SYS_pidfd_send_signal, e->pidfd, SIGKILL, NULL, 0) != 0)
                        kill(e->pid, SIGKILL);
                kill(-e->pid, SIGKILL);
                /* Local children may have left the process group. */
                if (e->cg != NULL)
                        cgroup_kill(e->cg);
        }
        e->killed_sent = true;
        e->paused = 0; /* SIGKILL ends stopped processes as well */
}

static void kill_for(struct exec *e, enum exec_reason why)
{
        if (e->rt != NULL) {
                if (!e->exit_reported)
                        e->rt->kill(e, why);
                return;
        }
        if (!e->has_pending) {
                e->pending = why;
                e->has_pending = true;
        }
        send_kill(e);
}

int exec_kill(struct exec *e)
{
        if (e->rt != NULL && !e->exit_reported) {
                e->rt->kill(e, EXEC_KILLED);
                return 0;
        }
        if (!e->assigned || e->reaped || e->exit_reported)
                return -ESRCH;
        kill_for(e, EXEC_KILLED);
        return 0;
}

/* ---- operator control: signal, pause, resume ---- */

/* Descendants a tree walk follows at most (a fork bomb's are bounded by
 * its pids limit or RLIMIT_NPROC well before this). */
#define TREE_MAX 4096

struct tree_stack {
        pid_t pid[TREE_MAX];
        int top;
};

static void tree_push(pid_t pid, void *arg)
{
        struct tree_stack *st = arg;

        if (st->top < TREE_MAX)
                st->pid[st->top++] = pid;
}

/* Sends `sig` to every descendant of the init `root`, each before its
 * children are read (so a stopped parent forks no more). Without a cgroup
 * the init's descendants are the whole execution: a sandbox's pid
 * namespace, or the tree a local init is the subreaper of. This reads
 * only their /proc entries, never the whole of /proc. Returns how many. */
static int tree_signal(pid_t root, int sig)
{
        static struct tree_stack st;
        int sent = 0;

        st.top = 0;
        tree_push(root, &st);
        while (st.top > 0) {
                pid_t p = st.pid[--st.top];
                if (p != root && kill(p, sig) == 0)
                        sent++;
                sandbox_threads_each(p, NULL, tree_push, &st);
        }
        return sent;
}

/* Every process of the execution but its init, which must go on reaping
 * (and, for a sandbox, is what keeps the namespace alive). */
static int signal_all(struct exec *e, int sig)
{
        return e->cg != NULL ? cgroup_signal(e->cg, sig, e->pid) : tree_signal(e->pid, sig);
}

/* The command runs: launched, not yet ended, not being killed. */
static bool command_live(const struct exec *e)
{
        return e->assigned && e->started && !e->reaped && !e->have_status && !e->exit_reported &&
               !e->killed_sent;
}

int exec_signal(struct exec *e, int sig)
{
        int rc;

        if (sig <= 0 || sig > 64)
                return -EINVAL;
        if (e->rt != NULL)
                return e->exit_reported ? -ESRCH : e->rt->signal(e, sig);
        if (!command_live(e))
                return -ESRCH;
        e->op_signals |= 1ull << (sig - 1);
        rc = signal_all(e, sig);
        return rc < 0 ? rc : 0;
}

/* A runtime's pause: its engine freezes the container. */
static int rt_pause(struct exec *e, bool on, enum exec_pause_how *how)
{
        int rc = e->exit_reported ? -ESRCH : e->rt->pause(e, on);

        if (rc < 0)
                return rc;
        e->paused = on ? EXEC_PAUSE_FREEZER : 0;
        if (how != NULL)
                *how = EXEC_PAUSE_FREEZER;
        return 0;
}

/* A pause freezes the whole cgroup, the init with the command: on cgroup v1
 * a frozen process cannot be killed until thawed, so an init kept running
 * outside the frozen set could not end its command at the deadline anyway.
 * The wall clock keeps running all the same: proctor's own timer (the
 * backstop, see DEADLINE_BACKSTOP_MS) kills a paused execution at its
 * deadline, thawing it (send_kill). A supervisor stopped while an
 * execution is paused extends nothing: the command does not run. Without
 * a freezer every process but the init is stopped by SIGSTOP; the init
 * then holds the deadline itself, as SIGKILL ends stopped processes. */
int exec_pause(struct exec *e, enum exec_pause_how *how)
{
        int rc = -ENOTSUP;

        if (e->rt != NULL && e->paused == 0)
                return rt_pause(e, true, how);
        if (e->rt == NULL && !command_live(e))
                return -ESRCH;
        if (e->paused != 0) {
                if (how != NULL)
                        *how = e->paused;
                return -EALREADY;
        }
        if (e->cg != NULL)
                rc = cgroup_freeze(e->cg, true);
        if (rc == 0) {
                e->paused = EXEC_PAUSE_FREEZER;
        } else {
                if (rc != -ENOTSUP && e->cg != NULL)
                        cgroup_freeze(e->cg, false); /* half-made: undo what it did */
                if ((rc = signal_all(e, SIGSTOP)) < 0)
                        return rc;
                e->paused = EXEC_PAUSE_SIGNAL;
        }
        if (how != NULL)
                *how = e->paused;
        return 0;
}

int exec_resume(struct exec *e, enum exec_pause_how *how)
{
        enum exec_pause_how was = e->paused;
        int rc;

        if (e->rt != NULL && was != 0)
                return rt_pause(e, false, how);
        if (e->rt == NULL && !command_live(e))
                return -ESRCH;
        if (was == 0)
                return -EALREADY;
        rc = was == EXEC_PAUSE_FREEZER ? cgroup_freeze(e->cg, false) : signal_all(e, SIGCONT);
        if (rc < 0)
                return rc;
        e->paused = 0;
        if (how != NULL)
                *how = was;
        return 0;
}

enum exec_pause_how exec_paused(const struct exec *e)
{
        return e->paused;
}

const char *exec_pause_how_name(enum exec_pause_how how)
{
        return how == EXEC_PAUSE_FREEZER ? "freezer" : how == EXEC_PAUSE_SIGNAL ? "signal" : "none";
}

struct exec *exec_engine_find(struct exec_engine *eng, uint64_t id)
{
        struct exec *e;

        for (e = eng->list; e != NULL; e = e->next)
                if (e->assigned && e->id == id)
                        return e;
        return NULL;
}

static void on_exit_readable(uv_poll_t *p, int status, int events)
{
        struct exec *e = p->data;
        int st;
        pid_t w = wait4(e->pid, &st, WNOHANG, &e->ru);

        if (w != e->pid)
                return;
        e->reaped = true;
        e->init_status = st;
        uv_poll_stop(p);
        if (e->iso == EXEC_LOCAL)
                kill(-e->pid, SIGKILL); /* leftovers of the process group */
        if (e->exit_reported)
                close_handle(e, (uv_handle_t *)&e->exit_poll);
        else
                command_over(e);
}

static void on_timeout(uv_timer_t *t)
{
        kill_for(t->data, EXEC_TIMEOUT);
}

/* Without cgroups: the command's own counters from one /proc file. */
static void proc_stats(struct exec *e, struct cgroup_stats *cs)
{
        char path[64], buf[1024];
        unsigned long long ut, st, cut, cst, rss;
        const char *p;
        ssize_t n;
        int fd;

        if (e->cmd_pid <= 0)
                return;
        snprintf(path, sizeof(path), "/proc/%d/stat", e->cmd_pid);
        fd = open(path, O_RDONLY | O_CLOEXEC);
        if (fd < 0)
                return;
        n = read(fd, buf, sizeof(buf) - 1);
        close(fd);
        if (n <= 0)
                return;
        buf[n] = '\0';
        p = strrchr(buf, ')');
        if (p == NULL || sscanf(p + 2,
                                "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu %llu "
                                "%llu %*d %*d %*d %*d %*u %*u %llu",
                                &ut, &st, &cut, &cst, &rss) != 5)
                return;
        cs->cpu_ns = (ut + st + cut + cst) * (1000000000ull / (uint64_t)sysconf(_SC_CLK_TCK));
        cs->mem_bytes = rss * (uint64_t)sysconf(_SC_PAGESIZE);
        cs->pids = 1;
}

static void on_stats(uv_timer_t *t)
{
        struct exec *e = t->data;
        struct cgroup_stats cs;
        uint64_t now = now_us();

        read_stats(e, &cs, true);
        if (e->last_sample_us != 0 && now > e->last_sample_us && cs.cpu_ns >= e->last_cpu_ns)
                e->last.cpu_pct =
                    (double)(cs.cpu_ns - e->last_cpu_ns) / 10.0 / (double)(now - e->last_sample_us);
        e->last_cpu_ns = cs.cpu_ns;
        e->last_sample_us = now;
        e->last.cpu_ms = cs.cpu_ns / 1000000u;
        e->last.mem_bytes = cs.mem_bytes;
        if (cs.mem_peak_bytes < cs.mem_bytes)
                cs.mem_peak_bytes = cs.mem_bytes;
        if (cs.mem_peak_bytes > e->last.mem_peak_bytes)
                e->last.mem_peak_bytes = cs.mem_peak_bytes;
        e->last.pids = cs.pids;
        if (e->cb.on_stats != NULL)
                e->cb.on_stats(e, &e->last, e->ud);
        if (e->ws != NULL)
                ws_quota_sample(e->ws);
        if (e->iso != EXEC_SANDBOX)
                return;
        if (e->lim.cpu_ms > 0 && e->last.cpu_ms >= e->lim.cpu_ms)
                kill_for(e, EXEC_CPU_LIMIT);
        else if (cs.pids_denied > 0)
                kill_for(e, EXEC_PIDS_LIMIT);
}

static void alloc_cb(uv_handle_t *h, size_t suggested, uv_buf_t *buf)
{
        static char slab[65536];

        (void)h;
        (void)suggested;
        *buf = uv_buf_init(slab, sizeof(slab));
}

/* ---- output ---- */

/* A flooded pipe is grown to this (the unprivileged maximum by default). */
#define OUTPUT_PIPE_BYTES (1u << 20)
/* Every wake-up costs the supervisor a context switch, and every page that
 * leaves a pipe costs it the page's release, whatever it does with the
 * bytes. So a stream that keeps waking us (a wake-up that finds at least
 * OUTPUT_BUSY_BYTES, or one within OUTPUT_TICK_MS of the last) is no longer
 * polled: it is drained every OUTPUT_TICK_MS, at most OUTPUT_TICK_BYTES a
 * time, until a tick finds it empty. A command that prints a little and
 * exits is never held back. */
#define OUTPUT_BUSY_BYTES (32u << 10)
#define OUTPUT_TICK_MS    1
/* A pipeful and what the command writes while it drains: a flood then
 * runs at up to about 1 GB/s a stream, the supervisor spends at most a
 * small part of a core on it, and the command still reaches its CPU
 * limit (a stalled one would only end at the wall clock). */
#define OUTPUT_TICK_BYTES (2 * OUTPUT_PIPE_BYTES)

/* One read, so one on_output call and one event, takes at most this: large
 * enough that a pipeful costs four calls, small enough that a view folding
 * it in keeps answering keys. */
static char out_slab[256u << 10];

static void drain_status(struct exec *e);

/* Past the cap the bytes only have to leave the pipe: splice hands its
 * pages to /dev/null without copying them. Where splice cannot, they are
 * read and dropped. */
static ssize_t output_discard(int fd, size_t max)
{
        static int null_fd = -2;
        ssize_t n;

        if (null_fd == -2)
                null_fd = open("/dev/null", O_WRONLY | O_CLOEXEC);
        if (null_fd >= 0) {
                n = splice(fd, NULL, null_fd, NULL, max, SPLICE_F_NONBLOCK);
                if (n >= 0 || errno == EAGAIN || errno == EINTR)
                        return n;
                close(null_fd);
                null_fd = -1;
        }
        return read(fd, out_slab, max < sizeof(out_slab) ? max : sizeof(out_slab));
}

/* Moves up to `max` bytes of what the pipe holds now: those under the cap
 * (shared by stdout and stderr) to on_output, the rest away. Returns the
 * bytes moved and sets eof when the last writer is gone. */
static size_t output_drain(struct exec *e, struct exec_output *o, size_t max)
{
        enum exec_stream which = o == &e->out ? EXEC_STDOUT : EXEC_STDERR;
        uint64_t cap = e->lim.output_bytes;
        size_t moved = 0, want;
        ssize_t n;

        while (moved < max) {
                uint64_t room = cap > e->out_bytes ? cap - e->out_bytes : 0;
                want = max - moved;
                if (cap == 0 || room > 0) {
                        if (want > sizeof(out_slab))
                                want = sizeof(out_slab);
                        /* Never read past the cap: those bytes would be copied for nothing. */
                        if (cap != 0 && room < want)
                                want = (size_t)room;
                        n = read(o->fd, out_slab, want);
                        if (n > 0 && e->cb.on_output != NULL)
                                e->cb.on_output(e, which, out_slab, (size_t)n, e->ud);
                } else {
                        n = output_discard(o->fd, want);
                        if (n > 0)
                                e->truncated = true;
                        /* A flood past the cap: from here the sandbox's own
                         * init empties the pipe, on the sandbox's CPU time. */
                        if (n > 0 && e->iso == EXEC_SANDBOX && e->ctl_fd >= 0 &&
                            sandbox_hand_over(e->ctl_fd, o->fd) == 0) {
                                e->out_bytes += (uint64_t)n;
                                moved += (size_t)n;
                                o->eof = true;
                                break;
                        }
                }
                if (n < 0 && errno == EINTR)
                        continue;
                if (n <= 0) {
                        /* EAGAIN: drained. Any other error ends the stream as EOF does. */
                        o->eof = n == 0 || errno != EAGAIN;
                        break;
                }
                e->out_bytes += (uint64_t)n;
                moved += (size_t)n;
                /* A short read emptied the pipe: the next write wakes us again. */
                if ((size_t)n < want)
                        break;
        }
        return moved;
}

/* Stops watching a stream, once: it no longer holds the exit back. */
static void output_stop(struct exec *e, struct exec_output *o)
{
        if (o->ended)
                return;
        o->ended = true;
        uv_poll_stop(&o->poll);
        o->flooding = false;
        e->open_streams--;
}

static void output_end(struct exec *e, struct exec_output *o)
{
        output_stop(e, o);
        maybe_report(e);
}

static void output_ready(uv_poll_t *p, int status, int events);

static void output_tick(uv_timer_t *t)
{
        struct exec *e = t->data;
        struct exec_output *all[] = {&e->out, &e->err};
        bool flooding = false;
        size_t i;

        for (i = 0; i < 2 && !e->exit_reported; i++) {
                struct exec_output *o = all[i];
                if (!o->flooding)
                        continue;
                if (output_drain(e, o, OUTPUT_TICK_BYTES) > 0) {
                        flooding = true;
                } else if (o->eof) {
                        output_end(e, o);
                } else {
                        /* Quiet for a whole tick: wake-ups are cheap again. */
                        o->flooding = false;
                        o->last_us = 0;
                        uv_poll_start(&o->poll, UV_READABLE, output_ready);
                }
        }
        if (!flooding && !e->exit_reported)
                uv_timer_stop(t);
}

static void output_flood(struct exec *e, struct exec_output *o)
{
        if (!o->grown) {
                o->grown = true;
                /* Refused beyond the user's pipe quota: 64 KiB then. */
                (void)fcntl(o->fd, F_SETPIPE_SZ, (int)OUTPUT_PIPE_BYTES);
        }
        uv_poll_stop(&o->poll);
        o->flooding = true;
        if (!uv_is_active((uv_handle_t *)&e->out_tick)) {
                /* The loop's clock is from its last wake-up: a tick due
                 * from then could come at once. */
                uv_update_time(e->eng->loop);
                uv_timer_start(&e->out_tick, output_tick, OUTPUT_TICK_MS, OUTPUT_TICK_MS);
        }
}

static void output_ready(uv_poll_t *p, int status, int events)
{
        struct exec *e = p->data;
        struct exec_output *o = p == &e->out.poll ? &e->out : &e->err;
        uint64_t now;
        size_t moved;

        /* The start message was written before the command ran, but on
         * another pipe: take it first so events stay in order. */
        if (!e->started)
                drain_status(e);
        warm_announce(e);
        moved = output_drain(e, o, OUTPUT_TICK_BYTES);
        if (o->eof) {
                output_end(e, o);
                return;
        }
        now = now_us();
        if (moved >= OUTPUT_BUSY_BYTES || now - o->last_us < OUTPUT_TICK_MS * 1000u)
                output_flood(e, o);
        o->last_us = now;
}

static int open_output(struct exec *e, struct exec_output *o, int *fd)
{
        int rc = uv_poll_init(e->eng->loop, &o->poll, *fd);

        if (rc < 0)
                return rc;
        o->poll.data = e;
        o->fd = *fd;
        *fd = -1;
        e->open_handles++;
        e->open_streams++;
        return uv_poll_start(&o->poll, UV_READABLE, output_ready);
}

/* Watches stdout and stderr; each pipe keeps its default size until the
 * command floods it. */
static int start_output(struct exec *e, int *out_fd, int *err_fd)
{
        int rc;

        uv_timer_init(e->eng->loop, &e->out_tick);
        e->out_tick.data = e;
        e->open_handles++;
        if ((rc = open_output(e, &e->out, out_fd)) < 0)
                return rc;
        return open_output(e, &e->err, err_fd);
}

static void close_output(struct exec *e, struct exec_output *o)
{
        if (o->poll.data != e || uv_is_closing((uv_handle_t *)&o->poll))
                return;
        /* uv_close takes the fd out of the loop's epoll set at once: it can
         * be closed now. */
        uv_close((uv_handle_t *)&o->poll, on_handle_closed);
        close_fd(&o->fd);
}

static void warm_due(struct exec *e);
static void warm_changed(struct exec_engine *eng);

/* A waiting warm sandbox's counters moved on: the watcher may show them. */
static void warm_settled(uv_timer_t *t)
{
        struct exec *e = t->data;

        if (e->in_pool && e->warm)
                warm_changed(e->eng);
        else
                uv_timer_stop(t);
}

static void handle_msg(struct exec *e, const struct sandbox_msg *m)
{
        char path[64], buf[64];
        ssize_t n;
        int fd;

        switch (m->kind) {
        case SANDBOX_MSG_WAITING:
                e->waiting = true;
                break;
        case SANDBOX_MSG_READY:
                e->started = true;
                if (e->iso == EXEC_LOCAL) {
                        e->cmd_pid = (pid_t)m->value;
                } else {
                        /* The command's pid is namespace-local; its host pid
                         * is the init's only child. */
                        snprintf(path, sizeof(path), "/proc/%d/task/%d/children", e->pid, e->pid);
                        fd = open(path, O_RDONLY | O_CLOEXEC);
                        if (fd >= 0) {
                                n = read(fd, buf, sizeof(buf) - 1);
                                if (n > 0) {
                                        buf[n] = '\0';
                                        e->cmd_pid = atoi(buf);
                                }
                                close(fd);
                        }
                }
                if (e->stdin_due)
                        warm_due(e);
                if (e->in_pool && e->warm) {
                        warm_changed(e->eng);
                        /* and again once its imports are done, for its memory */
                        uv_timer_start(&e->stats, warm_settled, 300, 2000);
                }
                /* A warm sandbox taken before its command was launched. */
                if (e->cb.on_start != NULL)
                        e->cb.on_start(e, e->pid, m->mono_us > e->t0_us ? m->mono_us - e->t0_us : 0,
                                       e->ud);
                break;
        case SANDBOX_MSG_SETUP:
                e->setup_failed = true;
                snprintf(e->error, sizeof(e->error), "sandbox setup failed at %s: %s", m->text,
                         strerror(m->err));
                break;
        case SANDBOX_MSG_NOEXEC:
                snprintf(e->error, sizeof(e->error), "%s: %s", m->text, strerror(m->err));
                break;
        case SANDBOX_MSG_TIMEOUT:
                if (!e->has_pending) {
                        e->pending = EXEC_TIMEOUT;
                        e->has_pending = true;
                }
                break;
        case SANDBOX_MSG_STATUS:
                /* Told on the exit channel (err 1): the init has killed the
                 * rest, and the command, still exiting, is not reaped yet. */
                if (m->err == 1 && e->cg == NULL) {
                        struct cgroup_stats cs;
                        read_stats(e, &cs, true);
                        e->early_cpu = cs.pids == 1;
                        e->early_cpu_ns = cs.cpu_ns;
                        e->early_rss = cs.mem_bytes;
                }
                e->end_us = m->mono_us;
                e->have_status = true;
                e->wait_status = (int)m->value;
                command_over(e);
                break;
        }
}

static void parse_status(struct exec *e, const char *data, size_t n)
{
        size_t off = 0;

        while (off < n) {
                size_t want = sizeof(e->msgbuf) - e->msglen;
                size_t take = n - off < want ? n - off : want;
                memcpy(e->msgbuf + e->msglen, data + off, take);
                e->msglen += take;
                off += take;
                if (e->msglen == sizeof(e->msgbuf)) {
                        struct sandbox_msg m;
                        memcpy(&m, e->msgbuf, sizeof(m));
                        m.text[sizeof(m.text) - 1] = '\0';
                        e->msglen = 0;
                        handle_msg(e, &m);
                }
        }
}

static void on_status(uv_stream_t *s, ssize_t n, const uv_buf_t *buf)
{
        if (n < 0)
                uv_read_stop(s);
        else
                parse_status(s->data, buf->base, (size_t)n);
}

/* Reads what the status pipe holds right now (it is non-blocking). */
static void drain_status(struct exec *e)
{
        char buf[4 * sizeof(struct sandbox_msg)];
        uv_os_fd_t fd;
        ssize_t n;

        if (uv_fileno((uv_handle_t *)&e->status, &fd) != 0)
                return;
        while ((n = read(fd, buf, sizeof(buf))) > 0)
                parse_status(e, buf, (size_t)n);
}

static void on_stdin_written(uv_write_t *req, int status)
{
        struct exec *e = req->data;

        close_handle(e, (uv_handle_t *)&e->in);
}

/* Writes the call's stdin kept by write_stdin. */
static int stdin_write_kept(struct exec *e)
{
        uv_buf_t b = uv_buf_init(e->stdin_copy, (unsigned)e->stdin_len);

        e->in_req.data = e;
        return uv_write(&e->in_req, (uv_stream_t *)&e->in, &b, 1, on_stdin_written);
}

/* ---- children and the pool ---- */

/* A walk found the workspace grown past the session's disk quota: every
 * execution writing to it stops. */
static void quota_over(struct exec_workspace *w, void *ud)
{
        struct exec_engine *eng = ud;
        struct exec *e;

        for (e = eng->list; e != NULL; e = e->next)
                if (e->ws == w && e->assigned && !e->exit_reported)
                        kill_for(e, EXEC_DISK_LIMIT);
}

/* The inits of the native sandboxes writing to `w`, whose processes the
 * quota's walk looks through for deleted files they still hold. A
 * container's processes are the engine's: not listed. */
static size_t quota_pids(struct exec_workspace *w, void *ud, pid_t *out, size_t max)
{
        struct exec_engine *eng = ud;
        size_t n = 0;

        for (struct exec *e = eng->list; e != NULL; e = e->next)
                if (e->ws == w && e->rt == NULL && e->pid > 0 && !e->reaped && n++ < max)
                        out[n - 1] = e->pid;
        return n;
}

/* The host ids a child runs as: the workspace's (see exec_workspace_open);
 * a sandbox without a workspace run by root gets nobody. */
static void pick_ids(const struct exec_request *req, const struct exec_workspace *ws, uint32_t *uid,
                     uint32_t *gid)
{
        if (req->isolation == EXEC_LOCAL || geteuid() != 0) {
                *uid = geteuid();
                *gid = getegid();
        } else if (req->ws_mode == EXEC_WS_NONE) {
                *uid = *gid = EXEC_NOBODY_ID;
        } else {
                exec_workspace_ids(ws, uid, gid);
        }
}

static void plan_ids(struct sandbox_plan *p)
{
        p->uid = SANDBOX_UID;
        p->gid = SANDBOX_UID;
        p->switch_ids = geteuid() == 0;
        snprintf(p->passwd, sizeof(p->passwd),
                 "root:x:0:0:root:/root:/usr/sbin/nologin\n"
                 "sandbox:x:%u:%u:sandbox:/tmp:/bin/bash\n"
                 "nobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin\n",
                 SANDBOX_UID, SANDBOX_UID);
        snprintf(p->group, sizeof(p->group), "root:x:0:\nsandbox:x:%u:\nnogroup:x:65534:\n",
                 SANDBOX_UID);
}

struct child_fds {
        int ctl[2], status[2], out[2], err[2], in[2];
};

static void close_fd(int *fd)
{
        if (*fd >= 0)
                close(*fd);
        *fd = -1;
}

static void close_child_fds(struct child_fds *f)
{
        int *all[] = {&f->ctl[0], &f->ctl[1], &f->status[0], &f->status[1], &f->out[0],
                      &f->out[1], &f->err[0], &f->err[1],    &f->in[0],     &f->in[1]};
        size_t i;

        for (i = 0; i < sizeof(all) / sizeof(all[0]); i++)
                close_fd(all[i]);
}

static int open_child_fds(struct child_fds *f)
{
        if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, f->ctl) != 0 ||
            pipe2(f->status, O_CLOEXEC) != 0 || pipe2(f->out, O_CLOEXEC) != 0 ||
            pipe2(f->err, O_CLOEXEC) != 0 || pipe2(f->in, O_CLOEXEC) != 0)
                return -errno;
        return 0;
}

/* The execution's cgroup, if the engine uses cgroups. */
static int make_group(struct exec_engine *eng, struct exec *e, char *err, size_t errlen)
{
        /* Unique per process, not per engine: names are global. */
        static uint64_t next_cg;
        char name[64];
        int rc;

        if (eng->cg == NULL)
                return 0;
        snprintf(name, sizeof(name), "proctor-%d-%" PRIu64, getpid(), ++next_cg);
        rc = cgroup_create_with(eng->cg, name,
                                e->iso == EXEC_SANDBOX ? CG_FOR_SANDBOX : CG_FOR_LOCAL, NULL,
                                &e->cg, err, errlen);
        eng->proven = eng->proven || e->iso == EXEC_SANDBOX;
        if (rc < 0 && cgroup_sys_version(eng->cg) == CGROUP_NONE) {
                /* The host refused the first group: rlimits alone, as when
                 * no usable hierarchy was found. */
                cgroup_sys_free(eng->cg);
                eng->cg = NULL;
                rc = 0;
        }
        return rc;
}

/* Lets the child go, with the files it joins its v1 cgroup through. */
static int release_child(struct exec *e, int ctl, char *err, size_t errlen)
{
        int fds[SANDBOX_MAX_PROCS_FDS];
        int n = 0, rc;

        if (e->cg != NULL && cgroup_fd(e->cg) < 0)
                n = cgroup_procs_fds(e->cg, fds, SANDBOX_MAX_PROCS_FDS);
        if (n < 0) {
                snprintf(err, errlen, "cannot open the execution's cgroup: %s", strerror(-n));
                return n;
        }
        rc = sandbox_release(ctl, fds, (unsigned)n);
        while (n-- > 0)
                close(fds[n]);
        if (rc < 0)
                snprintf(err, errlen, "cannot release the child: %s", strerror(-rc));
        return rc;
}

static pid_t do_clone(struct exec *e, struct sandbox_plan *plan, int *pidfd)
{
        struct clone_args_v2 ca;
        pid_t pid;
        /* proctor is not dumpable (main.c), and a child is born as its
         * parent is: while it is not, its /proc files belong to root, the
         * id maps an unprivileged proctor writes included. Such a child is
         * born dumpable for them, and is not once released (sandbox_child):
         * the window is one clone and the maps' writes, in sandbox mode
         * only, where no tool runs on the host. Root writes root's files. */
        bool map_window =
            e->iso == EXEC_SANDBOX && geteuid() != 0 && prctl(PR_GET_DUMPABLE, 0, 0, 0, 0) == 0;

        memset(&ca, 0, sizeof(ca));
        ca.flags = CLONE_PIDFD;
        ca.pidfd = (uint64_t)(uintptr_t)pidfd;
        ca.exit_signal = SIGCHLD;
        if (e->iso == EXEC_SANDBOX)
                ca.flags |= CLONE_NEWUSER | CLONE_NEWPID | CLONE_NEWNS |
                            (e->share_net ? 0 : CLONE_NEWNET) | CLONE_NEWIPC | CLONE_NEWUTS |
                            CLONE_NEWCGROUP;
        if (e->cg != NULL && cgroup_fd(e->cg) >= 0) {
                ca.flags |= CLONE_INTO_CGROUP;
                ca.cgroup = (uint64_t)cgroup_fd(e->cg);
        }
        if (map_window)
                prctl(PR_SET_DUMPABLE, 1, 0, 0, 0);
        pid = (pid_t)syscall(SYS_clone3, &ca, sizeof(ca));
        if (pid == 0)
                sandbox_child(plan);
        if (map_window)
                prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
        return pid < 0 ? -errno : pid;
}

static int open_stream(struct exec *e, uv_pipe_t *p, int *fd, uv_read_cb cb, bool counted)
{
        int rc;

        uv_pipe_init(e->eng->loop, p, 0);
        p->data = e;
        e->open_handles++;
        if ((rc = uv_pipe_open(p, *fd)) < 0)
                return rc;
        *fd = -1;
        if (cb != NULL)
                uv_read_start((uv_stream_t *)p, alloc_cb, cb);
        e->open_streams += counted;
        return 0;
}

static int start_handles(struct exec *e, struct child_fds *f)
{
        uv_loop_t *loop = e->eng->loop;
        int rc;

        if ((rc = open_stream(e, &e->status, &f->status[0], on_status, false)) < 0 ||
            (rc = start_output(e, &f->out[0], &f->err[0])) < 0 ||
            (rc = open_stream(e, &e->in, &f->in[1], NULL, false)) < 0)
                return rc;
        uv_poll_init(loop, &e->exit_poll, e->pidfd);
        e->exit_poll.data = e;
        e->open_handles++;
        uv_poll_start(&e->exit_poll, UV_READABLE, on_exit_readable);
        uv_timer_init(loop, &e->timeout);
        uv_timer_init(loop, &e->stats);
        uv_timer_init(loop, &e->grace);
        e->timeout.data = e->stats.data = e->grace.data = e;
        e->open_handles += 3;
        return 0;
}

/* Makes a child that waits, in its own cgroup (and namespaces in sandbox
 * mode), for the request that will make it an execution. */
static int child_new_net(struct exec_engine *eng, enum exec_isolation iso, bool share_net,
                         uint32_t uid, uint32_t gid, struct exec **out, char *err, size_t errlen)
{
        struct child_fds f = {{-1, -1}, {-1, -1}, {-1, -1}, {-1, -1}, {-1, -1}};
        struct sandbox_plan plan;
        struct exec *e = calloc(1, sizeof(*e));
        /* v2 needs the group at clone (CLONE_INTO_CGROUP); on v1 the child
         * joins from inside once released, so the group is made while the
         * child starts up. */
        bool group_first = eng->cg != NULL && cgroup_sys_version(eng->cg) == CGROUP_V2;
        int rc;

        if (e == NULL)
                return -ENOMEM;
        e->eng = eng;
        e->iso = iso;
        e->share_net = share_net && iso == EXEC_SANDBOX;
        e->uid = uid;
        e->gid = gid;
        e->pidfd = -1;
        e->ctl_fd = -1;
        if (group_first && (rc = make_group(eng, e, err, errlen)) < 0)
                goto fail;
        if ((rc = open_child_fds(&f)) < 0) {
                snprintf(err, errlen, "cannot create the execution's pipes: %s", strerror(-rc));
                goto fail;
        }
        memset(&plan, 0, sizeof(plan));
        plan.isolate = iso == EXEC_SANDBOX;
        plan.share_net = e->share_net;
        plan.host = eng->host;
        plan.seccomp = plan.isolate ? eng->seccomp : NULL;
        plan.ctl_fd = f.ctl[1];
        plan.status_fd = f.status[1];
        plan.stdin_fd = f.in[0];
        plan.stdout_fd = f.out[1];
        plan.stderr_fd = f.err[1];
        plan_ids(&plan);

        e->pid = do_clone(e, &plan, &e->pidfd);
        if (e->pid < 0) {
                rc = e->pid;
                e->pid = 0;
                snprintf(err, errlen, "cannot create the %s: clone3: %s",
                         plan.isolate ? "sandbox namespaces" : "child process", strerror(-rc));
                goto fail;
        }
        /* The child waits for its release: its ids must be mapped first. */
        rc = plan.isolate ? write_id_maps(e->pid, uid, gid) : 0;
        if (rc < 0) {
                snprintf(err, errlen, "cannot map ids into the sandbox's user namespace: %s",
                         strerror(-rc));
                goto fail_child;
        }
        if (!group_first && (rc = make_group(eng, e, err, errlen)) < 0)
                goto fail_child;
        if ((rc = release_child(e, f.ctl[0], err, errlen)) < 0)
                goto fail_child;
        e->ctl_fd = f.ctl[0];
        f.ctl[0] = -1;
        if ((rc = start_handles(e, &f)) < 0) {
                snprintf(err, errlen, "cannot watch the child: %s", uv_strerror(rc));
                goto fail_child;
        }
        close_child_fds(&f);
        e->next = eng->list;
        eng->list = e;
        eng->children++;
        *out = e;
        return 0;
fail_child:
        kill(e->pid, SIGKILL);
        while (waitpid(e->pid, NULL, 0) < 0 && errno == EINTR)
                ;
        if (e->open_handles > 0) {
                /* Handles are registered: let the normal path release them. */
                close_child_fds(&f);
                e->next = eng->list;
                eng->list = e;
                eng->children++;
                e->reaped = true;
                e->open_streams = 0;
                report_exit(e);
                return rc;
        }
fail:
        close_child_fds(&f);
        close_fd(&e->ctl_fd);
        if (e->pidfd >= 0)
                close(e->pidfd);
        if (e->cg != NULL) {
                cgroup_kill(e->cg);
                cgroup_destroy(e->cg);
        }
        free(e);
        return rc;
}

static int child_new(struct exec_engine *eng, enum exec_isolation iso, uint32_t uid, uint32_t gid,
                     struct exec **out, char *err, size_t errlen)
{
        return child_new_net(eng, iso, false, uid, gid, out, err, errlen);
}

/* The waiting warm sandboxes changed: tell the watcher. */
static void warm_changed(struct exec_engine *eng)
{
        if (eng->warm_watch != NULL && !eng->freeing)
                eng->warm_watch(eng->warm_watch_ud);
}

static void pool_unlink(struct exec *e)
{
        struct exec **pp;

        for (pp = &e->eng->pool; *pp != NULL; pp = &(*pp)->pool_next) {
                if (*pp == e) {
                        *pp = e->pool_next;
                        e->in_pool = false;
                        if (e->warm)
                                warm_changed(e->eng);
                        return;
                }
        }
}

static struct exec *pool_take(struct exec_engine *eng, enum exec_isolation iso, uint32_t uid,
                              uint32_t gid)
{
        struct exec *e;
        int pass;

        /* Prefer a child that is already waiting over one still getting ready. */
        for (pass = 0; pass < 2; pass++) {
                for (e = eng->pool; e != NULL; e = e->pool_next) {
                        if (!e->warm && e->iso == iso && e->uid == uid && e->gid == gid &&
                            !e->reaped && !e->setup_failed && (pass == 1 || e->waiting)) {
                                pool_unlink(e);
                                return e;
                        }
                }
        }
        return NULL;
}

/* Keeps `prewarm` children waiting for the ids and mode last asked for,
 * and the policy's number of warm sandboxes, as far as the room callback
 * allows; others are let go. Runs from a timer so a spawn never pays for it. */
static void pool_refill(uv_timer_t *t)
{
        struct exec_engine *eng = t->data;
        struct exec *e, *next;
        unsigned have = 0, warm = 0;
        char err[256];

        exec_engine_warm_trim(eng, eng->warm_target);
        for (e = eng->pool; e != NULL; e = next) {
                next = e->pool_next;
                if (e->warm && e->warm_gen == eng->ww.gen)
                        warm++;
                else if (!e->warm && e->iso == eng->want_iso && e->uid == eng->want_uid &&
                         e->gid == eng->want_gid)
                        have++;
                else
                        send_kill(e);
        }
        while (!eng->freeing &&
               (have < eng->prewarm ||
                (eng->ww.set && warm < eng->warm_target &&
                 (eng->warm_room == NULL || eng->warm_room(eng->warm_room_ud, warm))))) {
                bool make_warm = have >= eng->prewarm;
                enum exec_isolation iso = make_warm ? EXEC_SANDBOX : eng->want_iso;
                uint32_t uid = make_warm ? eng->ww.uid : eng->want_uid;
                uint32_t gid = make_warm ? eng->ww.gid : eng->want_gid;
                if (child_new(eng, iso, uid, gid, &e, err, sizeof(err)) < 0)
                        return;
                e->in_pool = true;
                e->pool_next = eng->pool;
                eng->pool = e;
                if (make_warm) {
                        warm_start(eng, e);
                        warm++;
                } else {
                        have++;
                }
        }
}

struct stdin_write {
        uv_write_t req;
        char data[];
};

static void on_kept_stdin_written(uv_write_t *req, int status)
{
        free(req->data);
}

int exec_write(struct exec *e, const char *data, size_t len)
{
        if (e->rt != NULL)
                return e->exit_reported ? -EPIPE : e->rt->write(e, data, len);
        struct stdin_write *w;
        uv_buf_t b;
        int rc;

        if (e->in.data != e || uv_is_closing((uv_handle_t *)&e->in) || e->exit_reported)
                return -EPIPE;
        w = malloc(sizeof(*w) + (len ? len : 1));
        if (w == NULL)
                return -ENOMEM;
        memcpy(w->data, data, len);
        w->req.data = w;
        b = uv_buf_init(w->data, (unsigned)len);
        rc = uv_write(&w->req, (uv_stream_t *)&e->in, &b, 1, on_kept_stdin_written);
        if (rc < 0)
                free(w);
        return rc < 0 ? -EPIPE : 0;
}

/* Keeps a copy of the call's stdin, and writes it now unless `later`
 * (stdin_write_kept then does). */
static int write_stdin(struct exec *e, const char *data, size_t len, bool later)
{
        if (data == NULL) {
                close_handle(e, (uv_handle_t *)&e->in);
                return 0;
        }
        e->stdin_copy = malloc(len ? len : 1);
        if (e->stdin_copy == NULL)
                return UV_ENOMEM;
        memcpy(e->stdin_copy, data, len);
        e->stdin_len = len;
        return later ? 0 : stdin_write_kept(e);
}

/* How the child gets the directory opened once for the session: a local
 * child changes into it by descriptor; root hands a sandbox a detached copy
 * of its mount (exec_workspace_tree). An unprivileged proctor may not copy
 * mounts of the host's namespace, so its child takes the path in its own,
 * and checks that it found the very directory that was opened (ws_dev,
 * ws_ino). */
static int workspace_handover(struct exec_workspace *ws, bool sandbox, struct sandbox_request *r,
                              char **protect, char *err, size_t errlen)
{
        r->ws_path = ws->path;
        r->ws_dev = (uint64_t)ws->st.st_dev;
        r->ws_ino = (uint64_t)ws->st.st_ino;
        r->ws_keep = sandbox ? ws->keep : 0;
        for (unsigned i = 0; sandbox && i < ws->nprotect; i++)
                protect[i] = (char *)ws->protect[i];
        r->protect = protect;
        if (sandbox && geteuid() != 0)
                return 0;
        if (sandbox) {
                r->ws_tree_fd = exec_workspace_tree(ws, err, errlen);
                /* root's rights there would reach a root daemon's socket */
                r->no_unix_sockets = exec_workspace_as_root(ws);
                return r->ws_tree_fd < 0 ? r->ws_tree_fd : 0;
        }
        r->ws_tree_fd = fcntl(ws->fd, F_DUPFD_CLOEXEC, 3);
        if (r->ws_tree_fd < 0) {
                int e = errno;
                snprintf(err, errlen, "cannot take the workspace %.200s: %s", ws->path,
                         strerror(e));
                return -e;
        }
        return 0;
}

/* Hands the waiting child the request `req` at the limits in e->lim: the
 * cgroup's limits, then the request itself, with the wall clock's deadline
 * when `clock` (a warm sandbox gets it at the call: warm_assign). RLIMIT_FSIZE
 * holds what the disk quota of `quota_ws` (or NULL) leaves. 0 or -errno,
 * with e->error filled. */
static int child_request(struct exec *e, const struct exec_request *req, struct exec_workspace *ws,
                         struct exec_workspace *quota_ws, bool clock)
{
        struct exec_engine *eng = e->eng;
        bool sandbox = e->iso == EXEC_SANDBOX;
        bool use_ws = sandbox && req->ws_mode != EXEC_WS_NONE;
        bool mem = e->cg != NULL && (cgroup_sys_controllers(eng->cg) & CG_MEMORY);
        bool pids = e->cg != NULL && (cgroup_sys_controllers(eng->cg) & CG_PIDS);
        struct sandbox_request r = {.argv = req->argv, .ws_tree_fd = -1, .ws_mode = req->ws_mode};
        char *protect[EXEC_WS_MAX_PROTECT + 1] = {NULL};
        struct cgroup_limits cl = {0};
        char **envp = NULL;
        int rc = 0;

        if (sandbox && e->cg != NULL) {
                cl.memory_bytes = e->lim.memory_bytes;
                cl.pids = e->lim.pids;
                cl.cpu_quota_pct = 100;
                cl.cpu_weight = EXEC_SANDBOX_CPU_WEIGHT;
                rc = cgroup_set_limits(e->cg, &cl, e->error, sizeof(e->error));
        }
        if (rc == 0 && (envp = env_build_own(sandbox, req->env_extra, req->env_own)) == NULL) {
                rc = -ENOMEM;
                snprintf(e->error, sizeof(e->error), "out of memory");
        }
        if (rc == 0 && (!sandbox || use_ws))
                rc = workspace_handover(ws, sandbox, &r, protect, e->error, sizeof(e->error));
        if (rc == 0) {
                r.envp = envp;
                r.deadline_us =
                    clock && e->lim.timeout_ms > 0 ? now_us() + e->lim.timeout_ms * 1000 : 0;
                r.tmpfs_bytes = req->limits.tmpfs_bytes ? req->limits.tmpfs_bytes : 64ull << 20;
                r.fsize = quota_ws != NULL ? ws_quota_room(quota_ws) : UINT64_MAX;
                if (sandbox) {
                        /* A warm sandbox gets its CPU rlimit at the call
                         * (warm_cpu_rlimit), counted from there. */
                        r.cpu_ms = clock ? e->lim.cpu_ms : 0;
                        r.as_bytes = mem ? 0 : e->lim.memory_bytes;
                        r.nproc = pids ? 0 : e->lim.pids;
                        /* The stub tells its status before its exit. */
                        r.exit_channel = req->warm;
                }
                rc = sandbox_request_send(e->ctl_fd, &r);
                if (rc < 0)
                        snprintf(e->error, sizeof(e->error), "cannot hand the request over: %s",
                                 strerror(-rc));
        }
        if (r.ws_tree_fd >= 0)
                close(r.ws_tree_fd);
        env_free(envp);
        return rc;
}

/* Starts the call's clocks and feeds its stdin; `rc`: how handing the
 * request over went. A failure from here on is reported through on_exit
 * as setup_failed. */
static void child_arm(struct exec *e, const struct exec_request *req, int rc)
{
        struct exec_engine *eng = e->eng;
        bool sandbox = e->iso == EXEC_SANDBOX;

        /* A sandbox keeps the socket: its init may be handed a flooded
         * output pipe (see output_drain). */
        if (!sandbox || rc < 0)
                close_fd(&e->ctl_fd);
        /* The loop's clock is from its last wake-up: bring it to now, or
         * the wall-clock limit would be cut short by however long ago that was. */
        uv_update_time(eng->loop);
        if (e->lim.timeout_ms > 0)
                uv_timer_start(&e->timeout, on_timeout, e->lim.timeout_ms + DEADLINE_BACKSTOP_MS,
                               0);
        uv_timer_start(&e->stats, on_stats, eng->stats_ms, eng->stats_ms);
        if (rc == 0 && !req->keep_stdin &&
            (rc = write_stdin(e, req->stdin_data, req->stdin_len, e->stdin_due)) < 0)
                snprintf(e->error, sizeof(e->error), "cannot feed stdin: %s", uv_strerror(rc));
        if (rc < 0) {
                e->setup_failed = true;
                send_kill(e);
        }
}

/* Makes the waiting child the execution `req`. */
static void child_assign(struct exec *e, const struct exec_request *req, struct exec_workspace *ws)
{
        child_arm(e, req, child_request(e, req, ws, e->ws, true));
}

/* ---- warm sandboxes ---- */

static bool strv_eq(char *const *a, char *const *b)
{
        for (; a != NULL && b != NULL && *a != NULL && *b != NULL; a++, b++)
                if (strcmp(*a, *b) != 0)
                        return false;
        return (a == NULL || *a == NULL) && (b == NULL || *b == NULL);
}

static char **strv_dup(char *const *v)
{
        size_t n = 0, i;
        char **d;

        while (v != NULL && v[n] != NULL)
                n++;
        if ((d = calloc(n + 1, sizeof(*d))) == NULL)
                return NULL;
        for (i = 0; i < n; i++) {
                if ((d[i] = strdup(v[i])) == NULL) {
                        strv_free(d);
                        return NULL;
                }
        }
        return d;
}

static bool limits_eq(const struct exec_limits *a, const struct exec_limits *b)
{
        return a->memory_bytes == b->memory_bytes && a->cpu_ms == b->cpu_ms &&
               a->timeout_ms == b->timeout_ms && a->pids == b->pids &&
               a->tmpfs_bytes == b->tmpfs_bytes && a->output_bytes == b->output_bytes &&
               a->disk_bytes == b->disk_bytes;
}

/* Whether a warm sandbox made for the remembered request can serve `req`:
 * everything the sandbox was built and started with must be the same; only
 * stdin differs. */
static bool warm_fits(const struct warm_want *w, const struct exec_request *req, uint32_t uid,
                      uint32_t gid)
{
        return w->set && req->ws == w->req.ws && req->ws_mode == w->req.ws_mode && uid == w->uid &&
               gid == w->gid && limits_eq(&req->limits, &w->req.limits) &&
               strv_eq(req->argv, w->argv) && strv_eq(req->env_extra, w->env_extra);
}

/* Remembers the warm request the next warm sandboxes are made for. The
 * session's workspace outlives the engine's executions, so it is kept by
 * pointer. */
static void warm_remember(struct exec_engine *eng, const struct exec_request *req, uint32_t uid,
                          uint32_t gid)
{
        struct warm_want *w = &eng->ww;
        char **argv, **env;

        if (eng->warm == 0 || warm_fits(w, req, uid, gid))
                return;
        argv = strv_dup(req->argv);
        env = strv_dup(req->env_extra);
        if (argv == NULL || env == NULL) {
                strv_free(argv);
                strv_free(env);
                return;
        }
        strv_free(w->argv);
        strv_free(w->env_extra);
        w->req = *req;
        w->req.stdin_data = NULL;
        w->req.stdin_len = 0;
        w->argv = argv;
        w->env_extra = env;
        w->req.argv = argv;
        w->req.env_extra = env;
        w->uid = uid;
        w->gid = gid;
        w->gen++;
        w->set = true;
}

/* Launches the remembered request's command in a new pooled child: it
 * builds its whole root (fresh /tmp and the workspace in place) and loads
 * the seccomp filter and rlimits as for a call, then the command starts
 * and waits for its stdin. No clock runs until the call (warm_assign). */
static void warm_start(struct exec_engine *eng, struct exec *e)
{
        const struct warm_want *w = &eng->ww;
        struct exec_workspace *quota_ws = NULL;

        e->warm = true;
        e->warm_gen = w->gen;
        e->lim = w->req.limits;
        if (exec_request_disk_quota(&w->req))
                quota_ws = w->req.ws;
        if (child_request(e, &w->req, w->req.ws, quota_ws, false) < 0) {
                e->setup_failed = true;
                send_kill(e);
        }
        if (e->in_pool)
                warm_changed(eng);
}

static uint64_t proc_cpu_ns(pid_t pid);

/* A warm sandbox for `req`, preferring one whose command already runs. */
static struct exec *warm_take(struct exec_engine *eng, const struct exec_request *req, uint32_t uid,
                              uint32_t gid)
{
        struct exec *e;
        int pass;

        if (!req->warm || req->isolation != EXEC_SANDBOX || req->ws == NULL ||
            !warm_fits(&eng->ww, req, uid, gid))
                return NULL;
        for (pass = 0; pass < 2; pass++) {
                for (e = eng->pool; e != NULL; e = e->pool_next) {
                        if (e->warm && e->warm_gen == eng->ww.gen && !e->reaped &&
                            !e->setup_failed && !e->have_status && !e->exit_reported &&
                            (pass == 1 || e->started)) {
                                pool_unlink(e);
                                return e;
                        }
                }
        }
        return NULL;
}

/* The warm command's RLIMIT_CPU, set at the call before the code is handed
 * over: the CPU time its interpreter's start took plus the call's limit,
 * rounded up to the second as a cold call's is, so a warm call gets the
 * allowance a cold one gets, counted from the call. The hard limit stays a
 * second above (SIGXCPU first, then SIGKILL). 0 or -errno. */
static int warm_cpu_rlimit(struct exec *e)
{
        uint64_t used_ns = proc_cpu_ns(e->cmd_pid), s;
        struct rlimit rl;

        if (e->lim.cpu_ms == 0)
                return 0;
        if (e->cmd_pid <= 0) /* never prlimit(0): that is proctor itself */
                return -ESRCH;
        s = (used_ns + e->lim.cpu_ms * 1000000u + 999999999u) / 1000000000u;
        rl.rlim_cur = s;
        rl.rlim_max = s + 1;
        return prlimit(e->cmd_pid, RLIMIT_CPU, &rl, NULL) == 0 ? 0 : -errno;
}

/* The CPU time the process has run, in ns (its schedstat: /proc/PID/stat
 * counts in clock ticks, too coarse to take off an exact total); 0 when
 * unknown. */
static uint64_t proc_cpu_ns(pid_t pid)
{
        char path[64], buf[96];
        ssize_t n;
        int fd;

        snprintf(path, sizeof(path), "/proc/%d/schedstat", (int)pid);
        if (pid <= 0 || (fd = open(path, O_RDONLY | O_CLOEXEC)) < 0)
                return 0;
        n = read(fd, buf, sizeof(buf) - 1);
        close(fd);
        if (n <= 0)
                return 0;
        buf[n] = '\0';
        return strtoull(buf, NULL, 10);
}

/* A warm sandbox taken before its command ran: now that it runs, its CPU
 * rlimit is set, then the code is handed over. The rest of its start
 * counts in the call, as a cold call's start does. */
static void warm_due(struct exec *e)
{
        int rc;

        e->stdin_due = false;
        if ((rc = warm_cpu_rlimit(e)) < 0)
                snprintf(e->error, sizeof(e->error), "cannot set the CPU time limit: %s",
                         strerror(-rc));
        else if (e->stdin_copy != NULL && (rc = stdin_write_kept(e)) < 0)
                snprintf(e->error, sizeof(e->error), "cannot feed stdin: %s", uv_strerror(rc));
        if (rc < 0) {
                e->setup_failed = true;
                send_kill(e);
        }
}

/* Makes the warm sandbox the execution `req`: its clocks start now, at
 * the call. The init gets its deadline; the CPU time its command spent
 * starting up is taken off what the cgroup (or, without one, the init's
 * rusage) reports. */
static void warm_assign(struct exec *e, const struct exec_request *req)
{
        struct cgroup_stats cs;
        int rc = 0;

        read_stats(e, &cs, true);
        e->cpu_base_ns = e->cg != NULL ? cs.cpu_ns : proc_cpu_ns(e->cmd_pid);
        e->out_bytes = 0;
        e->truncated = false;
        /* Taken before its command ran: the code waits for it (warm_due). */
        e->stdin_due = !e->started;
        if (e->started && (rc = warm_cpu_rlimit(e)) < 0)
                snprintf(e->error, sizeof(e->error), "cannot set the CPU time limit: %s",
                         strerror(-rc));
        else if (e->lim.timeout_ms > 0 &&
                 (rc = sandbox_start_clock(e->ctl_fd, now_us() + e->lim.timeout_ms * 1000)) < 0)
                snprintf(e->error, sizeof(e->error), "cannot start the wall clock: %s",
                         strerror(-rc));
        if (e->started) {
                e->start_due = true;
                uv_timer_start(&e->grace, warm_announce_due, 0, 0);
        }
        child_arm(e, req, rc);
}

unsigned exec_warm_policy_next(unsigned target, unsigned cap, enum exec_warm_event ev)
{
        if (target > cap)
                target = cap;
        switch (ev) {
        case EXEC_WARM_MISS:
                return target < cap ? target + 1 : cap;
        case EXEC_WARM_IDLE:
                return target > 0 ? target - 1 : 0;
        case EXEC_WARM_HIT:
                break;
        }
        return target;
}

void exec_engine_set_warm_room(struct exec_engine *eng, exec_warm_room_fn fn, void *ud)
{
        eng->warm_room = fn;
        eng->warm_room_ud = ud;
}

/* Whether `e` is a waiting warm sandbox of the current request. */
static bool warm_waiting(const struct exec_engine *eng, const struct exec *e)
{
        return e->warm && e->warm_gen == eng->ww.gen && !e->reaped && !e->killed_sent;
}

unsigned exec_engine_warm_idle(const struct exec_engine *eng)
{
        const struct exec *e;
        unsigned n = 0;

        for (e = eng->pool; e != NULL; e = e->pool_next)
                n += warm_waiting(eng, e);
        return n;
}

void exec_engine_set_warm_watch(struct exec_engine *eng, exec_warm_watch_fn fn, void *ud)
{
        eng->warm_watch = fn;
        eng->warm_watch_ud = ud;
}

unsigned exec_engine_warm_list(struct exec_engine *eng, struct exec_stats *st, bool *ready,
                               unsigned max)
{
        struct cgroup_stats cs;
        struct exec *e;
        unsigned n = 0, total = exec_engine_warm_idle(eng), i;

        /* The pool is newest first: fill from the end. */
        for (e = eng->pool; e != NULL; e = e->pool_next) {
                if (!warm_waiting(eng, e))
                        continue;
                i = total - 1 - n++;
                if (i >= max)
                        continue;
                read_stats(e, &cs, true);
                memset(&st[i], 0, sizeof(st[i]));
                st[i].cpu_ms = cs.cpu_ns / 1000000u;
                st[i].mem_bytes = cs.mem_bytes;
                st[i].mem_peak_bytes = cs.mem_peak_bytes;
                st[i].pids = cs.pids;
                if (ready != NULL)
                        ready[i] = e->started;
        }
        return total;
}

unsigned exec_engine_warm_target(const struct exec_engine *eng)
{
        return eng->warm_target;
}

void exec_engine_warm_trim(struct exec_engine *eng, unsigned keep)
{
        unsigned n = exec_engine_warm_idle(eng);
        struct exec *e, *next;
        int pass;

        /* Those still starting go first: the others cost more to replace. */
        for (pass = 0; pass < 2 && n > keep; pass++) {
                for (e = eng->pool; e != NULL && n > keep; e = next) {
                        next = e->pool_next;
                        if (warm_waiting(eng, e) && (pass == 1 || !e->started)) {
                                send_kill(e);
                                n--;
                        }
                }
        }
}

/* No warm call for warm_idle_ms: the pool shrinks by one. */
static void warm_idle_due(uv_timer_t *t)
{
        struct exec_engine *eng = t->data;

        eng->warm_target = exec_warm_policy_next(eng->warm_target, eng->warm, EXEC_WARM_IDLE);
        exec_engine_warm_trim(eng, eng->warm_target);
        if (eng->warm_target > 0)
                uv_timer_start(&eng->warm_idle, warm_idle_due, eng->warm_idle_ms, 0);
}

/* A warm call came, and found a warm sandbox or not. */
static void warm_note_call(struct exec_engine *eng, bool hit)
{
        eng->warm_target = exec_warm_policy_next(eng->warm_target, eng->warm,
                                                 hit ? EXEC_WARM_HIT : EXEC_WARM_MISS);
        uv_timer_start(&eng->warm_idle, warm_idle_due, eng->warm_idle_ms, 0);
}

int exec_engine_warm_stats(struct exec_engine *eng, struct exec_stats *st)
{
        struct cgroup_stats cs;
        struct exec *e;

        for (e = eng->pool; e != NULL; e = e->pool_next) {
                if (!e->warm || !e->started || e->reaped || e->have_status)
                        continue;
                read_stats(e, &cs, true);
                memset(st, 0, sizeof(*st));
                st->cpu_ms = cs.cpu_ns / 1000000u;
                st->mem_bytes = cs.mem_bytes;
                st->mem_peak_bytes = cs.mem_peak_bytes;
                st->pids = cs.pids;
                return 0;
        }
        return -ENOENT;
}

/* ---- the seam to other runtimes (exec/runtime.h) ---- */

static int rt_spawn(struct exec_engine *eng, const struct exec_request *req,
                    struct exec_workspace *ws, struct exec_workspace *own_ws,
                    const struct exec_callbacks *cb, void *ud, struct exec **out, char *err,
                    size_t errlen)
{
        struct exec_request r = *req;
        struct exec *e = calloc(1, sizeof(*e));
        int rc;

        if (e == NULL) {
                exec_workspace_free(own_ws);
                return -ENOMEM;
        }
        e->eng = eng;
        e->rt = eng->rt;
        e->iso = EXEC_SANDBOX;
        e->assigned = true;
        e->pidfd = e->ctl_fd = e->out.fd = e->err.fd = -1;
        e->lim = req->limits;
        e->own_ws = own_ws;
        if (cb != NULL)
                e->cb = *cb;
        e->ud = ud;
        e->t0_us = now_us();
        e->id = eng->next_id + 1;
        r.ws = ws;
        r.workspace = exec_workspace_path(ws);
        /* The disk quota, where the engine writes to this host's workspace:
         * the same walk as for native sandboxes, and RLIMIT_FSIZE through
         * the engine (exec__rt_disk_room). */
        if (ws != NULL && exec_request_disk_quota(req) && eng->rt->workspace_here != NULL &&
            eng->rt->workspace_here(eng->rt_state) &&
            ws_quota_start(ws, eng->loop, req->limits.disk_bytes, quota_over, quota_pids, eng) == 0)
                e->ws = ws;
        if ((rc = eng->rt->spawn(eng->rt_state, e, &r, err, errlen)) < 0) {
                exec_workspace_free(own_ws);
                free(e);
                return rc;
        }
        if (e->ws != NULL)
                ws_quota_sample(e->ws);
        eng->next_id++;
        e->next = eng->list;
        eng->list = e;
        eng->children++;
        eng->live++;
        *out = e;
        return 0;
}

void *exec__rt_priv(const struct exec *e)
{
        return e->rt_priv;
}

void exec__rt_set_priv(struct exec *e, void *priv)
{
        e->rt_priv = priv;
}

uv_loop_t *exec__rt_loop(const struct exec *e)
{
        return e->eng->loop;
}

uint64_t exec__rt_t0_us(const struct exec *e)
{
        return e->t0_us;
}

uint64_t exec__rt_now_us(void)
{
        return now_us();
}

void exec__rt_start(struct exec *e, int pid)
{
        e->pid = pid;
        e->started = true;
        if (e->cb.on_start != NULL)
                e->cb.on_start(e, pid, now_us() - e->t0_us, e->ud);
}

void exec__rt_output(struct exec *e, enum exec_stream s, const char *buf, size_t n)
{
        uint64_t cap = e->lim.output_bytes, room;

        room = cap == 0 ? n : e->out_bytes >= cap ? 0 : cap - e->out_bytes;
        e->out_bytes += n;
        if (room < n)
                e->truncated = true;
        if (room > 0 && e->cb.on_output != NULL)
                e->cb.on_output(e, s, buf, room < n ? (size_t)room : n, e->ud);
}

void exec__rt_stats(struct exec *e, const struct exec_stats *st)
{
        e->last = *st;
        if (e->cb.on_stats != NULL && !e->exit_reported)
                e->cb.on_stats(e, st, e->ud);
        if (e->ws != NULL)
                ws_quota_sample(e->ws);
}

uint64_t exec__rt_disk_room(const struct exec *e)
{
        return e->ws != NULL ? ws_quota_room(e->ws) : UINT64_MAX;
}

void exec__rt_state(struct exec *e, const char *state)
{
        if (e->cb.on_state != NULL)
                e->cb.on_state(e, state, e->ud);
}

void exec__rt_exit(struct exec *e, struct exec_result *r)
{
        if (e->exit_reported)
                return;
        e->exit_reported = true;
        e->exit_us = now_us();
        e->paused = 0;
        r->truncated = e->truncated;
        if (e->ws != NULL)
                ws_quota_sample(e->ws); /* what it left behind counts for the next */
        if (e->last.mem_peak_bytes > r->mem_peak_bytes)
                r->mem_peak_bytes = e->last.mem_peak_bytes;
        if (e->cb.on_exit != NULL)
                e->cb.on_exit(e, r, e->ud);
}

void exec__rt_removed(struct exec *e)
{
        exec_finish_remove(e);
}

int exec_spawn(struct exec_engine *eng, const struct exec_request *req,
               const struct exec_callbacks *cb, void *ud, struct exec **out, char *err,
               size_t errlen)
{
        bool sandbox = req->isolation == EXEC_SANDBOX;
        uint64_t t0 = now_us();
        struct exec_workspace *ws = req->ws;
        struct exec_workspace *own_ws = NULL;
        uint32_t uid, gid;
        struct exec *e;
        int rc;

        if (req->argv == NULL || req->argv[0] == NULL || req->argv[0][0] == '\0') {
                snprintf(err, errlen, "no command given");
                return -EINVAL;
        }
        if (eng->freeing) {
                snprintf(err, errlen, "the execution engine is shutting down");
                return -ESHUTDOWN;
        }
        if (ws == NULL && (rc = exec_workspace_open(req->workspace, &own_ws, err, errlen)) < 0)
                return rc;
        if (ws == NULL)
                ws = own_ws;
        if (sandbox && eng->rt != NULL)
                return rt_spawn(eng, req, ws, own_ws, cb, ud, out, err, errlen);
        if (sandbox && (rc = engine_prepare_sandbox(eng, err, errlen)) < 0) {
                exec_workspace_free(own_ws);
                return rc;
        }
        pick_ids(req, ws, &uid, &gid);
        /* Pooled and warm children have a network namespace of their own;
         * a warm one's command started without env_own. */
        e = req->share_net || req->env_own != NULL ? NULL : warm_take(eng, req, uid, gid);
        if (e == NULL && !req->share_net)
                e = pool_take(eng, req->isolation, uid, gid);
        if (e == NULL && (rc = child_new_net(eng, req->isolation, req->share_net, uid, gid, &e, err,
                                             errlen)) < 0) {
                exec_workspace_free(own_ws);
                return rc;
        }
        e->assigned = true;
        e->id = ++eng->next_id;
        e->lim = req->limits;
        if (!sandbox) {
                struct exec_limits only_wall = {.timeout_ms = req->limits.timeout_ms,
                                                .output_bytes = req->limits.output_bytes};
                e->lim = only_wall;
        }
        if (cb != NULL)
                e->cb = *cb;
        e->ud = ud;
        e->t0_us = t0;
        eng->live++;
        if (exec_request_disk_quota(req) && ws_quota_start(ws, eng->loop, req->limits.disk_bytes,
                                                           quota_over, quota_pids, eng) == 0) {
                e->ws = ws;
                ws_quota_sample(ws);
        }
        e->own_ws = own_ws; /* the quota's walk may outlive this call */
        if (e->warm)
                warm_assign(e, req);
        else
                child_assign(e, req, ws);
        if (req->warm && sandbox && req->ws != NULL) {
                warm_remember(eng, req, uid, gid);
                if (eng->warm > 0)
                        warm_note_call(eng, e->warm);
                /* The first warm call of a session, or a changed request;
                 * a warm call's own successor starts after its result
                 * (report_exit). */
                if (eng->warm > 0 && !eng->freeing && !e->warm)
                        refill_soon(eng);
        } else {
                eng->want_iso = req->isolation;
                eng->want_uid = uid;
                eng->want_gid = gid;
        }
        *out = e;
        return 0;
}
