/* mcp_cmd: starts the servers exactly as a session would (same mode,
 * workspace, limits and environment), so that what it prints is what a
 * session gets; it reports, and never calls a tool. */
#include "core/cli/mcp_cmd.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "core/session/config.h"
#include "core/tools/mcp.h"
#include "core/session/options.h"
#include "core/view/termout.h"

static const char usage[] = "usage: proctor mcp list [--mode local|sandbox] [--mcp-config FILE]... "
                            "[--config FILE] [--json]\n";

static void on_ready(void *ud)
{
        uv_stop(ud);
}

/* First line of a description, for one line per tool. */
static void first_line(const char *s, char *out, size_t len)
{
        size_t n = strcspn(s != NULL ? s : "", "\r\n");

        if (n >= len)
                n = len - 1;
        memcpy(out, s != NULL ? s : "", n);
        out[n] = '\0';
}

static json_t *info_json(const struct mcp_server_info *in)
{
        json_t *tools = json_array(), *t;
        size_t k;

        json_array_foreach ((json_t *)in->tools, k, t)
                json_array_append_new(tools,
                                      json_pack("{s:O,s:O?}", "name", json_object_get(t, "name"),
                                                "description", json_object_get(t, "description")));
        return json_pack("{s:s,s:s,s:b,s:s,s:o}", "name", in->name, "state", in->state, "network",
                         in->network, "error", in->error, "tools", tools);
}

static void print_server(struct termout *out, const struct mcp_server_info *in,
                         enum exec_isolation mode)
{
        const json_t *t;
        char desc[120];
        size_t k;

        termout_printf(out, "%s: %s, %u tools%s\n", in->name, in->state, in->ntools,
                       in->network ? (mode == EXEC_SANDBOX ? ", network (the host's, shared "
                                                             "with its sandbox)"
                                                           : ", network")
                                   : "");
        /* the stderr's lines in the message, each indented under the server */
        for (const char *p = in->error; *p != '\0';) {
                size_t n = strcspn(p, "\n");
                termout_printf(out, "  %.*s\n", (int)n, p);
                p += n + (p[n] == '\n');
        }
        json_array_foreach ((json_t *)in->tools, k, t) {
                first_line(json_string_value(json_object_get(t, "description")), desc,
                           sizeof(desc));
                termout_printf(out, "  mcp__%s__%s  %s\n", in->name,
                               json_string_value(json_object_get(t, "name")), desc);
        }
}

static int list(const struct options *o)
{
        struct exec_engine_opts eo = {0};
        struct exec_engine *eng = NULL;
        struct exec_workspace *ws = NULL;
        struct bus *bus = bus_new();
        struct mcp *m = NULL;
        struct termout out;
        uv_loop_t loop;
        char err[512];
        size_t i, ok = 0;
        json_t *all = json_array();
        int rc;

        uv_loop_init(&loop);
        termout_init(&out, 1, o->raw);
        eo.runtime = o->runtime; /* servers in containers with --runtime docker */
        eo.docker_image = o->image;
        rc = exec_workspace_open(o->workspace, &ws, err, sizeof(err));
        if (rc == 0)
                rc = exec_engine_new(&loop, &eo, &eng, err, sizeof(err));
        if (rc == 0) {
                struct mcp_opts mo = {.eng = eng,
                                      .bus = bus,
                                      .mode = o->mode,
                                      .ws = ws,
                                      .ws_mode = o->ws_mode,
                                      .limits = o->limits};
                rc = mcp_new(&loop, &mo, o->mcp_servers, &m, err, sizeof(err));
        }
        if (rc < 0) {
                fprintf(stderr, "proctor mcp: %s\n", err);
        } else {
                mcp_start(m, on_ready, &loop);
                uv_run(&loop, UV_RUN_DEFAULT);
                if (mcp_server_count(m) == 0 && !o->json)
                        termout_printf(&out,
                                       "no MCP servers configured (mcpServers in %s, or "
                                       "--mcp-config FILE)\n",
                                       o->config != NULL ? o->config : "the config file");
                for (i = 0; i < mcp_server_count(m); i++) {
                        struct mcp_server_info in;
                        mcp_server_info(m, i, &in);
                        ok += strcmp(in.state, "ready") == 0;
                        if (o->json)
                                json_array_append_new(all, info_json(&in));
                        else
                                print_server(&out, &in, o->mode);
                }
                if (o->json) {
                        json_dumpf(all, stdout, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
                        printf("\n");
                }
                rc = ok == mcp_server_count(m) ? 0 : -ESRCH;
        }
        json_decref(all);
        mcp_free(m);
        exec_engine_free(eng);
        uv_run(&loop, UV_RUN_DEFAULT);
        uv_loop_close(&loop);
        exec_workspace_free(ws);
        bus_free(bus);
        termout_free(&out);
        return rc;
}

int mcp_cmd_main(int argc, char **argv)
{
        struct options o;
        char err[512];
        int rc;

        if (argc < 2 || strcmp(argv[1], "list") != 0) {
                if (argc >= 2 && (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0)) {
                        printf("%s", usage);
                        return 0;
                }
                fprintf(stderr, "proctor mcp: %s%s", argc < 2 ? "" : "unknown subcommand; ", usage);
                return 2;
        }
        rc = config_resolve(argc - 1, argv + 1, &o, err, sizeof(err));
        if (rc == 0 && o.argi < argc - 1) {
                snprintf(err, sizeof(err), "unexpected argument '%s'", argv[o.argi + 1]);
                rc = -EINVAL;
        }
        if (rc < 0) {
                fprintf(stderr, "proctor mcp list: %s\n%s", err, usage);
                return 2;
        }
        if (o.help) {
                printf("%s\nStarts each configured MCP server as a session would (in the "
                       "mode\n--mode, the config or TOOL_EXECUTION_MODE pick), prints its "
                       "state and\ntools, and stops it. Exits 1 when a server does not "
                       "start.\n",
                       usage);
                return 0;
        }
        return list(&o) == 0 ? 0 : 1;
}
