/* bounds: the helpers the bounds of core/util/bounds.h need: naming a bound in
 * a message the same way wherever one is passed, and counting a JSON
 * text's values before it is parsed. */
#include "core/util/bounds.h"

#include <stdio.h>

const char *bounds_size_text(size_t bytes, char *buf, size_t len)
{
        if (bytes >= (1u << 20) && bytes % (1u << 20) == 0)
                snprintf(buf, len, "%zu MiB", bytes >> 20);
        else if (bytes >= (1u << 10) && bytes % (1u << 10) == 0)
                snprintf(buf, len, "%zu KiB", bytes >> 10);
        else
                snprintf(buf, len, "%zu bytes", bytes);
        return buf;
}

bool bounds_json_values_over(const char *p, size_t n, size_t max)
{
        const char *end = p + n;
        size_t values = 0;

        /* Values are separated by ',' and ':' (a key counts as one) and
         * opened by '[' and '{'; an empty container's close costs nothing
         * more. One past that count is a safe upper bound. */
        while (p < end) {
                char c = *p++;

                if (c == '"') {
                        while (p < end && *p != '"')
                                p += *p == '\\' && end - p > 1 ? 2 : 1;
                        if (p < end)
                                p++;
                } else if (c == ',' || c == ':' || c == '[' || c == '{') {
                        if (++values >= max)
                                return true;
                }
        }
        return false;
}
