/* cmd_images: lists and prunes the image cache (exec/image) for people.
 * Reads only the cache's own records; never opens or unpacks an image and
 * never touches anything outside the cache directory. Every name it shows
 * goes through core/view/safetext. */
#include "core/cli/cmd_images.h"

#include <errno.h>
#include <stdint.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "core/view/termout.h"
#include "exec/image/image.h"

static volatile int meter_cancel;

static void meter_interrupt(int sig)
{
        (void)sig;
        meter_cancel = 1;
}

static uint64_t meter_now_ns(void)
{
        struct timespec ts;

        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

void cmd_images_progress_text(const struct image_progress *p, double secs, char *out, size_t len)
{
        char done[32], total[32];
        int n;

        image_size_text(p->done, done, sizeof(done));
        image_size_text(p->total, total, sizeof(total));
        if (p->layers == 0)
                n = snprintf(out, len, "exporting from the engine: %s", done);
        else
                n = snprintf(out, len, "unpacking layer %u of %u: %s of %s", p->layer, p->layers,
                             done, total);
        if (n >= 0 && (size_t)n < len && secs > 0.05)
                snprintf(out + n, len - (size_t)n, ", %.0f MB/s", (double)p->done / secs / 1e6);
}

static void meter_show(const struct image_progress *p, void *ud)
{
        struct image_meter *m = ud;
        char text[160];

        if (!m->shown || p->layer != m->layer) {
                m->layer = p->layer;
                m->layer_t0_ns = meter_now_ns();
        }
        cmd_images_progress_text(p, (double)(meter_now_ns() - m->layer_t0_ns) / 1e9, text,
                                 sizeof(text));
        fprintf(stderr, "\r%s: %s\033[K", m->who, text); /* the rest of a longer line erased */
        fflush(stderr);
        m->shown = true;
}

void cmd_images_meter_start(struct image_meter *m, const char *who, struct image_caps *caps)
{
        struct sigaction sa;

        memset(m, 0, sizeof(*m));
        m->who = who;
        meter_cancel = 0;
        memset(&sa, 0, sizeof(sa));
        sa.sa_handler = meter_interrupt;
        sigemptyset(&sa.sa_mask);
        sigaction(SIGINT, &sa, &m->old_int);
        caps->cancel = &meter_cancel;
        if (isatty(2)) {
                caps->progress = meter_show;
                caps->progress_ud = m;
        }
}

void cmd_images_meter_end(struct image_meter *m)
{
        if (m->shown)
                fprintf(stderr, "\r\033[K");
        sigaction(SIGINT, &m->old_int, NULL);
}

static void print_entry(const struct image_entry *e, void *ud)
{
        char size[32], when[32];
        struct tm tm;

        (*(unsigned *)ud)++;
        image_size_text(e->bytes, size, sizeof(size));
        localtime_r(&e->last_used, &tm);
        strftime(when, sizeof(when), "%Y-%m-%d %H:%M", &tm);
        /* sha256: plus 12 hex digits, as engines show an image id */
        /* The ref is a file name or an engine's name: shown, never obeyed. */
        termout_message(stdout, "%-40s %-19.19s %8s  %s\n", e->ref, e->digest, size, when);
}

int cmd_images_main(int argc, char **argv)
{
        char dir[4096], err[512];
        unsigned n = 0;
        int rc;

        if (argc > 1 && (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0)) {
                printf("usage: proctor images [prune]\n\n"
                       "Lists the images unpacked for --image (ref, digest, size, last used),\n"
                       "or removes them all with their layers (prune). The cache is\n"
                       "$XDG_CACHE_HOME/proctor/images (default ~/.cache/proctor/images).\n");
                return 0;
        }
        if (argc > 2 || (argc == 2 && strcmp(argv[1], "prune") != 0)) {
                fprintf(stderr,
                        "proctor images: unknown argument '%s' (usage: proctor images "
                        "[prune])\n",
                        argv[argc - 1]);
                return 2;
        }
        if ((rc = image_cache_dir(dir, sizeof(dir))) < 0) {
                fprintf(stderr, "proctor images: no cache directory: %s\n", strerror(-rc));
                return 1;
        }
        if (argc == 2) {
                rc = image_cache_prune(&n, err, sizeof(err));
                if (rc < 0) {
                        termout_message(stderr, "proctor images: %s\n", err);
                        return 1;
                }
                termout_message(stdout, "removed %u image%s from %s\n", n, n == 1 ? "" : "s", dir);
                return 0;
        }
        printf("%-40s %-19s %8s  %s\n", "REF", "DIGEST", "SIZE", "LAST USED");
        rc = image_cache_list(print_entry, &n, err, sizeof(err));
        if (rc < 0) {
                termout_message(stderr, "proctor images: %s\n", err);
                return 1;
        }
        if (n == 0)
                termout_message(stdout, "(no images in %s)\n", dir);
        return 0;
}

void cmd_images_notes(const struct image *img, const char *who, FILE *f)
{
        const char *user = image_user(img), *wd = image_workdir(img);

        /* The ref, User and WorkingDir come from the operator's command
         * line and the image's config: through safetext, as every such name. */
        if (image_skipped_devices(img) > 0)
                termout_message(f,
                                "%s: image %s: %u device nodes or fifos left out (a sandbox has "
                                "its own minimal /dev)\n",
                                who, image_ref(img), image_skipped_devices(img));
        if (image_dropped_setid(img) > 0)
                termout_message(f, "%s: image %s: setuid/setgid bits dropped from %u files\n", who,
                                image_ref(img), image_dropped_setid(img));
        if (user[0] != '\0')
                termout_message(f,
                                "%s: image User '%s' is not applied: the sandbox runs as "
                                "proctor's unprivileged user\n",
                                who, user);
        if (wd[0] != '\0' && strcmp(wd, "/workspace") != 0)
                termout_message(f,
                                "%s: image WorkingDir '%s' is not applied: commands start in "
                                "/workspace\n",
                                who, wd);
}
