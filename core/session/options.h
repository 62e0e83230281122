/* options: the command-line options shared by proctor's subcommands, with
 * their defaults and the TOOL_EXECUTION_MODE environment variable. */
#ifndef PROCTOR_OPTIONS_H
#define PROCTOR_OPTIONS_H

#include <stdbool.h>
#include <stdint.h>

#include "exec/exec.h"

/* An option given more than once, each value kept in order. */
#define OPTIONS_LIST_MAX 64
struct options_list {
        const char *v[OPTIONS_LIST_MAX];
        unsigned n;
};

/* The approval lines of the help texts that start sessions. */
#define OPTIONS_HELP_APPROVAL                                                                      \
        "  --approval POLICY           when to ask before a call runs: host (before what\n"        \
        "                              can change or reach this host outside a sandbox),\n"        \
        "                              always, never (env PROCTOR_APPROVAL; default host,\n"       \
        "                              and never for a run without a terminal on stdin)\n"         \
        "  --allow RULE                run such calls without asking; RULE is TOOL or\n"           \
        "                              TOOL:PATTERN ('bash:git status*', 'write:src/*')\n"         \
        "  --deny RULE                 refuse such calls without asking (repeatable, as\n"         \
        "                              --allow; a deny wins, rules win over the policy)\n"

/* The --mcp-config line of the help texts that start sessions. */
#define OPTIONS_HELP_MCP                                                                           \
        "  --mcp-config FILE           MCP servers ({\"mcpServers\": ...}), merged over the\n"     \
        "                              config file's; repeatable, a later file's server\n"         \
        "                              replacing an earlier one of the same name\n"

/* The --resume line of the help texts that start sessions. */
#define OPTIONS_HELP_RESUME                                                                        \
        "  --resume ID|TRACE           go on with an ended session's conversation; its\n"          \
        "                              mode, model, workspace and limits unless given\n"

struct options {
        enum exec_isolation mode;
        /* Where the mode came from, for people: "default", "--mode",
         * "TOOL_EXECUTION_MODE" or "config file PATH". */
        const char *mode_from;
        const char *model;
        const char *base_url;
        const char *ca_cert; /* --ca-cert: a private CA for the model endpoint (PEM) */
        const char *config;
        const char *workspace;
        enum exec_ws_mode ws_mode;
        /* --image: a `docker save` tarball or OCI layout for sandboxes' root
         * (exec/image); NULL: the host's. */
        const char *image;
        /* --runtime: "native" or "docker" (PROCTOR_RUNTIME, config
         * "runtime"); NULL: native. docker implies --mode sandbox. */
        const char *runtime;
        /* --image-max (PROCTOR_IMAGE_MAX, config "image_max") and config
         * "image_cache_max": exec/image's caps; 0: its defaults. */
        uint64_t image_max;
        uint64_t image_cache_max;
        struct exec_limits limits;
        uint64_t max_iterations;
        uint64_t max_parallel;        /* executions of a session at once */
        uint64_t memory_budget;       /* bytes across them; 0: the session's default */
        unsigned provider_retries;    /* model call attempts after the first */
        uint64_t provider_timeout_ms; /* no byte from the model endpoint for this long */
        /* send stream_options (usage in the stream); some servers refuse
         * the field: provider.stream_options false leaves it out */
        bool provider_stream_options;
        const char *trace;
        const char *theme;
        /* The mcpServers of the config file merged with --mcp-config's, as
         * JSON text (config_resolve); NULL: none. */
        const char *mcp_servers;
        struct options_list mcp_config; /* each --mcp-config FILE, in order */
        /* --approval (PROCTOR_APPROVAL, config "approval"): "host", "always"
         * or "never" (checked by config_resolve); NULL: the front end's
         * default. --allow/--deny RULE, after the config file's "allow"
         * and "deny" rules. */
        const char *approval;
        struct options_list allow, deny;
        bool no_bell; /* the supervisor rings no bell for an approval */
        const char *speed;
        bool no_color;
        bool json;
        bool raw; /* exec/run: output bytes untouched even to a terminal */
        bool summary;
        bool read_only; /* attach: a view that sends nothing */
        bool help;
        /* --resume ID|TRACE: the ended session whose conversation goes on */
        const char *resume;
        int argi;       /* index of the first argument after the options */
        uint64_t given; /* the options given on the command line (options_given) */
};

/* The built-in defaults alone, without the environment (config_resolve
 * layers the config file between the two). */
void options_builtin(struct options *o);
/* The built-in defaults, then TOOL_EXECUTION_MODE when it names a mode. */
void options_defaults(struct options *o);

/* Parses options from argv[1..] (argv[0] is the subcommand) up to "--" or
 * the first argument that is not an option. Unknown options and bad values
 * are errors naming the option; returns 0 or -EINVAL with err filled. */
int options_parse(int argc, char **argv, struct options *o, char *err, size_t errlen);

/* Whether the option `name` ("mode", "memory", ...) was given on the
 * command line (by options_parse), not taken from a default, the config
 * file or the environment. */
bool options_given(const struct options *o, const char *name);

int options_parse_mode(const char *s, enum exec_isolation *out);
const char *options_mode_name(enum exec_isolation m);

/* The option list as printed by --help. */
extern const char options_help[];
/* The options that bound a whole session (run and the supervisor). */
extern const char options_help_session[];
/* The model, the trace and the config file of a session. */
extern const char options_help_agent[];
/* How the supervisor and replay draw: --theme, --no-color. */
extern const char options_help_screen[];

#endif
