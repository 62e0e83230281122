/* exec: the parent side of every execution, on the caller's libuv loop:
 * clone, id maps and cgroup, then output pipes, the status pipe, a pidfd for
 * the exit, timers for the wall clock and stats, kill and classification.
 * Never blocks the loop: no waitpid without WNOHANG, no sleeping. */
#include "exec/exec.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "exec/cgroup.h"
#include "exec/env.h"
#include "exec/sandbox.h"
#include "exec/seccomp.h"

#ifndef CLONE_PIDFD
#define CLONE_PIDFD 0x00001000
#endif
#ifndef CLONE_NEWCGROUP
#define CLONE_NEWCGROUP 0x02000000
#endif
#ifndef CLONE_INTO_CGROUP
#define CLONE_INTO_CGROUP 0x200000000ULL
#endif
#ifndef OPEN_TREE_CLONE
#define OPEN_TREE_CLONE 1
#endif
#ifndef MOUNT_ATTR_IDMAP
#define MOUNT_ATTR_IDMAP 0x00100000
#endif

#define SANDBOX_UID   1000u  /* the command's uid and gid inside */
#define NOBODY_ID     65534u /* host id for sandboxes of root-owned workspaces */
#define EXIT_GRACE_MS 200    /* wait for pipes after the init is gone */

struct clone_args_v2 {
        uint64_t flags, pidfd, child_tid, parent_tid, exit_signal, stack, stack_size, tls,
                set_tid, set_tid_size, cgroup;
};

struct mount_attr_v1 {
        uint64_t attr_set, attr_clr, propagation, userns_fd;
};

struct exec_engine {
        uv_loop_t *loop;
        struct cgroup_sys *cg;
        struct seccomp_policy *seccomp;
        struct sandbox_host *host;
        uint32_t stats_ms;
        uint64_t next_id;
        unsigned live;
        bool freeing;
        int idmap_userns; /* userns mapping on-disk root to NOBODY_ID, or -1 */
        struct exec *list;
};

struct exec {
        struct exec_engine *eng;
        struct exec *next;
        uint64_t id;
        enum exec_isolation iso;
        struct exec_limits lim;
        struct exec_callbacks cb;
        void *ud;

        pid_t pid; /* the init, host view */
        pid_t cmd_pid; /* the command, host view, 0 until known */
        int pidfd;
        struct cgroup *cg;
        uint64_t t0_us, exit_us;

        uv_pipe_t out, err, status, in;
        uv_poll_t exit_poll;
        uv_timer_t timeout, stats, grace;
        unsigned open_handles;
        bool in_open;
        char *stdin_copy;
        uv_write_t in_req;

        char msgbuf[sizeof(struct sandbox_msg)];
        size_t msglen;

        bool started, reaped, have_status, setup_failed, exit_reported, killed_sent;
        int open_streams; /* out, err, status still to reach EOF */
        int wait_status, init_status;
        enum exec_reason pending; /* set by proctor's own kill */
        bool has_pending;
        uint64_t out_bytes;
        bool truncated;
        struct rusage ru;
        struct exec_stats last;
        uint64_t last_cpu_ns, last_sample_us;
        char error[256];
};

static const char *const reason_names[] = {
        [EXEC_EXITED] = "exited",         [EXEC_SIGNALED] = "signaled",
        [EXEC_TIMEOUT] = "timeout",       [EXEC_OOM] = "oom",
        [EXEC_CPU_LIMIT] = "cpu_limit",   [EXEC_PIDS_LIMIT] = "pids_limit",
        [EXEC_KILLED] = "killed",         [EXEC_SETUP_FAILED] = "setup_failed",
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

/* A user namespace whose only mapping is on-disk root <-> NOBODY_ID: used to
 * idmap root-owned workspaces so that a sandbox running as NOBODY_ID writes
 * files that appear owned by root, without ever being host uid 0. */
static int make_idmap_userns(void)
{
        struct clone_args_v2 ca = {.flags = CLONE_NEWUSER, .exit_signal = SIGCHLD};
        char path[64], map[64];
        int pfd[2], fd = -1, st;
        pid_t pid;

        if (pipe2(pfd, O_CLOEXEC) != 0)
                return -errno;
        pid = (pid_t)syscall(SYS_clone3, &ca, sizeof(ca));
        if (pid == 0) {
                char c;
                close(pfd[1]);
                while (read(pfd[0], &c, 1) < 0 && errno == EINTR)
                        ;
                _exit(0);
        }
        close(pfd[0]);
        if (pid < 0) {
                close(pfd[1]);
                return -errno;
        }
        snprintf(map, sizeof(map), "0 %u 1\n", NOBODY_ID);
        snprintf(path, sizeof(path), "/proc/%d/uid_map", pid);
        if (write_str(path, map) == 0) {
                snprintf(path, sizeof(path), "/proc/%d/setgroups", pid);
                write_str(path, "deny");
                snprintf(path, sizeof(path), "/proc/%d/gid_map", pid);
                if (write_str(path, map) == 0) {
                        snprintf(path, sizeof(path), "/proc/%d/ns/user", pid);
                        fd = open(path, O_RDONLY | O_CLOEXEC);
                }
        }
        close(pfd[1]);
        while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
                ;
        return fd >= 0 ? fd : -EPERM;
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
        eng->stats_ms = o != NULL && o->stats_interval_ms ? o->stats_interval_ms : 250;
        eng->idmap_userns = -1;
        if (o == NULL || !o->no_cgroups) {
                snprintf(selfcg, sizeof(selfcg), "%s/self/cgroup",
                         o != NULL && o->proc_root ? o->proc_root : "/proc");
                rc = cgroup_sys_open(o != NULL && o->cgroup_root ? o->cgroup_root
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
        if (eng->seccomp == NULL && (rc = seccomp_policy_build(&eng->seccomp, err, errlen)) < 0)
                return rc;
        return 0;
}

static void engine_destroy(struct exec_engine *eng)
{
        if (eng->idmap_userns >= 0)
                close(eng->idmap_userns);
        cgroup_sys_free(eng->cg);
        seccomp_policy_free(eng->seccomp);
        sandbox_host_free(eng->host);
        free(eng);
}

void exec_engine_free(struct exec_engine *eng)
{
        struct exec *e;

        if (eng == NULL)
                return;
        eng->freeing = true;
        for (e = eng->list; e != NULL; e = e->next)
                exec_kill(e);
        if (eng->live == 0)
                engine_destroy(eng);
}

/* ---- lifecycle ---- */

static void exec_finish_remove(struct exec *e);

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
        for (pp = &eng->list; *pp != NULL; pp = &(*pp)->next) {
                if (*pp == e) {
                        *pp = e->next;
                        break;
                }
        }
        if (e->cb.on_remove != NULL)
                e->cb.on_remove(e, now_us() - e->exit_us, e->ud);
        free(e->stdin_copy);
        free(e);
        eng->live--;
        if (eng->freeing && eng->live == 0)
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

static void read_final_stats(struct exec *e, struct cgroup_stats *cs)
{
        memset(cs, 0, sizeof(*cs));
        if (e->cg != NULL)
                cgroup_read_stats(e->cg, cs);
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
        if (cs->oom_kills > 0)
                return EXEC_OOM;
        if (r->signal == SIGXCPU || (over_cpu && (r->signal != 0 || r->exit_code > 128)))
                return EXEC_CPU_LIMIT;
        return r->signal != 0 ? EXEC_SIGNALED : EXEC_EXITED;
}

static void report_exit(struct exec *e)
{
        struct exec_result r;
        struct cgroup_stats cs;

        if (e->exit_reported)
                return;
        e->exit_reported = true;
        e->exit_us = now_us();
        memset(&r, 0, sizeof(r));
        read_final_stats(e, &cs);
        r.wall_ms = (e->exit_us - e->t0_us) / 1000;
        if (e->cg != NULL) {
                r.cpu_ms = cs.cpu_ns / 1000000u;
                r.mem_peak_bytes = cs.mem_peak_bytes;
        } else {
                r.cpu_ms = (uint64_t)(e->ru.ru_utime.tv_sec + e->ru.ru_stime.tv_sec) * 1000u +
                           (uint64_t)(e->ru.ru_utime.tv_usec + e->ru.ru_stime.tv_usec) / 1000u;
                r.mem_peak_bytes = (uint64_t)e->ru.ru_maxrss * 1024u;
        }
        if (e->last.mem_peak_bytes > r.mem_peak_bytes)
                r.mem_peak_bytes = e->last.mem_peak_bytes;
        r.reason = classify(e, &cs, &r);
        r.truncated = e->truncated;
        snprintf(r.error, sizeof(r.error), "%s", e->error);
        if (e->cb.on_exit != NULL)
                e->cb.on_exit(e, &r, e->ud);
        close_handle(e, (uv_handle_t *)&e->out);
        close_handle(e, (uv_handle_t *)&e->err);
        close_handle(e, (uv_handle_t *)&e->status);
        close_handle(e, (uv_handle_t *)&e->in);
        close_handle(e, (uv_handle_t *)&e->exit_poll);
        close_handle(e, (uv_handle_t *)&e->timeout);
        close_handle(e, (uv_handle_t *)&e->stats);
        close_handle(e, (uv_handle_t *)&e->grace);
}

/* The exit is reported once the init is reaped and every stream has
 * delivered its last byte, so output never arrives after exit. */
static void maybe_report(struct exec *e)
{
        if (e->reaped && e->open_streams == 0)
                report_exit(e);
}

static void grace_expired(uv_timer_t *t)
{
        struct exec *e = t->data;

        /* A local leftover still holds a pipe open: stop waiting for it. */
        e->open_streams = 0;
        maybe_report(e);
}

static void send_kill(struct exec *e)
{
        if (e->reaped)
                return;
        if (e->iso == EXEC_SANDBOX) {
                /* The init is pid 1: its death ends the whole namespace. */
                if (syscall(SYS_pidfd_send_signal, e->pidfd, SIGKILL, NULL, 0) != 0)
                        kill(e->pid, SIGKILL);
        } else {
                kill(-e->pid, SIGKILL);
        }
        if (e->cg != NULL)
                cgroup_kill(e->cg);
        e->killed_sent = true;
}

static void kill_for(struct exec *e, enum exec_reason why)
{
        if (!e->has_pending) {
                e->pending = why;
                e->has_pending = true;
        }
        send_kill(e);
}

int exec_kill(struct exec *e)
{
        if (e->reaped || e->exit_reported)
                return -ESRCH;
        kill_for(e, EXEC_KILLED);
        return 0;
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
        uv_timer_stop(&e->timeout);
        uv_timer_stop(&e->stats);
        if (e->iso == EXEC_LOCAL)
                kill(-e->pid, SIGKILL); /* leftovers of the process group */
        if (e->open_streams > 0)
                uv_timer_start(&e->grace, grace_expired, EXIT_GRACE_MS, 0);
        maybe_report(e);
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

        memset(&cs, 0, sizeof(cs));
        if (e->cg != NULL)
                cgroup_read_stats(e->cg, &cs);
        else
                proc_stats(e, &cs);
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

static void stream_eof(struct exec *e, uv_stream_t *s)
{
        uv_read_stop(s);
        e->open_streams--;
        maybe_report(e);
}

static void on_output(uv_stream_t *s, ssize_t n, const uv_buf_t *buf)
{
        struct exec *e = s->data;
        enum exec_stream which = s == (uv_stream_t *)&e->out ? EXEC_STDOUT : EXEC_STDERR;
        size_t take;

        if (n < 0) {
                stream_eof(e, s);
                return;
        }
        take = (size_t)n;
        if (e->lim.output_bytes > 0) {
                uint64_t room = e->out_bytes < e->lim.output_bytes
                                        ? e->lim.output_bytes - e->out_bytes
                                        : 0;
                if (take > room) {
                        take = (size_t)room;
                        e->truncated = true;
                }
        }
        e->out_bytes += (uint64_t)n;
        if (take > 0 && e->cb.on_output != NULL)
                e->cb.on_output(e, which, buf->base, take, e->ud);
}

static void handle_msg(struct exec *e, const struct sandbox_msg *m)
{
        char path[64], buf[64];
        ssize_t n;
        int fd;

        switch (m->kind) {
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
                if (e->cb.on_start != NULL)
                        e->cb.on_start(e, e->pid, m->mono_us - e->t0_us, e->ud);
                break;
        case SANDBOX_MSG_SETUP:
                e->setup_failed = true;
                snprintf(e->error, sizeof(e->error), "sandbox setup failed at %s: %s", m->text,
                         strerror(m->err));
                break;
        case SANDBOX_MSG_NOEXEC:
                snprintf(e->error, sizeof(e->error), "%s: %s", m->text, strerror(m->err));
                break;
        case SANDBOX_MSG_STATUS:
                e->have_status = true;
                e->wait_status = (int)m->value;
                break;
        }
}

static void on_status(uv_stream_t *s, ssize_t n, const uv_buf_t *buf)
{
        struct exec *e = s->data;
        size_t off = 0;

        if (n < 0) {
                stream_eof(e, s);
                return;
        }
        while (off < (size_t)n) {
                size_t want = sizeof(e->msgbuf) - e->msglen;
                size_t take = (size_t)n - off < want ? (size_t)n - off : want;
                memcpy(e->msgbuf + e->msglen, buf->base + off, take);
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

static void on_stdin_written(uv_write_t *req, int status)
{
        struct exec *e = req->data;

        close_handle(e, (uv_handle_t *)&e->in);
}

/* ---- spawn ---- */

struct spawn_fds {
        int sync[2], status[2], out[2], err[2], in[2];
        int ws_idmap;
};

static void close_fd(int *fd)
{
        if (*fd >= 0)
                close(*fd);
        *fd = -1;
}

static void close_spawn_fds(struct spawn_fds *f)
{
        close_fd(&f->sync[0]);
        close_fd(&f->sync[1]);
        close_fd(&f->status[0]);
        close_fd(&f->status[1]);
        close_fd(&f->out[0]);
        close_fd(&f->out[1]);
        close_fd(&f->err[0]);
        close_fd(&f->err[1]);
        close_fd(&f->in[0]);
        close_fd(&f->in[1]);
        close_fd(&f->ws_idmap);
}

/* Which host ids the sandbox runs as: the workspace owner's, never root's.
 * Root-owned workspaces get NOBODY_ID and an idmapped workspace mount. */
static void pick_ids(const struct stat *ws, uint32_t *uid, uint32_t *gid, bool *idmap)
{
        *idmap = false;
        if (geteuid() != 0) {
                *uid = geteuid();
                *gid = getegid();
                return;
        }
        *uid = ws != NULL && ws->st_uid != 0 ? ws->st_uid : NOBODY_ID;
        *gid = ws != NULL && ws->st_uid != 0 ? ws->st_gid : NOBODY_ID;
        *idmap = ws != NULL && ws->st_uid == 0;
}

static int open_idmapped(struct exec_engine *eng, const char *ws, char *err, size_t errlen)
{
        struct mount_attr_v1 attr = {.attr_set = MOUNT_ATTR_IDMAP};
        int fd;

        if (eng->idmap_userns < 0)
                eng->idmap_userns = make_idmap_userns();
        if (eng->idmap_userns < 0) {
                snprintf(err, errlen, "cannot create the id-mapping namespace: %s",
                         strerror(-eng->idmap_userns));
                return eng->idmap_userns;
        }
        attr.userns_fd = (uint64_t)eng->idmap_userns;
        fd = (int)syscall(SYS_open_tree, AT_FDCWD, ws, OPEN_TREE_CLONE | O_CLOEXEC);
        if (fd < 0 || syscall(SYS_mount_setattr, fd, "", AT_EMPTY_PATH, &attr, sizeof(attr)) != 0) {
                int e = errno;
                if (fd >= 0)
                        close(fd);
                snprintf(err, errlen, "cannot id-map the root-owned workspace %s: %s", ws,
                         strerror(e));
                return -e;
        }
        return fd;
}

static void plan_ids(struct sandbox_plan *p)
{
        snprintf(p->passwd, sizeof(p->passwd),
                 "root:x:0:0:root:/root:/usr/sbin/nologin\n"
                 "sandbox:x:%u:%u:sandbox:/tmp:/bin/bash\n"
                 "nobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin\n",
                 SANDBOX_UID, SANDBOX_UID);
        snprintf(p->group, sizeof(p->group), "root:x:0:\nsandbox:x:%u:\nnogroup:x:65534:\n",
                 SANDBOX_UID);
}

static int open_pipes(struct spawn_fds *f, bool want_stdin)
{
        if (pipe2(f->sync, O_CLOEXEC) != 0 || pipe2(f->status, O_CLOEXEC) != 0 ||
            pipe2(f->out, O_CLOEXEC) != 0 || pipe2(f->err, O_CLOEXEC) != 0)
                return -errno;
        if (want_stdin)
                return pipe2(f->in, O_CLOEXEC) != 0 ? -errno : 0;
        f->in[0] = open("/dev/null", O_RDONLY | O_CLOEXEC);
        return f->in[0] < 0 ? -errno : 0;
}

static int start_handles(struct exec *e, struct spawn_fds *f)
{
        uv_loop_t *loop = e->eng->loop;
        uv_pipe_t *pipes[] = {&e->out, &e->err, &e->status};
        int *fds[] = {&f->out[0], &f->err[0], &f->status[0]};
        uv_read_cb cbs[] = {on_output, on_output, on_status};
        int i, rc;

        for (i = 0; i < 3; i++) {
                uv_pipe_init(loop, pipes[i], 0);
                pipes[i]->data = e;
                e->open_handles++;
                if ((rc = uv_pipe_open(pipes[i], *fds[i])) < 0)
                        return rc;
                *fds[i] = -1;
                uv_read_start((uv_stream_t *)pipes[i], alloc_cb, cbs[i]);
        }
        e->open_streams = 3;
        uv_poll_init(loop, &e->exit_poll, e->pidfd);
        e->exit_poll.data = e;
        e->open_handles++;
        uv_poll_start(&e->exit_poll, UV_READABLE, on_exit_readable);
        uv_timer_init(loop, &e->timeout);
        uv_timer_init(loop, &e->stats);
        uv_timer_init(loop, &e->grace);
        e->timeout.data = e->stats.data = e->grace.data = e;
        e->open_handles += 3;
        if (e->lim.timeout_ms > 0)
                uv_timer_start(&e->timeout, on_timeout, e->lim.timeout_ms, 0);
        uv_timer_start(&e->stats, on_stats, e->eng->stats_ms, e->eng->stats_ms);
        if (f->in[1] >= 0) {
                uv_pipe_init(loop, &e->in, 0);
                e->in.data = e;
                e->open_handles++;
                if ((rc = uv_pipe_open(&e->in, f->in[1])) < 0)
                        return rc;
                f->in[1] = -1;
        }
        return 0;
}

static int write_stdin(struct exec *e, size_t len)
{
        uv_buf_t b = uv_buf_init(e->stdin_copy, (unsigned)len);

        e->in_req.data = e;
        return uv_write(&e->in_req, (uv_stream_t *)&e->in, &b, 1, on_stdin_written);
}

static pid_t do_clone(struct exec *e, struct sandbox_plan *plan, int *pidfd)
{
        struct clone_args_v2 ca;
        pid_t pid;

        memset(&ca, 0, sizeof(ca));
        ca.flags = CLONE_PIDFD;
        ca.pidfd = (uint64_t)(uintptr_t)pidfd;
        ca.exit_signal = SIGCHLD;
        if (e->iso == EXEC_SANDBOX)
                ca.flags |= CLONE_NEWUSER | CLONE_NEWPID | CLONE_NEWNS | CLONE_NEWNET |
                            CLONE_NEWIPC | CLONE_NEWUTS | CLONE_NEWCGROUP;
        if (e->cg != NULL && cgroup_fd(e->cg) >= 0) {
                ca.flags |= CLONE_INTO_CGROUP;
                ca.cgroup = (uint64_t)cgroup_fd(e->cg);
        }
        pid = (pid_t)syscall(SYS_clone3, &ca, sizeof(ca));
        if (pid == 0)
                sandbox_child(plan);
        return pid < 0 ? -errno : pid;
}

static int make_cgroup(struct exec *e, char *err, size_t errlen)
{
        struct cgroup_limits cl = {0};
        char name[64];

        if (e->eng->cg == NULL)
                return 0;
        if (e->iso == EXEC_SANDBOX) {
                cl.memory_bytes = e->lim.memory_bytes;
                cl.pids = e->lim.pids;
                cl.cpu_quota_pct = 100;
        }
        snprintf(name, sizeof(name), "proctor-%d-%" PRIu64, getpid(), e->id);
        return cgroup_create(e->eng->cg, name, &cl, &e->cg, err, errlen);
}

int exec_spawn(struct exec_engine *eng, const struct exec_request *req,
               const struct exec_callbacks *cb, void *ud, struct exec **out, char *err,
               size_t errlen)
{
        struct spawn_fds f = {{-1, -1}, {-1, -1}, {-1, -1}, {-1, -1}, {-1, -1}, -1};
        struct sandbox_plan plan;
        const char *ws = req->workspace != NULL ? req->workspace : ".";
        struct stat wst;
        uint32_t uid, gid;
        bool idmap, sandbox = req->isolation == EXEC_SANDBOX;
        bool use_ws = sandbox && req->ws_mode != EXEC_WS_NONE;
        struct exec *e;
        char **envp = NULL;
        char cwd[4096];
        int rc;

        if (req->argv == NULL || req->argv[0] == NULL || req->argv[0][0] == '\0') {
                snprintf(err, errlen, "no command given");
                return -EINVAL;
        }
        if (sandbox && (rc = engine_prepare_sandbox(eng, err, errlen)) < 0)
                return rc;
        if (stat(ws, &wst) != 0 || !S_ISDIR(wst.st_mode)) {
                snprintf(err, errlen, "workspace %s: %s", ws,
                         errno ? strerror(errno) : "not a directory");
                return -ENOTDIR;
        }
        if (realpath(ws, cwd) == NULL) {
                snprintf(err, errlen, "workspace %s: %s", ws, strerror(errno));
                return -errno;
        }
        e = calloc(1, sizeof(*e));
        if (e == NULL)
                return -ENOMEM;
        e->eng = eng;
        e->id = ++eng->next_id;
        e->iso = req->isolation;
        e->lim = req->limits;
        if (!sandbox) {
                struct exec_limits only_wall = {.timeout_ms = req->limits.timeout_ms,
                                                .output_bytes = req->limits.output_bytes};
                e->lim = only_wall;
        }
        if (cb != NULL)
                e->cb = *cb;
        e->ud = ud;
        e->pidfd = -1;
        e->t0_us = now_us();

        memset(&plan, 0, sizeof(plan));
        pick_ids(use_ws ? &wst : NULL, &uid, &gid, &idmap);
        rc = -ENOMEM;
        envp = env_build(sandbox, req->env_extra);
        if (envp == NULL)
                goto fail;
        if (req->stdin_data != NULL) {
                e->stdin_copy = malloc(req->stdin_len ? req->stdin_len : 1);
                if (e->stdin_copy == NULL)
                        goto fail;
                memcpy(e->stdin_copy, req->stdin_data, req->stdin_len);
        }
        if ((rc = open_pipes(&f, req->stdin_data != NULL)) < 0) {
                snprintf(err, errlen, "cannot create pipes: %s", strerror(-rc));
                goto fail;
        }
        if (use_ws && idmap && (f.ws_idmap = open_idmapped(eng, cwd, err, errlen)) < 0) {
                rc = f.ws_idmap;
                f.ws_idmap = -1;
                goto fail;
        }
        if ((rc = make_cgroup(e, err, errlen)) < 0)
                goto fail;

        plan.isolate = sandbox;
        plan.host = eng->host;
        plan.seccomp = sandbox ? eng->seccomp : NULL;
        plan.argv = req->argv;
        plan.envp = envp;
        plan.sync_fd = f.sync[0];
        plan.status_fd = f.status[1];
        plan.stdin_fd = f.in[0];
        plan.stdout_fd = f.out[1];
        plan.stderr_fd = f.err[1];
        plan.ws_path = use_ws ? cwd : NULL;
        plan.ws_idmap_fd = f.ws_idmap;
        plan.ws_mode = req->ws_mode;
        plan.ws_keep = use_ws ? sandbox_locked_flags(cwd) : 0;
        plan.local_cwd = cwd;
        plan.tmpfs_bytes = req->limits.tmpfs_bytes ? req->limits.tmpfs_bytes : 64ull << 20;
        if (sandbox) {
                plan.cpu_ms = e->lim.cpu_ms;
                if (e->cg == NULL || !(cgroup_sys_controllers(eng->cg) & CG_MEMORY))
                        plan.as_bytes = e->lim.memory_bytes;
                if (e->cg == NULL || !(cgroup_sys_controllers(eng->cg) & CG_PIDS))
                        plan.nproc = e->lim.pids;
        }
        plan.uid = SANDBOX_UID;
        plan.gid = SANDBOX_UID;
        plan.switch_ids = geteuid() == 0;
        plan_ids(&plan);

        e->pid = do_clone(e, &plan, &e->pidfd);
        if (e->pid < 0) {
                rc = e->pid;
                snprintf(err, errlen, "cannot create the %s: clone3: %s",
                         sandbox ? "sandbox namespaces" : "child process", strerror(-rc));
                e->pid = 0;
                goto fail;
        }
        env_free(envp);
        envp = NULL;
        /* The child waits on the sync pipe until its ids and cgroup are set. */
        rc = 0;
        if (sandbox)
                rc = write_id_maps(e->pid, uid, gid);
        if (rc == 0 && e->cg != NULL && cgroup_fd(e->cg) < 0)
                rc = cgroup_attach(e->cg, e->pid);
        if (rc < 0) {
                snprintf(err, errlen, "cannot set up the %s: %s",
                         rc == -EPERM || rc == -EACCES ? "user namespace id maps"
                                                       : "execution cgroup",
                         strerror(-rc));
                kill(e->pid, SIGKILL);
                while (waitpid(e->pid, NULL, 0) < 0 && errno == EINTR)
                        ;
                goto fail;
        }
        if (write(f.sync[1], "g", 1) != 1) {
                rc = -errno;
                goto fail_killed;
        }
        close_fd(&f.sync[0]);
        close_fd(&f.sync[1]);
        close_fd(&f.status[1]);
        close_fd(&f.out[1]);
        close_fd(&f.err[1]);
        close_fd(&f.in[0]);
        close_fd(&f.ws_idmap);
        rc = start_handles(e, &f);
        e->next = eng->list;
        eng->list = e;
        eng->live++;
        if (rc == 0 && e->stdin_copy != NULL)
                rc = write_stdin(e, req->stdin_len);
        close_spawn_fds(&f);
        if (rc < 0) {
                /* Handles are live: end through the normal path. */
                snprintf(e->error, sizeof(e->error), "cannot watch the execution: %s",
                         uv_strerror(rc));
                e->setup_failed = true;
                send_kill(e);
        }
        *out = e;
        return 0;
fail_killed:
        kill(e->pid, SIGKILL);
        while (waitpid(e->pid, NULL, 0) < 0 && errno == EINTR)
                ;
fail:
        close_spawn_fds(&f);
        env_free(envp);
        if (e->pidfd >= 0)
                close(e->pidfd);
        if (e->cg != NULL) {
                cgroup_kill(e->cg);
                cgroup_destroy(e->cg);
        }
        free(e->stdin_copy);
        free(e);
        eng->next_id--;
        return rc < 0 ? rc : -EIO;
}
