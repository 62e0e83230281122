/* docker_init: `proctor container-init`, the supervisor proctor places
 * between a container's init and its command (see docker_init.h). It runs
 * as the container's user under proctor's seccomp profile, so it can only
 * lower limits and signal its own container's processes; it never lets
 * the command start where /workspace is not the session's directory. */
#include "exec/docker_init.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "exec/sandbox.h"

#define INIT_FAIL 125 /* as `proctor exec` when the sandbox cannot be set up */

size_t docker_init_args(const struct docker_init_opts *o, char *buf, size_t buflen,
                        const char **out)
{
        size_t n = 0, used = 0;

        /* Each option and its value as two entries; buf holds the values. */
#define ADD(opt, ...)                                                                              \
        do {                                                                                       \
                int k = snprintf(buf + used, buflen - used, __VA_ARGS__);                          \
                if (k < 0 || (size_t)k >= buflen - used)                                           \
                        return n;                                                                  \
                out[n++] = opt;                                                                    \
                out[n++] = buf + used;                                                             \
                used += (size_t)k + 1;                                                             \
        } while (0)
        if (o->has_ws)
                ADD("--ws", "%llu:%llu", o->ws_dev, o->ws_ino);
        if (o->deadline_ms > 0)
                ADD("--deadline", "%" PRIu64, o->deadline_ms);
        if (o->keep_stdin)
                ADD("--stdin", "keep");
        else
                ADD("--stdin", "%" PRIu64, o->stdin_len);
        if (o->has_fsize)
                ADD("--fsize", "%" PRIu64, o->fsize);
#undef ADD
        return n;
}

static int parse_u64(const char *s, uint64_t *v)
{
        char *end;

        if (s == NULL || s[0] < '0' || s[0] > '9')
                return -EINVAL;
        errno = 0;
        *v = strtoull(s, &end, 10);
        return *end == '\0' && errno == 0 ? 0 : -EINVAL;
}

/* The options up to "--"; the command's index in argv, or -EINVAL. */
static int parse(int argc, char **argv, struct docker_init_opts *o)
{
        memset(o, 0, sizeof(*o));
        for (int i = 1; i < argc; i++) {
                const char *opt = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
                if (strcmp(opt, "--") == 0)
                        return i + 1 < argc ? i + 1 : -EINVAL;
                if (v == NULL)
                        return -EINVAL;
                i++;
                if (strcmp(opt, "--ws") == 0) {
                        if (sscanf(v, "%llu:%llu", &o->ws_dev, &o->ws_ino) != 2)
                                return -EINVAL;
                        o->has_ws = true;
                } else if (strcmp(opt, "--deadline") == 0) {
                        if (parse_u64(v, &o->deadline_ms) < 0)
                                return -EINVAL;
                } else if (strcmp(opt, "--stdin") == 0) {
                        o->keep_stdin = strcmp(v, "keep") == 0;
                        if (!o->keep_stdin && parse_u64(v, &o->stdin_len) < 0)
                                return -EINVAL;
                } else if (strcmp(opt, "--fsize") == 0) {
                        if (parse_u64(v, &o->fsize) < 0)
                                return -EINVAL;
                        o->has_fsize = true;
                } else {
                        return -EINVAL;
                }
        }
        return -EINVAL;
}

/* Lowers a limit (never raises one the engine set lower). */
static int lower(int res, rlim_t soft, rlim_t hard)
{
        struct rlimit rl;

        if (getrlimit(res, &rl) != 0)
                return -errno;
        if (rl.rlim_max != RLIM_INFINITY && rl.rlim_max < hard)
                hard = rl.rlim_max;
        if (soft > hard)
                soft = hard;
        rl.rlim_cur = soft;
        rl.rlim_max = hard;
        return setrlimit(res, &rl) == 0 ? 0 : -errno;
}

/* Kernel objects counted per host user (the container has no user
 * namespace of its own): the same bounds as a native sandbox's. */
static int bound_counters(const struct docker_init_opts *o)
{
        int rc = 0;

        if (rc == 0)
                rc = lower(RLIMIT_SIGPENDING, SANDBOX_SIGPENDING, SANDBOX_SIGPENDING);
        if (rc == 0)
                rc = lower(RLIMIT_MSGQUEUE, SANDBOX_MSGQUEUE, SANDBOX_MSGQUEUE);
        if (rc == 0)
                rc = lower(RLIMIT_NOFILE, SANDBOX_NOFILE_SOFT, SANDBOX_NOFILE);
        if (rc == 0 && o->has_fsize)
                rc = lower(RLIMIT_FSIZE, o->fsize, o->fsize);
        return rc;
}

static uint64_t now_ms(void)
{
        struct timespec ts;

        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

/* Everything else in the container's pid namespace (its init excepted,
 * which ends with this process), then this process. */
static int end_all(void)
{
        kill(-1, SIGKILL);
        return 128 + SIGKILL;
}

static pid_t start_command(char **cmd, int in_fd, const sigset_t *orig)
{
        pid_t pid = fork();

        if (pid != 0)
                return pid;
        setpgid(0, 0); /* forwarded signals reach what it starts too */
        if (in_fd != STDIN_FILENO && (dup2(in_fd, STDIN_FILENO) < 0 || close(in_fd) < 0))
                _exit(INIT_FAIL);
        signal(SIGPIPE, SIG_DFL);
        sigprocmask(SIG_SETMASK, orig, NULL);
        execvp(cmd[0], cmd);
        fprintf(stderr, "proctor: %s: %s\n", cmd[0], strerror(errno));
        _exit(errno == ENOENT ? 127 : 126);
}

/* The exit status of the command, as the engine would give it. */
static int status_of(int st)
{
        return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

int docker_init_main(int argc, char **argv)
{
        static char buf[65536];
        static const int fwd[] = {SIGTERM, SIGINT, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2};
        struct docker_init_opts o;
        sigset_t set, orig;
        struct stat st;
        int cmd_at = parse(argc, argv, &o), sfd, pfd[2] = {-1, -1}, in_fd, wfd = -1, rc;
        uint64_t deadline, forwarded = 0;
        size_t len = 0;
        bool in_eof = false;
        pid_t pid;

        if (cmd_at < 0) {
                fprintf(stderr,
                        "proctor %s: usage: [--ws DEV:INO] [--deadline MS] "
                        "[--stdin keep|N] [--fsize N] -- CMD [ARG...]\n",
                        DOCKER_INIT_CMD);
                return INIT_FAIL;
        }
        /* The engine resolves the workspace's path again at each create: a
         * path replaced since the session opened it names another
         * directory, which this call must not touch. */
        if (o.has_ws &&
            (stat("/workspace", &st) != 0 || (unsigned long long)st.st_dev != o.ws_dev ||
             (unsigned long long)st.st_ino != o.ws_ino)) {
                fprintf(stderr,
                        "proctor: the engine mounted another directory at /workspace than the "
                        "workspace proctor opened at the session's start (was its path replaced "
                        "or moved?): refused; start the session again on the directory\n");
                return INIT_FAIL;
        }
        if ((rc = bound_counters(&o)) < 0) {
                fprintf(stderr, "proctor: cannot lower the container's rlimits: %s\n",
                        strerror(-rc));
                return INIT_FAIL;
        }
        sigemptyset(&set);
        for (size_t i = 0; i < sizeof(fwd) / sizeof(fwd[0]); i++)
                sigaddset(&set, fwd[i]);
        sigaddset(&set, SIGCHLD);
        sigprocmask(SIG_BLOCK, &set, &orig);
        signal(SIGPIPE, SIG_IGN);
        if ((sfd = signalfd(-1, &set, SFD_CLOEXEC | SFD_NONBLOCK)) < 0) {
                fprintf(stderr, "proctor: signalfd: %s\n", strerror(errno));
                return INIT_FAIL;
        }
        if (o.keep_stdin || o.stdin_len > 0) {
                if (pipe2(pfd, O_CLOEXEC) != 0) {
                        fprintf(stderr, "proctor: pipe: %s\n", strerror(errno));
                        return INIT_FAIL;
                }
                in_fd = pfd[0];
                wfd = pfd[1];
                fcntl(wfd, F_SETFL, O_NONBLOCK);
        } else if ((in_fd = open("/dev/null", O_RDONLY | O_CLOEXEC)) < 0) {
                fprintf(stderr, "proctor: /dev/null: %s\n", strerror(errno));
                return INIT_FAIL;
        }
        if ((pid = start_command(argv + cmd_at, in_fd, &orig)) < 0) {
                fprintf(stderr, "proctor: fork: %s\n", strerror(errno));
                return INIT_FAIL;
        }
        close(in_fd);
        deadline = o.deadline_ms > 0 ? now_ms() + o.deadline_ms : 0;
        for (;;) {
                struct pollfd p[3] = {{sfd, POLLIN, 0}, {-1, 0, 0}, {-1, 0, 0}};
                int timeout = -1;
                if (!in_eof && len < sizeof(buf))
                        p[1] = (struct pollfd){STDIN_FILENO, POLLIN, 0};
                if (wfd >= 0 && len > 0)
                        p[2] = (struct pollfd){wfd, POLLOUT, 0};
                if (deadline != 0) {
                        uint64_t now = now_ms();
                        if (now >= deadline)
                                return end_all();
                        timeout = deadline - now > 60000 ? 60000 : (int)(deadline - now);
                }
                if (poll(p, 3, timeout) < 0 && errno != EINTR)
                        return end_all();
                if (p[0].revents & POLLIN) {
                        struct signalfd_siginfo si;
                        int wst;
                        while (read(sfd, &si, sizeof(si)) == (ssize_t)sizeof(si)) {
                                if (si.ssi_signo != SIGCHLD && kill(-pid, (int)si.ssi_signo) < 0)
                                        kill(pid, (int)si.ssi_signo);
                        }
                        if (waitpid(pid, &wst, WNOHANG) == pid)
                                return status_of(wst);
                }
                if (p[1].revents != 0) {
                        ssize_t n = read(STDIN_FILENO, buf + len, sizeof(buf) - len);
                        /* proctor holds the attach stream open while the
                         * command runs: its end is proctor's (killed, or
                         * done with this container). */
                        if (n <= 0 && !(n < 0 && (errno == EINTR || errno == EAGAIN)))
                                return end_all();
                        if (n > 0 && wfd >= 0) {
                                uint64_t want =
                                    o.keep_stdin ? (uint64_t)n : o.stdin_len - forwarded;
                                len += (size_t)n < want ? (size_t)n : (size_t)want;
                                forwarded += (size_t)n < want ? (size_t)n : (size_t)want;
                        }
                }
                if (wfd >= 0 && len > 0 && (p[2].revents != 0 || p[1].revents != 0)) {
                        ssize_t w = write(wfd, buf, len);
                        if (w > 0) {
                                memmove(buf, buf + w, len - (size_t)w);
                                len -= (size_t)w;
                        } else if (w < 0 && errno != EAGAIN && errno != EINTR) {
                                /* the command closed its stdin: the rest is dropped */
                                close(wfd);
                                wfd = -1;
                                len = 0;
                        }
                }
                if (wfd < 0)
                        len = 0;
                if (wfd >= 0 && !o.keep_stdin && forwarded == o.stdin_len && len == 0) {
                        close(wfd); /* all of it: the command's EOF */
                        wfd = -1;
                }
        }
}
