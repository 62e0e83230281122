/* Unit tests for the Docker Engine API's pure parts (exec/docker/docker_api):
 * DOCKER_HOST parsing with TLS files, the create body's HostConfig, the
 * attach frame demuxer split at every offset, stats JSON folded into
 * exec_stats, inspect answers and the engine's error text. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <jansson.h>

#include "exec/docker/docker_api.h"

/* The labels round-trip through the create body; any label missing or
 * malformed makes the container no proctor's. */
static void test_owner_labels(void **state)
{
        struct docker_owner me = {.host = "h", .boot = "b-1", .pid = 77, .start = 123456}, got;
        char *argv[] = {"true", NULL};
        struct docker_create c = {.image = "i", .argv = argv, .user = "1:1", .owner = &me};
        static const char *const bad[] = {
            "{}",
            "{\"proctor.pid\":\"77\",\"proctor.host\":\"h\"}",
            "{\"proctor.pid\":\"x\",\"proctor.host\":\"h\",\"proctor.start\":\"1\","
            "\"proctor.boot\":\"b\",\"proctor.instance\":\"0123456789abcdef0123456789abcdef\"}",
            "{\"proctor.pid\":\"7\",\"proctor.host\":\"h\",\"proctor.start\":\"-1\","
            "\"proctor.boot\":\"b\",\"proctor.instance\":\"0123456789abcdef0123456789abcdef\"}",
            "{\"proctor.pid\":\"7\",\"proctor.host\":\"h\",\"proctor.start\":\"1\","
            "\"proctor.boot\":\"b\",\"proctor.instance\":\"short\"}",
        };
        json_t *o;
        char *body;

        snprintf(me.instance, sizeof(me.instance), "0123456789abcdef0123456789abcdef");
        body = docker_create_body(&c);
        o = json_loads(body, 0, NULL);
        assert_int_equal(docker_owner_from_labels(json_object_get(o, "Labels"), &got), 0);
        assert_int_equal(got.pid, 77);
        assert_true(got.start == 123456);
        assert_string_equal(got.boot, "b-1");
        assert_string_equal(got.host, "h");
        assert_string_equal(got.instance, me.instance);
        json_decref(o);
        free(body);
        for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
                o = json_loads(bad[i], 0, NULL);
                assert_int_equal(docker_owner_from_labels(o, &got), -EINVAL);
                json_decref(o);
        }
        assert_int_equal(docker_owner_from_labels(NULL, &got), -EINVAL);
}

/* An image's volumes become bounded tmpfs mounts, the create pinned to
 * its id; proctor's own mount points are left to proctor's mounts. */
static void test_image_volumes(void **state)
{
        static const char img_json[] =
            "{\"Id\":\"sha256:abc123\",\"Config\":{\"Volumes\":{\"/data\":{},\"/tmp\":{},"
            "\"/workspace\":{},\"rel\":{},\"/var/lib/x\":{}}}}";
        struct docker_image img;
        char *argv[] = {"true", NULL};
        struct docker_create c = {.image = "name:tag", .argv = argv, .user = "1:1"};
        char *body = docker_create_body(&c), *pinned;
        json_t *o, *tmpfs;

        assert_int_equal(docker_image_parse(img_json, strlen(img_json), &img), 0);
        assert_string_equal(img.id, "sha256:abc123");
        assert_int_equal(img.nvolumes, 2);
        pinned = docker_create_pin(body, &img, 10u << 20);
        o = json_loads(pinned, 0, NULL);
        assert_string_equal(json_string_value(json_object_get(o, "Image")), "sha256:abc123");
        tmpfs = json_object_get(json_object_get(o, "HostConfig"), "Tmpfs");
        assert_string_equal(json_string_value(json_object_get(tmpfs, "/data")),
                            "rw,nosuid,nodev,mode=1777,size=10485760");
        assert_non_null(json_object_get(tmpfs, "/var/lib/x"));
        assert_null(json_object_get(tmpfs, "/workspace"));
        assert_int_equal(json_object_size(tmpfs), 3); /* with /tmp, proctor's own */
        json_decref(o);
        free(pinned);
        free(body);
        docker_image_clear(&img);
        assert_int_equal(docker_image_parse("{\"Id\":\"abc\"}", 12, &img), 0); /* bare */
        assert_string_equal(img.id, "abc");
        assert_int_equal(docker_image_parse("{\"Id\":\"sha256:\"}", 16, &img), -EINVAL);
        assert_int_equal(docker_image_parse("{\"Id\":\"../x\"}", 13, &img), -EINVAL);
        assert_int_equal(docker_image_parse("[]", 2, &img), -EINVAL);
        assert_int_equal(img.nvolumes, 0);
}

static int fake_start_rc;
static unsigned long long fake_start;
static int fake_start_of(int pid, unsigned long long *start)
{
        *start = fake_start;
        return fake_start_rc;
}

static void test_owner_gone(void **state)
{
        struct docker_owner self = {.host = "h", .boot = "b", .instance = "1", .pid = 1};
        struct docker_owner o = {.host = "h", .boot = "b", .instance = "2", .pid = 9, .start = 5};

        fake_start_rc = -ESRCH; /* the pid is gone */
        assert_true(docker_owner_gone(&o, &self, fake_start_of));
        fake_start_rc = 0;
        fake_start = 5; /* it runs, started then: alive */
        assert_false(docker_owner_gone(&o, &self, fake_start_of));
        fake_start = 6; /* the pid now names another process */
        assert_true(docker_owner_gone(&o, &self, fake_start_of));
        fake_start_rc = -EACCES; /* unknown: kept */
        assert_false(docker_owner_gone(&o, &self, fake_start_of));
        fake_start_rc = -ESRCH;
        snprintf(o.boot, sizeof(o.boot), "other"); /* another boot's pids mean nothing */
        assert_false(docker_owner_gone(&o, &self, fake_start_of));
        snprintf(o.boot, sizeof(o.boot), "b");
        snprintf(o.host, sizeof(o.host), "other"); /* another host's */
        assert_false(docker_owner_gone(&o, &self, fake_start_of));
        snprintf(o.host, sizeof(o.host), "h");
        snprintf(o.instance, sizeof(o.instance), "1"); /* this process's own */
        assert_false(docker_owner_gone(&o, &self, fake_start_of));

        /* this process's own start time, as the kernel gives it */
        struct docker_owner me;
        unsigned long long st;
        assert_int_equal(docker_owner_self(&me, "h"), 0);
        assert_int_equal(docker_proc_start(me.pid, &st), 0);
        assert_true(st == me.start);
        assert_int_equal(strlen(me.instance), 32);
        assert_int_equal(docker_proc_start(0x7ffffff0, &st), -ESRCH);
}

static void test_endpoint(void **state)
{
        struct docker_endpoint ep;
        char err[256];

        assert_int_equal(docker_endpoint_parse(NULL, NULL, NULL, "/h", &ep, err, sizeof(err)), 0);
        assert_string_equal(ep.unix_path, "/var/run/docker.sock");
        assert_string_equal(ep.base_url, "http://docker/v1.41");
        assert_int_equal(
            docker_endpoint_parse("unix:///tmp/d.sock", NULL, NULL, "/h", &ep, err, sizeof(err)),
            0);
        assert_string_equal(ep.unix_path, "/tmp/d.sock");
        assert_int_equal(docker_endpoint_parse("tcp://10.0.0.5:2376", "1", NULL, "/home/u", &ep,
                                               err, sizeof(err)),
                         0);
        assert_true(ep.tls);
        assert_string_equal(ep.base_url, "https://10.0.0.5:2376/v1.41");
        assert_string_equal(ep.ca, "/home/u/.docker/ca.pem");
        assert_string_equal(ep.cert, "/home/u/.docker/cert.pem");
        assert_string_equal(ep.key, "/home/u/.docker/key.pem");
        assert_int_equal(
            docker_endpoint_parse("tcp://build:2375", "", "/c", "/h", &ep, err, sizeof(err)), 0);
        assert_false(ep.tls);
        assert_string_equal(ep.base_url, "http://build:2375/v1.41");
        assert_int_equal(
            docker_endpoint_parse("tcp://h:1", "1", "/certs", "/h", &ep, err, sizeof(err)), 0);
        assert_string_equal(ep.key, "/certs/key.pem");
        /* Refused, with the shape expected. */
        assert_int_equal(docker_endpoint_parse("ssh://h", NULL, NULL, "/h", &ep, err, sizeof(err)),
                         -EINVAL);
        assert_non_null(strstr(err, "expected unix:///PATH or tcp://HOST:PORT"));
        assert_int_equal(
            docker_endpoint_parse("tcp://h:99999", NULL, NULL, "/h", &ep, err, sizeof(err)),
            -EINVAL);
        assert_int_equal(
            docker_endpoint_parse("tcp://u@h:1", NULL, NULL, "/h", &ep, err, sizeof(err)), -EINVAL);
        assert_int_equal(
            docker_endpoint_parse("unix://rel.sock", NULL, NULL, "/h", &ep, err, sizeof(err)),
            -EINVAL);
}

static void test_create_body(void **state)
{
        char *argv[] = {"sh", "-c", "echo hi", NULL};
        char *env[] = {"A=1", NULL};
        struct docker_create c = {
            .image = "busybox:1",
            .argv = argv,
            .env = env,
            .workspace = "/home/u/ws",
            .workspace_ro = true,
            .user = "1000:1000",
            .stdin_open = true,
            .limits = {.memory_bytes = 64u << 20, .pids = 32, .tmpfs_bytes = 8u << 20},
            .session = "s1",
            .host_name = "box",
            .exec_id = 7,
            .pid = 4242,
        };
        char *s = docker_create_body(&c);
        json_t *o = json_loads(s, 0, NULL), *hc;

        assert_non_null(o);
        assert_string_equal(json_string_value(json_object_get(o, "Image")), "busybox:1");
        assert_string_equal(json_string_value(json_array_get(json_object_get(o, "Cmd"), 2)),
                            "echo hi");
        assert_int_equal(json_array_size(json_object_get(o, "Entrypoint")), 0);
        assert_string_equal(json_string_value(json_object_get(o, "User")), "1000:1000");
        assert_string_equal(json_string_value(json_object_get(o, "WorkingDir")), "/workspace");
        assert_true(json_is_true(json_object_get(o, "OpenStdin")));
        assert_true(json_is_true(json_object_get(o, "StdinOnce")));
        assert_true(json_is_false(json_object_get(o, "Tty")));
        assert_string_equal(
            json_string_value(json_object_get(json_object_get(o, "Labels"), "proctor.pid")),
            "4242");
        assert_string_equal(
            json_string_value(json_object_get(json_object_get(o, "Labels"), "proctor.exec")), "7");
        assert_string_equal(
            json_string_value(json_object_get(json_object_get(o, "Labels"), "proctor.session")),
            "s1");
        hc = json_object_get(o, "HostConfig");
        assert_int_equal(json_integer_value(json_object_get(hc, "Memory")), 64 << 20);
        assert_int_equal(json_integer_value(json_object_get(hc, "MemorySwap")), 64 << 20);
        assert_int_equal(json_integer_value(json_object_get(hc, "NanoCpus")), 1000000000);
        assert_int_equal(json_integer_value(json_object_get(hc, "PidsLimit")), 32);
        assert_string_equal(json_string_value(json_object_get(hc, "NetworkMode")), "none");
        assert_true(json_is_true(json_object_get(hc, "ReadonlyRootfs")));
        assert_true(json_is_true(json_object_get(hc, "Init")));
        assert_string_equal(json_string_value(json_array_get(json_object_get(hc, "CapDrop"), 0)),
                            "ALL");
        assert_string_equal(
            json_string_value(json_array_get(json_object_get(hc, "SecurityOpt"), 0)),
            "no-new-privileges");
        assert_string_equal(json_string_value(json_array_get(json_object_get(hc, "Binds"), 0)),
                            "/home/u/ws:/workspace:ro");
        assert_string_equal(
            json_string_value(json_object_get(json_object_get(hc, "Tmpfs"), "/tmp")),
            "rw,nosuid,nodev,mode=1777,size=8388608");
        assert_null(json_object_get(hc, "Ulimits")); /* no disk quota given */
        json_decref(o);
        free(s);

        /* The disk quota's room: RLIMIT_FSIZE, soft and hard; 0 too. */
        c.has_fsize = true;
        c.fsize = 0;
        s = docker_create_body(&c);
        o = json_loads(s, 0, NULL);
        json_t *u = json_array_get(json_object_get(json_object_get(o, "HostConfig"), "Ulimits"), 0);
        assert_string_equal(json_string_value(json_object_get(u, "Name")), "fsize");
        assert_true(json_is_integer(json_object_get(u, "Soft")));
        assert_int_equal(json_integer_value(json_object_get(u, "Soft")), 0);
        assert_int_equal(json_integer_value(json_object_get(u, "Hard")), 0);
        json_decref(o);
        free(s);
        c.fsize = 10u << 20;
        s = docker_create_body(&c);
        o = json_loads(s, 0, NULL);
        u = json_array_get(json_object_get(json_object_get(o, "HostConfig"), "Ulimits"), 0);
        assert_int_equal(json_integer_value(json_object_get(u, "Hard")), 10 << 20);
        json_decref(o);
        free(s);
        c.has_fsize = false;

        /* No workspace, no limits: nothing mounted, no Memory, cwd /. */
        c.workspace = NULL;
        c.stdin_open = false;
        memset(&c.limits, 0, sizeof(c.limits));
        s = docker_create_body(&c);
        o = json_loads(s, 0, NULL);
        hc = json_object_get(o, "HostConfig");
        assert_null(json_object_get(hc, "Binds"));
        assert_null(json_object_get(hc, "Memory"));
        assert_null(json_object_get(hc, "PidsLimit"));
        assert_string_equal(json_string_value(json_object_get(o, "WorkingDir")), "/");
        assert_true(json_is_false(json_object_get(o, "OpenStdin")));
        json_decref(o);
        free(s);
}

struct got {
        char out[256], err[256];
        size_t nout, nerr;
};

static void on_frame(void *ud, enum exec_stream s, const char *buf, size_t n)
{
        struct got *g = ud;

        if (s == EXEC_STDOUT) {
                memcpy(g->out + g->nout, buf, n);
                g->nout += n;
        } else {
                memcpy(g->err + g->nerr, buf, n);
                g->nerr += n;
        }
}

static size_t frame(char *p, int stream, const char *payload)
{
        size_t n = strlen(payload);

        p[0] = (char)stream;
        p[1] = p[2] = p[3] = 0;
        p[4] = (char)(n >> 24);
        p[5] = (char)(n >> 16);
        p[6] = (char)(n >> 8);
        p[7] = (char)n;
        memcpy(p + 8, payload, n);
        return 8 + n;
}

static void test_demux_every_split(void **state)
{
        char buf[256];
        size_t n = 0, cut, cut2;

        n += frame(buf + n, 1, "hello ");
        n += frame(buf + n, 2, "oops\n");
        n += frame(buf + n, 1, "");
        n += frame(buf + n, 1, "world\n");
        n += frame(buf + n, 3, "engine says no");
        for (cut = 0; cut <= n; cut++) {
                for (cut2 = cut; cut2 <= n; cut2 += 3) {
                        struct docker_demux d = {0};
                        struct got g = {0};
                        assert_int_equal(docker_demux_feed(&d, buf, cut, on_frame, &g), 0);
                        assert_int_equal(docker_demux_feed(&d, buf + cut, cut2 - cut, on_frame, &g),
                                         0);
                        assert_int_equal(docker_demux_feed(&d, buf + cut2, n - cut2, on_frame, &g),
                                         0);
                        assert_int_equal(g.nout, 12);
                        assert_memory_equal(g.out, "hello world\n", 12);
                        assert_int_equal(g.nerr, 19);
                        assert_memory_equal(g.err, "oops\nengine says no", 19);
                }
        }
}

static void test_demux_bad_header(void **state)
{
        struct docker_demux d = {0};
        struct got g = {0};
        char buf[64];
        size_t n = frame(buf, 1, "ok");

        /* A tty stream (raw bytes) or garbage: refused, nothing invented. */
        memcpy(buf + n, "HTTP/1.1 200", 12);
        assert_int_equal(docker_demux_feed(&d, buf, n + 12, on_frame, &g), -EPROTO);
        assert_int_equal(g.nout, 2);
        assert_int_equal(docker_demux_feed(&d, buf, n, on_frame, &g), -EPROTO);
        assert_int_equal(g.nout, 2);
        /* A length past what came: only what came is delivered. */
        struct docker_demux d2 = {0};
        struct got g2 = {0};
        memcpy(buf,
               "\x01\x00\x00\x00\x7f\xff\xff\xff"
               "abc",
               11);
        assert_int_equal(docker_demux_feed(&d2, buf, 11, on_frame, &g2), 0);
        assert_int_equal(g2.nout, 3);
}

static void test_stats(void **state)
{
        static const char v1[] =
            "{\"read\":\"2024-01-01T00:00:01Z\",\"pids_stats\":{\"current\":5,\"limit\":128},"
            "\"cpu_stats\":{\"cpu_usage\":{\"total_usage\":2500000000}},"
            "\"memory_stats\":{\"usage\":10485760,\"max_usage\":20971520,"
            "\"stats\":{\"total_inactive_file\":1048576}}}";
        static const char v2[] =
            "{\"pids_stats\":{\"current\":2},\"cpu_stats\":{\"cpu_usage\":{\"total_usage\":"
            "3000000000}},\"memory_stats\":{\"usage\":4194304,\"stats\":{\"inactive_file\":"
            "8388608}}}";
        struct docker_stats_sample a, b;
        struct exec_stats st = {0};

        assert_int_equal(docker_stats_parse(v1, sizeof(v1) - 1, &a), 0);
        assert_int_equal(a.cpu_ns, 2500000000u);
        assert_int_equal(a.mem_bytes, 9437184);
        assert_int_equal(a.mem_max, 20971520);
        assert_int_equal(a.pids, 5);
        docker_stats_fold(NULL, &a, 0, &st);
        assert_int_equal(st.cpu_ms, 2500);
        assert_int_equal(st.mem_bytes, 9437184);
        assert_int_equal(st.mem_peak_bytes, 20971520);
        assert_int_equal(st.pids, 5);
        assert_true(st.cpu_pct == 0.0);
        /* v2: no max_usage; inactive_file larger than usage is not subtracted. */
        assert_int_equal(docker_stats_parse(v2, sizeof(v2) - 1, &b), 0);
        assert_int_equal(b.mem_bytes, 4194304);
        assert_int_equal(b.mem_max, 0);
        /* 0.5 s of CPU in 1 s: 50 %; the peak stays the highest seen. */
        docker_stats_fold(&a, &b, 1000000, &st);
        assert_true(st.cpu_pct > 49.9 && st.cpu_pct < 50.1);
        assert_int_equal(st.mem_peak_bytes, 20971520);
        assert_int_equal(st.pids, 2);
        assert_int_equal(docker_stats_parse("[]", 2, &b), -EINVAL);
        assert_int_equal(docker_stats_parse("{\"x\":1}", 7, &b), -EINVAL);
        assert_int_equal(docker_stats_parse("{", 1, &b), -EINVAL);
}

static void test_inspect_and_errors(void **state)
{
        static const char j[] =
            "{\"Id\":\"ab\",\"State\":{\"Status\":\"exited\",\"ExitCode\":137,\"OOMKilled\":true,"
            "\"Pid\":0}}";
        struct docker_inspect in;
        char msg[64];

        assert_int_equal(docker_inspect_parse(j, sizeof(j) - 1, &in), 0);
        assert_int_equal(in.exit_code, 137);
        assert_true(in.oom_killed);
        assert_string_equal(in.status, "exited");
        assert_int_equal(docker_inspect_parse("{}", 2, &in), -EINVAL);
        static const char e[] = "{\"message\":\"No such image: x\\n\\u001b[31m\"}";
        docker_error_text(e, sizeof(e) - 1, msg, sizeof(msg));
        assert_string_equal(msg, "No such image: x [31m");
        docker_error_text("plain text\r\n", 12, msg, sizeof(msg));
        assert_string_equal(msg, "plain text");
}

/* Podman 4.3's compatible stats (cgroup v1), as its service sends them: no
 * memory_stats.stats or max_usage, floats beside the counters; and one whose
 * usage_in_usermode has wrapped below zero (its tick-counted kernel time
 * passed the total), which must still be read: such samples once failed to
 * parse, and a run lost every sample. */
static void test_stats_podman(void **state)
{
        static const struct {
                const char *json;
                uint64_t cpu_ns, mem_bytes;
                uint32_t pids;
        } samples[] = {
            {"{\"read\":\"2026-12-01T22:41:24.013814614Z\",\"pids_stats\":{\"current\":1},"
             "\"num_procs\":0,\"storage_stats\":{},\"cpu_stats\":{\"cpu_usage\":{\"total_usage\":"
             "29937769,\"percpu_usage\":[2740281,27197488],\"usage_in_kernelmode\":4000000},"
             "\"system_cpu_usage\":7539191963217,\"online_cpus\":2,\"cpu\":0},\"precpu_stats\":"
             "{\"cpu\":155.15550082268604},\"memory_stats\":{\"usage\":397312,\"limit\":"
             "25276059648},\"name\":\"stoic_jepsen\"}",
             29937769, 397312, 1},
            {"{\"pids_stats\":{\"current\":2},\"cpu_stats\":{\"cpu_usage\":{\"total_usage\":"
             "21907196,\"percpu_usage\":[19365715,2541481],\"usage_in_kernelmode\":24000000,"
             "\"usage_in_usermode\":18446744073707458812},\"online_cpus\":2},"
             "\"memory_stats\":{\"usage\":1077248,\"limit\":536870912}}",
             21907196, 1077248, 2},
        };
        struct docker_stats_sample a;

        for (size_t i = 0; i < sizeof(samples) / sizeof(samples[0]); i++) {
                assert_int_equal(docker_stats_parse(samples[i].json, strlen(samples[i].json), &a),
                                 0);
                assert_int_equal(a.cpu_ns, samples[i].cpu_ns);
                assert_int_equal(a.mem_bytes, samples[i].mem_bytes);
                assert_int_equal(a.mem_max, 0);
                assert_int_equal(a.pids, samples[i].pids);
        }
}

/* Podman's answers whose fix is its configuration, as its service words them. */
static void test_error_hints(void **state)
{
        static const char init[] = "{\"cause\":\"no such file or directory\",\"message\":"
                                   "\"container create: container-init binary not found on the "
                                   "host: stat /usr/libexec/podman/catatonit: no such file or "
                                   "directory\",\"response\":500}";
        static const char rlim[] =
            "{\"cause\":\"OCI permission denied\",\"message\":\"preparing container 0123 for "
            "attach: /usr/sbin/runc: runc create failed: unable to start container process: "
            "error during container init: error setting rlimits for ready process: error "
            "setting rlimit type 7: operation not permitted: OCI permission denied\","
            "\"response\":409}";
        const char *h;

        assert_non_null(h = docker_error_hint(init, sizeof(init) - 1));
        assert_non_null(strstr(h, "install catatonit"));
        assert_non_null(strstr(h, "init_path"));
        /* The cause lies past the 200 characters a message keeps. */
        assert_non_null(h = docker_error_hint(rlim, sizeof(rlim) - 1));
        assert_non_null(strstr(h, "default_ulimits"));
        /* plain HTTP to a TLS port: Go's own answer, no JSON */
        assert_non_null(
            h = docker_error_hint("Client sent an HTTP request to an HTTPS server.\n", 48));
        assert_non_null(strstr(h, "DOCKER_TLS_VERIFY=1"));
        assert_null(docker_error_hint("{\"message\":\"No such image: x\"}", 31));
        assert_null(docker_error_hint("", 0));
}

int main(void)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test(test_endpoint),           cmocka_unit_test(test_owner_labels),
            cmocka_unit_test(test_image_volumes),      cmocka_unit_test(test_owner_gone),
            cmocka_unit_test(test_create_body),        cmocka_unit_test(test_demux_every_split),
            cmocka_unit_test(test_demux_bad_header),   cmocka_unit_test(test_stats),
            cmocka_unit_test(test_stats_podman),       cmocka_unit_test(test_error_hints),
            cmocka_unit_test(test_inspect_and_errors),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
