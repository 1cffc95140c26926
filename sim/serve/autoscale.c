/* autoscale.c: the HPA decision rule (autoscale.h: every step and its source) and the spec parser. */
#include "serve/autoscale.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* HPA's default scale-up policies (HPAScalingRules defaults): Percent 100 and Pods 4, each per 15 s, the larger. */
#define UP_PERIOD_NS 15000000000ull
#define UP_PODS 4u
#define UP_PERCENT 100.0

/* |1 - ratio| within the tolerance (HPA compares the same way; a tiny epsilon keeps 1.1 exactly within 0.1). */
static bool within(const autoscale_cfg *c, double ratio) { return fabs(1.0 - ratio) <= c->tolerance + 1e-12; }

uint32_t autoscale_raw(const autoscale_cfg *c, uint32_t ready, uint32_t starting, double sum) {
  uint32_t current = ready + starting;
  if (ready == 0) return current; /* no metrics at all */
  double ratio = sum / ready / c->target;
  if (starting == 0) return within(c, ratio) ? current : (uint32_t)ceil(ratio * ready - 1e-9);
  /* missing pods: the target on a scale-down, 0 on a scale-up */
  double fill = ratio < 1.0 ? c->target * starting : 0.0;
  if (ratio == 1.0) return current;
  double nr = (sum + fill) / current / c->target;
  if (within(c, nr) || (ratio < 1.0 && nr > 1.0) || (ratio > 1.0 && nr < 1.0)) return current;
  uint32_t n = (uint32_t)ceil(nr * current - 1e-9);
  if ((nr < 1.0 && n > current) || (nr > 1.0 && n < current)) return current;
  return n;
}

uint32_t autoscale_raw_fleet(const autoscale_cfg *c, uint32_t ready, uint32_t starting, double value) {
  uint32_t current = ready + starting;
  if (isnan(value)) return current;
  double ratio = value / c->target;
  return within(c, ratio) ? current : (uint32_t)ceil(ratio * ready - 1e-9);
}

void autoscaler_init(autoscaler *a, const autoscale_cfg *cfg) {
  memset(a, 0, sizeof *a);
  a->cfg = *cfg;
}

void autoscaler_deinit(autoscaler *a) {
  free(a->rec);
  a->rec = NULL;
  a->n = a->cap = 0;
}

uint32_t autoscaler_decide(autoscaler *a, sim_ns now, uint32_t ready, uint32_t starting, double sum) {
  const autoscale_cfg *c = &a->cfg;
  uint32_t current = ready + starting;
  uint32_t raw = c->metric == AS_TTFT_P90 ? autoscale_raw_fleet(c, ready, starting, sum) : autoscale_raw(c, ready, starting, sum);
  /* forget what every window has left behind (the rate limit looks back UP_PERIOD_NS) */
  double keep_s = fmax(fmax(c->up_window_s, c->down_window_s), (double)UP_PERIOD_NS / 1e9);
  sim_ns keep = sim_s_to_ns(keep_s), drop = 0;
  while (drop < a->n && a->rec[drop].t_ns + keep < now) drop++;
  if (drop) memmove(a->rec, a->rec + drop, (a->n - drop) * sizeof *a->rec), a->n -= drop;
  /* stabilization over this and the earlier raw recommendations in each window (HPA: timestamps after the
     cutoff now - window) */
  uint32_t up = raw, down = raw, added = 0;
  sim_ns upw = sim_s_to_ns(c->up_window_s), downw = sim_s_to_ns(c->down_window_s);
  for (size_t i = 0; i < a->n; i++) {
    const as_rec *r = &a->rec[i];
    if (r->t_ns + upw > now && r->raw < up) up = r->raw;
    if (r->t_ns + downw > now && r->raw > down) down = r->raw;
    if (r->t_ns + UP_PERIOD_NS > now) added += r->added;
  }
  uint32_t want = current;
  if (want < up) want = up;
  if (want > down) want = down;
  if (want > current && c->up_limit) { /* HPA's default scale-up policies, the larger */
    uint32_t start = current > added ? current - added : 0;
    uint32_t lim = (uint32_t)ceil(start * (1.0 + UP_PERCENT / 100.0));
    if (start + UP_PODS > lim) lim = start + UP_PODS;
    if (want > lim) want = lim < current ? current : lim;
  }
  if (want < c->min) want = c->min;
  if (want > c->max) want = c->max;
  SIM_GROW(a->rec, a->cap, a->n + 1);
  a->rec[a->n++] = (as_rec){now, raw, want > current ? want - current : 0};
  return want;
}

uint32_t planner_replicas(const autoscale_cfg *c, uint32_t current, double requests, double cap_rps) {
  if (!(cap_rps > 0) || !(requests >= 0)) return current;
  double need = ceil(requests / c->interval_s / cap_rps - 1e-9);
  if (need < c->min) return c->min;
  if (need > c->max) return c->max;
  return (uint32_t)need;
}
