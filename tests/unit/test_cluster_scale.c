/* test_cluster_scale.c: autoscaling in the cluster (serve/cluster_scale.c):
 *   - conservation over random runs (every metric, the fleet's TTFT p90 too) with replicas started and drained all the time (tiny decision periods, short
 *     windows, cold starts of 0-2 s, bursts): every request ends FINISHED or REJECTED exactly once, a finished one
 *     generated exactly its output tokens, nothing is left outstanding, no replica is left draining, the KV pools
 *     pass kv_check, and the accounting holds (serving <= held replica-seconds <= slots x the run);
 *   - a replica serves nothing before its cold start ends: on a burst, the replicas the policy starts get their
 *     first request at (first decision + cold start) or later, and they do get some;
 *   - a drained replica finishes what it holds and takes nothing new. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/rng.h"
#include "serve/cluster.h"
#include "serve/cluster_impl.h" /* white-box: the replicas' states */
#include "testutil.h"

typedef tu_world world;

static void base_cfg(cluster_cfg *cc, uint32_t slots) {
  memset(cc, 0, sizeof *cc);
  cc->replicas = slots;
  cc->block_tokens = 16;
  cc->max_model_len = 4096;
  cc->kv_blocks = 2000;
  cc->sched = (sched_cfg){64, 2048, 0, true, false, ADMIT_ON_DEMAND, false, 1, 0, 0, 0, false, false, false, 0, 0, 0, 0, {0}};
}

static void world_new(world *w) {
  w->m = tu_model_llama70b();
  w->g = tu_gpu_h200();
  w->e = tu_engine_vllm();
  w->d = tu_deploy(4, DT_BF16);
  sim_err err = {0, ""};
  cr_assert_eq(cost_new(&w->cost, &w->m, &w->g, &w->e, &w->d, &err), SIM_OK, "%s", err.msg);
  trace_init(&w->tr);
}

static void world_free(world *w) {
  cluster_free(w->c);
  trace_free(&w->tr);
  cost_free(w->cost);
  free(w);
}

/* A fresh world and a cluster config of 8 slots under the policy `spec`, `initial` replicas warm. */
static world *scaled_world(cluster_cfg *cc, route_policy rp, const char *spec, uint32_t initial) {
  world *w = calloc(1, sizeof *w);
  world_new(w);
  base_cfg(cc, 8);
  cc->router = rp;
  cc->scale.on = true;
  autoscale_cfg_init(&cc->scale.policy);
  sim_err err = {0, ""};
  cr_assert_eq(autoscale_parse(&cc->scale.policy, spec, "test", &err), 0, "%s", err.msg);
  cc->scale.initial = initial;
  return w;
}

static void check_conserved(const cluster *c, int round) {
  size_t fin = 0;
  for (size_t i = 0; i < c->n_reqs; i++) {
    const request *r = &c->reqs[i];
    cr_assert(r->state == RQ_FINISHED || r->state == RQ_REJECTED, "round %d: request %zu in state %d", round, i, r->state);
    if (r->state == RQ_FINISHED) {
      fin++;
      cr_assert_eq(r->generated, r->output_tokens, "round %d: request %zu", round, i);
    } else {
      cr_assert_neq(r->reject, REJ_NONE, "round %d: request %zu", round, i);
      cr_assert_neq(r->reject, REJ_NO_REPLICA, "round %d: request %zu found no serving replica", round, i);
    }
  }
  cr_assert_eq(c->n_closed, c->n_reqs, "round %d", round);
  cr_assert_eq(c->m.finished, fin, "round %d: finished counted once each", round);
}

/* Builds and runs w's cluster under cc, checks conservation and returns the fleet's outcome. */
static void run_checked(world *w, const cluster_cfg *cc, cluster_scale_outcome *so) {
  sim_err err = {0, ""};
  cr_assert((w->c = cluster_new(cc, &w->tr, w->cost, &err)), "%s", err.msg);
  cluster_run(w->c);
  cluster_finish(w->c);
  check_conserved(w->c, 0);
  cluster_get_scale(w->c, so);
}

/* A capacity that falls with the lengths (planner runs of the random test). */
static double stand_in_capacity(void *ctx, double isl, double osl) {
  (void)ctx;
  return 2000.0 / (isl + 4 * osl);
}

Test(cluster_scale, random_runs_lose_and_duplicate_nothing) {
  rng r;
  rng_seed(&r, 46);
  uint64_t starts = 0, drains = 0, cancelled = 0;
  for (int round = 0; round < 150; round++) {
    world *w = calloc(1, sizeof *w);
    world_new(w);
    cluster_cfg cc;
    uint32_t max = 1 + (uint32_t)rng_below(&r, 5);
    base_cfg(&cc, 2 * max);
    cc.router = (route_policy)rng_below(&r, 3);
    cc.prefix_caching = rng_below(&r, 2);
    cc.kv_blocks = 200 + (uint32_t)rng_below(&r, 2000); /* small pools preempt */
    cc.sched.max_num_seqs = 1 + (uint32_t)rng_below(&r, 64);
    cc.sched.async_scheduling = rng_below(&r, 2);
    cc.max_concurrency = rng_below(&r, 3) ? 0 : 1 + (uint32_t)rng_below(&r, 8);
    cc.sample_interval_ns = rng_below(&r, 2) ? 0 : (1 + rng_below(&r, 500)) * SIM_NS_PER_MS;
    cc.scale.on = true;
    autoscale_cfg *p = &cc.scale.policy;
    autoscale_cfg_init(p);
    p->on = true;
    p->metric = (as_metric)rng_below(&r, AS_METRIC_COUNT);
    p->target = p->metric == AS_KV_USAGE   ? 0.05 + 0.9 * rng_uniform(&r)
                : p->metric == AS_TTFT_P90 ? 0.02 + rng_uniform(&r) /* seconds */
                                           : 0.5 + (double)rng_below(&r, 8);
    p->window_s = 0.1 + 5 * rng_uniform(&r);
    p->max = max;
    p->min = 1 + (uint32_t)rng_below(&r, max);
    p->interval_s = 0.01 + 0.5 * rng_uniform(&r);
    p->down_window_s = rng_below(&r, 2) ? 0 : 2 * rng_uniform(&r);
    p->up_window_s = rng_below(&r, 4) ? 0 : rng_uniform(&r);
    p->up_limit = rng_below(&r, 2);
    if (rng_below(&r, 5) == 0) { /* Dynamo's planner on a stand-in capacity */
      p->planner = true;
      cc.scale.capacity = stand_in_capacity;
      cc.scale.capacity_ctx = NULL;
    }
    cc.scale.initial = p->min + (uint32_t)rng_below(&r, max - p->min + 1);
    cc.scale.cold_start_ns = rng_below(&r, 4) ? rng_below(&r, 2000) * SIM_NS_PER_MS : 0;
    uint32_t n = 1 + (uint32_t)rng_below(&r, 150);
    sim_ns t = 0;
    for (uint32_t i = 0; i < n; i++) { /* bursts and lulls: scale-ups and drains with work in flight */
      if (rng_below(&r, 4) == 0) t += rng_below(&r, 3000) * SIM_NS_PER_MS;
      trace_push(&w->tr, t, 1 + (uint32_t)rng_below(&r, 2000), 1 + (uint32_t)rng_below(&r, 300), 0, NULL, 0);
    }
    sim_err err = {0, ""};
    cr_assert((w->c = cluster_new(&cc, &w->tr, w->cost, &err)), "%s", err.msg);
    cluster_run(w->c);
    cluster *c = w->c;
    cr_assert(c->complete, "round %d", round);
    cr_assert_eq(c->in_flight, 0, "round %d", round);
    for (uint32_t ri = 0; ri < cc.replicas; ri++) {
      cr_assert_eq(c->reps[ri].outstanding, 0, "round %d replica %u", round, ri);
      cr_assert_neq(c->reps[ri].state, REP_DRAINING, "round %d replica %u still draining with nothing", round, ri);
      const kv_seq **seqs = calloc(c->n_reqs + 1, sizeof *seqs);
      cr_assert_eq(kv_check(c->reps[ri].s.kv, seqs, 0, &err), 0, "round %d replica %u: %s", round, ri, err.msg);
      free(seqs);
    }
    /* the earliest a started replica can serve: the first decision plus the cold start */
    sim_ns earliest = sim_s_to_ns(p->interval_s) + cc.scale.cold_start_ns;
    for (size_t i = 0; i < c->n_reqs; i++)
      if (c->reqs[i].replica != UINT32_MAX && c->reqs[i].replica >= cc.scale.initial)
        cr_assert_geq(c->reqs[i].queued_ns, earliest, "round %d: request %zu on replica %u before any start ended",
                      round, i, c->reqs[i].replica);
    cluster_finish(c);
    cluster_finish(c); /* idempotent */
    check_conserved(c, round);
    cluster_scale_outcome so;
    cluster_get_scale(c, &so);
    double end_s = (double)des_now(&c->ev) / 1e9;
    cr_assert_leq(so.serving_replica_s, so.held_replica_s + 1e-9, "round %d", round);
    cr_assert_leq(so.held_replica_s, cc.replicas * end_s + 1e-6, "round %d", round);
    cr_assert_geq(so.serving_replica_s + 1e-6, p->min * end_s, "round %d: fewer than min serving", round);
    starts += so.starts, drains += so.drains, cancelled += so.cancelled;
    cr_assert_leq(so.peak_held, cc.replicas);
    for (size_t k = 0; k < so.n_ev; k++) cr_assert(so.ev[k].to >= p->min && so.ev[k].to <= p->max);
    world_free(w);
  }
  /* the runs did scale: many starts, drains with work in flight and starts cancelled during their cold start */
  cr_assert_gt(starts, 100, "starts %lu", (unsigned long)starts);
  cr_assert_gt(drains, 100, "drains %lu", (unsigned long)drains);
  cr_assert_gt(cancelled, 5, "cancelled %lu", (unsigned long)cancelled);
}

/* A burst at t = 0 on one warm replica: the policy (queue per replica, target 2) starts more at t = 1 s; with a
 * 5-s cold start they serve from 6 s, and not a request before. */
Test(cluster_scale, nothing_served_before_the_cold_start_ends) {
  cluster_cfg cc;
  world *w = scaled_world(&cc, ROUTE_LEAST_OUTSTANDING, "metric=waiting,target=2,min=1,max=4,interval=1", 1);
  cc.sched.max_num_seqs = 4; /* a queue builds on the one replica */
  sim_err err = {0, ""};
  cc.scale.cold_start_ns = 5 * SIM_NS_PER_S;
  for (uint32_t i = 0; i < 200; i++) trace_push(&w->tr, (sim_ns)i * 50 * SIM_NS_PER_MS, 1000, 200, 0, NULL, 0);
  cr_assert((w->c = cluster_new(&cc, &w->tr, w->cost, &err)), "%s", err.msg);
  cluster_run(w->c);
  cluster_finish(w->c);
  check_conserved(w->c, 0);
  size_t on_new = 0;
  for (size_t i = 0; i < w->c->n_reqs; i++) {
    const request *r = &w->c->reqs[i];
    if (r->replica == 0) continue;
    on_new++;
    cr_assert_geq(r->queued_ns, 6 * SIM_NS_PER_S, "request %zu reached replica %u at %.3f s", i, r->replica,
                  (double)r->queued_ns / 1e9);
    cr_assert_geq(r->first_sched_ns, 6 * SIM_NS_PER_S);
  }
  cr_assert_gt(on_new, 20, "the started replicas served (%zu requests)", on_new);
  cluster_scale_outcome so;
  cluster_get_scale(w->c, &so);
  cr_assert_geq(so.starts, 3);
  cr_assert_eq(so.ev[0].t_ns, SIM_NS_PER_S);
  cr_assert_eq(so.ev[0].from, 1);
  cr_assert_eq(so.ev[0].to, 4); /* 1 -> max(2, 1 + 4) capped at max 4 */
  world_free(w);
}

/* Four warm replicas, a burst, then nothing: the policy drains down to min 1. Each drained replica finishes
 * what it held (no request moves) and receives nothing after its drain began. */
Test(cluster_scale, drained_replicas_finish_their_requests) {
  cluster_cfg cc;
  world *w = scaled_world(&cc, ROUTE_ROUND_ROBIN, "metric=running,target=8,min=1,max=4,interval=0.5,down_window=0", 4);
  for (uint32_t i = 0; i < 40; i++) trace_push(&w->tr, 0, 500, 400 + 20 * i, 0, NULL, 0);
  trace_push(&w->tr, 60 * SIM_NS_PER_S, 100, 10, 0, NULL, 0); /* after the drains */
  cluster_scale_outcome so;
  run_checked(w, &cc, &so);
  cr_assert_geq(so.drains, 3, "drains %u", so.drains);
  uint32_t off = 0;
  for (uint32_t ri = 0; ri < 4; ri++) off += w->c->reps[ri].state == REP_OFF;
  cr_assert_eq(off, 3);
  /* round robin spread the burst: every replica finished its own share */
  for (uint32_t ri = 0; ri < 4; ri++) {
    size_t mine = 0;
    for (size_t i = 0; i < 40; i++) mine += w->c->reqs[i].replica == ri;
    cr_assert_eq(mine, 10, "replica %u", ri);
  }
  cr_assert_eq(w->c->reqs[40].replica, 0, "the late request goes to the one replica left");
  world_free(w);
}

static int cmp_d(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

/* ttft_p90: the value a decision acted on is the p90 of the TTFTs of the first tokens in its window, recomputed
 * here from the requests, and a burst on one replica makes the fleet grow. */
Test(cluster_scale, ttft_p90_reads_the_window_of_first_tokens) {
  cluster_cfg cc;
  world *w = scaled_world(&cc, ROUTE_LEAST_OUTSTANDING, "metric=ttft_p90,target=0.2,window=5,min=1,max=4,interval=2", 1);
  cc.sched.max_num_seqs = 4;
  cc.scale.cold_start_ns = 3 * SIM_NS_PER_S;
  for (uint32_t i = 0; i < 200; i++) trace_push(&w->tr, (sim_ns)i * 50 * SIM_NS_PER_MS, 1000, 100, 0, NULL, 0);
  cluster_scale_outcome so;
  run_checked(w, &cc, &so);
  cr_assert_geq(so.n_ev, 1);
  cr_assert_geq(so.starts, 1);
  const scale_event *e = &so.ev[0];
  double *v = calloc(w->c->n_reqs + 1, sizeof *v);
  size_t n = 0;
  for (size_t i = 0; i < w->c->n_reqs; i++) {
    const request *r = &w->c->reqs[i];
    if (r->first_token_ns + 5 * SIM_NS_PER_S > e->t_ns && r->first_token_ns <= e->t_ns)
      v[n++] = (double)(r->first_token_ns - r->send_ns) / 1e9;
  }
  cr_assert_gt(n, 0);
  qsort(v, n, sizeof *v, cmp_d);
  double pos = 0.9 * (double)(n - 1), p90 = v[(size_t)pos];
  if ((size_t)pos + 1 < n) p90 += (pos - floor(pos)) * (v[(size_t)pos + 1] - v[(size_t)pos]);
  cr_assert_float_eq(e->metric, p90, 1e-9, "decision at %.0f s: %g, recomputed %g from %zu first tokens",
                     (double)e->t_ns / 1e9, e->metric, p90, n);
  cr_assert_gt(e->to, e->from);
  free(v);
  world_free(w);
}

/* mode=planner (autoscale.h): a decision reads the requests sent in the interval, their mean prompt length and
 * the mean output of those finished in it, asks the capacity for those lengths and sets
 * ceil(sent / interval / capacity) replicas at once; an interval without a sent or a finished request is skipped. */
static double asked[8][2];
static int n_asked;
static double one_per_s(void *ctx, double isl, double osl) {
  (void)ctx;
  if (n_asked < 8) asked[n_asked][0] = isl, asked[n_asked][1] = osl;
  n_asked++;
  return 1.0;
}

Test(cluster_scale, planner_sets_the_count_from_the_capacity) {
  cluster_cfg cc;
  world *w = scaled_world(&cc, ROUTE_ROUND_ROBIN, "mode=planner,min=1,max=6,interval=10", 1);
  cc.scale.capacity = one_per_s;
  n_asked = 0;
  /* 48 requests in the first 10 s (1000 tokens in, 20 out: they finish within it), nothing until 35 s */
  for (uint32_t i = 0; i < 48; i++) trace_push(&w->tr, (sim_ns)i * 200 * SIM_NS_PER_MS, 1000, 20, 0, NULL, 0);
  trace_push(&w->tr, 35 * SIM_NS_PER_S, 500, 40, 0, NULL, 0);
  trace_push(&w->tr, 45 * SIM_NS_PER_S, 500, 40, 0, NULL, 0); /* the run goes on past 40 s; ends before 50 s */
  cluster_scale_outcome so;
  run_checked(w, &cc, &so);
  cr_assert_eq(n_asked, 2, "the intervals ending at 20 and 30 s sent nothing: skipped (asked %d times)", n_asked);
  cr_assert_float_eq(asked[0][0], 1000.0, 1e-9);
  cr_assert_float_eq(asked[0][1], 20.0, 1e-9);
  cr_assert_float_eq(asked[1][0], 500.0, 1e-9);
  cr_assert_float_eq(asked[1][1], 40.0, 1e-9);
  cr_assert_eq(so.n_ev, 2);
  cr_assert_eq(so.ev[1].t_ns, 40 * SIM_NS_PER_S);
  cr_assert_eq(so.ev[1].to, 1, "ceil(1 / 10 / 1) = 1: down at once, no stabilization window");
  cr_assert_eq(so.ev[0].t_ns, 10 * SIM_NS_PER_S);
  cr_assert_eq(so.ev[0].from, 1);
  cr_assert_eq(so.ev[0].to, 5, "ceil(48 requests / 10 s / 1 req/s) = 5, no rate limit (got %u)", so.ev[0].to);
  cr_assert_eq(so.starts, 4);
  world_free(w);
}
