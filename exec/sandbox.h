/* sandbox: what the cloned child does to become an execution: for sandbox
 * mode a fresh root, mounts, hostname and pivot_root; for both modes the
 * tiny init that reaps, reports and launches the command. Internal to exec/.
 * The child runs between clone and exec: raw syscalls only, no allocation. */
#ifndef PROCTOR_SANDBOX_H
#define PROCTOR_SANDBOX_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "exec/exec.h"

struct seccomp_policy;

/* Host facts read once per engine: /etc files copied into every sandbox,
 * the usrmerge links, mount flags that must be preserved on remount. */
struct sandbox_host;

int sandbox_host_open(struct sandbox_host **out, char *err, size_t errlen);
void sandbox_host_free(struct sandbox_host *h);

/* Messages the child sends on the status pipe, each one write() so that
 * they stay atomic (well under PIPE_BUF). */
enum sandbox_msg_kind {
        SANDBOX_MSG_READY = 'R',  /* setup done; value: command pid (host view) */
        SANDBOX_MSG_SETUP = 'E',  /* setup failed; err + text */
        SANDBOX_MSG_NOEXEC = 'N', /* the command could not be executed; err */
        SANDBOX_MSG_STATUS = 'X', /* the command ended; value: wait status */
};

struct sandbox_msg {
        char kind;
        int32_t err;
        int64_t value;
        uint64_t mono_us; /* CLOCK_MONOTONIC when sent */
        char text[160];
};

/* Everything the child needs, computed by the parent before clone. */
struct sandbox_plan {
        bool isolate; /* false: local mode, only the init and the command */
        const struct sandbox_host *host;
        const struct seccomp_policy *seccomp;
        char *const *argv;
        char *const *envp;
        int sync_fd;   /* read one byte before setup; EOF means give up */
        int status_fd; /* struct sandbox_msg out */
        int stdin_fd, stdout_fd, stderr_fd;
        const char *ws_path; /* workspace (absolute, resolved), NULL for none */
        int ws_idmap_fd; /* detached idmapped clone of the workspace, or -1 */
        enum exec_ws_mode ws_mode;
        unsigned long ws_keep; /* mount flags of the workspace to keep on remount */
        const char *local_cwd; /* local mode working directory */
        uint64_t tmpfs_bytes;
        uint64_t cpu_ms;       /* RLIMIT_CPU backstop, 0: none */
        uint64_t as_bytes;     /* RLIMIT_AS backstop when no memory cgroup */
        uint32_t nproc;        /* RLIMIT_NPROC backstop when no pids cgroup */
        uint32_t uid, gid;     /* inside the sandbox */
        bool switch_ids;       /* created by root: take uid/gid, drop groups */
        char passwd[256];      /* /etc/passwd and /etc/group lines for uid/gid */
        char group[128];
};

/* The child's entry point after clone: sets up and becomes the init.
 * Never returns. */
__attribute__((noreturn)) void sandbox_child(const struct sandbox_plan *p);

/* Flags (noexec, atime) that a bind of `path` made in a user namespace
 * keeps locked, so a remount must repeat them. */
unsigned long sandbox_locked_flags(const char *path);

/* Reads one message; 1 when one was read, 0 at EOF, -errno on error. */
int sandbox_msg_read(int fd, struct sandbox_msg *m);

#endif
