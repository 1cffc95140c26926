/* slo.c: SLO specs and their check over all requests of a run (see slo.h). */
#include "plan/slo.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *slo_metric_name(slo_metric m) {
  static const char *const n[SLO_METRICS] = {"ttft", "tpot", "e2el"};
  return (unsigned)m < SLO_METRICS ? n[m] : "?";
}

int slo_add_kv(slo_set *s, const char *key, double limit_ms, const char *what, sim_err *err) {
  const char *us = strchr(key, '_');
  slo_item it;
  memset(&it, 0, sizeof it);
  bool metric_ok = false;
  if (us) {
    for (int m = 0; m < SLO_METRICS; m++)
      if ((size_t)(us - key) == strlen(slo_metric_name((slo_metric)m)) &&
          !strncmp(key, slo_metric_name((slo_metric)m), (size_t)(us - key)))
        it.metric = (slo_metric)m, metric_ok = true;
  }
  if (!metric_ok)
    return sim_errf(err, SIM_EINPUT, "%s: unknown objective '%s' (expected ttft_, tpot_ or e2el_ followed by pNN or mean, "
                    "e.g. ttft_p99)", what, key);
  const char *st = us + 1;
  if (!strcmp(st, "mean")) {
    it.pct = -1;
  } else {
    double p;
    if (st[0] != 'p' || !sim_parse_double(st + 1, &p) || !(p > 0 && p <= 100))
      return sim_errf(err, SIM_EINPUT, "%s: '%s': the statistic must be mean or pNN with 0 < NN <= 100 (e.g. p99)", what,
                      key);
    it.pct = p;
  }
  if (!(limit_ms > 0) || !isfinite(limit_ms))
    return sim_errf(err, SIM_EINPUT, "%s: '%s': the limit must be a positive number of milliseconds", what, key);
  if (strlen(key) >= sizeof it.key) return sim_errf(err, SIM_EINPUT, "%s: '%s': key too long", what, key);
  snprintf(it.key, sizeof it.key, "%s", key);
  it.limit_ms = limit_ms;
  for (int i = 0; i < s->n; i++)
    if (!strcmp(s->it[i].key, key)) {
      s->it[i] = it;
      return 0;
    }
  if (s->n >= SLO_MAX) return sim_errf(err, SIM_EINPUT, "%s: at most %d objectives", what, SLO_MAX);
  s->it[s->n++] = it;
  return 0;
}

int slo_add(slo_set *s, const char *spec, const char *what, sim_err *err) {
  const char *eq = strchr(spec, '=');
  char key[64];
  double v;
  if (!eq || (size_t)(eq - spec) >= sizeof key || eq == spec || !sim_parse_double(eq + 1, &v))
    return sim_errf(err, SIM_EINPUT, "%s: expected KEY=MS such as ttft_p99=2000, got '%s'", what, spec);
  memcpy(key, spec, (size_t)(eq - spec));
  key[eq - spec] = 0;
  return slo_add_kv(s, key, v, what, err);
}

/* numpy linear percentile of sorted v; +infinity absorbs (never NaN). */
static double pct_sorted(const double *v, size_t n, double p) {
  if (!n) return 0;
  double pos = p / 100.0 * (double)(n - 1);
  size_t lo = (size_t)floor(pos);
  double fr = pos - (double)lo;
  if (lo + 1 >= n || fr == 0) return v[lo];
  if (isinf(v[lo + 1])) return INFINITY;
  return v[lo] + (v[lo + 1] - v[lo]) * fr;
}

void slo_eval(const run_result *r, const slo_set *s, slo_result *out) {
  memset(out, 0, sizeof *out);
  out->n = s->n;
  out->first_fail = -1;
  out->all_ok = true;
  size_t n = r->n_reqs;
  const run_record *q = r->reqs;
  for (size_t i = 0; i < n; i++)
    if (q[i].outcome != REQ_FINISHED) out->unfinished++;
  if (!s->n) return;
  double *v = sim_malloc((n + 1) * sizeof *v);
  for (int k = 0; k < s->n; k++) {
    const slo_item *it = &s->it[k];
    size_t m = 0;
    for (size_t i = 0; i < n; i++) {
      const run_record *x = &q[i];
      bool done = x->outcome == REQ_FINISHED;
      double ttft = x->generated >= 1 ? run_record_ttft_ms(x) : INFINITY;
      double e2el = done ? run_record_e2el_ms(x) : INFINITY;
      switch (it->metric) {
        case SLO_TTFT: v[m++] = ttft; break;
        case SLO_E2EL: v[m++] = e2el; break;
        case SLO_TPOT:
          if (x->output_tokens <= 1) break; /* no TPOT, like vLLM */
          v[m++] = done ? (e2el - ttft) / (double)(x->generated - 1) : INFINITY;
          break;
        default: break;
      }
    }
    double val;
    if (it->pct < 0) {
      double sum = 0;
      for (size_t i = 0; i < m; i++) sum += v[i];
      val = m ? sum / (double)m : 0;
    } else {
      sim_sort_doubles(v, m);
      val = pct_sorted(v, m, it->pct);
    }
    out->value_ms[k] = val;
    out->ok[k] = val <= it->limit_ms;
    if (!out->ok[k]) {
      out->all_ok = false;
      if (out->first_fail < 0) out->first_fail = k;
    }
  }
  free(v);
}

void slo_describe(const slo_set *s, char *buf, size_t n) {
  size_t o = 0;
  buf[0] = 0;
  for (int i = 0; i < s->n && o < n; i++)
    o += (size_t)snprintf(buf + o, n - o, "%s%s <= %g ms", i ? ", " : "", s->it[i].key, s->it[i].limit_ms);
  if (!s->n) snprintf(buf, n, "none");
}

double slo_limit(const slo_set *s, slo_metric m) {
  for (int i = 0; i < s->n; i++)
    if (s->it[i].metric == m) return s->it[i].limit_ms;
  return -1;
}
