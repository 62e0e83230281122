/* mcp_preview: the MCP servers started for the setup screen only, to count
 * their tools before a session starts. Its executions run on an engine and
 * report on a bus of their own, so nothing of them reaches the session's
 * events, trace or executions pane; the session starts its own servers. */
#ifndef PROCTOR_MCP_PREVIEW_H
#define PROCTOR_MCP_PREVIEW_H

#include "core/tools/mcp.h"

struct mcp_preview;

/* Starts every server of `servers_json` as a session in `o->mode` would
 * (o->eng and o->bus are ignored); `changed(ud)` is called whenever what
 * mcp_briefs says of them may have changed. 0 or -errno with err. */
int mcp_preview_new(uv_loop_t *loop, const struct exec_engine_opts *eo, const struct mcp_opts *o,
                    const char *servers_json, void (*changed)(void *ud), void *ud,
                    struct mcp_preview **out, char *err, size_t errlen);

/* Its client, for mcp_briefs. */
const struct mcp *mcp_preview_mcp(const struct mcp_preview *p);

/* Its executions not yet removed. */
unsigned mcp_preview_live(const struct mcp_preview *p);

/* Stops its servers without a callback any more; what is left of them
 * goes as the loop runs (mcp_preview_live counts it until then). */
void mcp_preview_stop(struct mcp_preview *p);

/* Stops it if need be and lets go of it; freed once its executions are. */
void mcp_preview_free(struct mcp_preview *p);

#endif
