/* capacity_out.c: a capacity search as JSON and as the terminal table. */
#include <math.h>
#include <string.h>

#include "plan/capacity.h"
#include "core/jsonw.h"
#include "config/settings.h"

static void config_json(jw *j, const cap_candidate *c) {
  jw_obj(j, "config");
  jw_str(j, "model", c->cfg.model);
  jw_str(j, "gpu", c->cfg.gpu);
  settings_json_echo(&c->cfg.deploy, SET_ROW | SET_DISAGG, j); /* config/settings.c's table; the pools in --mode disagg */
  if (c->cfg.price_per_gpu_hour > 0) jw_num(j, "usd_per_gpu_hour", c->cfg.price_per_gpu_hour);
  else jw_null(j, "usd_per_gpu_hour");
  jw_u64(j, "kv_tokens_per_replica", c->cfg.mem.kv_tokens);
  jw_end(j);
}

static void slo_values(jw *j, const char *key, const capacity_set *s, const double *v) {
  jw_obj(j, key);
  for (int k = 0; k < s->slo.n; k++) jw_num(j, s->slo.it[k].key, v[k]);
  jw_end(j);
}

/* "verified_intervals": the model part's interval of each verified SLO value and of the output throughput. */
static void slo_intervals(jw *j, const capacity_set *s, const cap_candidate *b) {
  char key[32];
  stratum_key(&b->cfg.strat, key, sizeof key);
  jw_obj(j, "verified_intervals");
  jw_num(j, "level", s->iv.level);
  jw_str(j, "stratum", key);
  jw_str(j, "residuals", s->iv.t.source);
  for (int k = 0; k <= s->slo.n; k++) {
    unc_interval it;
    if (k < s->slo.n) plan_iv_slo(&s->iv, &b->cfg.strat, s->slo.it[k].metric, b->verify_slo.value_ms[k], &it);
    else plan_iv_fig(&s->iv, &b->cfg.strat, &b->verify_sum, UF_TPUT, &it);
    jw_obj(j, k < s->slo.n ? s->slo.it[k].key : "output_throughput");
    jw_num(j, "point", it.point);
    if (it.have) jw_num(j, "lo", it.lo), jw_num(j, "hi", it.hi), jw_str(j, "residuals_key", it.key);
    else jw_null(j, "lo"), jw_null(j, "hi"), jw_null(j, "residuals_key");
    jw_end(j);
  }
  jw_end(j);
}

/* "confidence": null, or the level and what the point estimate alone recommended. */
static void confidence_json(jw *j, const capacity_set *s) {
  if (!(s->confidence > 0)) {
    jw_null(j, "confidence");
    return;
  }
  jw_obj(j, "confidence");
  jw_num(j, "level", s->confidence);
  jw_str(j, "residuals", s->iv.t.source);
  if (s->alone.have && s->alone.found) {
    jw_obj(j, "point_estimate_recommendation");
    jw_str(j, "label", s->alone.label);
    jw_u64(j, "replicas", s->alone.replicas);
    jw_u64(j, "gpus", s->alone.gpus);
    if (s->alone.usd_per_hour > 0) jw_num(j, "usd_per_hour", s->alone.usd_per_hour);
    else jw_null(j, "usd_per_hour");
    jw_num(j, "max_request_rate", s->alone.max_rate);
    jw_end(j);
  } else {
    jw_null(j, "point_estimate_recommendation");
  }
  jw_end(j);
}

static void candidate_json(jw *j, const capacity_set *s, const cap_candidate *c) {
  jw_obj(j, NULL);
  jw_u64(j, "index", c->index);
  jw_str(j, "label", c->label);
  config_json(j, c);
  jw_bool(j, "feasible", c->feasible);
  if (c->feasible) jw_null(j, "reason");
  else jw_str(j, "reason", c->reason);
  if (c->cfg.cost_source[0]) jw_str(j, "cost_source", c->cfg.cost_source);
  else jw_null(j, "cost_source");
  if (c->feasible && c->max_rate > 0) {
    jw_num(j, "max_request_rate", c->max_rate);
    jw_bool(j, "max_request_rate_at_search_limit", c->bis.unbounded);
    jw_u64(j, "replicas_needed", c->replicas);
    jw_u64(j, "replicas_estimate", c->estimate);
    jw_u64(j, "gpus_needed", c->gpus);
    if (c->usd_per_hour > 0) jw_num(j, "usd_per_hour", c->usd_per_hour);
    else jw_null(j, "usd_per_hour");
  } else {
    jw_null(j, "max_request_rate");
    jw_null(j, "replicas_needed");
    jw_null(j, "gpus_needed");
    jw_null(j, "usd_per_hour");
  }
  jw_str(j, "verification", c->verified == 1 ? "passed" : c->verified == -1 ? "failed" : "not run");
  jw_arr(j, "fleet_probes"); /* the fleets simulated at the target rate, in order (capacity.h) */
  for (uint32_t k = 0; k < c->n_fleet; k++) {
    jw_obj(j, NULL);
    jw_u64(j, "replicas", c->fleet[k].replicas);
    jw_bool(j, "meets_slo", c->fleet[k].ok);
    for (int q = 0; q < s->slo.n; q++) jw_num(j, s->slo.it[q].key, c->fleet[k].value_ms[q]);
    jw_end(j);
  }
  jw_end(j);
  if (c->feasible && c->bis.n_probes) jw_str(j, "binding_limit_beyond", c->fail_rate > 0 ? limit_name(c->limit) : "none found");
  jw_str(j, "why", c->why);
  jw_arr(j, "probes");
  for (int k = 0; k < c->bis.n_probes; k++) {
    const cap_probe *p = &c->probe[k];
    jw_obj(j, NULL);
    jw_num(j, "rate", p->rate);
    jw_bool(j, "meets_slo", p->ok);
    for (int q = 0; q < s->slo.n; q++) jw_num(j, s->slo.it[q].key, p->value_ms[q]);
    jw_num(j, "output_throughput", p->output_tput);
    jw_num(j, "request_throughput", p->request_tput);
    jw_u64(j, "unfinished", p->unfinished);
    jw_str(j, "binding_limit", limit_name(p->limit));
    jw_end(j);
  }
  jw_end(j);
  jw_end(j);
}

int capacity_write_json(const capacity_set *s, FILE *f, sim_err *err) {
  jw j;
  jw_begin(&j, f);
  jw_num(&j, "target_rate", s->target_rate);
  jw_obj(&j, "slo_ms");
  for (int k = 0; k < s->slo.n; k++) jw_num(&j, s->slo.it[k].key, s->slo.it[k].limit_ms);
  jw_end(&j);
  jw_obj(&j, "search");
  jw_num(&j, "relative_tolerance", s->bo.rel_tol);
  jw_u64(&j, "max_probes", (uint64_t)s->bo.max_probes);
  jw_num(&j, "rate_min", s->bo.lo);
  jw_num(&j, "rate_max", s->bo.hi);
  jw_str(&j, "workload", s->base.trace_path[0] ? s->base.trace_path : "generated");
  jw_u64(&j, "requests", s->base_stats.n);
  jw_num(&j, "workload_mean_rate", s->base_stats.rate_per_s);
  jw_u64(&j, "verification_runs", (uint64_t)s->n_verify_runs);
  jw_end(&j);
  const cap_candidate *b = s->best >= 0 ? &s->c[s->best] : NULL;
  if (b) jw_num(&j, "max_request_rate", b->max_rate);
  else jw_null(&j, "max_request_rate");
  if (b) {
    jw_obj(&j, "recommendation");
    jw_u64(&j, "index", b->index);
    jw_str(&j, "label", b->label);
    jw_str(&j, "gpu", b->cfg.gpu);
    settings_json_echo(&b->cfg.deploy, SET_ROW | SET_DISAGG, &j);
    jw_u64(&j, "replicas", b->replicas);
    jw_u64(&j, "gpus", b->gpus);
    if (b->usd_per_hour > 0) jw_num(&j, "usd_per_hour", b->usd_per_hour);
    else jw_null(&j, "usd_per_hour");
    if (b->inst >= 0) {
      const instance_cfg *in = &s->inst[b->inst];
      jw_obj(&j, "instance");
      jw_str(&j, "name", in->name);
      jw_str(&j, "provider", in->provider);
      jw_u64(&j, "count", b->n_instances);
      jw_u64(&j, "gpus_each", in->gpu_count);
      jw_u64(&j, "replicas_each", b->per_instance);
      jw_num(&j, "usd_per_instance_hour", in->price_per_hour);
      jw_str(&j, "price_date", in->price_date);
      jw_str(&j, "price_source", in->price_source);
      jw_bool(&j, "price_is_assumption", in->price_assumed);
      jw_end(&j);
    }
    jw_num(&j, "max_request_rate", b->max_rate);
    jw_bool(&j, "verified", b->verified == 1);
    slo_values(&j, "verified_slo_ms", s, b->verify_slo.value_ms);
    jw_num(&j, "verified_output_throughput", b->verify_sum.output_throughput);
    if (s->iv.on) slo_intervals(&j, s, b);
    jw_end(&j);
  } else {
    jw_null(&j, "recommendation");
  }
  confidence_json(&j, s);
  jw_str(&j, "summary", s->summary);
  if (s->mig_layouts[0]) jw_str(&j, "mig_layouts", s->mig_layouts);
  jw_arr(&j, "candidates");
  for (size_t i = 0; i < s->n; i++) candidate_json(&j, s, &s->c[i]);
  jw_end(&j);
  return jw_finish(&j, err);
}

void capacity_print(const capacity_set *s, FILE *f) {
  char d[512];
  slo_describe(&s->slo, d, sizeof d);
  char rate[64] = "all at t=0 as given";
  if (s->base_stats.rate_per_s > 0) snprintf(rate, sizeof rate, "%.2f req/s as given", s->base_stats.rate_per_s);
  fprintf(f, "servesim capacity: %g req/s at %s; workload %s (%zu requests, %s)\n", s->target_rate, d,
          s->base.trace_path[0] ? s->base.trace_path : "generated", s->base_stats.n, rate);
  fprintf(f, "  search: bisection on the rate per replica, relative tolerance %g, at most %d probes per candidate\n\n",
          s->bo.rel_tol, s->bo.max_probes);
  int w = (int)strlen("candidate"); /* as wide as the longest label: none is cut */
  for (size_t i = 0; i < s->n; i++) w = (int)fmax(w, (double)strlen(s->c[i].label));
  fprintf(f, "%4s  %-*s %10s %8s %6s %9s  %s\n", "#", w, "candidate", "req/s/rep", "replicas", "GPUs", "$/hour",
          "verdict");
  for (size_t i = 0; i < s->n; i++) {
    const cap_candidate *c = &s->c[i];
    const char *mark = (int)i == s->best ? "*" : " ";
    if (c->feasible && c->max_rate > 0)
      fprintf(f, "%3zu%s  %-*s %10.3g %8u %6u %9.2f  %s\n", i, mark, w, c->label, c->max_rate, c->replicas, c->gpus,
              c->usd_per_hour, c->why);
    else
      fprintf(f, "%3zu%s  %-*s %10s %8s %6s %9s  %s\n", i, mark, w, c->label, "-", "-", "-", "-", c->why);
  }
  fprintf(f, "\n%s\n", s->summary);
  if (s->mig_layouts[0]) fprintf(f, "\n%s\n", s->mig_layouts);
}
