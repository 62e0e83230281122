/* exec_report: turns one execution's callbacks into exec.* events on a
 * bus, so every consumer (headless printer, trace, view model) sees the
 * same lifecycle: create, start, output, stats, exit, remove. */
#ifndef PROCTOR_EXEC_REPORT_H
#define PROCTOR_EXEC_REPORT_H

#include <jansson.h>

#include "core/util/bus.h"
#include "exec/exec.h"

struct exec_report;

/* What the owner learns besides the events. */
struct exec_report_hooks {
        void (*on_output)(const char *buf, size_t n, enum exec_stream s, void *ud);
        void (*on_exit)(const struct exec_result *r, void *ud);
        void (*on_remove)(void *ud);
        /* stdout goes to on_output only, not on the bus (a protocol stream
         * such as an MCP server's, which proctor reports in its own terms) */
        bool quiet_stdout;
        /* what it is for when no tool call is (exec.create's "label"):
         * "mcp server NAME"; NULL for none */
        const char *label;
};

/* Spawns `req` on `eng` and reports it on `bus`; `call_id` (may be NULL)
 * ties it to a tool call, whose output then goes out as tool.output
 * {call_id, exec_id, stream, data} instead of exec.output. When nothing could be started, returns
 * -errno with the reason in err and emits nothing. */
int exec_report_spawn(struct exec_engine *eng, struct bus *bus, const struct exec_request *req,
                      const char *call_id, const struct exec_report_hooks *hooks, void *ud,
                      struct exec **out, char *err, size_t errlen);

json_t *exec_report_limits_json(const struct exec_limits *l);
/* The sandbox limits that hold only per process (rlimits) because no
 * cgroup enforces them: a JSON array of "memory", "cpu", "pids". */
json_t *exec_report_fallback_json(bool sandbox, unsigned cgroup_limits);

/* Why a sandbox's exec.create says "disk_quota": false. */
#define DISK_QUOTA_REMOTE_TEXT                                                                     \
        "the disk quota (--disk) does not hold here: a remote engine (DOCKER_HOST) mounts its "    \
        "own host's workspace, which proctor cannot measure"

#endif
