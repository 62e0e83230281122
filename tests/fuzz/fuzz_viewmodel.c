/* fuzz_viewmodel: libFuzzer harness for the view model, structure-aware:
 * the input is read as a script of events (built with jansson) whose
 * types, ids and fields it picks, ids from a small set so that events
 * refer to each other, values often missing, out of range or of the wrong
 * JSON type. After each event it walks the model through the accessors and
 * checks what core/view/viewmodel.h promises; some inputs also draw the model
 * off-screen (tui_bench_frames), live view or detail view, feeding events
 * between frames. An input that starts with '{' is read as JSONL instead,
 * one event per line, so that traces make seeds; its last two bytes (a
 * line that is not JSON) choose the drawing. A broken promise aborts.
 *
 * Built by `make fuzz` (libFuzzer) and by `make test` (tests/fuzz/driver.c). */
#include <jansson.h>
#include <locale.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core/view/viewmodel.h"
#include "tui/tui.h"

#define MAX_EVENTS 96
#define MAX_FRAMES 4
#define NELEM(a)   (sizeof(a) / sizeof((a)[0]))

struct script {
        const uint8_t *p;
        size_t n, off;
        struct viewmodel *vm;
        uint64_t t, gen;
        int events;
        bool lines; /* JSONL */
};

static uint8_t byte(struct script *s)
{
        return s->off < s->n ? s->p[s->off++] : 0;
}

static bool done(const struct script *s)
{
        return s->off >= s->n || s->events >= MAX_EVENTS;
}

/* ---- values ---- */

enum kind {
        K_CALL_ID,
        K_EXEC_ID,
        K_NUM,
        K_TIME,
        K_STR,
        K_TEXT, /* output or message text, sometimes very long */
        K_BOOL,
        K_LIMITS,
        K_USAGE,
        K_CALLS,
        K_ARGS,
        K_TOOL,
        K_REASON,
        K_STATUS,
        K_ISOLATION,
        K_CPU,
};

struct field {
        const char *key;
        enum kind kind;
};

/* A slice of the input as a string; NULL when it is not valid UTF-8. */
static json_t *slice(struct script *s, size_t len)
{
        size_t at = s->off;

        if (len > s->n - at)
                len = s->n - at;
        s->off += len;
        return json_stringn((const char *)s->p + at, len);
}

/* A slice repeated past the model's output cap, now and then. */
static json_t *long_text(struct script *s)
{
        size_t unit = 1 + byte(s) % 64, total = (size_t)(1 + byte(s) % 12) * (VM_OUTPUT_CAP / 8),
               at = s->off, i;
        json_t *j;
        char *buf;

        if (unit > s->n - at)
                unit = s->n - at;
        s->off += unit;
        if (unit == 0)
                return json_string("");
        buf = malloc(total);
        if (buf == NULL)
                abort();
        for (i = 0; i + unit <= total; i += unit)
                memcpy(buf + i, s->p + at, unit);
        j = json_stringn(buf, i);
        free(buf);
        return j;
}

static json_t *number(struct script *s)
{
        uint8_t k = byte(s);

        switch (k % 14) {
        case 0:
                return json_integer(0);
        case 1:
                return json_integer(-1);
        case 2:
                return json_integer(INT64_MAX);
        case 3:
                return json_integer(INT64_MIN);
        case 4:
                return json_real(1.5);
        case 5:
                return json_real(1e300);
        case 6:
                return json_real(-0.0);
        case 7:
                return json_real((double)byte(s));
        case 8:
                return json_integer((json_int_t)((uint64_t)byte(s) << 24 | (uint64_t)byte(s) << 8));
        case 9:
                return json_integer((json_int_t)UINT32_MAX + 1);
        case 10:
                return json_real(-9.1e18);
        default:
                return json_integer(byte(s));
        }
}

static json_t *wrong_type(struct script *s)
{
        switch (byte(s) % 6) {
        case 0:
                return json_null();
        case 1:
                return json_true();
        case 2:
                return json_array();
        case 3:
                return json_object();
        case 4:
                return json_string("1");
        default:
                return json_real(0.25);
        }
}

static json_t *one_of(struct script *s, const char *const *names, size_t n)
{
        uint8_t k = byte(s);

        if (k % (n + 2) >= n)
                return slice(s, k % 8);
        return json_string(names[k % (n + 2)]);
}

static json_t *value(struct script *s, enum kind kind);

static json_t *object_of(struct script *s, const char *const *keys, size_t n)
{
        json_t *o = json_object();
        size_t i;

        for (i = 0; i < n; i++)
                if (byte(s) % 3 != 0)
                        json_object_set_new(o, keys[i],
                                            byte(s) % 5 == 0 ? wrong_type(s) : number(s));
        return o;
}

static json_t *value(struct script *s, enum kind kind)
{
        static const char *const call_ids[] = {"c1", "c2", "c3", "call_4", ""};
        static const char *const tools[] = {"bash",       "read",        "write",           "edit",
                                            "read_cache", "write_cache", "run_python_code", "x"};
        static const char *const reasons[] = {"exited", "signaled",     "timeout",
                                              "oom",    "cpu_limit",    "pids_limit",
                                              "killed", "setup_failed", "running"};
        static const char *const statuses[] = {"completed",      "interrupted", "failed",
                                               "max_iterations", "running",     "idle"};
        static const char *const isolations[] = {"sandbox", "none"};
        static const char *const limit_keys[] = {"memory_bytes",  "cpu_ms",      "timeout_ms",
                                                 "pids",          "tmpfs_bytes", "output_bytes",
                                                 "max_iterations"};
        static const char *const usage_keys[] = {"prompt_tokens", "completion_tokens",
                                                 "input_tokens", "output_tokens"};
        static const char *const arg_keys[] = {"command", "path", "code", "key", "other"};
        uint8_t k;
        json_t *a;

        switch (kind) {
        case K_CALL_ID:
                k = byte(s);
                return k < 240 ? json_string(call_ids[k % NELEM(call_ids)]) : slice(s, k % 16);
        case K_EXEC_ID:
                k = byte(s);
                if (k < 200)
                        return json_integer(1 + k % 4);
                return k < 230 ? json_real(1 + k % 4) : number(s);
        case K_NUM:
                return number(s);
        case K_TIME:
                k = byte(s);
                if (k < 200)
                        s->t += k % 50;
                else if (k < 220)
                        s->t = s->t > k ? s->t - k : 0; /* backwards */
                else
                        return number(s);
                return json_integer((json_int_t)s->t);
        case K_STR:
                return slice(s, byte(s) % 24);
        case K_TEXT:
                k = byte(s);
                return k == 255 ? long_text(s) : slice(s, k % 96);
        case K_BOOL:
                return json_boolean(byte(s) & 1);
        case K_LIMITS:
                return object_of(s, limit_keys, NELEM(limit_keys));
        case K_USAGE:
                return object_of(s, usage_keys, NELEM(usage_keys));
        case K_CALLS:
                a = json_array();
                for (k = byte(s) % 4; k > 0; k--)
                        json_array_append_new(a, json_object());
                return a;
        case K_ARGS:
                k = byte(s);
                if (k % 3 == 0)
                        return slice(s, k % 32); /* raw text, JSON or not */
                a = json_object();
                json_object_set_new(a, arg_keys[k % NELEM(arg_keys)],
                                    k % 3 == 1 ? slice(s, byte(s) % 48) : number(s));
                return a;
        case K_TOOL:
                return one_of(s, tools, NELEM(tools));
        case K_REASON:
                return one_of(s, reasons, NELEM(reasons));
        case K_STATUS:
                return one_of(s, statuses, NELEM(statuses));
        case K_ISOLATION:
                return one_of(s, isolations, NELEM(isolations));
        case K_CPU:
                k = byte(s);
                return k < 128 ? json_real(k * 1.7) : number(s);
        }
        return json_null();
}

/* ---- events ---- */

struct event_shape {
        const char *type;
        struct field fields[10];
};

static const struct event_shape shapes[] = {
    {"session.start",
     {{"session_id", K_STR},
      {"mode", K_ISOLATION},
      {"model", K_STR},
      {"workspace", K_STR},
      {"workspace_mode", K_STR},
      {"version", K_STR},
      {"scripted", K_BOOL},
      {"max_iterations", K_NUM},
      {"limits", K_LIMITS}}},
    {"user.message", {{"text", K_TEXT}}},
    {"turn.start", {{"turn", K_NUM}}},
    {"turn.end", {{"turn", K_NUM}}},
    {"model.delta", {{"text", K_TEXT}}},
    {"model.message", {{"content", K_TEXT}, {"tool_calls", K_CALLS}, {"usage", K_USAGE}}},
    {"model.error",
     {{"message", K_STR}, {"http_status", K_NUM}, {"retry_in_ms", K_NUM}, {"final", K_BOOL}}},
    {"tool.call", {{"call_id", K_CALL_ID}, {"name", K_TOOL}, {"arguments", K_ARGS}}},
    {"tool.output",
     {{"call_id", K_CALL_ID}, {"exec_id", K_EXEC_ID}, {"stream", K_STR}, {"data", K_TEXT}}},
    {"tool.result",
     {{"call_id", K_CALL_ID},
      {"ok", K_BOOL},
      {"exit_code", K_NUM},
      {"interrupted", K_BOOL},
      {"cancelled", K_BOOL},
      {"truncated", K_BOOL},
      {"duration_ms", K_NUM},
      {"output", K_TEXT}}},
    {"exec.create",
     {{"exec_id", K_EXEC_ID},
      {"call_id", K_CALL_ID},
      {"isolation", K_ISOLATION},
      {"limits", K_LIMITS}}},
    {"exec.start", {{"exec_id", K_EXEC_ID}, {"pid", K_NUM}, {"setup_us", K_NUM}}},
    {"exec.output", {{"exec_id", K_EXEC_ID}, {"stream", K_STR}, {"data", K_TEXT}}},
    {"exec.stats",
     {{"exec_id", K_EXEC_ID},
      {"cpu_pct", K_CPU},
      {"cpu_ms", K_NUM},
      {"mem_bytes", K_NUM},
      {"mem_peak_bytes", K_NUM},
      {"pids", K_NUM}}},
    {"exec.exit",
     {{"exec_id", K_EXEC_ID},
      {"reason", K_REASON},
      {"exit_code", K_NUM},
      {"signal", K_NUM},
      {"wall_ms", K_NUM},
      {"cpu_ms", K_NUM},
      {"mem_peak_bytes", K_NUM},
      {"truncated", K_BOOL},
      {"error", K_STR}}},
    {"exec.remove", {{"exec_id", K_EXEC_ID}, {"teardown_us", K_NUM}}},
    {"operator.kill", {{"exec_id", K_EXEC_ID}}},
    {"operator.interrupt", {{"turn", K_NUM}}},
    {"session.note", {{"text", K_STR}, {"message", K_STR}}},
    {"session.end",
     {{"status", K_STATUS},
      {"turns", K_NUM},
      {"tool_calls", K_NUM},
      {"duration_ms", K_NUM},
      {"usage", K_USAGE}}},
    /* types the model does not know, or nearly knows */
    {"session.started", {{"session_id", K_STR}}},
    {"exec", {{"exec_id", K_EXEC_ID}}},
    {"", {{"text", K_STR}}},
};

/* Each field: usually its kind of value, sometimes missing or of the wrong
 * JSON type. */
static json_t *make_event(struct script *s)
{
        const struct event_shape *sh = &shapes[byte(s) % NELEM(shapes)];
        json_t *ev = json_object(), *v;
        uint8_t how = byte(s);
        size_t i;

        if (how % 16 != 0)
                json_object_set_new(ev, "type", json_string(sh->type));
        else
                json_object_set_new(ev, "type", wrong_type(s));
        json_object_set_new(ev, "seq", json_integer(s->events + 1));
        if (how % 8 != 1)
                json_object_set_new(ev, "t_ms", value(s, K_TIME));
        for (i = 0; i < NELEM(sh->fields) && sh->fields[i].key != NULL; i++) {
                uint8_t sel = byte(s);
                if (sel % 8 == 0)
                        continue;
                v = sel % 8 == 1 ? wrong_type(s) : value(s, sh->fields[i].kind);
                if (v != NULL) /* NULL: jansson refused the bytes */
                        json_object_set_new(ev, sh->fields[i].key, v);
        }
        return ev;
}

/* ---- the promises ---- */

/* Valid UTF-8 (NULs allowed): what the model keeps came from JSON strings
 * and is only ever cut between characters. */
static bool valid_utf8(const char *p, size_t n)
{
        const unsigned char *s = (const unsigned char *)p;
        size_t i = 0, need, k;

        while (i < n) {
                unsigned char c = s[i], lo = 0x80, hi = 0xbf;
                if (c < 0x80) {
                        i++;
                        continue;
                }
                if (c >= 0xc2 && c <= 0xdf)
                        need = 1;
                else if (c >= 0xe0 && c <= 0xef)
                        need = 2, lo = c == 0xe0 ? 0xa0 : 0x80, hi = c == 0xed ? 0x9f : 0xbf;
                else if (c >= 0xf0 && c <= 0xf4)
                        need = 3, lo = c == 0xf0 ? 0x90 : 0x80, hi = c == 0xf4 ? 0x8f : 0xbf;
                else
                        return false;
                for (k = 1; k <= need; k++) {
                        if (i + k >= n || s[i + k] < lo || s[i + k] > hi)
                                return false;
                        lo = 0x80, hi = 0xbf;
                }
                i += need + 1;
        }
        return true;
}

static void check_summary(const char *sum)
{
        const char *end = memchr(sum, '\0', VM_SUMMARY_MAX);
        const unsigned char *u;

        if (end == NULL || !valid_utf8(sum, (size_t)(end - sum)))
                abort();
        for (u = (const unsigned char *)sum; *u != '\0'; u++)
                if (*u < 0x20 || *u == 0x7f || (u[0] == 0xc2 && u[1] >= 0x80 && u[1] < 0xa0))
                        abort();
}

static void check_session(const struct viewmodel *vm)
{
        const struct viewmodel_session *ss = viewmodel_session(vm);

        if (ss->id == NULL || ss->mode == NULL || ss->model == NULL || ss->workspace == NULL ||
            ss->workspace_mode == NULL || ss->version == NULL ||
            (unsigned)ss->state > VM_MAX_ITERATIONS || ss->max_turns < 0)
                abort();
}

static void check_transcript(const struct viewmodel *vm, uint64_t gen)
{
        size_t n = viewmodel_ntranscript(vm), i, open = 0;

        for (i = 0; i < n; i++) {
                const struct viewmodel_entry *e = viewmodel_entry(vm, i);
                if (e == NULL || e->text == NULL || e->text[e->len] != '\0' ||
                    (unsigned)e->kind > VM_ENTRY_TOOL || e->gen > gen)
                        abort();
                /* a call inline: one that exists */
                if (e->kind == VM_ENTRY_TOOL &&
                    (e->call < 0 || (size_t)e->call >= viewmodel_ncalls(vm)))
                        abort();
                if (e->open && (e->kind != VM_ENTRY_ASSISTANT || ++open > 1))
                        abort();
        }
        if (viewmodel_entry(vm, n) != NULL)
                abort();
}

static void check_calls(const struct viewmodel *vm, uint64_t gen)
{
        size_t n = viewmodel_ncalls(vm), i, k, running = 0, queued = 0;
        struct viewmodel_host h;

        for (i = 0; i < n; i++) {
                const struct viewmodel_call *c = viewmodel_call(vm, i);
                if (c == NULL || c->id == NULL || c->name == NULL || c->arguments == NULL ||
                    c->output == NULL || c->id[0] == '\0' || c->gen > gen)
                        abort();
                if (viewmodel_call_find(vm, c->id) != (long)i)
                        abort();
                if (c->output_len > VM_OUTPUT_CAP || c->output[c->output_len] != '\0' ||
                    c->output_bytes < c->output_len || !valid_utf8(c->output, c->output_len))
                        abort();
                if ((unsigned)c->state > VM_CALL_INTERRUPTED || c->exit_code < -1 ||
                    c->exit_code > 255)
                        abort();
                check_summary(c->summary);
                for (k = 0; k < c->nexecs; k++) {
                        long e = viewmodel_exec_find(vm, c->exec_ids[k]);
                        if (e < 0 || strcmp(viewmodel_exec(vm, (size_t)e)->call_id, c->id) != 0)
                                abort();
                }
                running += c->state == VM_CALL_RUNNING;
                queued += viewmodel_call_queued(c);
                if (viewmodel_call_queued(c) && (c->state != VM_CALL_RUNNING || c->nexecs > 0))
                        abort();
                if (viewmodel_call_label(c) == NULL)
                        abort();
        }
        viewmodel_host(vm, &h);
        if (h.queued != queued)
                abort();
        if (viewmodel_call(vm, n) != NULL || viewmodel_nrunning_calls(vm) != running)
                abort();
        for (i = 0; i < running; i++) {
                const struct viewmodel_call *c = viewmodel_running_call(vm, i);
                if (c == NULL || c->state != VM_CALL_RUNNING)
                        abort();
        }
        if (viewmodel_running_call(vm, running) != NULL)
                abort();
}

static void check_execs(const struct viewmodel *vm, uint64_t gen)
{
        size_t n = viewmodel_nexecs(vm), i, k, live = 0, ns;
        struct viewmodel_host h, sum = {0};

        for (i = 0; i < n; i++) {
                const struct viewmodel_exec *e = viewmodel_exec(vm, i);
                if (e == NULL || e->call_id == NULL || e->error == NULL || e->gen > gen ||
                    (unsigned)e->state > VM_EXEC_DISK_LIMIT)
                        abort();
                if (viewmodel_exec_find(vm, e->id) != (long)i)
                        abort();
                if (e->call != -1 &&
                    (e->call < 0 || (size_t)e->call >= viewmodel_ncalls(vm) ||
                     strcmp(viewmodel_call(vm, (size_t)e->call)->id, e->call_id) != 0))
                        abort();
                ns = viewmodel_exec_nsamples(e);
                if (ns > VM_HISTORY || ns > e->nsamples || viewmodel_exec_sample(e, ns) != NULL)
                        abort();
                for (k = 0; k < ns; k++)
                        if (viewmodel_exec_sample(e, k) == NULL)
                                abort();
                if (e->state <= VM_EXEC_RUNNING && !e->removed) {
                        live++;
                        if (e->state == VM_EXEC_RUNNING) {
                                sum.running++;
                                sum.cpu_pct += e->stats.cpu_pct;
                                sum.mem_bytes += e->stats.mem_bytes;
                        }
                }
        }
        if (viewmodel_exec(vm, n) != NULL || viewmodel_nlive(vm) != live)
                abort();
        for (i = 0; i < live; i++) {
                const struct viewmodel_exec *e = viewmodel_live(vm, i);
                if (e == NULL || e->state > VM_EXEC_RUNNING || e->removed)
                        abort();
        }
        if (viewmodel_live(vm, live) != NULL)
                abort();
        viewmodel_host(vm, &h);
        /* the same sum in another order: equal up to rounding */
        if (h.running != sum.running || h.mem_bytes != sum.mem_bytes || !(h.cpu_pct >= 0) ||
            h.cpu_pct - sum.cpu_pct > 1e-6 * (1 + sum.cpu_pct) ||
            sum.cpu_pct - h.cpu_pct > 1e-6 * (1 + sum.cpu_pct))
                abort();
}

static void check(struct script *s)
{
        uint64_t gen = viewmodel_generation(s->vm);
        unsigned dirty = viewmodel_take_dirty(s->vm);

        /* one step per event that changed something, and only then dirty */
        if (gen < s->gen || gen > s->gen + 1 || (gen == s->gen) != (dirty == 0))
                abort();
        s->gen = gen;
        check_session(s->vm);
        check_transcript(s->vm, gen);
        check_calls(s->vm, gen);
        check_execs(s->vm, gen);
}

/* The next line as an event (NULL when it is not JSON). */
static json_t *next_line(struct script *s)
{
        const uint8_t *at = s->p + s->off, *nl = memchr(at, '\n', s->n - s->off);
        size_t len = nl != NULL ? (size_t)(nl - at) : s->n - s->off;

        s->off += len + (nl != NULL);
        return json_loadb((const char *)at, len, JSON_DECODE_ANY | JSON_ALLOW_NUL, NULL);
}

static void feed(struct script *s, int max)
{
        while (max-- > 0 && !done(s)) {
                json_t *ev = s->lines ? next_line(s) : make_event(s);
                viewmodel_event(ev, s->vm);
                json_decref(ev);
                s->events++;
                check(s);
        }
}

static void between_frames(struct viewmodel *vm, int frame, void *ud)
{
        struct script *s = ud;

        if (frame > 0)
                feed(s, s->lines ? 2 : 1 + byte(s) % 8);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        struct script s = {.p = data, .n = size, .lines = size > 0 && data[0] == '{'};
        uint8_t how = s.lines ? data[size - 1] : byte(&s),
                k = s.lines && size > 1 ? data[size - 2] : 0;
        uint64_t ns[MAX_FRAMES];
        struct tui_bench b;

        s.vm = viewmodel_new();
        if (s.vm == NULL)
                abort();
        viewmodel_set_readonly(s.vm, how & 0x80);
        /* One input in eight is also drawn, the rest stay cheap. */
        if (how % 8 == 0) {
                static bool locale;
                if (!locale)
                        setlocale(LC_CTYPE, "C.UTF-8");
                locale = true;
                if (!s.lines)
                        k = byte(&s);
                b = (struct tui_bench){.cols = 60 + k % 161,
                                       .rows = 20 + (k ^ how) % 51,
                                       .frames = 1 + (k >> 5) % MAX_FRAMES,
                                       .detail = how & 0x10,
                                       .before = between_frames,
                                       .ud = &s};
                feed(&s, s.lines ? MAX_EVENTS / 2 : byte(&s) % MAX_EVENTS);
                if (tui_bench_frames(s.vm, &b, ns) < 0)
                        abort();
        }
        feed(&s, MAX_EVENTS);
        viewmodel_free(s.vm);
        return 0;
}
