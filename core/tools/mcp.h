/* mcp: the Model Context Protocol client. Starts a session's stdio servers
 * (`mcpServers`) once, where the execution mode says, as executions of its
 * exec engine; offers their tools to the model as mcp__SERVER__TOOL and
 * runs tools/call for them. Never blocks the loop; never lets a server's
 * failure reach the session as anything but error results and events. */
#ifndef PROCTOR_MCP_H
#define PROCTOR_MCP_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <uv.h>

#include "core/util/bus.h"
#include "core/tools/dispatch.h"
#include "exec/exec.h"

/* The protocol versions proctor speaks, newest first. */
#define MCP_PROTOCOL_LATEST "2025-06-18"
#define MCP_PROTOCOL_OLDER  "2025-03-26"
/* Servers built on older SDKs answer with this one; its tools are the same. */
#define MCP_PROTOCOL_OLDEST "2024-11-05"

/* Checks an "mcpServers" object (Claude Desktop's shape: each server
 * {"command", "args"?, "env"?, "network"?, "type"?: "stdio"}). 0, or
 * -EINVAL with err naming the server and key, e.g. "mcpServers.git.args:
 * expected an array of strings". */
int mcp_config_check(const json_t *servers, char *err, size_t errlen);

struct mcp_opts {
        struct exec_engine *eng;
        struct bus *bus;
        enum exec_isolation mode;
        struct exec_workspace *ws; /* the session's, opened once */
        enum exec_ws_mode ws_mode;
        /* The session's: memory, pids, tmpfs and disk bound a sandboxed
         * server; timeout_ms bounds each call (and the start-up). */
        struct exec_limits limits;
        /* Called when a server's state or tool count changes (after its
         * mcp.server event), and never once mcp_stop or mcp_free began. */
        void (*changed)(void *ud);
        /* Called once `m` is gone: every execution removed, every handle
         * closed (after mcp_free). */
        void (*gone)(void *ud);
        void *ud;     /* for both */
        bool own_bus; /* `bus` is freed with `m` */
};

struct mcp;

/* Reads the servers from `servers_json` (a checked mcpServers object as
 * text; NULL or "{}": none) without starting any. 0 or -errno with err. */
int mcp_new(uv_loop_t *loop, const struct mcp_opts *o, const char *servers_json, struct mcp **out,
            char *err, size_t errlen);

/* Starts every server: initialize, notifications/initialized, tools/list.
 * `ready` is called once, when each server is ready or has failed (at once
 * when there are none); it may be called before this returns. */
void mcp_start(struct mcp *m, void (*ready)(void *ud), void *ud);

/* The tools array for the model: the built-ins (tools_schemas) followed by
 * the ready servers' tools. Owned by `m`; the same array stays valid (and
 * follows tools/list_changed) until mcp_free. */
const json_t *mcp_tools(struct mcp *m);

size_t mcp_server_count(const struct mcp *m);

struct mcp_server_info {
        const char *name;
        const char *state; /* "starting", "ready", "failed", "exited" */
        unsigned ntools;
        uint64_t exec_id; /* its execution, 0 when it has none (any more) */
        bool network;
        const char *error;   /* why it failed or exited; "" when none */
        const json_t *tools; /* [{name (the server's), description}] */
};

/* Fills `out` for server i (< mcp_server_count); strings live until the
 * next change of that server. */
void mcp_server_info(const struct mcp *m, size_t i, struct mcp_server_info *out);

/* The number of tools `m` offers from the server named so, -1 when there is
 * no such server (for the setup screen). */
int mcp_server_tools(const struct mcp *m, const char *name);

/* What the setup screen says of one configured server. */
struct mcp_brief {
        char name[40];
        /* "starting", "N tools", "failed: WHY" or "ended: WHY" (printable
         * ASCII, WHY cut to its first line); "" when `m` is NULL */
        char state[120];
        /* failed or exited: the whole reason, on one line (printable
         * ASCII); and whether it reads as a network failure of a server
         * that has no network (so "network": true may be the fix) */
        char why[800];
        bool net_hint;
        bool network; /* its entry says "network": true */
        bool failed;  /* failed or exited */
};

/* Fills out[0..max) for the configured servers (`servers_json`, in its
 * order) with what `m` (may be NULL: not started) knows of them. Returns
 * how many are configured (may exceed max). */
int mcp_briefs(const char *servers_json, const struct mcp *m, struct mcp_brief *out, int max);

/* The same as one line: "mcp        NAME (N tools), NAME2 (starting,
 * network), ...". Returns the number of servers (0: nothing to show);
 * *network tells whether one asks for the network. */
int mcp_describe(const char *servers_json, const struct mcp *m, char *buf, size_t len,
                 bool *network);

typedef void (*mcp_done_fn)(const struct tool_outcome *o, void *ud);
struct mcp_call;

/* Calls the tool the model knows as `name` (mcp__SERVER__TOOL) with
 * `args`. 0 (done will be called later, exactly once, unless cancelled) or
 * -errno with err filled (unknown tool, server not running). */
int mcp_call(struct mcp *m, const char *name, const json_t *args, mcp_done_fn done, void *ud,
             struct mcp_call **out, char *err, size_t errlen);

/* Cancels a call in flight (notifications/cancelled to the server); done
 * is called before this returns with an error result ending in `note`. */
void mcp_call_cancel(struct mcp_call *c, const char *note);

/* The operator kills a server's execution: true when `exec_id` is one
 * (its calls then fail with an error result), false otherwise. */
bool mcp_kill_exec(struct mcp *m, uint64_t exec_id);

/* Executions of servers not yet removed. */
unsigned mcp_live(const struct mcp *m);

/* Ends the servers (their calls get no callback any more, and no event
 * reports them): their executions are killed and then removed. */
void mcp_stop(struct mcp *m);

/* Stops every server; what is left of them goes when their executions are
 * removed (run the loop). Calls still in flight get no callback. */
void mcp_free(struct mcp *m);

#endif
