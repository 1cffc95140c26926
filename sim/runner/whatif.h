/* whatif.h: whether each what-if of a finished run happened while requests
 * were still arriving. A replica loss, traffic step or ramp timed after the
 * last arrival changes nothing the metrics measure, so a report that lists it
 * as if it had run would pass an untested scenario: every output names such
 * an event "not exercised" (or, for a ramp cut short, "only partly
 * exercised", with the rate reached), and `run --strict-what-if` exits 2.
 *
 *   replica R lost at T   exercised when T < the last arrival (requests still
 *                         come in after the loss; the count is given)
 *   step at T             exercised when T < the last arrival
 *   ramp T0 -> T1         exercised when T1 <= the last arrival; partly when
 *                         T0 < last < T1 (the multiplier reached at the last
 *                         arrival is given); not when T0 >= the last arrival
 * Times are the run's simulated seconds (the clock the traffic shapes use). */
#ifndef SIM_WHATIF_H
#define SIM_WHATIF_H

#include "runner/runner.h"

#define WHATIF_MAX (CLUSTER_MAX_FAILURES + 1)

typedef struct whatif_note {
  bool exercised;      /* fully */
  bool partly;         /* a ramp the arrivals stopped inside */
  char event[128];     /* "replica 1 lost at 600 s", "traffic ramp x3 from 300 s to 900 s" */
  char text[400];      /* the event and its verdict, one sentence */
} whatif_note;

typedef struct whatif_report {
  whatif_note n[WHATIF_MAX];
  uint32_t count;
  uint32_t missed;     /* not (fully) exercised */
  double last_arrival_s, end_s;
} whatif_report;

void whatif_check(const run_ctx *r, whatif_report *out);

#endif
