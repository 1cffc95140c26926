/* fuzz_openai.c: `servesim serve`'s request bodies (live/openai.h): the first
 * byte picks the endpoint (completions or chat), the rest is the body. The
 * contract: 0, or 400 with a message; an accepted request's response and
 * stream chunks are valid JSON (checked with cJSON) and its prompt has one
 * block id per full 16 tokens. */
#include <cjson/cJSON.h>

#include "fuzz_common.h"
#include "live/openai.h"

static void valid_json(const char *p, size_t n) {
  cJSON *j = cJSON_ParseWithLength(p, n);
  if (!j) {
    fprintf(stderr, "invalid JSON written: %.*s\n", (int)n, p);
    abort();
  }
  cJSON_Delete(j);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size < 1) return 0;
  oai_kind kind = data[0] & 1 ? OAI_CHAT : OAI_COMPLETIONS;
  oai_request q;
  char msg[512] = "";
  int st = oai_parse(kind, (const char *)data + 1, size - 1, 16, &q, msg, sizeof msg);
  if (st != 0 && (st != 400 || !msg[0])) {
    fprintf(stderr, "oai_parse: status %d, message '%s': the contract is 0 or 400 with a message\n", st, msg);
    abort();
  }
  oai_buf b = {0};
  if (st) {
    oai_error(&b, st, msg); /* the message goes back to the client inside JSON */
    valid_json(b.p, b.len);
  } else {
    oai_reply r = {kind, "cmpl-x", 1, q.model, q.prompt_tokens, q.max_tokens % 64, "length"};
    oai_response(&b, &r);
    valid_json(b.p, b.len);
    b.len = 0;
    oai_chunk(&b, &r, 1, false);
    if (b.len < 8 || memcmp(b.p, "data: ", 6)) abort();
    valid_json(b.p + 6, b.len - 8);
  }
  if (!st && q.n_ids != q.prompt_tokens / 16) abort(); /* one id per full block */
  oai_buf_free(&b);
  oai_request_free(&q);
  return 0;
}
