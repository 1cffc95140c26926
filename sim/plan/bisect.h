/* bisect.h: the largest x for which a monotone predicate holds, by bracketing
 * then bisection. Used by `capacity` (x = request rate per replica, ok = the
 * SLOs are met) and tested on synthetic functions.
 *
 * Assumption: ok(x) is true below some boundary x* and false above it. A
 * simulation is only nearly monotone (the trace's bursts fall differently at
 * each rate), so the answer is defined by what was observed: `good` passed,
 * `bad` failed, and no probe between them was made.
 *
 * Algorithm:
 *  1. Bracket from `start`: if ok(start), multiply by `grow` until a probe
 *     fails or `hi` is reached (then: unbounded, good = hi); else divide by
 *     `grow` until a probe passes or `lo` is reached (then: not found).
 *  2. Bisect [good, bad] at the geometric midpoint sqrt(good x bad) until
 *     bad <= good x (1 + rel_tol), or max_probes probes were spent in all.
 * Result: good (largest passing probe), bad (smallest failing probe above it),
 * so x* lies in [good, bad) when ok is monotone, and when it stopped by
 * tolerance, good >= x* / (1 + rel_tol): the answer errs low, never high.
 * Probes are recorded in order (up to BISECT_MAX_PROBES). */
#ifndef SIM_BISECT_H
#define SIM_BISECT_H

#include "core/common.h"

enum { BISECT_MAX_PROBES = 64 };

/* Evaluates the predicate at x (> 0): *ok = true when it holds. A non-zero
 * return aborts the search with that error. */
typedef int (*bisect_fn)(void *ctx, double x, bool *ok, sim_err *err);

typedef struct bisect_opts {
  double lo, hi;     /* search range, 0 < lo < hi */
  double start;      /* first probe, clamped into [lo, hi] */
  double grow;       /* bracketing factor, > 1 (default 2) */
  double rel_tol;    /* stop when bad <= good x (1 + rel_tol), > 0 (default 0.02) */
  int max_probes;    /* bound on predicate calls, <= BISECT_MAX_PROBES (default 24) */
} bisect_opts;

typedef struct bisect_result {
  bool found;        /* some probe passed */
  bool unbounded;    /* even hi passed */
  bool converged;    /* stopped by tolerance (not by max_probes) */
  double good;       /* largest passing x (0 when !found) */
  double bad;        /* smallest failing x above good (INFINITY when unbounded) */
  int n_probes;
  double probe_x[BISECT_MAX_PROBES];
  bool probe_ok[BISECT_MAX_PROBES];
} bisect_result;

void bisect_opts_default(bisect_opts *o);
int bisect_max(const bisect_opts *o, bisect_fn fn, void *ctx, bisect_result *out, sim_err *err);

#endif
