/* exec_fixture: what the exec engine's unit tests (test_exec,
 * test_exec_control, test_warm) share: a workspace directory a sandbox
 * may enter, a loop with an engine on it, running the loop until a flag
 * is set, and collecting output. Only those tests include it; it must
 * never be linked into proctor. Include it after cmocka.h. */
#ifndef PROCTOR_TEST_EXEC_FIXTURE_H
#define PROCTOR_TEST_EXEC_FIXTURE_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "exec/exec.h"
#include "tests/unit/tmpdir.h"

static inline uint64_t exec_fixture_now_us(void)
{
        struct timespec ts;

        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (uint64_t)ts.tv_sec * 1000000u + (uint64_t)ts.tv_nsec / 1000u;
}

/* A fresh /tmp/proctor-test-NAME.XXXXXX in dir. A workspace of an
 * unprivileged owner: root's sandboxes act on a root-owned one as nobody,
 * who could not enter a 0700 directory. */
static inline void exec_fixture_dir(char *dir, size_t len, const char *name)
{
        snprintf(dir, len, "/tmp/proctor-test-%s.XXXXXX", name);
        assert_non_null(mkdtemp(dir));
        assert_int_equal(chmod(dir, 0755), 0);
        if (geteuid() == 0)
                assert_int_equal(chown(dir, 65534, 65534), 0);
}

/* A loop, and an engine with `o` on it. */
static inline void exec_fixture_start(uv_loop_t *loop, const struct exec_engine_opts *o,
                                      struct exec_engine **eng)
{
        char err[256];

        uv_loop_init(loop);
        assert_int_equal(exec_engine_new(loop, o, eng, err, sizeof(err)), 0);
}

/* Frees the engine, runs the loop until all it had is closed (the
 * caller's own handles closed first), and closes the loop. */
static inline void exec_fixture_stop(uv_loop_t *loop, struct exec_engine *eng)
{
        exec_engine_free(eng);
        uv_run(loop, UV_RUN_DEFAULT);
        assert_int_equal(uv_loop_close(loop), 0);
}

/* The fixture of test_exec and test_exec_control. */
struct exec_fixture {
        uv_loop_t loop;
        struct exec_engine *eng;
        bool cgroups; /* the engine uses cgroups (root here); else SIGSTOP is the way */
        char ws[64];  /* the workspace directory, from exec_fixture_dir */
};

/* For a cmocka setup: a fixture in *state over a fresh directory for
 * `name`, with an engine made with `o`. */
static inline struct exec_fixture *exec_fixture_new(void **state, const char *name,
                                                    const struct exec_engine_opts *o)
{
        struct exec_fixture *f = calloc(1, sizeof(*f));

        assert_non_null(f);
        exec_fixture_dir(f->ws, sizeof(f->ws), name);
        exec_fixture_start(&f->loop, o, &f->eng);
        f->cgroups = exec_engine_cgroup_limits(f->eng) != 0;
        *state = f;
        return f;
}

/* For a cmocka teardown: undoes exec_fixture_new. */
static inline int exec_fixture_teardown(void **state)
{
        struct exec_fixture *f = *state;

        exec_fixture_stop(&f->loop, f->eng);
        assert_int_equal(tmpdir_remove(f->ws), 0);
        free(f);
        return 0;
}

/* Runs the loop until *flag (set by a callback, say on_remove). */
static inline void exec_fixture_run_until(uv_loop_t *loop, const bool *flag)
{
        while (!*flag)
                uv_run(loop, UV_RUN_ONCE);
}

/* Appends what on_output got to out (of `cap` bytes, *len used) while it
 * fits with a NUL after it, which it then gets; the rest is dropped. */
static inline void exec_fixture_collect(char *out, size_t cap, size_t *len, const char *buf,
                                        size_t n)
{
        if (*len + n < cap) {
                memcpy(out + *len, buf, n);
                *len += n;
                out[*len] = '\0';
        }
}

#endif
