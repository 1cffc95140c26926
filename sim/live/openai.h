/* openai.h: the OpenAI API as vLLM's server speaks it, for `servesim serve`:
 * reading /v1/completions and /v1/chat/completions request bodies, and
 * writing responses, stream chunks and errors. No sockets, no simulation.
 *
 * Prompt length (servesim has no tokenizer; the rule is documented in
 * docs/SERVE.md and applied the same way everywhere):
 *   - token ids (`prompt` as an array of integers, or vLLM's
 *     `prompt_token_ids`): their count, exactly;
 *   - text: 1 (BOS) + ceil(UTF-8 bytes / 4) for a completion prompt (about
 *     4 bytes per token for English text with Llama-3/GPT-4-class
 *     tokenizers); a chat: 1 + sum over messages of (5 + ceil(content bytes
 *     / 4)) + 4, the shape of Llama 3's chat template (a header of 4 special
 *     tokens and the role around each message, the assistant header to
 *     generate after).
 * Output tokens are placeholders: each token is the text " tok".
 *
 * Prefix caching: a prompt is also named block by block (oai_request.ids: one
 * 64-bit id per full KV block of b tokens; equal ids = equal tokens), so
 * requests that share a prefix share KV blocks as in vLLM: token ids are
 * hashed b at a time; text by the bytes the rule above gives those tokens
 * (token 0 the BOS, token t >= 1 the bytes [4 (t - 1), 4 t)); a chat by its
 * messages' roles and contents in order, 4 b bytes per block (the template's
 * tokens are not placed exactly: two chats share blocks while their message
 * bytes agree).
 *
 * Errors are vLLM's: a JSON body {"error": {"message", "type", "param",
 * "code"}} with the HTTP status in code. */
#ifndef SIM_LIVE_OPENAI_H
#define SIM_LIVE_OPENAI_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef enum oai_kind { OAI_COMPLETIONS = 0, OAI_CHAT } oai_kind;

typedef struct oai_request {
  oai_kind kind;
  char model[256];       /* as given ("" = not given: the served model) */
  bool model_too_long;   /* longer than model[]: cannot be ours */
  uint64_t prompt_tokens;
  bool has_max_tokens;
  uint64_t max_tokens;   /* max_tokens, or for chat max_completion_tokens (preferred) */
  bool ignore_eos;       /* vLLM's extension: generate exactly max_tokens */
  bool stream;
  bool include_usage;    /* stream_options.include_usage */
  uint64_t *ids;         /* prompt-block ids for prefix caching (owned; oai_request_free) */
  uint32_t n_ids;        /* full blocks: prompt_tokens / block_tokens */
} oai_request;

/* Parses a request body; block_tokens > 0 also names the prompt's blocks
 * (ids). Returns 0, or an HTTP status (400) with a message naming the field
 * and the problem in msg. Unknown fields are ignored (clients send sampling
 * parameters that do not change timing). */
int oai_parse(oai_kind kind, const char *body, size_t len, uint32_t block_tokens, oai_request *out, char *msg,
              size_t msg_cap);
/* Frees what oai_parse allocated (also after a refusal). */
void oai_request_free(oai_request *q);

/* Tokens of a text under the rule above (without the BOS). */
uint64_t oai_text_tokens(size_t utf8_bytes);

/* A growable output buffer. */
typedef struct oai_buf {
  char *p;
  size_t len, cap;
} oai_buf;
void oai_buf_free(oai_buf *b);
void oai_printf(oai_buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* s as a JSON string literal (quotes included). */
void oai_json_str(oai_buf *b, const char *s);

/* The error body: {"error": {...}} (type from the status: BadRequestError,
 * NotFoundError, ...). */
void oai_error(oai_buf *b, int status, const char *message);

typedef struct oai_reply {
  oai_kind kind;
  const char *id;        /* "cmpl-..." / "chatcmpl-..." */
  long long created;     /* Unix seconds */
  const char *model;
  uint64_t prompt_tokens, completion_tokens;
  const char *finish_reason; /* "length" or "stop"; NULL while streaming */
} oai_reply;

/* The whole non-streamed response. */
void oai_response(oai_buf *b, const oai_reply *r);
/* One SSE event ("data: {...}\n\n") carrying `tokens` placeholder tokens
 * (0 = an empty delta: the chat role chunk when role is set), with
 * finish_reason when r->finish_reason is set. */
void oai_chunk(oai_buf *b, const oai_reply *r, uint32_t tokens, bool role);
/* The usage event of stream_options.include_usage (empty choices). */
void oai_usage_chunk(oai_buf *b, const oai_reply *r);
/* An error inside a started stream: data: {"error": ...}. */
void oai_stream_error(oai_buf *b, int status, const char *message);

#endif
