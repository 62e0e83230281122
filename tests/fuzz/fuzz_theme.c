/* fuzz_theme: libFuzzer harness for the theme file parser and the colour
 * mapping: arbitrary bytes through theme_parse, then every role resolved at
 * every colour depth. A parse either succeeds with every colour resolved or
 * fails with a NUL-terminated reason and the default theme untouched;
 * a resolved colour is always one the depth can show. A broken promise
 * aborts.
 *
 * Built by `make fuzz` (libFuzzer) and by `make test` (tests/fuzz/driver.c). */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "tui/color.h"
#include "tui/theme.h"

#define ATTR_ALL (THEME_ATTR_BOLD | THEME_ATTR_UNDERLINE | THEME_ATTR_REVERSE | THEME_ATTR_DIM)

static void check_color(int c, enum color_depth depth)
{
        static const int top[] = {[COLOR_MONO] = -1,
                                  [COLOR_8] = 7,
                                  [COLOR_16] = 15,
                                  [COLOR_256] = 255,
                                  [COLOR_TRUE] = 0xffffff};

        if (c < -1 || c > top[depth])
                abort();
}

static void check_resolved(const struct theme *t)
{
        int r, d;

        for (r = 0; r < THEME_ROLE_COUNT; r++) {
                for (d = COLOR_MONO; d <= COLOR_TRUE; d++) {
                        struct color_spec c =
                            color_resolve(t, (enum theme_role)r, (enum color_depth)d);
                        check_color(c.fg, (enum color_depth)d);
                        check_color(c.bg, (enum color_depth)d);
                        if (c.attr & ~(unsigned)ATTR_ALL)
                                abort();
                }
        }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        struct theme t, def;
        char err[256];
        size_t errlen;
        int rc, r;

        if (size < 1)
                return 0;
        /* The first byte sizes the error buffer, small ones too. */
        errlen = 1 + data[0] % sizeof(err);
        data++;
        size--;
        memset(err, 0xaa, sizeof(err));
        rc = theme_parse((const char *)data, size, "fuzz.theme", &t, err, errlen);
        if (rc != 0 && rc != -EINVAL)
                abort();
        if (memchr(t.name, '\0', sizeof(t.name)) == NULL)
                abort();
        if (rc == -EINVAL) {
                if (memchr(err, '\0', errlen) == NULL)
                        abort();
                for (r = (int)errlen; r < (int)sizeof(err); r++)
                        if ((unsigned char)err[r] != 0xaa)
                                abort();
                theme_default(&def);
                if (memcmp(t.style, def.style, sizeof(t.style)) != 0 ||
                    strcmp(t.name, def.name) != 0 ||
                    memcmp(t.from_file, def.from_file, sizeof(t.from_file)) != 0)
                        abort();
        } else {
                /* every colour resolved: 0xRRGGBB or the terminal's own */
                for (r = 0; r < THEME_ROLE_COUNT; r++) {
                        const struct theme_style *s = &t.style[r];
                        if (s->fg < THEME_COLOR_DEFAULT || s->fg > 0xffffff ||
                            s->bg < THEME_COLOR_DEFAULT || s->bg > 0xffffff ||
                            (s->attr & ~(unsigned)ATTR_ALL) || t.name[0] == '\0')
                                abort();
                }
        }
        check_resolved(&t);
        return 0;
}
