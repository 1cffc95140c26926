/* scaling.c: an autoscaled run's setup and accounting (scaling.h). */
#include "runner/scaling.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config/instance.h"
#include "runner/result.h"
#include "serve/cluster.h"

static int price(const autoscale_cfg *p, const gpu_cfg *g, run_scale *out, sim_err *err) {
  if (!p->instance[0]) {
    out->usd_per_gpu_hour = g->price_per_hour;
    out->price_assumed = true;
    snprintf(out->price_source, sizeof out->price_source, "the %s GPU file's price per GPU-hour (its source)", g->name);
    return SIM_OK;
  }
  instance_cfg in;
  int rc = cfg_instance_load(&in, p->instance, err);
  if (rc) return rc;
  out->usd_per_gpu_hour = in.price_per_hour / in.gpu_count;
  out->price_assumed = in.price_assumed;
  snprintf(out->price_source, sizeof out->price_source, "%s: %.2f USD per instance-hour / %u GPUs (%.400s)", in.name,
           in.price_per_hour, in.gpu_count, in.price_source);
  return SIM_OK;
}

int scaling_setup(const scenario *sc, const engine_cfg *e, const gpu_cfg *g, const deploy_cfg *d, const mem_plan *plan,
                  cluster_cfg *cc, run_scale *out, sim_err *err) {
  memset(out, 0, sizeof *out);
  const autoscale_cfg *p = &sc->autoscale;
  if (!p->on) return SIM_OK;
  if (d->disagg || deploy_dp(d) > 1 || sc->n_failures)
    return sim_errf(err, SIM_EINPUT, "--autoscale: aggregated serving with data_parallel_size 1 and no "
                    "--fail-replica (autoscaling with these is not modelled)");
  out->on = true;
  out->initial = p->initial ? p->initial : d->replicas < p->min ? p->min : d->replicas > p->max ? p->max : d->replicas;
  out->slots = 2 * p->max;
  out->gpus_per_replica = d->tp * d->pp;
  int rc = coldstart_resolve(p, e->name, plan->weights_bytes, out->gpus_per_replica, &out->cs, err);
  if (rc) return rc;
  if ((rc = price(p, g, out, err))) return rc;
  cc->replicas = out->slots;
  cc->scale.on = true;
  cc->scale.policy = *p;
  cc->scale.initial = out->initial;
  cc->scale.cold_start_ns = sim_s_to_ns(out->cs.total_s);
  if (p->planner) {
    out->pc = planner_cap_new(sc);
    cc->scale.capacity = planner_cap_rps;
    cc->scale.capacity_ctx = out->pc;
  }
  return SIM_OK;
}

void scaling_collect(const cluster *c, run_scale *out) {
  if (!out->on) return;
  cluster_scale_outcome so;
  cluster_get_scale(c, &so);
  out->held_replica_s = so.held_replica_s;
  out->serving_replica_s = so.serving_replica_s;
  out->peak_held = so.peak_held;
  out->decisions = so.decisions, out->starts = so.starts, out->drains = so.drains;
  out->cancelled = so.cancelled, out->slots_short = so.slots_short;
  out->n_ev = so.n_ev;
  out->ev = sim_malloc((so.n_ev ? so.n_ev : 1) * sizeof *out->ev);
  for (size_t k = 0; k < so.n_ev; k++) {
    const scale_event *s = &so.ev[k];
    out->ev[k] = (run_scale_event){(double)s->t_ns / 1e9, s->from, s->to, s->ready, s->starting, s->metric};
  }
  if (out->pc) {
    out->n_caps = out->pc->n;
    out->caps = sim_malloc((out->n_caps ? out->n_caps : 1) * sizeof *out->caps);
    memcpy(out->caps, out->pc->e, out->n_caps * sizeof *out->caps);
    out->cap_probes = out->pc->probes;
    snprintf(out->cap_error, sizeof out->cap_error, "%s", out->pc->error);
    planner_cap_free(out->pc);
    out->pc = NULL;
  }
}

static bool meets(const slo_cfg *slo, const run_record *q) {
  if (q->outcome != REQ_FINISHED) return false;
  double tpot = run_record_tpot_ms(q);
  return !(slo->ttft_ms >= 0 && run_record_ttft_ms(q) > slo->ttft_ms) &&
         !(slo->tpot_ms >= 0 && !isnan(tpot) && tpot > slo->tpot_ms) &&
         !(slo->e2el_ms >= 0 && run_record_e2el_ms(q) > slo->e2el_ms);
}

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

/* Hour h's p99 TTFT over its answered requests (vLLM's percentile: linear between ranks). */
static double p99(double *v, size_t n) {
  if (!n) return NAN;
  qsort(v, n, sizeof *v, cmp_double);
  double pos = 0.99 * (double)(n - 1);
  size_t lo = (size_t)pos;
  return lo + 1 < n ? v[lo] + (pos - (double)lo) * (v[lo + 1] - v[lo]) : v[lo];
}

void scaling_hours(run_result *res) {
  run_scale *s = &res->scale;
  if (!s->on) return;
  s->gpu_hours = s->held_replica_s * s->gpus_per_replica / 3600.0;
  s->cost_usd = s->gpu_hours * s->usd_per_gpu_hour;
  const slo_cfg *slo = &res->sc.goodput;
  s->slo_given = slo->ttft_ms >= 0 || slo->tpot_ms >= 0 || slo->e2el_ms >= 0;
  double last = 0;
  for (size_t i = 0; i < res->n_reqs; i++) last = fmax(last, (double)res->reqs[i].arrival_ns / 1e9);
  s->n_hours = (uint32_t)floor(last / SCALE_HOUR_S) + 1;
  s->hours = sim_calloc(s->n_hours, sizeof *s->hours);
  double *buf = sim_malloc((res->n_reqs + 1) * sizeof *buf);
  for (uint32_t h = 0; h < s->n_hours; h++) {
    scale_hour *o = &s->hours[h];
    size_t n = 0;
    for (size_t i = 0; i < res->n_reqs; i++) {
      const run_record *q = &res->reqs[i];
      if ((uint32_t)floor((double)q->arrival_ns / 1e9 / SCALE_HOUR_S) != h) continue;
      o->requests++;
      o->met += meets(slo, q);
      if (q->outcome == REQ_FINISHED && q->generated) buf[n++] = run_record_ttft_ms(q);
    }
    o->ttft_p99_ms = p99(buf, n);
    double sum = 0;
    size_t k = 0;
    for (size_t i = 0; i < res->m.n_ts; i++) {
      const ts_row *t = &res->m.ts[i];
      if ((uint32_t)floor((double)t->t_ns / 1e9 / SCALE_HOUR_S) != h) continue;
      sum += t->replicas_ready + t->replicas_starting + t->replicas_draining;
      k++;
    }
    o->replicas_mean = k ? sum / (double)k : NAN;
    if (s->slo_given && o->requests && (double)o->met < SCALE_HOUR_ATTAIN * o->requests) s->hours_missed++;
  }
  free(buf);
}

void run_scale_free(run_scale *s) {
  planner_cap_free(s->pc);
  free(s->caps);
  free(s->ev);
  free(s->hours);
  memset(s, 0, sizeof *s);
}
