/* approval: the policy and the rules (see approval.h). */
#include "core/session/approval.h"

#include <errno.h>
#include <fnmatch.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define RULES_MAX 256  /* a session's rules, the operator's included */
#define RULE_MAX  1024 /* bytes of one rule's text */

struct approval {
        enum approval_policy policy;
        struct approval_rule *rules;
        size_t nrules;
};

int approval_policy_parse(const char *s, enum approval_policy *out)
{
        if (strcmp(s, "host") == 0)
                *out = APPROVAL_HOST;
        else if (strcmp(s, "always") == 0)
                *out = APPROVAL_ALWAYS;
        else if (strcmp(s, "never") == 0)
                *out = APPROVAL_NEVER;
        else
                return -EINVAL;
        return 0;
}

const char *approval_policy_name(enum approval_policy p)
{
        return p == APPROVAL_ALWAYS ? "always" : p == APPROVAL_NEVER ? "never" : "host";
}

struct approval *approval_new(enum approval_policy p)
{
        struct approval *ap = calloc(1, sizeof(*ap));

        if (ap != NULL)
                ap->policy = p;
        return ap;
}

void approval_free(struct approval *ap)
{
        size_t i;

        if (ap == NULL)
                return;
        for (i = 0; i < ap->nrules; i++) {
                free(ap->rules[i].tool);
                free(ap->rules[i].pattern);
                free(ap->rules[i].text);
        }
        free(ap->rules);
        free(ap);
}

enum approval_policy approval_policy(const struct approval *ap)
{
        return ap->policy;
}

void approval_set_policy(struct approval *ap, enum approval_policy p)
{
        ap->policy = p;
}

int approval_add_rule(struct approval *ap, bool deny, const char *text, const char *from, char *err,
                      size_t errlen)
{
        const char *colon = strchr(text, ':');
        size_t tlen = colon != NULL ? (size_t)(colon - text) : strlen(text);
        struct approval_rule r = {.deny = deny, .from = from};
        size_t i;

        if (tlen == 0) {
                snprintf(err, errlen, "rule '%.60s': no tool named (expected TOOL or TOOL:PATTERN)",
                         text);
                return -EINVAL;
        }
        if (strlen(text) > RULE_MAX) {
                snprintf(err, errlen, "rule '%.60s...': longer than %d bytes", text, RULE_MAX);
                return -EINVAL;
        }
        for (i = 0; i < tlen; i++) {
                unsigned char ch = (unsigned char)text[i];
                if (ch <= ' ' || ch == 0x7f) {
                        snprintf(err, errlen,
                                 "rule '%.60s': a tool name has no spaces or control "
                                 "characters",
                                 text);
                        return -EINVAL;
                }
        }
        if (colon != NULL && colon[1] == '\0') {
                snprintf(err, errlen,
                         "rule '%.60s': an empty pattern after ':' (leave out the ':' to match "
                         "every call of the tool)",
                         text);
                return -EINVAL;
        }
        if (ap->nrules == RULES_MAX) {
                snprintf(err, errlen, "too many rules (at most %d)", RULES_MAX);
                return -E2BIG;
        }
        struct approval_rule *g = realloc(ap->rules, (ap->nrules + 1) * sizeof(*g));
        if (g == NULL)
                return -ENOMEM;
        ap->rules = g;
        r.tool = strndup(text, tlen);
        r.pattern = colon != NULL ? strdup(colon + 1) : NULL;
        r.text = strdup(text);
        if (r.tool == NULL || r.text == NULL || (colon != NULL && r.pattern == NULL)) {
                free(r.tool);
                free(r.pattern);
                free(r.text);
                return -ENOMEM;
        }
        ap->rules[ap->nrules++] = r;
        return 0;
}

void approval_drop_last(struct approval *ap)
{
        if (ap->nrules == 0)
                return;
        ap->nrules--;
        free(ap->rules[ap->nrules].tool);
        free(ap->rules[ap->nrules].pattern);
        free(ap->rules[ap->nrules].text);
}

size_t approval_rule_count(const struct approval *ap)
{
        return ap->nrules;
}

const struct approval_rule *approval_rule_at(const struct approval *ap, size_t i)
{
        return i < ap->nrules ? &ap->rules[i] : NULL;
}

static const char *arg(const json_t *args, const char *key)
{
        return json_string_value(json_object_get(args, key));
}

void approval_subject(const char *tool, const json_t *args, char *buf, size_t len)
{
        const char *s = NULL;
        char *dump = NULL;

        if (strcmp(tool, "bash") == 0)
                s = arg(args, "command");
        else if (strcmp(tool, "run_python_code") == 0)
                s = arg(args, "code");
        else if (strcmp(tool, "read") == 0 || strcmp(tool, "write") == 0 ||
                 strcmp(tool, "edit") == 0)
                s = arg(args, "path");
        else if (strcmp(tool, "read_cache") == 0 || strcmp(tool, "write_cache") == 0)
                s = arg(args, "key");
        else if (strncmp(tool, "mcp__", 5) == 0 && args != NULL)
                s = dump = json_dumps(args, JSON_COMPACT | JSON_SORT_KEYS);
        snprintf(buf, len, "%s", s != NULL ? s : "");
        free(dump);
}

/* What chains, substitutes or redirects in a shell command: an allow rule
 * for `git status*` must not allow `git status; curl ... | sh`. */
#define SHELL_CONTROL ";&|`$<>()\n"

static bool rule_matches(const struct approval_rule *r, const struct approval_call *c,
                         const char *subject)
{
        if (fnmatch(r->tool, c->tool, 0) != 0)
                return false;
        if (r->pattern == NULL)
                return true;
        /* An allow rule's pattern over a command allows only what it
         * spells out of the shell's control characters. */
        if (!r->deny && strcmp(c->tool, "bash") == 0)
                for (const char *p = SHELL_CONTROL; *p != '\0'; p++)
                        if (strchr(subject, *p) != NULL && strchr(r->pattern, *p) == NULL)
                                return false;
        return fnmatch(r->pattern, subject, 0) == 0;
}

/* Whether the host policy asks before this call: in local mode whatever
 * can change this host or run code on it, and MCP servers (they run on
 * it); in sandbox mode only MCP servers that reach the host. Reading
 * tools and the session's cache never ask. */
static bool host_asks(const struct approval_call *c)
{
        static const char *const changing[] = {"bash", "run_python_code", "write", "edit"};
        size_t i;

        if (strncmp(c->tool, "mcp__", 5) == 0)
                return c->local || c->mcp_reaches_host;
        if (!c->local)
                return false;
        for (i = 0; i < sizeof(changing) / sizeof(changing[0]); i++)
                if (strcmp(c->tool, changing[i]) == 0)
                        return true;
        return false;
}

void approval_check(const struct approval *ap, const struct approval_call *c,
                    struct approval_result *out)
{
        char *subject = malloc(64 * 1024);
        const struct approval_rule *allow = NULL, *deny = NULL;
        size_t i;

        memset(out, 0, sizeof(*out));
        if (subject != NULL)
                approval_subject(c->tool, c->args, subject, 64 * 1024);
        for (i = 0; i < ap->nrules; i++) {
                const struct approval_rule *r = &ap->rules[i];
                if (r->deny ? deny != NULL : allow != NULL)
                        continue;
                if (rule_matches(r, c, subject != NULL ? subject : "")) {
                        if (r->deny)
                                deny = r;
                        else
                                allow = r;
                }
        }
        free(subject);
        if (deny != NULL || allow != NULL) {
                out->rule = deny != NULL ? deny : allow;
                out->verdict = deny != NULL ? APPROVAL_DENY : APPROVAL_ALLOW;
                snprintf(out->asked_by, sizeof(out->asked_by), "rule");
                return;
        }
        snprintf(out->asked_by, sizeof(out->asked_by), "policy %s",
                 approval_policy_name(ap->policy));
        out->verdict = ap->policy == APPROVAL_ALWAYS                 ? APPROVAL_ASK
                       : ap->policy == APPROVAL_HOST && host_asks(c) ? APPROVAL_ASK
                                                                     : APPROVAL_ALLOW;
}

/* The first word of a command, or its first two when the second is a
 * subcommand (`git status`, `npm test`), then `*`. */
static char *suggest_command(const char *tool, const char *cmd)
{
        size_t a = strspn(cmd, " \t"), e = a + strcspn(cmd + a, " \t\n;&|<>()$`\"'");
        size_t b = e + strspn(cmd + e, " \t");
        size_t f = b + strcspn(cmd + b, " \t\n;&|<>()$`\"'");
        char *out;

        if (e == a)
                return strdup(tool);
        if (f > b && cmd[b] != '-' && f - b < 40)
                e = f;
        if (asprintf(&out, "%s:%.*s*", tool, (int)(e - a), cmd + a) < 0)
                return NULL;
        return out;
}

char *approval_suggest(const char *tool, const json_t *args)
{
        const char *s;
        char *out;

        if (strcmp(tool, "bash") == 0 && (s = arg(args, "command")) != NULL)
                return suggest_command(tool, s);
        if ((strcmp(tool, "write") == 0 || strcmp(tool, "edit") == 0) &&
            (s = arg(args, "path")) != NULL) {
                const char *slash = strrchr(s, '/');
                if (slash == NULL)
                        return asprintf(&out, "%s:*", tool) < 0 ? NULL : out;
                return asprintf(&out, "%s:%.*s/*", tool, (int)(slash - s), s) < 0 ? NULL : out;
        }
        return strdup(tool);
}
