/* Unit tests for the openai provider and its HTTP client, against the
 * scripted fake server (tests/fake_openai.py, started as a child; the tests
 * run from the repository root): streaming, tool calls, usage, every fault
 * the server can play, retries, cancellation, and the key never leaking. */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <netinet/in.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "core/model/provider_openai.h"

#define KEY "sk-test-7f3a9c2e5b1d4f6a8c0e"

/* ---- the fake server ---------------------------------------------------- */

struct fake {
        pid_t pid;
        int in_fd; /* its stdin: the server stops at EOF */
        int port;
        char dir[64], script[96], log[96];
};

static void write_file(const char *path, const char *text)
{
        FILE *f = fopen(path, "w");

        assert_non_null(f);
        fputs(text, f);
        assert_int_equal(fclose(f), 0);
}

/* Starts the server with the given script (JSONL) and waits for its port.
 * $PYTHON names the interpreter when python3 on PATH is slow to start. */
static void fake_start(struct fake *f, const char *script)
{
        int in[2], out[2];
        char line[64] = "";
        size_t n = 0;

        snprintf(f->dir, sizeof(f->dir), "/tmp/proctor-openai.XXXXXX");
        assert_non_null(mkdtemp(f->dir));
        snprintf(f->script, sizeof(f->script), "%s/script.jsonl", f->dir);
        snprintf(f->log, sizeof(f->log), "%s/log.jsonl", f->dir);
        write_file(f->script, script);
        assert_int_equal(pipe2(in, O_CLOEXEC), 0);
        assert_int_equal(pipe2(out, O_CLOEXEC), 0);
        f->pid = fork();
        assert_true(f->pid >= 0);
        if (f->pid == 0) {
                const char *py = getenv("PYTHON");

                if (py == NULL || py[0] == '\0')
                        py = "python3";
                dup2(in[0], 0);
                dup2(out[1], 1);
                execlp(py, py, "tests/fake_openai.py", "--port", "0", "--script", f->script,
                       "--log", f->log, "--expect-key", KEY, (char *)NULL);
                _exit(127);
        }
        close(in[0]);
        close(out[1]);
        f->in_fd = in[1];
        while (n + 1 < sizeof(line) && strchr(line, '\n') == NULL) {
                struct pollfd pfd = {.fd = out[0], .events = POLLIN};
                ssize_t r;

                assert_int_equal(poll(&pfd, 1, 10000), 1);
                r = read(out[0], line + n, sizeof(line) - 1 - n);
                assert_true(r > 0);
                n += (size_t)r;
                line[n] = '\0';
        }
        close(out[0]);
        assert_int_equal(sscanf(line, "PORT %d", &f->port), 1);
}

static void fake_stop(struct fake *f)
{
        if (f->pid <= 0)
                return;
        kill(f->pid, SIGTERM);
        close(f->in_fd);
        waitpid(f->pid, NULL, 0);
        f->pid = 0;
        unlink(f->script);
        unlink(f->log);
        rmdir(f->dir);
}

/* Lines of the server's log that contain `needle`. */
static int log_count(const struct fake *f, const char *needle)
{
        FILE *fp = fopen(f->log, "r");
        char line[65536];
        int n = 0;

        if (fp == NULL)
                return 0;
        while (fgets(line, sizeof(line), fp) != NULL)
                n += strstr(line, needle) != NULL;
        fclose(fp);
        return n;
}

/* The body of the first request the server saw. */
static json_t *first_request(const struct fake *f)
{
        json_t *line;
        json_error_t e;
        FILE *fp = fopen(f->log, "r");
        char buf[65536];

        assert_non_null(fp);
        assert_non_null(fgets(buf, sizeof(buf), fp));
        fclose(fp);
        line = json_loads(buf, 0, &e);
        assert_non_null(line);
        return line;
}

static bool maps_have(const char *needle)
{
        FILE *fp = fopen("/proc/self/maps", "r");
        char line[4096];
        bool found = false;

        assert_non_null(fp);
        while (!found && fgets(line, sizeof(line), fp) != NULL)
                found = strstr(line, needle) != NULL;
        fclose(fp);
        return found;
}

/* ---- one provider on one loop, and what it reported ---------------------- */

struct err_rec {
        char msg[1024];
        int status;
        int64_t retry_in_ms;
        bool final;
        uint64_t at_ms;
};

struct t {
        uv_loop_t loop;
        uv_timer_t guard, later;
        struct fake fake;
        struct provider_config cfg;
        char url[64];
        const char *base_path; /* what follows host:port in the base URL; NULL: "/v1" */
        struct provider *p;

        char deltas[8192]; /* what was streamed, less what was taken back */
        size_t dlen, ndeltas, discarded, ndiscards;
        struct err_rec errs[8];
        int nerr;
        struct chat_message *msg;
        uint64_t start_ms, msg_at_ms;
        bool timed_out, cancelled;
        int after_cancel;
        /* Test hooks: what to do from inside the callbacks. */
        bool cancel_on_delta_later, free_on_delta, cancel_on_error;
};

static int setup(void **state)
{
        struct t *t = calloc(1, sizeof(*t));

        assert_non_null(t);
        assert_int_equal(uv_loop_init(&t->loop), 0);
        uv_timer_init(&t->loop, &t->guard);
        uv_timer_init(&t->loop, &t->later);
        uv_unref((uv_handle_t *)&t->guard); /* run() ends when nothing else is left */
        t->guard.data = t->later.data = t;
        t->cfg.api_key = KEY;
        t->cfg.retries = 3;
        t->cfg.backoff_ms = 20;
        t->cfg.connect_timeout_ms = 2000;
        t->cfg.idle_timeout_ms = 5000;
        *state = t;
        return 0;
}

static int teardown(void **state)
{
        struct t *t = *state;

        provider_free(t->p);
        if (t->msg != NULL) {
                chat_message_free(t->msg);
                free(t->msg);
        }
        uv_close((uv_handle_t *)&t->guard, NULL);
        uv_close((uv_handle_t *)&t->later, NULL);
        uv_run(&t->loop, UV_RUN_DEFAULT);
        fake_stop(&t->fake);
        assert_int_equal(uv_loop_close(&t->loop), 0);
        free(t);
        return 0;
}

static void later_cancel(uv_timer_t *h)
{
        struct t *t = h->data;

        t->p->ops->cancel(t->p);
        t->cancelled = true;
}

static void on_delta(const char *text, size_t n, void *ud)
{
        struct t *t = ud;

        if (t->cancelled || t->p == NULL)
                t->after_cancel++;
        assert_true(t->dlen + n < sizeof(t->deltas));
        memcpy(t->deltas + t->dlen, text, n);
        t->dlen += n;
        t->deltas[t->dlen] = '\0';
        t->ndeltas++;
        if (t->cancel_on_delta_later && t->ndeltas == 1)
                uv_timer_start(&t->later, later_cancel, 50, 0);
        if (t->free_on_delta) {
                provider_free(t->p);
                t->p = NULL;
                t->free_on_delta = false;
        }
}

static void on_message(struct chat_message *m, void *ud)
{
        struct t *t = ud;

        if (t->cancelled || t->p == NULL)
                t->after_cancel++;
        assert_null(t->msg);
        t->msg = m;
        t->msg_at_ms = uv_now(&t->loop);
        uv_stop(&t->loop);
}

static void on_error(const char *message, int http_status, int64_t retry_in_ms, bool final,
                     void *ud)
{
        struct t *t = ud;
        struct err_rec *e;

        if (t->cancelled || t->p == NULL)
                t->after_cancel++;
        assert_null(strstr(message, KEY));
        assert_true(t->nerr < (int)(sizeof(t->errs) / sizeof(t->errs[0])));
        e = &t->errs[t->nerr++];
        snprintf(e->msg, sizeof(e->msg), "%s", message);
        e->status = http_status;
        e->retry_in_ms = retry_in_ms;
        e->final = final;
        e->at_ms = uv_now(&t->loop);
        if (final)
                uv_stop(&t->loop);
        if (t->cancel_on_error) {
                t->p->ops->cancel(t->p);
                t->cancelled = true;
                uv_stop(&t->loop);
        }
}

static void on_discard(size_t bytes, void *ud)
{
        struct t *t = ud;

        assert_true(bytes > 0 && bytes <= t->dlen);
        t->dlen -= bytes;
        t->deltas[t->dlen] = '\0';
        t->discarded += bytes;
        t->ndiscards++;
}

static const struct provider_callbacks callbacks = {on_delta, on_message, on_error, on_discard};

static void on_guard(uv_timer_t *h)
{
        struct t *t = h->data;

        t->timed_out = true;
        uv_stop(&t->loop);
}

/* Runs the loop until a message or a final error, until nothing is left
 * to wait for, or until ms have passed. */
static void run(struct t *t, uint64_t ms)
{
        uv_timer_start(&t->guard, on_guard, ms, 0);
        uv_run(&t->loop, UV_RUN_DEFAULT);
        uv_timer_stop(&t->guard);
}

/* Starts the fake with `script`, opens the provider on it and sends one
 * user message with no tools. */
static void start(struct t *t, const char *script)
{
        char err[256] = "";

        fake_start(&t->fake, script);
        snprintf(t->url, sizeof(t->url), "http://127.0.0.1:%d%s", t->fake.port,
                 t->base_path != NULL ? t->base_path : "/v1");
        t->cfg.base_url = t->url;
        assert_int_equal(
            provider_openai_open(&t->loop, "gpt-test", &t->cfg, &t->p, err, sizeof(err)), 0);
}

static void ask(struct t *t, const json_t *tools)
{
        json_t *msgs = json_pack("[{s:s, s:s}]", "role", "user", "content", "hi");

        uv_update_time(&t->loop);
        t->start_ms = uv_now(&t->loop);
        assert_int_equal(t->p->ops->request(t->p, msgs, tools, &callbacks, t), 0);
        json_decref(msgs);
}

static void ask_and_wait(struct t *t, const char *script, uint64_t ms)
{
        start(t, script);
        ask(t, NULL);
        run(t, ms);
        assert_false(t->timed_out);
}

/* ---- tests ----------------------------------------------------------------- */

/* Must run first: nothing before the first model call loads libcurl. */
static void test_libcurl_not_loaded_at_start(void **state)
{
        assert_false(maps_have("libcurl"));
}

static void test_libcurl_missing(void **state)
{
        struct t *t = *state;
        char err[256];

        setenv("PROCTOR_LIBCURL", "/nonexistent/libcurl.so.4", 1);
        t->cfg.base_url = "http://127.0.0.1:9/v1";
        assert_int_equal(provider_openai_open(&t->loop, "m", &t->cfg, &t->p, err, sizeof(err)), 0);
        ask(t, NULL);
        assert_int_equal(t->nerr, 0); /* reported from the loop, not from request() */
        run(t, 5000);
        unsetenv("PROCTOR_LIBCURL");
        assert_int_equal(t->nerr, 1);
        assert_true(t->errs[0].final);
        assert_non_null(strstr(t->errs[0].msg, "cannot load libcurl (/nonexistent/libcurl.so.4)"));
        assert_false(maps_have("libcurl"));
}

static void test_streamed_content_and_usage(void **state)
{
        struct t *t = *state;

        ask_and_wait(t,
                     "{\"content\": \"Hello, streaming world!\", \"chunk_size\": 3, \"usage\": "
                     "{\"prompt_tokens\": 17, \"completion_tokens\": 6}}\n",
                     10000);
        assert_string_equal(t->p->label, "openai:gpt-test");
        assert_int_equal(t->nerr, 0);
        assert_non_null(t->msg);
        assert_string_equal(t->deltas, "Hello, streaming world!");
        assert_true(t->ndeltas >= 5);
        assert_string_equal(t->msg->content, "Hello, streaming world!");
        assert_int_equal(t->msg->ncalls, 0);
        assert_int_equal(t->msg->usage.prompt_tokens, 17);
        assert_int_equal(t->msg->usage.completion_tokens, 6);
        assert_string_equal(t->msg->finish_reason, "stop");
        assert_true(maps_have("libcurl")); /* loaded on use */
}

static void test_two_tool_calls_across_chunks(void **state)
{
        struct t *t = *state;

        ask_and_wait(t,
                     "{\"content\": \"Let me look.\", \"chunk_size\": 2, \"interleave\": true, "
                     "\"byte_split\": 64, \"tool_calls\": ["
                     "{\"name\": \"bash\", \"arguments\": \"{\\\"command\\\":\\\"ls -la\\\"}\"},"
                     "{\"name\": \"read\", \"arguments\": {\"path\": \"/etc/hostname\"}}]}\n",
                     10000);
        assert_non_null(t->msg);
        assert_string_equal(t->msg->content, "Let me look.");
        assert_int_equal(t->msg->ncalls, 2);
        assert_string_equal(t->msg->calls[0].id, "call_1");
        assert_string_equal(t->msg->calls[0].name, "bash");
        assert_string_equal(t->msg->calls[0].arguments, "{\"command\":\"ls -la\"}");
        assert_string_equal(t->msg->calls[1].id, "call_2");
        assert_string_equal(t->msg->calls[1].name, "read");
        assert_string_equal(t->msg->calls[1].arguments, "{\"path\": \"/etc/hostname\"}");
        assert_string_equal(t->msg->finish_reason, "tool_calls");
}

static void test_request_body_and_headers(void **state)
{
        struct t *t = *state;
        json_t *tools = json_pack("[{s:s, s:{s:s, s:{s:s}}}]", "type", "function", "function",
                                  "name", "bash", "parameters", "type", "object");
        json_t *req, *body;

        start(t, "{\"content\": \"ok\"}\n");
        ask(t, tools);
        run(t, 10000);
        assert_non_null(t->msg);
        req = first_request(&t->fake);
        body = json_object_get(req, "body");
        assert_string_equal(json_string_value(json_object_get(req, "path")),
                            "/v1/chat/completions");
        assert_string_equal(json_string_value(json_object_get(req, "auth")), "ok");
        assert_string_equal(json_string_value(json_object_get(req, "accept")), "text/event-stream");
        assert_string_equal(json_string_value(json_object_get(req, "content_type")),
                            "application/json");
        assert_string_equal(json_string_value(json_object_get(body, "model")), "gpt-test");
        assert_true(json_is_true(json_object_get(body, "stream")));
        assert_true(json_equal(json_object_get(body, "tools"), tools));
        assert_string_equal(json_string_value(json_object_get(
                                json_array_get(json_object_get(body, "messages"), 0), "content")),
                            "hi");
        json_decref(req);
        json_decref(tools);
}

static void test_key_from_environment(void **state)
{
        struct t *t = *state;
        char err[256] = "";

        t->cfg.api_key = NULL;
        setenv("PROCTOR_API_KEY", KEY, 1);
        setenv("OPENAI_API_KEY", "sk-wrong", 1);
        setenv("HF_TOKEN", "hf-wrong", 1);
        ask_and_wait(t, "{\"content\": \"ok\"}\n", 10000);
        assert_non_null(t->msg);
        assert_int_equal(log_count(&t->fake, "\"auth\": \"ok\""), 1);

        unsetenv("PROCTOR_API_KEY");
        unsetenv("OPENAI_API_KEY");
        unsetenv("HF_TOKEN");
        struct provider *p = NULL;
        t->cfg.base_url = "https://models.example.invalid/v1";
        assert_int_equal(provider_openai_open(&t->loop, "m", &t->cfg, &p, err, sizeof(err)),
                         -ENOKEY);
        assert_null(p);
        assert_non_null(
            strstr(err, "no API key: set PROCTOR_API_KEY (or OPENAI_API_KEY / HF_TOKEN)"));
}

/* A server on this machine needs no key: without one, no Authorization
 * header at all (the fake expects a key, so it answers 401 and logs the
 * header as missing). Elsewhere a key is still required. */
static void test_keyless_local_server(void **state)
{
        static const char *const local[] = {"http://localhost:1/v1", "http://127.0.0.2:8/v1",
                                            "http://[::1]:8080/v1"};
        static const char *const remote[] = {"http://127.0.0.1.example.com/v1",
                                             "http://localhostx/v1", "http://u@evil/127.0.0.1"};
        struct t *t = *state;
        struct provider *p = NULL;
        char err[256] = "";
        size_t i;

        t->cfg.api_key = NULL;
        unsetenv("PROCTOR_API_KEY");
        unsetenv("OPENAI_API_KEY");
        unsetenv("HF_TOKEN");
        ask_and_wait(t, "{\"content\": \"never\"}\n", 10000);
        assert_int_equal(t->nerr, 1);
        assert_int_equal(t->errs[0].status, 401);
        assert_int_equal(log_count(&t->fake, "\"auth\": \"missing\""), 1);
        for (i = 0; i < sizeof(local) / sizeof(local[0]); i++) {
                t->cfg.base_url = local[i];
                assert_int_equal(provider_openai_open(&t->loop, "m", &t->cfg, &p, err, sizeof(err)),
                                 0);
                provider_free(p);
        }
        for (i = 0; i < sizeof(remote) / sizeof(remote[0]); i++) {
                t->cfg.base_url = remote[i];
                p = NULL;
                assert_int_equal(provider_openai_open(&t->loop, "m", &t->cfg, &p, err, sizeof(err)),
                                 -ENOKEY);
                assert_null(p);
        }
}

/* Where a call goes when no base URL is configured, seen through a proxy
 * that refuses connections (so that no test ever leaves this machine). */
static void expect_default_url(struct t *t, const char *url)
{
        char err[256];

        t->nerr = 0;
        assert_int_equal(provider_openai_open(&t->loop, "m", &t->cfg, &t->p, err, sizeof(err)), 0);
        ask(t, NULL);
        run(t, 10000);
        assert_int_equal(t->nerr, 1);
        assert_true(t->errs[0].final);
        assert_non_null(strstr(t->errs[0].msg, url));
        provider_free(t->p);
        t->p = NULL;
}

static void test_default_base_urls(void **state)
{
        struct t *t = *state;

        setenv("https_proxy", "http://127.0.0.1:1", 1);
        setenv("HTTPS_PROXY", "http://127.0.0.1:1", 1);
        unsetenv("no_proxy");
        unsetenv("NO_PROXY");
        t->cfg.retries = 0;
        t->cfg.api_key = NULL;
        setenv("HF_TOKEN", "hf_test_token_123456", 1);
        expect_default_url(t, "cannot reach https://router.huggingface.co/v1/chat/completions: ");
        setenv("OPENAI_API_KEY", KEY, 1);
        expect_default_url(t, "cannot reach https://api.openai.com/v1/chat/completions: ");
        t->cfg.api_key = KEY;
        unsetenv("OPENAI_API_KEY");
        expect_default_url(t, "cannot reach https://api.openai.com/v1/chat/completions: ");
        unsetenv("HF_TOKEN");
        unsetenv("https_proxy");
        unsetenv("HTTPS_PROXY");
}

static void test_500_then_success(void **state)
{
        struct t *t = *state;

        ask_and_wait(t, "{\"fault\": \"http_500\"}\n{\"content\": \"recovered\"}\n", 10000);
        assert_int_equal(t->nerr, 1);
        assert_false(t->errs[0].final);
        assert_int_equal(t->errs[0].status, 500);
        assert_int_equal(t->errs[0].retry_in_ms, 20);
        assert_string_equal(t->errs[0].msg, "HTTP 500: fake: HTTP 500 (attempt 1 of 4)");
        assert_non_null(t->msg);
        assert_string_equal(t->msg->content, "recovered");
        assert_int_equal(log_count(&t->fake, "\"event\": \"request\""), 2);
}

static void test_429_retry_after(void **state)
{
        struct t *t = *state;

        ask_and_wait(t, "{\"fault\": \"http_429\", \"retry_after\": 1}\n{\"content\": \"ok\"}\n",
                     10000);
        assert_int_equal(t->nerr, 1);
        assert_false(t->errs[0].final);
        assert_int_equal(t->errs[0].status, 429);
        assert_int_equal(t->errs[0].retry_in_ms, 1000);
        assert_non_null(t->msg);
        assert_true(t->msg_at_ms - t->errs[0].at_ms >= 990);
}

/* Retry-After as an HTTP-date: far ahead is capped at 60 s, past is now. */
static void test_429_retry_after_dates(void **state)
{
        struct t *t = *state;

        t->cancel_on_error = true;
        ask_and_wait(t,
                     "{\"fault\": \"http_429\", \"retry_after\": \"Fri, 01 Jan 2100 00:00:00 "
                     "GMT\"}\n",
                     10000);
        assert_int_equal(t->nerr, 1);
        assert_int_equal(t->errs[0].retry_in_ms, 60000);
        assert_int_equal(t->after_cancel, 0);
        fake_stop(&t->fake);
        provider_free(t->p);
        t->p = NULL;

        t->cancel_on_error = t->cancelled = false;
        t->nerr = 0;
        ask_and_wait(t,
                     "{\"fault\": \"http_429\", \"retry_after\": \"Thu, 01 Jan 1970 00:00:00 "
                     "GMT\"}\n{\"content\": \"ok\"}\n",
                     10000);
        assert_int_equal(t->nerr, 1);
        assert_int_equal(t->errs[0].retry_in_ms, 0);
        assert_non_null(t->msg);
}

static void test_drop_mid_stream_retried(void **state)
{
        struct t *t = *state;

        ask_and_wait(t,
                     "{\"fault\": \"drop_mid_stream\", \"content\": \"first try, cut\"}\n"
                     "{\"content\": \"second try\"}\n",
                     10000);
        assert_int_equal(t->nerr, 1);
        assert_false(t->errs[0].final);
        assert_int_equal(t->errs[0].status, 0);
        assert_non_null(strstr(t->errs[0].msg, "connection dropped mid-stream"));
        assert_non_null(strstr(t->errs[0].msg, "(attempt 1 of 4)"));
        assert_non_null(t->msg);
        assert_string_equal(t->msg->content, "second try");
        /* The cut attempt's deltas went out before the failure; the retry,
         * which differs from the first byte, took them back. */
        assert_int_equal(t->ndiscards, 1);
        assert_int_equal(t->discarded, strlen("first tr"));
        assert_string_equal(t->deltas, "second try");
}

static void test_malformed_sse_is_final(void **state)
{
        struct t *t = *state;

        ask_and_wait(t, "{\"fault\": \"malformed_sse\"}\n{\"content\": \"never\"}\n", 10000);
        assert_null(t->msg);
        assert_int_equal(t->nerr, 1);
        assert_true(t->errs[0].final);
        assert_non_null(strstr(t->errs[0].msg, "malformed stream chunk"));
        assert_int_equal(log_count(&t->fake, "\"event\": \"request\""), 1);
}

static void test_stall_idle_timeout(void **state)
{
        struct t *t = *state;
        int i;

        t->cfg.idle_timeout_ms = 300;
        t->cfg.retries = 2;
        ask_and_wait(t, "{\"fault\": \"stall\"}\n{\"fault\": \"stall\"}\n{\"fault\": \"stall\"}\n",
                     10000);
        assert_null(t->msg);
        assert_int_equal(t->nerr, 3);
        for (i = 0; i < 2; i++) {
                assert_false(t->errs[i].final);
                assert_non_null(strstr(t->errs[i].msg, "stalled stream: no data from the server "
                                                       "for 300 ms"));
                assert_non_null(
                    strstr(t->errs[i].msg, i == 0 ? "(attempt 1 of 3)" : "(attempt 2 of 3)"));
        }
        assert_int_equal(t->errs[0].retry_in_ms, 20);
        assert_int_equal(t->errs[1].retry_in_ms, 40);
        assert_true(t->errs[2].final);
        assert_non_null(strstr(t->errs[2].msg, "gave up after 3 attempts"));
        assert_true(t->errs[2].at_ms - t->start_ms >= 900);
        assert_int_equal(log_count(&t->fake, "\"event\": \"request\""), 3);
}

static void test_401_is_final_at_once(void **state)
{
        struct t *t = *state;

        ask_and_wait(t,
                     "{\"fault\": \"http_401\", \"message\": \"Incorrect API key provided\"}\n"
                     "{\"content\": \"never\"}\n",
                     10000);
        assert_null(t->msg);
        assert_int_equal(t->nerr, 1);
        assert_true(t->errs[0].final);
        assert_int_equal(t->errs[0].status, 401);
        assert_string_equal(t->errs[0].msg,
                            "HTTP 401: Incorrect API key provided (check the API key)");
        assert_int_equal(log_count(&t->fake, "\"event\": \"request\""), 1);
}

static void test_key_redacted_from_server_text(void **state)
{
        struct t *t = *state;

        ask_and_wait(t, "{\"fault\": \"http_400\", \"message\": \"bad\", \"echo_key\": true}\n",
                     10000);
        assert_int_equal(t->nerr, 1);
        assert_true(t->errs[0].final);
        assert_int_equal(t->errs[0].status, 400);
        assert_string_equal(t->errs[0].msg, "HTTP 400: bad (got Bearer [redacted])");
}

/* No 8-character prefix of the key in any message (any longer one holds
 * it). */
static void assert_no_key_prefix(const struct t *t)
{
        int i;

        for (i = 0; i < t->nerr; i++)
                assert_null(strstr(t->errs[i].msg, "sk-test-"));
}

/* A server that echoes "Bearer KEY" in its error text, with the key
 * starting near the 300-character cut: before it, across it, after it. */
static void test_key_redacted_around_the_cut(void **state)
{
        struct t *t = *state;
        int i;

        t->cfg.retries = 5;
        ask_and_wait(t,
                     "{\"fault\": \"http_500\", \"echo_key_at\": 280}\n"
                     "{\"fault\": \"http_500\", \"echo_key_at\": 290}\n"
                     "{\"fault\": \"http_500\", \"echo_key_at\": 295}\n"
                     "{\"fault\": \"http_500\", \"echo_key_at\": 299}\n"
                     "{\"fault\": \"http_500\", \"echo_key_at\": 300}\n"
                     "{\"fault\": \"http_500\", \"echo_key_at\": 10}\n",
                     20000);
        assert_int_equal(t->nerr, 6);
        assert_true(t->errs[5].final);
        assert_no_key_prefix(t);
        /* the text is cut, but the mark shows where the key was */
        assert_non_null(strstr(t->errs[0].msg, "Bearer [redacted]"));
        assert_non_null(strstr(t->errs[5].msg, "Bearer [redacted] and more"));
        /* the server's text is cut after 300 characters */
        for (i = 0; i < 6; i++)
                assert_true(strlen(strstr(t->errs[i].msg, ": ")) <= 2 + 300 + 40);
}

/* A key pasted with its newline: the header carries it trimmed (the fake
 * accepts it) and what is redacted is what was sent. */
static void test_key_with_trailing_newline(void **state)
{
        struct t *t = *state;

        t->cfg.api_key = KEY "\n";
        ask_and_wait(t, "{\"fault\": \"http_400\", \"message\": \"bad\", \"echo_key\": true}\n",
                     10000);
        assert_int_equal(log_count(&t->fake, "\"auth\": \"ok\""), 1);
        assert_int_equal(t->nerr, 1);
        assert_string_equal(t->errs[0].msg, "HTTP 400: bad (got Bearer [redacted])");
        assert_int_equal(provider_key_length(KEY "\r\n"), strlen(KEY));
}

/* A stream that stops with neither a finish_reason nor [DONE] was cut;
 * so was one that is only [DONE]. Both are retried. */
static void test_unfinished_streams_retried(void **state)
{
        struct t *t = *state;

        ask_and_wait(t,
                     "{\"content\": \"half an ans\", \"no_finish\": true, \"no_done\": true}\n"
                     "{\"raw\": \"data: [DONE]\\n\\n\"}\n"
                     "{\"content\": \"half an answer, whole\"}\n",
                     10000);
        assert_int_equal(t->nerr, 2);
        assert_false(t->errs[0].final);
        assert_non_null(strstr(t->errs[0].msg, "the stream ended before the answer did"));
        assert_false(t->errs[1].final);
        assert_non_null(strstr(t->errs[1].msg, "[DONE] and no answer"));
        assert_non_null(t->msg);
        assert_string_equal(t->msg->content, "half an answer, whole");
        assert_string_equal(t->msg->finish_reason, "stop");
        /* the retry's text matched what was shown: nothing twice */
        assert_string_equal(t->deltas, "half an answer, whole");
        assert_int_equal(t->ndiscards, 0);
}

/* A retried answer that matches only in part: the rest is taken back,
 * at a character boundary (the two answers differ inside "é"/"è"). */
static void test_retry_takes_back_what_differs(void **state)
{
        struct t *t = *state;

        ask_and_wait(t,
                     "{\"fault\": \"drop_mid_stream\", \"content\": \"caf\\u00e9 au lait\", "
                     "\"chunk_size\": 5}\n"
                     "{\"content\": \"caf\\u00e8\", \"chunk_size\": 2}\n",
                     10000);
        assert_non_null(t->msg);
        assert_string_equal(t->msg->content, "caf\xC3\xA8");
        assert_int_equal(t->ndiscards, 1);
        assert_string_equal(t->deltas, "caf\xC3\xA8");
        /* "café au la" was shown; from "é" on it is taken back */
        assert_int_equal(t->discarded, strlen("\xC3\xA9 au la"));
}

/* retry-after-ms wins over Retry-After, in either order. */
static void test_retry_after_ms(void **state)
{
        struct t *t = *state;

        ask_and_wait(t,
                     "{\"fault\": \"http_429\", \"retry_after\": 30, \"headers\": "
                     "{\"retry-after-ms\": \"150\"}}\n"
                     "{\"content\": \"ok\"}\n",
                     10000);
        assert_int_equal(t->nerr, 1);
        assert_int_equal(t->errs[0].retry_in_ms, 150);
        assert_non_null(t->msg);
}

/* Hugging Face's 503 for a model still loading: waited for as long as
 * it says, using no attempt (none are left here), within the budget for
 * the whole call (1 s here); then it is final. */
static void test_model_loading_waits(void **state)
{
        static const char loading[] = "{\"fault\": \"http_503\", \"json_body\": {\"error\": "
                                      "\"Model m is currently loading\", \"estimated_time\": "
                                      "0.6}}\n";
        struct t *t = *state;
        char script[1024];

        t->cfg.retries = 0;
        t->cfg.loading_wait_ms = 1000;
        snprintf(script, sizeof(script), "%s%s%s{\"content\": \"loaded\"}\n", loading, loading,
                 loading);
        start(t, script);
        ask(t, NULL);
        run(t, 10000);
        assert_null(t->msg);
        assert_int_equal(t->nerr, 3);
        assert_false(t->errs[0].final);
        assert_int_equal(t->errs[0].status, 503);
        assert_int_equal(t->errs[0].retry_in_ms, 600);
        assert_string_equal(t->errs[0].msg, "HTTP 503: Model m is currently loading (waiting for "
                                            "the model to load)");
        assert_false(t->errs[1].final);
        assert_int_equal(t->errs[1].retry_in_ms, 400);
        assert_true(t->errs[2].final);
        assert_non_null(strstr(t->errs[2].msg, "still loading after 1 s of waiting"));
        assert_true(t->errs[2].at_ms - t->start_ms >= 1000);

        /* a new call has the whole budget again, and the model is there */
        t->nerr = 0;
        ask(t, NULL);
        run(t, 10000);
        assert_int_equal(t->nerr, 0);
        assert_non_null(t->msg);
        assert_string_equal(t->msg->content, "loaded");
}

/* Out of quota is a 429 that waiting does not cure. */
static void test_quota_429_is_final(void **state)
{
        struct t *t = *state;

        ask_and_wait(t,
                     "{\"fault\": \"http_429\", \"json_body\": {\"error\": {\"message\": \"You "
                     "exceeded your current quota\", \"type\": \"insufficient_quota\", \"code\": "
                     "\"insufficient_quota\"}}}\n{\"content\": \"never\"}\n",
                     10000);
        assert_int_equal(t->nerr, 1);
        assert_true(t->errs[0].final);
        assert_int_equal(t->errs[0].status, 429);
        assert_non_null(strstr(t->errs[0].msg, "You exceeded your current quota"));
        assert_non_null(strstr(t->errs[0].msg, "out of quota"));
        assert_int_equal(log_count(&t->fake, "\"event\": \"request\""), 1);
}

/* Error events inside a 200 stream: their code decides, as a status would. */
static void test_in_stream_errors(void **state)
{
        struct t *t = *state;

        ask_and_wait(t,
                     "{\"raw\": \"data: {\\\"error\\\": {\\\"message\\\": \\\"Rate limit "
                     "reached\\\", \\\"code\\\": \\\"rate_limit_exceeded\\\"}}\\n\\n\"}\n"
                     "{\"raw\": \"data: {\\\"error\\\": {\\\"message\\\": \\\"upstream "
                     "failed\\\", \\\"code\\\": 500}}\\n\\n\"}\n"
                     "{\"raw\": \"data: {\\\"error\\\": {\\\"message\\\": \\\"bad key\\\", "
                     "\\\"type\\\": \\\"authentication_error\\\"}}\\n\\n\"}\n"
                     "{\"content\": \"never\"}\n",
                     10000);
        assert_int_equal(t->nerr, 3);
        assert_false(t->errs[0].final);
        assert_int_equal(t->errs[0].status, 429);
        assert_non_null(strstr(t->errs[0].msg, "the server reported an error (429): Rate limit"));
        assert_false(t->errs[1].final);
        assert_int_equal(t->errs[1].status, 500);
        assert_true(t->errs[2].final);
        assert_int_equal(t->errs[2].status, 401);
        assert_null(t->msg);
}

static void expect_final_error(struct t *t, const char *script, const char *text)
{
        ask_and_wait(t, script, 10000);
        assert_int_equal(t->nerr, 1);
        assert_true(t->errs[0].final);
        if (strstr(t->errs[0].msg, text) == NULL)
                fail_msg("\"%s\" not in \"%s\"", text, t->errs[0].msg);
}

static void test_404_names_the_url(void **state)
{
        struct t *t = *state;
        char url[128];

        t->base_path = "";
        expect_final_error(t, "{\"fault\": \"http_404\", \"message\": \"not here\"}\n",
                           "usually answer under /v1");
        snprintf(url, sizeof(url), "HTTP 404 from http://127.0.0.1:%d/chat/completions: not here",
                 t->fake.port);
        assert_non_null(strstr(t->errs[0].msg, url));
}

static void test_redirect_names_the_target(void **state)
{
        expect_final_error(*state,
                           "{\"raw\": \"\", \"status\": 308, \"headers\": {\"Location\": "
                           "\"https://api.example.com/v1/chat/completions\"}}\n",
                           "HTTP 308: the server redirects to "
                           "https://api.example.com/v1/chat/completions (proctor does not follow "
                           "redirects: use --base-url https://api.example.com/v1)");
}

static void test_html_error_shows_the_status_line(void **state)
{
        struct t *t = *state;

        t->cfg.retries = 0;
        expect_final_error(
            t, "{\"fault\": \"http_502\", \"body\": \"<html><body>nginx</body></html>\"}\n",
            "HTTP 502 Bad Gateway");
        assert_null(strstr(t->errs[0].msg, "html"));
}

static void test_error_message_beside_exception_name(void **state)
{
        struct t *t = *state;

        expect_final_error(t,
                           "{\"fault\": \"http_400\", \"json_body\": {\"error\": \"TypeError\", "
                           "\"message\": \"Cannot read properties of undefined\"}}\n",
                           "HTTP 400: Cannot read properties of undefined");
}

static void test_reset_connection_named(void **state)
{
        struct t *t = *state;

        t->cfg.retries = 0;
        expect_final_error(t, "{\"fault\": \"reset_mid_stream\"}\n",
                           "connection reset by the server");
}

/* The body decides, not the label: SSE as application/json, JSON as
 * text/plain. */
static void test_mislabelled_answers(void **state)
{
        struct t *t = *state;

        ask_and_wait(t,
                     "{\"content\": \"sse labelled json\", \"content_type\": "
                     "\"application/json\"}\n"
                     "{\"content\": \"json labelled text\", \"no_stream\": true, "
                     "\"content_type\": \"text/plain; charset=utf-8\"}\n",
                     10000);
        assert_non_null(t->msg);
        assert_string_equal(t->msg->content, "sse labelled json");
        chat_message_free(t->msg);
        free(t->msg);
        t->msg = NULL;
        ask(t, NULL);
        run(t, 10000);
        assert_int_equal(t->nerr, 0);
        assert_non_null(t->msg);
        assert_string_equal(t->msg->content, "json labelled text");
}

static void test_invalid_json_arguments_verbatim(void **state)
{
        struct t *t = *state;

        ask_and_wait(t, "{\"fault\": \"invalid_json_args\"}\n", 10000);
        assert_int_equal(t->nerr, 0);
        assert_non_null(t->msg);
        assert_int_equal(t->msg->ncalls, 1);
        assert_string_equal(t->msg->calls[0].name, "bash");
        assert_string_equal(t->msg->calls[0].arguments, "{\"command\": \"ls");
}

static void test_cancel_stalled_stream(void **state)
{
        struct t *t = *state;
        int i;

        t->cancel_on_delta_later = true;
        start(t, "{\"fault\": \"stall\", \"content\": \"thinking\"}\n{\"content\": \"next\"}\n");
        ask(t, NULL);
        run(t, 300); /* cancels 50 ms after the first delta, then nothing is left */
        assert_true(t->cancelled);
        assert_string_equal(t->deltas, "thinking");
        assert_int_equal(t->nerr, 0);
        assert_null(t->msg);
        assert_int_equal(t->after_cancel, 0);
        for (i = 0; i < 300 && log_count(&t->fake, "\"event\": \"closed\"") == 0; i++)
                usleep(10000);
        assert_int_equal(log_count(&t->fake, "\"event\": \"closed\""), 1);
        /* The provider takes the next request. */
        t->cancelled = t->cancel_on_delta_later = false;
        t->dlen = 0;
        ask(t, NULL);
        run(t, 10000);
        assert_non_null(t->msg);
        assert_string_equal(t->msg->content, "next");
        assert_string_equal(t->deltas, "next");
}

static void test_free_inside_delta(void **state)
{
        struct t *t = *state;

        t->free_on_delta = true;
        start(t, "{\"content\": \"a long answer in many pieces\", \"chunk_size\": 1}\n");
        ask(t, NULL);
        run(t, 300);
        assert_null(t->p);
        assert_int_equal(t->ndeltas, 1);
        assert_int_equal(t->after_cancel, 0);
        assert_null(t->msg);
        assert_int_equal(t->nerr, 0);
}

static void test_clean_end_without_done(void **state)
{
        struct t *t = *state;

        ask_and_wait(t, "{\"content\": \"no done marker\", \"no_done\": true}\n", 10000);
        assert_int_equal(t->nerr, 0);
        assert_non_null(t->msg);
        assert_string_equal(t->msg->content, "no done marker");
}

static void test_non_streamed_answer(void **state)
{
        struct t *t = *state;

        ask_and_wait(t,
                     "{\"content\": \"whole\", \"no_stream\": true, \"tool_calls\": "
                     "[{\"name\": \"bash\", \"arguments\": \"{}\"}]}\n",
                     10000);
        assert_int_equal(t->nerr, 0);
        assert_non_null(t->msg);
        assert_string_equal(t->deltas, "whole");
        assert_string_equal(t->msg->content, "whole");
        assert_int_equal(t->msg->ncalls, 1);
        assert_string_equal(t->msg->calls[0].name, "bash");
        assert_int_equal(t->msg->usage.prompt_tokens, 10);
}

static void test_connection_refused(void **state)
{
        struct t *t = *state;
        struct sockaddr_in sa = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
        socklen_t len = sizeof(sa);
        int fd = socket(AF_INET, SOCK_STREAM, 0);
        char err[256];

        /* A port that was free a moment ago: nobody listens there. */
        assert_int_equal(bind(fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
        assert_int_equal(getsockname(fd, (struct sockaddr *)&sa, &len), 0);
        close(fd);
        snprintf(t->url, sizeof(t->url), "http://127.0.0.1:%d/v1/", ntohs(sa.sin_port));
        t->cfg.base_url = t->url;
        t->cfg.retries = 1;
        assert_int_equal(provider_openai_open(&t->loop, "m", &t->cfg, &t->p, err, sizeof(err)), 0);
        ask(t, NULL);
        run(t, 10000);
        assert_int_equal(t->nerr, 2);
        assert_false(t->errs[0].final);
        assert_true(t->errs[1].final);
        assert_int_equal(t->errs[1].status, 0);
        assert_non_null(strstr(t->errs[1].msg, "cannot reach http://127.0.0.1:"));
        assert_non_null(strstr(t->errs[1].msg, "/v1/chat/completions: "));
        assert_non_null(strstr(t->errs[1].msg, "gave up after 2 attempts"));
}

int main(void)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test(test_libcurl_not_loaded_at_start),
            cmocka_unit_test_setup_teardown(test_libcurl_missing, setup, teardown),
            cmocka_unit_test_setup_teardown(test_streamed_content_and_usage, setup, teardown),
            cmocka_unit_test_setup_teardown(test_two_tool_calls_across_chunks, setup, teardown),
            cmocka_unit_test_setup_teardown(test_request_body_and_headers, setup, teardown),
            cmocka_unit_test_setup_teardown(test_key_from_environment, setup, teardown),
            cmocka_unit_test_setup_teardown(test_default_base_urls, setup, teardown),
            cmocka_unit_test_setup_teardown(test_keyless_local_server, setup, teardown),
            cmocka_unit_test_setup_teardown(test_500_then_success, setup, teardown),
            cmocka_unit_test_setup_teardown(test_429_retry_after, setup, teardown),
            cmocka_unit_test_setup_teardown(test_429_retry_after_dates, setup, teardown),
            cmocka_unit_test_setup_teardown(test_drop_mid_stream_retried, setup, teardown),
            cmocka_unit_test_setup_teardown(test_malformed_sse_is_final, setup, teardown),
            cmocka_unit_test_setup_teardown(test_stall_idle_timeout, setup, teardown),
            cmocka_unit_test_setup_teardown(test_401_is_final_at_once, setup, teardown),
            cmocka_unit_test_setup_teardown(test_key_redacted_from_server_text, setup, teardown),
            cmocka_unit_test_setup_teardown(test_key_redacted_around_the_cut, setup, teardown),
            cmocka_unit_test_setup_teardown(test_key_with_trailing_newline, setup, teardown),
            cmocka_unit_test_setup_teardown(test_unfinished_streams_retried, setup, teardown),
            cmocka_unit_test_setup_teardown(test_retry_takes_back_what_differs, setup, teardown),
            cmocka_unit_test_setup_teardown(test_retry_after_ms, setup, teardown),
            cmocka_unit_test_setup_teardown(test_model_loading_waits, setup, teardown),
            cmocka_unit_test_setup_teardown(test_quota_429_is_final, setup, teardown),
            cmocka_unit_test_setup_teardown(test_in_stream_errors, setup, teardown),
            cmocka_unit_test_setup_teardown(test_404_names_the_url, setup, teardown),
            cmocka_unit_test_setup_teardown(test_redirect_names_the_target, setup, teardown),
            cmocka_unit_test_setup_teardown(test_html_error_shows_the_status_line, setup, teardown),
            cmocka_unit_test_setup_teardown(test_error_message_beside_exception_name, setup,
                                            teardown),
            cmocka_unit_test_setup_teardown(test_reset_connection_named, setup, teardown),
            cmocka_unit_test_setup_teardown(test_mislabelled_answers, setup, teardown),
            cmocka_unit_test_setup_teardown(test_invalid_json_arguments_verbatim, setup, teardown),
            cmocka_unit_test_setup_teardown(test_cancel_stalled_stream, setup, teardown),
            cmocka_unit_test_setup_teardown(test_free_inside_delta, setup, teardown),
            cmocka_unit_test_setup_teardown(test_clean_end_without_done, setup, teardown),
            cmocka_unit_test_setup_teardown(test_non_streamed_answer, setup, teardown),
            cmocka_unit_test_setup_teardown(test_connection_refused, setup, teardown),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
