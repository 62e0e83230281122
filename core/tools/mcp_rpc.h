/* mcp_rpc: JSON-RPC 2.0 framed as newline-delimited JSON, as MCP's stdio
 * transport carries it: a reader that splits a byte stream into messages,
 * and writers for requests, notifications and replies. No I/O here. */
#ifndef PROCTOR_MCP_RPC_H
#define PROCTOR_MCP_RPC_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

#include "core/util/bounds.h"

/* Lines longer than this are dropped whole (reported as bad, -E2BIG): a
 * server cannot make proctor hold an unbounded line. */
#define MCP_RPC_LINE_MAX BOUNDS_MCP_MESSAGE

enum mcp_rpc_kind {
        MCP_RPC_INVALID,
        MCP_RPC_REQUEST,      /* method and id: the peer asks and waits */
        MCP_RPC_NOTIFICATION, /* method, no id */
        MCP_RPC_RESPONSE,     /* id and exactly one of result or error */
};

/* msg is borrowed for the call. */
typedef void (*mcp_rpc_msg_fn)(json_t *msg, enum mcp_rpc_kind kind, void *ud);
/* A line that is not a JSON-RPC message: -EBADMSG, or -E2BIG for one
 * longer than the limit or of more than BOUNDS_MCP_JSON_VALUES values
 * (dropped unparsed); `why` is short and printable. */
typedef void (*mcp_rpc_bad_fn)(int code, const char *why, void *ud);

struct mcp_rpc_reader {
        char *buf;
        size_t len, cap;
        size_t max;    /* longest line kept */
        bool skipping; /* inside a line past max, until its newline */
        mcp_rpc_msg_fn on_msg;
        mcp_rpc_bad_fn on_bad;
        void *ud;
};

/* max 0: MCP_RPC_LINE_MAX. */
void mcp_rpc_reader_init(struct mcp_rpc_reader *r, size_t max, mcp_rpc_msg_fn on_msg,
                         mcp_rpc_bad_fn on_bad, void *ud);
void mcp_rpc_reader_free(struct mcp_rpc_reader *r);

/* Feeds bytes in any pieces; each complete line (a trailing \r dropped,
 * blank lines skipped) is parsed and handed to on_msg or on_bad. Where the
 * stream is cut never changes what comes out. Callbacks may not free the
 * reader. */
void mcp_rpc_feed(struct mcp_rpc_reader *r, const char *buf, size_t n);

/* What a parsed value is as a JSON-RPC 2.0 message ("jsonrpc": "2.0"
 * required; an id is a string or an integer). */
enum mcp_rpc_kind mcp_rpc_classify(const json_t *msg);

/* One line, "\n"-terminated, malloc'd (*len its length; len may be
 * NULL), or NULL when out of memory. `params` and `result` are stolen and may be NULL. */
char *mcp_rpc_request(long long id, const char *method, json_t *params, size_t *len);
char *mcp_rpc_notification(const char *method, json_t *params, size_t *len);
char *mcp_rpc_result(const json_t *id, json_t *result, size_t *len);
char *mcp_rpc_error(const json_t *id, int code, const char *message, size_t *len);

/* JSON-RPC's error codes that proctor sends. */
#define MCP_RPC_METHOD_NOT_FOUND (-32601)

#endif
