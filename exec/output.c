/* output: an execution's stdout and stderr, read through poll handles and
 * handed to on_output up to the output cap, what passes it spliced away;
 * a stream that floods is drained on a timer rather than per wake-up. */
#include "exec/engine.h"

#include <errno.h>
#include <fcntl.h>
#include <unistd.h>

/* A flooded pipe is grown to this (the unprivileged maximum by default). */
#define OUTPUT_PIPE_BYTES (1u << 20)
/* Every wake-up costs the supervisor a context switch, and every page that
 * leaves a pipe costs it the page's release, whatever it does with the
 * bytes. So a stream that keeps waking us (a wake-up that finds at least
 * OUTPUT_BUSY_BYTES, or one within OUTPUT_TICK_MS of the last) is no longer
 * polled: it is drained every OUTPUT_TICK_MS, at most OUTPUT_TICK_BYTES a
 * time, until a tick finds it empty. A command that prints a little and
 * exits is never held back. */
#define OUTPUT_BUSY_BYTES (32u << 10)
#define OUTPUT_TICK_MS    1
/* A pipeful and what the command writes while it drains: a flood then
 * runs at up to about 1 GB/s a stream, the supervisor spends at most a
 * small part of a core on it, and the command still reaches its CPU
 * limit (a stalled one would only end at the wall clock). */
#define OUTPUT_TICK_BYTES (2 * OUTPUT_PIPE_BYTES)

/* One read, so one on_output call and one event, takes at most this: large
 * enough that a pipeful costs four calls, small enough that a view folding
 * it in keeps answering keys. */
static char out_slab[256u << 10];

/* Past the cap the bytes only have to leave the pipe: splice hands its
 * pages to /dev/null without copying them. Where splice cannot, they are
 * read and dropped. */
static ssize_t output_discard(int fd, size_t max)
{
        static int null_fd = -2;
        ssize_t n;

        if (null_fd == -2)
                null_fd = open("/dev/null", O_WRONLY | O_CLOEXEC);
        if (null_fd >= 0) {
                n = splice(fd, NULL, null_fd, NULL, max, SPLICE_F_NONBLOCK);
                if (n >= 0 || errno == EAGAIN || errno == EINTR)
                        return n;
                close(null_fd);
                null_fd = -1;
        }
        return read(fd, out_slab, max < sizeof(out_slab) ? max : sizeof(out_slab));
}

/* Moves up to `max` bytes of what the pipe holds now: those under the cap
 * (shared by stdout and stderr) to on_output, the rest away. Returns the
 * bytes moved and sets eof when the last writer is gone. */
static size_t output_drain(struct exec *e, struct exec_output *o, size_t max)
{
        enum exec_stream which = o == &e->out ? EXEC_STDOUT : EXEC_STDERR;
        uint64_t cap = e->lim.output_bytes;
        size_t moved = 0, want;
        ssize_t n;

        while (moved < max) {
                uint64_t room = cap > e->out_bytes ? cap - e->out_bytes : 0;
                want = max - moved;
                if (cap == 0 || room > 0) {
                        if (want > sizeof(out_slab))
                                want = sizeof(out_slab);
                        /* Never read past the cap: those bytes would be copied for nothing. */
                        if (cap != 0 && room < want)
                                want = (size_t)room;
                        n = read(o->fd, out_slab, want);
                        if (n > 0 && e->cb.on_output != NULL)
                                e->cb.on_output(e, which, out_slab, (size_t)n, e->ud);
                } else {
                        n = output_discard(o->fd, want);
                        if (n > 0)
                                e->truncated = true;
                        /* A flood past the cap: from here the sandbox's own
                         * init empties the pipe, on the sandbox's CPU time. */
                        if (n > 0 && e->iso == EXEC_SANDBOX && e->ctl_fd >= 0 &&
                            sandbox_hand_over(e->ctl_fd, o->fd) == 0) {
                                e->out_bytes += (uint64_t)n;
                                moved += (size_t)n;
                                o->eof = true;
                                break;
                        }
                }
                if (n < 0 && errno == EINTR)
                        continue;
                if (n <= 0) {
                        /* EAGAIN: drained. Any other error ends the stream as EOF does. */
                        o->eof = n == 0 || errno != EAGAIN;
                        break;
                }
                e->out_bytes += (uint64_t)n;
                moved += (size_t)n;
                /* A short read emptied the pipe: the next write wakes us again. */
                if ((size_t)n < want)
                        break;
        }
        return moved;
}

/* Stops watching a stream, once: it no longer holds the exit back. */
void output_stop(struct exec *e, struct exec_output *o)
{
        if (o->ended)
                return;
        o->ended = true;
        uv_poll_stop(&o->poll);
        o->flooding = false;
        e->open_streams--;
}

static void output_end(struct exec *e, struct exec_output *o)
{
        output_stop(e, o);
        maybe_report(e);
}

static void output_ready(uv_poll_t *p, int status, int events);

static void output_tick(uv_timer_t *t)
{
        struct exec *e = t->data;
        struct exec_output *all[] = {&e->out, &e->err};
        bool flooding = false;
        size_t i;

        for (i = 0; i < 2 && !e->exit_reported; i++) {
                struct exec_output *o = all[i];
                if (!o->flooding)
                        continue;
                if (output_drain(e, o, OUTPUT_TICK_BYTES) > 0) {
                        flooding = true;
                } else if (o->eof) {
                        output_end(e, o);
                } else {
                        /* Quiet for a whole tick: wake-ups are cheap again. */
                        o->flooding = false;
                        o->last_us = 0;
                        uv_poll_start(&o->poll, UV_READABLE, output_ready);
                }
        }
        if (!flooding && !e->exit_reported)
                uv_timer_stop(t);
}

static void output_flood(struct exec *e, struct exec_output *o)
{
        if (!o->grown) {
                o->grown = true;
                /* Refused beyond the user's pipe quota: 64 KiB then. */
                (void)fcntl(o->fd, F_SETPIPE_SZ, (int)OUTPUT_PIPE_BYTES);
        }
        uv_poll_stop(&o->poll);
        o->flooding = true;
        if (!uv_is_active((uv_handle_t *)&e->out_tick)) {
                /* The loop's clock is from its last wake-up: a tick due
                 * from then could come at once. */
                uv_update_time(e->eng->loop);
                uv_timer_start(&e->out_tick, output_tick, OUTPUT_TICK_MS, OUTPUT_TICK_MS);
        }
}

static void output_ready(uv_poll_t *p, int status, int events)
{
        struct exec *e = p->data;
        struct exec_output *o = p == &e->out.poll ? &e->out : &e->err;
        uint64_t now;
        size_t moved;

        /* The start message was written before the command ran, but on
         * another pipe: take it first so events stay in order. */
        if (!e->started)
                drain_status(e);
        warm_announce(e);
        moved = output_drain(e, o, OUTPUT_TICK_BYTES);
        if (o->eof) {
                output_end(e, o);
                return;
        }
        now = now_us();
        if (moved >= OUTPUT_BUSY_BYTES || now - o->last_us < OUTPUT_TICK_MS * 1000u)
                output_flood(e, o);
        o->last_us = now;
}

static int open_output(struct exec *e, struct exec_output *o, int *fd)
{
        int rc = uv_poll_init(e->eng->loop, &o->poll, *fd);

        if (rc < 0)
                return rc;
        o->poll.data = e;
        o->fd = *fd;
        *fd = -1;
        e->open_handles++;
        e->open_streams++;
        return uv_poll_start(&o->poll, UV_READABLE, output_ready);
}

/* Watches stdout and stderr; each pipe keeps its default size until the
 * command floods it. */
int start_output(struct exec *e, int *out_fd, int *err_fd)
{
        int rc;

        uv_timer_init(e->eng->loop, &e->out_tick);
        e->out_tick.data = e;
        e->open_handles++;
        if ((rc = open_output(e, &e->out, out_fd)) < 0)
                return rc;
        return open_output(e, &e->err, err_fd);
}

void close_output(struct exec *e, struct exec_output *o)
{
        if (o->poll.data != e || uv_is_closing((uv_handle_t *)&o->poll))
                return;
        /* uv_close takes the fd out of the loop's epoll set at once: it can
         * be closed now. */
        uv_close((uv_handle_t *)&o->poll, on_handle_closed);
        close_fd(&o->fd);
}
