/* sched.h: the per-replica scheduler: vLLM V1 continuous batching.
 *
 * Each step (sched_schedule):
 *  1. Running requests first, in admission order: each gets
 *     n = num_tokens - num_computed (a prompt chunk or 1 decode token), capped
 *     by the remaining token budget (max_num_batched_tokens) and by
 *     long_prefill_token_threshold if set. Decodes have no priority over an
 *     earlier request's prefill chunk. If its KV blocks cannot be allocated,
 *     the LAST running request is preempted by recompute (blocks freed,
 *     progress reset, put at the FRONT of the waiting queue) until it fits or
 *     the request preempted itself.
 *  2. Waiting requests next, strictly from the head, only if nothing was
 *     preempted this step, while running < max_num_seqs and budget > 0: a
 *     request's longest cached prefix is looked up, the rest (capped by the
 *     budget: chunked prefill; or all of it, without chunking) must get its
 *     blocks, else admission stops (head-of-line, FCFS).
 *     Admission `reserve_full` (TensorRT-LLM's guaranteed-no-evict) instead
 *     reserves blocks for prompt + max output at admission and never preempts.
 *  3. sched_complete at the end of the step: num_computed += n; a request
 *     whose known tokens are all computed samples a token; one that reaches
 *     its output length finishes. With async scheduling a finished request
 *     keeps its seat and blocks one more step (vLLM schedules step k+1 before
 *     step k's output is known), costing one decode token.
 *
 * The scheduler knows nothing of GPUs: it hands the cost model a batch_desc.
 * Complexity: O(running + admitted) per step; waiting is a ring deque.
 * Ownership: sched_init/sched_deinit on caller storage; owns its KV manager
 * and queues; requests live in the caller's array (indices). */
#ifndef SIM_SCHED_H
#define SIM_SCHED_H

#include "config/cfg.h"
#include "hw/cost.h"
#include "metrics/metrics.h"
#include "serve/kv.h"
#include "serve/request.h"

typedef struct sched_cfg {
  uint32_t max_num_seqs;
  uint32_t max_num_batched_tokens;
  uint32_t long_prefill_token_threshold; /* 0 = off */
  bool chunked_prefill;
  bool async_scheduling;
  admit_policy admission;
} sched_cfg;

typedef struct sched {
  sched_cfg cfg;
  kv_mgr *kv;
  uint32_t block_tokens; /* KV block size, tokens */
  uint32_t *waiting;    /* ring deque of request indices */
  uint32_t wait_head, wait_len, wait_cap;
  uint32_t *running;    /* admission order */
  uint32_t n_running;
  size_t cap_running;
  uint32_t *step;       /* requests in the in-flight step, in schedule order */
  uint32_t n_step;
  size_t cap_step;
  prefill_chunk *chunks;/* batch_desc storage */
  size_t cap_chunks;
  uint64_t preemptions;
  uint32_t n_zombies;   /* finished requests still holding a seat */
} sched;

int sched_init(sched *s, const sched_cfg *cfg, uint32_t kv_blocks, uint32_t block_tokens, bool prefix_caching);
void sched_deinit(sched *s);

/* Puts a request at the tail of the waiting queue. */
void sched_add(sched *s, request *reqs, uint32_t idx);
static inline bool sched_has_work(const sched *s) { return s->wait_len || s->n_running; }
static inline uint32_t sched_num_waiting(const sched *s) { return s->wait_len; }
static inline uint32_t sched_num_running(const sched *s) { return s->n_running - s->n_zombies; }

/* Builds the next step into *out (out->prefills points into s). Returns false
 * when nothing could be scheduled (then nothing changed). */
bool sched_schedule(sched *s, request *reqs, sim_ns now, batch_desc *out);
/* Applies the in-flight step at `now`. Indices of requests that finished are
 * appended to done[] (capacity >= n_step); returns how many. */
uint32_t sched_complete(sched *s, request *reqs, sim_ns now, metrics_rec *m, uint32_t *done);
/* Removes and returns the head of the waiting queue (wait_len > 0). */
uint32_t sched_pop_head(sched *s);
/* Removes every request (for a failed replica): in-flight and waiting ones
 * are appended to out[] (capacity >= running + waiting) with their KV freed
 * and progress reset; returns how many. */
uint32_t sched_drain(sched *s, request *reqs, uint32_t *out);

#endif
