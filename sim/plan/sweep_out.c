/* sweep_out.c: a sweep's results as CSV, JSON, a terminal table and a
 * one-paragraph answer. Rows print in grid-index order; numbers use fixed
 * formats, so identical sweeps give identical bytes. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/outfmt.h"
#include "core/jsonw.h"
#include "plan/sweep.h"
#include "config/settings.h"

static const char *short_limit(limit_kind k) {
  static const char *const n[] = {"light load", "KV capacity", "HBM bandwidth", "compute", "interconnect",
                                  "engine CPU", "queueing"};
  return (unsigned)k < SIM_ARRAY_LEN(n) ? n[k] : "?";
}

/* ---- CSV ------------------------------------------------------------------------- */


int sweep_write_csv(const sweep_set *s, FILE *f, sim_err *err) {
  fputs("index,label,feasible,reason,model,gpu", f);
  settings_csv_header(SET_ROW, f); /* config/settings.c's table */
  fputs(",replicas,gpus,max_concurrency,rate_scale,offered_rate,requests,completed,unfinished,rejected,"
        "duration_s,request_throughput,output_throughput,output_tok_s_per_gpu,tok_s_per_user,mean_ttft_ms,"
        "median_ttft_ms,p99_ttft_ms,mean_tpot_ms,median_tpot_ms,p99_tpot_ms,p99_itl_ms,mean_e2el_ms,p99_e2el_ms,"
        "kv_tokens,kv_usage_peak,preemptions,gpu_busy,binding_limit,usd_per_gpu_hour,usd_per_hour,"
        "usd_per_m_output_tokens,usd_per_m_total_tokens,meets_slo,pareto_throughput_vs_user,pareto_throughput_vs_ttft\n",
        f);
  for (size_t i = 0; i < s->n; i++) {
    const sweep_row *r = &s->rows[i];
    const metrics_summary *m = &r->sum;
    fprintf(f, "%zu,", r->index);
    outfmt_csv_str(f, r->label);
    fprintf(f, ",%s,", r->feasible ? "true" : "false");
    outfmt_csv_str(f, r->reason);
    fputc(',', f);
    outfmt_csv_str(f, r->model);
    fputc(',', f);
    outfmt_csv_str(f, r->gpu);
    settings_csv_row(&r->deploy, SET_ROW, f);
    fprintf(f, ",%u,%u,%u", r->replicas, r->gpus, r->max_concurrency);
    outfmt_csv_num(f, r->rate_scale);
    if (!r->feasible) {
      fputs(",,,,,,,,,,,,,,,,,,,,,,,,", f);
      outfmt_csv_num(f, r->price_per_gpu_hour > 0 ? r->price_per_gpu_hour : NAN);
      outfmt_csv_num(f, r->price_per_gpu_hour > 0 ? r->usd_per_hour : NAN);
      fputs(",,,false,false,false\n", f);
      continue;
    }
    outfmt_csv_num(f, r->offered_rate);
    fprintf(f, ",%zu,%zu,%zu,%zu", m->total, m->completed, m->unfinished, m->rejected);
    double v[] = {m->duration_s,     m->request_throughput, m->output_throughput, r->tput_per_gpu,
                  r->tok_s_per_user, m->ttft_ms.mean,       m->ttft_ms.median,    m->ttft_ms.p99,
                  m->tpot_ms.mean,   m->tpot_ms.median,     m->tpot_ms.p99,       m->itl_ms.p99,
                  m->e2el_ms.mean,   m->e2el_ms.p99};
    for (size_t k = 0; k < SIM_ARRAY_LEN(v); k++) outfmt_csv_num(f, v[k]);
    fprintf(f, ",%llu", (unsigned long long)r->mem.kv_tokens);
    outfmt_csv_num(f, r->bn.kv_peak);
    fprintf(f, ",%llu", (unsigned long long)r->bn.preemptions);
    outfmt_csv_num(f, r->bn.utilization);
    fputc(',', f);
    outfmt_csv_str(f, short_limit(r->bn.primary));
    outfmt_csv_num(f, r->price_per_gpu_hour > 0 ? r->price_per_gpu_hour : NAN);
    outfmt_csv_num(f, r->price_per_gpu_hour > 0 ? r->usd_per_hour : NAN);
    outfmt_csv_num(f, r->usd_per_m_output);
    outfmt_csv_num(f, r->usd_per_m_total);
    fprintf(f, ",%s,%s,%s\n", s->slo.n ? (r->slo.all_ok ? "true" : "false") : "", r->pareto_user ? "true" : "false",
            r->pareto_ttft ? "true" : "false");
  }
  if (ferror(f)) return sim_errf(err, SIM_EINPUT, "write failed");
  return SIM_OK;
}

/* ---- JSON ------------------------------------------------------------------------ */

static void dist_json(jw *j, const char *key, const dist_stats *d) {
  jw_obj(j, key);
  jw_num(j, "mean", d->mean);
  jw_num(j, "median", d->median);
  jw_num(j, "p90", d->p90);
  jw_num(j, "p99", d->p99);
  jw_end(j);
}

static void row_json(jw *j, const sweep_set *s, const sweep_row *r) {
  jw_obj(j, NULL);
  jw_u64(j, "index", r->index);
  jw_str(j, "label", r->label);
  jw_bool(j, "feasible", r->feasible);
  if (r->feasible) jw_null(j, "reason");
  else jw_str(j, "reason", r->reason);
  if (r->feasible) jw_str(j, "cost_source", r->cost_source);
  else jw_null(j, "cost_source");
  jw_obj(j, "config");
  jw_str(j, "model", r->model);
  jw_str(j, "gpu", r->gpu);
  jw_str(j, "engine", r->engine);
  if (r->whatif_missed) jw_u64(j, "what_if_not_exercised", r->whatif_missed);
  settings_json_echo(&r->deploy, SET_ROW | SET_DISAGG, j); /* config/settings.c's table; the pools in --mode disagg */
  jw_u64(j, "replicas", r->replicas);
  jw_u64(j, "gpus", r->gpus);
  if (r->max_concurrency) jw_u64(j, "max_concurrency", r->max_concurrency);
  else jw_null(j, "max_concurrency");
  jw_num(j, "rate_scale", r->rate_scale);
  jw_end(j);
  jw_obj(j, "cost");
  if (r->price_per_gpu_hour > 0) {
    jw_num(j, "usd_per_gpu_hour", r->price_per_gpu_hour);
    jw_num(j, "usd_per_hour", r->usd_per_hour);
  } else {
    jw_null(j, "usd_per_gpu_hour");
    jw_null(j, "usd_per_hour");
  }
  jw_num(j, "usd_per_million_output_tokens", r->usd_per_m_output);
  jw_num(j, "usd_per_million_total_tokens", r->usd_per_m_total);
  jw_end(j);
  if (r->feasible) {
    const metrics_summary *m = &r->sum;
    jw_obj(j, "metrics");
    jw_num(j, "offered_rate", r->offered_rate);
    jw_u64(j, "requests", m->total);
    jw_u64(j, "completed", m->completed);
    jw_u64(j, "unfinished", m->unfinished);
    jw_u64(j, "rejected", m->rejected);
    jw_num(j, "duration_s", m->duration_s);
    jw_num(j, "request_throughput", m->request_throughput);
    jw_num(j, "output_throughput", m->output_throughput);
    jw_num(j, "output_throughput_per_gpu", r->tput_per_gpu);
    jw_num(j, "tokens_per_s_per_user", r->tok_s_per_user);
    dist_json(j, "ttft_ms", &m->ttft_ms);
    dist_json(j, "tpot_ms", &m->tpot_ms);
    dist_json(j, "itl_ms", &m->itl_ms);
    dist_json(j, "e2el_ms", &m->e2el_ms);
    jw_u64(j, "kv_tokens", r->mem.kv_tokens);
    jw_num(j, "kv_usage_peak", r->bn.kv_peak);
    jw_u64(j, "preemptions", r->bn.preemptions);
    jw_num(j, "gpu_busy", r->bn.utilization);
    jw_end(j);
    plan_iv_json(j, &s->iv, &r->strat, m);
    jw_obj(j, "bottleneck");
    jw_str(j, "binding_limit", limit_name(r->bn.primary));
    jw_str(j, "explanation", r->bn.explain);
    jw_end(j);
    if (s->slo.n) {
      jw_obj(j, "slo");
      jw_bool(j, "met", r->slo.all_ok);
      for (int k = 0; k < s->slo.n; k++) jw_num(j, s->slo.it[k].key, r->slo.value_ms[k]);
      jw_end(j);
    }
  }
  jw_bool(j, "pareto_throughput_vs_user", r->pareto_user);
  jw_bool(j, "pareto_throughput_vs_ttft", r->pareto_ttft);
  jw_end(j);
}

int sweep_write_json(const sweep_set *s, FILE *f, sim_err *err) {
  jw j;
  jw_begin(&j, f);
  jw_obj(&j, "sweep");
  jw_u64(&j, "points", s->n);
  jw_u64(&j, "feasible", s->n_feasible);
  jw_str(&j, "model", s->base.model);
  jw_str(&j, "engine", s->base.engine);
  jw_str(&j, "workload", s->base.trace_path[0] ? s->base.trace_path : "generated");
  char buf[512];
  slo_describe(&s->slo, buf, sizeof buf);
  jw_str(&j, "slo", buf);
  char summary[4096];
  sweep_summary(s, summary, sizeof summary);
  jw_str(&j, "summary", summary);
  jw_end(&j);
  jw_obj(&j, "pareto");
  jw_arr(&j, "throughput_per_gpu_vs_tokens_per_user");
  for (size_t i = 0; i < s->n; i++)
    if (s->rows[i].pareto_user) jw_u64(&j, NULL, i);
  jw_end(&j);
  jw_arr(&j, "throughput_per_gpu_vs_p99_ttft");
  for (size_t i = 0; i < s->n; i++)
    if (s->rows[i].pareto_ttft) jw_u64(&j, NULL, i);
  jw_end(&j);
  jw_end(&j);
  sweep_curve *cv;
  size_t nc = sweep_curves(s, &cv);
  jw_arr(&j, "curves");
  for (size_t c = 0; c < nc; c++) {
    jw_obj(&j, NULL);
    jw_str(&j, "deployment", cv[c].label);
    jw_num(&j, "p99_ttft_limit_ms", cv[c].limit_ms);
    if (cv[c].knee >= 0) jw_num(&j, "knee_offered_rate", s->rows[cv[c].row[cv[c].knee]].offered_rate);
    else jw_null(&j, "knee_offered_rate");
    jw_arr(&j, "points");
    for (size_t k = 0; k < cv[c].n; k++) jw_u64(&j, NULL, cv[c].row[k]);
    jw_end(&j);
    jw_end(&j);
  }
  jw_end(&j);
  sweep_curves_free(cv, nc);
  jw_arr(&j, "results");
  for (size_t i = 0; i < s->n; i++) row_json(&j, s, &s->rows[i]);
  jw_end(&j);
  return jw_finish(&j, err);
}

/* ---- text ------------------------------------------------------------------------ */

/* The interval of a row's throughput per GPU (plan_iv.h), " lo-hi" in 20 columns. */
static void row_tput_range(const sweep_set *s, const sweep_row *r, char *buf, size_t n) {
  unc_interval it;
  plan_iv_fig(&s->iv, &r->strat, &r->sum, UF_TPUT, &it);
  char v[40];
  if (it.have) snprintf(v, sizeof v, "%.0f-%.0f", it.lo / r->gpus, it.hi / r->gpus);
  else snprintf(v, sizeof v, "no data");
  snprintf(buf, n, " %19s", v);
}

/* The table is as wide as its longest configuration: no label and no reason is cut. */
void sweep_print(const sweep_set *s, FILE *f) {
  int w = (int)strlen("configuration");
  for (size_t i = 0; i < s->n; i++) w = (int)fmax(w, (double)strlen(s->rows[i].label));
  char ivh[32] = "";
  if (s->iv.on) snprintf(ivh, sizeof ivh, " %4.0f%% of tok/s/GPU", 100 * s->iv.level);
  fprintf(f, "%5s  %-*s %9s%s %9s %10s %9s %9s  %-13s %s\n", "#", w, "configuration", "tok/s/GPU", ivh, "tok/s/usr",
          "p99 TTFT", "p99 TPOT", "$/M tok", "limit", "frontier");
  for (size_t i = 0; i < s->n; i++) {
    const sweep_row *r = &s->rows[i];
    if (!r->feasible) {
      fprintf(f, "%5zu  %-*s cannot start: %s\n", i, w, r->label, r->reason);
      continue;
    }
    char pf[16] = "";
    if (r->pareto_user) strcat(pf, "U");
    if (r->pareto_ttft) strcat(pf, "T");
    if (s->slo.n) strcat(pf, r->slo.all_ok ? " slo" : " -");
    char ivc[48] = "";
    if (s->iv.on) row_tput_range(s, r, ivc, sizeof ivc);
    fprintf(f, "%5zu  %-*s %9.1f%s %9.1f %8.0fms %7.1fms %9.3f  %-13s %s\n", i, w, r->label, r->tput_per_gpu, ivc,
            r->tok_s_per_user, r->sum.ttft_ms.p99, r->sum.tpot_ms.p99, r->usd_per_m_output,
            short_limit(r->bn.primary), pf);
  }
  fprintf(f, "frontier: U = Pareto-optimal in throughput per GPU vs tokens/s per user, T = vs p99 TTFT%s\n",
          s->slo.n ? "; slo = meets every objective" : "");
  if (s->iv.on)
    fprintf(f, "%.0f%% of tok/s/GPU: the interval where a measured value would fall, by the cost model's validation error for the "
            "row's stratum (%s; the JSON has every figure's; docs/UNCERTAINTY.md)\n", 100 * s->iv.level, s->iv.t.source);
}

static const sweep_row *best_by(const sweep_set *s, int what, bool need_slo) {
  const sweep_row *b = NULL;
  for (size_t i = 0; i < s->n; i++) {
    const sweep_row *r = &s->rows[i];
    if (!r->feasible || !r->sum.completed || (need_slo && !r->slo.all_ok)) continue;
    if (!b) b = r;
    else if (what == 0 && r->tput_per_gpu > b->tput_per_gpu) b = r;
    else if (what == 1 && r->usd_per_m_output < b->usd_per_m_output) b = r;
  }
  return b;
}

void sweep_summary(const sweep_set *s, char *buf, size_t n) {
  size_t o = 0;
#define ADD(...) o += (size_t)snprintf(buf + o, o < n ? n - o : 0, __VA_ARGS__)
  buf[0] = 0;
  ADD("%zu configurations: %zu ran, %zu could not start", s->n, s->n_feasible, s->n - s->n_feasible);
  size_t missed = 0, first = 0;
  for (size_t i = 0; i < s->n; i++)
    if (s->rows[i].feasible && s->rows[i].whatif_missed && !missed++) first = i;
  if (missed)
    ADD(". WHAT-IF NOT EXERCISED in %zu configuration%s (e.g. %s: %.240s)", missed, missed == 1 ? "" : "s",
        s->rows[first].label, s->rows[first].whatif_note);
  for (size_t i = 0; i < s->n; i++)
    if (!s->rows[i].feasible) {
      ADD(" (e.g. %s: %.160s)", s->rows[i].label, s->rows[i].reason);
      break;
    }
  ADD(". ");
  bool slo = s->slo.n > 0;
  size_t n_ok = 0;
  for (size_t i = 0; i < s->n; i++) n_ok += s->rows[i].feasible && s->rows[i].slo.all_ok;
  if (slo) {
    char d[256];
    slo_describe(&s->slo, d, sizeof d);
    ADD("%zu meet the SLOs (%s). ", n_ok, d);
  }
  const sweep_row *t = best_by(s, 0, slo && n_ok), *c = best_by(s, 1, slo && n_ok);
  if (t) {
    char ivt[64] = "", ivm[64] = "";
    if (s->iv.on) {
      unc_interval it;
      plan_iv_fig(&s->iv, &t->strat, &t->sum, UF_TPUT, &it);
      it.lo /= t->gpus, it.hi /= t->gpus;
      plan_iv_text(&it, "%.0f", ivt, sizeof ivt);
      plan_iv_fig(&s->iv, &t->strat, &t->sum, UF_TTFT_MEAN, &it);
      snprintf(ivm, sizeof ivm, ", mean TTFT %.0f ms", it.point);
      plan_iv_text(&it, "%.0f", ivm + strlen(ivm), sizeof ivm - strlen(ivm));
    }
    ADD("Highest output throughput per GPU%s: %s with %.0f tokens/s per GPU%s (%.1f tokens/s per user, p99 TTFT %.0f "
        "ms%s, %s binds). ",
        slo && n_ok ? " among those" : "", t->label, t->tput_per_gpu, ivt, t->tok_s_per_user, t->sum.ttft_ms.p99, ivm,
        short_limit(t->bn.primary));
  }
  if (c && isfinite(c->usd_per_m_output))
    ADD("Cheapest per million output tokens: %s at $%.3f. ", c->label, c->usd_per_m_output);
  if (slo && !n_ok) {
    ADD("No configuration meets the SLOs, so there is no frontier to choose from (the figures above are of "
        "configurations that miss them).");
    goto curves;
  }
  ADD("The Pareto frontier of throughput per GPU vs tokens/s per user%s has %zu point%s", slo ? " (among those)" : "",
      s->n_pareto_user, s->n_pareto_user == 1 ? "" : "s");
  const sweep_row *fast = NULL;
  for (size_t i = 0; i < s->n; i++)
    if (s->rows[i].pareto_user && (!fast || s->rows[i].tok_s_per_user > fast->tok_s_per_user)) fast = &s->rows[i];
  if (fast && t && fast != t)
    ADD(", from %s (%.1f tokens/s per user) to the highest-throughput end", fast->label, fast->tok_s_per_user);
  ADD(".");
curves:;
  sweep_curve *cv;
  size_t nc = sweep_curves(s, &cv);
  /* the deployment that holds the highest load (meeting the SLOs, or before TTFT explodes) */
  const char *what = s->slo.n ? "meeting the SLOs" : "before p99 TTFT explodes";
  double best = -1;
  for (size_t k = 0; k < nc; k++)
    if (cv[k].knee >= 0) best = fmax(best, s->rows[cv[k].row[cv[k].knee]].offered_rate);
  if (nc > 1 && best > 0) {
    ADD(" Highest load %s: %.2f req/s, by", what, best);
    int shown = 0;
    for (size_t k = 0; k < nc; k++)
      if (cv[k].knee >= 0 && s->rows[cv[k].row[cv[k].knee]].offered_rate == best && shown++ < 4)
        ADD("%s %s", shown > 1 ? "," : "", cv[k].label);
    if (shown > 4) ADD(" and %d more", shown - 4);
    ADD(".");
  }
  for (size_t k = 0; k < nc && k < 8; k++) {
    const sweep_curve *q = &cv[k];
    double last = s->rows[q->row[q->n - 1]].offered_rate;
    if (q->knee < 0)
      ADD(s->slo.n ? " %s: misses the SLOs at every load tried." : " %s: p99 TTFT is high at every load tried.",
          q->label);
    else if ((size_t)q->knee + 1 < q->n)
      ADD(" %s: knee at %.2f req/s (%s above it).", q->label, s->rows[q->row[q->knee]].offered_rate,
          s->slo.n ? "SLOs missed" : "p99 TTFT explodes");
    else
      ADD(" %s: no knee up to %.2f req/s.", q->label, last);
  }
  if (nc > 8) ADD(" (%zu more deployments in the curves of the JSON output.)", nc - 8);
  sweep_curves_free(cv, nc);
#undef ADD
}

/* ---- load curves (sweep.h) --------------------------------------------------------------- */

/* Insertion sort of row indices by offered rate, then index (curves are short). */
static void sort_by_rate(const sweep_row *rows, size_t *v, size_t n) {
  for (size_t i = 1; i < n; i++) {
    size_t x = v[i], k = i;
    while (k > 0 && (rows[v[k - 1]].offered_rate > rows[x].offered_rate ||
                     (rows[v[k - 1]].offered_rate == rows[x].offered_rate && v[k - 1] > x))) {
      v[k] = v[k - 1];
      k--;
    }
    v[k] = x;
  }
}

/* p99 TTFT of a row, +infinity when more than 1% of requests did not finish. */
static double p99_ttft(const sweep_row *r) {
  if (r->sum.total && (double)r->sum.unfinished > 0.01 * (double)r->sum.total) return INFINITY;
  return r->sum.ttft_ms.p99;
}

size_t sweep_curves(const sweep_set *s, sweep_curve **out) {
  bool *used = sim_calloc(s->n + 1, 1);
  size_t nc = 0, cap = 0;
  sweep_curve *cs = NULL;
  double slo_ttft = slo_limit(&s->slo, SLO_TTFT);
  for (size_t i = 0; i < s->n; i++) {
    if (used[i] || !s->rows[i].feasible) continue;
    sweep_curve c;
    memset(&c, 0, sizeof c);
    c.row = sim_malloc(s->n * sizeof *c.row);
    for (size_t j = i; j < s->n; j++)
      if (!used[j] && s->rows[j].feasible && grid_same_deployment(&s->rows[i].pt, &s->rows[j].pt)) {
        used[j] = true;
        c.row[c.n++] = j;
      }
    if (c.n < 2) {
      free(c.row);
      continue;
    }
    sort_by_rate(s->rows, c.row, c.n);
    grid_point p = s->rows[i].pt;
    p.set[AX_RATE] = p.set[AX_CONC] = p.set[AX_RATE_SCALE] = false;
    grid_label(&p, c.label, sizeof c.label);
    c.limit_ms = slo_ttft > 0 ? slo_ttft : 3.0 * p99_ttft(&s->rows[c.row[0]]);
    c.knee = -1;
    for (size_t k = 0; k < c.n; k++) {
      const sweep_row *r = &s->rows[c.row[k]];
      if (s->slo.n ? !r->slo.all_ok : p99_ttft(r) > c.limit_ms) break;
      c.knee = (int)k;
    }
    SIM_GROW(cs, cap, nc + 1);
    cs[nc++] = c;
  }
  free(used);
  *out = cs;
  return nc;
}

void sweep_curves_free(sweep_curve *c, size_t n) {
  for (size_t i = 0; i < n; i++) free(c[i].row);
  free(c);
}
