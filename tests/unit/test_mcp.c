/* Unit tests for the MCP client: the JSON-RPC framing (cuts at every
 * offset, CRLF, blank, invalid and overlong lines, what counts as a
 * message) and the lifecycle against a fake server run as a real process:
 * version negotiation, paged tools/list, tools/call results, requests the
 * client refuses, timeouts with notifications/cancelled, cancel, kill and
 * crash. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "core/tools/mcp.h"
#include "core/tools/mcp_rpc.h"
#include "core/tools/tools.h"
#include "exec/native/env.h"

/* ---- framing ---- */

struct got {
        int msgs, bad, overlong;
        enum mcp_rpc_kind kind[16];
        char *text[16];
};

static void on_msg(json_t *msg, enum mcp_rpc_kind kind, void *ud)
{
        struct got *g = ud;

        if (g->msgs < 16) {
                g->kind[g->msgs] = kind;
                g->text[g->msgs] = json_dumps(msg, JSON_COMPACT | JSON_SORT_KEYS);
        }
        g->msgs++;
}

static void on_bad(int code, const char *why, void *ud)
{
        struct got *g = ud;

        assert_non_null(why);
        assert_true(code == -EBADMSG || code == -E2BIG);
        g->bad++;
        g->overlong += code == -E2BIG;
}

static void got_free(struct got *g)
{
        for (int i = 0; i < g->msgs && i < 16; i++)
                free(g->text[i]);
        memset(g, 0, sizeof(*g));
}

static const char stream[] =
    "{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"a\":\"x\\ny\"}}\r\n"
    "\n"
    "not json\n"
    "{\"jsonrpc\":\"1.0\",\"id\":2,\"result\":{}}\n"
    "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/tools/list_changed\"}\n"
    "{\"jsonrpc\":\"2.0\",\"id\":\"s1\",\"method\":\"sampling/createMessage\",\"params\":{}}\n";

static void test_framing_every_cut(void **state)
{
        size_t n = sizeof(stream) - 1, cut;

        for (cut = 0; cut <= n; cut++) {
                struct mcp_rpc_reader r;
                struct got g = {0};

                mcp_rpc_reader_init(&r, 0, on_msg, on_bad, &g);
                mcp_rpc_feed(&r, stream, cut);
                mcp_rpc_feed(&r, stream + cut, n - cut);
                assert_int_equal(g.msgs, 3);
                assert_int_equal(g.bad, 2); /* not JSON; not JSON-RPC 2.0 */
                assert_int_equal(g.kind[0], MCP_RPC_RESPONSE);
                assert_string_equal(g.text[0],
                                    "{\"id\":1,\"jsonrpc\":\"2.0\",\"result\":{\"a\":\"x\\ny\"}}");
                assert_int_equal(g.kind[1], MCP_RPC_NOTIFICATION);
                assert_int_equal(g.kind[2], MCP_RPC_REQUEST);
                got_free(&g);
                mcp_rpc_reader_free(&r);
        }
}

static void test_framing_byte_by_byte(void **state)
{
        struct mcp_rpc_reader r;
        struct got g = {0};

        mcp_rpc_reader_init(&r, 0, on_msg, on_bad, &g);
        for (size_t i = 0; i < sizeof(stream) - 1; i++)
                mcp_rpc_feed(&r, stream + i, 1);
        assert_int_equal(g.msgs, 3);
        assert_int_equal(g.bad, 2);
        got_free(&g);
        mcp_rpc_reader_free(&r);
}

static void test_framing_overlong(void **state)
{
        static const char longline[] = "{\"jsonrpc\":\"2.0\",\"method\":\"a-rather-long-method\"}\n"
                                       "{\"jsonrpc\":\"2.0\",\"method\":\"m\"}\n";
        struct mcp_rpc_reader r;
        struct got g = {0};

        /* whole, and then in pieces that make the reader keep a partial line */
        mcp_rpc_reader_init(&r, 40, on_msg, on_bad, &g);
        mcp_rpc_feed(&r, longline, sizeof(longline) - 1);
        assert_int_equal(g.bad, 1);
        assert_int_equal(g.overlong, 1);
        assert_int_equal(g.msgs, 1);
        assert_string_equal(g.text[0], "{\"jsonrpc\":\"2.0\",\"method\":\"m\"}");
        got_free(&g);
        for (size_t i = 0; i < sizeof(longline) - 1; i += 7)
                mcp_rpc_feed(&r, longline + i,
                             sizeof(longline) - 1 - i < 7 ? sizeof(longline) - 1 - i : 7);
        assert_int_equal(g.bad, 1);
        assert_int_equal(g.msgs, 1);
        assert_true(r.cap <= 40); /* never held more than the limit */
        got_free(&g);
        mcp_rpc_reader_free(&r);
}

static enum mcp_rpc_kind kind_of(const char *text)
{
        json_t *j = json_loads(text, 0, NULL);
        enum mcp_rpc_kind k;

        assert_non_null(j);
        k = mcp_rpc_classify(j);
        json_decref(j);
        return k;
}

static void test_classify(void **state)
{
        assert_int_equal(kind_of("{\"jsonrpc\":\"2.0\",\"id\":null,\"error\":{\"code\":-32700,"
                                 "\"message\":\"parse\"}}"),
                         MCP_RPC_RESPONSE);
        assert_int_equal(kind_of("{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{},\"error\":{}}"),
                         MCP_RPC_INVALID);
        assert_int_equal(kind_of("{\"jsonrpc\":\"2.0\",\"id\":1}"), MCP_RPC_INVALID);
        assert_int_equal(kind_of("{\"jsonrpc\":\"2.0\",\"id\":1.5,\"method\":\"x\"}"),
                         MCP_RPC_INVALID);
        assert_int_equal(kind_of("{\"jsonrpc\":\"2.0\",\"id\":null,\"method\":\"x\"}"),
                         MCP_RPC_INVALID);
        assert_int_equal(kind_of("{\"jsonrpc\":\"2.0\",\"method\":7}"), MCP_RPC_INVALID);
        assert_int_equal(kind_of("{\"id\":1,\"result\":{}}"), MCP_RPC_INVALID);
        assert_int_equal(kind_of("[1]"), MCP_RPC_INVALID);
        assert_int_equal(kind_of("{\"jsonrpc\":\"2.0\",\"id\":\"a\",\"error\":{\"code\":1}}"),
                         MCP_RPC_RESPONSE);
}

static void test_writers(void **state)
{
        size_t len = 0;
        char *l = mcp_rpc_request(3, "tools/call", json_pack("{s:s}", "name", "a\nb"), &len);
        json_t *id = json_integer(9);

        assert_string_equal(l, "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"tools/call\","
                               "\"params\":{\"name\":\"a\\nb\"}}\n");
        assert_int_equal(len, strlen(l));
        free(l);
        l = mcp_rpc_notification("notifications/initialized", NULL, NULL);
        assert_string_equal(l, "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}\n");
        free(l);
        l = mcp_rpc_error(id, MCP_RPC_METHOD_NOT_FOUND, "no", NULL);
        assert_string_equal(
            l, "{\"jsonrpc\":\"2.0\",\"id\":9,\"error\":{\"code\":-32601,\"message\":\"no\"}}\n");
        free(l);
        l = mcp_rpc_result(id, NULL, NULL);
        assert_string_equal(l, "{\"jsonrpc\":\"2.0\",\"id\":9,\"result\":{}}\n");
        free(l);
        json_decref(id);
}

static void test_config_check(void **state)
{
        static const struct {
                const char *json, *err;
        } cases[] = {
            {"{\"a\":{\"command\":\"x\",\"args\":[\"1\"],\"env\":{\"K\":\"v\"},\"network\":true,"
             "\"type\":\"stdio\"}}",
             NULL},
            {"{\"a\":{}}", "mcpServers.a.command: missing"},
            {"{\"a\":{\"command\":\"\"}}", "mcpServers.a.command: expected a command name"},
            {"{\"a\":{\"command\":\"x\",\"args\":[1]}}",
             "mcpServers.a.args: expected an array of strings"},
            {"{\"a\":{\"command\":\"x\",\"env\":{\"K\":1}}}",
             "mcpServers.a.env: expected an object of strings"},
            {"{\"a\":{\"url\":\"http://x\"}}", "mcpServers.a.url: only stdio servers"},
            {"{\"a\":{\"command\":\"x\",\"type\":\"sse\"}}", "mcpServers.a.type: only stdio"},
            {"{\"a\":{\"command\":\"x\",\"colour\":1}}", "mcpServers.a.colour: unknown key"},
            {"{\"a b\":{\"command\":\"x\"}}", "mcpServers.a b: a server's name"},
            {"[]", "mcpServers: expected an object"},
        };
        char err[256];

        for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
                json_t *j = json_loads(cases[i].json, 0, NULL);
                int rc = mcp_config_check(j, err, sizeof(err));
                if (cases[i].err == NULL) {
                        assert_int_equal(rc, 0);
                } else {
                        assert_int_equal(rc, -EINVAL);
                        if (strstr(err, cases[i].err) == NULL)
                                fail_msg("%s: got '%s'", cases[i].json, err);
                }
                json_decref(j);
        }
}

/* The model's arguments for an MCP tool: any JSON object, checked by its
 * server; and without servers such a name is no tool at all. */
static void test_mcp_arguments(void **state)
{
        struct dispatch_ctx dx = {0};
        struct tool_run *run;
        json_t *args;
        char err[256];

        assert_int_equal(tools_parse_args("mcp__s__t", "{\"a\":[1]}", &args, err, sizeof(err)), 0);
        assert_int_equal(json_array_size(json_object_get(args, "a")), 1);
        json_decref(args);
        assert_int_equal(tools_parse_args("mcp__s__t", " ", &args, err, sizeof(err)), 0);
        assert_int_equal(json_object_size(args), 0);
        json_decref(args);
        assert_int_equal(tools_parse_args("mcp__s__t", "[1]", &args, err, sizeof(err)), -EINVAL);
        assert_string_equal(err, "arguments for 'mcp__s__t' must be a JSON object");
        assert_int_equal(tools_parse_args("mcp__s__t", "{", &args, err, sizeof(err)), -EINVAL);
        args = json_object();
        assert_int_equal(
            dispatch_start(&dx, "c1", "mcp__s__t", args, NULL, NULL, &run, err, sizeof(err)),
            -ENOENT);
        assert_string_equal(err, "unknown tool 'mcp__s__t': no MCP server is configured");
        json_decref(args);
}

/* ---- the lifecycle, against a fake server ---- */

/* The fake speaks the protocol by hand: it answers initialize with the
 * version in argv[1], splits its tools over two pages, asks the client for
 * sampling and a ping, and has tools that echo, hang, crash and return
 * an image. Its first line is noise, which the client must survive. */
static const char fake_py[] =
    "import json, sys, time\n"
    "version = sys.argv[1]\n"
    "replies, cancelled = {}, []\n"
    "def send(m):\n"
    "    sys.stdout.write(json.dumps(m) + '\\n'); sys.stdout.flush()\n"
    "sys.stdout.write('this is not a message\\n'); sys.stdout.flush()\n"
    "for line in sys.stdin:\n"
    "    m = json.loads(line)\n"
    "    meth, i = m.get('method'), m.get('id')\n"
    "    if meth is None:\n"
    "        replies[i] = m; continue\n"
    "    if meth == 'initialize':\n"
    "        sys.stderr.write('client asked for ' + m['params']['protocolVersion'] + '\\n')\n"
    "        # one reply cut in two writes\n"
    "        t = json.dumps({'jsonrpc': '2.0', 'id': i, 'result': {'protocolVersion': version,\n"
    "            'capabilities': {'tools': {'listChanged': True}}, 'serverInfo': {'name': 'fake', "
    "'version': '1'}}}) + '\\n'\n"
    "        sys.stdout.write(t[:10]); sys.stdout.flush(); time.sleep(0.05)\n"
    "        sys.stdout.write(t[10:]); sys.stdout.flush()\n"
    "    elif meth == 'notifications/initialized':\n"
    "        send({'jsonrpc': '2.0', 'id': 's1', 'method': 'sampling/createMessage', 'params': "
    "{}})\n"
    "        send({'jsonrpc': '2.0', 'id': 77, 'method': 'ping'})\n"
    "    elif meth == 'notifications/cancelled':\n"
    "        cancelled.append(m['params']['requestId'])\n"
    "    elif meth == 'tools/list':\n"
    "        if m.get('params', {}).get('cursor') != 'p2':\n"
    "            send({'jsonrpc': '2.0', 'id': i, 'result': {'nextCursor': 'p2', 'tools': [\n"
    "                {'name': 'echo', 'description': 'Echoes', 'inputSchema': {'type': 'object',\n"
    "                 'properties': {'text': {'type': 'string'}}, 'required': ['text']}}]}})\n"
    "        else:\n"
    "            send({'jsonrpc': '2.0', 'id': i, 'result': {'tools': [{'name': 'hang'},\n"
    "                {'name': 'crash'}, {'name': 'img'}, {'name': 'state'}, {'name': "
    "'has.dot'}]}})\n"
    "    elif meth == 'tools/call':\n"
    "        n, a = m['params']['name'], m['params'].get('arguments')\n"
    "        if n == 'echo':\n"
    "            send({'jsonrpc': '2.0', 'id': i, 'result': {'content': [{'type': 'text', 'text': "
    "'you said ' + a['text']}]}})\n"
    "        elif n == 'img':\n"
    "            send({'jsonrpc': '2.0', 'id': i, 'result': {'isError': True, 'content': [\n"
    "                {'type': 'image', 'data': 'QUJD' * 100, 'mimeType': 'image/png'},\n"
    "                {'type': 'text', 'text': 'bad picture'}]}})\n"
    "        elif n == 'state':\n"
    "            send({'jsonrpc': '2.0', 'id': i, 'result': {'structuredContent': {\n"
    "                'sampling': replies.get('s1', {}).get('error', {}).get('code'),\n"
    "                'ping': 'result' in replies.get(77, {}), 'cancelled': cancelled}}})\n"
    "        elif n == 'crash':\n"
    "            sys.stderr.write('dying now\\n'); sys.stderr.flush(); sys.exit(5)\n"
    "        elif n == 'has.dot':\n"
    "            send({'jsonrpc': '2.0', 'id': i, 'error': {'code': -32602, 'message': 'bad "
    "args'}})\n";

struct fx {
        uv_loop_t loop;
        struct exec_engine *eng;
        struct exec_workspace *ws;
        struct bus *bus;
        struct mcp *m;
        char dir[64], script[128];
        bool ready;
        int done;
        struct tool_outcome last;
        char *out;
        json_t *events;
};

static void on_event(const json_t *ev, void *ud)
{
        struct fx *f = ud;

        json_array_append(f->events, (json_t *)ev);
}

static void on_ready(void *ud)
{
        struct fx *f = ud;

        f->ready = true;
}

static void on_done(const struct tool_outcome *o, void *ud)
{
        struct fx *f = ud;

        f->done++;
        f->last = *o;
        free(f->out);
        f->out = strndup(o->output, o->len);
        f->last.output = f->out;
}

static void fx_open(struct fx *f, const char *version, uint64_t timeout_ms)
{
        struct mcp_opts mo = {0};
        char err[512], json[512];
        FILE *fp;

        memset(f, 0, sizeof(*f));
        strcpy(f->dir, "/tmp/proctor-test-mcp.XXXXXX");
        assert_non_null(mkdtemp(f->dir));
        snprintf(f->script, sizeof(f->script), "%s/fake.py", f->dir);
        fp = fopen(f->script, "w");
        assert_non_null(fp);
        fputs(fake_py, fp);
        fclose(fp);
        assert_int_equal(uv_loop_init(&f->loop), 0);
        assert_int_equal(exec_engine_new(&f->loop, NULL, &f->eng, err, sizeof(err)), 0);
        assert_int_equal(exec_workspace_open(f->dir, &f->ws, err, sizeof(err)), 0);
        f->bus = bus_new();
        f->events = json_array();
        bus_subscribe(f->bus, on_event, f);
        mo.eng = f->eng;
        mo.bus = f->bus;
        mo.mode = EXEC_LOCAL;
        mo.ws = f->ws;
        mo.limits.timeout_ms = timeout_ms;
        snprintf(json, sizeof(json),
                 "{\"fake\":{\"command\":\"python3\",\"args\":[\"-u\",\"%s\",\"%s\"]}}", f->script,
                 version);
        assert_int_equal(mcp_new(&f->loop, &mo, json, &f->m, err, sizeof(err)), 0);
        mcp_start(f->m, on_ready, f);
        while (!f->ready)
                uv_run(&f->loop, UV_RUN_ONCE);
}

static void fx_close(struct fx *f)
{
        mcp_free(f->m);
        exec_engine_free(f->eng);
        uv_run(&f->loop, UV_RUN_DEFAULT);
        assert_int_equal(uv_loop_close(&f->loop), 0);
        exec_workspace_free(f->ws);
        bus_free(f->bus);
        json_decref(f->events);
        free(f->out);
        unlink(f->script);
        rmdir(f->dir);
}

/* Calls and runs the loop until the call's result came. */
static void call(struct fx *f, const char *name, const char *args)
{
        json_t *a = json_loads(args, 0, NULL);
        struct mcp_call *c;
        char err[256];
        int before = f->done;

        assert_int_equal(mcp_call(f->m, name, a, on_done, f, &c, err, sizeof(err)), 0);
        json_decref(a);
        while (f->done == before)
                uv_run(&f->loop, UV_RUN_ONCE);
}

static const json_t *offered(struct fx *f, const char *name)
{
        const json_t *t;
        size_t i;

        json_array_foreach (mcp_tools(f->m), i, t)
                if (strcmp(
                        json_string_value(json_object_get(json_object_get(t, "function"), "name")),
                        name) == 0)
                        return json_object_get(t, "function");
        return NULL;
}

static void test_lifecycle(void **state)
{
        struct mcp_server_info in;
        const json_t *echo;
        struct fx f;

        fx_open(&f, MCP_PROTOCOL_LATEST, 10000);
        mcp_server_info(f.m, 0, &in);
        assert_string_equal(in.state, "ready");
        assert_int_equal(in.ntools, 6); /* both pages */
        assert_int_equal(mcp_server_tools(f.m, "fake"), 6);
        assert_int_equal(mcp_server_tools(f.m, "other"), -1);
        /* offered next to the built-ins, schema passed through */
        assert_int_equal(json_array_size(mcp_tools(f.m)), json_array_size(tools_schemas()) + 6);
        echo = offered(&f, "mcp__fake__echo");
        assert_non_null(echo);
        assert_string_equal(json_string_value(json_object_get(echo, "description")), "Echoes");
        assert_string_equal(
            json_string_value(json_array_get(
                json_object_get(json_object_get(echo, "parameters"), "required"), 0)),
            "text");
        assert_non_null(offered(&f, "mcp__fake__has_dot")); /* a name an API would refuse */

        {
                char line[128];
                bool net = true;
                assert_int_equal(mcp_describe("{\"fake\":{\"command\":\"python3\"}}", f.m, line,
                                              sizeof(line), &net),
                                 1);
                assert_string_equal(line, "mcp        fake (6 tools)");
                assert_false(net);
                assert_int_equal(mcp_describe("{\"a\":{\"command\":\"x\"},\"b\":{\"command\":"
                                              "\"y\",\"network\":true}}",
                                              NULL, line, sizeof(line), &net),
                                 2);
                assert_string_equal(line, "mcp        a, b (network)");
                assert_true(net);
                assert_int_equal(mcp_describe(NULL, NULL, line, sizeof(line), &net), 0);
        }
        {
                struct mcp_brief b[2];
                const char *two = "{\"fake\":{\"command\":\"python3\"},\"gone\":{\"command\":"
                                  "\"x\",\"network\":true}}";
                assert_int_equal(mcp_briefs(two, f.m, b, 2), 2);
                assert_string_equal(b[0].name, "fake");
                assert_string_equal(b[0].state, "6 tools");
                assert_false(b[0].network || b[0].failed);
                /* configured but not in this client (not started): no state */
                assert_string_equal(b[1].name, "gone");
                assert_string_equal(b[1].state, "");
                assert_true(b[1].network);
                assert_int_equal(mcp_briefs(two, f.m, b, 1), 2);
        }

        call(&f, "mcp__fake__echo", "{\"text\":\"hi\"}");
        assert_true(f.last.ok);
        assert_string_equal(f.out, "you said hi");

        call(&f, "mcp__fake__img", "{}");
        assert_false(f.last.ok); /* isError */
        assert_string_equal(f.out,
                            "[image: image/png, 400 bytes of base64 not shown]\nbad picture");

        call(&f, "mcp__fake__has_dot", "{}");
        assert_false(f.last.ok);
        assert_string_equal(f.out, "[MCP error -32602: bad args]");

        /* sampling refused as not supported, ping answered */
        call(&f, "mcp__fake__state", "{}");
        assert_true(f.last.ok);
        assert_string_equal(f.out, "{\"sampling\":-32601,\"ping\":true,\"cancelled\":[]}");
        fx_close(&f);
}

static void test_timeout_and_cancel(void **state)
{
        struct mcp_call *c;
        char err[256];
        json_t *a = json_object();
        struct fx f;

        fx_open(&f, MCP_PROTOCOL_OLDER, 300);
        call(&f, "mcp__fake__hang", "{}");
        assert_false(f.last.ok);
        assert_false(f.last.killed);
        assert_string_equal(f.out, "[stopped: no answer from the MCP server 'fake' within 0.3 s]");

        /* cancelled by the operator: at once, and the server is told */
        assert_int_equal(mcp_call(f.m, "mcp__fake__hang", a, on_done, &f, &c, err, sizeof(err)), 0);
        mcp_call_cancel(c, "interrupted by the operator");
        assert_int_equal(f.done, 2);
        assert_true(f.last.killed);
        assert_string_equal(f.out, "[interrupted by the operator]");
        json_decref(a);

        call(&f, "mcp__fake__state", "{}");
        /* tools/list (2 pages) and initialize took ids 1-3: the hangs are 4 and 5 */
        assert_string_equal(f.out, "{\"sampling\":-32601,\"ping\":true,\"cancelled\":[4,5]}");
        fx_close(&f);
}

static void test_crash(void **state)
{
        struct mcp_server_info in;
        struct mcp_call *c;
        char err[512];
        json_t *a = json_object();
        struct fx f;

        fx_open(&f, MCP_PROTOCOL_LATEST, 10000);
        call(&f, "mcp__fake__crash", "{}");
        assert_false(f.last.ok);
        assert_non_null(strstr(f.out, "the MCP server 'fake' exited with code 5"));
        assert_non_null(strstr(f.out, "dying now"));
        mcp_server_info(f.m, 0, &in);
        assert_string_equal(in.state, "exited");
        assert_int_equal(in.ntools, 0);
        {
                struct mcp_brief b;
                assert_int_equal(mcp_briefs("{\"fake\":{\"command\":\"python3\"}}", f.m, &b, 1), 1);
                assert_true(b.failed);
                assert_int_equal(strncmp(b.state, "ended: exited with code 5", 25), 0);
                assert_null(strchr(b.state, '\n')); /* the first line only */
        }
        /* its tools are withdrawn, and a call says why */
        assert_null(offered(&f, "mcp__fake__echo"));
        assert_int_equal(mcp_call(f.m, "mcp__fake__echo", a, on_done, &f, &c, err, sizeof(err)),
                         -ESRCH);
        assert_non_null(strstr(err, "the MCP server 'fake' is not running: exited with code 5"));
        json_decref(a);
        fx_close(&f);
}

static void test_kill(void **state)
{
        struct mcp_server_info in;
        struct mcp_call *c;
        char err[256];
        json_t *a = json_object();
        struct fx f;

        fx_open(&f, MCP_PROTOCOL_LATEST, 10000);
        mcp_server_info(f.m, 0, &in);
        assert_true(in.exec_id > 0);
        assert_false(mcp_kill_exec(f.m, in.exec_id + 100));
        assert_int_equal(mcp_call(f.m, "mcp__fake__hang", a, on_done, &f, &c, err, sizeof(err)), 0);
        assert_true(mcp_kill_exec(f.m, in.exec_id));
        while (f.done == 0)
                uv_run(&f.loop, UV_RUN_ONCE);
        assert_false(f.last.ok);
        assert_non_null(strstr(f.out, "[the MCP server 'fake' was killed by the operator"));
        json_decref(a);
        fx_close(&f);
}

static void test_version_refused(void **state)
{
        struct mcp_server_info in;
        struct fx f;

        fx_open(&f, "1999-01-01", 10000);
        mcp_server_info(f.m, 0, &in);
        assert_string_equal(in.state, "failed");
        assert_non_null(strstr(in.error, "protocol version 1999-01-01"));
        /* the server's stderr explains, and proctor asked for the latest */
        assert_non_null(strstr(in.error, "client asked for " MCP_PROTOCOL_LATEST));
        assert_int_equal(json_array_size(mcp_tools(f.m)), json_array_size(tools_schemas()));
        fx_close(&f);
}

static void on_ready_flag(void *ud)
{
        *(bool *)ud = true;
}

static void test_no_servers(void **state)
{
        struct mcp_opts mo = {0};
        struct mcp *m;
        char err[128];
        bool ready = false;
        uv_loop_t loop;

        uv_loop_init(&loop);
        assert_int_equal(mcp_new(&loop, &mo, NULL, &m, err, sizeof(err)), 0);
        mcp_start(m, on_ready_flag, &ready);
        assert_true(ready); /* at once: nothing to wait for */
        assert_int_equal(mcp_server_count(m), 0);
        assert_int_equal(json_array_size(mcp_tools(m)), json_array_size(tools_schemas()));
        mcp_free(m);
        uv_run(&loop, UV_RUN_DEFAULT);
        assert_int_equal(uv_loop_close(&loop), 0);
        assert_int_equal(mcp_new(&loop, &mo, "{\"x\":{}}", &m, err, sizeof(err)), -EINVAL);
        assert_string_equal(err, "mcpServers.x.command: missing");
}

/* ---- a server entry's env ---- */

static const char *env_get(char **envp, const char *name)
{
        size_t n = strlen(name);

        for (; envp != NULL && *envp != NULL; envp++)
                if (strncmp(*envp, name, n) == 0 && (*envp)[n] == '=')
                        return *envp + n + 1;
        return NULL;
}

/* What the operator wrote for one execution passes whatever its name;
 * what comes from elsewhere (extra, proctor's environment) is filtered. */
static void test_entry_env(void **state)
{
        char *extra[] = {"GITHUB_TOKEN=from-an-image", "PLAIN=1", NULL};
        char *own[] = {"GITHUB_TOKEN=entry-token", "MY_API_KEY=entry-key", NULL};
        char **sb, **local;

        (void)state;
        setenv("OPENAI_API_KEY", "sk-host-key", 1);
        setenv("HF_TOKEN", "hf-host-token", 1);
        sb = env_build_own(true, extra, own);
        assert_string_equal(env_get(sb, "GITHUB_TOKEN"), "entry-token");
        assert_string_equal(env_get(sb, "MY_API_KEY"), "entry-key");
        assert_string_equal(env_get(sb, "PLAIN"), "1");
        assert_null(env_get(sb, "OPENAI_API_KEY"));
        env_free(sb);
        sb = env_build_own(true, extra, NULL);
        assert_null(env_get(sb, "GITHUB_TOKEN"));
        env_free(sb);
        local = env_build_own(false, NULL, own);
        assert_string_equal(env_get(local, "GITHUB_TOKEN"), "entry-token");
        assert_null(env_get(local, "OPENAI_API_KEY"));
        assert_null(env_get(local, "HF_TOKEN"));
        assert_non_null(env_get(local, "PATH"));
        env_free(local);
        unsetenv("OPENAI_API_KEY");
        unsetenv("HF_TOKEN");
}

int main(void)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test(test_framing_every_cut),
            cmocka_unit_test(test_framing_byte_by_byte),
            cmocka_unit_test(test_framing_overlong),
            cmocka_unit_test(test_classify),
            cmocka_unit_test(test_writers),
            cmocka_unit_test(test_config_check),
            cmocka_unit_test(test_lifecycle),
            cmocka_unit_test(test_timeout_and_cancel),
            cmocka_unit_test(test_crash),
            cmocka_unit_test(test_kill),
            cmocka_unit_test(test_version_refused),
            cmocka_unit_test(test_no_servers),
            cmocka_unit_test(test_mcp_arguments),
            cmocka_unit_test(test_entry_env),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
