/* agent: the loop. Send the conversation to the model (streaming), show the
 * deltas, run the tool calls it asks for (independent ones concurrently,
 * results back in call order), append the results, repeat until the model
 * answers without tool calls. Interruptible at any moment; every tool call
 * always gets a result. Everything on the caller's libuv loop. */
#ifndef PROCTOR_AGENT_H
#define PROCTOR_AGENT_H

#include <stdbool.h>
#include <stdint.h>

#include <jansson.h>

#include "core/util/bus.h"
#include "core/session/approval.h"
#include "core/tools/dispatch.h"
#include "core/model/provider.h"

enum agent_status {
        AGENT_COMPLETED,
        AGENT_INTERRUPTED,
        AGENT_FAILED,
        AGENT_MAX_ITERATIONS,
};

const char *agent_status_name(enum agent_status s);

struct agent_config {
        struct provider *provider;
        struct bus *bus;
        struct dispatch_ctx *dx;
        uint64_t max_iterations;   /* turns in the whole session; 0: 100 */
        size_t output_cap;         /* characters of tool output for the model; 0: default */
        const char *system_prompt; /* NULL: none */
        const json_t *tools;       /* offered to the model; NULL: tools_schemas() */
        /* Whether a call may run before it runs (NULL: every call runs).
         * A call the policy asks about waits, holding no execution, after
         * an approval.request event until agent_approve answers it; when
         * no front end can answer (can_ask false) it is denied at once with
         * a result that says why. */
        struct approval *approval;
        bool can_ask;
        /* The conversation so far (a resumed session's): chat messages sent
         * after the system prompt, before the first prompt's; NULL: none.
         * Copied by agent_new. */
        const json_t *history;
};

struct agent_totals {
        uint64_t turns;
        uint64_t tool_calls;
        int64_t prompt_tokens;
        int64_t completion_tokens;
};

struct agent;

struct agent *agent_new(const struct agent_config *cfg);
/* Only while idle. */
void agent_free(struct agent *a);

/* Adds a user message and runs turns until the sequence ends; on_end is
 * called once with how. -EBUSY while a sequence runs. */
int agent_prompt(struct agent *a, const char *text, void (*on_end)(enum agent_status, void *),
                 void *ud);

/* Aborts the model call in flight and kills the running executions; the
 * sequence ends interrupted once every call has its result. */
void agent_interrupt(struct agent *a);

/* The operator kills one execution of the running turn. 0, or -ESRCH. */
int agent_kill_exec(struct agent *a, uint64_t exec_id);

/* Kills every running execution of the turn and cancels its calls that
 * have not started (queued for an execution, or waiting for an earlier
 * call): each gets an error result saying so. Returns how many executions
 * it killed; *cancelled (may be NULL) how many calls it cancelled. */
unsigned agent_kill_all(struct agent *a, unsigned *cancelled);

/* The operator's answer to an approval.request: allow (with `arguments`,
 * the call's arguments as edited, or NULL as the model sent them) or deny
 * (`reason` may be NULL; the model reads "denied by the operator: REASON");
 * rule_added, the rule the operator added with it, goes in the event; `by`
 * says who decided: "operator", or "policy" for a call no answer can come
 * for.
 * 0; -ENOENT when no call of that id waits; -EINVAL with err when the
 * edited arguments are not valid for the tool (the call still waits). */
int agent_approve(struct agent *a, const char *call_id, bool allow, const char *by,
                  const char *reason, const char *arguments, const char *rule_added, char *err,
                  size_t errlen);
/* Calls waiting for the operator's answer. */
unsigned agent_waiting(const struct agent *a);

bool agent_busy(const struct agent *a);
const struct agent_totals *agent_totals(const struct agent *a);

#endif
