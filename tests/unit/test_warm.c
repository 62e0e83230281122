/* Tests of warm sandboxes (exec_engine_opts.warm) with real sandboxes and
 * the real stub: the same code gives the same stdout, stderr and status as
 * `python3 -c CODE` in a cold sandbox; nothing of one call reaches the
 * next; the stub runs under the call's seccomp filter and limits; the wall
 * clock and the reported CPU time start at the call. */
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

#include "exec/exec.h"
#include "exec/native/pystub.h"
#include "tests/unit/exec_fixture.h"

struct run {
        char out[8192], err[8192];
        size_t nout, nerr;
        struct exec_result res;
        bool exited, removed, warm;
};

static void on_output(struct exec *e, enum exec_stream s, const char *buf, size_t n, void *ud)
{
        struct run *r = ud;

        if (s == EXEC_STDOUT)
                exec_fixture_collect(r->out, sizeof(r->out), &r->nout, buf, n);
        else
                exec_fixture_collect(r->err, sizeof(r->err), &r->nerr, buf, n);
}

static void on_exit_cb(struct exec *e, const struct exec_result *res, void *ud)
{
        struct run *r = ud;

        r->res = *res;
        r->exited = true;
}

static void on_remove(struct exec *e, uint64_t teardown_us, void *ud)
{
        ((struct run *)ud)->removed = true;
}

static const struct exec_callbacks cbs = {
    .on_output = on_output, .on_exit = on_exit_cb, .on_remove = on_remove};

struct fixture {
        uv_loop_t loop;
        uv_timer_t idle;
        struct exec_engine *eng;
        struct exec_workspace *ws;
        char dir[64];
};

/* The engine's warm cap and idle period for the next setup. */
static unsigned warm_cap = 1;
static uint32_t warm_idle_ms;

static int setup(void **state)
{
        struct fixture *f = calloc(1, sizeof(*f));
        struct exec_engine_opts o = {
            .warm = warm_cap, .warm_idle_ms = warm_idle_ms, .stats_interval_ms = 50};
        char err[256];

        exec_fixture_dir(f->dir, sizeof(f->dir), "warm");
        assert_int_equal(exec_workspace_open(f->dir, &f->ws, err, sizeof(err)), 0);
        exec_fixture_start(&f->loop, &o, &f->eng);
        uv_timer_init(&f->loop, &f->idle);
        *state = f;
        return 0;
}

static int teardown(void **state)
{
        struct fixture *f = *state;

        uv_close((uv_handle_t *)&f->idle, NULL);
        exec_fixture_stop(&f->loop, f->eng);
        exec_workspace_free(f->ws);
        assert_int_equal(tmpdir_remove(f->dir), 0);
        free(f);
        return 0;
}

static void tick(uv_timer_t *t)
{
        *(bool *)t->data = true;
        uv_stop(t->loop);
}

static void idle(struct fixture *f, uint64_t ms)
{
        bool done = false;

        f->idle.data = &done;
        uv_timer_start(&f->idle, tick, ms, 0);
        exec_fixture_run_until(&f->loop, &done);
}

static uint64_t timeout_ms = 20000;
static uint64_t cpu_ms; /* 0: the default limit */

/* Runs `code` as run_python_code does (warm: may take a warm sandbox), or,
 * with cold_c, as `python3 -c CODE` in a cold sandbox: the reference. */
static void start_code(struct fixture *f, const char *code, bool warm, bool cold_c, struct run *r);

static void run_code(struct fixture *f, const char *code, bool warm, bool cold_c, struct run *r)
{
        start_code(f, code, warm, cold_c, r);
        exec_fixture_run_until(&f->loop, &r->removed);
        r->out[r->nout] = r->err[r->nerr] = '\0';
}

/* Starts `code` (see run_code) without waiting for it. */
static void start_code(struct fixture *f, const char *code, bool warm, bool cold_c, struct run *r)
{
        char *argv_c[] = {"python3", "-c", (char *)code, NULL};
        struct exec_request req = {.isolation = EXEC_SANDBOX, .ws = f->ws, .ws_mode = EXEC_WS_RW};
        struct exec *e = NULL;
        char err[256];

        memset(r, 0, sizeof(*r));
        req.limits = exec_limits_default();
        req.limits.timeout_ms = timeout_ms;
        if (cpu_ms > 0)
                req.limits.cpu_ms = cpu_ms;
        req.argv = cold_c ? argv_c : exec_python_argv;
        if (!cold_c) {
                req.stdin_data = code;
                req.stdin_len = strlen(code);
                req.warm = warm;
        }
        assert_int_equal(exec_spawn(f->eng, &req, &cbs, r, &e, err, sizeof(err)), 0);
        r->warm = exec_warm(e);
}

/* Until a warm sandbox waits with its interpreter started. */
static void wait_warm(struct fixture *f)
{
        struct exec_stats st;
        int i;

        for (i = 0; i < 1000 && exec_engine_warm_stats(f->eng, &st) != 0; i++)
                idle(f, 5);
        assert_int_equal(exec_engine_warm_stats(f->eng, &st), 0);
        idle(f, 400); /* its interpreter's start and imports */
}

/* A warm call after making sure one waits: it must take it. */
static void run_warm(struct fixture *f, const char *code, struct run *r)
{
        wait_warm(f);
        run_code(f, code, true, false, r);
        assert_true(r->warm);
}

static void prime(struct fixture *f)
{
        struct run r;

        run_code(f, "pass", true, false, &r);
        assert_false(r.warm); /* nothing was known to start ahead */
        assert_int_equal(exec_result_status(&r.res), 0);
}

static void test_same_as_python_c(void **state)
{
        static const char *const codes[] = {
            "print(1)",
            "import sys; sys.exit(3)",
            "import sys; sys.exit('bye')",
            "def f():\n    raise ValueError('boom')\nf()",
            "print(input())",
            "import sys; print(sys.argv, __name__, sorted(globals()), sys.orig_argv[1:])",
            "if __name__ == '__main__':\n    print('as main')",
            "import os; print(os.getpid(), os.getppid(), os.getcwd(), os.getuid())",
            "import os; print(sorted(os.environ.items()))",
            "x = (",
            "raise KeyboardInterrupt",
            "import sys; print('out'); print('err', file=sys.stderr); sys.stdout.flush(); "
            "print('out2')",
            "import atexit; atexit.register(print, 'at exit')",
            "class A:\n    def __del__(self):\n        print('finalized')\na = A()",
            "f = open('/tmp/unclosed', 'w'); f.write('kept'); import subprocess",
            /* a thread that outlives the main code (in order: a sleep
             * would race the main print on a loaded machine) */
            "import threading\ne = threading.Event()\n"
            "def w():\n    e.wait(); print('thread')\n"
            "threading.Thread(target=w).start(); print('main', flush=True); e.set()",
        };
        struct fixture *f = *state;
        struct run cold, warm;
        size_t i;

        prime(f);
        for (i = 0; i < sizeof(codes) / sizeof(codes[0]); i++) {
                run_code(f, codes[i], false, true, &cold);
                run_warm(f, codes[i], &warm);
                assert_false(cold.warm);
                assert_string_equal(warm.out, cold.out);
                assert_string_equal(warm.err, cold.err);
                assert_int_equal(exec_result_status(&warm.res), exec_result_status(&cold.res));
        }
        /* the premise: these codes tell outcomes apart */
        run_code(f, "raise KeyboardInterrupt", false, true, &cold);
        assert_int_equal(exec_result_status(&cold.res), 130);
        assert_non_null(strstr(cold.err, "KeyboardInterrupt"));
}

/* Whether the workspace holds `name`; its size in *size. */
static bool ws_has(struct fixture *f, const char *name, off_t *size)
{
        char path[128];
        struct stat st;

        snprintf(path, sizeof(path), "%s/%s", f->dir, name);
        if (stat(path, &st) != 0)
                return false;
        *size = st.st_size;
        return true;
}

/* The stub tells its status on an exit channel (fd 1000, exec/native/pystub.c)
 * before its own exit, and the init then ends the sandbox. The code can
 * reach that channel: closing it, putting another pipe or a file over it,
 * os._exit, a signal, a child left running, a program started: each gives
 * what `python3 -c` gives, and the stub never writes into what the code
 * put there. Writing to the channel is a lie about its own status, which
 * ends the sandbox at once: nothing of the code runs on after the end the
 * engine reports. */
static void test_exit_channel(void **state)
{
        static const char *const codes[] = {
            "import os\ntry:\n    os.close(1000)\nexcept OSError:\n    pass\n"
            "print('closed'); raise SystemExit(4)",
            "import os\nr, w = os.pipe()\nos.dup2(w, 1000)\nprint('dup2'); raise SystemExit(5)",
            "import os\nfd = os.open('chan', os.O_WRONLY | os.O_CREAT, 0o644)\n"
            "os.dup2(fd, 1000)\nraise SystemExit(6)",
            "import os; print('a', flush=True); os._exit(9)",
            "import os, signal; print('b', flush=True); os.kill(os.getpid(), signal.SIGTERM)",
            "import os\nif os.fork() == 0:\n    import time; time.sleep(2)\n"
            "    print('child late', flush=True)\n    open('late', 'w').write('x')\n"
            "    os._exit(0)\nprint('parent')",
            "import subprocess, sys\n"
            "subprocess.run([sys.executable, '-c',\n"
            "                'import os; print(sorted(os.listdir(\"/proc/self/fd\")))'])",
        };
        static const char lie[] = "import os, time\nos.write(1000, b'\\x07')\ntime.sleep(5)\n"
                                  "print('still')";
        static const char child_lies[] = "import os, time\nif os.fork() == 0:\n"
                                         "    os.write(1000, b'\\x00')\n    time.sleep(2)\n"
                                         "    open('late2', 'w').write('x')\n    os._exit(0)\n"
                                         "time.sleep(5)\nprint('still')";
        struct fixture *f = *state;
        struct run cold, warm;
        off_t size;
        size_t i;

        prime(f);
        /* the premise: the code runs with the channel there, close-on-exec */
        run_warm(f,
                 "import os, stat\nprint(stat.S_ISFIFO(os.fstat(1000).st_mode),\n"
                 "      os.get_inheritable(1000))",
                 &warm);
        assert_string_equal(warm.out, "True False\n");
        for (i = 0; i < sizeof(codes) / sizeof(codes[0]); i++) {
                run_code(f, codes[i], false, true, &cold);
                run_warm(f, codes[i], &warm);
                assert_string_equal(warm.out, cold.out);
                assert_string_equal(warm.err, cold.err);
                assert_int_equal(exec_result_status(&warm.res), exec_result_status(&cold.res));
                assert_int_equal(warm.res.reason, cold.res.reason);
        }
        assert_true(ws_has(f, "chan", &size));
        assert_int_equal(size, 0);
        /* the children sleep 2 s (not less: on a loaded machine the end of
         * a sandbox may take a while to come) and would write after it */
        idle(f, 2500);
        assert_false(ws_has(f, "late", &size));

        run_warm(f, lie, &warm);
        assert_int_equal(warm.res.reason, EXEC_EXITED);
        assert_int_equal(exec_result_status(&warm.res), 7);
        assert_string_equal(warm.out, "");
        /* well before the wall clock's 20 s, however loaded the machine */
        assert_true(warm.res.wall_ms < 10000);
        run_warm(f, child_lies, &warm);
        assert_int_equal(exec_result_status(&warm.res), 0);
        assert_string_equal(warm.out, "");
        assert_true(warm.res.wall_ms < 10000);
        idle(f, 2500);
        assert_false(ws_has(f, "late2", &size));
}

/* What the stub did before the call left nothing: /tmp is empty, the
 * workspace untouched; what a call writes to /tmp, its pid and its
 * processes never reach the next call. */
static void test_fresh_each_call(void **state)
{
        static const char probe[] =
            "import os\n"
            "print(sorted(os.listdir('/tmp')), sorted(os.listdir('.')), os.getpid(),\n"
            "      sorted(p for p in os.listdir('/proc') if p.isdigit()))\n";
        static const char leave[] = "import os, subprocess\n"
                                    "open('/tmp/secret', 'w').write('s')\n"
                                    "subprocess.Popen(['sleep', '30'], start_new_session=True)\n"
                                    "print(os.getpid())\n";
        struct fixture *f = *state;
        struct run r;

        prime(f);
        run_warm(f, probe, &r);
        assert_string_equal(r.out, "[] [] 2 ['1', '2']\n");
        run_warm(f, leave, &r);
        assert_string_equal(r.out, "2\n");
        run_warm(f, probe, &r);
        assert_string_equal(r.out, "[] [] 2 ['1', '2']\n");
        /* the premise: a sandbox's /tmp does take files, and the probe sees them */
        run_warm(f,
                 "open('/tmp/x', 'w').close()\n"
                 "import os; print(os.listdir('/tmp'))",
                 &r);
        assert_string_equal(r.out, "['x']\n");
}

/* The stub and the code run under the call's seccomp filter, rlimits, uid
 * and cgroup: the same as a cold sandbox's, and a denied call is denied.
 * (RLIMIT_CPU counts from the call: see test_cpu_rlimit_from_call.) */
static void test_same_policy(void **state)
{
        static const char probe[] =
            "import resource, os\n"
            "st = dict(l.split(':\\t', 1) for l in open('/proc/self/status').read().splitlines()\n"
            "          if ':\\t' in l)\n"
            "print(st['Seccomp'].strip(), st['NoNewPrivs'].strip(), st['CapEff'].strip())\n"
            "print([resource.getrlimit(getattr(resource, n)) for n in sorted(dir(resource))\n"
            "       if n.startswith('RLIMIT_') and n != 'RLIMIT_CPU'])\n"
            "print(open('/proc/self/cgroup').read().count('\\n') > 0, os.getuid(), os.getgid())\n";
        static const char denied[] = "import ctypes, os\n"
                                     "libc = ctypes.CDLL(None, use_errno=True)\n"
                                     "r = libc.syscall(321, 0, 0, 0)  # bpf\n"
                                     "print(r, os.strerror(ctypes.get_errno()))\n"
                                     "r = libc.syscall(272, 0x10000000)  # unshare(CLONE_NEWUSER)\n"
                                     "print(r, os.strerror(ctypes.get_errno()))\n";
        struct fixture *f = *state;
        struct run cold, warm;

        prime(f);
        run_code(f, probe, false, true, &cold);
        run_warm(f, probe, &warm);
        assert_int_equal(exec_result_status(&cold.res), 0);
        assert_string_equal(warm.out, cold.out);
        assert_non_null(strstr(warm.out, "2 1 ")); /* filtered, no new privileges */
        run_warm(f, denied, &warm);
        assert_string_equal(warm.out, "-1 Operation not permitted\n-1 Operation not permitted\n");
}

/* A warm sandbox may wait longer than the call's wall-clock limit: the
 * clock starts at the call, and then holds. */
static void test_clock_starts_at_call(void **state)
{
        struct fixture *f = *state;
        struct run r;

        timeout_ms = 1000;
        prime(f);
        wait_warm(f);
        idle(f, 1500);
        run_warm(f, "print('in time')", &r);
        assert_int_equal(r.res.reason, EXEC_EXITED);
        assert_string_equal(r.out, "in time\n");
        run_warm(f, "import time; print('start', flush=True); time.sleep(10)", &r);
        timeout_ms = 20000;
        assert_int_equal(r.res.reason, EXEC_TIMEOUT);
        assert_string_equal(r.out, "start\n");
        /* ended by its 1 s wall clock, not by the end of its 10 s sleep */
        assert_true(r.res.wall_ms >= 900 && r.res.wall_ms < 8000);
}

/* The CPU time a warm call reports (and is limited by, in its cgroup) is
 * its own: the interpreter's start before the call is not in it. */
static void test_cpu_from_call(void **state)
{
        struct fixture *f = *state;
        struct exec_stats st;
        struct run r;

        prime(f);
        wait_warm(f);
        assert_int_equal(exec_engine_warm_stats(f->eng, &st), 0);
        /* the premise: starting the interpreter costs measurable CPU time */
        assert_true(st.cpu_ms >= 5);
        run_code(f, "pass", true, false, &r);
        assert_true(r.warm);
        assert_int_equal(exec_result_status(&r.res), 0);
        assert_true(r.res.cpu_ms < st.cpu_ms);
}

/* The CPU rlimit a warm call runs under counts from the call, as a cold
 * call's counts from its start: what is left of it when the code starts is
 * at least the call's limit (rounded up to the second, as a cold call's),
 * not that minus what the interpreter's start took. And it holds. */
static void test_cpu_rlimit_from_call(void **state)
{
        static const char probe[] = "import resource\n"
                                    "soft, hard = resource.getrlimit(resource.RLIMIT_CPU)\n"
                                    "u = resource.getrusage(resource.RUSAGE_SELF)\n"
                                    "left = soft - u.ru_utime - u.ru_stime\n"
                                    "print(left >= 1.0, left <= 2.0, hard - soft)\n";
        /* Taken while still starting, its start falls in the call, as a
         * cold call's does: what is left is the limit less that start. */
        static const char probe_soon[] = "import resource\n"
                                         "soft, hard = resource.getrlimit(resource.RLIMIT_CPU)\n"
                                         "u = resource.getrusage(resource.RUSAGE_SELF)\n"
                                         "left = soft - u.ru_utime - u.ru_stime\n"
                                         "print(left >= 0.9, left <= 2.0, hard - soft)\n";
        struct fixture *f = *state;
        struct run cold, warm, soon, r_spin;

        cpu_ms = 1000;
        prime(f);
        run_warm(f, probe, &warm);
        /* at once: the one still starting is taken, and gets it once it runs */
        run_code(f, probe_soon, true, false, &soon);
        /* the premise: a cold call's start counts against its own limit */
        run_code(f, probe, false, false, &cold);
        run_warm(f, "while True: pass", &r_spin);
        cpu_ms = 0;
        assert_false(cold.warm);
        assert_string_equal(cold.out, "False True 1\n");
        assert_string_equal(warm.out, "True True 1\n");
        assert_true(soon.warm);
        assert_string_equal(soon.out, "True True 1\n");
        assert_int_equal(r_spin.res.reason, EXEC_CPU_LIMIT);
        /* the call's 1 s, rounded up to the second, not more: counted in
         * CPU time (a loaded machine stretches the wall clock, not this) */
        assert_true(r_spin.res.cpu_ms < 3000);
}

/* The pool's size policy: one more per call that found none, one less
 * per idle period, within [0, cap]. */
static void test_policy(void **state)
{
        (void)state;
        assert_int_equal(exec_warm_policy_next(0, 3, EXEC_WARM_MISS), 1);
        assert_int_equal(exec_warm_policy_next(2, 3, EXEC_WARM_MISS), 3);
        assert_int_equal(exec_warm_policy_next(3, 3, EXEC_WARM_MISS), 3);
        assert_int_equal(exec_warm_policy_next(2, 3, EXEC_WARM_HIT), 2);
        assert_int_equal(exec_warm_policy_next(2, 3, EXEC_WARM_IDLE), 1);
        assert_int_equal(exec_warm_policy_next(0, 3, EXEC_WARM_IDLE), 0);
        assert_int_equal(exec_warm_policy_next(1, 0, EXEC_WARM_MISS), 0);
        assert_int_equal(exec_warm_policy_next(5, 3, EXEC_WARM_HIT), 3);
}

/* Until `n` warm sandboxes wait with their interpreter started (or 10 s). */
static unsigned wait_idle(struct fixture *f, unsigned n)
{
        int i;

        for (i = 0; i < 200 && exec_engine_warm_idle(f->eng) < n; i++)
                idle(f, 50);
        idle(f, 400); /* their interpreters' start and imports */
        return exec_engine_warm_idle(f->eng);
}

static void burst(struct fixture *f, struct run *r, unsigned n)
{
        unsigned i, done;

        for (i = 0; i < n; i++)
                start_code(f, "print('burst')", true, false, &r[i]);
        do {
                uv_run(&f->loop, UV_RUN_ONCE);
                for (i = done = 0; i < n; i++)
                        done += r[i].removed;
        } while (done < n);
        for (i = 0; i < n; i++) {
                r[i].out[r[i].nout] = '\0';
                assert_string_equal(r[i].out, "burst\n");
        }
}

static unsigned count_warm(const struct run *r, unsigned n)
{
        unsigned i, w = 0;

        for (i = 0; i < n; i++)
                w += r[i].warm;
        return w;
}

/* Calls in a burst grow the pool (cap 3), so the next burst gets warm
 * sandboxes; idle periods shrink it to nothing. */
static void test_pool_follows_calls(void **state)
{
        struct fixture *f = *state;
        struct run r[3];

        prime(f);
        assert_int_equal(exec_engine_warm_target(f->eng), 1);
        assert_int_equal(wait_idle(f, 1), 1);
        burst(f, r, 3);
        assert_int_equal(count_warm(r, 3), 1); /* one waited, two found none */
        assert_int_equal(exec_engine_warm_target(f->eng), 3);
        assert_int_equal(wait_idle(f, 3), 3);
        burst(f, r, 3);
        assert_int_equal(count_warm(r, 3), 3);
        assert_int_equal(wait_idle(f, 3), 3);
        /* idle: one less per period (1 s here), down to none */
        idle(f, 1300);
        assert_true(exec_engine_warm_target(f->eng) < 3);
        assert_true(exec_engine_warm_idle(f->eng) <= exec_engine_warm_target(f->eng));
        idle(f, 3000);
        assert_int_equal(exec_engine_warm_target(f->eng), 0);
        idle(f, 200); /* what was let go is reaped */
        assert_int_equal(exec_engine_warm_idle(f->eng), 0);
        run_code(f, "print(2)", true, false, &r[0]);
        assert_false(r[0].warm); /* none was kept */
        assert_int_equal(exec_engine_warm_target(f->eng), 1);
}

static bool room_for_one(void *ud, unsigned idle_n)
{
        (*(unsigned *)ud)++;
        return idle_n < 1;
}

/* The room callback bounds the pool whatever the policy wants, and a trim
 * lets waiting ones go at once. */
static void test_pool_room(void **state)
{
        struct fixture *f = *state;
        unsigned asked = 0;
        struct run r[3];

        exec_engine_set_warm_room(f->eng, room_for_one, &asked);
        prime(f);
        wait_idle(f, 1);
        burst(f, r, 3);
        assert_int_equal(exec_engine_warm_target(f->eng), 3);
        idle(f, 1000);
        assert_int_equal(exec_engine_warm_idle(f->eng), 1);
        assert_true(asked >= 2); /* it was asked, and said no */
        exec_engine_warm_trim(f->eng, 0);
        assert_int_equal(exec_engine_warm_idle(f->eng), 0);
        exec_engine_set_warm_room(f->eng, NULL, NULL);
}

static int setup_pool(void **state)
{
        int rc;

        warm_cap = 3;
        warm_idle_ms = 1000;
        rc = setup(state);
        warm_cap = 1;
        warm_idle_ms = 0;
        return rc;
}

int main(void)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test_setup_teardown(test_same_as_python_c, setup, teardown),
            cmocka_unit_test_setup_teardown(test_exit_channel, setup, teardown),
            cmocka_unit_test_setup_teardown(test_fresh_each_call, setup, teardown),
            cmocka_unit_test_setup_teardown(test_same_policy, setup, teardown),
            cmocka_unit_test_setup_teardown(test_clock_starts_at_call, setup, teardown),
            cmocka_unit_test_setup_teardown(test_cpu_from_call, setup, teardown),
            cmocka_unit_test_setup_teardown(test_cpu_rlimit_from_call, setup, teardown),
            cmocka_unit_test(test_policy),
            cmocka_unit_test_setup_teardown(test_pool_follows_calls, setup_pool, teardown),
            cmocka_unit_test_setup_teardown(test_pool_room, setup_pool, teardown),
        };
        return cmocka_run_group_tests_name("warm", tests, NULL, NULL);
}
