/* mcp_preview: servers started ahead of a session, on their own engine and
 * bus, so that the setup screen can say how many tools each offers. Owns
 * its engine and client; frees itself only once both are gone. */
#include "core/tools/mcp_preview.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

struct mcp_preview {
        struct exec_engine *eng;
        struct mcp *m; /* NULL once gone */
        bool stopped, released;
        void (*changed)(void *ud);
        void *ud;
};

static void on_changed(void *ud)
{
        struct mcp_preview *p = ud;

        if (!p->stopped && p->changed != NULL)
                p->changed(p->ud);
}

static void on_gone(void *ud)
{
        struct mcp_preview *p = ud;

        p->m = NULL;
        if (p->released)
                free(p);
}

int mcp_preview_new(uv_loop_t *loop, const struct exec_engine_opts *eo, const struct mcp_opts *o,
                    const char *servers_json, void (*changed)(void *ud), void *ud,
                    struct mcp_preview **out, char *err, size_t errlen)
{
        struct mcp_preview *p = calloc(1, sizeof(*p));
        struct mcp_opts mo = *o;
        int rc;

        if (p == NULL)
                return -ENOMEM;
        p->changed = changed;
        p->ud = ud;
        if ((rc = exec_engine_new(loop, eo, &p->eng, err, errlen)) < 0) {
                free(p);
                return rc;
        }
        mo.eng = p->eng;
        mo.bus = bus_new();
        mo.own_bus = true;
        mo.changed = on_changed;
        mo.gone = on_gone;
        mo.ud = p;
        if (mo.bus == NULL) {
                snprintf(err, errlen, "out of memory");
                rc = -ENOMEM;
        } else if ((rc = mcp_new(loop, &mo, servers_json, &p->m, err, errlen)) < 0) {
                bus_free(mo.bus);
        }
        if (rc < 0) {
                exec_engine_free(p->eng);
                free(p);
                return rc;
        }
        mcp_start(p->m, NULL, NULL);
        *out = p;
        return 0;
}

const struct mcp *mcp_preview_mcp(const struct mcp_preview *p)
{
        return p->m;
}

unsigned mcp_preview_live(const struct mcp_preview *p)
{
        return p->m != NULL ? mcp_live(p->m) : 0;
}

void mcp_preview_stop(struct mcp_preview *p)
{
        if (p->stopped)
                return;
        p->stopped = true;
        mcp_stop(p->m);
}

void mcp_preview_free(struct mcp_preview *p)
{
        struct exec_engine *eng;
        struct mcp *m;

        if (p == NULL)
                return;
        mcp_preview_stop(p);
        eng = p->eng;
        m = p->m;
        p->released = true;
        /* may free p (no servers: nothing to wait for) */
        mcp_free(m);
        exec_engine_free(eng);
}
