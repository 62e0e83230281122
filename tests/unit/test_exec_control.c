/* The operator's control of a running execution, with real processes, real
 * sandboxes and (as root here) real cgroups: a chosen signal reaches every
 * process and the command may exit on its own; pause stops a command and
 * resume lets it go on, through the freezer or, without cgroups, SIGSTOP;
 * a paused execution can be killed and still times out. Then the same
 * through a session, with its events and the view model's state. */
#include <errno.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "core/util/bus.h"
#include "core/session/session.h"
#include "core/view/viewmodel.h"
#include "exec/exec.h"
#include "tests/unit/exec_fixture.h"

struct run {
        char out[8192];
        size_t nout;
        struct exec_result res;
        bool started, exited, removed;
        uint64_t exit_at_us;
        /* stats samples taken since `watch_from_us`, and their largest cpu_pct */
        uint64_t watch_from_us;
        unsigned samples;
        double max_pct;
        /* what exec_signal and exec_pause said from on_exit (the execution
         * is valid until on_remove) */
        int signal_at_exit, pause_at_exit;
};

static void on_start(struct exec *e, int pid, uint64_t setup_us, void *ud)
{
        ((struct run *)ud)->started = true;
}

static void on_output(struct exec *e, enum exec_stream s, const char *buf, size_t n, void *ud)
{
        struct run *r = ud;

        exec_fixture_collect(r->out, sizeof(r->out), &r->nout, buf, n);
}

static void on_stats(struct exec *e, const struct exec_stats *st, void *ud)
{
        struct run *r = ud;

        if (r->watch_from_us == 0 || exec_fixture_now_us() < r->watch_from_us)
                return;
        /* the first sample in the window measures from the one before it,
         * which a loaded machine may have taken before the pause held */
        if (++r->samples > 1 && st->cpu_pct > r->max_pct)
                r->max_pct = st->cpu_pct;
}

static void on_exit_cb(struct exec *e, const struct exec_result *res, void *ud)
{
        struct run *r = ud;

        r->res = *res;
        r->exited = true;
        r->signal_at_exit = exec_signal(e, SIGTERM);
        r->pause_at_exit = exec_pause(e, NULL);
        r->exit_at_us = exec_fixture_now_us();
}

static void on_remove(struct exec *e, uint64_t teardown_us, void *ud)
{
        ((struct run *)ud)->removed = true;
}

static const struct exec_callbacks cbs = {on_start,   on_output, on_stats,
                                          on_exit_cb, on_remove, NULL};

static int make_fixture(void **state, bool no_cgroups)
{
        struct exec_engine_opts o = {.stats_interval_ms = 50, .no_cgroups = no_cgroups};

        exec_fixture_new(state, "ctl", &o);
        return 0;
}

static int setup(void **state)
{
        return make_fixture(state, false);
}

static int setup_no_cgroups(void **state)
{
        return make_fixture(state, true);
}

static void stop_loop(uv_timer_t *t)
{
        uv_stop(t->loop);
}

/* Runs the loop for `ms`, whatever it has to do. */
static void run_for(struct exec_fixture *f, unsigned ms)
{
        uv_timer_t t;

        uv_timer_init(&f->loop, &t);
        uv_timer_start(&t, stop_loop, ms, 0);
        uv_run(&f->loop, UV_RUN_DEFAULT);
        uv_close((uv_handle_t *)&t, NULL);
        uv_run(&f->loop, UV_RUN_NOWAIT);
}

/* Runs the loop until *flag or `ms` passed; returns *flag. */
static bool run_until(struct exec_fixture *f, const bool *flag, unsigned ms)
{
        uint64_t end = exec_fixture_now_us() + ms * 1000ull;

        while (!*flag && exec_fixture_now_us() < end)
                run_for(f, 10);
        return *flag;
}

static bool output_has(struct exec_fixture *f, struct run *r, const char *what, unsigned ms)
{
        uint64_t end = exec_fixture_now_us() + ms * 1000ull;

        while (strstr(r->out, what) == NULL && !r->exited && exec_fixture_now_us() < end)
                run_for(f, 10);
        return strstr(r->out, what) != NULL;
}

static struct exec *spawn(struct exec_fixture *f, enum exec_isolation iso, const char *script,
                          uint64_t timeout_ms, struct run *r)
{
        char *argv[] = {"sh", "-c", (char *)script, NULL};
        struct exec_request req = {.isolation = iso, .argv = argv, .workspace = f->ws};
        struct exec *e = NULL;
        char err[256];

        req.limits = exec_limits_default();
        req.limits.timeout_ms = timeout_ms;
        memset(r, 0, sizeof(*r));
        assert_int_equal(exec_spawn(f->eng, &req, &cbs, r, &e, err, sizeof(err)), 0);
        assert_true(output_has(f, r, "ready", 5000));
        return e;
}

/* The file the counter below writes, in the workspace. */
static const char *count_file(const struct exec_fixture *f)
{
        static char path[96];

        snprintf(path, sizeof(path), "%s/count", f->ws);
        return path;
}

static off_t file_size(const char *path)
{
        struct stat st;

        return stat(path, &st) == 0 ? st.st_size : -1;
}

static void finish(struct exec_fixture *f, struct run *r)
{
        assert_true(run_until(f, &r->exited, 5000));
        assert_true(run_until(f, &r->removed, 5000));
}

static const enum exec_isolation both[] = {EXEC_SANDBOX, EXEC_LOCAL};

/* The outer shell traps TERM, waits for its child (which traps it too) and
 * exits 3 on its own: every process got the signal, nothing was torn down. */
static void test_signal_reaches_every_process(void **state)
{
        static const char script[] =
            "trap 'echo got-term; wait; exit 3' TERM; "
            "sh -c 'trap \"echo inner-term; exit 4\" TERM; while :; do sleep 0.05; done' & "
            "echo ready; while :; do sleep 0.05; done";
        struct exec_fixture *f = *state;
        struct run r;

        for (size_t i = 0; i < 2; i++) {
                struct exec *e = spawn(f, both[i], script, 20000, &r);
                run_for(f, 100); /* the inner shell has set its trap */
                assert_int_equal(exec_signal(e, SIGTERM), 0);
                finish(f, &r);
                assert_string_equal(exec_reason_name(r.res.reason), "exited");
                assert_int_equal(r.res.exit_code, 3);
                assert_non_null(strstr(r.out, "got-term"));
                assert_non_null(strstr(r.out, "inner-term"));
        }
}

/* A command that dies of the operator's signal is reported as killed, with
 * that signal; an ended one refuses signals; a bad signal is refused. */
static void test_signal_kills_as_killed(void **state)
{
        struct exec_fixture *f = *state;
        struct run r;

        for (size_t i = 0; i < 2; i++) {
                struct exec *e = spawn(f, both[i], "echo ready; sleep 30", 20000, &r);
                assert_int_equal(exec_signal(e, 0), -EINVAL);
                assert_int_equal(exec_signal(e, 65), -EINVAL);
                assert_int_equal(exec_signal(e, SIGTERM), 0);
                finish(f, &r);
                assert_int_equal(r.signal_at_exit, -ESRCH);
                assert_int_equal(r.pause_at_exit, -ESRCH);
                assert_string_equal(exec_reason_name(r.res.reason), "killed");
                assert_int_equal(r.res.signal, SIGTERM);
                assert_int_equal(exec_result_status(&r.res), 128 + SIGTERM);
        }
}

/* A signal the operator did not send stays "signaled". */
static void test_own_signal_stays_signaled(void **state)
{
        struct exec_fixture *f = *state;
        struct run r;

        for (size_t i = 0; i < 2; i++) {
                struct exec *e =
                    spawn(f, both[i], "echo ready; sleep 0.2; kill -USR1 $$", 20000, &r);
                assert_int_equal(exec_signal(e, SIGWINCH), 0);
                finish(f, &r);
                assert_string_equal(exec_reason_name(r.res.reason), "signaled");
                assert_int_equal(r.res.signal, SIGUSR1);
        }
}

static const char counter[] =
    "echo ready; i=0; while :; do i=$((i+1)); echo $i >> count; sleep 0.01; done";

/* Pause holds the counter still for a second (and its CPU at 0%), resume
 * lets it count again; a second pause or resume is refused. */
static void test_pause_resume(void **state)
{
        struct exec_fixture *f = *state;
        enum exec_pause_how want = f->cgroups ? EXEC_PAUSE_FREEZER : EXEC_PAUSE_SIGNAL;
        enum exec_pause_how how = 0;
        struct run r;

        for (size_t i = 0; i < 2; i++) {
                struct exec *e = spawn(f, both[i], counter, 30000, &r);
                off_t before;
                run_for(f, 300);
                assert_true(file_size(count_file(f)) > 0);
                assert_int_equal(exec_resume(e, &how), -EALREADY);
                assert_int_equal(exec_pause(e, &how), 0);
                assert_int_equal(how, want);
                assert_int_equal(exec_paused(e), want);
                assert_string_equal(exec_pause_how_name(how), f->cgroups ? "freezer" : "signal");
                assert_int_equal(exec_pause(e, &how), -EALREADY);
                run_for(f, 100); /* a write under way lands */
                before = file_size(count_file(f));
                r.watch_from_us =
                    exec_fixture_now_us() + 60000; /* samples wholly within the pause */
                /* five samples, however long a loaded machine takes for them */
                for (uint64_t end = exec_fixture_now_us() + 10000000;
                     r.samples < 6 && exec_fixture_now_us() < end;)
                        run_for(f, 100);
                assert_int_equal(file_size(count_file(f)), before);
                assert_false(r.exited);
                assert_true(r.samples >= 6);
                assert_true(r.max_pct == 0.0);
                r.watch_from_us = 0;
                assert_int_equal(exec_resume(e, &how), 0);
                assert_int_equal(how, want);
                assert_int_equal(exec_paused(e), 0);
                run_for(f, 500);
                assert_true(file_size(count_file(f)) > before);
                assert_int_equal(exec_kill(e), 0);
                finish(f, &r);
                assert_string_equal(exec_reason_name(r.res.reason), "killed");
                unlink(count_file(f));
        }
}

/* A paused execution is killed at once, and removed with all it had. */
static void test_kill_paused(void **state)
{
        struct exec_fixture *f = *state;
        struct run r;

        for (size_t i = 0; i < 2; i++) {
                struct exec *e = spawn(f, both[i], counter, 30000, &r);
                uint64_t t0;
                assert_int_equal(exec_pause(e, NULL), 0);
                run_for(f, 200);
                t0 = exec_fixture_now_us();
                assert_int_equal(exec_kill(e), 0);
                finish(f, &r);
                assert_true(r.exit_at_us - t0 < 5000000); /* prompt even when loaded */
                assert_string_equal(exec_reason_name(r.res.reason), "killed");
                assert_int_equal(r.res.signal, SIGKILL);
                unlink(count_file(f));
        }
}

/* The wall clock runs while paused: a paused execution times out. */
static void test_paused_times_out(void **state)
{
        struct exec_fixture *f = *state;
        struct run r;

        for (size_t i = 0; i < 2; i++) {
                struct exec *e = spawn(f, both[i], counter, 1000, &r);
                uint64_t t0 = exec_fixture_now_us();
                assert_int_equal(exec_pause(e, NULL), 0);
                assert_true(run_until(f, &r.exited, 4000));
                assert_string_equal(exec_reason_name(r.res.reason), "timeout");
                assert_int_equal(exec_result_status(&r.res), 124);
                assert_true(r.res.wall_ms >= 900 && r.res.wall_ms < 2000);
                assert_true(r.exit_at_us - t0 < 2000000);
                finish(f, &r);
                unlink(count_file(f));
        }
}

/* In a child process: an engine whose sandbox is paused when the process
 * dies by SIGKILL. Writes the sandbox init's host pid to `fd` first. */
__attribute__((noreturn)) static void die_with_paused(int fd)
{
        struct exec_fixture f;
        struct run r;
        struct exec *e;
        char *argv[] = {"sh", "-c", "echo ready; while :; do sleep 0.05; done", NULL};
        struct exec_request req = {.isolation = EXEC_SANDBOX, .argv = argv, .workspace = "/tmp"};
        struct exec_engine_opts o = {.stats_interval_ms = 50};
        char err[256];
        int pid;

        memset(&f, 0, sizeof(f));
        memset(&r, 0, sizeof(r));
        req.ws_mode = EXEC_WS_NONE;
        req.limits = exec_limits_default();
        uv_loop_init(&f.loop);
        if (exec_engine_new(&f.loop, &o, &f.eng, err, sizeof(err)) < 0 ||
            exec_spawn(f.eng, &req, &cbs, &r, &e, err, sizeof(err)) < 0 ||
            !output_has(&f, &r, "ready", 5000) || exec_pause(e, NULL) < 0)
                _exit(1);
        pid = exec_pid(e);
        if (write(fd, &pid, sizeof(pid)) != sizeof(pid))
                _exit(1);
        raise(SIGKILL);
        _exit(1);
}

/* Gone, or a zombie nobody waits for any more. */
static bool process_over(int pid)
{
        char path[64], buf[256], *p;
        FILE *fp;
        size_t n;

        snprintf(path, sizeof(path), "/proc/%d/stat", pid);
        if ((fp = fopen(path, "r")) == NULL)
                return true;
        n = fread(buf, 1, sizeof(buf) - 1, fp);
        fclose(fp);
        buf[n] = '\0';
        p = strrchr(buf, ')');
        return p != NULL && p[1] == ' ' && p[2] == 'Z';
}

/* proctor killed by SIGKILL while an execution is paused: on cgroup v1 its
 * frozen processes cannot die until thawed, so they outlive it; the next
 * engine, which reaps the groups of dead proctor processes, thaws and
 * kills them. On v2 (and with SIGSTOP) they die with their init at once. */
static void test_paused_outlive_proctor_until_next(void **state)
{
        struct exec_fixture *f = *state;
        struct exec_engine *next = NULL;
        int fds[2], pid = 0, st;
        uint64_t end;
        char err[256];
        pid_t child;

        if (!f->cgroups) {
                print_message("no cgroup here (root with cgroups needed): nothing is frozen\n");
                skip();
        }
        assert_int_equal(pipe(fds), 0);
        child = fork();
        assert_true(child >= 0);
        if (child == 0) {
                close(fds[0]);
                die_with_paused(fds[1]);
        }
        close(fds[1]);
        assert_int_equal(read(fds[0], &pid, sizeof(pid)), sizeof(pid));
        close(fds[0]);
        assert_int_equal(waitpid(child, &st, 0), child);
        assert_true(WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL);
        assert_true(pid > 0);
        assert_int_equal(exec_engine_new(&f->loop, NULL, &next, err, sizeof(err)), 0);
        for (end = exec_fixture_now_us() + 3000000;
             !process_over(pid) && exec_fixture_now_us() < end;)
                run_for(f, 20);
        assert_true(process_over(pid));
        exec_engine_free(next);
}

/* ---- through a session ---- */

struct seen {
        struct session *s;
        struct viewmodel *vm;
        uint64_t exec_id;
        bool ready, exited, idle;
        int signal_events, pause_events, resume_events;
        char how[16], sig_name[16];
        int sig;
        char reason[32];
        json_int_t exit_code;
};

static void record(const json_t *ev, void *ud)
{
        struct seen *w = ud;
        const char *type = json_string_value(json_object_get(ev, "type"));
        const char *data = json_string_value(json_object_get(ev, "data"));

        if (strcmp(type, "exec.start") == 0)
                w->exec_id = (uint64_t)json_integer_value(json_object_get(ev, "exec_id"));
        if (strcmp(type, "tool.output") == 0 && data != NULL && strstr(data, "ready") != NULL)
                w->ready = true;
        if (strcmp(type, "operator.signal") == 0) {
                w->signal_events++;
                w->sig = (int)json_integer_value(json_object_get(ev, "signal"));
                snprintf(w->sig_name, sizeof(w->sig_name), "%s",
                         json_string_value(json_object_get(ev, "name")));
        }
        if (strcmp(type, "exec.pause") == 0 || strcmp(type, "exec.resume") == 0) {
                *(type[5] == 'p' ? &w->pause_events : &w->resume_events) += 1;
                snprintf(w->how, sizeof(w->how), "%s",
                         json_string_value(json_object_get(ev, "how")));
        }
        if (strcmp(type, "exec.exit") == 0) {
                w->exited = true;
                snprintf(w->reason, sizeof(w->reason), "%s",
                         json_string_value(json_object_get(ev, "reason")));
                w->exit_code = json_integer_value(json_object_get(ev, "exit_code"));
        }
}

static void on_idle(enum agent_status st, void *ud)
{
        ((struct seen *)ud)->idle = true;
}

static const struct viewmodel_exec *vm_exec(struct viewmodel *vm, uint64_t id)
{
        long i = viewmodel_exec_find(vm, id);

        return i < 0 ? NULL : viewmodel_exec(vm, (size_t)i);
}

static void session_run(struct exec_fixture *f, enum exec_isolation mode)
{
        static const char tool[] =
            "{\"tool_calls\": [{\"name\": \"bash\", \"arguments\": {\"command\": "
            "\"trap 'echo got-term; exit 3' TERM; echo ready; while :; do sleep 0.05; done\"}}]}\n"
            "{\"content\": \"done\"}\n";
        struct session_opts o = {.mode = mode, .workspace = f->ws, .ws_mode = EXEC_WS_RW};
        struct bus *bus = bus_new();
        struct seen w = {0};
        char script[128], model[160], err[256];
        const struct viewmodel_exec *ve;
        FILE *fp;

        snprintf(script, sizeof(script), "%s.script.jsonl", f->ws);
        fp = fopen(script, "w");
        assert_non_null(fp);
        fputs(tool, fp);
        fclose(fp);
        snprintf(model, sizeof(model), "script:%s", script);
        o.model = model;
        o.limits = exec_limits_default();
        w.vm = viewmodel_new();
        assert_non_null(w.vm);
        assert_int_equal(bus_subscribe(bus, record, &w), 0);
        assert_int_equal(bus_subscribe(bus, viewmodel_event, w.vm), 0);
        assert_int_equal(session_new(&f->loop, bus, &o, &w.s, err, sizeof(err)), 0);
        session_on_idle(w.s, on_idle, &w);
        assert_int_equal(session_prompt(w.s, "go"), 0);
        assert_true(run_until(f, &w.ready, 30000)); /* generous: a loaded machine under ASan */
        assert_int_equal(session_pause_exec(w.s, w.exec_id + 1000), -ESRCH);
        assert_int_equal(session_pause_exec(w.s, w.exec_id), 0);
        assert_int_equal(w.pause_events, 1);
        /* the session's engine uses cgroups wherever the host lets it */
        assert_string_equal(w.how, session_cgroup_limits(w.s) != 0 ? "freezer" : "signal");
        ve = vm_exec(w.vm, w.exec_id);
        assert_non_null(ve);
        assert_string_equal(viewmodel_exec_state_name(ve->state), "paused");
        assert_true(viewmodel_exec_live(ve));
        assert_int_equal(session_pause_exec(w.s, w.exec_id), -EALREADY);
        assert_int_equal(w.pause_events, 1);
        run_for(f, 200);
        assert_int_equal(session_resume_exec(w.s, w.exec_id), 0);
        assert_int_equal(w.resume_events, 1);
        assert_int_equal(vm_exec(w.vm, w.exec_id)->state, VM_EXEC_RUNNING);
        assert_int_equal(session_signal_exec(w.s, w.exec_id, 0), -EINVAL);
        assert_int_equal(w.signal_events, 0);
        assert_int_equal(session_signal_exec(w.s, w.exec_id, SIGTERM), 0);
        assert_int_equal(w.signal_events, 1);
        assert_int_equal(w.sig, SIGTERM);
        assert_string_equal(w.sig_name, "SIGTERM");
        assert_true(run_until(f, &w.exited, 5000));
        assert_string_equal(w.reason, "exited");
        assert_int_equal(w.exit_code, 3);
        assert_true(run_until(f, &w.idle, 5000));
        assert_int_equal(session_signal_exec(w.s, w.exec_id, SIGTERM), -ESRCH);
        assert_false(viewmodel_exec_live(vm_exec(w.vm, w.exec_id)));
        session_end(w.s);
        session_free(w.s);
        run_for(f, 50);
        viewmodel_free(w.vm);
        bus_free(bus);
        unlink(script);
}

static void test_session_control(void **state)
{
        session_run(*state, EXEC_SANDBOX);
        session_run(*state, EXEC_LOCAL);
}

#define T(fn) cmocka_unit_test_setup_teardown(fn, setup, exec_fixture_teardown)
#define N(fn) cmocka_unit_test_setup_teardown(fn, setup_no_cgroups, exec_fixture_teardown)

int main(void)
{
        const struct CMUnitTest tests[] = {
            T(test_signal_reaches_every_process),
            T(test_signal_kills_as_killed),
            T(test_own_signal_stays_signaled),
            T(test_pause_resume),
            T(test_kill_paused),
            T(test_paused_times_out),
            T(test_session_control),
            T(test_paused_outlive_proctor_until_next),
            /* the same without cgroups: SIGSTOP and a walk of the init's tree */
            N(test_signal_reaches_every_process),
            N(test_signal_kills_as_killed),
            N(test_pause_resume),
            N(test_kill_paused),
            N(test_paused_times_out),
        };

        if (geteuid() == 0)
                fprintf(stderr,
                        "test_exec_control: as root, with cgroups where the host has them\n");
        else
                fprintf(stderr, "test_exec_control: unprivileged: freezer tests take the "
                                "signal path\n");
        return cmocka_run_group_tests(tests, NULL, NULL);
}
