/* viewmodel: what the TUI and replay draw, folded from the session's event
 * stream: the session, the transcript, the tool calls, the executions and
 * the host totals. UI-agnostic: it never draws, never touches a process, and
 * never trusts an event (unknown types and bad fields are ignored). */
#ifndef PROCTOR_VIEWMODEL_H
#define PROCTOR_VIEWMODEL_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define VM_HISTORY     120        /* stats buckets kept per execution (whole life) */
#define VM_OUTPUT_CAP  (1u << 20) /* bytes of a call's output kept in memory */
#define VM_SUMMARY_MAX 96         /* bytes of a call's one-line summary, with NUL */

/* Dirty flags: which sections changed since viewmodel_take_dirty. */
#define VM_DIRTY_SESSION    1u
#define VM_DIRTY_TRANSCRIPT 2u
#define VM_DIRTY_CALLS      4u
#define VM_DIRTY_EXECS      8u /* also the host totals */

enum vm_session_state {
        VM_IDLE, /* no session.start yet */
        VM_RUNNING,
        VM_COMPLETED,
        VM_INTERRUPTED,
        VM_FAILED,
        VM_MAX_ITERATIONS,
};

/* Interrupted: a failed result after operator.interrupt (or one that says
 * "interrupted": true), or still running when the session ended. */
enum vm_call_state { VM_CALL_RUNNING, VM_CALL_OK, VM_CALL_ERROR, VM_CALL_INTERRUPTED };

enum vm_exec_state {
        VM_EXEC_CREATING,
        VM_EXEC_RUNNING,
        VM_EXEC_PAUSED, /* between exec.pause and exec.resume: still live */
        /* The rest are the exit reasons of exec.exit. */
        VM_EXEC_EXITED,
        VM_EXEC_SIGNALED,
        VM_EXEC_TIMEOUT,
        VM_EXEC_OOM,
        VM_EXEC_CPU_LIMIT,
        VM_EXEC_PIDS_LIMIT,
        VM_EXEC_KILLED,
        VM_EXEC_SETUP_FAILED,
        VM_EXEC_DISK_LIMIT,
};

enum vm_entry_kind {
        VM_ENTRY_USER,      /* user.message */
        VM_ENTRY_ASSISTANT, /* model.delta ... model.message */
        VM_ENTRY_NOTE,      /* session.note */
        VM_ENTRY_ERROR,     /* model.error */
        VM_ENTRY_INTERRUPT, /* operator.interrupt */
        VM_ENTRY_KILL,      /* operator.kill */
        VM_ENTRY_TOOL,      /* tool.call: a call shown inline (call), text "" */
        VM_ENTRY_APPROVAL,  /* approval.decision of the operator, or a denying rule */
};

/* Whether a call waited for the operator (approval.request) and how that
 * ended (approval.decision); a call a rule allowed at once is ALLOWED. */
enum vm_approval { VM_APPROVAL_NONE, VM_APPROVAL_WAITING, VM_APPROVAL_ALLOWED, VM_APPROVAL_DENIED };

/* Zero in a field: no limit, or not reported. */
struct viewmodel_limits {
        uint64_t memory_bytes, cpu_ms, timeout_ms, pids, tmpfs_bytes, output_bytes, disk_bytes;
};

/* Strings are never NULL ("" when unknown). */
struct viewmodel_session {
        char *id, *mode, *model, *workspace, *workspace_mode, *version;
        bool scripted; /* the model is a script (demo, script:FILE) */
        struct viewmodel_limits limits;
        /* sandbox limits no cgroup enforces ("memory, cpu, pids"), "" */
        char limits_per_process[32];
        enum vm_session_state state;
        uint64_t start_ms;   /* t_ms of session.start */
        uint64_t elapsed_ms; /* latest t_ms; session.end's duration_ms once ended */
        int64_t turn;        /* current turn, 0 before the first */
        int64_t max_turns;   /* session.start max_iterations, 0 when unknown */
        bool in_turn;        /* between turn.start and turn.end */
        /* Summed over model.message usage; session.end's usage, the
         * session's total, replaces the sum. */
        uint64_t tokens_in, tokens_out;
        uint64_t tool_calls; /* tool.call seen; session.end's count once ended */
};

struct viewmodel_entry {
        enum vm_entry_kind kind;
        char *text; /* NUL-terminated; len bytes */
        size_t len;
        uint64_t t_ms;
        int64_t turn;        /* the session's turn when it was added */
        bool open;           /* an assistant message still streaming */
        size_t ntool_calls;  /* assistant: tool calls the message asked for */
        bool refusal;        /* assistant: the text is the model's refusal */
        int http_status;     /* error: 0 when none */
        int64_t retry_in_ms; /* error: -1 when no retry (final) */
        uint64_t exec_id;    /* kill */
        long call;           /* tool: index of its call */
        uint64_t gen;        /* generation of its last change */
        size_t cap__;        /* internal */
};

struct viewmodel_call {
        char *id, *name;
        char *arguments;              /* raw JSON text as the model sent it */
        char summary[VM_SUMMARY_MAX]; /* one line: "bash: ls -la" */
        enum vm_call_state state;
        int64_t turn;
        uint64_t start_ms, end_ms, duration_ms; /* end and duration: 0 while running */
        int exit_code;                          /* -1 when none reported */
        bool truncated;                         /* the result to the model was capped */
        bool cancelled; /* ended before it started (tool.result "cancelled") */
        /* The output as streamed (tool.output), or tool.result's output when
         * nothing was streamed. Only the tail is kept past VM_OUTPUT_CAP. */
        char *output; /* NUL-terminated; output_len bytes */
        size_t output_len;
        uint64_t output_bytes;         /* received in total */
        bool output_dropped;           /* the head was dropped to stay within the cap */
        uint64_t output_dropped_lines; /* newlines in that head: the kept output's
                                          first line is line output_dropped_lines + 1 */
        uint64_t *exec_ids;            /* executions that ran for it */
        size_t nexecs;
        /* Approval: the request's where, asked_by ("policy host") and
         * limits; the decision's by ("operator", "rule", "policy"), rule,
         * reason, rule_added and edited arguments ("" when none). */
        enum vm_approval approval;
        char *where, *asked_by;
        struct viewmodel_limits approval_limits;
        char *decided_by, *rule, *reason, *rule_added, *edited;
        uint64_t asked_ms, waited_ms;
        uint64_t gen;
        /* internal */
        size_t output_cap__, execs_cap__, running_pos__;
        bool streamed__, interrupt__;
};

struct viewmodel_stats {
        double cpu_pct;
        uint64_t cpu_ms, mem_bytes, mem_peak_bytes, pids;
};

struct viewmodel_sample {
        float cpu_pct;
        uint32_t pids;
        uint64_t mem_bytes;
};

struct viewmodel_exec {
        uint64_t id;
        char *call_id; /* "" outside a session */
        char *label;   /* exec.create's label ("mcp server NAME"), "" for none */
        bool warm;     /* it took a sandbox started ahead (exec.create's warm) */
        char *image;   /* exec.create's image (the --image REF of its root), "" for the host's */
        /* A container runtime's own lifecycle (exec.state): "created",
         * "running", "exited", "removing"; "" for native executions. */
        char runtime_state[12];
        long call;    /* index of that call, -1 when unknown */
        bool sandbox; /* isolation: sandbox, else none */
        struct viewmodel_limits limits;
        enum vm_exec_state state;
        bool removed;
        bool kill_requested; /* operator.kill seen */
        uint64_t created_ms, started_ms, exited_ms, removed_ms;
        uint64_t setup_us, teardown_us;
        int pid;
        struct viewmodel_stats stats; /* the last sample */
        uint64_t nsamples;            /* received in total */
        /* exec.exit */
        int exit_code, signal;
        uint64_t wall_ms, cpu_ms, mem_peak_bytes;
        bool truncated;
        char *error;           /* "" when none */
        uint64_t output_bytes; /* exec.output */
        uint64_t gen;
        /* internal: the history, read through viewmodel_exec_sample */
        struct viewmodel_sample *hist__;
        uint32_t hist_n__, hist_cap__, hist_span__, hist_fill__;
        uint64_t hist_t0__, hist_t1__;
        size_t live_pos__;
};

struct viewmodel_host {
        unsigned running;   /* executions started and not yet exited */
        unsigned queued;    /* calls waiting for an execution (viewmodel_call_queued) */
        unsigned approvals; /* calls waiting for the operator's approval */
        double cpu_pct;     /* summed over those */
        uint64_t mem_bytes;
};

/* A warm sandbox waiting for a call (exec.warm): not an execution yet. */
struct viewmodel_warm {
        bool ready; /* its command runs (else it is still starting) */
        uint64_t mem_bytes, cpu_ms;
};
#define VM_WARM_MAX 8

struct viewmodel;

/* NULL when out of memory. */
struct viewmodel *viewmodel_new(void);
void viewmodel_free(struct viewmodel *vm);

/* The bus subscriber (a bus_fn; ud is the view model). Applies one event;
 * anything it cannot use is ignored. A session.start after a session began
 * starts the model over. */
void viewmodel_event(const json_t *ev, void *ud);

/* Replay sets this; the model only stores it for the UI to read. */
void viewmodel_set_readonly(struct viewmodel *vm, bool ro);
bool viewmodel_readonly(const struct viewmodel *vm);

/* Bumped on every change, never on an ignored event: redraw when it moved. */
uint64_t viewmodel_generation(const struct viewmodel *vm);
/* The VM_DIRTY_* sections changed since the last call; clears them. */
unsigned viewmodel_take_dirty(struct viewmodel *vm);

/* What the accessors return is the model's own: read it, never write it;
 * pointers stay valid until the next event. */
const struct viewmodel_session *viewmodel_session(const struct viewmodel *vm);

size_t viewmodel_ntranscript(const struct viewmodel *vm);
const struct viewmodel_entry *viewmodel_entry(const struct viewmodel *vm, size_t i);

/* Calls in the order of their tool.call. */
size_t viewmodel_ncalls(const struct viewmodel *vm);
const struct viewmodel_call *viewmodel_call(const struct viewmodel *vm, size_t i);
/* Index of the call with this id, or -1. */
long viewmodel_call_find(const struct viewmodel *vm, const char *call_id);
/* A call that has not finished and has no execution yet: it waits in the
 * session's queue (or for an earlier call on the same path), since an
 * execution's exec.create comes only when it may start. */
bool viewmodel_call_queued(const struct viewmodel_call *c);
/* A running call whose approval.request has had no decision yet. */
bool viewmodel_call_waiting(const struct viewmodel_call *c);
/* The first call (in the order of their tool.call) waiting for approval,
 * after index `after` (-1: from the start); -1 when none. */
long viewmodel_next_approval(const struct viewmodel *vm, long after);
/* The call's state in a word: "queued", "cancelled", "approval" (waiting
 * for it) and "denied" besides the state names. */
const char *viewmodel_call_label(const struct viewmodel_call *c);
/* Calls still running (queued ones included), in no particular order. */
size_t viewmodel_nrunning_calls(const struct viewmodel *vm);
const struct viewmodel_call *viewmodel_running_call(const struct viewmodel *vm, size_t i);

/* Executions in the order of their exec.create. */
size_t viewmodel_nexecs(const struct viewmodel *vm);
const struct viewmodel_exec *viewmodel_exec(const struct viewmodel *vm, size_t i);
long viewmodel_exec_find(const struct viewmodel *vm, uint64_t exec_id);
/* Executions not yet exited (creating, running or paused), in no particular order. */
size_t viewmodel_nlive(const struct viewmodel *vm);
const struct viewmodel_exec *viewmodel_live(const struct viewmodel *vm, size_t i);
/* The history of an execution's stats over its whole life, in at most
 * VM_HISTORY buckets, oldest first (NULL past the end): each bucket holds
 * the highest of viewmodel_exec_sample_span() samples (1 until the buckets
 * first fill, then 2, 4...; the newest bucket may hold fewer), and
 * together they cover viewmodel_exec_history_ms(), the time from the first
 * sample to the last. */
size_t viewmodel_exec_nsamples(const struct viewmodel_exec *e);
const struct viewmodel_sample *viewmodel_exec_sample(const struct viewmodel_exec *e, size_t i);
uint32_t viewmodel_exec_sample_span(const struct viewmodel_exec *e);
uint64_t viewmodel_exec_history_ms(const struct viewmodel_exec *e);

void viewmodel_host(const struct viewmodel *vm, struct viewmodel_host *out);
/* The warm sandboxes waiting now, oldest first (the last exec.warm, at
 * most VM_WARM_MAX); *out points into the view model. */
size_t viewmodel_warm(const struct viewmodel *vm, const struct viewmodel_warm **out);

/* Names for the states, as the events spell them ("running", "oom"). */
const char *viewmodel_session_state_name(enum vm_session_state s);
const char *viewmodel_call_state_name(enum vm_call_state s);
const char *viewmodel_exec_state_name(enum vm_exec_state s);
/* Not yet exited: creating, running or paused. */
bool viewmodel_exec_live(const struct viewmodel_exec *e);

#endif
