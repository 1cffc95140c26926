/* whatif.c: was each what-if exercised (whatif.h)? */
#include "runner/whatif.h"

#include "runner/result.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Arrivals strictly after t_s. */
/* Requests that arrived after t_s (records in arrival order). */
static size_t arrivals_after(const run_result *res, double t_s) {
  size_t n = 0;
  for (size_t i = res->n_reqs; i-- > 0 && (double)res->reqs[i].arrival_ns / 1e9 > t_s;) n++;
  return n;
}

void whatif_check(const run_result *r, whatif_report *out) {
  memset(out, 0, sizeof *out);
  const run_result *t = r;
  double last = t->n_reqs ? (double)t->reqs[t->n_reqs - 1].arrival_ns / 1e9 : 0;
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
      snprintf(w->text, sizeof w->text, "%s (exercised: %zu of %zu requests arrived after it)", ev, after, t->n_reqs);
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
               arrivals_after(t, tw->t1_s), t->n_reqs, tw->factor);
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

/* ---- baseline comparison ---------------------------------------------------------------- */

/* p99 TTFT (ms) of the requests that arrived in [s0, s1); one without a
 * first token by the end counts as +inf (missed); NAN when none arrived. */
static double window_p99(const run_result *r, double s0, double s1, double *buf) {
  size_t n = 0;
  for (size_t i = 0; i < r->n_reqs; i++) {
    const run_record *q = &r->reqs[i];
    double a = (double)q->arrival_ns / 1e9;
    if (a < s0 || a >= s1) continue;
    if (q->outcome == REQ_REJECTED) continue; /* never runnable: not a latency */
    buf[n++] = q->generated ? run_record_ttft_ms(q) : INFINITY;
  }
  if (!n) return NAN;
  sim_sort_doubles(buf, n);
  size_t hi = (size_t)ceil(0.99 * (double)(n - 1));
  if (isinf(buf[hi])) return INFINITY; /* the percentile falls among unanswered requests */
  return metrics_percentile_sorted(buf, n, 99);
}

static void peaks(const run_result *r, double *wait, double *kv) {
  *wait = *kv = 0;
  const metrics_rec *m = &r->m;
  for (size_t i = 0; i < m->n_ts; i++) {
    double w = (double)m->ts[i].waiting + m->ts[i].client_queue;
    if (w > *wait) *wait = w;
    if (m->ts[i].kv_usage_max > *kv) *kv = m->ts[i].kv_usage_max;
  }
}

void whatif_compare_runs(const run_result *base, const run_result *wi, double ttft_limit_ms, whatif_compare *out) {
  memset(out, 0, sizeof *out);
  out->limit_from_slo = ttft_limit_ms > 0;
  out->limit_ms = ttft_limit_ms > 0 ? ttft_limit_ms : 1.1 * base->sum.ttft_ms.p99;
  peaks(base, &out->peak_waiting[0], &out->peak_kv[0]);
  peaks(wi, &out->peak_waiting[1], &out->peak_kv[1]);
  whatif_report wr;
  whatif_check(wi, &wr);
  for (uint32_t i = 0; i < wi->sc.n_failures; i++)
    if (wr.n[i].exercised && (!out->has_loss || wi->sc.failures[i].at_s < out->loss_at_s))
      out->has_loss = true, out->loss_at_s = wi->sc.failures[i].at_s;
  if (!out->has_loss) return;
  double *buf = sim_malloc((wi->n_reqs + 1) * sizeof *buf), end = wr.last_arrival_s;
  for (double s = out->loss_at_s; s <= end; s += WHATIF_STEP_S) {
    double p = window_p99(wi, s, s + WHATIF_WINDOW_S, buf);
    if (isnan(p)) continue;
    if (p > out->worst_window_p99_ms) out->worst_window_p99_ms = p;
    if (!out->breached && p > out->limit_ms) out->breached = true, out->breach_at_s = s;
    else if (out->breached && !out->recovered && p <= out->limit_ms) {
      out->recovered = true;
      out->recovery_s = s + WHATIF_WINDOW_S - out->loss_at_s;
    }
  }
  free(buf);
}

/* "1234 ms", or "unanswered" for a window whose p99 has no first token. */
static const char *ms_text(double v, char *buf, size_t n) {
  if (isinf(v)) snprintf(buf, n, "requests unanswered");
  else snprintf(buf, n, "%.0f ms", v);
  return buf;
}

static void row(FILE *f, const char *label, double a, double b, const char *unit) {
  double d = a > 0 ? 100.0 * (b - a) / a : NAN;
  if (isnan(d)) fprintf(f, "  %-30s %12.2f %12.2f %10s  %s\n", label, a, b, "", unit);
  else fprintf(f, "  %-30s %12.2f %12.2f %+9.1f%%  %s\n", label, a, b, d, unit);
}

void whatif_compare_text(const run_result *base, const run_result *wi, const whatif_compare *c, FILE *f) {
  const metrics_summary *a = &base->sum, *b = &wi->sum;
  fprintf(f, "================ What-if vs baseline ================\n");
  fprintf(f, "  baseline: the same run without the replica losses and traffic shapes\n");
  fprintf(f, "  %-30s %12s %12s %10s\n", "", "baseline", "what-if", "change");
  row(f, "requests completed", (double)a->completed, (double)b->completed, "");
  row(f, "p50 TTFT", a->ttft_ms.median, b->ttft_ms.median, "ms");
  row(f, "p99 TTFT", a->ttft_ms.p99, b->ttft_ms.p99, "ms");
  row(f, "p50 TPOT", a->tpot_ms.median, b->tpot_ms.median, "ms");
  row(f, "p99 TPOT", a->tpot_ms.p99, b->tpot_ms.p99, "ms");
  row(f, "output throughput", a->output_throughput, b->output_throughput, "tok/s");
  if (a->has_goodput || b->has_goodput) row(f, "request goodput", a->request_goodput, b->request_goodput, "req/s");
  row(f, "mean requests waiting", a->mean_waiting, b->mean_waiting, "");
  row(f, "peak requests waiting", c->peak_waiting[0], c->peak_waiting[1], "");
  row(f, "peak KV usage (busiest)", 100 * c->peak_kv[0], 100 * c->peak_kv[1], "%");
  if (c->has_loss) {
    fprintf(f, "  replica loss at %g s, p99 TTFT of %g-s windows of requests against %.0f ms (%s):\n", c->loss_at_s,
            WHATIF_WINDOW_S, c->limit_ms, c->limit_from_slo ? "the --slo ttft_p99" : "1.1 x the baseline's p99");
    char w[64];
    ms_text(c->worst_window_p99_ms, w, sizeof w);
    if (!c->breached)
      fprintf(f, "    no window over the limit after the loss (worst %s): no recovery needed\n", w);
    else if (c->recovered)
      fprintf(f, "    over the limit from the window at %g s (worst %s); recovered %.0f s after the loss\n",
              c->breach_at_s, w, c->recovery_s);
    else
      fprintf(f, "    over the limit from the window at %g s (worst %s); NOT RECOVERED before the last arrival\n",
              c->breach_at_s, w);
  }
  fprintf(f, "=====================================================\n");
}
