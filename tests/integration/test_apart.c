/* test_apart.c: a fleet whose replicas are simulated apart (serve/fleet.h)
 * gives the shared timeline's results bit for bit: every request's times,
 * the summary, the step-time sums, the level integrals and peak, and every
 * time-series row. Cases: bursts (ties at t = 0), an engine frontend delay
 * (vLLM's, in every case), the bundled trace with prefix caching, preemptions, requests refused at send, replicas
 * left without requests, short sampling periods. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "runner/runner.h"
#include "testutil.h"

static run_ctx *run(const scenario *sc) { return tu_run_scenario(sc); }

static void done(run_ctx *r) { tu_run_done(r); }

/* Runs sc apart and on one timeline; returns the apart run's result (caller frees) after comparing. */
static run_ctx *same_both_ways(scenario *sc, const char *what) {
  sc->shared_timeline = false;
  run_ctx *a = run(sc);
  sc->shared_timeline = true;
  run_ctx *s = run(sc);
  cr_assert_eq(a->res.replicas_apart, 1, "%s: the replicas ran apart", what);
  cr_assert_eq(s->res.replicas_apart, 0, "%s", what);
  tu_assert_same_results(&a->res, &s->res, what);
  done(s);
  return a;
}

Test(apart, open_loop_generator) {
  scenario sc;
  tu_gen_scenario(&sc, 4, 1500, 40);
  sc.sample_interval_s = 0.25;
  done(same_both_ways(&sc, "4 replicas at 40/s"));
}

Test(apart, burst_at_t0_and_idle_replicas) {
  scenario sc;
  tu_gen_scenario(&sc, 16, 12, INFINITY); /* every request at t = 0; four replicas get none */
  sc.gen.input.len = 300;
  sc.gen.output.len = 20;
  run_ctx *a = same_both_ways(&sc, "burst");
  cr_assert_eq(a->res.sum.peak_in_system, 12);
  done(a);
}

Test(apart, preemptions_and_refusals) {
  scenario sc;
  tu_small_pool_scenario(&sc, 3, 600, 30); /* preempts; some prompts + outputs are longer than max_model_len */
  run_ctx *a = same_both_ways(&sc, "preemptions");
  cr_assert_gt(a->res.sum.rejected, 0, "some requests refused at send");
  uint64_t pre = tu_preemptions(&a->res);
  cr_assert_gt(pre, 0, "the small pool preempts");
  done(a);
}

Test(apart, bundled_trace) {
  scenario sc;
  scenario_default(&sc);
  sc.deploy.replicas = 5;
  sc.deploy.enable_prefix_caching = 1;
  sc.sample_interval_s = 2;
  done(same_both_ways(&sc, "bundled trace"));
}

/* Where something couples the replicas, one timeline. */
Test(apart, coupled_runs_keep_one_timeline) {
  scenario sc;
  tu_gen_scenario(&sc, 4, 200, 20);
  sc.max_concurrency = 8;
  run_ctx *a = run(&sc);
  cr_assert_eq(a->res.replicas_apart, 0, "client slots couple the replicas");
  done(a);
  tu_gen_scenario(&sc, 4, 200, 20);
  sc.deploy.router = ROUTE_LEAST_OUTSTANDING;
  a = run(&sc);
  cr_assert_eq(a->res.replicas_apart, 0, "the router reads the replicas' state");
  done(a);
  tu_gen_scenario(&sc, 1, 200, 20);
  a = run(&sc);
  cr_assert_eq(a->res.replicas_apart, 0, "one replica");
  done(a);
}

/* A tie the replica's own heap cannot order: request 0 and 1 at t = 0 go to
 * replicas 0 and 1, request 2 to replica 0 exactly one engine frontend delay
 * later, when request 0 leaves the frontend. On the shared timeline request
 * 0's delivery (pushed at t = 0 after request 1's arrival) pops before
 * request 2's arrival (pushed when request 1 arrived, at t = 0, later);
 * alone, replica 0 pushes request 2's arrival before request 0's delivery:
 * the same time and push time, an order it cannot know. The run falls back to
 * the shared timeline and its results are that timeline's. */
Test(apart, an_unorderable_tie_falls_back_to_the_shared_timeline) {
  scenario sc;
  tu_gen_scenario(&sc, 2, 1, 1);
  run_ctx *probe = run(&sc);
  double L = probe->engine.frontend_latency_ns;
  done(probe);
  cr_assert_gt(L, 0, "the engine has a frontend delay");
  char text[256];
  snprintf(text, sizeof text, "arrival_s,prompt_tokens,output_tokens\n0,200,20\n0,300,30\n%.9f,250,25\n", L / 1e9);
  scenario_init(&sc);
  sc.deploy.tp = 4;
  sc.deploy.replicas = 2;
  snprintf(sc.trace_path, sizeof sc.trace_path, "%s", tu_tmpfile(".csv", text));
  sc.shared_timeline = false;
  run_ctx *a = run(&sc);
  sc.shared_timeline = true;
  run_ctx *s = run(&sc);
  cr_assert_eq(a->res.replicas_apart, 2, "fell back (%u)", a->res.replicas_apart);
  cr_assert_eq(a->res.n_reqs, 3);
  cr_assert(!memcmp(a->res.reqs, s->res.reqs, 3 * sizeof *a->res.reqs), "the shared timeline's records");
  cr_assert(!memcmp(&a->res.sum, &s->res.sum, sizeof a->res.sum));
  cr_assert(!memcmp(a->res.m.op_ns, s->res.m.op_ns, sizeof a->res.m.op_ns), "time sums counted once");
  uint64_t ca[OP_COUNT][SRC_COUNT], cs[OP_COUNT][SRC_COUNT];
  cost_src_counts(a->cost, ca);
  cost_src_counts(s->cost, cs);
  cr_assert(!memcmp(ca, cs, sizeof ca), "cost sources counted once");
  done(a);
  done(s);
}
