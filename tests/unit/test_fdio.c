/* fdio: a whole write goes through even when signals cut it into short
 * writes and EINTRs (a real pipe, a slow reader and a 1 ms interval
 * timer); a failed write comes back as its -errno. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <unistd.h>

#include "exec/fdio.h"

#define TOTAL (4u << 20)

static volatile sig_atomic_t ticks;

static void on_tick(int sig)
{
        ticks++;
}

static unsigned char pattern(size_t i)
{
        return (unsigned char)(i * 7 + i / 4096);
}

/* The reader: takes the pipe in small, slow reads; exits 0 only when it
 * got exactly TOTAL bytes of the pattern. */
static void read_slowly(int fd)
{
        unsigned char buf[4096];
        size_t got = 0;
        ssize_t n;

        while ((n = read(fd, buf, sizeof(buf))) != 0) {
                if (n < 0 && errno == EINTR)
                        continue;
                if (n < 0)
                        _exit(2);
                for (ssize_t k = 0; k < n; k++)
                        if (buf[k] != pattern(got + (size_t)k))
                                _exit(3);
                got += (size_t)n;
                if (got % (256u << 10) < sizeof(buf))
                        usleep(2000);
        }
        _exit(got == TOTAL ? 0 : 4);
}

static void test_whole_write_across_signals(void **state)
{
        struct sigaction sa = {.sa_handler = on_tick}; /* no SA_RESTART: writes are cut */
        struct itimerval every_ms = {{0, 1000}, {0, 1000}}, off = {{0, 0}, {0, 0}};
        unsigned char *data = malloc(TOTAL);
        int p[2], st;
        pid_t pid;

        assert_non_null(data);
        for (size_t i = 0; i < TOTAL; i++)
                data[i] = pattern(i);
        assert_int_equal(pipe(p), 0);
        pid = fork();
        assert_true(pid >= 0);
        if (pid == 0) {
                close(p[1]);
                read_slowly(p[0]);
        }
        close(p[0]);
        sigemptyset(&sa.sa_mask);
        assert_int_equal(sigaction(SIGALRM, &sa, NULL), 0);
        ticks = 0;
        assert_int_equal(setitimer(ITIMER_REAL, &every_ms, NULL), 0);
        assert_int_equal(fdio_write_all(p[1], data, TOTAL), 0);
        assert_int_equal(setitimer(ITIMER_REAL, &off, NULL), 0);
        close(p[1]);
        assert_int_equal(waitpid(pid, &st, 0), pid);
        assert_true(WIFEXITED(st));
        assert_int_equal(WEXITSTATUS(st), 0);
        /* the premise: the write was interrupted, many times */
        assert_true(ticks > 10);
        signal(SIGALRM, SIG_DFL);
        free(data);
}

static void test_errors_come_back(void **state)
{
        int p[2];

        assert_int_equal(fdio_write_all(-1, "x", 1), -EBADF);
        assert_int_equal(fdio_write_all(-1, "x", 0), 0); /* nothing to write: no write */
        assert_int_equal(pipe(p), 0);
        close(p[0]);
        signal(SIGPIPE, SIG_IGN);
        assert_int_equal(fdio_write_all(p[1], "x", 1), -EPIPE);
        signal(SIGPIPE, SIG_DFL);
        close(p[1]);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test(test_whole_write_across_signals),
            cmocka_unit_test(test_errors_come_back),
        };
        return cmocka_run_group_tests_name("fdio", tests, NULL, NULL);
}
