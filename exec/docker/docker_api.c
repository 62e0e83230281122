/* docker_api: the Engine API's pure parts (see docker_api.h): endpoint,
 * create body, attach frames, stats and inspect. Nothing here does I/O or
 * trusts a length the engine sends beyond the bytes actually given. */
#include "exec/docker/docker_api.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <unistd.h>

#include <jansson.h>

int docker_endpoint_parse(const char *docker_host, const char *tls_verify, const char *cert_dir,
                          const char *home, struct docker_endpoint *ep, char *err, size_t errlen)
{
        const char *h = docker_host != NULL && docker_host[0] != '\0'
                            ? docker_host
                            : "unix:///var/run/docker.sock";
        char dir[PATH_MAX];
        const char *colon;
        char *end;
        long port;

        memset(ep, 0, sizeof(*ep));
        snprintf(ep->shown, sizeof(ep->shown), "%s", h);
        if (strncmp(h, "unix://", 7) == 0) {
                if (h[7] != '/' || strlen(h + 7) >= sizeof(ep->unix_path)) {
                        snprintf(err, errlen, "DOCKER_HOST=%s: expected unix:///PATH", h);
                        return -EINVAL;
                }
                snprintf(ep->unix_path, sizeof(ep->unix_path), "%s", h + 7);
                snprintf(ep->base_url, sizeof(ep->base_url), "http://docker" DOCKER_API_PREFIX);
                return 0;
        }
        if (strncmp(h, "tcp://", 6) != 0) {
                snprintf(err, errlen, "DOCKER_HOST=%s: expected unix:///PATH or tcp://HOST:PORT",
                         h);
                return -EINVAL;
        }
        h += 6;
        colon = strrchr(h, ':');
        if (colon == NULL || colon == h || (size_t)(colon - h) >= sizeof(ep->host) ||
            strchr(h, '/') != NULL || strchr(h, '@') != NULL) {
                snprintf(err, errlen, "DOCKER_HOST=%s: expected tcp://HOST:PORT", ep->shown);
                return -EINVAL;
        }
        port = strtol(colon + 1, &end, 10);
        if (*end != '\0' || port <= 0 || port > 65535) {
                snprintf(err, errlen, "DOCKER_HOST=%s: bad port", ep->shown);
                return -EINVAL;
        }
        memcpy(ep->host, h, (size_t)(colon - h));
        ep->port = (int)port;
        ep->tls = tls_verify != NULL && tls_verify[0] != '\0';
        if (ep->tls) {
                if (cert_dir != NULL && cert_dir[0] != '\0')
                        snprintf(dir, sizeof(dir), "%s", cert_dir);
                else
                        snprintf(dir, sizeof(dir), "%s/.docker", home != NULL ? home : "");
                if (snprintf(ep->ca, sizeof(ep->ca), "%s/ca.pem", dir) >= (int)sizeof(ep->ca) ||
                    snprintf(ep->cert, sizeof(ep->cert), "%s/cert.pem", dir) >=
                        (int)sizeof(ep->cert) ||
                    snprintf(ep->key, sizeof(ep->key), "%s/key.pem", dir) >= (int)sizeof(ep->key)) {
                        snprintf(err, errlen, "DOCKER_CERT_PATH: path too long");
                        return -EINVAL;
                }
        }
        snprintf(ep->base_url, sizeof(ep->base_url), "%s://%s:%d" DOCKER_API_PREFIX,
                 ep->tls ? "https" : "http", ep->host, ep->port);
        return 0;
}

static json_t *strv_json(char *const *v)
{
        json_t *a = json_array();

        for (; v != NULL && *v != NULL; v++)
                json_array_append_new(a, json_string(*v));
        return a;
}

uint64_t docker_tmpfs_bytes(const struct exec_limits *l)
{
        return l->tmpfs_bytes > 0 ? l->tmpfs_bytes : (uint64_t)64 << 20;
}

static json_t *host_config(const struct docker_create *c)
{
        const struct exec_limits *l = &c->limits;
        json_t *hc = json_object(), *tmpfs = json_object(), *binds = json_array();
        char opt[96], bind[PATH_MAX + 32];

        if (l->memory_bytes > 0) {
                /* Swap equal to memory: no swap, so the limit means OOM. */
                json_object_set_new(hc, "Memory", json_integer((json_int_t)l->memory_bytes));
                json_object_set_new(hc, "MemorySwap", json_integer((json_int_t)l->memory_bytes));
        }
        json_object_set_new(hc, "NanoCpus", json_integer(1000000000)); /* one core */
        if (l->pids > 0)
                json_object_set_new(hc, "PidsLimit", json_integer(l->pids));
        json_object_set_new(hc, "NetworkMode", json_string("none"));
        if (c->has_fsize) {
                json_int_t fsize = (json_int_t)(c->fsize > INT64_MAX ? INT64_MAX : c->fsize);
                json_object_set_new(
                    hc, "Ulimits",
                    json_pack("[{s:s,s:I,s:I}]", "Name", "fsize", "Soft", fsize, "Hard", fsize));
        }
        /* The engine's init as pid 1 (reaps, forwards signals): the command
         * is no pid 1 that ignores SIGKILL from inside, as in a native
         * sandbox. It counts against PidsLimit. */
        json_object_set_new(hc, "Init", json_true());
        json_object_set_new(hc, "IpcMode", json_string("private"));
        json_object_set_new(hc, "ReadonlyRootfs", json_true());
        snprintf(opt, sizeof(opt), "rw,nosuid,nodev,mode=1777,size=%" PRIu64,
                 docker_tmpfs_bytes(l));
        json_object_set_new(tmpfs, "/tmp", json_string(opt));
        json_object_set_new(hc, "Tmpfs", tmpfs);
        if (c->workspace != NULL) {
                snprintf(bind, sizeof(bind), "%s:/workspace:%s", c->workspace,
                         c->workspace_ro ? "ro" : "rw");
                json_array_append_new(binds, json_string(bind));
        }
        /* The engine must see this machine's paths, as for the workspace. */
        if (c->self != NULL) {
                snprintf(bind, sizeof(bind), "%s:" EXEC_SANDBOX_SELF ":ro", c->self->exe);
                json_array_append_new(binds, json_string(bind));
                for (unsigned i = 0; i < c->self->ndirs; i++) {
                        snprintf(bind, sizeof(bind), "%s:%s:ro", c->self->dirs[i],
                                 c->self->mounts[i]);
                        json_array_append_new(binds, json_string(bind));
                }
        }
        if (json_array_size(binds) > 0)
                json_object_set_new(hc, "Binds", binds);
        else
                json_decref(binds);
        json_object_set_new(hc, "CapDrop", json_pack("[s]", "ALL"));
        /* proctor's own policy, as the engine's profile; without one the
         * engine's default stays on (only naming "unconfined" drops it). */
        json_object_set_new(hc, "SecurityOpt", json_pack("[s]", "no-new-privileges"));
        if (c->seccomp_profile != NULL) {
                char *opt_seccomp = NULL;
                if (asprintf(&opt_seccomp, "seccomp=%s", c->seccomp_profile) > 0)
                        json_array_append_new(json_object_get(hc, "SecurityOpt"),
                                              json_string(opt_seccomp));
                free(opt_seccomp);
        }
        /* Output goes to proctor through the attach stream only. */
        json_object_set_new(hc, "LogConfig", json_pack("{s:s}", "Type", "none"));
        return hc;
}

char *docker_create_body(const struct docker_create *c)
{
        json_t *o = json_object(), *labels = json_object();
        char buf[32];
        char *s;

        json_object_set_new(o, "Image", json_string(c->image));
        json_object_set_new(o, "Cmd", strv_json(c->argv));
        json_object_set_new(o, "Entrypoint", json_array());
        json_object_set_new(o, "Env", strv_json(c->env));
        json_object_set_new(o, "WorkingDir",
                            json_string(c->workspace != NULL ? "/workspace" : "/"));
        json_object_set_new(o, "User", json_string(c->user));
        json_object_set_new(o, "Tty", json_false());
        json_object_set_new(o, "AttachStdin", json_boolean(c->stdin_open));
        json_object_set_new(o, "OpenStdin", json_boolean(c->stdin_open));
        json_object_set_new(o, "StdinOnce", json_boolean(c->stdin_open));
        json_object_set_new(o, "AttachStdout", json_true());
        json_object_set_new(o, "AttachStderr", json_true());
        json_object_set_new(o, "NetworkDisabled", json_true());
        json_object_set_new(labels, "proctor.session",
                            json_string(c->session != NULL ? c->session : ""));
        snprintf(buf, sizeof(buf), "%" PRIu64, c->exec_id);
        json_object_set_new(labels, "proctor.exec", json_string(buf));
        snprintf(buf, sizeof(buf), "%d", c->owner != NULL ? c->owner->pid : c->pid);
        json_object_set_new(labels, "proctor.pid", json_string(buf));
        json_object_set_new(labels, "proctor.host",
                            json_string(c->owner != NULL       ? c->owner->host
                                        : c->host_name != NULL ? c->host_name
                                                               : ""));
        if (c->owner != NULL) {
                snprintf(buf, sizeof(buf), "%llu", c->owner->start);
                json_object_set_new(labels, "proctor.start", json_string(buf));
                json_object_set_new(labels, "proctor.instance", json_string(c->owner->instance));
                json_object_set_new(labels, "proctor.boot", json_string(c->owner->boot));
        }
        json_object_set_new(o, "Labels", labels);
        json_object_set_new(o, "HostConfig", host_config(c));
        s = json_dumps(o, JSON_COMPACT);
        json_decref(o);
        return s;
}

int docker_image_parse(const char *json, size_t n, struct docker_image *img)
{
        json_t *o = json_loadb(json, n, 0, NULL), *vols, *v;
        const char *id = json_string_value(json_object_get(o, "Id")), *path;
        size_t k = 0;

        memset(img, 0, sizeof(*img));
        const char *hex = id != NULL && strncmp(id, "sha256:", 7) == 0 ? id + 7 : id;

        /* Docker says "sha256:HEX"; an engine may give the bare digest. */
        if (id == NULL || strlen(id) >= sizeof(img->id) || hex[0] == '\0' ||
            strspn(hex, "0123456789abcdef") != strlen(hex)) {
                json_decref(o);
                return -EINVAL;
        }
        snprintf(img->id, sizeof(img->id), "%s", id);
        vols = json_object_get(json_object_get(o, "Config"), "Volumes");
        if (json_object_size(vols) > 0)
                img->volumes = calloc(json_object_size(vols), sizeof(*img->volumes));
        json_object_foreach (vols, path, v) {
                if (img->volumes == NULL)
                        break;
                /* As a mount's destination: absolute, and not a mount
                 * proctor makes itself (the engine refuses two mounts on
                 * one destination; those are bounded already). */
                if (path[0] != '/' || strlen(path) >= PATH_MAX || strcmp(path, "/tmp") == 0 ||
                    strcmp(path, "/tmp/") == 0 || strcmp(path, "/workspace") == 0 ||
                    strcmp(path, "/workspace/") == 0)
                        continue;
                if ((img->volumes[k] = strdup(path)) != NULL)
                        k++;
        }
        img->nvolumes = k;
        json_decref(o);
        return 0;
}

void docker_image_clear(struct docker_image *img)
{
        for (size_t i = 0; i < img->nvolumes; i++)
                free(img->volumes[i]);
        free(img->volumes);
        memset(img, 0, sizeof(*img));
}

char *docker_create_pin(const char *body, const struct docker_image *img, uint64_t size)
{
        json_t *o = json_loads(body, 0, NULL), *tmpfs;
        char opt[96], *s = NULL;

        if (o == NULL)
                return NULL;
        json_object_set_new(o, "Image", json_string(img->id));
        tmpfs = json_object_get(json_object_get(o, "HostConfig"), "Tmpfs");
        snprintf(opt, sizeof(opt), "rw,nosuid,nodev,mode=1777,size=%" PRIu64, size);
        for (size_t i = 0; tmpfs != NULL && i < img->nvolumes; i++)
                json_object_set_new(tmpfs, img->volumes[i], json_string(opt));
        if (tmpfs != NULL)
                s = json_dumps(o, JSON_COMPACT);
        json_decref(o);
        return s;
}

int docker_proc_start(int pid, unsigned long long *start)
{
        char path[64], buf[1024];
        const char *p;
        ssize_t n;
        int fd, field;

        snprintf(path, sizeof(path), "/proc/%d/stat", pid);
        if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0)
                return errno == ENOENT ? -ESRCH : -errno;
        n = read(fd, buf, sizeof(buf) - 1);
        close(fd);
        if (n <= 0)
                return n == 0 ? -ESRCH : -errno;
        buf[n] = '\0';
        /* The command's name may hold spaces and parentheses: fields are
         * counted from the last ')', which ends field 2. */
        if ((p = strrchr(buf, ')')) == NULL)
                return -EIO;
        for (field = 2; field < 22 && p != NULL; field++)
                p = strchr(p + 1, ' ');
        if (p == NULL || sscanf(p + 1, "%llu", start) != 1)
                return -EIO;
        return 0;
}

static int read_line(const char *path, char *out, size_t len)
{
        FILE *f = fopen(path, "re");

        if (f == NULL)
                return -errno;
        if (fgets(out, (int)len, f) == NULL)
                out[0] = '\0';
        fclose(f);
        out[strcspn(out, "\n")] = '\0';
        return out[0] != '\0' ? 0 : -EIO;
}

int docker_owner_self(struct docker_owner *o, const char *host)
{
        unsigned char r[16];
        int rc;

        memset(o, 0, sizeof(*o));
        snprintf(o->host, sizeof(o->host), "%s", host);
        o->pid = (int)getpid();
        if ((rc = docker_proc_start(o->pid, &o->start)) < 0 ||
            (rc = read_line("/proc/sys/kernel/random/boot_id", o->boot, sizeof(o->boot))) < 0)
                return rc;
        if (getrandom(r, sizeof(r), 0) != (ssize_t)sizeof(r))
                return -EIO;
        for (size_t i = 0; i < sizeof(r); i++)
                snprintf(o->instance + 2 * i, 3, "%02x", r[i]);
        return 0;
}

int docker_owner_from_labels(json_t *labels, struct docker_owner *o)
{
        const char *pid = json_string_value(json_object_get(labels, "proctor.pid"));
        const char *start = json_string_value(json_object_get(labels, "proctor.start"));
        const char *inst = json_string_value(json_object_get(labels, "proctor.instance"));
        const char *boot = json_string_value(json_object_get(labels, "proctor.boot"));
        const char *host = json_string_value(json_object_get(labels, "proctor.host"));
        char *end;
        long p;

        memset(o, 0, sizeof(*o));
        if (pid == NULL || start == NULL || inst == NULL || boot == NULL || host == NULL ||
            strlen(inst) != 32 || strspn(inst, "0123456789abcdef") != 32 ||
            strlen(boot) >= sizeof(o->boot) || boot[0] == '\0' || strlen(host) >= sizeof(o->host))
                return -EINVAL;
        errno = 0;
        p = strtol(pid, &end, 10);
        if (*end != '\0' || p <= 0 || p > INT_MAX || errno != 0)
                return -EINVAL;
        o->pid = (int)p;
        if (start[0] < '0' || start[0] > '9')
                return -EINVAL;
        o->start = strtoull(start, &end, 10);
        if (*end != '\0' || errno != 0)
                return -EINVAL;
        snprintf(o->instance, sizeof(o->instance), "%s", inst);
        snprintf(o->boot, sizeof(o->boot), "%s", boot);
        snprintf(o->host, sizeof(o->host), "%s", host);
        return 0;
}

bool docker_owner_gone(const struct docker_owner *o, const struct docker_owner *self,
                       int (*start_of)(int pid, unsigned long long *start))
{
        unsigned long long start;
        int rc;

        /* Another host's, another boot's (its pids mean nothing here), or
         * this very process's: not for this sweep to judge. */
        if (strcmp(o->host, self->host) != 0 || strcmp(o->boot, self->boot) != 0 ||
            strcmp(o->instance, self->instance) == 0)
                return false;
        rc = start_of(o->pid, &start);
        if (rc == -ESRCH)
                return true;
        return rc == 0 && start != o->start;
}

int docker_demux_feed(struct docker_demux *d, const char *buf, size_t n, docker_frame_cb cb,
                      void *ud)
{
        while (n > 0 && !d->bad) {
                if (d->left == 0) {
                        size_t take = sizeof(d->hdr) - d->hlen;
                        if (take > n)
                                take = n;
                        memcpy(d->hdr + d->hlen, buf, take);
                        d->hlen += take;
                        buf += take;
                        n -= take;
                        if (d->hlen < sizeof(d->hdr))
                                break;
                        d->hlen = 0;
                        if (d->hdr[0] > 3 || d->hdr[1] != 0 || d->hdr[2] != 0 || d->hdr[3] != 0) {
                                d->bad = true;
                                break;
                        }
                        d->stream = d->hdr[0];
                        d->left = (uint32_t)d->hdr[4] << 24 | (uint32_t)d->hdr[5] << 16 |
                                  (uint32_t)d->hdr[6] << 8 | (uint32_t)d->hdr[7];
                        continue;
                }
                size_t take = n < d->left ? n : d->left;
                /* 0 would be stdin echoed back: never sent without a tty. */
                if (d->stream != 0)
                        cb(ud, d->stream == 1 ? EXEC_STDOUT : EXEC_STDERR, buf, take);
                d->left -= (uint32_t)take;
                buf += take;
                n -= take;
        }
        return d->bad ? -EPROTO : 0;
}

static uint64_t num_at(json_t *o, const char *path)
{
        char key[64];
        const char *dot;

        while (o != NULL && (dot = strchr(path, '.')) != NULL) {
                size_t k = (size_t)(dot - path);
                if (k >= sizeof(key))
                        return 0;
                memcpy(key, path, k);
                key[k] = '\0';
                o = json_object_get(o, key);
                path = dot + 1;
        }
        o = o != NULL ? json_object_get(o, path) : NULL;
        if (json_is_integer(o) && json_integer_value(o) > 0)
                return (uint64_t)json_integer_value(o);
        if (json_is_real(o) && json_real_value(o) > 0)
                return (uint64_t)json_real_value(o);
        return 0;
}

int docker_stats_parse(const char *json, size_t n, struct docker_stats_sample *s)
{
        json_t *o = json_loadb(json, n, 0, NULL);
        uint64_t inactive;

        /* Podman 4.3 derives usage_in_usermode as total less kernel time,
         * unsigned, so where its tick-counted kernel time passes the total
         * the field wraps to near 2^64: past jansson's integers, and the
         * whole sample failed to parse. Numbers as doubles then (exact to
         * 2^53: 104 days of CPU, 8 PiB). */
        if (o == NULL)
                o = json_loadb(json, n, JSON_DECODE_INT_AS_REAL, NULL);
        memset(s, 0, sizeof(*s));
        if (!json_is_object(o) || json_object_get(o, "cpu_stats") == NULL) {
                json_decref(o);
                return -EINVAL;
        }
        s->cpu_ns = num_at(o, "cpu_stats.cpu_usage.total_usage");
        s->mem_bytes = num_at(o, "memory_stats.usage");
        /* cgroup v1 names it total_inactive_file, v2 inactive_file. */
        inactive = num_at(o, "memory_stats.stats.total_inactive_file");
        if (inactive == 0)
                inactive = num_at(o, "memory_stats.stats.inactive_file");
        s->mem_bytes -= inactive < s->mem_bytes ? inactive : 0;
        s->mem_max = num_at(o, "memory_stats.max_usage");
        s->pids = (uint32_t)num_at(o, "pids_stats.current");
        json_decref(o);
        return 0;
}

void docker_stats_fold(const struct docker_stats_sample *prev,
                       const struct docker_stats_sample *cur, uint64_t dt_us, struct exec_stats *st)
{
        uint64_t peak = st->mem_peak_bytes;

        st->cpu_ms = cur->cpu_ns / 1000000u;
        st->mem_bytes = cur->mem_bytes;
        st->pids = cur->pids;
        if (cur->mem_max > peak)
                peak = cur->mem_max;
        if (cur->mem_bytes > peak)
                peak = cur->mem_bytes;
        st->mem_peak_bytes = peak;
        st->cpu_pct = 0;
        if (prev != NULL && dt_us > 0 && cur->cpu_ns >= prev->cpu_ns)
                st->cpu_pct = (double)(cur->cpu_ns - prev->cpu_ns) / 10.0 / (double)dt_us;
}

int docker_inspect_parse(const char *json, size_t n, struct docker_inspect *in)
{
        json_t *o = json_loadb(json, n, 0, NULL), *st;
        const char *s;

        memset(in, 0, sizeof(*in));
        st = json_is_object(o) ? json_object_get(o, "State") : NULL;
        if (!json_is_object(st)) {
                json_decref(o);
                return -EINVAL;
        }
        in->exit_code = (int)json_integer_value(json_object_get(st, "ExitCode"));
        in->oom_killed = json_is_true(json_object_get(st, "OOMKilled"));
        in->pid = (int)json_integer_value(json_object_get(st, "Pid"));
        s = json_string_value(json_object_get(st, "Status"));
        snprintf(in->status, sizeof(in->status), "%s", s != NULL ? s : "");
        json_decref(o);
        return 0;
}

void docker_error_text(const char *body, size_t n, char *out, size_t outlen)
{
        json_t *o = json_loadb(body, n, 0, NULL);
        const char *m = json_is_object(o) ? json_string_value(json_object_get(o, "message")) : NULL;
        size_t i, k = 0;

        if (m != NULL)
                snprintf(out, outlen, "%s", m);
        else
                snprintf(out, outlen, "%.*s", (int)(n < 200 ? n : 200), body);
        json_decref(o);
        /* One line, printable: the text reaches a terminal. */
        for (i = 0; out[i] != '\0'; i++) {
                unsigned char c = (unsigned char)out[i];
                if (c >= 0x20 && c != 0x7f)
                        out[k++] = out[i];
                else if (c == '\n' || c == '\t')
                        out[k++] = ' ';
        }
        out[k] = '\0';
        while (k > 0 && out[k - 1] == ' ')
                out[--k] = '\0';
}

const char *docker_error_hint(const char *body, size_t n)
{
        char msg[1024];

        /* The whole answer: the cause may come past what a message shows. */
        snprintf(msg, sizeof(msg), "%.*s", (int)(n < sizeof(msg) - 1 ? n : sizeof(msg) - 1), body);
        /* Podman binds its init (containers.conf init_path, by default
         * catatonit) for HostConfig.Init, and fails the create without it. */
        if (strstr(msg, "container-init binary not found") != NULL)
                return "the engine (Podman) has no container init for HostConfig.Init: install "
                       "catatonit, or set init_path in containers.conf's [engine] table to a "
                       "static tini";
        /* Go's answer to plain HTTP on its TLS port. */
        if (strstr(msg, "HTTP request to an HTTPS server") != NULL)
                return "plain HTTP reached an engine that speaks TLS: does it want TLS: "
                       "DOCKER_TLS_VERIFY=1, with DOCKER_CERT_PATH holding its ca.pem, cert.pem "
                       "and key.pem";
        /* Podman as root raises nofile and nproc to its maximum unless
         * told; where root lacks CAP_SYS_RESOURCE the runtime refuses. */
        if (strstr(msg, "error setting rlimit") != NULL)
                return "the engine may not raise a container's rlimits here (no "
                       "CAP_SYS_RESOURCE?): Podman: set default_ulimits = [\"nofile=N:N\", "
                       "\"nproc=N:N\"] at or below the host's limits in containers.conf's "
                       "[containers] table";
        return NULL;
}
