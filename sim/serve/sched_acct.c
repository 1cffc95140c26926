/* sched_acct.c: the per-request bookkeeping of a scheduled step that vLLM's
 * scheduler (sched.c) and SGLang's (sched_sglang.c) share (sched_impl.h). */
#include "serve/sched_impl.h"

/* Returns its blocks to the pool and frees its block table's memory (a
 * million finished requests must not keep a table each). */
void sched__release(sched *s, request *r) {
  kv_seq_free(s->kv, &r->kv);
  kv_seq_deinit(&r->kv);
}

uint32_t sched_cached_prefix(const sched *s, const request *reqs, uint32_t idx) {
  kv_content c = sched__content_of(s, &reqs[idx]);
  return kv_peek_prefix(s->kv, &c, reqs[idx].prompt_tokens);
}

/* What request r's tokens are, for prefix hashing (kv.h). */
kv_content sched__content_of(const sched *s, const request *r) {
  kv_content c = {.uid = (uint64_t)r->id + 1, .prompt_tokens = r->prompt_tokens};
  if (r->n_hash) {
    c.kind = KV_CONTENT_HASH_IDS;
    c.hash_ids = s->hash_ids + r->hash_off;
    c.n_hash = r->n_hash;
    c.hash_block_tokens = s->hash_block_tokens;
  } else if (r->session) {
    c.kind = KV_CONTENT_SESSION;
    c.session = r->session;
  }
  return c;
}
