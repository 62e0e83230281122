/* provider: where assistant turns come from. `openai:MODEL` (an
 * OpenAI-compatible chat-completions endpoint, streamed over libcurl driven
 * by the libuv loop), `script:FILE.jsonl` (scripted turns) and `demo` (a
 * bundled script). All are asynchronous on the caller's loop. */
#ifndef PROCTOR_PROVIDER_H
#define PROCTOR_PROVIDER_H

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>
#include <uv.h>

#include "core/model/chat.h"

struct provider;

struct provider_callbacks {
        /* A fragment of assistant text as it streams. */
        void (*on_delta)(const char *text, size_t n, void *ud);
        /* The complete assistant message; the callee takes ownership. */
        void (*on_message)(struct chat_message *m, void *ud);
        /* A failure. When `final` is false the provider retries after
         * retry_in_ms by itself; when true the request is over. http_status
         * is 0 when there was no HTTP answer; for an error the server sent
         * inside a 200 stream, the status its code stands for. */
        void (*on_error)(const char *message, int http_status, int64_t retry_in_ms, bool final,
                         void *ud);
        /* Takes back the last `bytes` bytes of the text on_delta passed on
         * (a retried attempt's answer differs from there on; always whole
         * UTF-8 characters); may be NULL. */
        void (*on_discard)(size_t bytes, void *ud);
};

struct provider_ops {
        /* Starts one model call. Exactly one of on_message or a final
         * on_error follows, unless cancelled. */
        int (*request)(struct provider *p, const json_t *messages, const json_t *tools,
                       const struct provider_callbacks *cb, void *ud);
        /* Aborts the call in flight, if any; no callback fires after it. */
        void (*cancel)(struct provider *p);
        void (*free)(struct provider *p);
};

struct provider {
        const struct provider_ops *ops;
        char label[128]; /* what the UI shows: "openai:gpt-4o", "demo (scripted)" */
        bool scripted;   /* demo and script: never a real model */
        bool exhausted;  /* scripted: no turn left, the session ends completed */
};

struct provider_config {
        const char *base_url;   /* NULL: OpenAI, or the Hugging Face router when
                                 * only HF_TOKEN is set */
        const char *api_key;    /* NULL: from PROCTOR_API_KEY, OPENAI_API_KEY, HF_TOKEN */
        unsigned retries;       /* attempts after the first; default 3 */
        bool no_stream_options; /* leave stream_options out (servers that refuse it) */
        const char *ca_file;    /* a CA (PEM) to verify the endpoint with; NULL: the system's */
        uint32_t connect_timeout_ms; /* default 10 s */
        uint32_t idle_timeout_ms;    /* no byte for this long: default 60 s */
        uint32_t backoff_ms;         /* first retry delay; doubles; default 500 */
        uint32_t loading_wait_ms;    /* waits for a model that is loading (503 with
                                      * estimated_time), in all; default 10 min */
};

/* The length of the key as it is sent: a key pasted from a file often
 * ends with a newline, which is not part of it. Whatever scrubs the key
 * from output scrubs exactly these bytes. */
size_t provider_key_length(const char *key);

/* Opens the provider named by spec ("demo", "script:PATH", "openai:MODEL").
 * Errors name the problem (unknown spec, unreadable or malformed script
 * with file and line, no API key). */
int provider_open(uv_loop_t *loop, const char *spec, const struct provider_config *cfg,
                  struct provider **out, char *err, size_t errlen);

static inline void provider_free(struct provider *p)
{
        if (p != NULL)
                p->ops->free(p);
}

/* The model to use when none is configured: "demo" unless an API key is
 * in the environment, then "openai:gpt-4o-mini". */
const char *provider_default_spec(void);

#endif
