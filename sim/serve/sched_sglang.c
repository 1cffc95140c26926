/* sched_sglang.c: SGLang's scheduler, admission ADMIT_TOKEN_RATIO (sched.h).
 *
 * Read from SGLang at 1efc33c64 (v0.5.9; docs/SGLANG.md sections 2 and 3):
 * python/sglang/srt/managers/scheduler.py (get_next_batch_to_run,
 * _get_new_batch_prefill_raw, update_running_batch), schedule_policy.py
 * (PrefillAdder) and schedule_batch.py (check_decode_mem, retract_decode).
 *
 * A step is a prefill batch when one can be formed (prefill first), else a
 * decode step of every running request; the two mix only with
 * --enable-mixed-chunk (off by default: mix_decodes).
 *
 * Prefill batch (PrefillAdder): the request being chunked continues first,
 * then waiting requests in queue order (schedule_policy fcfs) while
 *   extend + min(output left, 4096) < free - offset
 * where extend is the prompt minus its radix-cache hit, free the KV tokens
 * not held by a running request (cached ones count: available + evictable),
 * and offset = new_token_ratio x sum over running requests of min(output
 * left, 4096) (plus what this batch took). The batch holds at most
 * max_prefill_tokens new tokens (a request beyond that only when it is the
 * first) and, with chunking, chunked_prefill_size: the request that crosses
 * it is cut there and becomes the one chunked request, which reserves its
 * output only with its last chunk. A request stopped for want of KV or of a
 * seat (max_running_requests) sets batch_is_full: no prefill is tried again
 * until a running request finishes or is retracted.
 *
 * Decode step: every running request whose prompt is done decodes one token.
 * check_decode_mem needs a page per request at a page boundary (one each at
 * page size 1); if the pool lacks them, requests are retracted, the one with
 * the fewest output tokens first (ties: the longest prompt), until the rest
 * fit (v0.5.1.post1: until the pool holds 20 tokens per remaining request),
 * never the last one. A retracted request's KV is freed except the part its
 * latest prefill inserted into the radix tree, which stays cached (and
 * evictable); it goes to the back of the waiting queue and is prefilled again
 * over prompt + output so far, what is still cached counting as a hit. The
 * ratio is then set to min(1, (sum of output so far + 20 n) / (sum of
 * max_new_tokens + 1)) over the n remaining requests; each decode step without
 * retraction lowers it by decay to its minimum. */
#include "serve/sched_impl.h"

#include <math.h>

/* srt/environ.py l.225-229 (v0.5.1.post1: global_config.py l.24-39, the same values) */
#define SGL_INIT_NEW_TOKEN_RATIO 0.7
#define SGL_MIN_NEW_TOKEN_RATIO_FACTOR 0.14
#define SGL_NEW_TOKEN_RATIO_DECAY_STEPS 600.0
#define SGL_RETRACT_DECODE_STEPS 20.0
#define SGL_CLIP_MAX_NEW_TOKENS 4096u

/* scheduler.py l.811-823: init = min(0.7 x conservativeness, 1), min = min(init x 0.14, 1),
 * decay = (init - min) / 600 per decode step. */
void sched__sglang_init(sched *s) {
  double cons = s->cfg.schedule_conservativeness;
  SIM_ASSERT(cons > 0 && s->cfg.max_prefill_tokens > 0 && s->cfg.retract_steps > 0);
  s->ratio = fmin(SGL_INIT_NEW_TOKEN_RATIO * cons, 1.0);
  s->ratio_min = fmin(s->ratio * SGL_MIN_NEW_TOKEN_RATIO_FACTOR, 1.0);
  s->ratio_decay = (s->ratio - s->ratio_min) / SGL_NEW_TOKEN_RATIO_DECAY_STEPS;
}

/* min(max_new_tokens - len(output_ids), CLIP_MAX_NEW_TOKENS) */
static uint32_t out_left(const request *r) {
  uint32_t left = r->output_tokens - r->generated;
  return left < SGL_CLIP_MAX_NEW_TOKENS ? left : SGL_CLIP_MAX_NEW_TOKENS;
}

/* More than the next token's KV left to compute: a prompt (or a retracted request's re-prefill) in chunks. With
 * one token left, prefill and decode are the same step (compute it, sample). */
static bool mid_prefill(const request *r) { return (uint64_t)r->num_computed + 1 < (uint64_t)r->num_tokens + r->pending; }

/* KV tokens no running request holds (free pages, cached ones included) */
static double free_tokens(const sched *s) { return (double)kv_num_free(s->kv) * s->block_tokens; }

typedef struct adder {
  double offset;       /* rem_total_token_offset: output reserved for running and added requests */
  uint32_t rem_input;  /* rem_input_tokens (max_prefill_tokens) */
  uint32_t rem_chunk;  /* rem_chunk_tokens (chunked_prefill_size), UINT32_MAX without chunking */
} adder;

/* add_chunked_req: the chunked request's next chunk, at most min(rem_chunk, rem_total). */
static void add_chunked(sched *s, sched_step *st, request *reqs, adder *a) {
  for (uint32_t k = 0; k < s->n_running; k++) {
    uint32_t idx = s->running[k];
    request *r = &reqs[idx];
    if (!mid_prefill(r)) continue;
    double rem_total = free_tokens(s) - a->offset;
    uint32_t want = r->num_tokens - r->num_computed, n = want;
    if (n > a->rem_chunk) n = a->rem_chunk / s->block_tokens * s->block_tokens;
    if (n > rem_total) n = rem_total > 0 ? (uint32_t)rem_total / s->block_tokens * s->block_tokens : 0;
    kv_content c = sched__content_of(s, r);
    if (!n || !kv_allocate(s->kv, &r->kv, &c, 0, r->num_computed + n)) return;
    sched__account(s, st, reqs, idx, n);
    a->rem_input = a->rem_input > n ? a->rem_input - n : 0;
    a->rem_chunk -= a->rem_chunk == UINT32_MAX ? 0 : n;
    if (n == want) a->offset += out_left(r); /* the last chunk: its output is reserved from now on */
    return;                                   /* one chunked request at a time (scheduler.py l.2140) */
  }
}

/* add_one_req for the head of the waiting queue; false when admission stops. */
static bool add_one(sched *s, sched_step *st, request *reqs, adder *a, sim_ns now) {
  uint32_t idx = ring_front(&s->waiting);
  request *r = &reqs[idx];
  uint32_t known = r->num_tokens + (s->cfg.async_scheduling ? r->pending : 0), hits = 0;
  kv_content c = sched__content_of(s, r);
  if (r->num_computed == 0) hits = kv_match_prefix(s->kv, &c, known);
  uint32_t extend = known - hits;
  /* NO_TOKEN. A request alone in an idle engine is admitted whatever its output: SGLang clips max_new_tokens to
     max_req_len - input - 1, max_req_len = min(context_len, pool) - 1 (scheduler.py init_req_max_new_tokens
     l.1385-1393, tp_worker.py l.287-290), and the cluster has refused requests larger than the pool */
  bool alone = !s->n_running && !st->n_items;
  if (!alone && (double)extend + out_left(r) >= free_tokens(s) - a->offset) {
    s->full = true;
    return false;
  }
  if (extend >= a->rem_input && st->n_items) return false; /* OTHER: the batch's prefill budget is spent */
  uint32_t n = extend;
  bool chunked = extend > a->rem_chunk;
  if (chunked && !(n = a->rem_chunk / s->block_tokens * s->block_tokens)) return false;
  /* the table's memory for the whole request first (the final length is known), sparing kv_allocate's growth and a
     copy; given back if the allocation fails (a waiting request holds no table) */
  kv_seq_reserve(s->kv, &r->kv, (uint64_t)r->prompt_tokens + r->output_tokens);
  if (!kv_allocate(s->kv, &r->kv, &c, hits, hits + n)) {
    kv_seq_deinit(&r->kv);
    s->full = true;
    return false;
  }
  ring_pop_front(&s->waiting);
  if (s->caching && r->num_computed == 0) {
    if (r->preemptions) s->preempted_queries += known, s->preempted_hits += hits;
    else s->prefix_queries += known, s->prefix_hits += hits;
  }
  r->num_computed = hits;
  r->cached_tokens = hits;
  r->prefilled = known;
  r->state = RQ_RUNNING;
  if (r->first_sched_ns == SIM_NS_INF) r->first_sched_ns = now;
  SIM_GROW(s->running, s->cap_running, s->n_running + 1);
  s->running[s->n_running++] = idx;
  sched__account(s, st, reqs, idx, n);
  a->rem_input = a->rem_input > n ? a->rem_input - n : 0;
  a->rem_chunk -= a->rem_chunk == UINT32_MAX ? 0 : n;
  if (!chunked) a->offset += out_left(r);
  return !chunked;
}

/* schedule_policy lpm (schedule_policy.py at v0.5.9: calc_priority, _determine_active_policy,
 * _compute_prefix_matches, _sort_by_longest_prefix): with the radix cache on and at most 128 requests waiting
 * (more: fcfs, "the expensive prefix matching" turned off), the waiting queue is sorted by the prefix each
 * request finds cached, longest first, Python's stable sort keeping queue order among equals. In-batch prefix
 * caching: a request that finds at most 32 tokens cached (IN_BATCH_PREFIX_CACHING_CHECK_THRESHOLD) and shares
 * 32 or more (..._DEPRIORITIZE_THRESHOLD) with a request earlier in the queue that was not itself put back goes
 * to the end, so that one of them fills the cache for the other; the others are entered in the queue's tree. */
#define SGL_LPM_MAX_QUEUE 128u
#define SGL_IN_BATCH_CHECK 32u
#define SGL_IN_BATCH_DEPRIORITIZE 32u

static void lpm_order(sched *s, request *reqs) {
  uint32_t n = s->waiting.len;
  if (!s->cfg.lpm || !s->caching || n < 2 || n > SGL_LPM_MAX_QUEUE) return;
  uint32_t idx[SGL_LPM_MAX_QUEUE], known[SGL_LPM_MAX_QUEUE];
  uint64_t key[SGL_LPM_MAX_QUEUE]; /* ascending: deprioritized last, then longest match first */
  bool entered[SGL_LPM_MAX_QUEUE];
  kv_content c[SGL_LPM_MAX_QUEUE];
  for (uint32_t k = 0; k < n; k++) {
    idx[k] = ring_at(&s->waiting, k);
    const request *r = &reqs[idx[k]];
    known[k] = r->num_tokens + (s->cfg.async_scheduling ? r->pending : 0);
    c[k] = sched__content_of(s, r);
    uint32_t match = kv_peek_prefix(s->kv, &c[k], known[k]);
    bool deprioritized = false;
    entered[k] = false;
    if (match <= SGL_IN_BATCH_CHECK) {
      uint32_t shared = 0;
      for (uint32_t j = 0; j < k; j++)
        if (entered[j]) {
          uint32_t m = kv_shared_prefix(s->kv, &c[j], &c[k], known[j] < known[k] ? known[j] : known[k]);
          if (m > shared) shared = m;
        }
      deprioritized = shared >= SGL_IN_BATCH_DEPRIORITIZE;
      entered[k] = !deprioritized;
    }
    key[k] = deprioritized ? UINT64_MAX : (uint64_t)(UINT32_MAX - match);
  }
  for (uint32_t k = 1; k < n; k++) /* stable insertion sort: n <= 128 */
    for (uint32_t j = k; j > 0 && key[j - 1] > key[j]; j--) {
      uint64_t tk = key[j];
      key[j] = key[j - 1], key[j - 1] = tk;
      uint32_t ti = idx[j];
      idx[j] = idx[j - 1], idx[j - 1] = ti;
    }
  for (uint32_t k = 0; k < n; k++) ring_pop_front(&s->waiting);
  for (uint32_t k = 0; k < n; k++) ring_push_back(&s->waiting, idx[k]);
}

/* Whether running request r decodes in the next decode step. */
static bool decodes(const sched *s, const request *r) {
  uint32_t placeholders = s->cfg.async_scheduling ? r->pending : 0;
  return !mid_prefill(r) && r->generated + r->pending < r->output_tokens &&
         r->num_tokens + placeholders > r->num_computed;
}

/* --enable-mixed-chunk (scheduler.py _get_new_batch_prefill_raw at v0.5.9, "Mixed-style chunked prefill"): a
 * prefill batch that formed takes the running batch along (mix_with_running after prepare_for_decode), every
 * request in it decoding one token in the same forward pass. The decode path's check_decode_mem and retraction
 * do not run there (update_running_batch is the decode branch's), so neither does the ratio's decay; the
 * PrefillAdder kept a token per running request aside. The first n_old running requests are the ones that were
 * running before this step's prefill; a request the prefill took or the chunked one does not decode. */
static void mix_decodes(sched *s, sched_step *st, request *reqs, uint32_t n_old) {
  for (uint32_t k = 0; k < n_old; k++) {
    uint32_t idx = s->running[k];
    request *r = &reqs[idx];
    if (!decodes(s, r)) continue;
    kv_content c = sched__content_of(s, r);
    if (!kv_allocate(s->kv, &r->kv, &c, 0, r->num_computed + 1)) continue; /* the adder's offset kept it; a pool
                                                                               this short decodes it next step */
    sched__account(s, st, reqs, idx, 1);
  }
}

static void prefill(sched *s, sched_step *st, request *reqs, sim_ns now) {
  adder a = {0, s->cfg.max_prefill_tokens, s->cfg.chunked_prefill ? s->cfg.max_num_batched_tokens : UINT32_MAX};
  uint32_t n_old = s->n_running, running_bs = 0;
  for (uint32_t k = 0; k < n_old; k++) /* _get_running_request_total_token_offset */
    if (!mid_prefill(&reqs[s->running[k]])) a.offset += out_left(&reqs[s->running[k]]) * s->ratio, running_bs++;
  if (s->cfg.mixed_chunk && running_bs) {
    /* PrefillAdder(mixed_with_decode_tokens = running_bs): off the input and chunk budgets and the KV left */
    a.offset += running_bs;
    a.rem_input = a.rem_input > running_bs ? a.rem_input - running_bs : 0;
    if (a.rem_chunk != UINT32_MAX) a.rem_chunk = a.rem_chunk > running_bs ? a.rem_chunk - running_bs : 0;
  }
  add_chunked(s, st, reqs, &a);
  lpm_order(s, reqs);
  while (s->waiting.len && a.rem_input > 0 && a.rem_chunk > 0) {
    if (s->n_running >= s->cfg.max_num_seqs) { /* get_num_allocatable_reqs */
      s->full = true;
      break;
    }
    if (!add_one(s, st, reqs, &a, now)) break;
  }
  if (s->cfg.mixed_chunk && running_bs && st->n_items) mix_decodes(s, st, reqs, n_old);
}

/* retract_decode's victim: fewest output tokens, then longest prompt (sorted descending by
 * (len(output_ids), -len(origin_input_ids)), popped from the end). */
static uint32_t victim(const sched *s, const request *reqs) {
  uint32_t best = UINT32_MAX;
  for (uint32_t k = 0; k < s->n_running; k++) {
    const request *r = &reqs[s->running[k]];
    if (!decodes(s, r)) continue;
    const request *b = best == UINT32_MAX ? NULL : &reqs[s->running[best]];
    if (!b || r->generated < b->generated || (r->generated == b->generated && r->prompt_tokens > b->prompt_tokens))
      best = k;
  }
  return best;
}

static void retract(sched *s, request *reqs, uint32_t k) {
  uint32_t idx = s->running[k];
  request *r = &reqs[idx];
  kv_content c = sched__content_of(s, r);
  /* release_kv_cache(is_insert=False): what its prefill inserted stays in the tree, the rest is freed */
  kv_commit_own(s->kv, &r->kv, &c, r->prefilled < r->num_computed ? r->prefilled : r->num_computed);
  s->retracted_tokens += r->num_computed;
  sched__release(s, r);
  r->num_computed = 0;
  r->preemptions++;
  r->state = RQ_WAITING;
  s->preemptions++;
  if (s->cfg.prebuilt) ring_push_front(&s->waiting, idx); /* decode.py: the retracted queue resumes first */
  else ring_push_back(&s->waiting, idx);                    /* _add_request_to_queue: waiting_queue.append */
  for (uint32_t j = k + 1; j < s->n_running; j++) s->running[j - 1] = s->running[j];
  s->n_running--;
}

/* The pool lacks room for the decode step (check_decode_mem; v0.5.1.post1 after the first retraction: 20
 * tokens per request). n_out: the decoding requests. */
static bool short_of_kv(const sched *s, const request *reqs, bool after_first, uint32_t *n_out) {
  uint32_t need = 0, n = 0;
  for (uint32_t k = 0; k < s->n_running; k++) {
    const request *r = &reqs[s->running[k]];
    if (!decodes(s, r)) continue;
    n++;
    need += kv_blocks_needed(s->kv, &r->kv, r->num_computed + 1);
  }
  *n_out = n;
  if (after_first && s->cfg.retract_steps > 1) return free_tokens(s) < (double)n * s->cfg.retract_steps;
  return need > kv_num_free(s->kv);
}

static void decode(sched *s, sched_step *st, request *reqs) {
  uint32_t n_dec = 0, retracted = 0;
  /* A decoding request needs at most one new block (its computed tokens have theirs): with a free block for every
     running request the pool cannot be short, and the sum is not taken (most steps of a long run). */
  bool roomy = kv_num_free(s->kv) >= s->n_running;
  while (!roomy && short_of_kv(s, reqs, retracted > 0, &n_dec) && n_dec > 1) {
    retract(s, reqs, victim(s, reqs));
    retracted++;
  }
  if (roomy) {
    for (uint32_t k = 0; k < s->n_running && !n_dec; k++) n_dec += decodes(s, &reqs[s->running[k]]);
  }
  if (!n_dec) return;
  if (retracted) { /* retract_decode's new ratio over the remaining requests */
    double out = 0, max_new = 0;
    for (uint32_t k = 0; k < s->n_running; k++) {
      const request *r = &reqs[s->running[k]];
      if (decodes(s, r)) out += r->generated, max_new += r->output_tokens;
    }
    s->ratio = fmin(1.0, (out + SGL_RETRACT_DECODE_STEPS * n_dec) / (max_new + (s->cfg.retract_steps > 1 ? 0 : 1)));
    s->full = false;
  } else {
    s->ratio = fmax(s->ratio - s->ratio_decay, s->ratio_min);
  }
  for (uint32_t k = 0; k < s->n_running; k++) {
    uint32_t idx = s->running[k];
    request *r = &reqs[idx];
    if (!decodes(s, r)) continue;
    static const kv_content no_hit = {0}; /* read only with cached tokens to take (kv.h): none here */
    if (!kv_allocate(s->kv, &r->kv, &no_hit, 0, r->num_computed + 1)) continue; /* the last request alone does not fit */
    sched__account(s, st, reqs, idx, 1);
  }
}

/* A disaggregated decode worker (cfg.prebuilt; disaggregation/decode.py at v0.5.9): a request it takes in has its
 * KV (the prompt's, from the prefill worker, or its own, offloaded when it was retracted and loaded back:
 * resume_retracted_reqs) and its sampled tokens. get_new_prebuilt_batch moves waiting requests into the running
 * batch in queue order while seats are left (max_running_requests) with no forward step, and
 * process_batch_result_prebuilt streams a new one's first token (the prefill worker sampled it); the next decode
 * batch takes them. Every token but the last known one is present; the decode step computes that one. The pool
 * must hold them (decode.py preallocates before the prefill runs; here they wait in the queue instead). */
static void prebuilt(sched *s, request *reqs, sim_ns now) {
  while (s->waiting.len && s->n_running < s->cfg.max_num_seqs) {
    uint32_t idx = ring_front(&s->waiting);
    request *r = &reqs[idx];
    uint32_t known = r->num_tokens + (s->cfg.async_scheduling ? r->pending : 0);
    SIM_ASSERT(known > 0 && r->num_computed == 0);
    kv_content c = sched__content_of(s, r);
    if (!kv_allocate(s->kv, &r->kv, &c, 0, known - 1)) {
      s->full = true;
      return;
    }
    kv_seq_reserve(s->kv, &r->kv, (uint64_t)r->prompt_tokens + r->output_tokens);
    ring_pop_front(&s->waiting);
    r->num_computed = r->prefilled = known - 1;
    r->ext_tokens = 0;
    r->state = RQ_RUNNING;
    if (r->first_sched_ns == SIM_NS_INF) r->first_sched_ns = now;
    if (r->generated == 1 && !r->first_token_ns) r->first_token_ns = r->last_token_ns = now;
    SIM_GROW(s->running, s->cap_running, s->n_running + 1);
    s->running[s->n_running++] = idx;
  }
}

void sched__sglang(sched *s, sched_step *st, request *reqs, sim_ns now) {
  if (s->cfg.prebuilt) {
    prebuilt(s, reqs, now);
    decode(s, st, reqs);
    return;
  }
  /* a prefill step when requests wait for admission or a chunked one continues (looked for only when needed: the
     look is a pass over the running requests) */
  bool try_prefill = s->waiting.len && !s->full;
  for (uint32_t k = 0; k < s->n_running && !try_prefill; k++) try_prefill = mid_prefill(&reqs[s->running[k]]);
  if (try_prefill) prefill(s, st, reqs, now);
  if (!st->n_items) decode(s, st, reqs);
}
