/* cmd_images: lists and prunes the image cache (exec/image) for people.
 * Reads only the cache's own records; never opens or unpacks an image and
 * never touches anything outside the cache directory. */
#include "core/cmd_images.h"

#include <errno.h>
#include <stdint.h>
#include <string.h>
#include <time.h>

#include "exec/image.h"

static void human(uint64_t b, char *buf, size_t len)
{
        static const char *const unit[] = {"B", "K", "M", "G", "T"};
        double v = (double)b;
        unsigned u = 0;

        while (v >= 1024 && u < 4) {
                v /= 1024;
                u++;
        }
        snprintf(buf, len, u == 0 ? "%.0f%s" : "%.1f%s", v, unit[u]);
}

static void print_entry(const struct image_entry *e, void *ud)
{
        char size[32], when[32];
        struct tm tm;

        (*(unsigned *)ud)++;
        human(e->bytes, size, sizeof(size));
        localtime_r(&e->last_used, &tm);
        strftime(when, sizeof(when), "%Y-%m-%d %H:%M", &tm);
        /* sha256: plus 12 hex digits, as engines show an image id */
        printf("%-40s %-19.19s %8s  %s\n", e->ref, e->digest, size, when);
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
                        fprintf(stderr, "proctor images: %s\n", err);
                        return 1;
                }
                printf("removed %u image%s from %s\n", n, n == 1 ? "" : "s", dir);
                return 0;
        }
        printf("%-40s %-19s %8s  %s\n", "REF", "DIGEST", "SIZE", "LAST USED");
        rc = image_cache_list(print_entry, &n, err, sizeof(err));
        if (rc < 0) {
                fprintf(stderr, "proctor images: %s\n", err);
                return 1;
        }
        if (n == 0)
                printf("(no images in %s)\n", dir);
        return 0;
}

void cmd_images_notes(const struct image *img, const char *who, FILE *f)
{
        const char *user = image_user(img), *wd = image_workdir(img);

        if (image_skipped_devices(img) > 0)
                fprintf(f,
                        "%s: image %s: %u device nodes or fifos left out (a sandbox has its "
                        "own minimal /dev)\n",
                        who, image_ref(img), image_skipped_devices(img));
        if (image_dropped_setid(img) > 0)
                fprintf(f, "%s: image %s: setuid/setgid bits dropped from %u files\n", who,
                        image_ref(img), image_dropped_setid(img));
        if (user[0] != '\0')
                fprintf(f,
                        "%s: image User '%s' is not applied: the sandbox runs as proctor's "
                        "unprivileged user\n",
                        who, user);
        if (wd[0] != '\0' && strcmp(wd, "/workspace") != 0)
                fprintf(f,
                        "%s: image WorkingDir '%s' is not applied: commands start in "
                        "/workspace\n",
                        who, wd);
}
