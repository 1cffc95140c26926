/* shprefix.c: inference-perf's shared_prefix workload as a trace (see
 * shprefix.h for the definition of the output).
 *
 * Content ids: (tag << 60) | (index << 28) | span, tag 1 for a group's system
 * prompt (index = group), 2 for a prompt's own tokens (index = prompt), so ids
 * of different groups, prompts and spans never collide; every request of a
 * prompt carries the same list. Limits keep the fields apart: at most
 * SHP_MAX_PROMPTS prompts (index < 2^32) and 10^7 tokens per prompt
 * (span < 2^28). */
#include "workload/shprefix.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "core/rng.h"

#define SHP_MAX_PROMPTS 1000000u
#define SHP_MAX_TOKENS 10000000u
#define SHP_MAX_REQUESTS 100000000ull
#define SHP_MAX_SPAN_S 1e9

uint64_t shp_stage_requests(const shp_stage *st) {
  double n = floor(st->rate_per_s * st->duration_s);
  return n > 0 && n < 1e18 ? (uint64_t)n : 0;
}

static int check(const shp_params *p, const shp_stage *st, uint32_t n_stages, sim_err *err) {
  if (p->n_groups < 1 || p->prompts_per_group < 1 ||
      (uint64_t)p->n_groups * p->prompts_per_group > SHP_MAX_PROMPTS)
    return sim_errf(err, SIM_EINPUT, "shared prefix: num_groups (%u) x num_prompts_per_group (%u) must be in [1, %u]",
                    p->n_groups, p->prompts_per_group, SHP_MAX_PROMPTS);
  if (p->prompt_tokens < 1 || p->prompt_tokens > SHP_MAX_TOKENS)
    return sim_errf(err, SIM_EINPUT, "shared prefix: prompt_tokens must be in [1, %u], got %u", SHP_MAX_TOKENS,
                    p->prompt_tokens);
  if (p->shared_tokens > p->prompt_tokens)
    return sim_errf(err, SIM_EINPUT, "shared prefix: shared_tokens (%u) exceeds prompt_tokens (%u)", p->shared_tokens,
                    p->prompt_tokens);
  if (p->output_tokens < 1 || p->output_tokens > SHP_MAX_TOKENS)
    return sim_errf(err, SIM_EINPUT, "shared prefix: output_tokens must be in [1, %u], got %u", SHP_MAX_TOKENS,
                    p->output_tokens);
  if (p->hash_block_tokens < 1) return sim_errf(err, SIM_EINPUT, "shared prefix: hash_block_tokens must be >= 1");
  if (n_stages < 1) return sim_errf(err, SIM_EINPUT, "shared prefix: no load stage");
  uint64_t total = 0;
  for (uint32_t k = 0; k < n_stages; k++) {
    const shp_stage *s = &st[k];
    if (!(s->rate_per_s > 0) || !isfinite(s->rate_per_s))
      return sim_errf(err, SIM_EINPUT, "load stage %u: rate must be a positive number", k);
    if (!(s->duration_s > 0) || s->duration_s > SHP_MAX_SPAN_S)
      return sim_errf(err, SIM_EINPUT, "load stage %u: duration must be in (0, %g] s", k, SHP_MAX_SPAN_S);
    if (!(s->start_s >= 0) || s->start_s > SHP_MAX_SPAN_S ||
        (k && s->start_s < st[k - 1].start_s + st[k - 1].duration_s))
      return sim_errf(err, SIM_EINPUT, "load stage %u: start %g s must be in [0, %g] and not before the previous stage's end",
                      k, s->start_s, SHP_MAX_SPAN_S);
    uint64_t n = shp_stage_requests(s);
    if (n == 0) return sim_errf(err, SIM_EINPUT, "load stage %u: rate x duration is below one request", k);
    total += n;
    if (total > SHP_MAX_REQUESTS)
      return sim_errf(err, SIM_EINPUT, "shared prefix: more than %llu requests", (unsigned long long)SHP_MAX_REQUESTS);
  }
  return SIM_OK;
}

/* Content ids of one prompt (group g, prompt q) into ids[0..n). */
static void prompt_ids(const shp_params *p, uint32_t g, uint32_t q, uint64_t *ids, uint32_t n) {
  for (uint32_t b = 0; b < n; b++) {
    bool shared = (uint64_t)(b + 1) * p->hash_block_tokens <= p->shared_tokens;
    uint64_t tag = shared ? 1 : 2, index = shared ? g : q;
    ids[b] = tag << 60 | index << 28 | b;
  }
}

int shp_build(trace *out, const shp_params *p, const shp_stage *st, uint32_t n_stages, sim_err *err) {
  trace_init(out);
  int rc = check(p, st, n_stages, err);
  if (rc) return rc;
  uint32_t np = p->n_groups * p->prompts_per_group;
  uint32_t n_ids = (p->prompt_tokens + p->hash_block_tokens - 1) / p->hash_block_tokens;
  /* the prompts' id lists, in generation order (prompt q of group q / per_group) */
  uint64_t *ids = sim_malloc((size_t)np * n_ids * sizeof *ids);
  for (uint32_t q = 0; q < np; q++) prompt_ids(p, q / p->prompts_per_group, q, ids + (size_t)q * n_ids, n_ids);
  rng r;
  rng_seed(&r, p->seed);
  uint32_t *order = sim_malloc((size_t)np * sizeof *order);
  for (uint32_t q = 0; q < np; q++) order[q] = q;
  for (uint32_t q = np - 1; q > 0; q--) {
    uint32_t j = (uint32_t)rng_below(&r, (uint64_t)q + 1), t = order[q];
    order[q] = order[j];
    order[j] = t;
  }
  out->hash_block_tokens = p->hash_block_tokens;
  out->format = TRACE_FMT_GENERATED;
  double t0 = -1;
  double *gaps = NULL;
  size_t cap_gaps = 0;
  for (uint32_t k = 0; k < n_stages; k++) {
    uint64_t n = shp_stage_requests(&st[k]);
    SIM_GROW(gaps, cap_gaps, n);
    double sum = 0;
    for (uint64_t i = 0; i < n; i++) sum += gaps[i] = rng_exponential(&r, st[k].rate_per_s);
    double t = st[k].start_s, scale = st[k].duration_s / sum;
    for (uint64_t i = 0; i < n; i++) {
      t += gaps[i] * scale;
      if (t0 < 0) t0 = t;
      uint32_t q = order[i % np];
      trace_push(out, sim_s_to_ns(t - t0), p->prompt_tokens, p->output_tokens, 0, ids + (size_t)q * n_ids, n_ids);
    }
  }
  free(gaps);
  free(order);
  free(ids);
  out->t0_s = t0;
  /* rounding to ns can put two sends of one instant out of order by nothing; keep the invariant exact */
  for (size_t i = 1; i < out->n; i++)
    if (out->reqs[i].arrival_ns < out->reqs[i - 1].arrival_ns) out->reqs[i].arrival_ns = out->reqs[i - 1].arrival_ns;
  snprintf(out->source, sizeof out->source,
           "inference-perf shared_prefix: %u groups x %u prompts of %u tokens (%u shared), %u output tokens, %u stages",
           p->n_groups, p->prompts_per_group, p->prompt_tokens, p->shared_tokens, p->output_tokens, n_stages);
  return SIM_OK;
}
