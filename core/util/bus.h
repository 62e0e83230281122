/* bus: a session's event stream. Every layer reports what happens as JSON
 * events; subscribers (trace writer, headless printer, view model) receive
 * each one in order. The bus stamps seq and t_ms; it never blocks. */
#ifndef PROCTOR_BUS_H
#define PROCTOR_BUS_H

#include <jansson.h>
#include <stdint.h>

struct bus;

typedef void (*bus_fn)(const json_t *event, void *ud);

struct bus *bus_new(void);
void bus_free(struct bus *b);
/* Subscribers are called in the order they subscribed. 0 or -ENOMEM. */
int bus_subscribe(struct bus *b, bus_fn fn, void *ud);
/* The subscriber no longer receives events (safe from inside one). */
void bus_unsubscribe(struct bus *b, bus_fn fn, void *ud);

/* Emits an event of `type` with the fields of `fields` (stolen; may be
 * NULL). Adds seq (from 1), t_ms (since the first event, the session's
 * start: not since the bus was made, which may be long before) and type. */
void bus_emit(struct bus *b, const char *type, json_t *fields);

/* Writes all of buf to fd, retrying short writes; gives up on errors. */
void bus_write_all(int fd, const char *buf, size_t n);

/* A subscriber printing each event as one compact JSON line on stdout. */
void bus_print_jsonl(const json_t *event, void *ud);

/* Milliseconds since the first event (the events' clock; before one, since
 * the bus was made). */
uint64_t bus_now_ms(const struct bus *b);

/* A JSON string from bytes that may not be UTF-8: invalid sequences
 * become U+FFFD. Never NULL unless out of memory. */
json_t *bus_string(const char *buf, size_t n);

#endif
