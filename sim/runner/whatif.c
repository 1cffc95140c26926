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

/* Objective o's statistic (ms) over the requests that arrived in [s0, s1), as the SLO check counts them: one
 * unfinished counts as +inf (TTFT: unless its first token came), TPOT skips one-token outputs, rejected requests
 * are not latencies; NAN when none counts. */
static double window_stat(const run_result *r, const whatif_objective *o, double s0, double s1, double *buf) {
  size_t n = 0;
  double sum = 0;
  for (size_t i = 0; i < r->n_reqs; i++) {
    const run_record *q = &r->reqs[i];
    double a = (double)q->arrival_ns / 1e9;
    if (a < s0 || a >= s1) continue;
    if (q->outcome == REQ_REJECTED) continue; /* never runnable: not a latency */
    bool done = q->outcome == REQ_FINISHED;
    double v;
    if (o->metric == 0) v = q->generated ? run_record_ttft_ms(q) : INFINITY;
    else if (o->metric == 1) {
      if (q->output_tokens < 2) continue;
      v = done && q->generated > 1 ? run_record_tpot_ms(q) : INFINITY;
    } else v = done ? run_record_e2el_ms(q) : INFINITY;
    buf[n++] = v;
    sum += v;
  }
  if (!n) return NAN;
  if (o->pct < 0) return sum / (double)n;
  sim_sort_doubles(buf, n);
  size_t hi = (size_t)ceil(o->pct / 100.0 * (double)(n - 1));
  if (isinf(buf[hi])) return INFINITY; /* the percentile falls among unanswered requests */
  return metrics_percentile_sorted(buf, n, o->pct);
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

/* The objectives the windows are judged on: the --slo list, or p99 TTFT at 1.1 x the baseline's. */
static void objectives(const run_result *base, const whatif_objective *obj, int n_obj, whatif_compare *out) {
  out->limit_from_slo = n_obj > 0;
  out->n_obj = n_obj > WHATIF_MAX_OBJ ? WHATIF_MAX_OBJ : n_obj;
  for (int k = 0; k < out->n_obj; k++) out->obj[k] = obj[k];
  if (!out->n_obj) {
    out->n_obj = 1;
    out->obj[0] = (whatif_objective){0, 99, 1.1 * base->sum.ttft_ms.p99, "ttft_p99"};
  }
  out->limit_ms = NAN;
  for (int k = 0; k < out->n_obj; k++)
    if (out->obj[k].metric == 0 && out->obj[k].pct == 99 && isnan(out->limit_ms)) out->limit_ms = out->obj[k].limit_ms;
}

void whatif_compare_runs(const run_result *base, const run_result *wi, const whatif_objective *obj, int n_obj,
                         whatif_compare *out) {
  memset(out, 0, sizeof *out);
  objectives(base, obj, n_obj, out);
  out->breach_obj = -1;
  peaks(base, &out->peak_waiting[0], &out->peak_kv[0]);
  peaks(wi, &out->peak_waiting[1], &out->peak_kv[1]);
  whatif_report wr;
  whatif_check(wi, &wr);
  for (uint32_t i = 0; i < wi->sc.n_failures; i++)
    if (wr.n[i].exercised && (!out->has_loss || wi->sc.failures[i].at_s < out->loss_at_s))
      out->has_loss = true, out->loss_at_s = wi->sc.failures[i].at_s;
  if (!out->has_loss && wi->scale.on && wi->sc.traffic.kind == WARP_STEP && wi->sc.n_failures < wr.count &&
      wr.n[wi->sc.n_failures].exercised) /* the autoscaler's recovery from a traffic step */
    out->has_loss = out->step_event = true, out->loss_at_s = wi->sc.traffic.t0_s;
  if (!out->has_loss) return;
  whatif_objective p99 = {0, 99, 0, "ttft_p99"};
  double *buf = sim_malloc((wi->n_reqs + 1) * sizeof *buf), end = wr.last_arrival_s;
  for (double s = out->loss_at_s; s <= end; s += WHATIF_STEP_S) {
    double t = window_stat(wi, &p99, s, s + WHATIF_WINDOW_S, buf);
    if (isnan(t)) continue;
    if (t > out->worst_window_p99_ms) out->worst_window_p99_ms = t;
    int miss = -1;
    for (int k = 0; k < out->n_obj; k++) {
      double v = window_stat(wi, &out->obj[k], s, s + WHATIF_WINDOW_S, buf);
      if (isnan(v)) continue;
      if (v > out->worst_ms[k]) out->worst_ms[k] = v;
      if (v > out->obj[k].limit_ms && miss < 0) miss = k;
    }
    if (!out->breached && miss >= 0) out->breached = true, out->breach_at_s = s, out->breach_obj = miss;
    else if (out->breached && !out->recovered && miss < 0) {
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
  fprintf(f, "  baseline: %s\n", c->baseline_is);
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
    char objs[512] = "", worst[512] = "", w[64];
    for (int k = 0; k < c->n_obj; k++) {
      size_t n = strlen(objs), m = strlen(worst);
      snprintf(objs + n, sizeof objs - n, "%s%s <= %.0f ms", k ? ", " : "", c->obj[k].key, c->obj[k].limit_ms);
      snprintf(worst + m, sizeof worst - m, "%s%s %s", k ? ", " : "", c->obj[k].key,
               ms_text(c->worst_ms[k], w, sizeof w));
    }
    const char *ev = c->step_event ? "the event" : "the loss";
    fprintf(f, "  %s at %g s, %g-s windows of requests against %s (%s):\n",
            c->step_event ? "traffic step (autoscaled)" : "replica loss", c->loss_at_s, WHATIF_WINDOW_S,
            objs, c->limit_from_slo ? "every --slo objective" : "1.1 x the baseline's p99 TTFT");
    if (!c->breached)
      fprintf(f, "    no window missed them after %s (worst %s): no recovery needed\n", ev, worst);
    else if (c->recovered)
      fprintf(f, "    %s missed from the window at %g s (worst %s); recovered (every objective met) %.0f s after "
                 "%s\n",
              c->obj[c->breach_obj].key, c->breach_at_s, worst, c->recovery_s, ev);
    else
      fprintf(f, "    %s missed from the window at %g s (worst %s); NOT RECOVERED before the last arrival\n",
              c->obj[c->breach_obj].key, c->breach_at_s, worst);
  }
  fprintf(f, "=====================================================\n");
}
