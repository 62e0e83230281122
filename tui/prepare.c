/* prepare: an image's first export and unpack run on a thread of their own
 * before the setup screen, so that the loop keeps drawing and reading keys:
 * the thread reports through the image's progress hook (under a lock, then
 * a wake-up of the loop), and a cancel flag it polls ends it cleanly
 * (exec/image keeps nothing of a cancelled unpack). When the thread ends,
 * its result goes to the caller's callback, on the loop. */
#include "tui/prepare.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "core/cli/cmd_images.h"
#include "exec/image/image.h"
#include "tui/draw.h"

struct prepare {
        struct app *a;
        char *ref;
        struct image_caps caps;
        prepare_done_fn done_fn;
        uv_thread_t thread;
        uv_async_t wake;
        uv_mutex_t lock;
        volatile int cancel;
        uint64_t t0_ms;
        /* under lock: the last progress and when its layer began */
        struct image_progress pr;
        bool seen, done;
        uint64_t layer_t0_ms, last_ms;
        /* the thread's result: read once it has been joined */
        int rc;
        char err[512];
};

static void on_progress(const struct image_progress *pr, void *ud)
{
        struct prepare *p = ud;
        uint64_t now = app_now_ms();

        uv_mutex_lock(&p->lock);
        if (!p->seen || pr->layer != p->pr.layer)
                p->layer_t0_ms = now;
        p->pr = *pr;
        p->seen = true;
        p->last_ms = now;
        uv_mutex_unlock(&p->lock);
        uv_async_send(&p->wake);
}

static void work(void *arg)
{
        struct prepare *p = arg;
        struct image *img = NULL;
        int rc = image_open(p->ref, &p->caps, &img, p->err, sizeof(p->err));

        /* the cache holds it now: the session opens it from there */
        image_free(img);
        uv_mutex_lock(&p->lock);
        p->rc = rc;
        p->done = true;
        uv_mutex_unlock(&p->lock);
        uv_async_send(&p->wake);
}

static void on_closed(uv_handle_t *h)
{
        struct prepare *p = h->data;

        uv_mutex_destroy(&p->lock);
        free(p->ref);
        free(p);
}

static void on_wake(uv_async_t *h)
{
        struct prepare *p = h->data;
        struct app *a = p->a;
        bool done;

        uv_mutex_lock(&p->lock);
        done = p->done;
        uv_mutex_unlock(&p->lock);
        app_mark_dirty(a);
        if (!done)
                return;
        uv_thread_join(&p->thread);
        a->prep = NULL;
        p->done_fn(a, p->rc, p->err);
        uv_close((uv_handle_t *)&p->wake, on_closed);
}

int prepare_start(struct app *a, const char *ref, uint64_t image_max, uint64_t cache_max,
                  prepare_done_fn done)
{
        struct prepare *p = calloc(1, sizeof(*p));
        bool locked = false;
        int rc = -ENOMEM;

        if (p == NULL || (p->ref = strdup(ref)) == NULL)
                goto fail;
        p->a = a;
        p->done_fn = done;
        p->t0_ms = app_now_ms();
        p->caps = (struct image_caps){.image_max = image_max,
                                      .cache_max = cache_max,
                                      .progress = on_progress,
                                      .progress_ud = p,
                                      .cancel = &p->cancel};
        p->wake.data = p;
        if ((rc = uv_mutex_init(&p->lock)) < 0)
                goto fail;
        locked = true;
        if ((rc = uv_async_init(a->loop, &p->wake, on_wake)) < 0)
                goto fail;
        if ((rc = uv_thread_create(&p->thread, work, p)) < 0) {
                uv_close((uv_handle_t *)&p->wake, on_closed); /* frees p */
                return rc;
        }
        a->prep = p;
        return 0;
fail:
        if (locked)
                uv_mutex_destroy(&p->lock);
        if (p != NULL)
                free(p->ref);
        free(p);
        return rc;
}

void prepare_cancel(struct app *a)
{
        if (a->prep != NULL)
                a->prep->cancel = 1;
}

/* A card in the middle of the body: what is being prepared, how far it
 * has come (layer, bytes, rate), and how to stop it. */
void prepare_draw(struct app *a)
{
        struct prepare *p = a->prep;
        struct image_progress pr;
        struct layout_rect box;
        char line[256], text[160];
        uint64_t now = app_now_ms(), t0, last;
        bool seen;

        if (p == NULL)
                return;
        uv_mutex_lock(&p->lock);
        pr = p->pr;
        seen = p->seen;
        t0 = p->layer_t0_ms;
        last = p->last_ms;
        uv_mutex_unlock(&p->lock);
        box.w = COLS - 8 < 90 ? COLS - 8 : 90;
        box.h = 8;
        box.x = (COLS - box.w) / 2;
        box.y = (LINES - box.h) / 2;
        draw_box(a, &box, "the image for this session's sandboxes", true);
        snprintf(line, sizeof(line), "image  %s", p->ref);
        draw_put_untrusted(a, box.y + 2, box.x + 2, box.w - 4, THEME_TEXT, line, strlen(line));
        if (seen)
                cmd_images_progress_text(&pr, (double)(last - t0) / 1e3, text, sizeof(text));
        else
                snprintf(text, sizeof(text), "opening it");
        snprintf(line, sizeof(line), "%s  (%.1fs)", text, (double)(now - p->t0_ms) / 1e3);
        draw_put(a, box.y + 3, box.x + 2, box.w - 4, THEME_TEXT, line);
        draw_put(a, box.y + 5, box.x + 2, box.w - 4, THEME_TEXT_DIM,
                 p->cancel ? "cancelling: nothing of it will be kept"
                           : "once unpacked it is cached: later sessions start at once");
}
