/* Unit tests of where the bundled themes are found: a checkout, a build in
 * build/asan/, an installed prefix, a copied binary falling back to the
 * compiled-in data directory, and the message when there are none. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tui/datadir.h"
#include "tests/unit/tmpdir.h"

static char root[64];

/* mkdir -p DIR and touch DIR/default.theme, both under root */
static void themes_at(const char *dir)
{
        char cmd[PATH_MAX];

        snprintf(cmd, sizeof(cmd), "mkdir -p '%s/%s' && touch '%s/%s/default.theme'", root, dir,
                 root, dir);
        assert_int_equal(system(cmd), 0);
}

static const char *at(const char *rel, char *buf)
{
        snprintf(buf, PATH_MAX, "%s/%s", root, rel);
        return buf;
}

static int setup(void **state)
{
        snprintf(root, sizeof(root), "/tmp/proctor-datadir.XXXXXX");
        assert_non_null(mkdtemp(root));
        themes_at("co/themes");
        themes_at("pfx/share/proctor/themes");
        themes_at("data/themes");
        return 0;
}

static int teardown(void **state)
{
        return tmpdir_remove(root);
}

static void expect_found(const char *exe, const char *compiled, const char *want)
{
        char e[PATH_MAX], c[PATH_MAX], w[PATH_MAX], dir[PATH_MAX], why[320] = "";

        assert_int_equal(
            datadir_themes_for(at(exe, e), at(compiled, c), dir, sizeof(dir), why, sizeof(why)), 0);
        assert_string_equal(dir, at(want, w));
        assert_string_equal(why, "");
}

static void test_checkout(void **state)
{
        expect_found("co/proctor", "data", "co/themes");
        expect_found("co/build/asan/proctor", "data", "co/themes");
}

static void test_installed_prefix(void **state)
{
        /* before the compiled-in directory: a DESTDIR install keeps its own */
        expect_found("pfx/bin/proctor", "data", "pfx/share/proctor/themes");
}

static void test_copied_binary(void **state)
{
        expect_found("elsewhere/deep/er/proctor", "data", "data/themes");
        expect_found("elsewhere/deep/er/proctor", "pfx/share/proctor", "pfx/share/proctor/themes");
}

static void test_none(void **state)
{
        char e[PATH_MAX], c[PATH_MAX], w[PATH_MAX], dir[PATH_MAX], why[320] = "";
        char bin[PATH_MAX];

        assert_int_equal(datadir_themes_for(at("bare/x/y/proctor", e), at("nowhere", c), dir,
                                            sizeof(dir), why, sizeof(why)),
                         -ENOENT);
        assert_string_equal(dir, at("nowhere/themes", w));
        assert_non_null(strstr(why, "no bundled themes"));
        assert_non_null(strstr(why, at("bare/x/y", bin)));
        assert_non_null(strstr(why, w));
        assert_non_null(strstr(why, "PROCTOR_THEMES_DIR"));
        /* no binary path at all: the compiled-in directory still counts */
        why[0] = '\0';
        assert_int_equal(
            datadir_themes_for(NULL, at("data", c), dir, sizeof(dir), why, sizeof(why)), 0);
        assert_string_equal(dir, at("data/themes", w));
}

int main(void)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test(test_checkout),
            cmocka_unit_test(test_installed_prefix),
            cmocka_unit_test(test_copied_binary),
            cmocka_unit_test(test_none),
        };
        return cmocka_run_group_tests_name("datadir", tests, setup, teardown);
}
