/* http: streaming HTTP requests on the caller's libuv loop, over libcurl's
 * multi-socket interface (uv_poll per socket, one uv_timer). libcurl is
 * loaded with dlopen on the first request, never at startup, and request
 * headers (they carry credentials) are never logged nor put in error text. */
#ifndef PROCTOR_HTTP_H
#define PROCTOR_HTTP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <uv.h>

struct http_client;
struct http_request;

struct http_post {
        const char *url;
        const char *const *headers; /* "Name: value", NULL-terminated; may hold secrets */
        const char *body;           /* copied; may be NULL with body_len 0 */
        size_t body_len;
        const char *method; /* "GET", "POST" or "DELETE"; NULL: POST */
        /* Connect to this unix socket instead of the URL's host (whose
         * name then only fills the Host header); NULL: TCP. */
        const char *unix_socket;
        /* TLS client certificate and key, and the CA to verify the server
         * with (PEM files); NULL: none, and the system's CAs. */
        const char *cert_file, *key_file, *ca_file;
        uint32_t connect_timeout_ms; /* 0: libcurl's default */
        uint32_t idle_timeout_ms;    /* abort when no byte arrives for this long; 0: never */
};

/* The response's status line and headers, once they are complete. */
struct http_response {
        int status;
        /* retry-after-ms (as OpenAI and Azure send it), else Retry-After
         * (seconds or HTTP-date); -1 when absent */
        int64_t retry_after_ms;
        const char *content_type; /* "" when absent */
        const char *reason;       /* the status line's reason phrase; "" when none (HTTP/2) */
        const char *location;     /* Location (a redirect's target); "" when absent */
};

/* How a request ended. `ok`: the whole response arrived (whatever its
 * status). Otherwise `error` says why and `transient` whether trying again
 * may help (connection failures, drops, timeouts) or not (malformed URL,
 * TLS certificate rejected). */
struct http_result {
        bool ok;
        bool transient;
        bool idle_timeout; /* no byte for idle_timeout_ms */
        bool sent;         /* the request went out: the server was reached */
        int status;        /* 0 when no response arrived */
        const char *error; /* "" when ok */
};

/* Every callback runs from the loop, never from inside libcurl, so each may
 * cancel any request, start new ones or free the client. After on_done, or
 * after http_cancel, the request is gone and nothing more is called. */
struct http_callbacks {
        void (*on_response)(const struct http_response *r, void *ud);
        void (*on_data)(const char *buf, size_t n, void *ud);
        void (*on_done)(const struct http_result *r, void *ud);
};

/* A client on `loop`; cheap, does not load libcurl. Connections are reused
 * between its requests. NULL when out of memory. */
struct http_client *http_client_new(uv_loop_t *loop);

/* Cancels every request (no callbacks) and releases the client; its libuv
 * handles finish closing on the next loop iteration. */
void http_client_free(struct http_client *c);

/* Starts a request (a POST unless post->method says otherwise). Loads libcurl on first use:
 * `PROCTOR_LIBCURL` in the environment names the library to load instead of libcurl.so.4. Returns 0
 * with *out set (may be NULL when the caller never cancels), or a negative
 * errno with err filled: -ELIBACC when libcurl cannot be loaded. No
 * callback runs before this returns. */
int http_post_stream(struct http_client *c, const struct http_post *post,
                     const struct http_callbacks *cb, void *ud, struct http_request **out,
                     char *err, size_t errlen);

/* Aborts the request now and closes its connection; no callback follows. */
void http_cancel(struct http_request *r);

/* A raw send on an upgraded connection of its own, for a stream that only
 * takes bytes (the Docker Engine's attach with stdin alone, over TLS):
 * connect (with TLS for https://, verified with the files given), send
 * `head` (the HTTP request asking for the upgrade), read the answer's head,
 * send `data`, then what `src_fd` brings until its end (the caller closes
 * its side), then close, which the server reads as the stream's end (TLS
 * close_notify, then FIN). libcurl's easy calls block, so the exchange runs
 * on a thread of its own; `done` runs on the loop with the answer's status
 * (0 if none), the start of what followed the head (an error's body), and
 * NULL or what failed. */
struct http_raw_send {
        const char *url;  /* https://host:port or http://host:port */
        const char *head; /* the request's head, "\r\n\r\n" included */
        const char *data; /* copied */
        size_t data_len;
        int src_fd; /* -1, or a descriptor the job takes (and closes) */
        const char *cert_file, *key_file, *ca_file;
        uint32_t step_timeout_ms; /* the connect and each wait without progress; 0: 30 s */
};
struct http_raw_job;
typedef void (*http_raw_done)(int status, const char *body, size_t body_len, const char *err,
                              void *ud);

/* 0 with *out set, or a negative errno with err filled. */
int http_raw_send(uv_loop_t *loop, const struct http_raw_send *s, http_raw_done done, void *ud,
                  struct http_raw_job **out, char *err, size_t errlen);

/* `done` will not be called; the thread closes the connection within a
 * second and the job frees itself. */
void http_raw_abandon(struct http_raw_job *j);

#endif
