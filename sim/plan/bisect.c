/* bisect.c: bracketing + geometric bisection for the largest passing x (see
 * bisect.h). Geometric midpoints suit rates: the relative error halves (in
 * log terms) at every probe, whatever the scale. */
#include "plan/bisect.h"

#include <math.h>
#include <string.h>

void bisect_opts_default(bisect_opts *o) {
  o->lo = 1e-3;
  o->hi = 1e4;
  o->start = 1;
  o->grow = 2;
  o->rel_tol = 0.02;
  o->max_probes = 24;
}

static int probe(bisect_result *r, bisect_fn fn, void *ctx, double x, bool *ok, sim_err *err) {
  int rc = fn(ctx, x, ok, err);
  if (rc) return rc;
  SIM_ASSERT(r->n_probes < BISECT_MAX_PROBES);
  r->probe_x[r->n_probes] = x;
  r->probe_ok[r->n_probes] = *ok;
  r->n_probes++;
  return 0;
}

int bisect_max(const bisect_opts *o, bisect_fn fn, void *ctx, bisect_result *r, sim_err *err) {
  memset(r, 0, sizeof *r);
  r->bad = INFINITY;
  if (!(o->lo > 0 && o->hi > o->lo && o->grow > 1 && o->rel_tol > 0 && o->max_probes >= 2 &&
        o->max_probes <= BISECT_MAX_PROBES))
    return sim_errf(err, SIM_EINPUT, "bisection: need 0 < lo < hi, grow > 1, rel_tol > 0, 2 <= max_probes <= %d",
                    BISECT_MAX_PROBES);
  double x = SIM_MIN(SIM_MAX(o->start, o->lo), o->hi);
  bool ok;
  int rc;
  if ((rc = probe(r, fn, ctx, x, &ok, err))) return rc;
  if (ok) {
    r->found = true;
    r->good = x;
    while (r->n_probes < o->max_probes) {
      if (x >= o->hi) {
        r->unbounded = true;
        r->converged = true;
        return 0;
      }
      x = SIM_MIN(x * o->grow, o->hi);
      if ((rc = probe(r, fn, ctx, x, &ok, err))) return rc;
      if (!ok) {
        r->bad = x;
        break;
      }
      r->good = x;
    }
  } else {
    r->bad = x;
    while (r->n_probes < o->max_probes) {
      if (x <= o->lo) {
        r->converged = true; /* nothing passes in range */
        return 0;
      }
      x = SIM_MAX(x / o->grow, o->lo);
      if ((rc = probe(r, fn, ctx, x, &ok, err))) return rc;
      if (ok) {
        r->found = true;
        r->good = x;
        break;
      }
      r->bad = x;
    }
  }
  if (!r->found || isinf(r->bad)) return 0; /* probe budget spent while bracketing */
  while (r->bad > r->good * (1 + o->rel_tol)) {
    if (r->n_probes >= o->max_probes) return 0;
    x = sqrt(r->good * r->bad);
    if ((rc = probe(r, fn, ctx, x, &ok, err))) return rc;
    if (ok) r->good = x;
    else r->bad = x;
  }
  r->converged = true;
  return 0;
}
