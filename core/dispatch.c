/* dispatch: the one place that decides how a tool call runs in each mode.
 * A local builtin is a direct call (microseconds, no process); everything
 * else is an execution on the exec engine, reported on the bus. */
#include "core/dispatch.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/exec_report.h"

struct tool_run {
        dispatch_done_fn done;
        void *ud;
        struct exec *e;
        uint64_t exec_id;
        uint64_t t0_ms;
        bool finished;
        bool self_tool;        /* `proctor tool` in a sandbox: its output is the result */
        const char *kill_note; /* why proctor killed it, for the model */
        char *buf;             /* the output as it came */
        size_t len, cap;
        bool overflow;
};

/* Bytes of output kept for the result; the execution's own output limit
 * normally ends a flood well before this. */
#define OUTPUT_KEEP (16u << 20)

static uint64_t now_ms(void)
{
        struct timespec ts;

        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

static void append(struct tool_run *r, const char *data, size_t n)
{
        if (r->len + n + 1 > r->cap) {
                size_t cap = r->cap ? r->cap : 4096;
                char *grown;
                while (cap < r->len + n + 1)
                        cap *= 2;
                if (cap > OUTPUT_KEEP + 1) {
                        r->overflow = true;
                        if (r->len + 1 >= OUTPUT_KEEP)
                                return;
                        n = OUTPUT_KEEP - r->len - 1;
                        cap = OUTPUT_KEEP;
                }
                grown = realloc(r->buf, cap);
                if (grown == NULL) {
                        r->overflow = true;
                        return;
                }
                r->buf = grown;
                r->cap = cap;
        }
        memcpy(r->buf + r->len, data, n);
        r->len += n;
        r->buf[r->len] = '\0';
}

static void on_output(const char *buf, size_t n, enum exec_stream s, void *ud)
{
        append(ud, buf, n);
}

/* What the model reads after the output when the execution did not simply
 * exit 0: the reason, in words. */
static void add_trailer(struct tool_run *r, const struct exec_result *res)
{
        char line[320];

        switch (res->reason) {
        case EXEC_EXITED:
                if (res->exit_code == 0)
                        return;
                snprintf(line, sizeof(line), "[exit code %d]", res->exit_code);
                break;
        case EXEC_SIGNALED:
                snprintf(line, sizeof(line), "[killed by signal %d]", res->signal);
                break;
        case EXEC_TIMEOUT:
                snprintf(line, sizeof(line), "[stopped: wall-clock timeout after %.1f s]",
                         (double)res->wall_ms / 1000.0);
                break;
        case EXEC_OOM:
                snprintf(line, sizeof(line), "[stopped: out of memory]");
                break;
        case EXEC_CPU_LIMIT:
                snprintf(line, sizeof(line), "[stopped: CPU time limit reached]");
                break;
        case EXEC_PIDS_LIMIT:
                snprintf(line, sizeof(line), "[stopped: process limit reached]");
                break;
        case EXEC_KILLED:
                snprintf(line, sizeof(line), "[%s]",
                         r->kill_note != NULL ? r->kill_note : "killed by the operator");
                break;
        case EXEC_SETUP_FAILED:
                snprintf(line, sizeof(line), "[the sandbox could not be set up: %s]", res->error);
                break;
        case EXEC_DISK_LIMIT:
                snprintf(line, sizeof(line),
                         "[stopped: the session's disk quota for the workspace is used up; "
                         "remove files to write more]");
                break;
        }
        if (r->len > 0 && r->buf[r->len - 1] != '\n')
                append(r, "\n", 1);
        append(r, line, strlen(line));
        if (res->truncated)
                append(r, "\n[output truncated at the output limit]", 39);
}

static void on_exit_hook(const struct exec_result *res, void *ud)
{
        struct tool_run *r = ud;
        struct tool_outcome o = {0};

        if (res->reason != EXEC_EXITED || (!r->self_tool && res->exit_code != 0))
                add_trailer(r, res);
        o.ok = res->reason == EXEC_EXITED && res->exit_code == 0;
        o.output = r->buf != NULL ? r->buf : "";
        o.len = r->len;
        o.exit_code = res->reason == EXEC_EXITED ? res->exit_code : -1;
        o.duration_ms = now_ms() - r->t0_ms;
        o.killed = res->reason == EXEC_KILLED;
        o.reason = exec_reason_name(res->reason);
        r->finished = true;
        r->e = NULL;
        r->done(r, &o, r->ud);
}

static void on_remove_hook(void *ud)
{
        struct tool_run *r = ud;

        free(r->buf);
        free(r);
}

static int run_builtin_local(struct dispatch_ctx *dx, struct tool_run *r, const char *name,
                             const json_t *args)
{
        struct tools_result res = {0};
        struct tool_outcome o = {0};

        tools_run_builtin(name, args, dx->workspace, dx->cache, &res);
        o.ok = !res.error;
        o.output = res.text != NULL ? res.text : "";
        o.len = res.text != NULL ? res.len : 0;
        o.exit_code = -1;
        o.duration_ms = now_ms() - r->t0_ms;
        r->finished = true;
        r->done(r, &o, r->ud);
        tools_result_free(&res);
        free(r);
        return 0;
}

/* The command line and stdin for a call that runs as a process. */
static int build_request(struct dispatch_ctx *dx, struct tool_run *r, const char *name,
                         const json_t *args, char **argv, char **stdin_text,
                         struct exec_limits *lim)
{
        json_t *timeout = json_object_get(args, "timeout");

        *stdin_text = NULL;
        if (strcmp(name, "bash") == 0) {
                argv[0] = "bash";
                argv[1] = "-c";
                argv[2] = (char *)json_string_value(json_object_get(args, "command"));
                argv[3] = NULL;
        } else if (strcmp(name, "run_python_code") == 0) {
                argv[0] = "python3";
                argv[1] = "-";
                argv[2] = NULL;
                *stdin_text = strdup(json_string_value(json_object_get(args, "code")));
        } else {
                /* sandbox mode: the same tool code, run inside the sandbox */
                argv[0] = EXEC_SANDBOX_SELF;
                argv[1] = "tool";
                argv[2] = (char *)name;
                argv[3] = NULL;
                *stdin_text = json_dumps(args, JSON_COMPACT);
                r->self_tool = true;
        }
        if (strcmp(argv[0], "bash") == 0 ? argv[2] == NULL : *stdin_text == NULL)
                return -ENOMEM;
        *lim = dx->limits;
        if (json_is_number(timeout) && json_number_value(timeout) > 0) {
                double ms = json_number_value(timeout) * 1000.0;
                if (ms < (double)lim->timeout_ms || lim->timeout_ms == 0)
                        lim->timeout_ms = (uint64_t)ms;
        }
        return 0;
}

int dispatch_start(struct dispatch_ctx *dx, const char *call_id, const char *name,
                   const json_t *args, dispatch_done_fn done, void *ud, struct tool_run **out,
                   char *err, size_t errlen)
{
        static const struct exec_report_hooks hooks = {
            .on_output = on_output, .on_exit = on_exit_hook, .on_remove = on_remove_hook};
        struct tool_run *r = calloc(1, sizeof(*r));
        struct exec_request req = {0};
        char *argv[4], *in = NULL;
        int rc;

        if (r == NULL)
                return -ENOMEM;
        r->done = done;
        r->ud = ud;
        r->t0_ms = now_ms();
        *out = r;
        if (dx->mode == EXEC_LOCAL && !tools_runs_process(name))
                return run_builtin_local(dx, r, name, args);
        rc = build_request(dx, r, name, args, argv, &in, &req.limits);
        if (rc < 0) {
                snprintf(err, errlen, "out of memory");
                free(r);
                return rc;
        }
#if defined(__SANITIZE_ADDRESS__)
        /* An ASan build of proctor reserves terabytes of shadow address
         * space, which the RLIMIT_AS backstop (no memory cgroup) refuses:
         * sanitizer builds run their own tool code without a memory limit. */
        if (r->self_tool)
                req.limits.memory_bytes = 0;
#endif
        req.isolation = dx->mode;
        req.argv = argv;
        req.workspace = dx->workspace;
        req.ws = dx->ws;
        req.ws_mode = dx->ws_mode;
        req.stdin_data = in;
        req.stdin_len = in != NULL ? strlen(in) : 0;
        rc = exec_report_spawn(dx->eng, dx->bus, &req, call_id, &hooks, r, &r->e, err, errlen);
        free(in);
        if (rc < 0) {
                free(r);
                return rc;
        }
        r->exec_id = exec_id(r->e);
        return 0;
}

uint64_t dispatch_kill(struct tool_run *r, const char *note)
{
        if (r->finished || r->e == NULL)
                return 0;
        r->kill_note = note;
        return exec_kill(r->e) == 0 ? r->exec_id : 0;
}

uint64_t dispatch_exec_id(const struct tool_run *r)
{
        return r->finished ? 0 : r->exec_id;
}
