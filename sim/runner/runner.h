/* runner.h: one simulation run end to end, the data flowing one way:
 *   scenario -> configs (model, gpu, engine, deployment) -> memory plan
 *   -> trace (file or generator, transforms) -> cost model -> cluster
 *   -> metrics summary.
 * Used by `run`, and by `sweep`, `capacity` and `validate` (one run_ctx per
 * simulation; independent run_ctx values share nothing, so they can run on
 * different threads).
 * Ownership: runner_prepare fills a caller-owned run_ctx; runner_free
 * releases it (also after a failed prepare). */
#ifndef SIM_RUNNER_H
#define SIM_RUNNER_H

#include "core/drv.h"
#include "hw/cost.h"
#include "hw/memplan.h"
#include "hw/prof.h"
#include "runner/profsel.h"
#include "runner/result.h"
#include "runner/scenario.h"
#include "runner/stratum.h"

struct cluster; /* the simulation (serve/cluster.h): the runner's alone, freed when the run ends */

typedef struct run_ctx {
  scenario sc;
  model_cfg model;
  gpu_cfg gpu;
  engine_cfg engine;
  deploy_cfg deploy;     /* resolved */
  mem_plan plan;
  trace tr;
  trace_stats tr_stats;
  prof_sel prof;         /* measured profiles and the one-line cost source (prof.source) */
  stratum strat;         /* what the prediction rests on (runner/stratum.h; runner_build) */
  cost_model *cost;      /* cost_new in runner_build (--mode disagg: the prefill pool's) */
  deploy_cfg pool[2];    /* --mode disagg: the prefill and the decode pool as deployments (deploy_pool); the cost
                            models borrow them */
  mem_plan plan_dec;     /* --mode disagg: the decode pool's memory plan (plan: the prefill pool's) */
  cost_model *cost_dec;  /* --mode disagg: the decode pool's cost model */
  bool xfer_nvlink;      /* --mode disagg: the KV moves over NVLink (both pools in one node), else the network */
  struct cluster *sim;   /* between runner_build and the end of runner_execute */
  bool prepared, executed, interrupted;
  run_result res;        /* filled by runner_execute (result.h) */
} run_ctx;

/* Loads and checks everything; SIM_EINPUT with a precise message on bad input
 * (including a deployment that cannot start: the memory plan's numbers). */
int runner_prepare(run_ctx *r, const scenario *sc, sim_err *err);
/* The same in two parts, for callers that adjust the configs or build their
 * own workload (validate): runner_init copies the scenario; the caller fills
 * r->model, r->gpu, r->engine and r->deploy (resolved: cfg_resolve) and, if
 * have_trace, r->tr; runner_build then computes the memory plan, loads the
 * workload (unless have_trace), the profiles, the cost model and the cluster.
 * runner_free releases everything in either case. */
void runner_init(run_ctx *r, const scenario *sc);
int runner_build(run_ctx *r, bool have_trace, sim_err *err);
/* Runs the simulation: through the libuv driver when drv is non-NULL (signals,
 * pacing), else directly. Then fills r->res and frees the simulation and the
 * trace's rows (r->tr keeps its description: source, format, request count). */
int runner_execute(run_ctx *r, const drv_opts *drv, sim_err *err);
void runner_free(run_ctx *r);

/* Loads and transforms the scenario's workload (exposed for gen-trace and tests). */
int runner_load_workload(const scenario *sc, trace *out, sim_err *err);

#endif
