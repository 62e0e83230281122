/* docker_init: proctor's own supervisor inside each --runtime docker
 * container (`proctor container-init`), started from proctor's binary bound
 * read-only into it. It checks that the engine mounted the session's
 * workspace, bounds the per-user kernel counters, runs the command, holds
 * a wall clock, and ends the container when proctor's attach stream (its
 * stdin) closes: a SIGKILLed proctor leaves nothing running. */
#ifndef PROCTOR_DOCKER_INIT_H
#define PROCTOR_DOCKER_INIT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define DOCKER_INIT_CMD "container-init"

/* What the init is told, as its arguments (docker_init_argv). */
struct docker_init_opts {
        /* the workspace's identity on the host; has_ws false: unchecked
         * (none mounted, or a remote engine's own directory) */
        bool has_ws;
        unsigned long long ws_dev, ws_ino;
        uint64_t deadline_ms; /* 0: none */
        bool keep_stdin;      /* stdin flows to the command until it closes */
        uint64_t stdin_len;   /* else: this many bytes, then the command's EOF */
        bool has_fsize;
        uint64_t fsize;
};

/* The init's own arguments (after "container-init") for `o`, into `buf`
 * (NUL-separated strings, pointers in `out`, cap entries at least 8):
 * the number of entries. */
size_t docker_init_args(const struct docker_init_opts *o, char *buf, size_t buflen,
                        const char **out);

/* `proctor container-init OPTS -- CMD...`: never returns unless the
 * arguments are wrong (exit status 125 then). */
int docker_init_main(int argc, char **argv);

#endif
