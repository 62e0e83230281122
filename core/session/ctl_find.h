/* ctl_find: the live sessions of this user on this host, found by their
 * sockets (ctl.h) and asked for their status: for `proctor ls` and
 * `proctor attach`. */
#ifndef PROCTOR_CTL_FIND_H
#define PROCTOR_CTL_FIND_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

/* The status line of the session listening on `path`, NULL when it did
 * not answer within a second (*dead: no one listens there any more). */
json_t *ctl_ask_status(const char *path, bool *dead);

/* Every session's status object, oldest first (a JSON array); one that
 * does not answer is {"session_id", "state":"not answering"}; the socket
 * of a session whose process is gone is removed. 0, or -errno with err. */
int ctl_find_all(json_t **out, char *err, size_t errlen);

/* The socket path of session `id` (which must look like an id: letters,
 * digits, - and _). 0, or -errno with err. */
int ctl_socket_path(const char *id, char *path, size_t len, char *err, size_t errlen);

#endif
