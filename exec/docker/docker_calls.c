/* docker_calls: the Docker runtime's calls to the Engine API, made over
 * exec/http on the engine's loop: each answer gathered whole (cut past
 * 1 MiB) or streamed line by line, the call counted against its execution
 * or the runtime so that neither is freed while it is in flight; and the
 * errors an execution reports when the engine cannot be reached or
 * refuses. */
#include "exec/docker/docker_int.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- API calls ---- */

static void call_response(const struct http_response *r, void *ud)
{
        struct dk_call *c = ud;

        c->status = r->status;
        if (c->head != NULL)
                c->head(c);
}

static void call_data(const char *buf, size_t n, void *ud)
{
        struct dk_call *c = ud;

        if (c->line != NULL && c->status / 100 == 2) {
                c->line(c, buf, n);
                return;
        }
        if (c->len + n > (1u << 20))
                return; /* an answer past 1 MiB is cut: only its start is read */
        if (c->len + n + 1 > c->cap) {
                size_t cap = (c->len + n + 1) * 2;
                char *b = realloc(c->buf, cap);
                if (b == NULL)
                        return;
                c->buf = b;
                c->cap = cap;
        }
        memcpy(c->buf + c->len, buf, n);
        c->len += n;
        c->buf[c->len] = '\0';
}

static void call_free(struct dk_call *c)
{
        struct dk_exec *x = c->x;
        struct docker_rt *rt = c->rt;

        free(c->buf);
        free(c);
        if (x != NULL)
                x_unref(x);
        else if (--rt->pending == 0 && rt->freeing) {
                rt_free(rt);
        }
}

static void call_done(const struct http_result *r, void *ud)
{
        struct dk_call *c = ud;

        c->req = NULL;
        if (c->done != NULL)
                c->done(c, r->ok ? c->status : 0, c->buf != NULL ? c->buf : "", c->len,
                        r->ok ? NULL : r->error);
        call_free(c);
}

/* Cancels a call in flight: its done never runs. */
void call_cancel(struct dk_call **cp)
{
        struct dk_call *c = *cp;

        *cp = NULL;
        if (c == NULL || c->req == NULL)
                return;
        http_cancel(c->req);
        c->req = NULL;
        call_free(c);
}

struct dk_call *dk_api(struct docker_rt *rt, struct dk_exec *x, const char *method,
                       const char *path, const char *body,
                       void (*done)(struct dk_call *, int, const char *, size_t, const char *))
{
        static const char *const json_hdr[] = {"Content-Type: application/json", NULL};
        struct dk_call *c = calloc(1, sizeof(*c));
        struct docker_endpoint *ep = &rt->ep;
        struct http_callbacks cb = {call_response, call_data, call_done};
        char url[1024], err[256];

        if (c == NULL)
                return NULL;
        c->x = x;
        c->rt = rt;
        c->done = done;
        snprintf(url, sizeof(url), "%s%s", ep->base_url, path);
        struct http_post p = {
            .url = url,
            .headers = body != NULL ? json_hdr : NULL,
            .body = body,
            .body_len = body != NULL ? strlen(body) : 0,
            .method = method,
            .unix_socket = ep->unix_path[0] != '\0' ? ep->unix_path : NULL,
            .cert_file = ep->tls ? ep->cert : NULL,
            .key_file = ep->tls ? ep->key : NULL,
            .ca_file = ep->tls ? ep->ca : NULL,
            .connect_timeout_ms = 10000,
            /* The runtime's own calls (the sweep, the version) must not
             * keep the loop alive on an engine that never answers. */
            .idle_timeout_ms = x == NULL ? RT_CALL_IDLE_MS : 0,
        };
        if (http_post_stream(rt->http, &p, &cb, c, &c->req, err, sizeof(err)) < 0) {
                free(c);
                return NULL;
        }
        if (x != NULL)
                x->refs++;
        else
                rt->pending++;
        return c;
}

__attribute__((format(printf, 2, 3))) void x_err(struct dk_exec *x, const char *fmt, ...)
{
        va_list ap;

        va_start(ap, fmt);
        vsnprintf(x->error, sizeof(x->error), fmt, ap);
        va_end(ap);
}

/* The fix, when the engine could not be reached or refused. */
void reach_error(struct dk_exec *x, const char *what, const char *err)
{
        const struct docker_endpoint *ep = &x->rt->ep;

        x_err(x, "%s: cannot reach the Docker engine at %.100s (%.60s): %s", what, ep->shown, err,
              ep->tls                    ? "is the daemon running, and are DOCKER_CERT_PATH's "
                                           "ca.pem, cert.pem and key.pem its?"
              : ep->unix_path[0] == '\0' ? "is the docker daemon running (or does it want TLS: "
                                           "DOCKER_TLS_VERIFY=1)?"
                                         : "is the docker daemon running?");
}

void answer_error(struct dk_exec *x, const char *what, int status, const char *body, size_t n)
{
        char msg[200];
        const char *hint;

        docker_error_text(body, n, msg, sizeof(msg));
        /* The fix first: the engine's own text may be cut to fit. */
        if ((hint = docker_error_hint(body, n)) != NULL)
                x_err(x, "%s: %s (the engine answered %d: %s)", what, hint, status, msg);
        else
                x_err(x, "%s: the Docker engine answered %d: %s", what, status, msg);
}
