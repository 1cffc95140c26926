/* test_plan_bisect.c: the bisection routine on synthetic monotone functions
 * (brackets from either side, stops within tolerance, bounded probes, the
 * edge cases), and the Pareto frontier on hand-made points. */
#include <criterion/criterion.h>
#include <math.h>

#include "plan/bisect.h"
#include "plan/pareto.h"

typedef struct step_fn {
  double boundary; /* ok iff x <= boundary */
  int calls;
  int fail_at;     /* return an error on this call (0 = never) */
} step_fn;

static int below(void *ctx, double x, bool *ok, sim_err *err) {
  step_fn *s = ctx;
  s->calls++;
  if (s->fail_at && s->calls == s->fail_at) return sim_errf(err, SIM_EINPUT, "probe failed at %g", x);
  *ok = x <= s->boundary;
  return 0;
}

static void check_result(const bisect_result *r, double boundary, double tol) {
  cr_assert(r->found);
  cr_assert(r->converged);
  cr_assert_leq(r->good, boundary, "good %g must pass (boundary %g)", r->good, boundary);
  cr_assert_gt(r->bad, boundary, "bad %g must fail", r->bad);
  cr_assert_leq(r->bad, r->good * (1 + tol) * (1 + 1e-12), "stops within tolerance: %g vs %g", r->bad, r->good);
  /* monotone: every passing probe is below every failing probe */
  for (int i = 0; i < r->n_probes; i++)
    for (int j = 0; j < r->n_probes; j++)
      if (r->probe_ok[i] && !r->probe_ok[j]) cr_assert_lt(r->probe_x[i], r->probe_x[j]);
  cr_assert_float_eq(r->good, boundary, boundary * tol, "within tolerance of the true boundary");
}

Test(bisect, from_below_and_above) {
  const double bounds[] = {3.7, 0.05, 123.4, 1.0, 999.0};
  const double starts[] = {1, 0.01, 5000, 1, 0.5};
  for (size_t k = 0; k < sizeof bounds / sizeof bounds[0]; k++) {
    bisect_opts o;
    bisect_opts_default(&o);
    o.start = starts[k];
    step_fn s = {bounds[k], 0, 0};
    bisect_result r;
    sim_err err;
    cr_assert_eq(bisect_max(&o, below, &s, &r, &err), 0);
    check_result(&r, bounds[k], o.rel_tol);
    cr_assert_eq(r.n_probes, s.calls);
    cr_assert_leq(r.n_probes, o.max_probes);
  }
}

Test(bisect, tighter_tolerance_takes_more_probes) {
  bisect_opts o;
  bisect_opts_default(&o);
  o.start = 1;
  step_fn a = {7.3, 0, 0}, b = {7.3, 0, 0};
  bisect_result ra, rb;
  sim_err err;
  o.rel_tol = 0.1;
  cr_assert_eq(bisect_max(&o, below, &a, &ra, &err), 0);
  check_result(&ra, 7.3, 0.1);
  o.rel_tol = 0.001;
  o.max_probes = 40;
  cr_assert_eq(bisect_max(&o, below, &b, &rb, &err), 0);
  check_result(&rb, 7.3, 0.001);
  cr_assert_gt(rb.n_probes, ra.n_probes);
  /* geometric bisection: from the bracket [4, 8] to 0.1% takes about log2(ln 2 / ln 1.001) = 9 halvings */
  cr_assert_leq(rb.n_probes, 3 + 12);
}

Test(bisect, nothing_passes_and_everything_passes) {
  bisect_opts o;
  bisect_opts_default(&o);
  o.lo = 0.01;
  o.hi = 100;
  o.start = 1;
  step_fn none = {0.001, 0, 0}, all = {1e9, 0, 0};
  bisect_result r;
  sim_err err;
  cr_assert_eq(bisect_max(&o, below, &none, &r, &err), 0);
  cr_assert(!r.found);
  cr_assert_float_eq(r.bad, 0.01, 1e-12, "walked down to lo");
  cr_assert_eq(bisect_max(&o, below, &all, &r, &err), 0);
  cr_assert(r.found && r.unbounded);
  cr_assert_float_eq(r.good, 100, 1e-12);
  cr_assert(isinf(r.bad));
}

Test(bisect, probe_budget_is_a_hard_bound) {
  bisect_opts o;
  bisect_opts_default(&o);
  o.start = 1e-3;
  o.lo = 1e-3;
  o.max_probes = 5;
  step_fn s = {500, 0, 0};
  bisect_result r;
  sim_err err;
  cr_assert_eq(bisect_max(&o, below, &s, &r, &err), 0);
  cr_assert_eq(s.calls, 5);
  cr_assert(r.found && !r.converged);
  cr_assert_leq(r.good, 500);
}

Test(bisect, errors_propagate_and_bad_options_are_refused) {
  bisect_opts o;
  bisect_opts_default(&o);
  step_fn s = {5, 0, 3};
  bisect_result r;
  sim_err err;
  cr_assert_eq(bisect_max(&o, below, &s, &r, &err), SIM_EINPUT);
  cr_assert(strstr(err.msg, "probe failed"));
  bisect_opts bad = o;
  bad.rel_tol = 0;
  cr_assert_eq(bisect_max(&bad, below, &s, &r, &err), SIM_EINPUT);
  bad = o;
  bad.lo = 10, bad.hi = 1;
  cr_assert_eq(bisect_max(&bad, below, &s, &r, &err), SIM_EINPUT);
  bad = o;
  bad.max_probes = BISECT_MAX_PROBES + 1;
  cr_assert_eq(bisect_max(&bad, below, &s, &r, &err), SIM_EINPUT);
}

/* ---- Pareto ---------------------------------------------------------------------- */

Test(pareto, hand_example_max_max) {
  /* (1,5) (2,4) (3,3) on the front; (2,2) dominated by (2,4); (1,1) dominated; (3,3) twice: both on it */
  double x[] = {1, 2, 3, 2, 1, 3, 0.5};
  double y[] = {5, 4, 3, 2, 1, 3, 5};
  bool on[7];
  size_t n = pareto_front(x, y, NULL, 7, true, true, on);
  bool want[] = {true, true, true, false, false, true, false};
  for (int i = 0; i < 7; i++) cr_assert_eq(on[i], want[i], "point %d", i);
  cr_assert_eq(n, 4);
}

Test(pareto, max_min_and_invalid_points) {
  /* throughput (max) vs latency (min) */
  double tput[] = {100, 200, 300, 250, 400};
  double lat[] = {50, 60, 200, 300, NAN};
  bool valid[] = {true, true, true, true, true};
  bool on[5];
  size_t n = pareto_front(tput, lat, valid, 5, true, false, on);
  cr_assert(on[0] && on[1] && on[2]);
  cr_assert(!on[3], "250 at 300 ms is beaten by 300 at 200 ms");
  cr_assert(!on[4], "NaN is never on the front");
  cr_assert_eq(n, 3);
  valid[2] = false;
  n = pareto_front(tput, lat, valid, 5, true, false, on);
  cr_assert(!on[2] && on[3], "with 300 invalid, 250 is on the front");
  cr_assert_eq(n, 3);
}

Test(pareto, brute_force_agrees) {
  enum { N = 300 };
  double x[N], y[N];
  bool on[N];
  uint64_t s = 12345;
  for (int i = 0; i < N; i++) {
    s = s * 6364136223846793005ull + 1442695040888963407ull;
    x[i] = (double)(s >> 40 & 63);
    s = s * 6364136223846793005ull + 1442695040888963407ull;
    y[i] = (double)(s >> 40 & 63);
  }
  pareto_front(x, y, NULL, N, true, false, on);
  for (int i = 0; i < N; i++) {
    bool dominated = false;
    for (int j = 0; j < N && !dominated; j++)
      dominated = x[j] >= x[i] && y[j] <= y[i] && (x[j] > x[i] || y[j] < y[i]);
    cr_assert_eq(on[i], !dominated, "point %d (%g, %g)", i, x[i], y[i]);
  }
}
