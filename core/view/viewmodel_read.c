/* viewmodel_read: what the screens read of the view model (see
 * viewmodel.h): the session, the transcript, the calls, the executions
 * and their samples, and the host's totals. Nothing here changes it but
 * its read-only flag and dirty bits. */
#include "core/view/viewmodel.h"

#include <string.h>

#include "core/view/viewmodel_int.h"

void viewmodel_set_readonly(struct viewmodel *vm, bool ro)
{
        vm->readonly = ro;
}

bool viewmodel_readonly(const struct viewmodel *vm)
{
        return vm->readonly;
}

uint64_t viewmodel_generation(const struct viewmodel *vm)
{
        return vm->gen;
}

unsigned viewmodel_take_dirty(struct viewmodel *vm)
{
        unsigned d = vm->dirty;

        vm->dirty = 0;
        return d;
}

const struct viewmodel_session *viewmodel_session(const struct viewmodel *vm)
{
        return &vm->s;
}

size_t viewmodel_ntranscript(const struct viewmodel *vm)
{
        return vm->nentries;
}

const struct viewmodel_entry *viewmodel_entry(const struct viewmodel *vm, size_t i)
{
        return i < vm->nentries ? &vm->entries[i] : NULL;
}

size_t viewmodel_ncalls(const struct viewmodel *vm)
{
        return vm->ncalls;
}

const struct viewmodel_call *viewmodel_call(const struct viewmodel *vm, size_t i)
{
        return i < vm->ncalls ? &vm->calls[i] : NULL;
}

long viewmodel_call_find(const struct viewmodel *vm, const char *call_id)
{
        return vm_call_index(vm, call_id);
}

bool viewmodel_call_waiting(const struct viewmodel_call *c)
{
        return c->state == VM_CALL_RUNNING && c->approval == VM_APPROVAL_WAITING;
}

bool viewmodel_call_queued(const struct viewmodel_call *c)
{
        /* an MCP tool (mcp__SERVER__TOOL) runs in its server's execution,
         * never in one of its own: it waits for nothing; a call waiting
         * for approval waits for the operator, not for an execution */
        return c->state == VM_CALL_RUNNING && c->nexecs == 0 && strncmp(c->name, "mcp__", 5) != 0 &&
               c->approval != VM_APPROVAL_WAITING;
}

const char *viewmodel_call_label(const struct viewmodel_call *c)
{
        if (viewmodel_call_waiting(c))
                return "approval";
        if (c->approval == VM_APPROVAL_DENIED && c->state != VM_CALL_RUNNING)
                return "denied";
        if (c->cancelled)
                return "cancelled";
        return viewmodel_call_queued(c) ? "queued" : viewmodel_call_state_name(c->state);
}

long viewmodel_next_approval(const struct viewmodel *vm, long after)
{
        long best = -1;
        size_t i;

        for (i = 0; i < vm->running.n; i++) {
                long k = (long)vm->running.pos[i];
                if (k > after && (best < 0 || k < best) && viewmodel_call_waiting(&vm->calls[k]))
                        best = k;
        }
        return best;
}

size_t viewmodel_nrunning_calls(const struct viewmodel *vm)
{
        return vm->running.n;
}

const struct viewmodel_call *viewmodel_running_call(const struct viewmodel *vm, size_t i)
{
        return i < vm->running.n ? &vm->calls[vm->running.pos[i]] : NULL;
}

size_t viewmodel_nexecs(const struct viewmodel *vm)
{
        return vm->nexecs;
}

const struct viewmodel_exec *viewmodel_exec(const struct viewmodel *vm, size_t i)
{
        return i < vm->nexecs ? &vm->execs[i] : NULL;
}

long viewmodel_exec_find(const struct viewmodel *vm, uint64_t exec_id)
{
        return vm_exec_index(vm, exec_id);
}

size_t viewmodel_nlive(const struct viewmodel *vm)
{
        return vm->live.n;
}

const struct viewmodel_exec *viewmodel_live(const struct viewmodel *vm, size_t i)
{
        return i < vm->live.n ? &vm->execs[vm->live.pos[i]] : NULL;
}

size_t viewmodel_exec_nsamples(const struct viewmodel_exec *e)
{
        return e->hist_n__;
}

const struct viewmodel_sample *viewmodel_exec_sample(const struct viewmodel_exec *e, size_t i)
{
        return i < e->hist_n__ ? &e->hist__[i] : NULL;
}

uint64_t viewmodel_exec_history_ms(const struct viewmodel_exec *e)
{
        return e->hist_t1__ - e->hist_t0__;
}

uint32_t viewmodel_exec_sample_span(const struct viewmodel_exec *e)
{
        return e->hist_span__ ? e->hist_span__ : 1;
}

void viewmodel_host(const struct viewmodel *vm, struct viewmodel_host *out)
{
        size_t i;

        *out = (struct viewmodel_host){0};
        for (i = 0; i < vm->live.n; i++) {
                const struct viewmodel_exec *e = &vm->execs[vm->live.pos[i]];
                if (e->state != VM_EXEC_RUNNING)
                        continue;
                out->running++;
                out->cpu_pct += e->stats.cpu_pct;
                out->mem_bytes += e->stats.mem_bytes;
        }
        for (i = 0; i < vm->running.n; i++) {
                out->queued += viewmodel_call_queued(&vm->calls[vm->running.pos[i]]);
                out->approvals += viewmodel_call_waiting(&vm->calls[vm->running.pos[i]]);
        }
}
