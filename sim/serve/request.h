/* request.h: one request's state as it moves through a simulated deployment.
 *
 * Lifecycle: PENDING (not yet arrived) -> CLIENT (arrived, waiting for a
 * client slot under --max-concurrency) -> WAITING (in a replica's queue) ->
 * RUNNING (in the batch) -> FINISHED; RUNNING -> WAITING again on preemption
 * (recompute: KV freed, num_computed reset to 0, front of the queue);
 * REJECTED when it can never run (prompt + output > max_model_len, or larger
 * than the whole KV pool). In open mode (`servesim serve`, cluster.h) a
 * request whose client disconnects is aborted in any state.
 *
 * Token accounting (vLLM V1, sched.h): num_tokens = prompt + generated tokens
 * known so far; num_computed = tokens whose KV is written or scheduled to be
 * (it advances when a step is scheduled); pending = tokens sampled by steps
 * that are scheduled but have not ended (vLLM's num_output_placeholders). A
 * step schedules n <= num_tokens + pending - num_computed tokens; when it
 * reaches the end it samples one token (pending++), which becomes real when
 * the step ends (pending--, generated++, num_tokens++). So the step that
 * computes the last prompt chunk emits the first token, and every decode step
 * computes the previous token's KV and samples the next.
 * Disaggregated (cluster_disagg.c): RUNNING on a prefill worker with output_tokens 1 -> its one token done,
 * the blocks held, KV sent (XFER: still RUNNING, replica = the prefill worker) -> WAITING on a decode worker with
 * ext_tokens = prompt - 1 (generated, first_token_ns reset: the client's first token comes from the decode worker).
 * Invariant: num_computed <= num_tokens + pending, num_tokens = prompt_tokens
 * + generated, generated + pending <= output_tokens. */
#ifndef SIM_REQUEST_H
#define SIM_REQUEST_H

#include "core/common.h"
#include "metrics/metrics.h" /* rq_reject */
#include "serve/kv.h"

typedef enum rq_state {
  RQ_PENDING = 0,
  RQ_CLIENT,
  RQ_FRONTEND,  /* sent, on its way through the engine's frontend (HTTP, tokenization) */
  RQ_WAITING,
  RQ_RUNNING,
  RQ_FINISHED,
  RQ_REJECTED,
  RQ_CANCELLED  /* open mode only (cluster_cancel): its client went away while it was in the frontend; the slot
                   is reused once its DELIVER event has passed */
} rq_state;

typedef struct request {
  uint32_t id;            /* index in the trace */
  uint32_t replica;       /* replica it was routed to */
  uint32_t prompt_tokens; /* input tokens */
  uint32_t output_tokens; /* tokens to generate (ignore_eos) */
  uint32_t num_tokens;    /* prompt + generated */
  uint32_t num_computed;  /* tokens with KV written */
  uint32_t generated;     /* output tokens emitted */
  uint32_t pending;       /* sampled tokens of scheduled steps that have not ended (placeholders) */
  uint32_t cached_tokens; /* prefix-cache hit tokens at the last admission */
  uint32_t preemptions;   /* times preempted (SGLang: retracted) */
  uint32_t prefilled;     /* SGLang: tokens its latest prefill covered, which its radix tree holds once prefilled
                             (cache_unfinished_req); a retraction keeps them cached and frees the rest */
  /* prefix identity (what kv_content says of it, built on demand by the scheduler: a million requests keep
     12 bytes each rather than a kv_content): */
  uint32_t session;       /* 0 = none, else the multi-turn session */
  uint32_t hash_off;      /* first prefix-block id in the trace's hash_ids */
  uint32_t n_hash;        /* prefix-block ids; 0 = none */
  uint8_t state;          /* rq_state */
  uint8_t reject;         /* rq_reject */
  sim_ns arrival_ns;      /* trace arrival */
  sim_ns send_ns;         /* sent to the server (client slot acquired): TTFT/E2EL origin */
  sim_ns queued_ns;       /* first reached a scheduler's queue (send + the engine frontend's latency) */
  sim_ns first_sched_ns;  /* first time scheduled (queueing delay = first_sched - queued) */
  sim_ns first_token_ns;  /* first output token */
  sim_ns last_token_ns;   /* latest output token */
  sim_ns finish_ns;       /* last output token (= E2EL end) */
  kv_seq kv;              /* block table (disaggregated: the prefill worker's blocks held while its KV is sent) */
  /* disaggregated serving (cluster_disagg.c, docs/DISAGG.md) */
  uint32_t prefill_worker;  /* engine core that ran its prefill; UINT32_MAX: none (agg) */
  uint32_t disagg_output;   /* while on a prefill worker: its real output length (output_tokens is 1 there) */
  uint32_t ext_tokens;      /* prompt tokens whose KV came from a prefill worker: a decode worker's scheduler
                               allocates blocks for them at admission without computing them; 0 = none */
  uint64_t xfer_bytes;      /* KV bytes sent to its decode worker (over all GPUs) */
  sim_ns xfer_start_ns, xfer_end_ns; /* the KV transfer (both 0: none) */
} request;

#endif
