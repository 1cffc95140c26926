/* shprefix.h: Kubernetes inference-perf's `shared_prefix` data under its
 * `constant` load stages, rebuilt as a trace whose requests carry
 * prefix-cache content (trace.h hash_ids), so that prefix caching sees what
 * the real server saw. The facts are from inference-perf's source as it ran
 * for the open-loop validation data (2025-10/11: datagen
 * shared_prefix_datagen.py, loadgen load_timer.py / load_generator.py):
 *
 * Prompts: n_groups x prompts_per_group prompts, generated group by group
 *   (a random system prompt per group, a random question per prompt), then
 *   shuffled once. Request n of EVERY stage (n counts from 0 in each stage)
 *   uses prompt n mod P of the shuffled list, P = n_groups x prompts_per_group:
 *   the same P prompts cycle through the whole run.
 * Lengths: every prompt has prompt_tokens tokens, the first shared_tokens of
 *   them (the system prompt) identical within its group; output_tokens are
 *   generated (max_tokens with ignore_eos).
 * Content: one id per hash_block_tokens prompt tokens. A span lying wholly
 *   inside the system prompt gets its group's id for that span; every other
 *   span (the question, and the span where system prompt and question meet)
 *   the prompt's own id. So with prefix caching a group's system prompt is
 *   cached for all its prompts, and a whole prompt is cached once it has been
 *   sent (it comes back every P requests).
 * Sends (ConstantLoadTimer): stage k sends floor(rate x duration) requests;
 *   the gaps are exponential (mean 1 / rate), normalized to sum to exactly
 *   `duration`, so request i goes at start_k + the sum of gaps 0..i and the
 *   last one at start_k + duration (a Poisson process conditioned on its
 *   count, not evenly spaced).
 * The caller places the stages (start_s): inference-perf starts stage k + 1
 * only after every request of stage k has ended (sim/validate/vstage.c).
 *
 * Draw order (fixed, part of the output's definition): rng_seed(seed); the
 * shuffle (Fisher-Yates from the last prompt down, rng_below); then each
 * stage's gaps in order (rng_exponential). Arrivals are shifted so that the
 * first request is at t = 0 (trace.h); the trace's t0_s keeps the shift (the
 * first send on the stages' clock).
 *
 * Ownership: shp_build initializes *out (trace_init); the caller frees it. */
#ifndef SIM_SHPREFIX_H
#define SIM_SHPREFIX_H

#include "core/common.h"
#include "workload/trace.h"

typedef struct shp_params {
  uint32_t n_groups;          /* system prompts */
  uint32_t prompts_per_group; /* questions per system prompt */
  uint32_t prompt_tokens;     /* tokens of every prompt (system prompt + question) */
  uint32_t shared_tokens;     /* tokens of the system prompt, <= prompt_tokens */
  uint32_t output_tokens;     /* tokens generated per request */
  uint32_t hash_block_tokens; /* prompt tokens per content id, >= 1 */
  uint64_t seed;              /* the shuffle and the gaps */
} shp_params;

typedef struct shp_stage {
  double rate_per_s; /* requests per second, > 0 */
  double duration_s; /* send window, seconds, > 0 */
  double start_s;    /* stage start on the stages' clock, seconds; >= the previous stage's start + duration */
} shp_stage;

/* Requests a stage sends: floor(rate x duration), as inference-perf's int(). */
uint64_t shp_stage_requests(const shp_stage *st);
/* Builds the trace of the given stages (requests of stage k follow those of
 * stage k - 1). SIM_EINPUT naming the field on a bad parameter. */
int shp_build(trace *out, const shp_params *p, const shp_stage *st, uint32_t n_stages, sim_err *err);

#endif
