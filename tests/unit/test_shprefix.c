/* test_shprefix.c: inference-perf's shared_prefix workload rebuilt as a trace
 * (workload/shprefix.h): requests per stage (floor of rate x duration), sends
 * normalized to end exactly at the stage's end, the P prompts cycling in every
 * stage from the same shuffle, content ids shared within a group's system
 * prompt and nowhere else, determinism, and bad parameters named. */
#include <criterion/criterion.h>
#include <math.h>
#include <string.h>

#include "workload/shprefix.h"

static shp_params params(void) {
  shp_params p = {.n_groups = 3, .prompts_per_group = 4, .prompt_tokens = 100, .shared_tokens = 40,
                  .output_tokens = 7, .hash_block_tokens = 16, .seed = 5};
  return p;
}

static const uint64_t *ids_of(const trace *t, size_t i) { return t->hash_ids + t->reqs[i].hash_off; }

static bool same_ids(const trace *t, size_t a, size_t b) {
  return t->reqs[a].n_hash == t->reqs[b].n_hash &&
         !memcmp(ids_of(t, a), ids_of(t, b), t->reqs[a].n_hash * sizeof(uint64_t));
}

Test(shprefix, stages_send_their_count_and_end_at_their_end) {
  shp_params p = params();
  shp_stage st[2] = {{2.5, 10.0, 0.0}, {4.0, 3.1, 12.5}};
  trace t;
  sim_err e = {0, ""};
  cr_assert_eq(shp_build(&t, &p, st, 2, &e), 0, "%s", e.msg);
  cr_assert_eq(shp_stage_requests(&st[0]), 25);
  cr_assert_eq(shp_stage_requests(&st[1]), 12, "int(4.0 x 3.1) = 12");
  cr_assert_eq(t.n, 37);
  cr_assert_eq(t.reqs[0].arrival_ns, 0);
  cr_assert(t.t0_s > 0 && t.t0_s < 10.0, "the first send is one gap after the stage start: %g", t.t0_s);
  double end0 = sim_ns_to_s(t.reqs[24].arrival_ns) + t.t0_s, first1 = sim_ns_to_s(t.reqs[25].arrival_ns) + t.t0_s,
         end1 = sim_ns_to_s(t.reqs[36].arrival_ns) + t.t0_s;
  cr_assert(fabs(end0 - 10.0) < 1e-6, "stage 0's last send at its end: %.9f", end0);
  cr_assert(first1 > 12.5 && first1 < end1, "stage 1 starts after its start: %.9f", first1);
  cr_assert(fabs(end1 - (12.5 + 3.1)) < 1e-6, "stage 1's last send at its end: %.9f", end1);
  for (size_t i = 1; i < t.n; i++) cr_assert_geq(t.reqs[i].arrival_ns, t.reqs[i - 1].arrival_ns);
  for (size_t i = 0; i < t.n; i++) {
    cr_assert_eq(t.reqs[i].prompt_tokens, 100);
    cr_assert_eq(t.reqs[i].output_tokens, 7);
    cr_assert_eq(t.reqs[i].n_hash, 7, "ceil(100 / 16) ids");
  }
  cr_assert_eq(t.hash_block_tokens, 16);
  trace_free(&t);
}

Test(shprefix, prompts_cycle_from_one_shuffle_in_every_stage) {
  shp_params p = params();
  shp_stage st[2] = {{1.0, 30.0, 0.0}, {1.0, 30.0, 40.0}};
  trace t;
  cr_assert_eq(shp_build(&t, &p, st, 2, NULL), 0);
  size_t np = 12;
  for (size_t i = 0; i + np < 30; i++) cr_assert(same_ids(&t, i, i + np), "request %zu and %zu: the same prompt", i, i + np);
  for (size_t i = 0; i < 30; i++) cr_assert(same_ids(&t, i, 30 + i), "request %zu of stage 1 = request %zu of stage 0", i, i);
  /* the first P requests are the P prompts, each once */
  for (size_t a = 0; a < np; a++)
    for (size_t b = a + 1; b < np; b++) cr_assert(!same_ids(&t, a, b));
  /* spans 0 and 1 (tokens 0..31) lie in the 40-token system prompt: shared by a group's 4 prompts, by no other;
   * span 2 (tokens 32..47) crosses into the question: every prompt's own */
  size_t sharing[12] = {0};
  for (size_t a = 0; a < np; a++)
    for (size_t b = 0; b < np; b++) {
      bool s0 = ids_of(&t, a)[0] == ids_of(&t, b)[0], s1 = ids_of(&t, a)[1] == ids_of(&t, b)[1];
      cr_assert_eq(s0, s1);
      sharing[a] += s0;
      if (a != b) cr_assert_neq(ids_of(&t, a)[2], ids_of(&t, b)[2]);
      for (int k = 2; k < 7; k++) cr_assert(a == b || ids_of(&t, a)[k] != ids_of(&t, b)[k]);
    }
  for (size_t a = 0; a < np; a++) cr_assert_eq(sharing[a], 4, "prompt %zu shares its system prompt with %zu", a, sharing[a]);
  trace_free(&t);
}

Test(shprefix, deterministic_and_seeded) {
  shp_params p = params();
  shp_stage st = {3.0, 20.0, 0.0};
  trace a, b, c;
  cr_assert_eq(shp_build(&a, &p, &st, 1, NULL), 0);
  cr_assert_eq(shp_build(&b, &p, &st, 1, NULL), 0);
  p.seed = 6;
  cr_assert_eq(shp_build(&c, &p, &st, 1, NULL), 0);
  cr_assert_eq(a.n, b.n);
  bool differ = false;
  for (size_t i = 0; i < a.n; i++) {
    cr_assert_eq(a.reqs[i].arrival_ns, b.reqs[i].arrival_ns);
    cr_assert(same_ids(&a, i, i) && !memcmp(ids_of(&a, i), ids_of(&b, i), 7 * sizeof(uint64_t)));
    differ |= a.reqs[i].arrival_ns != c.reqs[i].arrival_ns;
  }
  cr_assert(differ, "another seed, other gaps");
  /* gaps are exponential: far from evenly spaced */
  double max_gap = 0;
  for (size_t i = 1; i < a.n; i++) max_gap = fmax(max_gap, sim_ns_to_s(a.reqs[i].arrival_ns - a.reqs[i - 1].arrival_ns));
  cr_assert_gt(max_gap, 2.0 / 3.0, "largest of 59 exponential gaps of mean 1/3 s: %g", max_gap);
  trace_free(&a);
  trace_free(&b);
  trace_free(&c);
}

Test(shprefix, bad_parameters_are_named) {
  shp_params p = params();
  shp_stage st[2] = {{1.0, 10.0, 0.0}, {1.0, 10.0, 5.0}};
  trace t;
  sim_err e = {0, ""};
  cr_assert_eq(shp_build(&t, &p, st, 2, &e), SIM_EINPUT);
  cr_assert(strstr(e.msg, "load stage 1: start"), "%s", e.msg);
  st[1].start_s = 10.0;
  st[1].rate_per_s = 0.05;
  cr_assert_eq(shp_build(&t, &p, st, 2, &e), SIM_EINPUT);
  cr_assert(strstr(e.msg, "below one request"), "%s", e.msg);
  st[1].rate_per_s = -1;
  cr_assert_eq(shp_build(&t, &p, st, 2, &e), SIM_EINPUT);
  cr_assert(strstr(e.msg, "load stage 1: rate"), "%s", e.msg);
  p.shared_tokens = 101;
  cr_assert_eq(shp_build(&t, &p, st, 1, &e), SIM_EINPUT);
  cr_assert(strstr(e.msg, "shared_tokens (101)"), "%s", e.msg);
  p = params();
  p.n_groups = 0;
  cr_assert_eq(shp_build(&t, &p, st, 1, &e), SIM_EINPUT);
  cr_assert(strstr(e.msg, "num_groups"), "%s", e.msg);
  p = params();
  cr_assert_eq(shp_build(&t, &p, st, 0, &e), SIM_EINPUT);
  cr_assert(strstr(e.msg, "no load stage"), "%s", e.msg);
  trace_free(&t);
}
