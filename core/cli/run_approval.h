/* run_approval: how a headless session (`proctor run`) answers the calls
 * its approval policy asks about. On a terminal, one prompt per call on
 * stderr, answered on stdin ([y]es, [n]o with a reason, [a]lways with a
 * rule). With --json, approval.request events go out on stdout with the
 * rest, and decisions come back on stdin as JSON lines:
 *   {"type":"approval.decision","call_id":"...","decision":"allow"|"deny",
 *    "reason":"...","arguments":"...","rule":"..."}
 * (reason, arguments and rule optional). A line that is not such a decision,
 * or names no waiting call, gets an `error` event. Once stdin ends, every
 * call that asks is denied with a reason: never a hang. */
#ifndef PROCTOR_RUN_APPROVAL_H
#define PROCTOR_RUN_APPROVAL_H

#include <stdbool.h>
#include <uv.h>

#include "core/session/session.h"

struct run_approval;

/* json: decisions as JSON lines; else prompts on the terminal (stdin must
 * be one). Subscribes to `bus`; reads stdin on `loop` once asked. */
struct run_approval *run_approval_new(uv_loop_t *loop, struct bus *bus, struct session *s,
                                      bool json);
/* Stops reading stdin (before the loop's last run). */
void run_approval_close(struct run_approval *ra);
void run_approval_free(struct run_approval *ra);

#endif
