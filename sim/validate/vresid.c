/* vresid.c: residual tables from the validation set and their leave-one-model-out calibration (see vresid.h). */
#include "validate/vresid.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/rng.h"
#include "metrics/metrics.h"

const double vcal_levels[VCAL_LEVELS] = {0.5, 0.8, 0.95};

/* The value of metric m at p, measured (which 0) or predicted (1); NAN when it has none. */
static double value(const vpoint *p, unc_metric m, int which) {
  const double *v = which ? p->pred : p->meas;
  switch (m) {
  case UM_TTFT: return v[VM_TTFT];
  case UM_TPOT: return v[VM_TPOT];
  case UM_TTFT_P99: return v[VM_TTFT_P99];
  case UM_TPUT: return v[VM_TPUT];
  case UM_E2E:
    if (p->shape == VSHAPE_STAGED) return v[VM_E2E];
    if (p->shape == VSHAPE_CLOSED || p->shape == VSHAPE_STATIC)
      return v[VM_TTFT] + (p->osl > 0 ? p->osl - 1.0 : 0.0) * v[VM_TPOT];
    return NAN;
  default: return NAN;
  }
}

double vresid_residual(const vpoint *p, unc_metric m) {
  if (!p->ran || p->skip[0] || p->fail[0] || !p->stratum[0]) return NAN;
  double a = value(p, m, 0), b = value(p, m, 1);
  if (!isfinite(a) || !isfinite(b) || a <= 0 || b <= 0) return NAN;
  return log(a / b);
}

static bool in_table(const vpoint *p, const char *skip_model) {
  if (p->train || !p->ran || !p->stratum[0]) return false;
  if (!skip_model) return true;
  char k[96];
  vgroup_key(p, VG_MODEL, k, sizeof k);
  return strcmp(k, skip_model) != 0;
}

/* The quantiles a new model's residual would fall at, by a one-way random-effects view of the points (vresid.h):
 * r = mu + b + e, b the model's shift (normal, spread sb over models), e the within-model error (each model's
 * residuals less their mean, every model weighing 1). With k models seen, a new model's shift is mu_hat +
 * sb_hat sqrt(1 + 1/k) T, T Student's t with k - 1 degrees of freedom (the standard prediction of a new group's
 * mean); e is drawn from the pooled within-model errors: a model picked uniformly, then one of its points.
 * Quantiles over VRESID_DRAWS draws of a fixed seed (the same table every time). x[i] of model mid[i]
 * (0 .. k-1), cnt[j] points of model j. */
static void random_effect_dist(unc_dist *d, const double *x, const size_t *mid, const size_t *cnt, size_t n, size_t k) {
  double *shift = sim_calloc(k, sizeof *shift), mu = 0, ss = 0;
  size_t *first = sim_calloc(k + 1, sizeof *first), *order = sim_malloc(n * sizeof *order);
  for (size_t i = 0; i < n; i++) shift[mid[i]] += x[i] / (double)cnt[mid[i]];
  for (size_t j = 0; j < k; j++) mu += shift[j] / (double)k;
  for (size_t j = 0; j < k; j++) ss += (shift[j] - mu) * (shift[j] - mu);
  double sb = k > 1 ? sqrt(ss / (double)(k - 1)) : 0, nu = k > 1 ? (double)(k - 1) : 1;
  for (size_t j = 0; j < k; j++) first[j + 1] = first[j] + cnt[j]; /* points of model j: order[first[j] ..) */
  size_t *fill = sim_calloc(k, sizeof *fill);
  for (size_t i = 0; i < n; i++) order[first[mid[i]] + fill[mid[i]]++] = i;
  double *y = sim_malloc(VRESID_DRAWS * sizeof *y);
  rng r;
  rng_seed(&r, VRESID_SEED);
  for (size_t t = 0; t < VRESID_DRAWS; t++) {
    double chi = 0;
    for (int v = 0; v < (int)nu; v++) {
      double z = rng_normal(&r);
      chi += z * z;
    }
    double student = rng_normal(&r) / sqrt(chi / nu);
    size_t j = (size_t)rng_below(&r, k), i = order[first[j] + (size_t)rng_below(&r, cnt[j])];
    y[t] = mu + sb * sqrt(1 + 1.0 / (double)k) * student + (x[i] - shift[j]);
  }
  unc_dist_from(d, y, VRESID_DRAWS);
  d->n = n;
  free(y);
  free(fill);
  free(order);
  free(first);
  free(shift);
}

void vresid_build(const vset *s, uint32_t min_points, uint32_t min_models, const char *skip_model, unc_table *t) {
  unc_table_init(t, min_points, min_models);
  /* every key of every point's chain, then per key and metric the residuals of the points whose chain holds it */
  char (*keys)[32] = NULL;
  size_t nk = 0, capk = 0;
  for (size_t i = 0; i < s->n; i++) {
    const vpoint *p = &s->pts[i];
    stratum st;
    if (!in_table(p, skip_model) || !stratum_parse(p->stratum, &st)) continue;
    char chain[4][32];
    int nc = stratum_chain(&st, chain);
    for (int c = 0; c < nc; c++) {
      size_t k = 0;
      while (k < nk && strcmp(keys[k], chain[c])) k++;
      if (k == nk) {
        SIM_GROW(keys, capk, nk + 1);
        memcpy(keys[nk++], chain[c], 32);
      }
    }
  }
  qsort(keys, nk, sizeof *keys, (int (*)(const void *, const void *))strcmp);
  double *x = sim_malloc((s->n ? s->n : 1) * sizeof *x);
  size_t *mid = sim_malloc((s->n ? s->n : 1) * sizeof *mid), *cnt = sim_malloc((s->n ? s->n : 1) * sizeof *cnt);
  char (*mk)[96] = sim_malloc((s->n ? s->n : 1) * sizeof *mk);
  for (size_t k = 0; k < nk; k++) {
    unc_entry e;
    memset(&e, 0, sizeof e);
    bool any = false;
    for (int m = 0; m < UM_COUNT; m++) {
      size_t n = 0, nmod = 0;
      for (size_t i = 0; i < s->n; i++) {
        const vpoint *p = &s->pts[i];
        stratum st;
        if (!in_table(p, skip_model) || !stratum_parse(p->stratum, &st)) continue;
        char chain[4][32];
        int nc = stratum_chain(&st, chain), c = 0;
        while (c < nc && strcmp(chain[c], keys[k])) c++;
        double r = vresid_residual(p, (unc_metric)m);
        if (c == nc || !isfinite(r)) continue;
        char mod[96];
        vgroup_key(p, VG_MODEL, mod, sizeof mod);
        size_t j = 0;
        while (j < nmod && strcmp(mk[j], mod)) j++;
        if (j == nmod) memcpy(mk[nmod], mod, sizeof mod), cnt[nmod++] = 0;
        cnt[j]++;
        mid[n] = j;
        x[n++] = r;
      }
      if (n >= min_points && n > 0 && nmod >= min_models) {
        random_effect_dist(&e.d[m], x, mid, cnt, n, nmod);
        e.d[m].models = nmod;
        any = true;
      }
    }
    if (any) {
      unc_entry *d = unc_table_entry(t, keys[k]);
      memcpy(d->d, e.d, sizeof e.d);
    }
  }
  free(x);
  free(mid);
  free(cnt);
  free(mk);
  free(keys);
}

/* "aic_silicon_x.csv" from "../shared/validation/aic_silicon_x.csv:12": the part after the last "validation/",
 * else the base name; the line number dropped. */
static void data_file(const char *where, char *out, size_t n) {
  const char *v = NULL, *q = where;
  while ((q = strstr(q, "validation/"))) v = q += strlen("validation/");
  const char *b = v ? v : strrchr(where, '/') ? strrchr(where, '/') + 1 : where;
  vfmt(out, n, "%s", b);
  char *c = strrchr(out, ':');
  if (c && c[1] >= '0' && c[1] <= '9') *c = 0;
}

typedef struct dfile {
  char name[256];
  size_t rows, residual_points;
} dfile;

int vresid_write(const vset *s, const unc_table *t, const char *command, FILE *f, sim_err *err) {
  dfile *df = NULL;
  size_t nf = 0, cap = 0, used = 0, predicted = 0;
  for (size_t i = 0; i < s->n; i++) {
    const vpoint *p = &s->pts[i];
    char name[256];
    data_file(p->where, name, sizeof name);
    size_t k = 0;
    while (k < nf && strcmp(df[k].name, name)) k++;
    if (k == nf) {
      SIM_GROW(df, cap, nf + 1);
      memset(&df[nf], 0, sizeof df[nf]);
      vfmt(df[nf++].name, sizeof df[0].name, "%s", name);
    }
    df[k].rows++;
    predicted += p->ran;
    bool any = false;
    for (int m = 0; m < UM_COUNT && in_table(p, NULL); m++) any |= isfinite(vresid_residual(p, (unc_metric)m));
    df[k].residual_points += any;
    used += any;
  }
  jw jj, *j = &jj;
  jw_begin(j, f);
  jw_str(j, "what",
         "quantiles of ln(measured / predicted) of servesim's predictions over the held-out validation points, per "
         "stratum (cost source / loop / arch) and metric; docs/UNCERTAINTY.md");
  jw_str(j, "command", command);
  jw_obj(j, "data");
  jw_u64(j, "rows", s->n);
  jw_u64(j, "predicted", predicted);
  jw_u64(j, "held_out_points_with_residuals", used);
  jw_arr(j, "files");
  for (size_t k = 0; k < nf; k++) {
    jw_obj(j, NULL);
    jw_str(j, "file", df[k].name);
    jw_u64(j, "rows", df[k].rows);
    jw_u64(j, "held_out_points_with_residuals", df[k].residual_points);
    jw_end(j);
  }
  jw_end(j);
  jw_end(j);
  jw_str(j, "rule",
         "a key holds a metric when at least min_points held-out residuals from at least min_models models fall "
         "under it; a run looks its "
         "stratum up along <cost>/<loop>/<arch>, <cost>/<loop>/*, */<loop>/*, */*/* and takes the first key "
         "holding the metric; its quantiles are those of a new model's residual by a random-effects view: the mean "
         "of the models' mean shifts + their spread x sqrt(1 + 1/k) x Student's t (k - 1 degrees of freedom, k "
         "models) + a within-model error drawn from the pooled ones, each model weighing 1 (docs/UNCERTAINTY.md)");
  jw_u64(j, "min_points", t->min_points);
  jw_u64(j, "min_models", t->min_models);
  jw_arr_flow(j, "quantile_levels", 0);
  for (int k = 0; k < UNC_NQ; k++) jw_num(j, NULL, unc_levels[k]);
  jw_end(j);
  jw_obj(j, "strata");
  for (size_t i = 0; i < t->n; i++) {
    jw_obj(j, t->e[i].key);
    for (int m = 0; m < UM_COUNT; m++) {
      const unc_dist *d = &t->e[i].d[m];
      if (!d->n) continue;
      jw_obj(j, unc_metric_name((unc_metric)m));
      jw_u64(j, "n", d->n);
      jw_u64(j, "models", d->models);
      jw_arr_flow(j, "q", 0);
      for (int k = 0; k < UNC_NQ; k++) jw_sig(j, NULL, d->q[k], 6);
      jw_end(j);
      jw_end(j);
    }
    jw_end(j);
  }
  jw_end(j);
  free(df);
  return jw_finish(j, err);
}

/* ---- calibration ------------------------------------------------------------------------ */

static const unc_metric CAL_METRIC[VCAL_METRICS] = {UM_TTFT, UM_TPOT};

typedef struct cal_acc {
  char key[32];
  size_t n[VCAL_METRICS], in[VCAL_METRICS][VCAL_LEVELS];
  double *w[VCAL_METRICS];
  size_t nw[VCAL_METRICS];
} cal_acc;

static cal_acc *acc_of(cal_acc **a, size_t *n, size_t *cap, const char *key, size_t maxw) {
  for (size_t i = 0; i < *n; i++)
    if (!strcmp((*a)[i].key, key)) return &(*a)[i];
  SIM_GROW(*a, *cap, *n + 1);
  cal_acc *x = &(*a)[(*n)++];
  memset(x, 0, sizeof *x);
  vfmt(x->key, sizeof x->key, "%s", key);
  for (int m = 0; m < VCAL_METRICS; m++) x->w[m] = sim_malloc((maxw ? maxw : 1) * sizeof(double));
  return x;
}

static int cmp_acc(const void *a, const void *b) {
  const cal_acc *x = a, *y = b;
  bool xa = !strcmp(x->key, "all"), ya = !strcmp(y->key, "all");
  if (xa != ya) return xa ? -1 : 1;
  return strcmp(x->key, y->key);
}

void vcal_compute(const vset *s, uint32_t min_points, uint32_t min_models, vcal *out) {
  memset(out, 0, sizeof *out);
  unc_table full;
  vresid_build(s, min_points, min_models, NULL, &full);
  char (*models)[96] = NULL;
  size_t nm = 0, capm = 0;
  for (size_t i = 0; i < s->n; i++) {
    if (!in_table(&s->pts[i], NULL)) continue;
    char k[96];
    vgroup_key(&s->pts[i], VG_MODEL, k, sizeof k);
    size_t j = 0;
    while (j < nm && strcmp(models[j], k)) j++;
    if (j == nm) {
      SIM_GROW(models, capm, nm + 1);
      memcpy(models[nm++], k, 96);
    }
  }
  out->groups = nm;
  cal_acc *acc = NULL;
  size_t na = 0, capa = 0;
  acc_of(&acc, &na, &capa, "all", s->n);
  for (size_t g = 0; g < nm; g++) {
    unc_table fold;
    vresid_build(s, min_points, min_models, models[g], &fold);
    for (size_t i = 0; i < s->n; i++) {
      const vpoint *p = &s->pts[i];
      char k[96];
      stratum st;
      if (!in_table(p, NULL) || !stratum_parse(p->stratum, &st)) continue;
      vgroup_key(p, VG_MODEL, k, sizeof k);
      if (strcmp(k, models[g])) continue;
      for (int m = 0; m < VCAL_METRICS; m++) {
        double r = vresid_residual(p, CAL_METRIC[m]);
        if (!isfinite(r)) continue;
        const char *fkey = NULL;
        const unc_dist *d = unc_lookup(&fold, &st, CAL_METRIC[m], NULL);
        if (!d || !unc_lookup(&full, &st, CAL_METRIC[m], &fkey)) {
          out->no_interval[m]++;
          continue;
        }
        cal_acc *as[2] = {&acc[0], acc_of(&acc, &na, &capa, fkey, s->n)};
        as[0] = &acc[0]; /* acc may have moved */
        for (int a = 0; a < 2; a++) {
          cal_acc *x = as[a];
          x->n[m]++;
          for (int l = 0; l < VCAL_LEVELS; l++) {
            double lo = unc_quantile(d, (1 - vcal_levels[l]) / 2), hi = unc_quantile(d, (1 + vcal_levels[l]) / 2);
            if (r >= lo && r <= hi) x->in[m][l]++;
          }
          x->w[m][x->nw[m]++] = exp(unc_quantile(d, 0.9)) - exp(unc_quantile(d, 0.1));
        }
      }
    }
    unc_table_free(&fold);
  }
  qsort(acc, na, sizeof *acc, cmp_acc);
  out->rows = sim_calloc(na ? na : 1, sizeof *out->rows);
  out->n = na;
  for (size_t i = 0; i < na; i++) {
    vcal_row *r = &out->rows[i];
    vfmt(r->key, sizeof r->key, "%s", acc[i].key);
    for (int m = 0; m < VCAL_METRICS; m++) {
      r->n[m] = acc[i].n[m];
      memcpy(r->in[m], acc[i].in[m], sizeof r->in[m]);
      r->width80[m] = NAN;
      if (acc[i].nw[m]) {
        dist_stats ds;
        metrics_dist(acc[i].w[m], acc[i].nw[m], &ds);
        r->width80[m] = ds.median;
      }
      free(acc[i].w[m]);
    }
  }
  free(acc);
  free(models);
  unc_table_free(&full);
}

void vcal_free(vcal *c) {
  free(c->rows);
  c->rows = NULL;
  c->n = 0;
}

static const char *verdict(const vcal_row *r, int m, uint32_t minp) {
  if (r->n[m] < minp) return "too few";
  double c = (double)r->in[m][1] / (double)r->n[m];
  return c >= 0.7 && c <= 0.9 ? "met" : "MISSED";
}

void vcal_text(const vcal *c, uint32_t minp, FILE *f) {
  fprintf(f, "\nCalibration (leave one model out, %zu models; held-out points; the model part of the interval):\n",
          c->groups);
  fprintf(f, "  %-22s %-5s %5s %6s %6s %6s %9s  %s\n", "stratum", "metric", "n", "50%", "80%", "95%", "width80",
          "80% in 70-90%");
  for (size_t i = 0; i < c->n; i++) {
    const vcal_row *r = &c->rows[i];
    for (int m = 0; m < VCAL_METRICS; m++) {
      if (!r->n[m]) continue;
      double n = (double)r->n[m];
      fprintf(f, "  %-22s %-5s %5zu %5.1f%% %5.1f%% %5.1f%% %8.1f%%  %s\n", m ? "" : r->key,
              unc_metric_name(CAL_METRIC[m]), r->n[m], 100 * r->in[m][0] / n, 100 * r->in[m][1] / n,
              100 * r->in[m][2] / n, 100 * r->width80[m], verdict(r, m, minp));
    }
  }
  if (c->no_interval[0] || c->no_interval[1])
    fprintf(f, "  without an interval (no data in their fold): ttft %zu, tpot %zu\n", c->no_interval[0],
            c->no_interval[1]);
  fprintf(f, "  width80: median of (hi - lo) / predicted of the 80%% interval; a stratum is judged with >= %u points\n",
          minp);
}

void vcal_json(const vcal *c, uint32_t minp, jw *j) {
  jw_obj(j, "calibration");
  jw_str(j, "groups", "model (leave one out)");
  jw_u64(j, "n_groups", c->groups);
  jw_u64(j, "min_points", minp);
  jw_arr_flow(j, "levels", 0);
  for (int l = 0; l < VCAL_LEVELS; l++) jw_num(j, NULL, vcal_levels[l]);
  jw_end(j);
  jw_obj(j, "strata");
  for (size_t i = 0; i < c->n; i++) {
    const vcal_row *r = &c->rows[i];
    jw_obj(j, r->key);
    for (int m = 0; m < VCAL_METRICS; m++) {
      jw_obj(j, unc_metric_name(CAL_METRIC[m]));
      jw_u64(j, "n", r->n[m]);
      jw_arr_flow(j, "coverage", 0);
      for (int l = 0; l < VCAL_LEVELS; l++) jw_num(j, NULL, r->n[m] ? (double)r->in[m][l] / (double)r->n[m] : NAN);
      jw_end(j);
      jw_num(j, "median_width80", r->width80[m]);
      jw_str(j, "verdict_80", verdict(r, m, minp));
      jw_end(j);
    }
    jw_end(j);
  }
  jw_end(j);
  jw_end(j);
}
