/* capacity_modes.h: aggregated and disaggregated candidates side by side in one capacity search (capacity.c and
 * capacity_out.c only).
 *
 * A disaggregated candidate (--mode disagg, docs/DISAGG.md) is sized in xPyD groups: one group is x prefill
 * workers and y decode workers of the point's pool shapes; R "replicas" of it are pools of R·x prefill and R·y
 * decode workers behind the pools' routers (Dynamo scales pools, not groups), so its GPUs are R x (x·prefill
 * GPUs + y·decode GPUs). Its rate search runs one group; its start rate and its batch-of-one TPOT floor come from
 * the decode pool's plan (plan_analyze_pools), its feasibility from both pools'.
 *
 * Pool settings (the settings table's SET_DISAGG rows other than `mode`: prefill_workers, decode_tp, ...) shape
 * disaggregated points only. Where `mode` is an axis with agg among its values, an aggregated point that differs
 * from another only by pool settings is the same deployment: only the one with every pool axis at its first value
 * is a candidate, and its label and point drop the pool settings. */
#ifndef SIM_CAPACITY_MODES_H
#define SIM_CAPACITY_MODES_H

#include "plan/capacity.h"
#include "plan/plan.h"

/* Whether the point runs --mode disagg (its `mode` value, else the base scenario's). */
bool capmode_point_disagg(const scenario *base, const grid_point *p);
/* Whether the point is a candidate (see above); when it is an aggregated one, its pool settings are unset. */
bool capmode_keep_point(const grid_spec *g, const scenario *base, grid_point *p);
/* Whether any pool setting is an axis of g. */
bool capmode_pool_axes(const grid_spec *g);
/* GPUs of one replica: a disaggregated deployment's xPyD group, else tp x pp x dp. */
uint32_t capmode_unit_gpus(const deploy_cfg *d);
/* R replicas of the deployment: --replicas R, or a disaggregated group's pools scaled R times (replicas 1). */
void capmode_scale(deploy_cfg *d, uint32_t R);
/* The plan of one replica: plan_analyze, or for --mode disagg both pools' (pl[0] prefill, pl[1] decode). Returns
 * the plan whose decode figures (the batch-of-one step, the largest batch) size the search, or NULL with c's
 * reason set when the planning failed. *fits: every pool can start (else c->reason says which cannot). The
 * echo c->cfg gets the resolved deployment, GPUs and memory plan (the decode pool's for disagg). */
const plan_result *capmode_plan(plan_result pl[2], const scenario *sc, const plan_opts *po, cap_candidate *c,
                                bool *fits);
/* Rented instances of a disaggregated candidate's R replicas: each pool's workers packed onto the instance type
 * apart (a worker must fit one instance). Returns the instances, 0 with why when a worker does not fit. */
uint32_t capmode_instances(const instance_cfg *in, const gpu_cfg *g, const deploy_cfg *d, uint32_t R, char *why,
                           size_t n);
/* "Aggregated or disaggregated: ..." with the cheapest verified candidate of each mode in numbers, appended to
 * buf at *o; nothing when the candidates are of one mode. */
void capmode_compare(const capacity_set *s, char *buf, size_t n, size_t *o);
/* The order of the recommendation: known cost ascending (unknown last), then GPUs, then more headroom, then the
 * grid index. Headroom: the fleet's rate at the SLOs, max rate per replica x replicas (a per-replica rate alone
 * would favour the larger unit, e.g. one 2P1D group over three TP1 replicas of the same GPUs). */
bool capmode_cheaper(const cap_candidate *a, const cap_candidate *b);
double capmode_headroom(const cap_candidate *c);
/* The cheapest verified candidate of each mode (-1 = none of that mode met the SLOs); false when the candidates
 * are of one mode. */
bool capmode_best_by_mode(const capacity_set *s, int *agg, int *disagg);

#endif
