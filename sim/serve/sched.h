/* sched.h: the per-replica scheduler: vLLM V1 continuous batching with its
 * batch queue (async scheduling).
 *
 * Token accounting is vLLM V1's (vllm/v1/core/sched/scheduler.py,
 * async_scheduler.py): a step's tokens count as computed the moment the step
 * is SCHEDULED (num_computed += n), and a step that reaches the end of a
 * request's known tokens samples one token, which exists only once the step
 * has run: until then it is a placeholder (request.pending). So the next step
 * of a request can be scheduled while its previous one still runs.
 *
 * Each schedule (sched_schedule) builds one step:
 *  1. Running requests first, in admission order. A request whose last output
 *     token is already in flight (generated + pending >= output_tokens) is
 *     skipped but keeps its seat (vLLM PR #27922: no step past max_tokens).
 *     Others get n = num_tokens + pending - num_computed (a prompt chunk or
 *     1 decode token), capped by the remaining token budget
 *     (max_num_batched_tokens) and long_prefill_token_threshold if set.
 *     Decodes have no priority over an earlier request's prefill chunk. If
 *     its KV blocks cannot be allocated, the LAST running request is
 *     preempted by recompute (blocks freed, num_computed reset, put at the
 *     FRONT of the waiting queue) until it fits or it preempted itself.
 *  2. Waiting requests next, strictly from the head, only if nothing was
 *     preempted this step, while running < max_num_seqs and budget > 0: the
 *     longest cached prefix is looked up (vLLM looks up a request each time
 *     it tries to admit it), the rest (capped by the budget: chunked prefill;
 *     or all of it, without chunking) must get its blocks, else admission
 *     stops (head-of-line, FCFS). With reserve_full_isl (vLLM >= 0.19,
 *     scheduler_reserve_full_isl, PR #37307) the blocks of the request's whole
 *     current sequence must be free, not only those of the first chunk.
 *     Admission ADMIT_RESERVE_FULL (TensorRT-LLM's guaranteed-no-evict)
 *     instead reserves blocks for prompt + max output and never preempts.
 *  3. Prefix caching registers the hashes of the blocks a step will fill at
 *     scheduling time (vLLM caches blocks in allocate_slots), so requests
 *     admitted in the same step share a prefix, and a preempted request finds
 *     its own blocks again while they stay cached.
 *
 * The batch queue: scheduled steps wait in a FIFO of at most `depth` steps
 * (vLLM's max_concurrent_batches, config/vllm.py: the pipeline-parallel size
 * with PP, else 2 with async scheduling, else 1).
 * Without async scheduling there are no placeholders: a request whose sampled
 * token is still in flight has nothing to compute (vLLM: num_new_tokens = 0,
 * "PP>1 and we have already scheduled all prompt tokens but they are not
 * finished yet") and keeps its seat until its step returns; its next prompt
 * chunk, though, can be scheduled while the previous chunk is in flight, so a
 * long prompt flows through the pipeline stages in consecutive batches. The
 * caller runs the oldest and calls sched_complete when it ends: sampled
 * tokens become real (their times on the request, the gaps to metrics_itl),
 * requests reaching their output length finish (seat and blocks released). With depth 2 the step scheduled at the
 * end of step k runs after step k+1: a request that arrives while step k
 * runs first computes in step k+2 (vLLM EngineCore.step_with_batch_queue).
 * A preempted request's tokens still in flight are delivered when their step
 * ends (vLLM's stale output); they do not touch num_computed.
 *
 * Admission ADMIT_TOKEN_RATIO is SGLang's scheduler instead (sched_sglang.c):
 * prefill first (a step is a prefill batch whenever a waiting request can be
 * admitted, else a decode step of every running request), admission while the
 * free KV tokens (cached ones count as free) exceed the new request's prompt
 * and output plus new_token_ratio of the running requests' remaining output,
 * one chunked request at a time, and retraction of decoding requests (fewest
 * output tokens first, then longest prompt) when a decode step lacks KV.
 *
 * The scheduler knows nothing of GPUs: each step carries a batch_desc for the
 * cost model; the caller stores timing in the step's caller fields.
 * Complexity: O(running + admitted) per step; waiting is a ring deque.
 * Ownership: sched_init/sched_deinit on caller storage; owns its KV manager,
 * queues and steps; requests live in the caller's array (indices). */
#ifndef SIM_SCHED_H
#define SIM_SCHED_H

#include "config/cfg.h"
#include "core/ring.h"
#include "hw/cost.h"
#include "metrics/metrics.h"
#include "serve/kv.h"
#include "serve/request.h"

typedef struct sched_cfg {
  uint32_t max_num_seqs;
  uint32_t max_num_batched_tokens;
  uint32_t long_prefill_token_threshold; /* 0 = off */
  bool chunked_prefill;
  bool async_scheduling;                 /* batch queue of 2 steps (else 1); placeholders let a request's next
                                            step be scheduled before its last one ran */
  admit_policy admission;
  bool reserve_full_isl;                 /* ADMIT_ON_DEMAND: the whole current sequence must fit to admit */
  uint32_t pipeline_stages;              /* pipeline parallelism: a batch queue of this many steps (0 or 1: none) */
  /* ADMIT_TOKEN_RATIO (SGLang, sched_sglang.c) */
  uint32_t max_prefill_tokens;           /* new tokens of one prefill batch (max_num_batched_tokens is the chunk) */
  double schedule_conservativeness;      /* scales the initial new_token_ratio (0: 1) */
  uint32_t retract_steps;                /* a retraction frees room for this many decode steps of the rest: 1
                                            (v0.5.6 on), 20 (v0.5.1.post1); 0: 1 */
  bool prebuilt;                         /* a disaggregated SGLang decode worker (sched_sglang.c): every request it
                                            takes arrives with its KV and its first token, and joins the running
                                            batch with no forward step */
  bool lpm;                              /* ADMIT_TOKEN_RATIO: SGLang's schedule_policy lpm (sched_sglang.c) */
  bool mixed_chunk;                      /* ADMIT_TOKEN_RATIO: SGLang's --enable-mixed-chunk (sched_sglang.c) */
  /* speculative decoding (docs/SPECDEC.md; the vLLM path only): spec_k drafts per decoding request and step,
     accepted per position with spec_rates (unconditional, config/specdec.h), drawn from spec_seed per request and
     step; KV for spec_lookahead more tokens (vLLM's num_lookahead_tokens); no drafts in a step whose running
     batch exceeds spec_disable_bs (TensorRT-LLM's max_concurrency; 0: never off) */
  uint32_t spec_k;
  uint32_t spec_lookahead;
  uint32_t spec_disable_bs;
  uint64_t spec_seed;
  double spec_rates[SPEC_MAX_K];
} sched_cfg;

/* One entry of a step: a request and what the step does for it. */
enum { SCHED_NO_REQ = UINT32_MAX }; /* sched_item.req of a request aborted after the step was scheduled */
typedef struct sched_item {
  uint32_t req;    /* request index, or SCHED_NO_REQ (then samples is false) */
  uint32_t tokens; /* tokens computed for it (a speculating decode: 1 + drafts, the rejected ones included) */
  bool samples;    /* the step samples a token for it */
  uint8_t drafts;  /* speculative decoding: draft tokens verified for it (0: none) */
  uint8_t emit;    /* tokens it gets when the step ends: 1 when it samples, 1 + accepted drafts when it speculates */
} sched_item;

/* One scheduled step (queued or running). */
typedef struct sched_step {
  sched_item *items;
  uint32_t n_items;
  size_t cap_items;
  prefill_chunk *chunks; /* batch_desc storage */
  size_t cap_chunks;
  batch_desc bd;         /* what the cost model sees */
  /* caller fields (the cluster's timeline; the scheduler never reads them) */
  step_cost cost;
  sim_ns ready_ns;       /* host work done: the step can start */
  sim_ns start_ns;       /* started on the GPU (valid once running) */
} sched_step;

enum { SCHED_MAX_DEPTH = CFG_MAX_PP };

typedef struct sched {
  sched_cfg cfg;
  kv_mgr *kv;
  uint32_t block_tokens; /* KV block size, tokens */
  uint32_t depth;        /* batch queue capacity: pipeline_stages with PP, else 2 with async scheduling, else 1 */
  idx_ring waiting;      /* request indices: new ones at the back, preempted ones at the front */
  uint32_t *running;     /* admission order; includes requests whose last token is in flight */
  uint32_t n_running;
  size_t cap_running;
  sched_step *q;         /* [depth] batch queue ring: q[q_head] is the oldest */
  uint32_t q_head, q_len;
  uint64_t preemptions;  /* SGLang: retractions */
  /* SGLang's new_token_ratio (ADMIT_TOKEN_RATIO): the share of running requests' remaining output reserved
     at admission; decays by ratio_decay per decode step to ratio_min, reset by a retraction */
  double ratio, ratio_min, ratio_decay;
  bool full; /* SGLang's running_batch.batch_is_full: admission stopped for want of KV or seats; no prefill is tried
                until a running request leaves (scheduler.py get_new_batch_prefill, update_running_batch) */
  uint64_t retracted_tokens; /* tokens whose KV retractions freed (to be recomputed unless still cached) */
  itl_run itl_pend;      /* its run of equal inter-token gaps not yet in the record (metrics_itl) */
  /* prefix-cache stats as vLLM counts them (v1/metrics/stats.py PrefixCacheStats.record): at each admission
     with prefix caching on, the tokens it asked for and those found cached; a request preempted before
     counts apart (preempted_*), outside the exported hit rate */
  bool caching;
  uint64_t prefix_queries, prefix_hits, preempted_queries, preempted_hits;
  const uint64_t *hash_ids;   /* the trace's prefix-block ids (borrowed; requests name theirs by offset) */
  uint32_t hash_block_tokens; /* prompt tokens per id */
  uint32_t *run_ord;          /* sched_run_*: running positions by block phase, then position */
  size_t cap_run_ord;
  uint32_t *run_start;        /* [block_tokens + 1]: where each phase's positions begin in run_ord */
  /* speculative decoding, as vLLM's SpecDecodingStats counts it (v1/spec_decode/metrics.py): steps of a request
     with drafts, drafts, accepted drafts, and accepted drafts per position */
  uint64_t spec_drafts, spec_draft_tokens, spec_accepted, spec_accepted_pos[SPEC_MAX_K];
} sched;

/* A run of steady decode steps in closed form (cluster_events.c drives it).
 *
 * The state is steady when the batch queue is full, nothing waits, and every
 * queued step holds exactly the running requests, in admission order, one
 * decode token each, each sampling; every running request has its tokens so
 * far, the latest at one common time, and is more than a queue's depth of
 * steps from its last token. Then each later step, as long as nothing else
 * happens (the caller checks that the step's end is the timeline's next
 * event), does the same to every request: the oldest step ends (each request
 * gets one token, all with the same gap since the previous step's end), and
 * a step of the same requests is scheduled whose decode context has grown by
 * the batch size. sched_run_next does only that step's batch-level work: one
 * recorder run of gaps, the new step's description, and the KV work of the
 * requests that reach a block boundary in it (a block to allocate when the
 * step's token starts one, a full block's hash to register), in admission
 * order, as schedule_running and account would. The per-request counters
 * (tokens, computed, generated, the latest token's time) are brought up to
 * date by sched_run_end, and nothing reads them in between.
 *
 * sched_run_begin checks the state (O(running x depth)) and files the
 * requests by block phase; sched_run_can says whether one more step keeps the
 * state steady (no request reaches its last tokens, the pool has the blocks
 * the step takes: else the ordinary path handles it, preemption included);
 * results are those of step-by-step scheduling, bit for bit
 * (tests/integration/test_decode_run.c). */
typedef struct sched_run {
  uint32_t n;         /* steps done in closed form */
  uint32_t n_max;     /* steps allowed before a request nears its last token */
  uint32_t batch;     /* running requests (= tokens per step) */
  sim_ns last_tok_ns; /* when every running request got its latest token */
  uint64_t ctx;       /* decode context of the newest scheduled step */
  uint32_t pa, pc;    /* the next step's block phases: its token starts a block / fills one (sched.c) */
} sched_run;

bool sched_run_begin(sched *s, const request *reqs, sched_run *run);
bool sched_run_can(const sched *s, const request *reqs, const sched_run *run);
/* The oldest step ended at `now`: its tokens go to the recorder m, the next
 * step is scheduled and returned (for the caller to cost and place). */
sched_step *sched_run_next(sched *s, request *reqs, sched_run *run, sim_ns now, metrics_rec *m);
void sched_run_end(sched *s, request *reqs, const sched_run *run);

int sched_init(sched *s, const sched_cfg *cfg, uint32_t kv_blocks, uint32_t block_tokens, bool prefix_caching);
void sched_deinit(sched *s);

/* Puts a request at the tail of the waiting queue. */
void sched_add(sched *s, request *reqs, uint32_t idx);
/* Prompt tokens of request idx its KV cache holds now (the prefix cache's hit if it were scheduled now; 0 with
 * prefix caching off); nothing is taken or touched. */
uint32_t sched_cached_prefix(const sched *s, const request *reqs, uint32_t idx);
static inline bool sched_has_work(const sched *s) { return s->waiting.len || s->n_running || s->q_len; }
static inline uint32_t sched_num_waiting(const sched *s) { return s->waiting.len; }
static inline uint32_t sched_num_running(const sched *s) { return s->n_running; }
static inline bool sched_queue_full(const sched *s) { return s->q_len >= s->depth; }
/* k-th step of the batch queue, 0 = oldest (the running one). k < q_len. */
static inline sched_step *sched_queued(sched *s, uint32_t k) {
  uint32_t i = s->q_head + k; /* both below depth: no division (it was a fifth of start_step's profile) */
  return &s->q[i >= s->depth ? i - s->depth : i];
}

/* Schedules one step at `now` and appends it to the batch queue (which must
 * not be full). Returns it, or NULL when nothing could be scheduled (then
 * nothing changed). */
sched_step *sched_schedule(sched *s, request *reqs, sim_ns now);
/* Applies the oldest queued step (it ended at `now`) and removes it from the
 * queue. Indices of requests that finished are appended to done[] (capacity
 * >= the step's n_items); returns how many. */
uint32_t sched_complete(sched *s, request *reqs, sim_ns now, metrics_rec *m, uint32_t *done);
/* Removes and returns the head of the waiting queue (one is waiting). */
uint32_t sched_pop_head(sched *s);
/* Aborts request idx (a client went away, `servesim serve`): it leaves the
 * waiting queue or the running batch (admission order kept), its blocks go
 * back to the pool (cached ones stay findable), and its entries in steps
 * already scheduled are emptied (SCHED_NO_REQ: those steps still run and cost
 * what they cost, as in vLLM, whose abort does not recall a launched batch;
 * they carry no token back). State and seat are the caller's to reset. */
void sched_abort(sched *s, request *reqs, uint32_t idx);
/* Removes every request (for a failed replica): queued steps are dropped
 * (their tokens never arrive), running and waiting requests are appended to
 * out[] (capacity >= running + waiting) with their KV freed and progress and
 * placeholders reset; returns how many. */
uint32_t sched_drain(sched *s, request *reqs, uint32_t *out);

#endif
