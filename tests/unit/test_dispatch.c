/* Unit tests for dispatch: the limits a model may ask for, clamped to the
 * operator's; long bash commands passed in pieces; and the session's queue
 * of executions, run for real in local mode (at most N at once, FIFO,
 * cancelled calls answered, never lost). */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "core/tools/dispatch.h"
#include "core/session/session.h"
#include "core/tools/tools.h"

static struct exec_limits op_limits(uint64_t timeout_ms)
{
        struct exec_limits l = exec_limits_default();

        l.timeout_ms = timeout_ms;
        return l;
}

/* Limits from raw arguments, as the agent passes them: parsed, then clamped. */
static int limits_for(const char *arguments, uint64_t op_timeout_ms, struct exec_limits *out,
                      char *err, size_t errlen)
{
        struct exec_limits op = op_limits(op_timeout_ms);
        json_t *args = NULL;
        int rc = tools_parse_args("bash", arguments, &args, err, errlen);

        if (rc == 0)
                rc = dispatch_call_limits(&op, args, out, err, errlen);
        json_decref(args);
        return rc;
}

static void test_timeout_clamped(void **state)
{
        static const struct {
                const char *args;
                uint64_t op_ms, want_ms;
        } cases[] = {
            /* rounds to 0 ms without the floor: 0 would mean no limit */
            {"{\"command\":\"sleep 30\",\"timeout\":1e-9}", 2000, 1000},
            {"{\"command\":\"x\",\"timeout\":0.0004}", 120000, 1000},
            {"{\"command\":\"x\",\"timeout\":5}", 120000, 5000},
            {"{\"command\":\"x\",\"timeout\":2.5}", 120000, 2500},
            /* the operator's limit is the ceiling */
            {"{\"command\":\"x\",\"timeout\":86400}", 120000, 120000},
            {"{\"command\":\"x\",\"timeout\":30}", 2000, 2000},
            /* an operator limit under the floor wins over the floor */
            {"{\"command\":\"x\",\"timeout\":1e-9}", 250, 250},
            {"{\"command\":\"x\"}", 120000, 120000},
            {"{\"command\":\"x\",\"timeout\":null}", 7000, 7000},
        };
        struct exec_limits out;
        char err[256];
        size_t i;

        for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
                assert_int_equal(limits_for(cases[i].args, cases[i].op_ms, &out, err, sizeof(err)),
                                 0);
                assert_int_equal(out.timeout_ms, cases[i].want_ms);
                assert_int_equal(out.memory_bytes, exec_limits_default().memory_bytes);
        }
}

static void test_timeout_refused(void **state)
{
        static const char *const parsed_bad[] = {
            "{\"command\":\"x\",\"timeout\":0}",     "{\"command\":\"x\",\"timeout\":-1}",
            "{\"command\":\"x\",\"timeout\":-1e-9}", "{\"command\":\"x\",\"timeout\":\"5\"}",
            "{\"command\":\"x\",\"timeout\":true}",  "{\"command\":\"x\",\"timeout\":[1]}",
            "{\"command\":\"x\",\"timeout\":1e999}",
        };
        struct exec_limits op = op_limits(2000), out;
        json_t *args;
        char err[256];
        size_t i;

        for (i = 0; i < sizeof(parsed_bad) / sizeof(parsed_bad[0]); i++)
                assert_int_equal(limits_for(parsed_bad[i], 2000, &out, err, sizeof(err)), -EINVAL);
        /* the same refusals hold for arguments that skipped the schema */
        args = json_pack("{s:s,s:f}", "command", "x", "timeout", -3.0);
        assert_int_equal(dispatch_call_limits(&op, args, &out, err, sizeof(err)), -EINVAL);
        assert_non_null(strstr(err, "timeout"));
        json_decref(args);
        args = json_pack("{s:s,s:i}", "command", "x", "timeout", 0);
        assert_int_equal(dispatch_call_limits(&op, args, &out, err, sizeof(err)), -EINVAL);
        json_decref(args);
        args = json_pack("{s:s,s:s}", "command", "x", "timeout", "soon");
        assert_int_equal(dispatch_call_limits(&op, args, &out, err, sizeof(err)), -EINVAL);
        json_decref(args);
        args = json_pack("{s:s,s:f}", "command", "x", "timeout", 1e300);
        assert_int_equal(dispatch_call_limits(&op, args, &out, err, sizeof(err)), -EINVAL);
        json_decref(args);
}

/* read's offset and limit are not limits, but must be sane numbers too. */
static void test_read_numbers(void **state)
{
        static const char *const bad[] = {
            "{\"path\":\"a\",\"offset\":0}",     "{\"path\":\"a\",\"offset\":-5}",
            "{\"path\":\"a\",\"limit\":0}",      "{\"path\":\"a\",\"limit\":-1}",
            "{\"path\":\"a\",\"offset\":1.5}",   "{\"path\":\"a\",\"limit\":1e300}",
            "{\"path\":\"a\",\"offset\":\"2\"}",
        };
        json_t *args;
        char err[256];
        size_t i;

        for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
                args = NULL;
                assert_int_equal(tools_parse_args("read", bad[i], &args, err, sizeof(err)),
                                 -EINVAL);
                assert_null(args);
        }
}

static void test_bash_argv_short(void **state)
{
        char err[256], **argv = dispatch_bash_argv("echo hi", 7, err, sizeof(err));

        assert_non_null(argv);
        assert_string_equal(argv[0], "bash");
        assert_string_equal(argv[1], "-c");
        assert_string_equal(argv[2], "echo hi");
        assert_null(argv[3]);
        free(argv);
}

/* Over one argument's kernel limit: pieces under it that join back to the
 * command, split between characters. */
static void test_bash_argv_long(void **state)
{
        size_t len = 300 * 1024, i, n, got = 0;
        char *cmd = malloc(len + 1), *joined = malloc(len + 1), err[256], **argv;

        assert_non_null(cmd);
        assert_non_null(joined);
        cmd[0] = '#';
        for (i = 1; i + 1 < len; i += 2)
                memcpy(cmd + i, "\xc3\xa9", 2); /* é: pieces must not split it */
        if (i < len)
                cmd[i] = '\n';
        cmd[len] = '\0';
        argv = dispatch_bash_argv(cmd, len, err, sizeof(err));
        assert_non_null(argv);
        assert_string_equal(argv[0], "bash");
        assert_string_equal(argv[1], "-c");
        assert_string_equal(argv[3], "bash");
        for (n = 4; argv[n] != NULL; n++) {
                size_t k = strlen(argv[n]);
                assert_true(k < 128 * 1024);
                assert_true(k > 0);
                /* each piece starts on a character */
                assert_true(((unsigned char)argv[n][0] & 0xc0) != 0x80);
                memcpy(joined + got, argv[n], k);
                got += k;
        }
        assert_true(n > 5);
        assert_int_equal(got, len);
        assert_memory_equal(joined, cmd, len);
        free(argv);
        free(joined);
        free(cmd);
}

static void test_bash_argv_too_big(void **state)
{
        size_t len = 8u << 20;
        char *cmd = malloc(len + 1), err[256], **argv;

        assert_non_null(cmd);
        memset(cmd, 'x', len);
        cmd[len] = '\0';
        errno = 0;
        argv = dispatch_bash_argv(cmd, len, err, sizeof(err));
        assert_null(argv);
        assert_int_equal(errno, E2BIG);
        assert_non_null(strstr(err, "8388608 bytes"));
        assert_non_null(strstr(err, "ARG_MAX"));
        free(cmd);
}

static void test_default_budget(void **state)
{
        uint64_t m = 512ull << 20, host = 24ull << 30;

        assert_int_equal(session_default_budget(4, m, host), 4 * m);
        /* never more than half the host */
        assert_int_equal(session_default_budget(48, m, host), host / 2);
        assert_int_equal(session_default_budget(4, m, 0), 4 * m);
        assert_int_equal(session_default_budget(4, UINT64_MAX / 2, host), host / 2);
        assert_int_equal(session_default_budget(1, 0, host), 0);
}

/* ---- the queue, with real local processes ---- */

#define NCALLS 6

struct queue_test {
        uv_loop_t loop;
        struct bus *bus;
        struct exec_engine *eng;
        struct dispatch_ctx dx;
        struct tool_run *runs[NCALLS];
        int done_order[NCALLS], ndone;
        bool ok[NCALLS], cancelled[NCALLS];
        char out[NCALLS][256];
        int live, max_live, created;
};

static void count_events(const json_t *ev, void *ud)
{
        struct queue_test *q = ud;
        const char *type = json_string_value(json_object_get(ev, "type"));

        if (strcmp(type, "exec.create") == 0) {
                q->created++;
                if (++q->live > q->max_live)
                        q->max_live = q->live;
        } else if (strcmp(type, "exec.remove") == 0) {
                q->live--;
        }
}

static void on_done(struct tool_run *r, const struct tool_outcome *o, void *ud)
{
        struct queue_test *q = ud;
        int i;

        for (i = 0; i < NCALLS && q->runs[i] != r; i++)
                ;
        assert_true(i < NCALLS);
        q->done_order[q->ndone++] = i;
        q->ok[i] = o->ok;
        q->cancelled[i] = o->cancelled;
        snprintf(q->out[i], sizeof(q->out[i]), "%.*s", (int)o->len, o->output);
}

static void queue_open(struct queue_test *q, unsigned max_parallel)
{
        char err[256];

        memset(q, 0, sizeof(*q));
        assert_int_equal(uv_loop_init(&q->loop), 0);
        q->bus = bus_new();
        bus_subscribe(q->bus, count_events, q);
        assert_int_equal(exec_engine_new(&q->loop, NULL, &q->eng, err, sizeof(err)), 0);
        q->dx.eng = q->eng;
        q->dx.bus = q->bus;
        q->dx.mode = EXEC_LOCAL;
        q->dx.workspace = "/tmp";
        q->dx.limits = op_limits(20000);
        q->dx.max_parallel = max_parallel;
}

static void queue_start(struct queue_test *q, int i, const char *command)
{
        json_t *args = json_pack("{s:s}", "command", command);
        char id[32], err[256];

        snprintf(id, sizeof(id), "call_%d", i);
        assert_int_equal(
            dispatch_start(&q->dx, id, "bash", args, on_done, q, &q->runs[i], err, sizeof(err)), 0);
        json_decref(args);
}

static void queue_close(struct queue_test *q)
{
        dispatch_close(&q->dx);
        exec_engine_free(q->eng);
        uv_run(&q->loop, UV_RUN_DEFAULT);
        assert_int_equal(uv_loop_close(&q->loop), 0);
        bus_free(q->bus);
}

static void test_queue_fifo(void **state)
{
        struct queue_test q;
        int i;

        queue_open(&q, 2);
        for (i = 0; i < NCALLS; i++)
                queue_start(&q, i, "sleep 0.1; echo done");
        assert_int_equal(q.created, 2); /* the rest wait, without an execution */
        assert_false(dispatch_queued(q.runs[0]));
        assert_true(dispatch_queued(q.runs[2]));
        assert_int_equal(dispatch_exec_id(q.runs[2]), 0);
        while (q.ndone < NCALLS || q.live > 0)
                uv_run(&q.loop, UV_RUN_ONCE);
        assert_int_equal(q.created, NCALLS);
        assert_int_equal(q.max_live, 2);
        for (i = 0; i < NCALLS; i++) {
                assert_true(q.ok[i]);
                assert_string_equal(q.out[i], "done\n");
        }
        /* first come, first started: the last two started last */
        assert_true(q.done_order[NCALLS - 1] >= NCALLS - 2);
        queue_close(&q);
}

/* A queued call killed (interrupt, kill-all) is answered at once. */
static void test_queue_cancel(void **state)
{
        struct queue_test q;
        int i;

        queue_open(&q, 1);
        for (i = 0; i < 3; i++)
                queue_start(&q, i, "sleep 5");
        assert_int_equal(dispatch_kill(q.runs[2], "interrupted by the operator"), 0);
        assert_int_equal(q.ndone, 1);
        assert_false(q.ok[2]);
        assert_true(q.cancelled[2]);
        assert_string_equal(q.out[2], "cancelled before it started (interrupted by the operator)");
        assert_int_not_equal(dispatch_kill(q.runs[0], "interrupted by the operator"), 0);
        /* the queued call still left is cancelled by closing, before the
         * killed execution's removal could start it */
        dispatch_close(&q.dx);
        assert_int_equal(q.ndone, 2);
        assert_false(q.ok[1]);
        assert_non_null(strstr(q.out[1], "cancelled before it started"));
        while (q.ndone < 3 || q.live > 0)
                uv_run(&q.loop, UV_RUN_ONCE);
        assert_non_null(strstr(q.out[0], "interrupted by the operator"));
        assert_false(q.cancelled[0]); /* it ran: killed, not cancelled */
        assert_int_equal(q.created, 1);
        queue_close(&q);
}

/* The memory budget bounds sandbox executions; a call that could never fit
 * is refused rather than left waiting. */
static void test_budget_too_small(void **state)
{
        struct queue_test q;
        json_t *args = json_pack("{s:s}", "command", "true");
        struct tool_run *r;
        char err[256];

        queue_open(&q, 4);
        q.dx.mode = EXEC_SANDBOX;
        q.dx.limits.memory_bytes = 256ull << 20;
        q.dx.memory_budget = 128ull << 20;
        assert_int_equal(
            dispatch_start(&q.dx, "c", "bash", args, on_done, &q, &r, err, sizeof(err)), -E2BIG);
        assert_non_null(strstr(err, "memory budget"));
        assert_int_equal(q.created, 0);
        json_decref(args);
        queue_close(&q);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test(test_timeout_clamped), cmocka_unit_test(test_timeout_refused),
            cmocka_unit_test(test_read_numbers),    cmocka_unit_test(test_bash_argv_short),
            cmocka_unit_test(test_bash_argv_long),  cmocka_unit_test(test_bash_argv_too_big),
            cmocka_unit_test(test_default_budget),  cmocka_unit_test(test_queue_fifo),
            cmocka_unit_test(test_queue_cancel),    cmocka_unit_test(test_budget_too_small),
        };

        return cmocka_run_group_tests_name("dispatch", tests, NULL, NULL);
}
