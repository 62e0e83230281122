/* config: the settings of a session, layered from built-in defaults, the
 * config file, the environment and the command line (later wins). A bad
 * file is an error naming the file and key; it is never half-applied. */
#ifndef PROCTOR_CONFIG_H
#define PROCTOR_CONFIG_H

#include <stddef.h>

#include "core/session/options.h"

/* Fills `o` from, in order: built-in defaults; the config file (--config
 * FILE, which must exist, else $XDG_CONFIG_HOME/proctor/config.json or
 * ~/.config/proctor/config.json, which may be missing); the environment
 * (TOOL_EXECUTION_MODE, PROCTOR_MODEL, PROCTOR_BASE_URL); the options in
 * argv, parsed as options_parse does (argv[0] is the subcommand; o->argi is
 * set). o->config names the file that was read, or is NULL. With --help the
 * file is not read, so a broken file cannot hide the help.
 *
 * Returns 0, or -EINVAL (bad option, file or environment value) or -errno
 * (file unreadable) with a one-line reason in err, such as
 * "/home/u/.config/proctor/config.json: limits.memory: expected a size like
 * \"512M\", got true" or "FILE:3:14: invalid JSON: ...".
 *
 * Strings in `o` that came from the file stay valid until config_release. */
int config_resolve(int argc, char **argv, struct options *o, char *err, size_t errlen);

/* Frees the strings that config_resolve kept for the options it filled. */
void config_release(void);

/* Builds "$VAR/rel", or "$HOME/fallback/rel" when VAR is unset, empty or
 * not absolute (as XDG asks). 0, -ENOENT when there is no home directory,
 * or -ENAMETOOLONG. */
int config_xdg_path(const char *var, const char *fallback, const char *rel, char *buf, size_t len);

/* Keeps proctor's own directories (config, themes, state and traces, cache)
 * and the config file in use read-only inside every sandbox of `ws`, when
 * they lie in it. 0 or -errno with err filled. */
int config_protect_own(struct exec_workspace *ws, const char *config_file, char *err,
                       size_t errlen);

#endif
