/* docker_int: internal to exec/docker; nothing outside this folder
 * includes it. The Docker runtime's state and what its files share:
 *   docker.c        the runtime's operations (exec/runtime.h): the engine
 *                   opened and freed, a container created, written to,
 *                   killed, signalled and paused.
 *   docker_calls.c  the Engine API calls over exec/http, and the errors
 *                   an execution reports when they fail.
 *   docker_run.c    a created container: attach, start, stdin, wait,
 *                   stats, wall clock, and its end (inspect, report,
 *                   remove).
 *   docker_sweep.c  what a proctor that is gone left behind: its labelled
 *                   containers and its seccomp profile files; and the
 *                   profile's own file. */
#ifndef PROCTOR_DOCKER_INT_H
#define PROCTOR_DOCKER_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <uv.h>

#include "exec/docker/docker_api.h"
#include "exec/http.h"
#include "exec/native/selfrun.h"
#include "exec/runtime.h"

#define ATTACH_HEAD_MAX 4096
#define RT_CALL_IDLE_MS 10000

struct docker_rt {
        uv_loop_t *loop;
        struct http_client *http;
        struct docker_endpoint ep;
        char *image, *session;
        struct docker_owner owner; /* this process, as its containers' labels name it */
        struct selfrun self;       /* proctor's binary and libraries, for the file tools */
        char *seccomp;             /* proctor's policy as the engine's profile */
        /* The same in a file (Podman's service reads profiles by path on
         * its own host); "" when it could not be written. */
        char seccomp_path[96];
        unsigned pending; /* requests of its own (the sweep) in flight */
        bool podman;      /* the engine is Podman (GET /version said so) */
        /* The image as the first call found it: every container of the
         * session is created from that id, its volumes known. */
        struct docker_image img;
        struct dk_call *list, *version; /* the start's calls, while in flight */
        bool freeing;
};

/* One API call's answer, gathered whole (or streamed to `line`). */
struct dk_call {
        struct dk_exec *x; /* NULL: the runtime's own (sweep) */
        struct docker_rt *rt;
        void (*done)(struct dk_call *c, int status, const char *body, size_t n, const char *err);
        void (*line)(struct dk_call *c, const char *buf, size_t n); /* streaming */
        void (*head)(struct dk_call *c);                            /* the status is known */
        struct http_request *req;
        int status;
        char *buf;
        size_t len, cap;
        char arg[80];
};

struct dk_exec {
        struct docker_rt *rt;
        struct exec *e;
        char id[80];
        char image[256];
        bool keep_stdin;
        char *stdin_data;
        size_t stdin_len;

        /* the attach connection */
        union {
                uv_pipe_t pipe;
                uv_tcp_t tcp;
        } conn;
        uv_stream_t *s;
        uv_connect_t creq;
        uv_getaddrinfo_t gai;
        char head[ATTACH_HEAD_MAX];
        size_t hlen;
        bool head_done, attach_eof, conn_made;
        struct docker_demux dmx;
        char *early; /* what the stream brought before the start's answer */
        size_t early_len;
        struct dk_call *attach_call;    /* over TLS: attach through libcurl */
        struct http_raw_job *stdin_job; /* over TLS: stdin on an attach of its own */

        uv_timer_t timer; /* the wall clock, then the end's grace */
        uv_timer_t probe; /* a local engine's pids and OOM counters (see pids_probe) */
        struct dk_call *stats, *wait, *poll;
        struct dk_call *create, *start; /* in flight */
        char *create_body;              /* kept until the create is answered */
        uint64_t vol_bytes;             /* the tmpfs over each of the image's volumes */
        unsigned setup_ms;              /* the create and start's deadline (setup_over) */
        uint64_t polled_us;             /* when the last poll of the stats was asked */
        struct docker_stats_sample prev;
        bool have_prev;
        uint64_t prev_us;
        struct exec_stats st;
        uint32_t max_pids;
        bool pids_hit; /* the engine's pids counter said a fork was refused */
        bool oom_hit;  /* the memory group's OOM kill counter moved */

        bool created, started, waited, ended, removing, paused;
        bool has_pending;
        enum exec_reason pending;
        uint64_t op_signals;
        int status_code;
        uint64_t end_us;
        unsigned refs; /* open handles and calls in flight */
        char error[256];
};

/* ---- docker.c ---- */

void rt_free(struct docker_rt *rt);
/* SIGKILL or another signal to a started container (thawed first when
 * paused); before the start the flow sees has_pending at its next step. */
void dk_send_kill(struct dk_exec *x, int sig);

/* ---- docker_calls.c ---- */

/* A call to the engine at `path` (body: JSON, or NULL), counted against x
 * (or, x NULL, the runtime); done gets its answer. NULL when it could not
 * start. */
struct dk_call *dk_api(struct docker_rt *rt, struct dk_exec *x, const char *method,
                       const char *path, const char *body,
                       void (*done)(struct dk_call *, int, const char *, size_t, const char *));
/* Cancels a call in flight: its done never runs. */
void call_cancel(struct dk_call **cp);
/* The execution's error, as printf formats it. */
__attribute__((format(printf, 2, 3))) void x_err(struct dk_exec *x, const char *fmt, ...);
/* The fix, when the engine could not be reached or refused. */
void reach_error(struct dk_exec *x, const char *what, const char *err);
/* The engine's answer `status` with its message, and the fix when known. */
void answer_error(struct dk_exec *x, const char *what, int status, const char *body, size_t n);

/* ---- docker_run.c ---- */

/* Tells exec the execution's state ("created", ...), while it has one. */
void x_state(struct dk_exec *x, const char *state);
/* Drops a reference; the last one frees x and tells exec it is removed. */
void x_unref(struct dk_exec *x);
/* The command ended (the wait answered, or it never started): reads why,
 * reports, removes. */
void dk_x_end(struct dk_exec *x);
/* Attaches to the created container's output (a raw upgraded connection,
 * or libcurl over TLS), then starts it. */
void dk_attach(struct dk_exec *x);
/* Writes to the container's stdin on the attach connection: 0, -EPIPE
 * when there is none (or no longer), or -ENOMEM. */
int conn_write(struct dk_exec *x, const char *data, size_t len);

/* ---- docker_sweep.c ---- */

/* The seccomp profile's file, written on first use; NULL when it cannot
 * be written. */
const char *seccomp_file(struct docker_rt *rt);
/* The start's listing of labelled containers answered: those of proctors
 * that are gone are removed. */
void dk_listed(struct dk_call *c, int status, const char *body, size_t n, const char *err);

#endif
