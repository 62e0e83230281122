/* options: one parser for every subcommand, so that an option means the
 * same everywhere; values are validated here, where the user can be told. */
#include "core/session/options.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/util/units.h"

const char options_help[] =
    "  --mode local|sandbox        where tools run (env TOOL_EXECUTION_MODE; default local)\n"
    "  --workspace DIR             the directory tools work in (default: current)\n"
    "  --workspace-mode MODE       sandbox view of it: rw, ro, overlay (writes discarded),\n"
    "                              none (default rw)\n"
    "  --image REF                 sandbox root from an image: the local engine's NAME, a\n"
    "                              `docker save` tarball or an OCI layout (PROCTOR_IMAGE)\n"
    "  --image-max SIZE            what one image may take unpacked (default 16G;\n"
    "                              PROCTOR_IMAGE_MAX)\n"
    "  --runtime native|docker     what runs sandboxes: proctor's own, or one container\n"
    "                              per execution through the Docker Engine API (needs\n"
    "                              --image; DOCKER_HOST; env PROCTOR_RUNTIME)\n"
    "  --memory SIZE               memory limit per execution (default 512M)\n"
    "  --cpu-time SECS             CPU time limit per execution (default 5)\n"
    "  --timeout SECS              wall-clock limit per execution (default 120)\n"
    "  --pids N                    process limit per execution (default 128)\n"
    "  --tmpfs SIZE                size of the sandbox's /tmp (default 64M)\n"
    "  --output-limit SIZE         output kept per execution (default 1M)\n"
    "  --disk SIZE                 what a session's sandboxes may add to the workspace\n"
    "                              (default 4G; exit reason disk_limit)\n"
    "  --json                      print events as JSON lines on stdout\n"
    "  --raw                       exec/run: pass output bytes unsanitized even to a\n"
    "                              terminal (escape sequences are then obeyed)\n"
    "  -h, --help                  show this help\n";

const char options_help_session[] =
    "  --max-parallel N            executions of a session at once; the rest wait\n"
    "                              in a queue (default 4)\n"
    "  --memory-budget SIZE        sum of the memory limits of a session's live\n"
    "                              sandboxes (default: max-parallel x memory, at\n"
    "                              most half of the host's memory)\n" OPTIONS_HELP_APPROVAL;

const char options_help_agent[] =
    "  --model SPEC                demo (the default without an API key),\n"
    "                              script:FILE.jsonl or openai:MODEL\n"
    "  --base-url URL              OpenAI-compatible endpoint (env PROCTOR_BASE_URL)\n"
    "  --ca-cert FILE              a private CA (PEM) to verify that endpoint with\n"
    "                              (env PROCTOR_CA_CERT)\n"
    "  --max-iterations N          turns before the session stops (default 100)\n"
    "  --trace FILE                where the session's events go (default\n"
    "                              $XDG_STATE_HOME/proctor/sessions/ID.jsonl)\n"
    "  --config FILE               config file (default "
    "$XDG_CONFIG_HOME/proctor/config.json)\n" OPTIONS_HELP_MCP;

const char options_help_screen[] =
    "  --theme NAME|PATH           colours: a bundled or user theme, or a theme file\n"
    "                              (t cycles them at run time)\n"
    "  --no-color                  monochrome (also when NO_COLOR is set)\n"
    "  --no-bell                   no terminal bell when a call waits for approval\n";

void options_builtin(struct options *o)
{
        memset(o, 0, sizeof(*o));
        o->mode = EXEC_LOCAL;
        o->mode_from = "default";
        o->ws_mode = EXEC_WS_RW;
        o->limits = exec_limits_default();
        o->max_iterations = 100;
        o->max_parallel = 4;
        o->provider_retries = 3;
        o->provider_timeout_ms = 60000;
        o->provider_stream_options = true;
}

void options_defaults(struct options *o)
{
        const char *env = getenv("TOOL_EXECUTION_MODE");

        options_builtin(o);
        if (env != NULL && env[0] != '\0' && options_parse_mode(env, &o->mode) == 0)
                o->mode_from = "TOOL_EXECUTION_MODE";
}

int options_parse_mode(const char *s, enum exec_isolation *out)
{
        if (strcmp(s, "local") == 0)
                *out = EXEC_LOCAL;
        else if (strcmp(s, "sandbox") == 0)
                *out = EXEC_SANDBOX;
        else
                return -EINVAL;
        return 0;
}

const char *options_mode_name(enum exec_isolation m)
{
        return m == EXEC_SANDBOX ? "sandbox" : "local";
}

enum opt_kind { O_FLAG, O_STR, O_MODE, O_WSMODE, O_SIZE, O_SECS, O_COUNT, O_LIST };

struct opt {
        const char *name;
        enum opt_kind kind;
        size_t off;
};

#define OFF(f) offsetof(struct options, f)

static const struct opt opts[] = {
    {"mode", O_MODE, OFF(mode)},
    {"model", O_STR, OFF(model)},
    {"base-url", O_STR, OFF(base_url)},
    {"ca-cert", O_STR, OFF(ca_cert)},
    {"config", O_STR, OFF(config)},
    {"workspace", O_STR, OFF(workspace)},
    {"workspace-mode", O_WSMODE, OFF(ws_mode)},
    {"image", O_STR, OFF(image)},
    {"runtime", O_STR, OFF(runtime)},
    {"image-max", O_SIZE, OFF(image_max)},
    {"memory", O_SIZE, OFF(limits.memory_bytes)},
    {"cpu-time", O_SECS, OFF(limits.cpu_ms)},
    {"timeout", O_SECS, OFF(limits.timeout_ms)},
    {"pids", O_COUNT, OFF(limits.pids)},
    {"tmpfs", O_SIZE, OFF(limits.tmpfs_bytes)},
    {"output-limit", O_SIZE, OFF(limits.output_bytes)},
    {"disk", O_SIZE, OFF(limits.disk_bytes)},
    {"max-iterations", O_COUNT, OFF(max_iterations)},
    {"max-parallel", O_COUNT, OFF(max_parallel)},
    {"memory-budget", O_SIZE, OFF(memory_budget)},
    {"trace", O_STR, OFF(trace)},
    {"mcp-config", O_LIST, OFF(mcp_config)},
    {"approval", O_STR, OFF(approval)},
    {"allow", O_LIST, OFF(allow)},
    {"deny", O_LIST, OFF(deny)},
    {"no-bell", O_FLAG, OFF(no_bell)},
    {"theme", O_STR, OFF(theme)},
    {"speed", O_STR, OFF(speed)},
    {"no-color", O_FLAG, OFF(no_color)},
    {"json", O_FLAG, OFF(json)},
    {"raw", O_FLAG, OFF(raw)},
    {"summary", O_FLAG, OFF(summary)},
    {"read-only", O_FLAG, OFF(read_only)},
    {"help", O_FLAG, OFF(help)},
    {"resume", O_STR, OFF(resume)},
};

#define NOPTS (sizeof(opts) / sizeof(opts[0]))
_Static_assert(NOPTS <= 64, "options_given keeps one bit per option");

bool options_given(const struct options *o, const char *name)
{
        for (size_t k = 0; k < NOPTS; k++)
                if (strcmp(opts[k].name, name) == 0)
                        return (o->given >> k) & 1;
        return false;
}

static int set_value(struct options *o, const struct opt *op, const char *v, char *err,
                     size_t errlen)
{
        char *base = (char *)o + op->off;
        uint64_t n;

        switch (op->kind) {
        case O_FLAG:
                *(bool *)base = true;
                return 0;
        case O_STR:
                if (v[0] == '\0')
                        break;
                *(const char **)base = v;
                return 0;
        case O_LIST:
                if (v[0] == '\0')
                        break;
                if (((struct options_list *)base)->n == OPTIONS_LIST_MAX) {
                        snprintf(err, errlen, "--%s: at most %d times", op->name, OPTIONS_LIST_MAX);
                        return -EINVAL;
                }
                ((struct options_list *)base)->v[((struct options_list *)base)->n++] = v;
                return 0;
        case O_MODE:
                if (options_parse_mode(v, (enum exec_isolation *)base) == 0) {
                        o->mode_from = "--mode";
                        return 0;
                }
                snprintf(err, errlen, "--mode: unknown mode '%s' (expected local or sandbox)", v);
                return -EINVAL;
        case O_WSMODE:
                if (exec_ws_mode_parse(v, (enum exec_ws_mode *)base) == 0)
                        return 0;
                snprintf(err, errlen,
                         "--workspace-mode: unknown mode '%s' (expected rw, ro, overlay or none)",
                         v);
                return -EINVAL;
        case O_SIZE:
                if (units_parse_size(v, &n) == 0 && n > 0) {
                        *(uint64_t *)base = n;
                        return 0;
                }
                snprintf(err, errlen, "--%s: bad size '%s' (examples: 512M, 64MiB, 1G)", op->name,
                         v);
                return -EINVAL;
        case O_SECS:
                if (units_parse_duration(v, &n) == 0 && n > 0) {
                        *(uint64_t *)base = n;
                        return 0;
                }
                snprintf(err, errlen, "--%s: bad duration '%s' (examples: 5, 0.5, 250ms, 2m)",
                         op->name, v);
                return -EINVAL;
        case O_COUNT:
                if (units_parse_uint(v, op->off == OFF(limits.pids) ? 4194304 : 1000000000, &n) ==
                        0 &&
                    n > 0) {
                        if (op->off == OFF(limits.pids))
                                *(uint32_t *)base = (uint32_t)n;
                        else
                                *(uint64_t *)base = n;
                        return 0;
                }
                snprintf(err, errlen, "--%s: bad number '%s' (expected a positive integer)",
                         op->name, v);
                return -EINVAL;
        }
        snprintf(err, errlen, "--%s: empty value", op->name);
        return -EINVAL;
}

int options_parse(int argc, char **argv, struct options *o, char *err, size_t errlen)
{
        int i;

        for (i = 1; i < argc; i++) {
                const char *a = argv[i];
                const char *eq, *val = NULL;
                size_t k, namelen;

                if (strcmp(a, "--") == 0) {
                        i++;
                        break;
                }
                if (strcmp(a, "-h") == 0) {
                        o->help = true;
                        continue;
                }
                if (strncmp(a, "--", 2) != 0) {
                        if (a[0] == '-' && a[1] != '\0') {
                                snprintf(err, errlen, "unknown option '%s'", a);
                                return -EINVAL;
                        }
                        break;
                }
                a += 2;
                eq = strchr(a, '=');
                namelen = eq != NULL ? (size_t)(eq - a) : strlen(a);
                for (k = 0; k < sizeof(opts) / sizeof(opts[0]); k++)
                        if (strlen(opts[k].name) == namelen &&
                            strncmp(opts[k].name, a, namelen) == 0)
                                break;
                if (k == sizeof(opts) / sizeof(opts[0])) {
                        snprintf(err, errlen, "unknown option '--%.*s'", (int)namelen, a);
                        return -EINVAL;
                }
                if (opts[k].kind == O_FLAG) {
                        if (eq != NULL) {
                                snprintf(err, errlen, "--%s takes no value", opts[k].name);
                                return -EINVAL;
                        }
                } else if (eq != NULL) {
                        val = eq + 1;
                } else if (i + 1 < argc) {
                        val = argv[++i];
                } else {
                        snprintf(err, errlen, "--%s needs a value", opts[k].name);
                        return -EINVAL;
                }
                if (set_value(o, &opts[k], val, err, errlen) < 0)
                        return -EINVAL;
                o->given |= (uint64_t)1 << k;
        }
        o->argi = i;
        return 0;
}
