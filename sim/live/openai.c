/* openai.c: OpenAI request bodies in, responses out (see openai.h). */
#include "live/openai.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/common.h"

uint64_t oai_text_tokens(size_t utf8_bytes) { return (utf8_bytes + 3) / 4; }

/* ---- output buffer -------------------------------------------------------------------------------- */

void oai_buf_free(oai_buf *b) {
  free(b->p);
  memset(b, 0, sizeof *b);
}

void oai_printf(oai_buf *b, const char *fmt, ...) {
  for (;;) {
    size_t room = b->cap - b->len;
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(b->p ? b->p + b->len : NULL, b->p ? room : 0, fmt, ap);
    va_end(ap);
    SIM_ASSERT(n >= 0);
    if (b->p && (size_t)n < room) {
      b->len += (size_t)n;
      return;
    }
    SIM_GROW(b->p, b->cap, b->len + (size_t)n + 1);
  }
}

/* Length of the valid UTF-8 sequence at p (1..4), or 0 when it is not one. */
static int utf8_len(const unsigned char *p) {
  int n = p[0] < 0x80 ? 1 : (p[0] >> 5) == 6 ? 2 : (p[0] >> 4) == 14 ? 3 : (p[0] >> 3) == 30 ? 4 : 0;
  for (int i = 1; i < n; i++)
    if ((p[i] >> 6) != 2) return 0;
  return n;
}

void oai_json_str(oai_buf *b, const char *s) {
  oai_printf(b, "\"");
  for (const unsigned char *p = (const unsigned char *)s; *p;) {
    int n = utf8_len(p);
    if (*p == '"' || *p == '\\') oai_printf(b, "\\%c", *p);
    else if (*p < 0x20) oai_printf(b, "\\u%04x", *p);
    else if (n > 1) oai_printf(b, "%.*s", n, (const char *)p);
    else if (n == 0) oai_printf(b, "\\ufffd"); /* not UTF-8 (a client's model name): the replacement character */
    else oai_printf(b, "%c", *p);
    p += n > 1 ? n : 1;
  }
  oai_printf(b, "\"");
}

/* ---- prompt-block ids (prefix caching) --------------------------------------------------------------- */

static uint64_t fnv(uint64_t h, const void *p, size_t n) {
  const unsigned char *b = p;
  for (size_t i = 0; i < n; i++) h = (h ^ b[i]) * 0x100000001b3ull;
  return h;
}

static uint64_t block_seed(char kind, uint64_t j) {
  uint64_t h = fnv(0xcbf29ce484222325ull, &kind, 1);
  return fnv(h, &j, sizeof j);
}

/* Text of a completion prompt: block j's tokens [j b, (j + 1) b) are the BOS (j = 0) and the bytes the rule
 * gives them. */
static void text_ids(oai_request *q, const char *s, size_t len, uint32_t b) {
  for (uint32_t j = 0; j < q->n_ids; j++) {
    uint64_t t0 = (uint64_t)j * b, t1 = t0 + b; /* tokens; token t >= 1 is bytes [4 (t - 1), 4 t) */
    size_t lo = t0 ? (size_t)SIM_MIN(4 * (t0 - 1), (uint64_t)len) : 0, hi = (size_t)SIM_MIN(4 * (t1 - 1), (uint64_t)len);
    q->ids[j] = fnv(block_seed('T', j), s + lo, hi - lo);
  }
}

/* Token ids: b at a time. */
static void token_ids(oai_request *q, const cJSON *a, uint32_t b) {
  const cJSON *e = a->child;
  for (uint32_t j = 0; j < q->n_ids; j++) {
    uint64_t h = block_seed('I', j);
    for (uint32_t t = 0; t < b && e; t++, e = e->next) {
      uint64_t v = (uint64_t)e->valuedouble;
      h = fnv(h, &v, sizeof v);
    }
    q->ids[j] = h;
  }
}

/* A chat: its messages' roles and contents in order, 4 b bytes a block. */
static void chat_ids(oai_request *q, const cJSON *ms, uint32_t b) {
  oai_buf s = {0};
  const cJSON *m;
  cJSON_ArrayForEach(m, ms) {
    oai_printf(&s, "%s\x1e", cJSON_GetObjectItemCaseSensitive(m, "role")->valuestring);
    const cJSON *c = cJSON_GetObjectItemCaseSensitive(m, "content"), *part;
    if (cJSON_IsString(c)) oai_printf(&s, "%s", c->valuestring);
    else if (cJSON_IsArray(c))
      cJSON_ArrayForEach(part, c) oai_printf(&s, "%s", cJSON_GetObjectItemCaseSensitive(part, "text")->valuestring);
    oai_printf(&s, "\x1f");
  }
  for (uint32_t j = 0; j < q->n_ids; j++) {
    size_t lo = SIM_MIN((size_t)4 * b * j, s.len), hi = SIM_MIN((size_t)4 * b * (j + 1), s.len);
    q->ids[j] = fnv(block_seed('C', j), s.p + lo, hi - lo);
  }
  oai_buf_free(&s);
}

void oai_request_free(oai_request *q) {
  free(q->ids);
  q->ids = NULL;
  q->n_ids = 0;
}

/* ---- requests ------------------------------------------------------------------------------------- */

static int bad(char *msg, size_t cap, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int bad(char *msg, size_t cap, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, cap, fmt, ap);
  va_end(ap);
  return 400;
}

static const char *type_name(const cJSON *v) {
  if (cJSON_IsNull(v)) return "null";
  if (cJSON_IsBool(v)) return "a boolean";
  if (cJSON_IsNumber(v)) return "a number";
  if (cJSON_IsString(v)) return "a string";
  if (cJSON_IsArray(v)) return "an array";
  return "an object";
}

/* A non-negative integer field (absent or null: *has = false). */
static int get_uint(const cJSON *o, const char *key, uint64_t lo, bool *has, uint64_t *out, char *msg, size_t cap) {
  const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
  *has = false;
  if (!v || cJSON_IsNull(v)) return 0;
  double d = v->valuedouble;
  if (!cJSON_IsNumber(v) || d != floor(d) || !isfinite(d))
    return bad(msg, cap, "'%s' must be an integer, got %s", key, cJSON_IsNumber(v) ? "a fraction" : type_name(v));
  if (d < (double)lo) return bad(msg, cap, "'%s' must be at least %llu, got %.0f", key, (unsigned long long)lo, d);
  if (d > 4294967295.0) return bad(msg, cap, "'%s' is too large (%.0f)", key, d);
  *has = true;
  *out = (uint64_t)d;
  return 0;
}

static int get_bool(const cJSON *o, const char *key, bool *out, char *msg, size_t cap) {
  const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
  if (!v || cJSON_IsNull(v)) return 0;
  if (!cJSON_IsBool(v)) return bad(msg, cap, "'%s' must be a boolean, got %s", key, type_name(v));
  *out = cJSON_IsTrue(v);
  return 0;
}

/* Token ids: an array of integers in [0, 2^32) (a vocabulary index; larger numbers cannot name a token, and the
 * block ids read them as integers). */
static int count_ids(const cJSON *a, const char *key, uint64_t *n, char *msg, size_t cap) {
  uint64_t k = 0;
  const cJSON *e;
  cJSON_ArrayForEach(e, a) {
    if (!cJSON_IsNumber(e) || !(e->valuedouble >= 0 && e->valuedouble < 4294967296.0) ||
        e->valuedouble != floor(e->valuedouble))
      return bad(msg, cap, "'%s'[%llu] must be a token id (an integer from 0 to 4294967295), got %s", key,
                 (unsigned long long)k, type_name(e));
    k++;
  }
  *n = k;
  return 0;
}

static int completion_prompt(const cJSON *o, uint64_t *tokens, char *msg, size_t cap) {
  const cJSON *ids = cJSON_GetObjectItemCaseSensitive(o, "prompt_token_ids");
  const cJSON *p = cJSON_GetObjectItemCaseSensitive(o, "prompt");
  if (ids && !cJSON_IsNull(ids)) {
    if (p && !cJSON_IsNull(p)) return bad(msg, cap, "give either 'prompt' or 'prompt_token_ids', not both");
    if (!cJSON_IsArray(ids)) return bad(msg, cap, "'prompt_token_ids' must be an array of token ids, got %s", type_name(ids));
    return count_ids(ids, "prompt_token_ids", tokens, msg, cap);
  }
  if (!p || cJSON_IsNull(p)) return bad(msg, cap, "'prompt' is required");
  if (cJSON_IsString(p)) {
    *tokens = 1 + oai_text_tokens(strlen(p->valuestring));
    return 0;
  }
  if (cJSON_IsArray(p)) {
    const cJSON *first = p->child;
    if (!first) return bad(msg, cap, "'prompt' is an empty array");
    if (cJSON_IsNumber(first)) return count_ids(p, "prompt", tokens, msg, cap);
    if (cJSON_IsArray(first) || cJSON_IsString(first)) {
      if (first->next) return bad(msg, cap, "'prompt' holds several prompts: servesim serve answers one prompt per request");
      if (cJSON_IsString(first)) {
        *tokens = 1 + oai_text_tokens(strlen(first->valuestring));
        return 0;
      }
      return count_ids(first, "prompt[0]", tokens, msg, cap);
    }
  }
  return bad(msg, cap, "'prompt' must be a string, an array of token ids or a one-element array, got %s", type_name(p));
}

static int chat_prompt(const cJSON *o, uint64_t *tokens, char *msg, size_t cap) {
  const cJSON *ms = cJSON_GetObjectItemCaseSensitive(o, "messages");
  if (!ms || cJSON_IsNull(ms)) return bad(msg, cap, "'messages' is required");
  if (!cJSON_IsArray(ms)) return bad(msg, cap, "'messages' must be an array, got %s", type_name(ms));
  if (!ms->child) return bad(msg, cap, "'messages' is empty");
  uint64_t t = 1 + 4; /* BOS, the assistant header to generate after */
  unsigned k = 0;
  const cJSON *m;
  cJSON_ArrayForEach(m, ms) {
    if (!cJSON_IsObject(m)) return bad(msg, cap, "'messages'[%u] must be an object, got %s", k, type_name(m));
    const cJSON *role = cJSON_GetObjectItemCaseSensitive(m, "role");
    if (!cJSON_IsString(role)) return bad(msg, cap, "'messages'[%u].role must be a string", k);
    const cJSON *c = cJSON_GetObjectItemCaseSensitive(m, "content");
    size_t bytes = 0;
    if (cJSON_IsString(c)) {
      bytes = strlen(c->valuestring);
    } else if (cJSON_IsArray(c)) { /* content parts: text ones count */
      unsigned j = 0;
      const cJSON *part;
      cJSON_ArrayForEach(part, c) {
        const cJSON *ty = cJSON_GetObjectItemCaseSensitive(part, "type");
        const cJSON *tx = cJSON_GetObjectItemCaseSensitive(part, "text");
        if (!cJSON_IsString(ty) || strcmp(ty->valuestring, "text") || !cJSON_IsString(tx))
          return bad(msg, cap, "'messages'[%u].content[%u]: only text parts ({\"type\": \"text\", \"text\": ...}) are "
                     "supported", k, j);
        bytes += strlen(tx->valuestring);
        j++;
      }
    } else if (c && !cJSON_IsNull(c)) {
      return bad(msg, cap, "'messages'[%u].content must be a string or an array of parts, got %s", k, type_name(c));
    }
    t += 5 + oai_text_tokens(bytes);
    k++;
  }
  *tokens = t;
  return 0;
}

/* The prompt's block ids (after its tokens are counted). */
static void name_blocks(oai_request *q, const cJSON *root, uint32_t b) {
  uint64_t n = b ? q->prompt_tokens / b : 0;
  if (!n) return;
  q->n_ids = (uint32_t)SIM_MIN(n, (uint64_t)UINT32_MAX);
  q->ids = sim_calloc(q->n_ids, sizeof *q->ids);
  if (q->kind == OAI_CHAT) {
    chat_ids(q, cJSON_GetObjectItemCaseSensitive(root, "messages"), b);
    return;
  }
  const cJSON *p = cJSON_GetObjectItemCaseSensitive(root, "prompt_token_ids");
  if (!p || cJSON_IsNull(p)) p = cJSON_GetObjectItemCaseSensitive(root, "prompt");
  if (cJSON_IsArray(p) && (cJSON_IsArray(p->child) || cJSON_IsString(p->child))) p = p->child; /* one-element list */
  if (cJSON_IsString(p)) text_ids(q, p->valuestring, strlen(p->valuestring), b);
  else token_ids(q, p, b);
}

int oai_parse(oai_kind kind, const char *body, size_t len, uint32_t block_tokens, oai_request *out, char *msg,
              size_t cap) {
  memset(out, 0, sizeof *out);
  out->kind = kind;
  const char *end = NULL;
  cJSON *root = cJSON_ParseWithLengthOpts(body, len, &end, 0);
  if (!root) {
    size_t at = end && end >= body ? (size_t)(end - body) : 0;
    return bad(msg, cap, "the request body is not valid JSON (at byte %zu of %zu)", at, len);
  }
  int rc = 0;
  if (!cJSON_IsObject(root)) {
    rc = bad(msg, cap, "the request body must be a JSON object, got %s", type_name(root));
    goto done;
  }
  const cJSON *model = cJSON_GetObjectItemCaseSensitive(root, "model");
  if (model && !cJSON_IsNull(model)) {
    if (!cJSON_IsString(model)) {
      rc = bad(msg, cap, "'model' must be a string, got %s", type_name(model));
      goto done;
    }
    size_t ml = strlen(model->valuestring);
    if (ml >= sizeof out->model) out->model_too_long = true;
    else memcpy(out->model, model->valuestring, ml + 1);
  }
  rc = kind == OAI_CHAT ? chat_prompt(root, &out->prompt_tokens, msg, cap)
                        : completion_prompt(root, &out->prompt_tokens, msg, cap);
  if (rc) goto done;
  bool has = false;
  uint64_t v = 0;
  if (kind == OAI_CHAT && (rc = get_uint(root, "max_completion_tokens", 1, &has, &v, msg, cap))) goto done;
  if (!has && (rc = get_uint(root, "max_tokens", 1, &has, &v, msg, cap))) goto done;
  out->has_max_tokens = has;
  out->max_tokens = v;
  if (kind == OAI_COMPLETIONS && !has) { /* the completions API's default (vLLM CompletionRequest: 16) */
    out->has_max_tokens = true;
    out->max_tokens = 16;
  }
  uint64_t n = 1;
  if ((rc = get_uint(root, "n", 1, &has, &n, msg, cap))) goto done;
  if (has && n != 1) {
    rc = bad(msg, cap, "'n' = %llu: servesim serve generates one choice per request (n = 1)", (unsigned long long)n);
    goto done;
  }
  if ((rc = get_bool(root, "ignore_eos", &out->ignore_eos, msg, cap))) goto done;
  if ((rc = get_bool(root, "stream", &out->stream, msg, cap))) goto done;
  const cJSON *so = cJSON_GetObjectItemCaseSensitive(root, "stream_options");
  if (so && !cJSON_IsNull(so)) {
    if (!out->stream) {
      rc = bad(msg, cap, "Stream options can only be defined when `stream=True`.");
      goto done;
    }
    if (!cJSON_IsObject(so)) {
      rc = bad(msg, cap, "'stream_options' must be an object, got %s", type_name(so));
      goto done;
    }
    if ((rc = get_bool(so, "include_usage", &out->include_usage, msg, cap))) goto done;
  }
  name_blocks(out, root, block_tokens);
done:
  cJSON_Delete(root);
  return rc;
}

/* ---- responses ------------------------------------------------------------------------------------ */

static const char *error_type(int status) {
  switch (status) {
    case 400: return "BadRequestError";
    case 404: return "NotFoundError";
    case 405: return "MethodNotAllowedError";
    case 413: return "PayloadTooLargeError";
    case 503: return "ServiceUnavailableError";
    default: return "InternalServerError";
  }
}

void oai_error(oai_buf *b, int status, const char *message) {
  oai_printf(b, "{\"error\":{\"message\":");
  oai_json_str(b, message);
  oai_printf(b, ",\"type\":\"%s\",\"param\":null,\"code\":%d}}", error_type(status), status);
}

void oai_stream_error(oai_buf *b, int status, const char *message) {
  oai_printf(b, "data: ");
  oai_error(b, status, message);
  oai_printf(b, "\n\n");
}

/* The placeholder text of `tokens` output tokens, quoted. */
static void text(oai_buf *b, uint64_t tokens) {
  static const char tok[] = " tok";
  size_t n = (sizeof tok - 1) * tokens;
  SIM_GROW(b->p, b->cap, b->len + n + 3);
  b->p[b->len++] = '"';
  for (uint64_t i = 0; i < tokens; i++, b->len += sizeof tok - 1) memcpy(b->p + b->len, tok, sizeof tok - 1);
  b->p[b->len++] = '"';
  b->p[b->len] = '\0';
}

static void usage(oai_buf *b, const oai_reply *r) {
  oai_printf(b, "{\"prompt_tokens\":%llu,\"total_tokens\":%llu,\"completion_tokens\":%llu}",
             (unsigned long long)r->prompt_tokens, (unsigned long long)(r->prompt_tokens + r->completion_tokens),
             (unsigned long long)r->completion_tokens);
}

static void head(oai_buf *b, const oai_reply *r, const char *object) {
  oai_printf(b, "{\"id\":\"%s\",\"object\":\"%s\",\"created\":%lld,\"model\":", r->id, object, r->created);
  oai_json_str(b, r->model);
}

static void finish(oai_buf *b, const char *reason) {
  if (reason) oai_printf(b, ",\"finish_reason\":\"%s\",\"stop_reason\":null", reason);
  else oai_printf(b, ",\"finish_reason\":null,\"stop_reason\":null");
}

void oai_response(oai_buf *b, const oai_reply *r) {
  if (r->kind == OAI_CHAT) {
    head(b, r, "chat.completion");
    oai_printf(b, ",\"choices\":[{\"index\":0,\"message\":{\"role\":\"assistant\",\"content\":");
    text(b, r->completion_tokens);
    oai_printf(b, ",\"tool_calls\":[]},\"logprobs\":null");
  } else {
    head(b, r, "text_completion");
    oai_printf(b, ",\"choices\":[{\"index\":0,\"text\":");
    text(b, r->completion_tokens);
    oai_printf(b, ",\"logprobs\":null");
  }
  finish(b, r->finish_reason);
  oai_printf(b, "}],\"usage\":");
  usage(b, r);
  oai_printf(b, "}");
}

void oai_chunk(oai_buf *b, const oai_reply *r, uint32_t tokens, bool role) {
  oai_printf(b, "data: ");
  if (r->kind == OAI_CHAT) {
    head(b, r, "chat.completion.chunk");
    oai_printf(b, ",\"choices\":[{\"index\":0,\"delta\":{");
    if (role) oai_printf(b, "\"role\":\"assistant\",\"content\":\"\"");
    else {
      oai_printf(b, "\"content\":");
      text(b, tokens);
    }
    oai_printf(b, "},\"logprobs\":null");
  } else {
    head(b, r, "text_completion");
    oai_printf(b, ",\"choices\":[{\"index\":0,\"text\":");
    text(b, tokens);
    oai_printf(b, ",\"logprobs\":null");
  }
  finish(b, r->finish_reason);
  oai_printf(b, "}]}\n\n");
}

void oai_usage_chunk(oai_buf *b, const oai_reply *r) {
  oai_printf(b, "data: ");
  head(b, r, r->kind == OAI_CHAT ? "chat.completion.chunk" : "text_completion");
  oai_printf(b, ",\"choices\":[],\"usage\":");
  usage(b, r);
  oai_printf(b, "}\n\n");
}
