/* theme: the colour roles the TUI draws with, the built-in default theme, and
 * the loader for hand-edited theme files (docs/themes.md). Pure data and file
 * reading only: this module never calls ncurses; tui maps roles to pairs. */
#ifndef PROCTOR_THEME_H
#define PROCTOR_THEME_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Every colour role. Keep in step with the name table in theme.c and the
 * list in docs/themes.md. */
enum theme_role {
        THEME_BACKGROUND,
        THEME_TEXT,
        THEME_TEXT_DIM,
        THEME_BORDER,
        THEME_BORDER_FOCUSED,
        THEME_TITLE,
        THEME_HEADER,
        THEME_SELECTION,
        THEME_STATUS,
        THEME_STATUS_KEY,
        THEME_HELP,
        THEME_BADGE_LOCAL,
        THEME_BADGE_SANDBOX,
        THEME_BADGE_REPLAY,
        THEME_BADGE_SCRIPTED,
        THEME_STATE_CREATING,
        THEME_STATE_RUNNING,
        THEME_STATE_EXITED,
        THEME_STATE_KILLED,
        THEME_STATE_TIMEOUT,
        THEME_STATE_OOM,
        THEME_STATE_CPU_LIMIT,
        THEME_STATE_PIDS_LIMIT,
        THEME_STATE_SETUP_FAILED,
        THEME_STATE_SIGNALED,
        THEME_TOOL_RUNNING,
        THEME_TOOL_OK,
        THEME_TOOL_ERROR,
        THEME_TOOL_INTERRUPTED,
        THEME_GRAPH_CPU,
        THEME_GRAPH_MEMORY,
        THEME_GRAPH_PIDS,
        THEME_METER,
        THEME_WARNING,
        THEME_ERROR,
        THEME_SPINNER,
        THEME_DIALOG,
        THEME_DIALOG_BORDER,
        THEME_DIALOG_DANGER,
        THEME_ROLE_COUNT
};

/* A colour is 0xRRGGBB, or THEME_COLOR_DEFAULT for the terminal's own
 * foreground or background. */
#define THEME_COLOR_DEFAULT (-1)

enum {
        THEME_ATTR_BOLD = 1u << 0,
        THEME_ATTR_UNDERLINE = 1u << 1,
        THEME_ATTR_REVERSE = 1u << 2,
        THEME_ATTR_DIM = 1u << 3,
};

struct theme_style {
        int32_t fg, bg;
        unsigned attr; /* THEME_ATTR_* */
};

#define THEME_NAME_MAX 64

struct theme {
        char name[THEME_NAME_MAX]; /* display name: the `name =` line, else the file stem */
        struct theme_style style[THEME_ROLE_COUNT];
        bool from_file[THEME_ROLE_COUNT]; /* set by the file, not inherited */
};

/* The role's name in theme files ("badge.sandbox"), or NULL if out of range. */
const char *theme_role_name(enum theme_role role);

/* The role named `name`, or -1. */
int theme_role_from_name(const char *name);

/* Fills `t` with the compiled-in default (dark) theme, so proctor draws
 * sensibly with no themes directory at all. */
void theme_default(struct theme *t);

/* Parses theme text (len bytes, need not be NUL-terminated) over the
 * built-in default: roles the text omits keep the default's style. `file`
 * only labels errors. Returns 0, or -EINVAL with "FILE:LINE: problem" in err
 * and `t` reset to the default, so the caller can draw with it regardless. */
int theme_parse(const char *text, size_t len, const char *file, struct theme *t, char *err,
                size_t errlen);

/* Reads and parses the theme file at `path`. On any failure `t` holds the
 * default theme and err the reason ("PATH: No such file or directory", or a
 * theme_parse message). Returns 0, -EINVAL, -EFBIG or -errno. */
int theme_load(const char *path, struct theme *t, char *err, size_t errlen);

/* Resolves `name_or_path` to a file: used as is when it contains '/';
 * otherwise NAME.theme in $XDG_CONFIG_HOME/proctor/themes (or
 * ~/.config/proctor/themes), then in $PROCTOR_THEMES_DIR if set and non-empty,
 * else in `bundled_dir` (may be NULL). Returns 0 with the path in out,
 * -ENOENT when no readable file has that name, -EINVAL for a bad name or
 * -ENAMETOOLONG. */
int theme_find(const char *name_or_path, const char *bundled_dir, char *out, size_t outlen);

/* Finds and loads a theme by name or path (NULL or "default" with no such
 * file gives the built-in default). On failure `t` holds the default and err
 * says why, naming the file; the caller shows err and carries on. */
int theme_open(const char *name_or_path, const char *bundled_dir, struct theme *t, char *err,
               size_t errlen);

#define THEME_LIST_MAX 64

/* Names of the available themes, for cycling with `t`: "default" first,
 * then the stems of *.theme files in the user and bundled directories (as
 * theme_find searches them), sorted and without duplicates. Fills up to
 * `max` entries and returns how many. */
size_t theme_list(const char *bundled_dir, char names[][THEME_NAME_MAX], size_t max);

#endif
