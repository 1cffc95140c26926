/* cluster.h: the simulated deployment in virtual time: arrivals from a
 * trace, the benchmark client (optional --max-concurrency slots), a router,
 * and N replicas (each a scheduler + KV pool stepping through the cost model).
 *
 * Events (des.h): ARRIVAL (the next trace request; only one pending at a time,
 * so the heap stays small for million-request traces), STEP (a replica's
 * step finished: one pending per step in its batch queue, timed when the
 * step is scheduled; with pipeline parallelism up to pp steps are in flight,
 * one per stage), SAMPLE
 * (time series), FAIL (what-if: a replica is lost), KICK (an idle replica
 * starts a step after all events of the current instant, so simultaneous
 * arrivals form one batch), DELIVER (a sent request reaches the router after
 * the engine frontend's latency: HTTP, tokenization, IPC; it counts in TTFT,
 * which starts at the send).
 * A request that arrives is sent at once, or held by the client until a slot
 * frees (then TTFT counts from the slot acquisition, like vLLM's benchmark).
 * Requests whose prompt + output exceed max_model_len are rejected at send
 * with a reason (the server's 400), as are requests that could never fit in
 * a replica's whole KV pool (the memory plan rules that out for requests
 * within max_model_len; without the check such a request would preempt
 * itself forever) and requests when every replica failed.
 *
 * Run it with cluster_run (everything), or in slices from the libuv driver.
 *
 * Open mode (`servesim serve`, live/live.h): built on an empty trace, then
 * cluster_open; the caller creates each request as it comes
 * (cluster_new_request, then cluster_arrive at the current virtual time,
 * after running every event up to it), hears of its tokens and its end
 * through hooks, and may abort it (cluster_cancel). A closed request's slot is
 * reused, so memory follows the requests in flight, not those served; the
 * recorder keeps histograms only (metrics.h spill), and the run never
 * completes on its own.
 * Ownership: cluster_new/cluster_free; borrows the trace and the cost model;
 * owns requests, replicas and metrics. */
#ifndef SIM_CLUSTER_H
#define SIM_CLUSTER_H

#include "hw/cost.h"
#include "metrics/metrics.h"
#include "serve/autoscale.h"
#include "serve/request.h"
#include "serve/router.h"
#include "serve/sched.h"
#include "workload/trace.h"

enum { CLUSTER_MAX_FAILURES = 16 };

typedef struct cluster_cfg {
  uint32_t replicas;         /* engine cores: replicas x DP ranks */
  uint32_t dp_group;         /* attention data parallelism: consecutive cores that share MoE layers (the DP
                                ranks of one replica); 0 or 1 = none */
  bool dp_lockstep;          /* the DP ranks of a group step together (MoE layers: vLLM runs every rank's forward,
                                a dummy one where it has nothing, and each MoE layer gathers all ranks' tokens):
                                a group step starts when the group's previous one ended and lasts as long as its
                                slowest rank's step (cost_step_wait); else each rank keeps its own timeline */
  route_policy router;
  sched_cfg sched;
  uint32_t kv_blocks;        /* usable blocks per replica */
  uint32_t block_tokens;
  bool prefix_caching;
  uint32_t max_model_len;    /* tokens: prompt + output above this are rejected */
  uint32_t max_concurrency;  /* client slots; 0 = unlimited */
  sim_ns frontend_latency_ns; /* send -> router, per request; 0 = at once */
  sim_ns sample_interval_ns; /* time-series period; 0 = no time series */
  sim_ns time_limit_ns;      /* stop here, reporting the rest unfinished; 0 = none */
  bool apart;                /* simulate the replicas one after the other when nothing couples them (fleet.h:
                                round robin, open loop, no failures, DP or time limit); the results are the
                                shared timeline's. Off: the shared timeline always */
  bool step_by_step;         /* every engine step through the scheduler, also where a replica's next steps are
                                steady decode steps (sched_run_*: the same results, for checking) */
  /* disaggregated serving (cluster_disagg.c, docs/DISAGG.md): engine cores [0, prefill) are prefill workers,
     [prefill, replicas) decode workers; the cluster's cost model and the fields above (sched, kv_blocks) are the
     prefill pool's */
  struct {
    bool on;
    uint32_t prefill;            /* prefill workers */
    cost_model *decode_cost;     /* the decode workers' (borrowed, like the cluster's own) */
    sched_cfg decode_sched;
    uint32_t decode_dp_group;    /* lockstep DP group size of the decode pool (dp_group above: the prefill pool's) */
    uint32_t decode_kv_blocks;   /* usable blocks per decode worker */
    double xfer_ns_per_token;    /* KV transfer time per prompt token (the busiest GPU's share over its link) */
    double xfer_bytes_per_token; /* KV bytes per prompt token received over all of a decode worker's GPUs */
    sim_ns xfer_fixed_ns;        /* per transfer: the link's latency, read and completion notice */
    bool first_token_prefill;    /* the prefill worker's sampled token is the client's first, streamed by the decode
                                    worker when it takes the request in (SGLang; decode_sched.prebuilt), not
                                    recomputed there (vLLM) */
    uint32_t max_local_prefill;  /* conditional disaggregation: prompts with at most this many tokens outside the
                                    decode worker's prefix cache prefill there (0 = off; cluster_disagg.c) */
    bool local_needs_hit;        /* ... and only with a prefix hit there (TensorRT-LLM's rule) */
  } disagg;
  /* autoscaling (cluster_scale.c, serve/autoscale.h): `replicas` engine cores are slots (the runner gives
     2 x max: replicas draining beside a full fleet); [0, initial) serve from t = 0, the rest are off until the
     policy starts them. A started replica serves cold_start_ns after the decision; a removed one takes no new
     request, finishes those it holds, then frees its GPUs. Aggregated serving without DP groups or failures. */
  struct {
    bool on;
    autoscale_cfg policy;
    uint32_t initial;          /* replicas serving at t = 0 */
    sim_ns cold_start_ns;      /* decision -> serving */
    /* mode=planner: one replica's capacity in requests/s at a mean prompt and output length (the runner's
       simulation, runner/planner_cap.h); NAN or <= 0 when it cannot be computed */
    double (*capacity)(void *ctx, double isl, double osl);
    void *capacity_ctx;
  } scale;
  uint32_t n_failures;       /* what-if: replicas lost at given times */
  struct {
    uint32_t replica;
    sim_ns at_ns;
  } failures[CLUSTER_MAX_FAILURES];
} cluster_cfg;

/* Open mode: what the caller hears. The hooks must not call back into the
 * cluster; the request (cluster_request(c, idx)) may be read during the call only. */
typedef struct cluster_hooks {
  void *ctx;
  /* a step ended that sampled a token for request idx (reqs[idx].generated grew by one) */
  void (*tokens)(void *ctx, uint32_t idx, sim_ns now);
  /* request idx finished or was rejected (state, reject, times final); its slot is reused afterwards */
  void (*closed)(void *ctx, uint32_t idx, sim_ns now);
} cluster_hooks;

typedef struct cluster cluster; /* opaque: defined in cluster_impl.h, for the cluster's own files */

/* A cluster on the trace and the cost model (both borrowed, and kept alive by the caller until cluster_free); NULL
 * with err set on a bad configuration. */
cluster *cluster_new(const cluster_cfg *cfg, const trace *tr, cost_model *cost, sim_err *err);
void cluster_free(cluster *c); /* NULL is fine */
/* Processes at most max_events events with time <= until_ns. Returns true
 * when the run is over (all requests closed, time limit, or no events). */
bool cluster_run_slice(cluster *c, uint64_t max_events, sim_ns until_ns);
/* Runs to the end. */
void cluster_run(cluster *c);
/* Closes the run: requests still open are marked REJ_UNFINISHED and the
 * preemption count is totalled; the level integrals stop at the last event
 * processed (no extra time-series sample is taken). Idempotent. */
void cluster_finish(cluster *c);
/* Hands the request array over to the caller (who frees it with free()),
 * after cluster_finish: every block table is released first, so the caller
 * may reuse the memory (the runner rewrites it in place into the result's
 * smaller records: a run never holds both). *n gets the count. The cluster
 * keeps no request afterwards; cluster_free still frees everything else. */
request *cluster_take_requests(cluster *c, size_t *n);
/* Time of the next pending event (SIM_NS_INF if none). */
sim_ns cluster_next_time(const cluster *c);

/* Open mode (see above). cluster_open needs a cluster built on an empty
 * trace. A new request is PENDING until cluster_arrive, which must come with
 * now >= the time of every event already run and <= the next one's (the
 * caller runs cluster_run_slice up to now first); a request rejected at once
 * (too long, no replica) is closed inside cluster_arrive (hook called).
 * cluster_cancel aborts an open request: its blocks are freed, its seat and
 * client slot released; no hook is called. */
void cluster_open(cluster *c, const cluster_hooks *hooks);
uint32_t cluster_new_request(cluster *c, uint32_t prompt_tokens, uint32_t output_tokens);
/* The prompt's content for prefix caching: ids[j] names its tokens [j b, (j + 1) b) for b = the KV block
 * size (equal ids = equal tokens), n <= prompt_tokens / b; a request without them shares nothing. Call right
 * after cluster_new_request. */
void cluster_set_prompt_ids(cluster *c, uint32_t idx, const uint64_t *ids, uint32_t n);
void cluster_arrive(cluster *c, uint32_t idx, sim_ns now);
void cluster_cancel(cluster *c, uint32_t idx, sim_ns now);
/* Requests open (created, not closed or cancelled). */
size_t cluster_open_requests(const cluster *c);

/* Total waiting over replicas (O(1): kept as replicas change). */
uint32_t cluster_waiting(const cluster *c);

/* --- reading the cluster --------------------------------------------------------------------------------- */

/* Its configuration, as given to cluster_new. */
const cluster_cfg *cluster_config(const cluster *c);
/* Request idx (a trace index; in open mode the slot cluster_new_request gave): valid until the next call that
 * runs events or creates a request. */
const request *cluster_request(const cluster *c, uint32_t idx);
/* Engine core i's scheduler (its counters, queues and KV pool), i < cluster_config(c)->replicas. */
const sched *cluster_replica(const cluster *c, uint32_t i);

/* How a finished run went, beside its requests and its record. */
typedef struct cluster_outcome {
  bool complete;                   /* every request closed (not stopped by the time limit or an interrupt) */
  uint32_t in_flight;              /* sent and not finished at the end */
  uint8_t apart;                   /* 0 shared timeline, 1 replicas apart, 2 fell back to the shared timeline */
  uint64_t closed_form_steps;      /* steps done in closed form (sched_run_*) */
  uint64_t closed_form_held_steps; /* of those, done with their step ends held outside the heap */
  uint64_t events;                 /* events popped (every replica's when they ran apart) */
} cluster_outcome;
void cluster_get_outcome(const cluster *c, cluster_outcome *out);
/* Autoscaling: one replica-count change the policy made. */
typedef struct scale_event {
  sim_ns t_ns;
  uint32_t from, to;        /* replicas counted by the policy (starting + ready) before and after */
  uint32_t ready, starting; /* at the decision, before it */
  double metric;            /* the metric's mean over ready replicas */
} scale_event;
/* How the fleet's size went (after cluster_finish; all zero without autoscaling). */
typedef struct cluster_scale_outcome {
  double held_replica_s;    /* replica-seconds holding GPUs (starting, serving, draining) up to the last event */
  double serving_replica_s; /* of those, serving (ready) */
  uint32_t peak_held;       /* most replicas holding GPUs at once */
  uint32_t decisions, starts, drains, cancelled; /* cancelled: starts removed before they served */
  uint32_t slots_short;     /* replicas a decision could not start for want of a free slot */
  const scale_event *ev;    /* the changes, in time order (owned by the cluster, valid until cluster_free) */
  size_t n_ev;
} cluster_scale_outcome;
void cluster_get_scale(const cluster *c, cluster_scale_outcome *out);

/* Moves the run's record out to *out (after cluster_finish); the cluster keeps an empty one. */
void cluster_take_metrics(cluster *c, metrics_rec *out);

#endif
