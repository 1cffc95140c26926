/* whatif.c: was each what-if exercised (whatif.h)? */
#include "runner/whatif.h"

#include <stdio.h>
#include <string.h>

/* Arrivals strictly after t_s. */
static size_t arrivals_after(const trace *t, double t_s) {
  size_t n = 0;
  for (size_t i = t->n; i-- > 0 && (double)t->reqs[i].arrival_ns / 1e9 > t_s;) n++;
  return n;
}

void whatif_check(const run_ctx *r, whatif_report *out) {
  memset(out, 0, sizeof *out);
  const trace *t = &r->tr;
  double last = t->n ? (double)t->reqs[t->n - 1].arrival_ns / 1e9 : 0;
  out->last_arrival_s = last;
  out->end_s = r->sum.duration_s > last ? r->sum.duration_s : last;
  for (uint32_t i = 0; i < r->sc.n_failures && out->count < WHATIF_MAX; i++) {
    whatif_note *w = &out->n[out->count++];
    double at = r->sc.failures[i].at_s;
    char ev[sizeof w->event];
    snprintf(ev, sizeof ev, "replica %u lost at %g s", r->sc.failures[i].replica, at);
    memcpy(w->event, ev, sizeof ev);
    size_t after = arrivals_after(t, at);
    w->exercised = after > 0;
    if (w->exercised)
      snprintf(w->text, sizeof w->text, "%s (exercised: %zu of %zu requests arrived after it)", ev, after, t->n);
    else
      snprintf(w->text, sizeof w->text,
               "%s: NOT EXERCISED, the last request arrived at %.1f s and the run ended at %.1f s (extend the "
               "traffic with --duration, or move the event earlier)",
               ev, last, out->end_s);
  }
  const traffic_warp *tw = &r->sc.traffic;
  if (tw->kind != WARP_NONE && out->count < WHATIF_MAX) {
    whatif_note *w = &out->n[out->count++];
    char d[96];
    warp_describe(tw, d, sizeof d);
    char ev[sizeof w->event];
    snprintf(ev, sizeof ev, "%s", d);
    memcpy(w->event, ev, sizeof ev);
    if (last > tw->t1_s) {
      w->exercised = true;
      snprintf(w->text, sizeof w->text, "%s (exercised: %zu of %zu requests arrived after it reached x%g)", ev,
               arrivals_after(t, tw->t1_s), t->n, tw->factor);
    } else if (tw->kind == WARP_RAMP && last > tw->t0_s) {
      w->partly = true;
      snprintf(w->text, sizeof w->text,
               "%s: ONLY PARTLY EXERCISED, the last request arrived at %.1f s, when the rate had reached x%.2f of "
               "the x%g asked (extend the traffic with --duration)",
               ev, last, warp_multiplier(tw, last), tw->factor);
    } else {
      snprintf(w->text, sizeof w->text,
               "%s: NOT EXERCISED, the last request arrived at %.1f s (extend the traffic with --duration, or "
               "move the event earlier)",
               ev, last);
    }
  }
  for (uint32_t i = 0; i < out->count; i++)
    if (!out->n[i].exercised) out->missed++;
}
