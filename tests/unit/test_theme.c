/* Unit tests for themes and colours: every bundled theme parses and is
 * readable, malformed files give "file:line: problem", nearest-colour picks,
 * depth detection and where themes are looked up. Run from the source root. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "tui/color.h"
#include "tui/theme.h"
#include "tests/unit/tmpdir.h"

static const char *const bundled[] = {
    "default", "light", "solarized-dark", "high-contrast", "mono", "nord", "amber",
};

#define N(a) (sizeof(a) / sizeof((a)[0]))

static void test_role_names(void **state)
{
        for (int i = 0; i < THEME_ROLE_COUNT; i++) {
                const char *name = theme_role_name(i);

                assert_non_null(name);
                assert_int_equal(theme_role_from_name(name), i);
        }
        assert_null(theme_role_name(THEME_ROLE_COUNT));
        assert_int_equal(theme_role_from_name("badge.nope"), -1);
        assert_int_equal(theme_role_from_name("badge.sandbox"), THEME_BADGE_SANDBOX);
        assert_int_equal(theme_role_from_name("state.pids_limit"), THEME_STATE_PIDS_LIMIT);
}

static void load_bundled(const char *name, struct theme *t)
{
        char path[256], err[512] = "";
        int rc;

        snprintf(path, sizeof(path), "themes/%s.theme", name);
        rc = theme_load(path, t, err, sizeof(err));
        if (rc != 0)
                fail_msg("%s: %s", path, err);
}

static void test_bundled_themes_parse_and_read(void **state)
{
        static const enum color_depth depths[] = {COLOR_8, COLOR_16, COLOR_256, COLOR_TRUE};
        struct theme t;

        for (size_t k = 0; k < N(bundled); k++) {
                load_bundled(bundled[k], &t);
                for (int i = 0; i < THEME_ROLE_COUNT; i++) {
                        const struct theme_style *s = &t.style[i];

                        if (!t.from_file[i])
                                fail_msg("%s: role %s not set", bundled[k], theme_role_name(i));
                        if (s->fg >= 0 && s->fg == s->bg)
                                fail_msg("%s: %s fg == bg", bundled[k], theme_role_name(i));
                }
                /* Text must stand out from the background, at every depth. */
                if (strcmp(bundled[k], "mono") == 0) {
                        assert_int_equal(t.style[THEME_TEXT].fg, THEME_COLOR_DEFAULT);
                        assert_int_equal(t.style[THEME_BACKGROUND].bg, THEME_COLOR_DEFAULT);
                        continue;
                }
                assert_true(t.style[THEME_TEXT].fg >= 0);
                assert_int_not_equal(t.style[THEME_TEXT].fg, t.style[THEME_BACKGROUND].bg);
                for (size_t d = 0; d < N(depths); d++) {
                        struct color_spec c = color_resolve(&t, THEME_TEXT, depths[d]);
                        struct color_spec sel = color_resolve(&t, THEME_SELECTION, depths[d]);

                        if (c.fg == c.bg || sel.fg == sel.bg)
                                fail_msg("%s: unreadable at depth %s", bundled[k],
                                         color_depth_name(depths[d]));
                }
        }
}

static void test_default_file_matches_builtin(void **state)
{
        struct theme file, builtin;

        load_bundled("default", &file);
        theme_default(&builtin);
        assert_memory_equal(file.style, builtin.style, sizeof(file.style));
}

static void test_names(void **state)
{
        struct theme t;
        char err[256];

        load_bundled("solarized-dark", &t);
        assert_string_equal(t.name, "Solarized dark");
        assert_int_equal(theme_parse("", 0, "/x/plain.theme", &t, err, sizeof(err)), 0);
        assert_string_equal(t.name, "plain");
}

static int parse(const char *text, struct theme *t, char *err, size_t len)
{
        err[0] = '\0';
        return theme_parse(text, strlen(text), "my.theme", t, err, len);
}

static void test_malformed(void **state)
{
        static const struct {
                const char *text, *err;
        } cases[] = {
            {"text = #ffffff\nbadge.nope = #000000\n", "my.theme:2: unknown role \"badge.nope\""},
            {"# c\n\ntext = #12345g\n",
             "my.theme:3: bad colour \"#12345g\" (expected #rrggbb or default)"},
            {"text = #fff\n", "my.theme:1: bad colour \"#fff\" (expected #rrggbb or default)"},
            {"text = #ffffff on #1234567\n",
             "my.theme:1: bad colour \"#1234567\" (expected #rrggbb or default)"},
            {"text = #ffffff blink\n",
             "my.theme:1: unknown attribute \"blink\" (expected bold, underline, reverse or dim)"},
            {"name = x\ntext #ffffff\n", "my.theme:2: expected \"role = value\", found no '='"},
            {"text = #ffffff\nerror = #ff0000\ntext = #000000\n",
             "my.theme:3: role \"text\" set twice (first on line 1)"},
            {"}}}}} garbage\n", "my.theme:1: expected \"role = value\", found no '='"},
            {"= #ffffff\n", "my.theme:1: missing role name before '='"},
            {"title =   \n", "my.theme:1: missing value for role \"title\""},
            {"title = #ffffff on\n", "my.theme:1: \"on\" needs a background colour after it"},
            {"title = #ffffff #000000\n",
             "my.theme:1: foreground colour given twice (use \"on\" before a background)"},
            {"title = on #000000 on #111111\n", "my.theme:1: background colour given twice"},
            {"name = a\nname = b\n", "my.theme:2: \"name\" set twice"},
        };
        struct theme t, def;
        char err[256];

        theme_default(&def);
        for (size_t i = 0; i < N(cases); i++) {
                if (parse(cases[i].text, &t, err, sizeof(err)) != -EINVAL)
                        fail_msg("case %zu parsed: %s", i, cases[i].text);
                if (strcmp(err, cases[i].err) != 0)
                        fail_msg("case %zu: got '%s', want '%s'", i, err, cases[i].err);
                /* The caller gets the whole default, never half a theme. */
                assert_memory_equal(t.style, def.style, sizeof(t.style));
        }
}

static void test_nul_byte(void **state)
{
        static const char text[] = "text = #ffffff\ntitle\0 = bold\n";
        struct theme t;
        char err[256];

        assert_int_equal(theme_parse(text, sizeof(text) - 1, "f", &t, err, sizeof(err)), -EINVAL);
        assert_string_equal(err, "f:2: NUL byte; a theme file is text");
}

static void test_empty_and_partial(void **state)
{
        struct theme t, def;
        char err[256];

        theme_default(&def);
        assert_int_equal(parse("", &t, err, sizeof(err)), 0);
        assert_memory_equal(t.style, def.style, sizeof(t.style));
        assert_int_equal(parse("# only a comment\r\n\n   \n", &t, err, sizeof(err)), 0);
        assert_memory_equal(t.style, def.style, sizeof(t.style));

        /* Omitted roles keep the default; omitted colours on a line come
         * from this theme's text and background. */
        assert_int_equal(parse("background = on #fafafa\r\ntext = #101010\n"
                               "title = bold underline\nerror = #CC0000 dim\n",
                               &t, err, sizeof(err)),
                         0);
        assert_int_equal(t.style[THEME_TEXT].bg, 0xfafafa);
        assert_int_equal(t.style[THEME_TITLE].fg, 0x101010);
        assert_int_equal(t.style[THEME_TITLE].bg, 0xfafafa);
        assert_int_equal(t.style[THEME_TITLE].attr, THEME_ATTR_BOLD | THEME_ATTR_UNDERLINE);
        assert_int_equal(t.style[THEME_ERROR].fg, 0xcc0000);
        assert_int_equal(t.style[THEME_ERROR].attr, THEME_ATTR_DIM);
        assert_false(t.from_file[THEME_SPINNER]);
        assert_memory_equal(&t.style[THEME_SPINNER], &def.style[THEME_SPINNER],
                            sizeof(struct theme_style));
        assert_int_equal(parse("selection = default on default reverse\n", &t, err, sizeof(err)),
                         0);
        assert_int_equal(t.style[THEME_SELECTION].fg, THEME_COLOR_DEFAULT);
        assert_int_equal(t.style[THEME_SELECTION].bg, THEME_COLOR_DEFAULT);
}

static void test_load_missing(void **state)
{
        struct theme t, def;
        char err[256];

        theme_default(&def);
        assert_int_equal(theme_load("/nonexistent/x.theme", &t, err, sizeof(err)), -ENOENT);
        assert_string_equal(err, "/nonexistent/x.theme: No such file or directory");
        assert_memory_equal(t.style, def.style, sizeof(t.style));
}

static void test_nearest_256(void **state)
{
        assert_int_equal(color_to_256(0xff0000), 196);
        assert_int_equal(color_to_256(0x00ff00), 46);
        assert_int_equal(color_to_256(0x0000ff), 21);
        assert_int_equal(color_to_256(0x000000), 16);
        assert_int_equal(color_to_256(0xffffff), 231);
        assert_int_equal(color_to_256(0x5f87af), 67);
        /* Greys between cube levels land on the grey ramp. */
        assert_int_equal(color_to_256(0x808080), 244);
        assert_int_equal(color_to_256(0x121212), 233);
        assert_int_equal(color_to_256(0xeeeeee), 255);
        assert_int_equal(color_to_256(0x1c1e22), 234);
}

static void test_nearest_16_and_8(void **state)
{
        assert_int_equal(color_to_16(0xff0000), 9);
        assert_int_equal(color_to_16(0xcd0000), 1);
        assert_int_equal(color_to_16(0x000000), 0);
        assert_int_equal(color_to_16(0xffffff), 15);
        assert_int_equal(color_to_16(0x808080), 8);
        assert_int_equal(color_to_16(0x002b36), 0);
        assert_int_equal(color_to_8(0xff0000), 1);
        assert_int_equal(color_to_8(0xffffff), 7);
        assert_int_equal(color_to_8(0x1c1e22), 0);
        assert_int_equal(color_to_8(0x1a7f37), 2);
        assert_int_equal(color_to_8(0x859900), 3); /* olive is nearer yellow */
        /* Soft reds and greens keep their hue: nearest by distance, #ff6b6b
         * was grey and #5fd787 white, and outcomes lost their colour. */
        assert_int_equal(color_to_8(0xff6b6b), 1);
        assert_int_equal(color_to_8(0x5fd787), 2);
        assert_int_equal(color_to_8(0xcf222e), 1);
        assert_int_equal(color_to_8(0xffb454), 3);
        assert_int_equal(color_to_8(0x5fa8e8), 6);
        assert_int_equal(color_to_8(0x2f4f7a), 4);
        assert_int_equal(color_to_8(0xc792ea), 5);
        assert_int_equal(color_to_8(0x7a808a), 7);
        assert_int_equal(color_to_16(0xff6b6b), 9);
        assert_int_equal(color_to_16(0x5fd787), 2);
        assert_int_equal(color_to_16(0x1a7f37), 2);
        assert_int_equal(color_to_16(0x4a515c), 8);
        assert_int_equal(color_map(THEME_COLOR_DEFAULT, COLOR_256), -1);
        assert_int_equal(color_map(0x123456, COLOR_TRUE), 0x123456);
        assert_int_equal(color_map(0x123456, COLOR_MONO), -1);
}

static void test_depth_detect(void **state)
{
        static const struct {
                const char *no_color, *colorterm;
                bool flag;
                int colors;
                enum color_depth want;
        } cases[] = {
            {"1", "truecolor", false, 256, COLOR_MONO}, /* NO_COLOR beats COLORTERM */
            {"", "truecolor", false, 256, COLOR_TRUE},  /* empty NO_COLOR is unset */
            {NULL, "truecolor", true, 256, COLOR_MONO}, /* --no-color */
            {NULL, "24bit", false, 8, COLOR_TRUE},      {NULL, "yes", false, 256, COLOR_256},
            {NULL, NULL, false, 256, COLOR_256},        {NULL, NULL, false, 88, COLOR_16},
            {NULL, NULL, false, 16, COLOR_16},          {NULL, NULL, false, 8, COLOR_8},
            {NULL, NULL, false, 2, COLOR_MONO},         {NULL, NULL, false, -1, COLOR_MONO},
        };

        for (size_t i = 0; i < N(cases); i++) {
                enum color_depth d = color_detect(cases[i].no_color, cases[i].colorterm,
                                                  cases[i].flag, cases[i].colors);
                if (d != cases[i].want)
                        fail_msg("case %zu: got %s, want %s", i, color_depth_name(d),
                                 color_depth_name(cases[i].want));
        }
}

static void test_resolve(void **state)
{
        struct theme t;
        struct color_spec s;
        char err[256];

        theme_default(&t);
        s = color_resolve(&t, THEME_SELECTION, COLOR_MONO);
        assert_int_equal(s.fg, -1);
        assert_int_equal(s.bg, -1);
        assert_true(s.attr & THEME_ATTR_REVERSE);
        assert_true(color_resolve(&t, THEME_BADGE_SANDBOX, COLOR_MONO).attr & THEME_ATTR_REVERSE);
        assert_true(color_resolve(&t, THEME_TITLE, COLOR_MONO).attr & THEME_ATTR_BOLD);
        assert_int_equal(color_resolve(&t, THEME_TEXT, COLOR_MONO).attr, 0);

        s = color_resolve(&t, THEME_BADGE_SANDBOX, COLOR_256);
        assert_int_equal(s.fg, 231);
        assert_int_equal(s.attr, THEME_ATTR_BOLD);
        s = color_resolve(&t, THEME_BADGE_SANDBOX, COLOR_TRUE);
        assert_int_equal(s.bg, 0x1f7a3a);

        /* Two dark greys both become black in 8 colours: the text turns
         * white rather than vanish; on a light grey it turns black. */
        assert_int_equal(
            parse("text = #404040 on #202020\nhelp = #c0c0c0 on #d0d0d0\n", &t, err, sizeof(err)),
            0);
        s = color_resolve(&t, THEME_TEXT, COLOR_8);
        assert_int_equal(s.bg, 0);
        assert_int_equal(s.fg, 7);
        s = color_resolve(&t, THEME_HELP, COLOR_16);
        assert_int_equal(s.bg, 7);
        assert_int_equal(s.fg, 0);
}

/* A scratch tree: DIR/cfg/proctor/themes (user), DIR/bundled, DIR/other. */
struct scratch {
        char dir[64], user[128], bund[128], other[128];
};

static void write_file(const char *dir, const char *name, const char *text)
{
        char path[256];
        FILE *f;

        snprintf(path, sizeof(path), "%s/%s", dir, name);
        f = fopen(path, "w");
        assert_non_null(f);
        fputs(text, f);
        fclose(f);
}

static int scratch_setup(void **state)
{
        struct scratch *s = calloc(1, sizeof(*s));
        char cfg[128], p[128];

        snprintf(s->dir, sizeof(s->dir), "/tmp/proctor-theme-XXXXXX");
        if (mkdtemp(s->dir) == NULL)
                return -1;
        snprintf(cfg, sizeof(cfg), "%s/cfg", s->dir);
        snprintf(p, sizeof(p), "%s/cfg/proctor", s->dir);
        snprintf(s->user, sizeof(s->user), "%s/cfg/proctor/themes", s->dir);
        snprintf(s->bund, sizeof(s->bund), "%s/bundled", s->dir);
        snprintf(s->other, sizeof(s->other), "%s/other", s->dir);
        mkdir(cfg, 0700);
        mkdir(p, 0700);
        mkdir(s->user, 0700);
        mkdir(s->bund, 0700);
        mkdir(s->other, 0700);
        write_file(s->user, "nord.theme", "name = User nord\n");
        write_file(s->user, "broken.theme", "name = Broken\n\ntext = #zzzzzz\n");
        write_file(s->user, ".hidden.theme", "");
        write_file(s->bund, "nord.theme", "name = Bundled nord\n");
        write_file(s->bund, "light.theme", "name = Bundled light\n");
        write_file(s->bund, "README", "not a theme\n");
        write_file(s->other, "light.theme", "name = Other light\n");
        setenv("XDG_CONFIG_HOME", cfg, 1);
        unsetenv("PROCTOR_THEMES_DIR");
        *state = s;
        return 0;
}

static int scratch_teardown(void **state)
{
        struct scratch *s = *state;

        if (tmpdir_remove(s->dir) != 0)
                return -1;
        unsetenv("XDG_CONFIG_HOME");
        unsetenv("PROCTOR_THEMES_DIR");
        free(s);
        return 0;
}

static void expect_found(const char *name, const char *bund, const char *dir, const char *file)
{
        char out[512], want[512];

        assert_int_equal(theme_find(name, bund, out, sizeof(out)), 0);
        snprintf(want, sizeof(want), "%s/%s", dir, file);
        assert_string_equal(out, want);
}

static void test_find_precedence(void **state)
{
        struct scratch *s = *state;
        char out[512];

        expect_found("nord", s->bund, s->user, "nord.theme"); /* user beats bundled */
        expect_found("light", s->bund, s->bund, "light.theme");
        assert_int_equal(theme_find("./themes/x.theme", s->bund, out, sizeof(out)), 0);
        assert_string_equal(out, "./themes/x.theme"); /* a path is used as is */
        assert_int_equal(theme_find("missing", s->bund, out, sizeof(out)), -ENOENT);
        assert_int_equal(theme_find("missing", NULL, out, sizeof(out)), -ENOENT);
        assert_int_equal(theme_find("..", s->bund, out, sizeof(out)), -EINVAL);
        assert_int_equal(theme_find("", s->bund, out, sizeof(out)), -EINVAL);

        setenv("PROCTOR_THEMES_DIR", s->other, 1);
        expect_found("light", s->bund, s->other, "light.theme");
        expect_found("nord", s->bund, s->user, "nord.theme");
        unsetenv("PROCTOR_THEMES_DIR");
}

static void test_open_and_fallback(void **state)
{
        struct scratch *s = *state;
        struct theme t, def;
        char err[512] = "", want[512];

        theme_default(&def);
        assert_int_equal(theme_open("nord", s->bund, &t, err, sizeof(err)), 0);
        assert_string_equal(t.name, "User nord");
        assert_int_equal(theme_open(NULL, s->bund, &t, err, sizeof(err)), 0);
        assert_string_equal(t.name, def.name);
        assert_int_equal(theme_open("default", s->bund, &t, err, sizeof(err)), 0);

        assert_int_equal(theme_open("broken", s->bund, &t, err, sizeof(err)), -EINVAL);
        snprintf(want, sizeof(want),
                 "%s/broken.theme:3: bad colour \"#zzzzzz\" (expected #rrggbb or default)",
                 s->user);
        assert_string_equal(err, want);
        assert_memory_equal(t.style, def.style, sizeof(t.style));
        assert_string_equal(t.name, def.name);

        assert_int_equal(theme_open("nosuch", s->bund, &t, err, sizeof(err)), -ENOENT);
        assert_non_null(strstr(err, "nosuch"));
        assert_memory_equal(t.style, def.style, sizeof(t.style));
}

static void test_list(void **state)
{
        struct scratch *s = *state;
        char names[THEME_LIST_MAX][THEME_NAME_MAX];
        size_t n = theme_list(s->bund, names, THEME_LIST_MAX);

        assert_int_equal(n, 4);
        assert_string_equal(names[0], "default");
        assert_string_equal(names[1], "broken");
        assert_string_equal(names[2], "light");
        assert_string_equal(names[3], "nord");
        assert_int_equal(theme_list(s->bund, names, 2), 2);
        assert_int_equal(theme_list(s->bund, names, 0), 0);
}

static void test_list_bundled(void **state)
{
        char names[THEME_LIST_MAX][THEME_NAME_MAX];
        size_t n;

        setenv("XDG_CONFIG_HOME", "/nonexistent", 1);
        n = theme_list("themes", names, THEME_LIST_MAX);
        unsetenv("XDG_CONFIG_HOME");
        assert_int_equal(n, N(bundled));
        for (size_t i = 0; i < N(bundled); i++) {
                bool found = false;

                for (size_t j = 0; j < n; j++)
                        found = found || strcmp(names[j], bundled[i]) == 0;
                assert_true(found);
        }
}

int main(void)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test(test_role_names),
            cmocka_unit_test(test_bundled_themes_parse_and_read),
            cmocka_unit_test(test_default_file_matches_builtin),
            cmocka_unit_test(test_names),
            cmocka_unit_test(test_malformed),
            cmocka_unit_test(test_nul_byte),
            cmocka_unit_test(test_empty_and_partial),
            cmocka_unit_test(test_load_missing),
            cmocka_unit_test(test_nearest_256),
            cmocka_unit_test(test_nearest_16_and_8),
            cmocka_unit_test(test_depth_detect),
            cmocka_unit_test(test_resolve),
            cmocka_unit_test_setup_teardown(test_find_precedence, scratch_setup, scratch_teardown),
            cmocka_unit_test_setup_teardown(test_open_and_fallback, scratch_setup,
                                            scratch_teardown),
            cmocka_unit_test_setup_teardown(test_list, scratch_setup, scratch_teardown),
            cmocka_unit_test(test_list_bundled),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
