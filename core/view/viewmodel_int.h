/* viewmodel_int: the view model's state, shared by viewmodel.c (which
 * folds events into it) and viewmodel_read.c (what the screens read of
 * it). Internal to core/view. */
#ifndef PROCTOR_VIEWMODEL_INT_H
#define PROCTOR_VIEWMODEL_INT_H

#include <stddef.h>
#include <stdint.h>

#include "core/view/viewmodel.h"

#define NELEM(a) (sizeof(a) / sizeof((a)[0]))

/* An open-addressing index from a key to a position in an array. Keys are
 * not stored: a slot holds the key's hash and the position, and the caller
 * compares the element at that position with the key. */
struct vm_slot {
        uint32_t hash;
        uint32_t pos1; /* position + 1; 0 for an empty slot */
};

struct vm_map {
        struct vm_slot *slots;
        size_t cap, n; /* cap: a power of two, or 0 */
};

/* Positions in an array, unordered, with O(1) removal by swapping. */
struct vm_set {
        size_t *pos;
        size_t n, cap;
};

struct viewmodel {
        struct viewmodel_session s;
        struct viewmodel_entry *entries;
        size_t nentries, entries_cap;
        struct viewmodel_call *calls;
        size_t ncalls, calls_cap;
        struct viewmodel_exec *execs;
        size_t nexecs, execs_cap;
        struct vm_map call_map, exec_map;
        struct vm_set running; /* calls */
        struct vm_set live;    /* executions */
        long open_entry;       /* the streaming assistant entry, or -1 */
        struct viewmodel_warm warm[VM_WARM_MAX];
        size_t nwarm;
        uint64_t gen, last_t;
        unsigned dirty;
        bool readonly;
};

/* Where the call (the execution) of that id is in its array, or -1. */
long vm_call_index(const struct viewmodel *vm, const char *id);
long vm_exec_index(const struct viewmodel *vm, uint64_t id);

#endif
