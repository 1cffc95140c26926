/* sched_acct.c: the per-request bookkeeping of a scheduled step that vLLM's
 * scheduler (sched.c) and SGLang's (sched_sglang.c) share (sched_impl.h). */
#include "serve/sched_impl.h"

void sched__item_push(sched_step *st, uint32_t idx, uint32_t tokens, bool samples) {
  SIM_GROW(st->items, st->cap_items, st->n_items + 1);
  st->items[st->n_items++] = (sched_item){idx, tokens, samples, 0, samples ? 1 : 0};
}

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

/* The step's effect on a request, at scheduling time (vLLM V1): the tokens
 * count as computed, the blocks they fill are registered for prefix caching,
 * and a step reaching the end of the known tokens adds a placeholder. */
void sched__account(sched *s, sched_step *st, request *reqs, uint32_t idx, uint32_t n) {
  request *r = &reqs[idx];
  bool samples = r->num_computed + n == r->num_tokens + r->pending;
  r->num_computed += n;
  /* a block fills: register its hash (num_computed / block_tokens > n_hashed, without the division). Not for
     content nobody shares (neither prefix ids nor a session: kv_commit does nothing for it), which with SGLang's
     page size 1 would otherwise build a kv_content for every request at every step. */
  if (sched__shares(r) && (uint64_t)r->num_computed >= ((uint64_t)r->kv.n_hashed + 1) * s->block_tokens) {
    kv_content c = sched__content_of(s, r);
    kv_commit(s->kv, &r->kv, &c, r->num_computed);
  }
  if (samples) r->pending++;
  sched__item_push(st, idx, n, samples);
}
