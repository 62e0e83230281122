/* provider_script: scripted model turns for tests and demos. */
#ifndef PROCTOR_PROVIDER_SCRIPT_H
#define PROCTOR_PROVIDER_SCRIPT_H

#include "core/model/provider.h"

/* `script:FILE.jsonl`: one assistant turn per line, {"content": "...",
 * "tool_calls": [{"name": "bash", "arguments": {...}}], "delay_ms": 20}
 * (all optional; arguments may be a string for raw, even invalid, JSON).
 * Blank lines and lines starting with '#' are skipped. A malformed script
 * is rejected whole, naming file and line. */
int provider_script_open(uv_loop_t *loop, const char *path, struct provider **out, char *err,
                         size_t errlen);

/* `demo`: the bundled tour of the product, with real tool calls. */
int provider_demo_open(uv_loop_t *loop, struct provider **out, char *err, size_t errlen);

#endif
