/* config: reads config.json and layers it between the built-in defaults
 * and the environment and command line. Every value is checked against its
 * key's type; an unknown key or a wrong type rejects the whole file, with
 * the key's path, rather than being ignored or guessed. */
#include "core/session/config.h"

#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <limits.h>
#include <pwd.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/session/approval.h"
#include "core/tools/mcp.h"
#include "core/util/units.h"

#define CONFIG_MAX_BYTES (1u << 20)

enum kind {
        K_MODE,
        K_WSMODE,
        K_STR,
        K_PATH,
        K_SIZE,
        K_SECS,
        K_COUNT,
        K_BOOL,
        K_SECTION,
        K_MCP,
        K_RULES, /* an array of rule strings, kept in a struct options_list */
};

struct key {
        const char *name;
        enum kind kind;
        size_t off, width;      /* where in struct options, and how wide (K_COUNT) */
        uint64_t min, max;      /* K_COUNT bounds */
        const struct key *keys; /* K_SECTION: its keys, ended by a NULL name */
};

#define FIELD(f) offsetof(struct options, f), sizeof(((struct options *)0)->f)

static const struct key limit_keys[] = {
    {"memory", K_SIZE, FIELD(limits.memory_bytes), 0, 0, NULL},
    {"cpu_time", K_SECS, FIELD(limits.cpu_ms), 0, 0, NULL},
    {"timeout", K_SECS, FIELD(limits.timeout_ms), 0, 0, NULL},
    {"pids", K_COUNT, FIELD(limits.pids), 1, 4194304, NULL},
    {"tmpfs", K_SIZE, FIELD(limits.tmpfs_bytes), 0, 0, NULL},
    {"output_limit", K_SIZE, FIELD(limits.output_bytes), 0, 0, NULL},
    {"disk", K_SIZE, FIELD(limits.disk_bytes), 0, 0, NULL},
    {NULL, K_SECTION, 0, 0, 0, 0, NULL},
};

static const struct key provider_keys[] = {
    {"retries", K_COUNT, FIELD(provider_retries), 0, 10, NULL},
    {"timeout", K_SECS, FIELD(provider_timeout_ms), 0, 0, NULL},
    {"stream_options", K_BOOL, FIELD(provider_stream_options), 0, 0, NULL},
    {NULL, K_SECTION, 0, 0, 0, 0, NULL},
};

static const struct key top_keys[] = {
    {"tool_execution_mode", K_MODE, FIELD(mode), 0, 0, NULL},
    {"model", K_STR, FIELD(model), 0, 0, NULL},
    {"base_url", K_STR, FIELD(base_url), 0, 0, NULL},
    {"ca_cert", K_PATH, FIELD(ca_cert), 0, 0, NULL},
    {"workspace", K_PATH, FIELD(workspace), 0, 0, NULL},
    {"workspace_mode", K_WSMODE, FIELD(ws_mode), 0, 0, NULL},
    {"image", K_PATH, FIELD(image), 0, 0, NULL},
    {"runtime", K_STR, FIELD(runtime), 0, 0, NULL},
    {"image_max", K_SIZE, FIELD(image_max), 0, 0, NULL},
    {"image_cache_max", K_SIZE, FIELD(image_cache_max), 0, 0, NULL},
    {"limits", K_SECTION, 0, 0, 0, 0, limit_keys},
    {"max_iterations", K_COUNT, FIELD(max_iterations), 1, 1000000000, NULL},
    {"max_parallel", K_COUNT, FIELD(max_parallel), 1, 1000000000, NULL},
    {"memory_budget", K_SIZE, FIELD(memory_budget), 0, 0, NULL},
    {"theme", K_STR, FIELD(theme), 0, 0, NULL},
    {"provider", K_SECTION, 0, 0, 0, 0, provider_keys},
    {"mcpServers", K_MCP, FIELD(mcp_servers), 0, 0, NULL},
    {"approval", K_STR, FIELD(approval), 0, 0, NULL},
    {"allow", K_RULES, FIELD(allow), 0, 0, NULL},
    {"deny", K_RULES, FIELD(deny), 0, 0, NULL},
    {NULL, K_SECTION, 0, 0, 0, 0, NULL},
};

/* Strings handed out in struct options outlive the JSON they came from. */
static struct {
        char **v;
        size_t n, cap;
} kept;

static const char *keep(const char *s)
{
        char *dup;

        if (kept.n == kept.cap) {
                size_t cap = kept.cap ? kept.cap * 2 : 16;
                char **v = realloc(kept.v, cap * sizeof(*v));
                if (v == NULL)
                        return NULL;
                kept.v = v;
                kept.cap = cap;
        }
        dup = strdup(s);
        if (dup != NULL)
                kept.v[kept.n++] = dup;
        return dup;
}

void config_release(void)
{
        size_t i;

        for (i = 0; i < kept.n; i++)
                free(kept.v[i]);
        free(kept.v);
        memset(&kept, 0, sizeof(kept));
}

static const char *home_dir(void)
{
        const char *h = getenv("HOME");
        struct passwd *pw;

        if (h != NULL && h[0] == '/')
                return h;
        pw = getpwuid(getuid());
        return pw != NULL && pw->pw_dir != NULL && pw->pw_dir[0] == '/' ? pw->pw_dir : NULL;
}

int config_xdg_path(const char *var, const char *fallback, const char *rel, char *buf, size_t len)
{
        const char *base = getenv(var);
        const char *home;
        int n;

        if (base != NULL && base[0] == '/') {
                n = snprintf(buf, len, "%s/%s", base, rel);
        } else {
                home = home_dir();
                if (home == NULL)
                        return -ENOENT;
                n = snprintf(buf, len, "%s/%s/%s", home, fallback, rel);
        }
        return n < 0 || (size_t)n >= len ? -ENAMETOOLONG : 0;
}

/* A value as the error message shows it: short, one line, no control bytes. */
static void describe(const json_t *v, char *buf, size_t len)
{
        const char *s;
        size_t i, o = 0, n;

        switch (json_typeof(v)) {
        case JSON_STRING:
                s = json_string_value(v);
                n = json_string_length(v);
                buf[o++] = '"';
                /* 40 bytes, ending on a character boundary */
                for (i = 0; i < n && o + 6 < len && (i < 40 || (s[i] & 0xc0) == 0x80); i++)
                        buf[o++] = (unsigned char)s[i] < 0x20 || s[i] == 0x7f ? '?' : s[i];
                if (i < n && o + 6 < len)
                        o += (size_t)snprintf(buf + o, len - o, "...");
                snprintf(buf + o, len - o, "\"");
                return;
        case JSON_INTEGER:
                snprintf(buf, len, "%" JSON_INTEGER_FORMAT, json_integer_value(v));
                return;
        case JSON_REAL:
                snprintf(buf, len, "%g", json_real_value(v));
                return;
        case JSON_TRUE:
                snprintf(buf, len, "true");
                return;
        case JSON_FALSE:
                snprintf(buf, len, "false");
                return;
        case JSON_NULL:
                snprintf(buf, len, "null");
                return;
        case JSON_OBJECT:
                snprintf(buf, len, "an object");
                return;
        case JSON_ARRAY:
                snprintf(buf, len, "an array");
                return;
        }
}

struct load {
        const char *file;
        char *err;
        size_t errlen;
};

/* "FILE: KEYPATH: expected WHAT, got VALUE" */
static int type_error(const struct load *l, const char *path, const char *what, const json_t *v)
{
        char got[64];

        describe(v, got, sizeof(got));
        snprintf(l->err, l->errlen, "%s: %s: expected %s, got %s", l->file, path, what, got);
        return -EINVAL;
}

static const char *expectation(const struct key *k, char *buf, size_t len)
{
        switch (k->kind) {
        case K_MODE:
                return "\"local\" or \"sandbox\"";
        case K_WSMODE:
                return "\"rw\", \"ro\", \"overlay\" or \"none\"";
        case K_STR:
        case K_PATH:
                return "a non-empty string";
        case K_SIZE:
                return "a size like \"512M\"";
        case K_SECS:
                return "a duration like 5 or \"250ms\"";
        case K_COUNT:
                snprintf(buf, len, "an integer from %llu to %llu", (unsigned long long)k->min,
                         (unsigned long long)k->max);
                return buf;
        case K_BOOL:
                return "true or false";
        case K_SECTION:
        case K_MCP:
                return "an object";
        case K_RULES:
                return "an array of rules like \"bash:git status*\"";
        }
        return "?";
}

static void store_uint(void *field, size_t width, uint64_t v)
{
        if (width == sizeof(uint32_t))
                *(uint32_t *)field = (uint32_t)v;
        else
                *(uint64_t *)field = v;
}

/* Converts v for key k. 1 when stored, 0 when v has the wrong type or
 * value, -ENOMEM. */
static int convert(const struct key *k, const json_t *v, void *field)
{
        const char *s = json_string_value(v);
        const char *home;
        char path[PATH_MAX];
        double d;
        uint64_t n;

        switch (k->kind) {
        case K_MODE:
                return s != NULL && options_parse_mode(s, field) == 0;
        case K_WSMODE:
                return s != NULL && exec_ws_mode_parse(s, field) == 0;
        case K_PATH:
                if (s != NULL && s[0] == '~' && (s[1] == '/' || s[1] == '\0') &&
                    (home = home_dir()) != NULL) {
                        if ((size_t)snprintf(path, sizeof(path), "%s%s", home, s + 1) >=
                            sizeof(path))
                                return 0;
                        s = path;
                }
                /* fall through */
        case K_STR:
                if (s == NULL || s[0] == '\0')
                        return 0;
                s = keep(s);
                if (s == NULL)
                        return -ENOMEM;
                *(const char **)field = s;
                return 1;
        case K_SIZE:
                if (json_is_integer(v) && json_integer_value(v) > 0)
                        n = (uint64_t)json_integer_value(v);
                else if (s == NULL || units_parse_size(s, &n) < 0 || n == 0)
                        return 0;
                *(uint64_t *)field = n;
                return 1;
        case K_SECS:
                if (json_is_number(v)) {
                        d = json_number_value(v) * 1000.0;
                        if (!(d >= 1.0 && d < 9.2e18))
                                return 0;
                        n = units_round(d);
                } else if (s == NULL || units_parse_duration(s, &n) < 0 || n == 0) {
                        return 0;
                }
                *(uint64_t *)field = n;
                return 1;
        case K_COUNT:
                if (!json_is_integer(v) || json_integer_value(v) < 0 ||
                    (uint64_t)json_integer_value(v) < k->min ||
                    (uint64_t)json_integer_value(v) > k->max)
                        return 0;
                store_uint(field, k->width, (uint64_t)json_integer_value(v));
                return 1;
        case K_BOOL:
                if (!json_is_boolean(v))
                        return 0;
                *(bool *)field = json_is_true(v);
                return 1;
        case K_SECTION:
        case K_MCP:
        case K_RULES:
                break;
        }
        return 0;
}

/* "allow"/"deny": each rule appended to the list, in the file's order. */
static int apply_rules(const struct load *l, const char *path, const json_t *v,
                       struct options_list *list)
{
        size_t i;
        const json_t *r;

        if (!json_is_array(v))
                return type_error(l, path, "an array of rules like \"bash:git status*\"", v);
        json_array_foreach (v, i, r) {
                const char *s = json_string_value(r);
                char at[300];
                snprintf(at, sizeof(at), "%s[%zu]", path, i);
                if (s == NULL || s[0] == '\0')
                        return type_error(l, at, "a rule like \"bash:git status*\"", r);
                if (list->n == OPTIONS_LIST_MAX) {
                        snprintf(l->err, l->errlen, "%s: %s: at most %d rules", l->file, path,
                                 OPTIONS_LIST_MAX);
                        return -EINVAL;
                }
                if ((list->v[list->n] = keep(s)) == NULL)
                        return -ENOMEM;
                list->n++;
        }
        return 0;
}

/* Checks `servers` and keeps it over *field (JSON text), merged with what
 * is there: a server named in both is the later one's. */
static int merge_mcp(const char *file, const json_t *servers, const char **field, char *err,
                     size_t errlen)
{
        json_t *all = *field != NULL ? json_loads(*field, 0, NULL) : json_object();
        char why[400], *text;
        int rc;

        if ((rc = mcp_config_check(servers, why, sizeof(why))) < 0) {
                snprintf(err, errlen, "%s: %s", file, why);
                json_decref(all);
                return rc;
        }
        if (all == NULL || json_object_update(all, (json_t *)servers) < 0 ||
            (text = json_dumps(all, JSON_COMPACT)) == NULL) {
                json_decref(all);
                snprintf(err, errlen, "%s: out of memory", file);
                return -ENOMEM;
        }
        json_decref(all);
        *field = keep(text);
        free(text);
        return *field != NULL ? 0 : -ENOMEM;
}

static int apply_section(const struct load *l, const struct key *keys, const json_t *obj,
                         const char *prefix, struct options *o);

static int apply_key(const struct load *l, const struct key *k, const json_t *v, const char *path,
                     struct options *o)
{
        char what[64];
        int rc;

        if (k->kind == K_SECTION) {
                if (!json_is_object(v))
                        return type_error(l, path, "an object", v);
                return apply_section(l, k->keys, v, path, o);
        }
        if (k->kind == K_RULES)
                return apply_rules(l, path, v, (struct options_list *)((char *)o + k->off));
        if (k->kind == K_MCP)
                return merge_mcp(l->file, v, (const char **)((char *)o + k->off), l->err,
                                 l->errlen);
        rc = convert(k, v, (char *)o + k->off);
        if (rc < 0) {
                snprintf(l->err, l->errlen, "%s: %s: out of memory", l->file, path);
                return rc;
        }
        if (rc == 0)
                return type_error(l, path, expectation(k, what, sizeof(what)), v);
        return 0;
}

static int unknown_key(const struct load *l, const struct key *keys, const char *path)
{
        char known[256];
        size_t o = 0;

        known[0] = '\0';
        for (; keys->name != NULL && o < sizeof(known); keys++)
                o += (size_t)snprintf(known + o, sizeof(known) - o, "%s%s", o ? ", " : "",
                                      keys->name);
        snprintf(l->err, l->errlen, "%s: %s: unknown key (known keys: %s)", l->file, path, known);
        return -EINVAL;
}

static int apply_section(const struct load *l, const struct key *keys, const json_t *obj,
                         const char *prefix, struct options *o)
{
        const char *name;
        const json_t *v;
        char path[256];
        int rc;

        json_object_foreach ((json_t *)obj, name, v) {
                const struct key *k;

                snprintf(path, sizeof(path), "%s%s%s", prefix, prefix[0] ? "." : "", name);
                for (k = keys; k->name != NULL; k++)
                        if (strcmp(k->name, name) == 0)
                                break;
                if (k->name == NULL)
                        return unknown_key(l, keys, path);
                rc = apply_key(l, k, v, path, o);
                if (rc < 0)
                        return rc;
        }
        return 0;
}

static int read_all(int fd, char **out, size_t *outlen)
{
        char *buf = malloc(CONFIG_MAX_BYTES + 1);
        size_t n = 0;
        ssize_t r;

        if (buf == NULL)
                return -ENOMEM;
        while (n <= CONFIG_MAX_BYTES) {
                r = read(fd, buf + n, CONFIG_MAX_BYTES + 1 - n);
                if (r < 0 && errno == EINTR)
                        continue;
                if (r < 0) {
                        r = -errno;
                        free(buf);
                        return (int)r;
                }
                if (r == 0)
                        break;
                n += (size_t)r;
        }
        if (n > CONFIG_MAX_BYTES) {
                free(buf);
                return -EFBIG;
        }
        *out = buf;
        *outlen = n;
        return 0;
}

/* Parses the file into *root. 1 when read, 0 when a default file is
 * missing, <0 with err filled. */
static int parse_file(const char *file, int must_exist, json_t **root, char *err, size_t errlen)
{
        json_error_t jerr;
        struct stat st;
        char *buf = NULL;
        size_t n = 0;
        int fd, rc;

        fd = open(file, O_RDONLY | O_CLOEXEC);
        if (fd < 0) {
                rc = -errno;
                if (!must_exist && (rc == -ENOENT || rc == -ENOTDIR))
                        return 0;
                snprintf(err, errlen, "%s: %s", file, strerror(-rc));
                return rc;
        }
        if (fstat(fd, &st) == 0 && S_ISDIR(st.st_mode))
                rc = -EISDIR;
        else
                rc = read_all(fd, &buf, &n);
        close(fd);
        if (rc < 0) {
                snprintf(err, errlen, "%s: %s", file,
                         rc == -EFBIG ? "larger than 1 MiB; not a config file" : strerror(-rc));
                return rc;
        }
        *root = json_loadb(buf, n, JSON_REJECT_DUPLICATES, &jerr);
        free(buf);
        if (*root == NULL) {
                if (jerr.line > 0)
                        snprintf(err, errlen, "%s:%d:%d: invalid JSON: %s", file, jerr.line,
                                 jerr.column, jerr.text);
                else
                        snprintf(err, errlen, "%s: invalid JSON: %s", file, jerr.text);
                return -EINVAL;
        }
        return 1;
}

/* Applies the file over *o, all or nothing. 1 when read, 0 when a default
 * file is missing, <0 with err filled. */
static int load_file(const char *file, int must_exist, struct options *o, char *err, size_t errlen)
{
        struct load l = {file, err, errlen};
        struct options tmp = *o;
        json_t *root = NULL;
        int rc;

        rc = parse_file(file, must_exist, &root, err, errlen);
        if (rc <= 0)
                return rc;
        if (!json_is_object(root))
                rc = type_error(&l, "top level", "an object", root);
        else
                rc = apply_section(&l, top_keys, root, "", &tmp);
        if (rc >= 0 && json_object_get(root, "tool_execution_mode") != NULL) {
                char from[PATH_MAX + 16];
                snprintf(from, sizeof(from), "config file %s", file);
                if ((tmp.mode_from = keep(from)) == NULL)
                        rc = -ENOMEM;
        }
        json_decref(root);
        if (rc < 0)
                return rc;
        *o = tmp;
        return 1;
}

static int apply_env(struct options *o, char *err, size_t errlen)
{
        static const struct {
                const char *var;
                size_t off;
        } strs[] = {
            {"PROCTOR_MODEL", offsetof(struct options, model)},
            {"PROCTOR_BASE_URL", offsetof(struct options, base_url)},
            {"PROCTOR_CA_CERT", offsetof(struct options, ca_cert)},
            {"PROCTOR_IMAGE", offsetof(struct options, image)},
            {"PROCTOR_RUNTIME", offsetof(struct options, runtime)},
            {"PROCTOR_APPROVAL", offsetof(struct options, approval)},
        };
        const char *v = getenv("TOOL_EXECUTION_MODE");
        size_t i;

        /* A typo here must not quietly run tools on the host. */
        if (v != NULL && v[0] != '\0' && options_parse_mode(v, &o->mode) < 0) {
                snprintf(err, errlen,
                         "TOOL_EXECUTION_MODE: unknown mode '%s' (expected local or sandbox)", v);
                return -EINVAL;
        }
        if (v != NULL && v[0] != '\0')
                o->mode_from = "TOOL_EXECUTION_MODE";
        for (i = 0; i < sizeof(strs) / sizeof(strs[0]); i++) {
                v = getenv(strs[i].var);
                if (v == NULL || v[0] == '\0')
                        continue;
                v = keep(v);
                if (v == NULL)
                        return -ENOMEM;
                *(const char **)((char *)o + strs[i].off) = v;
        }
        v = getenv("PROCTOR_IMAGE_MAX");
        if (v != NULL && v[0] != '\0') {
                uint64_t n;
                if (units_parse_size(v, &n) < 0 || n == 0) {
                        snprintf(err, errlen,
                                 "PROCTOR_IMAGE_MAX: bad size '%s' (examples: 512M, 16G)", v);
                        return -EINVAL;
                }
                o->image_max = n;
        }
        return 0;
}

/* --mcp-config FILE: a file in the shape the other MCP clients use,
 * {"mcpServers": {...}}, merged over the servers so far (the config
 * file's, then those of each earlier --mcp-config). */
static int load_mcp_config(struct options *o, const char *file, char *err, size_t errlen)
{
        const json_t *servers;
        json_t *root = NULL;
        int rc;

        rc = parse_file(file, 1, &root, err, errlen);
        if (rc < 0)
                return rc;
        servers = json_object_get(root, "mcpServers");
        if (servers == NULL) {
                snprintf(err, errlen, "%s: expected an object with the key \"mcpServers\"", file);
                rc = -EINVAL;
        } else {
                rc = merge_mcp(file, servers, &o->mcp_servers, err, errlen);
        }
        json_decref(root);
        return rc;
}

/* --runtime docker runs every tool in a container: sandbox mode, unless
 * --mode local was asked for in so many words. */
static int check_runtime(struct options *o, char *err, size_t errlen)
{
        if (o->runtime == NULL || strcmp(o->runtime, "native") == 0) {
                o->runtime = NULL;
                return 0;
        }
        if (strcmp(o->runtime, "docker") != 0) {
                snprintf(err, errlen, "--runtime: unknown runtime '%s' (expected native or docker)",
                         o->runtime);
                return -EINVAL;
        }
        if (o->mode == EXEC_LOCAL && strcmp(o->mode_from, "--mode") == 0) {
                snprintf(err, errlen,
                         "--runtime docker runs tools in containers: it cannot be "
                         "combined with --mode local");
                return -EINVAL;
        }
        if (o->mode == EXEC_LOCAL) {
                o->mode = EXEC_SANDBOX;
                o->mode_from = "--runtime docker";
        }
        return 0;
}

int config_resolve(int argc, char **argv, struct options *o, char *err, size_t errlen)
{
        struct options flags;
        char def[PATH_MAX];
        const char *file, *loaded = NULL;
        int rc;

        /* First pass: bad flags are reported before the file is read, and
         * --config is found wherever it is. */
        options_builtin(&flags);
        rc = options_parse(argc, argv, &flags, err, errlen);
        if (rc < 0)
                return rc;
        if (flags.help) {
                *o = flags;
                return 0;
        }
        options_builtin(o);
        file = flags.config;
        if (file == NULL && config_xdg_path("XDG_CONFIG_HOME", ".config", "proctor/config.json",
                                            def, sizeof(def)) == 0)
                file = def;
        rc = file != NULL ? load_file(file, flags.config != NULL, o, err, errlen) : 0;
        if (rc < 0)
                return rc;
        if (rc > 0 && (loaded = keep(file)) == NULL)
                return -ENOMEM;
        rc = apply_env(o, err, errlen);
        if (rc < 0)
                return rc;
        rc = options_parse(argc, argv, o, err, errlen);
        if (rc < 0)
                return rc;
        o->config = loaded;
        if ((rc = check_runtime(o, err, errlen)) < 0)
                return rc;
        enum approval_policy policy;
        if (o->approval != NULL && approval_policy_parse(o->approval, &policy) < 0) {
                snprintf(err, errlen,
                         "unknown approval policy '%.40s' (expected host, always or never)",
                         o->approval);
                return -EINVAL;
        }
        for (unsigned i = 0; i < o->mcp_config.n && rc == 0; i++)
                rc = load_mcp_config(o, o->mcp_config.v[i], err, errlen);
        return rc;
}

int config_protect_own(struct exec_workspace *ws, const char *config_file, char *err, size_t errlen)
{
        static const char *const dirs[][2] = {
            {"XDG_CONFIG_HOME", ".config"},
            {"XDG_STATE_HOME", ".local/state"},
            {"XDG_CACHE_HOME", ".cache"},
        };
        char path[PATH_MAX];
        size_t i;
        int rc;

        for (i = 0; i < sizeof(dirs) / sizeof(dirs[0]); i++) {
                if (config_xdg_path(dirs[i][0], dirs[i][1], "proctor", path, sizeof(path)) < 0)
                        continue;
                if ((rc = exec_workspace_protect(ws, path, true, err, errlen)) < 0)
                        return rc;
        }
        if (config_file != NULL && realpath(config_file, path) != NULL)
                return exec_workspace_protect(ws, path, false, err, errlen);
        return 0;
}
