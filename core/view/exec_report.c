/* exec_report: the adapter between exec's callbacks and the event bus.
 * Output is split on UTF-8 boundaries so no character is cut in two. */
#include "core/view/exec_report.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

struct exec_report {
        struct bus *bus;
        char *call_id; /* set: output goes out as tool.output of that call */
        struct exec_report_hooks hooks;
        void *ud;
        uint64_t id;
        char carry[2][4]; /* incomplete UTF-8 tail per stream */
        size_t ncarry[2];
};

json_t *exec_report_limits_json(const struct exec_limits *l)
{
        return json_pack("{s:I,s:I,s:I,s:I,s:I,s:I,s:I}", "memory_bytes",
                         (json_int_t)l->memory_bytes, "cpu_ms", (json_int_t)l->cpu_ms, "timeout_ms",
                         (json_int_t)l->timeout_ms, "pids", (json_int_t)l->pids, "tmpfs_bytes",
                         (json_int_t)l->tmpfs_bytes, "output_bytes", (json_int_t)l->output_bytes,
                         "disk_bytes", (json_int_t)l->disk_bytes);
}

json_t *exec_report_fallback_json(bool sandbox, unsigned cgroup_limits)
{
        json_t *a = json_array();

        if (sandbox && !(cgroup_limits & EXEC_CG_MEMORY))
                json_array_append_new(a, json_string("memory"));
        if (sandbox && !(cgroup_limits & EXEC_CG_CPU))
                json_array_append_new(a, json_string("cpu"));
        if (sandbox && !(cgroup_limits & EXEC_CG_PIDS))
                json_array_append_new(a, json_string("pids"));
        return a;
}

static const char *isolation_name(enum exec_isolation iso)
{
        return iso == EXEC_SANDBOX ? "sandbox" : "none";
}

static void on_start(struct exec *e, int pid, uint64_t setup_us, void *ud)
{
        struct exec_report *r = ud;

        const char *handle = exec_runtime_handle(e);

        bus_emit(r->bus, "exec.start",
                 json_pack("{s:I,s:i,s:I,s:s*}", "exec_id", (json_int_t)r->id, "pid", pid,
                           "setup_us", (json_int_t)setup_us, "container", handle));
}

/* A runtime's own lifecycle (docker: created, running, exited, removing). */
static void on_state(struct exec *e, const char *state, void *ud)
{
        struct exec_report *r = ud;

        bus_emit(r->bus, "exec.state",
                 json_pack("{s:I,s:s,s:s,s:s*}", "exec_id", (json_int_t)r->id, "state", state,
                           "runtime", exec_runtime_name(e), "container", exec_runtime_handle(e)));
}

/* How many bytes at the end of buf form an incomplete UTF-8 sequence. */
static size_t utf8_tail(const char *buf, size_t n)
{
        size_t i, back = n < 3 ? n : 3;

        for (i = 1; i <= back; i++) {
                unsigned char c = (unsigned char)buf[n - i];
                size_t need;
                if ((c & 0xc0) == 0x80)
                        continue;
                need = (c & 0xe0) == 0xc0 ? 2 : (c & 0xf0) == 0xe0 ? 3 : (c & 0xf8) == 0xf0 ? 4 : 1;
                return need > i ? i : 0;
        }
        return 0;
}

static void emit_output(struct exec_report *r, enum exec_stream s, const char *buf, size_t n)
{
        const char *stream = s == EXEC_STDOUT ? "stdout" : "stderr";

        if (n == 0)
                return;
        if (r->call_id != NULL)
                bus_emit(r->bus, "tool.output",
                         json_pack("{s:s,s:I,s:s,s:o}", "call_id", r->call_id, "exec_id",
                                   (json_int_t)r->id, "stream", stream, "data",
                                   bus_string(buf, n)));
        else
                bus_emit(r->bus, "exec.output",
                         json_pack("{s:I,s:s,s:o}", "exec_id", (json_int_t)r->id, "stream", stream,
                                   "data", bus_string(buf, n)));
}

static void on_output(struct exec *e, enum exec_stream s, const char *buf, size_t n, void *ud)
{
        struct exec_report *r = ud;
        int k = s == EXEC_STDOUT ? 0 : 1;
        size_t tail;

        if (r->hooks.on_output != NULL)
                r->hooks.on_output(buf, n, s, r->ud);
        if (s == EXEC_STDOUT && r->hooks.quiet_stdout)
                return;
        /* Complete the character left over from the previous chunk. */
        while (r->ncarry[k] > 0 && n > 0) {
                char tmp[4];
                size_t need;
                r->carry[k][r->ncarry[k]++] = *buf++;
                n--;
                memcpy(tmp, r->carry[k], r->ncarry[k]);
                need = utf8_tail(tmp, r->ncarry[k]);
                if (need == 0 || r->ncarry[k] == 4) {
                        emit_output(r, s, tmp, r->ncarry[k]);
                        r->ncarry[k] = 0;
                }
        }
        tail = utf8_tail(buf, n);
        emit_output(r, s, buf, n - tail);
        memcpy(r->carry[k], buf + n - tail, tail);
        r->ncarry[k] = tail;
}

static void on_stats(struct exec *e, const struct exec_stats *st, void *ud)
{
        struct exec_report *r = ud;

        bus_emit(r->bus, "exec.stats",
                 json_pack("{s:I,s:f,s:I,s:I,s:I,s:i}", "exec_id", (json_int_t)r->id, "cpu_pct",
                           st->cpu_pct, "cpu_ms", (json_int_t)st->cpu_ms, "mem_bytes",
                           (json_int_t)st->mem_bytes, "mem_peak_bytes",
                           (json_int_t)st->mem_peak_bytes, "pids", (int)st->pids));
}

static void emit_exit(struct exec_report *r, const struct exec_result *res)
{
        json_t *ev = json_pack("{s:I,s:s,s:i,s:i,s:I,s:I,s:I,s:b}", "exec_id", (json_int_t)r->id,
                               "reason", exec_reason_name(res->reason), "exit_code", res->exit_code,
                               "signal", res->signal, "wall_ms", (json_int_t)res->wall_ms, "cpu_ms",
                               (json_int_t)res->cpu_ms, "mem_peak_bytes",
                               (json_int_t)res->mem_peak_bytes, "truncated", res->truncated);

        if (res->error[0] != '\0')
                json_object_set_new(ev, "error", json_string(res->error));
        if (res->disk_known)
                json_object_set_new(ev, "disk",
                                    json_pack("{s:I,s:i,s:I}", "added_bytes",
                                              (json_int_t)res->disk_added_bytes, "walks",
                                              (int)res->disk_walks, "last_walk_ms",
                                              (json_int_t)res->disk_walk_ms));
        bus_emit(r->bus, "exec.exit", ev);
}

static void on_exit_cb(struct exec *e, const struct exec_result *res, void *ud)
{
        struct exec_report *r = ud;
        int k;

        for (k = 0; k < 2; k++)
                if (r->ncarry[k] > 0)
                        emit_output(r, k == 0 ? EXEC_STDOUT : EXEC_STDERR, r->carry[k],
                                    r->ncarry[k]);
        emit_exit(r, res);
        if (r->hooks.on_exit != NULL)
                r->hooks.on_exit(res, r->ud);
}

static void on_remove(struct exec *e, uint64_t teardown_us, void *ud)
{
        struct exec_report *r = ud;

        bus_emit(r->bus, "exec.remove",
                 json_pack("{s:I,s:I}", "exec_id", (json_int_t)r->id, "teardown_us",
                           (json_int_t)teardown_us));
        if (r->hooks.on_remove != NULL)
                r->hooks.on_remove(r->ud);
        free(r->call_id);
        free(r);
}

static const struct exec_callbacks report_cbs = {
    .on_start = on_start,
    .on_output = on_output,
    .on_stats = on_stats,
    .on_exit = on_exit_cb,
    .on_remove = on_remove,
    .on_state = on_state,
};

int exec_report_spawn(struct exec_engine *eng, struct bus *bus, const struct exec_request *req,
                      const char *call_id, const struct exec_report_hooks *hooks, void *ud,
                      struct exec **out, char *err, size_t errlen)
{
        struct exec_report *r = calloc(1, sizeof(*r));
        struct exec *e = NULL;
        json_t *ev;
        int rc;

        if (r == NULL)
                return -ENOMEM;
        r->bus = bus;
        r->ud = ud;
        if (hooks != NULL)
                r->hooks = *hooks;
        if (call_id != NULL && (r->call_id = strdup(call_id)) == NULL) {
                free(r);
                return -ENOMEM;
        }
        rc = exec_spawn(eng, req, &report_cbs, r, &e, err, errlen);
        if (rc < 0) {
                free(r->call_id);
                free(r);
                return rc;
        }
        r->id = exec_id(e);
        ev = json_pack(
            "{s:I,s:o,s:s,s:s,s:o,s:o,s:o,s:b,s:s,s:o*}", "exec_id", (json_int_t)r->id, "call_id",
            call_id != NULL ? json_string(call_id) : json_null(), "isolation",
            isolation_name(req->isolation), "runtime", exec_runtime_name(e), "image",
            req->image != NULL ? json_string(req->image) : json_null(), "limits",
            exec_report_limits_json(exec_limits(e)), "limits_per_process",
            exec_report_fallback_json(req->isolation == EXEC_SANDBOX, exec_cgroup_limits(e)),
            "warm", exec_warm(e), "network",
            req->isolation != EXEC_SANDBOX ? "host"
            : exec_shares_net(e)           ? "shared"
                                           : "none",
            "label", hooks != NULL && hooks->label != NULL ? json_string(hooks->label) : NULL);
        /* Whether the disk quota holds, where one was asked for: false
         * only where it cannot (a remote engine's workspace). */
        if (ev != NULL && exec_request_disk_quota(req))
                json_object_set_new(ev, "disk_quota", json_boolean(exec_disk_quota(e)));
        bus_emit(bus, "exec.create", ev);
        *out = e;
        return 0;
}
