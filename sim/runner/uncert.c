/* uncert.c: residual tables and prediction intervals (see uncert.h). */
#include "runner/uncert.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "config/cfg.h"
#include "config/jsonx.h"
#include "core/embed.h"
#include "core/rng.h"

const double unc_levels[UNC_NQ] = {0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 0.75, 0.9, 0.95, 0.975, 0.99};

const char *unc_metric_name(unc_metric m) {
  static const char *const n[UM_COUNT] = {"ttft", "tpot", "e2e", "ttft_p99", "throughput"};
  return (unsigned)m < UM_COUNT ? n[m] : "?";
}

void unc_table_init(unc_table *t, uint32_t min_points, uint32_t min_models) {
  memset(t, 0, sizeof *t);
  t->min_points = min_points;
  t->min_models = min_models;
}

void unc_table_free(unc_table *t) {
  free(t->e);
  t->e = NULL;
  t->n = t->cap = 0;
}

const unc_entry *unc_table_find(const unc_table *t, const char *key) {
  for (size_t i = 0; i < t->n; i++)
    if (!strcmp(t->e[i].key, key)) return &t->e[i];
  return NULL;
}

unc_entry *unc_table_entry(unc_table *t, const char *key) {
  for (size_t i = 0; i < t->n; i++)
    if (!strcmp(t->e[i].key, key)) return &t->e[i];
  SIM_GROW(t->e, t->cap, t->n + 1);
  unc_entry *e = &t->e[t->n++];
  memset(e, 0, sizeof *e);
  snprintf(e->key, sizeof e->key, "%s", key);
  return e;
}

static int cmp_d(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y ? 1 : 0;
}

void unc_dist_from(unc_dist *d, double *x, size_t n) {
  memset(d, 0, sizeof *d);
  d->n = n;
  if (!n) return;
  qsort(x, n, sizeof *x, cmp_d);
  for (int k = 0; k < UNC_NQ; k++) {
    double h = (double)(n - 1) * unc_levels[k];
    size_t lo = (size_t)floor(h), hi = lo + 1 < n ? lo + 1 : lo;
    d->q[k] = x[lo] + (h - (double)lo) * (x[hi] - x[lo]);
  }
}

double unc_quantile(const unc_dist *d, double p) {
  if (p <= unc_levels[0]) return d->q[0];
  for (int k = 1; k < UNC_NQ; k++)
    if (p <= unc_levels[k]) {
      double f = (p - unc_levels[k - 1]) / (unc_levels[k] - unc_levels[k - 1]);
      return d->q[k - 1] + f * (d->q[k] - d->q[k - 1]);
    }
  return d->q[UNC_NQ - 1];
}

const unc_dist *unc_lookup(const unc_table *t, const stratum *s, unc_metric m, const char **key) {
  char chain[4][32];
  int n = stratum_chain(s, chain);
  for (int i = 0; i < n; i++) {
    const unc_entry *e = unc_table_find(t, chain[i]);
    if (e && e->d[m].n > 0) {
      if (key) *key = e->key;
      return &e->d[m];
    }
  }
  if (key) *key = NULL;
  return NULL;
}

/* ---- reading ------------------------------------------------------------------------- */

static int parse_dist(const jx *j, const cJSON *o, const char *where, unc_dist *d) {
  static const char *const known[] = {"n", "models", "q", NULL};
  const cJSON *f[3];
  int rc = jx_keys(j, o, where, known, f);
  if (rc) return rc;
  if (!f[0] || !f[2]) return jx_fail(j, o, where, NULL, "expected \"n\" and \"q\"");
  uint32_t n = 0, models = 0;
  if ((rc = jx_u32(j, o, where, "n", &n, 1, 1e9, 0)) || (rc = jx_u32(j, o, where, "models", &models, 0, 1e9, 0)))
    return rc;
  d->n = n;
  d->models = models;
  if (!cJSON_IsArray(f[2]) || cJSON_GetArraySize(f[2]) != UNC_NQ)
    return jx_fail(j, f[2], where, "q", "expected an array of %d numbers (the quantiles at quantile_levels)", UNC_NQ);
  int k = 0;
  for (const cJSON *v = f[2]->child; v; v = v->next, k++) {
    if (!cJSON_IsNumber(v) || !isfinite(v->valuedouble))
      return jx_fail(j, v, where, "q", "element %d: expected a finite number, got %s", k, jx_type_name(v));
    d->q[k] = v->valuedouble;
    if (k && d->q[k] < d->q[k - 1]) return jx_fail(j, v, where, "q", "element %d: quantiles must not decrease", k);
  }
  return SIM_OK;
}

static int parse_stratum(const jx *j, const cJSON *o, unc_table *t) {
  char where[96];
  snprintf(where, sizeof where, "strata.%s", o->string);
  if (!cJSON_IsObject(o)) return jx_fail(j, o, "strata", o->string, "expected an object, got %s", jx_type_name(o));
  if (strlen(o->string) >= sizeof t->e[0].key) return jx_fail(j, o, "strata", o->string, "key too long");
  unc_entry *e = unc_table_entry(t, o->string);
  for (const cJSON *m = o->child; m; m = m->next) {
    int k = 0;
    while (k < UM_COUNT && strcmp(m->string, unc_metric_name((unc_metric)k))) k++;
    if (k == UM_COUNT)
      return jx_fail(j, m, where, m->string, "unknown metric (known: ttft, tpot, e2e, ttft_p99, throughput)");
    if (!cJSON_IsObject(m)) return jx_fail(j, m, where, m->string, "expected an object, got %s", jx_type_name(m));
    char w2[160];
    snprintf(w2, sizeof w2, "%s.%s", where, m->string);
    int rc = parse_dist(j, m, w2, &e->d[k]);
    if (rc) return rc;
  }
  return SIM_OK;
}

int unc_table_parse(unc_table *t, const char *text, const char *what, sim_err *err) {
  jx j;
  int rc = jx_parse(&j, text, what, err);
  if (rc) return rc;
  static const char *const known[] = {"what",       "command",         "data",   "rule", "min_points",
                                      "min_models", "quantile_levels", "strata", NULL};
  const cJSON *f[8];
  rc = jx_keys(&j, j.root, NULL, known, f);
  uint32_t minp = 0, minm = 0;
  const cJSON *levels = f[6], *strata = f[7];
  if (!rc && !levels) rc = jx_fail(&j, j.root, NULL, "quantile_levels", "missing");
  if (!rc && !strata) rc = jx_fail(&j, j.root, NULL, "strata", "missing");
  if (!rc) rc = jx_u32(&j, j.root, NULL, "min_points", &minp, 1, 1e9, 0);
  if (!rc) rc = jx_u32(&j, j.root, NULL, "min_models", &minm, 0, 1e9, 0);
  if (!rc) {
    int k = 0;
    if (!cJSON_IsArray(levels) || cJSON_GetArraySize(levels) != UNC_NQ)
      rc = jx_fail(&j, levels, NULL, "quantile_levels", "expected the %d levels 0.01 ... 0.99 this servesim reads",
                   UNC_NQ);
    for (const cJSON *v = rc ? NULL : levels->child; v && !rc; v = v->next, k++)
      if (!cJSON_IsNumber(v) || fabs(v->valuedouble - unc_levels[k]) > 1e-12)
        rc = jx_fail(&j, v, NULL, "quantile_levels", "element %d: expected %g", k, unc_levels[k]);
  }
  if (!rc && !cJSON_IsObject(strata)) rc = jx_fail(&j, strata, NULL, "strata", "expected an object");
  if (!rc) {
    unc_table_init(t, minp, minm);
    snprintf(t->source, sizeof t->source, "%s", what);
    for (const cJSON *s = strata->child; s && !rc; s = s->next) rc = parse_stratum(&j, s, t);
    if (rc) unc_table_free(t);
  }
  jx_free(&j);
  return rc;
}

int unc_table_load(unc_table *t, const char *path, sim_err *err) {
  static const char bundled[] = "configs/uncertainty/residuals.json";
  char *text = NULL;
  char what[1100];
  int rc;
  if (path) {
    size_t len;
    rc = sim_read_file(path, &text, &len, err);
    if (rc) return rc;
    snprintf(what, sizeof what, "%s", path);
  } else {
    const char *dd = getenv("SERVESIM_DATA_DIR");
    char p[1100];
    size_t len;
    sim_err ignore;
    if (dd && dd[0] && snprintf(p, sizeof p, "%s/uncertainty/residuals.json", dd) < (int)sizeof p &&
        sim_read_file(p, &text, &len, &ignore) == SIM_OK) {
      snprintf(what, sizeof what, "%s", p);
    } else {
      const sim_embedded_file *f = sim_embed_find(bundled);
      if (!f) return sim_errf(err, SIM_EINPUT, "no residual file: %s is not bundled (build from the source tree)", bundled);
      text = sim_strdup(f->data);
      snprintf(what, sizeof what, "%s (bundled)", bundled);
    }
  }
  rc = unc_table_parse(t, text, what, err);
  free(text);
  return rc;
}

/* ---- intervals ------------------------------------------------------------------------ */

static double sd_log(const double *v, size_t n) {
  if (n < 2) return 0;
  double m = 0;
  for (size_t i = 0; i < n; i++) m += log(v[i]);
  m /= (double)n;
  double ss = 0;
  for (size_t i = 0; i < n; i++) ss += (log(v[i]) - m) * (log(v[i]) - m);
  return sqrt(ss / (double)(n - 1));
}

void unc_combine(const unc_dist *d, const char *key, double point, const double *seeds, size_t n_seeds, double level,
                 unc_interval *out) {
  memset(out, 0, sizeof *out);
  out->level = level;
  out->point = point;
  out->lo = out->hi = out->model_lo = out->model_hi = NAN;
  out->n_seeds = n_seeds;
  bool finite = isfinite(point) && point > 0;
  for (size_t i = 0; i < n_seeds; i++) finite = finite && isfinite(seeds[i]) && seeds[i] > 0;
  out->workload_sd = finite ? sd_log(seeds, n_seeds) : NAN;
  if (!d || !d->n || !finite) return;
  snprintf(out->key, sizeof out->key, "%s", key ? key : "");
  out->have = true;
  out->n_model = d->n;
  double pl = (1 - level) / 2, ph = (1 + level) / 2;
  out->model_lo = exp(unc_quantile(d, pl));
  out->model_hi = exp(unc_quantile(d, ph));
  if (out->workload_sd <= 0) {
    out->lo = point * out->model_lo;
    out->hi = point * out->model_hi;
    return;
  }
  double *x = sim_malloc(UNC_DRAWS * sizeof *x);
  rng r;
  rng_seed(&r, UNC_MC_SEED);
  for (size_t i = 0; i < UNC_DRAWS; i++) {
    double u = rng_uniform(&r);
    x[i] = unc_quantile(d, u) + out->workload_sd * rng_normal(&r);
  }
  unc_dist all;
  unc_dist_from(&all, x, UNC_DRAWS); /* sorts x */
  double hl = (UNC_DRAWS - 1) * pl, hh = (UNC_DRAWS - 1) * ph;
  size_t il = (size_t)floor(hl), ih = (size_t)floor(hh);
  double ql = x[il] + (hl - (double)il) * (x[il + 1 < UNC_DRAWS ? il + 1 : il] - x[il]);
  double qh = x[ih] + (hh - (double)ih) * (x[ih + 1 < UNC_DRAWS ? ih + 1 : ih] - x[ih]);
  out->lo = point * exp(ql);
  out->hi = point * exp(qh);
  free(x);
}

/* ---- a run's figures ---------------------------------------------------------------- */

static const struct {
  const char *key, *label, *unit;
  int metric;
} FIG[UF_COUNT] = {
    {"mean_ttft_ms", "mean TTFT", "ms", UM_TTFT},   {"p99_ttft_ms", "p99 TTFT", "ms", UM_TTFT_P99},
    {"mean_tpot_ms", "mean TPOT", "ms", UM_TPOT},   {"p99_tpot_ms", "p99 TPOT", "ms", -1},
    {"mean_e2el_ms", "mean E2E", "ms", UM_E2E},     {"p99_e2el_ms", "p99 E2E", "ms", -1},
    {"output_throughput", "output throughput", "tok/s", UM_TPUT},
};

const char *unc_fig_key(unc_fig f) { return (unsigned)f < UF_COUNT ? FIG[f].key : "?"; }
const char *unc_fig_label(unc_fig f) { return (unsigned)f < UF_COUNT ? FIG[f].label : "?"; }
const char *unc_fig_unit(unc_fig f) { return (unsigned)f < UF_COUNT ? FIG[f].unit : "?"; }
int unc_fig_metric(unc_fig f) { return (unsigned)f < UF_COUNT ? FIG[f].metric : -1; }
