/* linediff: the line diff (see linediff.h). The common start and end are
 * set aside first, so that an edit of a few lines in a long file costs a
 * table of those few lines only. */
#include "core/view/linediff.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

struct span {
        const char *p;
        size_t len;
};

/* Splits text into lines (a last line without "\n" counts); NULL and *n 0
 * for "". */
static struct span *split(const char *s, size_t len, size_t *n)
{
        size_t k = 0, i, cap = 0;
        struct span *v;
        const char *p = s, *end = s + len, *nl;

        for (i = 0; i < len; i++)
                cap += s[i] == '\n';
        cap += len > 0 && s[len - 1] != '\n';
        *n = 0;
        if (cap == 0)
                return NULL;
        v = malloc(cap * sizeof(*v));
        if (v == NULL)
                return NULL;
        while (p < end) {
                nl = memchr(p, '\n', (size_t)(end - p));
                v[k].p = p;
                v[k].len = nl != NULL ? (size_t)(nl - p) : (size_t)(end - p);
                p += v[k++].len + 1;
        }
        *n = k;
        return v;
}

static int same(const struct span *a, const struct span *b)
{
        return a->len == b->len && memcmp(a->p, b->p, a->len) == 0;
}

static int push(struct linediff *d, size_t *cap, char op, const struct span *s, size_t skipped)
{
        if (d->n == *cap) {
                size_t ncap = *cap ? *cap * 2 : 64;
                struct linediff_line *g = realloc(d->lines, ncap * sizeof(*g));
                if (g == NULL)
                        return -ENOMEM;
                d->lines = g;
                *cap = ncap;
        }
        d->lines[d->n++] = (struct linediff_line){
            .op = op, .text = s ? s->p : "", .len = s ? s->len : 0, .skipped = skipped};
        d->added += op == '+';
        d->removed += op == '-';
        return 0;
}

/* The full edit script, every unchanged line included, as ops into a, b. */
static char *script(const struct span *a, size_t na, const struct span *b, size_t nb, size_t *nops)
{
        size_t pre = 0, suf = 0, ma, mb, i, j, k = 0;
        uint16_t *t;
        char *ops;

        while (pre < na && pre < nb && same(&a[pre], &b[pre]))
                pre++;
        while (suf < na - pre && suf < nb - pre && same(&a[na - 1 - suf], &b[nb - 1 - suf]))
                suf++;
        ma = na - pre - suf;
        mb = nb - pre - suf;
        if (ma > LINEDIFF_MAX_LINES || mb > LINEDIFF_MAX_LINES) {
                errno = E2BIG;
                return NULL;
        }
        ops = malloc(na + nb + 1);
        t = calloc((ma + 1) * (mb + 1), sizeof(*t));
        if (ops == NULL || t == NULL) {
                free(ops);
                free(t);
                errno = ENOMEM;
                return NULL;
        }
        /* t[i][j]: the LCS of the middles' tails from i and j */
#define T(i, j) t[(i) * (mb + 1) + (j)]
        for (i = ma; i-- > 0;)
                for (j = mb; j-- > 0;)
                        T(i, j) = same(&a[pre + i], &b[pre + j])
                                      ? (uint16_t)(T(i + 1, j + 1) + 1)
                                      : (T(i + 1, j) >= T(i, j + 1) ? T(i + 1, j) : T(i, j + 1));
        memset(ops, ' ', pre);
        k = pre;
        for (i = 0, j = 0; i < ma || j < mb;) {
                if (i < ma && j < mb && same(&a[pre + i], &b[pre + j])) {
                        ops[k++] = ' ';
                        i++, j++;
                } else if (i < ma && (j == mb || T(i + 1, j) >= T(i, j + 1))) {
                        ops[k++] = '-'; /* a change reads old first, then new */
                        i++;
                } else {
                        ops[k++] = '+';
                        j++;
                }
        }
#undef T
        memset(ops + k, ' ', suf);
        *nops = k + suf;
        free(t);
        return ops;
}

int linediff_compute(const char *old, size_t oldlen, const char *new, size_t newlen, size_t context,
                     struct linediff *out)
{
        size_t na, nb, nops = 0, i, ia = 0, ib = 0, cap = 0;
        struct span *a = split(old, oldlen, &na), *b = split(new, newlen, &nb);
        char *ops = NULL;
        int rc = 0;

        memset(out, 0, sizeof(*out));
        if ((na > 0 && a == NULL) || (nb > 0 && b == NULL)) {
                rc = -ENOMEM;
                goto done;
        }
        ops = script(a, na, b, nb, &nops);
        if (ops == NULL) {
                rc = -errno;
                goto done;
        }
        for (i = 0; i < nops && rc == 0;) {
                size_t run = 0, lead, trail;
                if (ops[i] != ' ') {
                        rc = ops[i] == '+' ? push(out, &cap, '+', &b[ib++], 0)
                                           : push(out, &cap, '-', &a[ia++], 0);
                        i++;
                        continue;
                }
                while (i + run < nops && ops[i + run] == ' ')
                        run++;
                /* context after the change before, and before the next */
                lead = i > 0 && context < run ? context : i > 0 ? run : 0;
                trail = i + run < nops && context < run - lead ? context
                        : i + run < nops                       ? run - lead
                                                               : 0;
                for (size_t k = 0; k < run && rc == 0; k++) {
                        if (k == lead && run > lead + trail)
                                rc = push(out, &cap, '@', NULL, run - lead - trail);
                        if (k < lead || k >= run - trail)
                                rc = rc ? rc : push(out, &cap, ' ', &a[ia], 0);
                        ia++, ib++;
                }
                i += run;
        }
done:
        free(ops);
        free(a);
        free(b);
        if (rc < 0)
                linediff_free(out);
        return rc;
}

void linediff_free(struct linediff *d)
{
        free(d->lines);
        memset(d, 0, sizeof(*d));
}
