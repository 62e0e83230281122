/* Unit tests for the disk quota's decision (exec/native/quota.c) on a real
 * directory: a workspace that grows past the quota slowly, a little between
 * each walk, must still be stopped once it is past the quota by more than
 * the tolerated slack; after the stop, what is already there stops no one
 * and only further growth does. */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "exec/native/workspace.h"
#include "tests/unit/tmpdir.h"

#define LIMIT (1u << 20)

struct fixture {
        char dir[64];
        struct exec_workspace *ws;
        uv_loop_t loop;
        unsigned stops;
        unsigned nfiles;
};

static void over(struct exec_workspace *w, void *ud)
{
        struct fixture *f = ud;

        (void)w;
        f->stops++;
}

static size_t no_pids(struct exec_workspace *w, void *ud, pid_t *out, size_t max)
{
        (void)w;
        (void)ud;
        (void)out;
        (void)max;
        return 0;
}

static int setup(void **state)
{
        struct fixture *f = calloc(1, sizeof(*f));
        char err[300];

        assert_non_null(f);
        snprintf(f->dir, sizeof(f->dir), "/tmp/proctor-quota-XXXXXX");
        assert_non_null(mkdtemp(f->dir));
        assert_int_equal(exec_workspace_open(f->dir, &f->ws, err, sizeof(err)), 0);
        uv_loop_init(&f->loop);
        assert_int_equal(ws_quota_start(f->ws, &f->loop, LIMIT, over, no_pids, f), 0);
        *state = f;
        return 0;
}

static int teardown(void **state)
{
        struct fixture *f = *state;

        exec_workspace_free(f->ws);
        uv_run(&f->loop, UV_RUN_DEFAULT);
        uv_loop_close(&f->loop);
        tmpdir_remove(f->dir);
        free(f);
        return 0;
}

/* n more empty files: each is charged one 4 KiB block */
static void grow(struct fixture *f, unsigned n)
{
        char path[128];

        for (unsigned i = 0; i < n; i++, f->nfiles++) {
                snprintf(path, sizeof(path), "%s/e%u", f->dir, f->nfiles);
                int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
                assert_true(fd >= 0);
                close(fd);
        }
}

/* Stats ticks and the loop until a walk has ended (at most about 3 s: a
 * walk may wait for the one-second gap between walks, or the five-second
 * period when the filesystem's usage says nothing). */
static void tick(struct fixture *f)
{
        uint64_t added, walk_ms;
        unsigned walks, before;

        ws_quota_report(f->ws, &added, &before, &walk_ms);
        for (int i = 0; i < 3000; i++) {
                if (i % 50 == 0) /* the stats timer's ticks, faster */
                        ws_quota_sample(f->ws);
                uv_run(&f->loop, UV_RUN_NOWAIT);
                ws_quota_report(f->ws, &added, &walks, &walk_ms);
                if (walks > before)
                        return;
                struct timespec ts = {0, 1000000};
                nanosleep(&ts, NULL);
        }
}

/* 64 files (256 KiB) a walk: never 1 MiB of growth between two walks */
static void test_slow_growth_is_stopped(void **state)
{
        struct fixture *f = *state;
        uint64_t added = 0, walk_ms;
        unsigned walks;

        for (int step = 0; step < 60 && f->stops == 0; step++) {
                grow(f, 64);
                /* past the quota by less than the slack: not yet */
                ws_quota_report(f->ws, &added, &walks, &walk_ms);
                if (added <= LIMIT + (1u << 20))
                        assert_int_equal(f->stops, 0);
                tick(f);
        }
        ws_quota_report(f->ws, &added, &walks, &walk_ms);
        if (f->stops == 0)
                fail_msg("never stopped: %llu bytes added under a %u-byte quota, %u walks",
                         (unsigned long long)added, LIMIT, walks);
        /* stopped as soon as it was past the quota by more than the slack */
        assert_true(added > LIMIT + (1u << 20));
        assert_true(added <= LIMIT + (1u << 20) + 64 * 4096 + 64 * 1024);
}

/* After a stop, what is there stops no one; growth past it does. */
static void test_after_a_stop(void **state)
{
        struct fixture *f = *state;
        unsigned stops;

        grow(f, 800); /* 3.2 MiB at once */
        for (int i = 0; i < 20 && f->stops == 0; i++)
                tick(f);
        assert_int_equal(f->stops, 1);
        stops = f->stops;
        for (int i = 0; i < 5; i++)
                tick(f);
        assert_int_equal(f->stops, stops);
        grow(f, 300); /* 1.2 MiB more */
        for (int i = 0; i < 20 && f->stops == stops; i++)
                tick(f);
        assert_int_equal(f->stops, stops + 1);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test_setup_teardown(test_slow_growth_is_stopped, setup, teardown),
            cmocka_unit_test_setup_teardown(test_after_a_stop, setup, teardown),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
