/* Unit tests for the small core modules: units, options, env, bus. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "core/util/bus.h"
#include "core/session/options.h"
#include "core/util/units.h"
#include "exec/native/env.h"

static void test_sizes(void **state)
{
        static const struct {
                const char *in;
                uint64_t out;
        } ok[] = {
            {"4096", 4096}, {"512M", 512ull << 20}, {"64MiB", 64ull << 20}, {"1g", 1ull << 30},
            {"1.5K", 1536}, {"2T", 2ull << 40},     {"10kb", 10240},        {"7B", 7},
        };
        static const char *const bad[] = {"lots",  "",          "-1M", "12Q", "M",
                                          "1e400", "99999999T", " 5M", "5 M"};
        uint64_t v;
        size_t i;

        for (i = 0; i < sizeof(ok) / sizeof(ok[0]); i++) {
                assert_int_equal(units_parse_size(ok[i].in, &v), 0);
                assert_int_equal(v, ok[i].out);
        }
        for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
                assert_int_equal(units_parse_size(bad[i], &v), -EINVAL);
}

static void test_durations(void **state)
{
        uint64_t v;

        assert_int_equal(units_parse_duration("5", &v), 0);
        assert_int_equal(v, 5000);
        assert_int_equal(units_parse_duration("0.5", &v), 0);
        assert_int_equal(v, 500);
        assert_int_equal(units_parse_duration("250ms", &v), 0);
        assert_int_equal(v, 250);
        assert_int_equal(units_parse_duration("2m", &v), 0);
        assert_int_equal(v, 120000);
        assert_int_equal(units_parse_duration("1h", &v), 0);
        assert_int_equal(v, 3600000);
        assert_int_equal(units_parse_duration("0.0004", &v), 0);
        assert_int_equal(v, 0);
        assert_int_equal(units_parse_duration("0.0015", &v), 0);
        assert_int_equal(v, 2); /* 1.5 ms, halves up */
        assert_int_equal(units_round(2.5), 3);
        assert_int_equal(units_round(0.49999999999999994), 0);
        assert_int_equal(units_round(9007199254740993.0), 9007199254740992ull);
        assert_int_equal(units_parse_duration("soon", &v), -EINVAL);
        assert_int_equal(units_parse_duration("5x", &v), -EINVAL);
        assert_int_equal(units_parse_uint("128", 1000, &v), 0);
        assert_int_equal(v, 128);
        assert_int_equal(units_parse_uint("1001", 1000, &v), -EINVAL);
        assert_int_equal(units_parse_uint("12a", 1000, &v), -EINVAL);
}

static void test_options(void **state)
{
        char *argv[] = {"exec", "--mode", "sandbox", "--memory=64M", "--pids", "32", "--timeout",
                        "1.5",  "--json", "--",      "ls",           "-l",     NULL};
        struct options o;
        char err[256];

        unsetenv("TOOL_EXECUTION_MODE");
        options_defaults(&o);
        assert_int_equal(o.mode, EXEC_LOCAL);
        assert_int_equal(o.limits.memory_bytes, 512ull << 20);
        assert_int_equal(options_parse(12, argv, &o, err, sizeof(err)), 0);
        assert_int_equal(o.mode, EXEC_SANDBOX);
        assert_int_equal(o.limits.memory_bytes, 64ull << 20);
        assert_int_equal(o.limits.pids, 32);
        assert_int_equal(o.limits.timeout_ms, 1500);
        assert_true(o.json);
        assert_int_equal(o.argi, 10);
        assert_string_equal(argv[o.argi], "ls");
}

static void test_options_errors(void **state)
{
        static const struct {
                const char *a, *b, *msg;
        } cases[] = {
            {"--bogus", NULL, "unknown option '--bogus'"},
            {"-x", NULL, "unknown option '-x'"},
            {"--mode", "jail", "--mode: unknown mode 'jail'"},
            {"--memory", "lots", "--memory: bad size 'lots'"},
            {"--pids", "0", "--pids: bad number '0'"},
            {"--cpu-time", "forever", "--cpu-time: bad duration 'forever'"},
            {"--workspace-mode", "sideways", "--workspace-mode: unknown mode 'sideways'"},
            {"--json=1", NULL, "--json takes no value"},
            {"--timeout", NULL, "--timeout needs a value"},
        };
        struct options o;
        char err[256];
        size_t i;

        for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
                char *argv[] = {"exec", (char *)cases[i].a, (char *)cases[i].b, NULL};
                int argc = cases[i].b != NULL ? 3 : 2;
                options_defaults(&o);
                err[0] = '\0';
                assert_int_equal(options_parse(argc, argv, &o, err, sizeof(err)), -EINVAL);
                assert_non_null(strstr(err, cases[i].msg));
        }
}

static void test_mode_from_env(void **state)
{
        struct options o;

        setenv("TOOL_EXECUTION_MODE", "sandbox", 1);
        options_defaults(&o);
        assert_int_equal(o.mode, EXEC_SANDBOX);
        setenv("TOOL_EXECUTION_MODE", "nonsense", 1);
        options_defaults(&o);
        assert_int_equal(o.mode, EXEC_LOCAL);
        unsetenv("TOOL_EXECUTION_MODE");
}

static bool has(char **envp, const char *kv)
{
        for (; envp != NULL && *envp != NULL; envp++)
                if (strcmp(*envp, kv) == 0)
                        return true;
        return false;
}

static bool has_name(char **envp, const char *name)
{
        size_t n = strlen(name);

        for (; envp != NULL && *envp != NULL; envp++)
                if (strncmp(*envp, name, n) == 0 && (*envp)[n] == '=')
                        return true;
        return false;
}

static void test_env(void **state)
{
        char *extra[] = {"FOO=bar", "MY_TOKEN=leak", NULL};
        char **sb, **local;

        setenv("OPENAI_API_KEY", "sk-secret", 1);
        setenv("HF_TOKEN", "hf-secret", 1);
        setenv("DB_PASSWORD", "pw", 1);
        setenv("ORDINARY_VAR", "1", 1);
        assert_true(env_is_secret("PROCTOR_API_KEY"));
        assert_true(env_is_secret("github_token=x"));
        assert_false(env_is_secret("PATH"));

        sb = env_build(true, extra);
        assert_non_null(sb);
        assert_true(has(sb, "TERM=dumb"));
        assert_true(has(sb, "FOO=bar"));
        assert_true(has_name(sb, "PATH"));
        assert_true(has_name(sb, "HOME"));
        assert_false(has_name(sb, "OPENAI_API_KEY"));
        assert_false(has_name(sb, "HF_TOKEN"));
        assert_false(has_name(sb, "ORDINARY_VAR"));
        assert_false(has_name(sb, "MY_TOKEN"));

        local = env_build(false, NULL);
        assert_non_null(local);
        assert_true(has(local, "ORDINARY_VAR=1"));
        assert_false(has_name(local, "OPENAI_API_KEY"));
        assert_false(has_name(local, "HF_TOKEN"));
        assert_false(has_name(local, "DB_PASSWORD"));
        assert_true(has(local, "TERM=dumb"));
        env_free(sb);
        env_free(local);
}

struct seen {
        int n;
        json_int_t seq[4];
        char type[4][32];
};

static void record(const json_t *ev, void *ud)
{
        struct seen *s = ud;

        s->seq[s->n] = json_integer_value(json_object_get(ev, "seq"));
        snprintf(s->type[s->n], sizeof(s->type[0]), "%s",
                 json_string_value(json_object_get(ev, "type")));
        s->n++;
}

static void test_bus(void **state)
{
        struct bus *b = bus_new();
        struct seen a = {0}, c = {0};

        assert_int_equal(bus_subscribe(b, record, &a), 0);
        assert_int_equal(bus_subscribe(b, record, &c), 0);
        bus_emit(b, "exec.create", json_pack("{s:i}", "exec_id", 1));
        bus_emit(b, "exec.exit", NULL);
        assert_int_equal(a.n, 2);
        assert_int_equal(c.n, 2);
        assert_int_equal(a.seq[0], 1);
        assert_int_equal(a.seq[1], 2);
        assert_string_equal(a.type[1], "exec.exit");
        bus_free(b);
}

static void test_bus_string(void **state)
{
        json_t *j = bus_string("ok \xff\xfe caf\xc3\xa9 \xe2\x82", 14);
        const char *s = json_string_value(j);

        assert_non_null(s);
        assert_string_equal(s, "ok \xef\xbf\xbd\xef\xbf\xbd caf\xc3\xa9 \xef\xbf\xbd\xef\xbf\xbd");
        json_decref(j);
        j = bus_string("a\0b", 3);
        assert_int_equal(json_string_length(j), 3);
        json_decref(j);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test(test_sizes),         cmocka_unit_test(test_durations),
            cmocka_unit_test(test_options),       cmocka_unit_test(test_options_errors),
            cmocka_unit_test(test_mode_from_env), cmocka_unit_test(test_env),
            cmocka_unit_test(test_bus),           cmocka_unit_test(test_bus_string),
        };
        return cmocka_run_group_tests_name("core", tests, NULL, NULL);
}
