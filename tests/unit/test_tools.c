/* Unit tests for core/tools: schemas, argument validation and its messages,
 * the file and cache tools on real files in a temporary directory, output
 * capping, and `proctor tool` run in a forked child. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "core/tools/tools.h"

#if defined(__SANITIZE_ADDRESS__)
#define UNDER_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define UNDER_ASAN 1
#endif
#endif

/* ------------------------------------------------------------- fixtures */

static int rm_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
        return remove(path);
}

static int dir_setup(void **state)
{
        char *dir = strdup("/tmp/proctor-test-tools.XXXXXX");

        if (dir == NULL || mkdtemp(dir) == NULL)
                return -1;
        *state = dir;
        return 0;
}

static int dir_teardown(void **state)
{
        nftw(*state, rm_one, 16, FTW_DEPTH | FTW_PHYS);
        free(*state);
        return 0;
}

static char *path_in(const char *dir, const char *name)
{
        char *p;

        assert_true(asprintf(&p, "%s/%s", dir, name) > 0);
        return p;
}

static void put_file(const char *dir, const char *name, const char *data, size_t len)
{
        char *p = path_in(dir, name);
        FILE *f = fopen(p, "w");

        assert_non_null(f);
        assert_int_equal(fwrite(data, 1, len, f), len);
        assert_int_equal(fclose(f), 0);
        free(p);
}

static void put_str(const char *dir, const char *name, const char *s)
{
        put_file(dir, name, s, strlen(s));
}

/* The file's content, NUL-terminated; NULL when it cannot be read. */
static char *get_file(const char *dir, const char *name, size_t *len)
{
        char *p = path_in(dir, name), *data = NULL;
        FILE *f = fopen(p, "r");
        long n;

        free(p);
        if (f == NULL)
                return NULL;
        fseek(f, 0, SEEK_END);
        n = ftell(f);
        rewind(f);
        data = calloc(1, (size_t)n + 1);
        assert_non_null(data);
        assert_int_equal(fread(data, 1, (size_t)n, f), (size_t)n);
        fclose(f);
        if (len != NULL)
                *len = (size_t)n;
        return data;
}

/* Number of entries in a directory, . and .. aside. */
static int count_entries(const char *dir)
{
        DIR *d = opendir(dir);
        struct dirent *e;
        int n = 0;

        assert_non_null(d);
        while ((e = readdir(d)) != NULL)
                if (strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0)
                        n++;
        closedir(d);
        return n;
}

/* Validates and runs one call as the agent loop would. */
static void call(const char *name, const char *arguments, const char *root,
                 struct tools_cache *cache, struct tools_result *r)
{
        char err[512];
        json_t *args;

        if (tools_parse_args(name, arguments, &args, err, sizeof(err)) < 0)
                fail_msg("%s %s: %s", name, arguments, err);
        tools_run_builtin(name, args, root, cache, r);
        json_decref(args);
        assert_non_null(r->text);
        assert_int_equal(strlen(r->text), r->len);
}

static void expect_ok(const char *name, const char *arguments, const char *root, const char *want)
{
        struct tools_result r;

        call(name, arguments, root, NULL, &r);
        assert_false(r.error);
        assert_string_equal(r.text, want);
        tools_result_free(&r);
}

static void expect_error(const char *name, const char *arguments, const char *root,
                         const char *want)
{
        struct tools_result r;

        call(name, arguments, root, NULL, &r);
        assert_true(r.error);
        assert_string_equal(r.text, want);
        tools_result_free(&r);
}

/* -------------------------------------------------------------- schemas */

static void assert_names(const json_t *got, const char *const *want)
{
        size_t i, n = 0;

        while (want[n] != NULL)
                n++;
        assert_int_equal(json_is_array(got) ? json_array_size(got) : json_object_size(got), n);
        for (i = 0; i < n; i++) {
                if (json_is_array(got))
                        assert_string_equal(json_string_value(json_array_get(got, i)), want[i]);
                else
                        assert_non_null(json_object_get(got, want[i]));
        }
}

static void test_schemas(void **state)
{
        static const struct {
                const char *name;
                const char *props[5];
                const char *required[4];
                bool process;
        } want[] = {
            {"bash", {"command", "timeout"}, {"command"}, true},
            {"read", {"path", "offset", "limit"}, {"path"}, false},
            {"write", {"path", "content"}, {"path", "content"}, false},
            {"edit",
             {"path", "old_str", "new_str", "replace_all"},
             {"path", "old_str", "new_str"},
             false},
            {"run_python_code", {"code"}, {"code"}, true},
            {"read_cache", {"key"}, {"key"}, false},
            {"write_cache", {"key", "value"}, {"key", "value"}, false},
        };
        const json_t *all = tools_schemas();
        size_t i;
        char *text;

        assert_true(json_is_array(all));
        assert_int_equal(json_array_size(all), 7);
        assert_ptr_equal(tools_schemas(), all);
        for (i = 0; i < 7; i++) {
                const json_t *t = json_array_get(all, i), *fn = json_object_get(t, "function");
                const json_t *params = json_object_get(fn, "parameters"), *v;
                size_t k;

                assert_int_equal(json_object_size(t), 2);
                assert_string_equal(json_string_value(json_object_get(t, "type")), "function");
                assert_int_equal(json_object_size(fn), 3);
                assert_string_equal(json_string_value(json_object_get(fn, "name")), want[i].name);
                v = json_object_get(fn, "description");
                assert_true(json_string_length(v) > 20);
                assert_null(strchr(json_string_value(v), '\n'));
                assert_int_equal(json_object_size(params), 4);
                assert_string_equal(json_string_value(json_object_get(params, "type")), "object");
                assert_true(json_is_false(json_object_get(params, "additionalProperties")));
                assert_names(json_object_get(params, "properties"), want[i].props);
                assert_names(json_object_get(params, "required"), want[i].required);
                /* assert_names checked the count: these are all the properties */
                for (k = 0; want[i].props[k] != NULL; k++) {
                        const char *type;
                        const json_t *d;

                        v = json_object_get(json_object_get(params, "properties"),
                                            want[i].props[k]);
                        type = json_string_value(json_object_get(v, "type"));
                        d = json_object_get(v, "description");
                        assert_non_null(type);
                        assert_true(strcmp(type, "string") == 0 || strcmp(type, "integer") == 0 ||
                                    strcmp(type, "number") == 0 || strcmp(type, "boolean") == 0);
                        assert_true(json_string_length(d) > 10);
                        assert_null(strchr(json_string_value(d), '\n'));
                }
                assert_true(tools_known(want[i].name));
                assert_int_equal(tools_runs_process(want[i].name), want[i].process);
        }
        text = json_dumps(all, 0);
        assert_non_null(text);
        free(text);
}

static void test_schema_types(void **state)
{
        const json_t *all = tools_schemas();
        const json_t *read = json_object_get(
            json_object_get(json_object_get(json_array_get(all, 1), "function"), "parameters"),
            "properties");
        const json_t *bash = json_object_get(
            json_object_get(json_object_get(json_array_get(all, 0), "function"), "parameters"),
            "properties");

        assert_string_equal(
            json_string_value(json_object_get(json_object_get(read, "path"), "type")), "string");
        assert_int_equal(
            json_integer_value(json_object_get(json_object_get(read, "path"), "minLength")), 1);
        assert_string_equal(
            json_string_value(json_object_get(json_object_get(read, "offset"), "type")), "integer");
        assert_int_equal(
            json_integer_value(json_object_get(json_object_get(read, "offset"), "minimum")), 1);
        assert_int_equal(
            json_integer_value(json_object_get(json_object_get(read, "limit"), "minimum")), 1);
        assert_string_equal(
            json_string_value(json_object_get(json_object_get(bash, "timeout"), "type")), "number");
        assert_false(tools_known("grep"));
        assert_false(tools_known(NULL));
        assert_false(tools_known("Read"));
        assert_false(tools_runs_process("grep"));
}

/* ----------------------------------------------------------- validation */

static void expect_parse_error(const char *name, const char *arguments, int rc, const char *want)
{
        char err[512];
        json_t *args = (json_t *)1;

        assert_int_equal(tools_parse_args(name, arguments, &args, err, sizeof(err)), rc);
        assert_null(args);
        assert_string_equal(err, want);
}

static void test_parse_errors(void **state)
{
        static const struct {
                const char *tool, *args, *msg;
        } cases[] = {
            {"read", "[1]", "arguments for 'read' must be a JSON object, not an array"},
            {"read", "\"a.txt\"", "arguments for 'read' must be a JSON object, not a string"},
            {"read", "null", "arguments for 'read' must be a JSON object, not null"},
            {"read", "{}", "arguments for 'read': missing required field 'path'"},
            {"read", "", "arguments for 'read': missing required field 'path'"},
            {"read", " \n ", "arguments for 'read': missing required field 'path'"},
            {"edit", "{\"path\":\"a\",\"old_str\":\"x\"}",
             "arguments for 'edit': missing required field 'new_str'"},
            {"write_cache", "{\"key\":\"k\"}",
             "arguments for 'write_cache': missing required field 'value'"},
            {"read", "{\"path\":5}",
             "arguments for 'read': field 'path' must be a string, not an integer"},
            {"read", "{\"path\":null}",
             "arguments for 'read': field 'path' must be a string, not null"},
            {"read", "{\"path\":[\"a\"]}",
             "arguments for 'read': field 'path' must be a string, not an array"},
            {"read", "{\"path\":{}}",
             "arguments for 'read': field 'path' must be a string, not an object"},
            {"read", "{\"path\":\"a\",\"offset\":\"3\"}",
             "arguments for 'read': field 'offset' must be an integer, not a string"},
            {"read", "{\"path\":\"a\",\"offset\":2.5}",
             "arguments for 'read': field 'offset' must be an integer, not 2.5"},
            {"read", "{\"path\":\"a\",\"limit\":true}",
             "arguments for 'read': field 'limit' must be an integer, not a boolean"},
            {"read", "{\"path\":\"a\",\"offset\":0}",
             "arguments for 'read': field 'offset' must be at least 1, got 0"},
            {"read", "{\"path\":\"a\",\"limit\":-3}",
             "arguments for 'read': field 'limit' must be at least 1, got -3"},
            {"read", "{\"path\":\"\"}", "arguments for 'read': field 'path' must not be empty"},
            {"read", "{\"path\":\"a\",\"file\":\"b\"}",
             "arguments for 'read': unknown field 'file' (allowed: path, offset, limit)"},
            {"read", "{\"file_path\":\"a\"}",
             "arguments for 'read': unknown field 'file_path' (allowed: path, offset, limit)"},
            {"write", "{\"path\":\"a\",\"content\":true}",
             "arguments for 'write': field 'content' must be a string, not a boolean"},
            {"edit", "{\"path\":\"a\",\"old_str\":\"\",\"new_str\":\"b\"}",
             "arguments for 'edit': field 'old_str' must not be empty"},
            {"edit", "{\"path\":\"a\",\"old_str\":\"a\",\"new_str\":\"b\",\"replace_all\":\"yes\"}",
             "arguments for 'edit': field 'replace_all' must be a boolean, not a string"},
            {"edit", "{\"path\":\"a\",\"old_str\":\"a\",\"new_str\":\"b\",\"replace_all\":1}",
             "arguments for 'edit': field 'replace_all' must be a boolean, not an integer"},
            {"bash", "{\"command\":\"ls\",\"timeout\":\"5\"}",
             "arguments for 'bash': field 'timeout' must be a number, not a string"},
            {"bash", "{\"command\":\"ls\",\"timeout\":0}",
             "arguments for 'bash': field 'timeout' must be greater than 0, got 0"},
            {"bash", "{\"command\":\"ls\",\"timeout\":1e6}",
             "arguments for 'bash': field 'timeout' must be at most 86400, got 1000000"},
            {"bash", "{\"cmd\":\"ls\"}",
             "arguments for 'bash': unknown field 'cmd' (allowed: command, timeout)"},
            {"run_python_code", "{}",
             "arguments for 'run_python_code': missing required field 'code'"},
            {"read_cache", "{\"key\":\"\"}",
             "arguments for 'read_cache': field 'key' must not be empty"},
            {"write_cache", "{\"key\":\"k\",\"value\":7}",
             "arguments for 'write_cache': field 'value' must be a string, not an integer"},
        };
        size_t i;

        for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
                expect_parse_error(cases[i].tool, cases[i].args, -EINVAL, cases[i].msg);
        expect_parse_error("grep", "{}", -ENOENT,
                           "unknown tool 'grep' (available: bash, read, write, edit, "
                           "run_python_code, read_cache, write_cache)");
        expect_parse_error(NULL, "{}", -ENOENT,
                           "unknown tool '' (available: bash, read, write, edit, "
                           "run_python_code, read_cache, write_cache)");
}

static void test_parse_invalid_json(void **state)
{
        static const char *const bad[] = {"{\"path\": ", "{path: \"a\"}", "{\"path\":\"a\"} x",
                                          "{\"path\":\"a\",\"path\":\"b\"}",
                                          "\n\n{\"path\" \"a\"}"};
        static const char *const where[] = {"(line 1, column ", "(line 1, column ",
                                            "(line 1, column ", "(line 1, column ",
                                            "(line 3, column "};
        static const char prefix[] = "arguments for 'read' are not valid JSON: ";
        char err[512];
        json_t *args;
        size_t i;

        for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
                assert_int_equal(tools_parse_args("read", bad[i], &args, err, sizeof(err)),
                                 -EINVAL);
                assert_null(args);
                assert_memory_equal(err, prefix, strlen(prefix));
                /* jansson's own reason, then where */
                assert_true(strlen(err) > strlen(prefix) + 20);
                assert_non_null(strstr(err, where[i]));
                assert_int_equal(err[strlen(err) - 1], ')');
        }
        assert_int_equal(tools_parse_args("read", bad[3], &args, err, sizeof(err)), -EINVAL);
        assert_non_null(strstr(err, "duplicate"));
}

static void test_parse_ok(void **state)
{
        char err[512];
        json_t *args;

        assert_int_equal(tools_parse_args("read", "{\"path\":\"a\",\"offset\":3.0,\"limit\":null}",
                                          &args, err, sizeof(err)),
                         0);
        assert_true(json_is_integer(json_object_get(args, "offset")));
        assert_int_equal(json_integer_value(json_object_get(args, "offset")), 3);
        assert_null(json_object_get(args, "limit"));
        assert_string_equal(json_string_value(json_object_get(args, "path")), "a");
        json_decref(args);

        assert_int_equal(
            tools_parse_args("bash", "{\"command\":\"ls\",\"timeout\":5}", &args, err, sizeof(err)),
            0);
        assert_int_equal(json_integer_value(json_object_get(args, "timeout")), 5);
        json_decref(args);
        assert_int_equal(tools_parse_args("bash", " {\"command\":\"ls\",\"timeout\":0.25}\n", &args,
                                          err, sizeof(err)),
                         0);
        assert_true(json_real_value(json_object_get(args, "timeout")) == 0.25);
        json_decref(args);
        assert_int_equal(tools_parse_args("edit",
                                          "{\"path\":\"a\",\"old_str\":\"x\",\"new_str\":\"\","
                                          "\"replace_all\":false}",
                                          &args, err, sizeof(err)),
                         0);
        json_decref(args);
        assert_int_equal(
            tools_parse_args("write", "{\"path\":\"a\",\"content\":\"\"}", &args, err, sizeof(err)),
            0);
        json_decref(args);
}

/* tools_run_builtin checks what it is given even when it skipped parsing. */
static void test_run_unvalidated(void **state)
{
        struct tools_result r;
        json_t *args = json_pack("{s:s, s:s, s:s}", "path", "x", "old_str", "", "new_str", "y");

        tools_run_builtin("edit", args, "/nonexistent", NULL, &r);
        assert_true(r.error);
        assert_string_equal(r.text, "arguments for 'edit': field 'old_str' must not be empty");
        tools_result_free(&r);
        json_decref(args);
        tools_run_builtin("read", NULL, NULL, NULL, &r);
        assert_true(r.error);
        assert_string_equal(r.text, "arguments for 'read' must be a JSON object, not nothing");
        tools_result_free(&r);
        args = json_pack("{s:i}", "path", 3);
        tools_run_builtin("read", args, NULL, NULL, &r);
        assert_true(r.error);
        assert_string_equal(r.text,
                            "arguments for 'read': field 'path' must be a string, not an integer");
        tools_result_free(&r);
        json_decref(args);
        args = json_pack("{s:s}", "command", "ls");
        tools_run_builtin("bash", args, NULL, NULL, &r);
        assert_true(r.error);
        assert_string_equal(r.text, "'bash' runs a process; it is not a builtin tool");
        tools_result_free(&r);
        tools_run_builtin("rm", args, NULL, NULL, &r);
        assert_true(r.error);
        assert_memory_equal(r.text, "unknown tool 'rm' (available: bash,", 35);
        tools_result_free(&r);
        json_decref(args);
}

/* ----------------------------------------------------------------- read */

static void test_read_lines(void **state)
{
        const char *dir = *state;

        put_str(dir, "f.txt", "alpha\nbeta\ngamma\n");
        expect_ok("read", "{\"path\":\"f.txt\"}", dir,
                  "     1\talpha\n     2\tbeta\n     3\tgamma\n");
        expect_ok("read", "{\"path\":\"f.txt\",\"offset\":2,\"limit\":1}", dir, "     2\tbeta\n");
        expect_ok("read", "{\"path\":\"f.txt\",\"offset\":2}", dir,
                  "     2\tbeta\n     3\tgamma\n");
        expect_ok("read", "{\"path\":\"f.txt\",\"limit\":2}", dir, "     1\talpha\n     2\tbeta\n");
        expect_ok("read", "{\"path\":\"f.txt\",\"offset\":3,\"limit\":100}", dir,
                  "     3\tgamma\n");
        expect_error("read", "{\"path\":\"f.txt\",\"offset\":4}", dir,
                     "cannot read f.txt: offset 4 is past the end of the file (3 lines)");

        /* a last line without a newline is a line, returned as it is */
        put_str(dir, "g.txt", "a\n\nb");
        expect_ok("read", "{\"path\":\"g.txt\"}", dir, "     1\ta\n     2\t\n     3\tb");
        expect_ok("read", "{\"path\":\"g.txt\",\"offset\":3}", dir, "     3\tb");
        expect_error("read", "{\"path\":\"g.txt\",\"offset\":9}", dir,
                     "cannot read g.txt: offset 9 is past the end of the file (3 lines)");
        put_str(dir, "one.txt", "only\n");
        expect_error("read", "{\"path\":\"one.txt\",\"offset\":2}", dir,
                     "cannot read one.txt: offset 2 is past the end of the file (1 line)");
        put_str(dir, "empty.txt", "");
        expect_ok("read", "{\"path\":\"empty.txt\"}", dir, "(empty.txt is empty)");
        expect_error("read", "{\"path\":\"empty.txt\",\"offset\":2}", dir,
                     "cannot read empty.txt: offset 2 is past the end of the file (0 lines)");
}

static void test_read_paths(void **state)
{
        const char *dir = *state;
        char *abs = path_in(dir, "f.txt"), *args;

        put_str(dir, "f.txt", "x\n");
        assert_true(asprintf(&args, "{\"path\":\"%s\"}", abs) > 0);
        /* absolute paths ignore root */
        expect_ok("read", args, "/nonexistent", "     1\tx\n");
        expect_error("read", "{\"path\":\"f.txt\"}", "/nonexistent",
                     "cannot read f.txt: No such file or directory");
        expect_error("read", "{\"path\":\"nope.txt\"}", dir,
                     "cannot read nope.txt: No such file or directory");
        expect_error("read", "{\"path\":\"f.txt/x\"}", dir, "cannot read f.txt/x: Not a directory");
        free(abs);
        abs = path_in(dir, "sub");
        assert_int_equal(mkdir(abs, 0755), 0);
        expect_error("read", "{\"path\":\"sub\"}", dir, "cannot read sub: Is a directory");
        free(args);
        free(abs);
}

static void test_read_special(void **state)
{
        const char *dir = *state;
        char *fifo = path_in(dir, "fifo");
        char probe[BUFSIZ * 2 + 16];

        /* a FIFO is refused without blocking on it */
        assert_int_equal(mkfifo(fifo, 0600), 0);
        expect_error("read", "{\"path\":\"fifo\"}", dir, "cannot read fifo: not a regular file");
        free(fifo);

        put_file(dir, "bin", "abc\0def\n", 8);
        expect_error("read", "{\"path\":\"bin\"}", dir, "cannot read bin: binary file");
        expect_error("read", "{\"path\":\"bin\",\"limit\":1}", dir, "cannot read bin: binary file");

        /* the probe is the first 8 KiB: a NUL at 8191 counts, one at 8192 does not */
        memset(probe, 'a', 8192);
        probe[8191] = '\0';
        memcpy(probe + 8192, "\nz\n", 3);
        put_file(dir, "late", probe, 8195);
        expect_error("read", "{\"path\":\"late\",\"offset\":2}", dir,
                     "cannot read late: binary file");
        probe[8191] = '\n';
        memcpy(probe + 8192, "\0\nz\n", 4);
        put_file(dir, "later", probe, 8196);
        expect_ok("read", "{\"path\":\"later\",\"offset\":3}", dir, "     3\tz\n");
}

/* A child that cannot open the file: root gives up its rights first (the
 * directory is root's, mode 0700). */
static void test_read_denied(void **state)
{
        const char *dir = *state;
        char *p = path_in(dir, "secret");
        pid_t pid;
        int st;

        put_str(dir, "secret", "s\n");
        assert_int_equal(chmod(dir, 0700), 0);
        if (geteuid() != 0)
                assert_int_equal(chmod(p, 0), 0);
        free(p);
        fflush(NULL);
        pid = fork();
        assert_true(pid >= 0);
        if (pid == 0) {
                struct tools_result r;
                json_t *args = json_pack("{s:s}", "path", "secret");

                if (geteuid() == 0 && setuid(65534) < 0)
                        _exit(3);
                tools_run_builtin("read", args, dir, NULL, &r);
                _exit(r.error && strcmp(r.text, "cannot read secret: Permission denied") == 0 ? 0
                                                                                              : 1);
        }
        assert_int_equal(waitpid(pid, &st, 0), pid);
        assert_true(WIFEXITED(st));
        assert_int_equal(WEXITSTATUS(st), 0);
}

/* Long lines cross the read chunks; numbers grow past six columns. */
static void test_read_chunks(void **state)
{
        const char *dir = *state;
        size_t big = 70000, n = 1000002, i, len;
        char *data = malloc(big + 3), *want = malloc(big + 32), *args;
        struct tools_result r;

        memset(data, 'a', big);
        memcpy(data + big, "\nb", 3);
        put_file(dir, "long", data, big + 2);
        memcpy(want, "     1\t", 7);
        memset(want + 7, 'a', big);
        strcpy(want + 7 + big, "\n     2\tb");
        expect_ok("read", "{\"path\":\"long\"}", dir, want);
        expect_ok("read", "{\"path\":\"long\",\"offset\":2}", dir, "     2\tb");
        free(data);
        free(want);

        data = malloc(n * 2);
        for (i = 0; i < n; i++)
                memcpy(data + 2 * i, i == n - 1 ? "z\n" : "x\n", 2);
        put_file(dir, "many", data, n * 2);
        free(data);
        expect_ok("read", "{\"path\":\"many\",\"offset\":999999,\"limit\":2}", dir,
                  "999999\tx\n1000000\tx\n");
        expect_ok("read", "{\"path\":\"many\",\"offset\":1000002}", dir, "1000002\tz\n");
        expect_error("read", "{\"path\":\"many\",\"offset\":1000003}", dir,
                     "cannot read many: offset 1000003 is past the end of the file (1000002 "
                     "lines)");
        assert_true(asprintf(&args, "{\"path\":\"many\"}") > 0);
        call("read", args, dir, NULL, &r);
        free(args);
        assert_false(r.error);
        len = r.len;
        assert_int_equal(len, 1000002 * 2 + 999999 * 7 + 3 * 8);
        tools_result_free(&r);
}

static void test_read_size_cap(void **state)
{
        const char *dir = *state;
        size_t n = 11u << 20, i;
        char *data = malloc(n);

        for (i = 0; i < n; i++)
                data[i] = i % 64 == 63 ? '\n' : 'q';
        put_file(dir, "huge", data, n);
        free(data);
        expect_error("read", "{\"path\":\"huge\"}", dir,
                     "cannot read huge: it is larger than 10 MB; use offset and limit to read "
                     "part of it");
        /* a selection that still passes 10 MB is refused the same way */
        expect_error("read", "{\"path\":\"huge\",\"limit\":1000000}", dir,
                     "cannot read huge: it is larger than 10 MB; use offset and limit to read "
                     "part of it");
        expect_ok("read", "{\"path\":\"huge\",\"offset\":180000,\"limit\":1}", dir,
                  "180000\tqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqq\n");
}

/* With the address space barely above what the process uses, a read
 * that loaded the 40 MB file would fail; a streaming one does not. */
static void test_read_streams(void **state)
{
#ifdef UNDER_ASAN
        skip();
#else
        const char *dir = *state;
        size_t lines = 1000000, i;
        char *data = malloc(lines * 40);
        pid_t pid;
        int st;

        for (i = 0; i < lines; i++) {
                snprintf(data + i * 40, 41, "L%07zu%31s", i + 1, "");
                data[i * 40 + 39] = '\n';
        }
        put_file(dir, "stream", data, lines * 40);
        free(data);
        fflush(NULL);
        pid = fork();
        assert_true(pid >= 0);
        if (pid == 0) {
                struct tools_result r1, r2;
                json_t *a1 = json_pack("{s:s, s:i}", "path", "stream", "offset", 1000000);
                json_t *a2 = json_pack("{s:s, s:i}", "path", "stream", "offset", 1000001);
                unsigned long pages = 0;
                struct rlimit rl;
                FILE *f = fopen("/proc/self/statm", "r");

                if (f == NULL || fscanf(f, "%lu", &pages) != 1)
                        _exit(2);
                fclose(f);
                rl.rlim_cur = rl.rlim_max =
                    pages * (unsigned long)sysconf(_SC_PAGESIZE) + (16 << 20);
                if (setrlimit(RLIMIT_AS, &rl) < 0)
                        _exit(3);
                tools_run_builtin("read", a1, dir, NULL, &r1);
                tools_run_builtin("read", a2, dir, NULL, &r2);
                if (r1.error ||
                    strcmp(r1.text, "1000000\tL1000000                               \n"))
                        _exit(4);
                if (!r2.error || strcmp(r2.text, "cannot read stream: offset 1000001 is past the "
                                                 "end of the file (1000000 lines)"))
                        _exit(5);
                _exit(0);
        }
        assert_int_equal(waitpid(pid, &st, 0), pid);
        assert_true(WIFEXITED(st));
        assert_int_equal(WEXITSTATUS(st), 0);
#endif
}

/* ---------------------------------------------------------------- write */

static void test_write_creates(void **state)
{
        const char *dir = *state;
        char *sub = path_in(dir, "a/b"), *got;
        struct stat st;

        expect_ok("write", "{\"path\":\"a/b/c.txt\",\"content\":\"hello\\nworld\"}", dir,
                  "wrote 11 bytes to a/b/c.txt");
        got = get_file(dir, "a/b/c.txt", NULL);
        assert_string_equal(got, "hello\nworld");
        free(got);
        /* the temporary file is gone: only c.txt */
        assert_int_equal(count_entries(sub), 1);
        assert_int_equal(stat(sub, &st), 0);
        assert_true(S_ISDIR(st.st_mode));
        free(sub);

        expect_ok("write", "{\"path\":\"e.txt\",\"content\":\"\"}", dir, "wrote 0 bytes to e.txt");
        got = get_file(dir, "e.txt", NULL);
        assert_string_equal(got, "");
        free(got);
        expect_ok("write", "{\"path\":\"x//y/../z.txt\",\"content\":\"z\"}", dir,
                  "wrote 1 bytes to x//y/../z.txt");
        got = get_file(dir, "x/z.txt", NULL);
        assert_string_equal(got, "z");
        free(got);
}

/* The old file is replaced, not rewritten in place: a reader that opened it
 * before still sees the whole old content. The mode is kept. */
static void test_write_atomic(void **state)
{
        const char *dir = *state;
        char *p = path_in(dir, "f.txt"), buf[64], *got;
        struct stat st;
        ssize_t n;
        int fd;

        put_str(dir, "f.txt", "old content\n");
        assert_int_equal(chmod(p, 0751), 0);
        fd = open(p, O_RDONLY);
        assert_true(fd >= 0);
        expect_ok("write", "{\"path\":\"f.txt\",\"content\":\"new\"}", dir,
                  "wrote 3 bytes to f.txt");
        n = read(fd, buf, sizeof(buf) - 1);
        close(fd);
        assert_int_equal(n, 12);
        buf[n] = '\0';
        assert_string_equal(buf, "old content\n");
        got = get_file(dir, "f.txt", NULL);
        assert_string_equal(got, "new");
        free(got);
        assert_int_equal(stat(p, &st), 0);
        assert_int_equal(st.st_mode & 07777, 0751);
        assert_int_equal(count_entries(dir), 1);
        free(p);
}

static void test_write_errors(void **state)
{
        const char *dir = *state;
        char *link = path_in(dir, "link"), *got;
        struct stat st;

        put_str(dir, "f.txt", "x");
        expect_error("write", "{\"path\":\"f.txt/y/z\",\"content\":\"q\"}", dir,
                     "cannot write f.txt/y/z: cannot create directory f.txt: Not a directory");
        assert_int_equal(mkdir(got = path_in(dir, "d"), 0755), 0);
        free(got);
        expect_error("write", "{\"path\":\"d\",\"content\":\"q\"}", dir,
                     "cannot write d: Is a directory");
        assert_int_equal(count_entries(dir), 2);

        /* through a symlink: the target changes, the link stays */
        assert_int_equal(symlink("f.txt", link), 0);
        expect_ok("write", "{\"path\":\"link\",\"content\":\"via link\"}", dir,
                  "wrote 8 bytes to link");
        got = get_file(dir, "f.txt", NULL);
        assert_string_equal(got, "via link");
        free(got);
        assert_int_equal(lstat(link, &st), 0);
        assert_true(S_ISLNK(st.st_mode));
        assert_int_equal(count_entries(dir), 3);
        free(link);
}

/* ----------------------------------------------------------------- edit */

static void test_edit(void **state)
{
        const char *dir = *state;
        char *got, *p = path_in(dir, "f.txt");
        struct stat st;

        put_str(dir, "f.txt", "one two three\ntwo\n");
        assert_int_equal(chmod(p, 0640), 0);
        expect_ok("edit", "{\"path\":\"f.txt\",\"old_str\":\"two three\",\"new_str\":\"2 3\"}", dir,
                  "replaced 1 occurrence in f.txt");
        got = get_file(dir, "f.txt", NULL);
        assert_string_equal(got, "one 2 3\ntwo\n");
        free(got);
        assert_int_equal(stat(p, &st), 0);
        assert_int_equal(st.st_mode & 07777, 0640);

        put_str(dir, "g.txt", "x x x");
        expect_error("edit", "{\"path\":\"g.txt\",\"old_str\":\"x\",\"new_str\":\"y\"}", dir,
                     "cannot edit g.txt: old_str occurs 3 times; add surrounding context to make "
                     "it unique, or set replace_all to replace every occurrence");
        got = get_file(dir, "g.txt", NULL);
        assert_string_equal(got, "x x x");
        free(got);
        expect_ok("edit",
                  "{\"path\":\"g.txt\",\"old_str\":\"x\",\"new_str\":\"yy\",\"replace_all\":true}",
                  dir, "replaced 3 occurrences in g.txt");
        got = get_file(dir, "g.txt", NULL);
        assert_string_equal(got, "yy yy yy");
        free(got);
        /* non-overlapping, left to right; an empty new_str deletes */
        put_str(dir, "h.txt", "aaaa-a");
        expect_ok("edit",
                  "{\"path\":\"h.txt\",\"old_str\":\"aa\",\"new_str\":\"\",\"replace_all\":true}",
                  dir, "replaced 2 occurrences in h.txt");
        got = get_file(dir, "h.txt", NULL);
        assert_string_equal(got, "-a");
        free(got);
        assert_int_equal(count_entries(dir), 3);
        free(p);
}

static void test_edit_errors(void **state)
{
        const char *dir = *state;
        char *got;

        put_str(dir, "f.txt", "alpha\n  beta\n");
        expect_error("edit", "{\"path\":\"f.txt\",\"old_str\":\"gamma\",\"new_str\":\"x\"}", dir,
                     "cannot edit f.txt: old_str was not found (it must match exactly, "
                     "whitespace and indentation included)");
        expect_error("edit", "{\"path\":\"f.txt\",\"old_str\":\"\\tbeta\",\"new_str\":\"x\"}", dir,
                     "cannot edit f.txt: old_str was not found (it must match exactly, "
                     "whitespace and indentation included)");
        expect_error("edit", "{\"path\":\"f.txt\",\"old_str\":\"alpha\",\"new_str\":\"alpha\"}",
                     dir,
                     "cannot edit f.txt: old_str and new_str are identical; nothing to change");
        expect_error("edit", "{\"path\":\"nope\",\"old_str\":\"a\",\"new_str\":\"b\"}", dir,
                     "cannot edit nope: No such file or directory");
        expect_error("edit", "{\"path\":\".\",\"old_str\":\"a\",\"new_str\":\"b\"}", dir,
                     "cannot edit .: Is a directory");
        got = get_file(dir, "f.txt", NULL);
        assert_string_equal(got, "alpha\n  beta\n");
        free(got);
        assert_int_equal(count_entries(dir), 1);
}

/* ---------------------------------------------------------------- cache */

static void cache_call(struct tools_cache *c, const char *name, const char *arguments, bool error,
                       const char *want)
{
        struct tools_result r;

        call(name, arguments, NULL, c, &r);
        assert_int_equal(r.error, error);
        assert_string_equal(r.text, want);
        tools_result_free(&r);
}

static void test_cache(void **state)
{
        struct tools_cache *c = tools_cache_new();

        assert_non_null(c);
        cache_call(c, "read_cache", "{\"key\":\"plan\"}", true, "no cache entry 'plan'");
        cache_call(c, "write_cache", "{\"key\":\"plan\",\"value\":\"step 1\\nstep 2\"}", false,
                   "saved 13 bytes under 'plan'");
        cache_call(c, "read_cache", "{\"key\":\"plan\"}", false, "step 1\nstep 2");
        cache_call(c, "write_cache", "{\"key\":\"plan\",\"value\":\"\"}", false,
                   "saved 0 bytes under 'plan'");
        cache_call(c, "read_cache", "{\"key\":\"plan\"}", false, "");
        cache_call(c, "read_cache", "{\"key\":\"Plan\"}", true, "no cache entry 'Plan'");
        tools_cache_free(c);
        cache_call(NULL, "read_cache", "{\"key\":\"plan\"}", true, "the cache is not available");
        cache_call(NULL, "write_cache", "{\"key\":\"k\",\"value\":\"v\"}", true,
                   "the cache is not available");
}

static void test_cache_file(void **state)
{
        const char *dir = *state;
        struct tools_cache *c = tools_cache_new(), *d = tools_cache_new();
        char *p = path_in(dir, "cache.json"), *text;
        json_t *j;
        struct stat st;

        cache_call(c, "write_cache", "{\"key\":\"a\",\"value\":\"1\"}", false,
                   "saved 1 bytes under 'a'");
        cache_call(c, "write_cache", "{\"key\":\"b\",\"value\":\"caf\\u00e9\"}", false,
                   "saved 5 bytes under 'b'");
        assert_int_equal(tools_cache_save(c, p), 0);
        assert_int_equal(count_entries(dir), 1);
        assert_int_equal(stat(p, &st), 0);
        assert_int_equal(st.st_mode & 0777, 0600);
        text = get_file(dir, "cache.json", NULL);
        j = json_loads(text, 0, NULL);
        assert_true(json_is_object(j));
        assert_string_equal(json_string_value(json_object_get(j, "a")), "1");
        json_decref(j);
        free(text);

        assert_int_equal(tools_cache_load(d, p), 0);
        cache_call(d, "read_cache", "{\"key\":\"b\"}", false, "caf\xc3\xa9");
        cache_call(d, "read_cache", "{\"key\":\"a\"}", false, "1");

        /* a failed load leaves the cache as it was */
        put_str(dir, "bad1.json", "[1]");
        put_str(dir, "bad2.json", "{\"a\":1}");
        put_str(dir, "bad3.json", "{\"a\":");
        free(p);
        assert_int_equal(tools_cache_load(d, p = path_in(dir, "bad1.json")), -EINVAL);
        free(p);
        assert_int_equal(tools_cache_load(d, p = path_in(dir, "bad2.json")), -EINVAL);
        free(p);
        assert_int_equal(tools_cache_load(d, p = path_in(dir, "bad3.json")), -EINVAL);
        free(p);
        assert_int_equal(tools_cache_load(d, p = path_in(dir, "none.json")), -ENOENT);
        free(p);
        cache_call(d, "read_cache", "{\"key\":\"a\"}", false, "1");

        /* in a shared /tmp the cache file may be a planted link: it is
         * replaced, its target left alone */
        put_str(dir, "victim", "keep");
        p = path_in(dir, "linked.json");
        assert_int_equal(symlink("victim", p), 0);
        assert_int_equal(tools_cache_save(d, p), 0);
        assert_int_equal(lstat(p, &st), 0);
        assert_true(S_ISREG(st.st_mode));
        free(p);
        text = get_file(dir, "victim", NULL);
        assert_string_equal(text, "keep");
        free(text);
        assert_int_equal(tools_cache_save(d, NULL), -EINVAL);
        assert_int_equal(tools_cache_load(NULL, "x"), -EINVAL);
        tools_cache_free(c);
        tools_cache_free(d);
        tools_cache_free(NULL);
}

/* ------------------------------------------------------------------ cap */

static void expect_cap(const char *in, size_t len, size_t cap, const char *want, bool cut)
{
        bool truncated = !cut;
        size_t out_len = 12345;
        char *s = tools_cap(in, len, cap, &out_len, &truncated);

        assert_non_null(s);
        assert_int_equal(truncated, cut);
        assert_int_equal(out_len, strlen(want));
        assert_memory_equal(s, want, out_len);
        assert_int_equal(s[out_len], '\0');
        free(s);
}

static void test_cap_ascii(void **state)
{
        expect_cap("abcdefgh", 8, 8, "abcdefgh", false);
        expect_cap("abcdefghi", 9, 8, "ab\n[... 1 character cut ...]\ndefghi", true);
        expect_cap("abcdefghij", 10, 8, "ab\n[... 2 characters cut ...]\nefghij", true);
        expect_cap("0123456789abcdef", 16, 10, "01\n[... 6 characters cut ...]\n89abcdef", true);
        expect_cap("abc", 3, 0, "\n[... 3 characters cut ...]\n", true);
        expect_cap("", 0, 0, "", false);
        expect_cap(NULL, 0, 5, "", false);
}

/* len, not a NUL, bounds the text */
static void test_cap_nul(void **state)
{
        size_t out_len;
        bool t;
        char *s = tools_cap("ab\0cdef", 7, 6, &out_len, &t);

        assert_true(t);
        assert_int_equal(out_len, 33);
        assert_memory_equal(s, "a\n[... 1 character cut ...]\n\0cdef", 34);
        free(s);
        s = tools_cap("ab\0cd", 5, 5, &out_len, &t);
        assert_false(t);
        assert_int_equal(out_len, 5);
        assert_memory_equal(s, "ab\0cd", 6);
        free(s);
}

static void test_cap_default(void **state)
{
        size_t n = TOOLS_OUTPUT_CAP + 12345, out_len;
        char *in = malloc(n), *s;
        bool t;

        memset(in, 'h', TOOLS_OUTPUT_CAP / 4);
        memset(in + TOOLS_OUTPUT_CAP / 4, 'm', 12345);
        memset(in + TOOLS_OUTPUT_CAP / 4 + 12345, 't', n - TOOLS_OUTPUT_CAP / 4 - 12345);
        s = tools_cap(in, n, TOOLS_OUTPUT_CAP, &out_len, &t);
        assert_true(t);
        assert_non_null(strstr(s, "h\n[... 12345 characters cut ...]\nt"));
        assert_null(strchr(s, 'm'));
        assert_int_equal(out_len, TOOLS_OUTPUT_CAP + strlen("\n[... 12345 characters cut ...]\n"));
        free(s);
        free(in);
}

static void test_cap_multibyte(void **state)
{
        /* é is 2 bytes, € 3, 😀 4: ten characters, 24 bytes */
        static const char in[] = "\xc3\xa9"
                                 "a"
                                 "\xe2\x82\xac"
                                 "b"
                                 "\xf0\x9f\x98\x80"
                                 "c"
                                 "\xc3\xa9"
                                 "d"
                                 "\xe2\x82\xac"
                                 "\xf0\x9f\x98\x80";

        expect_cap(in, sizeof(in) - 1, 10, in, false);
        /* cap 9: 2 + 7; the cut is the character after the head */
        expect_cap(in, sizeof(in) - 1, 9,
                   "\xc3\xa9"
                   "a"
                   "\n[... 1 character cut ...]\n"
                   "b"
                   "\xf0\x9f\x98\x80"
                   "c"
                   "\xc3\xa9"
                   "d"
                   "\xe2\x82\xac"
                   "\xf0\x9f\x98\x80",
                   true);
        /* cap 4: 1 + 3; both ends fall inside multi-byte characters */
        expect_cap(in, sizeof(in) - 1, 4,
                   "\xc3\xa9"
                   "\n[... 6 characters cut ...]\n"
                   "d"
                   "\xe2\x82\xac"
                   "\xf0\x9f\x98\x80",
                   true);
        expect_cap("\xe2\x82\xac\xe2\x82\xac\xe2\x82\xac\xe2\x82\xac\xe2\x82\xac", 15, 4,
                   "\xe2\x82\xac\n[... 1 character cut ...]\n\xe2\x82\xac\xe2\x82\xac\xe2\x82\xac",
                   true);
}

static void test_cap_invalid_utf8(void **state)
{
        /* each stray byte is one character, and is kept */
        expect_cap("\xff\xfe\xfd\xfc\xfb", 5, 5, "\xff\xfe\xfd\xfc\xfb", false);
        expect_cap("\xff\xfe\xfd\xfc\xfb\xfa", 6, 5,
                   "\xff\n[... 1 character cut ...]\n\xfd\xfc\xfb\xfa", true);
        /* a truncated sequence is two characters; an overlong one three */
        expect_cap("\xe2\x82", 2, 2, "\xe2\x82", false);
        expect_cap("\xe2\x82z", 3, 2, "\n[... 1 character cut ...]\n\x82z", true);
        expect_cap("\xe0\x80\x80", 3, 3, "\xe0\x80\x80", false);
        expect_cap("\xe0\x80\x80", 3, 2, "\n[... 1 character cut ...]\n\x80\x80", true);
        /* a surrogate (ED A0 80) is three characters, a valid ED 9F BF one */
        expect_cap("\xed\xa0\x80"
                   "x",
                   4, 3, "\n[... 1 character cut ...]\n\xa0\x80x", true);
        expect_cap("\xed\x9f\xbf"
                   "xyz",
                   6, 4,
                   "\xed\x9f\xbf"
                   "xyz",
                   false);
}

/* ----------------------------------------------------------- tools_main */

struct main_run {
        int status; /* exit code, or -1 when not exited */
        char *out;
};

/* Runs tools_main in a child with `input` on stdin, in `dir`, with the
 * cache under `dir` too; captures stdout. */
static struct main_run run_main(const char *dir, int argc, char **argv, const char *input,
                                size_t inlen)
{
        char *in_path = path_in(dir, ".stdin"), *out_path = path_in(dir, ".stdout");
        struct main_run m = {.status = -1};
        pid_t pid;
        int st, fd;

        put_file(dir, ".stdin", input, inlen);
        fflush(NULL);
        pid = fork();
        assert_true(pid >= 0);
        if (pid == 0) {
                fd = open(in_path, O_RDONLY);
                if (fd < 0 || dup2(fd, 0) < 0)
                        _exit(90);
                fd = open(out_path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
                if (fd < 0 || dup2(fd, 1) < 0 || chdir(dir) < 0 || setenv("TMPDIR", dir, 1) < 0)
                        _exit(91);
                _exit(tools_main(argc, argv));
        }
        assert_int_equal(waitpid(pid, &st, 0), pid);
        if (WIFEXITED(st))
                m.status = WEXITSTATUS(st);
        m.out = get_file(dir, ".stdout", NULL);
        assert_non_null(m.out);
        unlink(in_path);
        unlink(out_path);
        free(in_path);
        free(out_path);
        return m;
}

static void expect_main(const char *dir, const char *tool, const char *input, int status,
                        const char *want)
{
        char *argv[] = {"tool", (char *)tool, NULL};
        struct main_run m = run_main(dir, tool ? 2 : 1, argv, input, strlen(input));

        assert_int_equal(m.status, status);
        assert_string_equal(m.out, want);
        free(m.out);
}

static void test_main_file_tools(void **state)
{
        const char *dir = *state;
        char *got;

        put_str(dir, "f.txt", "one\ntwo\n");
        expect_main(dir, "read", "{\"path\":\"f.txt\",\"offset\":2}", 0, "     2\ttwo\n");
        expect_main(dir, "write", "{\"path\":\"out/g.txt\",\"content\":\"hi\"}", 0,
                    "wrote 2 bytes to out/g.txt");
        got = get_file(dir, "out/g.txt", NULL);
        assert_string_equal(got, "hi");
        free(got);
        expect_main(dir, "edit", "{\"path\":\"out/g.txt\",\"old_str\":\"hi\",\"new_str\":\"ho\"}",
                    0, "replaced 1 occurrence in out/g.txt");
        expect_main(dir, "read", "{\"path\":\"nope\"}", 1,
                    "cannot read nope: No such file or directory");
}

static void test_main_cache(void **state)
{
        const char *dir = *state;
        char *want;

        expect_main(dir, "read_cache", "{\"key\":\"k\"}", 1, "no cache entry 'k'");
        expect_main(dir, "write_cache", "{\"key\":\"k\",\"value\":\"v1\"}", 0,
                    "saved 2 bytes under 'k'");
        expect_main(dir, "read_cache", "{\"key\":\"k\"}", 0, "v1");
        expect_main(dir, "write_cache", "{\"key\":\"j\",\"value\":\"v2\"}", 0,
                    "saved 2 bytes under 'j'");
        expect_main(dir, "read_cache", "{\"key\":\"k\"}", 0, "v1");
        expect_main(dir, "read_cache", "{\"key\":\"j\"}", 0, "v2");
        /* only the cache file is left behind */
        assert_int_equal(count_entries(dir), 1);
        put_str(dir, "proctor-cache.json", "not json");
        assert_true(asprintf(&want,
                             "cannot load the cache %s/proctor-cache.json: not a JSON object "
                             "of strings",
                             dir) > 0);
        expect_main(dir, "read_cache", "{\"key\":\"k\"}", 1, want);
        expect_main(dir, "write_cache", "{\"key\":\"k\",\"value\":\"v\"}", 1, want);
        free(want);
}

static void test_main_bad_input(void **state)
{
        const char *dir = *state;
        char *argv[] = {"tool", "read", NULL};
        static const char garbage[] = "\x00\xff{\"path\x01";
        struct main_run m;

        expect_main(dir, "bash", "{\"command\":\"ls\"}", 1,
                    "'bash' runs a process; `proctor tool` runs only the builtin tools");
        expect_main(dir, "run_python_code", "{\"code\":\"1\"}", 1,
                    "'run_python_code' runs a process; `proctor tool` runs only the builtin "
                    "tools");
        expect_main(dir, "grep", "{}", 1,
                    "unknown tool 'grep' (available: bash, read, write, edit, run_python_code, "
                    "read_cache, write_cache)");
        expect_main(dir, NULL, "", 1, "usage: proctor tool NAME < ARGUMENTS.json");
        expect_main(dir, "read", "", 1, "arguments for 'read': missing required field 'path'");
        expect_main(dir, "read", "[]", 1,
                    "arguments for 'read' must be a JSON object, not an array");
        m = run_main(dir, 2, argv, "{\"path\":", 8);
        assert_int_equal(m.status, 1);
        assert_memory_equal(m.out, "arguments for 'read' are not valid JSON: ", 41);
        free(m.out);
        m = run_main(dir, 2, argv, garbage, sizeof(garbage) - 1);
        assert_int_equal(m.status, 1);
        assert_string_equal(m.out, "arguments for 'read' are not valid JSON: a NUL byte");
        free(m.out);
        m = run_main(dir, 2, argv, garbage + 1, sizeof(garbage) - 2);
        assert_int_equal(m.status, 1);
        assert_memory_equal(m.out, "arguments for 'read' are not valid JSON: ", 41);
        free(m.out);
}

#define DIR_TEST(f) cmocka_unit_test_setup_teardown(f, dir_setup, dir_teardown)

int main(void)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test(test_schemas),
            cmocka_unit_test(test_schema_types),
            cmocka_unit_test(test_parse_errors),
            cmocka_unit_test(test_parse_invalid_json),
            cmocka_unit_test(test_parse_ok),
            cmocka_unit_test(test_run_unvalidated),
            DIR_TEST(test_read_lines),
            DIR_TEST(test_read_paths),
            DIR_TEST(test_read_special),
            DIR_TEST(test_read_denied),
            DIR_TEST(test_read_chunks),
            DIR_TEST(test_read_size_cap),
            DIR_TEST(test_read_streams),
            DIR_TEST(test_write_creates),
            DIR_TEST(test_write_atomic),
            DIR_TEST(test_write_errors),
            DIR_TEST(test_edit),
            DIR_TEST(test_edit_errors),
            cmocka_unit_test(test_cache),
            DIR_TEST(test_cache_file),
            cmocka_unit_test(test_cap_ascii),
            cmocka_unit_test(test_cap_nul),
            cmocka_unit_test(test_cap_default),
            cmocka_unit_test(test_cap_multibyte),
            cmocka_unit_test(test_cap_invalid_utf8),
            DIR_TEST(test_main_file_tools),
            DIR_TEST(test_main_cache),
            DIR_TEST(test_main_bad_input),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
