/* theme: role names, the compiled-in default theme and the theme file parser
 * and finder. It reads files and directories only; it never draws, and a bad
 * file never leaves a half-applied theme behind (the default replaces it). */
#include "tui/theme.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/session/config.h"

/* Marks a colour a line left out; resolved once the whole file is read. */
#define INHERIT  (-2)
#define MAX_FILE (64 * 1024)

static const char *const role_names[THEME_ROLE_COUNT] = {
    [THEME_BACKGROUND] = "background",
    [THEME_TEXT] = "text",
    [THEME_TEXT_DIM] = "text.dim",
    [THEME_BORDER] = "border",
    [THEME_BORDER_FOCUSED] = "border.focused",
    [THEME_TITLE] = "title",
    [THEME_HEADER] = "header",
    [THEME_SELECTION] = "selection",
    [THEME_STATUS] = "status",
    [THEME_STATUS_KEY] = "status.key",
    [THEME_HELP] = "help",
    [THEME_BADGE_LOCAL] = "badge.local",
    [THEME_BADGE_SANDBOX] = "badge.sandbox",
    [THEME_BADGE_REPLAY] = "badge.replay",
    [THEME_BADGE_SCRIPTED] = "badge.scripted",
    [THEME_STATE_CREATING] = "state.creating",
    [THEME_STATE_RUNNING] = "state.running",
    [THEME_STATE_EXITED] = "state.exited",
    [THEME_STATE_KILLED] = "state.killed",
    [THEME_STATE_TIMEOUT] = "state.timeout",
    [THEME_STATE_OOM] = "state.oom",
    [THEME_STATE_CPU_LIMIT] = "state.cpu_limit",
    [THEME_STATE_PIDS_LIMIT] = "state.pids_limit",
    [THEME_STATE_SETUP_FAILED] = "state.setup_failed",
    [THEME_STATE_SIGNALED] = "state.signaled",
    [THEME_TOOL_RUNNING] = "tool.running",
    [THEME_TOOL_OK] = "tool.ok",
    [THEME_TOOL_ERROR] = "tool.error",
    [THEME_TOOL_INTERRUPTED] = "tool.interrupted",
    [THEME_GRAPH_CPU] = "graph.cpu",
    [THEME_GRAPH_MEMORY] = "graph.memory",
    [THEME_GRAPH_PIDS] = "graph.pids",
    [THEME_METER] = "meter",
    [THEME_WARNING] = "warning",
    [THEME_ERROR] = "error",
    [THEME_SPINNER] = "spinner",
    [THEME_DIALOG] = "dialog",
    [THEME_DIALOG_BORDER] = "dialog.border",
    [THEME_DIALOG_DANGER] = "dialog.danger",
};

#define BG 0x1c1e22
#define B  THEME_ATTR_BOLD

/* The default dark theme; themes/default.theme says the same in file form
 * (a unit test keeps the two equal). */
static const struct theme_style default_styles[THEME_ROLE_COUNT] = {
    [THEME_BACKGROUND] = {0xd0d3d8, BG, 0},
    [THEME_TEXT] = {0xd0d3d8, BG, 0},
    [THEME_TEXT_DIM] = {0x7a808a, BG, 0},
    [THEME_BORDER] = {0x4a515c, BG, 0},
    [THEME_BORDER_FOCUSED] = {0x5fa8e8, BG, B},
    [THEME_TITLE] = {0xeef0f3, BG, B},
    [THEME_HEADER] = {0x9ecbff, BG, B},
    [THEME_SELECTION] = {0xffffff, 0x2f4f7a, 0},
    [THEME_STATUS] = {0xd0d3d8, 0x2a2e35, 0},
    [THEME_STATUS_KEY] = {0xffd75f, 0x2a2e35, B},
    [THEME_HELP] = {0xd0d3d8, 0x262a31, 0},
    [THEME_BADGE_LOCAL] = {0x1c1e22, 0xe0a030, B},
    [THEME_BADGE_SANDBOX] = {0xffffff, 0x1f7a3a, B},
    [THEME_BADGE_REPLAY] = {0xffffff, 0x5a4a9a, B},
    [THEME_BADGE_SCRIPTED] = {0x1c1e22, 0x6aa6c8, B},
    [THEME_STATE_CREATING] = {0x9aa0aa, BG, 0},
    [THEME_STATE_RUNNING] = {0x5fd787, BG, 0},
    [THEME_STATE_EXITED] = {0xa0a8b4, BG, 0},
    [THEME_STATE_KILLED] = {0xff6b6b, BG, B},
    [THEME_STATE_TIMEOUT] = {0xffb454, BG, 0},
    [THEME_STATE_OOM] = {0xff6b6b, BG, B},
    [THEME_STATE_CPU_LIMIT] = {0xffb454, BG, 0},
    [THEME_STATE_PIDS_LIMIT] = {0xffb454, BG, 0},
    [THEME_STATE_SETUP_FAILED] = {0xff6b6b, BG, 0},
    [THEME_STATE_SIGNALED] = {0xe08cff, BG, 0},
    [THEME_TOOL_RUNNING] = {0x6aa6c8, BG, 0},
    [THEME_TOOL_OK] = {0x5fd787, BG, 0},
    [THEME_TOOL_ERROR] = {0xff6b6b, BG, B},
    [THEME_TOOL_INTERRUPTED] = {0xffb454, BG, 0},
    [THEME_GRAPH_CPU] = {0x5fa8e8, BG, 0},
    [THEME_GRAPH_MEMORY] = {0xc792ea, BG, 0},
    [THEME_GRAPH_PIDS] = {0x5fd7af, BG, 0},
    [THEME_METER] = {0x5fd787, BG, 0},
    [THEME_WARNING] = {0xffb454, BG, B},
    [THEME_ERROR] = {0xff6b6b, BG, B},
    [THEME_SPINNER] = {0x5fa8e8, BG, 0},
    [THEME_DIALOG] = {0xd0d3d8, 0x2a2e35, 0},
    [THEME_DIALOG_BORDER] = {0x5fa8e8, 0x2a2e35, 0},
    [THEME_DIALOG_DANGER] = {0xffffff, 0xa32c2c, B},
};

#undef B
#undef BG

static const struct {
        const char *name;
        unsigned bit;
} attr_names[] = {
    {"bold", THEME_ATTR_BOLD},
    {"underline", THEME_ATTR_UNDERLINE},
    {"reverse", THEME_ATTR_REVERSE},
    {"dim", THEME_ATTR_DIM},
};

const char *theme_role_name(enum theme_role role)
{
        if ((int)role < 0 || role >= THEME_ROLE_COUNT)
                return NULL;
        return role_names[role];
}

int theme_role_from_name(const char *name)
{
        for (int i = 0; i < THEME_ROLE_COUNT; i++)
                if (strcmp(role_names[i], name) == 0)
                        return i;
        return -1;
}

void theme_default(struct theme *t)
{
        memset(t, 0, sizeof(*t));
        snprintf(t->name, sizeof(t->name), "Default dark");
        memcpy(t->style, default_styles, sizeof(t->style));
}

/* The parser's state: where it is, for error messages. */
struct parser {
        const char *file;
        int line;
        int first_line[THEME_ROLE_COUNT];
        bool named;
        char *err;
        size_t errlen;
};

__attribute__((format(printf, 2, 3))) static int fail(struct parser *p, const char *fmt, ...)
{
        char msg[256];
        va_list ap;

        va_start(ap, fmt);
        vsnprintf(msg, sizeof(msg), fmt, ap);
        va_end(ap);
        snprintf(p->err, p->errlen, "%s:%d: %s", p->file, p->line, msg);
        return -EINVAL;
}

/* "#rrggbb" or "default"; anything else is not a colour. */
static bool parse_color(const char *s, int32_t *out)
{
        int32_t v = 0;

        if (strcmp(s, "default") == 0) {
                *out = THEME_COLOR_DEFAULT;
                return true;
        }
        if (s[0] != '#' || strlen(s) != 7)
                return false;
        for (int i = 1; i < 7; i++) {
                if (!isxdigit((unsigned char)s[i]))
                        return false;
                v = v * 16 + (isdigit((unsigned char)s[i])
                                  ? s[i] - '0'
                                  : tolower((unsigned char)s[i]) - 'a' + 10);
        }
        *out = v;
        return true;
}

/* Tokens that look meant as colours get a colour error, not an attribute one. */
static bool looks_like_color(const char *s)
{
        return s[0] == '#';
}

static int parse_attr(struct parser *p, const char *tok, unsigned *attr)
{
        for (size_t i = 0; i < sizeof(attr_names) / sizeof(attr_names[0]); i++) {
                if (strcmp(tok, attr_names[i].name) == 0) {
                        *attr |= attr_names[i].bit;
                        return 0;
                }
        }
        return fail(p, "unknown attribute \"%s\" (expected bold, underline, reverse or dim)", tok);
}

/* Parses "[FG] [on BG] [ATTR...]" (any order) into s; value is modified. */
static int parse_style(struct parser *p, char *value, struct theme_style *s)
{
        char *save = NULL, *tok;
        int32_t c;

        *s = (struct theme_style){INHERIT, INHERIT, 0};
        for (tok = strtok_r(value, " \t", &save); tok != NULL; tok = strtok_r(NULL, " \t", &save)) {
                if (strcmp(tok, "on") == 0) {
                        tok = strtok_r(NULL, " \t", &save);
                        if (tok == NULL)
                                return fail(p, "\"on\" needs a background colour after it");
                        if (!parse_color(tok, &c))
                                return fail(p, "bad colour \"%s\" (expected #rrggbb or default)",
                                            tok);
                        if (s->bg != INHERIT)
                                return fail(p, "background colour given twice");
                        s->bg = c;
                } else if (parse_color(tok, &c)) {
                        if (s->fg != INHERIT)
                                return fail(p, "foreground colour given twice (use \"on\" before "
                                               "a background)");
                        s->fg = c;
                } else if (looks_like_color(tok)) {
                        return fail(p, "bad colour \"%s\" (expected #rrggbb or default)", tok);
                } else if (parse_attr(p, tok, &s->attr) < 0) {
                        return -EINVAL;
                }
        }
        return 0;
}

static char *trim(char *s)
{
        char *end;

        while (*s == ' ' || *s == '\t')
                s++;
        end = s + strlen(s);
        while (end > s && (end[-1] == ' ' || end[-1] == '\t' || end[-1] == '\r'))
                *--end = '\0';
        return s;
}

static int parse_line(struct parser *p, char *line, struct theme *t)
{
        char *eq, *key, *value;
        struct theme_style s;
        int role;

        line = trim(line);
        if (line[0] == '\0' || line[0] == '#')
                return 0;
        eq = strchr(line, '=');
        if (eq == NULL)
                return fail(p, "expected \"role = value\", found no '='");
        *eq = '\0';
        key = trim(line);
        value = trim(eq + 1);
        if (key[0] == '\0')
                return fail(p, "missing role name before '='");
        if (strcmp(key, "name") == 0) {
                if (p->named)
                        return fail(p, "\"name\" set twice");
                if (value[0] == '\0' || strlen(value) >= sizeof(t->name))
                        return fail(p, "name must be 1 to %zu characters", sizeof(t->name) - 1);
                snprintf(t->name, sizeof(t->name), "%s", value);
                p->named = true;
                return 0;
        }
        role = theme_role_from_name(key);
        if (role < 0)
                return fail(p, "unknown role \"%.64s\"", key);
        if (p->first_line[role] != 0)
                return fail(p, "role \"%s\" set twice (first on line %d)", key,
                            p->first_line[role]);
        if (value[0] == '\0')
                return fail(p, "missing value for role \"%s\"", key);
        if (parse_style(p, value, &s) < 0)
                return -EINVAL;
        p->first_line[role] = p->line;
        t->style[role] = s;
        t->from_file[role] = true;
        return 0;
}

/* A colour a line left out comes from the theme's text (foreground) or
 * background (background) role; those two fall back to the terminal's. */
static void resolve_inherited(struct theme *t)
{
        struct theme_style *bg = &t->style[THEME_BACKGROUND], *text = &t->style[THEME_TEXT];

        if (bg->bg == INHERIT)
                bg->bg = THEME_COLOR_DEFAULT;
        if (text->bg == INHERIT)
                text->bg = bg->bg;
        if (text->fg == INHERIT)
                text->fg = THEME_COLOR_DEFAULT;
        if (bg->fg == INHERIT)
                bg->fg = text->fg;
        for (int i = 0; i < THEME_ROLE_COUNT; i++) {
                if (t->style[i].fg == INHERIT)
                        t->style[i].fg = text->fg;
                if (t->style[i].bg == INHERIT)
                        t->style[i].bg = bg->bg;
        }
}

/* The file's stem ("/a/b/nord.theme" -> "nord"), the name when none is given. */
static void stem(const char *file, char *out, size_t len)
{
        const char *base = strrchr(file, '/');
        size_t n;

        base = base != NULL ? base + 1 : file;
        n = strlen(base);
        if (n > 6 && strcmp(base + n - 6, ".theme") == 0)
                n -= 6;
        if (n >= len)
                n = len - 1;
        memcpy(out, base, n);
        out[n] = '\0';
}

int theme_parse(const char *text, size_t len, const char *file, struct theme *t, char *err,
                size_t errlen)
{
        struct parser p = {.file = file, .err = err, .errlen = errlen};
        char *buf = malloc(len + 1), *line, *next;
        int rc = 0;

        theme_default(t);
        if (buf == NULL)
                return -ENOMEM;
        memcpy(buf, text, len);
        buf[len] = '\0';
        stem(file, t->name, sizeof(t->name));
        if (strlen(buf) != len) {
                /* A NUL would silently end a line early; say where it is. */
                for (p.line = 1, line = buf; (line = strchr(line, '\n')) != NULL; line++)
                        p.line++;
                rc = fail(&p, "NUL byte; a theme file is text");
        }
        for (line = buf; line != NULL && rc == 0; line = next) {
                p.line++;
                next = strchr(line, '\n');
                if (next != NULL)
                        *next++ = '\0';
                rc = parse_line(&p, line, t);
        }
        free(buf);
        if (rc < 0) {
                theme_default(t);
                return rc;
        }
        resolve_inherited(t);
        return 0;
}

int theme_load(const char *path, struct theme *t, char *err, size_t errlen)
{
        char *buf = NULL;
        size_t len;
        FILE *f;
        int rc;

        theme_default(t);
        f = fopen(path, "r");
        if (f == NULL) {
                rc = -errno;
                snprintf(err, errlen, "%s: %s", path, strerror(-rc));
                return rc;
        }
        buf = malloc(MAX_FILE + 1);
        if (buf == NULL) {
                fclose(f);
                return -ENOMEM;
        }
        len = fread(buf, 1, MAX_FILE + 1, f);
        if (ferror(f)) {
                rc = -EIO;
                snprintf(err, errlen, "%s: read error", path);
        } else if (len > MAX_FILE) {
                rc = -EFBIG;
                snprintf(err, errlen, "%s: larger than %d KiB; not a theme file", path,
                         MAX_FILE / 1024);
        } else {
                rc = theme_parse(buf, len, path, t, err, errlen);
        }
        fclose(f);
        free(buf);
        return rc;
}

/* A theme name is a plain file stem: no path parts, nothing hidden. */
static bool valid_name(const char *name)
{
        return name[0] != '\0' && name[0] != '.' && strchr(name, '/') == NULL &&
               strlen(name) < THEME_NAME_MAX;
}

static const char *bundled(const char *bundled_dir)
{
        const char *env = getenv("PROCTOR_THEMES_DIR");

        return env != NULL && env[0] != '\0' ? env : bundled_dir;
}

/* "DIR/NAME.theme" into out when that file is readable: 0, -ENOENT or
 * -ENAMETOOLONG. */
static int try_dir(const char *dir, const char *name, char *out, size_t outlen)
{
        int n;

        if (dir == NULL || dir[0] == '\0')
                return -ENOENT;
        n = snprintf(out, outlen, "%s/%s.theme", dir, name);
        if (n < 0 || (size_t)n >= outlen)
                return -ENAMETOOLONG;
        return access(out, R_OK) == 0 ? 0 : -ENOENT;
}

int theme_find(const char *name_or_path, const char *bundled_dir, char *out, size_t outlen)
{
        char user[4096];
        int rc;

        if (strchr(name_or_path, '/') != NULL) {
                if (strlen(name_or_path) >= outlen)
                        return -ENAMETOOLONG;
                snprintf(out, outlen, "%s", name_or_path);
                return 0;
        }
        if (!valid_name(name_or_path))
                return -EINVAL;
        if (config_xdg_path("XDG_CONFIG_HOME", ".config", "proctor/themes", user, sizeof(user)) ==
            0) {
                rc = try_dir(user, name_or_path, out, outlen);
                if (rc != -ENOENT)
                        return rc;
        }
        return try_dir(bundled(bundled_dir), name_or_path, out, outlen);
}

int theme_open(const char *name_or_path, const char *bundled_dir, struct theme *t, char *err,
               size_t errlen)
{
        const char *name = name_or_path != NULL ? name_or_path : "default";
        char path[4096];
        int rc;

        theme_default(t);
        rc = theme_find(name, bundled_dir, path, sizeof(path));
        if (rc == -ENOENT && strcmp(name, "default") == 0)
                return 0;
        if (rc == -ENOENT) {
                snprintf(err, errlen,
                         "theme \"%s\": no %s.theme in the user or bundled themes "
                         "directory; using the default",
                         name, name);
                return rc;
        }
        if (rc < 0) {
                snprintf(err, errlen, "theme \"%s\": not a valid theme name or path", name);
                return rc;
        }
        return theme_load(path, t, err, errlen);
}

static bool listed(char names[][THEME_NAME_MAX], size_t n, const char *name)
{
        for (size_t i = 0; i < n; i++)
                if (strcmp(names[i], name) == 0)
                        return true;
        return false;
}

static size_t list_dir(const char *dir, char names[][THEME_NAME_MAX], size_t n, size_t max)
{
        char name[THEME_NAME_MAX];
        struct dirent *de;
        size_t len;
        DIR *d;

        if (dir == NULL || dir[0] == '\0' || (d = opendir(dir)) == NULL)
                return n;
        while (n < max && (de = readdir(d)) != NULL) {
                len = strlen(de->d_name);
                if (len <= 6 || len - 6 >= THEME_NAME_MAX ||
                    strcmp(de->d_name + len - 6, ".theme") != 0 || de->d_name[0] == '.')
                        continue;
                stem(de->d_name, name, sizeof(name));
                if (!listed(names, n, name))
                        memcpy(names[n++], name, sizeof(name));
        }
        closedir(d);
        return n;
}

static int cmp_name(const void *a, const void *b)
{
        return strcmp(a, b);
}

size_t theme_list(const char *bundled_dir, char names[][THEME_NAME_MAX], size_t max)
{
        char user[4096];
        size_t n = 0;

        if (max == 0)
                return 0;
        snprintf(names[n++], THEME_NAME_MAX, "default");
        if (config_xdg_path("XDG_CONFIG_HOME", ".config", "proctor/themes", user, sizeof(user)) ==
            0)
                n = list_dir(user, names, n, max);
        n = list_dir(bundled(bundled_dir), names, n, max);
        qsort(names + 1, n - 1, THEME_NAME_MAX, cmp_name);
        return n;
}
