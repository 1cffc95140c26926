/* vstats.c: errors and their summaries, what every report writer reads (vreport.c: text; vreport_json.c: JSON
 * and CSV).
 *
 * Error of a metric: 100 x (predicted - measured) / measured, signed; the
 * summaries use its absolute value: median (numpy linear interpolation, like
 * metrics_percentile_sorted at 50) and mean over the points that have both
 * values, and the worst point. Points that failed to run have no prediction
 * and no error. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "metrics/metrics.h"
#include "validate/validate.h"

double verr_pct(const vpoint *p, vmetric m) {
  double a = p->meas[m], b = p->pred[m];
  if (!isfinite(a) || !isfinite(b) || a <= 0 || p->skip[0] || p->fail[0] || !p->ran) return NAN;
  return 100.0 * (b - a) / a;
}

bool vfilter_closed(const vpoint *p, const void *arg) {
  (void)arg;
  return p->shape == VSHAPE_CLOSED;
}

bool vfilter_shape(const vpoint *p, const void *arg) { return p->shape == *(const vshape *)arg; }

bool vfilter_train(const vpoint *p, const void *arg) { return p->train == *(const bool *)arg; }

bool vfilter_held_out(const vpoint *p, const void *arg) {
  (void)arg;
  return !p->train;
}

bool vfilter_staged(const vpoint *p, const void *arg) {
  (void)arg;
  return p->shape == VSHAPE_STAGED;
}

void vkept_count(const vset *s, vkept *out) {
  memset(out, 0, sizeof *out);
  for (size_t i = 0; i < s->n; i++) {
    const vpoint *p = &s->pts[i];
    if (p->shape != VSHAPE_STAGED) continue;
    if (!p->ran || !p->staged) {
      out->unclassified++;
      continue;
    }
    bool m = p->staged->meas.kept_up, pr = p->staged->pred.kept_up;
    if (m && pr) out->both_up++;
    else if (!m && !pr) out->both_over++;
    else if (m) out->false_over++;
    else out->missed_over++;
  }
}

const vmetric vmetrics_base[3] = {VM_TTFT, VM_TPOT, VM_TPUT};
const vmetric vmetrics_stage[4] = {VM_TTFT, VM_TTFT_MED, VM_TTFT_P99, VM_E2E};
const vmetric vmetrics_all[6] = {VM_TTFT, VM_TPOT, VM_TPUT, VM_TTFT_MED, VM_TTFT_P99, VM_E2E};

void verr_summarize(const vset *s, vmetric m, vfilter f, const void *arg, verr_stats *out) {
  memset(out, 0, sizeof *out);
  out->median_abs = out->mean_abs = out->median_signed = out->worst_abs = NAN;
  double *a = sim_malloc((s->n ? s->n : 1) * sizeof *a), *sg = sim_malloc((s->n ? s->n : 1) * sizeof *sg);
  size_t n = 0;
  double sum = 0;
  for (size_t i = 0; i < s->n; i++) {
    const vpoint *p = &s->pts[i];
    if (f && !f(p, arg)) continue;
    double e = verr_pct(p, m);
    if (isnan(e)) continue;
    sg[n] = e;
    a[n] = fabs(e);
    sum += a[n];
    if (!out->worst || a[n] > out->worst_abs) out->worst = p, out->worst_abs = a[n];
    n++;
  }
  out->n = n;
  if (n) {
    dist_stats d;
    metrics_dist(a, n, &d);
    out->median_abs = d.median;
    out->mean_abs = sum / n;
    metrics_dist(sg, n, &d);
    out->median_signed = d.median;
  }
  free(a);
  free(sg);
}

/* The closed-loop point of the same series with the next lower concurrency, or NULL. */
static const vpoint *lower_neighbour(const vset *s, const vpoint *p) {
  const vpoint *b = NULL;
  for (size_t k = 0; k < s->n; k++) {
    const vpoint *q = &s->pts[k];
    if (q->shape != VSHAPE_CLOSED || q->skip[0] || strcmp(q->group, p->group) || q->concurrency >= p->concurrency)
      continue;
    if (!b || q->concurrency > b->concurrency) b = q;
  }
  return b;
}

/* On the cliff (which = 0 measured, 1 predicted): the TTFT jumps by more than
 * VAL_CLIFF_FACTOR from the next lower concurrency, or that point already is
 * on the cliff. Returns -1 when it cannot be told (lowest concurrency of the
 * series, or a TTFT missing along the way). */
static int on_cliff(const vset *s, const vpoint *p, int which) {
  const vpoint *b = lower_neighbour(s, p);
  if (!b) return -1;
  double a = which ? p->pred[VM_TTFT] : p->meas[VM_TTFT], z = which ? b->pred[VM_TTFT] : b->meas[VM_TTFT];
  if (!isfinite(a) || !isfinite(z) || (which && (!p->ran || !b->ran))) return -1;
  if (a > VAL_CLIFF_FACTOR * z) return 1;
  int below = on_cliff(s, b, which);
  return below < 0 ? 0 : below;
}

void vcliff_count(const vset *s, vfilter f, const void *arg, vcliff *out, uint8_t *side) {
  memset(out, 0, sizeof *out);
  for (size_t i = 0; i < s->n; i++) {
    const vpoint *p = &s->pts[i];
    if (side) side[i] = 0;
    if (p->shape != VSHAPE_CLOSED || p->skip[0] || (f && !f(p, arg))) continue;
    int m = on_cliff(s, p, 0), pr = on_cliff(s, p, 1);
    if (m < 0 || pr < 0) {
      out->unclassified++;
      continue;
    }
    if (side) side[i] = (uint8_t)(4 | (m ? 1 : 0) | (pr ? 2 : 0));
    if (m && pr) out->tp++;
    else if (!m && !pr) out->tn++;
    else if (pr) out->fp++;
    else out->fn++;
  }
}


/* ---- group keys -------------------------------------------------------------------- */

void vgroup_key(const vpoint *p, vgroup_by g, char *buf, size_t n) {
  switch (g) {
  case VG_SOURCE: vfmt(buf, n, "%s", vsource_name(p->src)); break;
  case VG_GPU: vfmt(buf, n, "%s", p->gpu[0] ? p->gpu : "?"); break;
  case VG_ENGINE: vfmt(buf, n, "%s", p->engine[0] ? p->engine : "?"); break;
  case VG_TP: vfmt(buf, n, "tp%u", p->tp); break;
  case VG_SHAPE: vfmt(buf, n, "%s", vshape_name(p->shape)); break;
  case VG_MODEL: {
    const char *b = strrchr(p->model, '/'), *m = b ? b + 1 : p->model;
    size_t len = strlen(m);
    if (len > 5 && !strcmp(m + len - 5, ".json")) len -= 5;
    vfmt(buf, n, "%.*s", (int)len, len ? m : "?");
    break;
  }
  case VG_VERSION:
    vfmt(buf, n, "%s@%s", p->engine[0] ? p->engine : "?", p->engine_version[0] ? p->engine_version : "default");
    break;
  case VG_LOOP: vfmt(buf, n, "%s", vloop_name(p->shape)); break;
  case VG_SPLIT: vfmt(buf, n, "%s %s", p->train ? "training" : "held_out", p->moe ? "moe" : "dense"); break;
  case VG_STRATUM: vfmt(buf, n, "%s", p->stratum[0] ? p->stratum : "?"); break;
  default: vfmt(buf, n, "?");
  }
}

bool vfilter_group(const vpoint *p, const void *arg) {
  const vgroup_sel *a = arg;
  if ((p->shape == VSHAPE_STAGED) != a->staged) return false;
  char k[96];
  vgroup_key(p, a->g, k, sizeof k);
  return !strcmp(k, a->key);
}

/* Distinct keys of group g among points that ran, in first-seen order. */
int vgroup_keys(const vset *s, vgroup_by g, char keys[][96], int max) {
  int n = 0;
  for (size_t i = 0; i < s->n; i++) {
    if (!s->pts[i].ran) continue;
    char k[96];
    vgroup_key(&s->pts[i], g, k, sizeof k);
    int j = 0;
    while (j < n && strcmp(keys[j], k)) j++;
    if (j == n && n < max) vfmt(keys[n++], 96, "%s", k);
  }
  return n;
}
