/* listview: filtered, sorted rows of a list pane (see listview.h). The
 * order is recomputed per frame from the view model: sorting 10,000 rows
 * costs well under a millisecond, and nothing here can go stale. */
#include "tui/listview.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tui/text.h"

const char *listview_sort_name(enum list_sort s)
{
        static const char *const names[LIST_SORT_COUNT] = {"arrival", "cpu", "memory", "age",
                                                           "state"};
        return (unsigned)s < LIST_SORT_COUNT ? names[s] : "arrival";
}

/* The execution a call ran in last, or NULL. */
static const struct viewmodel_exec *call_exec(const struct viewmodel *vm,
                                              const struct viewmodel_call *c)
{
        long k = c->nexecs > 0 ? viewmodel_exec_find(vm, c->exec_ids[c->nexecs - 1]) : -1;

        return k >= 0 ? viewmodel_exec(vm, (size_t)k) : NULL;
}

bool listview_matches(const struct list_view *lv, const struct viewmodel *vm, bool execs, long item)
{
        char id[32];

        if (lv->filter[0] == '\0')
                return true;
        if (!execs) {
                const struct viewmodel_call *c = viewmodel_call(vm, (size_t)item);
                return text_contains(c->summary, lv->filter) ||
                       text_contains(viewmodel_call_state_name(c->state), lv->filter);
        }
        const struct viewmodel_exec *e = viewmodel_exec(vm, (size_t)item);
        snprintf(id, sizeof(id), "#%llu", (unsigned long long)e->id);
        return text_contains(id, lv->filter) || text_contains(e->label, lv->filter) ||
               text_contains(viewmodel_exec_state_name(e->state), lv->filter) ||
               (e->call >= 0 &&
                text_contains(viewmodel_call(vm, (size_t)e->call)->summary, lv->filter));
}

/* ---- ordering ---- */

struct order {
        const struct viewmodel *vm;
        bool execs;
        enum list_sort sort;
};

/* What a row sorts by, larger first (age: smaller first, by negating). */
static double key_of(const struct order *o, long item)
{
        const struct viewmodel_exec *e;
        const struct viewmodel_call *c = NULL;

        if (o->execs) {
                e = viewmodel_exec(o->vm, (size_t)item);
        } else {
                c = viewmodel_call(o->vm, (size_t)item);
                e = call_exec(o->vm, c);
        }
        switch (o->sort) {
        case LIST_SORT_CPU:
                if (e == NULL)
                        return -1;
                /* live ones above ended ones, each by its own measure */
                return viewmodel_exec_live(e) ? 1e12 + e->stats.cpu_pct : (double)e->cpu_ms;
        case LIST_SORT_MEMORY:
                if (e == NULL)
                        return -1;
                return (double)(viewmodel_exec_live(e) ? e->stats.mem_bytes : e->mem_peak_bytes);
        case LIST_SORT_AGE:
                return -(double)(c != NULL ? c->start_ms : e->created_ms);
        case LIST_SORT_STATE:
                if (c != NULL)
                        return c->state == VM_CALL_RUNNING ? 100 : -(double)c->state;
                return viewmodel_exec_live(e) ? 100 : -(double)e->state;
        default:
                return 0;
        }
}

static int compare(const void *x, const void *y, void *ud)
{
        const struct order *o = ud;
        long a = *(const long *)x, b = *(const long *)y;
        double ka = key_of(o, a), kb = key_of(o, b);

        if (ka != kb)
                return ka > kb ? -1 : 1;
        return a < b ? -1 : a > b; /* ties keep arrival order */
}

int listview_build(struct list_view *lv, const struct viewmodel *vm, bool execs)
{
        size_t n = execs ? viewmodel_nexecs(vm) : viewmodel_ncalls(vm), i;
        struct order o = {vm, execs, lv->sort};

        if (n > lv->cap) {
                long *grown = realloc(lv->rows, n * sizeof(*grown));
                if (grown == NULL)
                        return -ENOMEM;
                lv->rows = grown;
                lv->cap = n;
        }
        lv->n = 0;
        for (i = 0; i < n; i++)
                if (listview_matches(lv, vm, execs, (long)i))
                        lv->rows[lv->n++] = (long)i;
        if (lv->sort != LIST_SORT_ARRIVAL && lv->n > 1)
                qsort_r(lv->rows, lv->n, sizeof(*lv->rows), compare, &o);
        return 0;
}

long listview_row(const struct list_view *lv, long item)
{
        size_t i;

        if (lv->sort == LIST_SORT_ARRIVAL && lv->filter[0] == '\0')
                return item >= 0 && (size_t)item < lv->n ? item : -1;
        for (i = 0; i < lv->n; i++)
                if (lv->rows[i] == item)
                        return (long)i;
        return -1;
}

long listview_move(const struct list_view *lv, long item, long delta)
{
        long row = listview_row(lv, item);

        if (lv->n == 0)
                return -1;
        if (row < 0)
                return lv->rows[0];
        row += delta;
        if (row < 0)
                row = 0;
        if (row >= (long)lv->n)
                row = (long)lv->n - 1;
        return lv->rows[row];
}

void listview_free(struct list_view *lv)
{
        free(lv->rows);
        lv->rows = NULL;
        lv->n = lv->cap = 0;
}
