/* docker_init: `proctor container-init`, the supervisor proctor places
 * between a container's init and its command (see docker_init.h). It runs
 * as the container's user under proctor's seccomp profile, so it can only
 * lower limits and signal its own container's processes; it never lets
 * the command start where /workspace is not the session's directory. */
#include "exec/docker/docker_init.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
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

#include "exec/native/sandbox.h"

#define INIT_FAIL 125 /* as `proctor exec` when the sandbox cannot be set up */

/* The options' values go to buf, one after another. */
struct args_out {
        char *buf;
        size_t buflen, used, n;
        const char **out;
};

__attribute__((format(printf, 3, 4))) static void add(struct args_out *a, const char *opt,
                                                      const char *fmt, ...)
{
        va_list ap;
        int k;

        va_start(ap, fmt);
        k = vsnprintf(a->buf + a->used, a->buflen - a->used, fmt, ap);
        va_end(ap);
        if (k < 0 || (size_t)k >= a->buflen - a->used)
                return;
        a->out[a->n++] = opt;
        a->out[a->n++] = a->buf + a->used;
        a->used += (size_t)k + 1;
}

size_t docker_init_args(const struct docker_init_opts *o, char *buf, size_t buflen,
                        const char **out)
{
        struct args_out a = {buf, buflen, 0, 0, out};

        if (o->has_ws)
                add(&a, "--ws", "%llu:%llu", o->ws_dev, o->ws_ino);
        if (o->deadline_ms > 0)
                add(&a, "--deadline", "%" PRIu64, o->deadline_ms);
        if (o->keep_stdin)
                add(&a, "--stdin", "keep");
        else
                add(&a, "--stdin", "%" PRIu64, o->stdin_len);
        if (o->has_fsize)
                add(&a, "--fsize", "%" PRIu64, o->fsize);
        return a.n;
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

/* What the init relays between proctor's stream and the command. */
struct relay {
        const struct docker_init_opts *o;
        int sfd;   /* the signals it forwards, and SIGCHLD */
        int wfd;   /* the command's stdin; -1 once closed */
        pid_t pid; /* the command */
        uint64_t deadline;
        uint64_t forwarded; /* bytes of stdin taken for the command */
        size_t len;         /* of them, still in buf */
        char buf[65536];
};

static const int forwarded_signals[] = {SIGTERM, SIGINT, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2};

/* The engine resolves the workspace's path again at each create: a path
 * replaced since the session opened it names another directory, which
 * this call must not touch. */
static int check_workspace(const struct docker_init_opts *o)
{
        struct stat st;

        if (!o->has_ws ||
            (stat("/workspace", &st) == 0 && (unsigned long long)st.st_dev == o->ws_dev &&
             (unsigned long long)st.st_ino == o->ws_ino))
                return 0;
        fprintf(stderr, "proctor: the engine mounted another directory at /workspace than the "
                        "workspace proctor opened at the session's start (was its path replaced "
                        "or moved?): refused; start the session again on the directory\n");
        return -EXDEV;
}

/* Signals to forward come through a signalfd; the command gets stdin
 * through a pipe (or /dev/null) and starts. 0, or -errno said. */
static int relay_start(struct relay *r, char **cmd)
{
        sigset_t set, orig;
        int pfd[2], in_fd;

        sigemptyset(&set);
        for (size_t i = 0; i < sizeof(forwarded_signals) / sizeof(forwarded_signals[0]); i++)
                sigaddset(&set, forwarded_signals[i]);
        sigaddset(&set, SIGCHLD);
        sigprocmask(SIG_BLOCK, &set, &orig);
        signal(SIGPIPE, SIG_IGN);
        r->wfd = -1;
        if ((r->sfd = signalfd(-1, &set, SFD_CLOEXEC | SFD_NONBLOCK)) < 0)
                goto fail;
        if (r->o->keep_stdin || r->o->stdin_len > 0) {
                if (pipe2(pfd, O_CLOEXEC) != 0)
                        goto fail;
                in_fd = pfd[0];
                r->wfd = pfd[1];
                fcntl(r->wfd, F_SETFL, O_NONBLOCK);
        } else if ((in_fd = open("/dev/null", O_RDONLY | O_CLOEXEC)) < 0) {
                goto fail;
        }
        if ((r->pid = start_command(cmd, in_fd, &orig)) < 0)
                goto fail;
        close(in_fd);
        r->deadline = r->o->deadline_ms > 0 ? now_ms() + r->o->deadline_ms : 0;
        return 0;
fail:
        fprintf(stderr, "proctor: cannot start the command's supervisor: %s\n", strerror(errno));
        return -errno;
}

/* Forwarded signals go to the command's group; its end is the init's. */
static bool on_signals(struct relay *r, int *status)
{
        struct signalfd_siginfo si;
        int wst;

        while (read(r->sfd, &si, sizeof(si)) == (ssize_t)sizeof(si))
                if (si.ssi_signo != SIGCHLD && kill(-r->pid, (int)si.ssi_signo) < 0)
                        kill(r->pid, (int)si.ssi_signo);
        if (waitpid(r->pid, &wst, WNOHANG) != r->pid)
                return false;
        *status = status_of(wst);
        return true;
}

/* Reads proctor's stream: the command's share of it is kept for the pipe.
 * false at its end: proctor holds it open while the command runs, so its
 * end is proctor's (killed, or done with this container). */
static bool on_stdin(struct relay *r)
{
        ssize_t n = read(STDIN_FILENO, r->buf + r->len, sizeof(r->buf) - r->len);
        uint64_t want;

        if (n < 0 && (errno == EINTR || errno == EAGAIN))
                return true;
        if (n <= 0)
                return false;
        if (r->wfd < 0)
                return true;
        want = r->o->keep_stdin ? (uint64_t)n : r->o->stdin_len - r->forwarded;
        if (want > (uint64_t)n)
                want = (uint64_t)n;
        r->len += (size_t)want;
        r->forwarded += want;
        return true;
}

/* Writes what it can to the command's stdin; closes it after the last
 * byte it is due, or when the command closed its end. */
static void to_command(struct relay *r)
{
        ssize_t w = r->len > 0 ? write(r->wfd, r->buf, r->len) : 0;

        if (w > 0) {
                memmove(r->buf, r->buf + w, r->len - (size_t)w);
                r->len -= (size_t)w;
        } else if (w < 0 && errno != EAGAIN && errno != EINTR) {
                r->len = 0; /* the rest is dropped */
                close(r->wfd);
                r->wfd = -1;
                return;
        }
        if (!r->o->keep_stdin && r->forwarded == r->o->stdin_len && r->len == 0) {
                close(r->wfd); /* all of it: the command's EOF */
                r->wfd = -1;
        }
}

int docker_init_main(int argc, char **argv)
{
        static struct relay r;
        struct docker_init_opts o;
        int cmd_at = parse(argc, argv, &o), rc, status;

        if (cmd_at < 0) {
                fprintf(stderr,
                        "proctor %s: usage: [--ws DEV:INO] [--deadline MS] "
                        "[--stdin keep|N] [--fsize N] -- CMD [ARG...]\n",
                        DOCKER_INIT_CMD);
                return INIT_FAIL;
        }
        if (check_workspace(&o) < 0)
                return INIT_FAIL;
        if ((rc = bound_counters(&o)) < 0) {
                fprintf(stderr, "proctor: cannot lower the container's rlimits: %s\n",
                        strerror(-rc));
                return INIT_FAIL;
        }
        r.o = &o;
        if (relay_start(&r, argv + cmd_at) < 0)
                return INIT_FAIL;
        for (;;) {
                /* stdin is watched for its end even while the command
                 * does not read (the buffer full: a hangup only) */
                struct pollfd p[3] = {{r.sfd, POLLIN, 0},
                                      {STDIN_FILENO, r.len < sizeof(r.buf) ? POLLIN : 0, 0},
                                      {-1, 0, 0}};
                int timeout = -1;
                if (r.wfd >= 0 && r.len > 0)
                        p[2] = (struct pollfd){r.wfd, POLLOUT, 0};
                if (r.deadline != 0) {
                        uint64_t now = now_ms();
                        if (now >= r.deadline)
                                return end_all();
                        timeout = r.deadline - now > 60000 ? 60000 : (int)(r.deadline - now);
                }
                if (poll(p, 3, timeout) < 0 && errno != EINTR)
                        return end_all();
                if ((p[0].revents & POLLIN) && on_signals(&r, &status))
                        return status;
                if (p[1].revents != 0 && !on_stdin(&r))
                        return end_all();
                if (r.wfd >= 0 && (p[2].revents != 0 || p[1].revents != 0))
                        to_command(&r);
        }
}
