/* listview: the rows a list pane shows: its items (tool calls or
 * executions) that pass the operator's filter, in the chosen order. Pure:
 * reads the view model, never draws; selections stay item indices, so a
 * row keeps its identity while the order changes under it. */
#ifndef PROCTOR_LISTVIEW_H
#define PROCTOR_LISTVIEW_H

#include <stdbool.h>
#include <stddef.h>

#include "core/view/viewmodel.h"

enum list_sort {
        LIST_SORT_ARRIVAL, /* as they came (the default) */
        LIST_SORT_CPU,     /* busiest first: live CPU, else CPU time */
        LIST_SORT_MEMORY,  /* largest first: live memory, else peak */
        LIST_SORT_AGE,     /* oldest first */
        LIST_SORT_STATE,   /* running first, then by how they ended */
        LIST_SORT_COUNT,
};

#define LIST_FILTER_MAX 64

struct list_view {
        enum list_sort sort;
        char filter[LIST_FILTER_MAX]; /* "" shows all; else a case-blind substring */
        long *rows;                   /* item indices, in display order */
        size_t n, cap;
};

/* What the operator's sort is called: "arrival", "cpu", ... */
const char *listview_sort_name(enum list_sort s);

/* Recomputes the rows of the calls (execs false) or executions list.
 * Returns 0 or -ENOMEM (the old rows are kept). */
int listview_build(struct list_view *lv, const struct viewmodel *vm, bool execs);

/* The row of an item, or -1 when the filter hides it. */
long listview_row(const struct list_view *lv, long item);

/* The item `delta` rows away from `item` (clamped to the rows); the first
 * row's item when `item` is not shown; -1 when there are no rows. */
long listview_move(const struct list_view *lv, long item, long delta);

/* True when the text of the item matches the filter (always with none). */
bool listview_matches(const struct list_view *lv, const struct viewmodel *vm, bool execs,
                      long item);

void listview_free(struct list_view *lv);

#endif
