/* pools.h: `servesim plan --mode disagg` (pools.c): the two pools of a disaggregated deployment, each planned
 * as one of its workers with plan_analyze. */
#ifndef SERVESIM_PLAN_POOLS_H
#define SERVESIM_PLAN_POOLS_H

#include "plan/plan.h"

/* --mode disagg: each pool planned as its own engine (out[0] the prefill pool's, out[1] the decode pool's: its
 * TP/DP, max_num_seqs and max_num_batched_tokens; pools.c). Errors as plan_analyze's, prefixed with the pool;
 * a pool that cannot start has fits false. */
int plan_analyze_pools(plan_result out[2], const scenario *sc, const plan_opts *opts, sim_err *err);
/* Both pools' plans, each under a heading naming the pool and its worker count; the JSON as
 * {"mode": "disagg", "prefill_workers": N, "decode_workers": N, "prefill": plan, "decode": plan}. */
void plan_print_pools(const plan_result p[2], const scenario *sc, FILE *f);
int plan_write_pools_json(const plan_result p[2], FILE *f, sim_err *err);

#endif
