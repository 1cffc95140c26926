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
 * Ownership: cluster_init/cluster_deinit on caller storage; borrows the trace
 * and the cost model; owns requests, replicas and metrics. */
#ifndef SIM_CLUSTER_H
#define SIM_CLUSTER_H

#include "core/des.h"
#include "core/ring.h"
#include "hw/cost.h"
#include "metrics/metrics.h"
#include "serve/fleet.h"
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
  uint32_t n_failures;       /* what-if: replicas lost at given times */
  struct {
    uint32_t replica;
    sim_ns at_ns;
  } failures[CLUSTER_MAX_FAILURES];
} cluster_cfg;

typedef struct replica {
  sched s;
  bool kick_pending;    /* a KICK (start a step at the end of this instant) is pending */
  bool failed;
  uint32_t outstanding; /* routed and not finished */
  uint64_t steps;
  double busy_ns;       /* sum of its steps' GPU times (with PP: each batch's time through all stages) */
  step_sums sums;       /* its steps' op and bound times (metrics.h), added to the record at the end */
  sim_ns stage_free[CFG_MAX_PP]; /* when each pipeline stage finishes the last step placed on it */
  uint32_t waiting_seen; /* its waiting count as last added into cluster.n_waiting */
} replica;

/* A lockstep DP group (cluster_cfg.dp_lockstep): its batch queue of group
 * steps, each the steps its ranks scheduled together (a bit per rank). */
typedef struct dp_group {
  uint64_t mask[2];     /* FIFO of the group steps in flight (depth <= 2: no PP with DP), oldest first */
  uint32_t q_len;
  bool kick_pending;    /* a GKICK (start a group step at the end of this instant) is pending */
  sim_ns free_ns;       /* when the group's last placed step ends */
  sim_ns last_ready;    /* when the host work of its last placed step ends */
} dp_group;

/* Open mode: what the caller hears. The hooks must not call back into the
 * cluster; the request (c->reqs[idx]) may be read during the call only. */
typedef struct cluster_hooks {
  void *ctx;
  /* a step ended that sampled a token for request idx (reqs[idx].generated grew by one) */
  void (*tokens)(void *ctx, uint32_t idx, sim_ns now);
  /* request idx finished or was rejected (state, reject, times final); its slot is reused afterwards */
  void (*closed)(void *ctx, uint32_t idx, sim_ns now);
} cluster_hooks;

typedef struct cluster {
  cluster_cfg cfg;
  const trace *tr;
  cost_model *cost;
  request *reqs;
  size_t n_reqs;
  replica *reps;
  dp_group *grp;        /* [replicas / dp_group] with dp_lockstep, else NULL */
  router rt;            /* holds its own view of every replica, updated on every change (touch in cluster.c) */
  uint32_t n_waiting;   /* waiting requests over all replicas, kept as they change */
  des ev;
  metrics_rec m;
  size_t next_arrival;  /* trace cursor */
  idx_ring cq;          /* client FIFO of arrived, unsent requests */
  uint32_t in_flight;   /* sent, not finished (client slots used) */
  uint32_t *done_buf;
  size_t done_cap;
  uint32_t *drain_buf;
  size_t n_closed;      /* finished + rejected */
  bool complete;        /* every request closed */
  bool stopped;         /* time limit reached or interrupted */
  sim_ns slice_until;   /* the current slice's until_ns (cluster_run_slice): a decode run stops before it */
  uint64_t run_steps;   /* steps done in closed form (sched_run_*) */
  des_event run_q[4];   /* a decode run's own step ends while it lasts, in order (cluster.c, decode_run) */
  uint32_t run_head, run_len;
  bool run_held;        /* a decode run holds its step ends in run_q, not in the heap */
  uint64_t run_steps_held; /* of run_steps, those done so (tests see which way runs went) */
  fleet *ap;            /* replicas apart (cfg.apart and eligible), until the run falls back or ends */
  uint8_t apart_outcome; /* 0 shared timeline, 1 replicas apart, 2 fell back to the shared timeline (a tie) */
  /* open mode */
  bool open;
  cluster_hooks hooks;
  size_t cap_reqs;      /* slots allocated (n_reqs of them used so far) */
  uint32_t *free_slots; /* closed requests' slots, reused first */
  size_t n_free, cap_free;
  uint32_t next_id;     /* request ids stay unique across reused slots (prefix-cache identity) */
  uint64_t *ids;        /* open requests' prompt-block ids (prefix caching), each request's run at its hash_off;
                           the schedulers read it as their hash_ids */
  size_t n_ids, cap_ids, dead_ids; /* used, allocated, and used by closed requests (reclaimed by compaction) */
} cluster;

int cluster_init(cluster *c, const cluster_cfg *cfg, const trace *tr, cost_model *cost, sim_err *err);
void cluster_deinit(cluster *c);
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
 * keeps no request afterwards; cluster_deinit still frees everything else. */
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

#endif
