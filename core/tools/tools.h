/* tools: the tools the agent gets, the same names and schemas in both
 * modes: bash, read, write, edit, run_python_code, read_cache, write_cache.
 * The registry, argument validation, output capping, and the file and cache
 * tools themselves (run in-process in local mode, and by `proctor tool`
 * inside a sandbox in sandbox mode). No process is started here. */
#ifndef PROCTOR_TOOLS_H
#define PROCTOR_TOOLS_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

#define TOOLS_OUTPUT_CAP 25000 /* characters returned to the model by default */
/* Tools of MCP servers are offered as mcp__SERVER__TOOL (core/tools/mcp.c):
 * tools_parse_args takes any JSON object for them. */
#define TOOLS_MCP_PREFIX "mcp__"

/* The "tools" array for a chat-completions request:
 * [{"type": "function", "function": {"name", "description", "parameters"}}].
 * Borrowed; valid for the life of the process. */
const json_t *tools_schemas(void);

/* True for a known tool name. */
bool tools_known(const char *name);

/* True for tools that run a process (bash, run_python_code); the others are
 * builtins. */
bool tools_runs_process(const char *name);

/* Parses and validates a call's raw JSON arguments against the tool's
 * schema: unknown tool, invalid JSON, a missing required field, a wrong
 * type or an unknown field are errors with a message for the model, naming
 * the tool and the field. On success *args is a new reference. */
int tools_parse_args(const char *name, const char *arguments, json_t **args, char *err,
                     size_t errlen);

/* The cache behind read_cache/write_cache: a key -> value map. */
struct tools_cache;
struct tools_cache *tools_cache_new(void);
void tools_cache_free(struct tools_cache *c);
/* Loads/saves the cache as a JSON object file (used by `proctor tool`). */
int tools_cache_load(struct tools_cache *c, const char *path);
int tools_cache_save(const struct tools_cache *c, const char *path);

struct tools_result {
        char *text; /* malloc'd, NUL-terminated; what the tool returns */
        size_t len;
        bool error; /* the call failed; text says why */
};

void tools_result_free(struct tools_result *r);

/* Runs a builtin (read, write, edit, read_cache, write_cache) with
 * validated args. Relative paths resolve against `root`. Never crashes on
 * bad input: failures come back as error results. */
void tools_run_builtin(const char *name, const json_t *args, const char *root,
                       struct tools_cache *cache, struct tools_result *out);

/* Caps text for the model: when longer than `cap` characters (UTF-8 code
 * points), keeps the first quarter and the last three quarters of `cap` and
 * puts a marker saying how many characters were cut between them. Never
 * splits a character. Returns a malloc'd string; *truncated tells. */
char *tools_cap(const char *text, size_t len, size_t cap, size_t *out_len, bool *truncated);

/* `proctor tool NAME`: reads the JSON arguments from stdin, runs the builtin
 * in the current directory with the cache at $TMPDIR/proctor-cache.json
 * (in a sandbox: its private /tmp), prints the result on stdout, exits 0, or
 * 1 for an error result. This is how sandbox mode runs the file tools. */
int tools_main(int argc, char **argv);

#endif
