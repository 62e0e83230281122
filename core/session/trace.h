/* trace: the session's record, one JSON event per line (JSONL), written as
 * the events happen, and its text summary for triage. A trace never holds
 * an API key: secret-named fields and key values are removed on write. */
#ifndef PROCTOR_TRACE_H
#define PROCTOR_TRACE_H

#include <jansson.h>
#include <stddef.h>

struct trace;

/* Opens a trace for writing. `path` NULL means a new file (0600, O_EXCL)
 * $XDG_STATE_HOME/proctor/sessions/<session_id>.jsonl (default under
 * ~/.local/state), creating the missing directories with mode 0700 and
 * refusing a proctor/ or sessions/ that is a symbolic link or not owned by
 * the user. An explicit path is truncated and made 0600 when it exists,
 * but refused when it is a symbolic link or another user's regular file.
 * Returns 0 or -errno with a reason, naming the path, in err. */
int trace_open(const char *path, const char *session_id, struct trace **out, char *err,
               size_t errlen);

/* As trace_open, but the file is made (or emptied) only when the first
 * event comes, so a supervisor left on its setup screen leaves no empty
 * trace behind. What can be refused without touching the file (a planted
 * sessions directory, a --trace path that is a symbolic link or another
 * user's file) is refused here; a later failure to make it shows in
 * trace_status and trace_error like a failed write. */
int trace_prepare(const char *path, const char *session_id, struct trace **out, char *err,
                  size_t errlen);

const char *trace_path(const struct trace *t);

/* A bus_fn (ud is the trace). Appends the event as one compact JSON line
 * with one write(2) on an O_APPEND descriptor, never through a buffer, so
 * every event it has returned from survives a crash or SIGKILL as a whole
 * line. A kill that lands during a write can leave that last line cut (Linux
 * stops a file write at a page boundary when the writer is killed); replay
 * reports such a line and reads the rest.
 *
 * Members whose name looks like a secret (env_is_secret, or Authorization)
 * and that hold a string, object or array are dropped; numbers are kept
 * (usage counts such as "prompt_tokens"). A string equal to the value of
 * PROCTOR_API_KEY, OPENAI_API_KEY or HF_TOKEN is dropped; one containing
 * such a value (8 bytes or longer) has it replaced by "[redacted]". The
 * caller's event is never modified. */
void trace_event(const json_t *event, void *ud);

/* The event as a trace keeps it (the same redaction as trace_event): a
 * new reference, to the event itself when nothing needed removing; NULL
 * when out of memory. For every other copy of the events that leaves the
 * process (the session socket). */
json_t *trace_redacted(const json_t *event);

/* 0, or the -errno of the first write that failed (disk full...), so the
 * session can tell the operator that the trace is incomplete. That failure
 * ends the trace: the file keeps the whole lines written before it (a line
 * the disk took only part of is cut off again) and no later event is
 * written. */
int trace_status(const struct trace *t);

/* "" while the trace is whole; after a failure what to tell the operator:
 * "trace PATH: No space left on device at event 812 (tool.output): not
 * recorded from there on (811 events kept)". */
const char *trace_error(const struct trace *t);

void trace_close(struct trace *t);

/* `proctor replay --summary TRACE` (argv[0] is "replay"): prints, per turn,
 * the tool calls with their arguments, duration, outcome and execution exit,
 * then how the session ended. Lines that are not valid JSON are reported on
 * stderr as "TRACE:LINE: not valid JSON (...)" and skipped. Returns 0 when
 * every line was read, 1 when some were not, 2 on usage errors. */
int trace_summary_main(int argc, char **argv);

#endif
