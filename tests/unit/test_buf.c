/* buf: a block grows by doubling from its first size and keeps what it
 * held; a size that would wrap around size_t is refused; when the
 * allocator has no memory the block is left as it was. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core/util/buf.h"

/* Under ASan an allocation too large for any machine must come back NULL,
 * as from the C library, not end the test: that is the path tested. */
const char *__asan_default_options(void);
const char *__asan_default_options(void)
{
        return "allocator_may_return_null=1";
}

static void test_grows_by_doubling(void **state)
{
        char *p = NULL, *before;
        size_t cap = 0;

        assert_int_equal(buf_reserve(&p, &cap, 0, 10, 16), 0);
        assert_non_null(p);
        assert_int_equal(cap, 16);
        memcpy(p, "0123456789", 10);
        /* 10 + 5 + a NUL fit in 16: nothing moves */
        before = p;
        assert_int_equal(buf_reserve(&p, &cap, 10, 5, 16), 0);
        assert_ptr_equal(p, before);
        assert_int_equal(cap, 16);
        /* 10 + 6 + a NUL do not: twice the size, and the bytes kept */
        assert_int_equal(buf_reserve(&p, &cap, 10, 6, 16), 0);
        assert_int_equal(cap, 32);
        assert_memory_equal(p, "0123456789", 10);
        /* from a size it has, it doubles that, whatever first says */
        assert_int_equal(buf_reserve(&p, &cap, 10, 100, 4096), 0);
        assert_int_equal(cap, 128);
        assert_memory_equal(p, "0123456789", 10);
        free(p);
}

static void test_first_zero_and_nothing_more(void **state)
{
        char *p = NULL;
        size_t cap = 0;

        /* room for the NUL alone is still a block */
        assert_int_equal(buf_reserve(&p, &cap, 0, 0, 0), 0);
        assert_non_null(p);
        assert_int_equal(cap, 1);
        assert_int_equal(buf_reserve(&p, &cap, 0, 2, 0), 0);
        assert_int_equal(cap, 4);
        free(p);
}

/* With *cap 0 the pointer is not a block: a static "" is replaced, not
 * reallocated (ASan would see that). */
static void test_static_empty_is_not_read(void **state)
{
        static char empty[] = "";
        char *p = empty;
        size_t len = 0, cap = 0;

        assert_int_equal(buf_append(&p, &len, &cap, "abc", 3), 0);
        assert_ptr_not_equal(p, empty);
        assert_string_equal(p, "abc");
        assert_int_equal(cap, 64);
        free(p);
}

static void test_append_is_always_a_string(void **state)
{
        char *p = NULL, want[1001];
        size_t len = 0, cap = 0;
        int i;

        assert_int_equal(buf_append(&p, &len, &cap, NULL, 0), 0);
        assert_string_equal(p, "");
        for (i = 0; i < 1000; i++) {
                want[i] = (char)('a' + i % 26);
                assert_int_equal(buf_append(&p, &len, &cap, &want[i], 1), 0);
                assert_int_equal(len, (size_t)i + 1);
                assert_int_equal(p[len], '\0');
                assert_true(cap > len);
        }
        want[1000] = '\0';
        assert_string_equal(p, want);
        assert_int_equal(cap, 1024);
        free(p);
}

/* Sizes past size_t are refused before anything is allocated, and the
 * block and its size are left as they were. */
static void test_overflow_refused(void **state)
{
        char *p = NULL, *before;
        size_t cap = 0, len = 0;

        assert_int_equal(buf_append(&p, &len, &cap, "xyz", 3), 0);
        assert_int_equal(buf_append(&p, &len, &cap, "xyz", 3), 0);
        before = p;
        /* len + more + 1 wraps */
        assert_int_equal(buf_reserve(&p, &cap, SIZE_MAX - 1, 1, 64), -EOVERFLOW);
        assert_int_equal(buf_reserve(&p, &cap, SIZE_MAX, 0, 64), -EOVERFLOW);
        assert_int_equal(buf_reserve(&p, &cap, len, SIZE_MAX, 64), -EOVERFLOW);
        assert_int_equal(buf_reserve(&p, &cap, len, SIZE_MAX - len, 64), -EOVERFLOW);
        /* the sum fits, but no doubling of 64 reaches it */
        assert_int_equal(buf_reserve(&p, &cap, len, SIZE_MAX / 2, 64), -EOVERFLOW);
        assert_int_equal(buf_append(&p, &len, &cap, "q", SIZE_MAX - len), -EOVERFLOW);
        assert_ptr_equal(p, before);
        assert_int_equal(cap, 64);
        assert_int_equal(len, 6);
        assert_string_equal(p, "xyzxyz");
        free(p);
}

/* A size that fits in size_t but in no machine's memory (2^62 bytes):
 * the allocator says no, and the block is kept, whole. */
static void test_out_of_memory(void **state)
{
        char *p = NULL, *before;
        size_t cap = 0, len = 0;

        assert_int_equal(buf_append(&p, &len, &cap, "kept", 4), 0);
        before = p;
        assert_int_equal(buf_reserve(&p, &cap, len, ((size_t)1 << 62) - len - 1, 64), -ENOMEM);
        assert_ptr_equal(p, before);
        assert_int_equal(cap, 64);
        assert_string_equal(p, "kept");
        /* and it still grows when asked for what there is */
        assert_int_equal(buf_append(&p, &len, &cap, "!", 1), 0);
        assert_string_equal(p, "kept!");
        free(p);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test(test_grows_by_doubling),
            cmocka_unit_test(test_first_zero_and_nothing_more),
            cmocka_unit_test(test_static_empty_is_not_read),
            cmocka_unit_test(test_append_is_always_a_string),
            cmocka_unit_test(test_overflow_refused),
            cmocka_unit_test(test_out_of_memory),
        };
        return cmocka_run_group_tests_name("buf", tests, NULL, NULL);
}
