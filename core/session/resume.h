/* resume: a new session that goes on with the conversation of an ended
 * one, rebuilt from its trace. Finds the trace (by session id in the
 * sessions directory, or by path), reads it within bounds and turns its
 * events back into the chat messages the agent sends; never writes it. */
#ifndef PROCTOR_RESUME_H
#define PROCTOR_RESUME_H

#include <jansson.h>
#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>
#include <time.h>

#include "core/session/options.h"

/* A trace larger than this is refused rather than read. */
#define RESUME_TRACE_MAX (64u << 20)
/* One line of a trace: a whole answer (core/util/bounds.h's BOUNDS_ANSWER)
 * with every byte escaped still fits. */
#define RESUME_LINE_MAX (48u << 20)
/* Earlier sessions followed through resumed_from, this one included. */
#define RESUME_DEPTH_MAX 16

struct resume {
        char path[PATH_MAX];      /* the trace, as found */
        char session_id[160];     /* the earlier session's id ("" when unknown) */
        char workspace[PATH_MAX]; /* where it worked ("" when unknown) */
        char mode_from[200];      /* "the resumed session (there: --mode)" */
        char model[160];          /* its model as a spec ("" when unknown) */
        json_t *start;            /* its session.start, or NULL */
        json_t *messages;         /* the conversation so far, without a system message */
        /* the direct trace's conversation as events (user.message,
         * model.message, session.note, tool.call, tool.result), without
         * their t_ms: what the supervisor shows of the earlier session */
        json_t *events;
        unsigned lines, bad;      /* lines read; lines skipped as not valid events */
        unsigned unfinished;      /* tool calls given a result saying they did not finish */
        bool ended;               /* its session.end was read */
        char lost[PATH_MAX + 64]; /* an earlier trace of the chain that could not be read */
        /* while reading: the last assistant message's calls still without a result */
        json_t *open_calls, *open_results;
};

/* An empty conversation to feed lines into (resume_line, resume_done). */
struct resume *resume_new(void);
/* One line of a trace (newline optional). A line that is not a JSON object
 * with a "type" is counted in `bad` and skipped. */
void resume_line(struct resume *r, const char *line, size_t n);
/* The end of the trace: a last turn cut short is closed (every tool call
 * gets a result) so that the conversation is whole. */
void resume_done(struct resume *r);
void resume_free(struct resume *r);

/* Finds and reads the trace `what` (a session id or a path): the whole
 * chain through resumed_from, the oldest session's messages first. Errors
 * name the problem: no such session, an unreadable or oversized trace, a
 * session still running (a process has its trace open). 0 or -errno with
 * err filled. */
int resume_load(const char *what, struct resume **out, char *err, size_t errlen);

/* Applies the earlier session's settings to `o` where the command line did
 * not give them (options_given): mode, model, workspace and its mode, the
 * limits, max-parallel, max-iterations, image and approval policy. */
void resume_apply(struct resume *r, struct options *o);

/* What a person resuming must know, one sentence per call of fn: which
 * session goes on and how much of it; lines skipped, calls that had not
 * finished, a session that did not end cleanly, an earlier trace lost;
 * and the workspace it goes on in when that is not the current directory
 * or not the earlier session's. Call after resume_apply. */
void resume_notes(const struct resume *r, const struct options *o,
                  void (*fn)(const char *line, void *ud), void *ud);

/* The pid of a process (of this user) that has `path` open, or 0. */
pid_t resume_trace_holder(const char *path);

/* One earlier session of a workspace, as the setup screen lists it. */
struct resume_brief {
        char id[160];
        char path[PATH_MAX];
        char prompt[120]; /* its first prompt, cut */
        time_t when;      /* the trace's last change */
        bool ended;
};

/* The newest sessions (at most max) that worked in `workspace` (a resolved
 * path), newest first, from the sessions directory: all of them, or only
 * those whose trace ends with session.end. Returns how many. */
int resume_recent(const char *workspace, bool ended_only, struct resume_brief *out, int max);

#endif
