/* Unit tests of the list panes' rows: a real view model fed events, then
 * the filter, each sort order, moving by rows and items hidden. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "tui/listview.h"

static uint64_t seq;

static void feed(struct viewmodel *vm, uint64_t t, const char *type, const char *fmt, ...)
{
        json_t *ev;
        va_list ap;

        va_start(ap, fmt);
        ev = json_vpack_ex(NULL, 0, fmt, ap);
        va_end(ap);
        assert_non_null(ev);
        json_object_set_new(ev, "seq", json_integer((json_int_t)++seq));
        json_object_set_new(ev, "t_ms", json_integer((json_int_t)t));
        json_object_set_new(ev, "type", json_string(type));
        viewmodel_event(ev, vm);
        json_decref(ev);
}

/* A call with one execution: its command, live CPU and memory, and
 * whether it has ended (then cpu_ms and peak instead). */
static void call(struct viewmodel *vm, uint64_t t, int n, const char *cmd, double cpu, long mem,
                 bool ended)
{
        char id[16], args[128];

        snprintf(id, sizeof(id), "c%d", n);
        snprintf(args, sizeof(args), "{\"command\": \"%s\"}", cmd);
        feed(vm, t, "tool.call", "{s:s,s:s,s:s}", "call_id", id, "name", "bash", "arguments", args);
        feed(vm, t, "exec.create", "{s:I,s:s,s:s,s:{s:I}}", "exec_id", (json_int_t)n, "call_id", id,
             "isolation", "sandbox", "limits", "memory_bytes", (json_int_t)1 << 30);
        feed(vm, t + 1, "exec.start", "{s:I,s:i,s:I}", "exec_id", (json_int_t)n, "pid", 100 + n,
             "setup_us", (json_int_t)1000);
        feed(vm, t + 2, "exec.stats", "{s:I,s:f,s:I,s:I,s:I,s:i}", "exec_id", (json_int_t)n,
             "cpu_pct", cpu, "cpu_ms", (json_int_t)(cpu * 10), "mem_bytes", (json_int_t)mem,
             "mem_peak_bytes", (json_int_t)mem, "pids", 1);
        if (ended)
                feed(vm, t + 3, "exec.exit", "{s:I,s:s,s:i,s:i,s:I,s:I,s:I}", "exec_id",
                     (json_int_t)n, "reason", "exited", "exit_code", 0, "signal", 0, "wall_ms",
                     (json_int_t)5, "cpu_ms", (json_int_t)(cpu * 10), "mem_peak_bytes",
                     (json_int_t)mem);
}

static struct viewmodel *sample(void)
{
        struct viewmodel *vm = viewmodel_new();

        assert_non_null(vm);
        call(vm, 100, 1, "make build", 10, 5 << 20, true); /* ended: 100 ms CPU */
        call(vm, 200, 2, "python3 leak.py", 30, 900 << 20, false);
        call(vm, 300, 3, "yes > /dev/null", 95, 1 << 20, false);
        call(vm, 400, 4, "make test", 50, 50 << 20, true); /* ended: 500 ms CPU */
        return vm;
}

static void assert_rows(const struct list_view *lv, const long *want, size_t n)
{
        size_t i;

        assert_int_equal(lv->n, n);
        for (i = 0; i < n; i++)
                assert_int_equal(lv->rows[i], want[i]);
}

static void test_arrival_and_filter(void **state)
{
        struct viewmodel *vm = sample();
        struct list_view lv = {0};

        assert_int_equal(listview_build(&lv, vm, false), 0);
        assert_rows(&lv, (long[]){0, 1, 2, 3}, 4);
        snprintf(lv.filter, sizeof(lv.filter), "MAKE");
        listview_build(&lv, vm, false);
        assert_rows(&lv, (long[]){0, 3}, 2); /* case-blind, on the summary */
        listview_build(&lv, vm, true);
        assert_rows(&lv, (long[]){0, 3}, 2); /* executions by their call */
        snprintf(lv.filter, sizeof(lv.filter), "#3");
        listview_build(&lv, vm, true);
        assert_rows(&lv, (long[]){2}, 1); /* executions by their number */
        snprintf(lv.filter, sizeof(lv.filter), "running");
        listview_build(&lv, vm, true);
        assert_rows(&lv, (long[]){1, 2}, 2); /* and by their state */
        snprintf(lv.filter, sizeof(lv.filter), "nothing like it");
        listview_build(&lv, vm, false);
        assert_int_equal(lv.n, 0);
        assert_int_equal(listview_move(&lv, 0, 1), -1);
        listview_free(&lv);
        viewmodel_free(vm);
}

static void test_sorts(void **state)
{
        struct viewmodel *vm = sample();
        struct list_view lv = {0};

        /* CPU: live ones first by CPU now, then ended ones by CPU time */
        lv.sort = LIST_SORT_CPU;
        listview_build(&lv, vm, true);
        assert_rows(&lv, (long[]){2, 1, 3, 0}, 4);
        listview_build(&lv, vm, false);
        assert_rows(&lv, (long[]){2, 1, 3, 0}, 4);
        lv.sort = LIST_SORT_MEMORY;
        listview_build(&lv, vm, true);
        assert_rows(&lv, (long[]){1, 3, 0, 2}, 4);
        lv.sort = LIST_SORT_AGE;
        listview_build(&lv, vm, true);
        assert_rows(&lv, (long[]){0, 1, 2, 3}, 4);
        lv.sort = LIST_SORT_STATE; /* running first, ties in arrival order */
        listview_build(&lv, vm, true);
        assert_rows(&lv, (long[]){1, 2, 0, 3}, 4);
        assert_string_equal(listview_sort_name(LIST_SORT_MEMORY), "memory");
        listview_free(&lv);
        viewmodel_free(vm);
}

static void test_rows_and_moves(void **state)
{
        struct viewmodel *vm = sample();
        struct list_view lv = {.sort = LIST_SORT_CPU};

        listview_build(&lv, vm, true); /* rows: 2 1 3 0 */
        assert_int_equal(listview_row(&lv, 2), 0);
        assert_int_equal(listview_row(&lv, 0), 3);
        assert_int_equal(listview_move(&lv, 2, 1), 1);
        assert_int_equal(listview_move(&lv, 1, 2), 0);
        assert_int_equal(listview_move(&lv, 1, 100), 0);
        assert_int_equal(listview_move(&lv, 1, -100), 2);
        snprintf(lv.filter, sizeof(lv.filter), "make");
        listview_build(&lv, vm, true); /* rows: 3 0 */
        assert_int_equal(listview_row(&lv, 2), -1);
        assert_int_equal(listview_move(&lv, 2, 1), 3); /* a hidden item: the first row */
        listview_free(&lv);
        viewmodel_free(vm);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test(test_arrival_and_filter),
            cmocka_unit_test(test_sorts),
            cmocka_unit_test(test_rows_and_moves),
        };
        return cmocka_run_group_tests_name("listview", tests, NULL, NULL);
}
