/* prepare: the first unpack of the session's image (--image), before the
 * setup screen: on a thread, so that the screen shows how far it has come
 * and Esc, q or Ctrl-C cancel it (nothing of it kept). Internal to tui/. */
#ifndef PROCTOR_TUI_PREPARE_H
#define PROCTOR_TUI_PREPARE_H

#include <stdint.h>

#include "tui/app.h"

/* Called on the loop once the unpack has ended: rc 0 (the image is in the
 * cache), -ECANCELED, or -errno with err (which may quote the image's
 * names: escape it before a terminal). a->prep is NULL again by then. */
typedef void (*prepare_done_fn)(struct app *a, int rc, const char *err);

/* Starts unpacking REF (exec/image, its caps) into the cache; a->prep set. */
int prepare_start(struct app *a, const char *ref, uint64_t image_max, uint64_t cache_max,
                  prepare_done_fn done);
/* Asks the unpack to stop: done is called with -ECANCELED soon after. */
void prepare_cancel(struct app *a);
/* The progress card, in the middle of the screen. */
void prepare_draw(struct app *a);

#endif
