/* provider_openai: `openai:MODEL`, one streamed POST to {base}/chat/completions
 * per model call, parsed with sse and assembled with chat; retries with
 * backoff on rate limits, server errors, dropped or stalled streams. The API
 * key goes only into the Authorization header: every message this module
 * produces has it redacted, and its copies are scrubbed when the provider goes.
 *
 * A retry restarts the message: deltas already streamed by the failed
 * attempt are not taken back, the retry's on_error says "partial output
 * discarded", and the next attempt streams its deltas from the start. */
#include "core/provider_openai.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "core/http.h"
#include "core/sse.h"

#define OPENAI_URL      "https://api.openai.com/v1"
#define HF_ROUTER_URL   "https://router.huggingface.co/v1"
#define MAX_DELAY_MS    60000
#define MAX_JSON_BODY   (8u << 20) /* a non-streamed answer */
#define MAX_ERROR_BODY  (64u << 10)
#define DONE_GRACE_MS   1000 /* after [DONE], for the response to end */
#define DEFAULT_BACKOFF 500
#define DEFAULT_CONNECT 10000
#define DEFAULT_IDLE    60000

enum body_kind { BODY_SSE, BODY_JSON, BODY_ERROR };
enum timer_job { JOB_NONE, JOB_RETRY, JOB_FAIL, JOB_GRACE };

struct oai {
        struct provider base;
        struct http_client *http;
        char *model, *url;
        char *key;  /* only to redact it from messages */
        char *auth; /* the Authorization header line */
        unsigned retries;
        uint32_t connect_ms, idle_ms, backoff_ms;
        uv_timer_t timer; /* retry backoff, late errors, the [DONE] grace */
        enum timer_job job;

        /* The call in flight. */
        bool active;
        char *body;
        struct provider_callbacks cb;
        void *ud;
        unsigned attempt; /* 0: the first */
        struct http_request *req;
        char late_error[512]; /* JOB_FAIL: reported from the timer */

        /* The attempt in flight. */
        struct sse_parser *sse;
        struct chat_stream *stream;
        int status;
        int64_t retry_after_ms;
        enum body_kind kind;
        char *raw; /* JSON or error body */
        size_t raw_len, raw_cap;
        bool done;     /* [DONE] arrived */
        bool chunks;   /* at least one chunk parsed */
        bool partial;  /* deltas of this attempt reached the caller */
        char bad[384]; /* why the stream is unusable; "" while fine */

        /* Parsing runs the caller's on_delta, which may cancel or free. */
        unsigned busy;
        bool freeing;
};

static void oai_destroy(struct oai *p);
static int attempt_start(struct oai *p, char *err, size_t errlen);
static void timer_arm(struct oai *p, enum timer_job job, uint64_t ms);

/* Appends n bytes of src at *o, truncating at size; msg stays terminated. */
static void put(char *msg, size_t size, size_t *o, const char *src, size_t n)
{
        if (*o + 1 >= size)
                return;
        if (n > size - *o - 1)
                n = size - *o - 1;
        memmove(msg + *o, src, n);
        *o += n;
        msg[*o] = '\0';
}

/* Every message that leaves this module goes through here: the key is
 * replaced, and so is a piece of it left at the end by truncation. */
static void redact(const struct oai *p, char *msg, size_t size)
{
        static const char mark[] = "[redacted]";
        size_t klen = strlen(p->key), o = 0, len, l;
        char copy[1024];
        const char *s = copy, *at;

        if (klen == 0 || size == 0)
                return;
        if (strstr(msg, p->key) != NULL) {
                snprintf(copy, sizeof(copy), "%s", msg);
                msg[0] = '\0';
                while ((at = strstr(s, p->key)) != NULL) {
                        put(msg, size, &o, s, (size_t)(at - s));
                        put(msg, size, &o, mark, sizeof(mark) - 1);
                        s = at + klen;
                }
                put(msg, size, &o, s, strlen(s));
        }
        len = strlen(msg);
        for (l = len < klen ? len : klen - 1; l >= 8; l--) {
                if (memcmp(msg + len - l, p->key, l) == 0) {
                        o = len - l;
                        put(msg, size, &o, mark, sizeof(mark) - 1);
                        break;
                }
        }
}

static void attempt_reset(struct oai *p)
{
        sse_free(p->sse);
        p->sse = NULL;
        chat_stream_free(p->stream);
        p->stream = NULL;
        free(p->raw);
        p->raw = NULL;
        p->raw_len = p->raw_cap = 0;
        p->status = 0;
        p->retry_after_ms = -1;
        p->kind = BODY_SSE;
        p->done = p->chunks = p->partial = false;
        p->bad[0] = '\0';
}

/* Ends the call: nothing of it is left when the caller hears of it. */
static void call_end(struct oai *p)
{
        if (p->req != NULL)
                http_cancel(p->req);
        p->req = NULL;
        uv_timer_stop(&p->timer);
        p->job = JOB_NONE;
        p->active = false;
        free(p->body);
        p->body = NULL;
        if (p->busy == 0)
                attempt_reset(p);
}

static void finish_message(struct oai *p)
{
        struct provider_callbacks cb = p->cb;
        struct chat_message *m = calloc(1, sizeof(*m));
        void *ud = p->ud;

        if (m == NULL) {
                call_end(p);
                if (cb.on_error != NULL)
                        cb.on_error("out of memory", 0, 0, true, ud);
                return;
        }
        chat_stream_take(p->stream, m);
        call_end(p);
        if (cb.on_message != NULL)
                cb.on_message(m, ud);
        else
                chat_message_free(m);
}

/* What an operator most likely has to fix. */
static const char *status_hint(int status)
{
        switch (status) {
        case 401:
                return " (check the API key)";
        case 404:
                return " (check the base URL and the model name)";
        default:
                return "";
        }
}

static bool retryable_status(int status)
{
        return status == 408 || status == 429 || status >= 500;
}

static int64_t retry_delay(const struct oai *p)
{
        int64_t d = p->backoff_ms;
        unsigned i;

        if ((p->status == 429 || p->status == 503) && p->retry_after_ms >= 0)
                d = p->retry_after_ms;
        else
                for (i = 0; i < p->attempt && d < MAX_DELAY_MS; i++)
                        d *= 2;
        return d > MAX_DELAY_MS ? MAX_DELAY_MS : d;
}

/* One attempt failed with `why`. Retries when it may help and attempts are
 * left, else ends the call. http_status is the status when the failure is
 * an HTTP error status, 0 otherwise. */
static void attempt_failed(struct oai *p, const char *why, int http_status, bool retryable)
{
        struct provider_callbacks cb = p->cb;
        void *ud = p->ud;
        char msg[640];

        if (p->req != NULL)
                http_cancel(p->req);
        p->req = NULL;
        if (!retryable || p->attempt >= p->retries) {
                if (p->attempt > 0)
                        snprintf(msg, sizeof(msg), "%s (gave up after %u attempts)", why,
                                 p->attempt + 1);
                else
                        snprintf(msg, sizeof(msg), "%s", why);
                redact(p, msg, sizeof(msg));
                call_end(p);
                if (cb.on_error != NULL)
                        cb.on_error(msg, http_status, 0, true, ud);
                return;
        }
        int64_t delay = retry_delay(p);

        snprintf(msg, sizeof(msg), "%s (attempt %u of %u); retrying%s", why, p->attempt + 1,
                 p->retries + 1, p->partial ? "; partial output discarded" : "");
        redact(p, msg, sizeof(msg));
        p->attempt++;
        timer_arm(p, JOB_RETRY, (uint64_t)delay);
        if (cb.on_error != NULL)
                cb.on_error(msg, http_status, delay, false, ud);
}

static void on_timer(uv_timer_t *t)
{
        struct oai *p = t->data;
        enum timer_job job = p->job;
        char err[512];

        p->job = JOB_NONE;
        switch (job) {
        case JOB_RETRY:
                if (attempt_start(p, err, sizeof(err)) < 0)
                        attempt_failed(p, err, 0, false);
                break;
        case JOB_FAIL:
                attempt_failed(p, p->late_error, 0, false);
                break;
        case JOB_GRACE: /* [DONE] came but the response never ended */
                finish_message(p);
                break;
        case JOB_NONE:
                break;
        }
}

static void timer_arm(struct oai *p, enum timer_job job, uint64_t ms)
{
        p->job = job;
        uv_timer_start(&p->timer, on_timer, ms, 0);
}

static void on_stream_delta(const char *text, size_t n, void *ud)
{
        struct oai *p = ud;

        if (!p->active || p->freeing)
                return;
        p->partial = true;
        if (p->cb.on_delta != NULL)
                p->cb.on_delta(text, n, p->ud);
}

/* One chunk, from an SSE event or a whole JSON answer. */
static void take_chunk(struct oai *p, const char *data, size_t len)
{
        char err[320];
        int rc;

        if (p->bad[0] || p->done || !p->active || p->freeing)
                return;
        err[0] = '\0';
        rc = chat_stream_chunk(p->stream, data, len, err, sizeof(err));
        if (rc == 1)
                p->done = true;
        else if (rc == -ENOMEM)
                snprintf(p->bad, sizeof(p->bad), "out of memory");
        else if (rc < 0)
                snprintf(p->bad, sizeof(p->bad), "the server's stream failed: %s",
                         err[0] ? err : "unusable chunk");
        else
                p->chunks = true;
}

static void on_sse_event(const char *event, const char *data, size_t len, void *ud)
{
        take_chunk(ud, data, len);
}

/* Runs the parser, which may call the caller's on_delta; false when the
 * caller freed or cancelled meanwhile (nothing more to do). */
static bool parse(struct oai *p, const char *buf, size_t n, bool finish)
{
        int rc = 0;

        p->busy++;
        if (p->kind == BODY_JSON)
                take_chunk(p, buf, n);
        else if (finish)
                sse_finish(p->sse);
        else
                rc = sse_feed(p->sse, buf, n);
        p->busy--;
        if (p->freeing) {
                oai_destroy(p);
                return false;
        }
        if (!p->active) {
                attempt_reset(p);
                return false;
        }
        if (rc == -E2BIG && !p->bad[0])
                snprintf(p->bad, sizeof(p->bad), "the server sent an SSE event over 8 MiB");
        return true;
}

static void on_http_response(const struct http_response *r, void *ud)
{
        struct oai *p = ud;

        p->status = r->status;
        p->retry_after_ms = r->retry_after_ms;
        if (r->status < 200 || r->status > 299)
                p->kind = BODY_ERROR;
        else if (strncasecmp(r->content_type, "application/json", 16) == 0)
                p->kind = BODY_JSON; /* a server that ignored "stream": the whole answer */
        else
                p->kind = BODY_SSE;
}

static void keep_raw(struct oai *p, const char *buf, size_t n, size_t limit)
{
        if (p->raw_len + n > limit) {
                n = limit - p->raw_len;
                if (p->kind == BODY_JSON)
                        snprintf(p->bad, sizeof(p->bad), "the answer is larger than %zu bytes",
                                 limit);
        }
        if (p->raw_len + n + 1 > p->raw_cap) {
                size_t cap = p->raw_cap ? p->raw_cap : 4096;
                char *nr;

                while (cap < p->raw_len + n + 1)
                        cap *= 2;
                nr = realloc(p->raw, cap);
                if (nr == NULL)
                        return;
                p->raw = nr;
                p->raw_cap = cap;
        }
        memcpy(p->raw + p->raw_len, buf, n);
        p->raw_len += n;
        p->raw[p->raw_len] = '\0';
}

static void on_http_data(const char *buf, size_t n, void *ud)
{
        struct oai *p = ud;

        if (p->kind == BODY_ERROR) {
                keep_raw(p, buf, n, MAX_ERROR_BODY);
                return;
        }
        if (p->kind == BODY_JSON) {
                keep_raw(p, buf, n, MAX_JSON_BODY);
                return;
        }
        if (!parse(p, buf, n, false))
                return;
        if (p->bad[0]) {
                attempt_failed(p, p->bad, 0, false);
                return;
        }
        if (p->done && p->job != JOB_GRACE)
                timer_arm(p, JOB_GRACE, DONE_GRACE_MS);
}

/* The server's own words from an error body: {"error": {"message"}},
 * {"error": "..."}, {"message"} or {"detail"}, else its first line. */
static void error_text(const char *raw, size_t n, char *out, size_t outlen)
{
        json_t *root = raw != NULL ? json_loadb(raw, n, 0, NULL) : NULL;
        json_t *e = json_object_get(root, "error");
        const char *msg = NULL;
        size_t i, j = 0;

        if (json_is_object(e))
                msg = json_string_value(json_object_get(e, "message"));
        else if (json_is_string(e))
                msg = json_string_value(e);
        if (msg == NULL)
                msg = json_string_value(json_object_get(root, "message"));
        if (msg == NULL)
                msg = json_string_value(json_object_get(root, "detail"));
        if (msg == NULL)
                msg = raw != NULL ? raw : "";
        for (i = 0; msg[i] != '\0' && msg[i] != '\n' && j + 1 < outlen && i < 300; i++)
                out[j++] = (unsigned char)msg[i] < 0x20 ? ' ' : msg[i];
        out[j] = '\0';
        json_decref(root);
}

static void on_http_done(const struct http_result *r, void *ud)
{
        struct oai *p = ud;
        char why[512], text[320];

        p->req = NULL;
        if (p->done) { /* the answer is whole; how the connection ended does not matter */
                finish_message(p);
                return;
        }
        if (p->status != 0 && (p->status < 200 || p->status > 299)) {
                error_text(p->raw, p->raw_len, text, sizeof(text));
                snprintf(why, sizeof(why), "HTTP %d%s%s%s", p->status, text[0] ? ": " : "", text,
                         status_hint(p->status));
                attempt_failed(p, why, p->status, retryable_status(p->status));
                return;
        }
        if (!r->ok) {
                if (r->idle_timeout)
                        snprintf(why, sizeof(why), "stalled stream: %s", r->error);
                else if (p->status != 0)
                        snprintf(why, sizeof(why), "connection dropped mid-stream: %s", r->error);
                else
                        snprintf(why, sizeof(why), "cannot reach %s: %s", p->url, r->error);
                attempt_failed(p, why, 0, r->transient);
                return;
        }
        /* A clean end: what is left of the stream, or the whole JSON answer. */
        if (!parse(p, p->raw, p->raw_len, true))
                return;
        if (p->bad[0])
                attempt_failed(p, p->bad, 0, false);
        else if (p->done || p->chunks)
                finish_message(p);
        else
                attempt_failed(p, "the server ended the stream without sending anything", 0, true);
}

static int attempt_start(struct oai *p, char *err, size_t errlen)
{
        const char *headers[] = {p->auth, "Content-Type: application/json",
                                 "Accept: text/event-stream", NULL};
        const struct http_callbacks hcb = {on_http_response, on_http_data, on_http_done};
        struct http_post post = {
            .url = p->url,
            .headers = headers,
            .body = p->body,
            .body_len = strlen(p->body),
            .connect_timeout_ms = p->connect_ms,
            .idle_timeout_ms = p->idle_ms,
        };

        attempt_reset(p);
        p->sse = sse_new(on_sse_event, p);
        p->stream = chat_stream_new(on_stream_delta, p);
        if (p->sse == NULL || p->stream == NULL) {
                snprintf(err, errlen, "out of memory");
                return -ENOMEM;
        }
        return http_post_stream(p->http, &post, &hcb, p, &p->req, err, errlen);
}

static int oai_request(struct provider *base, const json_t *messages, const json_t *tools,
                       const struct provider_callbacks *cb, void *ud)
{
        struct oai *p = (struct oai *)base;
        json_t *body;

        if (p->active || p->busy > 0)
                return -EBUSY;
        body = chat_request(p->model, messages, tools);
        p->body = body != NULL ? json_dumps(body, JSON_COMPACT) : NULL;
        json_decref(body);
        if (p->body == NULL)
                return -ENOMEM;
        p->cb = *cb;
        p->ud = ud;
        p->attempt = 0;
        p->active = true;
        /* Failing to start (libcurl missing) is reported like any failure,
         * from the loop: callers expect no callback before this returns. */
        if (attempt_start(p, p->late_error, sizeof(p->late_error)) < 0)
                timer_arm(p, JOB_FAIL, 0);
        return 0;
}

static void oai_cancel(struct provider *base)
{
        struct oai *p = (struct oai *)base;

        if (p->active)
                call_end(p);
}

static void oai_closed(uv_handle_t *h)
{
        free(h->data);
}

static void scrub_free(char *s)
{
        if (s != NULL)
                explicit_bzero(s, strlen(s));
        free(s);
}

static void oai_destroy(struct oai *p)
{
        call_end(p);
        attempt_reset(p);
        http_client_free(p->http);
        scrub_free(p->key);
        scrub_free(p->auth);
        free(p->model);
        free(p->url);
        uv_close((uv_handle_t *)&p->timer, oai_closed);
}

static void oai_free(struct provider *base)
{
        struct oai *p = (struct oai *)base;

        if (p->freeing)
                return;
        if (p->busy > 0) { /* inside on_delta: parse() finishes the job */
                p->freeing = true;
                call_end(p);
                return;
        }
        p->freeing = true;
        oai_destroy(p);
}

static const struct provider_ops oai_ops = {
    .request = oai_request,
    .cancel = oai_cancel,
    .free = oai_free,
};

static const char *env_nonempty(const char *name)
{
        const char *v = getenv(name);

        return v != NULL && v[0] != '\0' ? v : NULL;
}

/* The key, and the base URL that goes with it when none is configured. */
static int pick_key(const struct provider_config *cfg, char **key, const char **base, char *err,
                    size_t errlen)
{
        const char *k = cfg->api_key != NULL && cfg->api_key[0] ? cfg->api_key : NULL;
        const char *dflt = OPENAI_URL;
        size_t n;

        if (k == NULL)
                k = env_nonempty("PROCTOR_API_KEY");
        if (k == NULL)
                k = env_nonempty("OPENAI_API_KEY");
        if (k == NULL && (k = env_nonempty("HF_TOKEN")) != NULL)
                dflt = HF_ROUTER_URL;
        if (k == NULL) {
                snprintf(err, errlen,
                         "no API key: set PROCTOR_API_KEY (or OPENAI_API_KEY / HF_TOKEN)");
                return -ENOKEY;
        }
        /* Keys pasted from files often end with a newline. */
        for (n = strlen(k); n > 0 && (k[n - 1] == '\n' || k[n - 1] == '\r' || k[n - 1] == ' ');)
                n--;
        for (size_t i = 0; i < n; i++) {
                if ((unsigned char)k[i] < 0x20 || k[i] == 0x7f) {
                        snprintf(err, errlen, "the API key contains control characters");
                        return -EINVAL;
                }
        }
        if (n == 0) {
                snprintf(err, errlen, "the API key is blank");
                return -EINVAL;
        }
        *key = strndup(k, n);
        *base = cfg->base_url != NULL && cfg->base_url[0] ? cfg->base_url : dflt;
        return *key != NULL ? 0 : -ENOMEM;
}

int provider_openai_open(uv_loop_t *loop, const char *model, const struct provider_config *cfg,
                         struct provider **out, char *err, size_t errlen)
{
        struct oai *p;
        const char *base;
        size_t blen;
        int rc;

        *out = NULL;
        if (model == NULL || model[0] == '\0') {
                snprintf(err, errlen, "openai: no model named (openai:MODEL)");
                return -EINVAL;
        }
        p = calloc(1, sizeof(*p));
        if (p == NULL)
                return -ENOMEM;
        rc = pick_key(cfg, &p->key, &base, err, errlen);
        if (rc < 0) {
                free(p);
                return rc;
        }
        blen = strlen(base);
        while (blen > 0 && base[blen - 1] == '/')
                blen--;
        p->model = strdup(model);
        p->http = http_client_new(loop);
        if (asprintf(&p->url, "%.*s/chat/completions", (int)blen, base) < 0)
                p->url = NULL;
        if (asprintf(&p->auth, "Authorization: Bearer %s", p->key) < 0)
                p->auth = NULL;
        uv_timer_init(loop, &p->timer);
        p->timer.data = p;
        if (p->model == NULL || p->http == NULL || p->url == NULL || p->auth == NULL) {
                oai_destroy(p);
                snprintf(err, errlen, "out of memory");
                return -ENOMEM;
        }
        p->base.ops = &oai_ops;
        snprintf(p->base.label, sizeof(p->base.label), "openai:%s", model);
        p->retries = cfg->retries;
        p->backoff_ms = cfg->backoff_ms ? cfg->backoff_ms : DEFAULT_BACKOFF;
        p->connect_ms = cfg->connect_timeout_ms ? cfg->connect_timeout_ms : DEFAULT_CONNECT;
        p->idle_ms = cfg->idle_timeout_ms ? cfg->idle_timeout_ms : DEFAULT_IDLE;
        p->retry_after_ms = -1;
        *out = &p->base;
        return 0;
}
