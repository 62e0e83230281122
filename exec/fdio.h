/* fdio: whole writes to a file descriptor, retried across EINTR and
 * short writes. For any layer (exec and up); it never allocates. */
#ifndef PROCTOR_FDIO_H
#define PROCTOR_FDIO_H

#include <stddef.h>

/* Writes all n bytes of buf to fd. Returns 0, or -errno of the write that
 * failed (-EIO when one wrote nothing); bytes before it may have been
 * written. */
int fdio_write_all(int fd, const void *buf, size_t n);

#endif
