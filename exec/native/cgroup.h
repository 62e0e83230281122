/* cgroup: one execution's control group on cgroup v1 or v2, whichever the
 * host offers: limits, stats from the cgroup files, signals, freeze and
 * thaw, kill, removal. Works on any root directory so tests can drive it
 * against a fake cgroupfs tree. */
#ifndef PROCTOR_CGROUP_H
#define PROCTOR_CGROUP_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

enum cgroup_version { CGROUP_NONE = 0, CGROUP_V1 = 1, CGROUP_V2 = 2 };

enum cgroup_controller {
        CG_MEMORY = 1u << 0,
        CG_PIDS = 1u << 1,
        CG_CPU = 1u << 2,
        CG_CPUACCT = 1u << 3, /* v1 only; v2 has cpu.stat in every group */
        CG_FREEZER = 1u << 4, /* v1 only; v2 has cgroup.freeze/cgroup.kill */
};

struct cgroup_limits {
        uint64_t memory_bytes;  /* 0: none; swap is always limited to 0 extra */
        uint32_t pids;          /* 0: none */
        uint32_t cpu_quota_pct; /* cpu bandwidth, 100 = one core; 0: none */
        /* Share of the CPU under contention against the group's siblings and
         * the processes beside it, on cgroup v2's scale (cpu.weight: 100 is a
         * normal process, 1..10000; v1 gets cpu.shares in proportion); 0:
         * the default. */
        uint32_t cpu_weight;
};

struct cgroup_stats {
        uint64_t cpu_ns;
        uint64_t mem_bytes;
        uint64_t mem_peak_bytes;
        uint32_t pids;
        uint64_t oom_kills;   /* processes the OOM killer ended in this group */
        uint64_t pids_denied; /* forks refused by pids.max */
};

/* The host's hierarchy as proctor uses it: where execution groups go. */
struct cgroup_sys;
struct cgroup;

/* Detects the cgroup version and the controllers proctor can use, from
 * `root` (normally /sys/fs/cgroup) and `proc_self_cgroup` (normally
 * /proc/self/cgroup). Executions are created under proctor's own cgroup.
 * On v2 proctor may move itself into a leaf so controllers can be enabled.
 * Returns 0 with version CGROUP_NONE when nothing usable exists (not an
 * error: sandbox mode falls back to rlimits); *why explains for doctor. */
int cgroup_sys_open(const char *root, const char *proc_self_cgroup, struct cgroup_sys **out,
                    char *why, size_t whylen);
/* As cgroup_sys_open, without making and removing a group in each
 * hierarchy to prove it writable: the first cgroup_create that uses a
 * hierarchy proves it, and settles a refusal as the proof would have: a
 * hierarchy other than memory's or pids' is left out from then on; for
 * those two, cgroups are not used at all (version CGROUP_NONE, and that
 * cgroup_create fails with -ENOTSUP having removed what it made). For a
 * process that makes few groups, this saves a mkdir and an rmdir per
 * hierarchy. */
int cgroup_sys_open_unproven(const char *root, const char *proc_self_cgroup,
                             struct cgroup_sys **out, char *why, size_t whylen);
void cgroup_sys_free(struct cgroup_sys *sys);
enum cgroup_version cgroup_sys_version(const struct cgroup_sys *sys);
unsigned cgroup_sys_controllers(const struct cgroup_sys *sys);

/* Removes execution groups left by proctor processes that no longer run
 * (names carry the owner's pid): kills what is inside, then rmdir. Returns
 * the number removed. */
int cgroup_sys_reap_stale(struct cgroup_sys *sys);

/* Creates group `name` (unique per execution) with `lim` applied. */
int cgroup_create(struct cgroup_sys *sys, const char *name, const struct cgroup_limits *lim,
                  struct cgroup **out, char *err, size_t errlen);
/* The same, on v1 only in the hierarchies of the controllers in `ctl`
 * (CG_* bits): a group that needs no freezer or no cpu bandwidth saves its
 * mkdir, join and rmdir there. v2 has one directory for all controllers. */
int cgroup_create_with(struct cgroup_sys *sys, const char *name, unsigned ctl,
                       const struct cgroup_limits *lim, struct cgroup **out, char *err,
                       size_t errlen);
/* Writes `lim` (a zero field leaves that limit unset). Groups can be made
 * ahead of time without limits and given them when put to use. */
int cgroup_set_limits(struct cgroup *cg, const struct cgroup_limits *lim, char *err, size_t errlen);
/* Opens, in every hierarchy of the group, the file through which a child
 * moves itself in by writing "0" (write-only): on v1 `tasks`, which moves
 * the writing thread without the global lock whose first use after a quiet
 * spell waits for an RCU grace period, so the child must be
 * single-threaded; on v2 cgroup.procs. Returns how many, or -errno. */
int cgroup_procs_fds(const struct cgroup *cg, int *fds, int max);
/* v2: an O_DIRECTORY fd for clone3(CLONE_INTO_CGROUP); -1 on v1. */
int cgroup_fd(const struct cgroup *cg);
/* Moves `pid` (and later its children) into the group in every hierarchy. */
int cgroup_attach(struct cgroup *cg, pid_t pid);
int cgroup_read_stats(struct cgroup *cg, struct cgroup_stats *st);
/* Kills every process in the group (v2 cgroup.kill; v1 freeze, kill, thaw). */
int cgroup_kill(struct cgroup *cg);
/* Sends `sig` to every process in the group but `except` (its init, which
 * must stay to reap and report), in one pass: a process forked meanwhile
 * may be missed. Returns how many were signalled, or -errno. */
int cgroup_signal(struct cgroup *cg, int sig, pid_t except);
/* Freezes (frozen true) or thaws every process of the group: v2
 * cgroup.freeze; v1 the freezer hierarchy, which a group made without it
 * joins first (its processes are moved in). Waits a short, bounded time for
 * the kernel to report the group frozen. 0, -ENOTSUP when the host has no
 * freezer for the group, or -errno. */
int cgroup_freeze(struct cgroup *cg, bool frozen);
/* rmdir in every hierarchy; -EBUSY while processes remain (retry later).
 * On success frees cg. */
int cgroup_destroy(struct cgroup *cg);

#endif
