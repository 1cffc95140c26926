/* warp.c: traffic steps and ramps as a monotone time warp of arrivals (see
 * warp.h for the formulas). Invariant: warp_map_s is continuous and strictly
 * increasing, so sorted arrivals stay sorted and t = 0 stays at 0. */
#include "workload/warp.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Original-clock time at which the ramp ends: t(T1) = T0 + D (1 + X) / 2. */
static double t_end(const traffic_warp *w) { return w->t0_s + (w->t1_s - w->t0_s) * (1.0 + w->factor) / 2.0; }

double warp_multiplier(const traffic_warp *w, double tau) {
  if (w->kind == WARP_NONE || tau < w->t0_s) return 1.0;
  if (tau >= w->t1_s) return w->factor;
  return 1.0 + (w->factor - 1.0) * (tau - w->t0_s) / (w->t1_s - w->t0_s);
}

double warp_map_s(const traffic_warp *w, double t) {
  if (w->kind == WARP_NONE || t <= w->t0_s) return t;
  double te = t_end(w);
  if (t > te) return w->t1_s + (t - te) / w->factor;
  double d = w->t1_s - w->t0_s, x = t - w->t0_s;
  double a = (w->factor - 1.0) / (2.0 * d);
  double disc = 1.0 + 4.0 * a * x; /* >= factor^2 > 0 on this branch */
  if (disc < 0) disc = 0;
  return w->t0_s + 2.0 * x / (1.0 + sqrt(disc));
}

double warp_unmap_s(const traffic_warp *w, double tau) {
  if (w->kind == WARP_NONE || tau <= w->t0_s) return tau;
  if (tau >= w->t1_s) return t_end(w) + (tau - w->t1_s) * w->factor;
  double u = tau - w->t0_s, d = w->t1_s - w->t0_s;
  return w->t0_s + u + (w->factor - 1.0) * u * u / (2.0 * d);
}

void warp_apply(trace *t, const traffic_warp *w) {
  if (w->kind == WARP_NONE) return;
  sim_ns prev = 0;
  for (size_t i = 0; i < t->n; i++) {
    double tau = warp_map_s(w, (double)t->reqs[i].arrival_ns / 1e9);
    sim_ns a = sim_s_to_ns(tau);
    if (a < prev) a = prev; /* rounding must not unsort ties */
    t->reqs[i].arrival_ns = prev = a;
  }
}

int warp_check(const traffic_warp *w, const char *what, sim_err *err) {
  if (w->kind == WARP_NONE) return 0;
  if (!(w->t0_s >= 0) || !isfinite(w->t0_s) || w->t0_s > 1e9)
    return sim_errf(err, SIM_EINPUT, "%s: start time must be a number of seconds in [0, 1e9], got %g", what, w->t0_s);
  if (!(w->factor > 0) || !isfinite(w->factor) || w->factor > 1e6)
    return sim_errf(err, SIM_EINPUT, "%s: rate factor must be > 0 (and at most 1e6), got %g", what, w->factor);
  if (w->kind == WARP_RAMP && (!(w->t1_s > w->t0_s) || !isfinite(w->t1_s) || w->t1_s > 1e9))
    return sim_errf(err, SIM_EINPUT, "%s: ramp end must be after its start (T0 < T1 <= 1e9), got %g:%g", what,
                    w->t0_s, w->t1_s);
  if (w->kind == WARP_STEP && w->t1_s != w->t0_s)
    return sim_errf(err, SIM_EINPUT, "%s: a step has one time", what);
  return 0;
}

/* Splits s at ':' into at most `max` numbers; returns how many, or -1. */
static int split_nums(const char *s, double *v, int max) {
  char buf[128];
  if (strlen(s) >= sizeof buf) return -1;
  snprintf(buf, sizeof buf, "%s", s);
  int n = 0;
  char *p = buf;
  for (;;) {
    char *c = strchr(p, ':');
    if (c) *c = 0;
    if (n >= max || !sim_parse_double(p, &v[n])) return -1;
    n++;
    if (!c) break;
    p = c + 1;
  }
  return n;
}

int warp_parse_step(const char *s, const char *flag, traffic_warp *out, sim_err *err) {
  double v[3];
  if (split_nums(s, v, 3) != 2)
    return sim_errf(err, SIM_EINPUT, "%s: expected T:X (from T seconds on, X times the arrival rate), got '%s'", flag,
                    s);
  traffic_warp w = {WARP_STEP, v[0], v[0], v[1]};
  int rc = warp_check(&w, flag, err);
  if (!rc) *out = w;
  return rc;
}

int warp_parse_ramp(const char *s, const char *flag, traffic_warp *out, sim_err *err) {
  double v[4];
  if (split_nums(s, v, 4) != 3)
    return sim_errf(err, SIM_EINPUT,
                    "%s: expected T0:T1:X (rate multiplier ramps from 1 at T0 to X at T1 seconds), got '%s'", flag, s);
  traffic_warp w = {WARP_RAMP, v[0], v[1], v[2]};
  int rc = warp_check(&w, flag, err);
  if (!rc) *out = w;
  return rc;
}

void warp_describe(const traffic_warp *w, char *buf, size_t n) {
  if (w->kind == WARP_STEP) snprintf(buf, n, "traffic step x%g at %g s", w->factor, w->t0_s);
  else if (w->kind == WARP_RAMP) snprintf(buf, n, "traffic ramp to x%g from %g s to %g s", w->factor, w->t0_s, w->t1_s);
  else snprintf(buf, n, "none");
}
