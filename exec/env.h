/* env: the environment an execution starts with. Sandboxes get a fresh
 * one from an allowlist; local children get proctor's minus secrets. API
 * keys and tokens never pass either way. */
#ifndef PROCTOR_ENV_H
#define PROCTOR_ENV_H

#include <stdbool.h>

/* True for variables that carry credentials (API keys, tokens, secrets,
 * passwords), which no execution and no trace may see. */
bool env_is_secret(const char *name_or_assignment);

/* Builds a NULL-terminated "K=V" array: for a sandbox from the allowlist,
 * for local mode from `environ` without secrets; `extra` entries are added
 * last and override. Free with env_free. NULL on allocation failure. */
char **env_build(bool sandbox, char *const *extra);
void env_free(char **envp);

#endif
