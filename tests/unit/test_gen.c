/* test_gen.c: the workload generators: vLLM defaults, determinism, arrival
 * processes (rate inf, Poisson, gamma burstiness), length distributions and
 * parameter validation naming the vLLM flag. Statistical checks use fixed
 * seeds and tolerances of several standard errors. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "workload/gen.h"

static void gen_ok(trace *t, const gen_params *p) {
  sim_err e = {0};
  int rc = gen_trace(t, p, &e);
  cr_assert_eq(rc, SIM_OK, "gen_trace: %s", e.msg);
}

static void expect_bad(const gen_params *p, const char *want) {
  trace t;
  sim_err e = {0};
  cr_assert_eq(gen_trace(&t, p, &e), SIM_EINPUT, "expected an error mentioning %s", want);
  cr_assert(strstr(e.msg, want), "message '%s' lacks '%s'", e.msg, want);
  cr_assert_eq(t.n, 0);
  trace_free(&t);
}

/* Mean and squared coefficient of variation of the inter-arrival gaps, in s. */
static void gap_moments(const trace *t, double *mean, double *cv2) {
  double s = 0, s2 = 0;
  size_t n = t->n - 1;
  for (size_t i = 1; i < t->n; i++) {
    double g = (double)(t->reqs[i].arrival_ns - t->reqs[i - 1].arrival_ns) / 1e9;
    s += g;
    s2 += g * g;
  }
  *mean = s / (double)n;
  double var = s2 / (double)n - *mean * *mean;
  *cv2 = var / (*mean * *mean);
}

Test(gen, vllm_defaults) {
  gen_params p;
  gen_params_default(&p);
  cr_assert_eq(p.num_prompts, 1000);
  cr_assert(isinf(p.request_rate));
  cr_assert_float_eq(p.burstiness, 1.0, 0);
  cr_assert_eq(p.input.kind, LEN_UNIFORM_RATIO);
  cr_assert_float_eq(p.input.len, 1024, 0);
  cr_assert_float_eq(p.output.len, 128, 0);
  cr_assert_float_eq(p.input.range_ratio, 0, 0);
  cr_assert_eq(p.seed, 0);
  trace t;
  gen_ok(&t, &p);
  cr_assert_eq(t.format, TRACE_FMT_GENERATED);
  cr_assert_eq(t.n, 1000);
  for (size_t i = 0; i < t.n; i++) {
    cr_assert_eq(t.reqs[i].arrival_ns, 0, "rate inf: every request at t=0");
    cr_assert_eq(t.reqs[i].prompt_tokens, 1024);
    cr_assert_eq(t.reqs[i].output_tokens, 128);
    cr_assert_eq(t.reqs[i].session, 0);
    cr_assert_eq(t.reqs[i].n_hash, 0);
  }
  cr_assert(strstr(t.source, "num_prompts=1000"), "%s", t.source);
  cr_assert(strstr(t.source, "request_rate=inf"), "%s", t.source);
  cr_assert(strstr(t.source, "input=uniform(len=1024, range_ratio=0)"), "%s", t.source);
  cr_assert(strstr(t.source, "seed=0"), "%s", t.source);
  trace_free(&t);
}

Test(gen, same_seed_same_trace_other_seed_differs) {
  gen_params p;
  gen_params_default(&p);
  p.num_prompts = 5000;
  p.request_rate = 20;
  p.burstiness = 0.5;
  p.input.range_ratio = 0.5;
  p.output.kind = LEN_LOGNORMAL;
  p.output.median = 200;
  p.output.sigma = 0.8;
  p.seed = 42;
  trace a, b, c;
  gen_ok(&a, &p);
  gen_ok(&b, &p);
  p.seed = 43;
  gen_ok(&c, &p);
  cr_assert_eq(a.n, b.n);
  cr_assert_eq(memcmp(a.reqs, b.reqs, a.n * sizeof *a.reqs), 0, "same seed must give the same trace");
  cr_assert_str_eq(a.source, b.source);
  size_t diff_t = 0, diff_in = 0, diff_out = 0;
  for (size_t i = 1; i < a.n; i++) {
    diff_t += a.reqs[i].arrival_ns != c.reqs[i].arrival_ns;
    diff_in += a.reqs[i].prompt_tokens != c.reqs[i].prompt_tokens;
    diff_out += a.reqs[i].output_tokens != c.reqs[i].output_tokens;
  }
  cr_assert(diff_t > a.n / 2 && diff_in > a.n / 2 && diff_out > a.n / 2, "%zu %zu %zu", diff_t, diff_in, diff_out);
  cr_assert(strstr(c.source, "seed=43"));
  /* arrivals sorted; request 0 is delayed too, and the last request is sent
   * at exactly num_prompts / rate (vllm bench serve's rescaling) */
  cr_assert_gt(a.reqs[0].arrival_ns, 0);
  cr_assert_eq(a.reqs[a.n - 1].arrival_ns, sim_s_to_ns(5000.0 / 20));
  for (size_t i = 1; i < a.n; i++) cr_assert(a.reqs[i].arrival_ns >= a.reqs[i - 1].arrival_ns);
  trace_free(&a);
  trace_free(&b);
  trace_free(&c);
}

Test(gen, poisson_mean_gap_and_cv) {
  gen_params p;
  gen_params_default(&p);
  p.num_prompts = 200000;
  p.request_rate = 50;
  p.seed = 1;
  trace t;
  gen_ok(&t, &p);
  double mean, cv2;
  gap_moments(&t, &mean, &cv2);
  /* standard error of the mean gap: 0.02 / sqrt(2e5) = 4.5e-5, 1% is 4.4 of them */
  cr_assert(fabs(mean - 0.02) < 0.02 * 0.01, "mean gap %g, want 0.02", mean);
  cr_assert(fabs(cv2 - 1.0) < 0.03, "Poisson gaps have CV^2 = 1, got %g", cv2);
  /* request i is at the sum of i gaps: the last arrival is ~ (n-1)/rate */
  double last_s = (double)t.reqs[t.n - 1].arrival_ns / 1e9;
  cr_assert(fabs(last_s - (double)(t.n - 1) / 50) < 0.01 * (double)(t.n - 1) / 50);
  trace_free(&t);
}

Test(gen, burstiness_sets_gap_cv) {
  const double bs[] = {0.25, 0.5, 2.0, 4.0};
  for (size_t k = 0; k < 4; k++) {
    gen_params p;
    gen_params_default(&p);
    p.num_prompts = 200000;
    p.request_rate = 10;
    p.burstiness = bs[k];
    p.seed = 7 + k;
    trace t;
    gen_ok(&t, &p);
    double mean, cv2;
    gap_moments(&t, &mean, &cv2);
    cr_assert(fabs(mean - 0.1) < 0.1 * 0.015, "burstiness %g: mean gap %g, want 0.1", bs[k], mean);
    double want = 1.0 / bs[k];
    cr_assert(fabs(cv2 - want) < 0.06 * want, "burstiness %g: CV^2 %g, want %g", bs[k], cv2, want);
    trace_free(&t);
  }
}

Test(gen, uniform_range_ratio_bounds) {
  rng r;
  rng_seed(&r, 3);
  len_dist d = {.kind = LEN_UNIFORM_RATIO, .len = 10, .range_ratio = 0.25}; /* [floor(7.5), floor(12.5)] = [7, 12] */
  int seen[20] = {0};
  for (int i = 0; i < 60000; i++) {
    uint32_t v = gen_draw_len(&r, &d);
    cr_assert(v >= 7 && v <= 12, "draw %u outside [7, 12]", v);
    seen[v]++;
  }
  for (int v = 7; v <= 12; v++) cr_assert(seen[v] > 9000 && seen[v] < 11000, "value %d drawn %d times", v, seen[v]);
  d.len = 1024;
  d.range_ratio = 0.1; /* [921, 1126] */
  uint32_t lo = UINT32_MAX, hi = 0;
  double sum = 0;
  for (int i = 0; i < 100000; i++) {
    uint32_t v = gen_draw_len(&r, &d);
    lo = v < lo ? v : lo;
    hi = v > hi ? v : hi;
    sum += v;
  }
  cr_assert_eq(lo, 921);
  cr_assert_eq(hi, 1126);
  cr_assert(fabs(sum / 100000 - 1023.5) < 1.0, "mean %g", sum / 100000);
  d.len = 1;
  d.range_ratio = 0.9; /* [floor(0.1), floor(1.9)] = [0, 1]: raised to 1 */
  for (int i = 0; i < 1000; i++) cr_assert_eq(gen_draw_len(&r, &d), 1);
  d.len = 128;
  d.range_ratio = 0;
  for (int i = 0; i < 1000; i++) cr_assert_eq(gen_draw_len(&r, &d), 128);
}

static int cmp_u32(const void *a, const void *b) {
  uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
  return (x > y) - (x < y);
}

Test(gen, lognormal_median_and_clamp) {
  rng r;
  rng_seed(&r, 5);
  len_dist d = {.kind = LEN_LOGNORMAL, .median = 500, .sigma = 1.0};
  enum { N = 100001 };
  uint32_t *v = malloc(N * sizeof *v);
  for (int i = 0; i < N; i++) v[i] = gen_draw_len(&r, &d);
  qsort(v, N, sizeof *v, cmp_u32);
  /* the sample median's standard error is ~ 1.25 * sigma * median / sqrt(N) = 2 tokens */
  cr_assert(fabs((double)v[N / 2] - 500) < 10, "median %u", v[N / 2]);
  cr_assert(v[N - 1] > 5000, "sigma 1 has a long tail, max %u", v[N - 1]);
  d.min = 300;
  d.max = 800;
  for (int i = 0; i < N; i++) v[i] = gen_draw_len(&r, &d);
  qsort(v, N, sizeof *v, cmp_u32);
  cr_assert_eq(v[0], 300);
  cr_assert_eq(v[N - 1], 800);
  d.min = 0;
  d.max = 0;
  d.median = 1;
  d.sigma = 3;
  for (int i = 0; i < 1000; i++) cr_assert(gen_draw_len(&r, &d) >= 1);
  free(v);
}

Test(gen, empirical_resamples_the_given_values) {
  rng r;
  rng_seed(&r, 9);
  const uint32_t samples[] = {5, 7, 7, 0};
  len_dist d = {.kind = LEN_EMPIRICAL, .samples = samples, .n_samples = 4};
  int c5 = 0, c7 = 0, c1 = 0;
  for (int i = 0; i < 40000; i++) {
    uint32_t x = gen_draw_len(&r, &d);
    cr_assert(x == 5 || x == 7 || x == 1, "draw %u", x);
    c5 += x == 5, c7 += x == 7, c1 += x == 1; /* 0 is raised to 1 */
  }
  cr_assert(fabs(c5 / 40000.0 - 0.25) < 0.015 && fabs(c7 / 40000.0 - 0.5) < 0.015 && fabs(c1 / 40000.0 - 0.25) < 0.015,
            "%d %d %d", c5, c7, c1);
  /* in a trace, with a clamp */
  gen_params p;
  gen_params_default(&p);
  p.num_prompts = 100;
  p.input = d;
  p.input.max = 6;
  trace t;
  gen_ok(&t, &p);
  for (size_t i = 0; i < t.n; i++) cr_assert(t.reqs[i].prompt_tokens == 5 || t.reqs[i].prompt_tokens == 6 ||
                                             t.reqs[i].prompt_tokens == 1);
  cr_assert(strstr(t.source, "empirical(n=4"), "%s", t.source);
  trace_free(&t);
}

Test(gen, draw_order_gap_input_output) {
  /* the definition: request i draws its delay, input, output; send times are
   * the sums of the delays rescaled so that the last is num_prompts / rate
   * (vllm/benchmarks/serve.py get_request) */
  gen_params p;
  gen_params_default(&p);
  p.num_prompts = 3;
  p.request_rate = 4;
  p.input.range_ratio = 0.5;
  p.output.range_ratio = 0.5;
  p.seed = 77;
  trace t;
  gen_ok(&t, &p);
  rng r;
  rng_seed(&r, 77);
  double g0 = rng_gamma(&r, 1.0, 0.25);
  uint32_t in0 = (uint32_t)rng_int_range(&r, 512, 1536), out0 = (uint32_t)rng_int_range(&r, 64, 192);
  double g1 = rng_gamma(&r, 1.0, 0.25);
  uint32_t in1 = (uint32_t)rng_int_range(&r, 512, 1536), out1 = (uint32_t)rng_int_range(&r, 64, 192);
  double g2 = rng_gamma(&r, 1.0, 0.25);
  double f = (3.0 / 4.0) / (g0 + g1 + g2);
  cr_assert_eq(t.reqs[0].prompt_tokens, in0);
  cr_assert_eq(t.reqs[0].output_tokens, out0);
  cr_assert_eq(t.reqs[0].arrival_ns, sim_s_to_ns(g0 * f));
  cr_assert_eq(t.reqs[1].arrival_ns, sim_s_to_ns((g0 + g1) * f));
  cr_assert_eq(t.reqs[1].prompt_tokens, in1);
  cr_assert_eq(t.reqs[1].output_tokens, out1);
  cr_assert_eq(t.reqs[2].arrival_ns, sim_s_to_ns((g0 + g1 + g2) * f));
  cr_assert_eq(t.reqs[2].arrival_ns, 750 * SIM_NS_PER_MS);
  trace_free(&t);
}

Test(gen, validation_names_the_flag) {
  gen_params p;
  gen_params_default(&p);
  p.num_prompts = 0;
  expect_bad(&p, "--num-prompts must be >= 1");
  gen_params_default(&p);
  p.request_rate = 0;
  expect_bad(&p, "--request-rate must be > 0");
  p.request_rate = -3;
  expect_bad(&p, "--request-rate must be > 0");
  p.request_rate = NAN;
  expect_bad(&p, "--request-rate must be > 0");
  gen_params_default(&p);
  p.burstiness = 0;
  expect_bad(&p, "--burstiness must be > 0");
  p.burstiness = INFINITY;
  expect_bad(&p, "--burstiness must be > 0");
  gen_params_default(&p);
  p.input.range_ratio = 1.0;
  expect_bad(&p, "--random-range-ratio must be in [0, 1)");
  p.input.range_ratio = -0.1;
  expect_bad(&p, "--random-range-ratio must be in [0, 1)");
  gen_params_default(&p);
  p.input.len = 0;
  expect_bad(&p, "--random-input-len must be >= 1");
  gen_params_default(&p);
  p.output.len = 0.5;
  expect_bad(&p, "--random-output-len must be >= 1");
  p.output.len = 2e7;
  expect_bad(&p, "--random-output-len must be >= 1 and <= 10000000");
  gen_params_default(&p);
  p.input.kind = LEN_LOGNORMAL;
  p.input.median = 0;
  p.input.sigma = 1;
  expect_bad(&p, "input length: lognormal median");
  p.input.median = 100;
  p.input.sigma = -1;
  expect_bad(&p, "input length: lognormal sigma");
  p.input.sigma = 1;
  p.input.min = 50;
  p.input.max = 10;
  expect_bad(&p, "input length: min 50 is above max 10");
  gen_params_default(&p);
  p.output.kind = LEN_EMPIRICAL;
  expect_bad(&p, "output length: the empirical distribution needs at least one sample");
  gen_params_default(&p);
  p.request_rate = 1e-6;
  p.num_prompts = 100000;
  expect_bad(&p, "more than 1e10 s");
}
