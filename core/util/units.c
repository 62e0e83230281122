/* units: strict parsers for sizes and durations; anything ambiguous or out
 * of range is rejected rather than guessed. */
#include "core/util/units.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

static int parse_number(const char *s, double *v, const char **rest)
{
        char *end;

        if (s == NULL || !isdigit((unsigned char)s[0]))
                return -EINVAL;
        errno = 0;
        *v = strtod(s, &end);
        if (errno != 0 || end == s || !isfinite(*v) || *v < 0)
                return -EINVAL;
        *rest = end;
        return 0;
}

int units_parse_size(const char *s, uint64_t *bytes)
{
        static const struct {
                const char *suffix;
                double mult;
        } units[] = {
            {"", 1},
            {"b", 1},
            {"k", 1024.0},
            {"kb", 1024.0},
            {"kib", 1024.0},
            {"m", 1048576.0},
            {"mb", 1048576.0},
            {"mib", 1048576.0},
            {"g", 1073741824.0},
            {"gb", 1073741824.0},
            {"gib", 1073741824.0},
            {"t", 1099511627776.0},
            {"tb", 1099511627776.0},
            {"tib", 1099511627776.0},
        };
        const char *rest;
        double v;
        size_t i;

        if (parse_number(s, &v, &rest) < 0)
                return -EINVAL;
        for (i = 0; i < sizeof(units) / sizeof(units[0]); i++) {
                if (strcasecmp(rest, units[i].suffix) == 0) {
                        v *= units[i].mult;
                        if (v >= 18446744073709549568.0)
                                return -EINVAL;
                        *bytes = (uint64_t)v;
                        return 0;
                }
        }
        return -EINVAL;
}

int units_parse_duration(const char *s, uint64_t *ms)
{
        const char *rest;
        double v;

        if (parse_number(s, &v, &rest) < 0)
                return -EINVAL;
        if (*rest == '\0' || strcmp(rest, "s") == 0)
                v *= 1000.0;
        else if (strcmp(rest, "m") == 0 || strcmp(rest, "min") == 0)
                v *= 60000.0;
        else if (strcmp(rest, "h") == 0)
                v *= 3600000.0;
        else if (strcmp(rest, "ms") != 0)
                return -EINVAL;
        if (v >= 9.2e18)
                return -EINVAL;
        *ms = units_round(v);
        return 0;
}

uint64_t units_round(double v)
{
        uint64_t n = (uint64_t)v;

        /* v - n is exact here, so no double rounding as in (v + 0.5) */
        return v - (double)n >= 0.5 ? n + 1 : n;
}

int units_parse_uint(const char *s, uint64_t max, uint64_t *out)
{
        unsigned long long v;
        char *end;
        size_t i;

        if (s == NULL || s[0] == '\0')
                return -EINVAL;
        for (i = 0; s[i] != '\0'; i++)
                if (!isdigit((unsigned char)s[i]))
                        return -EINVAL;
        errno = 0;
        v = strtoull(s, &end, 10);
        if (errno != 0 || v > max)
                return -EINVAL;
        *out = v;
        return 0;
}
