/* pareto.c: frontier by one sort and one sweep: visit points from the best x
 * down (ties: best y first); a point is on the frontier when its y beats every
 * point of strictly better x and equals the best y among its own x. */
#include "plan/pareto.h"

#include <math.h>
#include <stdlib.h>

typedef struct pp {
  double x, y; /* both oriented so that larger is better */
  size_t i;
} pp;

static int cmp_pp(const void *a, const void *b) {
  const pp *p = a, *q = b;
  if (p->x != q->x) return p->x > q->x ? -1 : 1;
  if (p->y != q->y) return p->y > q->y ? -1 : 1;
  return p->i < q->i ? -1 : p->i > q->i;
}

size_t pareto_front(const double *x, const double *y, const bool *valid, size_t n, bool x_max, bool y_max,
                    bool *on_front) {
  pp *v = sim_malloc((n + 1) * sizeof *v);
  size_t m = 0;
  for (size_t i = 0; i < n; i++) {
    on_front[i] = false;
    if ((valid && !valid[i]) || !isfinite(x[i]) || !isfinite(y[i])) continue;
    v[m++] = (pp){x_max ? x[i] : -x[i], y_max ? y[i] : -y[i], i};
  }
  qsort(v, m, sizeof *v, cmp_pp);
  size_t count = 0;
  double best_y = -INFINITY; /* best y among points of strictly larger x */
  for (size_t a = 0; a < m;) {
    size_t b = a;
    while (b < m && v[b].x == v[a].x) b++;
    double group_max = v[a].y; /* sorted: first of the group has the best y */
    for (size_t k = a; k < b; k++)
      if (v[k].y == group_max && v[k].y > best_y) {
        on_front[v[k].i] = true;
        count++;
      }
    if (group_max > best_y) best_y = group_max;
    a = b;
  }
  free(v);
  return count;
}
