/* stats: an execution's counters, from its cgroup or, without one, its
 * command's /proc entry, sampled on a timer for on_stats; a sample past
 * the CPU or pids limit ends the sandbox. */
#include "exec/engine.h"

#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "exec/native/workspace.h"

static void proc_stats(struct exec *e, struct cgroup_stats *cs);

/* The execution's counters now; a warm sandbox's CPU time counts from the
 * call, not from its interpreter's start. */
void read_stats(struct exec *e, struct cgroup_stats *cs, bool proc_too)
{
        memset(cs, 0, sizeof(*cs));
        if (e->cg != NULL)
                cgroup_read_stats(e->cg, cs);
        else if (proc_too)
                proc_stats(e, cs);
        cs->cpu_ns = cs->cpu_ns > e->cpu_base_ns ? cs->cpu_ns - e->cpu_base_ns : 0;
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

void on_stats(uv_timer_t *t)
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
        /* Nothing of an execution before its start: on a loaded machine the
         * first sample may come before the child says it has started (or
         * before a warm sandbox's start is announced to its call). */
        if (e->cb.on_stats != NULL && e->started && !e->start_due)
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
