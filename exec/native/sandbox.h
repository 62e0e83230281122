/* sandbox: the child side of an execution. A child is cloned (with fresh
 * namespaces in sandbox mode), joins its cgroup, then waits for a request:
 * only then does it build the root, become the init and launch the command.
 * Children can therefore be made ahead of time. Internal to exec/. The
 * child runs between clone and exec: raw syscalls only, nothing allocates
 * from the heap. */
#ifndef PROCTOR_SANDBOX_H
#define PROCTOR_SANDBOX_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "exec/exec.h"

struct seccomp_policy;

/* Where proctor's own binary appears inside every sandbox. */
#define SANDBOX_SELF EXEC_SANDBOX_SELF

/* Host facts read once per engine: /etc files copied into every sandbox,
 * the usrmerge links, mount flags that must be preserved on remount. */
struct sandbox_host;

int sandbox_host_open(struct sandbox_host **out, char *err, size_t errlen);
/* The same, from an image's root (exec/image) instead of the host's. */
int sandbox_host_open_root(struct sandbox_host **out, const char *root, char *err, size_t errlen);
void sandbox_host_free(struct sandbox_host *h);

/* Messages the child sends on the status pipe, each one write() so that
 * they stay atomic (well under PIPE_BUF). */
enum sandbox_msg_kind {
        SANDBOX_MSG_WAITING = 'W', /* in its cgroup, waiting for a request */
        SANDBOX_MSG_READY = 'R',   /* command launched; value: its pid (own view) */
        SANDBOX_MSG_SETUP = 'E',   /* setup failed; err + text */
        SANDBOX_MSG_NOEXEC = 'N',  /* the command could not be executed; err */
        SANDBOX_MSG_STATUS = 'X',  /* the command ended; value: wait status */
        SANDBOX_MSG_TIMEOUT = 'T', /* the deadline passed: the init is killing the rest */
};

struct sandbox_msg {
        char kind;
        int32_t err;
        int64_t value;
        uint64_t mono_us; /* CLOCK_MONOTONIC when sent */
        char text[160];
};

#define SANDBOX_MAX_PROCS_FDS 5 /* cgroup files a child joins through */

/* What the child needs from birth, computed by the parent before clone. */
struct sandbox_plan {
        bool isolate;   /* false: local mode, only the init and the command */
        bool share_net; /* isolate, but in the host's network namespace */
        const struct sandbox_host *host;
        const struct seccomp_policy *seccomp;
        int ctl_fd;    /* socket: the release (see sandbox_release), then the request */
        int status_fd; /* struct sandbox_msg out */
        int stdin_fd, stdout_fd, stderr_fd;
        uint32_t uid, gid; /* inside the sandbox */
        bool switch_ids;   /* created by root: take uid/gid, drop groups */
        char passwd[256];  /* /etc/passwd and /etc/group for uid/gid */
        char group[128];
};

/* One execution's specifics, sent when the command is due. */
struct sandbox_request {
        char *const *argv;
        char *const *envp;
        const char *ws_path; /* resolved; sandbox: NULL for none; local: cwd */
        int ws_tree_fd;      /* sandbox: detached workspace mount; local: its directory; or -1 */
        uint64_t ws_dev, ws_ino; /* the workspace's identity, checked when taken by path */
        char *const *protect;    /* proctor's own paths in the workspace, relative; or NULL */
        enum exec_ws_mode ws_mode;
        unsigned long ws_keep; /* mount flags of the workspace to keep */
        uint64_t tmpfs_bytes;
        uint64_t cpu_ms;   /* RLIMIT_CPU backstop, 0: none */
        uint64_t as_bytes; /* RLIMIT_AS backstop when no memory cgroup */
        uint32_t nproc;    /* RLIMIT_NPROC backstop when no pids cgroup */
        uint64_t fsize;    /* RLIMIT_FSIZE: the disk quota's room; UINT64_MAX: none */
        /* The wall clock's end (CLOCK_MONOTONIC, us; 0: none), held by the
         * init itself so that it holds while proctor is stopped. */
        uint64_t deadline_us;
        /* Sandbox: the command gets the write end of a pipe to the init at
         * SANDBOX_EXIT_FD, not close-on-exec (the Python stub, exec/native/pystub.c).
         * A byte written there is the command's exit status: the init ends
         * every other process of the sandbox and reports that status at
         * once, without waiting for the command's own exit. */
        bool exit_channel;
        /* No socket(2) of AF_UNIX, nor datagram socketpairs: the sandbox
         * acts as root in the workspace (exec_workspace_as_root), where a
         * root daemon's socket may be. */
        bool no_unix_sockets;
};

/* Per-sandbox bounds on what the kernel counts per user (a native sandbox's
 * rlimits, and a container's: exec/docker/docker_init.c). */
#define SANDBOX_SIGPENDING  256
#define SANDBOX_MSGQUEUE    (64u << 10)
#define SANDBOX_NOFILE_SOFT 1024
#define SANDBOX_NOFILE      4096

/* Where the command finds its exit channel (below SANDBOX_NOFILE_SOFT). */
#define SANDBOX_EXIT_FD 1000

/* The child's entry point after clone. Never returns. */
__attribute__((noreturn)) void sandbox_child(const struct sandbox_plan *p);

/* Parent side: sends the request over ctl_fd (with ws_tree_fd attached).
 * 0 or -errno. */
int sandbox_request_send(int ctl_fd, const struct sandbox_request *r);

/* Lets the child go on once its ids are mapped, handing it the cgroup
 * files it joins through (cgroup_procs_fds; n may be 0), so that the
 * group can be made while the child starts up. 0 or -errno. */
int sandbox_release(int ctl_fd, const int *join_fds, unsigned n);

/* Flags (noexec, atime) that a bind of `path` made in a user namespace
 * keeps locked, so a remount must repeat them. */
unsigned long sandbox_locked_flags(const char *path);

/* Output pipes a sandbox's init may be handed (stdout and stderr). */
#define SANDBOX_MAX_DRAIN 2

/* Parent side: hands the read end of an output pipe the command flooded
 * past the cap to the sandbox's init, which empties it from then on (its
 * CPU time counts against the sandbox). 0 or -errno (the init is gone). */
int sandbox_hand_over(int ctl_fd, int pipe_fd);

/* Parent side: gives the init of a sandbox whose command was launched
 * ahead (warm, with no deadline) its wall clock's end, from the call on
 * (CLOCK_MONOTONIC, us). 0 or -errno (the init is gone). */
int sandbox_start_clock(int ctl_fd, uint64_t deadline_us);

/* Calls fn(pid, arg) for each pid that a /proc/PID/task/TID/children file
 * lists; -errno when it cannot be opened. Raw syscalls only: an init uses
 * it after clone. */
int sandbox_children_each(const char *path, void (*fn)(pid_t, void *), void *arg);

/* For each thread of `pid`: task(pid, tid, arg) when task is not NULL,
 * then child(c, arg) for each child that thread made. Reads only that
 * process's /proc entries; not for use after clone (it allocates).
 * 0, or -errno when the process is gone. */
int sandbox_threads_each(pid_t pid, void (*task)(pid_t, const char *, void *),
                         void (*child)(pid_t, void *), void *arg);

/* Reads one message; 1 when one was read, 0 at EOF, -errno on error. */
int sandbox_msg_read(int fd, struct sandbox_msg *m);

#endif
