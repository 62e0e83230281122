/* provider_openai: `openai:MODEL`, one streamed POST to {base}/chat/completions
 * per model call, parsed with sse and assembled with chat; retries with
 * backoff on rate limits, server errors, dropped or stalled streams. The API
 * key goes only into the Authorization header: every message this module
 * produces has it redacted, and its copies are scrubbed when the provider goes.
 *
 * A retry restarts the message, but what the caller was already shown is
 * not shown again: the retried attempt's text is passed on only past it,
 * and where it differs on_discard first takes back the shown text that no
 * longer holds. An answer only counts when it ended as answers end (a
 * finish_reason or [DONE]); a stream that just stops is a dropped one. */
#include "core/model/provider_openai.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "exec/http.h"
#include "core/util/bounds.h"
#include "core/model/sse.h"
#include "core/util/buf.h"

#define OPENAI_URL      "https://api.openai.com/v1"
#define HF_ROUTER_URL   "https://router.huggingface.co/v1"
#define MAX_DELAY_MS    60000
#define MAX_ERROR_BODY  (64u << 10)
#define DONE_GRACE_MS   1000 /* after [DONE], for the response to end */
#define DEFAULT_BACKOFF 500
#define DEFAULT_CONNECT 10000
#define DEFAULT_IDLE    60000
#define DEFAULT_LOADING 600000 /* in all, waiting for a model to load */
#define MIN_LOADING     200
#define LOADING_GUESS   5000 /* a loading model's wait when the server gives none */
#define ERROR_TEXT_MAX  300  /* characters of a server's error text shown */
#define KEY_PREFIX_MIN  8    /* this much of the key is already too much */

/* BODY_SNIFF: a 2xx answer whose first byte is still to come; the body
 * says what it is, whatever its Content-Type claims. */
enum body_kind { BODY_SNIFF, BODY_SSE, BODY_JSON, BODY_ERROR };

/* How one failed attempt is handled. */
struct failure {
        const char *why;
        int status;      /* HTTP status, or the one an in-stream error stands for; 0: none */
        bool retry;      /* another attempt may help */
        int64_t wait_ms; /* the server asked for this wait; -1: the backoff */
        bool loading;    /* the model is loading: the wait uses no attempt */
};
enum timer_job { JOB_NONE, JOB_RETRY, JOB_FAIL, JOB_GRACE };

struct oai {
        struct provider base;
        struct http_client *http;
        char *model, *url;
        char *key;  /* only to redact it from messages; NULL: none (a local server) */
        char *auth; /* the Authorization header line; NULL without a key */
        unsigned retries;
        bool no_stream_options; /* servers that refuse the field */
        char *ca_file;          /* --ca-cert (PEM); NULL: the system's CAs */
        uint32_t connect_ms, idle_ms, backoff_ms, loading_ms;
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
        char *shown;          /* the text on_delta passed on, over all attempts */
        size_t shown_len, shown_cap;
        int64_t loading_waited_ms;

        /* The attempt in flight. */
        struct sse_parser *sse;
        struct chat_stream *stream;
        int status;
        int64_t retry_after_ms;
        char reason[64], location[512];
        char ctype[96]; /* the answer's Content-Type */
        char head[160]; /* a 2xx body's first bytes, to say what it was */
        size_t head_len;
        enum body_kind kind;
        char *raw; /* JSON or error body */
        size_t raw_len, raw_cap;
        size_t pos;            /* bytes of text this attempt streamed */
        size_t received;       /* bytes of the body so far */
        bool done;             /* [DONE] arrived */
        bool chunks;           /* at least one chunk parsed */
        bool finishing;        /* the body ended: its last event is being parsed */
        bool cut_event;        /* ... and was cut short (a connection closed mid-line) */
        char bad[384];         /* why the stream is unusable; "" while fine */
        struct failure bad_as; /* how to handle it (bad_as.why is bad) */

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

/* How much of the key starts at s: the longest run of its bytes, taken
 * from anywhere in it, of KEY_PREFIX_MIN bytes or more (a server may echo
 * the key cut at either end, or a middle part), or the whole of a shorter
 * key; else 0. */
static size_t key_at(const char *key, const char *s, size_t left)
{
        size_t klen = strlen(key), best = 0, j, l;

        for (j = 0; j < klen && best < klen - j; j++) {
                for (l = 0; j + l < klen && l < left && s[l] == key[j + l]; l++)
                        ;
                if (l > best)
                        best = l;
        }
        return best >= KEY_PREFIX_MIN || best == klen ? best : 0;
}

/* Every text that leaves this module goes through here, before any cut:
 * the key, and any prefix of it long enough to matter, anywhere, become
 * "[redacted]". Returns a new string (NULL when out of memory). */
static char *redacted(const struct oai *p, const char *s, size_t n)
{
        static const char mark[] = "[redacted]";
        size_t i, o = 0, l, size = n + 1, shortest;
        char *out;

        /* Each mark stands for at least `shortest` bytes of the text. */
        if (p->key != NULL && p->key[0] != '\0') {
                shortest = strlen(p->key) < KEY_PREFIX_MIN ? strlen(p->key) : KEY_PREFIX_MIN;
                size += (n / shortest + 1) * sizeof(mark);
        }
        out = malloc(size);
        if (out == NULL)
                return NULL;
        for (i = 0; i < n; i++) {
                l = p->key != NULL && p->key[0] != '\0' ? key_at(p->key, s + i, n - i) : 0;
                if (l > 0) {
                        memcpy(out + o, mark, sizeof(mark) - 1);
                        o += sizeof(mark) - 1;
                        i += l - 1;
                } else {
                        out[o++] = s[i];
                }
        }
        out[o] = '\0';
        return out;
}

/* redacted() in place, for the messages this module composes. */
static void redact(const struct oai *p, char *msg, size_t size)
{
        char *r = redacted(p, msg, strlen(msg));
        size_t o = 0;

        if (r == NULL) {
                snprintf(msg, size, "(message withheld: out of memory)");
                return;
        }
        msg[0] = '\0';
        put(msg, size, &o, r, strlen(r));
        free(r);
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
        p->reason[0] = p->location[0] = '\0';
        p->kind = BODY_SNIFF;
        p->pos = p->received = p->head_len = 0;
        p->done = p->chunks = p->cut_event = false;
        p->bad[0] = '\0';
        p->bad_as = (struct failure){0};
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
        size_t extra = p->shown_len > p->pos ? p->shown_len - p->pos : 0;
        void *ud = p->ud;

        if (m == NULL) {
                call_end(p);
                if (cb.on_error != NULL)
                        cb.on_error("out of memory", 0, 0, true, ud);
                return;
        }
        chat_stream_take(p->stream, m);
        call_end(p);
        /* The answer is shorter than what an earlier attempt showed. */
        if (extra > 0 && cb.on_discard != NULL)
                cb.on_discard(extra, ud);
        if (cb.on_message != NULL)
                cb.on_message(m, ud);
        else
                chat_message_free(m);
}

/* Whether an HTTP status may go away by itself. */
static bool retryable_status(int status)
{
        return status == 408 || status == 409 || status == 429 || status >= 500;
}

/* A wait the server asked for when it has one, else the backoff,
 * doubling with each attempt. */
static int64_t retry_delay(const struct oai *p, const struct failure *f)
{
        int64_t d = p->backoff_ms;
        unsigned i;

        if (f->wait_ms >= 0)
                d = f->wait_ms;
        else
                for (i = 0; i < p->attempt && d < MAX_DELAY_MS; i++)
                        d *= 2;
        return d > MAX_DELAY_MS ? MAX_DELAY_MS : d;
}

/* A model still loading (Hugging Face's 503 with estimated_time) is waited
 * for, within the budget, without using an attempt. The wait, or -1 when
 * the budget is spent. */
static int64_t loading_wait(struct oai *p, int64_t asked)
{
        int64_t left = (int64_t)p->loading_ms - p->loading_waited_ms;
        int64_t d = asked < MIN_LOADING ? MIN_LOADING : asked;

        if (left <= 0)
                return -1;
        if (d > left)
                d = left;
        if (d > MAX_DELAY_MS)
                d = MAX_DELAY_MS;
        p->loading_waited_ms += d;
        return d;
}

static void report(struct oai *p, const char *text, int status, int64_t retry_in_ms, bool final)
{
        struct provider_callbacks cb = p->cb;
        void *ud = p->ud;
        char msg[1024];

        snprintf(msg, sizeof(msg), "%s", text);
        redact(p, msg, sizeof(msg));
        if (final)
                call_end(p);
        if (cb.on_error != NULL)
                cb.on_error(msg, status, retry_in_ms, final, ud);
}

/* One attempt failed. Retries when it may help and attempts are left,
 * else ends the call. What f->why quotes (a URL, a redirect's target) is
 * redacted before anything is appended or cut. */
static void attempt_failed(struct oai *p, const struct failure *f)
{
        char *why = redacted(p, f->why, strlen(f->why));
        const char *w = why != NULL ? why : "(message withheld: out of memory)";
        bool final = !f->retry || p->attempt >= p->retries;
        char msg[1024];
        int64_t delay;

        if (p->req != NULL)
                http_cancel(p->req);
        p->req = NULL;
        if (f->loading && (delay = loading_wait(p, f->wait_ms)) >= 0) {
                snprintf(msg, sizeof(msg), "%s (waiting for the model to load)", w);
                timer_arm(p, JOB_RETRY, (uint64_t)delay);
        } else if (f->loading) {
                snprintf(msg, sizeof(msg), "%s (still loading after %lld s of waiting)", w,
                         (long long)(p->loading_waited_ms / 1000));
                delay = -1;
        } else if (final) {
                snprintf(msg, sizeof(msg), p->attempt > 0 ? "%s (gave up after %u attempts)" : "%s",
                         w, p->attempt + 1);
                delay = -1;
        } else {
                delay = retry_delay(p, f);
                snprintf(msg, sizeof(msg), "%s (attempt %u of %u)", w, p->attempt + 1,
                         p->retries + 1);
                p->attempt++;
                timer_arm(p, JOB_RETRY, (uint64_t)delay);
        }
        free(why);
        report(p, msg, f->status, delay < 0 ? 0 : delay, delay < 0);
}

/* A failure that is not about any status. */
static void fail_plain(struct oai *p, const char *why, bool retry)
{
        const struct failure f = {.why = why, .retry = retry, .wait_ms = -1};

        attempt_failed(p, &f);
}

static void stream_complete(struct oai *p);

static void on_timer(uv_timer_t *t)
{
        struct oai *p = t->data;
        enum timer_job job = p->job;
        char err[512];

        p->job = JOB_NONE;
        switch (job) {
        case JOB_RETRY:
                if (attempt_start(p, err, sizeof(err)) < 0)
                        fail_plain(p, err, false);
                break;
        case JOB_FAIL:
                fail_plain(p, p->late_error, false);
                break;
        case JOB_GRACE: /* [DONE] came but the response never ended */
                stream_complete(p);
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

/* Passes text on and remembers it; false when the caller cancelled or
 * freed meanwhile. */
static bool show(struct oai *p, const char *text, size_t n)
{
        if (buf_reserve(&p->shown, &p->shown_cap, p->shown_len, n, 256) < 0)
                return true; /* shown but not remembered: a retry may repeat it */
        memmove(p->shown + p->shown_len, text, n);
        p->shown_len += n;
        if (p->cb.on_delta != NULL)
                p->cb.on_delta(text, n, p->ud);
        return p->active && !p->freeing;
}

/* The attempt's text from byte p->pos on. What an earlier attempt already
 * showed is skipped while it matches; where it stops matching, the shown
 * rest is taken back (from the start of that character) first. */
static void on_stream_delta(const char *text, size_t n, void *ud)
{
        struct oai *p = ud;
        size_t start = p->pos, same = 0, m, keep;

        if (!p->active || p->freeing)
                return;
        p->pos += n;
        if (start >= p->shown_len) {
                show(p, text, n);
                return;
        }
        m = n < p->shown_len - start ? n : p->shown_len - start;
        while (same < m && text[same] == p->shown[start + same])
                same++;
        if (same == m) {
                if (n > m)
                        show(p, text + m, n - m);
                return;
        }
        keep = start + same;
        while (keep > 0 && ((unsigned char)p->shown[keep] & 0xC0) == 0x80)
                keep--;
        if (p->cb.on_discard != NULL)
                p->cb.on_discard(p->shown_len - keep, p->ud);
        if (!p->active || p->freeing)
                return;
        p->shown_len = keep;
        /* the start of the character that differs was skipped as shown */
        if (start + same > keep && !show(p, p->shown + keep, start + same - keep))
                return;
        show(p, text + same, n - same);
}

/* The status an error's code stands for: an HTTP status as a number, or
 * one of the names servers use; 0 when it names none. */
static int code_status(const json_t *code)
{
        static const struct {
                const char *name;
                int status;
        } names[] = {
            {"invalid_api_key", 401},
            {"authentication_error", 401},
            {"unauthorized", 401},
            {"permission_denied", 403},
            {"permission_error", 403},
            {"not_found", 404},
            {"model_not_found", 404},
            {"not_found_error", 404},
            {"rate_limit_exceeded", 429},
            {"rate_limit_error", 429},
            {"too_many_requests", 429},
            {"insufficient_quota", 429},
            {"server_error", 500},
            {"internal_error", 500},
            {"internal_server_error", 500},
            {"api_error", 500},
            {"bad_gateway", 502},
            {"overloaded", 503},
            {"overloaded_error", 503},
            {"service_unavailable", 503},
            {"timeout", 504},
        };
        const char *s = json_string_value(code);
        size_t i;

        if (json_is_integer(code) && json_integer_value(code) >= 100 &&
            json_integer_value(code) <= 599)
                return (int)json_integer_value(code);
        if (s != NULL && strlen(s) == 3 && s[0] >= '1' && s[0] <= '5' && atoi(s) >= 100)
                return atoi(s);
        for (i = 0; s != NULL && i < sizeof(names) / sizeof(names[0]); i++)
                if (strcasecmp(s, names[i].name) == 0)
                        return names[i].status;
        return 0;
}

static bool names_quota(const json_t *v)
{
        const char *s = json_string_value(v);

        return s != NULL && strcasecmp(s, "insufficient_quota") == 0;
}

/* How to handle an error, from its status and the server's error payload
 * (an HTTP error body's root, or an in-stream "error" member's parent). */
static void judge(struct oai *p, struct failure *f, const json_t *root)
{
        const json_t *e = json_object_get(root, "error");
        const json_t *eta = json_object_get(root, "estimated_time");
        const char *text = json_string_value(json_is_object(e) ? json_object_get(e, "message") : e);
        int st;

        if (f->status == 0 && json_is_object(e)) {
                st = code_status(json_object_get(e, "code"));
                if (st == 0)
                        st = code_status(json_object_get(e, "status"));
                if (st == 0)
                        st = code_status(json_object_get(e, "type"));
                f->status = st;
        }
        f->retry = retryable_status(f->status);
        f->wait_ms = f->status == 0 ? -1 : p->retry_after_ms;
        /* Out of credit: waiting does not bring it back. */
        if (json_is_object(e) &&
            (names_quota(json_object_get(e, "code")) || names_quota(json_object_get(e, "type"))))
                f->retry = false;
        if (f->status == 503 &&
            (json_is_number(eta) || (text != NULL && strstr(text, "loading")))) {
                f->loading = true;
                /* without an estimate, not so often that the wait is spent asking */
                f->wait_ms =
                    json_is_number(eta) ? (int64_t)(json_number_value(eta) * 1000) : LOADING_GUESS;
        }
}

/* The answer passed one of core/util/bounds.h's bounds: `what` passed `bound`,
 * proctor's bound for `of`. The same answer again would pass it again, so
 * the attempt fails with no retry. */
static void refuse(struct oai *p, const char *what, size_t bound, const char *of)
{
        char size[32];

        if (p->bad[0])
                return;
        snprintf(p->bad, sizeof(p->bad),
                 "refused the model's answer: %s passed %s, proctor's bound for %s", what,
                 bounds_size_text(bound, size, sizeof(size)), of);
        p->bad_as = (struct failure){.why = p->bad, .wait_ms = -1};
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
        if (rc == 1) {
                p->done = true;
        } else if (rc == -ENOMEM) {
                snprintf(p->bad, sizeof(p->bad), "out of memory");
        } else if (rc == -E2BIG) {
                /* chat's own words name the bound; no retry, as in refuse() */
                snprintf(p->bad, sizeof(p->bad), "refused the model's answer: %s", err);
        } else if (rc < 0 && chat_stream_error(p->stream) != NULL) {
                /* An error event in a 200 stream is an HTTP error told late. */
                json_t *root = json_pack("{s:O}", "error", chat_stream_error(p->stream));
                static const char said[] = "the server reported an error: ";
                /* chat words an error without a message the same way */
                size_t skip = strncmp(err, said, sizeof(said) - 1) == 0 ? sizeof(said) - 1 : 0;
                char *text = redacted(p, err + skip, strlen(err + skip));

                p->bad_as = (struct failure){.why = p->bad};
                judge(p, &p->bad_as, root);
                json_decref(root);
                if (p->bad_as.status != 0)
                        snprintf(p->bad, sizeof(p->bad), "the server reported an error (%d): %s",
                                 p->bad_as.status, text != NULL ? text : "");
                else
                        snprintf(p->bad, sizeof(p->bad), "the server reported an error: %s",
                                 text != NULL ? text : "");
                free(text);
        } else if (rc < 0 && p->finishing) {
                /* An event left without its blank line at the body's end and
                 * not whole: the connection closed inside it. */
                p->cut_event = true;
        } else if (rc < 0) {
                snprintf(p->bad, sizeof(p->bad), "the server's stream failed: %s",
                         err[0] ? err : "unusable chunk");
        } else {
                p->chunks = true;
        }
        if (p->bad[0] && p->bad_as.why == NULL)
                p->bad_as = (struct failure){.why = p->bad, .wait_ms = -1};
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
        else if (finish) {
                p->finishing = true;
                sse_finish(p->sse);
                p->finishing = false;
        } else
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
        if (rc == -E2BIG)
                refuse(p, "an SSE event (or line)", BOUNDS_SSE_EVENT, "one event");
        return true;
}

static void on_http_response(const struct http_response *r, void *ud)
{
        struct oai *p = ud;

        p->status = r->status;
        p->retry_after_ms = r->retry_after_ms;
        snprintf(p->reason, sizeof(p->reason), "%s", r->reason);
        snprintf(p->location, sizeof(p->location), "%s", r->location);
        snprintf(p->ctype, sizeof(p->ctype), "%s", r->content_type);
        p->kind = r->status < 200 || r->status > 299 ? BODY_ERROR : BODY_SNIFF;
}

static void keep_raw(struct oai *p, const char *buf, size_t n, size_t limit)
{
        if (p->raw_len + n > limit) {
                n = limit - p->raw_len;
                if (p->kind == BODY_JSON)
                        refuse(p, "the answer", limit, "an answer sent whole (not streamed)");
        }
        if (buf_reserve(&p->raw, &p->raw_cap, p->raw_len, n, 4096) < 0)
                return;
        memcpy(p->raw + p->raw_len, buf, n);
        p->raw_len += n;
        p->raw[p->raw_len] = '\0';
}

/* Servers label answers wrongly both ways (JSON as text/plain, SSE as
 * application/json): the first byte decides. An object is a whole answer
 * (the server ignored "stream"); anything else is an event stream. Leading
 * blank space and a BOM are skipped, and while only they came, no more. */
static bool sniff(struct oai *p, const char **buf, size_t *n)
{
        for (;;) {
                if (*n >= 3 && memcmp(*buf, "\xEF\xBB\xBF", 3) == 0) {
                        *buf += 3;
                        *n -= 3;
                } else if (*n > 0 && **buf != '\0' && strchr(" \t\r\n", **buf) != NULL) {
                        (*buf)++;
                        (*n)--;
                } else {
                        break;
                }
        }
        if (*n == 0)
                return false;
        p->kind = **buf == '{' || **buf == '[' ? BODY_JSON : BODY_SSE;
        return true;
}

static void on_http_data(const char *buf, size_t n, void *ud)
{
        struct oai *p = ud;

        if (p->kind == BODY_SNIFF && !sniff(p, &buf, &n))
                return;
        if (p->kind == BODY_ERROR) {
                keep_raw(p, buf, n, MAX_ERROR_BODY);
                return;
        }
        if (p->kind == BODY_JSON)
                keep_raw(p, buf, n, BOUNDS_ANSWER_JSON);
        if (p->head_len < sizeof(p->head) - 1) {
                size_t k =
                    n < sizeof(p->head) - 1 - p->head_len ? n : sizeof(p->head) - 1 - p->head_len;
                memcpy(p->head + p->head_len, buf, k);
                p->head_len += k;
                p->head[p->head_len] = '\0';
        }
        /* What the parser drops (comments, ignored fields) is not kept, but
         * an answer that never ends would hold the turn forever: the idle
         * timeout never fires while bytes come. */
        p->received += n;
        if (p->received > BOUNDS_ANSWER_STREAM)
                refuse(p, "its stream", BOUNDS_ANSWER_STREAM, "one streamed answer");
        if (p->kind == BODY_SSE && !p->bad[0] && !parse(p, buf, n, false))
                return;
        if (p->bad[0]) {
                attempt_failed(p, &p->bad_as);
                return;
        }
        if (p->done && p->job != JOB_GRACE)
                timer_arm(p, JOB_GRACE, DONE_GRACE_MS);
}

/* How many bytes of a well-formed UTF-8 sequence start at s (n left): 1 to
 * 4, or 0 when the bytes there are not one (a proxy's Latin-1 page, a
 * gzip body). */
static size_t utf8_seq(const unsigned char *s, size_t n)
{
        size_t len = s[0] < 0x80                    ? 1
                     : s[0] >= 0xC2 && s[0] <= 0xDF ? 2
                     : s[0] >= 0xE0 && s[0] <= 0xEF ? 3
                     : s[0] >= 0xF0 && s[0] <= 0xF4 ? 4
                                                    : 0;

        if (len == 0 || len > n)
                return 0;
        for (size_t k = 1; k < len; k++)
                if ((s[k] & 0xC0) != 0x80)
                        return 0;
        /* overlong three-byte forms, surrogates, past U+10FFFF */
        if ((s[0] == 0xE0 && s[1] < 0xA0) || (s[0] == 0xED && s[1] >= 0xA0) ||
            (s[0] == 0xF0 && s[1] < 0x90) || (s[0] == 0xF4 && s[1] >= 0x90))
                return 0;
        return len;
}

/* Up to ERROR_TEXT_MAX characters of a server's text for a person: the key
 * redacted first, control characters as spaces, bytes that are not UTF-8
 * as '?', so that the excerpt is text an event can carry. */
static void excerpt(const struct oai *p, const char *msg, size_t n, char *out, size_t outlen)
{
        size_t i, j = 0, chars = 0;
        char *clean = redacted(p, msg, n);

        for (i = 0; clean != NULL && clean[i] != '\0' && chars++ < ERROR_TEXT_MAX;) {
                size_t len = utf8_seq((const unsigned char *)clean + i, strlen(clean + i));
                if (len == 0) { /* not UTF-8: one byte, shown as '?' */
                        if (j + 1 >= outlen)
                                break;
                        out[j++] = '?';
                        i++;
                        continue;
                }
                if (j + len >= outlen)
                        break;
                for (size_t k = 0; k < len; k++, i++)
                        out[j++] = (unsigned char)clean[i] < 0x20 ? ' ' : clean[i];
        }
        out[j] = '\0';
        free(clean);
}

/* The server's own words from an error body: {"error": {"message"}},
 * {"message"} (beside an "error" that only names an exception, as Node
 * servers send), {"error": "..."} or {"detail"}, else its first line; ""
 * for an HTML page, which says nothing a status line does not. Redacted
 * whole, then cut (excerpt). */
static void error_text(const struct oai *p, const json_t *root, char *out, size_t outlen)
{
        const json_t *e = json_object_get(root, "error");
        const char *msg = NULL, *raw = p->raw != NULL ? p->raw : "";

        if (json_is_object(e))
                msg = json_string_value(json_object_get(e, "message"));
        if (msg == NULL)
                msg = json_string_value(json_object_get(root, "message"));
        if (msg == NULL)
                msg = json_string_value(e);
        if (msg == NULL)
                msg = json_string_value(json_object_get(root, "detail"));
        if (msg == NULL) {
                msg = raw + strspn(raw, " \t\r\n");
                if (msg[0] == '<' || strstr(msg, "<html") != NULL || strstr(msg, "<HTML") != NULL)
                        msg = "";
        }
        excerpt(p, msg, strcspn(msg, "\n"), out, outlen);
}

/* The base URL a redirect points to, for --base-url. */
static void redirect_base(const char *location, char *out, size_t outlen)
{
        static const char tail[] = "/chat/completions";
        size_t n = strlen(location), t = sizeof(tail) - 1;

        if (n >= t && strcmp(location + n - t, tail) == 0)
                n -= t;
        snprintf(out, outlen, "%.*s", (int)n, location);
}

/* An HTTP error status: what the server said, and what to do about it. */
static void http_failed(struct oai *p)
{
        json_t *root = p->raw != NULL ? json_loadb(p->raw, p->raw_len, 0, NULL) : NULL;
        struct failure f = {.status = p->status};
        char why[2048], text[1280], base[512];
        int st = p->status;

        error_text(p, root, text, sizeof(text));
        judge(p, &f, root);
        f.why = why;
        if (st >= 300 && st < 400 && p->location[0]) {
                redirect_base(p->location, base, sizeof(base));
                snprintf(why, sizeof(why),
                         "HTTP %d: the server redirects to %s (proctor does not follow "
                         "redirects: use --base-url %s)",
                         st, p->location, base);
        } else if (st == 404) {
                snprintf(why, sizeof(why),
                         "HTTP 404 from %s%s%s (check the base URL and the model "
                         "name%s)",
                         p->url, text[0] ? ": " : "", text,
                         strstr(p->url, "/v1/") == NULL ? "; OpenAI-compatible servers usually "
                                                          "answer under /v1, as in "
                                                          "http://host:port/v1"
                                                        : "");
        } else {
                /* the reason phrase says more than nothing, less than the server's text */
                snprintf(why, sizeof(why), "HTTP %d%s%s%s%s%s", st,
                         !text[0] && p->reason[0] ? " " : "", text[0] ? "" : p->reason,
                         text[0] ? ": " : "", text,
                         st == 401                   ? " (check the API key)"
                         : !f.retry && st == 429     ? " (the account is out of quota: check its "
                                                       "plan and billing)"
                         : !text[0] && !p->reason[0] ? " (the server sent no error text)"
                                                     : "");
        }
        json_decref(root);
        attempt_failed(p, &f);
}

/* A 2xx body with no event of a chat completion in it: say what it was (a
 * login page, a gzip body nobody declared, a proxy's text) and that the
 * URL may be wrong; trying again would get the same. */
static void not_a_stream(struct oai *p)
{
        char text[ERROR_TEXT_MAX * 4 + 1], why[sizeof(text) + 1024];
        const char *h = p->head + strspn(p->head, " \t\r\n");

        if (p->head_len >= 2 && (unsigned char)p->head[0] == 0x1f &&
            (unsigned char)p->head[1] == 0x8b) {
                snprintf(why, sizeof(why),
                         "the server answered HTTP %d with a gzip body it did not declare "
                         "(Content-Type %s, no Content-Encoding), not a chat completion",
                         p->status, p->ctype[0] ? p->ctype : "none");
        } else {
                excerpt(p, h, strcspn(h, "\n"), text, sizeof(text));
                snprintf(why, sizeof(why),
                         "the server answered HTTP %d with %s, not a chat completion (is %.512s "
                         "the right endpoint, see --base-url? a login page or a proxy answers "
                         "like this): %s",
                         p->status, h[0] == '<' ? "an HTML page" : "text that is no event stream",
                         p->url, text);
        }
        fail_plain(p, why, false);
}

/* The response ended cleanly with [DONE] seen, or without: whether what
 * came is a whole answer. */
static void stream_complete(struct oai *p)
{
        if (p->cut_event && !p->bad[0])
                fail_plain(p, "connection dropped mid-stream: the body ended inside an event",
                           true);
        else if (p->bad[0])
                attempt_failed(p, &p->bad_as);
        else if (p->kind == BODY_JSON && p->chunks)
                finish_message(p);
        else if (p->chunks && (p->done || chat_stream_finish_reason(p->stream) != NULL))
                finish_message(p);
        else if (p->chunks)
                fail_plain(p,
                           "the stream ended before the answer did (no finish_reason, no [DONE])",
                           true);
        else if (p->done)
                fail_plain(p, "the server sent [DONE] and no answer", true);
        else if (p->head_len > 0)
                not_a_stream(p);
        else
                fail_plain(p, "the server ended the stream without sending anything", true);
}

static void on_http_done(const struct http_result *r, void *ud)
{
        struct oai *p = ud;
        char why[512];

        p->req = NULL;
        if (p->done) { /* the answer is whole; how the connection ended does not matter */
                stream_complete(p);
                return;
        }
        if (p->status != 0 && (p->status < 200 || p->status > 299)) {
                http_failed(p);
                return;
        }
        if (!r->ok) {
                if (r->idle_timeout)
                        snprintf(why, sizeof(why), "stalled stream: %s", r->error);
                else if (p->status != 0)
                        snprintf(why, sizeof(why), "connection dropped mid-stream: %s", r->error);
                else if (r->sent)
                        snprintf(why, sizeof(why), "no answer from %s: %s", p->url, r->error);
                else
                        snprintf(why, sizeof(why), "cannot reach %s: %s%s", p->url, r->error,
                                 strstr(r->error, "certificate") != NULL && p->ca_file == NULL
                                     ? " (an endpoint with a private CA: --ca-cert FILE)"
                                     : "");
                fail_plain(p, why, r->transient);
                return;
        }
        /* A clean end: what is left of the stream, or the whole JSON answer. */
        if (!parse(p, p->raw, p->raw_len, true))
                return;
        stream_complete(p);
}

static int attempt_start(struct oai *p, char *err, size_t errlen)
{
        const char *headers[] = {"Content-Type: application/json", "Accept: text/event-stream",
                                 p->auth, NULL};
        const struct http_callbacks hcb = {on_http_response, on_http_data, on_http_done};
        struct http_post post = {
            .url = p->url,
            .headers = headers,
            .body = p->body,
            .body_len = strlen(p->body),
            .ca_file = p->ca_file,
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
        body = chat_request(p->model, messages, tools, !p->no_stream_options);
        p->body = body != NULL ? json_dumps(body, JSON_COMPACT) : NULL;
        json_decref(body);
        if (p->body == NULL)
                return -ENOMEM;
        p->cb = *cb;
        p->ud = ud;
        p->attempt = 0;
        p->shown_len = 0;
        p->loading_waited_ms = 0;
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
        free(p->shown);
        free(p->model);
        free(p->url);
        free(p->ca_file);
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

/* Whether the URL's host is this machine: a local server (llama.cpp,
 * vLLM, Ollama) often takes no key, and no key can leak to it. */
static bool loopback_url(const char *url)
{
        const char *h = strstr(url, "://");
        size_t n;

        if (h == NULL)
                return false;
        h += 3;
        if (strncmp(h, "[::1]", 5) == 0)
                return h[5] == '\0' || h[5] == ':' || h[5] == '/';
        n = strcspn(h, ":/?#");
        if (strchr(h, '@') != NULL && strchr(h, '@') < h + n)
                return false; /* userinfo: not a plain local address */
        if (n == 9 && strncasecmp(h, "localhost", 9) == 0)
                return true;
        return n >= 9 && strncmp(h, "127.", 4) == 0 && strspn(h, "0123456789.") == n;
}

/* The key, and the base URL that goes with it when none is configured.
 * No key is fine for a server on this machine: *key stays NULL. */
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
        *key = NULL;
        *base = cfg->base_url != NULL && cfg->base_url[0] ? cfg->base_url : dflt;
        if (k == NULL && loopback_url(*base))
                return 0;
        if (k == NULL) {
                snprintf(err, errlen,
                         "no API key: set PROCTOR_API_KEY (or OPENAI_API_KEY / HF_TOKEN); a "
                         "server on this machine (--base-url http://127.0.0.1:PORT/v1) needs none");
                return -ENOKEY;
        }
        n = provider_key_length(k);
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
        if (p->key != NULL && asprintf(&p->auth, "Authorization: Bearer %s", p->key) < 0)
                p->auth = NULL;
        uv_timer_init(loop, &p->timer);
        p->timer.data = p;
        if (p->model == NULL || p->http == NULL || p->url == NULL ||
            (p->key != NULL && p->auth == NULL)) {
                oai_destroy(p);
                snprintf(err, errlen, "out of memory");
                return -ENOMEM;
        }
        p->base.ops = &oai_ops;
        snprintf(p->base.label, sizeof(p->base.label), "openai:%s", model);
        p->retries = cfg->retries;
        p->no_stream_options = cfg->no_stream_options;
        if (cfg->ca_file != NULL && (p->ca_file = strdup(cfg->ca_file)) == NULL) {
                oai_destroy(p);
                snprintf(err, errlen, "out of memory");
                return -ENOMEM;
        }
        p->backoff_ms = cfg->backoff_ms ? cfg->backoff_ms : DEFAULT_BACKOFF;
        p->connect_ms = cfg->connect_timeout_ms ? cfg->connect_timeout_ms : DEFAULT_CONNECT;
        p->idle_ms = cfg->idle_timeout_ms ? cfg->idle_timeout_ms : DEFAULT_IDLE;
        p->loading_ms = cfg->loading_wait_ms ? cfg->loading_wait_ms : DEFAULT_LOADING;
        p->retry_after_ms = -1;
        *out = &p->base;
        return 0;
}
