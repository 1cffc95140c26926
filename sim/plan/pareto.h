/* pareto.h: the Pareto frontier of points with two objectives.
 * Point a dominates b when a is at least as good in both objectives and
 * strictly better in one; the frontier is the set of valid points no other
 * valid point dominates (equal points are all on it). O(n log n). */
#ifndef SIM_PARETO_H
#define SIM_PARETO_H

#include "core/common.h"

/* x_max / y_max: true = larger is better, false = smaller is better. Points
 * with valid[i] false (or a non-finite coordinate) are never on the frontier.
 * Fills on_front[0..n); returns how many are on it. */
size_t pareto_front(const double *x, const double *y, const bool *valid, size_t n, bool x_max, bool y_max,
                    bool *on_front);

#endif
