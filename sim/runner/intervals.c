/* intervals.c: the workload part's extra runs and the intervals of a run (see intervals.h). */
#include "runner/intervals.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/pool.h"

double runner_fig_value(const metrics_summary *s, unc_fig f) {
  switch (f) {
  case UF_TTFT_MEAN: return s->ttft_ms.n ? s->ttft_ms.mean : NAN;
  case UF_TTFT_P99: return s->ttft_ms.n ? s->ttft_ms.p99 : NAN;
  case UF_TPOT_MEAN: return s->tpot_ms.n ? s->tpot_ms.mean : NAN;
  case UF_TPOT_P99: return s->tpot_ms.n ? s->tpot_ms.p99 : NAN;
  case UF_E2E_MEAN: return s->e2el_ms.n ? s->e2el_ms.mean : NAN;
  case UF_E2E_P99: return s->e2el_ms.n ? s->e2el_ms.p99 : NAN;
  case UF_TPUT: return s->output_throughput;
  default: return NAN;
  }
}

typedef struct seed_job {
  scenario sc;
  double v[UF_COUNT];
  int rc;
  sim_err err;
} seed_job;

static void seed_work(void *ctx, size_t i) {
  seed_job *j = &((seed_job *)ctx)[i];
  run_ctx *x = sim_calloc(1, sizeof *x);
  j->rc = runner_prepare(x, &j->sc, &j->err);
  if (!j->rc) j->rc = runner_execute(x, NULL, &j->err);
  for (int f = 0; f < UF_COUNT; f++) j->v[f] = j->rc ? NAN : runner_fig_value(&x->res.sum, (unc_fig)f);
  runner_free(x);
  free(x);
}

/* True when another seed would run the very same scenario: speculative decoding is off (its acceptance draws
 * take the seed) and the workload the next seed generates is the run's own, request for request (fixed lengths
 * and every request sent at once, as a one-request run or `--request-rate inf --random-range-ratio 0`): its extra
 * runs would repeat the run exactly, a spread of zero. */
static bool seed_changes_nothing(const run_ctx *r, const scenario *next) {
  if (r->deploy.spec_method != SPEC_NONE && r->deploy.num_speculative_tokens) return false;
  trace a, b;
  sim_err e = {0, ""};
  bool same = !runner_load_workload(&r->sc, &a, &e) && !runner_load_workload(next, &b, &e) && a.n == b.n &&
              a.n_hash == b.n_hash && (!a.n || !memcmp(a.reqs, b.reqs, a.n * sizeof *a.reqs)) &&
              (!a.n_hash || !memcmp(a.hash_ids, b.hash_ids, a.n_hash * sizeof *a.hash_ids));
  trace_free(&a), trace_free(&b);
  return same;
}

int runner_intervals(run_ctx *r, const unc_table *t, double level, uint32_t extra_seeds, sim_err *err) {
  unc_figs *iv = &r->res.iv;
  memset(iv, 0, sizeof *iv);
  iv->level = level;
  iv->fixed_trace = r->sc.trace_path[0] != 0;
  stratum_key(&r->res.strat, iv->stratum, sizeof iv->stratum);
  snprintf(iv->table, sizeof iv->table, "%s", t->source);
  iv->large = !iv->fixed_trace && extra_seeds && r->res.sum.total > RUNNER_IV_SEED_MAX_REQUESTS;
  uint32_t n = iv->fixed_trace || iv->large ? 0 : extra_seeds;
  seed_job *jobs = sim_calloc(n ? n : 1, sizeof *jobs);
  for (uint32_t k = 0; k < n; k++) {
    jobs[k].sc = r->sc;
    jobs[k].sc.seed = jobs[k].sc.gen.seed = r->sc.gen.seed + 1 + k;
    jobs[k].sc.sample_interval_s = -1; /* no time series */
  }
  if (n && seed_changes_nothing(r, &jobs[0].sc)) iv->seedless = true, n = 0;
  int rc = n ? pool_run(n, pool_default_jobs(), seed_work, jobs, NULL, NULL, err) : SIM_OK;
  for (uint32_t k = 0; k < n && !rc; k++)
    if (jobs[k].rc) {
      *err = jobs[k].err;
      rc = sim_err_prefix(err, "interval: the run with seed %llu", (unsigned long long)jobs[k].sc.gen.seed);
    }
  if (!rc) {
    iv->n_values = n + 1;
    for (int f = 0; f < UF_COUNT; f++) {
      double v[RUNNER_IV_MAX_SEEDS + 1];
      v[0] = runner_fig_value(&r->res.sum, (unc_fig)f);
      for (uint32_t k = 0; k < n; k++) v[k + 1] = jobs[k].v[f];
      int m = unc_fig_metric((unc_fig)f);
      const char *key = NULL;
      const unc_dist *d = m >= 0 ? unc_lookup(t, &r->res.strat, (unc_metric)m, &key) : NULL;
      unc_combine(d, key, v[0], v, n + 1, level, &iv->it[f]);
    }
    iv->on = true;
  }
  free(jobs);
  return rc;
}
