/* cluster.c: the cluster's life cycle: built on a trace and a cost model, run in slices by its timeline (the
 * shared one, or the replicas apart where nothing couples them: cluster_impl.h), finished, its requests and
 * record handed over; what callers read of it. What the events do is cluster_events.c's. */
#include "serve/cluster.h"
#include "serve/cluster_impl.h"

#include <stdlib.h>
#include <string.h>

static int init(cluster *c, const cluster_cfg *cfg, const trace *tr, cost_model *cost, sim_err *err) {
  memset(c, 0, sizeof *c);
  c->slice_until = SIM_NS_INF;
  ring_init(&c->cq, 1024);
  if (cfg->replicas == 0) return sim_errf(err, SIM_EINPUT, "replicas must be >= 1");
  if (cfg->kv_blocks == 0) return sim_errf(err, SIM_EINPUT, "the KV pool has no blocks");
  c->cfg = *cfg;
  c->tr = tr;
  c->cost = cost;
  c->n_reqs = tr->n;
  c->reqs = sim_calloc_huge(tr->n ? tr->n : 1, sizeof *c->reqs); /* filled below: few page faults */
  for (size_t i = 0; i < tr->n; i++) {
    const trace_req *q = &tr->reqs[i];
    request *r = &c->reqs[i];
    r->id = (uint32_t)i;
    r->prompt_tokens = q->prompt_tokens;
    r->output_tokens = q->output_tokens;
    r->num_tokens = q->prompt_tokens;
    r->arrival_ns = q->arrival_ns;
    r->first_sched_ns = SIM_NS_INF;
    r->queued_ns = SIM_NS_INF;
    r->replica = UINT32_MAX;
    r->prefill_worker = UINT32_MAX;
    kv_seq_init(&r->kv);
    r->session = q->session;
    r->hash_off = q->hash_off;
    r->n_hash = q->n_hash;
  }
  c->reps = sim_calloc(cfg->replicas, sizeof *c->reps);
  for (uint32_t i = 0; i < cfg->replicas; i++) {
    bool dec = cfg->disagg.on && i >= cfg->disagg.prefill; /* a decode worker: its pool's scheduler and blocks */
    sched_init(&c->reps[i].s, dec ? &cfg->disagg.decode_sched : &cfg->sched,
               dec ? cfg->disagg.decode_kv_blocks : cfg->kv_blocks, cfg->block_tokens, cfg->prefix_caching);
    c->reps[i].s.hash_ids = tr->hash_ids;
    c->reps[i].s.hash_block_tokens = tr->hash_block_tokens;
  }
  uint32_t gp = cfg->dp_group > 1 ? cfg->dp_group : 1, gd = cfg->disagg.decode_dp_group > 1 ? cfg->disagg.decode_dp_group : 1;
  if (cfg->dp_lockstep && (gp > 1 || (cfg->disagg.on && gd > 1))) {
    uint32_t pc = cfg->disagg.on ? cfg->disagg.prefill : cfg->replicas, dc = cfg->replicas - pc;
    if (pc % gp || dc % gd || gp > 64 || gd > 64 || cfg->sched.pipeline_stages > 1 || cfg->n_failures)
      return sim_errf(err, SIM_EINPUT, "DP lockstep: %u engine cores in groups of %u ranks (and %u in groups of %u) "
                      "must be whole groups of at most 64, without pipeline parallelism or lost replicas", pc, gp, dc,
                      gd);
    c->grp = sim_calloc((gp > 1 ? pc / gp : 0) + (gd > 1 ? dc / gd : 0) + 1, sizeof *c->grp);
  }
  int rc = cluster__disagg_init(c, err);
  if (rc) return rc;
  des_init(&c->ev);
  metrics_init(&c->m, cfg->sample_interval_ns);
  c->done_cap = 1024;
  c->done_buf = sim_malloc(c->done_cap * sizeof *c->done_buf);
  if (tr->n) des_push(&c->ev, tr->reqs[0].arrival_ns, EV_ARRIVAL, 0, 0);
  if (cfg->sample_interval_ns) des_push_late(&c->ev, 0, EV_SAMPLE, 0, 0);
  for (uint32_t k = 0; k < cfg->n_failures; k++) {
    if (cfg->failures[k].replica >= cfg->replicas)
      return sim_errf(err, SIM_EINPUT, "replica failure: replica %u does not exist (replicas: %u)",
                      cfg->failures[k].replica, cfg->replicas);
    des_push(&c->ev, cfg->failures[k].at_ns, EV_FAIL, cfg->failures[k].replica, 0);
  }
  if ((rc = cluster__scale_init(c, err))) return rc;
  if (tr->n == 0) c->complete = true;
  if (cfg->apart && cfg->replicas > 1 && cfg->router == ROUTE_ROUND_ROBIN && !cfg->max_concurrency &&
      !cfg->n_failures && cfg->dp_group <= 1 && !cfg->time_limit_ns && tr->n && !cfg->disagg.on && !cfg->scale.on)
    c->ap = fleet_new(cfg->replicas, cfg->sample_interval_ns);
  c->tl = c->ap ? &cluster_apart_timeline : &cluster_shared_timeline;
  return SIM_OK;
}

static void release_tables(cluster *c) {
  for (size_t i = 0; c->reqs && i < c->n_reqs; i++) {
    request *r = &c->reqs[i];
    if (r->kv.n_blocks) kv_seq_free(c->reps[r->replica].s.kv, &r->kv); /* still held at the end (interrupt, time limit) */
    kv_seq_deinit(&r->kv);
  }
}

static void deinit(cluster *c) {
  release_tables(c);
  if (c->reps)
    for (uint32_t i = 0; i < c->cfg.replicas; i++) sched_deinit(&c->reps[i].s);
  free(c->reps);
  free(c->grp);
  router_deinit(&c->rt);
  router_deinit(&c->rt_dec);
  free(c->reqs);
  ring_free(&c->cq);
  free(c->done_buf);
  free(c->drain_buf);
  free(c->free_slots);
  free(c->ids);
  des_deinit(&c->ev);
  metrics_deinit(&c->m);
  fleet_free(c->ap);
  cluster__scale_deinit(c);
  memset(c, 0, sizeof *c);
}

cluster *cluster_new(const cluster_cfg *cfg, const trace *tr, cost_model *cost, sim_err *err) {
  cluster *c = sim_malloc(sizeof *c);
  if (init(c, cfg, tr, cost, err)) {
    deinit(c); /* safe on a cluster whose init failed part way (zeroed first) */
    free(c);
    return NULL;
  }
  return c;
}

void cluster_free(cluster *c) {
  if (!c) return;
  deinit(c);
  free(c);
}

request *cluster_take_requests(cluster *c, size_t *n) {
  release_tables(c);
  request *r = c->reqs;
  *n = c->n_reqs;
  c->reqs = NULL;
  c->n_reqs = 0;
  return r;
}

uint32_t cluster_waiting(const cluster *c) { return c->n_waiting; }

sim_ns cluster_next_time(const cluster *c) { return des_peek_time(&c->ev); }

/* A tie des_push_from cannot order (des.h): the run starts again on the shared timeline. */
static void fall_back(cluster *c) {
  cluster_cfg cfg = c->cfg;
  cfg.apart = false;
  const trace *tr = c->tr;
  cost_model *cost = c->cost;
  cost_set_src_counts(cost, (const uint64_t(*)[SRC_COUNT])c->ap->src_snap);
  /* the trace's rows may be gone (the runner drops them once copied): rebuild them from the requests */
  trace rows = *tr;
  rows.reqs = sim_malloc((c->n_reqs ? c->n_reqs : 1) * sizeof *rows.reqs);
  for (size_t i = 0; i < c->n_reqs; i++) {
    const request *r = &c->reqs[i];
    rows.reqs[i] = (trace_req){r->arrival_ns, r->prompt_tokens, r->output_tokens, r->session, r->hash_off, r->n_hash};
  }
  rows.n = c->n_reqs;
  deinit(c);
  sim_err err;
  int rc = init(c, &cfg, &rows, cost, &err);
  SIM_ASSERT(rc == SIM_OK); /* the same configuration passed before */
  free(rows.reqs);
  c->tr = tr;
  c->apart_outcome = 2;
}

bool cluster_run_slice(cluster *c, uint64_t max_events, sim_ns until_ns) {
  c->slice_until = until_ns;
  if (c->ap && !c->ap->running && c->ap->ri == 0 && until_ns != SIM_NS_INF) { /* paced: the shared timeline */
    fleet_free(c->ap);
    c->ap = NULL;
    c->tl = &cluster_shared_timeline;
  }
  tl_status st = c->tl->slice(c, max_events, until_ns);
  if (st == TL_FALL_BACK) {
    fall_back(c);
    return false;
  }
  return st == TL_DONE;
}

void cluster_run(cluster *c) {
  while (!cluster_run_slice(c, UINT64_MAX, SIM_NS_INF)) {
  }
}

void cluster_finish(cluster *c) {
  c->tl->finish(c); /* replicas apart, interrupted: the replicas run so far */
  cluster__scale_finish(c, des_now(&c->ev));
  uint64_t pre = 0;
  for (uint32_t i = 0; i < c->cfg.replicas; i++) {
    pre += c->reps[i].s.preemptions;
    metrics_add_sums(&c->m, &c->reps[i].sums);
    metrics_itl_flush(&c->m, &c->reps[i].s.itl_pend);
  }
  c->m.preemptions = pre;
  for (size_t i = 0; i < c->n_reqs; i++) {
    request *r = &c->reqs[i];
    if (r->state == RQ_FINISHED || r->state == RQ_REJECTED) continue;
    r->state = RQ_REJECTED;
    r->reject = REJ_UNFINISHED;
    c->n_closed++;
  }
}

const cluster_cfg *cluster_config(const cluster *c) { return &c->cfg; }

const request *cluster_request(const cluster *c, uint32_t idx) { return &c->reqs[idx]; }

const sched *cluster_replica(const cluster *c, uint32_t i) { return &c->reps[i].s; }

void cluster_get_outcome(const cluster *c, cluster_outcome *out) {
  out->complete = c->complete;
  out->in_flight = c->in_flight;
  out->apart = c->apart_outcome;
  out->closed_form_steps = c->run_steps;
  out->closed_form_held_steps = c->run_steps_held;
  out->events = c->ev.n_popped; /* des_reset keeps the count: every replica's events when they ran apart */
}

void cluster_get_scale(const cluster *c, cluster_scale_outcome *out) { *out = c->so; }

void cluster_take_metrics(cluster *c, metrics_rec *out) {
  *out = c->m;
  memset(&c->m, 0, sizeof c->m); /* moved: deinit must not free it */
}
