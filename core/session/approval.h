/* approval: whether a tool call may run before it runs. A session has one
 * policy (host: ask before what can change or reach this host outside a
 * sandbox; always: ask before every call; never) and rules, each allowing or
 * denying calls by tool and an optional pattern over the call's main
 * argument. Deny rules win over allow rules, and rules win over the policy.
 * Pure: no events, no I/O (the agent asks, the front ends answer). */
#ifndef PROCTOR_APPROVAL_H
#define PROCTOR_APPROVAL_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

/* APPROVAL_NEVER is 0: options zeroed ask nothing, as before approvals */
enum approval_policy { APPROVAL_NEVER, APPROVAL_HOST, APPROVAL_ALWAYS };

/* "host", "always" or "never"; -EINVAL for anything else. */
int approval_policy_parse(const char *s, enum approval_policy *out);
const char *approval_policy_name(enum approval_policy p);

/* One rule: TOOL or TOOL:PATTERN. TOOL is a glob over the tool's name
 * (`bash`, `write`, `mcp__github__*`); PATTERN a glob over its main
 * argument (approval_subject), where `*` also matches `/`. */
struct approval_rule {
        bool deny;
        char *tool;
        char *pattern;    /* NULL: any call of the tool */
        char *text;       /* as written, for events and screens */
        const char *from; /* "--allow", "config", "the operator" (static) */
};

struct approval;

struct approval *approval_new(enum approval_policy p);
void approval_free(struct approval *ap);
enum approval_policy approval_policy(const struct approval *ap);
void approval_set_policy(struct approval *ap, enum approval_policy p);

/* Parses TEXT and adds it: 0, or -EINVAL with err naming what is wrong. */
int approval_add_rule(struct approval *ap, bool deny, const char *text, const char *from, char *err,
                      size_t errlen);
/* Takes back the rule added last (an answer that failed after adding it). */
void approval_drop_last(struct approval *ap);
size_t approval_rule_count(const struct approval *ap);
const struct approval_rule *approval_rule_at(const struct approval *ap, size_t i);

/* What is known of a call beside its name and arguments. */
struct approval_call {
        const char *tool;
        const json_t *args; /* validated; may be NULL */
        bool local;         /* the session's tools run on this host */
        /* an MCP tool whose server runs on this host or shares its network */
        bool mcp_reaches_host;
};

enum approval_verdict { APPROVAL_ALLOW, APPROVAL_DENY, APPROVAL_ASK };

struct approval_result {
        enum approval_verdict verdict;
        const struct approval_rule *rule; /* the rule that decided, or NULL */
        /* who decided or asks: "rule", or "policy host|always|never" */
        char asked_by[64];
};

void approval_check(const struct approval *ap, const struct approval_call *c,
                    struct approval_result *out);

/* The call's main argument, which a rule's pattern is matched against: the
 * command (bash), the code (run_python_code), the path (file tools), the
 * key (cache tools), the arguments as compact JSON (MCP tools). Written to
 * buf (cut to len); "" when there is none. */
void approval_subject(const char *tool, const json_t *args, char *buf, size_t len);

/* A rule that allows calls like this one, for the operator to edit before
 * it is saved: `bash:git status*` from `git status --short`, `write:src/`
 * then `*` from `src/a.c`, the tool alone for Python and MCP tools.
 * Malloc'd. */
char *approval_suggest(const char *tool, const json_t *args);

#endif
