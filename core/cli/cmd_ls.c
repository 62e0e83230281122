/* cmd_ls: `proctor ls [--json]`, the live sessions of this user on this
 * host: each session's socket (core/session/ctl) is asked for its status
 * (core/session/ctl_find). A socket no process listens on any more (its
 * session was killed) is removed; one that does not answer within a second
 * is listed as such. */
#include "core/cli/cmd_ls.h"

#include <jansson.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "core/session/ctl_find.h"
#include "core/view/termout.h"
#include "exec/image/image.h"

static const char *str(const json_t *o, const char *k)
{
        const char *v = json_string_value(json_object_get(o, k));

        return v != NULL ? v : "";
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
                image_size_text((uint64_t)json_integer_value(json_object_get(s, "mem_bytes")), mem,
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
        char err[400];
        bool json = false;
        json_t *all;
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
        if (ctl_find_all(&all, err, sizeof(err)) < 0) {
                termout_message(stderr, "proctor ls: %s\n", err);
                return 1;
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
