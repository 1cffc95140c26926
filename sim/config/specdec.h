/* specdec.h: speculative decoding settings: vLLM's --speculative-config JSON
 * (vllm/config/speculative.py, SpeculativeConfig), its validation, and the
 * acceptance distribution a run draws from (given by the user, or a published
 * measurement from configs/specdec/acceptance.json).
 *
 * Acceptance is described by unconditional per-position rates u_1 >= u_2 >= ...
 * >= u_k: u_i is the probability that draft positions 1..i are all accepted
 * (vLLM's own definition: v1/spec_decode/metrics.py counts accepted tokens per
 * position over all drafts; the synthetic_acceptance_rates of
 * vllm/config/speculative.py at vllm-project/vllm 002e77c are defined the same
 * way). So position i is accepted only if 1..i-1 were, and the expected tokens
 * a speculating step emits are 1 + sum u_i (the mean acceptance length).
 * A mean acceptance length L at k drafts is turned into rates of a constant
 * conditional acceptance a (u_i = a^i, sum = L - 1), the shape measured per
 * position falls off with (configs/specdec/README.md). */
#ifndef SIM_SPECDEC_H
#define SIM_SPECDEC_H

#include "config/cfg.h"

/* Parses the JSON text of --speculative-config (or the scenario's "speculative_config" object, printed) into d.
 * False with a message naming the field in why (e.g. "num_speculative_tokens: expected an integer in [1, 16]"). */
bool specdec_parse(deploy_cfg *d, const char *text, char *why, size_t n);
/* The settings as the JSON of --speculative-config (what specdec_parse reads back). */
void specdec_json_text(const deploy_cfg *d, char *buf, size_t n);
const char *spec_method_name(spec_method m);
bool spec_method_parse(const char *t, spec_method *m);

/* Resolves a deployment's speculation (cfg_resolve): checks the method against the model and engine, the engine's
 * batch-size cut-off against its version, and fills d->spec_rates[0..k) and d->spec_source from the user's rates
 * or length, else from the bundled table by method, model and dataset. SIM_EINPUT naming the field. */
int specdec_resolve(deploy_cfg *d, const model_cfg *m, const engine_cfg *e, sim_err *err);

/* Expected tokens a speculating step emits: 1 + sum of the first k rates. */
double specdec_expected_tokens(const double *rates, uint32_t k);
/* Accepted drafts of one step out of k, from a uniform x in [0, 1): how many of the first k rates exceed x. */
static inline uint32_t specdec_accepted(const double *rates, uint32_t k, double x) {
  uint32_t a = 0;
  while (a < k && x < rates[a]) a++;
  return a;
}
/* The uniform draw of request `id`'s step that starts at token position `pos`, from the run's seed: a hash, so the
 * same request and step draw the same whatever the order of events or threads (and a preempted request that
 * recomputes draws again what it drew). */
double specdec_uniform(uint64_t seed, uint64_t id, uint64_t pos);

#endif
