/* cgroup v2 against a fake cgroupfs tree of plain files in a temp dir:
 * detection, limit files, stats parsing, kill, stale reaping, removal.
 * Never touches the host's real cgroups. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <ftw.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "exec/native/cgroup.h"

struct tree {
        char dir[64];    /* mkdtemp dir */
        char root[96];   /* dir/cgroup: the fake /sys/fs/cgroup */
        char own[160];   /* root/user.slice/test: proctor's own group */
        char selfcg[96]; /* dir/self-cgroup: the fake /proc/self/cgroup */
        struct cgroup_sys *sys;
        char why[512];
};

static void put(const char *dir, const char *file, const char *text)
{
        char path[PATH_MAX];
        snprintf(path, sizeof path, "%s/%s", dir, file);
        FILE *f = fopen(path, "w");
        assert_non_null(f);
        fputs(text, f);
        assert_int_equal(fclose(f), 0);
}

/* The whole file, or "<absent>" when it does not exist. */
static const char *get(const char *dir, const char *file)
{
        static char buf[512];
        char path[PATH_MAX];
        snprintf(path, sizeof path, "%s/%s", dir, file);
        FILE *f = fopen(path, "r");
        if (!f)
                return "<absent>";
        size_t n = fread(buf, 1, sizeof buf - 1, f);
        buf[n] = '\0';
        fclose(f);
        return buf;
}

static bool is_dir(const char *dir, const char *name)
{
        char path[PATH_MAX];
        struct stat st;
        snprintf(path, sizeof path, "%s/%s", dir, name);
        return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

static void mkdir_in(const char *dir, const char *name)
{
        char path[PATH_MAX];
        snprintf(path, sizeof path, "%s/%s", dir, name);
        assert_int_equal(mkdir(path, 0755), 0);
}

static int rm_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
        return remove(path);
}

static int tree_setup(void **state)
{
        struct tree *t = calloc(1, sizeof *t);
        assert_non_null(t);
        snprintf(t->dir, sizeof t->dir, "/tmp/proctor-cgv2-XXXXXX");
        assert_non_null(mkdtemp(t->dir));
        snprintf(t->root, sizeof t->root, "%s/cgroup", t->dir);
        snprintf(t->own, sizeof t->own, "%s/user.slice/test", t->root);
        snprintf(t->selfcg, sizeof t->selfcg, "%s/self-cgroup", t->dir);
        mkdir_in(t->dir, "cgroup");
        mkdir_in(t->root, "user.slice");
        mkdir_in(t->root, "user.slice/test");
        put(t->root, "cgroup.controllers", "cpuset cpu io memory pids\n");
        put(t->root, "cgroup.subtree_control", "");
        put(t->own, "cgroup.controllers", "cpu io memory pids\n");
        put(t->own, "cgroup.subtree_control", "");
        put(t->dir, "self-cgroup", "0::/user.slice/test\n");
        *state = t;
        return 0;
}

static int tree_teardown(void **state)
{
        struct tree *t = *state;
        cgroup_sys_free(t->sys);
        nftw(t->dir, rm_one, 16, FTW_DEPTH | FTW_PHYS);
        free(t);
        return 0;
}

static void tree_open(struct tree *t)
{
        assert_int_equal(cgroup_sys_open(t->root, t->selfcg, &t->sys, t->why, sizeof t->why), 0);
        assert_non_null(t->sys);
}

static struct cgroup *tree_group(struct tree *t, const char *name, const struct cgroup_limits *lim)
{
        struct cgroup *cg = NULL;
        char err[256] = "";
        tree_open(t);
        assert_int_equal(cgroup_sys_version(t->sys), CGROUP_V2);
        int rc = cgroup_create(t->sys, name, lim, &cg, err, sizeof err);
        if (rc)
                fail_msg("cgroup_create: %d %s", rc, err);
        return cg;
}

static void test_open_detects_v2(void **state)
{
        struct tree *t = *state;
        tree_open(t);
        assert_int_equal(cgroup_sys_version(t->sys), CGROUP_V2);
        assert_int_equal(cgroup_sys_controllers(t->sys), CG_MEMORY | CG_PIDS | CG_CPU);
        assert_string_equal(get(t->own, "cgroup.subtree_control"), "+memory +pids +cpu");
        assert_non_null(strstr(t->why, t->own));
        /* the probe group is gone again and nothing else was made */
        char probe[64];
        snprintf(probe, sizeof probe, "proctor-%d-probe", (int)getpid());
        assert_false(is_dir(t->own, probe));
}

static void test_open_without_cpu(void **state)
{
        struct tree *t = *state;
        put(t->own, "cgroup.controllers", "memory pids\n");
        tree_open(t);
        assert_int_equal(cgroup_sys_version(t->sys), CGROUP_V2);
        assert_int_equal(cgroup_sys_controllers(t->sys), CG_MEMORY | CG_PIDS);
        assert_string_equal(get(t->own, "cgroup.subtree_control"), "+memory +pids");
}

static void test_create_writes_limits(void **state)
{
        struct tree *t = *state;
        struct cgroup_limits lim = {
            .memory_bytes = 64 << 20, .pids = 16, .cpu_quota_pct = 150, .cpu_weight = 10};
        struct cgroup *cg = tree_group(t, "proctor-42-1", &lim);
        char g[256];
        snprintf(g, sizeof g, "%s/proctor-42-1", t->own);
        assert_string_equal(get(g, "memory.max"), "67108864");
        assert_string_equal(get(g, "memory.swap.max"), "0");
        assert_string_equal(get(g, "memory.oom.group"), "1");
        assert_string_equal(get(g, "pids.max"), "16");
        assert_string_equal(get(g, "cpu.max"), "150000 100000");
        assert_string_equal(get(g, "cpu.weight"), "10");
        /* the fd is the group's directory, for CLONE_INTO_CGROUP */
        struct stat a, b;
        assert_true(cgroup_fd(cg) >= 0);
        assert_int_equal(fstat(cgroup_fd(cg), &a), 0);
        assert_int_equal(stat(g, &b), 0);
        assert_true(a.st_ino == b.st_ino && a.st_dev == b.st_dev);
        assert_int_equal(cgroup_attach(cg, 4321), 0);
        assert_string_equal(get(g, "cgroup.procs"), "4321");
        assert_int_equal(cgroup_destroy(cg), 0);
        assert_false(is_dir(t->own, "proctor-42-1"));
}

static void test_create_without_limits(void **state)
{
        struct tree *t = *state;
        struct cgroup_limits none = {0};
        struct cgroup *cg = tree_group(t, "proctor-42-2", &none);
        char g[256];
        snprintf(g, sizeof g, "%s/proctor-42-2", t->own);
        assert_string_equal(get(g, "memory.max"), "<absent>");
        assert_string_equal(get(g, "pids.max"), "<absent>");
        assert_string_equal(get(g, "cpu.max"), "<absent>");
        assert_string_equal(get(g, "cpu.weight"), "<absent>");
        assert_string_equal(get(g, "memory.swap.max"), "0");
        assert_int_equal(cgroup_destroy(cg), 0);
}

/* Groups made ahead of time get no limit files until they are put to use. */
static void test_set_limits_later(void **state)
{
        struct tree *t = *state;
        struct cgroup *cg = tree_group(t, "proctor-42-8", NULL);
        char g[256], err[256] = "";
        snprintf(g, sizeof g, "%s/proctor-42-8", t->own);
        assert_string_equal(get(g, "memory.swap.max"), "<absent>");
        assert_string_equal(get(g, "pids.max"), "<absent>");
        struct cgroup_limits lim = {.memory_bytes = 1 << 20, .pids = 5};
        assert_int_equal(cgroup_set_limits(cg, &lim, err, sizeof err), 0);
        assert_string_equal(get(g, "memory.max"), "1048576");
        assert_string_equal(get(g, "memory.swap.max"), "0");
        assert_string_equal(get(g, "pids.max"), "5");
        assert_string_equal(get(g, "cpu.max"), "<absent>");
        assert_int_equal(cgroup_destroy(cg), 0);
}

static void test_procs_fds(void **state)
{
        struct tree *t = *state;
        struct cgroup *cg = tree_group(t, "proctor-42-9", NULL);
        char g[256];
        int fds[2] = {-1, -1};
        snprintf(g, sizeof g, "%s/proctor-42-9", t->own);
        assert_int_equal(cgroup_procs_fds(cg, fds, 0), -E2BIG);
        assert_int_equal(cgroup_procs_fds(cg, fds, 2), 1);
        assert_int_equal(write(fds[0], "0", 1), 1);
        assert_int_equal(close(fds[0]), 0);
        assert_string_equal(get(g, "cgroup.procs"), "0");
        assert_int_equal(cgroup_destroy(cg), 0);
}

/* Without a usable cgroup.kill: freeze, kill what cgroup.procs lists, thaw. */
static void test_kill_falls_back_to_freeze(void **state)
{
        struct tree *t = *state;
        struct cgroup *cg = tree_group(t, "proctor-42-10", NULL);
        char g[256];
        snprintf(g, sizeof g, "%s/proctor-42-10", t->own);
        mkdir_in(g, "cgroup.kill"); /* opening it for writing fails: EISDIR */
        put(g, "cgroup.procs", "");
        assert_int_equal(cgroup_kill(cg), 0);
        assert_string_equal(get(g, "cgroup.freeze"), "0");
        /* the fallback reads cgroup.procs: without it the kill cannot work */
        assert_int_equal(unlink(strcat(g, "/cgroup.procs")), 0);
        assert_int_equal(cgroup_kill(cg), -ENOENT);
        g[strlen(g) - strlen("/cgroup.procs")] = '\0';
        assert_int_equal(rmdir(strcat(g, "/cgroup.kill")), 0);
        assert_int_equal(cgroup_destroy(cg), 0);
}

/* Freeze writes cgroup.freeze and waits for cgroup.events to say frozen;
 * thaw writes it back; a freezer that cannot be written is an error (exec
 * then falls back to SIGSTOP). */
static void test_freeze_and_thaw(void **state)
{
        struct tree *t = *state;
        struct cgroup *cg = tree_group(t, "proctor-42-11", NULL);
        char g[256];
        snprintf(g, sizeof g, "%s/proctor-42-11", t->own);
        put(g, "cgroup.events", "populated 1\nfrozen 1\n");
        assert_int_equal(cgroup_freeze(cg, true), 0);
        assert_string_equal(get(g, "cgroup.freeze"), "1");
        assert_int_equal(cgroup_freeze(cg, false), 0);
        assert_string_equal(get(g, "cgroup.freeze"), "0");
        /* not yet frozen after the bounded wait: it freezes on its own */
        put(g, "cgroup.events", "populated 1\nfrozen 0\n");
        assert_int_equal(cgroup_freeze(cg, true), 0);
        assert_string_equal(get(g, "cgroup.freeze"), "1");
        assert_int_equal(unlink(strcat(g, "/cgroup.freeze")), 0);
        assert_int_equal(mkdir(g, 0755), 0);
        assert_int_equal(cgroup_freeze(cg, true), -EISDIR);
        assert_int_equal(rmdir(g), 0);
        assert_int_equal(cgroup_destroy(cg), 0);
}

static pid_t child_waiting(void)
{
        pid_t pid = fork();
        assert_true(pid >= 0);
        if (pid == 0) {
                for (;;)
                        pause();
        }
        return pid;
}

/* cgroup_signal sends to every pid cgroup.procs lists but the one excepted. */
static void test_signal_every_listed_pid(void **state)
{
        struct tree *t = *state;
        struct cgroup *cg = tree_group(t, "proctor-42-12", NULL);
        pid_t a = child_waiting(), b = child_waiting(), keep = child_waiting();
        char g[256], list[96];
        int st;
        snprintf(g, sizeof g, "%s/proctor-42-12", t->own);
        snprintf(list, sizeof list, "%d\n%d\n%d", (int)a, (int)keep, (int)b);
        put(g, "cgroup.procs", list);
        assert_int_equal(cgroup_signal(cg, SIGTERM, keep), 2);
        assert_int_equal(waitpid(a, &st, 0), a);
        assert_true(WIFSIGNALED(st) && WTERMSIG(st) == SIGTERM);
        assert_int_equal(waitpid(b, &st, 0), b);
        assert_true(WIFSIGNALED(st) && WTERMSIG(st) == SIGTERM);
        assert_int_equal(waitpid(keep, &st, WNOHANG), 0);
        kill(keep, SIGKILL);
        assert_int_equal(waitpid(keep, &st, 0), keep);
        assert_int_equal(cgroup_destroy(cg), 0);
}

static void test_create_rejects_bad_names(void **state)
{
        struct tree *t = *state;
        struct cgroup_limits none = {0};
        struct cgroup *cg = NULL;
        char err[256] = "";
        const char *bad[] = {
            "",    ".",
            "..",  "../escape",
            "a/b", "proctor-1-aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"};
        tree_open(t);
        for (size_t k = 0; k < sizeof bad / sizeof bad[0]; k++) {
                assert_int_equal(cgroup_create(t->sys, bad[k], &none, &cg, err, sizeof err),
                                 -EINVAL);
                assert_null(cg);
                assert_true(err[0] != '\0');
        }
        assert_false(is_dir(t->root, "escape"));
}

static void test_create_twice_fails(void **state)
{
        struct tree *t = *state;
        struct cgroup_limits none = {0};
        struct cgroup *cg = tree_group(t, "proctor-42-3", &none), *again = NULL;
        char err[256] = "";
        assert_int_equal(cgroup_create(t->sys, "proctor-42-3", &none, &again, err, sizeof err),
                         -EEXIST);
        assert_null(again);
        assert_non_null(strstr(err, "proctor-42-3"));
        /* the failed create must not have removed the existing group */
        assert_true(is_dir(t->own, "proctor-42-3"));
        assert_int_equal(cgroup_destroy(cg), 0);
}

static void test_read_stats(void **state)
{
        struct tree *t = *state;
        struct cgroup *cg = tree_group(t, "proctor-42-4", NULL);
        char g[256];
        snprintf(g, sizeof g, "%s/proctor-42-4", t->own);
        put(g, "cpu.stat", "usage_usec 123456\nuser_usec 100000\nsystem_usec 23456\n");
        put(g, "memory.current", "1048576\n");
        put(g, "memory.peak", "2097152\n");
        put(g, "pids.current", "7\n");
        put(g, "memory.events", "low 0\nhigh 0\nmax 9\noom 5\noom_kill 2\noom_group_kill 1\n");
        put(g, "pids.events", "max 3\n");
        struct cgroup_stats st;
        assert_int_equal(cgroup_read_stats(cg, &st), 0);
        assert_int_equal(st.cpu_ns, 123456000ull);
        assert_int_equal(st.mem_bytes, 1048576);
        assert_int_equal(st.mem_peak_bytes, 2097152);
        assert_int_equal(st.pids, 7);
        assert_int_equal(st.oom_kills, 2);
        assert_int_equal(st.pids_denied, 3);
        assert_int_equal(cgroup_destroy(cg), 0);
}

static void test_read_stats_running_peak(void **state)
{
        struct tree *t = *state;
        struct cgroup *cg = tree_group(t, "proctor-42-5", NULL);
        char g[256];
        struct cgroup_stats st;
        snprintf(g, sizeof g, "%s/proctor-42-5", t->own);
        const char *samples[] = {"5000\n", "3000\n", "9000\n", "100\n"};
        const uint64_t peaks[] = {5000, 5000, 9000, 9000};
        for (size_t k = 0; k < 4; k++) {
                put(g, "memory.current", samples[k]);
                assert_int_equal(cgroup_read_stats(cg, &st), 0);
                assert_int_equal(st.mem_peak_bytes, peaks[k]);
        }
        assert_int_equal(st.mem_bytes, 100);
        assert_int_equal(cgroup_destroy(cg), 0);
}

static void test_read_stats_garbage(void **state)
{
        struct tree *t = *state;
        struct cgroup *cg = tree_group(t, "proctor-42-6", NULL);
        char g[256];
        snprintf(g, sizeof g, "%s/proctor-42-6", t->own);
        struct cgroup_stats st;
        /* every file missing: all zero, not an error */
        memset(&st, 0xff, sizeof st);
        assert_int_equal(cgroup_read_stats(cg, &st), 0);
        assert_int_equal(st.cpu_ns + st.mem_bytes + st.mem_peak_bytes + st.pids + st.oom_kills +
                             st.pids_denied,
                         0);
        put(g, "cpu.stat", "usage_usec abc\nuser_usec 5\n");
        put(g, "memory.current", "12x\n");
        put(g, "memory.peak", "99999999999999999999999\n");
        put(g, "pids.current", "");
        put(g, "memory.events", "oom 4\noom_kill\noom_killx 7\n");
        put(g, "pids.events", "max -1\nmaxx 5\n");
        memset(&st, 0xff, sizeof st);
        assert_int_equal(cgroup_read_stats(cg, &st), 0);
        assert_int_equal(st.cpu_ns, 0);
        assert_int_equal(st.mem_bytes, 0);
        assert_int_equal(st.mem_peak_bytes, 0);
        assert_int_equal(st.pids, 0);
        assert_int_equal(st.oom_kills, 0);
        assert_int_equal(st.pids_denied, 0);
        assert_int_equal(cgroup_destroy(cg), 0);
}

static void test_kill_writes_cgroup_kill(void **state)
{
        struct tree *t = *state;
        struct cgroup *cg = tree_group(t, "proctor-42-7", NULL);
        char g[256];
        snprintf(g, sizeof g, "%s/proctor-42-7", t->own);
        assert_int_equal(cgroup_kill(cg), 0);
        assert_string_equal(get(g, "cgroup.kill"), "1");
        assert_int_equal(cgroup_destroy(cg), 0);
        assert_false(is_dir(t->own, "proctor-42-7"));
}

static void test_reap_stale(void **state)
{
        struct tree *t = *state;
        char mine[64], g[256];
        snprintf(mine, sizeof mine, "proctor-%d-1", (int)getpid());
        mkdir_in(t->own, "proctor-999999-1");
        snprintf(g, sizeof g, "%s/proctor-999999-1", t->own);
        put(g, "cgroup.procs", "");
        mkdir_in(t->own, mine);
        mkdir_in(t->own, "proctor-abc-1");
        mkdir_in(t->own, "proctor-999999");
        mkdir_in(t->own, "unrelated");
        tree_open(t);
        assert_int_equal(cgroup_sys_reap_stale(t->sys), 1);
        assert_false(is_dir(t->own, "proctor-999999-1"));
        assert_true(is_dir(t->own, mine));
        assert_true(is_dir(t->own, "proctor-abc-1"));
        assert_true(is_dir(t->own, "proctor-999999"));
        assert_true(is_dir(t->own, "unrelated"));
        assert_int_equal(cgroup_sys_reap_stale(t->sys), 0);
}

static void expect_none(struct tree *t, const char *why_part)
{
        tree_open(t);
        assert_int_equal(cgroup_sys_version(t->sys), CGROUP_NONE);
        assert_int_equal(cgroup_sys_controllers(t->sys), 0);
        if (!strstr(t->why, why_part))
                fail_msg("why '%s' lacks '%s'", t->why, why_part);
        struct cgroup *cg = NULL;
        char err[128];
        assert_int_equal(cgroup_create(t->sys, "proctor-42-9", NULL, &cg, err, sizeof err),
                         -ENOTSUP);
        assert_null(cg);
}

static void test_missing_controllers_is_not_v2(void **state)
{
        struct tree *t = *state;
        char path[256];
        snprintf(path, sizeof path, "%s/cgroup.controllers", t->root);
        assert_int_equal(unlink(path), 0);
        expect_none(t, t->root);
}

static void test_no_v2_line_in_self_cgroup(void **state)
{
        struct tree *t = *state;
        put(t->dir, "self-cgroup", "4:memory:/user.slice/test\ngarbage without colons\n");
        expect_none(t, "0::");
}

static void test_missing_self_cgroup_file(void **state)
{
        struct tree *t = *state;
        char path[256];
        snprintf(path, sizeof path, "%s/self-cgroup", t->dir);
        assert_int_equal(unlink(path), 0);
        expect_none(t, "self-cgroup");
}

static void test_controllers_without_memory(void **state)
{
        struct tree *t = *state;
        put(t->own, "cgroup.controllers", "cpu io pids\n");
        put(t->root, "cgroup.controllers", "cpu io pids\n");
        expect_none(t, "Delegate=yes");
        assert_string_equal(get(t->own, "cgroup.subtree_control"), "");
}

static void test_own_group_missing(void **state)
{
        struct tree *t = *state;
        put(t->dir, "self-cgroup", "0::/no/such/group\n");
        expect_none(t, "/no/such/group");
}

static void test_own_group_outside_namespace(void **state)
{
        struct tree *t = *state;
        put(t->dir, "self-cgroup", "0::/../../escape\n");
        expect_none(t, "0::");
}

int main(void)
{
#define T(f) cmocka_unit_test_setup_teardown(f, tree_setup, tree_teardown)
        const struct CMUnitTest tests[] = {
            T(test_open_detects_v2),
            T(test_open_without_cpu),
            T(test_create_writes_limits),
            T(test_create_without_limits),
            T(test_set_limits_later),
            T(test_procs_fds),
            T(test_kill_falls_back_to_freeze),
            T(test_freeze_and_thaw),
            T(test_signal_every_listed_pid),
            T(test_create_rejects_bad_names),
            T(test_create_twice_fails),
            T(test_read_stats),
            T(test_read_stats_running_peak),
            T(test_read_stats_garbage),
            T(test_kill_writes_cgroup_kill),
            T(test_reap_stale),
            T(test_missing_controllers_is_not_v2),
            T(test_no_v2_line_in_self_cgroup),
            T(test_missing_self_cgroup_file),
            T(test_controllers_without_memory),
            T(test_own_group_missing),
            T(test_own_group_outside_namespace),
        };
#undef T
        return cmocka_run_group_tests(tests, NULL, NULL);
}
