/* Unit tests for resume: the conversation rebuilt from canned trace lines
 * (prompts, calls and their results in the agent's order, an interrupted
 * turn, malformed lines), the settings taken over, and a trace by path. */
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

#include "core/session/resume.h"

static struct resume *feed(const char *const *lines)
{
        struct resume *r = resume_new();

        assert_non_null(r);
        for (; *lines != NULL; lines++)
                resume_line(r, *lines, strlen(*lines));
        resume_done(r);
        return r;
}

static const char *msg_str(const struct resume *r, size_t i, const char *key)
{
        return json_string_value(json_object_get(json_array_get(r->messages, i), key));
}

static const char *const START =
    "{\"seq\":1,\"t_ms\":0,\"type\":\"session.start\",\"session_id\":\"S1\",\"mode\":\"sandbox\","
    "\"mode_from\":\"--mode\",\"model\":\"script:/x.jsonl (scripted)\",\"workspace\":\"/w\","
    "\"workspace_mode\":\"ro\",\"limits\":{\"memory_bytes\":1048576,\"cpu_ms\":7000,"
    "\"timeout_ms\":9000,\"pids\":33,\"tmpfs_bytes\":2097152,\"output_bytes\":4096,"
    "\"disk_bytes\":8192,\"max_parallel\":2},\"max_iterations\":7,"
    "\"approval\":{\"policy\":\"always\",\"rules\":[]}}\n";

/* Two calls whose results came in the other order, then an answer. */
static void test_whole_turns(void **state)
{
        const char *lines[] = {
            START,
            "{\"type\":\"user.message\",\"text\":\"write a file\"}\n",
            "{\"type\":\"model.delta\",\"text\":\"On it\"}",
            "{\"type\":\"model.message\",\"content\":\"On it\",\"tool_calls\":["
            "{\"id\":\"c1\",\"name\":\"bash\",\"arguments\":\"{\\\"command\\\":\\\"true\\\"}\"},"
            "{\"id\":\"c2\",\"name\":\"read_file\",\"arguments\":\"{\\\"path\\\":\\\"f\\\"}\"}]}",
            "{\"type\":\"tool.call\",\"call_id\":\"c1\",\"name\":\"bash\",\"arguments\":\"{}\"}",
            "{\"type\":\"tool.result\",\"call_id\":\"c2\",\"ok\":true,\"output\":\"two\"}",
            "{\"type\":\"tool.result\",\"call_id\":\"c1\",\"ok\":true,\"output\":\"one\"}",
            "{\"type\":\"tool.result\",\"call_id\":\"nope\",\"ok\":true,\"output\":\"stray\"}",
            "{\"type\":\"session.note\",\"text\":\"a note\"}",
            "{\"type\":\"model.message\",\"content\":\"Done.\",\"tool_calls\":[]}",
            "{\"type\":\"session.end\",\"status\":\"completed\"}",
            NULL,
        };
        struct resume *r = feed(lines);
        json_t *calls;

        assert_int_equal(json_array_size(r->messages), 6);
        assert_string_equal(msg_str(r, 0, "role"), "user");
        assert_string_equal(msg_str(r, 0, "content"), "write a file");
        assert_string_equal(msg_str(r, 1, "role"), "assistant");
        assert_string_equal(msg_str(r, 1, "content"), "On it");
        calls = json_object_get(json_array_get(r->messages, 1), "tool_calls");
        assert_int_equal(json_array_size(calls), 2);
        assert_string_equal(json_string_value(json_object_get(json_array_get(calls, 0), "id")),
                            "c1");
        assert_string_equal(json_string_value(json_object_get(
                                json_object_get(json_array_get(calls, 1), "function"), "name")),
                            "read_file");
        /* results in the calls' order, as the agent sends them */
        assert_string_equal(msg_str(r, 2, "role"), "tool");
        assert_string_equal(msg_str(r, 2, "tool_call_id"), "c1");
        assert_string_equal(msg_str(r, 2, "content"), "one");
        assert_string_equal(msg_str(r, 3, "tool_call_id"), "c2");
        assert_string_equal(msg_str(r, 3, "content"), "two");
        assert_string_equal(msg_str(r, 4, "role"), "user");
        assert_string_equal(msg_str(r, 4, "content"), "a note");
        assert_string_equal(msg_str(r, 5, "content"), "Done.");
        assert_null(json_object_get(json_array_get(r->messages, 5), "tool_calls"));
        assert_true(r->ended);
        assert_int_equal(r->bad, 0);
        assert_int_equal(r->unfinished, 0);
        assert_string_equal(r->session_id, "S1");
        assert_string_equal(r->model, "script:/x.jsonl");
        resume_free(r);
}

/* Killed mid-turn: one call had its result, one had not; a model call cut
 * off left no message. */
static void test_interrupted_turn(void **state)
{
        const char *lines[] = {
            START,
            "{\"type\":\"user.message\",\"text\":\"go\"}",
            "{\"type\":\"model.message\",\"content\":\"\",\"tool_calls\":["
            "{\"id\":\"a\",\"name\":\"bash\",\"arguments\":\"{}\"},"
            "{\"id\":\"b\",\"name\":\"bash\",\"arguments\":\"{}\"}]}",
            "{\"type\":\"tool.result\",\"call_id\":\"a\",\"ok\":false,\"output\":\"x\"}",
            NULL,
        };
        struct resume *r = feed(lines);

        assert_int_equal(json_array_size(r->messages), 4);
        /* no text beside calls is null, as the agent sends it */
        assert_true(json_is_null(json_object_get(json_array_get(r->messages, 1), "content")));
        assert_string_equal(msg_str(r, 2, "content"), "x");
        assert_string_equal(msg_str(r, 3, "tool_call_id"), "b");
        assert_non_null(strstr(msg_str(r, 3, "content"), "did not finish"));
        assert_int_equal(r->unfinished, 1);
        assert_false(r->ended);
        resume_free(r);
}

/* A follow-up prompt while calls lacked results closes them first. */
static void test_prompt_closes_calls(void **state)
{
        const char *lines[] = {
            "{\"type\":\"user.message\",\"text\":\"one\"}",
            "{\"type\":\"model.message\",\"content\":\"c\",\"tool_calls\":["
            "{\"id\":\"a\",\"name\":\"bash\",\"arguments\":\"{}\"}]}",
            "{\"type\":\"operator.interrupt\",\"turn\":1}",
            "{\"type\":\"user.message\",\"text\":\"two\"}",
            "{\"type\":\"model.delta\",\"text\":\"half an ans\"}",
            NULL,
        };
        struct resume *r = feed(lines);

        assert_int_equal(json_array_size(r->messages), 4);
        assert_string_equal(msg_str(r, 2, "role"), "tool");
        assert_string_equal(msg_str(r, 3, "content"), "two");
        assert_null(r->start);
        resume_free(r);
}

static void test_malformed_lines(void **state)
{
        const char *lines[] = {
            "not json at all\n",
            "[1, 2]\n",
            "{\"no\":\"type\"}\n",
            "   \n",
            "{\"type\":\"user.message\",\"text\":\"kept\"}\n",
            "{\"type\":\"user.message\",\"te", /* cut by a kill */
            NULL,
        };
        struct resume *r = feed(lines);

        assert_int_equal(r->bad, 4);
        assert_int_equal(r->lines, 6);
        assert_int_equal(json_array_size(r->messages), 1);
        assert_string_equal(msg_str(r, 0, "content"), "kept");
        resume_free(r);
}

/* The recorded settings, unless the command line gave them. */
static void test_apply(void **state)
{
        const char *lines[] = {START, NULL};
        char *argv[] = {"run", "--memory", "64M", "--mode", "local", "x", NULL};
        struct resume *r = feed(lines);
        struct options o;
        char err[200];

        options_builtin(&o);
        assert_int_equal(options_parse(6, argv, &o, err, sizeof(err)), 0);
        assert_true(options_given(&o, "memory"));
        assert_false(options_given(&o, "pids"));
        resume_apply(r, &o);
        assert_int_equal(o.mode, EXEC_LOCAL);
        assert_int_equal(o.limits.memory_bytes, 64u << 20);
        assert_int_equal(o.limits.pids, 33);
        assert_int_equal(o.limits.cpu_ms, 7000);
        assert_int_equal(o.limits.disk_bytes, 8192);
        assert_int_equal(o.max_parallel, 2);
        assert_int_equal(o.max_iterations, 7);
        assert_int_equal(o.ws_mode, EXEC_WS_RO);
        assert_string_equal(o.workspace, "/w");
        assert_string_equal(o.model, "script:/x.jsonl");
        assert_string_equal(o.approval, "always");
        options_builtin(&o);
        resume_apply(r, &o);
        assert_int_equal(o.mode, EXEC_SANDBOX);
        assert_non_null(strstr(o.mode_from, "resumed"));
        resume_free(r);
}

/* By path: read whole; an unknown id and a missing file are named. */
static void test_load(void **state)
{
        char dir[] = "/tmp/test-resume.XXXXXX", path[300], err[600];
        struct resume *r = NULL;
        FILE *f;

        assert_non_null(mkdtemp(dir));
        snprintf(path, sizeof(path), "%s/t.jsonl", dir);
        f = fopen(path, "w");
        assert_non_null(f);
        fprintf(f,
                "%s{\"type\":\"user.message\",\"text\":\"hi\"}\n"
                "{\"type\":\"session.end\",\"status\":\"completed\"}\n",
                START);
        fclose(f);
        assert_int_equal(resume_load(path, &r, err, sizeof(err)), 0);
        assert_int_equal(json_array_size(r->messages), 1);
        assert_string_equal(r->path, path);
        resume_free(r);
        setenv("XDG_STATE_HOME", dir, 1);
        assert_int_equal(resume_load("20990101-000000-abcdef", &r, err, sizeof(err)), -ENOENT);
        assert_non_null(strstr(err, "no session '20990101-000000-abcdef'"));
        snprintf(path, sizeof(path), "%s/missing.jsonl", dir);
        assert_true(resume_load(path, &r, err, sizeof(err)) < 0);
        assert_non_null(strstr(err, "missing.jsonl"));
        assert_int_equal(resume_load("bad id!", &r, err, sizeof(err)), -EINVAL);
        snprintf(path, sizeof(path), "rm -rf '%s'", dir);
        assert_int_equal(system(path), 0);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test(test_whole_turns),
            cmocka_unit_test(test_interrupted_turn),
            cmocka_unit_test(test_prompt_closes_calls),
            cmocka_unit_test(test_malformed_lines),
            cmocka_unit_test(test_apply),
            cmocka_unit_test(test_load),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
