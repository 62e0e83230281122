/* bounds: how much proctor takes from a model or an MCP server, all in one
 * place. Every input either of them controls is bounded here; past a bound
 * the answer (a model.error naming the bound) or the server (failed, with
 * the bound as its reason) is refused, and proctor's memory never grows with
 * what a peer keeps sending. The values are generous for real use: each is
 * many times what a real model or server sends, and small enough that all
 * of them together cost proctor tens of MiB, not gigabytes. */
#ifndef PROCTOR_BOUNDS_H
#define PROCTOR_BOUNDS_H

#include <stdbool.h>
#include <stddef.h>

/* ---- a model's answer (core/model/chat.c, core/model/sse.c, core/model/provider_openai.c) ---- */

/* One tool call's arguments. Real calls carry a file to write at most;
 * the largest seen are a few hundred KiB. */
#define BOUNDS_TOOL_ARGS (1u << 20)
/* One answer's text (content and refusal), about a million tokens: no
 * model's output limit comes near it. */
#define BOUNDS_ANSWER_TEXT (4u << 20)
/* Tool calls in one answer; models make a handful at once. */
#define BOUNDS_TOOL_CALLS 256
/* One answer as a whole: its text, and every call's id, name and
 * arguments together, so that many calls cannot add up past it. */
#define BOUNDS_ANSWER (8u << 20)
/* One server-sent event, and one line of the stream. A streamed chunk is
 * well under 1 KiB; a server that sends the whole answer as one event
 * still fits. */
#define BOUNDS_SSE_EVENT (8u << 20)
/* JSON values in one chunk of an answer (an SSE event, or an answer sent
 * whole). Parsed, each small value costs about 45 bytes: 8 MiB of "0,"
 * would take 185 MiB. A streamed chunk holds about 20; an answer sent
 * whole with arguments sent as parsed JSON, some thousands. */
#define BOUNDS_ANSWER_JSON_VALUES (128u << 10)
/* A whole answer sent as one JSON body (a server that ignores "stream"). */
#define BOUNDS_ANSWER_JSON (8u << 20)
/* Every byte of one streamed answer, keep-alives and ignored fields
 * included: 128k output tokens stream as about 32 MiB of chunks. Without
 * it a server that never stops sending what proctor drops would hold a
 * turn forever, as the idle timeout never fires. */
#define BOUNDS_ANSWER_STREAM (256u << 20)

/* ---- an MCP server (core/tools/mcp_rpc.c, core/tools/mcp.c) ---- */

/* One JSON-RPC message (one line on stdio). A tool's result with an
 * image in base64 is a few MiB. */
#define BOUNDS_MCP_MESSAGE (8u << 20)
/* Tools one server may list. The largest real servers offer a few
 * hundred; a chat-completions request with more is refused by most APIs. */
#define BOUNDS_MCP_TOOLS 1024
/* JSON values in one MCP message: a tool's structured result of some
 * ten thousand rows still fits; parsed, at most about 45 MiB. */
#define BOUNDS_MCP_JSON_VALUES (1u << 20)
/* One server's tools together, as JSON: what a request to the model
 * carries for them. Real servers list a few hundred KiB at most. */
#define BOUNDS_MCP_LISTING (16u << 20)
/* Pages of one tools/list; servers page by 50 or 100 tools at most. A
 * cursor that comes back a second time ends the listing as well. */
#define BOUNDS_MCP_PAGES 64
/* The text of one tool call's result as proctor assembles it from the
 * result's content blocks (the model sees 25,000 characters of it; the
 * trace keeps this much). */
#define BOUNDS_MCP_RESULT (8u << 20)

/* Whether the JSON text of n bytes at p holds more than max values (each
 * scalar, array and object counts one), counted without parsing it, so
 * that what would cost too much to parse is refused first. */
bool bounds_json_values_over(const char *p, size_t n, size_t max);

/* A bound as a person reads it ("1 MiB", "48 KiB", "100 bytes"), in buf. */
const char *bounds_size_text(size_t bytes, char *buf, size_t len);

#endif
