/* fuzz_docker_demux: libFuzzer harness for the attach stream's frame
 * demuxer (exec/docker/docker_api): arbitrary bytes fed whole and cut at random
 * points must give the same payload bytes per stream, never more than was
 * fed, and the stats, inspect, image and label parsers must take the same
 * bytes safely.
 *
 * Built by `make fuzz` (libFuzzer) and by `make test` (tests/fuzz/driver.c). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "exec/docker/docker_api.h"

struct run {
        uint64_t hash[3];
        size_t bytes;
};

static void on_frame(void *ud, enum exec_stream s, const char *buf, size_t n)
{
        struct run *r = ud;
        size_t i;

        if (s != EXEC_STDOUT && s != EXEC_STDERR)
                abort();
        for (i = 0; i < n; i++) {
                r->hash[s] ^= (unsigned char)buf[i];
                r->hash[s] *= 1099511628211ull;
        }
        r->bytes += n;
}

static int feed(const uint8_t *data, size_t size, uint32_t seed, struct run *r)
{
        struct docker_demux d;
        size_t off = 0;
        int rc = 0;

        memset(&d, 0, sizeof(d));
        memset(r, 0, sizeof(*r));
        r->hash[1] = r->hash[2] = 1469598103934665603ull;
        while (off < size && rc == 0) {
                size_t n = size - off;
                if (seed != 0) {
                        seed = seed * 1103515245u + 12345u;
                        n = 1 + (seed >> 16) % (n < 9 ? n : 9);
                }
                rc = docker_demux_feed(&d, (const char *)data + off, n, on_frame, r);
                off += n;
        }
        if (r->bytes > size)
                abort();
        return rc;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        struct run whole, cut;
        struct docker_stats_sample s;
        struct docker_inspect in;
        struct docker_image img;
        struct docker_owner owner;
        json_t *labels;
        struct exec_stats st = {0};
        char msg[64];
        int a, b;

        if (size < 1)
                return 0;
        a = feed(data + 1, size - 1, 0, &whole);
        b = feed(data + 1, size - 1, (uint32_t)data[0] | 1u, &cut);
        /* Cuts may end earlier on a bad header, never differently before it. */
        if (a == 0 && b == 0 && memcmp(&whole, &cut, sizeof(whole)) != 0)
                abort();
        if (docker_stats_parse((const char *)data, size, &s) == 0)
                docker_stats_fold(&s, &s, 1000, &st);
        docker_inspect_parse((const char *)data, size, &in);
        /* an image's answer, and a container list's labels (the sweep) */
        if (docker_image_parse((const char *)data, size, &img) == 0) {
                for (size_t i = 0; i < img.nvolumes; i++)
                        if (img.volumes[i][0] != '/')
                                abort();
                docker_image_clear(&img);
        }
        if ((labels = json_loadb((const char *)data, size, 0, NULL)) != NULL) {
                if (docker_owner_from_labels(labels, &owner) == 0 &&
                    (owner.pid <= 0 || strlen(owner.instance) != 32))
                        abort();
                json_decref(labels);
        }
        docker_error_text((const char *)data, size, msg, sizeof(msg));
        if (strlen(msg) >= sizeof(msg))
                abort();
        return 0;
}
