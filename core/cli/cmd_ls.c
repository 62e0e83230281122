/* cmd_ls: `proctor ls [--json]`, the live sessions of this user on this
 * host: each session's socket (core/session/ctl) is asked for its status.
 * A socket no process listens on any more (its session was killed) is
 * removed; one that does not answer within a second is listed as such. */
#include "core/cli/cmd_ls.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "core/session/ctl.h"
#include "core/view/termout.h"

#define ASK_MS     1000
#define STATUS_MAX (64u << 10)

static int64_t mono_ms(void)
{
        struct timespec ts;

        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* The session's status line, NULL when it did not answer in time (*dead:
 * no one listens there any more). */
static json_t *ask(const char *path, bool *dead)
{
        struct sockaddr_un sa = {.sun_family = AF_UNIX};
        static const char req[] = "{\"type\":\"status\"}\n";
        char *buf = NULL;
        size_t n = 0;
        int64_t until = mono_ms() + ASK_MS;
        json_t *st = NULL;
        int fd;

        *dead = false;
        if (strlen(path) >= sizeof(sa.sun_path))
                return NULL;
        memcpy(sa.sun_path, path, strlen(path) + 1);
        fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
        if (fd < 0)
                return NULL;
        if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
                *dead = errno == ECONNREFUSED || errno == ENOENT;
                close(fd);
                return NULL;
        }
        if (write(fd, req, sizeof(req) - 1) != (ssize_t)(sizeof(req) - 1) ||
            (buf = malloc(STATUS_MAX)) == NULL) {
                close(fd);
                free(buf);
                return NULL;
        }
        while (n < STATUS_MAX - 1 && memchr(buf, '\n', n) == NULL) {
                struct pollfd p = {fd, POLLIN, 0};
                int64_t left = until - mono_ms();
                ssize_t r;
                if (left <= 0 || poll(&p, 1, (int)left) <= 0)
                        break;
                r = read(fd, buf + n, STATUS_MAX - 1 - n);
                if (r < 0 && (errno == EINTR || errno == EAGAIN))
                        continue;
                if (r <= 0)
                        break;
                n += (size_t)r;
        }
        close(fd);
        if (memchr(buf, '\n', n) != NULL)
                st = json_loadb(buf, (size_t)((char *)memchr(buf, '\n', n) - buf), 0, NULL);
        free(buf);
        if (st != NULL && !json_is_object(st)) {
                json_decref(st);
                st = NULL;
        }
        return st;
}

static int by_start(const void *a, const void *b)
{
        json_int_t x = json_integer_value(json_object_get(*(json_t *const *)a, "started_ms"));
        json_int_t y = json_integer_value(json_object_get(*(json_t *const *)b, "started_ms"));

        return (x > y) - (x < y);
}

static const char *str(const json_t *o, const char *k)
{
        const char *v = json_string_value(json_object_get(o, k));

        return v != NULL ? v : "";
}

static void size_text(uint64_t b, char *out, size_t len)
{
        if (b >= (1ull << 30))
                snprintf(out, len, "%.1fG", (double)b / (1ull << 30));
        else if (b >= (1ull << 20))
                snprintf(out, len, "%.1fM", (double)b / (1ull << 20));
        else if (b >= 1024)
                snprintf(out, len, "%.0fK", (double)b / 1024);
        else
                snprintf(out, len, "%lluB", (unsigned long long)b);
}

static void print_table(json_t *all)
{
        size_t i;
        json_t *s;

        if (json_array_size(all) == 0) {
                printf("no live sessions\n");
                return;
        }
        printf("%-24s %7s %-8s %-10s %-7s %-21s %5s %5s %7s %7s %s\n", "SESSION", "PID", "STARTED",
               "KIND", "MODE", "STATE", "TURN", "EXECS", "CPU", "MEM", "WORKSPACE");
        json_array_foreach (all, i, s) {
                char when[16] = "-", mem[16];
                time_t t = (time_t)(json_integer_value(json_object_get(s, "started_ms")) / 1000);
                struct tm tm;
                if (t > 0 && localtime_r(&t, &tm) != NULL)
                        strftime(when, sizeof(when), "%H:%M:%S", &tm);
                size_text((uint64_t)json_integer_value(json_object_get(s, "mem_bytes")), mem,
                          sizeof(mem));
                termout_message(
                    stdout, "%-24s %7lld %-8s %-10s %-7s %-21s %5lld %5lld %6.1f%% %7s %s\n",
                    str(s, "session_id"), (long long)json_integer_value(json_object_get(s, "pid")),
                    when, str(s, "kind"), str(s, "mode"), str(s, "state"),
                    (long long)json_integer_value(json_object_get(s, "turn")),
                    (long long)json_integer_value(json_object_get(s, "executions")),
                    json_number_value(json_object_get(s, "cpu_pct")), mem, str(s, "workspace"));
        }
}

static void usage(FILE *f)
{
        fprintf(f, "usage: proctor ls [--json]\n\n"
                   "Lists the live sessions of this user on this host (the supervisor's and\n"
                   "proctor run's): id, pid, when it started, kind, mode, state (setup,\n"
                   "thinking, running N, waiting for approval, idle), turn, executions\n"
                   "running, their CPU and memory, and the workspace. --json prints one JSON\n"
                   "array of their status objects. Sockets of sessions whose process is gone\n"
                   "are removed.\n");
}

int cmd_ls_main(int argc, char **argv)
{
        char dir[108], err[400], path[300];
        bool json = false;
        json_t *all;
        DIR *d;
        struct dirent *de;
        int i;

        for (i = 1; i < argc; i++) {
                if (strcmp(argv[i], "--json") == 0) {
                        json = true;
                } else if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
                        usage(stdout);
                        return 0;
                } else {
                        termout_message(stderr, "proctor ls: unknown argument '%s'\n", argv[i]);
                        usage(stderr);
                        return 2;
                }
        }
        if (ctl_dir(dir, sizeof(dir), err, sizeof(err)) < 0) {
                termout_message(stderr, "proctor ls: %s\n", err);
                return 1;
        }
        if ((d = opendir(dir)) == NULL) {
                fprintf(stderr, "proctor ls: %s: %s\n", dir, strerror(errno));
                return 1;
        }
        all = json_array();
        while ((de = readdir(d)) != NULL) {
                size_t n = strlen(de->d_name);
                struct stat st;
                bool dead;
                json_t *s;
                if (n < 6 || strcmp(de->d_name + n - 5, ".sock") != 0 ||
                    (size_t)snprintf(path, sizeof(path), "%s/%s", dir, de->d_name) >=
                        sizeof(path) ||
                    lstat(path, &st) < 0 || !S_ISSOCK(st.st_mode) || st.st_uid != getuid())
                        continue;
                if ((s = ask(path, &dead)) != NULL) {
                        json_array_append_new(all, s);
                } else if (dead) {
                        unlink(path); /* its process is gone */
                } else {
                        char id[128];
                        snprintf(id, sizeof(id), "%.*s", (int)(n - 5), de->d_name);
                        json_array_append_new(all, json_pack("{s:s,s:s,s:s}", "type", "status",
                                                             "session_id", id, "state",
                                                             "not answering"));
                }
        }
        closedir(d);
        size_t n = json_array_size(all);
        json_t **v = n > 1 ? calloc(n, sizeof(*v)) : NULL;
        if (v != NULL) {
                /* oldest first, as they started */
                for (size_t k = 0; k < n; k++)
                        v[k] = json_incref(json_array_get(all, k));
                qsort(v, n, sizeof(*v), by_start);
                json_array_clear(all);
                for (size_t k = 0; k < n; k++)
                        json_array_append_new(all, v[k]);
                free(v);
        }
        if (json) {
                char *text = json_dumps(all, JSON_COMPACT);
                printf("%s\n", text != NULL ? text : "[]");
                free(text);
        } else {
                print_table(all);
        }
        json_decref(all);
        return 0;
}
