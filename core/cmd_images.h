/* cmd_images: `proctor images [prune]`, the image cache for --image, and the
 * notes a person gets about an image's settings proctor does not apply. */
#ifndef PROCTOR_CMD_IMAGES_H
#define PROCTOR_CMD_IMAGES_H

#include <stdio.h>

struct image;

int cmd_images_main(int argc, char **argv);

/* Says, on f, what of the image is shown but not applied (User,
 * WorkingDir) and what unpacking left out (device nodes, setuid bits). */
void cmd_images_notes(const struct image *img, const char *who, FILE *f);

#endif
