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

#include <stdio.h>

#include "runner/scenario.h"

struct run_result;

#define WHATIF_MAX (SCENARIO_MAX_FAILURES + 1)

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

void whatif_check(const struct run_result *r, whatif_report *out);

/* `run --baseline`: the same run without its what-ifs (no replica loss, no
 * traffic shape; everything else, --duration included, the same), compared.
 *
 * Recovery after a replica loss at T: windows of WHATIF_WINDOW_S seconds of
 * requests by arrival time, every WHATIF_STEP_S from T on; in each window
 * every objective given (the --slo list: TTFT, TPOT or E2EL, a percentile or
 * the mean; unfinished requests count as missed, as the SLO check counts
 * them), or without objectives the p99 TTFT against 1.1 x the baseline's. The
 * loss breaches when a window misses any objective; it has recovered at the
 * end of the first later window that meets them all again (recovery_s counts
 * from T). */
#define WHATIF_WINDOW_S 60.0
#define WHATIF_STEP_S 10.0
enum { WHATIF_MAX_OBJ = 8 };
typedef struct whatif_objective {
  int metric;           /* 0 TTFT, 1 TPOT, 2 E2EL (plan/slo.h's slo_metric order) */
  double pct;           /* percentile in (0, 100]; < 0 = mean */
  double limit_ms;
  char key[24];         /* "ttft_p99" */
} whatif_objective;
typedef struct whatif_compare {
  double limit_ms;      /* the TTFT p99 limit among the objectives (NAN when none is on p99 TTFT) */
  bool limit_from_slo;  /* the objectives are the --slo ones; else ttft_p99 at 1.1 x the baseline's */
  int n_obj;
  whatif_objective obj[WHATIF_MAX_OBJ];
  double worst_ms[WHATIF_MAX_OBJ]; /* each objective's worst window from the loss on (INFINITY: unanswered) */
  int breach_obj;       /* the objective the first breaching window missed first (-1: none) */
  bool has_loss;        /* the what-if run loses a replica while requests arrive */
  double loss_at_s;     /* the first exercised loss */
  bool step_event;      /* no loss: the event is a traffic step of an autoscaled run (--autoscale): the windows
                           measure how long the autoscaler takes to recover; has_loss and loss_at_s describe it */
  bool breached, recovered;
  double breach_at_s, recovery_s; /* first window over the limit; time from the loss to recovery */
  double worst_window_p99_ms;     /* the worst window's p99 TTFT from the loss on */
  double peak_waiting[2];         /* requests waiting (replica queues + client), baseline and what-if */
  double peak_kv[2];              /* busiest replica's KV usage, [0, 1] */
  char baseline_is[256];          /* what the baseline leaves out, in words ("the same run without ...") */
} whatif_compare;

/* n_obj == 0: no SLO given (p99 TTFT against 1.1 x the baseline's). */
void whatif_compare_runs(const struct run_result *base, const struct run_result *wi, const whatif_objective *obj,
                         int n_obj, whatif_compare *out);
/* The side-by-side table and the recovery, as text. */
void whatif_compare_text(const struct run_result *base, const struct run_result *wi, const whatif_compare *c,
                         FILE *f);

#endif
