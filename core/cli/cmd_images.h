/* cmd_images: `proctor images [prune]`, the image cache for --image, and the
 * notes a person gets about an image's settings proctor does not apply. */
#ifndef PROCTOR_CMD_IMAGES_H
#define PROCTOR_CMD_IMAGES_H

#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

struct image;
struct image_caps;
struct image_progress;

int cmd_images_main(int argc, char **argv);

/* Says, on f, what of the image is shown but not applied (User,
 * WorkingDir) and what unpacking left out (device nodes, setuid bits). */
void cmd_images_notes(const struct image *img, const char *who, FILE *f);

/* A first unpack's progress, shown on stderr when it is a terminal
 * ("WHO: unpacking layer 2 of 5: 120M of 400M, 85 MB/s"), and Ctrl-C
 * ending it cleanly (-ECANCELED, nothing kept). start fills caps' hooks and
 * takes SIGINT; end clears the line and gives SIGINT back. */
struct image_meter {
        const char *who;
        unsigned layer;
        uint64_t layer_t0_ns;
        bool shown;
        struct sigaction old_int;
};
/* A first export's or unpack's progress as one line ("unpacking layer 2 of
 * 5: 120M of 400M, 85 MB/s"), secs since the layer (or export) began. */
void cmd_images_progress_text(const struct image_progress *p, double secs, char *out, size_t len);
void cmd_images_meter_start(struct image_meter *m, const char *who, struct image_caps *caps);
void cmd_images_meter_end(struct image_meter *m);

#endif
