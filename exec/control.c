/* control: the operator's hold on a running execution: a signal to every
 * process but its init, pause (the cgroup's freezer, or SIGSTOP) and
 * resume. */
#include "exec/engine.h"

#include <errno.h>
#include <signal.h>

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
