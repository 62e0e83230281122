/* tools: the registry and schemas of the agent's tools, argument
 * validation, output capping, and the file and cache tools run in-process.
 * Must never start a process, and never crash or abort on what a model
 * sends: every failure becomes an error result with a message for it. */
#include "core/tools/tools.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/util/buf.h"
#include "exec/fdio.h"

#define READ_MAX       (10u << 20) /* bytes a read returns at most */
#define EDIT_MAX       (64u << 20) /* size of a file edit loads at most */
#define STDIN_MAX      (64u << 20) /* arguments `proctor tool` accepts */
#define BINARY_PROBE   8192        /* a NUL in this prefix makes a file binary */
#define READ_CHUNK     65536
#define TIMEOUT_MAX    86400 /* seconds */
#define CACHE_FILENAME "proctor-cache.json"

/* ---------------------------------------------------------------- registry */

enum ptype { P_STRING, P_INTEGER, P_NUMBER, P_BOOLEAN };

struct param {
        const char *name;
        enum ptype type;
        bool required;
        bool nonempty; /* strings: minLength 1 */
        bool has_min, min_exclusive, has_max;
        double min, max;
        const char *desc;
};

typedef void (*tool_fn)(const json_t *args, const char *root, struct tools_cache *cache,
                        struct tools_result *out);

struct tool {
        const char *name;
        const char *desc;
        const struct param *params;
        size_t nparams;
        tool_fn run; /* NULL for the tools that run a process */
};

static void run_read(const json_t *, const char *, struct tools_cache *, struct tools_result *);
static void run_write(const json_t *, const char *, struct tools_cache *, struct tools_result *);
static void run_edit(const json_t *, const char *, struct tools_cache *, struct tools_result *);
static void run_read_cache(const json_t *, const char *, struct tools_cache *,
                           struct tools_result *);
static void run_write_cache(const json_t *, const char *, struct tools_cache *,
                            struct tools_result *);

#define PATH_PARAM(verb)                                                                           \
        {                                                                                          \
                .name = "path", .type = P_STRING, .required = true, .nonempty = true,              \
                .desc = "Path of the file to " verb ", absolute or relative to the working "       \
                        "directory."                                                               \
        }

static const struct param bash_params[] = {
    {.name = "command",
     .type = P_STRING,
     .required = true,
     .nonempty = true,
     .desc = "The command line to run with bash."},
    {.name = "timeout",
     .type = P_NUMBER,
     .has_min = true,
     .min_exclusive = true,
     .min = 0,
     .has_max = true,
     .max = TIMEOUT_MAX,
     .desc = "Seconds after which the command is killed, from 1 up to the session's timeout "
             "(longer is held to it). Default: the session's timeout."},
};

static const struct param read_params[] = {
    PATH_PARAM("read"),
    {.name = "offset",
     .type = P_INTEGER,
     .has_min = true,
     .min = 1,
     .desc = "Number of the first line to return, counting from 1. Default: 1."},
    {.name = "limit",
     .type = P_INTEGER,
     .has_min = true,
     .min = 1,
     .desc = "Maximum number of lines to return. Default: every line to the end of the file."},
};

static const struct param write_params[] = {
    PATH_PARAM("write"),
    {.name = "content",
     .type = P_STRING,
     .required = true,
     .desc = "The complete new content of the file."},
};

static const struct param edit_params[] = {
    PATH_PARAM("edit"),
    {.name = "old_str",
     .type = P_STRING,
     .required = true,
     .nonempty = true,
     .desc = "The exact text to replace, whitespace and indentation included; include "
             "surrounding lines to make it unique in the file."},
    {.name = "new_str",
     .type = P_STRING,
     .required = true,
     .desc = "The text to put in its place; empty to delete old_str."},
    {.name = "replace_all",
     .type = P_BOOLEAN,
     .desc = "Replace every occurrence of old_str instead of requiring exactly one. "
             "Default: false."},
};

static const struct param python_params[] = {
    {.name = "code",
     .type = P_STRING,
     .required = true,
     .nonempty = true,
     .desc = "The Python 3 program to run."},
};

static const struct param read_cache_params[] = {
    {.name = "key",
     .type = P_STRING,
     .required = true,
     .nonempty = true,
     .desc = "The key the value was saved under with write_cache."},
};

static const struct param write_cache_params[] = {
    {.name = "key",
     .type = P_STRING,
     .required = true,
     .nonempty = true,
     .desc = "The key to save the value under."},
    {.name = "value", .type = P_STRING, .required = true, .desc = "The text to save."},
};

#define TOOL(n, d, p, fn)                                                                          \
        {                                                                                          \
                .name = n, .desc = d, .params = p, .nparams = sizeof(p) / sizeof(p[0]), .run = fn  \
        }

static const struct tool tools[] = {
    TOOL("bash",
         "Run a bash command in the working directory; returns its output (stdout and "
         "stderr) and exit status.",
         bash_params, NULL),
    TOOL("read",
         "Read a text file; returns its lines numbered like `cat -n`. Use offset and limit "
         "to read part of a large file.",
         read_params, run_read),
    TOOL("write",
         "Create or overwrite a file with the given content, creating parent directories "
         "as needed.",
         write_params, run_write),
    TOOL("edit",
         "Replace text in a file: old_str must occur exactly once, unless replace_all is "
         "true.",
         edit_params, run_edit),
    TOOL("run_python_code",
         "Run a Python 3 program in the working directory; returns its output (stdout "
         "and stderr) and exit status.",
         python_params, NULL),
    TOOL("read_cache", "Get a value saved earlier in this session with write_cache.",
         read_cache_params, run_read_cache),
    TOOL("write_cache",
         "Save a text value under a key for later read_cache calls in this session; "
         "replaces any value already saved under that key.",
         write_cache_params, run_write_cache),
};

#define NTOOLS (sizeof(tools) / sizeof(tools[0]))

static const struct tool *tool_find(const char *name)
{
        size_t i;

        if (name == NULL)
                return NULL;
        for (i = 0; i < NTOOLS; i++)
                if (strcmp(tools[i].name, name) == 0)
                        return &tools[i];
        return NULL;
}

static const struct param *param_find(const struct tool *t, const char *name)
{
        size_t i;

        for (i = 0; i < t->nparams; i++)
                if (strcmp(t->params[i].name, name) == 0)
                        return &t->params[i];
        return NULL;
}

bool tools_known(const char *name)
{
        return tool_find(name) != NULL;
}

bool tools_runs_process(const char *name)
{
        const struct tool *t = tool_find(name);

        return t != NULL && t->run == NULL;
}

/* ----------------------------------------------------------------- schemas */

static const char *const ptype_names[] = {"string", "integer", "number", "boolean"};

static json_t *param_schema(const struct param *p)
{
        json_t *o = json_pack("{s:s, s:s}", "type", ptype_names[p->type], "description", p->desc);

        if (o == NULL)
                return NULL;
        if (p->nonempty)
                json_object_set_new(o, "minLength", json_integer(1));
        if (p->has_min)
                json_object_set_new(o, p->min_exclusive ? "exclusiveMinimum" : "minimum",
                                    p->type == P_INTEGER ? json_integer((json_int_t)p->min)
                                                         : json_real(p->min));
        if (p->has_max)
                json_object_set_new(o, "maximum",
                                    p->type == P_INTEGER ? json_integer((json_int_t)p->max)
                                                         : json_real(p->max));
        return o;
}

static json_t *tool_schema(const struct tool *t)
{
        json_t *props = json_object(), *req = json_array();
        size_t i;

        if (props == NULL || req == NULL) {
                json_decref(props);
                json_decref(req);
                return NULL;
        }
        for (i = 0; i < t->nparams; i++) {
                json_object_set_new(props, t->params[i].name, param_schema(&t->params[i]));
                if (t->params[i].required)
                        json_array_append_new(req, json_string(t->params[i].name));
        }
        return json_pack("{s:s, s:{s:s, s:s, s:{s:s, s:o, s:o, s:b}}}", "type", "function",
                         "function", "name", t->name, "description", t->desc, "parameters", "type",
                         "object", "properties", props, "required", req, "additionalProperties", 0);
}

const json_t *tools_schemas(void)
{
        static json_t *schemas;
        json_t *a;
        size_t i;

        if (schemas != NULL)
                return schemas;
        a = json_array();
        for (i = 0; a != NULL && i < NTOOLS; i++) {
                if (json_array_append_new(a, tool_schema(&tools[i])) < 0) {
                        json_decref(a);
                        return NULL;
                }
        }
        schemas = a;
        return schemas;
}

/* -------------------------------------------------------------- validation */

static const char *json_kind(const json_t *v)
{
        switch (json_typeof(v)) {
        case JSON_OBJECT:
                return "an object";
        case JSON_ARRAY:
                return "an array";
        case JSON_STRING:
                return "a string";
        case JSON_INTEGER:
                return "an integer";
        case JSON_REAL:
                return "a number";
        case JSON_TRUE:
        case JSON_FALSE:
                return "a boolean";
        default:
                return "null";
        }
}

static const char *const ptype_articles[] = {"a string", "an integer", "a number", "a boolean"};

/* A real with no fraction is an integer for JSON Schema; so is it here, as
 * long as it converts exactly. */
static bool real_is_integral(double d)
{
        return d >= -9007199254740992.0 && d <= 9007199254740992.0 && (double)(json_int_t)d == d;
}

static int check_range(const struct tool *t, const struct param *p, double v, char *err,
                       size_t errlen)
{
        if (p->has_min && (p->min_exclusive ? v <= p->min : v < p->min)) {
                snprintf(err, errlen, "arguments for '%s': field '%s' must be %s %.15g, got %.15g",
                         t->name, p->name, p->min_exclusive ? "greater than" : "at least", p->min,
                         v);
                return -EINVAL;
        }
        if (p->has_max && v > p->max) {
                snprintf(err, errlen,
                         "arguments for '%s': field '%s' must be at most %.15g, got %.15g", t->name,
                         p->name, p->max, v);
                return -EINVAL;
        }
        return 0;
}

static int check_value(const struct tool *t, const struct param *p, const json_t *v, char *err,
                       size_t errlen)
{
        bool ok;

        switch (p->type) {
        case P_STRING:
                ok = json_is_string(v);
                break;
        case P_INTEGER:
                ok =
                    json_is_integer(v) || (json_is_real(v) && real_is_integral(json_real_value(v)));
                if (!ok && json_is_real(v)) {
                        snprintf(err, errlen,
                                 "arguments for '%s': field '%s' must be an integer, not %.15g",
                                 t->name, p->name, json_real_value(v));
                        return -EINVAL;
                }
                break;
        case P_NUMBER:
                ok = json_is_number(v);
                break;
        default:
                ok = json_is_boolean(v);
                break;
        }
        if (!ok) {
                snprintf(err, errlen, "arguments for '%s': field '%s' must be %s, not %s", t->name,
                         p->name, ptype_articles[p->type], json_kind(v));
                return -EINVAL;
        }
        if (p->nonempty && json_string_length(v) == 0) {
                snprintf(err, errlen, "arguments for '%s': field '%s' must not be empty", t->name,
                         p->name);
                return -EINVAL;
        }
        if (p->type == P_INTEGER || p->type == P_NUMBER)
                return check_range(t, p, json_number_value(v), err, errlen);
        return 0;
}

static void list_params(const struct tool *t, char *buf, size_t len)
{
        size_t i, off = 0;

        buf[0] = '\0';
        for (i = 0; i < t->nparams && off < len; i++)
                off += (size_t)snprintf(buf + off, len - off, "%s%s", i ? ", " : "",
                                        t->params[i].name);
}

/* Checks an arguments object without changing it. An optional field set to
 * null counts as absent: models often send null for what they leave out. */
static int validate(const struct tool *t, const json_t *obj, char *err, size_t errlen)
{
        json_t *v;
        void *it;
        size_t i;
        int rc;

        if (!json_is_object(obj)) {
                snprintf(err, errlen, "arguments for '%s' must be a JSON object, not %s", t->name,
                         obj == NULL ? "nothing" : json_kind(obj));
                return -EINVAL;
        }
        for (it = json_object_iter((json_t *)obj); it != NULL;
             it = json_object_iter_next((json_t *)obj, it)) {
                const char *key = json_object_iter_key(it);

                if (param_find(t, key) == NULL) {
                        char allowed[256];

                        list_params(t, allowed, sizeof(allowed));
                        snprintf(err, errlen,
                                 "arguments for '%s': unknown field '%.64s' (allowed: %s)", t->name,
                                 key, allowed);
                        return -EINVAL;
                }
        }
        for (i = 0; i < t->nparams; i++) {
                const struct param *p = &t->params[i];

                v = json_object_get(obj, p->name);
                if ((v == NULL || json_is_null(v)) && !p->required)
                        continue;
                if (v == NULL) {
                        snprintf(err, errlen, "arguments for '%s': missing required field '%s'",
                                 t->name, p->name);
                        return -EINVAL;
                }
                rc = check_value(t, p, v, err, errlen);
                if (rc < 0)
                        return rc;
        }
        return 0;
}

/* After validation: drops null optional fields and turns integral reals
 * into integers, so that the tools see one shape. */
static void normalize(const struct tool *t, json_t *obj)
{
        size_t i;

        for (i = 0; i < t->nparams; i++) {
                json_t *v = json_object_get(obj, t->params[i].name);

                if (json_is_null(v))
                        json_object_del(obj, t->params[i].name);
                else if (t->params[i].type == P_INTEGER && json_is_real(v))
                        json_object_set_new(obj, t->params[i].name,
                                            json_integer((json_int_t)json_real_value(v)));
        }
}

static void unknown_tool(const char *name, char *err, size_t errlen)
{
        size_t i, off;

        off = (size_t)snprintf(err, errlen,
                               "unknown tool '%.64s' (available: ", name != NULL ? name : "");
        for (i = 0; i < NTOOLS && off < errlen; i++)
                off +=
                    (size_t)snprintf(err + off, errlen - off, "%s%s", i ? ", " : "", tools[i].name);
        if (off < errlen)
                snprintf(err + off, errlen - off, ")");
}

static bool blank(const char *s)
{
        if (s == NULL)
                return true;
        while (*s == ' ' || *s == '\t' || *s == '\n' || *s == '\r')
                s++;
        return *s == '\0';
}

int tools_parse_args(const char *name, const char *arguments, json_t **args, char *err,
                     size_t errlen)
{
        const struct tool *t = tool_find(name);
        /* an MCP tool's schema is its server's to enforce */
        bool mcp = t == NULL && name != NULL &&
                   strncmp(name, TOOLS_MCP_PREFIX, strlen(TOOLS_MCP_PREFIX)) == 0;
        json_error_t je;
        json_t *obj;
        int rc;

        *args = NULL;
        if (t == NULL && !mcp) {
                unknown_tool(name, err, errlen);
                return -ENOENT;
        }
        if (blank(arguments))
                obj = json_object();
        else
                obj = json_loads(arguments, JSON_DECODE_ANY | JSON_REJECT_DUPLICATES, &je);
        if (obj == NULL) {
                snprintf(err, errlen,
                         "arguments for '%s' are not valid JSON: %s (line %d, column %d)", name,
                         je.text, je.line, je.column);
                return -EINVAL;
        }
        if (mcp) {
                if (!json_is_object(obj)) {
                        snprintf(err, errlen, "arguments for '%s' must be a JSON object", name);
                        json_decref(obj);
                        return -EINVAL;
                }
                *args = obj;
                return 0;
        }
        rc = validate(t, obj, err, errlen);
        if (rc < 0) {
                json_decref(obj);
                return rc;
        }
        normalize(t, obj);
        *args = obj;
        return 0;
}

/* The accessors below read validated arguments, yet never trust them. */

static const char *arg_str(const json_t *args, const char *key, size_t *len)
{
        const json_t *v = json_object_get(args, key);

        if (len != NULL)
                *len = json_string_length(v);
        return json_string_value(v);
}

static uint64_t arg_count(const json_t *args, const char *key, uint64_t def)
{
        const json_t *v = json_object_get(args, key);
        double d;

        if (json_is_integer(v))
                return json_integer_value(v) > 0 ? (uint64_t)json_integer_value(v) : def;
        d = json_real_value(v);
        return d >= 1 && d < 1.8e19 ? (uint64_t)d : def;
}

/* ------------------------------------------------------------------ results */

struct buf {
        char *p;
        size_t len, cap;
        bool oom;
};

/* Room for `extra` more bytes and a NUL; false (and oom from then on)
 * when there is none. */
static bool room(struct buf *b, size_t extra)
{
        if (!b->oom && buf_reserve(&b->p, &b->cap, b->len, extra, 256) < 0)
                b->oom = true;
        return !b->oom;
}

static void buf_add(struct buf *b, const void *data, size_t n)
{
        if (!b->oom && buf_append(&b->p, &b->len, &b->cap, data, n) < 0)
                b->oom = true;
}

void tools_result_free(struct tools_result *r)
{
        if (r == NULL)
                return;
        free(r->text);
        r->text = NULL;
        r->len = 0;
}

__attribute__((format(printf, 3, 4))) static void result_fmt(struct tools_result *out, bool error,
                                                             const char *fmt, ...)
{
        va_list ap;
        int n;

        va_start(ap, fmt);
        n = vasprintf(&out->text, fmt, ap);
        va_end(ap);
        if (n < 0) {
                out->text = NULL;
                n = 0;
        }
        out->len = (size_t)n;
        out->error = error;
}

/* Takes the buffer as the result's text. */
static void result_buf(struct tools_result *out, struct buf *b)
{
        if (b->oom) {
                free(b->p);
                result_fmt(out, true, "out of memory");
                return;
        }
        if (b->p == NULL)
                buf_add(b, "", 0);
        out->text = b->p;
        out->len = b->len;
        out->error = false;
}

/* ------------------------------------------------------------- files, paths */

/* Relative paths resolve against root; absolute ones are used as given (in
 * sandbox mode the sandbox is the boundary). Returns a malloc'd path. */
static char *resolve(const char *root, const char *path)
{
        char *p;

        if (path[0] == '/' || root == NULL || root[0] == '\0')
                return strdup(path);
        if (asprintf(&p, "%s/%s", root, path) < 0)
                return NULL;
        return p;
}

static ssize_t read_full(int fd, char *buf, size_t len)
{
        size_t got = 0;

        while (got < len) {
                ssize_t n = read(fd, buf + got, len - got);

                if (n < 0 && errno == EINTR)
                        continue;
                if (n < 0)
                        return -1;
                if (n == 0)
                        break;
                got += (size_t)n;
        }
        return (ssize_t)got;
}

/* Opens a regular file for reading: a FIFO must not block the loop, and a
 * directory gets its own reason. Returns the fd or -errno. */
static int open_regular(const char *path, struct stat *st)
{
        int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK), rc;

        if (fd < 0)
                return -errno;
        if (fstat(fd, st) < 0) {
                rc = -errno;
                close(fd);
                return rc;
        }
        if (!S_ISREG(st->st_mode)) {
                close(fd);
                return S_ISDIR(st->st_mode) ? -EISDIR : -EINVAL;
        }
        return fd;
}

static const char *open_reason(int rc)
{
        return rc == -EINVAL ? "not a regular file" : strerror(-rc);
}

/* Reads a whole regular file of at most `max` bytes. */
static int slurp(const char *path, size_t max, struct buf *b)
{
        struct stat st;
        int fd = open_regular(path, &st), rc;
        ssize_t n;

        if (fd < 0)
                return fd;
        if ((uint64_t)st.st_size > max) {
                close(fd);
                return -EFBIG;
        }
        do {
                if (!room(b, READ_CHUNK)) {
                        close(fd);
                        return -ENOMEM;
                }
                n = read_full(fd, b->p + b->len, READ_CHUNK);
                if (n > 0)
                        b->len += (size_t)n;
                if (b->len > max) {
                        close(fd);
                        return -EFBIG;
                }
        } while (n == READ_CHUNK);
        rc = n < 0 ? -errno : 0;
        close(fd);
        if (rc == 0)
                b->p[b->len] = '\0';
        return rc;
}

/* Creates the directories above `path`. On failure *failed is the length
 * of the prefix of `path` that names the directory that could not be made. */
static int mkdir_parents(const char *path, size_t *failed)
{
        char *copy, *slash;
        struct stat st;
        int rc = 0;

        slash = strrchr(path, '/');
        if (slash == NULL || slash == path)
                return 0;
        copy = strndup(path, (size_t)(slash - path));
        if (copy == NULL)
                return -ENOMEM;
        if (stat(copy, &st) == 0 && S_ISDIR(st.st_mode)) {
                free(copy);
                return 0;
        }
        for (slash = copy + 1;; slash++) {
                slash = strchr(slash, '/');
                if (slash != NULL)
                        *slash = '\0';
                if (mkdir(copy, 0777) < 0) {
                        if (errno != EEXIST)
                                rc = -errno;
                        else if (stat(copy, &st) < 0)
                                rc = -errno;
                        else if (!S_ISDIR(st.st_mode))
                                rc = -ENOTDIR;
                }
                if (rc < 0) {
                        *failed = strlen(copy);
                        break;
                }
                if (slash == NULL)
                        break;
                *slash = '/';
        }
        free(copy);
        return rc;
}

/* Replaces a file's content atomically: a temporary file in the same
 * directory, renamed over the target, so a reader sees the old or the new
 * content and never a part. With `follow`, writes through a symlink to its
 * target (what a model editing a file means); without, replaces the link,
 * as a file in a shared /tmp must. Keeps an existing file's mode, else
 * creates with `mode` (less the umask). */
static int replace_file(const char *path, const char *data, size_t len, mode_t mode, bool follow)
{
        static unsigned counter;
        char *target = NULL, *tmp = NULL;
        const char *slash;
        struct stat st;
        bool exists;
        int fd = -1, rc, tries;

        if (follow && lstat(path, &st) == 0 && S_ISLNK(st.st_mode))
                target = realpath(path, NULL);
        if (target != NULL)
                path = target;
        exists = (follow ? stat(path, &st) : lstat(path, &st)) == 0 && !S_ISLNK(st.st_mode);
        if (exists && S_ISDIR(st.st_mode)) {
                rc = -EISDIR;
                goto out;
        }
        if (exists && access(path, W_OK) < 0) {
                rc = -errno;
                goto out;
        }
        slash = strrchr(path, '/');
        for (tries = 0; tries < 100; tries++) {
                free(tmp);
                if (asprintf(&tmp, "%.*s.proctor-tmp.%ld.%u", slash ? (int)(slash - path + 1) : 0,
                             path, (long)getpid(), counter++) < 0) {
                        tmp = NULL;
                        rc = -ENOMEM;
                        goto out;
                }
                fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOCTTY,
                          exists ? 0600 : mode);
                if (fd >= 0 || errno != EEXIST)
                        break;
        }
        if (fd < 0) {
                rc = -errno;
                goto out;
        }
        rc = fdio_write_all(fd, data, len);
        if (rc == 0 && exists && fchmod(fd, st.st_mode & 07777) < 0)
                rc = -errno;
        if (close(fd) < 0 && rc == 0)
                rc = -errno;
        if (rc == 0 && rename(tmp, path) < 0)
                rc = -errno;
        if (rc < 0)
                unlink(tmp);
out:
        free(tmp);
        free(target);
        return rc;
}

/* ------------------------------------------------------------------- read */

/* "%6zu\t" without printf: this runs once per line returned. */
static size_t format_lineno(char *out, uint64_t n)
{
        char digits[24];
        size_t k = 0, len = 0;

        do {
                digits[k++] = (char)('0' + n % 10);
                n /= 10;
        } while (n > 0);
        while (len + k < 6)
                out[len++] = ' ';
        while (k > 0)
                out[len++] = digits[--k];
        out[len++] = '\t';
        return len;
}

struct line_reader {
        uint64_t first, stop; /* lines [first, stop) are returned */
        uint64_t lineno;      /* line of the next byte */
        bool at_start;        /* the next byte begins a line */
        size_t selected;      /* bytes of the file returned */
        struct buf out;
};

/* Feeds one chunk; returns 1 once every wanted line is out, -EFBIG when the
 * selection passes READ_MAX. */
static int lines_feed(struct line_reader *lr, const char *p, const char *end)
{
        char num[32];

        while (p < end) {
                const char *nl, *seg;

                if (lr->lineno >= lr->stop)
                        return 1;
                nl = memchr(p, '\n', (size_t)(end - p));
                seg = nl != NULL ? nl + 1 : end;
                if (lr->lineno >= lr->first) {
                        if (lr->at_start)
                                buf_add(&lr->out, num, format_lineno(num, lr->lineno));
                        buf_add(&lr->out, p, (size_t)(seg - p));
                        lr->selected += (size_t)(seg - p);
                        if (lr->selected > READ_MAX)
                                return -EFBIG;
                }
                lr->at_start = nl != NULL;
                lr->lineno += nl != NULL;
                p = seg;
        }
        return lr->lineno >= lr->stop;
}

/* Streams the file: lines before offset are skipped as they pass, and
 * reading stops after the last line wanted, so a few lines of a huge file
 * cost a few chunks of memory. */
static void run_read(const json_t *args, const char *root, struct tools_cache *cache,
                     struct tools_result *out)
{
        const char *path = arg_str(args, "path", NULL);
        uint64_t offset = arg_count(args, "offset", 1), limit = arg_count(args, "limit", 0);
        bool whole = json_object_get(args, "offset") == NULL && limit == 0;
        struct line_reader lr = {.first = offset, .lineno = 1, .at_start = true};
        char chunk[READ_CHUNK], *full = resolve(root, path);
        uint64_t pos = 0, total;
        struct stat st;
        ssize_t n;
        int fd, rc = 0;

        fd = full != NULL ? open_regular(full, &st) : -ENOMEM;
        free(full);
        if (fd < 0) {
                result_fmt(out, true, "cannot read %s: %s", path, open_reason(fd));
                return;
        }
        lr.stop = limit > 0 && offset + limit > offset ? offset + limit : UINT64_MAX;
        if (whole && (uint64_t)st.st_size > READ_MAX)
                rc = -EFBIG;
        else
                room(&lr.out,
                     st.st_size < READ_CHUNK ? (size_t)st.st_size * 9 / 8 + 64 : READ_CHUNK);
        while (rc == 0) {
                /* Chunks are read whole, so the first covers the probe. */
                n = read_full(fd, chunk, sizeof(chunk));
                if (n < 0) {
                        rc = -errno;
                        break;
                }
                if (pos < BINARY_PROBE &&
                    memchr(chunk, '\0',
                           (uint64_t)n < BINARY_PROBE - pos ? (size_t)n : BINARY_PROBE - pos)) {
                        rc = -EILSEQ;
                        break;
                }
                pos += (uint64_t)n;
                rc = lines_feed(&lr, chunk, chunk + n);
                if (rc != 0 || n < (ssize_t)sizeof(chunk))
                        break;
        }
        close(fd);
        total = lr.lineno - 1 + !lr.at_start;
        if (rc == -EFBIG)
                result_fmt(out, true,
                           "cannot read %s: it is larger than 10 MB; use offset and limit to "
                           "read part of it",
                           path);
        else if (rc == -EILSEQ)
                result_fmt(out, true, "cannot read %s: binary file", path);
        else if (rc < 0)
                result_fmt(out, true, "cannot read %s: %s", path, strerror(-rc));
        else if (rc == 0 && total == 0 && offset == 1)
                result_fmt(out, false, "(%s is empty)", path);
        else if (rc == 0 && offset > total)
                result_fmt(out, true,
                           "cannot read %s: offset %" PRIu64
                           " is past the end of the file (%" PRIu64 " line%s)",
                           path, offset, total, total == 1 ? "" : "s");
        else {
                result_buf(out, &lr.out);
                return;
        }
        free(lr.out.p);
}

/* ------------------------------------------------------------- write, edit */

static void run_write(const json_t *args, const char *root, struct tools_cache *cache,
                      struct tools_result *out)
{
        size_t len, failed = 0;
        const char *path = arg_str(args, "path", NULL), *content = arg_str(args, "content", &len);
        char *full = resolve(root, path);
        int rc;

        if (full == NULL) {
                result_fmt(out, true, "out of memory");
                return;
        }
        rc = mkdir_parents(full, &failed);
        if (rc < 0) {
                /* Name the directory as the model knows it: without root. */
                size_t skip = strlen(full) - strlen(path);
                const char *dir = failed > skip ? full + skip : full;

                result_fmt(out, true, "cannot write %s: cannot create directory %.*s: %s", path,
                           (int)(failed > skip ? failed - skip : failed), dir, strerror(-rc));
        } else if ((rc = replace_file(full, content, len, 0666, true)) < 0) {
                result_fmt(out, true, "cannot write %s: %s", path, strerror(-rc));
        } else {
                result_fmt(out, false, "wrote %zu bytes to %s", len, path);
        }
        free(full);
}

/* Non-overlapping occurrences of needle, left to right. */
static size_t count_occurrences(const char *hay, size_t hlen, const char *needle, size_t nlen)
{
        const char *p = hay, *end = hay + hlen, *hit;
        size_t k = 0;

        while ((hit = memmem(p, (size_t)(end - p), needle, nlen)) != NULL) {
                k++;
                p = hit + nlen;
        }
        return k;
}

static void substitute(struct buf *dst, const struct buf *src, const char *old, size_t olen,
                       const char *new, size_t nlen)
{
        const char *p = src->p, *end = src->p + src->len, *hit;

        room(dst, src->len);
        while ((hit = memmem(p, (size_t)(end - p), old, olen)) != NULL) {
                buf_add(dst, p, (size_t)(hit - p));
                buf_add(dst, new, nlen);
                p = hit + olen;
        }
        buf_add(dst, p, (size_t)(end - p));
}

static void run_edit(const json_t *args, const char *root, struct tools_cache *cache,
                     struct tools_result *out)
{
        size_t olen, nlen, k;
        const char *path = arg_str(args, "path", NULL), *old = arg_str(args, "old_str", &olen),
                   *new = arg_str(args, "new_str", &nlen);
        bool all = json_is_true(json_object_get(args, "replace_all"));
        struct buf src = {0}, dst = {0};
        char *full = NULL;
        int rc;

        if (olen == 0) {
                result_fmt(out, true, "cannot edit %s: old_str must not be empty", path);
                return;
        }
        if (olen == nlen && memcmp(old, new, olen) == 0) {
                result_fmt(out, true,
                           "cannot edit %s: old_str and new_str are identical; nothing to change",
                           path);
                return;
        }
        full = resolve(root, path);
        rc = full != NULL ? slurp(full, EDIT_MAX, &src) : -ENOMEM;
        k = rc == 0 ? count_occurrences(src.p, src.len, old, olen) : 0;
        if (rc == -EFBIG)
                result_fmt(out, true, "cannot edit %s: it is larger than 64 MB", path);
        else if (rc < 0)
                result_fmt(out, true, "cannot edit %s: %s", path, open_reason(rc));
        else if (k == 0)
                result_fmt(out, true,
                           "cannot edit %s: old_str was not found (it must match exactly, "
                           "whitespace and indentation included)",
                           path);
        else if (k > 1 && !all)
                result_fmt(out, true,
                           "cannot edit %s: old_str occurs %zu times; add surrounding context to "
                           "make it unique, or set replace_all to replace every occurrence",
                           path, k);
        else {
                substitute(&dst, &src, old, olen, new, nlen);
                if (dst.oom)
                        rc = -ENOMEM;
                else
                        rc = replace_file(full, dst.p ? dst.p : "", dst.len, 0666, true);
                if (rc < 0)
                        result_fmt(out, true, "cannot edit %s: %s", path, strerror(-rc));
                else
                        result_fmt(out, false, "replaced %zu occurrence%s in %s", k,
                                   k == 1 ? "" : "s", path);
        }
        free(src.p);
        free(dst.p);
        free(full);
}

/* ------------------------------------------------------------------ cache */

struct tools_cache {
        json_t *map; /* key -> string */
};

struct tools_cache *tools_cache_new(void)
{
        struct tools_cache *c = calloc(1, sizeof(*c));

        if (c != NULL && (c->map = json_object()) == NULL) {
                free(c);
                return NULL;
        }
        return c;
}

void tools_cache_free(struct tools_cache *c)
{
        if (c == NULL)
                return;
        json_decref(c->map);
        free(c);
}

int tools_cache_load(struct tools_cache *c, const char *path)
{
        struct buf b = {0};
        json_t *map;
        void *it;
        int rc;

        if (c == NULL || path == NULL)
                return -EINVAL;
        rc = slurp(path, EDIT_MAX, &b);
        if (rc < 0) {
                free(b.p);
                return rc;
        }
        map = json_loadb(b.p ? b.p : "", b.len, JSON_REJECT_DUPLICATES, NULL);
        free(b.p);
        if (!json_is_object(map)) {
                json_decref(map);
                return -EINVAL;
        }
        for (it = json_object_iter(map); it != NULL; it = json_object_iter_next(map, it)) {
                if (!json_is_string(json_object_iter_value(it))) {
                        json_decref(map);
                        return -EINVAL;
                }
        }
        json_decref(c->map);
        c->map = map;
        return 0;
}

int tools_cache_save(const struct tools_cache *c, const char *path)
{
        char *text;
        int rc;

        if (c == NULL || path == NULL)
                return -EINVAL;
        text = json_dumps(c->map, JSON_COMPACT);
        if (text == NULL)
                return -ENOMEM;
        rc = replace_file(path, text, strlen(text), 0600, false);
        free(text);
        return rc;
}

static void run_read_cache(const json_t *args, const char *root, struct tools_cache *cache,
                           struct tools_result *out)
{
        const char *key = arg_str(args, "key", NULL);
        const json_t *v = cache != NULL ? json_object_get(cache->map, key) : NULL;
        struct buf b = {0};

        if (cache == NULL) {
                result_fmt(out, true, "the cache is not available");
                return;
        }
        if (v == NULL) {
                result_fmt(out, true, "no cache entry '%s'", key);
                return;
        }
        buf_add(&b, json_string_value(v), json_string_length(v));
        result_buf(out, &b);
}

static void run_write_cache(const json_t *args, const char *root, struct tools_cache *cache,
                            struct tools_result *out)
{
        size_t len;
        const char *key = arg_str(args, "key", NULL), *value = arg_str(args, "value", &len);

        if (cache == NULL) {
                result_fmt(out, true, "the cache is not available");
                return;
        }
        if (json_object_set_new(cache->map, key, json_stringn(value, len)) < 0) {
                result_fmt(out, true, "cannot save cache entry '%s'", key);
                return;
        }
        result_fmt(out, false, "saved %zu bytes under '%s'", len, key);
}

void tools_run_builtin(const char *name, const json_t *args, const char *root,
                       struct tools_cache *cache, struct tools_result *out)
{
        const struct tool *t = tool_find(name);
        char err[512];

        out->text = NULL;
        out->len = 0;
        out->error = false;
        if (t == NULL) {
                unknown_tool(name, err, sizeof(err));
                result_fmt(out, true, "%s", err);
        } else if (t->run == NULL) {
                result_fmt(out, true, "'%s' runs a process; it is not a builtin tool", t->name);
        } else if (validate(t, args, err, sizeof(err)) < 0) {
                result_fmt(out, true, "%s", err);
        } else {
                t->run(args, root, cache, out);
        }
}

/* -------------------------------------------------------------------- cap */

/* Bytes in the character at s: a valid UTF-8 sequence, or 1 for a byte
 * that does not start one (each such byte is a character of its own). */
static size_t utf8_len(const unsigned char *s, size_t n)
{
        unsigned char lo = 0x80, hi = 0xbf;
        size_t need, i;

        if (s[0] < 0x80)
                return 1;
        if (s[0] >= 0xc2 && s[0] <= 0xdf)
                need = 1;
        else if (s[0] >= 0xe0 && s[0] <= 0xef)
                need = 2;
        else if (s[0] >= 0xf0 && s[0] <= 0xf4)
                need = 3;
        else
                return 1;
        if (s[0] == 0xe0)
                lo = 0xa0; /* overlong */
        else if (s[0] == 0xed)
                hi = 0x9f; /* surrogates */
        else if (s[0] == 0xf0)
                lo = 0x90; /* overlong */
        else if (s[0] == 0xf4)
                hi = 0x8f; /* past U+10FFFF */
        if (n <= need || s[1] < lo || s[1] > hi)
                return 1;
        for (i = 2; i <= need; i++)
                if ((s[i] & 0xc0) != 0x80)
                        return 1;
        return need + 1;
}

/* Byte offset of character number `chars` (or len when there are fewer). */
static size_t utf8_skip(const char *text, size_t len, size_t chars, size_t *counted)
{
        const unsigned char *s = (const unsigned char *)text;
        size_t i = 0, k = 0;

        while (i < len && k < chars) {
                if (s[i] < 0x80)
                        i++;
                else
                        i += utf8_len(s + i, len - i);
                k++;
        }
        if (counted != NULL)
                *counted = k;
        return i;
}

char *tools_cap(const char *text, size_t len, size_t cap, size_t *out_len, bool *truncated)
{
        size_t nchars, head, tail, head_end, tail_start, mlen, rest;
        char marker[80], *s;

        if (text == NULL)
                len = 0;
        utf8_skip(text, len, SIZE_MAX, &nchars);
        if (nchars <= cap) {
                s = malloc(len + 1);
                if (s != NULL) {
                        if (len > 0)
                                memcpy(s, text, len);
                        s[len] = '\0';
                }
                if (out_len != NULL)
                        *out_len = s != NULL ? len : 0;
                if (truncated != NULL)
                        *truncated = false;
                return s;
        }
        head = cap / 4;
        tail = cap - head;
        head_end = utf8_skip(text, len, head, NULL);
        tail_start =
            head_end + utf8_skip(text + head_end, len - head_end, nchars - tail - head, NULL);
        rest = len - tail_start;
        mlen = (size_t)snprintf(marker, sizeof(marker), "\n[... %zu character%s cut ...]\n",
                                nchars - cap, nchars - cap == 1 ? "" : "s");
        s = malloc(head_end + mlen + rest + 1);
        if (s != NULL) {
                memcpy(s, text, head_end);
                memcpy(s + head_end, marker, mlen);
                memcpy(s + head_end + mlen, text + tail_start, rest);
                s[head_end + mlen + rest] = '\0';
        }
        if (out_len != NULL)
                *out_len = s != NULL ? head_end + mlen + rest : 0;
        if (truncated != NULL)
                *truncated = true;
        return s;
}

/* ------------------------------------------------------------ proctor tool */

static int read_stdin(struct buf *b)
{
        ssize_t n;

        do {
                if (!room(b, READ_CHUNK))
                        return -ENOMEM;
                n = read_full(0, b->p + b->len, READ_CHUNK);
                if (n < 0)
                        return -errno;
                b->len += (size_t)n;
                b->p[b->len] = '\0';
                if (b->len > STDIN_MAX)
                        return -EFBIG;
        } while (n > 0);
        return 0;
}

static char *cache_path(void)
{
        const char *dir = getenv("TMPDIR");
        char *p;

        if (dir == NULL || dir[0] == '\0')
                dir = "/tmp";
        if (asprintf(&p, "%s/%s", dir, CACHE_FILENAME) < 0)
                return NULL;
        return p;
}

/* Runs one call for `proctor tool`; the cache is loaded only for the cache
 * tools and saved only after a successful write_cache. */
static void tool_call(const char *name, struct tools_result *r)
{
        struct buf in = {0};
        struct tools_cache *cache = NULL;
        char err[512], *cpath = NULL;
        json_t *args = NULL;
        int rc;

        if (tools_runs_process(name)) {
                result_fmt(r, true,
                           "'%s' runs a process; `proctor tool` runs only the builtin tools", name);
                return;
        }
        rc = read_stdin(&in);
        if (rc < 0)
                result_fmt(r, true, "cannot read the arguments from stdin: %s", strerror(-rc));
        else if (memchr(in.p, '\0', in.len) != NULL)
                result_fmt(r, true, "arguments for '%.64s' are not valid JSON: a NUL byte", name);
        else if (tools_parse_args(name, in.p, &args, err, sizeof(err)) < 0)
                result_fmt(r, true, "%s", err);
        free(in.p);
        if (args == NULL)
                return;
        if (strcmp(name, "read_cache") == 0 || strcmp(name, "write_cache") == 0) {
                cache = tools_cache_new();
                cpath = cache_path();
                rc = cache == NULL || cpath == NULL ? -ENOMEM : tools_cache_load(cache, cpath);
                if (rc < 0 && rc != -ENOENT) {
                        result_fmt(r, true, "cannot load the cache %s: %s", cpath ? cpath : "",
                                   rc == -EINVAL ? "not a JSON object of strings" : strerror(-rc));
                        goto out;
                }
        }
        tools_run_builtin(name, args, NULL, cache, r);
        if (!r->error && strcmp(name, "write_cache") == 0 &&
            (rc = tools_cache_save(cache, cpath)) < 0) {
                tools_result_free(r);
                result_fmt(r, true, "cannot save the cache %s: %s", cpath, strerror(-rc));
        }
out:
        json_decref(args);
        tools_cache_free(cache);
        free(cpath);
}

int tools_main(int argc, char **argv)
{
        struct tools_result r = {0};
        char err[512];
        int ok;

        if (argc != 2) {
                result_fmt(&r, true, "usage: proctor tool NAME < ARGUMENTS.json");
        } else if (!tools_known(argv[1])) {
                unknown_tool(argv[1], err, sizeof(err));
                result_fmt(&r, true, "%s", err);
        } else {
                tool_call(argv[1], &r);
        }
        if (r.text == NULL)
                result_fmt(&r, true, "out of memory");
        ok = r.text != NULL && fwrite(r.text, 1, r.len, stdout) == r.len;
        ok = fflush(stdout) == 0 && ok && !r.error;
        tools_result_free(&r);
        return ok ? 0 : 1;
}
