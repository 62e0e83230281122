/* doctor: reports the probe, runs one real sandboxed command as proof, and
 * says what sandbox mode will enforce on this host and how to get more. */
#include "core/cli/doctor.h"

#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/session/options.h"
#include "exec/exec.h"
#include "exec/native/probe.h"

struct smoke {
        int rc;
        uint64_t setup_us;
        struct exec_result res;
        char err[256];
};

static void smoke_start(struct exec *e, int pid, uint64_t setup_us, void *ud)
{
        ((struct smoke *)ud)->setup_us = setup_us;
}

static void smoke_exit(struct exec *e, const struct exec_result *r, void *ud)
{
        ((struct smoke *)ud)->res = *r;
}

/* Proof beats inference: build one sandbox and run /bin/true in it. */
static void run_smoke(struct smoke *s)
{
        static const struct exec_callbacks cb = {.on_start = smoke_start, .on_exit = smoke_exit};
        char *argv[] = {"/bin/true", NULL};
        struct exec_request req = {
            .isolation = EXEC_SANDBOX, .argv = argv, .ws_mode = EXEC_WS_NONE, .workspace = "/"};
        struct exec_engine *eng;
        struct exec *e;
        uv_loop_t loop;

        memset(s, 0, sizeof(*s));
        req.limits = exec_limits_default();
        req.limits.timeout_ms = 10000;
        uv_loop_init(&loop);
        s->rc = exec_engine_new(&loop, NULL, &eng, s->err, sizeof(s->err));
        if (s->rc == 0) {
                s->rc = exec_spawn(eng, &req, &cb, s, &e, s->err, sizeof(s->err));
                if (s->rc == 0)
                        uv_run(&loop, UV_RUN_DEFAULT);
                exec_engine_free(eng);
                uv_run(&loop, UV_RUN_DEFAULT);
        }
        uv_loop_close(&loop);
        if (s->rc == 0 && (s->res.reason != EXEC_EXITED || s->res.exit_code != 0)) {
                s->rc = -1;
                snprintf(s->err, sizeof(s->err), "%s",
                         s->res.error[0] ? s->res.error : exec_reason_name(s->res.reason));
        }
}

static const char *cgroup_name(enum cgroup_version v)
{
        return v == CGROUP_V2 ? "v2" : v == CGROUP_V1 ? "v1" : "none";
}

static json_t *controllers_json(unsigned c)
{
        static const struct {
                unsigned bit;
                const char *name;
        } names[] = {{CG_MEMORY, "memory"},
                     {CG_PIDS, "pids"},
                     {CG_CPU, "cpu"},
                     {CG_CPUACCT, "cpuacct"},
                     {CG_FREEZER, "freezer"}};
        json_t *a = json_array();
        size_t i;

        for (i = 0; i < sizeof(names) / sizeof(names[0]); i++)
                if (c & names[i].bit)
                        json_array_append_new(a, json_string(names[i].name));
        return a;
}

/* One line per limit or protection: the mechanism in force here. */
static json_t *enforcement(const struct probe_report *r, const struct smoke *s)
{
        bool mem = r->controllers & CG_MEMORY, pids = r->controllers & CG_PIDS;
        bool cpu = r->controllers & (CG_CPU | CG_CPUACCT);
        const char *cg = r->cgroup == CGROUP_V2 ? "cgroup v2" : "cgroup v1";
        char m[96], p[96], c[96], sh[128], sc[160];

        snprintf(m, sizeof(m), "%s",
                 mem ? (r->cgroup == CGROUP_V2 ? "cgroup v2 memory.max, swap 0"
                                               : "cgroup v1 memory + memsw")
                     : "RLIMIT_AS (address space, per process)");
        snprintf(p, sizeof(p), "%s",
                 pids ? (r->cgroup == CGROUP_V2 ? "cgroup v2 pids.max" : "cgroup v1 pids.max")
                      : "RLIMIT_NPROC (per user in the namespace)");
        snprintf(c, sizeof(c), "%s%s", cpu ? cg : "",
                 cpu ? " accounting + RLIMIT_CPU" : "RLIMIT_CPU (per process)");
        snprintf(sh, sizeof(sh), "%s",
                 r->controllers & CG_CPU
                     ? (r->cgroup == CGROUP_V2
                            ? "cgroup v2: one core at most (cpu.max), weighs 1/10 of a "
                              "process (cpu.weight 10)"
                            : "cgroup v1: one core at most (cfs quota), weighs 1/10 of a "
                              "process (cpu.shares 102)")
                     : "not limited (no cpu controller)");
        snprintf(sc, sizeof(sc), "allowlist: %u of %u %s syscalls blocked, foreign ABIs refused",
                 r->nabis > 0 ? r->abis[0].blocked : 0,
                 r->nabis > 0 ? r->abis[0].allowed + r->abis[0].blocked : 0,
                 r->nabis > 0 ? r->abis[0].abi : "native");
        return json_pack(
            "{s:s,s:s,s:s,s:s,s:s,s:s,s:s,s:s,s:s,s:s,s:s,s:s,s:s,s:s,s:s,s:s}", "namespaces",
            r->userns == 0 ? "user, pid, mount, net, ipc, uts, cgroup" : "unavailable",
            "filesystem", "tmpfs root, read-only /usr and /etc allowlist, private /tmp and /proc",
            "network", r->userns == 0 ? "none (its own loopback only)" : "host", "seccomp",
            r->seccomp_rc == 0 ? sc : "unavailable", "memory", m, "processes", p, "cpu_time", c,
            "cpu_share", sh, "wall_clock", "timer (kills the sandbox)", "stats",
            r->cgroup != CGROUP_NONE ? "cgroup files" : "/proc of the command only", "workspace",
            r->euid == 0 ? "acted on as its owner with the owner's primary group; a root-owned "
                           "one as root through an idmapped mount (the sandbox runs as nobody "
                           "on the host, with no unix socket of its own); opened once per "
                           "session"
                         : "acted on as you; opened once per session",
            "file_modes", "no setuid, setgid or device file can be made (seccomp)", "disk",
            "quota per session on what sandboxes add to the workspace (--disk, default 4G): "
            "allocated blocks (and extended attributes, on btrfs and others that keep them "
            "elsewhere), at least 4 KiB per inode, and "
            "deleted files a sandbox still holds; "
            "walked when the filesystem grows and at least every 5 s, each file held to the room "
            "left (RLIMIT_FSIZE); fallocate's keep-size modes and subvolumes refused (seccomp)",
            "kernel_counters",
            "per sandbox: 16 inotify instances (user namespace), no fanotify (seccomp), 256 queued "
            "signals, 64K message queues, 1024 open files (4096 hard)",
            "proctor_files",
            "proctor's config, state, cache and traces inside a workspace are read-only there",
            "session",
            "at most --max-parallel executions at once (default 4), the rest queued; "
            "a memory budget across live sandboxes (--memory-budget); limits in tool "
            "arguments clamped to the operator's");
}

static json_t *advice(const struct probe_report *r, const struct smoke *s)
{
        json_t *a = json_array();

        if (r->userns != 0)
                json_array_append_new(
                    a, json_string("user namespaces are unavailable: enable them "
                                   "(sysctl user.max_user_namespaces=15000, and on Debian/"
                                   "Ubuntu kernel.unprivileged_userns_clone=1 or an AppArmor "
                                   "profile allowing userns); sandbox mode cannot run "
                                   "without them"));
        if (r->cgroup == CGROUP_NONE)
                json_array_append_new(
                    a, json_pack("s+",
                                 "no usable cgroup: limits fall back to rlimits and "
                                 "stats to /proc. ",
                                 r->cgroup_why[0] ? r->cgroup_why
                                                  : "Run as root or in a delegated cgroup "
                                                    "(systemd-run --user --scope -p "
                                                    "Delegate=yes proctor ...)."));
        if (r->seccomp_rc != 0)
                json_array_append_new(a, json_string(r->seccomp_err));
        if (s->rc != 0)
                json_array_append_new(a,
                                      json_pack("s+", "the sandbox smoke test failed: ", s->err));
        return a;
}

/* Whether sandboxes can use the workspace (--workspace, else the current
 * directory) as --workspace-mode asks, and if not, why and the fix. */
static json_t *workspace_check(const struct options *o)
{
        struct exec_workspace *ws = NULL;
        char err[512] = "";
        int rc = exec_workspace_open(o->workspace, &ws, err, sizeof(err));
        json_t *j;

        if (rc == 0)
                rc = exec_workspace_usable(ws, o->ws_mode, o->runtime == NULL, err, sizeof(err));
        const char *path = o->workspace != NULL ? o->workspace : ".";

        j = json_pack("{s:s,s:s,s:b,s:s}", "path", ws != NULL ? exec_workspace_path(ws) : path,
                      "mode", exec_ws_mode_name(o->ws_mode), "usable", rc == 0, "problem",
                      rc == 0 ? "" : err);
        exec_workspace_free(ws);
        return j;
}

static json_t *report_json(const struct probe_report *r, const struct smoke *s)
{
        json_t *abis = json_array();
        unsigned i;

        for (i = 0; i < r->nabis; i++)
                json_array_append_new(abis,
                                      json_pack("{s:s,s:i,s:i}", "abi", r->abis[i].abi, "allowed",
                                                r->abis[i].allowed, "blocked", r->abis[i].blocked));
        return json_pack("{s:s,s:s,s:b,s:i,s:b,s:s,s:o,s:s,s:b,s:i,s:b,s:i,s:{s:i,s:i,s:o},"
                         "s:{s:b,s:I,s:s},s:o,s:o}",
                         "version", PROCTOR_VERSION, "kernel", r->kernel, "root", r->euid == 0,
                         "uid", (int)r->euid, "user_namespaces", r->userns == 0, "cgroup_version",
                         cgroup_name(r->cgroup), "cgroup_controllers",
                         controllers_json(r->controllers), "cgroup_note", r->cgroup_why, "seccomp",
                         r->seccomp, "landlock_abi", r->landlock_abi > 0 ? r->landlock_abi : 0,
                         "overlayfs", r->overlayfs, "tiocsti_legacy", r->tiocsti_legacy,
                         "seccomp_policy", "allowed", r->allowed, "blocked", r->blocked, "abis",
                         abis, "sandbox_smoke_test", "ok", s->rc == 0, "setup_us",
                         (json_int_t)s->setup_us, "error", s->rc == 0 ? "" : s->err, "enforced",
                         enforcement(r, s), "advice", advice(r, s));
}

static void print_text(const json_t *j)
{
        const char *key;
        json_t *v, *a;
        size_t i;

        printf("proctor doctor\n\n");
        printf("  kernel            %s\n", json_string_value(json_object_get(j, "kernel")));
        printf("  running as        uid %d%s\n", (int)json_integer_value(json_object_get(j, "uid")),
               json_is_true(json_object_get(j, "root")) ? " (root)" : "");
        printf("  user namespaces   %s\n",
               json_is_true(json_object_get(j, "user_namespaces")) ? "yes" : "NO");
        printf("  cgroups           %s", json_string_value(json_object_get(j, "cgroup_version")));
        json_array_foreach (json_object_get(j, "cgroup_controllers"), i, v)
                printf("%s%s", i == 0 ? ": " : ", ", json_string_value(v));
        printf("\n  seccomp           %s\n",
               json_is_true(json_object_get(j, "seccomp")) ? "yes" : "NO");
        printf("  landlock ABI      %d\n",
               (int)json_integer_value(json_object_get(j, "landlock_abi")));
        printf("  overlayfs         %s\n",
               json_is_true(json_object_get(j, "overlayfs")) ? "yes" : "not loaded");
        printf("  legacy TIOCSTI    %s\n",
               json_integer_value(json_object_get(j, "tiocsti_legacy")) == 1
                   ? "enabled on host (blocked in sandboxes by seccomp)"
                   : "disabled");
        v = json_object_get(j, "seccomp_policy");
        printf("\nseccomp policy (allowlist, default EPERM): %d blocked in all\n",
               (int)json_integer_value(json_object_get(v, "blocked")));
        json_array_foreach (json_object_get(v, "abis"), i, a)
                printf("  %-8s %4d allowed %4d blocked%s\n",
                       json_string_value(json_object_get(a, "abi")),
                       (int)json_integer_value(json_object_get(a, "allowed")),
                       (int)json_integer_value(json_object_get(a, "blocked")),
                       i > 0 ? " (foreign ABI: refused, process killed)" : "");
        v = json_object_get(j, "sandbox_smoke_test");
        if (json_is_true(json_object_get(v, "ok")))
                printf("\nsandbox smoke test: ok (setup %.2f ms)\n",
                       (double)json_integer_value(json_object_get(v, "setup_us")) / 1000.0);
        else
                printf("\nsandbox smoke test: FAILED: %s\n",
                       json_string_value(json_object_get(v, "error")));
        v = json_object_get(j, "workspace");
        if (json_is_true(json_object_get(v, "usable")))
                printf("\nworkspace %s (%s): sandboxes can use it\n",
                       json_string_value(json_object_get(v, "path")),
                       json_string_value(json_object_get(v, "mode")));
        else
                printf("\nworkspace check (%s): %s\n",
                       json_string_value(json_object_get(v, "mode")),
                       json_string_value(json_object_get(v, "problem")));
        printf("\nsandbox mode enforces here:\n");
        json_object_foreach (json_object_get(j, "enforced"), key, v)
                printf("  %-16s %s\n", key, json_string_value(v));
        if (json_array_size(json_object_get(j, "advice")) > 0)
                printf("\nto do:\n");
        json_array_foreach (json_object_get(j, "advice"), i, v)
                printf("  - %s\n", json_string_value(v));
}

int doctor_main(int argc, char **argv)
{
        struct options o;
        struct probe_report r;
        struct smoke s;
        char err[256];
        json_t *j;
        int rc;

        options_defaults(&o);
        rc = options_parse(argc, argv, &o, err, sizeof(err));
        if (rc == 0 && o.argi < argc) {
                snprintf(err, sizeof(err), "unexpected argument '%s'", argv[o.argi]);
                rc = -EINVAL;
        }
        if (rc < 0) {
                fprintf(stderr, "proctor doctor: %s\nusage: proctor doctor [--json]\n", err);
                return 2;
        }
        if (o.help) {
                printf("usage: proctor doctor [--json] [--workspace DIR] [--workspace-mode "
                       "MODE]\n\nReports what isolation this host offers, runs one sandboxed "
                       "command as proof,\nsays what sandbox mode will enforce here, and "
                       "whether sandboxes can use the\nworkspace (DIR, else the current "
                       "directory) as MODE asks (rw by default).\n");
                return 0;
        }
        probe_host(&r);
        run_smoke(&s);
        j = report_json(&r, &s);
        if (j == NULL)
                return 1;
        json_object_set_new(j, "workspace", workspace_check(&o));
        if (!json_is_true(json_object_get(json_object_get(j, "workspace"), "usable")))
                json_array_append(json_object_get(j, "advice"),
                                  json_object_get(json_object_get(j, "workspace"), "problem"));
        /* A container has no user namespace of its own: what the kernel
         * counts per user is the workspace owner's on the host. */
        json_object_set_new(
            json_object_get(j, "enforced"), "docker_counters",
            json_string("--runtime docker: per container 256 queued signals, 64K message queues, "
                        "1024 open files (4096 hard), set by proctor's init in it; inotify "
                        "instances and watches are NOT bounded there (the engine runs it in the "
                        "host's user namespace): a container can use up the workspace owner's "
                        "fs.inotify.max_user_instances while it runs"));
        if (o.json) {
                json_dumpf(j, stdout, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
                printf("\n");
        } else {
                print_text(j);
        }
        json_decref(j);
        return s.rc == 0 ? 0 : 1;
}
