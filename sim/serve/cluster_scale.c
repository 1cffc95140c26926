/* cluster_scale.c: autoscaling in the cluster (cluster.h, cfg.scale): every decision period the policy
 * (serve/autoscale.h) reads vLLM's gauges from the serving replicas and says how many replicas it wants; the
 * cluster starts or removes replicas to match.
 *
 * A replica's life: OFF -> STARTING (holds its GPUs; takes no request) -> READY (routed to) -> DRAINING (takes
 * no new request, keeps stepping until every request it holds is finished) -> OFF (GPUs released). A start
 * decided at t serves from t + cold_start_ns, with an empty KV cache. Removal follows a ReplicaSet's choice of
 * pods to delete (kubernetes pkg/controller/replicaset: not-ready pods before ready ones, then the newest): the
 * newest starting replica first (its start is cancelled: OFF at once), then the most recently ready one, which
 * drains. So a request is never lost or moved: it stays on the replica the router gave it, and the router only
 * ever sees READY replicas. The policy counts starting + ready replicas (HPA's spec replicas; a draining pod has
 * its deletion timestamp and is ignored), the metric over ready ones.
 * Engine-core slots are reused: an OFF slot starts again with a fresh KV pool (a new pod) and keeps its
 * counters. Calls cluster_events.c and the policy only. */
#include "serve/cluster_impl.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

int cluster__scale_init(cluster *c, sim_err *err) {
  const cluster_cfg *cfg = &c->cfg;
  if (!cfg->scale.on) return SIM_OK;
  const autoscale_cfg *p = &cfg->scale.policy;
  if (cfg->disagg.on || cfg->dp_group > 1 || cfg->n_failures)
    return sim_errf(err, SIM_EINPUT, "autoscaling: aggregated serving only, without data-parallel groups or lost "
                    "replicas (not modelled together)");
  if (p->max > cfg->replicas || cfg->scale.initial < p->min || cfg->scale.initial > p->max || !p->interval_s)
    return sim_errf(err, SIM_EINPUT, "autoscaling: %u slots for max %u, initial %u (min %u)", cfg->replicas, p->max,
                    cfg->scale.initial, p->min);
  autoscaler_init(&c->as, p);
  for (uint32_t i = cfg->scale.initial; i < cfg->replicas; i++) c->reps[i].state = REP_OFF;
  for (uint32_t i = 0; i < cfg->replicas; i++) cluster__touch(c, i);
  c->so.peak_held = cfg->scale.initial;
  des_push(&c->ev, sim_s_to_ns(p->interval_s), EV_SCALE, 0, 0);
  return SIM_OK;
}

void cluster__scale_deinit(cluster *c) {
  autoscaler_deinit(&c->as);
  free(c->sev);
  free(c->tt_t);
  free(c->tt_v);
  c->sev = NULL;
  c->tt_t = NULL;
  c->tt_v = NULL;
}

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

/* The p90 of the TTFTs of the first tokens in (now - window, now] (linear between ranks, as numpy and
 * metrics.h's percentiles); NAN when there is none. Drops the older samples. */
static double ttft_p90(cluster *c, sim_ns now) {
  sim_ns w = sim_s_to_ns(c->cfg.scale.policy.window_s);
  while (c->tt_head < c->tt_n && c->tt_t[c->tt_head] + w <= now) c->tt_head++;
  size_t n = c->tt_n - c->tt_head;
  if (!n) return NAN;
  double *v = sim_malloc(n * sizeof *v);
  memcpy(v, c->tt_v + c->tt_head, n * sizeof *v);
  qsort(v, n, sizeof *v, cmp_double);
  double pos = 0.9 * (double)(n - 1);
  size_t lo = (size_t)pos;
  double p = lo + 1 < n ? v[lo] + (pos - (double)lo) * (v[lo + 1] - v[lo]) : v[lo];
  free(v);
  return p;
}

static void count(const cluster *c, uint32_t n[4]) {
  memset(n, 0, 4 * sizeof *n);
  for (uint32_t i = 0; i < c->cfg.replicas; i++) n[c->reps[i].state]++;
}

/* Starts k replicas in the lowest OFF slots. */
static void start(cluster *c, uint32_t k, sim_ns now) {
  for (uint32_t i = 0; i < c->cfg.replicas && k; i++) {
    replica *rep = &c->reps[i];
    if (rep->state != REP_OFF) continue;
    if (rep->gen || i < c->cfg.scale.initial) { /* it served before; a new pod has nothing cached */
      kv_mgr *fresh = kv_new(kv_num_blocks(rep->s.kv), kv_block_tokens(rep->s.kv), c->cfg.prefix_caching);
      kv_free(rep->s.kv);
      rep->s.kv = fresh;
    }
    rep->state = REP_STARTING;
    rep->gen++;
    rep->held_since = now;
    des_push(&c->ev, now + c->cfg.scale.cold_start_ns, EV_READY, i, rep->gen);
    c->so.starts++;
    k--;
  }
  c->so.slots_short += k;
}

/* The replica of this state to remove first: the latest by `key` (started or became ready), then the highest
 * index; UINT32_MAX if none. */
static uint32_t newest(const cluster *c, uint8_t state) {
  uint32_t best = UINT32_MAX;
  for (uint32_t i = 0; i < c->cfg.replicas; i++) {
    const replica *r = &c->reps[i];
    if (r->state != state) continue;
    sim_ns key = state == REP_STARTING ? r->held_since : r->ready_since;
    if (best == UINT32_MAX) best = i;
    else {
      const replica *b = &c->reps[best];
      sim_ns bk = state == REP_STARTING ? b->held_since : b->ready_since;
      if (key >= bk) best = i;
    }
  }
  return best;
}

/* Removes k replicas: starting ones first (cancelled), then ready ones (drained). */
static void remove_k(cluster *c, uint32_t k, sim_ns now) {
  for (; k; k--) {
    uint32_t i = newest(c, REP_STARTING);
    if (i != UINT32_MAX) {
      cluster__replica_off(c, i, now); /* its READY event is now stale (gen) */
      c->so.cancelled++;
      continue;
    }
    i = newest(c, REP_READY);
    SIM_ASSERT(i != UINT32_MAX);
    c->reps[i].state = REP_DRAINING;
    c->so.drains++;
    cluster__touch(c, i);
    if (c->reps[i].outstanding == 0) cluster__replica_off(c, i, now);
  }
}

static void record(cluster *c, sim_ns now, uint32_t from, uint32_t to, const uint32_t n[4], double metric) {
  SIM_GROW(c->sev, c->cap_sev, c->so.n_ev + 1);
  c->sev[c->so.n_ev++] = (scale_event){now, from, to, n[REP_READY], n[REP_STARTING], metric};
  c->so.ev = c->sev;
}

/* mode=planner (autoscale.h, planner_replicas): the last interval's requests at one replica's capacity for its
 * mean lengths; *shown = that capacity (req/s), 0 when the interval was skipped. */
static uint32_t planner_decide(cluster *c, uint32_t cur, double *shown) {
  const autoscale_cfg *p = &c->cfg.scale.policy;
  uint32_t want = cur;
  *shown = 0;
  if (c->pl_sent && c->pl_done && c->cfg.scale.capacity) {
    double isl = (double)c->pl_isl_sum / (double)c->pl_sent, osl = (double)c->pl_osl_sum / (double)c->pl_done;
    double cap = c->cfg.scale.capacity(c->cfg.scale.capacity_ctx, isl, osl);
    want = planner_replicas(p, cur, (double)c->pl_sent, cap);
    if (cap > 0) *shown = cap;
  }
  c->pl_sent = c->pl_isl_sum = c->pl_done = c->pl_osl_sum = 0;
  return want;
}

/* HPA's decision (autoscale.h) on the policy's metric over the ready replicas; *shown = the metric per ready replica
 * (ttft_p90: the fleet's value, 0 without one). */
static uint32_t hpa_decide(cluster *c, sim_ns now, const uint32_t n[4], double *shown) {
  const autoscale_cfg *p = &c->cfg.scale.policy;
  double sum = 0;
  for (uint32_t i = 0; p->metric != AS_TTFT_P90 && i < c->cfg.replicas; i++) {
    const replica *rep = &c->reps[i];
    if (rep->state != REP_READY) continue;
    sum += p->metric == AS_WAITING   ? (double)sched_num_waiting(&rep->s)
           : p->metric == AS_RUNNING ? (double)sched_num_running(&rep->s)
                                     : kv_usage(rep->s.kv);
  }
  if (p->metric == AS_TTFT_P90) sum = ttft_p90(c, now);
  *shown = p->metric == AS_TTFT_P90 ? (isnan(sum) ? 0.0 : sum) : n[REP_READY] ? sum / n[REP_READY] : 0.0;
  return autoscaler_decide(&c->as, now, n[REP_READY], n[REP_STARTING], sum);
}

void cluster__on_scale(cluster *c, sim_ns now) {
  uint32_t n[4];
  count(c, n);
  uint32_t cur = n[REP_READY] + n[REP_STARTING];
  double shown;
  uint32_t want = c->cfg.scale.policy.planner ? planner_decide(c, cur, &shown) : hpa_decide(c, now, n, &shown);
  c->so.decisions++;
  if (want != cur) record(c, now, cur, want, n, shown);
  if (want > cur) start(c, want - cur, now);
  else if (want < cur) remove_k(c, cur - want, now);
  count(c, n);
  uint32_t held = n[REP_READY] + n[REP_STARTING] + n[REP_DRAINING];
  if (held > c->so.peak_held) c->so.peak_held = held;
  if (!c->complete) des_push(&c->ev, now + sim_s_to_ns(c->cfg.scale.policy.interval_s), EV_SCALE, 0, 0);
}

void cluster__on_ready(cluster *c, uint32_t ri, uint64_t gen, sim_ns now) {
  replica *rep = &c->reps[ri];
  if (rep->state != REP_STARTING || rep->gen != gen) return; /* cancelled before it served */
  rep->state = REP_READY;
  rep->ready_since = now;
  cluster__touch(c, ri);
  /* requests held by the client (max concurrency) wait for slots, not replicas; nothing queues for a replica */
}

void cluster__scale_finish(cluster *c, sim_ns end) {
  if (!c->cfg.scale.on) return;
  for (uint32_t i = 0; i < c->cfg.replicas; i++) {
    replica *rep = &c->reps[i];
    if (rep->state == REP_OFF) continue;
    c->so.held_replica_s += (double)(end - rep->held_since) / 1e9;
    if (rep->state == REP_READY || rep->state == REP_DRAINING) c->so.serving_replica_s += (double)(end - rep->ready_since) / 1e9;
    rep->held_since = rep->ready_since = end; /* idempotent */
  }
}
