/* planner_cap.c: one replica's capacity by simulation, for the planner (planner_cap.h). */
#include "runner/planner_cap.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runner/runner.h"

planner_cap *planner_cap_new(const scenario *sc) {
  planner_cap *p = sim_calloc(1, sizeof *p);
  p->ttft_ms = sc->autoscale.ttft_s * 1e3;
  p->itl_ms = sc->autoscale.itl_s * 1e3;
  scenario *b = &p->base;
  *b = *sc;
  b->trace_path[0] = 0;
  b->window_start_s = 0;
  b->window_end_s = -1;
  b->rate_scale = b->prompt_scale = b->output_scale = 1;
  b->target_rate = 0;
  b->max_requests = 0;
  b->duration_s = 0;
  b->max_concurrency = 0;
  b->n_failures = 0;
  memset(&b->traffic, 0, sizeof b->traffic);
  autoscale_cfg_init(&b->autoscale);
  b->goodput.ttft_ms = b->goodput.tpot_ms = b->goodput.e2el_ms = -1;
  b->sample_interval_s = -1;
  b->time_limit_s = 0;
  b->deploy.replicas = 1;
  b->gen.num_prompts = PLANNER_CAP_PROMPTS;
  b->gen.burstiness = 1;
  b->gen.seed = sc->seed;
  return p;
}

void planner_cap_free(planner_cap *p) { free(p); }

/* The length bucket's centre: 2^(k/8) for the nearest k, rounded, at least 1. */
static uint32_t bucket(double len) {
  if (!(len >= 1)) return 1;
  double v = round(exp2(round(8.0 * log2(len)) / 8.0));
  return v < 1 ? 1 : v > 1e7 ? 10000000u : (uint32_t)v;
}

/* One probe: 1 meets the targets, 0 misses, -1 could not run (p->error says why). */
static int meets(planner_cap *p, uint32_t isl, uint32_t osl, double rate) {
  scenario s = p->base;
  s.gen.request_rate = rate;
  s.gen.input = (len_dist){.kind = LEN_UNIFORM_RATIO, .len = isl};
  s.gen.output = (len_dist){.kind = LEN_UNIFORM_RATIO, .len = osl};
  run_ctx r;
  sim_err err = {0, ""};
  int rc = runner_prepare(&r, &s, &err);
  if (!rc) rc = runner_execute(&r, NULL, &err);
  int ok = -1;
  if (!rc) {
    const metrics_summary *m = &r.res.sum;
    ok = m->completed == m->total && m->ttft_ms.mean <= p->ttft_ms && (m->itl_ms.n == 0 || m->itl_ms.mean <= p->itl_ms);
  } else if (!p->error[0]) {
    snprintf(p->error, sizeof p->error, "%.500s", err.msg);
  }
  runner_free(&r);
  p->probes++;
  return ok;
}

/* The search of planner_cap.h for one bucket: the highest rate found to meet, 0 if none, NAN on a failed probe. */
static double search(planner_cap *p, uint32_t isl, uint32_t osl, uint32_t *probes) {
  uint64_t before = p->probes;
  double lo = 0, hi = 0, r = 1;
  int ok = meets(p, isl, osl, r);
  if (ok < 0) return NAN;
  if (ok) { /* double to the first miss */
    for (lo = r; !hi && r < 65536;) {
      r *= 2;
      if ((ok = meets(p, isl, osl, r)) < 0) return NAN;
      if (ok) lo = r;
      else hi = r;
    }
    if (!hi) return lo; /* meets at every rate tried */
  } else { /* halve to the first meet */
    for (hi = r; !lo && r > 1.0 / 1024;) {
      r /= 2;
      if ((ok = meets(p, isl, osl, r)) < 0) return NAN;
      if (ok) lo = r;
      else hi = r;
    }
    if (!lo) return 0;
  }
  for (int k = 0; k < 7; k++) {
    double mid = sqrt(lo * hi);
    if ((ok = meets(p, isl, osl, mid)) < 0) return NAN;
    if (ok) lo = mid;
    else hi = mid;
  }
  *probes = (uint32_t)(p->probes - before);
  return lo;
}

double planner_cap_rps(void *ctx, double isl, double osl) {
  planner_cap *p = ctx;
  uint32_t bi = bucket(isl), bo = bucket(osl);
  for (uint32_t k = 0; k < p->n; k++)
    if (p->e[k].isl == bi && p->e[k].osl == bo) return p->e[k].rps;
  uint32_t probes = 0;
  double rps = search(p, bi, bo, &probes);
  if (isnan(rps)) return NAN;
  if (p->n < PLANNER_CAP_MAX) p->e[p->n++] = (planner_cap_entry){bi, bo, rps, probes};
  return rps;
}
