/* exit: how an execution ends. Reads the init's status channel (waiting,
 * started, setup failed, timed out, the command's status), reaps the init
 * through its pidfd, kills on a limit or on request, classifies the exit
 * and reports it once the output is all out, then closes every handle and
 * removes the cgroup before on_remove. */
#include "exec/engine.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "exec/native/workspace.h"

#define EXIT_GRACE_MS 200 /* wait for pipes after the init is gone */

void on_handle_closed(uv_handle_t *h)
{
        struct exec *e = h->data;

        if (--e->open_handles == 0)
                exec_finish_remove(e);
}

void close_handle(struct exec *e, uv_handle_t *h)
{
        if (h->data == e && !uv_is_closing(h))
                uv_close(h, on_handle_closed);
}

static void destroy_retry(uv_timer_t *t);

void exec_finish_remove(struct exec *e)
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

void report_exit(struct exec *e)
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
        if (e->ws != NULL) {
                ws_quota_sample(e->ws); /* what it left behind counts for the next */
                r.disk_known =
                    ws_quota_report(e->ws, &r.disk_added_bytes, &r.disk_walks, &r.disk_walk_ms);
        }
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
void maybe_report(struct exec *e)
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

void send_kill(struct exec *e)
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

void kill_for(struct exec *e, enum exec_reason why)
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

void on_exit_readable(uv_poll_t *p, int status, int events)
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

void on_timeout(uv_timer_t *t)
{
        kill_for(t->data, EXEC_TIMEOUT);
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

void on_status(uv_stream_t *s, ssize_t n, const uv_buf_t *buf)
{
        if (n < 0)
                uv_read_stop(s);
        else
                parse_status(s->data, buf->base, (size_t)n);
}

/* Reads what the status pipe holds right now (it is non-blocking). */
void drain_status(struct exec *e)
{
        char buf[4 * sizeof(struct sandbox_msg)];
        uv_os_fd_t fd;
        ssize_t n;

        if (uv_fileno((uv_handle_t *)&e->status, &fd) != 0)
                return;
        while ((n = read(fd, buf, sizeof(buf))) > 0)
                parse_status(e, buf, (size_t)n);
}
