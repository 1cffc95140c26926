/* sched_impl.h: what sched.c shares with its SGLang variant (sched_sglang.c);
 * not for other modules. */
#ifndef SIM_SCHED_IMPL_H
#define SIM_SCHED_IMPL_H

#include "serve/sched.h"

/* Adds request idx's entry to step st and its part to the step's description (st->bd, what the cost model sees;
 * sched_schedule clears it and sets bd.prefills): `before` is the tokens it had cached before this step. A verify
 * (drafts > 0) is 1 + drafts queries over the sequence's cache, its last query reading all of it. */
static inline void sched__item_push(sched_step *st, uint32_t idx, uint32_t tokens, bool samples, uint8_t drafts,
                                    uint8_t emit, uint32_t before) {
  SIM_GROW(st->items, st->cap_items, st->n_items + 1);
  st->items[st->n_items++] = (sched_item){idx, tokens, samples, drafts, emit};
  batch_desc *out = &st->bd;
  out->num_tokens += tokens;
  out->num_seqs++;
  if (drafts) {
    out->num_decode++;
    out->decode_ctx_tokens += (uint64_t)before + tokens;
    out->spec_seqs++;
    out->spec_tokens += drafts;
  } else if (tokens == 1) {
    out->num_decode++;
    out->decode_ctx_tokens += (uint64_t)before + 1;
  } else {
    SIM_GROW(st->chunks, st->cap_chunks, out->num_prefill + 1);
    st->chunks[out->num_prefill].chunk_tokens = tokens;
    st->chunks[out->num_prefill].ctx_tokens = before;
    out->num_prefill++;
  }
  if (samples) out->num_sample++;
}
/* Returns a request's blocks to the pool and frees its table's memory. */
void sched__release(sched *s, request *r);
/* What request r's tokens are, for prefix hashing (kv.h). */
kv_content sched__content_of(const sched *s, const request *r);
/* Whether request r's tokens can be shared (prefix ids or a session; else sched__content_of says KV_CONTENT_NONE
 * and kv_commit registers nothing). */
static inline bool sched__shares(const request *r) { return r->n_hash || r->session; }
/* A step computes n tokens of request idx (counted at scheduling time, sched.h, vLLM V1): the tokens count as
 * computed, the blocks they fill are registered for prefix caching, and a step reaching the end of the known
 * tokens adds a placeholder. Inline: it runs for every request of every step. */
static inline void sched__account(sched *s, sched_step *st, request *reqs, uint32_t idx, uint32_t n) {
  request *r = &reqs[idx];
  uint32_t before = r->num_computed;
  bool samples = before + n == r->num_tokens + r->pending;
  r->num_computed = before + n;
  /* a block fills: register its hash (num_computed / block_tokens > n_hashed, without the division). Not for
     content nobody shares (neither prefix ids nor a session: kv_commit does nothing for it), which with SGLang's
     page size 1 would otherwise build a kv_content for every request at every step. */
  if (sched__shares(r) && (uint64_t)r->num_computed >= ((uint64_t)r->kv.n_hashed + 1) * s->block_tokens) {
    kv_content c = sched__content_of(s, r);
    kv_commit(s->kv, &r->kv, &c, r->num_computed);
  }
  if (samples) r->pending++;
  sched__item_push(st, idx, n, samples, 0, samples ? 1 : 0, before);
}

/* SGLang (ADMIT_TOKEN_RATIO): the ratio's initial state, and one step into st (nothing added when nothing
 * can run). */
void sched__sglang_init(sched *s);
void sched__sglang(sched *s, sched_step *st, request *reqs, sim_ns now);

#endif
