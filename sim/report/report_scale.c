/* report_scale.c: an autoscaled run's fleet in the text summary, the JSON (servesim.autoscale) and the
 * time-series CSV's extra columns (runner/scaling.h: what each figure is). Nothing is written for a run without
 * --autoscale, so those outputs stay as they were. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "report/report.h"
#include "report/svg.h"

/* mode=planner: the capacities the planner used. */
static void planner_text(const run_scale *s, FILE *f) {
  if (!s->n_caps && !s->cap_error[0] && !s->cap_probes) return;
  fprintf(f, "  one replica's capacity at the planner's targets (%llu simulations of %d requests):",
          (unsigned long long)s->cap_probes, PLANNER_CAP_PROMPTS);
  for (uint32_t k = 0; k < s->n_caps && k < 8; k++)
    fprintf(f, "%s%u/%u tokens %.3g req/s", k ? ", " : " ", s->caps[k].isl, s->caps[k].osl, s->caps[k].rps);
  fprintf(f, "%s\n", s->n_caps > 8 ? ", ... (all in the JSON)" : "");
  if (s->cap_error[0]) fprintf(f, "  a capacity probe could not run (decisions kept the count): %s\n", s->cap_error);
}

void report_scale_text(const run_result *r, FILE *f) {
  const run_scale *s = &r->scale;
  if (!s->on) return;
  const cold_start *cs = &s->cs;
  char spec[256];
  autoscale_describe(&r->sc.autoscale, spec, sizeof spec);
  fprintf(f, "Autoscaling: %s (%s; docs/planning.md, Autoscaling)\n", spec,
          r->sc.autoscale.planner ? "NVIDIA Dynamo's SLA planner" : "Kubernetes HPA's rule");
  planner_text(s, f);
  fprintf(f, "  cold start %.1f s = pod start %.1f s + weights from %s %.1f s (%.1f GB at %.1f GB/s%s) + warm-up "
             "%.1f s (%s)\n",
          cs->total_s, cs->pod_s, cs->load_from, cs->load_s,
          r->plan.weights_bytes * (cs->per_gpu ? 1 : s->gpus_per_replica) / 1e9, cs->load_bytes_per_s / 1e9,
          cs->per_gpu ? " per GPU" : "", cs->warmup_s, r->engine.name);
  fprintf(f, "  replicas: %u at t=0, peak %u holding GPUs; %u decisions, %u starts (%u cancelled in their cold "
             "start), %u drains%s\n",
          s->initial, s->peak_held, s->decisions, s->starts, s->cancelled, s->drains,
          s->slots_short ? " (some starts waited for a free slot)" : "");
  fprintf(f, "  GPU-hours %.2f (replica-hours holding GPUs %.2f, serving %.2f; x %u GPUs) x %.2f USD = %.2f USD%s\n",
          s->gpu_hours, s->held_replica_s / 3600, s->serving_replica_s / 3600, s->gpus_per_replica,
          s->usd_per_gpu_hour, s->cost_usd, s->price_assumed ? " (price: an assumption)" : "");
  if (!s->slo_given) {
    fprintf(f, "  hours missing the SLO: give --goodput objectives to judge each hour\n");
    return;
  }
  fprintf(f, "  hours missing the SLO (under %.0f%% of the hour's requests meet every --goodput objective): %u of %u",
          100 * SCALE_HOUR_ATTAIN, s->hours_missed, s->n_hours);
  const char *sep = " (hour ";
  for (uint32_t h = 0; h < s->n_hours; h++)
    if (s->hours[h].requests && (double)s->hours[h].met < SCALE_HOUR_ATTAIN * s->hours[h].requests) {
      fprintf(f, "%s%u", sep, h);
      sep = ", ";
    }
  fprintf(f, "%s\n", s->hours_missed ? ")" : "");
}

void report_scale_json(const run_result *r, jw *x) {
  const run_scale *s = &r->scale;
  if (!s->on) return;
  char spec[256];
  autoscale_describe(&r->sc.autoscale, spec, sizeof spec);
  jw_obj(x, "autoscale");
  jw_str(x, "policy", spec);
  if (r->sc.autoscale.planner) {
    jw_str(x, "mode", "planner");
    jw_arr(x, "planner_capacity");
    for (uint32_t k = 0; k < s->n_caps; k++) {
      jw_obj(x, NULL);
      jw_u64(x, "isl", s->caps[k].isl);
      jw_u64(x, "osl", s->caps[k].osl);
      jw_num(x, "requests_per_s", s->caps[k].rps);
      jw_u64(x, "simulations", s->caps[k].probes);
      jw_end(x);
    }
    jw_end(x);
    if (s->cap_error[0]) jw_str(x, "planner_capacity_error", s->cap_error);
  } else {
    jw_str(x, "metric", autoscale_metric_name(r->sc.autoscale.metric));
  }
  jw_obj(x, "cold_start_s");
  jw_num(x, "total", s->cs.total_s);
  jw_num(x, "pod_start", s->cs.pod_s);
  jw_num(x, "weights_load", s->cs.load_s);
  jw_num(x, "warmup", s->cs.warmup_s);
  jw_str(x, "weights_from", s->cs.load_from);
  jw_str(x, "pod_start_source", s->cs.pod_source);
  jw_str(x, "weights_source", s->cs.load_source);
  jw_str(x, "warmup_source", s->cs.warmup_source);
  jw_end(x);
  jw_u64(x, "initial_replicas", s->initial);
  jw_u64(x, "peak_replicas_holding_gpus", s->peak_held);
  jw_u64(x, "decisions", s->decisions);
  jw_u64(x, "starts", s->starts);
  jw_u64(x, "starts_cancelled", s->cancelled);
  jw_u64(x, "drains", s->drains);
  jw_num(x, "replica_hours_held", s->held_replica_s / 3600);
  jw_num(x, "replica_hours_serving", s->serving_replica_s / 3600);
  jw_num(x, "gpu_hours", s->gpu_hours);
  jw_num(x, "usd_per_gpu_hour", s->usd_per_gpu_hour);
  jw_num(x, "cost_usd", s->cost_usd);
  jw_str(x, "price_source", s->price_source);
  jw_bool(x, "price_is_assumption", s->price_assumed);
  if (s->slo_given) jw_u64(x, "hours_missing_slo", s->hours_missed);
  else jw_null(x, "hours_missing_slo");
  jw_arr(x, "hours");
  for (uint32_t h = 0; h < s->n_hours; h++) {
    const scale_hour *o = &s->hours[h];
    jw_obj(x, NULL);
    jw_u64(x, "hour", h);
    jw_u64(x, "requests", o->requests);
    if (s->slo_given) jw_num(x, "slo_attainment", o->requests ? (double)o->met / o->requests : 1.0);
    jw_num(x, "ttft_p99_ms", o->ttft_p99_ms);
    jw_num(x, "replicas_mean", o->replicas_mean);
    jw_end(x);
  }
  jw_end(x);
  jw_arr(x, "scale_events");
  for (size_t k = 0; k < s->n_ev; k++) {
    const run_scale_event *e = &s->ev[k];
    jw_obj(x, NULL);
    jw_num(x, "t_s", e->t_s);
    jw_u64(x, "from", e->from);
    jw_u64(x, "to", e->to);
    jw_u64(x, "ready", e->ready);
    jw_u64(x, "starting", e->starting);
    jw_num(x, "metric", e->metric);
    jw_end(x);
  }
  jw_end(x);
  jw_end(x);
}

const char *report_scale_csv_head(const run_result *r) {
  return r->scale.on ? ",replicas_ready,replicas_starting,replicas_draining" : "";
}

void report_scale_csv_row(const run_result *r, const ts_row *t, FILE *f) {
  if (r->scale.on) fprintf(f, ",%u,%u,%u", t->replicas_ready, t->replicas_starting, t->replicas_draining);
}

/* The replicas serving, starting and draining over the run, at most 600 points (bucket maxima). */
enum { SCALE_POINTS = 600 };
void report_scale_html(const run_result *r, FILE *f) {
  const metrics_rec *m = &r->m;
  if (!r->scale.on || m->n_ts < 2) return;
  double *t = sim_malloc(4 * SCALE_POINTS * sizeof *t), *y[3] = {t + SCALE_POINTS, t + 2 * SCALE_POINTS, t + 3 * SCALE_POINTS};
  size_t k = (m->n_ts + SCALE_POINTS - 1) / SCALE_POINTS, n = 0;
  double hi = 1;
  for (size_t i = 0; i < m->n_ts && n < SCALE_POINTS; i += k, n++) {
    t[n] = (double)m->ts[i].t_ns / 1e9;
    y[0][n] = y[1][n] = y[2][n] = 0;
    for (size_t j = i; j < i + k && j < m->n_ts; j++) {
      const ts_row *q = &m->ts[j];
      y[0][n] = fmax(y[0][n], q->replicas_ready);
      y[1][n] = fmax(y[1][n], q->replicas_starting);
      y[2][n] = fmax(y[2][n], q->replicas_draining);
    }
    hi = fmax(hi, y[0][n] + y[1][n] + y[2][n]);
  }
  double lo = 0, x0 = 0, x1 = t[n - 1];
  svg_nice_range(&lo, &hi, false);
  svg_nice_range(&x0, &x1, false);
  static const char *const names[3] = {"serving", "starting (cold start)", "draining"};
  fputs("<div class=\"row\">\n", f);
  svg_chart c;
  svg_chart_begin_legend(&c, f, 374, 250, "Replicas (autoscaled)", (svg_axis){x0, x1, false, "time (s)"},
                         (svg_axis){lo, hi, false, "replicas"}, 3);
  for (int s = 2; s >= 0; s--) svg_line(&c, t, y[s], n, svg_color(s), s ? 1.2 : 1.6, NULL);
  for (int s = 0; s < 3; s++) svg_legend(&c, svg_color(s), names[s], NULL);
  svg_chart_end(&c);
  fputs("</div>\n", f);
  free(t);
}
