/* mcp_cmd: `proctor mcp list`, each configured MCP server started where the
 * mode says, with its state and tools, then stopped. Starts no session. */
#ifndef PROCTOR_MCP_CMD_H
#define PROCTOR_MCP_CMD_H

int mcp_cmd_main(int argc, char **argv);

#endif
