/* gen.c: seeded open-loop workload generators with `vllm bench serve`
 * random-dataset semantics (see gen.h for the definition of the output).
 *
 * Arrivals as `vllm bench serve` sends them (benchmarks/serve.py get_request):
 * every request, request 0 included, draws a gamma delay; request i is sent
 * at the sum of delays 0..i, and the sums are rescaled so that the last
 * request is sent at exactly num_prompts / request_rate ("close the gap for
 * stabilizing the throughput data from different random seeds"). An infinite
 * rate sends everything at t=0 (no delay draws). The benchmark's clock, and
 * the run's duration, start at t=0, before request 0's delay.
 *
 * Draw order, fixed: request i draws its delay first (unless the rate is
 * infinite), then its input length, then its output length. A length whose
 * range holds a single value (range ratio 0) consumes no draw. Sums are
 * doubles in seconds, rounded to ns after the rescaling. Same parameters and
 * seed, same trace, on every platform (the RNG is core/rng.h; libm's exp/log
 * are the only platform inputs).
 *
 * Lengths are always >= 1: the uniform range's lower end is raised to 1, and
 * lognormal/empirical draws are clamped to [max(min, 1), max]. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "workload/gen.h"

#define GEN_MAX_TOKENS 10000000.0      /* per request, like the trace readers */
#define GEN_MAX_PROMPTS 100000000ull   /* 3.2 GB of requests */
#define GEN_MAX_SPAN_S 1e10            /* arrivals must fit the readers' range */

void gen_params_default(gen_params *p) {
  memset(p, 0, sizeof *p);
  p->num_prompts = 1000;
  p->request_rate = INFINITY;
  p->burstiness = 1.0;
  p->input.kind = LEN_UNIFORM_RATIO;
  p->input.len = 1024;
  p->input.range_ratio = 0;
  p->output.kind = LEN_UNIFORM_RATIO;
  p->output.len = 128;
  p->output.range_ratio = 0;
  p->seed = 0;
}

static uint32_t clamp_len(double x, const len_dist *d) {
  double lo = d->min > 1 ? d->min : 1, hi = d->max ? d->max : GEN_MAX_TOKENS;
  if (hi < lo) hi = lo;
  x = floor(x + 0.5);
  if (!(x >= lo)) x = lo; /* also catches NaN */
  if (x > hi) x = hi;
  return (uint32_t)x;
}

uint32_t gen_draw_len(rng *r, const len_dist *d) {
  switch (d->kind) {
  case LEN_UNIFORM_RATIO: {
    double lo = floor(d->len * (1.0 - d->range_ratio)), hi = floor(d->len * (1.0 + d->range_ratio));
    if (lo < 1) lo = 1;
    if (hi < lo) hi = lo;
    return (uint32_t)rng_int_range(r, (int64_t)lo, (int64_t)hi);
  }
  case LEN_LOGNORMAL: return clamp_len(rng_lognormal(r, log(d->median), d->sigma), d);
  case LEN_EMPIRICAL:
    SIM_ASSERT(d->samples && d->n_samples);
    return clamp_len((double)d->samples[rng_below(r, d->n_samples)], d);
  }
  SIM_ASSERT(!"unknown len_kind");
  return 1;
}

/* Checks one length distribution; `which` is "input" or "output". */
static int check_len(const len_dist *d, const char *which, sim_err *err) {
  switch (d->kind) {
  case LEN_UNIFORM_RATIO:
    if (!(d->len >= 1) || d->len > GEN_MAX_TOKENS)
      return sim_errf(err, SIM_EINPUT, "--random-%s-len must be >= 1 and <= %.0f, got %g", which, GEN_MAX_TOKENS,
                      d->len);
    if (!(d->range_ratio >= 0 && d->range_ratio < 1))
      return sim_errf(err, SIM_EINPUT, "--random-range-ratio must be in [0, 1), got %g", d->range_ratio);
    if (floor(d->len * (1.0 + d->range_ratio)) > GEN_MAX_TOKENS)
      return sim_errf(err, SIM_EINPUT,
                      "--random-%s-len %g with --random-range-ratio %g reaches past %.0f tokens per request", which,
                      d->len, d->range_ratio, GEN_MAX_TOKENS);
    return SIM_OK;
  case LEN_LOGNORMAL:
    if (!(d->median >= 1) || d->median > GEN_MAX_TOKENS)
      return sim_errf(err, SIM_EINPUT, "%s length: lognormal median must be >= 1 and <= %.0f tokens, got %g", which,
                      GEN_MAX_TOKENS, d->median);
    if (!(d->sigma >= 0) || !isfinite(d->sigma) || d->sigma > 10)
      return sim_errf(err, SIM_EINPUT, "%s length: lognormal sigma must be in [0, 10], got %g", which, d->sigma);
    break;
  case LEN_EMPIRICAL:
    if (!d->samples || d->n_samples == 0)
      return sim_errf(err, SIM_EINPUT, "%s length: the empirical distribution needs at least one sample", which);
    break;
  default: return sim_errf(err, SIM_EINPUT, "%s length: unknown distribution kind %d", which, (int)d->kind);
  }
  if (d->max && d->min > d->max)
    return sim_errf(err, SIM_EINPUT, "%s length: min %u is above max %u", which, d->min, d->max);
  if (d->min > GEN_MAX_TOKENS)
    return sim_errf(err, SIM_EINPUT, "%s length: min %u is above %.0f tokens", which, d->min, GEN_MAX_TOKENS);
  return SIM_OK;
}

static void describe_len(char *b, size_t cap, const len_dist *d) {
  char clamp[64] = "";
  if (d->kind != LEN_UNIFORM_RATIO && (d->min || d->max)) snprintf(clamp, sizeof clamp, ", min=%u, max=%u", d->min, d->max);
  switch (d->kind) {
  case LEN_UNIFORM_RATIO: snprintf(b, cap, "uniform(len=%g, range_ratio=%g)", d->len, d->range_ratio); break;
  case LEN_LOGNORMAL: snprintf(b, cap, "lognormal(median=%g, sigma=%g%s)", d->median, d->sigma, clamp); break;
  default: snprintf(b, cap, "empirical(n=%zu%s)", d->n_samples, clamp); break;
  }
}

int gen_trace(trace *out, const gen_params *p, sim_err *err) {
  trace_init(out);
  out->format = TRACE_FMT_GENERATED;
  if (p->num_prompts < 1) return sim_errf(err, SIM_EINPUT, "--num-prompts must be >= 1");
  if (p->num_prompts > GEN_MAX_PROMPTS)
    return sim_errf(err, SIM_EINPUT, "--num-prompts must be <= %llu, got %llu", GEN_MAX_PROMPTS,
                    (unsigned long long)p->num_prompts);
  if (!(p->request_rate > 0))
    return sim_errf(err, SIM_EINPUT, "--request-rate must be > 0 (inf sends every request at t=0), got %g",
                    p->request_rate);
  if (!(p->burstiness > 0) || !isfinite(p->burstiness))
    return sim_errf(err, SIM_EINPUT, "--burstiness must be > 0 and finite (1 = Poisson), got %g", p->burstiness);
  int rc;
  if ((rc = check_len(&p->input, "input", err))) return rc;
  if ((rc = check_len(&p->output, "output", err))) return rc;

  char in[160], outd[160];
  describe_len(in, sizeof in, &p->input);
  describe_len(outd, sizeof outd, &p->output);
  snprintf(out->source, sizeof out->source,
           "generated: vllm random dataset, num_prompts=%llu request_rate=%g burstiness=%g input=%s output=%s "
           "seed=%llu",
           (unsigned long long)p->num_prompts, p->request_rate, p->burstiness, in, outd,
           (unsigned long long)p->seed);

  rng r;
  rng_seed(&r, p->seed);
  out->cap = (size_t)p->num_prompts; /* exactly: ten million rows must not round up to 16 million */
  out->reqs = sim_calloc(out->cap, sizeof *out->reqs); /* zeroed: rows compare bytewise, padding too */
  bool timed = isfinite(p->request_rate);
  double scale = timed ? 1.0 / (p->request_rate * p->burstiness) : 0, t_s = 0;
  double target_s = timed ? (double)p->num_prompts / p->request_rate : 0;
  if (timed && !(target_s < GEN_MAX_SPAN_S)) {
    trace_free(out);
    return sim_errf(err, SIM_EINPUT,
                    "the generated arrivals would span %g s (num_prompts / request_rate), more than 1e10 s: raise "
                    "--request-rate or lower --num-prompts",
                    target_s);
  }
  double *sum_s = timed ? sim_malloc((size_t)p->num_prompts * sizeof *sum_s) : NULL;
  for (uint64_t i = 0; i < p->num_prompts; i++) {
    if (timed) {
      t_s += rng_gamma(&r, p->burstiness, scale);
      sum_s[i] = t_s;
    }
    uint32_t in_len = gen_draw_len(&r, &p->input);
    uint32_t out_len = gen_draw_len(&r, &p->output);
    trace_push(out, 0, in_len, out_len, 0, NULL, 0);
  }
  if (timed) {
    double f = t_s > 0 ? target_s / t_s : 0;
    for (uint64_t i = 0; i < p->num_prompts; i++) out->reqs[i].arrival_ns = sim_s_to_ns(sum_s[i] * f);
    free(sum_s);
  }
  return SIM_OK;
}
