/* sweep.c: running a grid of simulations on the thread pool, one row per
 * point, then the Pareto frontiers and the load curves (see sweep.h). Every
 * worker touches only its own row and its own run_ctx; the base scenario and
 * the grid are read-only while the pool runs. */
#include "plan/sweep.h"
#include "runner/whatif.h"
#include "config/settings.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "plan/pareto.h"

void sweep_eval(const scenario *sc, const slo_set *slo, const price_spec *price, sweep_row *row, run_ctx **keep) {
  run_ctx *r = sim_calloc(1, sizeof *r);
  sim_err err = {0, ""};
  if (keep) *keep = NULL;
  int rc = runner_prepare(r, sc, &err);
  if (!rc) rc = runner_execute(r, NULL, &err);
  snprintf(row->model, sizeof row->model, "%.63s", r->model.name[0] ? r->model.name : sc->model);
  snprintf(row->gpu, sizeof row->gpu, "%.63s", r->gpu.name[0] ? r->gpu.name : sc->gpu);
  if (r->engine.name[0])
    snprintf(row->engine, sizeof row->engine, "%.30s%s%.30s", r->engine.name, r->engine.version[0] ? "@" : "",
             r->engine.version);
  else
    snprintf(row->engine, sizeof row->engine, "%.63s", sc->engine);
  row->deploy = r->deploy.resolved ? r->deploy : sc->deploy;
  if (!row->deploy.resolved) settings_fill(&row->deploy, NULL, SD_ONE); /* config/'s rule for the sizes */
  row->replicas = row->deploy.replicas;
  row->gpus = row->deploy.resolved ? deploy_gpus_total(&row->deploy) : deploy_gpus(&row->deploy) * row->replicas;
  row->max_concurrency = sc->max_concurrency;
  row->rate_scale = sc->rate_scale;
  row->mem = r->plan;
  row->price_per_gpu_hour = r->gpu.name[0] ? price_lookup(price, &r->gpu) : 0;
  row->usd_per_hour = row->gpus * row->price_per_gpu_hour;
  row->usd_per_m_output = row->usd_per_m_total = INFINITY;
  row->tput_per_gpu = row->tok_s_per_user = NAN;
  if (rc) {
    row->feasible = false;
    snprintf(row->reason, sizeof row->reason, "%s", err.msg);
    runner_free(r);
    free(r);
    return;
  }
  row->feasible = true;
  row->reason[0] = 0;
  snprintf(row->cost_source, sizeof row->cost_source, "%s", r->prof.source);
  row->offered_rate = r->tr_stats.rate_per_s;
  row->sum = r->res.sum;
  row->strat = r->res.strat;
  runner_bottleneck(&r->res, &row->bn);
  slo_eval(&r->res, slo, &row->slo);
  whatif_report wr;
  whatif_check(&r->res, &wr);
  row->whatif_missed = wr.missed;
  row->whatif_note[0] = 0;
  for (uint32_t i = 0; i < wr.count && !row->whatif_note[0]; i++)
    if (!wr.n[i].exercised) snprintf(row->whatif_note, sizeof row->whatif_note, "%s", wr.n[i].text);
  const metrics_summary *s = &r->res.sum;
  row->tput_per_gpu = s->output_throughput / row->gpus;
  row->tok_s_per_user = s->tpot_ms.n && s->tpot_ms.mean > 0 ? 1000.0 / s->tpot_ms.mean : NAN;
  if (row->price_per_gpu_hour > 0 && s->output_throughput > 0) {
    row->usd_per_m_output = row->usd_per_hour / (s->output_throughput * 3600.0) * 1e6;
    row->usd_per_m_total = row->usd_per_hour / (s->total_token_throughput * 3600.0) * 1e6;
  }
  if (keep) {
    *keep = r;
    return;
  }
  runner_free(r);
  free(r);
}

int sweep_prepare(sweep_set *s, const scenario *base, const grid_spec *g, const slo_set *slo, const price_spec *price,
                  sim_err *err) {
  memset(s, 0, sizeof *s);
  s->base = *base;
  s->grid = *g;
  s->slo = *slo;
  s->price = *price;
  s->n = grid_size(g);
  if (!s->n) return sim_errf(err, SIM_EINPUT, "the grid has more than %d points", GRID_MAX_POINTS);
  /* names first: a typo is a bad spec, not an infeasible configuration */
  model_cfg m;
  engine_cfg e;
  gpu_cfg gc;
  int rc;
  if ((rc = cfg_model_load(&m, base->model, err))) return rc;
  if (!g->n[AX_ENGINE] && (rc = cfg_engine_load(&e, base->engine, err))) return rc;
  for (int i = 0; i < g->n[AX_ENGINE]; i++)
    if ((rc = cfg_engine_load(&e, g->v[AX_ENGINE][i].s, err))) return sim_err_prefix(err, "%s", g->src[AX_ENGINE]);
  for (size_t i = 0; i < g->n_configs; i++)
    if (g->configs[i].set[AX_ENGINE] && (rc = cfg_engine_load(&e, g->configs[i].v[AX_ENGINE].s, err)))
      return sim_err_prefix(err, "%s: configs[%zu].engine", g->file, i);
  if (!g->n[AX_GPU] && (rc = cfg_gpu_load(&gc, base->gpu, err))) return rc;
  for (int i = 0; i < g->n[AX_GPU]; i++)
    if ((rc = cfg_gpu_load(&gc, g->v[AX_GPU][i].s, err))) return sim_err_prefix(err, "%s", g->src[AX_GPU]);
  for (size_t i = 0; i < g->n_configs; i++)
    if (g->configs[i].set[AX_GPU] && (rc = cfg_gpu_load(&gc, g->configs[i].v[AX_GPU].s, err)))
      return sim_err_prefix(err, "%s: configs[%zu].gpu", g->file, i);
  trace t;
  if ((rc = runner_load_workload(base, &t, err))) {
    trace_free(&t);
    return rc;
  }
  trace_free(&t);
  s->rows = sim_calloc(s->n, sizeof *s->rows);
  for (size_t i = 0; i < s->n; i++) {
    sweep_row *r = &s->rows[i];
    r->index = i;
    grid_point_at(g, i, &r->pt);
    grid_label(&r->pt, r->label, sizeof r->label);
    scenario sc = *base;
    if ((rc = grid_apply(&r->pt, &sc, err))) return sim_err_prefix(err, "grid point %zu (%s)", i, r->label);
  }
  return SIM_OK;
}

static void work(void *ctx, size_t i) {
  sweep_set *s = ctx;
  sweep_row *r = &s->rows[i];
  scenario *sc = sim_malloc(sizeof *sc);
  *sc = s->base;
  sim_err err;
  if (grid_apply(&r->pt, sc, &err)) { /* checked in sweep_prepare */
    r->feasible = false;
    snprintf(r->reason, sizeof r->reason, "%s", err.msg);
  } else {
    sweep_eval(sc, &s->slo, &s->price, r, NULL);
  }
  free(sc);
}

static void pareto(sweep_set *s) {
  double *x = sim_malloc((s->n + 1) * sizeof *x), *y = sim_malloc((s->n + 1) * sizeof *y);
  double *z = sim_malloc((s->n + 1) * sizeof *z);
  bool *valid = sim_malloc(s->n + 1), *on = sim_malloc(s->n + 1);
  s->n_feasible = 0;
  for (size_t i = 0; i < s->n; i++) {
    const sweep_row *r = &s->rows[i];
    s->n_feasible += r->feasible;
    /* with SLOs, a point that misses them is no trade-off a planner can take: off the frontiers */
    valid[i] = r->feasible && r->sum.completed > 0 && (!s->slo.n || r->slo.all_ok);
    x[i] = r->tput_per_gpu;
    y[i] = r->tok_s_per_user;
    z[i] = r->sum.ttft_ms.p99;
  }
  s->n_pareto_user = pareto_front(x, y, valid, s->n, true, true, on);
  for (size_t i = 0; i < s->n; i++) s->rows[i].pareto_user = on[i];
  s->n_pareto_ttft = pareto_front(x, z, valid, s->n, true, false, on);
  for (size_t i = 0; i < s->n; i++) s->rows[i].pareto_ttft = on[i];
  free(x), free(y), free(z), free(valid), free(on);
}

int sweep_execute(sweep_set *s, unsigned jobs, pool_progress_fn progress, void *pctx, sim_err *err) {
  int rc = pool_run(s->n, jobs, work, s, progress, pctx, err);
  if (rc) return rc;
  pareto(s);
  return SIM_OK;
}

/* The rows of shard k of n: indices i with i % n == k - 1 (interleaved, so a block of heavy neighbours in
 * the grid is spread over the shards). */
typedef struct shard_ctx {
  void (*fn)(void *, size_t);
  void *ctx;
  size_t k, n;
} shard_ctx;

static void shard_work(void *ctx, size_t j) {
  shard_ctx *c = ctx;
  c->fn(c->ctx, j * c->n + (c->k - 1));
}

int plan_run_shard(size_t n_rows, size_t k, size_t n, void (*fn)(void *, size_t), void *ctx, unsigned jobs,
                   pool_progress_fn progress, void *pctx, sim_err *err) {
  SIM_ASSERT(k >= 1 && k <= n);
  shard_ctx c = {fn, ctx, k, n};
  return pool_run(sweep_shard_rows(n_rows, k, n), jobs, shard_work, &c, progress, pctx, err);
}


int sweep_execute_shard(sweep_set *s, size_t k, size_t n, unsigned jobs, pool_progress_fn progress, void *pctx,
                        sim_err *err) {
  return plan_run_shard(s->n, k, n, work, s, jobs, progress, pctx, err);
}

void sweep_finish(sweep_set *s) { pareto(s); }

int sweep_set_intervals(sweep_set *s, double level, const char *path, sim_err *err) {
  plan_iv_free(&s->iv);
  return plan_iv_load(&s->iv, level, path, false, err);
}

void sweep_free(sweep_set *s) {
  plan_iv_free(&s->iv);
  free(s->rows);
  s->rows = NULL;
  s->n = 0;
}
