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
/* The same, then `own` added as given, credential-like names included:
 * values the operator wrote for this one execution (an MCP server entry's
 * "env"), never taken from proctor's environment. With `own`, local mode
 * too starts from an allowlist (PATH, HOME, USER, LOGNAME, SHELL, TMPDIR
 * and the locale, from the host) instead of the whole environment. */
char **env_build_own(bool sandbox, char *const *extra, char *const *own);
void env_free(char **envp);

/* Call first thing in main: remembers where the process's argument and
 * environment strings live, and wipes secret values from that memory (they
 * stay readable through getenv, from the heap), so that neither
 * /proc/PID/environ of proctor nor that of a child cloned from it shows an
 * API key to a process of the same user. */
void env_process_init(int argc, char **argv);

/* In a child cloned from proctor that will not exec itself (an execution's
 * init): blanks its copy of those strings, so a command cannot read the
 * operator's arguments (a prompt, say) or environment from its parent. */
void env_blank_process_strings(void);

#endif
