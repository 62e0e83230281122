/* bounds: the one helper the bounds of core/bounds.h need, to name a bound
 * in a message the same way wherever one is passed. */
#include "core/bounds.h"

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
