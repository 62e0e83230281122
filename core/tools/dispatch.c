/* dispatch: the one place that decides how a tool call runs in each mode.
 * A local builtin is a direct call (microseconds, no process); everything
 * else is an execution on the exec engine, reported on the bus, started at
 * once or, past the session's bounds, in turn from a FIFO queue. */
#include "core/tools/dispatch.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "core/view/exec_report.h"
#include "core/tools/mcp.h"
#include "exec/native/pystub.h"

struct tool_run {
        dispatch_done_fn done;
        void *ud;
        struct dispatch_ctx *dx; /* NULL once the owner has closed */
        struct exec *e;
        uint64_t exec_id;
        uint64_t t0_ms;
        bool finished;
        bool self_tool;        /* `proctor tool` in a sandbox: its output is the result */
        bool warm;             /* run_python_code: may take a warm sandbox */
        const char *kill_note; /* why proctor killed it, for the model */
        char *buf;             /* the output as it came */
        size_t len, cap;
        bool overflow;
        /* while queued: what to start; the call's own copies */
        char *call_id, *name;
        json_t *args;
        bool queued;
        struct tool_run *next;                 /* in the queue */
        struct tool_run *live_next, **live_pp; /* among the live runs */
        uint64_t charge;                       /* memory counted against the budget while live */
        struct mcp_call *mcp;                  /* an MCP call in flight: no execution of its own */
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
                /* 126 and 127 with a reason: the command could not be run */
                if (res->error[0] != '\0')
                        snprintf(line, sizeof(line), "[exit code %d: %s]", res->exit_code,
                                 res->error);
                else
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

        /* A self tool says why it failed itself; one that said nothing (it
         * could not even start) still gives the model its exit code. */
        if (res->reason != EXEC_EXITED || ((!r->self_tool || r->len == 0) && res->exit_code != 0))
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

static void run_free(struct tool_run *r)
{
        free(r->buf);
        free(r->call_id);
        free(r->name);
        json_decref(r->args);
        free(r);
}

/* Ends a run that never got an execution, with `text` as its error. */
static void fail_run(struct tool_run *r, const char *text, bool cancelled)
{
        struct tool_outcome o = {0};

        o.output = (char *)text;
        o.len = strlen(text);
        o.exit_code = -1;
        o.duration_ms = now_ms() - r->t0_ms;
        o.killed = o.cancelled = cancelled;
        r->finished = true;
        r->done(r, &o, r->ud);
        run_free(r);
}

static bool fits(const struct dispatch_ctx *dx, uint64_t charge)
{
        return (dx->max_parallel == 0 || dx->running__ < dx->max_parallel) &&
               (dx->memory_budget == 0 || dx->mem_used__ + charge <= dx->memory_budget);
}

static void pump(struct dispatch_ctx *dx);
static uint64_t run_charge(const struct dispatch_ctx *dx);

/* How many waiting warm sandboxes the session's bounds leave room for
 * beside the live executions (each is counted as an execution and charged
 * its memory limit, like a call). */
static unsigned warm_room_left(const struct dispatch_ctx *dx)
{
        unsigned left = UINT_MAX;
        uint64_t charge = run_charge(dx);

        if (dx->max_parallel > 0)
                left = dx->running__ >= dx->max_parallel ? 0 : dx->max_parallel - dx->running__;
        if (dx->memory_budget > 0 && charge > 0) {
                uint64_t free_b =
                    dx->mem_used__ >= dx->memory_budget ? 0 : dx->memory_budget - dx->mem_used__;
                if (free_b / charge < left)
                        left = (unsigned)(free_b / charge);
        }
        return left;
}

bool dispatch_warm_room(void *ud, unsigned idle)
{
        const struct dispatch_ctx *dx = ud;

        /* A call waiting in the queue wins over a warm sandbox. */
        return dx->queue__ == NULL && idle < warm_room_left(dx);
}

/* A call started or waits: the warm sandboxes that no longer fit the
 * session's bounds beside it are let go, so they never hold a call back. */
static void warm_fit(struct dispatch_ctx *dx)
{
        if (dx->mode == EXEC_SANDBOX && dx->eng != NULL)
                exec_engine_warm_trim(dx->eng, dx->queue__ != NULL ? 0 : warm_room_left(dx));
}

static void on_remove_hook(void *ud)
{
        struct tool_run *r = ud;
        struct dispatch_ctx *dx = r->dx;

        if (dx != NULL) {
                dx->running__--;
                dx->mem_used__ -= r->charge;
                *r->live_pp = r->live_next;
                if (r->live_next != NULL)
                        r->live_next->live_pp = r->live_pp;
        }
        run_free(r);
        if (dx != NULL)
                pump(dx);
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

static void on_mcp_done(const struct tool_outcome *o, void *ud)
{
        struct tool_run *r = ud;

        r->finished = true;
        r->mcp = NULL;
        r->done(r, o, r->ud);
        free(r);
}

/* An MCP tool runs in its server, which lives for the session: the call is
 * a message to it, outside the bounds on executions. */
static int run_mcp(struct dispatch_ctx *dx, struct tool_run *r, const char *name,
                   const json_t *args, char *err, size_t errlen)
{
        int rc = -ENOENT;

        if (dx->mcp == NULL)
                snprintf(err, errlen, "unknown tool '%s': no MCP server is configured", name);
        else
                rc = mcp_call(dx->mcp, name, args, on_mcp_done, r, &r->mcp, err, errlen);

        if (rc < 0)
                free(r);
        return rc;
}

int dispatch_call_limits(const struct exec_limits *op, const json_t *args, struct exec_limits *out,
                         char *err, size_t errlen)
{
        const json_t *t = json_object_get(args, "timeout");
        double secs, ms, floor_ms = 1000.0;

        *out = *op;
        if (t == NULL || json_is_null(t))
                return 0;
        secs = json_number_value(t);
        /* NaN fails every comparison: written so that it is refused too */
        if (!json_is_number(t) || !(secs > 0) || !(secs < 1e12)) {
                snprintf(err, errlen,
                         "field 'timeout' must be a positive number of seconds (at most the "
                         "session's %.1f s)",
                         (double)op->timeout_ms / 1000.0);
                return -EINVAL;
        }
        /* A tiny timeout must not round down to 0, which means no limit. */
        ms = secs * 1000.0;
        if (op->timeout_ms > 0 && (double)op->timeout_ms < floor_ms)
                floor_ms = (double)op->timeout_ms;
        if (ms < floor_ms)
                ms = floor_ms;
        if (op->timeout_ms == 0 || ms < (double)op->timeout_ms)
                out->timeout_ms = (uint64_t)ms;
        return 0;
}

/* Each piece stays well under MAX_ARG_STRLEN (32 pages, 128 KiB on x86). */
#define BASH_ARG_MAX   (128u * 1024 - 1)
#define BASH_PIECE_MAX (64u * 1024)

/* Joins the pieces with IFS empty, then restores IFS to bash's default and
 * clears the positional parameters before the command runs, on the same
 * line so that $LINENO counts as under bash -c: the command sees what
 * bash -c would give it and no variable of ours (only
 * $BASH_EXECUTION_STRING shows this line instead of the command). */
static const char bash_join[] = "IFS=; eval \"IFS=\\$' \\t\\n'; set --; $*\"";

extern char **environ;

static size_t environ_bytes(void)
{
        size_t n = 0, i;

        for (i = 0; environ != NULL && environ[i] != NULL; i++)
                n += strlen(environ[i]) + 1 + sizeof(char *);
        return n;
}

char **dispatch_bash_argv(const char *command, size_t len, char *err, size_t errlen)
{
        size_t npieces = 0, off, i, k, total;
        long arg_max = sysconf(_SC_ARG_MAX);
        char **argv, *o;

        if (len <= BASH_ARG_MAX) {
                argv = malloc(4 * sizeof(char *) + len + 1);
                if (argv == NULL)
                        return NULL;
                argv[0] = "bash";
                argv[1] = "-c";
                argv[2] = memcpy((char *)(argv + 4), command, len + 1);
                argv[3] = NULL;
                return argv;
        }
        /* pieces end on character boundaries, so each is text of its own */
        for (off = 0; off < len; npieces++) {
                k = len - off > BASH_PIECE_MAX ? BASH_PIECE_MAX : len - off;
                while (off + k < len && k > 4 && ((unsigned char)command[off + k] & 0xc0) == 0x80)
                        k--;
                off += k;
        }
        total = (npieces + 5) * sizeof(char *) + len + npieces + sizeof(bash_join) + 16;
        if (arg_max <= 0)
                arg_max = 128 * 1024;
        if (total + environ_bytes() + 4096 > (size_t)arg_max) {
                snprintf(err, errlen,
                         "the command is %zu bytes (%.2f MiB): together with the environment "
                         "that is more than the %ld bytes (%.2f MiB) the kernel lets a program "
                         "be given (ARG_MAX); write it to a file in pieces and run the file",
                         len, (double)len / 1048576.0, arg_max, (double)arg_max / 1048576.0);
                errno = E2BIG;
                return NULL;
        }
        argv = malloc((npieces + 5) * sizeof(char *) + len + npieces);
        if (argv == NULL)
                return NULL;
        argv[0] = "bash";
        argv[1] = "-c";
        argv[2] = (char *)bash_join;
        argv[3] = "bash"; /* $0, as bash -c sets it */
        o = (char *)(argv + npieces + 5);
        for (off = 0, i = 0; i < npieces; i++) {
                k = len - off > BASH_PIECE_MAX ? BASH_PIECE_MAX : len - off;
                while (off + k < len && k > 4 && ((unsigned char)command[off + k] & 0xc0) == 0x80)
                        k--;
                argv[4 + i] = o;
                memcpy(o, command + off, k);
                o[k] = '\0';
                o += k + 1;
                off += k;
        }
        argv[4 + npieces] = NULL;
        return argv;
}

/* The command line, stdin and limits for a call that runs as a process. */
static int build_request(struct dispatch_ctx *dx, struct tool_run *r, const char *name,
                         const json_t *args, char ***argv, char **stdin_text,
                         struct exec_limits *lim, char *err, size_t errlen)
{

        const char *self[] = {EXEC_SANDBOX_SELF, "tool", name, NULL};
        int rc = dispatch_call_limits(&dx->limits, args, lim, err, errlen);

        *stdin_text = NULL;
        *argv = NULL;
        if (rc < 0)
                return rc;
        if (strcmp(name, "bash") == 0) {
                const json_t *c = json_object_get(args, "command");
                *argv = dispatch_bash_argv(json_string_value(c), strlen(json_string_value(c)), err,
                                           errlen);
                if (*argv == NULL && errno == E2BIG)
                        return -E2BIG;
        } else if (strcmp(name, "run_python_code") == 0) {
                /* The stub runs the code from stdin as `python3 -c` would,
                 * in either mode; in a sandbox it may have been started
                 * ahead (a warm sandbox, see exec/native/pystub.c). */
                *argv = malloc(sizeof(char *) * 4);
                if (*argv != NULL)
                        memcpy(*argv, exec_python_argv, sizeof(char *) * 4);
                *stdin_text = strdup(json_string_value(json_object_get(args, "code")));
                r->warm = true;
        } else {
                /* sandbox mode: the same tool code, run inside the sandbox */
                *argv = malloc(sizeof(self));
                if (*argv != NULL)
                        memcpy(*argv, self, sizeof(self));
                *stdin_text = json_dumps(args, JSON_COMPACT);
                r->self_tool = true;
        }
        if (*argv == NULL || (strcmp(name, "bash") != 0 && *stdin_text == NULL)) {
                snprintf(err, errlen, "out of memory");
                free(*argv);
                free(*stdin_text);
                return -ENOMEM;
        }
        return 0;
}

/* What a run counts against the memory budget: its sandbox's memory limit
 * (the operator's, whatever a sanitizer build does to its own tool code). */
static uint64_t run_charge(const struct dispatch_ctx *dx)
{
        return dx->mode == EXEC_SANDBOX ? dx->limits.memory_bytes : 0;
}

/* Starts the run's execution now. */
static int spawn(struct dispatch_ctx *dx, struct tool_run *r, char *err, size_t errlen)
{
        static const struct exec_report_hooks hooks = {
            .on_output = on_output, .on_exit = on_exit_hook, .on_remove = on_remove_hook};
        struct exec_request req = {0};
        char **argv, *in;
        int rc;

        rc = build_request(dx, r, r->name, r->args, &argv, &in, &req.limits, err, errlen);
        if (rc < 0)
                return rc;
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
        req.image = dx->image;
        req.env_extra = dx->env_extra;
        req.stdin_data = in;
        req.stdin_len = in != NULL ? strlen(in) : 0;
        req.warm = r->warm && dx->mode == EXEC_SANDBOX;
        rc = exec_report_spawn(dx->eng, dx->bus, &req, r->call_id, &hooks, r, &r->e, err, errlen);
        free(in);
        free(argv);
        if (rc < 0)
                return rc;
        r->exec_id = exec_id(r->e);
        r->charge = run_charge(dx);
        dx->running__++;
        dx->mem_used__ += r->charge;
        r->live_pp = &dx->live__;
        r->live_next = dx->live__;
        if (r->live_next != NULL)
                r->live_next->live_pp = &r->live_next;
        dx->live__ = r;
        warm_fit(dx);
        return 0;
}

/* Starts queued runs, oldest first, while the bounds allow. A start may
 * complete calls (a spawn that fails), whose owner may queue or start
 * more: the outer loop picks those up. */
static void pump(struct dispatch_ctx *dx)
{
        if (dx->pumping__)
                return;
        dx->pumping__ = true;
        while (dx->queue__ != NULL && fits(dx, run_charge(dx))) {
                struct tool_run *r = dx->queue__;
                char err[512], msg[600];

                dx->queue__ = r->next;
                if (dx->queue__ == NULL)
                        dx->queue_tail__ = &dx->queue__;
                r->queued = false;
                r->next = NULL;
                if (spawn(dx, r, err, sizeof(err)) < 0) {
                        snprintf(msg, sizeof(msg), "the tool could not be started: %s", err);
                        fail_run(r, msg, false);
                }
        }
        dx->pumping__ = false;
}

static void enqueue(struct dispatch_ctx *dx, struct tool_run *r)
{
        if (dx->queue_tail__ == NULL)
                dx->queue_tail__ = &dx->queue__;
        r->queued = true;
        r->next = NULL;
        *dx->queue_tail__ = r;
        dx->queue_tail__ = &r->next;
        warm_fit(dx);
}

static void fmt_mib(char *buf, size_t len, uint64_t bytes)
{
        snprintf(buf, len, "%.0f MiB", (double)bytes / 1048576.0);
}

/* The server of an mcp__SERVER__TOOL name, as mcp_server_info knows it. */
static bool mcp_server_of(const struct dispatch_ctx *dx, const char *name,
                          struct mcp_server_info *out)
{
        size_t plen = strlen(TOOLS_MCP_PREFIX), i, n;

        if (dx->mcp == NULL || strncmp(name, TOOLS_MCP_PREFIX, plen) != 0)
                return false;
        for (i = 0; i < mcp_server_count(dx->mcp); i++) {
                mcp_server_info(dx->mcp, i, out);
                n = strlen(out->name);
                if (strncmp(name + plen, out->name, n) == 0 &&
                    strncmp(name + plen + n, "__", 2) == 0)
                        return true;
        }
        return false;
}

bool dispatch_mcp_reaches_host(const struct dispatch_ctx *dx, const char *name)
{
        struct mcp_server_info si;

        if (!mcp_server_of(dx, name, &si))
                return strncmp(name, TOOLS_MCP_PREFIX, strlen(TOOLS_MCP_PREFIX)) == 0;
        return dx->mode == EXEC_LOCAL || si.network;
}

void dispatch_where(const struct dispatch_ctx *dx, const char *name, char *buf, size_t len)
{
        struct mcp_server_info si;
        const char *rt = dx->eng != NULL ? exec_engine_runtime(dx->eng) : "native";

        if (strncmp(name, TOOLS_MCP_PREFIX, strlen(TOOLS_MCP_PREFIX)) == 0) {
                if (!mcp_server_of(dx, name, &si))
                        snprintf(buf, len, "an MCP server");
                else if (dx->mode == EXEC_LOCAL)
                        snprintf(buf, len, "MCP server %s, on this host (local mode)", si.name);
                else
                        snprintf(buf, len, "MCP server %s, in a sandbox%s", si.name,
                                 si.network ? " with the host's network" : " (no network)");
                return;
        }
        if (dx->mode == EXEC_LOCAL)
                snprintf(buf, len, "this host (local mode): not isolated");
        else if (strcmp(rt, "docker") == 0)
                snprintf(buf, len, "a docker container of image %s", dx->image ? dx->image : "?");
        else if (dx->image != NULL)
                snprintf(buf, len, "a sandbox rooted in image %s", dx->image);
        else
                snprintf(buf, len, "a sandbox");
}

int dispatch_start(struct dispatch_ctx *dx, const char *call_id, const char *name,
                   const json_t *args, dispatch_done_fn done, void *ud, struct tool_run **out,
                   char *err, size_t errlen)
{
        struct tool_run *r = calloc(1, sizeof(*r));
        struct exec_limits lim;
        int rc;

        if (r == NULL)
                return -ENOMEM;
        r->done = done;
        r->ud = ud;
        r->dx = dx;
        r->t0_ms = now_ms(); /* a call's duration includes its time in the queue */
        *out = r;
        if (strncmp(name, TOOLS_MCP_PREFIX, strlen(TOOLS_MCP_PREFIX)) == 0)
                return run_mcp(dx, r, name, args, err, errlen);
        if (dx->mode == EXEC_LOCAL && !tools_runs_process(name))
                return run_builtin_local(dx, r, name, args);
        /* refuse now what could never run, rather than after the queue */
        rc = dispatch_call_limits(&dx->limits, args, &lim, err, errlen);
        if (rc == 0 && dx->memory_budget > 0 && run_charge(dx) > dx->memory_budget) {
                char one[32], all[32];
                fmt_mib(one, sizeof(one), run_charge(dx));
                fmt_mib(all, sizeof(all), dx->memory_budget);
                snprintf(err, errlen,
                         "its memory limit (%s) is more than the session's whole memory budget "
                         "(%s), so it could never start",
                         one, all);
                rc = -E2BIG;
        }
        if (rc == 0) {
                r->call_id = call_id != NULL ? strdup(call_id) : NULL;
                r->name = strdup(name);
                r->args = json_deep_copy(args);
                if ((call_id != NULL && r->call_id == NULL) || r->name == NULL || r->args == NULL) {
                        snprintf(err, errlen, "out of memory");
                        rc = -ENOMEM;
                }
        }
        if (rc == 0 && (dx->queue__ != NULL || !fits(dx, run_charge(dx)))) {
                enqueue(dx, r);
                return 0;
        }
        if (rc == 0)
                rc = spawn(dx, r, err, errlen);
        if (rc < 0) {
                run_free(r);
                return rc;
        }
        return 0;
}

uint64_t dispatch_kill(struct tool_run *r, const char *note)
{
        struct tool_run **pp;
        char msg[160];

        if (r->queued) {
                for (pp = &r->dx->queue__; *pp != NULL && *pp != r; pp = &(*pp)->next)
                        ;
                if (*pp == r) {
                        *pp = r->next;
                        if (r->dx->queue_tail__ == &r->next)
                                r->dx->queue_tail__ = pp;
                }
                r->queued = false;
                snprintf(msg, sizeof(msg), "cancelled before it started (%s)",
                         note != NULL ? note : "killed by the operator");
                fail_run(r, msg, true);
                return 0;
        }
        if (r->mcp != NULL) {
                mcp_call_cancel(r->mcp, note != NULL ? note : "killed by the operator");
                return 0;
        }
        if (r->finished || r->e == NULL)
                return 0;
        r->kill_note = note;
        return exec_kill(r->e) == 0 ? r->exec_id : 0;
}

bool dispatch_queued(const struct tool_run *r)
{
        return r->queued;
}

uint64_t dispatch_exec_id(const struct tool_run *r)
{
        return r->finished ? 0 : r->exec_id;
}

void dispatch_close(struct dispatch_ctx *dx)
{
        struct tool_run *r;

        dx->pumping__ = true; /* nothing starts from here on */
        while (dx->queue__ != NULL)
                dispatch_kill(dx->queue__, "the session ended");
        for (r = dx->live__; r != NULL; r = r->live_next)
                r->dx = NULL;
        dx->live__ = NULL;
}
