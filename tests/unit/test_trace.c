/* Unit tests for trace: the JSONL writer (whole lines, no secrets, private
 * files, survives SIGKILL) and the replay summary an operator reads. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "core/util/bus.h"
#include "core/session/trace.h"
#include "tests/unit/tmpdir.h"

#define SAMPLE "tests/data/sample-trace.jsonl"

struct fixture {
        char dir[64];
        char path[128]; /* $dir/t.jsonl */
};

static int setup(void **state)
{
        struct fixture *f = calloc(1, sizeof(*f));

        if (f == NULL)
                return -1;
        snprintf(f->dir, sizeof(f->dir), "/tmp/proctor-trace.XXXXXX");
        if (mkdtemp(f->dir) == NULL)
                return -1;
        snprintf(f->path, sizeof(f->path), "%s/t.jsonl", f->dir);
        unsetenv("PROCTOR_API_KEY");
        unsetenv("OPENAI_API_KEY");
        unsetenv("HF_TOKEN");
        *state = f;
        return 0;
}

static int teardown(void **state)
{
        struct fixture *f = *state;

        if (tmpdir_remove(f->dir) != 0)
                return -1;
        free(f);
        return 0;
}

static char *slurp(const char *path, size_t *len)
{
        FILE *fp = fopen(path, "r");
        char *buf;
        long n;

        assert_non_null(fp);
        fseek(fp, 0, SEEK_END);
        n = ftell(fp);
        fseek(fp, 0, SEEK_SET);
        buf = malloc((size_t)n + 1);
        assert_non_null(buf);
        assert_int_equal(fread(buf, 1, (size_t)n, fp), (size_t)n);
        buf[n] = '\0';
        fclose(fp);
        if (len != NULL)
                *len = (size_t)n;
        return buf;
}

static void spit(const char *path, const char *text)
{
        FILE *fp = fopen(path, "w");

        assert_non_null(fp);
        fputs(text, fp);
        assert_int_equal(fclose(fp), 0);
}

/* Parses every line of the file; fails the test on a line that is not a
 * complete JSON object. Returns the events as an array. */
static json_t *parse_lines(const char *path)
{
        size_t len, i = 0;
        char *buf = slurp(path, &len);
        json_t *all = json_array();
        int line = 0;

        if (len > 0 && buf[len - 1] != '\n')
                fail_msg("%s: the last line is not complete", path);
        while (i < len) {
                char *nl = memchr(buf + i, '\n', len - i);
                json_error_t e;
                json_t *ev;

                line++;
                ev = json_loadb(buf + i, (size_t)(nl - (buf + i)), 0, &e);
                if (ev == NULL || !json_is_object(ev))
                        fail_msg("%s:%d: not a JSON object: %s", path, line, e.text);
                json_array_append_new(all, ev);
                i = (size_t)(nl - buf) + 1;
        }
        free(buf);
        return all;
}

static void test_one_complete_line_per_event(void **state)
{
        struct fixture *f = *state;
        struct bus *b = bus_new();
        struct trace *t;
        char err[256];
        json_t *all;

        assert_int_equal(trace_open(f->path, NULL, &t, err, sizeof(err)), 0);
        assert_string_equal(trace_path(t), f->path);
        bus_subscribe(b, trace_event, t);
        bus_emit(b, "user.message", json_pack("{s:s}", "text", "line one\nline two\ttab"));
        bus_emit(b, "tool.output",
                 json_pack("{s:s,s:s,s:s}", "call_id", "c1", "stream", "stdout", "data",
                           "caf\xc3\xa9 \xe2\x9c\x93\r\n{\"nested\": \"json\"}\n"));
        bus_emit(b, "turn.end", json_pack("{s:i}", "turn", 1));
        trace_close(t);
        bus_free(b);

        all = parse_lines(f->path);
        assert_int_equal(json_array_size(all), 3);
        assert_int_equal(json_integer_value(json_object_get(json_array_get(all, 0), "seq")), 1);
        assert_string_equal(json_string_value(json_object_get(json_array_get(all, 0), "text")),
                            "line one\nline two\ttab");
        assert_string_equal(json_string_value(json_object_get(json_array_get(all, 1), "type")),
                            "tool.output");
        assert_string_equal(json_string_value(json_object_get(json_array_get(all, 1), "data")),
                            "caf\xc3\xa9 \xe2\x9c\x93\r\n{\"nested\": \"json\"}\n");
        assert_int_equal(json_integer_value(json_object_get(json_array_get(all, 2), "seq")), 3);
        json_decref(all);
}

static void test_secret_fields_dropped(void **state)
{
        struct fixture *f = *state;
        struct trace *t;
        char err[256], *raw;
        json_t *ev, *all, *got;

        assert_int_equal(trace_open(f->path, NULL, &t, err, sizeof(err)), 0);
        ev = json_pack("{s:i,s:s,s:s,s:s,s:{s:s,s:s},s:{s:i,s:i},s:[{s:s,s:s}],s:{s:s}}", "seq", 1,
                       "type", "model.request", "api_key", "sk-live-dropme", "github_token",
                       "ghp_dropme", "headers", "Authorization", "Bearer dropme", "Accept",
                       "text/event-stream", "usage", "prompt_tokens", 812, "completion_tokens", 40,
                       "items", "db_password", "hunter2dropme", "name", "kept", "credentials",
                       "user", "dropme");
        trace_event(ev, t);
        trace_close(t);

        raw = slurp(f->path, NULL);
        assert_null(strstr(raw, "dropme"));
        assert_null(strstr(raw, "api_key"));
        free(raw);
        all = parse_lines(f->path);
        got = json_array_get(all, 0);
        assert_null(json_object_get(got, "api_key"));
        assert_null(json_object_get(got, "github_token"));
        assert_null(json_object_get(got, "credentials"));
        assert_null(json_object_get(json_object_get(got, "headers"), "Authorization"));
        assert_string_equal(
            json_string_value(json_object_get(json_object_get(got, "headers"), "Accept")),
            "text/event-stream");
        /* token counts are numbers, not credentials */
        assert_int_equal(
            json_integer_value(json_object_get(json_object_get(got, "usage"), "prompt_tokens")),
            812);
        assert_string_equal(json_string_value(json_object_get(
                                json_array_get(json_object_get(got, "items"), 0), "name")),
                            "kept");
        /* the caller's event is untouched: other subscribers still see it */
        assert_non_null(json_object_get(ev, "api_key"));
        json_decref(all);
        json_decref(ev);
}

static void test_key_values_scrubbed(void **state)
{
        struct fixture *f = *state;
        struct trace *t;
        char err[256], *raw;
        json_t *ev, *all, *got;

        setenv("OPENAI_API_KEY", "sk-test-0123456789abcdef", 1);
        setenv("HF_TOKEN", "hf_ZYXWVUTSRQ", 1);
        assert_int_equal(trace_open(f->path, NULL, &t, err, sizeof(err)), 0);
        ev = json_pack(
            "{s:s,s:s,s:s,s:s,s:[s,s],s:s}", "type", "tool.output", "call_id", "c7", "data",
            "OPENAI_API_KEY=sk-test-0123456789abcdef\nHF_TOKEN=hf_ZYXWVUTSRQ\nPATH=/bin\n", "echo",
            "sk-test-0123456789abcdef", "argv", "curl", "hf_ZYXWVUTSRQ", "stream", "stdout");
        trace_event(ev, t);
        trace_close(t);
        unsetenv("OPENAI_API_KEY");
        unsetenv("HF_TOKEN");

        raw = slurp(f->path, NULL);
        assert_null(strstr(raw, "sk-test-0123456789abcdef"));
        assert_null(strstr(raw, "hf_ZYXWVUTSRQ"));
        free(raw);
        all = parse_lines(f->path);
        got = json_array_get(all, 0);
        assert_string_equal(json_string_value(json_object_get(got, "data")),
                            "OPENAI_API_KEY=[redacted]\nHF_TOKEN=[redacted]\nPATH=/bin\n");
        assert_null(json_object_get(got, "echo"));
        assert_string_equal(json_string_value(json_array_get(json_object_get(got, "argv"), 0)),
                            "curl");
        assert_string_equal(json_string_value(json_array_get(json_object_get(got, "argv"), 1)),
                            "[redacted]");
        assert_string_equal(json_string_value(json_object_get(got, "call_id")), "c7");
        json_decref(all);
        json_decref(ev);

        /* a key shorter than "[redacted]", many times in one string; a very
         * short key is only removed where it is the whole value */
        setenv("PROCTOR_API_KEY", "k8k8k8k8", 1);
        setenv("HF_TOKEN", "abc", 1);
        assert_int_equal(trace_open(f->path, NULL, &t, err, sizeof(err)), 0);
        ev = json_pack("{s:s,s:s,s:s}", "data", "a k8k8k8k8 b k8k8k8k8k8k8k8k8k8k8k8k8", "short",
                       "abc", "word", "abcdef");
        trace_event(ev, t);
        trace_close(t);
        unsetenv("PROCTOR_API_KEY");
        unsetenv("HF_TOKEN");
        all = parse_lines(f->path);
        got = json_array_get(all, 0);
        assert_string_equal(json_string_value(json_object_get(got, "data")),
                            "a [redacted] b [redacted][redacted][redacted]");
        assert_null(json_object_get(got, "short"));
        assert_string_equal(json_string_value(json_object_get(got, "word")), "abcdef");
        json_decref(all);
        json_decref(ev);
}

static void test_files_are_private(void **state)
{
        struct fixture *f = *state;
        char state_home[128], want[256], err[256];
        struct trace *t;
        struct stat st;
        mode_t old = umask(022);
        json_t *ev = json_pack("{s:s}", "type", "turn.start");

        snprintf(state_home, sizeof(state_home), "%s/state", f->dir);
        setenv("XDG_STATE_HOME", state_home, 1);
        assert_int_equal(trace_open(NULL, "20261130-101502-7f3a", &t, err, sizeof(err)), 0);
        snprintf(want, sizeof(want), "%s/proctor/sessions/20261130-101502-7f3a.jsonl", state_home);
        assert_string_equal(trace_path(t), want);
        trace_event(ev, t);
        trace_close(t);
        assert_int_equal(stat(want, &st), 0);
        assert_int_equal(st.st_mode & 0777, 0600);
        assert_true(st.st_size > 0);
        snprintf(want, sizeof(want), "%s/proctor", state_home);
        assert_int_equal(stat(want, &st), 0);
        assert_int_equal(st.st_mode & 0777, 0700);
        snprintf(want, sizeof(want), "%s/proctor/sessions", state_home);
        assert_int_equal(stat(want, &st), 0);
        assert_int_equal(st.st_mode & 0777, 0700);

        /* a session id cannot walk out of the directory */
        assert_int_equal(trace_open(NULL, "../escape", &t, err, sizeof(err)), -EINVAL);
        assert_int_equal(trace_open(NULL, "a/b", &t, err, sizeof(err)), -EINVAL);

        /* an existing --trace file is truncated and made private */
        spit(f->path, "old session\n");
        chmod(f->path, 0644);
        assert_int_equal(trace_open(f->path, NULL, &t, err, sizeof(err)), 0);
        trace_event(ev, t);
        trace_close(t);
        assert_int_equal(stat(f->path, &st), 0);
        assert_int_equal(st.st_mode & 0777, 0600);
        json_decref(parse_lines(f->path));

        assert_int_equal(trace_open("/nonexistent/dir/t.jsonl", NULL, &t, err, sizeof(err)),
                         -ENOENT);
        assert_non_null(strstr(err, "/nonexistent/dir/t.jsonl: No such file"));
        unsetenv("XDG_STATE_HOME");
        umask(old);
        json_decref(ev);
}

/* A link planted where proctor keeps its traces, or at a trace's own path,
 * is refused with a message naming it, and nothing is written through it. */
static void test_planted_links_refused(void **state)
{
        struct fixture *f = *state;
        char state_home[128], p[256], q[256], elsewhere[128], err[512];
        struct trace *t;
        struct stat st;

        snprintf(state_home, sizeof(state_home), "%s/state", f->dir);
        snprintf(elsewhere, sizeof(elsewhere), "%s/elsewhere", f->dir);
        assert_int_equal(mkdir(elsewhere, 0777), 0);
        setenv("XDG_STATE_HOME", state_home, 1);

        /* sessions/ a link to a directory elsewhere */
        snprintf(p, sizeof(p), "%s/proctor", state_home);
        assert_int_equal(mkdir(state_home, 0700), 0);
        assert_int_equal(mkdir(p, 0700), 0);
        snprintf(p, sizeof(p), "%s/proctor/sessions", state_home);
        assert_int_equal(symlink(elsewhere, p), 0);
        assert_int_equal(trace_open(NULL, "20261130-101502-7f3a", &t, err, sizeof(err)), -ELOOP);
        assert_non_null(strstr(err, p));
        assert_non_null(strstr(err, "symbolic link"));
        assert_int_equal(rmdir(elsewhere), 0); /* still empty */
        assert_int_equal(mkdir(elsewhere, 0777), 0);
        assert_int_equal(unlink(p), 0);

        /* proctor/ itself a link: not even sessions/ is made through it */
        snprintf(p, sizeof(p), "%s/proctor", state_home);
        assert_int_equal(rmdir(p), 0);
        assert_int_equal(symlink(elsewhere, p), 0);
        assert_int_equal(trace_open(NULL, "20261130-101502-7f3a", &t, err, sizeof(err)), -ELOOP);
        assert_non_null(strstr(err, p));
        assert_int_equal(rmdir(elsewhere), 0);
        assert_int_equal(unlink(p), 0);

        /* a link planted at the default trace file's path */
        assert_int_equal(trace_open(NULL, "first", &t, err, sizeof(err)), 0);
        trace_close(t);
        snprintf(p, sizeof(p), "%s/proctor/sessions/20261130-101502-7f3a.jsonl", state_home);
        snprintf(q, sizeof(q), "%s/target", f->dir);
        assert_int_equal(symlink(q, p), 0);
        assert_int_equal(trace_open(NULL, "20261130-101502-7f3a", &t, err, sizeof(err)), -EEXIST);
        assert_non_null(strstr(err, p));
        assert_int_equal(lstat(q, &st), -1); /* the link's target was not made */

        /* and at an explicit --trace path */
        assert_int_equal(symlink(q, f->path), 0);
        assert_int_equal(trace_open(f->path, NULL, &t, err, sizeof(err)), -ELOOP);
        assert_non_null(strstr(err, f->path));
        assert_int_equal(lstat(q, &st), -1);

        /* a sessions directory, or an existing --trace file, of another user's */
        if (geteuid() == 0) {
                snprintf(p, sizeof(p), "%s/proctor/sessions", state_home);
                assert_int_equal(chown(p, 65534, 65534), 0);
                assert_int_equal(trace_open(NULL, "second", &t, err, sizeof(err)), -EPERM);
                assert_non_null(strstr(err, p));
                assert_non_null(strstr(err, "owned by uid 65534"));
                assert_int_equal(chown(p, 0, 0), 0);
                assert_int_equal(unlink(f->path), 0);
                spit(f->path, "someone's\n");
                assert_int_equal(chown(f->path, 65534, 65534), 0);
                assert_int_equal(trace_open(f->path, NULL, &t, err, sizeof(err)), -EPERM);
                assert_int_equal(stat(f->path, &st), 0);
                assert_int_equal(st.st_size, 10); /* left as it was */
        }
        unsetenv("XDG_STATE_HOME");
}

static void test_write_errors_are_reported(void **state)
{
        struct trace *t;
        char err[256];
        json_t *ev = json_pack("{s:s}", "type", "turn.start");

        assert_int_equal(trace_open("/dev/full", NULL, &t, err, sizeof(err)), 0);
        assert_int_equal(trace_status(t), 0);
        assert_string_equal(trace_error(t), "");
        trace_event(ev, t);
        assert_int_equal(trace_status(t), -ENOSPC);
        assert_non_null(strstr(trace_error(t), "trace /dev/full: No space left on device"));
        trace_close(t);
        json_decref(ev);
}

/* A prepared trace makes its file at the first event, not before: a
 * supervisor quit from its setup screen leaves none. Refusals that need no
 * file still come at once. */
static void test_prepared_trace_made_at_first_event(void **state)
{
        struct fixture *f = *state;
        char err[512], link[160];
        struct trace *t;
        json_t *ev = json_pack("{s:I,s:s}", "seq", (json_int_t)1, "type", "session.start");
        size_t len;
        char *got;

        assert_int_equal(trace_prepare(f->path, NULL, &t, err, sizeof(err)), 0);
        assert_int_equal(access(f->path, F_OK), -1);
        trace_close(t);
        assert_int_equal(access(f->path, F_OK), -1);

        assert_int_equal(trace_prepare(f->path, NULL, &t, err, sizeof(err)), 0);
        trace_event(ev, t);
        assert_int_equal(trace_status(t), 0);
        trace_close(t);
        got = slurp(f->path, &len);
        assert_non_null(strstr(got, "\"type\":\"session.start\""));
        free(got);

        snprintf(link, sizeof(link), "%s/link.jsonl", f->dir);
        assert_int_equal(symlink(f->path, link), 0);
        assert_int_equal(trace_prepare(link, NULL, &t, err, sizeof(err)), -ELOOP);
        assert_non_null(strstr(err, "symbolic link"));
        json_decref(ev);
}

/* Runs `proctor replay --summary path`, capturing what it prints. */
static int summary(const char *path, char **out, char **err)
{
        char *argv[] = {"replay", "--summary", (char *)path, NULL};
        char ofile[] = "/tmp/proctor-sum-out.XXXXXX", efile[] = "/tmp/proctor-sum-err.XXXXXX";
        int ofd = mkstemp(ofile), efd = mkstemp(efile);
        int so, se, rc;

        assert_true(ofd >= 0 && efd >= 0);
        fflush(stdout);
        fflush(stderr);
        so = dup(1);
        se = dup(2);
        dup2(ofd, 1);
        dup2(efd, 2);
        rc = trace_summary_main(path != NULL ? 3 : 2, argv);
        fflush(stdout);
        fflush(stderr);
        dup2(so, 1);
        dup2(se, 2);
        close(so);
        close(se);
        close(ofd);
        close(efd);
        *out = slurp(ofile, NULL);
        *err = slurp(efile, NULL);
        unlink(ofile);
        unlink(efile);
        return rc;
}

/* The line of text that contains needle (a copy), or a failed test. */
static char *line_with(const char *text, const char *needle)
{
        const char *p = strstr(text, needle), *b, *e;

        if (p == NULL)
                fail_msg("no line contains [%s] in:\n%s", needle, text);
        for (b = p; b > text && b[-1] != '\n'; b--)
                ;
        e = strchr(p, '\n');
        return strndup(b, e != NULL ? (size_t)(e - b) : strlen(b));
}

static int count_lines(const char *text)
{
        int n = 0;

        for (; *text != '\0'; text++)
                n += *text == '\n';
        return n;
}

/* Asserts that one line holds all the given strings (NULL-terminated). */
static void expect_line(const char *text, const char *needle, ...)
{
        char *line = line_with(text, needle);
        const char *s;
        va_list ap;

        va_start(ap, needle);
        while ((s = va_arg(ap, const char *)) != NULL)
                if (strstr(line, s) == NULL)
                        fail_msg("line [%s] lacks [%s]", line, s);
        va_end(ap);
        free(line);
}

/* The child appends events of varying size: `count` of them, then it says
 * so on `ready` and waits to be killed; or, with count 0, without end. */
static _Noreturn void writer_child(const char *path, unsigned count, int ready)
{
        char err[256], *data = malloc(3000);
        struct trace *t;
        unsigned i;

        alarm(20); /* never outlive a broken parent */
        if (data == NULL || trace_open(path, NULL, &t, err, sizeof(err)) < 0)
                _exit(1);
        for (i = 0; count == 0 || i < count; i++) {
                size_t n = 100 + (i * 7919) % 2800;
                json_t *ev;

                memset(data, 'a' + (int)(i % 26), n);
                data[n] = '\0';
                ev = json_pack("{s:I,s:s,s:s,s:s}", "seq", (json_int_t)i, "type", "tool.output",
                               "stream", "stdout", "data", data);
                trace_event(ev, t);
                json_decref(ev);
        }
        if (write(ready, "k", 1) != 1)
                _exit(1);
        for (;;)
                pause();
}

static void kill_child(pid_t pid)
{
        int status;

        kill(pid, SIGKILL);
        assert_int_equal(waitpid(pid, &status, 0), pid);
        assert_true(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
}

/* Every event that trace_event has returned from is in the file, whole,
 * when proctor is killed: nothing waits in a buffer. */
static void test_sigkill_loses_no_event(void **state)
{
        struct fixture *f = *state;
        json_t *all, *ev;
        int fds[2];
        size_t i;
        pid_t pid;
        char c;

        assert_int_equal(pipe(fds), 0);
        pid = fork();
        assert_true(pid >= 0);
        if (pid == 0)
                writer_child(f->path, 500, fds[1]);
        close(fds[1]);
        assert_int_equal(read(fds[0], &c, 1), 1);
        close(fds[0]);
        kill_child(pid);
        all = parse_lines(f->path);
        assert_int_equal(json_array_size(all), 500);
        json_array_foreach (all, i, ev)
                assert_int_equal(json_integer_value(json_object_get(ev, "seq")), i);
        json_decref(all);
}

/* Killed in the middle of writing, a trace keeps every line whole but the
 * last, which Linux may cut at a page boundary (it stops a write between
 * pages when the writer is killed); the summary reports that line and
 * reads the rest. */
static void test_sigkill_mid_write(void **state)
{
        struct fixture *f = *state;
        long page = sysconf(_SC_PAGESIZE);
        int round;

        for (round = 0; round < 8; round++) {
                struct timespec pause = {0, 200000 + round * 130000};
                size_t len, i = 0, lines = 0;
                char *buf, *out, *err;
                struct stat st;
                int waited = 0;
                pid_t pid;

                unlink(f->path);
                pid = fork();
                assert_true(pid >= 0);
                if (pid == 0)
                        writer_child(f->path, 0, -1);
                while ((stat(f->path, &st) < 0 || st.st_size < 200000 + round * 50000) &&
                       waited++ < 10000)
                        nanosleep(&pause, NULL);
                kill_child(pid);

                buf = slurp(f->path, &len);
                while (i < len) {
                        char *nl = memchr(buf + i, '\n', len - i);
                        json_t *ev;

                        if (nl == NULL) {
                                /* the cut tail: only ever at a page boundary */
                                assert_int_equal(len % (size_t)page, 0);
                                break;
                        }
                        ev = json_loadb(buf + i, (size_t)(nl - (buf + i)), 0, NULL);
                        if (ev == NULL)
                                fail_msg("line %zu of a killed trace is broken", lines + 1);
                        assert_int_equal(json_integer_value(json_object_get(ev, "seq")), lines);
                        json_decref(ev);
                        lines++;
                        i = (size_t)(nl - buf) + 1;
                }
                assert_true(lines > 50);
                free(buf);

                assert_int_equal(summary(f->path, &out, &err), i < len ? 1 : 0);
                assert_int_equal(count_lines(err), i < len ? 1 : 0);
                free(out);
                free(err);
        }
}

static void test_summary_of_sample(void **state)
{
        char *out, *err;

        assert_int_equal(summary(SAMPLE, &out, &err), 0);
        assert_string_equal(err, "");
        expect_line(out, "session 20261130-101502-7f3a", "mode sandbox", "model openai:gpt-4o-mini",
                    "workspace /home/dev/mdtable", NULL);
        expect_line(out, "turn 1: ", "\"The tests for the table parser fail", NULL);
        expect_line(out, "{\"command\":\"python3 -m pytest -q\"}", "  1  bash", "1.8s", "error",
                    "exec 1 exited 1", NULL);
        expect_line(out, "{\"path\":\"mdtable/parse.py\",\"offset\":40,\"limit\":60}", "  2  read",
                    "19ms", " ok ", "exec 2 exited 0", NULL);
        /* long arguments are cut to 60 characters */
        expect_line(out, "{\"command\":\"python3 tests/bench_parse.py --rows 5000000 -... ",
                    "  3  bash", "902ms", "error", "exec 3 killed by the operator", NULL);
        expect_line(out, "turn 2: ", "\"Don't run the benchmark again.", NULL);
        expect_line(out, "model error: ", "HTTP 429", "rate limited", "retry in 2.0s", NULL);
        expect_line(out, "{\"path\":\"mdtable/align.py\"}", "  4  read", "14ms", "error",
                    "exec 4 exited 1", NULL);
        expect_line(out, "  5  edit", "16ms", " ok ", "exec 5 exited 0", NULL);
        expect_line(out, "tests/test_table.py", "  6  bash", "1.3s", " ok ", "exec 6 exited 0",
                    NULL);
        expect_line(out, "session end: completed, 2 turns, 6 tool calls, 41.0s", NULL);
        expect_line(out, "usage: prompt_tokens 17984, completion_tokens 329, total_tokens 18313",
                    NULL);
        /* in order: turn 1 and its calls, then turn 2 */
        assert_true(strstr(out, "turn 1: ") < strstr(out, "exec 3 killed"));
        assert_true(strstr(out, "exec 3 killed") < strstr(out, "turn 2: "));
        assert_true(strstr(out, "turn 2: ") < strstr(out, "exec 6 exited"));
        assert_null(strstr(out, "skipped"));
        free(out);
        free(err);
}

/* The sample with line 6 (the first tool.call) corrupted and its last line
 * cut short, as a crash mid-write would leave it. */
static void make_damaged(const char *dst, unsigned *nlines)
{
        char *src = slurp(SAMPLE, NULL), *p = src, *nl;
        FILE *fp = fopen(dst, "w");
        unsigned line = 0, total = 0;

        for (nl = src; (nl = strchr(nl, '\n')) != NULL; nl++)
                total++;
        assert_non_null(fp);
        while ((nl = strchr(p, '\n')) != NULL) {
                line++;
                if (line == 6)
                        fputs("{\"seq\":6,\"t_ms\":1378,\"type\":\"tool.call\",\"call_id\":\"ca\n",
                              fp);
                else if (line == total)
                        fwrite(p, 1, (size_t)(nl - p) / 2, fp);
                else
                        fwrite(p, 1, (size_t)(nl - p) + 1, fp);
                p = nl + 1;
        }
        fclose(fp);
        free(src);
        *nlines = total;
}

static void test_summary_of_damaged_trace(void **state)
{
        struct fixture *f = *state;
        char want[256], *out, *err;
        unsigned total;

        make_damaged(f->path, &total);
        assert_int_equal(summary(f->path, &out, &err), 1);
        snprintf(want, sizeof(want), "%s:6: not valid JSON (", f->path);
        expect_line(err, want, NULL);
        snprintf(want, sizeof(want), "%s:%u: not valid JSON (truncated last line", f->path, total);
        expect_line(err, want, NULL);
        assert_int_equal(count_lines(err), 2);
        /* the rest is still summarised */
        assert_null(strstr(out, "python3 -m pytest -q\"}"));
        expect_line(out, "  1  read", "exec 2 exited 0", NULL);
        expect_line(out, "exec 3 killed by the operator", NULL);
        expect_line(out, "turn 2: ", "Don't run", NULL);
        expect_line(out, "  5  bash", "exec 6 exited 0", NULL);
        expect_line(out, "session end: not recorded", NULL);
        expect_line(out, "skipped 2 unreadable lines", NULL);
        free(out);
        free(err);
}

static void test_summary_usage_errors(void **state)
{
        char *out, *err;

        assert_int_equal(summary("/nonexistent/trace.jsonl", &out, &err), 2);
        assert_string_equal(err, "proctor replay: /nonexistent/trace.jsonl: No such file or "
                                 "directory\n");
        assert_string_equal(out, "");
        free(out);
        free(err);
        assert_int_equal(summary(NULL, &out, &err), 2);
        assert_non_null(strstr(err, "no trace file given"));
        free(out);
        free(err);
}

static void test_summary_untrusted_text(void **state)
{
        struct fixture *f = *state;
        char *out, *err;

        /* hostile names and arguments; a result without duration_ms; a call
         * without a result; a signal */
        spit(f->path,
             "{\"seq\":1,\"t_ms\":0,\"type\":\"turn.start\",\"turn\":1}\n"
             "{\"seq\":2,\"t_ms\":100,\"type\":\"tool.call\",\"call_id\":\"x1\","
             "\"name\":\"ba\\u001b[2Jsh\",\"arguments\":\"line1\\nline2\\u009b31m\"}\n"
             "{\"seq\":3,\"t_ms\":100,\"type\":\"exec.create\",\"exec_id\":9,\"call_id\":\"x1\"}\n"
             "{\"seq\":4,\"t_ms\":300,\"type\":\"exec.exit\",\"exec_id\":9,\"reason\":\"signaled\","
             "\"signal\":11}\n"
             "{\"seq\":5,\"t_ms\":350,\"type\":\"tool.result\",\"call_id\":\"x1\",\"ok\":false}\n"
             "{\"seq\":6,\"t_ms\":400,\"type\":\"tool.call\",\"call_id\":\"x2\",\"name\":\"read\","
             "\"arguments\":{}}\n"
             "[1,2]\n");
        assert_int_equal(summary(f->path, &out, &err), 1);
        assert_null(strchr(out, '\x1b'));
        assert_null(strstr(out, "\xc2\x9b"));
        expect_line(out, "  1  ba?[2Jsh", "line1 line2?31m", "250ms", "error",
                    "exec 9 signaled SIGSEGV", NULL);
        expect_line(out, "  2  read", "{}", "  -  no result", NULL);
        expect_line(out,
                    "session end: not recorded (the trace stops at 400ms; 1 turns, 2 tool "
                    "calls seen)",
                    NULL);
        expect_line(err, ":7: not an event", NULL);
        free(out);
        free(err);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test_setup_teardown(test_one_complete_line_per_event, setup, teardown),
            cmocka_unit_test_setup_teardown(test_prepared_trace_made_at_first_event, setup,
                                            teardown),
            cmocka_unit_test_setup_teardown(test_secret_fields_dropped, setup, teardown),
            cmocka_unit_test_setup_teardown(test_key_values_scrubbed, setup, teardown),
            cmocka_unit_test_setup_teardown(test_files_are_private, setup, teardown),
            cmocka_unit_test_setup_teardown(test_planted_links_refused, setup, teardown),
            cmocka_unit_test_setup_teardown(test_write_errors_are_reported, setup, teardown),
            cmocka_unit_test_setup_teardown(test_sigkill_loses_no_event, setup, teardown),
            cmocka_unit_test_setup_teardown(test_sigkill_mid_write, setup, teardown),
            cmocka_unit_test_setup_teardown(test_summary_of_sample, setup, teardown),
            cmocka_unit_test_setup_teardown(test_summary_of_damaged_trace, setup, teardown),
            cmocka_unit_test_setup_teardown(test_summary_usage_errors, setup, teardown),
            cmocka_unit_test_setup_teardown(test_summary_untrusted_text, setup, teardown),
        };
        return cmocka_run_group_tests_name("trace", tests, NULL, NULL);
}
