/* test_decode_run.c: runs of steady decode steps in closed form (serve/sched.h,
 * sched_run_*) give step-by-step scheduling's results bit for bit: every
 * request's times, the summary, the step-time sums, the level integrals and
 * every time-series row. Each case asserts that closed-form steps happened,
 * so none compares a path with itself. Cases: the bundled trace with prefix
 * caching, prefix ids and sessions (blocks registered at boundaries mid-run), a
 * small pool that preempts, KV blocks of 8 to 128 tokens, TensorRT-LLM's full reservation, no async
 * scheduling (a batch queue of one), a closed loop, a time limit, a
 * least-KV router on one timeline, replicas apart, and a paced run (slices
 * that end at wall-clock deadlines). */
#include <criterion/criterion.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "runner/runner.h"
#include "testutil.h"

static run_ctx *run_with(const scenario *sc, const drv_opts *drv) {
  if (!drv) return tu_run_scenario(sc);
  run_ctx *r = calloc(1, sizeof *r);
  cr_assert_not_null(r);
  sim_err err = {0, ""};
  cr_assert_eq(runner_prepare(r, sc, &err), 0, "prepare: %s", err.msg);
  cr_assert_eq(runner_execute(r, drv, &err), 0, "execute: %s", err.msg);
  return r;
}

/* Runs sc with decode runs and step by step; returns the first (caller frees) after comparing. */
static run_ctx *same_both_ways_drv(scenario *sc, const drv_opts *drv, const char *what) {
  sc->step_by_step = false;
  run_ctx *a = run_with(sc, drv);
  sc->step_by_step = true;
  run_ctx *s = run_with(sc, drv);
  cr_assert_gt(a->res.closed_form_steps, 0, "%s: some steps ran as decode runs", what);
  cr_assert_eq(s->res.closed_form_steps, 0, "%s", what);
  cr_assert_eq(a->res.replicas_apart, s->res.replicas_apart, "%s", what);
  tu_assert_same_results(&a->res, &s->res, what);
  uint64_t ca[OP_COUNT][SRC_COUNT], cs[OP_COUNT][SRC_COUNT];
  cost_src_counts(a->cost, ca);
  cost_src_counts(s->cost, cs);
  cr_assert(!memcmp(ca, cs, sizeof ca), "%s: cost sources", what);
  tu_run_done(s);
  return a;
}

static run_ctx *same_both_ways(scenario *sc, const char *what) { return same_both_ways_drv(sc, NULL, what); }

Test(decode_run, bundled_trace_with_prefix_caching) {
  scenario sc;
  scenario_default(&sc);
  sc.deploy.enable_prefix_caching = 1;
  sc.sample_interval_s = 0.5;
  tu_run_done(same_both_ways(&sc, "bundled trace"));
}

/* Hashed content grows during decode (prefix ids, then the request's own
 * tokens; a session's turns extend one stream): full blocks are registered at
 * their boundaries in the middle of runs, and later requests hit them. */
static const char *hashed_trace(bool sessions) {
  static char text[1 << 16];
  size_t n = (size_t)snprintf(text, sizeof text, "# hash_block_tokens=16\n"
                                                  "arrival_s,prompt_tokens,output_tokens,session_id,hash_ids\n");
  uint32_t x = 12345;
  for (int i = 0; i < 240; i++) {
    x = x * 1103515245u + 12345u;
    uint32_t out = 40 + (x >> 16) % 260, own = 3 + (x >> 8) % 9, g = (uint32_t)i % 6;
    if (sessions) {
      n += (size_t)snprintf(text + n, sizeof text - n, "%.3f,%u,%u,%u,\n", 0.09 * i, 200 + 37 * (uint32_t)(i / 6), out,
                            g + 1);
      continue;
    }
    n += (size_t)snprintf(text + n, sizeof text - n, "%.3f,%u,%u,,%u|%u|%u|%u", 0.09 * i, 16 * (4 + own), out,
                          1000 * g + 1, 1000 * g + 2, 1000 * g + 3, 1000 * g + 4);
    for (uint32_t k = 0; k < own; k++) n += (size_t)snprintf(text + n, sizeof text - n, "|%u", 100000 + 100 * i + k);
    n += (size_t)snprintf(text + n, sizeof text - n, "\n");
  }
  cr_assert_lt(n, sizeof text - 1);
  return tu_tmpfile(".csv", text);
}

Test(decode_run, hashed_content_and_sessions) {
  for (int sess = 0; sess < 2; sess++) {
    scenario sc;
    tu_gen_scenario(&sc, 1, 0, 0);
    snprintf(sc.trace_path, sizeof sc.trace_path, "%s", hashed_trace(sess));
    sc.deploy.enable_prefix_caching = 1;
    run_ctx *a = same_both_ways(&sc, sess ? "sessions" : "prefix ids");
    cr_assert_gt(a->res.kv_hit_tokens, 0, "prefixes were found");
    remove(sc.trace_path);
    tu_run_done(a);
  }
}

Test(decode_run, small_pool_preempts) {
  scenario sc;
  tu_small_pool_scenario(&sc, 1, 400, 20); /* decode steps run out of blocks */
  sc.deploy.enable_prefix_caching = 1;
  run_ctx *a = same_both_ways(&sc, "small pool");
  cr_assert_gt(tu_preemptions(&a->res), 0, "the small pool preempts");
  tu_run_done(a);
  /* every request admitted at once, then their decode outgrows the pool in the middle of a run: the run must stop
     where the pool has no block for the step (the ordinary path preempts) */
  sc.gen.num_prompts = 12;
  sc.gen.request_rate = INFINITY;
  sc.gen.input.range_ratio = 0;
  sc.gen.output.len = 1200;
  sc.gen.output.range_ratio = 0;
  a = same_both_ways(&sc, "a burst outgrows the pool");
  cr_assert_gt(tu_preemptions(&a->res), 0, "the burst preempts");
  tu_run_done(a);
}

Test(decode_run, block_sizes) {
  static const uint32_t sizes[] = {8, 16, 32, 128};
  for (size_t k = 0; k < sizeof sizes / sizeof *sizes; k++) {
    scenario sc;
    tu_gen_scenario(&sc, 1, 150, 8);
    sc.deploy.block_size = sizes[k];
    sc.deploy.enable_prefix_caching = 1;
    sc.gen.input.range_ratio = 0.5;
    sc.gen.output.range_ratio = 0.8;
    char what[64];
    snprintf(what, sizeof what, "blocks of %u tokens", sizes[k]);
    tu_run_done(same_both_ways(&sc, what));
  }
}

Test(decode_run, trtllm_full_reservation) {
  scenario sc;
  tu_gen_scenario(&sc, 1, 300, 10);
  snprintf(sc.engine, sizeof sc.engine, "trtllm");
  sc.gen.output.range_ratio = 0.9;
  tu_run_done(same_both_ways(&sc, "trtllm"));
}

Test(decode_run, without_async_scheduling) {
  scenario sc;
  tu_gen_scenario(&sc, 1, 300, 10);
  sc.deploy.async_scheduling = 0;
  sc.gen.output.range_ratio = 0.9;
  tu_run_done(same_both_ways(&sc, "no async scheduling"));
}

Test(decode_run, closed_loop_and_time_limit) {
  scenario sc;
  tu_gen_scenario(&sc, 2, 400, INFINITY);
  sc.max_concurrency = 24;
  sc.gen.output.range_ratio = 0.5;
  sc.sample_interval_s = 0.3;
  tu_run_done(same_both_ways(&sc, "closed loop"));
  tu_gen_scenario(&sc, 1, 600, 12);
  sc.time_limit_s = 7.3;
  run_ctx *a = same_both_ways(&sc, "time limit");
  cr_assert_gt(a->res.sum.unfinished, 0, "the limit cut the run");
  tu_run_done(a);
}

Test(decode_run, least_kv_router_on_one_timeline) {
  scenario sc;
  tu_gen_scenario(&sc, 3, 500, 15);
  sc.deploy.router = ROUTE_LEAST_KV;
  sc.gen.output.range_ratio = 0.7;
  run_ctx *a = same_both_ways(&sc, "least KV");
  cr_assert_eq(a->res.replicas_apart, 0);
  tu_run_done(a);
}

/* Twelve replicas on one timeline: their two step ends each make more events than a decode run holds outside the
 * heap (serve/cluster.c), so most runs pop and push through it, some (few replicas busy) hold theirs: both ways
 * give step-by-step's results. */
Test(decode_run, many_replicas_on_one_timeline) {
  scenario sc;
  tu_gen_scenario(&sc, 12, 1500, 60);
  sc.deploy.router = ROUTE_LEAST_KV;
  sc.gen.output.range_ratio = 0.7;
  run_ctx *a = same_both_ways(&sc, "many replicas");
  cr_assert_eq(a->res.replicas_apart, 0);
  cr_assert_gt(a->res.closed_form_held_steps, 0, "some runs held their step ends");
  cr_assert_lt(a->res.closed_form_held_steps, a->res.closed_form_steps, "some went through the heap");
  tu_run_done(a);
}

Test(decode_run, replicas_apart) {
  scenario sc;
  tu_gen_scenario(&sc, 6, 900, 30);
  sc.gen.output.range_ratio = 0.7;
  sc.sample_interval_s = 0.25;
  run_ctx *a = same_both_ways(&sc, "apart");
  cr_assert_eq(a->res.replicas_apart, 1);
  cr_assert_eq(a->res.closed_form_held_steps, a->res.closed_form_steps, "a replica apart holds its step ends");
  tu_run_done(a);
}

/* Paced: each slice ends at the virtual time the wall clock reached, so a run
 * must stop before a step past the slice's end. */
Test(decode_run, paced_slices) {
  scenario sc;
  tu_gen_scenario(&sc, 2, 60, 20);
  sc.gen.output.len = 64;
  drv_opts d = {2000.0, 0, 0}; /* 2000 virtual seconds per wall second: a few milliseconds of wall time */
  tu_run_done(same_both_ways_drv(&sc, &d, "paced"));
}
