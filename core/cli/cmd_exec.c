/* cmd_exec: wires options, one loop, the exec engine and the bus for a
 * single execution; exits with the command's status. Ctrl-C, SIGTERM and
 * SIGHUP kill the execution instead of leaving it behind. Its output never
 * drives the user's terminal (core/view/termout). */
#include "core/cli/cmd_exec.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/util/bus.h"
#include "core/session/config.h"
#include "core/view/exec_report.h"
#include "core/session/options.h"
#include "core/view/termout.h"
#include "core/cli/cmd_images.h"
#include "exec/image/image.h"

struct run {
        struct exec *e;
        struct exec_result res;
        bool exited;
        bool json;
        struct termout out[2]; /* the command's stdout and stderr, each its own stream */
        uv_signal_t sig[3];
        struct exec_limits lim; /* as enforced, kept past the execution */
};

static void on_output(const char *buf, size_t n, enum exec_stream s, void *ud)
{
        struct run *r = ud;

        if (!r->json)
                termout_write(&r->out[s == EXEC_STDOUT ? 0 : 1], buf, n);
}

static void on_exit_hook(const struct exec_result *res, void *ud)
{
        struct run *r = ud;
        int i;

        r->res = *res;
        r->exited = true;
        for (i = 0; i < 3; i++)
                uv_close((uv_handle_t *)&r->sig[i], NULL);
}

static void on_signal(uv_signal_t *h, int signum)
{
        struct run *r = h->data;

        if (r->e != NULL && !r->exited)
                exec_kill(r->e);
}

static const char *describe(const struct exec_result *res, const struct exec_limits *l, char *buf,
                            size_t len)
{
        switch (res->reason) {
        case EXEC_TIMEOUT:
                snprintf(buf, len, "timed out after %.1f s", (double)l->timeout_ms / 1000.0);
                return buf;
        case EXEC_OOM:
                snprintf(buf, len, "killed: out of memory (limit %llu MiB)",
                         (unsigned long long)(l->memory_bytes >> 20));
                return buf;
        case EXEC_CPU_LIMIT:
                snprintf(buf, len, "killed: CPU time limit of %.1f s reached",
                         (double)l->cpu_ms / 1000.0);
                return buf;
        case EXEC_PIDS_LIMIT:
                snprintf(buf, len, "killed: process limit of %u reached", l->pids);
                return buf;
        case EXEC_KILLED:
                return "killed";
        case EXEC_DISK_LIMIT:
                snprintf(buf, len, "killed: the workspace grew past the disk quota of %llu MiB",
                         (unsigned long long)(l->disk_bytes >> 20));
                return buf;
        case EXEC_SETUP_FAILED:
                return res->error;
        default:
                return res->error[0] != '\0' ? res->error : NULL;
        }
}

static int usage_error(const char *msg)
{
        termout_message(stderr, "proctor exec: %s\n", msg);
        fprintf(stderr, "usage: proctor exec [options] -- CMD [ARG...]  (try 'proctor exec "
                        "--help')\n");
        return 2;
}

static void print_help(void)
{
        printf("usage: proctor exec [options] -- CMD [ARG...]\n\n"
               "Runs one command in one execution: on this host (--mode local) or in a fresh\n"
               "sandbox (--mode sandbox), streaming its output, and exits with its status\n"
               "(128+N when killed by signal N, 124 on timeout, 125 when the sandbox could not\n"
               "be set up).\n\noptions:\n%s",
               options_help);
}

/* Opens --image for the sandbox's root: 0, or the exit status when it
 * cannot be used (2 for a bad request, 125 when it cannot be unpacked). */
static int open_image(const struct options *o, struct image **img, struct exec_engine_opts *eo,
                      struct exec_request *req)
{
        struct image_caps caps = {.image_max = o->image_max, .cache_max = o->image_cache_max};
        struct image_meter meter;
        char err[768];
        int rc;

        if (o->mode != EXEC_SANDBOX) {
                fprintf(stderr, "proctor exec: --image gives a sandbox its root: it needs "
                                "--mode sandbox\n");
                return 2;
        }
        cmd_images_meter_start(&meter, "proctor exec", &caps);
        rc = image_open(o->image, &caps, img, err, sizeof(err));
        cmd_images_meter_end(&meter);
        if (rc < 0) {
                termout_message(stderr, "proctor exec: --image %s: %s\n", o->image, err);
                return rc == -ECANCELED ? 128 + SIGINT : rc == -ENOENT || rc == -EINVAL ? 2 : 125;
        }
        eo->image_root = image_root(*img);
        req->env_extra = image_env(*img);
        req->image = image_ref(*img);
        if (!o->json)
                cmd_images_notes(*img, "proctor exec", stderr);
        return 0;
}

int cmd_exec_main(int argc, char **argv)
{
        struct options o;
        struct run r;
        struct exec_request req;
        struct exec_engine *eng = NULL;
        struct exec_engine_opts eo = {0};
        struct exec_workspace *ws = NULL;
        struct image *img = NULL;
        struct bus *bus = NULL;
        uv_loop_t loop;
        char err[512], why[300];
        const char *msg;
        int rc, i, status = 125;
        unsigned cg_limits;
        static const int sigs[3] = {SIGINT, SIGTERM, SIGHUP};

        if (config_resolve(argc, argv, &o, err, sizeof(err)) < 0)
                return usage_error(err);
        if (o.help) {
                print_help();
                return 0;
        }
        if (o.argi >= argc || argv[o.argi][0] == '\0')
                return usage_error("no command given");
        memset(&r, 0, sizeof(r));
        r.json = o.json;
        termout_init(&r.out[0], 1, o.raw);
        termout_init(&r.out[1], 2, o.raw);
        memset(&req, 0, sizeof(req));
        req.isolation = o.mode;
        req.argv = argv + o.argi;
        req.ws_mode = o.ws_mode;
        req.limits = o.limits;

        rc = exec_workspace_open(o.workspace, &ws, err, sizeof(err));
        if (rc == 0 && o.mode == EXEC_SANDBOX)
                rc = config_protect_own(ws, o.config, err, sizeof(err));

        if (rc < 0) {
                termout_message(stderr, "proctor exec: %s\n", err);
                exec_workspace_free(ws);
                return 2;
        }
        req.ws = ws;
        /* The docker runtime hands the image to the engine: nothing to unpack. */
        eo.runtime = o.runtime;
        eo.docker_image = o.image;
        if (o.runtime != NULL)
                req.image = o.image;
        else if (o.image != NULL && (rc = open_image(&o, &img, &eo, &req)) != 0) {
                exec_workspace_free(ws);
                return rc;
        }
        uv_loop_init(&loop);
        rc = exec_engine_new(&loop, &eo, &eng, err, sizeof(err));
        if (rc < 0) {
                termout_message(stderr, "proctor exec: %s\n", err);
                uv_loop_close(&loop);
                exec_workspace_free(ws);
                image_free(img);
                return 125;
        }
        /* After the image and the engine: what they say comes first. */
        if (o.mode == EXEC_SANDBOX &&
            exec_workspace_usable(ws, o.ws_mode, o.runtime == NULL, err, sizeof(err)) < 0) {
                termout_message(stderr, "proctor exec: %s\n", err);
                status = 2;
                goto out;
        }
        bus = bus_new();
        if (bus == NULL)
                goto out;
        if (o.json)
                bus_subscribe(bus, bus_print_jsonl, NULL);
        struct exec_report_hooks hooks = {.on_output = on_output, .on_exit = on_exit_hook};
        for (i = 0; i < 3; i++) {
                uv_signal_init(&loop, &r.sig[i]);
                r.sig[i].data = &r;
                uv_signal_start(&r.sig[i], on_signal, sigs[i]);
        }
        rc = exec_report_spawn(eng, bus, &req, NULL, &hooks, &r, &r.e, err, sizeof(err));
        if (rc < 0) {
                termout_message(stderr, "proctor exec: %s\n", err);
                for (i = 0; i < 3; i++)
                        uv_close((uv_handle_t *)&r.sig[i], NULL);
                status = rc == -ENOTDIR || rc == -EINVAL || rc == -ENOENT ? 2 : 125;
                goto out;
        }
        r.lim = *exec_limits(r.e);
        if (!o.json && exec_request_disk_quota(&req) && !exec_disk_quota(r.e))
                fprintf(stderr, "proctor exec: warning: %s\n", DISK_QUOTA_REMOTE_TEXT);
        cg_limits = exec_cgroup_limits(r.e);
        if (!o.json && o.mode == EXEC_SANDBOX && (cg_limits & EXEC_CG_ALL) != EXEC_CG_ALL)
                fprintf(stderr,
                        "proctor exec: warning: no cgroup here for %s: those limits hold per "
                        "process only (rlimits), not for the sandbox as a whole (see proctor "
                        "doctor)\n",
                        exec_cgroup_missing_text(cg_limits));
        uv_run(&loop, UV_RUN_DEFAULT);
        termout_end(&r.out[0]);
        termout_end(&r.out[1]);
        status = exec_result_status(&r.res);
        msg = describe(&r.res, &r.lim, why, sizeof(why));
        if (!o.json && msg != NULL)
                termout_message(stderr, "proctor exec: %s\n", msg);
        if (!o.json && r.res.truncated)
                fprintf(stderr, "proctor exec: output truncated at %llu bytes\n",
                        (unsigned long long)o.limits.output_bytes);
out:
        /* Before the engine: a quota walk still running must not report
         * to an engine that is gone. */
        exec_workspace_free(ws);
        exec_engine_free(eng);
        uv_run(&loop, UV_RUN_DEFAULT);
        uv_loop_close(&loop);
        bus_free(bus);
        termout_free(&r.out[0]);
        termout_free(&r.out[1]);
        image_free(img);
        return status;
}
