/* provider: picks the provider named by a model spec. */
#include "core/model/provider.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/model/provider_openai.h"
#include "core/model/provider_script.h"

static bool has_env(const char *name)
{
        const char *v = getenv(name);

        return v != NULL && v[0] != '\0';
}

size_t provider_key_length(const char *key)
{
        size_t n = strlen(key);

        while (n > 0 && (key[n - 1] == '\n' || key[n - 1] == '\r' || key[n - 1] == ' ' ||
                         key[n - 1] == '\t'))
                n--;
        return n;
}

const char *provider_default_spec(void)
{
        if (has_env("PROCTOR_API_KEY") || has_env("OPENAI_API_KEY"))
                return "openai:gpt-4o-mini";
        if (has_env("HF_TOKEN"))
                return "openai:openai/gpt-oss-120b";
        return "demo";
}

int provider_open(uv_loop_t *loop, const char *spec, const struct provider_config *cfg,
                  struct provider **out, char *err, size_t errlen)
{
        static const struct provider_config defaults = {.retries = 3};

        if (spec == NULL || spec[0] == '\0')
                spec = provider_default_spec();
        if (strcmp(spec, "demo") == 0)
                return provider_demo_open(loop, out, err, errlen);
        if (strncmp(spec, "script:", 7) == 0 && spec[7] != '\0')
                return provider_script_open(loop, spec + 7, out, err, errlen);
        if (strncmp(spec, "openai:", 7) == 0 && spec[7] != '\0')
                return provider_openai_open(loop, spec + 7, cfg != NULL ? cfg : &defaults, out, err,
                                            errlen);
        snprintf(err, errlen,
                 "unknown model '%s' (expected demo, script:FILE.jsonl or openai:MODEL)", spec);
        return -EINVAL;
}
