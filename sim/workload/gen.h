/* gen.h: workload generators, seeded and deterministic.
 *
 * Open loop, like `vllm bench serve` with the random dataset:
 *   - request i is sent at the sum of i + 1 delays (request 0 is delayed
 *     too), delays gamma(shape = burstiness, scale = 1 / (rate * burstiness)),
 *     i.e. Poisson when burstiness = 1, and the sums rescaled so that the
 *     last request is sent at exactly num_prompts / rate (vLLM's
 *     get_request); rate = inf sends everything at t=0.
 *   - lengths: vLLM's random dataset draws each length uniformly from the
 *     integers [floor(len * (1 - r)), floor(len * (1 + r))] (LEN_UNIFORM_RATIO,
 *     r = --random-range-ratio, default 0 = fixed); also lognormal (by median
 *     and sigma of the log) and empirical (resampled from a trace's values).
 * The closed-loop client (--max-concurrency) is not a trace property: the
 * engine applies it at replay time.
 *
 * Draw order (fixed, part of the output's definition): for each request i in
 * order: gap, then input length, then output length. */
#ifndef SIM_GEN_H
#define SIM_GEN_H

#include "core/common.h"
#include "core/rng.h"
#include "workload/trace.h"

typedef enum len_kind { LEN_UNIFORM_RATIO = 0, LEN_LOGNORMAL, LEN_EMPIRICAL } len_kind;

typedef struct len_dist {
  len_kind kind;
  double len;           /* UNIFORM_RATIO: the nominal length, tokens */
  double range_ratio;   /* UNIFORM_RATIO: r in [0, 1) */
  double median;        /* LOGNORMAL: median tokens (exp(mu)) */
  double sigma;         /* LOGNORMAL: std dev of ln(tokens) */
  uint32_t min, max;    /* clamp for LOGNORMAL/EMPIRICAL (0 = none; result is >= 1 anyway) */
  const uint32_t *samples; /* EMPIRICAL: borrowed array of lengths */
  size_t n_samples;
} len_dist;

typedef struct gen_params {
  uint64_t num_prompts;   /* requests to generate, >= 1 */
  double request_rate;    /* requests/s; INFINITY = all at t=0 */
  double burstiness;      /* gamma shape; 1 = Poisson */
  len_dist input, output;
  uint64_t seed;
} gen_params;

/* vLLM's defaults: 1000 prompts, rate inf, burstiness 1, input 1024, output
 * 128, range ratio 0, seed 0. */
void gen_params_default(gen_params *p);
/* Checks ranges (names the flag in the message) and fills `out`. */
int gen_trace(trace *out, const gen_params *p, sim_err *err);
/* Draws one length (exposed for tests). */
uint32_t gen_draw_len(rng *r, const len_dist *d);

#endif
