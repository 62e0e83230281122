/* provider_openai: `openai:MODEL`, any OpenAI-compatible chat-completions
 * endpoint, streamed. libcurl is loaded on first use (dlopen), so processes
 * that never talk HTTP do not pay for loading it. */
#ifndef PROCTOR_PROVIDER_OPENAI_H
#define PROCTOR_PROVIDER_OPENAI_H

#include "core/model/provider.h"

int provider_openai_open(uv_loop_t *loop, const char *model, const struct provider_config *cfg,
                         struct provider **out, char *err, size_t errlen);

#endif
