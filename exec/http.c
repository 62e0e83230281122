/* http: streaming HTTP requests over libcurl's multi-socket interface, driven by the
 * caller's libuv loop: curl says which sockets to watch (uv_poll) and when to
 * wake it (one uv_timer); nothing blocks, no thread of ours, no perform loop.
 * libcurl is dlopen'ed on the first request so that proctor's startup never
 * maps it. Request headers carry the API key: they are never logged, never
 * copied into error text, and scrubbed from memory when a request ends.
 *
 * libcurl's callbacks only buffer what arrives; the caller's callbacks run
 * afterwards, from the loop (see dispatch), so a caller may cancel, start a
 * request or free the client from any of them.
 *
 * The one exception is http_raw_send (at the end): a connection of its own
 * driven by libcurl's blocking easy calls, on a thread of its own. */
#include "exec/http.h"

#include <ctype.h>
#include <dlfcn.h>
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <poll.h>
#include <stdatomic.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>

#include <curl/curl.h>

#ifndef container_of
#define container_of(ptr, type, member) ((type *)((char *)(ptr)-offsetof(type, member)))
#endif

#ifndef PROCTOR_VERSION
#define PROCTOR_VERSION "dev"
#endif

/* The libcurl functions proctor calls, resolved from the loaded library. */
#define CURL_FUNCS(X)                                                                              \
        X(global_init, curl_global_init)                                                           \
        X(easy_init, curl_easy_init)                                                               \
        X(easy_setopt, curl_easy_setopt)                                                           \
        X(easy_getinfo, curl_easy_getinfo)                                                         \
        X(easy_cleanup, curl_easy_cleanup)                                                         \
        X(easy_strerror, curl_easy_strerror)                                                       \
        X(easy_perform, curl_easy_perform)                                                         \
        X(easy_send, curl_easy_send)                                                               \
        X(easy_recv, curl_easy_recv)                                                               \
        X(multi_init, curl_multi_init)                                                             \
        X(multi_setopt, curl_multi_setopt)                                                         \
        X(multi_add_handle, curl_multi_add_handle)                                                 \
        X(multi_remove_handle, curl_multi_remove_handle)                                           \
        X(multi_socket_action, curl_multi_socket_action)                                           \
        X(multi_assign, curl_multi_assign)                                                         \
        X(multi_info_read, curl_multi_info_read)                                                   \
        X(multi_cleanup, curl_multi_cleanup)                                                       \
        X(slist_append, curl_slist_append)                                                         \
        X(slist_free_all, curl_slist_free_all)

static struct {
#define X(field, sym) __typeof__(sym) *field;
        CURL_FUNCS(X)
#undef X
        void *dl;
} lib;

struct http_sock {
        uv_poll_t poll;
        curl_socket_t fd;
        struct http_client *c;
        struct http_sock *next;
};

struct http_client {
        uv_loop_t *loop;
        CURLM *multi; /* NULL until the first request */
        uv_timer_t timer;
        struct http_request *reqs; /* in flight, oldest first */
        struct http_sock *socks;
        unsigned open_handles; /* the timer and the sockets' polls not yet closed */
        bool closing;
};

struct http_request {
        struct http_client *c;
        struct http_request *next;
        CURL *easy;
        struct curl_slist *headers;
        char *body;
        uv_timer_t idle;
        uint32_t idle_ms;
        struct http_callbacks cb;
        void *ud;

        /* What libcurl handed over, waiting for dispatch. */
        bool have_response, response_sent;
        struct http_response resp;
        bool retry_after_ms_given; /* retry-after-ms wins over Retry-After */
        char content_type[128], reason[64], location[512];
        char *buf;
        size_t len, cap;
        bool finished, timed_out, oom;
        CURLcode code;

        bool dead; /* cancelled or done: waiting for the idle timer to close */
        char errbuf[CURL_ERROR_SIZE];
        char msg[CURL_ERROR_SIZE + 64];
};

static int curl_load(char *err, size_t errlen)
{
        const char *name = getenv("PROCTOR_LIBCURL");
        void *dl;

        if (lib.dl != NULL)
                return 0;
        if (name == NULL || name[0] == '\0')
                name = "libcurl.so.4";
        dl = dlopen(name, RTLD_NOW | RTLD_LOCAL);
        if (dl == NULL) {
                snprintf(err, errlen,
                         "cannot load libcurl (%s): %s; install libcurl 7.66 or later "
                         "(Debian/Ubuntu: libcurl4) to use openai: models or --runtime docker",
                         name, dlerror());
                return -ELIBACC;
        }
#define X(field, sym)                                                                              \
        do {                                                                                       \
                void *p = dlsym(dl, #sym);                                                         \
                if (p == NULL) {                                                                   \
                        snprintf(err, errlen, "libcurl (%s) lacks %s", name, #sym);                \
                        dlclose(dl);                                                               \
                        return -ELIBACC;                                                           \
                }                                                                                  \
                memcpy(&lib.field, &p, sizeof(p));                                                 \
        } while (0);
        CURL_FUNCS(X)
#undef X
        if (lib.global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK) {
                snprintf(err, errlen, "libcurl (%s) failed to initialise", name);
                dlclose(dl);
                return -ELIBACC;
        }
        lib.dl = dl;
        return 0;
}

/* Retry-After is either delay-seconds or an HTTP-date (RFC 9110 10.2.3);
 * parsed by hand because strptime's day and month names follow the locale. */
static int64_t parse_retry_after(const char *v, size_t n)
{
        static const char months[] = "JanFebMarAprMayJunJulAugSepOctNovDec";
        char s[64], mon[4];
        struct tm tm = {0};
        const char *m;
        size_t i = 0;
        time_t at, now;

        while (n > 0 && isspace((unsigned char)v[n - 1]))
                n--;
        while (i < n && isspace((unsigned char)v[i]))
                i++;
        if (n - i == 0 || n - i >= sizeof(s))
                return -1;
        memcpy(s, v + i, n - i);
        s[n - i] = '\0';
        if (strspn(s, "0123456789") == strlen(s)) {
                unsigned long long sec = strtoull(s, NULL, 10);
                return sec > 86400 ? 86400000 : (int64_t)sec * 1000;
        }
        if (sscanf(s, "%*3s, %d %3s %d %d:%d:%d", &tm.tm_mday, mon, &tm.tm_year, &tm.tm_hour,
                   &tm.tm_min, &tm.tm_sec) != 6 ||
            strlen(mon) != 3 || (m = strstr(months, mon)) == NULL || (m - months) % 3 != 0)
                return -1;
        tm.tm_mon = (int)(m - months) / 3;
        tm.tm_year -= 1900;
        at = timegm(&tm);
        now = time(NULL);
        if (at == (time_t)-1)
                return -1;
        return at <= now ? 0 : (int64_t)(at - now) * 1000;
}

/* retry-after-ms: a number of milliseconds, fractions allowed. */
static int64_t parse_retry_after_ms(const char *v, size_t n)
{
        char s[32], *end;
        double ms;

        while (n > 0 && isspace((unsigned char)*v))
                v++, n--;
        if (n == 0 || n >= sizeof(s))
                return -1;
        memcpy(s, v, n);
        s[n] = '\0';
        ms = strtod(s, &end);
        while (isspace((unsigned char)*end))
                end++;
        if (end == s || *end != '\0' || !(ms >= 0))
                return -1;
        return ms > 86400000.0 ? 86400000 : (int64_t)ms;
}

/* The value of header line p (len bytes) when it is `name`, trimmed. */
static bool header_value(const char *p, size_t len, const char *name, char *out, size_t outlen)
{
        size_t nl = strlen(name);

        if (len <= nl || strncasecmp(p, name, nl) != 0 || p[nl] != ':')
                return false;
        p += nl + 1;
        len -= nl + 1;
        while (len > 0 && isspace((unsigned char)*p))
                p++, len--;
        while (len > 0 && isspace((unsigned char)p[len - 1]))
                len--;
        snprintf(out, outlen, "%.*s", (int)len, p);
        return true;
}

/* "HTTP/1.1 503 Service Unavailable": its reason phrase. A new status
 * line starts a new header block (after a 1xx): nothing of the last one
 * carries over. */
static void status_line(struct http_request *r, const char *p, size_t len)
{
        size_t i = 0, spaces = 0;

        r->reason[0] = '\0';
        r->location[0] = '\0';
        while (i < len && spaces < 2)
                spaces += p[i++] == ' ';
        while (len > i && isspace((unsigned char)p[len - 1]))
                len--;
        if (spaces == 2)
                snprintf(r->reason, sizeof(r->reason), "%.*s", (int)(len - i), p + i);
}

static void idle_reset(struct http_request *r);

static size_t on_curl_header(char *p, size_t size, size_t n, void *ud)
{
        struct http_request *r = ud;
        size_t len = size * n;
        long status = 0;
        char *ct = NULL, v[64];

        idle_reset(r);
        if (r->have_response) /* trailers */
                return len;
        if (len > 5 && strncmp(p, "HTTP/", 5) == 0) {
                status_line(r, p, len);
                return len;
        }
        if (header_value(p, len, "retry-after-ms", v, sizeof(v))) {
                r->resp.retry_after_ms = parse_retry_after_ms(v, strlen(v));
                r->retry_after_ms_given = r->resp.retry_after_ms >= 0;
                return len;
        }
        if (len >= 12 && strncasecmp(p, "retry-after:", 12) == 0) {
                if (!r->retry_after_ms_given)
                        r->resp.retry_after_ms = parse_retry_after(p + 12, len - 12);
                return len;
        }
        if (header_value(p, len, "location", r->location, sizeof(r->location)))
                return len;
        if (len > 2 || (p[0] != '\r' && p[0] != '\n'))
                return len;
        /* A blank line ends a header block; 1xx blocks are interim. */
        lib.easy_getinfo(r->easy, CURLINFO_RESPONSE_CODE, &status);
        if (status < 200) {
                r->resp.retry_after_ms = -1;
                r->retry_after_ms_given = false;
                return len;
        }
        r->resp.status = (int)status;
        if (lib.easy_getinfo(r->easy, CURLINFO_CONTENT_TYPE, &ct) == CURLE_OK && ct != NULL)
                snprintf(r->content_type, sizeof(r->content_type), "%s", ct);
        r->resp.content_type = r->content_type;
        r->have_response = true;
        return len;
}

static size_t on_curl_body(char *p, size_t size, size_t n, void *ud)
{
        struct http_request *r = ud;
        size_t len = size * n;

        idle_reset(r);
        if (r->len + len > r->cap) {
                size_t cap = r->cap ? r->cap * 2 : 16384;
                char *nb;

                while (cap < r->len + len)
                        cap *= 2;
                nb = realloc(r->buf, cap);
                if (nb == NULL) {
                        r->oom = true;
                        return 0; /* libcurl ends the transfer with a write error */
                }
                r->buf = nb;
                r->cap = cap;
        }
        memcpy(r->buf + r->len, p, len);
        r->len += len;
        return len;
}

static void request_closed(uv_handle_t *h)
{
        struct http_request *r = h->data;

        free(r->body);
        free(r->buf);
        free(r);
}

static void scrub_headers(struct curl_slist *l)
{
        for (; l != NULL; l = l->next)
                explicit_bzero(l->data, strlen(l->data));
}

/* Detaches the request from libcurl and the client; its memory goes when
 * the idle timer has closed, so a result it holds stays readable until the
 * current callback returns. Removing the handle closes a live connection. */
static void request_release(struct http_request *r)
{
        struct http_request **pp;

        if (r->dead)
                return;
        r->dead = true;
        for (pp = &r->c->reqs; *pp != NULL; pp = &(*pp)->next) {
                if (*pp == r) {
                        *pp = r->next;
                        break;
                }
        }
        if (r->easy != NULL) {
                if (r->c->multi != NULL)
                        lib.multi_remove_handle(r->c->multi, r->easy);
                lib.easy_cleanup(r->easy);
                r->easy = NULL;
        }
        if (r->headers != NULL) {
                scrub_headers(r->headers);
                lib.slist_free_all(r->headers);
                r->headers = NULL;
        }
        uv_close((uv_handle_t *)&r->idle, request_closed);
}

/* Whether trying again may help after a transport failure. */
static bool curl_transient(CURLcode code)
{
        switch (code) {
        case CURLE_UNSUPPORTED_PROTOCOL:
        case CURLE_URL_MALFORMAT:
        case CURLE_NOT_BUILT_IN:
        case CURLE_OUT_OF_MEMORY:
        case CURLE_BAD_FUNCTION_ARGUMENT:
        case CURLE_UNKNOWN_OPTION:
        case CURLE_WRITE_ERROR:
        case CURLE_PEER_FAILED_VERIFICATION:
        case CURLE_SSL_CERTPROBLEM:
        case CURLE_SSL_CIPHER:
        case CURLE_SSL_CACERT_BADFILE:
        case CURLE_SSL_ISSUER_ERROR:
        case CURLE_SSL_PINNEDPUBKEYNOTMATCH:
        case CURLE_SSL_CRL_BADFILE:
        case CURLE_SSL_ENGINE_NOTFOUND:
        case CURLE_TOO_MANY_REDIRECTS:
                return false;
        default:
                return true;
        }
}

/* libcurl's words, except where they name its own machinery instead of
 * what the server did: a reset connection shows as a failed poll. */
static void transport_error(struct http_request *r)
{
        const char *e = r->errbuf[0] ? r->errbuf : lib.easy_strerror(r->code);

        if (strstr(e, "select/poll") != NULL || strstr(e, "Connection reset") != NULL)
                snprintf(r->msg, sizeof(r->msg), "connection reset by the server");
        else if (r->code == CURLE_GOT_NOTHING)
                snprintf(r->msg, sizeof(r->msg), "the server closed the connection unanswered");
        else
                snprintf(r->msg, sizeof(r->msg), "%s", e);
}

static void request_finish(struct http_request *r)
{
        struct http_callbacks cb = r->cb;
        struct http_result res = {.status = r->resp.status, .error = r->msg};
        void *ud = r->ud;
        long sent = 0;

        if (r->easy != NULL && lib.easy_getinfo(r->easy, CURLINFO_REQUEST_SIZE, &sent) == CURLE_OK)
                res.sent = sent > 0;
        if (r->timed_out) {
                snprintf(r->msg, sizeof(r->msg), "no data from the server for %u ms", r->idle_ms);
                res.transient = res.idle_timeout = true;
        } else if (r->oom) {
                snprintf(r->msg, sizeof(r->msg), "out of memory");
        } else if (r->code != CURLE_OK) {
                transport_error(r);
                res.transient = curl_transient(r->code);
        } else {
                r->msg[0] = '\0';
                res.ok = true;
        }
        request_release(r);
        if (cb.on_done != NULL)
                cb.on_done(&res, ud);
}

/* Hands one buffered event of r to its owner; true when a callback ran
 * (which may have changed any request, or closed the client). */
static bool deliver(struct http_request *r)
{
        if (r->have_response && !r->response_sent) {
                r->response_sent = true;
                if (r->cb.on_response != NULL)
                        r->cb.on_response(&r->resp, r->ud);
                return true;
        }
        if (r->len > 0) {
                size_t n = r->len;

                r->len = 0; /* libcurl cannot append while the callback runs */
                if (r->cb.on_data != NULL)
                        r->cb.on_data(r->buf, n, r->ud);
                return true;
        }
        if (r->finished) {
                request_finish(r);
                return true;
        }
        return false;
}

static void dispatch(struct http_client *c)
{
        struct http_request *r;
        CURLMsg *m;
        int left;

        while (!c->closing && (m = lib.multi_info_read(c->multi, &left)) != NULL) {
                char *priv = NULL;

                if (m->msg != CURLMSG_DONE)
                        continue;
                lib.easy_getinfo(m->easy_handle, CURLINFO_PRIVATE, &priv);
                r = (struct http_request *)priv;
                r->finished = true;
                r->code = m->data.result;
        }
        /* Restart after every callback: it may have unlinked any request. */
again:
        for (r = c->reqs; r != NULL && !c->closing; r = r->next)
                if (deliver(r))
                        goto again;
}

static void drive(struct http_client *c, curl_socket_t fd, int flags)
{
        int running;

        if (c->closing || c->multi == NULL)
                return;
        lib.multi_socket_action(c->multi, fd, flags, &running);
        dispatch(c);
}

static void on_idle(uv_timer_t *t)
{
        struct http_request *r = t->data;

        r->timed_out = r->finished = true;
        dispatch(r->c);
}

static void idle_reset(struct http_request *r)
{
        if (r->idle_ms > 0 && !r->dead)
                uv_timer_start(&r->idle, on_idle, r->idle_ms, 0);
}

static void client_handle_closed(uv_handle_t *h)
{
        struct http_client *c = h->data;

        if (h != (uv_handle_t *)&c->timer)
                free(container_of(h, struct http_sock, poll));
        if (--c->open_handles == 0 && c->closing)
                free(c);
}

static void sock_close(struct http_client *c, struct http_sock *s)
{
        struct http_sock **pp;

        for (pp = &c->socks; *pp != NULL; pp = &(*pp)->next) {
                if (*pp == s) {
                        *pp = s->next;
                        break;
                }
        }
        uv_close((uv_handle_t *)&s->poll, client_handle_closed);
}

static void on_poll(uv_poll_t *h, int status, int events)
{
        struct http_sock *s = container_of(h, struct http_sock, poll);
        int flags = 0;

        if (status < 0)
                flags = CURL_CSELECT_ERR;
        if (events & UV_READABLE)
                flags |= CURL_CSELECT_IN;
        if (events & UV_WRITABLE)
                flags |= CURL_CSELECT_OUT;
        drive(s->c, s->fd, flags);
}

static int on_curl_socket(CURL *e, curl_socket_t fd, int what, void *userp, void *socketp)
{
        struct http_client *c = userp;
        struct http_sock *s = socketp;
        int events = 0;

        if (c->closing)
                return 0;
        if (what == CURL_POLL_REMOVE) {
                if (s != NULL) {
                        lib.multi_assign(c->multi, fd, NULL);
                        sock_close(c, s);
                }
                return 0;
        }
        if (s == NULL) {
                s = calloc(1, sizeof(*s));
                if (s == NULL)
                        return -1;
                if (uv_poll_init_socket(c->loop, &s->poll, fd) != 0) {
                        free(s);
                        return -1;
                }
                s->poll.data = c;
                s->fd = fd;
                s->c = c;
                s->next = c->socks;
                c->socks = s;
                c->open_handles++;
                lib.multi_assign(c->multi, fd, s);
        }
        if (what & CURL_POLL_IN)
                events |= UV_READABLE;
        if (what & CURL_POLL_OUT)
                events |= UV_WRITABLE;
        if (events == 0)
                uv_poll_stop(&s->poll);
        else
                uv_poll_start(&s->poll, events, on_poll);
        return 0;
}

static void on_curl_timer(uv_timer_t *t)
{
        drive(t->data, CURL_SOCKET_TIMEOUT, 0);
}

/* libcurl asks to be woken after timeout_ms (-1: never). Even 0 goes
 * through the loop: acting inside this callback would re-enter libcurl. */
static int on_curl_timer_set(CURLM *m, long timeout_ms, void *userp)
{
        struct http_client *c = userp;

        if (c->closing)
                return 0;
        if (timeout_ms < 0)
                uv_timer_stop(&c->timer);
        else
                uv_timer_start(&c->timer, on_curl_timer, (uint64_t)timeout_ms, 0);
        return 0;
}

struct http_client *http_client_new(uv_loop_t *loop)
{
        struct http_client *c = calloc(1, sizeof(*c));

        if (c == NULL)
                return NULL;
        c->loop = loop;
        uv_timer_init(loop, &c->timer);
        c->timer.data = c;
        c->open_handles = 1;
        return c;
}

void http_client_free(struct http_client *c)
{
        if (c == NULL || c->closing)
                return;
        while (c->reqs != NULL)
                request_release(c->reqs);
        c->closing = true; /* from here on libcurl's callbacks are ignored */
        while (c->socks != NULL)
                sock_close(c, c->socks);
        if (c->multi != NULL)
                lib.multi_cleanup(c->multi);
        c->multi = NULL;
        uv_close((uv_handle_t *)&c->timer, client_handle_closed);
}

static int client_start(struct http_client *c, char *err, size_t errlen)
{
        int rc;

        if (c->multi != NULL)
                return 0;
        rc = curl_load(err, errlen);
        if (rc < 0)
                return rc;
        c->multi = lib.multi_init();
        if (c->multi == NULL) {
                snprintf(err, errlen, "libcurl: cannot create a multi handle");
                return -ENOMEM;
        }
        lib.multi_setopt(c->multi, CURLMOPT_SOCKETFUNCTION, on_curl_socket);
        lib.multi_setopt(c->multi, CURLMOPT_SOCKETDATA, c);
        lib.multi_setopt(c->multi, CURLMOPT_TIMERFUNCTION, on_curl_timer_set);
        lib.multi_setopt(c->multi, CURLMOPT_TIMERDATA, c);
        return 0;
}

/* The TLS client certificate, its key and the CA to verify with, those
 * given; nonzero when one could not be set. */
static int tls_files(CURL *e, const char *cert, const char *key, const char *ca)
{
        int bad = 0;

        if (cert != NULL)
                bad |= lib.easy_setopt(e, CURLOPT_SSLCERT, cert) != CURLE_OK;
        if (key != NULL)
                bad |= lib.easy_setopt(e, CURLOPT_SSLKEY, key) != CURLE_OK;
        if (ca != NULL)
                bad |= lib.easy_setopt(e, CURLOPT_CAINFO, ca) != CURLE_OK;
        return bad;
}

static int request_setup(struct http_request *r, const struct http_post *post)
{
        CURL *e;
        size_t i;
        int bad = 0;

        const char *method = post->method != NULL ? post->method : "POST";

        r->body = malloc(post->body_len + 1);
        if (r->body == NULL)
                return -ENOMEM;
        if (post->body_len > 0)
                memcpy(r->body, post->body, post->body_len);
        r->body[post->body_len] = '\0';
        for (i = 0; post->headers != NULL && post->headers[i] != NULL; i++) {
                struct curl_slist *l = lib.slist_append(r->headers, post->headers[i]);
                if (l == NULL)
                        return -ENOMEM;
                r->headers = l;
        }
        /* No "Expect: 100-continue" round trip before large bodies. */
        struct curl_slist *l = lib.slist_append(r->headers, "Expect:");
        if (l == NULL)
                return -ENOMEM;
        r->headers = l;

        r->easy = e = lib.easy_init();
        if (e == NULL)
                return -ENOMEM;
        bad |= lib.easy_setopt(e, CURLOPT_URL, post->url) != CURLE_OK;
        if (strcmp(method, "GET") == 0) {
                bad |= lib.easy_setopt(e, CURLOPT_HTTPGET, 1L) != CURLE_OK;
        } else {
                bad |= lib.easy_setopt(e, CURLOPT_POST, 1L) != CURLE_OK;
                bad |= lib.easy_setopt(e, CURLOPT_POSTFIELDSIZE_LARGE,
                                       (curl_off_t)post->body_len) != CURLE_OK;
                bad |= lib.easy_setopt(e, CURLOPT_POSTFIELDS, r->body) != CURLE_OK;
                if (strcmp(method, "POST") != 0)
                        bad |= lib.easy_setopt(e, CURLOPT_CUSTOMREQUEST, method) != CURLE_OK;
        }
        if (post->unix_socket != NULL)
                bad |= lib.easy_setopt(e, CURLOPT_UNIX_SOCKET_PATH, post->unix_socket) != CURLE_OK;
        bad |= tls_files(e, post->cert_file, post->key_file, post->ca_file);
        bad |= lib.easy_setopt(e, CURLOPT_HTTPHEADER, r->headers) != CURLE_OK;
        bad |= lib.easy_setopt(e, CURLOPT_WRITEFUNCTION, on_curl_body) != CURLE_OK;
        bad |= lib.easy_setopt(e, CURLOPT_WRITEDATA, r) != CURLE_OK;
        bad |= lib.easy_setopt(e, CURLOPT_HEADERFUNCTION, on_curl_header) != CURLE_OK;
        bad |= lib.easy_setopt(e, CURLOPT_HEADERDATA, r) != CURLE_OK;
        bad |= lib.easy_setopt(e, CURLOPT_PRIVATE, (char *)r) != CURLE_OK;
        bad |= lib.easy_setopt(e, CURLOPT_ERRORBUFFER, r->errbuf) != CURLE_OK;
        bad |= lib.easy_setopt(e, CURLOPT_NOSIGNAL, 1L) != CURLE_OK;
        if (bad)
                return -ENOMEM;
        if (post->connect_timeout_ms > 0)
                lib.easy_setopt(e, CURLOPT_CONNECTTIMEOUT_MS, (long)post->connect_timeout_ms);
        lib.easy_setopt(e, CURLOPT_USERAGENT, "proctor/" PROCTOR_VERSION);
        lib.easy_setopt(e, CURLOPT_FOLLOWLOCATION, 0L);
        lib.easy_setopt(e, CURLOPT_TCP_KEEPALIVE, 1L);
        lib.easy_setopt(e, CURLOPT_SUPPRESS_CONNECT_HEADERS, 1L);
        lib.easy_setopt(e, CURLOPT_PROTOCOLS_STR, "http,https"); /* unknown before 7.85 */
        return 0;
}

int http_post_stream(struct http_client *c, const struct http_post *post,
                     const struct http_callbacks *cb, void *ud, struct http_request **out,
                     char *err, size_t errlen)
{
        struct http_request *r, **tail;
        int rc;

        if (out != NULL)
                *out = NULL;
        if (c->closing)
                return -EINVAL;
        rc = client_start(c, err, errlen);
        if (rc < 0)
                return rc;
        r = calloc(1, sizeof(*r));
        if (r == NULL) {
                snprintf(err, errlen, "out of memory");
                return -ENOMEM;
        }
        r->c = c;
        r->cb = *cb;
        r->ud = ud;
        r->idle_ms = post->idle_timeout_ms;
        r->resp.retry_after_ms = -1;
        r->resp.content_type = r->content_type;
        r->resp.reason = r->reason;
        r->resp.location = r->location;
        uv_timer_init(c->loop, &r->idle);
        r->idle.data = r;
        rc = request_setup(r, post);
        if (rc == 0 && lib.multi_add_handle(c->multi, r->easy) != CURLM_OK)
                rc = -ENOMEM;
        if (rc < 0) {
                snprintf(err, errlen, "cannot set up the HTTP request");
                request_release(r);
                return rc;
        }
        for (tail = &c->reqs; *tail != NULL; tail = &(*tail)->next)
                ;
        *tail = r;
        idle_reset(r);
        if (out != NULL)
                *out = r;
        return 0;
}

void http_cancel(struct http_request *r)
{
        if (r != NULL)
                request_release(r);
}

/* ---- raw sends on an upgraded connection ---- */

struct http_raw_job {
        uv_thread_t thread;
        uv_async_t async; /* the thread's end, told to the loop */
        atomic_bool abandoned;
        int src_fd;
        http_raw_done done;
        void *ud;
        char *url, *head, *data, *cert, *key, *ca;
        size_t data_len;
        uint32_t step_ms;
        /* the outcome, written by the worker, read after it */
        int status;
        char body[512];
        size_t body_len;
        char err[CURL_ERROR_SIZE + 64];
};

static uint64_t raw_now_ms(void)
{
        return uv_hrtime() / 1000000u; /* monotonic, and safe off the loop's thread */
}

/* Waits for the connection to be ready for `events`, in slices that look
 * at the abandon flag; false when abandoned or past the step's bound. */
static bool raw_wait(struct http_raw_job *j, CURL *e, short events, uint64_t until)
{
        curl_socket_t fd = CURL_SOCKET_BAD;

        if (lib.easy_getinfo(e, CURLINFO_ACTIVESOCKET, &fd) != CURLE_OK || fd == CURL_SOCKET_BAD) {
                snprintf(j->err, sizeof(j->err), "the connection is gone");
                return false;
        }
        while (!atomic_load(&j->abandoned)) {
                struct pollfd p = {.fd = fd, .events = events};
                uint64_t now = raw_now_ms();
                if (now >= until) {
                        snprintf(j->err, sizeof(j->err), "no progress for %u ms", j->step_ms);
                        return false;
                }
                int n = poll(&p, 1, (int)(until - now < 100 ? until - now : 100));
                if (n > 0)
                        return true;
                if (n < 0 && errno != EINTR) {
                        snprintf(j->err, sizeof(j->err), "poll: %s", strerror(errno));
                        return false;
                }
        }
        snprintf(j->err, sizeof(j->err), "abandoned");
        return false;
}

static bool raw_send_all(struct http_raw_job *j, CURL *e, const char *p, size_t n)
{
        uint64_t until = raw_now_ms() + j->step_ms;

        while (n > 0) {
                size_t sent = 0;
                CURLcode rc = lib.easy_send(e, p, n, &sent);
                if (rc == CURLE_AGAIN) {
                        if (!raw_wait(j, e, POLLOUT, until))
                                return false;
                        continue;
                }
                if (rc != CURLE_OK) {
                        snprintf(j->err, sizeof(j->err), "send: %s", lib.easy_strerror(rc));
                        return false;
                }
                p += sent;
                n -= sent;
                until = raw_now_ms() + j->step_ms; /* bytes moved: a new step */
        }
        return true;
}

/* Reads the answer's head; the bytes after it (an error's body) go to
 * j->body. */
static bool raw_read_head(struct http_raw_job *j, CURL *e)
{
        char buf[4096];
        size_t len = 0;
        uint64_t until = raw_now_ms() + j->step_ms;
        char *end;

        for (;;) {
                size_t got = 0;
                CURLcode rc = lib.easy_recv(e, buf + len, sizeof(buf) - 1 - len, &got);
                if (rc == CURLE_AGAIN) {
                        if (!raw_wait(j, e, POLLIN, until))
                                return false;
                        continue;
                }
                if (rc != CURLE_OK || got == 0) {
                        snprintf(j->err, sizeof(j->err), "the answer: %s",
                                 rc != CURLE_OK ? lib.easy_strerror(rc)
                                                : "the connection closed before it");
                        return false;
                }
                len += got;
                buf[len] = '\0';
                if ((end = strstr(buf, "\r\n\r\n")) != NULL)
                        break;
                if (len == sizeof(buf) - 1) {
                        snprintf(j->err, sizeof(j->err), "the answer's head is too long");
                        return false;
                }
        }
        if (sscanf(buf, "HTTP/1.%*d %d", &j->status) != 1) {
                snprintf(j->err, sizeof(j->err), "not an HTTP answer");
                return false;
        }
        j->body_len = len - (size_t)(end + 4 - buf);
        if (j->body_len > sizeof(j->body))
                j->body_len = sizeof(j->body);
        memcpy(j->body, end + 4, j->body_len);
        return true;
}

/* What src_fd brings, until its end (the owner closed its side). */
static bool raw_copy(struct http_raw_job *j, CURL *e)
{
        char buf[16384];

        while (j->src_fd >= 0 && !atomic_load(&j->abandoned)) {
                struct pollfd p = {.fd = j->src_fd, .events = POLLIN};
                int n = poll(&p, 1, 1000); /* a look at the abandon flag each second */
                if (n < 0 && errno != EINTR) {
                        snprintf(j->err, sizeof(j->err), "poll: %s", strerror(errno));
                        return false;
                }
                if (n <= 0)
                        continue;
                ssize_t got = read(j->src_fd, buf, sizeof(buf));
                if (got == 0)
                        return true;
                if (got < 0) {
                        if (errno == EINTR || errno == EAGAIN)
                                continue;
                        snprintf(j->err, sizeof(j->err), "read: %s", strerror(errno));
                        return false;
                }
                if (!raw_send_all(j, e, buf, (size_t)got))
                        return false;
        }
        return true;
}

static void raw_work(struct http_raw_job *j)
{
        char errbuf[CURL_ERROR_SIZE] = "";
        CURL *e = lib.easy_init();
        CURLcode rc;
        int bad = 0;

        if (e == NULL) {
                snprintf(j->err, sizeof(j->err), "out of memory");
                return;
        }
        bad |= lib.easy_setopt(e, CURLOPT_URL, j->url) != CURLE_OK;
        bad |= lib.easy_setopt(e, CURLOPT_CONNECT_ONLY, 1L) != CURLE_OK;
        bad |= lib.easy_setopt(e, CURLOPT_NOSIGNAL, 1L) != CURLE_OK;
        bad |= lib.easy_setopt(e, CURLOPT_ERRORBUFFER, errbuf) != CURLE_OK;
        bad |= lib.easy_setopt(e, CURLOPT_CONNECTTIMEOUT_MS, (long)j->step_ms) != CURLE_OK;
        bad |= tls_files(e, j->cert, j->key, j->ca);
        if (bad) {
                snprintf(j->err, sizeof(j->err), "cannot set up the connection");
        } else if ((rc = lib.easy_perform(e)) != CURLE_OK) {
                /* the connection and its TLS handshake */
                snprintf(j->err, sizeof(j->err), "%s",
                         errbuf[0] != '\0' ? errbuf : lib.easy_strerror(rc));
        } else if (raw_send_all(j, e, j->head, strlen(j->head)) && raw_read_head(j, e) &&
                   (j->status == 101 || j->status == 200)) {
                if (raw_send_all(j, e, j->data, j->data_len) && raw_copy(j, e))
                        j->err[0] = '\0';
        } else if (j->err[0] == '\0') {
                snprintf(j->err, sizeof(j->err), "the server answered %d", j->status);
        }
        /* Closing sends TLS's close_notify, then FIN: the end of the stream. */
        lib.easy_cleanup(e);
}

static void raw_job_free(struct http_raw_job *j)
{
        if (j->src_fd >= 0)
                close(j->src_fd);
        free(j->url);
        free(j->head);
        free(j->data);
        free(j->cert);
        free(j->key);
        free(j->ca);
        free(j);
}

static void raw_thread(void *arg)
{
        struct http_raw_job *j = arg;

        raw_work(j);
        uv_async_send(&j->async);
}

static void raw_closed(uv_handle_t *h)
{
        raw_job_free(container_of((uv_async_t *)h, struct http_raw_job, async));
}

static void raw_ended(uv_async_t *a)
{
        struct http_raw_job *j = container_of(a, struct http_raw_job, async);

        uv_thread_join(&j->thread);
        if (!atomic_load(&j->abandoned))
                j->done(j->status, j->body, j->body_len, j->err[0] != '\0' ? j->err : NULL, j->ud);
        uv_close((uv_handle_t *)a, raw_closed);
}

static char *dup_or_null(const char *s, bool *oom)
{
        char *d;

        if (s == NULL)
                return NULL;
        if ((d = strdup(s)) == NULL)
                *oom = true;
        return d;
}

int http_raw_send(uv_loop_t *loop, const struct http_raw_send *s, http_raw_done done, void *ud,
                  struct http_raw_job **out, char *err, size_t errlen)
{
        struct http_raw_job *j;
        bool oom = false;
        int rc;

        *out = NULL;
        rc =
            curl_load(err, errlen); /* here, on the loop's thread: global init is not thread-safe */
        j = rc == 0 ? calloc(1, sizeof(*j)) : NULL;
        if (j == NULL) {
                if (s->src_fd >= 0)
                        close(s->src_fd);
                if (rc == 0)
                        snprintf(err, errlen, "out of memory");
                return rc < 0 ? rc : -ENOMEM;
        }
        atomic_init(&j->abandoned, false);
        j->src_fd = s->src_fd; /* the job's, even if it fails here */
        j->done = done;
        j->ud = ud;
        j->step_ms = s->step_timeout_ms > 0 ? s->step_timeout_ms : 30000;
        j->url = dup_or_null(s->url, &oom);
        j->head = dup_or_null(s->head, &oom);
        j->cert = dup_or_null(s->cert_file, &oom);
        j->key = dup_or_null(s->key_file, &oom);
        j->ca = dup_or_null(s->ca_file, &oom);
        j->data_len = s->data_len;
        if ((j->data = malloc(s->data_len + 1)) == NULL)
                oom = true;
        else if (s->data_len > 0)
                memcpy(j->data, s->data, s->data_len);
        if (oom || j->url == NULL || j->head == NULL) {
                raw_job_free(j);
                snprintf(err, errlen, "out of memory");
                return -ENOMEM;
        }
        if ((rc = uv_async_init(loop, &j->async, raw_ended)) != 0) {
                raw_job_free(j);
                snprintf(err, errlen, "cannot set up the send: %s", uv_strerror(rc));
                return rc;
        }
        /* Its own thread, not the loop's pool: a kept stream may hold it
         * for the whole session. */
        if ((rc = uv_thread_create(&j->thread, raw_thread, j)) != 0) {
                snprintf(err, errlen, "cannot start the send's thread: %s", uv_strerror(rc));
                uv_close((uv_handle_t *)&j->async, raw_closed);
                return rc;
        }
        *out = j;
        return 0;
}

void http_raw_abandon(struct http_raw_job *j)
{
        if (j != NULL)
                atomic_store(&j->abandoned, true);
}
