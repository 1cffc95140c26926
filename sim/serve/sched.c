/* sched.c: vLLM V1 continuous batching with a batch queue, for one replica
 * (see sched.h). */
#include "serve/sched.h"

#include "serve/sched_impl.h"

#include "config/specdec.h"

#include <stdlib.h>
#include <string.h>

int sched_init(sched *s, const sched_cfg *cfg, uint32_t kv_blocks, uint32_t block_tokens, bool prefix_caching) {
  memset(s, 0, sizeof *s);
  s->cfg = *cfg;
  s->kv = kv_new(kv_blocks, block_tokens, prefix_caching);
  s->caching = prefix_caching;
  s->block_tokens = block_tokens;
  s->depth = cfg->pipeline_stages > 1 ? cfg->pipeline_stages : cfg->async_scheduling ? 2 : 1;
  SIM_ASSERT(s->depth >= 1 && s->depth <= SCHED_MAX_DEPTH);
  s->q = sim_calloc(s->depth, sizeof *s->q);
  if (cfg->admission == ADMIT_TOKEN_RATIO) sched__sglang_init(s);
  ring_init(&s->waiting, 16); /* grows with the queue: an idle replica of a fleet costs little */
  s->run_start = sim_calloc((size_t)block_tokens + 1, sizeof *s->run_start);
  return SIM_OK;
}

void sched_deinit(sched *s) {
  kv_free(s->kv);
  ring_free(&s->waiting);
  free(s->running);
  free(s->run_ord);
  free(s->run_start);
  for (uint32_t k = 0; s->q && k < s->depth; k++) {
    free(s->q[k].items);
    free(s->q[k].chunks);
  }
  free(s->q);
  memset(s, 0, sizeof *s);
}

uint32_t sched_pop_head(sched *s) { return ring_pop_front(&s->waiting); }

void sched_add(sched *s, request *reqs, uint32_t idx) {
  reqs[idx].state = RQ_WAITING;
  ring_push_back(&s->waiting, idx);
}

/* --- scheduling --------------------------------------------------------------- */

/* Preempts by recompute: free blocks, reset progress, front of the queue.
 * Tokens it has in flight (pending) still arrive when their steps end. */
static void preempt(sched *s, request *reqs, uint32_t idx) {
  request *r = &reqs[idx];
  kv_content c = sched__content_of(s, r);
  kv_commit_own(s->kv, &r->kv, &c, r->num_computed); /* its blocks stay findable after the free */
  sched__release(s, r);
  r->num_computed = 0;
  r->ext_tokens = 0; /* the KV it received went with its blocks: it recomputes */
  r->preemptions++;
  r->state = RQ_WAITING;
  s->preemptions++;
  ring_push_front(&s->waiting, idx);
}

static uint32_t cap_chunk(const sched *s, uint32_t n, uint32_t budget) {
  if (n > budget) n = budget;
  if (s->cfg.long_prefill_token_threshold && n > s->cfg.long_prefill_token_threshold)
    n = s->cfg.long_prefill_token_threshold;
  return n;
}


/* A speculating decode (vLLM V1, v1/core/sched/scheduler.py): the step computes the last sampled token and
 * `drafts` draft tokens; the accepted count is drawn now from the acceptance rates (a hash of the run's seed, the
 * request and its position: the same whatever the order of events), so the step's tokens are known when it is
 * scheduled. The accepted drafts' KV stays (num_computed += accepted + 1); the rejected positions are not computed
 * (vLLM: num_computed_tokens -= rejected in update_from_output), their slots, in blocks the request keeps
 * (allocate_slots never shrinks a request), are written again by its next step. It emits accepted + 1 tokens, never
 * past its output length (vLLM stops at max_tokens). */
static void account_spec(sched *s, sched_step *st, request *reqs, uint32_t idx, uint32_t drafts) {
  request *r = &reqs[idx];
  uint32_t left = r->output_tokens - r->generated - r->pending;
  double x = specdec_uniform(s->cfg.spec_seed, r->id, (uint64_t)r->num_tokens + r->pending);
  uint32_t a = specdec_accepted(s->cfg.spec_rates, drafts, x), e = a + 1 < left ? a + 1 : left;
  s->spec_drafts++;
  s->spec_draft_tokens += drafts;
  s->spec_accepted += a;
  for (uint32_t p = 0; p < a; p++) s->spec_accepted_pos[p]++;
  uint32_t before = r->num_computed;
  r->num_computed += e;
  if (sched__shares(r) && (uint64_t)r->num_computed >= ((uint64_t)r->kv.n_hashed + 1) * s->block_tokens) {
    kv_content c = sched__content_of(s, r);
    kv_commit(s->kv, &r->kv, &c, r->num_computed);
  }
  r->pending += e;
  sched__item_push(st, idx, 1 + drafts, true, (uint8_t)drafts, (uint8_t)e, before);
}

/* 1. running requests, in admission order. Returns whether it preempted. */
static bool schedule_running(sched *s, sched_step *st, request *reqs, uint32_t *budget) {
  bool preempted = false;
  uint32_t i = 0;
  /* speculation: every running request's KV allocation covers num_lookahead_tokens more (scheduler.py passes them
     to allocate_slots for running requests); drafts only where the batch is within the engine's cut-off */
  uint32_t look = s->cfg.spec_k ? s->cfg.spec_lookahead : 0;
  bool spec = s->cfg.spec_k && !(s->cfg.spec_disable_bs && s->n_running > s->cfg.spec_disable_bs);
  while (i < s->n_running && *budget > 0) {
    uint32_t idx = s->running[i];
    request *r = &reqs[idx];
    uint32_t placeholders = s->cfg.async_scheduling ? r->pending : 0;
    if (r->generated + r->pending >= r->output_tokens || /* its last token is in flight: seat held, no step */
        r->num_tokens + placeholders == r->num_computed) { /* no placeholders: waits for its token */
      i++;
      continue;
    }
    uint32_t n = cap_chunk(s, r->num_tokens + placeholders - r->num_computed, *budget);
    SIM_ASSERT(n > 0);
    /* a decode (its one token the last sampled one) of a request with output so far verifies drafts too: as many
       as the token budget leaves (scheduler.py trims spec_token_ids to the scheduled tokens) */
    uint32_t drafts = spec && n == 1 && r->generated + r->pending > 0 ? SIM_MIN(s->cfg.spec_k, *budget - 1) : 0;
    uint32_t upto = r->num_computed + n + drafts + look;
    /* fast path: the tokens fit in the blocks it already holds (most decode steps) */
    bool fits = (uint64_t)upto <= (uint64_t)r->kv.n_blocks * s->block_tokens;
    if (s->cfg.admission == ADMIT_ON_DEMAND && !fits) {
      kv_content c = sched__content_of(s, r);
      while (!kv_allocate(s->kv, &r->kv, &c, 0, upto)) {
        uint32_t victim = s->running[--s->n_running];
        preempt(s, reqs, victim);
        preempted = true;
        if (victim == idx) break;
      }
      if (s->n_running == i) break; /* it preempted itself */
    }
    if (drafts) account_spec(s, st, reqs, idx, drafts);
    else sched__account(s, st, reqs, idx, n);
    *budget -= n + drafts;
    i++;
  }
  return preempted;
}

/* 2. waiting requests, head first. */
static void schedule_waiting(sched *s, sched_step *st, request *reqs, uint32_t *budget, sim_ns now) {
  while (s->waiting.len && s->n_running < s->cfg.max_num_seqs && *budget > 0) {
    uint32_t idx = ring_front(&s->waiting);
    request *r = &reqs[idx];
    uint32_t known = r->num_tokens + (s->cfg.async_scheduling ? r->pending : 0); /* a preempted request recomputes
                                                                                    its placeholders too */
    uint32_t hits = 0, ext = r->ext_tokens; /* KV received from a prefill worker: allocated, not computed */
    kv_content c = sched__content_of(s, r);
    if (r->num_computed == 0 && !ext) hits = kv_match_prefix(s->kv, &c, known);
    uint32_t want = known - hits - ext;
    if (!s->cfg.chunked_prefill && want > *budget) break;
    uint32_t n = cap_chunk(s, want, *budget);
    uint32_t alloc = hits + ext + n, fit = alloc;
    if (s->cfg.admission == ADMIT_RESERVE_FULL) alloc = fit = r->prompt_tokens + r->output_tokens;
    else if (s->cfg.reserve_full_isl) fit = known;
    if (!kv_allocate_fit(s->kv, &r->kv, &c, hits, alloc, fit)) break;
    kv_seq_reserve(s->kv, &r->kv, (uint64_t)r->prompt_tokens + r->output_tokens); /* table memory, once */
    ring_pop_front(&s->waiting);
    if (s->caching && r->num_computed == 0 && !ext) {
      if (r->preemptions) s->preempted_queries += known, s->preempted_hits += hits;
      else s->prefix_queries += known, s->prefix_hits += hits;
    }
    r->num_computed = hits + ext;
    r->cached_tokens = hits;
    r->state = RQ_RUNNING;
    if (r->first_sched_ns == SIM_NS_INF) r->first_sched_ns = now;
    SIM_GROW(s->running, s->cap_running, s->n_running + 1);
    s->running[s->n_running++] = idx;
    sched__account(s, st, reqs, idx, n);
    *budget -= n;
  }
}

sched_step *sched_schedule(sched *s, request *reqs, sim_ns now) {
  SIM_ASSERT(s->q_len < s->depth);
  sched_step *st = sched_queued(s, s->q_len);
  st->n_items = 0;
  memset(&st->bd, 0, sizeof st->bd); /* 3. the batch as the cost model sees it: each entry adds its part
                                        (sched__item_push) */
  uint32_t budget = s->cfg.max_num_batched_tokens;
  if (s->cfg.admission == ADMIT_TOKEN_RATIO) {
    sched__sglang(s, st, reqs, now);
  } else {
    bool preempted = schedule_running(s, st, reqs, &budget);
    if (!preempted) schedule_waiting(s, st, reqs, &budget, now);
  }
  if (st->n_items == 0) return NULL;
  st->bd.prefills = st->chunks;
  s->q_len++;
  return st;
}

/* Drops finished requests from running, keeping admission order. */
static void compact_running(sched *s, const request *reqs) {
  uint32_t w = 0;
  for (uint32_t k = 0; k < s->n_running; k++)
    if (reqs[s->running[k]].state == RQ_RUNNING) s->running[w++] = s->running[k];
  s->n_running = w;
}

uint32_t sched_complete(sched *s, request *reqs, sim_ns now, metrics_rec *m, uint32_t *done) {
  SIM_ASSERT(s->q_len > 0);
  sched_step *st = &s->q[s->q_head];
  uint32_t n_done = 0;
  bool removed = false;
  for (uint32_t k = 0; k < st->n_items; k++) {
    const sched_item *it = &st->items[k];
    if (!it->samples) continue; /* a mid-prompt chunk (its progress was counted when scheduled), or an aborted
                                   request's entry (sched_abort) */
    request *r = &reqs[it->req];
    uint32_t e = it->emit; /* a speculating step's tokens arrive together: one chunk, one inter-token gap (vLLM's
                              benchmark client appends one ITL per streamed chunk) */
    SIM_ASSERT(r->pending >= e && e > 0);
    r->pending -= e;
    r->generated += e;
    r->num_tokens += e;
    if (r->generated == e) r->first_token_ns = now;
    else metrics_itl(m, &s->itl_pend, now - r->last_token_ns);
    r->last_token_ns = now;
    if (r->generated < r->output_tokens) continue;
    SIM_ASSERT(r->pending == 0);
    if (r->state == RQ_WAITING) { /* preempted with its last token in flight */
      uint32_t n_removed = ring_remove(&s->waiting, it->req);
      SIM_ASSERT(n_removed == 1);
    } else {
      removed = true;
    }
    sched__release(s, r);
    r->state = RQ_FINISHED;
    r->finish_ns = now;
    done[n_done++] = it->req;
  }
  if (++s->q_head == s->depth) s->q_head = 0;
  s->q_len--;
  if (removed) compact_running(s, reqs), s->full = false;
  return n_done;
}

void sched_abort(sched *s, request *reqs, uint32_t idx) {
  for (uint32_t k = 0; k < s->q_len; k++) { /* the steps already scheduled run anyway; they just carry nothing back */
    sched_step *st = sched_queued(s, k);
    for (uint32_t j = 0; j < st->n_items; j++)
      if (st->items[j].req == idx) st->items[j] = (sched_item){SCHED_NO_REQ, st->items[j].tokens, false, st->items[j].drafts, 0};
  }
  request *r = &reqs[idx];
  if (r->state == RQ_WAITING) {
    uint32_t n_removed = ring_remove(&s->waiting, idx);
    SIM_ASSERT(n_removed == 1);
  } else if (r->state == RQ_RUNNING) {
    uint32_t w = 0;
    for (uint32_t k = 0; k < s->n_running; k++)
      if (s->running[k] != idx) s->running[w++] = s->running[k];
    SIM_ASSERT(w + 1 == s->n_running);
    s->n_running = w;
  }
  sched__release(s, r);
  r->pending = 0;
}

uint32_t sched_drain(sched *s, request *reqs, uint32_t *out) {
  uint32_t n = 0;
  for (uint32_t k = 0; k < s->n_running; k++) {
    request *r = &reqs[s->running[k]];
    sched__release(s, r);
    r->num_computed = 0;
    r->pending = 0;
    out[n++] = s->running[k];
  }
  s->n_running = 0;
  s->q_len = 0;
  while (s->waiting.len) {
    uint32_t idx = ring_pop_front(&s->waiting);
    reqs[idx].num_computed = 0;
    reqs[idx].pending = 0;
    out[n++] = idx;
  }
  return n;
}

/* --- steady decode runs (sched.h) ------------------------------------------------ */

bool sched_run_begin(sched *s, const request *reqs, sched_run *run) {
  uint32_t B = s->n_running, D = s->depth, bt = s->block_tokens;
  if (!B || s->waiting.len || s->q_len != D || D > 2 || B > s->cfg.max_num_batched_tokens || bt < 2) return false;
  if (s->cfg.admission == ADMIT_TOKEN_RATIO) return false; /* each decode step moves new_token_ratio: stepwise */
  if (s->cfg.spec_k) return false; /* speculation: each step draws its own tokens per request */
  for (uint32_t k = 0; k < D; k++) { /* every queued step's description first: the item walks below only then */
    const sched_step *st = sched_queued(s, k);
    const batch_desc *bd = &st->bd;
    if (st->n_items != B || bd->num_prefill || bd->num_decode != B || bd->num_tokens != B || bd->num_seqs != B ||
        bd->num_sample != B || bd->moe_peer_tokens || bd->dp_mode || bd->dp_pad)
      return false;
  }
  for (uint32_t k = 0; k < D; k++) {
    const sched_step *st = sched_queued(s, k);
    for (uint32_t j = 0; j < B; j++) {
      const sched_item *it = &st->items[j];
      if (it->req != s->running[j] || it->tokens != 1 || !it->samples) return false;
    }
  }
  sim_ns last = reqs[s->running[0]].last_token_ns;
  uint32_t n_max = UINT32_MAX;
  for (uint32_t j = 0; j < B; j++) {
    const request *r = &reqs[s->running[j]];
    if (r->state != RQ_RUNNING || r->generated == 0 || r->pending != D || r->last_token_ns != last ||
        r->output_tokens <= r->generated + D)
      return false;
    /* a hashed sequence has registered every full block (account): a lag would be committed at once */
    if (s->caching && (r->n_hash || r->session) && ((uint64_t)r->kv.n_hashed + 1) * bt <= r->num_computed)
      return false;
    uint32_t left = r->output_tokens - r->generated - D;
    if (left < n_max) n_max = left;
  }
  /* running positions by phase (num_computed mod block), each phase in admission order: a counting sort */
  SIM_GROW(s->run_ord, s->cap_run_ord, B);
  memset(s->run_start, 0, ((size_t)bt + 1) * sizeof *s->run_start);
  for (uint32_t j = 0; j < B; j++) s->run_start[reqs[s->running[j]].num_computed % bt + 1]++;
  for (uint32_t p = 0; p < bt; p++) s->run_start[p + 1] += s->run_start[p];
  for (uint32_t j = 0; j < B; j++) s->run_ord[s->run_start[reqs[s->running[j]].num_computed % bt]++] = j;
  for (uint32_t p = bt; p > 0; p--) s->run_start[p] = s->run_start[p - 1];
  s->run_start[0] = 0;
  /* step i's phases: those p with p + i - 1 (starts a block) and p + i (fills one) multiples of the block; they
     go down by one (mod the block) each step */
  *run = (sched_run){0, n_max, B, last, sched_queued(s, D - 1)->bd.decode_ctx_tokens, 0, bt - 1};
  return true;
}

bool sched_run_can(const sched *s, const request *reqs, const sched_run *run) {
  if (run->n >= run->n_max) return false;
  if (s->cfg.admission != ADMIT_ON_DEMAND) return true;
  uint64_t i = (uint64_t)run->n + 1, bt = s->block_tokens;
  uint32_t p = run->pa, need = 0; /* step i's token starts a block */
  for (uint32_t k = s->run_start[p]; k < s->run_start[p + 1]; k++) {
    const request *r = &reqs[s->running[s->run_ord[k]]];
    if (r->num_computed + i > (uint64_t)r->kv.n_blocks * bt) need++;
  }
  return need <= kv_num_free(s->kv);
}

sched_step *sched_run_next(sched *s, request *reqs, sched_run *run, sim_ns now, metrics_rec *m) {
  uint32_t bt = s->block_tokens;
  metrics_itl_n(m, &s->itl_pend, now - run->last_tok_ns, run->batch); /* the oldest step's tokens */
  run->last_tok_ns = now;
  sched_step *st = &s->q[s->q_head]; /* its slot takes the new step, the newest */
  if (++s->q_head == s->depth) s->q_head = 0;
  uint64_t i = (uint64_t)run->n + 1;
  /* the requests at a block boundary, in admission order: one whose token in this step starts a block (allocate)
     and one whose token fills a block (register its hash) are in two phases (blocks of two tokens or more) */
  uint32_t pa = run->pa, pc = run->pc;
  run->pa = pa ? pa - 1 : bt - 1;
  run->pc = pc ? pc - 1 : bt - 1;
  const uint32_t *a = s->run_ord + s->run_start[pa], *ae = s->run_ord + s->run_start[pa + 1];
  const uint32_t *b = s->run_ord + s->run_start[pc], *be = s->run_ord + s->run_start[pc + 1];
  while (a < ae || b < be) {
    bool alloc = b == be || (a < ae && *a < *b);
    uint32_t j = alloc ? *a++ : *b++;
    request *r = &reqs[s->running[j]];
    uint64_t upto = r->num_computed + i; /* its computed tokens once this step is scheduled */
    kv_content c = sched__content_of(s, r);
    if (alloc && s->cfg.admission == ADMIT_ON_DEMAND && upto > (uint64_t)r->kv.n_blocks * bt) {
      bool ok = kv_allocate(s->kv, &r->kv, &c, 0, (uint32_t)upto);
      SIM_ASSERT(ok); /* sched_run_can counted the blocks */
    }
    if (!alloc && upto >= ((uint64_t)r->kv.n_hashed + 1) * bt) kv_commit(s->kv, &r->kv, &c, (uint32_t)upto);
  }
  run->ctx += run->batch;
  st->bd.decode_ctx_tokens = run->ctx;
  run->n = (uint32_t)i;
  return st;
}

void sched_run_end(sched *s, request *reqs, const sched_run *run) {
  if (!run->n) return;
  for (uint32_t j = 0; j < s->n_running; j++) {
    request *r = &reqs[s->running[j]];
    r->generated += run->n;
    r->num_tokens += run->n;
    r->num_computed += run->n;
    r->last_token_ns = run->last_tok_ns;
  }
}
