/* viewmodel: folds the event stream into the state the TUI draws. Every
 * event costs O(1) (amortized arrays, hash indexes by call_id and exec_id,
 * dense sets of the running calls and live executions); nothing here scans
 * all calls or executions. An event it cannot use changes nothing. */
#include "core/view/viewmodel.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/util/buf.h"
#include "core/model/chat.h"
#include "core/view/viewmodel_int.h"

/* The "" every unset string points at, so that readers never see NULL. */
static char vm_empty[1];

static const char *const session_names[] = {
    "idle", "running", "completed", "interrupted", "failed", "max_iterations",
};
static const char *const call_names[] = {"running", "ok", "error", "interrupted"};
static const char *const exec_names[] = {
    "creating", "running",   "paused",     "exited", "signaled",     "timeout",
    "oom",      "cpu_limit", "pids_limit", "killed", "setup_failed", "disk_limit",
};

/* ---- memory ---- */

/* arr with room for `need` elements of `size` bytes (doubling from `min`),
 * or NULL with arr and *cap untouched. */
static void *grow(void *arr, size_t *cap, size_t need, size_t size, size_t min)
{
        size_t ncap = *cap ? *cap : min;
        void *p;

        if (need <= *cap)
                return arr;
        while (ncap < need)
                ncap *= 2;
        p = realloc(arr, ncap * size);
        if (p != NULL)
                *cap = ncap;
        return p;
}

static char *str_dup(const char *s)
{
        char *d;

        if (s == NULL || *s == '\0')
                return vm_empty;
        d = strdup(s);
        return d != NULL ? d : vm_empty;
}

static void str_free(char *s)
{
        if (s != vm_empty)
                free(s);
}

/* ---- the index ---- */

typedef bool (*map_eq)(const struct viewmodel *vm, size_t pos, const void *key);

static uint32_t hash_str(const char *s)
{
        uint64_t h = 0xcbf29ce484222325ull;

        while (*s != '\0') {
                h ^= (unsigned char)*s++;
                h *= 0x100000001b3ull;
        }
        return (uint32_t)(h ^ (h >> 32));
}

static uint32_t hash_u64(uint64_t x)
{
        x ^= x >> 30;
        x *= 0xbf58476d1ce4e5b9ull;
        x ^= x >> 27;
        x *= 0x94d049bb133111ebull;
        x ^= x >> 31;
        return (uint32_t)x;
}

static long map_find(const struct vm_map *m, uint32_t h, map_eq eq, const struct viewmodel *vm,
                     const void *key)
{
        size_t i;

        if (m->cap == 0)
                return -1;
        for (i = h & (m->cap - 1); m->slots[i].pos1 != 0; i = (i + 1) & (m->cap - 1))
                if (m->slots[i].hash == h && eq(vm, m->slots[i].pos1 - 1, key))
                        return (long)(m->slots[i].pos1 - 1);
        return -1;
}

static void map_place(struct vm_slot *slots, size_t cap, struct vm_slot s)
{
        size_t i = s.hash & (cap - 1);

        while (slots[i].pos1 != 0)
                i = (i + 1) & (cap - 1);
        slots[i] = s;
}

/* Adds a key known to be absent; keeps the load at most one half. */
static int map_put(struct vm_map *m, uint32_t h, size_t pos)
{
        if ((m->n + 1) * 2 > m->cap) {
                size_t ncap = m->cap ? m->cap * 2 : 64, i;
                struct vm_slot *ns = calloc(ncap, sizeof(*ns));
                if (ns == NULL)
                        return -ENOMEM;
                for (i = 0; i < m->cap; i++)
                        if (m->slots[i].pos1 != 0)
                                map_place(ns, ncap, m->slots[i]);
                free(m->slots);
                m->slots = ns;
                m->cap = ncap;
        }
        map_place(m->slots, m->cap, (struct vm_slot){.hash = h, .pos1 = (uint32_t)pos + 1});
        m->n++;
        return 0;
}

static bool call_eq(const struct viewmodel *vm, size_t pos, const void *key)
{
        return strcmp(vm->calls[pos].id, key) == 0;
}

static bool exec_eq(const struct viewmodel *vm, size_t pos, const void *key)
{
        return vm->execs[pos].id == *(const uint64_t *)key;
}

long vm_call_index(const struct viewmodel *vm, const char *id)
{
        return id != NULL ? map_find(&vm->call_map, hash_str(id), call_eq, vm, id) : -1;
}

long vm_exec_index(const struct viewmodel *vm, uint64_t id)
{
        return map_find(&vm->exec_map, hash_u64(id), exec_eq, vm, &id);
}

static struct viewmodel_call *call_get(struct viewmodel *vm, const char *id)
{
        long i = map_find(&vm->call_map, hash_str(id), call_eq, vm, id);

        return i < 0 ? NULL : &vm->calls[i];
}

static struct viewmodel_exec *exec_get(struct viewmodel *vm, uint64_t id)
{
        long i = map_find(&vm->exec_map, hash_u64(id), exec_eq, vm, &id);

        return i < 0 ? NULL : &vm->execs[i];
}

/* ---- sets ---- */

static int set_add(struct vm_set *s, size_t pos, size_t *at)
{
        size_t *p = grow(s->pos, &s->cap, s->n + 1, sizeof(*s->pos), 16);

        if (p == NULL)
                return -ENOMEM;
        s->pos = p;
        *at = s->n;
        s->pos[s->n++] = pos;
        return 0;
}

/* Removes the element at `at`; returns the position moved into its place
 * (whose `at` the caller updates), or SIZE_MAX. */
static size_t set_del(struct vm_set *s, size_t at)
{
        s->pos[at] = s->pos[--s->n];
        return at < s->n ? s->pos[at] : SIZE_MAX;
}

static void running_del(struct viewmodel *vm, struct viewmodel_call *c)
{
        size_t moved = set_del(&vm->running, c->running_pos__);

        if (moved != SIZE_MAX)
                vm->calls[moved].running_pos__ = c->running_pos__;
}

static void live_del(struct viewmodel *vm, struct viewmodel_exec *e)
{
        size_t moved = set_del(&vm->live, e->live_pos__);

        if (moved != SIZE_MAX)
                vm->execs[moved].live_pos__ = e->live_pos__;
}

/* ---- reading events ---- */

static const char *get_str(const json_t *ev, const char *key, size_t *len)
{
        const json_t *v = json_object_get(ev, key);

        if (!json_is_string(v))
                return NULL;
        if (len != NULL)
                *len = json_string_length(v);
        return json_string_value(v);
}

/* An integer, or a real with an integral value (as another writer may
 * have put it). */
static bool get_int(const json_t *ev, const char *key, int64_t *out)
{
        const json_t *v = json_object_get(ev, key);
        double d;

        if (json_is_integer(v)) {
                *out = json_integer_value(v);
                return true;
        }
        if (!json_is_real(v))
                return false;
        d = json_real_value(v);
        if (!isfinite(d) || d != floor(d) || d < -9.0e18 || d > 9.0e18)
                return false;
        *out = (int64_t)d;
        return true;
}

static bool get_u64(const json_t *ev, const char *key, uint64_t *out)
{
        int64_t v;

        if (!get_int(ev, key, &v) || v < 0)
                return false;
        *out = (uint64_t)v;
        return true;
}

static bool get_num(const json_t *ev, const char *key, double *out)
{
        const json_t *v = json_object_get(ev, key);

        if (!json_is_number(v) || !isfinite(json_number_value(v)))
                return false;
        *out = json_number_value(v);
        return true;
}

static bool get_bool(const json_t *ev, const char *key, bool *out)
{
        const json_t *v = json_object_get(ev, key);

        if (!json_is_boolean(v))
                return false;
        *out = json_is_true(v);
        return true;
}

static void get_limits(const json_t *ev, struct viewmodel_limits *l)
{
        const json_t *o = json_object_get(ev, "limits");

        if (!json_is_object(o))
                return;
        get_u64(o, "memory_bytes", &l->memory_bytes);
        get_u64(o, "cpu_ms", &l->cpu_ms);
        get_u64(o, "timeout_ms", &l->timeout_ms);
        get_u64(o, "pids", &l->pids);
        get_u64(o, "tmpfs_bytes", &l->tmpfs_bytes);
        get_u64(o, "output_bytes", &l->output_bytes);
        get_u64(o, "disk_bytes", &l->disk_bytes);
}

/* Index of `s` in names[from..n), or -1. */
static int name_index(const char *const *names, int from, int n, const char *s)
{
        int i;

        for (i = from; s != NULL && i < n; i++)
                if (strcmp(names[i], s) == 0)
                        return i;
        return -1;
}

/* ---- the one-line summary of a call ---- */

/* The argument that says the most about a call of each tool. */
static const char *summary_key(const char *tool)
{
        static const char *const keys[][2] = {
            {"bash", "command"},         {"read", "path"},
            {"write", "path"},           {"edit", "path"},
            {"run_python_code", "code"}, {"read_cache", "key"},
            {"write_cache", "key"},
        };
        size_t i;

        for (i = 0; i < NELEM(keys); i++)
                if (strcmp(keys[i][0], tool) == 0)
                        return keys[i][1];
        return NULL;
}

/* Bytes in the UTF-8 character starting at s (1 for an invalid one). */
static size_t utf8_len(const unsigned char *s)
{
        size_t n = s[0] < 0x80 ? 1 : (s[0] & 0xe0) == 0xc0 ? 2 : (s[0] & 0xf0) == 0xe0 ? 3 : 4, i;

        if ((s[0] & 0xc0) == 0x80 || s[0] >= 0xf8)
                return 1;
        for (i = 1; i < n; i++)
                if ((s[i] & 0xc0) != 0x80)
                        return 1;
        return n;
}

/* Appends s to out[*pos..] on one line: runs of white space and control
 * characters (C0, DEL, C1) become one space; a character is never cut, and
 * "…" marks text that did not fit. */
static void put_line(char *out, size_t size, size_t *pos, const char *s)
{
        const unsigned char *p = (const unsigned char *)s;
        const size_t end = size - 4, start = *pos; /* room for "…" and the NUL */
        bool space = false;

        while (*p != '\0') {
                size_t n = utf8_len(p);
                bool ctl = *p <= ' ' || *p == 0x7f || (n == 2 && p[0] == 0xc2 && p[1] < 0xa0);
                if (ctl) {
                        space = *pos > start;
                        p += n;
                        continue;
                }
                if (*pos + space + n > end) {
                        memcpy(out + *pos, "\xe2\x80\xa6", 3);
                        *pos += 3;
                        break;
                }
                if (space)
                        out[(*pos)++] = ' ';
                space = false;
                if (n == 1 && *p >= 0x80) {
                        out[(*pos)++] = '?';
                } else {
                        memcpy(out + *pos, p, n);
                        *pos += n;
                }
                p += n;
        }
        out[*pos] = '\0';
}

/* The first string member of an object, or NULL. */
static const char *first_string(const json_t *o)
{
        const char *k;
        json_t *v;

        json_object_foreach ((json_t *)o, k, v)
                if (json_is_string(v))
                        return json_string_value(v);
        return NULL;
}

static void summarize(char *out, const char *name, const char *args)
{
        json_t *j = json_loads(args, JSON_DECODE_ANY, NULL);
        const char *key = summary_key(name), *what = args;
        size_t pos = 0;

        if (json_is_object(j))
                what = key != NULL ? get_str(j, key, NULL) : first_string(j);
        else if (j != NULL)
                what = json_is_string(j) ? json_string_value(j) : NULL;
        put_line(out, VM_SUMMARY_MAX, &pos, name);
        if (what != NULL && *what != '\0' && pos + 6 < VM_SUMMARY_MAX) {
                out[pos++] = ':';
                out[pos++] = ' ';
                put_line(out, VM_SUMMARY_MAX, &pos, what);
                if (pos >= 2 && out[pos - 1] == ' ' && out[pos - 2] == ':')
                        out[pos -= 2] = '\0';
        }
        json_decref(j);
}

/* ---- the transcript ---- */

static struct viewmodel_entry *entry_add(struct viewmodel *vm, enum vm_entry_kind kind,
                                         const char *text, size_t len, uint64_t t)
{
        struct viewmodel_entry *e =
            grow(vm->entries, &vm->entries_cap, vm->nentries + 1, sizeof(*e), 32);

        if (e == NULL)
                return NULL;
        vm->entries = e;
        e = &vm->entries[vm->nentries];
        *e = (struct viewmodel_entry){.kind = kind,
                                      .text = vm_empty,
                                      .t_ms = t,
                                      .turn = vm->s.turn,
                                      .retry_in_ms = -1,
                                      .gen = vm->gen + 1};
        if (len > 0 && buf_append(&e->text, &e->len, &e->cap__, text, len) < 0)
                return NULL;
        vm->nentries++;
        return e;
}

static struct viewmodel_entry *entry_addf(struct viewmodel *vm, enum vm_entry_kind kind, uint64_t t,
                                          const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

static struct viewmodel_entry *entry_addf(struct viewmodel *vm, enum vm_entry_kind kind, uint64_t t,
                                          const char *fmt, ...)
{
        char buf[128];
        va_list ap;
        int n;

        va_start(ap, fmt);
        n = vsnprintf(buf, sizeof(buf), fmt, ap);
        va_end(ap);
        return entry_add(vm, kind, buf, n < 0 ? 0 : strnlen(buf, sizeof(buf)), t);
}

/* Ends the streaming assistant message, if any; true when there was one. */
static bool close_open_entry(struct viewmodel *vm)
{
        struct viewmodel_entry *e;

        if (vm->open_entry < 0)
                return false;
        e = &vm->entries[vm->open_entry];
        e->open = false;
        e->gen = vm->gen + 1;
        vm->open_entry = -1;
        return true;
}

/* ---- session events ---- */

static void vm_clear(struct viewmodel *vm);

static void add_usage(struct viewmodel *vm, const json_t *ev, bool total)
{
        const json_t *u = json_object_get(ev, "usage");
        uint64_t in, out;

        if (!json_is_object(u))
                return;
        if (get_u64(u, "prompt_tokens", &in) || get_u64(u, "input_tokens", &in))
                vm->s.tokens_in = total ? in : vm->s.tokens_in + in;
        if (get_u64(u, "completion_tokens", &out) || get_u64(u, "output_tokens", &out))
                vm->s.tokens_out = total ? out : vm->s.tokens_out + out;
}

/* Sets the session's strings from session.start, or to "" when ev is NULL
 * (freeing what they held). */
static void session_strings(struct viewmodel_session *s, const json_t *ev)
{
        const struct {
                char **field;
                const char *key;
        } f[] = {
            {&s->id, "session_id"},   {&s->mode, "mode"},
            {&s->model, "model"},     {&s->workspace, "workspace"},
            {&s->version, "version"}, {&s->workspace_mode, "workspace_mode"},
        };
        size_t i;

        for (i = 0; i < NELEM(f); i++) {
                str_free(*f[i].field);
                *f[i].field = str_dup(ev != NULL ? get_str(ev, f[i].key, NULL) : NULL);
        }
}

static void per_process(struct viewmodel_session *s, const json_t *missing)
{
        size_t i;

        s->limits_per_process[0] = '\0';
        for (i = 0; i < json_array_size(missing); i++) {
                const char *m = json_string_value(json_array_get(missing, i));
                size_t n = strlen(s->limits_per_process);
                if (m != NULL)
                        snprintf(s->limits_per_process + n, sizeof(s->limits_per_process) - n,
                                 "%s%s", n > 0 ? ", " : "", m);
        }
}

static unsigned on_session_start(struct viewmodel *vm, const json_t *ev, uint64_t t)
{
        struct viewmodel_session *s = &vm->s;
        unsigned dirty = VM_DIRTY_SESSION;
        int64_t max;

        if (s->state != VM_IDLE) {
                vm_clear(vm);
                dirty = VM_DIRTY_SESSION | VM_DIRTY_TRANSCRIPT | VM_DIRTY_CALLS | VM_DIRTY_EXECS;
        }
        session_strings(s, ev);
        get_bool(ev, "scripted", &s->scripted);
        get_limits(ev, &s->limits);
        per_process(s, json_object_get(ev, "limits_per_process"));
        if (get_int(ev, "max_iterations", &max) ||
            get_int(json_object_get(ev, "limits"), "max_iterations", &max))
                s->max_turns = max > 0 ? max : 0;
        s->state = VM_RUNNING;
        s->start_ms = t;
        s->elapsed_ms = t;
        return dirty;
}

/* Calls still running when the session ends were cut short. */
static void interrupt_running(struct viewmodel *vm, uint64_t t)
{
        while (vm->running.n > 0) {
                struct viewmodel_call *c = &vm->calls[vm->running.pos[vm->running.n - 1]];
                c->state = VM_CALL_INTERRUPTED;
                c->end_ms = t;
                c->duration_ms = t > c->start_ms ? t - c->start_ms : 0;
                c->gen = vm->gen + 1;
                vm->running.n--;
        }
}

static unsigned on_session_end(struct viewmodel *vm, const json_t *ev, uint64_t t)
{
        struct viewmodel_session *s = &vm->s;
        int st = name_index(session_names, VM_COMPLETED, NELEM(session_names),
                            get_str(ev, "status", NULL));
        unsigned dirty = VM_DIRTY_SESSION;
        int64_t turns;
        uint64_t n;

        vm->nwarm = 0; /* the pool ends with the session */
        if (s->state != VM_IDLE && s->state != VM_RUNNING)
                return 0;
        s->state = st < 0 ? VM_COMPLETED : (enum vm_session_state)st;
        s->in_turn = false;
        if (get_int(ev, "turns", &turns) && turns > s->turn)
                s->turn = turns;
        if (get_u64(ev, "tool_calls", &n))
                s->tool_calls = n;
        add_usage(vm, ev, true);
        s->elapsed_ms = get_u64(ev, "duration_ms", &n) ? n : t;
        if (close_open_entry(vm))
                dirty |= VM_DIRTY_TRANSCRIPT;
        if (vm->running.n > 0)
                dirty |= VM_DIRTY_CALLS;
        interrupt_running(vm, t);
        return dirty;
}

static unsigned on_user_message(struct viewmodel *vm, const json_t *ev, uint64_t t)
{
        size_t len;
        const char *text = get_str(ev, "text", &len);

        if (text == NULL || entry_add(vm, VM_ENTRY_USER, text, len, t) == NULL)
                return 0;
        close_open_entry(vm);
        return VM_DIRTY_TRANSCRIPT;
}

static unsigned on_note(struct viewmodel *vm, const json_t *ev, uint64_t t)
{
        size_t len;
        const char *text = get_str(ev, "text", &len);

        if (text == NULL)
                text = get_str(ev, "message", &len);
        if (text == NULL || entry_add(vm, VM_ENTRY_NOTE, text, len, t) == NULL)
                return 0;
        return VM_DIRTY_TRANSCRIPT;
}

static unsigned on_turn_start(struct viewmodel *vm, const json_t *ev, uint64_t t)
{
        int64_t turn;

        if (!get_int(ev, "turn", &turn) || turn < 0)
                return 0;
        vm->s.turn = turn;
        vm->s.in_turn = true;
        if (vm->s.state == VM_IDLE)
                vm->s.state = VM_RUNNING;
        return VM_DIRTY_SESSION;
}

static unsigned on_turn_end(struct viewmodel *vm, const json_t *ev, uint64_t t)
{
        if (!vm->s.in_turn)
                return 0;
        vm->s.in_turn = false;
        return VM_DIRTY_SESSION;
}

static unsigned on_model_delta(struct viewmodel *vm, const json_t *ev, uint64_t t)
{
        struct viewmodel_entry *e;
        size_t len;
        const char *text = get_str(ev, "text", &len);

        if (text == NULL || len == 0)
                return 0;
        if (vm->open_entry >= 0) {
                e = &vm->entries[vm->open_entry];
                if (buf_append(&e->text, &e->len, &e->cap__, text, len) < 0)
                        return 0;
                e->gen = vm->gen + 1;
                return VM_DIRTY_TRANSCRIPT;
        }
        e = entry_add(vm, VM_ENTRY_ASSISTANT, text, len, t);
        if (e == NULL)
                return 0;
        e->open = true;
        vm->open_entry = (long)vm->nentries - 1;
        return VM_DIRTY_TRANSCRIPT;
}

/* The final message: its content replaces what was streamed. */
static unsigned on_model_message(struct viewmodel *vm, const json_t *ev, uint64_t t)
{
        const json_t *calls = json_object_get(ev, "tool_calls");
        size_t len, ncalls = json_is_array(calls) ? json_array_size(calls) : 0;
        const char *content = get_str(ev, "content", &len);
        uint64_t in = vm->s.tokens_in, out = vm->s.tokens_out;
        struct viewmodel_entry *e = NULL;
        unsigned dirty = 0;
        bool refusal;
        char note[160];

        add_usage(vm, ev, false);
        if (in != vm->s.tokens_in || out != vm->s.tokens_out)
                dirty |= VM_DIRTY_SESSION;
        if (vm->open_entry >= 0)
                e = &vm->entries[vm->open_entry];
        if (content != NULL && len > 0) {
                if (e == NULL)
                        e = entry_add(vm, VM_ENTRY_ASSISTANT, content, len, t);
                else if (e->len != len || memcmp(e->text, content, len) != 0) {
                        e->len = 0;
                        e->text[0] = '\0';
                        buf_append(&e->text, &e->len, &e->cap__, content, len);
                }
        }
        if (e == NULL)
                return dirty;
        e->ntool_calls = ncalls;
        e->refusal = get_bool(ev, "refusal", &refusal) && refusal;
        e->gen = vm->gen + 1;
        close_open_entry(vm);
        /* an answer cut short says so right below it */
        if (chat_finish_note(get_str(ev, "finish_reason", NULL), note, sizeof(note)))
                entry_add(vm, VM_ENTRY_NOTE, note, strlen(note), t);
        return dirty | VM_DIRTY_TRANSCRIPT;
}

/* A retry's answer differs from what streamed: the end of the streaming
 * message is taken back. */
static unsigned on_model_discard(struct viewmodel *vm, const json_t *ev, uint64_t t)
{
        struct viewmodel_entry *e;
        uint64_t bytes;

        if (vm->open_entry < 0 || !get_u64(ev, "bytes", &bytes) || bytes == 0)
                return 0;
        e = &vm->entries[vm->open_entry];
        e->len = bytes < e->len ? e->len - (size_t)bytes : 0;
        e->text[e->len] = '\0';
        e->gen = vm->gen + 1;
        return VM_DIRTY_TRANSCRIPT;
}

static unsigned on_model_error(struct viewmodel *vm, const json_t *ev, uint64_t t)
{
        size_t len;
        const char *msg = get_str(ev, "message", &len);
        struct viewmodel_entry *e;
        bool final;
        int64_t v;

        if (msg == NULL) {
                msg = "model error";
                len = strlen(msg);
        }
        e = entry_add(vm, VM_ENTRY_ERROR, msg, len, t);
        if (e == NULL)
                return 0;
        if (get_int(ev, "http_status", &v) && v > 0 && v < 1000)
                e->http_status = (int)v;
        if (get_int(ev, "retry_in_ms", &v) && v >= 0 && !(get_bool(ev, "final", &final) && final))
                e->retry_in_ms = v;
        /* What streamed before the error stays; a retry goes on with the
         * same message (model.discard takes back what it does not keep). */
        if (e->retry_in_ms < 0)
                close_open_entry(vm);
        return VM_DIRTY_TRANSCRIPT;
}

static unsigned on_interrupt(struct viewmodel *vm, const json_t *ev, uint64_t t)
{
        int64_t turn = vm->s.turn;
        size_t i;

        get_int(ev, "turn", &turn);
        if (entry_addf(vm, VM_ENTRY_INTERRUPT, t, "operator interrupted turn %lld",
                       (long long)turn) == NULL)
                return 0;
        vm->entries[vm->nentries - 1].turn = turn;
        close_open_entry(vm);
        /* Their results, when they fail, are the interrupt's doing. */
        for (i = 0; i < vm->running.n; i++)
                vm->calls[vm->running.pos[i]].interrupt__ = true;
        return VM_DIRTY_TRANSCRIPT;
}

static unsigned on_kill(struct viewmodel *vm, const json_t *ev, uint64_t t)
{
        struct viewmodel_entry *ent;
        struct viewmodel_exec *e;
        unsigned dirty = VM_DIRTY_TRANSCRIPT;
        uint64_t id;

        if (!get_u64(ev, "exec_id", &id))
                return 0;
        ent = entry_addf(vm, VM_ENTRY_KILL, t, "operator killed execution %llu",
                         (unsigned long long)id);
        if (ent == NULL)
                return 0;
        ent->exec_id = id;
        e = exec_get(vm, id);
        if (e != NULL && !e->kill_requested) {
                e->kill_requested = true;
                e->gen = vm->gen + 1;
                dirty |= VM_DIRTY_EXECS;
        }
        return dirty;
}

/* ---- tool calls ---- */

/* The raw JSON text of a call's arguments (a string, or any JSON value). */
static char *args_text(const json_t *ev)
{
        const json_t *a = json_object_get(ev, "arguments");
        char *d, *s;

        if (json_is_string(a))
                return str_dup(json_string_value(a));
        if (a == NULL || json_is_null(a))
                return vm_empty;
        d = json_dumps(a, JSON_COMPACT | JSON_ENCODE_ANY);
        s = str_dup(d);
        free(d);
        return s;
}

static unsigned on_tool_call(struct viewmodel *vm, const json_t *ev, uint64_t t)
{
        const char *id = get_str(ev, "call_id", NULL), *name = get_str(ev, "name", NULL);
        struct viewmodel_call *c;
        struct viewmodel_entry *e;
        size_t at;

        if (id == NULL || *id == '\0' || call_get(vm, id) != NULL || vm->ncalls >= UINT32_MAX - 1)
                return 0;
        c = grow(vm->calls, &vm->calls_cap, vm->ncalls + 1, sizeof(*c), 64);
        if (c == NULL)
                return 0;
        vm->calls = c;
        if (set_add(&vm->running, vm->ncalls, &at) < 0)
                return 0;
        c = &vm->calls[vm->ncalls];
        *c = (struct viewmodel_call){.state = VM_CALL_RUNNING,
                                     .turn = vm->s.turn,
                                     .start_ms = t,
                                     .exit_code = -1,
                                     .output = vm_empty,
                                     .where = vm_empty,
                                     .asked_by = vm_empty,
                                     .decided_by = vm_empty,
                                     .rule = vm_empty,
                                     .reason = vm_empty,
                                     .rule_added = vm_empty,
                                     .edited = vm_empty,
                                     .running_pos__ = at,
                                     .gen = vm->gen + 1};
        c->id = strdup(id);
        if (c->id == NULL || map_put(&vm->call_map, hash_str(id), vm->ncalls) < 0) {
                free(c->id);
                vm->running.n--;
                return 0;
        }
        c->name = str_dup(name != NULL ? name : "?");
        c->arguments = args_text(ev);
        summarize(c->summary, c->name, c->arguments);
        vm->ncalls++;
        vm->s.tool_calls++;
        /* the transcript shows it inline, where it came */
        e = entry_add(vm, VM_ENTRY_TOOL, "", 0, t);
        if (e != NULL)
                e->call = (long)vm->ncalls - 1;
        return VM_DIRTY_CALLS | VM_DIRTY_SESSION | VM_DIRTY_TRANSCRIPT;
}

/* Keeps the tail: past the cap, the oldest half goes, so each byte is moved
 * at most a few times. The cut lands after a newline when one is near, and
 * never inside a character. */
static uint64_t count_lines(const char *p, size_t n)
{
        const char *end = p + n, *nl;
        uint64_t k = 0;

        while (p < end && (nl = memchr(p, '\n', (size_t)(end - p))) != NULL) {
                k++;
                p = nl + 1;
        }
        return k;
}

static void output_append(struct viewmodel_call *c, const char *data, size_t n)
{
        const size_t half = VM_OUTPUT_CAP / 2;
        size_t keep, cut;
        const char *nl;

        c->output_bytes += n;
        if (n > half) {
                c->output_dropped_lines +=
                    count_lines(c->output, c->output_len) + count_lines(data, n - half);
                data += n - half;
                n = half;
                while (n > 0 && ((unsigned char)*data & 0xc0) == 0x80) {
                        data++;
                        n--;
                }
                c->output_len = 0;
                c->output_dropped = true;
        }
        /* Kept bytes and the NUL fit in VM_OUTPUT_CAP. */
        if (c->output_len + n >= VM_OUTPUT_CAP) {
                keep = half - n;
                cut = c->output_len - keep;
                nl = memchr(c->output + cut, '\n', keep < 4096 ? keep : 4096);
                if (nl != NULL)
                        cut = (size_t)(nl - c->output) + 1;
                while (cut < c->output_len && ((unsigned char)c->output[cut] & 0xc0) == 0x80)
                        cut++;
                c->output_dropped_lines += count_lines(c->output, cut);
                memmove(c->output, c->output + cut, c->output_len - cut);
                c->output_len -= cut;
                c->output_dropped = true;
        }
        buf_append(&c->output, &c->output_len, &c->output_cap__, data, n);
}

static struct viewmodel_exec *exec_of(struct viewmodel *vm, const json_t *ev);

static unsigned on_tool_output(struct viewmodel *vm, const json_t *ev, uint64_t t)
{
        const char *id = get_str(ev, "call_id", NULL);
        struct viewmodel_call *c = id != NULL ? call_get(vm, id) : NULL;
        size_t len;
        const char *data = get_str(ev, "data", &len);

        struct viewmodel_exec *e = exec_of(vm, ev);

        if (c == NULL || data == NULL || len == 0 || c->state != VM_CALL_RUNNING)
                return 0;
        output_append(c, data, len);
        c->streamed__ = true;
        c->gen = vm->gen + 1;
        /* in a session an execution's output comes only as tool.output */
        if (e == NULL)
                return VM_DIRTY_CALLS;
        e->output_bytes += len;
        e->gen = vm->gen + 1;
        return VM_DIRTY_CALLS | VM_DIRTY_EXECS;
}

static unsigned on_tool_result(struct viewmodel *vm, const json_t *ev, uint64_t t)
{
        const char *id = get_str(ev, "call_id", NULL);
        struct viewmodel_call *c = id != NULL ? call_get(vm, id) : NULL;
        bool ok, interrupted = false;
        const char *out;
        int64_t code;
        size_t len;

        if (c == NULL || c->state != VM_CALL_RUNNING)
                return 0;
        if (get_int(ev, "exit_code", &code) && code >= -1 && code <= 255)
                c->exit_code = (int)code;
        if (!get_bool(ev, "ok", &ok))
                ok = c->exit_code == 0;
        get_bool(ev, "interrupted", &interrupted);
        get_bool(ev, "cancelled", &c->cancelled);
        if (ok)
                c->state = VM_CALL_OK;
        else
                c->state = interrupted || c->interrupt__ ? VM_CALL_INTERRUPTED : VM_CALL_ERROR;
        get_bool(ev, "truncated", &c->truncated);
        c->end_ms = t;
        if (!get_u64(ev, "duration_ms", &c->duration_ms))
                c->duration_ms = t > c->start_ms ? t - c->start_ms : 0;
        out = get_str(ev, "output", &len);
        if (!c->streamed__ && out != NULL && len > 0)
                output_append(c, out, len);
        running_del(vm, c);
        c->gen = vm->gen + 1;
        return VM_DIRTY_CALLS;
}

/* ---- approvals ---- */

static struct viewmodel_call *running_call_of(struct viewmodel *vm, const json_t *ev)
{
        const char *id = get_str(ev, "call_id", NULL);
        struct viewmodel_call *c = id != NULL ? call_get(vm, id) : NULL;

        return c != NULL && c->state == VM_CALL_RUNNING ? c : NULL;
}

static void str_set(char **field, const char *s)
{
        str_free(*field);
        *field = str_dup(s);
}

/* approval.request: the call waits for the operator, with no execution. */
static unsigned on_approval_request(struct viewmodel *vm, const json_t *ev, uint64_t t)
{
        struct viewmodel_call *c = running_call_of(vm, ev);

        if (c == NULL || c->approval != VM_APPROVAL_NONE)
                return 0;
        c->approval = VM_APPROVAL_WAITING;
        c->asked_ms = t;
        str_set(&c->where, get_str(ev, "where", NULL));
        str_set(&c->asked_by, get_str(ev, "asked_by", NULL));
        get_limits(ev, &c->approval_limits);
        c->gen = vm->gen + 1;
        return VM_DIRTY_CALLS | VM_DIRTY_TRANSCRIPT | VM_DIRTY_EXECS;
}

/* The transcript's line for a decision worth reading later: each of the
 * operator's, and a rule's denial. */
static void decision_entry(struct viewmodel *vm, const struct viewmodel_call *c, bool allow,
                           uint64_t t)
{
        char line[1600];
        const char *by = c->decided_by;
        int n;

        if (strcmp(by, "operator") == 0)
                n = snprintf(line, sizeof(line), "operator %s %s", allow ? "allowed" : "denied",
                             c->summary);
        else if (!allow && strcmp(by, "rule") == 0)
                n = snprintf(line, sizeof(line), "rule '%.200s' denied %s", c->rule, c->summary);
        else if (!allow)
                n = snprintf(line, sizeof(line), "denied %s (%s)", c->summary, by);
        else
                return;
        if (n < 0 || (size_t)n >= sizeof(line))
                n = (int)strlen(line);
        if (c->edited[0] != '\0')
                n += snprintf(line + n, sizeof(line) - (size_t)n, ", with edited arguments");
        if (c->rule_added[0] != '\0' && (size_t)n < sizeof(line))
                n += snprintf(line + n, sizeof(line) - (size_t)n,
                              ", and calls like it (rule %.300s)", c->rule_added);
        if (!allow && c->reason[0] != '\0' && (size_t)n < sizeof(line))
                snprintf(line + n, sizeof(line) - (size_t)n, ": %.1000s", c->reason);
        entry_add(vm, VM_ENTRY_APPROVAL, line, strnlen(line, sizeof(line)), t);
}

/* approval.decision: after a request, or alone for a rule that decided at
 * once (a rule's allow adds no transcript line). */
static unsigned on_approval_decision(struct viewmodel *vm, const json_t *ev, uint64_t t)
{
        struct viewmodel_call *c = running_call_of(vm, ev);
        const char *d = get_str(ev, "decision", NULL);
        bool allow;

        if (c == NULL || d == NULL || (strcmp(d, "allow") != 0 && strcmp(d, "deny") != 0) ||
            (c->approval != VM_APPROVAL_NONE && c->approval != VM_APPROVAL_WAITING))
                return 0;
        allow = strcmp(d, "allow") == 0;
        c->approval = allow ? VM_APPROVAL_ALLOWED : VM_APPROVAL_DENIED;
        str_set(&c->decided_by, get_str(ev, "by", NULL));
        str_set(&c->rule, get_str(ev, "rule", NULL));
        str_set(&c->reason, get_str(ev, "reason", NULL));
        str_set(&c->rule_added, get_str(ev, "rule_added", NULL));
        str_set(&c->edited, get_str(ev, "arguments", NULL));
        get_u64(ev, "waited_ms", &c->waited_ms);
        /* what runs is the edited call: its line says so */
        if (c->edited[0] != '\0')
                summarize(c->summary, c->name, c->edited);
        decision_entry(vm, c, allow, t);
        c->gen = vm->gen + 1;
        return VM_DIRTY_CALLS | VM_DIRTY_TRANSCRIPT | VM_DIRTY_EXECS;
}

/* ---- executions ---- */

static unsigned link_call(struct viewmodel *vm, struct viewmodel_exec *e)
{
        struct viewmodel_call *c = call_get(vm, e->call_id);
        uint64_t *ids;

        if (c == NULL)
                return 0;
        ids = grow(c->exec_ids, &c->execs_cap__, c->nexecs + 1, sizeof(*ids), 1);
        if (ids == NULL)
                return 0;
        c->exec_ids = ids;
        c->exec_ids[c->nexecs++] = e->id;
        c->gen = vm->gen + 1;
        e->call = c - vm->calls;
        return VM_DIRTY_CALLS;
}

static unsigned on_exec_create(struct viewmodel *vm, const json_t *ev, uint64_t t)
{
        const char *iso = get_str(ev, "isolation", NULL);
        struct viewmodel_exec *e;
        uint64_t id;
        size_t at;

        if (!get_u64(ev, "exec_id", &id) || exec_get(vm, id) != NULL ||
            vm->nexecs >= UINT32_MAX - 1)
                return 0;
        e = grow(vm->execs, &vm->execs_cap, vm->nexecs + 1, sizeof(*e), 16);
        if (e == NULL)
                return 0;
        vm->execs = e;
        if (set_add(&vm->live, vm->nexecs, &at) < 0)
                return 0;
        if (map_put(&vm->exec_map, hash_u64(id), vm->nexecs) < 0) {
                vm->live.n--;
                return 0;
        }
        e = &vm->execs[vm->nexecs++];
        *e = (struct viewmodel_exec){.id = id,
                                     .call = -1,
                                     .state = VM_EXEC_CREATING,
                                     .created_ms = t,
                                     .exit_code = -1,
                                     .error = vm_empty,
                                     .live_pos__ = at,
                                     .gen = vm->gen + 1};
        e->call_id = str_dup(get_str(ev, "call_id", NULL));
        e->label = str_dup(get_str(ev, "label", NULL));
        e->image = str_dup(get_str(ev, "image", NULL));
        get_bool(ev, "warm", &e->warm);
        e->sandbox = iso != NULL && strcmp(iso, "sandbox") == 0;
        get_limits(ev, &e->limits);
        return VM_DIRTY_EXECS | link_call(vm, e);
}

static struct viewmodel_exec *exec_of(struct viewmodel *vm, const json_t *ev)
{
        uint64_t id;

        return get_u64(ev, "exec_id", &id) ? exec_get(vm, id) : NULL;
}

static unsigned on_exec_start(struct viewmodel *vm, const json_t *ev, uint64_t t)
{
        struct viewmodel_exec *e = exec_of(vm, ev);
        int64_t pid;

        if (e == NULL || e->state != VM_EXEC_CREATING || e->removed)
                return 0;
        e->state = VM_EXEC_RUNNING;
        e->started_ms = t;
        if (get_int(ev, "pid", &pid) && pid > 0 && pid <= INT32_MAX)
                e->pid = (int)pid;
        get_u64(ev, "setup_us", &e->setup_us);
        e->gen = vm->gen + 1;
        return VM_DIRTY_EXECS;
}

/* exec.state: the engine's lifecycle of a container, as it enters each. */
static unsigned on_exec_state(struct viewmodel *vm, const json_t *ev, uint64_t t)
{
        struct viewmodel_exec *e = exec_of(vm, ev);
        const char *st = get_str(ev, "state", NULL);

        (void)t;
        if (e == NULL || e->removed || st == NULL)
                return 0;
        snprintf(e->runtime_state, sizeof(e->runtime_state), "%s", st);
        e->gen = vm->gen + 1;
        return VM_DIRTY_EXECS;
}

/* exec.pause and exec.resume: only a started, live execution changes. */
static unsigned on_exec_pause(struct viewmodel *vm, const json_t *ev, uint64_t t)
{
        struct viewmodel_exec *e = exec_of(vm, ev);
        bool pause = strcmp(get_str(ev, "type", NULL), "exec.pause") == 0;

        if (e == NULL || e->removed || e->state != (pause ? VM_EXEC_RUNNING : VM_EXEC_PAUSED))
                return 0;
        e->state = pause ? VM_EXEC_PAUSED : VM_EXEC_RUNNING;
        e->gen = vm->gen + 1;
        return VM_DIRTY_EXECS;
}

static unsigned on_exec_output(struct viewmodel *vm, const json_t *ev, uint64_t t)
{
        struct viewmodel_exec *e = exec_of(vm, ev);
        size_t len;

        if (e == NULL || get_str(ev, "data", &len) == NULL || len == 0)
                return 0;
        e->output_bytes += len;
        e->gen = vm->gen + 1;
        return VM_DIRTY_EXECS;
}

/* The history covers the execution's whole life in at most VM_HISTORY
 * buckets: when they are full, neighbours merge in pairs and each bucket
 * then stands for twice as many samples, so a slow leak over minutes shows
 * as a slope, not as the flat last few seconds. A bucket keeps the highest
 * of its samples (a spike is never averaged away). The array grows with
 * the samples, so that the many short executions of a session cost little. */
static void hist_merge(struct viewmodel_sample *into, const struct viewmodel_sample *s)
{
        if (s->cpu_pct > into->cpu_pct)
                into->cpu_pct = s->cpu_pct;
        if (s->mem_bytes > into->mem_bytes)
                into->mem_bytes = s->mem_bytes;
        if (s->pids > into->pids)
                into->pids = s->pids;
}

static int hist_push(struct viewmodel_exec *e, const struct viewmodel_sample *smp, uint64_t t)
{
        uint32_t i;

        if (e->hist_n__ == 0)
                e->hist_t0__ = t;
        e->hist_t1__ = t;
        if (e->hist_n__ > 0 && e->hist_fill__ < e->hist_span__) { /* the open bucket */
                hist_merge(&e->hist__[e->hist_n__ - 1], smp);
                e->hist_fill__++;
                return 0;
        }
        if (e->hist_n__ == VM_HISTORY) {
                for (i = 0; i < VM_HISTORY / 2; i++) {
                        e->hist__[i] = e->hist__[2 * i];
                        hist_merge(&e->hist__[i], &e->hist__[2 * i + 1]);
                }
                e->hist_n__ = VM_HISTORY / 2;
                e->hist_span__ *= 2;
        }
        if (e->hist_n__ == e->hist_cap__) {
                uint32_t ncap = e->hist_cap__ ? e->hist_cap__ * 2 : 8;
                struct viewmodel_sample *h;
                if (ncap > VM_HISTORY)
                        ncap = VM_HISTORY;
                h = realloc(e->hist__, ncap * sizeof(*h));
                if (h == NULL)
                        return -ENOMEM;
                e->hist__ = h;
                e->hist_cap__ = ncap;
        }
        if (e->hist_span__ == 0)
                e->hist_span__ = 1;
        e->hist__[e->hist_n__++] = *smp;
        e->hist_fill__ = 1;
        return 0;
}

static unsigned on_exec_stats(struct viewmodel *vm, const json_t *ev, uint64_t t)
{
        struct viewmodel_exec *e = exec_of(vm, ev);
        struct viewmodel_stats *st;
        struct viewmodel_sample smp;

        if (e == NULL || !viewmodel_exec_live(e) || e->removed)
                return 0;
        st = &e->stats;
        get_num(ev, "cpu_pct", &st->cpu_pct);
        if (st->cpu_pct < 0)
                st->cpu_pct = 0;
        get_u64(ev, "cpu_ms", &st->cpu_ms);
        get_u64(ev, "mem_bytes", &st->mem_bytes);
        get_u64(ev, "mem_peak_bytes", &st->mem_peak_bytes);
        get_u64(ev, "pids", &st->pids);
        smp = (struct viewmodel_sample){.cpu_pct = (float)st->cpu_pct,
                                        .pids =
                                            st->pids > UINT32_MAX ? UINT32_MAX : (uint32_t)st->pids,
                                        .mem_bytes = st->mem_bytes};
        hist_push(e, &smp, t);
        e->nsamples++;
        e->gen = vm->gen + 1;
        return VM_DIRTY_EXECS;
}

static unsigned on_exec_exit(struct viewmodel *vm, const json_t *ev, uint64_t t)
{
        struct viewmodel_exec *e = exec_of(vm, ev);
        int r =
            name_index(exec_names, VM_EXEC_EXITED, NELEM(exec_names), get_str(ev, "reason", NULL));
        const char *err = get_str(ev, "error", NULL);
        int64_t v;

        if (e == NULL || !viewmodel_exec_live(e) || e->removed)
                return 0;
        if (get_int(ev, "exit_code", &v) && v >= -1 && v <= 255)
                e->exit_code = (int)v;
        if (get_int(ev, "signal", &v) && v >= 0 && v < 128)
                e->signal = (int)v;
        /* A reason from a newer writer: say what can be said. */
        if (r < 0)
                r = e->signal > 0 ? VM_EXEC_SIGNALED : VM_EXEC_EXITED;
        e->state = (enum vm_exec_state)r;
        e->exited_ms = t;
        get_u64(ev, "wall_ms", &e->wall_ms);
        get_u64(ev, "cpu_ms", &e->cpu_ms);
        get_u64(ev, "mem_peak_bytes", &e->mem_peak_bytes);
        get_bool(ev, "truncated", &e->truncated);
        str_free(e->error);
        e->error = str_dup(err);
        live_del(vm, e);
        e->gen = vm->gen + 1;
        return VM_DIRTY_EXECS;
}

static unsigned on_exec_remove(struct viewmodel *vm, const json_t *ev, uint64_t t)
{
        struct viewmodel_exec *e = exec_of(vm, ev);

        if (e == NULL || e->removed)
                return 0;
        /* Removed without an exit (a writer that died): no longer live. */
        if (viewmodel_exec_live(e))
                live_del(vm, e);
        e->removed = true;
        e->removed_ms = t;
        get_u64(ev, "teardown_us", &e->teardown_us);
        e->gen = vm->gen + 1;
        return VM_DIRTY_EXECS;
}

/* The waiting warm sandboxes, as a whole: each exec.warm replaces them. */
static unsigned on_exec_warm(struct viewmodel *vm, const json_t *ev, uint64_t t)
{
        const json_t *list = json_object_get(ev, "waiting"), *w;
        size_t i;

        (void)t;
        vm->nwarm = 0;
        json_array_foreach (list, i, w) {
                struct viewmodel_warm *x;
                const char *st = get_str(w, "state", NULL);
                if (vm->nwarm >= VM_WARM_MAX || !json_is_object(w))
                        break;
                x = &vm->warm[vm->nwarm++];
                memset(x, 0, sizeof(*x));
                x->ready = st != NULL && strcmp(st, "ready") == 0;
                get_u64(w, "mem_bytes", &x->mem_bytes);
                get_u64(w, "cpu_ms", &x->cpu_ms);
        }
        return VM_DIRTY_EXECS;
}

size_t viewmodel_warm(const struct viewmodel *vm, const struct viewmodel_warm **out)
{
        *out = vm->warm;
        return vm->nwarm;
}

/* ---- dispatch ---- */

struct handler {
        const char *type;
        unsigned (*fn)(struct viewmodel *vm, const json_t *ev, uint64_t t);
};

/* Sorted by type, for bsearch. */
/* One handler a line. */
/* clang-format off */
static const struct handler handlers[] = {
    {"approval.decision", on_approval_decision},
    {"approval.request", on_approval_request},
    {"exec.create", on_exec_create},
    {"exec.exit", on_exec_exit},
    {"exec.output", on_exec_output},
    {"exec.pause", on_exec_pause},
    {"exec.remove", on_exec_remove},
    {"exec.resume", on_exec_pause},
    {"exec.start", on_exec_start},
    {"exec.state", on_exec_state},
    {"exec.stats", on_exec_stats},
    {"exec.warm", on_exec_warm},
    {"model.delta", on_model_delta},
    {"model.discard", on_model_discard},
    {"model.error", on_model_error},
    {"model.message", on_model_message},
    {"operator.interrupt", on_interrupt},
    {"operator.kill", on_kill},
    {"session.end", on_session_end},
    {"session.note", on_note},
    {"session.start", on_session_start},
    {"tool.call", on_tool_call},
    {"tool.output", on_tool_output},
    {"tool.result", on_tool_result},
    {"turn.end", on_turn_end},
    {"turn.start", on_turn_start},
    {"user.message", on_user_message},
};
/* clang-format on */

static int handler_cmp(const void *key, const void *h)
{
        return strcmp(key, ((const struct handler *)h)->type);
}

void viewmodel_event(const json_t *ev, void *ud)
{
        struct viewmodel *vm = ud;
        const struct handler *h;
        const char *type;
        unsigned dirty;
        uint64_t t;

        if (vm == NULL || !json_is_object(ev) || (type = get_str(ev, "type", NULL)) == NULL)
                return;
        h = bsearch(type, handlers, NELEM(handlers), sizeof(handlers[0]), handler_cmp);
        if (h == NULL)
                return;
        if (!get_u64(ev, "t_ms", &t))
                t = vm->last_t;
        dirty = h->fn(vm, ev, t);
        if (dirty == 0)
                return;
        vm->last_t = t;
        if ((vm->s.state == VM_IDLE || vm->s.state == VM_RUNNING) && t > vm->s.elapsed_ms) {
                vm->s.elapsed_ms = t;
                dirty |= VM_DIRTY_SESSION;
        }
        vm->gen++;
        vm->dirty |= dirty;
}

/* ---- life ---- */

static void vm_init(struct viewmodel *vm)
{
        session_strings(&vm->s, NULL);
        vm->open_entry = -1;
}

/* Frees everything the events built; keeps the generation and the flags. */
static void vm_clear(struct viewmodel *vm)
{
        uint64_t gen = vm->gen;
        unsigned dirty = vm->dirty;
        bool ro = vm->readonly;
        size_t i;

        for (i = 0; i < vm->nentries; i++)
                str_free(vm->entries[i].text);
        for (i = 0; i < vm->ncalls; i++) {
                struct viewmodel_call *c = &vm->calls[i];
                free(c->id);
                str_free(c->name);
                str_free(c->arguments);
                str_free(c->output);
                str_free(c->where);
                str_free(c->asked_by);
                str_free(c->decided_by);
                str_free(c->rule);
                str_free(c->reason);
                str_free(c->rule_added);
                str_free(c->edited);
                free(c->exec_ids);
        }
        for (i = 0; i < vm->nexecs; i++) {
                str_free(vm->execs[i].call_id);
                str_free(vm->execs[i].label);
                str_free(vm->execs[i].image);
                str_free(vm->execs[i].error);
                free(vm->execs[i].hist__);
        }
        session_strings(&vm->s, NULL);
        free(vm->entries);
        free(vm->calls);
        free(vm->execs);
        free(vm->call_map.slots);
        free(vm->exec_map.slots);
        free(vm->running.pos);
        free(vm->live.pos);
        memset(vm, 0, sizeof(*vm));
        vm->gen = gen;
        vm->dirty = dirty;
        vm->readonly = ro;
        vm_init(vm);
}

struct viewmodel *viewmodel_new(void)
{
        struct viewmodel *vm = calloc(1, sizeof(*vm));

        if (vm != NULL)
                vm_init(vm);
        return vm;
}

void viewmodel_free(struct viewmodel *vm)
{
        if (vm == NULL)
                return;
        vm_clear(vm);
        free(vm);
}

const char *viewmodel_session_state_name(enum vm_session_state s)
{
        return (unsigned)s < NELEM(session_names) ? session_names[s] : "?";
}

const char *viewmodel_call_state_name(enum vm_call_state s)
{
        return (unsigned)s < NELEM(call_names) ? call_names[s] : "?";
}

const char *viewmodel_exec_state_name(enum vm_exec_state s)
{
        return (unsigned)s < NELEM(exec_names) ? exec_names[s] : "?";
}

bool viewmodel_exec_live(const struct viewmodel_exec *e)
{
        return e->state < VM_EXEC_EXITED;
}
