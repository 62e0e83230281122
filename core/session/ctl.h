/* ctl: a running session's socket, so that it can be seen and steered from
 * elsewhere: `proctor ls` asks each for its status, a client attaches to
 * get the events so far and then the live stream, and sends the
 * operator's commands. A unix socket in the user's runtime directory
 * ($XDG_RUNTIME_DIR/proctor/, else /tmp/proctor-UID/, 0700), reachable by
 * the same user or root only (SO_PEERCRED, not just the modes).
 *
 * The protocol: JSON lines both ways. A client's first line says what it
 * wants:
 *   {"type":"status"}  one status line back, then the connection ends
 *   {"type":"attach","read_only":false}  a ctl.hello line, the session's
 *       events so far (its trace), then every event as it comes
 * An attached client that is not read-only may then send commands:
 *   {"type":"kill","exec_id":N}   {"type":"signal","exec_id":N,"signal":15}
 *   {"type":"pause","exec_id":N}  {"type":"resume","exec_id":N}
 *   {"type":"interrupt"}          {"type":"prompt","text":"..."}
 *   {"type":"approval.decision","call_id":"...","decision":"allow"|"deny",...}
 * whose effects come back as the session's own events; a command that
 * cannot be carried out gets {"type":"error","message":...} (to that
 * client alone). A client that does not read is cut off once 8 MiB wait
 * for it: the session never waits for a client. */
#ifndef PROCTOR_CTL_H
#define PROCTOR_CTL_H

#include <stdbool.h>
#include <stddef.h>
#include <uv.h>

#include "core/session/session.h"

#define CTL_BACKLOG_MAX (8u << 20) /* bytes waiting for one client */

struct ctl;

/* What a front end does for commands only it can carry out (NULL: refused
 * with a reason): a follow-up prompt goes through the supervisor's own
 * prompt so that its screen follows. `clients` (may be NULL) is told when
 * a client attaches or leaves, to show how many watch. */
struct ctl_hooks {
        int (*prompt)(void *ud, const char *text, char *err, size_t errlen);
        void *ud;
        void (*clients)(void *ud);
};

/* The directory the sockets live in, made 0700 when missing; refused when
 * it is a symbolic link, not a directory, not the user's or open to
 * others. 0 or -errno with err. */
int ctl_dir(char *buf, size_t len, char *err, size_t errlen);

/* Listens for the session (its id names the socket). `kind`: "run" or
 * "supervisor"; `trace_path`: where its events so far are (may be NULL).
 * 0, or -errno with err: the session runs on, unreachable. */
int ctl_open(uv_loop_t *loop, struct bus *bus, struct session *s, const char *kind,
             const char *trace_path, const struct ctl_hooks *hooks, struct ctl **out, char *err,
             size_t errlen);

/* Stops listening (the socket file goes), ends every client's stream, and
 * frees itself once its handles are closed (run the loop). */
void ctl_close(struct ctl *c);

/* Clients attached now, and (read_only, may be NULL) how many of them are
 * read-only. Every attached client gets a line
 * {"type":"ctl.clients","clients":N,"read_only":M} when one attaches or
 * leaves. */
unsigned ctl_clients(const struct ctl *c, unsigned *read_only);

#endif
