/* Unit tests for the view model: realistic event sequences built here, the
 * state the TUI would draw after each step, and events it must ignore. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "core/util/bus.h"
#include "core/view/viewmodel.h"

static uint64_t seq;

/* Feeds one event: `fmt` and the rest are json_pack fields (NULL: none). */
static void feed(struct viewmodel *vm, uint64_t t, const char *type, const char *fmt, ...)
{
        json_t *ev = json_object(), *fields = NULL;
        va_list ap;

        if (fmt != NULL) {
                va_start(ap, fmt);
                fields = json_vpack_ex(NULL, 0, fmt, ap);
                va_end(ap);
                assert_non_null(fields);
                json_object_update(ev, fields);
                json_decref(fields);
        }
        json_object_set_new(ev, "seq", json_integer((json_int_t)++seq));
        json_object_set_new(ev, "t_ms", json_integer((json_int_t)t));
        json_object_set_new(ev, "type", json_string(type));
        viewmodel_event(ev, vm);
        json_decref(ev);
}

/* Feeds raw JSON text as one event. */
static void feed_text(struct viewmodel *vm, const char *text)
{
        json_t *ev = json_loads(text, JSON_DECODE_ANY, NULL);

        assert_non_null(ev);
        viewmodel_event(ev, vm);
        json_decref(ev);
}

static int setup(void **state)
{
        *state = viewmodel_new();
        seq = 0;
        return *state == NULL ? -1 : 0;
}

static int teardown(void **state)
{
        viewmodel_free(*state);
        return 0;
}

static void start_session(struct viewmodel *vm, uint64_t t)
{
        feed(vm, t, "session.start", "{s:s,s:s,s:s,s:b,s:s,s:s,s:s,s:i,s:{s:I,s:I,s:I,s:i}}",
             "session_id", "s-42", "mode", "sandbox", "model", "openai:gpt-4o-mini", "scripted", 0,
             "workspace", "/home/op/proj", "workspace_mode", "overlay", "version", "0.1.0",
             "max_iterations", 8, "limits", "memory_bytes", (json_int_t)512 << 20, "cpu_ms",
             (json_int_t)30000, "timeout_ms", (json_int_t)60000, "pids", 128);
}

static void call_start(struct viewmodel *vm, uint64_t t, const char *id, const char *name,
                       const char *args)
{
        feed(vm, t, "tool.call", "{s:s,s:s,s:s}", "call_id", id, "name", name, "arguments", args);
}

static void call_output(struct viewmodel *vm, uint64_t t, const char *id, const char *data)
{
        feed(vm, t, "tool.output", "{s:s,s:s,s:s}", "call_id", id, "stream", "stdout", "data",
             data);
}

static void call_result(struct viewmodel *vm, uint64_t t, const char *id, bool ok, int code,
                        uint64_t duration)
{
        feed(vm, t, "tool.result", "{s:s,s:b,s:s,s:i,s:I,s:b}", "call_id", id, "ok", ok, "output",
             "(capped)", "exit_code", code, "duration_ms", (json_int_t)duration, "truncated", 0);
}

static void exec_create(struct viewmodel *vm, uint64_t t, uint64_t id, const char *call_id)
{
        feed(vm, t, "exec.create", "{s:I,s:s?,s:s,s:{s:I,s:I,s:I,s:i}}", "exec_id", (json_int_t)id,
             "call_id", call_id, "isolation", "sandbox", "limits", "memory_bytes",
             (json_int_t)256 << 20, "cpu_ms", (json_int_t)10000, "timeout_ms", (json_int_t)30000,
             "pids", 64);
}

static void exec_start(struct viewmodel *vm, uint64_t t, uint64_t id, int pid)
{
        feed(vm, t, "exec.start", "{s:I,s:i,s:I}", "exec_id", (json_int_t)id, "pid", pid,
             "setup_us", (json_int_t)1800);
}

static void exec_stats(struct viewmodel *vm, uint64_t t, uint64_t id, double cpu, uint64_t mem,
                       int pids)
{
        feed(vm, t, "exec.stats", "{s:I,s:f,s:I,s:I,s:I,s:i}", "exec_id", (json_int_t)id, "cpu_pct",
             cpu, "cpu_ms", (json_int_t)(t * 2), "mem_bytes", (json_int_t)mem, "mem_peak_bytes",
             (json_int_t)(mem + 4096), "pids", pids);
}

static void exec_exit(struct viewmodel *vm, uint64_t t, uint64_t id, const char *reason, int code,
                      int sig)
{
        feed(vm, t, "exec.exit", "{s:I,s:s,s:i,s:i,s:I,s:I,s:I,s:b}", "exec_id", (json_int_t)id,
             "reason", reason, "exit_code", code, "signal", sig, "wall_ms", (json_int_t)1234,
             "cpu_ms", (json_int_t)567, "mem_peak_bytes", (json_int_t)9 << 20, "truncated", 0);
}

static void exec_remove(struct viewmodel *vm, uint64_t t, uint64_t id)
{
        feed(vm, t, "exec.remove", "{s:I,s:I}", "exec_id", (json_int_t)id, "teardown_us",
             (json_int_t)420);
}

static const struct viewmodel_call *call_by_id(struct viewmodel *vm, const char *id)
{
        long i = viewmodel_call_find(vm, id);

        assert_true(i >= 0);
        return viewmodel_call(vm, (size_t)i);
}

static const struct viewmodel_exec *exec_by_id(struct viewmodel *vm, uint64_t id)
{
        long i = viewmodel_exec_find(vm, id);

        assert_true(i >= 0);
        return viewmodel_exec(vm, (size_t)i);
}

static void test_two_turn_session(void **state)
{
        struct viewmodel *vm = *state;
        const struct viewmodel_session *s = viewmodel_session(vm);
        const struct viewmodel_entry *e;

        assert_int_equal(s->state, VM_IDLE);
        assert_string_equal(s->id, "");
        start_session(vm, 0);
        assert_int_equal(s->state, VM_RUNNING);
        assert_string_equal(s->id, "s-42");
        assert_string_equal(s->mode, "sandbox");
        assert_string_equal(s->model, "openai:gpt-4o-mini");
        assert_string_equal(s->workspace, "/home/op/proj");
        assert_string_equal(s->workspace_mode, "overlay");
        assert_string_equal(s->version, "0.1.0");
        assert_false(s->scripted);
        assert_int_equal(s->max_turns, 8);
        assert_int_equal(s->limits.memory_bytes, 512u << 20);
        assert_int_equal(s->limits.pids, 128);
        assert_int_equal(s->limits.tmpfs_bytes, 0);

        feed(vm, 3, "user.message", "{s:s}", "text", "count the C files");
        assert_int_equal(viewmodel_ntranscript(vm), 1);
        e = viewmodel_entry(vm, 0);
        assert_int_equal(e->kind, VM_ENTRY_USER);
        assert_string_equal(e->text, "count the C files");

        feed(vm, 5, "turn.start", "{s:i}", "turn", 1);
        assert_int_equal(s->turn, 1);
        assert_true(s->in_turn);
        feed(vm, 400, "model.delta", "{s:s}", "text", "Let me ");
        assert_int_equal(viewmodel_ntranscript(vm), 2);
        e = viewmodel_entry(vm, 1);
        assert_int_equal(e->kind, VM_ENTRY_ASSISTANT);
        assert_true(e->open);
        assert_string_equal(e->text, "Let me ");
        feed(vm, 420, "model.delta", "{s:s}", "text", "look.");
        assert_int_equal(viewmodel_ntranscript(vm), 2);
        e = viewmodel_entry(vm, 1);
        assert_string_equal(e->text, "Let me look.");
        assert_int_equal(e->turn, 1);
        feed(vm, 450, "model.message", "{s:s,s:[{s:s,s:s,s:s}],s:{s:i,s:i}}", "content",
             "Let me look.", "tool_calls", "id", "c1", "name", "bash", "arguments",
             "{\"command\":\"ls *.c | wc -l\"}", "usage", "prompt_tokens", 100, "completion_tokens",
             20);
        e = viewmodel_entry(vm, 1);
        assert_false(e->open);
        assert_int_equal(e->ntool_calls, 1);
        assert_int_equal(s->tokens_in, 100);
        assert_int_equal(s->tokens_out, 20);
        call_start(vm, 460, "c1", "bash", "{\"command\":\"ls *.c | wc -l\"}");
        call_output(vm, 500, "c1", "3\n");
        call_result(vm, 510, "c1", true, 0, 50);
        assert_int_equal(s->tool_calls, 1);
        feed(vm, 511, "turn.end", "{s:i}", "turn", 1);
        assert_false(s->in_turn);

        feed(vm, 512, "turn.start", "{s:i}", "turn", 2);
        feed(vm, 700, "model.delta", "{s:s}", "text", "Thre");
        /* the call shows inline after the message that asked for it */
        assert_int_equal(viewmodel_ntranscript(vm), 4);
        assert_int_equal(viewmodel_entry(vm, 2)->kind, VM_ENTRY_TOOL);
        assert_int_equal(viewmodel_entry(vm, 2)->call, 0);
        assert_string_equal(viewmodel_entry(vm, 3)->text, "Thre");
        /* The final content replaces what was streamed. */
        feed(vm, 720, "model.message", "{s:s,s:[],s:{s:i,s:i}}", "content", "Three C files.",
             "tool_calls", "usage", "prompt_tokens", 150, "completion_tokens", 30);
        e = viewmodel_entry(vm, 3);
        assert_string_equal(e->text, "Three C files.");
        assert_int_equal(e->len, strlen("Three C files."));
        assert_false(e->open);
        assert_int_equal(e->turn, 2);
        assert_int_equal(s->tokens_in, 250);
        assert_int_equal(s->tokens_out, 50);
        assert_int_equal(s->elapsed_ms, 720);
        feed(vm, 721, "turn.end", "{s:i}", "turn", 2);

        feed(vm, 730, "session.end", "{s:s,s:i,s:i,s:{s:i,s:i},s:I}", "status", "completed",
             "turns", 2, "tool_calls", 1, "usage", "prompt_tokens", 260, "completion_tokens", 55,
             "duration_ms", (json_int_t)735);
        assert_int_equal(s->state, VM_COMPLETED);
        assert_string_equal(viewmodel_session_state_name(s->state), "completed");
        assert_int_equal(s->turn, 2);
        /* session.end's usage is the session's total. */
        assert_int_equal(s->tokens_in, 260);
        assert_int_equal(s->tokens_out, 55);
        assert_int_equal(s->elapsed_ms, 735);
        /* Late teardown events do not move the session's clock. */
        exec_create(vm, 800, 1, NULL);
        assert_int_equal(s->elapsed_ms, 735);
        assert_int_equal(viewmodel_ntranscript(vm), 4);
}

static void test_concurrent_calls(void **state)
{
        struct viewmodel *vm = *state;
        const struct viewmodel_call *a, *b;

        start_session(vm, 0);
        feed(vm, 1, "turn.start", "{s:i}", "turn", 1);
        call_start(vm, 100, "call_a", "bash", "{\"command\":\"ls -la\"}");
        call_start(vm, 101, "call_b", "read", "{\"path\":\"src/main.c\",\"limit\":20}");
        assert_int_equal(viewmodel_ncalls(vm), 2);
        assert_int_equal(viewmodel_nrunning_calls(vm), 2);
        a = call_by_id(vm, "call_a");
        assert_string_equal(a->summary, "bash: ls -la");
        assert_string_equal(a->arguments, "{\"command\":\"ls -la\"}");
        assert_int_equal(a->state, VM_CALL_RUNNING);
        assert_int_equal(a->turn, 1);
        b = call_by_id(vm, "call_b");
        assert_string_equal(b->summary, "read: src/main.c");
        assert_string_equal(b->name, "read");

        call_output(vm, 110, "call_a", "total 8\n");
        call_output(vm, 111, "call_b", "int main(void)\n");
        call_output(vm, 112, "call_a", "drwxr-xr-x 2 op op 4096 .\n");
        a = call_by_id(vm, "call_a");
        b = call_by_id(vm, "call_b");
        assert_string_equal(a->output, "total 8\ndrwxr-xr-x 2 op op 4096 .\n");
        assert_string_equal(b->output, "int main(void)\n");
        assert_int_equal(a->output_bytes, strlen(a->output));

        call_result(vm, 150, "call_b", false, 2, 49);
        call_result(vm, 160, "call_a", true, 0, 60);
        a = call_by_id(vm, "call_a");
        b = call_by_id(vm, "call_b");
        assert_int_equal(a->state, VM_CALL_OK);
        assert_int_equal(a->exit_code, 0);
        assert_int_equal(a->end_ms, 160);
        assert_int_equal(a->duration_ms, 60);
        assert_int_equal(b->state, VM_CALL_ERROR);
        assert_int_equal(b->exit_code, 2);
        assert_string_equal(viewmodel_call_state_name(b->state), "error");
        /* Streamed output is kept over the result's capped copy. */
        assert_string_equal(b->output, "int main(void)\n");
        assert_int_equal(viewmodel_nrunning_calls(vm), 0);

        /* A builtin streams nothing: its result's output is the output. */
        call_start(vm, 200, "call_c", "write_cache", "{\"key\":\"k1\",\"value\":\"v\"}");
        call_result(vm, 201, "call_c", true, 0, 1);
        assert_string_equal(call_by_id(vm, "call_c")->output, "(capped)");
        assert_string_equal(call_by_id(vm, "call_c")->summary, "write_cache: k1");
        assert_int_equal(viewmodel_call_find(vm, "call_c"), 2);
        assert_int_equal(viewmodel_call_find(vm, "call_d"), -1);
}

static void test_exec_reasons(void **state)
{
        static const struct {
                const char *reason;
                enum vm_exec_state st;
                int code, sig;
        } cases[] = {
            {"exited", VM_EXEC_EXITED, 0, 0},
            {"signaled", VM_EXEC_SIGNALED, -1, 11},
            {"timeout", VM_EXEC_TIMEOUT, -1, 9},
            {"oom", VM_EXEC_OOM, -1, 9},
            {"cpu_limit", VM_EXEC_CPU_LIMIT, -1, 9},
            {"pids_limit", VM_EXEC_PIDS_LIMIT, -1, 9},
            {"killed", VM_EXEC_KILLED, -1, 9},
            {"setup_failed", VM_EXEC_SETUP_FAILED, -1, 0},
            {"from_the_future", VM_EXEC_SIGNALED, -1, 15},
        };
        struct viewmodel *vm = *state;
        const struct viewmodel_exec *e;
        const struct viewmodel_call *c;
        struct viewmodel_host h;
        char id[16];
        size_t i;

        start_session(vm, 0);
        for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
                uint64_t t = 1000 * (i + 1), x = 100 + i;
                snprintf(id, sizeof(id), "c%zu", i);
                call_start(vm, t, id, "bash", "{\"command\":\"make\"}");
                exec_create(vm, t + 1, x, id);
                e = exec_by_id(vm, x);
                assert_int_equal(e->state, VM_EXEC_CREATING);
                assert_true(e->sandbox);
                assert_string_equal(e->call_id, id);
                assert_int_equal(e->limits.memory_bytes, 256u << 20);
                assert_int_equal(e->limits.pids, 64);
                assert_int_equal(e->created_ms, t + 1);
                c = call_by_id(vm, id);
                assert_int_equal(c->nexecs, 1);
                assert_int_equal(c->exec_ids[0], x);
                assert_int_equal(e->call, viewmodel_call_find(vm, id));
                assert_int_equal(viewmodel_nlive(vm), 1);
                viewmodel_host(vm, &h);
                assert_int_equal(h.running, 0); /* creating is not running yet */
                if (strcmp(cases[i].reason, "setup_failed") != 0) {
                        exec_start(vm, t + 3, x, 4000 + (int)i);
                        e = exec_by_id(vm, x);
                        assert_int_equal(e->state, VM_EXEC_RUNNING);
                        assert_int_equal(e->pid, 4000 + (int)i);
                        assert_int_equal(e->setup_us, 1800);
                        assert_int_equal(e->started_ms, t + 3);
                        exec_stats(vm, t + 10, x, 50.0, 1 << 20, 3);
                        exec_stats(vm, t + 20, x, 150.0, 2 << 20, 5);
                        e = exec_by_id(vm, x);
                        assert_int_equal(e->nsamples, 2);
                        assert_int_equal(viewmodel_exec_nsamples(e), 2);
                        assert_true(e->stats.cpu_pct == 150.0);
                        assert_int_equal(e->stats.mem_bytes, 2 << 20);
                        assert_int_equal(e->stats.mem_peak_bytes, (2 << 20) + 4096);
                        assert_int_equal(e->stats.pids, 5);
                        assert_int_equal(e->stats.cpu_ms, (t + 20) * 2);
                        assert_true(viewmodel_exec_sample(e, 0)->cpu_pct == 50.0f);
                        assert_int_equal(viewmodel_exec_sample(e, 1)->mem_bytes, 2 << 20);
                        viewmodel_host(vm, &h);
                        assert_int_equal(h.running, 1);
                        assert_true(h.cpu_pct == 150.0);
                        assert_int_equal(h.mem_bytes, 2 << 20);
                }
                exec_exit(vm, t + 30, x, cases[i].reason, cases[i].code, cases[i].sig);
                e = exec_by_id(vm, x);
                assert_int_equal(e->state, cases[i].st);
                assert_int_equal(e->exit_code, cases[i].code);
                assert_int_equal(e->signal, cases[i].sig);
                assert_int_equal(e->exited_ms, t + 30);
                assert_int_equal(e->wall_ms, 1234);
                assert_int_equal(e->cpu_ms, 567);
                assert_int_equal(e->mem_peak_bytes, 9 << 20);
                assert_false(e->removed);
                assert_int_equal(viewmodel_nlive(vm), 0);
                viewmodel_host(vm, &h);
                assert_int_equal(h.running, 0);
                assert_true(h.cpu_pct == 0);
                /* Stats after the exit are stale: ignored. */
                exec_stats(vm, t + 31, x, 99.0, 1, 1);
                assert_int_equal(exec_by_id(vm, x)->nsamples,
                                 strcmp(cases[i].reason, "setup_failed") != 0 ? 2 : 0);
                exec_remove(vm, t + 40, x);
                e = exec_by_id(vm, x);
                assert_true(e->removed);
                assert_int_equal(e->teardown_us, 420);
                assert_int_equal(e->removed_ms, t + 40);
                assert_int_equal(e->state, cases[i].st);
                if (i < 8)
                        assert_string_equal(viewmodel_exec_state_name(e->state), cases[i].reason);
        }
        assert_int_equal(viewmodel_nexecs(vm), 9);
        feed(vm, 20000, "exec.create", "{s:I,s:n,s:s}", "exec_id", (json_int_t)500, "call_id",
             "isolation", "none");
        e = exec_by_id(vm, 500);
        assert_false(e->sandbox);
        assert_string_equal(e->call_id, "");
        assert_int_equal(e->call, -1);
        feed(vm, 20001, "exec.exit", "{s:I,s:s,s:i,s:i,s:s}", "exec_id", (json_int_t)500, "reason",
             "setup_failed", "exit_code", -1, "signal", 0, "error", "clone3: EPERM");
        assert_string_equal(exec_by_id(vm, 500)->error, "clone3: EPERM");
        /* A container's own lifecycle (exec.state) follows the engine's. */
        assert_string_equal(exec_by_id(vm, 500)->runtime_state, "");
        feed(vm, 20002, "exec.state", "{s:I,s:s,s:s}", "exec_id", (json_int_t)500, "state",
             "removing", "runtime", "docker");
        assert_string_equal(exec_by_id(vm, 500)->runtime_state, "removing");
        feed(vm, 20003, "exec.state", "{s:I,s:s}", "exec_id", (json_int_t)500, "state",
             "a-state-too-long-to-keep");
        assert_int_equal(strlen(exec_by_id(vm, 500)->runtime_state), 11);
        exec_remove(vm, 20004, 500);
        feed(vm, 20005, "exec.state", "{s:I,s:s}", "exec_id", (json_int_t)500, "state", "running");
        assert_string_equal(exec_by_id(vm, 500)->runtime_state, "a-state-too");
}

static void test_host_totals(void **state)
{
        struct viewmodel *vm = *state;
        struct viewmodel_host h;
        uint64_t i;

        for (i = 1; i <= 4; i++)
                exec_create(vm, i, i, NULL);
        for (i = 1; i <= 3; i++)
                exec_start(vm, 10 + i, i, 100 + (int)i);
        for (i = 1; i <= 3; i++)
                exec_stats(vm, 20 + i, i, 10.0 * (double)i, i << 20, 2);
        viewmodel_host(vm, &h);
        assert_int_equal(h.running, 3);
        assert_true(h.cpu_pct > 59.99 && h.cpu_pct < 60.01);
        assert_int_equal(h.mem_bytes, 6 << 20);
        assert_int_equal(viewmodel_nlive(vm), 4);
        exec_stats(vm, 30, 2, 5.0, 1 << 20, 2); /* the last sample counts */
        viewmodel_host(vm, &h);
        assert_true(h.cpu_pct > 44.99 && h.cpu_pct < 45.01);
        assert_int_equal(h.mem_bytes, 5 << 20);
        exec_exit(vm, 40, 1, "exited", 0, 0);
        viewmodel_host(vm, &h);
        assert_int_equal(h.running, 2);
        assert_int_equal(h.mem_bytes, 4 << 20);
        assert_int_equal(viewmodel_nlive(vm), 3);
        /* Removed without an exit (its writer died): not live either. */
        exec_remove(vm, 50, 3);
        viewmodel_host(vm, &h);
        assert_int_equal(h.running, 1);
        assert_int_equal(h.mem_bytes, 1 << 20);
        assert_int_equal(viewmodel_nlive(vm), 2);
        for (i = 0; i < viewmodel_nlive(vm); i++)
                assert_true(viewmodel_live(vm, i)->id == 2 || viewmodel_live(vm, i)->id == 4);
}

static void test_interrupted_call(void **state)
{
        struct viewmodel *vm = *state;
        const struct viewmodel_entry *e;

        start_session(vm, 0);
        feed(vm, 1, "turn.start", "{s:i}", "turn", 3);
        call_start(vm, 10, "slow", "bash", "{\"command\":\"sleep 100\"}");
        call_start(vm, 11, "quick", "read", "{\"path\":\"a.txt\"}");
        feed(vm, 20, "model.delta", "{s:s}", "text", "partial");
        feed(vm, 500, "operator.interrupt", "{s:i}", "turn", 3);
        /* each call inline where it came, then the text, then the interrupt */
        assert_int_equal(viewmodel_ntranscript(vm), 4);
        assert_int_equal(viewmodel_entry(vm, 0)->kind, VM_ENTRY_TOOL);
        assert_int_equal(viewmodel_entry(vm, 0)->call, 0);
        assert_int_equal(viewmodel_entry(vm, 1)->kind, VM_ENTRY_TOOL);
        assert_int_equal(viewmodel_entry(vm, 1)->call, 1);
        assert_string_equal(viewmodel_entry(vm, 1)->text, "");
        e = viewmodel_entry(vm, 3);
        assert_int_equal(e->kind, VM_ENTRY_INTERRUPT);
        assert_int_equal(e->turn, 3);
        assert_string_equal(e->text, "operator interrupted turn 3");
        assert_false(viewmodel_entry(vm, 2)->open); /* the stream it cut */
        /* Still running until their results come. */
        assert_int_equal(call_by_id(vm, "slow")->state, VM_CALL_RUNNING);
        call_result(vm, 510, "slow", false, -1, 500);
        call_result(vm, 511, "quick", true, 0, 500);
        assert_int_equal(call_by_id(vm, "slow")->state, VM_CALL_INTERRUPTED);
        assert_string_equal(viewmodel_call_state_name(VM_CALL_INTERRUPTED), "interrupted");
        assert_int_equal(call_by_id(vm, "quick")->state, VM_CALL_OK);

        /* A result may say so itself. */
        call_start(vm, 600, "self", "bash", "{\"command\":\"yes\"}");
        feed(vm, 610, "tool.result", "{s:s,s:b,s:b}", "call_id", "self", "ok", 0, "interrupted", 1);
        assert_int_equal(call_by_id(vm, "self")->state, VM_CALL_INTERRUPTED);

        /* A call still running when the session ends was cut short. */
        call_start(vm, 700, "orphan", "bash", "{\"command\":\"sleep 9\"}");
        feed(vm, 900, "session.end", "{s:s}", "status", "interrupted");
        assert_int_equal(viewmodel_session(vm)->state, VM_INTERRUPTED);
        assert_int_equal(call_by_id(vm, "orphan")->state, VM_CALL_INTERRUPTED);
        assert_int_equal(call_by_id(vm, "orphan")->end_ms, 900);
        assert_int_equal(call_by_id(vm, "orphan")->duration_ms, 200);
        assert_int_equal(viewmodel_nrunning_calls(vm), 0);
        assert_int_equal(viewmodel_session(vm)->elapsed_ms, 900);
}

static void test_operator_kill(void **state)
{
        struct viewmodel *vm = *state;
        const struct viewmodel_entry *ent;
        const struct viewmodel_exec *e;

        start_session(vm, 0);
        call_start(vm, 10, "bomb", "bash", "{\"command\":\"b() { b | b & }; b\"}");
        exec_create(vm, 11, 7, "bomb");
        exec_start(vm, 12, 7, 999);
        exec_stats(vm, 100, 7, 200.0, 64 << 20, 64);
        feed(vm, 150, "operator.kill", "{s:I}", "exec_id", (json_int_t)7);
        e = exec_by_id(vm, 7);
        assert_true(e->kill_requested);
        assert_int_equal(e->state, VM_EXEC_RUNNING);
        ent = viewmodel_entry(vm, viewmodel_ntranscript(vm) - 1);
        assert_int_equal(ent->kind, VM_ENTRY_KILL);
        assert_int_equal(ent->exec_id, 7);
        assert_string_equal(ent->text, "operator killed execution 7");
        exec_exit(vm, 160, 7, "killed", -1, 9);
        e = exec_by_id(vm, 7);
        assert_int_equal(e->state, VM_EXEC_KILLED);
        assert_int_equal(viewmodel_nlive(vm), 0);
        call_result(vm, 161, "bomb", false, -1, 151);
        assert_int_equal(call_by_id(vm, "bomb")->state, VM_CALL_ERROR);
        exec_remove(vm, 170, 7);
        assert_true(exec_by_id(vm, 7)->removed);
        /* A kill of an execution the model never saw is still shown. */
        feed(vm, 200, "operator.kill", "{s:I}", "exec_id", (json_int_t)8);
        assert_int_equal(viewmodel_entry(vm, viewmodel_ntranscript(vm) - 1)->exec_id, 8);
}

static void test_errors_and_notes(void **state)
{
        struct viewmodel *vm = *state;
        const struct viewmodel_entry *e;

        start_session(vm, 0);
        feed(vm, 10, "model.delta", "{s:s}", "text", "I will");
        feed(vm, 20, "model.error", "{s:s,s:i,s:i}", "message", "rate limited", "http_status", 429,
             "retry_in_ms", 2000);
        assert_int_equal(viewmodel_ntranscript(vm), 2);
        assert_true(viewmodel_entry(vm, 0)->open);
        assert_string_equal(viewmodel_entry(vm, 0)->text, "I will");
        e = viewmodel_entry(vm, 1);
        assert_int_equal(e->kind, VM_ENTRY_ERROR);
        assert_string_equal(e->text, "rate limited");
        assert_int_equal(e->http_status, 429);
        assert_int_equal(e->retry_in_ms, 2000);
        /* The retry goes on with the same message: past what was shown,
         * after taking back what it does not keep. */
        feed(vm, 2100, "model.discard", "{s:i}", "bytes", 1);
        feed(vm, 2100, "model.delta", "{s:s}", "text", "l look");
        assert_int_equal(viewmodel_ntranscript(vm), 2);
        assert_string_equal(viewmodel_entry(vm, 0)->text, "I will look");
        feed(vm, 2150, "model.delta", "{s:s}", "text", "\n");
        feed(vm, 2200, "model.error", "{s:s,s:i,s:i,s:b}", "message", "connection reset",
             "http_status", 0, "retry_in_ms", 0, "final", 1);
        assert_false(viewmodel_entry(vm, 0)->open);
        /* an entry keeps its place: a new one for what follows */
        feed(vm, 2250, "model.delta", "{s:s}", "text", "later");
        feed(vm, 2260, "model.message", "{s:s,s:[],s:s,s:b}", "content", "later", "tool_calls",
             "finish_reason", "length", "refusal", 0);
        assert_int_equal(viewmodel_ntranscript(vm), 5);
        assert_string_equal(viewmodel_entry(vm, 3)->text, "later");
        assert_int_equal(viewmodel_entry(vm, 4)->kind, VM_ENTRY_NOTE);
        assert_non_null(strstr(viewmodel_entry(vm, 4)->text, "token limit"));
        feed(vm, 2270, "model.message", "{s:s,s:[],s:s,s:b}", "content", "I won't.", "tool_calls",
             "finish_reason", "stop", "refusal", 1);
        assert_int_equal(viewmodel_ntranscript(vm), 6);
        assert_true(viewmodel_entry(vm, 5)->refusal);
        assert_string_equal(viewmodel_entry(vm, 2)->text, "connection reset");
        assert_int_equal(viewmodel_entry(vm, 2)->retry_in_ms, -1);
        assert_int_equal(viewmodel_entry(vm, 2)->http_status, 0);
        feed(vm, 2300, "session.note", "{s:s}", "text", "mode: sandbox (cgroup v1)");
        e = viewmodel_entry(vm, 6);
        assert_int_equal(e->kind, VM_ENTRY_NOTE);
        assert_string_equal(e->text, "mode: sandbox (cgroup v1)");
        /* A message with tool calls only adds no empty entry. */
        feed(vm, 2400, "model.message", "{s:n,s:[{s:s}]}", "content", "tool_calls", "id", "x");
        assert_int_equal(viewmodel_ntranscript(vm), 7);
}

static void test_malformed_ignored(void **state)
{
        static const char *const bad[] = {
            "[1,2]",
            "42",
            "{\"seq\":1,\"t_ms\":5}",
            "{\"type\":7,\"t_ms\":5}",
            "{\"type\":\"tool.teleport\",\"call_id\":\"x\"}",
            "{\"type\":\"\"}",
            "{\"type\":\"tool.call\",\"name\":\"bash\"}",
            "{\"type\":\"tool.call\",\"call_id\":12,\"name\":\"bash\"}",
            "{\"type\":\"tool.call\",\"call_id\":\"\",\"name\":\"bash\"}",
            "{\"type\":\"tool.call\",\"call_id\":\"c1\",\"name\":\"bash\"}", /* a duplicate */
            "{\"type\":\"tool.output\",\"call_id\":\"nope\",\"data\":\"x\"}",
            "{\"type\":\"tool.output\",\"call_id\":\"c1\",\"data\":5}",
            "{\"type\":\"tool.output\",\"call_id\":\"c1\"}",
            "{\"type\":\"tool.result\",\"call_id\":\"nope\",\"ok\":true}",
            "{\"type\":\"tool.result\",\"call_id\":null}",
            "{\"type\":\"exec.create\",\"exec_id\":\"abc\"}",
            "{\"type\":\"exec.create\",\"exec_id\":-4}",
            "{\"type\":\"exec.create\",\"exec_id\":2.5}",
            "{\"type\":\"exec.create\",\"exec_id\":1}", /* a duplicate */
            "{\"type\":\"exec.start\",\"exec_id\":99,\"pid\":5}",
            "{\"type\":\"exec.stats\",\"exec_id\":99,\"cpu_pct\":5}",
            "{\"type\":\"exec.stats\"}",
            "{\"type\":\"exec.exit\",\"exec_id\":99,\"reason\":\"oom\"}",
            "{\"type\":\"exec.remove\",\"exec_id\":{}}",
            "{\"type\":\"turn.start\",\"turn\":\"one\"}",
            "{\"type\":\"turn.end\"}", /* no turn running */
            "{\"type\":\"user.message\"}",
            "{\"type\":\"user.message\",\"text\":[\"hi\"]}",
            "{\"type\":\"model.delta\",\"text\":3}",
            "{\"type\":\"model.delta\",\"text\":\"\"}",
            "{\"type\":\"model.message\",\"content\":7,\"usage\":\"lots\"}",
            "{\"type\":\"session.note\",\"text\":null}",
            "{\"type\":\"operator.kill\",\"exec_id\":\"seven\"}",
        };
        struct viewmodel *vm = *state;
        uint64_t gen;
        size_t i;

        start_session(vm, 0);
        call_start(vm, 1, "c1", "bash", "{\"command\":\"true\"}");
        exec_create(vm, 2, 1, "c1");
        gen = viewmodel_generation(vm);
        viewmodel_take_dirty(vm);
        viewmodel_event(NULL, vm);
        for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
                feed_text(vm, bad[i]);
                if (viewmodel_generation(vm) != gen)
                        fail_msg("changed the model: %s", bad[i]);
        }
        assert_int_equal(viewmodel_take_dirty(vm), 0);
        assert_int_equal(viewmodel_ncalls(vm), 1);
        assert_int_equal(viewmodel_nexecs(vm), 1);
        assert_int_equal(viewmodel_ntranscript(vm), 1); /* the call, inline */
        assert_int_equal(viewmodel_session(vm)->state, VM_RUNNING);

        /* Bad optional fields are skipped, the rest of the event is used. */
        feed_text(vm, "{\"type\":\"exec.start\",\"exec_id\":1,\"pid\":\"x\",\"setup_us\":-3}");
        assert_int_equal(exec_by_id(vm, 1)->state, VM_EXEC_RUNNING);
        assert_int_equal(exec_by_id(vm, 1)->pid, 0);
        exec_stats(vm, 10, 1, 40.0, 100, 2);
        feed_text(vm, "{\"type\":\"exec.stats\",\"exec_id\":1,\"t_ms\":\"soon\",\"cpu_pct\":\"hi\","
                      "\"mem_bytes\":200.0,\"pids\":null}");
        assert_int_equal(exec_by_id(vm, 1)->nsamples, 2);
        assert_true(exec_by_id(vm, 1)->stats.cpu_pct == 40.0);
        assert_int_equal(exec_by_id(vm, 1)->stats.mem_bytes, 200);
        assert_int_equal(exec_by_id(vm, 1)->stats.pids, 2);
        feed_text(vm, "{\"type\":\"tool.result\",\"call_id\":\"c1\",\"ok\":\"yes\",\"exit_code\":0,"
                      "\"duration_ms\":\"long\",\"output\":{}}");
        assert_int_equal(call_by_id(vm, "c1")->state, VM_CALL_OK);
        assert_string_equal(call_by_id(vm, "c1")->output, "");
        /* No t_ms: the time of the last event (10); it started at 1. */
        assert_int_equal(call_by_id(vm, "c1")->duration_ms, 9);

        feed(vm, 20, "session.end", "{s:s}", "status", "failed");
        assert_int_equal(viewmodel_session(vm)->state, VM_FAILED);
        gen = viewmodel_generation(vm);
        feed(vm, 21, "session.end", "{s:s}", "status", "completed"); /* already ended */
        feed(vm, 22, "session.end", "{s:s}", "status", "bogus");
        assert_int_equal(viewmodel_generation(vm), gen);
        assert_int_equal(viewmodel_session(vm)->state, VM_FAILED);
}

static void test_stats_ring(void **state)
{
        struct viewmodel *vm = *state;
        const struct viewmodel_exec *e;
        size_t i;

        exec_create(vm, 0, 3, NULL);
        exec_start(vm, 1, 3, 50);
        for (i = 0; i < VM_HISTORY; i++)
                exec_stats(vm, 10 + i, 3, (double)i, i * 1000, (int)i % 7);
        e = exec_by_id(vm, 3);
        assert_int_equal(viewmodel_exec_nsamples(e), VM_HISTORY);
        assert_true(viewmodel_exec_sample(e, 0)->cpu_pct == 0.0f);
        assert_true(viewmodel_exec_sample(e, VM_HISTORY - 1)->cpu_pct == (float)(VM_HISTORY - 1));
        assert_int_equal(viewmodel_exec_sample_span(e), 1);
        /* Full: pairs merge, each bucket keeping the higher of the two, and
         * the history still starts at the first sample. */
        for (i = VM_HISTORY; i < VM_HISTORY + 10; i++)
                exec_stats(vm, 10 + i, 3, (double)i, i * 1000, (int)i % 7);
        e = exec_by_id(vm, 3);
        assert_int_equal(viewmodel_exec_nsamples(e), VM_HISTORY / 2 + 5);
        assert_int_equal(viewmodel_exec_sample_span(e), 2);
        assert_int_equal(e->nsamples, VM_HISTORY + 10);
        for (i = 0; i < VM_HISTORY / 2 + 5; i++) {
                const struct viewmodel_sample *s = viewmodel_exec_sample(e, i);
                size_t hi = 2 * i + 1;
                assert_true(s->cpu_pct == (float)hi);
                assert_int_equal(s->mem_bytes, hi * 1000);
                assert_int_equal(s->pids, (uint32_t)((2 * i) % 7 > hi % 7 ? (2 * i) % 7 : hi % 7));
        }
        assert_null(viewmodel_exec_sample(e, VM_HISTORY / 2 + 5));
        assert_int_equal(viewmodel_exec_history_ms(e), VM_HISTORY + 9);
        /* Many times over: still the whole life, in at most VM_HISTORY. */
        for (i = VM_HISTORY + 10; i < 1000; i++)
                exec_stats(vm, 10 + i, 3, (double)i, i * 1000, 1);
        e = exec_by_id(vm, 3);
        assert_true(viewmodel_exec_nsamples(e) <= VM_HISTORY);
        assert_true(viewmodel_exec_nsamples(e) > VM_HISTORY / 2);
        assert_int_equal(viewmodel_exec_sample_span(e), 16);
        assert_true(viewmodel_exec_sample(e, 0)->cpu_pct == 15.0f);
        assert_true(viewmodel_exec_sample(e, viewmodel_exec_nsamples(e) - 1)->cpu_pct == 999.0f);
        assert_int_equal(viewmodel_exec_history_ms(e), 999);
        assert_true(e->stats.cpu_pct == 999.0);
}

static void test_generation(void **state)
{
        struct viewmodel *vm = *state;
        uint64_t g;
        unsigned d;

        assert_int_equal(viewmodel_generation(vm), 0);
        assert_int_equal(viewmodel_take_dirty(vm), 0);
        start_session(vm, 0);
        g = viewmodel_generation(vm);
        assert_true(g > 0);
        assert_true(viewmodel_take_dirty(vm) & VM_DIRTY_SESSION);
        assert_int_equal(viewmodel_take_dirty(vm), 0);

        call_start(vm, 5, "c1", "bash", "{\"command\":\"true\"}");
        assert_true(viewmodel_generation(vm) > g);
        assert_true(call_by_id(vm, "c1")->gen == viewmodel_generation(vm));
        d = viewmodel_take_dirty(vm);
        assert_true(d & VM_DIRTY_CALLS);
        assert_true(d & VM_DIRTY_TRANSCRIPT); /* it shows inline there too */
        assert_false(d & VM_DIRTY_EXECS);
        g = viewmodel_generation(vm);

        call_start(vm, 6, "c1", "bash", "{\"command\":\"true\"}"); /* a duplicate */
        call_output(vm, 7, "nobody", "x");
        feed(vm, 8, "turn.end", NULL);
        feed(vm, 8, "no.such.event", NULL);
        assert_int_equal(viewmodel_generation(vm), g);
        assert_int_equal(viewmodel_take_dirty(vm), 0);

        exec_create(vm, 9, 1, "c1");
        assert_int_equal(viewmodel_generation(vm), g + 1);
        d = viewmodel_take_dirty(vm);
        assert_true(d & VM_DIRTY_EXECS);
        assert_true(d & VM_DIRTY_CALLS); /* the call got its execution */
        exec_start(vm, 10, 1, 77);
        exec_start(vm, 11, 1, 77); /* already running */
        assert_int_equal(viewmodel_generation(vm), g + 2);
        exec_stats(vm, 12, 1, 1.0, 1, 1);
        assert_int_equal(viewmodel_generation(vm), g + 3);
        assert_int_equal(exec_by_id(vm, 1)->gen, g + 3);
        assert_int_equal(call_by_id(vm, "c1")->gen, g + 1);
        call_result(vm, 13, "c1", true, 0, 8);
        call_result(vm, 14, "c1", true, 0, 8);
        call_output(vm, 15, "c1", "late");
        assert_int_equal(viewmodel_generation(vm), g + 4);
        feed(vm, 16, "user.message", "{s:s}", "text", "again");
        assert_int_equal(viewmodel_generation(vm), g + 5);
        assert_true(viewmodel_take_dirty(vm) & VM_DIRTY_TRANSCRIPT);
        viewmodel_set_readonly(vm, true);
        assert_true(viewmodel_readonly(vm));
        assert_int_equal(viewmodel_generation(vm), g + 5);
}

static void test_output_cap(void **state)
{
        struct viewmodel *vm = *state;
        const struct viewmodel_call *c;
        char line[64], *big;
        uint64_t total = 0;
        size_t i;

        call_start(vm, 1, "flood", "bash", "{\"command\":\"yes\"}");
        for (i = 0; i < 100000; i++) {
                snprintf(line, sizeof(line), "line %06zu \xc3\xa9t\xc3\xa9\n", i);
                call_output(vm, 2, "flood", line);
                total += strlen(line);
                c = call_by_id(vm, "flood");
                if (c->output_len >= VM_OUTPUT_CAP)
                        fail_msg("kept %zu bytes", c->output_len);
        }
        c = call_by_id(vm, "flood");
        assert_int_equal(c->output_bytes, total);
        assert_true(c->output_dropped);
        assert_true(c->output_len > VM_OUTPUT_CAP / 2 - 4096);
        assert_int_equal(strlen(c->output), c->output_len);
        /* The tail is whole: from the start of a line to the last line. */
        assert_memory_equal(c->output, "line ", 5);
        assert_memory_equal(c->output + c->output_len - strlen(line), line, strlen(line));

        /* One chunk larger than half the cap: its tail, cut on a character. */
        /* "a", then é up to the end but for "z": half the cap back from
         * the end falls inside an é. */
        big = malloc(VM_OUTPUT_CAP + 1);
        assert_non_null(big);
        big[0] = 'a';
        for (i = 1; i + 2 < VM_OUTPUT_CAP; i += 2)
                memcpy(big + i, "\xc3\xa9", 2);
        big[VM_OUTPUT_CAP - 1] = 'z';
        big[VM_OUTPUT_CAP] = '\0';
        call_start(vm, 3, "big", "bash", "{\"command\":\"cat big\"}");
        call_output(vm, 4, "big", big);
        c = call_by_id(vm, "big");
        assert_int_equal(c->output_len, VM_OUTPUT_CAP / 2 - 1);
        assert_int_equal((unsigned char)c->output[0], 0xc3);
        assert_int_equal(c->output[c->output_len - 1], 'z');
        assert_int_equal(c->output_bytes, VM_OUTPUT_CAP);
        assert_true(c->output_dropped);
        free(big);
}

static void test_summaries(void **state)
{
        static const struct {
                const char *name, *args, *want;
        } cases[] = {
            {"bash", "{\"command\":\"ls -la\"}", "bash: ls -la"},
            {"bash", "{\"command\":\"  cd src &&\\n\\tmake\\n\"}", "bash: cd src && make"},
            {"read", "{\"path\":\"src/main.c\",\"offset\":10}", "read: src/main.c"},
            {"edit", "{\"old_str\":\"a\",\"path\":\"x.c\",\"new_str\":\"b\"}", "edit: x.c"},
            {"run_python_code", "{\"code\":\"import os\\nprint(1)\"}",
             "run_python_code: import os print(1)"},
            {"read_cache", "{\"key\":\"answers\"}", "read_cache: answers"},
            {"mystery", "{\"n\":3,\"what\":\"thing\"}", "mystery: thing"},
            {"bash", "{\"command\":\"\\u001b[2Jclear\\u0007\"}", "bash: [2Jclear"},
            {"bash", "{not json", "bash: {not json"},
            {"bash", "", "bash"},
            {"bash", "{}", "bash"},
            {"bash", "{\"command\":\"   \"}", "bash"},
            {"bash", "{\"command\":42}", "bash"},
        };
        struct viewmodel *vm = *state;
        const struct viewmodel_call *c;
        char id[16], longcmd[400];
        size_t i;

        for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
                snprintf(id, sizeof(id), "s%zu", i);
                call_start(vm, i, id, cases[i].name, cases[i].args);
                assert_string_equal(call_by_id(vm, id)->summary, cases[i].want);
        }
        /* Arguments sent as a JSON object rather than text. */
        feed(vm, 50, "tool.call", "{s:s,s:s,s:{s:s}}", "call_id", "obj", "name", "write",
             "arguments", "path", "out.txt");
        c = call_by_id(vm, "obj");
        assert_string_equal(c->summary, "write: out.txt");
        assert_string_equal(c->arguments, "{\"path\":\"out.txt\"}");

        /* Too long for the column: cut on a character, marked with "…". */
        strcpy(longcmd, "{\"command\":\"echo ");
        for (i = 0; i < 100; i++)
                strcat(longcmd, "\xc3\xa9");
        strcat(longcmd, "\"}");
        call_start(vm, 60, "long", "bash", longcmd);
        c = call_by_id(vm, "long");
        assert_true(strlen(c->summary) < VM_SUMMARY_MAX);
        assert_true(strlen(c->summary) > VM_SUMMARY_MAX - 8);
        assert_string_equal(c->summary + strlen(c->summary) - 3, "\xe2\x80\xa6");
        assert_memory_equal(c->summary, "bash: echo \xc3\xa9", 13);
        /* Every kept é is whole. */
        for (i = 11; i < strlen(c->summary) - 3; i += 2)
                assert_memory_equal(c->summary + i, "\xc3\xa9", 2);
}

static void test_new_session_starts_over(void **state)
{
        struct viewmodel *vm = *state;
        uint64_t g;

        /* Executions before the first session (a warm pool) are kept. */
        exec_create(vm, 0, 1, NULL);
        start_session(vm, 1);
        assert_int_equal(viewmodel_nexecs(vm), 1);
        feed(vm, 2, "user.message", "{s:s}", "text", "hi");
        call_start(vm, 3, "c1", "bash", "{\"command\":\"true\"}");
        feed(vm, 4, "session.end", "{s:s}", "status", "max_iterations");
        assert_int_equal(viewmodel_session(vm)->state, VM_MAX_ITERATIONS);
        g = viewmodel_generation(vm);
        feed(vm, 0, "session.start", "{s:s,s:s,s:b}", "session_id", "s-43", "mode", "local",
             "scripted", 1);
        assert_true(viewmodel_generation(vm) > g);
        assert_int_equal(viewmodel_ncalls(vm), 0);
        assert_int_equal(viewmodel_nexecs(vm), 0);
        assert_int_equal(viewmodel_ntranscript(vm), 0);
        assert_int_equal(viewmodel_call_find(vm, "c1"), -1);
        assert_int_equal(viewmodel_exec_find(vm, 1), -1);
        assert_string_equal(viewmodel_session(vm)->id, "s-43");
        assert_string_equal(viewmodel_session(vm)->model, "");
        assert_string_equal(viewmodel_session(vm)->workspace_mode, "");
        assert_true(viewmodel_session(vm)->scripted);
        assert_int_equal(viewmodel_session(vm)->max_turns, 0);
        assert_int_equal(viewmodel_session(vm)->tool_calls, 0);
        assert_int_equal(viewmodel_session(vm)->state, VM_RUNNING);
        call_start(vm, 3, "c1", "bash", "{\"command\":\"true\"}");
        assert_int_equal(viewmodel_call_find(vm, "c1"), 0);
}

static void test_bus_subscriber(void **state)
{
        struct viewmodel *vm = *state;
        struct bus *b = bus_new();

        assert_non_null(b);
        assert_int_equal(bus_subscribe(b, viewmodel_event, vm), 0);
        bus_emit(b, "tool.call",
                 json_pack("{s:s,s:s,s:s}", "call_id", "b1", "name", "read", "arguments",
                           "{\"path\":\"README.md\"}"));
        bus_emit(b, "exec.create", json_pack("{s:i,s:s}", "exec_id", 5, "call_id", "b1"));
        assert_int_equal(viewmodel_ncalls(vm), 1);
        assert_string_equal(viewmodel_call(vm, 0)->summary, "read: README.md");
        assert_int_equal(viewmodel_call(vm, 0)->exec_ids[0], 5);
        bus_free(b);
}

static void test_scale(void **state)
{
        struct viewmodel *vm = *state;
        char id[32];
        size_t i;

        start_session(vm, 0);
        for (i = 0; i < 10000; i++) {
                snprintf(id, sizeof(id), "call_%zu", i);
                call_start(vm, i, id, "bash", "{\"command\":\"echo hi\"}");
                call_output(vm, i, id, "hi\n");
                if (i >= 64)
                        call_result(vm, i, id, true, 0, 1);
        }
        for (i = 0; i < 64; i++) {
                snprintf(id, sizeof(id), "call_%zu", i);
                exec_create(vm, 10000, 1000 + i, id);
                exec_start(vm, 10001, 1000 + i, (int)i + 2);
                exec_stats(vm, 10002, 1000 + i, 1.0, 1 << 20, 1);
        }
        assert_int_equal(viewmodel_ncalls(vm), 10000);
        assert_int_equal(viewmodel_nrunning_calls(vm), 64);
        assert_int_equal(viewmodel_nexecs(vm), 64);
        assert_int_equal(viewmodel_nlive(vm), 64);
        for (i = 0; i < 10000; i++) {
                snprintf(id, sizeof(id), "call_%zu", i);
                assert_int_equal(viewmodel_call_find(vm, id), (long)i);
                assert_string_equal(viewmodel_call(vm, i)->id, id);
        }
        for (i = 0; i < 64; i++) {
                const struct viewmodel_exec *e = exec_by_id(vm, 1000 + i);
                assert_int_equal(e->call, (long)i);
                assert_int_equal(viewmodel_call(vm, i)->exec_ids[0], 1000 + i);
        }
        /* Finishing every other running call leaves exactly the rest. */
        for (i = 0; i < 64; i += 2) {
                snprintf(id, sizeof(id), "call_%zu", i);
                call_result(vm, 15000, id, true, 0, 1);
        }
        assert_int_equal(viewmodel_nrunning_calls(vm), 32);
        for (i = 0; i < 32; i++) {
                const struct viewmodel_call *c = viewmodel_running_call(vm, i);
                assert_int_equal(c->state, VM_CALL_RUNNING);
                assert_int_equal((viewmodel_call_find(vm, c->id) % 2), 1);
        }
        assert_int_equal(viewmodel_call_find(vm, "call_10000"), -1);
        assert_int_equal(viewmodel_exec_find(vm, 1064), -1);
        for (i = 0; i < 64; i++)
                exec_exit(vm, 20000, 1000 + i, "exited", 0, 0);
        assert_int_equal(viewmodel_nlive(vm), 0);
        assert_int_equal(viewmodel_session(vm)->tool_calls, 10000);
}

/* Past the session's bounds a call has no execution yet: it shows as
 * queued until its exec.create, and a cancelled one ends interrupted. */
static void test_queued_calls(void **state)
{
        struct viewmodel *vm = *state;
        struct viewmodel_host h;

        start_session(vm, 0);
        feed(vm, 1, "turn.start", "{s:i}", "turn", 1);
        call_start(vm, 10, "c1", "bash", "{\"command\":\"sleep 1\"}");
        call_start(vm, 10, "c2", "bash", "{\"command\":\"sleep 1\"}");
        call_start(vm, 10, "c3", "bash", "{\"command\":\"sleep 1\"}");
        exec_create(vm, 11, 1, "c1");
        viewmodel_host(vm, &h);
        assert_int_equal(h.queued, 2);
        assert_false(viewmodel_call_queued(call_by_id(vm, "c1")));
        assert_true(viewmodel_call_queued(call_by_id(vm, "c2")));
        assert_true(viewmodel_call_queued(call_by_id(vm, "c3")));
        exec_start(vm, 12, 1, 100);
        exec_exit(vm, 500, 1, "exited", 0, 0);
        call_result(vm, 500, "c1", true, 0, 490);
        feed(vm, 501, "exec.remove", "{s:I,s:I}", "exec_id", (json_int_t)1, "teardown_us",
             (json_int_t)300);
        exec_create(vm, 501, 2, "c2");
        assert_false(viewmodel_call_queued(call_by_id(vm, "c2")));
        assert_true(viewmodel_call_queued(call_by_id(vm, "c3")));
        feed(vm, 600, "operator.interrupt", "{s:i}", "turn", 1);
        call_result(vm, 600, "c3", false, -1, 590);
        assert_false(viewmodel_call_queued(call_by_id(vm, "c3")));
        assert_int_equal(call_by_id(vm, "c3")->state, VM_CALL_INTERRUPTED);
        assert_int_equal(call_by_id(vm, "c3")->nexecs, 0);
        assert_string_equal(viewmodel_call_label(call_by_id(vm, "c2")), "running");
        /* kill-all says so in tool.result */
        call_start(vm, 700, "c4", "bash", "{\"command\":\"true\"}");
        assert_string_equal(viewmodel_call_label(call_by_id(vm, "c4")), "queued");
        feed(vm, 701, "tool.result", "{s:s,s:b,s:s,s:i,s:b}", "call_id", "c4", "ok", 0, "output",
             "cancelled before it started (killed by the operator)", "exit_code", -1, "cancelled",
             1);
        assert_true(call_by_id(vm, "c4")->cancelled);
        assert_string_equal(viewmodel_call_label(call_by_id(vm, "c4")), "cancelled");
}

/* The last transcript entry of a kind, or NULL. */
static const struct viewmodel_entry *last_entry(struct viewmodel *vm, enum vm_entry_kind kind)
{
        size_t i = viewmodel_ntranscript(vm);

        while (i-- > 0)
                if (viewmodel_entry(vm, i)->kind == kind)
                        return viewmodel_entry(vm, i);
        return NULL;
}

static void approval_request(struct viewmodel *vm, uint64_t t, const char *id, const char *tool,
                             const char *args)
{
        feed(vm, t, "approval.request", "{s:s,s:s,s:s,s:s,s:s,s:{s:I}}", "call_id", id, "tool",
             tool, "arguments", args, "where", "local: on this host, not isolated", "asked_by",
             "policy host", "limits", "timeout_ms", (json_int_t)30000);
}

/* A call that waits for the operator: "approval" in its label, counted in
 * the host totals, never "queued"; then allowed (with a rule added and
 * edited arguments) or denied with a reason, each in the transcript. */
static void test_approvals(void **state)
{
        struct viewmodel *vm = *state;
        const struct viewmodel_call *c;
        const struct viewmodel_entry *e;
        struct viewmodel_host h;

        start_session(vm, 0);
        feed(vm, 1, "turn.start", "{s:i}", "turn", 1);
        call_start(vm, 10, "a1", "bash", "{\"command\":\"git status\"}");
        call_start(vm, 10, "a2", "bash", "{\"command\":\"rm -rf build\"}");
        call_start(vm, 10, "a3", "read", "{\"path\":\"x\"}");
        approval_request(vm, 11, "a1", "bash", "{\"command\":\"git status\"}");
        approval_request(vm, 11, "a2", "bash", "{\"command\":\"rm -rf build\"}");
        /* a request for a call never seen changes nothing */
        uint64_t gen = viewmodel_generation(vm);
        approval_request(vm, 11, "nope", "bash", "{}");
        assert_int_equal(viewmodel_generation(vm), gen);

        c = call_by_id(vm, "a1");
        assert_int_equal(c->approval, VM_APPROVAL_WAITING);
        assert_true(viewmodel_call_waiting(c));
        assert_false(viewmodel_call_queued(c));
        assert_string_equal(viewmodel_call_label(c), "approval");
        assert_string_equal(c->where, "local: on this host, not isolated");
        assert_string_equal(c->asked_by, "policy host");
        assert_int_equal(c->approval_limits.timeout_ms, 30000);
        viewmodel_host(vm, &h);
        assert_int_equal(h.approvals, 2);
        assert_int_equal(h.queued, 1); /* a3: no execution yet, asks nothing */
        assert_int_equal(viewmodel_next_approval(vm, -1), 0);
        assert_int_equal(viewmodel_next_approval(vm, 0), 1);
        assert_int_equal(viewmodel_next_approval(vm, 1), -1);

        /* allowed once the command was edited, with a rule for the like */
        feed(vm, 20, "approval.decision", "{s:s,s:s,s:s,s:I,s:s,s:s}", "call_id", "a1", "decision",
             "allow", "by", "operator", "waited_ms", (json_int_t)9, "arguments",
             "{\"command\":\"git status --short\"}", "rule_added", "bash:git status*");
        c = call_by_id(vm, "a1");
        assert_int_equal(c->approval, VM_APPROVAL_ALLOWED);
        assert_false(viewmodel_call_waiting(c));
        assert_string_equal(c->decided_by, "operator");
        assert_string_equal(c->rule_added, "bash:git status*");
        assert_string_equal(c->edited, "{\"command\":\"git status --short\"}");
        assert_string_equal(c->summary, "bash: git status --short");
        assert_int_equal(c->waited_ms, 9);
        assert_string_equal(viewmodel_call_label(c), "queued"); /* now it waits for a sandbox */
        e = last_entry(vm, VM_ENTRY_APPROVAL);
        assert_non_null(e);
        assert_non_null(strstr(e->text, "operator allowed bash: git status --short"));
        assert_non_null(strstr(e->text, "rule bash:git status*"));
        viewmodel_host(vm, &h);
        assert_int_equal(h.approvals, 1);
        assert_int_equal(viewmodel_next_approval(vm, -1), 1);

        /* denied with a reason; its result says so and the label stays "denied" */
        feed(vm, 30, "approval.decision", "{s:s,s:s,s:s,s:I,s:s}", "call_id", "a2", "decision",
             "deny", "by", "operator", "waited_ms", (json_int_t)19, "reason", "not the build dir");
        feed(vm, 30, "tool.result", "{s:s,s:b,s:s,s:i}", "call_id", "a2", "ok", 0, "output",
             "denied by the operator: not the build dir", "exit_code", -1);
        c = call_by_id(vm, "a2");
        assert_int_equal(c->approval, VM_APPROVAL_DENIED);
        assert_string_equal(c->reason, "not the build dir");
        assert_int_equal(c->state, VM_CALL_ERROR);
        assert_string_equal(viewmodel_call_label(c), "denied");
        e = last_entry(vm, VM_ENTRY_APPROVAL);
        assert_string_equal(e->text, "operator denied bash: rm -rf build: not the build dir");
        viewmodel_host(vm, &h);
        assert_int_equal(h.approvals, 0);
        assert_int_equal(viewmodel_next_approval(vm, -1), -1);
        /* a second decision for the same call is ignored */
        gen = viewmodel_generation(vm);
        feed(vm, 31, "approval.decision", "{s:s,s:s,s:s}", "call_id", "a1", "decision", "deny",
             "by", "operator");
        assert_int_equal(viewmodel_generation(vm), gen);
        assert_int_equal(call_by_id(vm, "a1")->approval, VM_APPROVAL_ALLOWED);
}

/* A rule decides at once: its allow adds no transcript line, its deny
 * does; an interrupt denies a waiting call, and a call still waiting at the
 * session's end no longer counts. */
static void test_approval_rules_and_interrupt(void **state)
{
        struct viewmodel *vm = *state;
        const struct viewmodel_entry *e;
        struct viewmodel_host h;
        size_t n;

        start_session(vm, 0);
        feed(vm, 1, "turn.start", "{s:i}", "turn", 1);
        call_start(vm, 10, "r1", "bash", "{\"command\":\"ls\"}");
        n = viewmodel_ntranscript(vm);
        feed(vm, 11, "approval.decision", "{s:s,s:s,s:s,s:s,s:I}", "call_id", "r1", "decision",
             "allow", "by", "rule", "rule", "bash:ls*", "waited_ms", (json_int_t)0);
        assert_int_equal(call_by_id(vm, "r1")->approval, VM_APPROVAL_ALLOWED);
        assert_string_equal(call_by_id(vm, "r1")->rule, "bash:ls*");
        assert_int_equal(viewmodel_ntranscript(vm), n);
        call_start(vm, 12, "r2", "bash", "{\"command\":\"curl x\"}");
        feed(vm, 12, "approval.decision", "{s:s,s:s,s:s,s:s}", "call_id", "r2", "decision", "deny",
             "by", "rule", "rule", "bash:curl*");
        e = last_entry(vm, VM_ENTRY_APPROVAL);
        assert_non_null(e);
        assert_string_equal(e->text, "rule 'bash:curl*' denied bash: curl x");

        call_start(vm, 20, "w1", "write", "{\"path\":\"a.txt\",\"content\":\"x\"}");
        call_start(vm, 20, "w2", "write", "{\"path\":\"b.txt\",\"content\":\"y\"}");
        approval_request(vm, 21, "w1", "write", "{\"path\":\"a.txt\",\"content\":\"x\"}");
        approval_request(vm, 21, "w2", "write", "{\"path\":\"b.txt\",\"content\":\"y\"}");
        feed(vm, 30, "operator.interrupt", "{s:i}", "turn", 1);
        feed(vm, 30, "approval.decision", "{s:s,s:s,s:s,s:s}", "call_id", "w1", "decision", "deny",
             "by", "operator", "reason", "interrupted by the operator");
        feed(vm, 30, "tool.result", "{s:s,s:b,s:s,s:b}", "call_id", "w1", "ok", 0, "output",
             "denied: interrupted by the operator while it waited for approval", "cancelled", 1);
        assert_string_equal(viewmodel_call_label(call_by_id(vm, "w1")), "denied");
        viewmodel_host(vm, &h);
        assert_int_equal(h.approvals, 1);
        feed(vm, 40, "session.end", "{s:s}", "status", "interrupted");
        viewmodel_host(vm, &h);
        assert_int_equal(h.approvals, 0);
        assert_false(viewmodel_call_waiting(call_by_id(vm, "w2")));
        assert_string_equal(viewmodel_call_label(call_by_id(vm, "w2")), "interrupted");
}

int main(void)
{
#define T(f) cmocka_unit_test_setup_teardown(f, setup, teardown)
        const struct CMUnitTest tests[] = {
            T(test_two_turn_session),  T(test_approvals),     T(test_approval_rules_and_interrupt),
            T(test_concurrent_calls),  T(test_exec_reasons),  T(test_host_totals),
            T(test_interrupted_call),  T(test_operator_kill), T(test_errors_and_notes),
            T(test_malformed_ignored), T(test_stats_ring),    T(test_generation),
            T(test_output_cap),        T(test_summaries),     T(test_new_session_starts_over),
            T(test_bus_subscriber),    T(test_scale),         T(test_queued_calls),
        };
#undef T
        return cmocka_run_group_tests_name("viewmodel", tests, NULL, NULL);
}
