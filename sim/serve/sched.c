/* sched.c: vLLM V1 continuous batching for one replica (see sched.h). */
#include "serve/sched.h"

#include <stdlib.h>
#include <string.h>

int sched_init(sched *s, const sched_cfg *cfg, uint32_t kv_blocks, uint32_t block_tokens, bool prefix_caching) {
  memset(s, 0, sizeof *s);
  s->cfg = *cfg;
  s->kv = kv_new(kv_blocks, block_tokens, prefix_caching);
  s->block_tokens = block_tokens;
  s->wait_cap = 1024;
  s->waiting = sim_malloc(s->wait_cap * sizeof *s->waiting);
  return SIM_OK;
}

void sched_deinit(sched *s) {
  kv_free(s->kv);
  free(s->waiting);
  free(s->running);
  free(s->step);
  free(s->chunks);
  memset(s, 0, sizeof *s);
}

/* --- waiting ring deque ------------------------------------------------------ */

static void wait_grow(sched *s) {
  if (s->wait_len < s->wait_cap) return;
  uint32_t nc = s->wait_cap * 2;
  uint32_t *w = sim_malloc((size_t)nc * sizeof *w);
  for (uint32_t i = 0; i < s->wait_len; i++) w[i] = s->waiting[(s->wait_head + i) % s->wait_cap];
  free(s->waiting);
  s->waiting = w;
  s->wait_head = 0;
  s->wait_cap = nc;
}

static void wait_push_back(sched *s, uint32_t idx) {
  wait_grow(s);
  s->waiting[(s->wait_head + s->wait_len) % s->wait_cap] = idx;
  s->wait_len++;
}

static void wait_push_front(sched *s, uint32_t idx) {
  wait_grow(s);
  s->wait_head = (s->wait_head + s->wait_cap - 1) % s->wait_cap;
  s->waiting[s->wait_head] = idx;
  s->wait_len++;
}

static uint32_t wait_front(const sched *s) { return s->waiting[s->wait_head]; }

static void wait_pop_front(sched *s) {
  s->wait_head = (s->wait_head + 1) % s->wait_cap;
  s->wait_len--;
}

uint32_t sched_pop_head(sched *s) {
  SIM_ASSERT(s->wait_len > 0);
  uint32_t idx = wait_front(s);
  wait_pop_front(s);
  return idx;
}

void sched_add(sched *s, request *reqs, uint32_t idx) {
  reqs[idx].state = RQ_WAITING;
  wait_push_back(s, idx);
}

/* --- scheduling --------------------------------------------------------------- */

static void step_push(sched *s, uint32_t idx) {
  SIM_GROW(s->step, s->cap_step, s->n_step + 1);
  s->step[s->n_step++] = idx;
}

static void release(sched *s, request *r) {
  kv_seq_free(s->kv, &r->kv);
  kv_seq_deinit(&r->kv);
}

/* Preempts by recompute: free blocks, reset progress, front of the queue. */
static void preempt(sched *s, request *reqs, uint32_t idx) {
  request *r = &reqs[idx];
  release(s, r);
  if (r->zombie) { /* already finished: just let go of its seat */
    r->zombie = false;
    s->n_zombies--;
    return;
  }
  r->num_computed = 0;
  r->preemptions++;
  r->state = RQ_WAITING;
  s->preemptions++;
  wait_push_front(s, idx);
}

static uint32_t cap_chunk(const sched *s, uint32_t n, uint32_t budget) {
  if (n > budget) n = budget;
  if (s->cfg.long_prefill_token_threshold && n > s->cfg.long_prefill_token_threshold)
    n = s->cfg.long_prefill_token_threshold;
  return n;
}

bool sched_schedule(sched *s, request *reqs, sim_ns now, batch_desc *out) {
  uint32_t budget = s->cfg.max_num_batched_tokens;
  bool preempted = false;
  s->n_step = 0;

  /* 1. running requests, in admission order */
  uint32_t i = 0;
  while (i < s->n_running && budget > 0) {
    uint32_t idx = s->running[i];
    request *r = &reqs[idx];
    uint32_t n;
    if (r->zombie) {
      n = 1; /* the wasted decode of a request async scheduling did not know was done */
    } else {
      n = cap_chunk(s, r->num_tokens - r->num_computed, budget);
      SIM_ASSERT(n > 0);
      /* fast path: the tokens fit in the blocks it already holds (most decode steps) */
      bool fits = (uint64_t)r->num_computed + n <= (uint64_t)r->kv.n_blocks * s->block_tokens;
      if (s->cfg.admission == ADMIT_ON_DEMAND && !fits) {
        while (!kv_allocate(s->kv, &r->kv, &r->content, 0, r->num_computed + n)) {
          uint32_t victim = s->running[--s->n_running];
          preempt(s, reqs, victim);
          preempted = true;
          if (victim == idx) break;
        }
        if (s->n_running == i) break; /* it preempted itself */
      }
    }
    r->sched_tokens = n;
    step_push(s, idx);
    budget -= n;
    i++;
  }

  /* 2. waiting requests, head first, only if nobody was preempted */
  if (!preempted) {
    while (s->wait_len && s->n_running < s->cfg.max_num_seqs && budget > 0) {
      uint32_t idx = wait_front(s);
      request *r = &reqs[idx];
      uint32_t hits = 0;
      if (r->num_computed == 0) hits = kv_match_prefix(s->kv, &r->content, r->num_tokens);
      uint32_t want = r->num_tokens - hits;
      if (!s->cfg.chunked_prefill && want > budget) break;
      uint32_t n = cap_chunk(s, want, budget);
      uint32_t alloc = hits + n;
      if (s->cfg.admission == ADMIT_RESERVE_FULL) alloc = r->prompt_tokens + r->output_tokens;
      if (!kv_allocate(s->kv, &r->kv, &r->content, hits, alloc)) break;
      wait_pop_front(s);
      r->num_computed = hits;
      r->cached_tokens = hits;
      r->state = RQ_RUNNING;
      if (r->first_sched_ns == SIM_NS_INF) r->first_sched_ns = now;
      SIM_GROW(s->running, s->cap_running, s->n_running + 1);
      s->running[s->n_running++] = idx;
      r->sched_tokens = n;
      step_push(s, idx);
      budget -= n;
    }
  }
  if (s->n_step == 0) return false;

  /* 3. describe the batch for the cost model */
  SIM_GROW(s->chunks, s->cap_chunks, s->n_step);
  memset(out, 0, sizeof *out);
  out->prefills = s->chunks;
  for (uint32_t k = 0; k < s->n_step; k++) {
    request *r = &reqs[s->step[k]];
    uint32_t n = r->sched_tokens;
    out->num_tokens += n;
    out->num_seqs++;
    if (n == 1) {
      out->num_decode++;
      out->decode_ctx_tokens += (uint64_t)r->num_computed + 1;
    } else {
      s->chunks[out->num_prefill].chunk_tokens = n;
      s->chunks[out->num_prefill].ctx_tokens = r->num_computed;
      out->num_prefill++;
    }
    if (r->zombie || r->num_computed + n == r->num_tokens) out->num_sample++;
  }
  return true;
}

uint32_t sched_complete(sched *s, request *reqs, sim_ns now, metrics_rec *m, uint32_t *done) {
  uint32_t n_done = 0;
  bool removed = false;
  for (uint32_t k = 0; k < s->n_step; k++) {
    request *r = &reqs[s->step[k]];
    uint32_t n = r->sched_tokens;
    r->sched_tokens = 0;
    if (r->zombie) { /* its extra step is over: now it really leaves */
      r->zombie = false;
      s->n_zombies--;
      release(s, r);
      removed = true;
      continue;
    }
    r->num_computed += n;
    if (r->content.kind != KV_CONTENT_NONE) kv_commit(s->kv, &r->kv, &r->content, r->num_computed);
    if (r->num_computed < r->num_tokens) continue; /* mid-prompt chunk */
    r->generated++;
    r->num_tokens++;
    metrics_token(m, r, now);
    if (r->generated < r->output_tokens) continue;
    r->state = RQ_FINISHED;
    r->finish_ns = now;
    done[n_done++] = s->step[k];
    if (s->cfg.async_scheduling) {
      r->zombie = true;
      s->n_zombies++;
    } else {
      release(s, r);
      removed = true;
    }
  }
  s->n_step = 0;
  if (removed) { /* compact running, keeping admission order */
    uint32_t w = 0;
    for (uint32_t k = 0; k < s->n_running; k++) {
      request *r = &reqs[s->running[k]];
      if (r->state == RQ_RUNNING || r->zombie) s->running[w++] = s->running[k];
    }
    s->n_running = w;
  }
  return n_done;
}

uint32_t sched_drain(sched *s, request *reqs, uint32_t *out) {
  uint32_t n = 0;
  for (uint32_t k = 0; k < s->n_running; k++) {
    request *r = &reqs[s->running[k]];
    r->sched_tokens = 0;
    release(s, r);
    if (r->zombie) {
      r->zombie = false;
      continue;
    }
    r->num_computed = 0;
    out[n++] = s->running[k];
  }
  s->n_running = 0;
  s->n_zombies = 0;
  s->n_step = 0;
  while (s->wait_len) {
    out[n++] = wait_front(s);
    wait_pop_front(s);
  }
  return n;
}
