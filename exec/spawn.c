/* spawn: an execution's child, made and handed a request. The child is
 * cloned into its namespaces (sandbox mode) and cgroup, its ids mapped,
 * then released; its pipes, pidfd and timers are watched on the loop. A
 * request reaches it over its control socket with its limits, environment
 * and workspace; then the call's clocks start and its stdin is fed. */
#include "exec/engine.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "exec/native/env.h"
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

#define SANDBOX_UID 1000u /* the command's uid and gid inside */

/* The wall clock is held by each execution's init (see init_wait), which
 * keeps it while proctor is stopped. proctor's own timer is the backstop,
 * this much later so that the init, which ends the whole tree, normally
 * comes first: it acts alone for an init that cannot, frozen with its
 * command by exec_pause. */
#define DEADLINE_BACKSTOP_MS 100

struct clone_args_v2 {
        uint64_t flags, pidfd, child_tid, parent_tid, exit_signal, stack, stack_size, tls, set_tid,
            set_tid_size, cgroup;
};

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

static void alloc_cb(uv_handle_t *h, size_t suggested, uv_buf_t *buf)
{
        static char slab[65536];

        (void)h;
        (void)suggested;
        *buf = uv_buf_init(slab, sizeof(slab));
}

static void on_stdin_written(uv_write_t *req, int status)
{
        struct exec *e = req->data;

        close_handle(e, (uv_handle_t *)&e->in);
}

/* Writes the call's stdin kept by write_stdin. */
int stdin_write_kept(struct exec *e)
{
        uv_buf_t b = uv_buf_init(e->stdin_copy, (unsigned)e->stdin_len);

        e->in_req.data = e;
        return uv_write(&e->in_req, (uv_stream_t *)&e->in, &b, 1, on_stdin_written);
}

/* The host ids a child runs as: the workspace's (see exec_workspace_open);
 * a sandbox without a workspace run by root gets nobody. */
void pick_ids(const struct exec_request *req, const struct exec_workspace *ws, uint32_t *uid,
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

void close_fd(int *fd)
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
int child_new_net(struct exec_engine *eng, enum exec_isolation iso, bool share_net, uint32_t uid,
                  uint32_t gid, struct exec **out, char *err, size_t errlen)
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

int child_new(struct exec_engine *eng, enum exec_isolation iso, uint32_t uid, uint32_t gid,
              struct exec **out, char *err, size_t errlen)
{
        return child_new_net(eng, iso, false, uid, gid, out, err, errlen);
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
int child_request(struct exec *e, const struct exec_request *req, struct exec_workspace *ws,
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
void child_arm(struct exec *e, const struct exec_request *req, int rc)
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
void child_assign(struct exec *e, const struct exec_request *req, struct exec_workspace *ws)
{
        child_arm(e, req, child_request(e, req, ws, e->ws, true));
}
