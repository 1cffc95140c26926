/* plan_iv.c: the studies' intervals and confidence factors (see plan_iv.h). */
#include "plan/plan_iv.h"

#include <math.h>
#include <string.h>

#include "runner/intervals.h"

int plan_iv_load(plan_iv *iv, double level, const char *path, bool need, sim_err *err) {
  memset(iv, 0, sizeof *iv);
  iv->level = level;
  if (level <= 0 && !need) return SIM_OK;
  int rc = unc_table_load(&iv->t, path, err);
  if (rc) return path ? sim_err_prefix(err, "--residuals") : rc;
  iv->loaded = true;
  iv->on = level > 0;
  return SIM_OK;
}

void plan_iv_free(plan_iv *iv) {
  if (iv->loaded) unc_table_free(&iv->t);
  iv->on = iv->loaded = false;
}

void plan_iv_fig(const plan_iv *iv, const stratum *st, const metrics_summary *m, unc_fig f, unc_interval *out) {
  double x = runner_fig_value(m, f);
  int um = unc_fig_metric(f);
  const char *key = NULL;
  const unc_dist *d = iv->on && um >= 0 ? unc_lookup(&iv->t, st, (unc_metric)um, &key) : NULL;
  unc_combine(d, key, x, &x, 1, iv->level, out);
}

unc_metric plan_iv_slo_metric(slo_metric sm) { return sm == SLO_TPOT ? UM_TPOT : sm == SLO_E2EL ? UM_E2E : UM_TTFT; }

void plan_iv_slo(const plan_iv *iv, const stratum *st, slo_metric sm, double value, unc_interval *out) {
  const char *key = NULL;
  const unc_dist *d = iv->on ? unc_lookup(&iv->t, st, plan_iv_slo_metric(sm), &key) : NULL;
  unc_combine(d, key, value, &value, 1, iv->level, out);
}

double plan_iv_factor(const unc_table *t, const stratum *st, slo_metric sm, double p, char *key) {
  const char *k = NULL;
  const unc_dist *d = unc_lookup(t, st, plan_iv_slo_metric(sm), &k);
  snprintf(key, 32, "%s", d && k ? k : "");
  return d ? exp(unc_quantile(d, p)) : 1.0;
}

void plan_iv_text(const unc_interval *it, const char *fmt, char *buf, size_t n) {
  buf[0] = 0;
  if (!(it->level > 0)) return;
  int pct = (int)lround(100 * it->level);
  if (!it->have) {
    snprintf(buf, n, " [%d%%: no validation data]", pct);
    return;
  }
  char lo[48], hi[48];
  snprintf(lo, sizeof lo, fmt, it->lo);
  snprintf(hi, sizeof hi, fmt, it->hi);
  snprintf(buf, n, " [%d%%: %s - %s]", pct, lo, hi);
}

void plan_iv_json(jw *j, const plan_iv *iv, const stratum *st, const metrics_summary *m) {
  if (!iv->on) return;
  char key[32];
  stratum_key(st, key, sizeof key);
  jw_obj(j, "intervals");
  jw_num(j, "level", iv->level);
  jw_str(j, "stratum", key);
  jw_str(j, "residuals", iv->t.source);
  jw_obj(j, "figures");
  for (int f = 0; f < UF_COUNT; f++) {
    unc_interval it;
    plan_iv_fig(iv, st, m, (unc_fig)f, &it);
    jw_obj(j, unc_fig_key((unc_fig)f));
    jw_num(j, "point", it.point);
    if (it.have) {
      jw_num(j, "lo", it.lo);
      jw_num(j, "hi", it.hi);
      jw_str(j, "residuals_key", it.key);
    } else {
      jw_null(j, "lo");
      jw_null(j, "hi");
      jw_null(j, "residuals_key");
    }
    jw_end(j);
  }
  jw_end(j);
  jw_end(j);
}
