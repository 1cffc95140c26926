/* warp.h: what-if traffic shapes as a time warp of a trace's arrivals.
 *
 * A traffic shape is a rate multiplier m(tau) >= 0 on the SIMULATED clock
 * tau (the clock of the run's timeline): a step (`--traffic-step T:X`: m = 1
 * before T, X from T on) or a ramp (`--traffic-ramp T0:T1:X`: m = 1 before
 * T0, rising linearly to X at T1, X after). An arrival at original trace time
 * t moves to tau(t) with
 *     d tau / d t = 1 / m(tau),   i.e.   t(tau) = integral_0^tau m(s) ds,
 * so the local arrival rate is m times the trace's own (the order of the
 * requests, their lengths and sessions are unchanged). Because m is defined
 * on the simulated clock, a step at T = 600 s shows at 600 s in the time
 * series, and a ramp from 600 s to 1200 s ends at 1200 s. (For a step the
 * two clocks agree up to T; for a ramp the original-clock times of its ends
 * are T0 and t(T1) = T0 + (T1 - T0)(1 + X) / 2.)
 *
 * Closed forms, with D = T1 - T0 and a = (X - 1) / (2 D):
 *   t <= T0:              tau = t
 *   T0 < t <= t(T1):      tau = T0 + u, u solving a u^2 + u = t - T0
 *                         (u = 2 (t - T0) / (1 + sqrt(1 + 4 a (t - T0))), stable for any a)
 *   t > t(T1):            tau = T1 + (t - t(T1)) / X
 * A step is the ramp with D = 0.
 *
 * Apply it after rate scaling (--rate-scale, --request-rate), so T is in the
 * clock the run shows. Plain value types, no heap. */
#ifndef SIM_WARP_H
#define SIM_WARP_H

#include "core/common.h"
#include "workload/trace.h"

typedef enum warp_kind { WARP_NONE = 0, WARP_STEP, WARP_RAMP } warp_kind;

typedef struct traffic_warp {
  warp_kind kind;
  double t0_s;   /* step time T, or ramp start T0, simulated seconds, >= 0 */
  double t1_s;   /* ramp end T1 (> T0); = t0_s for a step */
  double factor; /* X: rate multiplier reached (step: from T on; ramp: at T1 and after), > 0 */
} traffic_warp;

/* Rate multiplier at simulated time tau_s. */
double warp_multiplier(const traffic_warp *w, double tau_s);
/* Original trace time -> simulated time (monotone increasing). */
double warp_map_s(const traffic_warp *w, double t_s);
/* Simulated time -> original trace time (the inverse of warp_map_s). */
double warp_unmap_s(const traffic_warp *w, double tau_s);
/* Moves every arrival of t through warp_map_s (a no-op for WARP_NONE). */
void warp_apply(trace *t, const traffic_warp *w);

/* Parse "T:X" and "T0:T1:X" (seconds, factor); errors name `flag`. */
int warp_parse_step(const char *s, const char *flag, traffic_warp *out, sim_err *err);
int warp_parse_ramp(const char *s, const char *flag, traffic_warp *out, sim_err *err);
/* Checks ranges (used for scenario JSON too); `what` names the field. */
int warp_check(const traffic_warp *w, const char *what, sim_err *err);
/* "step x2 at 600 s" / "ramp x3 from 600 s to 1200 s" / "none". */
void warp_describe(const traffic_warp *w, char *buf, size_t n);

#endif
