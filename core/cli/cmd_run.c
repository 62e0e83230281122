/* cmd_run: `proctor run [opts] PROMPT`, a whole session headless. The
 * assistant's text streams to stdout and progress to stderr, or with --json
 * every event goes to stdout as JSON lines. Ctrl-C interrupts the turn (a
 * second one is not needed: the session always winds down promptly). What
 * the model says never drives the user's terminal (core/view/termout). */
#include "core/cli/cmd_run.h"

#include <errno.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/util/buf.h"
#include "core/cli/cmd_images.h"
#include "core/cli/run_approval.h"
#include "core/session/config.h"
#include "core/session/ctl.h"
#include "core/view/exec_report.h"
#include "core/session/options.h"
#include "core/session/resume.h"
#include "core/session/session.h"
#include "core/view/termout.h"
#include "core/session/trace.h"
#include "exec/image/image.h"

struct run {
        struct session *s;
        uv_signal_t sig[3];
        bool json, idle, at_line_start;
        bool reprint;            /* a retry broke the answer's line on the terminal */
        struct termout out, err; /* the model's text; progress, which quotes the model */
        enum agent_status status;
        /* The streaming answer as printed, to print again what a retry
         * keeps when it takes the rest back (stdout cannot unprint). */
        char *answer;
        size_t answer_len, answer_cap;
        /* executions no tool call owns (MCP servers: exec.create's label):
         * their end is told by their own events, not as an execution's */
        uint64_t labelled[16];
        size_t nlabelled;
        bool quota_warned;
        const char *approval_from;  /* why the approval policy is what it is */
        struct run_approval *asker; /* answers approval requests, or NULL */
        struct ctl *ctl;            /* the session's socket, or NULL */
        unsigned unasked;           /* calls denied: the policy asked, no one could answer */
};

static bool labelled(const struct run *r, uint64_t id)
{
        size_t i;

        for (i = 0; i < r->nlabelled; i++)
                if (r->labelled[i] == id)
                        return true;
        return false;
}

static const char *str(const json_t *ev, const char *key)
{
        const char *v = json_string_value(json_object_get(ev, key));

        return v != NULL ? v : "";
}

/* Text on one short line, for progress output: the arguments of a call
 * (all of them), a failed call's output (its first line). */
static void one_line(const char *text, bool first_line, char *out, size_t len)
{
        size_t i, o = 0;

        for (i = 0; text[i] != '\0' && !(first_line && text[i] == '\n') && o + 4 < len; i++)
                out[o++] = text[i] == '\n' || text[i] == '\t' ? ' ' : text[i];
        if (text[i] != '\0' && !(first_line && text[i] == '\n' && text[i + 1] == '\0'))
                memcpy(out + o, "...", 3), o += 3;
        out[o] = '\0';
}

static void newline_if_needed(struct run *r)
{
        termout_end(&r->out);
        if (!r->at_line_start) {
                bus_write_all(1, "\n", 1);
                r->at_line_start = true;
        }
}

/* Out of memory, the answer is cut short: it is also on stdout. */
static void answer_add(struct run *r, const char *t, size_t n)
{
        (void)buf_append(&r->answer, &r->answer_len, &r->answer_cap, t, n);
}

static void print_answer(struct run *r, const char *t, size_t n)
{
        if (n == 0)
                return;
        termout_write(&r->out, t, n);
        r->at_line_start = t[n - 1] == '\n';
}

/* A wait in words: "1 s", "0.5 s", "20 s". */
static void wait_words(int64_t ms, char *out, size_t len)
{
        snprintf(out, len, "%g s", (double)(ms < 0 ? 0 : ms) / 1000.0);
}

static void print_message_end(struct run *r, const json_t *ev)
{
        char note[160];

        newline_if_needed(r);
        r->answer_len = 0;
        r->reprint = false;
        if (json_is_true(json_object_get(ev, "refusal")))
                termout_printf(&r->err, "proctor: the model refused (its refusal is above)\n");
        if (chat_finish_note(str(ev, "finish_reason"), note, sizeof(note)))
                termout_printf(&r->err, "proctor: %s\n", note);
}

/* A retry's answer differs from the printed one: the kept part again,
 * on a line of its own, and the retry goes on from there. */
static void print_discard(struct run *r, const json_t *ev)
{
        json_int_t bytes = json_integer_value(json_object_get(ev, "bytes"));

        if (bytes <= 0)
                return;
        r->answer_len = (size_t)bytes < r->answer_len ? r->answer_len - (size_t)bytes : 0;
        r->reprint = false;
        newline_if_needed(r);
        termout_printf(&r->err, "proctor: the retried answer differs from the one above; "
                                "from its start again:\n");
        print_answer(r, r->answer, r->answer_len);
}

/* Without cgroups a sandbox's memory, CPU and pids limits hold per
 * process only: a person running it must know, not just `doctor`. */
static void print_fallback(const json_t *missing)
{
        size_t i, n = json_array_size(missing);
        char what[64] = "";

        if (n == 0)
                return;
        for (i = 0; i < n; i++)
                snprintf(what + strlen(what), sizeof(what) - strlen(what), "%s%s",
                         i == 0       ? ""
                         : i + 1 == n ? " and "
                                      : ", ",
                         json_string_value(json_array_get(missing, i)));
        fprintf(stderr,
                "proctor: warning: no cgroup here for %s: those limits hold per process only "
                "(rlimits), not for a sandbox as a whole (see proctor doctor)\n",
                what);
}

/* Human-readable progress: the assistant's words on stdout, the rest on
 * stderr, one line per step. */
static void print_human(const json_t *ev, void *ud)
{
        struct run *r = ud;
        const char *type = str(ev, "type");
        char args[100], wait[32];

        if (strcmp(type, "model.delta") == 0) {
                const char *t = str(ev, "text");
                if (r->reprint)
                        print_answer(r, r->answer, r->answer_len);
                r->reprint = false;
                answer_add(r, t, strlen(t));
                print_answer(r, t, strlen(t));
        } else if (strcmp(type, "model.discard") == 0) {
                print_discard(r, ev);
        } else if (strcmp(type, "session.start") == 0) {
                /* Where the mode came from, so that a changed config file
                 * never switches a session to the host unnoticed. */
                termout_printf(&r->err,
                               "proctor: session %s: %s mode (from %s)%s, model %s, workspace %s, "
                               "approval %s (%s)\n",
                               str(ev, "session_id"), str(ev, "mode"), str(ev, "mode_from"),
                               strcmp(str(ev, "mode"), "local") == 0
                                   ? ", tools run on this host, not isolated"
                                   : "",
                               str(ev, "model"), str(ev, "workspace"),
                               str(json_object_get(ev, "approval"), "policy"), r->approval_from);
                print_fallback(json_object_get(ev, "limits_per_process"));
        } else if (strcmp(type, "model.message") == 0) {
                print_message_end(r, ev);
        } else if (strcmp(type, "tool.call") == 0) {
                one_line(str(ev, "arguments"), false, args, sizeof(args));
                termout_printf(&r->err, "  -> %s %s\n", str(ev, "name"), args);
        } else if (strcmp(type, "tool.result") == 0) {
                bool ok = json_is_true(json_object_get(ev, "ok"));

                /* why a call failed, in its own words: the first line */
                one_line(ok ? "" : str(ev, "output"), true, args, sizeof(args));
                termout_printf(&r->err, "  <- %s %s (%lld ms)%s%s\n", str(ev, "call_id"),
                               ok ? "ok" : "error",
                               (long long)json_integer_value(json_object_get(ev, "duration_ms")),
                               args[0] ? ": " : "", args);
        } else if (strcmp(type, "exec.create") == 0) {
                if (json_is_false(json_object_get(ev, "disk_quota")) && !r->quota_warned) {
                        r->quota_warned = true;
                        fprintf(stderr, "proctor: warning: %s\n", DISK_QUOTA_REMOTE_TEXT);
                }
                if (str(ev, "label")[0] != '\0' &&
                    r->nlabelled < sizeof(r->labelled) / sizeof(r->labelled[0]))
                        r->labelled[r->nlabelled++] =
                            (uint64_t)json_integer_value(json_object_get(ev, "exec_id"));
        } else if (strcmp(type, "exec.exit") == 0 && strcmp(str(ev, "reason"), "exited") != 0 &&
                   !labelled(r, (uint64_t)json_integer_value(json_object_get(ev, "exec_id")))) {
                termout_printf(&r->err, "     execution %lld: %s\n",
                               (long long)json_integer_value(json_object_get(ev, "exec_id")),
                               str(ev, "reason"));
        } else if (strcmp(type, "model.error") == 0) {
                bool final = json_is_true(json_object_get(ev, "final"));

                /* A retry goes on with the answer: into a file or a pipe it
                 * must arrive whole, as if nothing happened; on a terminal
                 * the error gets a line of its own and the answer starts
                 * again below it. */
                if (final || isatty(1)) {
                        r->reprint = !final && !r->at_line_start;
                        newline_if_needed(r);
                }
                wait_words(json_integer_value(json_object_get(ev, "retry_in_ms")), wait,
                           sizeof(wait));
                if (final)
                        termout_printf(&r->err, "proctor: model error: %s\n", str(ev, "message"));
                else
                        termout_printf(&r->err, "proctor: model error: %s; retrying in %s\n",
                                       str(ev, "message"), wait);
        } else if (strcmp(type, "mcp.server") == 0 && strcmp(str(ev, "state"), "starting") != 0) {
                /* a server that fails or dies must not go unnoticed */
                termout_printf(&r->err, "proctor: MCP server %s: %s, %lld tools%s%s\n",
                               str(ev, "server"), str(ev, "state"),
                               (long long)json_integer_value(json_object_get(ev, "tools")),
                               str(ev, "error")[0] ? ": " : "", str(ev, "error"));
        } else if (strcmp(type, "approval.decision") == 0 &&
                   strcmp(str(ev, "by"), "operator") != 0) {
                const char *rule = str(ev, "rule"), *why = str(ev, "reason");
                termout_printf(&r->err, "     %s %s by %s%s%s%s%s%s\n", str(ev, "call_id"),
                               strcmp(str(ev, "decision"), "allow") == 0 ? "allowed" : "denied",
                               str(ev, "by"), rule[0] ? " '" : "", rule, rule[0] ? "'" : "",
                               why[0] ? ": " : "", why);
        } else if (strcmp(type, "session.note") == 0) {
                termout_printf(&r->err, "proctor: note to the model: %s\n", str(ev, "text"));
        } else if (strcmp(type, "operator.interrupt") == 0) {
                newline_if_needed(r);
                termout_printf(&r->err, "proctor: interrupted\n");
        } else if (strcmp(type, "session.end") == 0) {
                newline_if_needed(r);
                termout_printf(
                    &r->err, "proctor: session %s: %lld turns, %lld tool calls, %.1f s\n",
                    str(ev, "status"), (long long)json_integer_value(json_object_get(ev, "turns")),
                    (long long)json_integer_value(json_object_get(ev, "tool_calls")),
                    (double)json_integer_value(json_object_get(ev, "duration_ms")) / 1000.0);
        }
}

/* Calls the policy asked about that no one could answer. */
static void count_unasked(const json_t *ev, void *ud)
{
        struct run *r = ud;

        if (strcmp(str(ev, "type"), "approval.decision") == 0 &&
            strcmp(str(ev, "by"), "policy") == 0 && strcmp(str(ev, "decision"), "deny") == 0)
                r->unasked++;
}

/* The policy: as asked for, else `host` when someone at a terminal can
 * answer and `never` for scripts (what run did before approvals). */
static enum approval_policy pick_policy(const struct options *o, const char **from)
{
        enum approval_policy p = APPROVAL_NEVER;

        if (o->approval != NULL && approval_policy_parse(o->approval, &p) == 0) {
                *from = "as asked";
                return p;
        }
        if (isatty(0)) {
                *from = "the default with a terminal on stdin";
                return APPROVAL_HOST;
        }
        *from = "the default without a terminal on stdin: calls run unasked; "
                "--approval host asks";
        return APPROVAL_NEVER;
}

static void on_idle(enum agent_status st, void *ud)
{
        struct run *r = ud;
        int i;

        r->idle = true;
        r->status = st;
        run_approval_close(r->asker); /* stdin is read no more */
        for (i = 0; i < 3; i++)
                uv_close((uv_handle_t *)&r->sig[i], NULL);
        /* The sandbox kept ready for a next call would keep the loop alive. */
        uv_stop(r->sig[0].loop);
}

static void on_signal(uv_signal_t *h, int signum)
{
        struct run *r = h->data;

        session_interrupt(r->s);
}

static int exit_status(enum agent_status st)
{
        switch (st) {
        case AGENT_COMPLETED:
                return 0;
        case AGENT_INTERRUPTED:
                return 130;
        default:
                return 1;
        }
}

static void print_help(void)
{
        printf("usage: proctor run [options] PROMPT\n"
               "       proctor run --resume ID|TRACE [options] PROMPT\n\n"
               "Runs a whole agent session headless: the assistant's text on stdout, progress\n"
               "on stderr (or every event as JSON lines on stdout with --json). Exits 0 when\n"
               "the session completed, 1 when it failed or hit --max-iterations, 130 when\n"
               "interrupted (Ctrl-C), 3 when it completed but its trace could not be written\n"
               "in full; also 1 when calls were denied because the approval policy asked and no\n"
               "one could answer.\n\noptions:\n%s%s"
               "  --model SPEC                demo, script:FILE.jsonl or openai:MODEL\n"
               "  --base-url URL              OpenAI-compatible endpoint\n"
               "  --max-iterations N          turns before the session stops (default 100)\n"
               "  --trace FILE                where the session's events go (default\n"
               "                              $XDG_STATE_HOME/proctor/sessions/ID.jsonl)\n"
               "  --config FILE               config file (default "
               "$XDG_CONFIG_HOME/proctor/config.json)\n" OPTIONS_HELP_MCP OPTIONS_HELP_RESUME,
               options_help, options_help_session);
}

static void print_note(const char *line, void *ud)
{
        termout_message(stderr, "proctor run: %s\n", line);
}

static char *join_args(int argc, char **argv)
{
        size_t len = 1;
        char *s;
        int i;

        for (i = 0; i < argc; i++)
                len += strlen(argv[i]) + 1;
        s = calloc(1, len);
        for (i = 0; s != NULL && i < argc; i++) {
                if (i > 0)
                        strcat(s, " ");
                strcat(s, argv[i]);
        }
        return s;
}

/* Subscribed after the trace writer: says at once, on stderr, when the
 * trace could not take an event, so the operator knows while the session
 * goes on that it is not being recorded. */
struct trace_watch {
        struct trace *trace;
        bool told;
};

static void watch_trace(const json_t *ev, void *ud)
{
        struct trace_watch *w = ud;

        if (w->told || trace_status(w->trace) == 0)
                return;
        w->told = true;
        fprintf(stderr, "proctor run: %s\n", trace_error(w->trace));
}

int cmd_run_main(int argc, char **argv)
{
        static const int sigs[3] = {SIGINT, SIGTERM, SIGHUP};
        struct session_opts so = {0};
        struct options o;
        struct run r = {.at_line_start = true};
        struct trace *trace = NULL;
        struct trace_watch watch = {0};
        struct resume *resumed = NULL;
        struct bus *bus;
        uv_loop_t loop;
        char err[512];
        char *prompt;
        int i, rc, status = 1;

        if (config_resolve(argc, argv, &o, err, sizeof(err)) < 0) {
                termout_message(stderr, "proctor run: %s (try 'proctor run --help')\n", err);
                return 2;
        }
        if (o.help) {
                print_help();
                return 0;
        }
        if (o.argi >= argc) {
                fprintf(stderr, "proctor run: no prompt given (usage: proctor run [options] "
                                "PROMPT)\n");
                return 2;
        }
        if (o.resume != NULL) {
                if (resume_load(o.resume, &resumed, err, sizeof(err)) < 0) {
                        termout_message(stderr, "proctor run: --resume: %s\n", err);
                        return 2;
                }
                resume_apply(resumed, &o);
                resume_notes(resumed, &o, print_note, NULL);
                so.history = resumed->messages;
                so.resumed_id = resumed->session_id;
                so.resumed_trace = resumed->path;
        }
        prompt = join_args(argc - o.argi, argv + o.argi);
        so.mode = o.mode;
        so.mode_from = o.mode_from;
        so.model = o.model;
        so.provider.base_url = o.base_url;
        so.provider.retries = o.provider_retries;
        so.provider.idle_timeout_ms = (uint32_t)o.provider_timeout_ms;
        so.provider.no_stream_options = !o.provider_stream_options;
        so.provider.ca_file = o.ca_cert;
        so.workspace = o.workspace;
        so.config_file = o.config;
        so.mcp_servers = o.mcp_servers;
        so.ws_mode = o.ws_mode;
        so.limits = o.limits;
        so.max_iterations = o.max_iterations;
        so.max_parallel = (unsigned)o.max_parallel;
        so.memory_budget = o.memory_budget;
        so.image = o.image;
        so.image_max = o.image_max;
        so.image_cache_max = o.image_cache_max;
        so.runtime = o.runtime;
        so.approval = pick_policy(&o, &r.approval_from);
        if (resumed != NULL && !options_given(&o, "approval") &&
            json_object_get(resumed->start, "approval") != NULL)
                r.approval_from = "the resumed session's";
        so.allow = o.allow.v;
        so.nallow = o.allow.n;
        so.deny = o.deny.v;
        so.ndeny = o.deny.n;
        /* --json reads decisions on stdin; a terminal answers prompts */
        so.can_ask = so.approval != APPROVAL_NEVER && (o.json || isatty(0));
        if (o.image != NULL && o.mode != EXEC_SANDBOX) {
                fprintf(stderr, "proctor run: --image gives sandboxes their root: it needs "
                                "--mode sandbox\n");
                free(prompt);
                resume_free(resumed);
                return 2;
        }
        uv_loop_init(&loop);
        bus = bus_new();
        {
                struct image_caps caps = {0};
                struct image_meter meter;
                cmd_images_meter_start(&meter, "proctor run", &caps);
                so.image_progress = o.json ? NULL : caps.progress;
                so.image_progress_ud = caps.progress_ud;
                so.image_cancel = caps.cancel;
                rc = session_new(&loop, bus, &so, &r.s, err, sizeof(err));
                cmd_images_meter_end(&meter);
        }
        if (rc == 0 && so.mode == EXEC_SANDBOX && session_workspace_problem(r.s) != NULL) {
                snprintf(err, sizeof(err), "%s", session_workspace_problem(r.s));
                session_free(r.s);
                rc = -EACCES;
        } else if (rc == 0) {
                rc = trace_open(o.trace, session_id(r.s), &trace, err, sizeof(err));
                if (rc == 0)
                        rc = session_protect(r.s, trace_path(trace), err, sizeof(err));
                if (rc < 0)
                        session_free(r.s);
        }
        if (rc < 0) {
                termout_message(stderr, "proctor run: %s\n", err);
                free(prompt);
                bus_free(bus);
                uv_run(&loop, UV_RUN_DEFAULT);
                uv_loop_close(&loop);
                resume_free(resumed);
                return rc == -ECANCELED ? 128 + SIGINT : 2;
        }
        bus_subscribe(bus, trace_event, trace);
        watch.trace = trace;
        bus_subscribe(bus, watch_trace, &watch);
        r.json = o.json;
        termout_init(&r.out, 1, o.raw);
        termout_init(&r.err, 2, o.raw);
        bus_subscribe(bus, o.json ? bus_print_jsonl : print_human, &r);
        bus_subscribe(bus, count_unasked, &r);
        /* reachable from `proctor ls` and clients while it runs */
        if (ctl_open(&loop, bus, r.s, "run", trace_path(trace), NULL, &r.ctl, err, sizeof(err)) <
            0) {
                r.ctl = NULL;
                termout_message(stderr, "proctor run: warning: %s\n", err);
        }
        if (so.can_ask)
                r.asker = run_approval_new(&loop, bus, r.s, o.json);
        session_on_idle(r.s, on_idle, &r);
        for (i = 0; i < 3; i++) {
                uv_signal_init(&loop, &r.sig[i]);
                r.sig[i].data = &r;
                uv_signal_start(&r.sig[i], on_signal, sigs[i]);
        }
        rc = session_prompt(r.s, prompt);
        free(prompt);
        if (rc == 0) {
                uv_run(&loop, UV_RUN_DEFAULT);
                status = exit_status(r.status);
                /* session.end comes last: after every execution's removal */
                session_stop_servers(r.s);
                while (session_executions(r.s) > 0)
                        uv_run(&loop, UV_RUN_ONCE);
        } else {
                fprintf(stderr, "proctor run: cannot start the session: %s\n", strerror(-rc));
                for (i = 0; i < 3; i++)
                        uv_close((uv_handle_t *)&r.sig[i], NULL);
        }
        session_end(r.s);
        ctl_close(r.ctl);
        if (r.unasked > 0) {
                fprintf(stderr,
                        "proctor run: %u call%s denied: the approval policy asked and no one "
                        "could answer (%s); to let such calls run, give --approval never or "
                        "--allow RULE\n",
                        r.unasked, r.unasked == 1 ? " was" : "s were",
                        o.json ? "stdin ended" : "no terminal on stdin and no --json");
                if (status == 0)
                        status = 1;
        }
        if (!o.json)
                fprintf(stderr, "proctor: trace %s%s\n", trace_path(trace),
                        trace_status(trace) < 0 ? " (incomplete: see above)" : "");
        /* a session that went well but was not recorded in full is no success */
        if (trace_status(trace) < 0 && status == 0)
                status = 3;
        session_free(r.s);
        uv_run(&loop, UV_RUN_DEFAULT);
        uv_loop_close(&loop);
        trace_close(trace);
        bus_free(bus);
        termout_free(&r.out);
        termout_free(&r.err);
        free(r.answer);
        resume_free(resumed);
        return status;
}
