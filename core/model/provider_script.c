/* provider_script: scripted assistant turns, `script:FILE.jsonl` and the
 * bundled `demo`. Each line is one model call: content streamed in small
 * pieces paced by delay_ms, then the tool calls. Deterministic, so tests and
 * demos replay the same session; always labelled as scripted. */
#include "core/model/provider_script.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct turn {
        char *content;
        json_t *calls; /* [{"name", "arguments" (text)}] */
        uint32_t delay_ms;
};

struct script {
        struct provider base;
        uv_loop_t *loop;
        struct turn *turns;
        size_t nturns, next;
        uint64_t ncalls;
        /* the call in flight */
        uv_timer_t timer;
        bool active, timer_open;
        struct provider_callbacks cb;
        void *ud;
        size_t pos; /* bytes of content streamed so far */
};

/* The bundled demo: real tool calls that show where tools run. The /tmp
 * file and the cache survive between calls in local mode only. */
static const char demo_script[] =
    "{\"content\": \"This is proctor's scripted demo (no model involved). First, where do "
    "tools run?\", \"tool_calls\": [{\"name\": \"bash\", \"arguments\": {\"command\": "
    "\"echo host: $(hostname); id; pwd; ls | head -5\"}}], \"delay_ms\": 15}\n"
    "{\"content\": \"Some Python next, and a file in /tmp plus a cache entry for later.\", "
    "\"tool_calls\": [{\"name\": \"run_python_code\", \"arguments\": {\"code\": \"import "
    "platform, sys\\nprint('python', sys.version.split()[0], 'on', platform.node())\\n"
    "print('sum of squares:', sum(i * i for i in range(10 ** 6)))\\n\"}}, {\"name\": "
    "\"write\", \"arguments\": {\"path\": \"/tmp/proctor-demo.txt\", \"content\": \"written "
    "by an earlier tool call\\n\"}}, {\"name\": \"write_cache\", \"arguments\": {\"key\": "
    "\"greeting\", \"value\": \"hello from an earlier call\"}}], \"delay_ms\": 15}\n"
    "{\"content\": \"Do they survive to the next call? In local mode yes; in sandbox mode "
    "every call starts fresh.\", \"tool_calls\": [{\"name\": \"read\", \"arguments\": "
    "{\"path\": \"/tmp/proctor-demo.txt\"}}, {\"name\": \"read_cache\", \"arguments\": "
    "{\"key\": \"greeting\"}}], \"delay_ms\": 15}\n"
    "{\"content\": \"Now a runaway CPU loop: the sandbox's CPU limit, or the timeout in "
    "local mode, ends it (or kill it yourself).\", \"tool_calls\": [{\"name\": \"bash\", "
    "\"arguments\": {\"command\": \"echo spinning; while :; do :; done\", \"timeout\": "
    "12}}], \"delay_ms\": 15}\n"
    "{\"content\": \"That's the tour: shell and Python ran, files and the cache behaved "
    "as the mode promises, and the runaway was stopped.\", \"delay_ms\": 15}\n";

static void free_turns(struct script *s)
{
        size_t i;

        for (i = 0; i < s->nturns; i++) {
                free(s->turns[i].content);
                json_decref(s->turns[i].calls);
        }
        free(s->turns);
}

/* Validates one line into a turn; err names the problem. */
static int parse_turn(json_t *j, struct turn *t, char *err, size_t errlen)
{
        static const char *const allowed[] = {"content", "tool_calls", "delay_ms"};
        json_t *content, *calls, *delay, *c, *v;
        const char *key;
        size_t i, k;

        if (!json_is_object(j)) {
                snprintf(err, errlen, "expected a JSON object");
                return -EINVAL;
        }
        json_object_foreach (j, key, v) {
                for (k = 0; k < 3 && strcmp(key, allowed[k]) != 0; k++)
                        ;
                if (k == 3) {
                        snprintf(err, errlen,
                                 "unknown key '%s' (expected content, tool_calls, "
                                 "delay_ms)",
                                 key);
                        return -EINVAL;
                }
        }
        content = json_object_get(j, "content");
        calls = json_object_get(j, "tool_calls");
        delay = json_object_get(j, "delay_ms");
        if (content != NULL && !json_is_string(content)) {
                snprintf(err, errlen, "'content' must be a string");
                return -EINVAL;
        }
        if (delay != NULL && (!json_is_integer(delay) || json_integer_value(delay) < 0 ||
                              json_integer_value(delay) > 60000)) {
                snprintf(err, errlen, "'delay_ms' must be an integer from 0 to 60000");
                return -EINVAL;
        }
        if (calls != NULL && !json_is_array(calls)) {
                snprintf(err, errlen, "'tool_calls' must be an array");
                return -EINVAL;
        }
        t->content = strdup(content != NULL ? json_string_value(content) : "");
        t->delay_ms = delay != NULL ? (uint32_t)json_integer_value(delay) : 0;
        t->calls = json_array();
        json_array_foreach (calls, i, c) {
                json_t *name = json_object_get(c, "name");
                json_t *args = json_object_get(c, "arguments");
                char *text;
                if (!json_is_string(name) ||
                    (args != NULL && !json_is_object(args) && !json_is_string(args))) {
                        snprintf(err, errlen,
                                 "tool_calls[%zu]: needs \"name\" (string) and \"arguments\" "
                                 "(object, or string for raw text)",
                                 i);
                        return -EINVAL;
                }
                text = args == NULL           ? strdup("{}")
                       : json_is_string(args) ? strdup(json_string_value(args))
                                              : json_dumps(args, JSON_COMPACT);
                json_array_append_new(t->calls, json_pack("{s:O,s:s}", "name", name, "arguments",
                                                          text != NULL ? text : ""));
                free(text);
        }
        return 0;
}

/* Parses the whole script up front, so a bad line fails before any turn. */
static int parse_script(struct script *s, const char *text, const char *name, char *err,
                        size_t errlen)
{
        const char *line = text;
        size_t lineno = 0;

        while (*line != '\0') {
                const char *end = strchr(line, '\n');
                size_t len = end != NULL ? (size_t)(end - line) : strlen(line);
                json_error_t je;
                char why[200];
                json_t *j;
                struct turn *grown;
                size_t skip = strspn(line, " \t\r");

                lineno++;
                if (skip < len && line[skip] != '#') {
                        j = json_loadb(line, len, 0, &je);
                        if (j == NULL) {
                                snprintf(err, errlen, "%s:%zu: not valid JSON: %s", name, lineno,
                                         je.text);
                                return -EINVAL;
                        }
                        grown = realloc(s->turns, (s->nturns + 1) * sizeof(*grown));
                        if (grown == NULL) {
                                json_decref(j);
                                return -ENOMEM;
                        }
                        s->turns = grown;
                        memset(&s->turns[s->nturns], 0, sizeof(s->turns[0]));
                        if (parse_turn(j, &s->turns[s->nturns++], why, sizeof(why)) < 0) {
                                json_decref(j);
                                snprintf(err, errlen, "%s:%zu: %s", name, lineno, why);
                                return -EINVAL;
                        }
                        json_decref(j);
                }
                line += len + (end != NULL);
        }
        if (s->nturns == 0) {
                snprintf(err, errlen, "%s: no turns in the script", name);
                return -EINVAL;
        }
        return 0;
}

/* Streams the next piece of content, then delivers the message. */
static void step(uv_timer_t *t)
{
        struct script *s = t->data;
        struct turn *tn = &s->turns[s->next];
        size_t len = strlen(tn->content);
        struct chat_message *m;
        json_t *c;
        size_t i;

        if (s->pos < len) {
                /* a word at a time, like a model's tokens */
                size_t n = strcspn(tn->content + s->pos, " \n");
                n += strspn(tn->content + s->pos + n, " \n");
                if (n == 0)
                        n = len - s->pos;
                s->pos += n;
                s->cb.on_delta(tn->content + s->pos - n, n, s->ud);
                uv_timer_start(&s->timer, step, tn->delay_ms, 0);
                return;
        }
        m = calloc(1, sizeof(*m));
        if (m == NULL)
                return;
        m->content = strdup(tn->content);
        m->ncalls = json_array_size(tn->calls);
        m->calls = calloc(m->ncalls ? m->ncalls : 1, sizeof(*m->calls));
        json_array_foreach (tn->calls, i, c) {
                char id[32];
                snprintf(id, sizeof(id), "call_%llu", (unsigned long long)++s->ncalls);
                m->calls[i].id = strdup(id);
                m->calls[i].name = strdup(json_string_value(json_object_get(c, "name")));
                m->calls[i].arguments = strdup(json_string_value(json_object_get(c, "arguments")));
        }
        m->usage.prompt_tokens = -1;
        m->usage.completion_tokens = -1;
        s->active = false;
        s->next++;
        s->base.exhausted = s->next == s->nturns;
        s->cb.on_message(m, s->ud);
}

static int script_request(struct provider *p, const json_t *messages, const json_t *tools,
                          const struct provider_callbacks *cb, void *ud)
{
        struct script *s = (struct script *)p;

        if (s->active)
                return -EBUSY;
        if (s->next >= s->nturns)
                return -ENODATA;
        s->cb = *cb;
        s->ud = ud;
        s->pos = 0;
        s->active = true;
        uv_timer_start(&s->timer, step, s->turns[s->next].delay_ms, 0);
        return 0;
}

static void script_cancel(struct provider *p)
{
        struct script *s = (struct script *)p;

        uv_timer_stop(&s->timer);
        s->active = false;
}

static void timer_closed(uv_handle_t *h)
{
        struct script *s = h->data;

        free_turns(s);
        free(s);
}

static void script_free(struct provider *p)
{
        struct script *s = (struct script *)p;

        uv_close((uv_handle_t *)&s->timer, timer_closed);
}

static const struct provider_ops script_ops = {
    .request = script_request,
    .cancel = script_cancel,
    .free = script_free,
};

static int open_text(uv_loop_t *loop, const char *text, const char *name, const char *label,
                     struct provider **out, char *err, size_t errlen)
{
        struct script *s = calloc(1, sizeof(*s));
        int rc;

        if (s == NULL)
                return -ENOMEM;
        rc = parse_script(s, text, name, err, errlen);
        if (rc < 0) {
                free_turns(s);
                free(s);
                return rc;
        }
        s->base.ops = &script_ops;
        s->base.scripted = true;
        snprintf(s->base.label, sizeof(s->base.label), "%s", label);
        s->loop = loop;
        uv_timer_init(loop, &s->timer);
        s->timer.data = s;
        *out = &s->base;
        return 0;
}

int provider_script_open(uv_loop_t *loop, const char *path, struct provider **out, char *err,
                         size_t errlen)
{
        char label[128];
        FILE *f = fopen(path, "r");
        char *text = NULL;
        size_t len = 0;
        int rc;

        if (f == NULL) {
                snprintf(err, errlen, "script %s: %s", path, strerror(errno));
                return -errno;
        }
        /* a script is small text; read it whole */
        for (;;) {
                char *grown = realloc(text, len + 65536 + 1);
                size_t got;
                if (grown == NULL) {
                        free(text);
                        fclose(f);
                        return -ENOMEM;
                }
                text = grown;
                got = fread(text + len, 1, 65536, f);
                len += got;
                if (got < 65536)
                        break;
        }
        fclose(f);
        text[len] = '\0';
        snprintf(label, sizeof(label), "script:%.100s (scripted)", path);
        rc = open_text(loop, text, path, label, out, err, errlen);
        free(text);
        return rc;
}

int provider_demo_open(uv_loop_t *loop, struct provider **out, char *err, size_t errlen)
{
        return open_text(loop, demo_script, "demo", "demo (scripted)", out, err, errlen);
}
