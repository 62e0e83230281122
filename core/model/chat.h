/* chat: the OpenAI chat-completions wire format. Builds streaming requests
 * and assembles streamed chunks (content deltas, tool-call deltas split
 * across chunks, usage, finish reason) into one assistant message. */
#ifndef PROCTOR_CHAT_H
#define PROCTOR_CHAT_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct chat_tool_call {
        char *id; /* from the model, or "call_p<n>" (unique in the process) when it sent none */
        char *name;
        char *arguments; /* raw JSON text as streamed; may be invalid JSON */
};

struct chat_usage {
        int64_t prompt_tokens, completion_tokens; /* -1 when not reported */
};

struct chat_message {
        char *content; /* "" when none */
        struct chat_tool_call *calls;
        size_t ncalls;
        struct chat_usage usage;
        char *finish_reason; /* NULL when not reported */
        bool refusal;        /* content is the model's refusal ("refusal" deltas) */
};

void chat_message_free(struct chat_message *m);

/* Assembles one streamed response. */
struct chat_stream;

/* on_delta receives each content fragment as it arrives. */
struct chat_stream *chat_stream_new(void (*on_delta)(const char *text, size_t n, void *ud),
                                    void *ud);
void chat_stream_free(struct chat_stream *s);

/* What one answer may hold; chat_stream_new takes core/util/bounds.h's. */
struct chat_bounds {
        size_t tool_args; /* bytes of one call's arguments */
        size_t text;      /* bytes of content and refusal */
        size_t calls;     /* tool calls */
        size_t answer;    /* bytes of all of it: text, ids, names, arguments */
};

/* Other bounds than core/util/bounds.h's (tests make them small). */
void chat_stream_set_bounds(struct chat_stream *s, const struct chat_bounds *b);

/* One SSE data payload. Returns 0; 1 when it was "[DONE]"; -EBADMSG with err
 * filled when the payload is not a valid chunk (not JSON, or an "error"
 * object, whose message goes to err); -E2BIG with err naming the bound
 * when the answer would pass one of its bounds: nothing of that payload is
 * kept, and the answer should be given up. */
int chat_stream_chunk(struct chat_stream *s, const char *data, size_t len, char *err,
                      size_t errlen);

/* After chat_stream_chunk failed on an "error" payload: that payload (an
 * object or a string), for its code; NULL otherwise. Valid until the next
 * chunk. */
const json_t *chat_stream_error(const struct chat_stream *s);

/* The finish_reason received so far; NULL while none came. */
const char *chat_stream_finish_reason(const struct chat_stream *s);

/* Moves the assembled message out (tool calls in index order). */
void chat_stream_take(struct chat_stream *s, struct chat_message *out);

/* The request body: {"model", "messages", "tools" (omitted when empty),
 * "stream": true, "stream_options": {"include_usage": true}}. */
json_t *chat_request(const char *model, const json_t *messages, const json_t *tools,
                     bool stream_options);

/* What an answer's ending means for whoever reads it, in words ("the
 * answer is incomplete: ..." for "length"); false, with out empty, for
 * the ordinary endings (stop, tool_calls, none reported). */
bool chat_finish_note(const char *finish_reason, char *out, size_t len);

/* The assistant message as it goes back into the conversation. */
json_t *chat_message_json(const struct chat_message *m);

#endif
