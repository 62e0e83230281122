/* env: builds execution environments. The sandbox list is an allowlist,
 * not a denylist: a variable proctor does not know never crosses. */
#include "exec/native/env.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

extern char **environ;

static const char *const secret_exact[] = {
    "PROCTOR_API_KEY",
    "OPENAI_API_KEY",
    "HF_TOKEN",
    "HUGGING_FACE_HUB_TOKEN",
    "ANTHROPIC_API_KEY",
    "GITHUB_TOKEN",
    "GH_TOKEN",
    "AWS_SECRET_ACCESS_KEY",
    "AWS_SESSION_TOKEN",
    "GOOGLE_API_KEY",
    "AZURE_OPENAI_API_KEY",
};

static const char *const secret_parts[] = {"API_KEY",  "APIKEY", "TOKEN",      "SECRET",
                                           "PASSWORD", "PASSWD", "CREDENTIAL", "PRIVATE_KEY"};

/* Host variables a sandbox may inherit when set (values are harmless). */
static const char *const sandbox_pass[] = {"LANG", "LC_ALL", "LC_CTYPE", "TZ"};

/* What a local execution started with its own environment (an MCP
 * server's entry) takes of the host's besides: what a program needs to
 * find itself, its home and its language, and nothing that may carry a
 * secret (the variables MCP's own clients pass, and the locale). */
static const char *const own_pass[] = {"PATH",   "HOME", "USER",   "LOGNAME",  "SHELL",
                                       "TMPDIR", "LANG", "LC_ALL", "LC_CTYPE", "TZ"};

bool env_is_secret(const char *name)
{
        char up[128];
        size_t i, n = strcspn(name, "=");

        if (n >= sizeof(up))
                n = sizeof(up) - 1;
        for (i = 0; i < n; i++)
                up[i] = (char)toupper((unsigned char)name[i]);
        up[n] = '\0';
        for (i = 0; i < sizeof(secret_exact) / sizeof(secret_exact[0]); i++)
                if (strcmp(up, secret_exact[i]) == 0)
                        return true;
        for (i = 0; i < sizeof(secret_parts) / sizeof(secret_parts[0]); i++)
                if (strstr(up, secret_parts[i]) != NULL)
                        return true;
        return false;
}

struct envbuf {
        char **v;
        size_t n, cap;
        int failed;
};

/* Sets K=V, replacing an earlier entry with the same name. */
static void put(struct envbuf *b, const char *kv)
{
        size_t klen = strcspn(kv, "=");
        size_t i;
        char *dup;

        if (kv[klen] != '=' || b->failed)
                return;
        dup = strdup(kv);
        if (dup == NULL) {
                b->failed = 1;
                return;
        }
        for (i = 0; i < b->n; i++) {
                if (strncmp(b->v[i], kv, klen + 1) == 0) {
                        free(b->v[i]);
                        b->v[i] = dup;
                        return;
                }
        }
        if (b->n + 2 > b->cap) {
                size_t cap = b->cap ? b->cap * 2 : 32;
                char **v = realloc(b->v, cap * sizeof(*v));
                if (v == NULL) {
                        free(dup);
                        b->failed = 1;
                        return;
                }
                b->v = v;
                b->cap = cap;
        }
        b->v[b->n++] = dup;
        b->v[b->n] = NULL;
}

/* Sets each of the n names that the host's environment has, as it has it. */
static void pass_from_host(struct envbuf *b, const char *const *names, size_t n)
{
        char *pair;
        size_t i;

        for (i = 0; i < n && !b->failed; i++) {
                const char *v = getenv(names[i]);
                if (v == NULL)
                        continue;
                if (asprintf(&pair, "%s=%s", names[i], v) < 0) {
                        b->failed = 1;
                        return;
                }
                put(b, pair);
                free(pair);
        }
}

char **env_build(bool sandbox, char *const *extra)
{
        return env_build_own(sandbox, extra, NULL);
}

char **env_build_own(bool sandbox, char *const *extra, char *const *own)
{
        struct envbuf b = {0};
        size_t i;

        if (sandbox) {
                put(&b, "PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin");
                put(&b, "HOME=/tmp");
                put(&b, "USER=sandbox");
                put(&b, "LOGNAME=sandbox");
                put(&b, "SHELL=/bin/bash");
                put(&b, "LANG=C.UTF-8");
                put(&b, "TMPDIR=/tmp");
                pass_from_host(&b, sandbox_pass, sizeof(sandbox_pass) / sizeof(sandbox_pass[0]));
        } else if (own != NULL) {
                pass_from_host(&b, own_pass, sizeof(own_pass) / sizeof(own_pass[0]));
        } else {
                for (i = 0; environ != NULL && environ[i] != NULL; i++)
                        if (!env_is_secret(environ[i]))
                                put(&b, environ[i]);
        }
        put(&b, "TERM=dumb");
        for (i = 0; extra != NULL && extra[i] != NULL; i++)
                if (!env_is_secret(extra[i]))
                        put(&b, extra[i]);
        /* the operator's own words for this execution: nothing inherited */
        for (i = 0; own != NULL && own[i] != NULL; i++)
                put(&b, own[i]);
        if (b.failed || b.v == NULL) {
                env_free(b.v);
                return NULL;
        }
        return b.v;
}

void env_free(char **envp)
{
        size_t i;

        for (i = 0; envp != NULL && envp[i] != NULL; i++)
                free(envp[i]);
        free(envp);
}

/* The kernel shows a process's initial argument and environment strings
 * (/proc/PID/cmdline and environ) from the memory they started in; every
 * child cloned without exec shares a copy of that memory. */
static char *args_start, *args_end, *env_start, *env_end;

void env_process_init(int argc, char **argv)
{
        char **e;

        if (argc > 0) {
                args_start = argv[0];
                args_end = argv[argc - 1] + strlen(argv[argc - 1]) + 1;
        }
        for (e = environ; e != NULL && *e != NULL; e++) {
                char *end = *e + strlen(*e) + 1;
                if (env_start == NULL || *e < env_start)
                        env_start = *e;
                if (end > env_end)
                        env_end = end;
        }
        for (size_t i = 0; environ != NULL && environ[i] != NULL; i++) {
                char *orig = environ[i], *eq = strchr(orig, '=');
                char name[256];
                size_t n = eq != NULL ? (size_t)(eq - orig) : 0;
                if (eq == NULL || n >= sizeof(name) || !env_is_secret(orig))
                        continue;
                /* setenv replaces this entry with a copy on the heap; the
                 * first copy is then wiped where /proc can read it. */
                memcpy(name, orig, n);
                name[n] = '\0';
                if (setenv(name, eq + 1, 1) == 0 && environ[i] != orig)
                        memset(eq + 1, 0, strlen(eq + 1));
        }
}

void env_blank_process_strings(void)
{
        static const char title[] = "proctor-init";

        if (env_start != NULL && env_end > env_start)
                memset(env_start, 0, (size_t)(env_end - env_start));
        if (args_start != NULL && args_end > args_start) {
                memset(args_start, 0, (size_t)(args_end - args_start));
                if ((size_t)(args_end - args_start) > sizeof(title))
                        memcpy(args_start, title, sizeof(title));
        }
}
