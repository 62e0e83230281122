/* Unit tests for config: layering (defaults < file < environment < flags),
 * the errors a person gets for a bad file, and where the file is looked for. */
#include <errno.h>
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "core/session/config.h"
#include "tests/unit/tmpdir.h"

struct fixture {
        char dir[64];       /* scratch directory, XDG_CONFIG_HOME */
        char file[128];     /* $dir/proctor/config.json, the default file */
        char home[128];     /* HOME */
        char explicit[128]; /* a file passed with --config */
        struct options o;
        char err[512];
};

static int setup(void **state)
{
        struct fixture *f = calloc(1, sizeof(*f));
        char sub[128];

        if (f == NULL)
                return -1;
        snprintf(f->dir, sizeof(f->dir), "/tmp/proctor-config.XXXXXX");
        if (mkdtemp(f->dir) == NULL)
                return -1;
        snprintf(sub, sizeof(sub), "%s/proctor", f->dir);
        mkdir(sub, 0700);
        snprintf(f->home, sizeof(f->home), "%s/home", f->dir);
        mkdir(f->home, 0700);
        snprintf(f->file, sizeof(f->file), "%s/proctor/config.json", f->dir);
        snprintf(f->explicit, sizeof(f->explicit), "%s/other.json", f->dir);
        setenv("XDG_CONFIG_HOME", f->dir, 1);
        setenv("HOME", f->home, 1);
        unsetenv("TOOL_EXECUTION_MODE");
        unsetenv("PROCTOR_MODEL");
        unsetenv("PROCTOR_BASE_URL");
        *state = f;
        return 0;
}

static int teardown(void **state)
{
        struct fixture *f = *state;

        if (tmpdir_remove(f->dir) != 0)
                return -1;
        config_release();
        free(f);
        return 0;
}

static void write_file(const char *path, const char *text)
{
        FILE *fp = fopen(path, "w");

        assert_non_null(fp);
        assert_int_equal(fputs(text, fp) >= 0, 1);
        assert_int_equal(fclose(fp), 0);
}

/* Runs config_resolve on "run" followed by the given arguments. */
static int resolve(struct fixture *f, const char *a, const char *b, const char *c)
{
        char *argv[] = {"run", (char *)a, (char *)b, (char *)c, NULL};
        int argc = 1;

        while (argc < 4 && argv[argc] != NULL)
                argc++;
        f->err[0] = '\0';
        return config_resolve(argc, argv, &f->o, f->err, sizeof(f->err));
}

static void test_no_default_file_is_fine(void **state)
{
        struct fixture *f = *state;

        assert_int_equal(resolve(f, NULL, NULL, NULL), 0);
        assert_null(f->o.config);
        assert_int_equal(f->o.mode, EXEC_LOCAL);
        assert_int_equal(f->o.limits.memory_bytes, 512ull << 20);
        assert_int_equal(f->o.max_iterations, 100);
        assert_int_equal(f->o.provider_retries, 3);
        assert_int_equal(f->o.argi, 1);
}

static void test_missing_explicit_file_is_an_error(void **state)
{
        struct fixture *f = *state;

        assert_int_equal(resolve(f, "--config", f->explicit, NULL), -ENOENT);
        assert_non_null(strstr(f->err, "other.json: No such file or directory"));
        /* a directory is no config file either */
        assert_int_equal(resolve(f, "--config", f->dir, NULL), -EISDIR);
        assert_non_null(strstr(f->err, "Is a directory"));
}

static void test_every_key(void **state)
{
        struct fixture *f = *state;
        char want[256];

        write_file(f->file, "{\n"
                            "  \"tool_execution_mode\": \"sandbox\",\n"
                            "  \"model\": \"openai:gpt-4o-mini\",\n"
                            "  \"base_url\": \"http://127.0.0.1:8080/v1\",\n"
                            "  \"workspace\": \"~/proj\",\n"
                            "  \"workspace_mode\": \"overlay\",\n"
                            "  \"limits\": {\"memory\": \"256M\", \"cpu_time\": 2.5,\n"
                            "             \"timeout\": \"250ms\", \"pids\": 64,\n"
                            "             \"tmpfs\": 1048576, \"output_limit\": \"64K\"},\n"
                            "  \"max_iterations\": 7,\n"
                            "  \"theme\": \"solarized\",\n"
                            "  \"provider\": {\"retries\": 0, \"timeout\": \"2m\"}\n"
                            "}\n");
        assert_int_equal(resolve(f, NULL, NULL, NULL), 0);
        assert_string_equal(f->o.config, f->file);
        assert_int_equal(f->o.mode, EXEC_SANDBOX);
        assert_string_equal(f->o.model, "openai:gpt-4o-mini");
        assert_string_equal(f->o.base_url, "http://127.0.0.1:8080/v1");
        snprintf(want, sizeof(want), "%s/proj", f->home);
        assert_string_equal(f->o.workspace, want);
        assert_int_equal(f->o.ws_mode, EXEC_WS_OVERLAY);
        assert_int_equal(f->o.limits.memory_bytes, 256ull << 20);
        assert_int_equal(f->o.limits.cpu_ms, 2500);
        assert_int_equal(f->o.limits.timeout_ms, 250);
        assert_int_equal(f->o.limits.pids, 64);
        assert_int_equal(f->o.limits.tmpfs_bytes, 1048576);
        assert_int_equal(f->o.limits.output_bytes, 65536);
        assert_int_equal(f->o.max_iterations, 7);
        assert_string_equal(f->o.theme, "solarized");
        assert_int_equal(f->o.provider_retries, 0);
        assert_int_equal(f->o.provider_timeout_ms, 120000);
}

static void test_precedence(void **state)
{
        struct fixture *f = *state;

        write_file(f->file, "{\"tool_execution_mode\": \"sandbox\", \"model\": \"file-model\",\n"
                            " \"base_url\": \"http://file/v1\", \"theme\": \"file-theme\",\n"
                            " \"limits\": {\"memory\": \"256M\", \"timeout\": 30}}\n");

        /* the file over the defaults */
        assert_int_equal(resolve(f, NULL, NULL, NULL), 0);
        assert_int_equal(f->o.mode, EXEC_SANDBOX);
        assert_string_equal(f->o.model, "file-model");
        assert_int_equal(f->o.limits.memory_bytes, 256ull << 20);
        assert_int_equal(f->o.limits.timeout_ms, 30000);
        assert_int_equal(f->o.limits.pids, 128); /* not in the file: default */

        /* the environment over the file */
        setenv("TOOL_EXECUTION_MODE", "local", 1);
        setenv("PROCTOR_MODEL", "env-model", 1);
        setenv("PROCTOR_BASE_URL", "http://env/v1", 1);
        assert_int_equal(resolve(f, NULL, NULL, NULL), 0);
        assert_int_equal(f->o.mode, EXEC_LOCAL);
        assert_string_equal(f->o.model, "env-model");
        assert_string_equal(f->o.base_url, "http://env/v1");
        assert_string_equal(f->o.theme, "file-theme");

        /* flags over the environment and the file */
        assert_int_equal(resolve(f, "--mode=sandbox", "--model=flag-model", "--timeout=10"), 0);
        assert_int_equal(f->o.mode, EXEC_SANDBOX);
        assert_string_equal(f->o.model, "flag-model");
        assert_string_equal(f->o.base_url, "http://env/v1");
        assert_int_equal(f->o.limits.timeout_ms, 10000);
        assert_int_equal(f->o.limits.memory_bytes, 256ull << 20);
        assert_int_equal(f->o.argi, 4);
        unsetenv("TOOL_EXECUTION_MODE");
        unsetenv("PROCTOR_MODEL");
        unsetenv("PROCTOR_BASE_URL");
}

static void test_explicit_file_replaces_default(void **state)
{
        struct fixture *f = *state;

        write_file(f->file, "{\"model\": \"default-file\", \"theme\": \"dark\"}");
        write_file(f->explicit, "{\"model\": \"explicit-file\"}");
        assert_int_equal(resolve(f, "--config", f->explicit, "PROMPT"), 0);
        assert_string_equal(f->o.model, "explicit-file");
        assert_null(f->o.theme); /* the default file was not read */
        assert_string_equal(f->o.config, f->explicit);
        assert_int_equal(f->o.argi, 3);
}

static void test_type_errors(void **state)
{
        static const struct {
                const char *json, *msg;
        } cases[] = {
            {"{\"limits\": {\"memory\": true}}",
             "config.json: limits.memory: expected a size like \"512M\", got true"},
            {"{\"limits\": {\"memory\": \"lots\"}}",
             "limits.memory: expected a size like \"512M\", got \"lots\""},
            {"{\"limits\": {\"tmpfs\": 0}}", "limits.tmpfs: expected a size like \"512M\", got 0"},
            {"{\"limits\": {\"output_limit\": 1.5}}",
             "limits.output_limit: expected a size like \"512M\", got 1.5"},
            {"{\"limits\": {\"cpu_time\": \"soon\"}}",
             "limits.cpu_time: expected a duration like 5 or \"250ms\", got \"soon\""},
            {"{\"limits\": {\"timeout\": -1}}",
             "limits.timeout: expected a duration like 5 or \"250ms\", got -1"},
            {"{\"limits\": {\"pids\": \"128\"}}",
             "limits.pids: expected an integer from 1 to 4194304, got \"128\""},
            {"{\"limits\": {\"pids\": 0}}", "limits.pids: expected an integer from 1 to 4194304"},
            {"{\"limits\": [1]}", "config.json: limits: expected an object, got an array"},
            {"{\"tool_execution_mode\": \"jail\"}",
             "tool_execution_mode: expected \"local\" or \"sandbox\", got \"jail\""},
            {"{\"workspace_mode\": \"sideways\"}",
             "workspace_mode: expected \"rw\", \"ro\", \"overlay\" or \"none\", got \"sideways\""},
            {"{\"model\": 42}", "config.json: model: expected a non-empty string, got 42"},
            {"{\"theme\": \"\"}", "theme: expected a non-empty string, got \"\""},
            {"{\"base_url\": {}}", "base_url: expected a non-empty string, got an object"},
            {"{\"max_iterations\": 2.5}",
             "max_iterations: expected an integer from 1 to 1000000000, got 2.5"},
            {"{\"max_iterations\": null}",
             "max_iterations: expected an integer from 1 to 1000000000, got null"},
            {"{\"provider\": {\"retries\": 11}}",
             "provider.retries: expected an integer from 0 to 10, got 11"},
            {"[\"model\"]", "config.json: top level: expected an object, got an array"},
        };
        struct fixture *f = *state;
        size_t i;

        for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
                write_file(f->file, cases[i].json);
                assert_int_equal(resolve(f, NULL, NULL, NULL), -EINVAL);
                if (strstr(f->err, cases[i].msg) == NULL || strstr(f->err, f->file) != f->err)
                        fail_msg("%s: got [%s], want [%s]", cases[i].json, f->err, cases[i].msg);
        }
}

static void test_unknown_keys(void **state)
{
        struct fixture *f = *state;

        write_file(f->file, "{\"limits\": {\"memroy\": \"1G\"}}");
        assert_int_equal(resolve(f, NULL, NULL, NULL), -EINVAL);
        assert_non_null(strstr(f->err,
                               "config.json: limits.memroy: unknown key (known keys: "
                               "memory, cpu_time, timeout, pids, tmpfs, output_limit, disk)"));
        write_file(f->file, "{\"model\": \"x\", \"colour\": \"blue\"}");
        assert_int_equal(resolve(f, NULL, NULL, NULL), -EINVAL);
        assert_non_null(strstr(f->err, "config.json: colour: unknown key"));
}

static void test_syntax_errors(void **state)
{
        struct fixture *f = *state;
        char want[256];

        write_file(f->file, "{\n  \"model\": \"x\",\n  \"theme\": ,\n}\n");
        assert_int_equal(resolve(f, NULL, NULL, NULL), -EINVAL);
        snprintf(want, sizeof(want), "%s:3:12: invalid JSON: ", f->file);
        assert_int_equal(strncmp(f->err, want, strlen(want)), 0);

        write_file(f->file, "{\n \"model\": \"a\",\n \"model\": \"b\"\n}\n");
        assert_int_equal(resolve(f, NULL, NULL, NULL), -EINVAL);
        snprintf(want, sizeof(want), "%s:3:8: invalid JSON: duplicate object key", f->file);
        assert_int_equal(strncmp(f->err, want, strlen(want)), 0);

        write_file(f->file, "");
        assert_int_equal(resolve(f, NULL, NULL, NULL), -EINVAL);
        assert_non_null(strstr(f->err, "invalid JSON"));
}

static void test_environment_errors(void **state)
{
        struct fixture *f = *state;

        /* a mistyped mode must not silently mean "local" */
        setenv("TOOL_EXECUTION_MODE", "sandbx", 1);
        assert_int_equal(resolve(f, NULL, NULL, NULL), -EINVAL);
        assert_string_equal(
            f->err, "TOOL_EXECUTION_MODE: unknown mode 'sandbx' (expected local or sandbox)");
        /* an empty variable is no setting */
        setenv("TOOL_EXECUTION_MODE", "", 1);
        assert_int_equal(resolve(f, NULL, NULL, NULL), 0);
        assert_int_equal(f->o.mode, EXEC_LOCAL);
        unsetenv("TOOL_EXECUTION_MODE");
}

static void test_flag_errors_and_help(void **state)
{
        struct fixture *f = *state;

        write_file(f->file, "{\"limits\": {\"memory\": true}}");
        /* a bad flag is reported as the flag's error, before the file */
        assert_int_equal(resolve(f, "--memory", "lots", NULL), -EINVAL);
        assert_non_null(strstr(f->err, "--memory: bad size 'lots'"));
        /* --help works even when the file is broken */
        assert_int_equal(resolve(f, "--help", NULL, NULL), 0);
        assert_true(f->o.help);
        /* otherwise the broken file is the error */
        assert_int_equal(resolve(f, "--memory", "1G", NULL), -EINVAL);
        assert_non_null(strstr(f->err, "limits.memory"));
}

static void test_xdg_lookup(void **state)
{
        struct fixture *f = *state;
        char path[256], buf[PATH_MAX];

        /* a relative XDG_CONFIG_HOME is ignored, as the XDG spec asks */
        setenv("XDG_CONFIG_HOME", "relative/dir", 1);
        snprintf(path, sizeof(path), "%s/.config", f->home);
        mkdir(path, 0700);
        snprintf(path, sizeof(path), "%s/.config/proctor", f->home);
        mkdir(path, 0700);
        snprintf(path, sizeof(path), "%s/.config/proctor/config.json", f->home);
        write_file(path, "{\"model\": \"from-home\"}");
        assert_int_equal(resolve(f, NULL, NULL, NULL), 0);
        assert_string_equal(f->o.model, "from-home");
        assert_string_equal(f->o.config, path);

        assert_int_equal(
            config_xdg_path("XDG_CONFIG_HOME", ".config", "proctor/themes", buf, sizeof(buf)), 0);
        snprintf(path, sizeof(path), "%s/.config/proctor/themes", f->home);
        assert_string_equal(buf, path);
        assert_int_equal(config_xdg_path("XDG_CONFIG_HOME", ".config", "x", buf, 8), -ENAMETOOLONG);
        setenv("XDG_CONFIG_HOME", f->dir, 1);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test_setup_teardown(test_no_default_file_is_fine, setup, teardown),
            cmocka_unit_test_setup_teardown(test_missing_explicit_file_is_an_error, setup,
                                            teardown),
            cmocka_unit_test_setup_teardown(test_every_key, setup, teardown),
            cmocka_unit_test_setup_teardown(test_precedence, setup, teardown),
            cmocka_unit_test_setup_teardown(test_explicit_file_replaces_default, setup, teardown),
            cmocka_unit_test_setup_teardown(test_type_errors, setup, teardown),
            cmocka_unit_test_setup_teardown(test_unknown_keys, setup, teardown),
            cmocka_unit_test_setup_teardown(test_syntax_errors, setup, teardown),
            cmocka_unit_test_setup_teardown(test_environment_errors, setup, teardown),
            cmocka_unit_test_setup_teardown(test_flag_errors_and_help, setup, teardown),
            cmocka_unit_test_setup_teardown(test_xdg_lookup, setup, teardown),
        };
        return cmocka_run_group_tests_name("config", tests, NULL, NULL);
}
