/* bench: small helpers shared by the benchmarks in tests/bench: a monotonic
 * clock, sample sets with median/p90, the bwrap command line equivalent to
 * proctor's sandbox, and running a whole process. */
#ifndef PROCTOR_BENCH_H
#define PROCTOR_BENCH_H

#include <errno.h>
#include <fcntl.h>
#include <spawn.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

static inline uint64_t bench_now_ns(void)
{
        struct timespec ts;

        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

__attribute__((noreturn, format(printf, 1, 2))) static inline void bench_die(const char *fmt, ...)
{
        va_list ap;

        va_start(ap, fmt);
        fprintf(stderr, "bench: ");
        vfprintf(stderr, fmt, ap);
        fprintf(stderr, "\n");
        va_end(ap);
        exit(1);
}

/* A scratch workspace as sandboxes should be given one: 0755, and when
 * run as root owned by an unprivileged user (nobody), since root's
 * sandboxes act on a root-owned workspace only as nobody. */
static inline char *bench_workspace(char *tmpl)
{
        char *ws = mkdtemp(tmpl);

        if (ws == NULL)
                bench_die("mkdtemp: %s", strerror(errno));
        if (chmod(ws, 0755) != 0 || (geteuid() == 0 && chown(ws, 65534, 65534) != 0))
                bench_die("cannot prepare the workspace %s: %s", ws, strerror(errno));
        return ws;
}

/* One series of measurements, in nanoseconds. */
struct bench_series {
        const char *name;
        uint64_t *ns;
        size_t n, cap;
        bool skipped;
};

static inline void series_init(struct bench_series *s, const char *name, size_t cap)
{
        s->name = name;
        s->n = 0;
        s->cap = cap;
        s->skipped = false;
        s->ns = calloc(cap ? cap : 1, sizeof(*s->ns));
        if (s->ns == NULL)
                bench_die("out of memory");
}

static inline void series_add(struct bench_series *s, uint64_t ns)
{
        if (s->n < s->cap)
                s->ns[s->n++] = ns;
}

static int bench_cmp_u64(const void *a, const void *b)
{
        uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

        return x < y ? -1 : x > y;
}

/* Nearest-rank percentile (0 < pct <= 100), in microseconds; 0 when empty. */
static inline double series_pct_us(const struct bench_series *s, double pct)
{
        uint64_t *tmp;
        size_t rank;
        double v;

        if (s->n == 0)
                return 0;
        tmp = malloc(s->n * sizeof(*tmp));
        if (tmp == NULL)
                bench_die("out of memory");
        memcpy(tmp, s->ns, s->n * sizeof(*tmp));
        qsort(tmp, s->n, sizeof(*tmp), bench_cmp_u64);
        rank = (size_t)((pct / 100.0) * (double)s->n + 0.999999);
        if (rank < 1)
                rank = 1;
        if (rank > s->n)
                rank = s->n;
        v = (double)tmp[rank - 1] / 1000.0;
        free(tmp);
        return v;
}

static inline double series_median_us(const struct bench_series *s)
{
        return series_pct_us(s, 50);
}

/* "12.3x", or "n/a" when either side is missing. */
static inline const char *fmt_ratio(char *buf, size_t len, double num, double den)
{
        if (num <= 0 || den <= 0)
                snprintf(buf, len, "n/a");
        else
                snprintf(buf, len, "%.2fx", num / den);
        return buf;
}

/* A table row of a series: median, p90 and minimum in microseconds, and
 * the median against the bare process's and against bwrap's. */
static inline void bench_print_row(const struct bench_series *s, double bare, double bwrap)
{
        char r1[32], r2[32];
        double med = series_median_us(s);

        if (s->skipped) {
                printf("| %s | skipped | | | | |\n", s->name);
                return;
        }
        printf("| %s | %.0f | %.0f | %.0f | %s | %s |\n", s->name, med, series_pct_us(s, 90),
               series_pct_us(s, 0.0001), fmt_ratio(r1, sizeof(r1), med, bare),
               fmt_ratio(r2, sizeof(r2), med, bwrap));
}

/* Looks `name` up in PATH; returns a malloc'd absolute path or NULL. */
static inline char *bench_which(const char *name)
{
        const char *path = getenv("PATH");
        char buf[4096];

        if (path == NULL || *path == '\0')
                path = "/usr/local/bin:/usr/bin:/bin";
        while (*path != '\0') {
                const char *colon = strchr(path, ':');
                size_t len = colon != NULL ? (size_t)(colon - path) : strlen(path);
                struct stat st;

                if (len > 0 && len < sizeof(buf) - strlen(name) - 2) {
                        memcpy(buf, path, len);
                        snprintf(buf + len, sizeof(buf) - len, "/%s", name);
                        if (stat(buf, &st) == 0 && S_ISREG(st.st_mode) && access(buf, X_OK) == 0)
                                return strdup(buf);
                }
                if (colon == NULL)
                        break;
                path = colon + 1;
        }
        return NULL;
}

/* The bwrap invocation with mounts equivalent to proctor's sandbox. `argv`
 * must have room for 40 entries; `tail` is the command, NULL-terminated. */
static inline void bwrap_argv(char **argv, const char *bwrap, const char *ws, char *const *tail)
{
        static const char *const head[] = {
            "--unshare-all", "--die-with-parent",
            "--ro-bind",     "/usr",
            "/usr",          "--symlink",
            "usr/bin",       "/bin",
            "--symlink",     "usr/lib",
            "/lib",          "--symlink",
            "usr/lib64",     "/lib64",
            "--symlink",     "usr/sbin",
            "/sbin",         "--proc",
            "/proc",         "--dev",
            "/dev",          "--tmpfs",
            "/tmp",
        };
        size_t i, k = 0;

        argv[k++] = (char *)bwrap;
        for (i = 0; i < sizeof(head) / sizeof(head[0]); i++)
                argv[k++] = (char *)head[i];
        argv[k++] = "--bind";
        argv[k++] = (char *)ws;
        argv[k++] = "/workspace";
        argv[k++] = "--chdir";
        argv[k++] = "/workspace";
        for (i = 0; tail[i] != NULL; i++)
                argv[k++] = tail[i];
        argv[k] = NULL;
}

/* vfork + execve + waitpid, the cheapest honest way to run a process
 * (posix_spawn in glibc is clone(CLONE_VM|CLONE_VFORK) too, plus signal
 * bookkeeping); returns the wall time in ns. Aborts unless the process
 * exits 0. `quiet` sends stdout to /dev/null. */
static inline uint64_t bench_run_process(char *const *argv, bool quiet)
{
        /* The vfork child shares our memory: it leaves execve's errno here. */
        static volatile int exec_errno;
        uint64_t t0, t1;
        pid_t pid;
        int st;

        exec_errno = 0;
        t0 = bench_now_ns();
        pid = vfork();
        if (pid == 0) {
                if (quiet) {
                        int fd = open("/dev/null", O_WRONLY);
                        if (fd < 0 || dup2(fd, 1) < 0)
                                _exit(126);
                }
                execve(argv[0], argv, environ);
                exec_errno = errno;
                _exit(127);
        }
        if (pid < 0)
                bench_die("cannot spawn %s: %s", argv[0], strerror(errno));
        while (waitpid(pid, &st, 0) < 0) {
                if (errno != EINTR)
                        bench_die("waitpid %s: %s", argv[0], strerror(errno));
        }
        t1 = bench_now_ns();
        if (exec_errno != 0)
                bench_die("cannot execute %s: %s", argv[0], strerror(exec_errno));
        if (!WIFEXITED(st) || WEXITSTATUS(st) != 0)
                bench_die("%s %s failed: %s %d", argv[0], argv[1] ? argv[1] : "",
                          WIFEXITED(st) ? "exit" : "signal",
                          WIFEXITED(st) ? WEXITSTATUS(st) : WTERMSIG(st));
        return t1 - t0;
}

/* The same with posix_spawn, for comparison. */
static inline uint64_t bench_run_posix_spawn(char *const *argv)
{
        uint64_t t0, t1;
        pid_t pid;
        int rc, st;

        t0 = bench_now_ns();
        rc = posix_spawn(&pid, argv[0], NULL, NULL, argv, environ);
        if (rc != 0)
                bench_die("cannot spawn %s: %s", argv[0], strerror(rc));
        while (waitpid(pid, &st, 0) < 0) {
                if (errno != EINTR)
                        bench_die("waitpid %s: %s", argv[0], strerror(errno));
        }
        t1 = bench_now_ns();
        if (!WIFEXITED(st) || WEXITSTATUS(st) != 0)
                bench_die("%s failed (status 0x%x)", argv[0], st);
        return t1 - t0;
}

#endif
