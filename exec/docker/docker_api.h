/* docker_api: the pure parts of speaking to a Docker Engine (or Podman's
 * compatible service): where it listens, the create request's JSON, the
 * attach stream's frames, and the stats and inspect answers. No I/O here,
 * so that unit tests and the fuzz harness drive every byte of it. */
#ifndef PROCTOR_EXEC_DOCKER_API_H
#define PROCTOR_EXEC_DOCKER_API_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "exec/exec.h"
#include "exec/native/selfrun.h"

/* The API version every request names: both Docker 20.10+ and Podman's
 * compatible service speak it. */
#define DOCKER_API_PREFIX "/v1.41"

struct docker_endpoint {
        char shown[300];          /* as the user gave it, for messages */
        char unix_path[PATH_MAX]; /* "" for tcp */
        char host[256];           /* tcp: host name or address */
        int port;
        bool tls;
        char ca[PATH_MAX], cert[PATH_MAX], key[PATH_MAX]; /* tls only */
        char base_url[320];                               /* scheme://host[:port]/v1.41 */
};

/* From `docker_host` (NULL or "": unix:///var/run/docker.sock), and for
 * tcp the TLS settings the docker CLI reads: tls_verify non-empty turns on
 * https with cert_dir (NULL or "": $HOME/.docker) holding ca.pem,
 * cert.pem and key.pem. 0 or -EINVAL with err filled. */
int docker_endpoint_parse(const char *docker_host, const char *tls_verify, const char *cert_dir,
                          const char *home, struct docker_endpoint *ep, char *err, size_t errlen);

/* What a container is created with (see docker_create_body). */
struct docker_create {
        const char *image;
        char *const *argv;
        char *const *env;      /* NULL-terminated or NULL */
        const char *workspace; /* host directory; NULL: none is mounted */
        bool workspace_ro;
        const char *user; /* "UID:GID" */
        bool stdin_open;
        struct exec_limits limits;
        const char *session, *host_name;
        uint64_t exec_id;
        /* Who made it, for the sweep (docker_owner_gone): proctor's pid,
         * its start time (clock ticks since boot), a random id of the
         * process and this boot's id. */
        int pid;
        const struct docker_owner *owner;
        /* The command is proctor itself (a file tool): its binary and
         * libraries bound read-only (see exec/native/selfrun); or NULL. */
        const struct selfrun *self;
        /* The profile the engine loads (seccomp_policy_profile_json), or
         * NULL for the engine's default. */
        const char *seccomp_profile;
        /* RLIMIT_FSIZE for its processes (the disk quota's room), when set. */
        bool has_fsize;
        uint64_t fsize;
};

/* The proctor process that made a container, as its labels say. */
struct docker_owner {
        char host[256];
        char boot[40];     /* /proc/sys/kernel/random/boot_id */
        char instance[33]; /* random, per process */
        int pid;
        unsigned long long start; /* /proc/PID/stat field 22 */
};

/* This process's own (pid, start time, boot id, a fresh instance id,
 * `host`): 0 or -errno. */
int docker_owner_self(struct docker_owner *o, const char *host);

/* The owner a container's labels (its Labels object) name: 0, or -EINVAL
 * when any of them is missing or malformed: such a container is not
 * proctor's to remove. */
int docker_owner_from_labels(json_t *labels, struct docker_owner *o);

/* Whether `o` names a proctor process of this host and boot (`self`)
 * that no longer runs: its pid is gone, or it now belongs to a process
 * that started at another time. `start_of` reads a pid's start time (0
 * or -errno: -ESRCH when there is no such process). */
bool docker_owner_gone(const struct docker_owner *o, const struct docker_owner *self,
                       int (*start_of)(int pid, unsigned long long *start));

/* A process's start time from /proc/PID/stat (field 22), 0 or -errno. */
int docker_proc_start(int pid, unsigned long long *start);

/* The size of a container's /tmp (and of a tmpfs over an image's volume,
 * where no disk quota bounds it lower). */
uint64_t docker_tmpfs_bytes(const struct exec_limits *l);

/* The JSON body of POST /containers/create (malloc'ed), or NULL. */
char *docker_create_body(const struct docker_create *c);

/* An image as the engine has it (GET /images/NAME/json): its id, and the
 * paths its config declares as volumes (which the engine would back with
 * anonymous volumes, outside the workspace's disk quota). */
struct docker_image {
        char id[80]; /* "sha256:..." */
        char **volumes;
        size_t nvolumes;
};
/* 0, or -EINVAL when `json` is no image (or names none by id). */
int docker_image_parse(const char *json, size_t n, struct docker_image *img);
void docker_image_clear(struct docker_image *img);

/* A create body (docker_create_body's) pinned to the image `img` names by
 * id, with a tmpfs of `size` bytes over each of its volumes instead of an
 * anonymous volume: malloc'ed, or NULL. */
char *docker_create_pin(const char *body, const struct docker_image *img, uint64_t size);

/* The attach stream without a tty: frames of an 8-byte header (stream
 * type, three zero bytes, big-endian length) and a payload. */
struct docker_demux {
        unsigned char hdr[8];
        size_t hlen;
        uint32_t left; /* payload bytes still due for the current frame */
        int stream;
        bool bad; /* a header that is no frame's: the rest is dropped */
};
typedef void (*docker_frame_cb)(void *ud, enum exec_stream s, const char *buf, size_t n);
/* Feeds `n` bytes; payload pieces go to cb as they come (stdout as
 * EXEC_STDOUT, stderr and the engine's own error stream as EXEC_STDERR).
 * 0, or -EPROTO once the stream is not a frame stream. */
int docker_demux_feed(struct docker_demux *d, const char *buf, size_t n, docker_frame_cb cb,
                      void *ud);

/* One object of the stats stream. */
struct docker_stats_sample {
        uint64_t cpu_ns;    /* cpu_stats.cpu_usage.total_usage */
        uint64_t mem_bytes; /* usage less inactive file cache, as `docker stats` */
        uint64_t mem_max;   /* max_usage (cgroup v1), 0 when absent */
        uint32_t pids;      /* pids_stats.current */
};
/* 0, or -EINVAL when `json` is no stats object. */
int docker_stats_parse(const char *json, size_t n, struct docker_stats_sample *s);
/* The stats between two samples `dt_us` apart (prev NULL: the first). */
void docker_stats_fold(const struct docker_stats_sample *prev,
                       const struct docker_stats_sample *cur, uint64_t dt_us,
                       struct exec_stats *st);

struct docker_inspect {
        int exit_code;
        bool oom_killed;
        int pid;
        char status[32];
};
int docker_inspect_parse(const char *json, size_t n, struct docker_inspect *in);

/* The engine's {"message": ...} (or the body itself, cut), for people. */
void docker_error_text(const char *body, size_t n, char *out, size_t outlen);

/* The fix for an engine error whose cause is the engine's configuration
 * rather than the request (Podman's missing container init, rlimits it
 * may not raise), or NULL. `body` is the engine's answer. */
const char *docker_error_hint(const char *body, size_t n);

#endif
