/* sse: an incremental parser for server-sent events (text/event-stream), as
 * streamed by OpenAI-compatible chat completions. Fed arbitrary chunks; never
 * allocates per event beyond the line being assembled. */
#ifndef PROCTOR_SSE_H
#define PROCTOR_SSE_H

#include <stddef.h>

/* One complete event: `event` is the event name ("message" when none was
 * given), `data` the data lines joined with '\n' (NUL-terminated, len bytes).
 * Comments (lines starting with ':', keep-alives) are not reported. */
typedef void (*sse_event_fn)(const char *event, const char *data, size_t len, void *ud);

struct sse_parser;

struct sse_parser *sse_new(sse_event_fn fn, void *ud);
void sse_free(struct sse_parser *p);

/* Feeds bytes; handles \n, \r\n and \r line ends split anywhere. Returns 0,
 * or -E2BIG when one event exceeds the limit (default BOUNDS_SSE_EVENT,
 * core/util/bounds.h): the parser
 * then skips to the next blank line. */
int sse_feed(struct sse_parser *p, const char *buf, size_t n);

/* End of stream: dispatches an event left without its final blank line. */
void sse_finish(struct sse_parser *p);

/* The largest event accepted, in bytes (its data and name together), which
 * also bounds the length of one line; 0 restores the default. */
void sse_set_limit(struct sse_parser *p, size_t max);

/* The last event ID seen ("id:" field; "" when none), which a reconnecting
 * client sends back as Last-Event-ID. */
const char *sse_last_id(const struct sse_parser *p);

/* The reconnection delay the server asked for ("retry:" field), in ms;
 * -1 when it sent none. */
long long sse_retry_ms(const struct sse_parser *p);

#endif
