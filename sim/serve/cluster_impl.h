/* cluster_impl.h: the cluster's own private header: the definition of struct cluster (opaque elsewhere,
 * cluster.h), the events both timelines run (cluster_events.c) and the timeline interface with its two
 * implementations. Included only by the cluster's implementation files:
 *   cluster.c          the public life cycle (new, free, run, finish, take), picks the timeline and falls back
 *   cluster_events.c   what each event does (the lowest part: calls none of the files below)
 *   cluster_shared.c   the shared timeline: every replica's events on one heap
 *   cluster_apart.c    replicas apart: each replica alone, one after the other (fleet.h)
 *   cluster_disagg.c   disaggregated serving: a prefill worker's request sent to a decode worker (events level)
 *   cluster_open.c     open mode (`servesim serve`): requests created, arrived and cancelled by the caller
 * The timelines and open mode use cluster_events.c and lower modules only, never cluster.c. */
#ifndef SIM_CLUSTER_IMPL_H
#define SIM_CLUSTER_IMPL_H

#include "core/des.h"
#include "core/ring.h"
#include "serve/cluster.h"
#include "serve/fleet.h"

enum { EV_ARRIVAL = 1, EV_STEP, EV_SAMPLE, EV_FAIL, EV_KICK, EV_DELIVER, EV_GSTEP, EV_GKICK, EV_XFER, EV_SCALE, EV_READY };

/* A replica's life under autoscaling (cluster_scale.c); without it every replica stays REP_READY. */
typedef enum rep_state { REP_READY = 0, REP_OFF, REP_STARTING, REP_DRAINING } rep_state;

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
  uint8_t state;        /* rep_state: only a REP_READY replica is routed to */
  uint32_t gen;         /* starts so far: a READY event of an earlier start (cancelled) is stale */
  sim_ns held_since;    /* when it took its GPUs (a start decision, or 0) */
  sim_ns ready_since;   /* when it began serving */
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

struct cluster {
  cluster_cfg cfg;
  const trace *tr;
  cost_model *cost;
  request *reqs;
  size_t n_reqs;
  replica *reps;
  dp_group *grp;        /* [replicas / dp_group] with dp_lockstep, else NULL */
  router rt;            /* holds its own view of every replica, updated on every change (cluster__touch);
                           disaggregated: of the prefill workers */
  router rt_dec;        /* disaggregated: the decode workers' router (index ri - cfg.disagg.prefill) */
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
  des_event run_q[4];   /* a decode run's own step ends while it lasts, in order (cluster_events.c, decode_run) */
  uint32_t run_head, run_len;
  bool run_held;        /* a decode run holds its step ends in run_q, not in the heap */
  uint64_t run_steps_held; /* of run_steps, those done so (tests see which way runs went) */
  const struct cluster_timeline *tl; /* the timeline that runs the events (below) */
  fleet *ap;            /* replicas apart (cfg.apart and eligible), until the run falls back or ends */
  uint8_t apart_outcome; /* 0 shared timeline, 1 replicas apart, 2 fell back to the shared timeline (a tie) */
  /* autoscaling (cluster_scale.c) */
  autoscaler as;
  cluster_scale_outcome so; /* its totals so far (ev points into sev) */
  scale_event *sev;
  size_t cap_sev;
  /* ttft_p90: the first tokens (time, TTFT in s) since the oldest still in the policy's window, oldest first
     from tt_head; appended by cluster_events.c, read and trimmed by cluster_scale.c */
  sim_ns *tt_t;
  double *tt_v;
  size_t tt_head, tt_n, tt_cap;
  /* mode=planner: the frontend's counters since the last decision (cluster__send, cluster__finished) */
  uint64_t pl_sent, pl_isl_sum, pl_done, pl_osl_sum;
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
};

/* What a timeline's slice ended with. */
typedef enum tl_status {
  TL_RUNNING,   /* events are left (max_events or until_ns reached) */
  TL_DONE,      /* the run is over: every request closed, the time limit, or no events */
  TL_FALL_BACK  /* replicas apart met a tie the heap cannot order (des.h): start again on the shared timeline */
} tl_status;

/* A timeline: how the cluster's events are run. cluster.c holds one (c->tl) and calls only these. */
typedef struct cluster_timeline {
  const char *name;
  /* Runs at most max_events events with time <= until_ns (c->slice_until is set). */
  tl_status (*slice)(cluster *c, uint64_t max_events, sim_ns until_ns);
  /* The run's totals from what ran so far (at the end, or on an interrupt); idempotent. */
  void (*finish)(cluster *c);
} cluster_timeline;

extern const cluster_timeline cluster_shared_timeline; /* cluster_shared.c */
extern const cluster_timeline cluster_apart_timeline;  /* cluster_apart.c (c->ap set) */

/* The cost model of engine core ri (disaggregated: its pool's). */
static inline cost_model *cluster__cost(const cluster *c, uint32_t ri) {
  return c->cfg.disagg.on && ri >= c->cfg.disagg.prefill ? c->cfg.disagg.decode_cost : c->cost;
}
/* Whether engine core ri is a prefill worker of a disaggregated deployment. */
static inline bool cluster__is_prefill(const cluster *c, uint32_t ri) {
  return c->cfg.disagg.on && ri < c->cfg.disagg.prefill;
}

/* Lockstep DP groups (cluster_cfg.dp_lockstep, c->grp): the cores in groups of cfg.dp_group, or, disaggregated,
 * each pool's cores in groups of its own size (the prefill pool's first: cfg.dp_group, then the decode pool's:
 * cfg.disagg.decode_dp_group); a pool of size-1 groups has none (its cores step alone). */
static inline uint32_t cluster__pool_group(const cluster *c, bool decode) {
  uint32_t n = decode ? c->cfg.disagg.decode_dp_group : c->cfg.dp_group;
  return n > 1 ? n : 1;
}
static inline uint32_t cluster__prefill_groups(const cluster *c) { /* groups before the decode pool's */
  uint32_t cores = c->cfg.disagg.on ? c->cfg.disagg.prefill : c->cfg.replicas, n = cluster__pool_group(c, false);
  return n > 1 ? cores / n : 0;
}
/* Core ri's group, or UINT32_MAX when it steps alone. */
static inline uint32_t cluster__group_of(const cluster *c, uint32_t ri) {
  if (!c->grp) return UINT32_MAX;
  bool dec = c->cfg.disagg.on && ri >= c->cfg.disagg.prefill;
  uint32_t n = cluster__pool_group(c, dec);
  if (n <= 1) return UINT32_MAX;
  return dec ? cluster__prefill_groups(c) + (ri - c->cfg.disagg.prefill) / n : ri / n;
}
/* Group g's first core and its size. */
static inline uint32_t cluster__group_first(const cluster *c, uint32_t g) {
  uint32_t np = cluster__prefill_groups(c);
  return g < np ? g * cluster__pool_group(c, false) : c->cfg.disagg.prefill + (g - np) * cluster__pool_group(c, true);
}
static inline uint32_t cluster__group_size(const cluster *c, uint32_t g) {
  return cluster__pool_group(c, g >= cluster__prefill_groups(c));
}

/* --- cluster_disagg.c --------------------------------------------------------------------------------------- */

/* Checks the disaggregated fields of cfg and sets up both pools' routers (else the one router). */
int cluster__disagg_init(cluster *c, sim_err *err);
/* The router that holds engine core ri, and ri's index in it. */
router *cluster__router_of(cluster *c, uint32_t ri, uint32_t *at);
/* Prefill worker ri's step ended with these n requests' one token: each keeps its blocks while its KV is sent to
 * a decode worker (the transfer's end is an XFER event). */
void cluster__prefill_done(cluster *c, uint32_t ri, const uint32_t *idx, uint32_t n, sim_ns now);
/* Request idx's KV reached decode worker ri: the prefill worker frees its blocks, the decode worker queues it. */
void cluster__on_xfer(cluster *c, uint32_t ri, uint32_t idx, sim_ns now);
/* Conditional disaggregation: whether request idx, about to be routed, prefills on a decode worker instead (then
 * it is queued there as an aggregated request); false leaves it to the prefill pool's router. */
bool cluster__prefill_local(cluster *c, uint32_t idx, sim_ns now);

/* --- cluster_scale.c: autoscaling ------------------------------------------------------------------------------ */

/* Checks cfg.scale, sets the replicas' first states and pushes the first decision. */
int cluster__scale_init(cluster *c, sim_err *err);
void cluster__scale_deinit(cluster *c);
void cluster__on_scale(cluster *c, sim_ns now);                    /* a decision period ends */
void cluster__on_ready(cluster *c, uint32_t ri, uint64_t gen, sim_ns now); /* a cold start ends */
void cluster__scale_finish(cluster *c, sim_ns end);                /* the replicas still holding GPUs, up to end */

/* --- cluster_events.c: the events and request steps both timelines use --------------------------------- */

/* Replica ri is off from now: its GPUs are released (autoscaling accounts for the time it held them). */
void cluster__replica_off(cluster *c, uint32_t ri, sim_ns now);

/* Replica ri's state may have changed (requests routed, scheduled, finished, preempted or drained; blocks taken
 * or freed): the router's view of it and the waiting total follow, before anything else reads them. */
void cluster__touch(cluster *c, uint32_t ri);
rq_reject cluster__refusal(const cluster *c, const request *r); /* why r is refused at send, REJ_NONE if not */
void cluster__close(cluster *c, uint32_t idx, sim_ns now);      /* request idx finished or rejected */
void cluster__free_slot(cluster *c, uint32_t idx);              /* open mode: idx's slot is reused */
void cluster__send(cluster *c, uint32_t idx, sim_ns now);
void cluster__fill_slots(cluster *c, sim_ns now);    /* client-held requests sent while slots are free */
void cluster__finished(cluster *c, uint32_t ri, uint32_t idx, sim_ns now);
void cluster__release_slot(cluster *c, sim_ns now);  /* a client slot frees */
void cluster__route(cluster *c, uint32_t idx, sim_ns now);
void cluster__kick(cluster *c, uint32_t ri, sim_ns now); /* an idle replica starts a step at the end of now */
void cluster__fill_queue(cluster *c, uint32_t ri, sim_ns now);
void cluster__fill_group(cluster *c, uint32_t g, sim_ns now);
/* event handlers */
void cluster__on_arrival(cluster *c, uint32_t idx, sim_ns now);
void cluster__on_step(cluster *c, uint32_t ri, sim_ns now);
void cluster__on_gstep(cluster *c, uint32_t g, uint64_t mask, sim_ns now);
void cluster__on_fail(cluster *c, uint32_t ri, sim_ns now);
void cluster__on_sample(cluster *c, sim_ns now);

#endif
