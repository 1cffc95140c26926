/* vreport.c: errors, summaries and the validation report (text, JSON, CSV).
 *
 * Error of a metric: 100 x (predicted - measured) / measured, signed; the
 * summaries use its absolute value: median (numpy linear interpolation, like
 * metrics_percentile_sorted at 50) and mean over the points that have both
 * values, and the worst point. Points that failed to run are counted apart
 * (they have no prediction) and are listed; skipped points are listed with
 * their reason.
 * Text layout: the per-point table (one row per point and published metric),
 * then "closed-loop targets", per-shape and per-group summaries, the cliff
 * confusion counts, the failed and skipped points. */
#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/jsonw.h"
#include "core/outfmt.h"
#include "metrics/metrics.h"
#include "validate/validate.h"

void vfmt(char *dst, size_t n, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(dst, n, fmt, ap);
  va_end(ap);
}

const char *vsource_name(vsource s) {
  static const char *const n[VSRC_COUNT] = {"aic_closed_loop", "trtllm_0.14_offline", "trtllm_0.9_static_batch",
                                            "mlperf_4.0", "user", "inference_perf"};
  return (unsigned)s < VSRC_COUNT ? n[s] : "?";
}

const char *vshape_name(vshape s) {
  static const char *const n[VSHAPE_COUNT] = {"closed_loop", "offline", "static_batch", "open_loop", "open_loop_stage"};
  return (unsigned)s < VSHAPE_COUNT ? n[s] : "?";
}

const char *vmetric_name(vmetric m) {
  static const char *const n[VM_COUNT] = {"ttft_ms", "tpot_ms", "output_tok_s", "ttft_median_ms", "ttft_p99_ms",
                                                     "e2el_ms"};
  return (unsigned)m < VM_COUNT ? n[m] : "?";
}

const char *vgroup_name(vgroup_by g) {
  static const char *const n[VG_COUNT] = {"source", "gpu", "engine", "tp", "shape", "model", "version", "loop", "split"};
  return (unsigned)g < VG_COUNT ? n[g] : "?";
}

bool vgroup_parse(const char *s, vgroup_by *out) {
  for (int g = 0; g < VG_COUNT; g++)
    if (!strcmp(s, vgroup_name((vgroup_by)g))) {
      *out = (vgroup_by)g;
      return true;
    }
  return false;
}

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

static bool vfilter_staged(const vpoint *p, const void *arg) {
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

/* The metrics each kind of point is summarized on. */
static const vmetric BASE_METRICS[] = {VM_TTFT, VM_TPOT, VM_TPUT};
static const vmetric STAGE_METRICS[] = {VM_TTFT, VM_TTFT_MED, VM_TTFT_P99, VM_E2E};
static const vmetric ALL_METRICS[] = {VM_TTFT, VM_TPOT, VM_TPUT, VM_TTFT_MED, VM_TTFT_P99, VM_E2E};

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

/* How a shape drives the server: a closed loop of clients, an open loop of
 * timed arrivals (a user's run or an inference-perf stage), one offline
 * burst, one static batch. */
const char *vloop_name(vshape s) {
  switch (s) {
  case VSHAPE_CLOSED: return "closed";
  case VSHAPE_OPEN: return "open";
  case VSHAPE_STAGED: return "open";
  case VSHAPE_OFFLINE: return "offline";
  case VSHAPE_STATIC: return "static";
  default: return "?";
  }
}

static void group_key(const vpoint *p, vgroup_by g, char *buf, size_t n) {
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
  default: vfmt(buf, n, "?");
  }
}

typedef struct gkey_arg {
  vgroup_by g;
  const char *key;
  bool staged; /* the open-loop stages of the group (else everything else) */
} gkey_arg;

static bool vfilter_group(const vpoint *p, const void *arg) {
  const gkey_arg *a = arg;
  if ((p->shape == VSHAPE_STAGED) != a->staged) return false;
  char k[96];
  group_key(p, a->g, k, sizeof k);
  return !strcmp(k, a->key);
}

/* Distinct keys of group g among points that ran, in first-seen order. */
static int group_keys(const vset *s, vgroup_by g, char keys[][96], int max) {
  int n = 0;
  for (size_t i = 0; i < s->n; i++) {
    if (!s->pts[i].ran) continue;
    char k[96];
    group_key(&s->pts[i], g, k, sizeof k);
    int j = 0;
    while (j < n && strcmp(keys[j], k)) j++;
    if (j == n && n < max) vfmt(keys[n++], 96, "%s", k);
  }
  return n;
}

#define VREPORT_METHODS_MAX 12 /* the text names each point's method up to this many points */

/* ---- text ---------------------------------------------------------------------------- */

/* Natural order of ids: digit runs compare as numbers (c8 before c16). */
static int natcmp(const char *a, const char *b) {
  while (*a && *b) {
    if (isdigit((unsigned char)*a) && isdigit((unsigned char)*b)) {
      char *ea, *eb;
      unsigned long long x = strtoull(a, &ea, 10), y = strtoull(b, &eb, 10);
      if (x != y) return x < y ? -1 : 1;
      a = ea, b = eb;
      continue;
    }
    if (*a != *b) return (unsigned char)*a < (unsigned char)*b ? -1 : 1;
    a++, b++;
  }
  return *a ? 1 : *b ? -1 : 0;
}

/* qsort on pointers into the set: ties keep the set's order (address order). */
static int cmp_by_id(const void *x, const void *y) {
  const vpoint *a = *(const vpoint *const *)x, *b = *(const vpoint *const *)y;
  int c = natcmp(a->id, b->id);
  return c ? c : (a < b ? -1 : a > b);
}

static void fmt_val(char *b, size_t n, double v) {
  if (!isfinite(v)) vfmt(b, n, "-");
  else if (v >= 1e5) vfmt(b, n, "%.0f", v);
  else if (v >= 100) vfmt(b, n, "%.1f", v);
  else vfmt(b, n, "%.2f", v);
}

/* minp: fewer points than this are flagged (--min-points). */
static void stats_line(FILE *f, const char *label, const verr_stats *st, size_t minp) {
  if (!st->n) {
    fprintf(f, "  %-38s %5s\n", label, "0");
    return;
  }
  fprintf(f, "  %-38s %5zu %9.1f%% %9.1f%% %+9.1f%%   %7.1f%%  %s%s\n", label, st->n, st->median_abs, st->mean_abs,
          st->median_signed, st->worst_abs, st->worst ? st->worst->id : "",
          st->n < minp ? "  [too few points to judge]" : "");
}

static void stats_header(FILE *f, const char *title) {
  fprintf(f, "\n%s\n  %-38s %5s %10s %10s %10s   %8s  %s\n", title, "metric", "n", "median|e|", "mean|e|",
          "median e", "worst", "worst point");
}

static void summary_block(FILE *f, const vset *s, const char *title, vfilter flt, const void *arg,
                          const vmetric *ms, size_t n_ms, size_t minp) {
  stats_header(f, title);
  for (size_t i = 0; i < n_ms; i++) {
    verr_stats st;
    verr_summarize(s, ms[i], flt, arg, &st);
    if (!st.n) continue;
    char label[64];
    vfmt(label, sizeof label, "%s", vmetric_name(ms[i]));
    stats_line(f, label, &st, minp);
  }
}

/* The per-point table: rows in id order, so a series reads down the page. */
static void text_table(const vset *s, const uint8_t *side, FILE *f) {
  fprintf(f, "\n%-48s %-14s %11s %11s %8s  %s\n", "point", "metric", "measured", "predicted", "error", "notes");
  const vpoint **ord = sim_malloc((s->n ? s->n : 1) * sizeof *ord);
  for (size_t i = 0; i < s->n; i++) ord[i] = &s->pts[i];
  qsort(ord, s->n, sizeof *ord, cmp_by_id);
  for (size_t oi = 0; oi < s->n; oi++) {
    const vpoint *p = ord[oi];
    size_t i = (size_t)(p - s->pts);
    if (p->skip[0] || !p->ran) continue;
    for (int m = 0; m < VM_COUNT; m++) {
      if (!isfinite(p->meas[m])) continue;
      char a[32], b[32], note[96] = "";
      fmt_val(a, sizeof a, p->meas[m]);
      fmt_val(b, sizeof b, p->pred[m]);
      double e = verr_pct(p, (vmetric)m);
      if (m == VM_TPUT && p->tput_derived) vfmt(note, sizeof note, "derived C*osl/E2EL");
      if (m == VM_TTFT && (side[i] & 4))
        vfmt(note, sizeof note, "cliff: measured %s, predicted %s", (side[i] & 1) ? "yes" : "no",
             (side[i] & 2) ? "yes" : "no");
      if (m == VM_TTFT && p->staged)
        vfmt(note, sizeof note, "kept up: measured %s, predicted %s", p->staged->meas.kept_up ? "yes" : "no",
             p->staged->pred.kept_up ? "yes" : "no");
      if (p->train && m != VM_TPUT) strncat(note, note[0] ? ", train" : "train", sizeof note - strlen(note) - 1);
      fprintf(f, "%-48s %-14s %11s %11s %+7.1f%%  %s\n", p->id, vmetric_name((vmetric)m), a, b, e, note);
    }
  }
  free(ord);
}

/* Per-group summaries: each group's points but the open-loop stages, then
 * the group's stages on their own metrics (labelled "stages"). */
static void text_groups(const vset *s, const vreport_opts *o, FILE *f) {
  for (int g = 0; g < VG_COUNT; g++) {
    if (!o || !o->groups[g]) continue;
    char keys[64][96];
    int nk = group_keys(s, (vgroup_by)g, keys, 64);
    fprintf(f, "\nBy %s:\n  %-38s %5s %10s %10s %10s   %8s  %s\n", vgroup_name((vgroup_by)g), "group / metric", "n",
            "median|e|", "mean|e|", "median e", "worst", "worst point");
    for (int k = 0; k < nk; k++)
      for (int staged = 0; staged < 2; staged++) {
        gkey_arg ga = {(vgroup_by)g, keys[k], staged != 0};
        const vmetric *ms = staged ? STAGE_METRICS : BASE_METRICS;
        size_t nm = staged ? SIM_ARRAY_LEN(STAGE_METRICS) : SIM_ARRAY_LEN(BASE_METRICS);
        for (size_t i = 0; i < nm; i++) {
          verr_stats st;
          verr_summarize(s, ms[i], vfilter_group, &ga, &st);
          if (!st.n) continue;
          char label[128];
          vfmt(label, sizeof label, "%s%s %s", keys[k], staged ? " stages" : "", vmetric_name(ms[i]));
          stats_line(f, label, &st, o->min_points);
        }
      }
  }
}

/* The open-loop stages: their summary (any that ran), then the kept-up counts
 * and how each run is reproduced (once per run: its last stage in the set,
 * whose rebuilt workload holds the earlier ones). */
static void text_stages_summary(const vset *s, FILE *f, size_t minp) {
  summary_block(f, s,
                "Open-loop stages (inference-perf runs; over each stage's requests answered within the client timeout; "
                "not in the summaries above):",
                vfilter_staged, NULL, STAGE_METRICS, SIM_ARRAY_LEN(STAGE_METRICS), minp);
}

static void text_stages_tail(const vset *s, FILE *f) {
  vkept k;
  vkept_count(s, &k);
  fprintf(f,
          "\nKept up / overloaded (open-loop stages; kept up = answered >= %.0f%% of the offered rate and p99 TTFT <= "
          "%.0f%% of the stage's duration):\n  measured kept up / predicted kept up %zu, measured overloaded / "
          "predicted overloaded %zu, measured kept up / predicted overloaded %zu, measured overloaded / predicted "
          "kept up %zu (%zu without a prediction)\n",
          100 * VAL_KEPT_UP_RATE, 100 * VAL_KEPT_UP_TTFT_FRAC, k.both_up, k.both_over, k.false_over, k.missed_over,
          k.unclassified);
  fprintf(f, "\nOpen-loop runs, as rebuilt (stage: answered measured / predicted of sent):\n");
  for (size_t i = 0; i < s->n; i++) {
    const vpoint *p = &s->pts[i];
    if (!p->staged || p->skip[0]) continue;
    bool later = false; /* print a run once, at its last stage in the set */
    for (size_t j = 0; j < s->n && !later; j++)
      later = j != i && s->pts[j].staged && !s->pts[j].skip[0] && !strcmp(s->pts[j].staged->run.dir, p->staged->run.dir) &&
              s->pts[j].staged->stage > p->staged->stage;
    if (later) continue;
    char m[2048], counts[256] = "";
    for (size_t j = 0; j < s->n; j++) {
      const vpoint *q = &s->pts[j];
      if (!q->staged || strcmp(q->staged->run.dir, p->staged->run.dir)) continue;
      char one[96];
      vfmt(one, sizeof one, "%sstage %u: %llu / %llu of %llu", counts[0] ? ", " : "", q->staged->stage,
           (unsigned long long)q->staged->meas.ok, (unsigned long long)q->staged->pred.ok,
           (unsigned long long)q->staged->meas.sent);
      strncat(counts, one, sizeof counts - strlen(counts) - 1);
    }
    vstage_method(p, NULL, m, sizeof m);
    fprintf(f, "  %s (%s): %s\n    %s\n", p->staged->run.name, counts, m,
            p->staged->run.profile_note[0] ? p->staged->run.profile_note : "profile.yaml: as config.yaml");
  }
}

void vreport_text(const vset *s, const vreport_opts *o, FILE *f) {
  size_t n_run = 0, n_skip = 0, n_fail = 0, n_staged = 0;
  for (size_t i = 0; i < s->n; i++) {
    const vpoint *p = &s->pts[i];
    if (p->skip[0]) n_skip++;
    else if (p->fail[0]) n_fail++;
    else if (p->ran) n_run++;
    n_staged += p->shape == VSHAPE_STAGED;
  }
  fprintf(f, "servesim validate: %zu points: %zu predicted, %zu failed, %zu skipped", s->n, n_run, n_fail, n_skip);
  if (o && o->wall_s > 0) fprintf(f, " (%.1f s)", o->wall_s);
  fprintf(f, "\n");
  vcover_text(s, f);
  for (int i = 0; i < s->n_notes; i++) fprintf(f, "  %s\n", s->notes[i]);
  if (o && o->title) fprintf(f, "  parameters: %s\n", o->title);
  uint8_t *side = sim_calloc(s->n ? s->n : 1, 1);
  size_t minp = o ? o->min_points : 0;
  vcliff cl;
  vcliff_count(s, NULL, NULL, &cl, side);
  if (!o || o->table) text_table(s, side, f);
  if (s->n <= VREPORT_METHODS_MAX) { /* a small selection (--only): how each point is redone */
    fprintf(f, "\nHow each point is reproduced:\n");
    for (size_t i = 0; i < s->n; i++) {
      char m[3000];
      vpoint_method(&s->pts[i], o ? o->ov : NULL, m, sizeof m);
      fprintf(f, "  %s: %s\n", s->pts[i].id, m);
    }
  }
  /* the targets: closed-loop points */
  summary_block(f, s, "Closed-loop points (targets: median |error| <= 15% TTFT, <= 10% TPOT and throughput):",
                vfilter_closed, NULL, BASE_METRICS, SIM_ARRAY_LEN(BASE_METRICS), minp);
  bool t = true;
  bool any_train = false;
  for (size_t i = 0; i < s->n; i++) any_train |= s->pts[i].train;
  if (any_train) {
    summary_block(f, s, "Training subset (the fit saw these):", vfilter_train, &t, ALL_METRICS,
                  SIM_ARRAY_LEN(ALL_METRICS), minp);
    summary_block(f, s, "Held-out points (everything else):", vfilter_held_out, NULL, ALL_METRICS,
                  SIM_ARRAY_LEN(ALL_METRICS), minp);
  }
  for (int sh = 0; sh < VSHAPE_COUNT; sh++) {
    vshape v = (vshape)sh;
    bool any = false;
    for (size_t i = 0; i < s->n; i++) any |= s->pts[i].ran && s->pts[i].shape == v;
    if (!any || v == VSHAPE_CLOSED || v == VSHAPE_STAGED) continue;
    char title[96];
    vfmt(title, sizeof title, "%s points:", vshape_name(v));
    summary_block(f, s, title, vfilter_shape, &v, BASE_METRICS, SIM_ARRAY_LEN(BASE_METRICS), minp);
  }
  if (n_staged) text_stages_summary(s, f, minp);
  text_groups(s, o, f);
  fprintf(f,
          "\nSaturation cliffs (closed loop; on the cliff = TTFT > %.0fx the TTFT at the next lower concurrency of "
          "the same series, or already on it there):\n  measured yes / predicted yes %zu, measured no / predicted no %zu, measured no / predicted yes "
          "%zu, measured yes / predicted no %zu (%zu baselines unclassified)\n",
          VAL_CLIFF_FACTOR, cl.tp, cl.tn, cl.fp, cl.fn, cl.unclassified);
  if (n_staged) text_stages_tail(s, f);
  if (n_fail) {
    fprintf(f, "\nFailed (servesim could not reproduce a run that happened; counted against the model):\n");
    for (size_t i = 0; i < s->n; i++)
      if (s->pts[i].fail[0]) fprintf(f, "  %s (%s): %s\n", s->pts[i].id, s->pts[i].where, s->pts[i].fail);
  }
  if (n_skip) {
    fprintf(f, "\nSkipped (cannot be represented; measured values kept in --json/--csv):\n");
    for (size_t i = 0; i < s->n; i++)
      if (s->pts[i].skip[0] && (!o || o->show_skipped))
        fprintf(f, "  %s (%s): %s\n", s->pts[i].id, s->pts[i].where, s->pts[i].skip);
    if (o && !o->show_skipped) {
      /* one line per distinct reason */
      for (size_t i = 0; i < s->n; i++) {
        const vpoint *p = &s->pts[i];
        if (!p->skip[0]) continue;
        bool seen = false;
        for (size_t k = 0; k < i && !seen; k++) seen = s->pts[k].skip[0] && !strcmp(s->pts[k].skip, p->skip);
        if (seen) continue;
        size_t cnt = 0;
        for (size_t k = i; k < s->n; k++) cnt += !strcmp(s->pts[k].skip, p->skip);
        fprintf(f, "  %3zu x %s (e.g. %s)\n", cnt, p->skip, p->id);
      }
      fprintf(f, "  (--show-skipped lists each one)\n");
    }
  }
  free(side);
}

/* ---- JSON -------------------------------------------------------------------------- */

/* Errors and measurements with 6 significant digits, counts exact, through
 * the project's one JSON writer (core/jsonw.h). */
static void jnum(jw *o, const char *k, double v) { jw_sig(o, k, v, 6); }

static void stats_json(jw *o, const char *key, const verr_stats *st, size_t minp) {
  jw_obj(o, key);
  jw_u64(o, "n", st->n);
  if (minp) jw_bool(o, "too_few_points", st->n < minp);
  jnum(o, "median_abs_pct", st->median_abs);
  jnum(o, "mean_abs_pct", st->mean_abs);
  jnum(o, "median_signed_pct", st->median_signed);
  jnum(o, "worst_abs_pct", st->worst_abs);
  if (st->worst) jw_str(o, "worst_point", st->worst->id);
  else jw_null(o, "worst_point");
  jw_end(o);
}

static void block_json(jw *o, const char *key, const vset *s, vfilter f, const void *arg, const vmetric *ms,
                       size_t n_ms, size_t minp) {
  jw_obj(o, key);
  for (size_t i = 0; i < n_ms; i++) {
    verr_stats st;
    verr_summarize(s, ms[i], f, arg, &st);
    stats_json(o, vmetric_name(ms[i]), &st, minp);
  }
  jw_end(o);
}

/* Whether any point that ran has group key `key` and is (not) an open-loop stage. */
static bool group_has(const vset *s, const gkey_arg *ga) {
  for (size_t i = 0; i < s->n; i++)
    if (s->pts[i].ran && vfilter_group(&s->pts[i], ga)) return true;
  return false;
}

/* by_group (every point but the open-loop stages, as before them) or
 * by_group_open_loop_stages (staged). */
static void groups_json(jw *o, const char *key, const vset *s, bool staged, size_t minp) {
  jw_obj(o, key);
  for (int g = 0; g < VG_COUNT; g++) {
    jw_obj(o, vgroup_name((vgroup_by)g));
    char keys[64][96];
    int nk = group_keys(s, (vgroup_by)g, keys, 64);
    for (int k = 0; k < nk; k++) {
      gkey_arg ga = {(vgroup_by)g, keys[k], staged};
      if (!group_has(s, &ga)) continue;
      if (staged) block_json(o, keys[k], s, vfilter_group, &ga, STAGE_METRICS, SIM_ARRAY_LEN(STAGE_METRICS), minp);
      else block_json(o, keys[k], s, vfilter_group, &ga, BASE_METRICS, SIM_ARRAY_LEN(BASE_METRICS), minp);
    }
    jw_end(o);
  }
  jw_end(o);
}

/* The summary's blocks before its cliffs and counts. */
static void summary_json(jw *o, const vset *s, size_t minp) {
  const size_t nb = SIM_ARRAY_LEN(BASE_METRICS), ns = SIM_ARRAY_LEN(STAGE_METRICS);
  block_json(o, "closed_loop", s, vfilter_closed, NULL, BASE_METRICS, nb, minp);
  bool t = true;
  const size_t na = SIM_ARRAY_LEN(ALL_METRICS);
  block_json(o, "train", s, vfilter_train, &t, ALL_METRICS, na, minp);
  block_json(o, "held_out", s, vfilter_held_out, NULL, ALL_METRICS, na, minp);
  jw_obj(o, "by_shape");
  for (int sh = 0; sh < VSHAPE_COUNT; sh++) {
    vshape v = (vshape)sh;
    bool st = v == VSHAPE_STAGED;
    block_json(o, vshape_name(v), s, vfilter_shape, &v, st ? STAGE_METRICS : BASE_METRICS, st ? ns : nb, minp);
  }
  jw_end(o);
  groups_json(o, "by_group", s, false, minp);
  block_json(o, "open_loop_stages", s, vfilter_staged, NULL, STAGE_METRICS, ns, minp);
  groups_json(o, "by_group_open_loop_stages", s, true, minp);
  vkept k;
  vkept_count(s, &k);
  jw_obj(o, "kept_up");
  jnum(o, "min_served_fraction", VAL_KEPT_UP_RATE);
  jnum(o, "max_p99_ttft_fraction_of_duration", VAL_KEPT_UP_TTFT_FRAC);
  jw_u64(o, "measured_kept_up_predicted_kept_up", k.both_up);
  jw_u64(o, "measured_overloaded_predicted_overloaded", k.both_over);
  jw_u64(o, "measured_kept_up_predicted_overloaded", k.false_over);
  jw_u64(o, "measured_overloaded_predicted_kept_up", k.missed_over);
  jw_u64(o, "unclassified", k.unclassified);
  jw_end(o);
}

static void stage_out_json(jw *j, const char *key, const vstage_out *o) {
  jw_obj(j, key);
  jw_u64(j, "sent", o->sent);
  jw_u64(j, "answered", o->ok);
  jnum(j, "answered_per_s", o->served_rate);
  jnum(j, "mean_input_tokens", o->mean_input_tokens);
  jw_bool(j, "kept_up", o->kept_up);
  jw_end(j);
}

/* The "stage" object of an open-loop stage point. */
static void stage_json(jw *j, const vpoint *p) {
  const vstaged *st = p->staged;
  const vopen_run *r = &st->run;
  jw_obj(j, "stage");
  jw_str(j, "run", r->dir);
  jw_u64(j, "stage", st->stage);
  jnum(j, "rate_per_s", r->rate_per_s[st->stage]);
  jnum(j, "duration_s", r->duration_s[st->stage]);
  jw_str(j, "model_name", r->model_label);
  jnum(j, "measured_mean_input_tokens", r->meas_input_tokens);
  jw_u64(j, "rebuilt_prompt_tokens", r->prompt_tokens);
  jw_u64(j, "rebuilt_shared_tokens", r->shared_tokens);
  jnum(j, "client_timeout_s", r->timeout_s);
  stage_out_json(j, "measured", &st->meas);
  if (p->ran) {
    stage_out_json(j, "predicted", &st->pred);
    jw_arr(j, "predicted_stage_starts_s");
    for (uint32_t k = 0; k <= st->stage; k++) jnum(j, NULL, st->start_s[k]);
    jw_end(j);
    jw_u64(j, "first_request", st->first_req);
  }
  char m[2048];
  vstage_method(p, NULL, m, sizeof m);
  jw_str(j, "method", m);
  if (r->profile_note[0]) jw_str(j, "profile_note", r->profile_note);
  jw_end(j);
}

static void point_json(jw *e, const vpoint *p, uint8_t side, const voverrides *ov) {
  jw_obj(e, NULL);
  jw_str(e, "id", p->id);
  jw_str(e, "where", p->where);
  jw_str(e, "source", vsource_name(p->src));
  jw_str(e, "shape", vshape_name(p->shape));
  jw_str(e, "status", p->skip[0] ? "skipped" : p->fail[0] ? "failed" : p->ran ? "predicted" : "not_run");
  if (p->skip[0]) jw_str(e, "reason", p->skip);
  else if (p->fail[0]) jw_str(e, "reason", p->fail);
  jw_str(e, "model", p->model);
  jw_str(e, "gpu", p->gpu);
  jw_str(e, "engine", p->engine);
  jw_u64(e, "tp", p->tp);
  jw_str(e, "weight_dtype", dtype_name(p->weight_dtype));
  jw_str(e, "kv_cache_dtype", dtype_name(p->kv_dtype));
  jw_u64(e, "isl", p->isl);
  jw_u64(e, "osl", p->osl);
  jw_u64(e, "concurrency", p->concurrency);
  jw_u64(e, "num_prompts", p->num_prompts);
  jw_bool(e, "train", p->train);
  int n_m = p->shape == VSHAPE_STAGED ? VM_COUNT : VM_BASE_COUNT; /* the stage metrics only where they exist */
  jw_obj(e, "measured");
  for (int m = 0; m < n_m; m++) jnum(e, vmetric_name((vmetric)m), p->meas[m]);
  jw_end(e);
  jw_obj(e, "predicted");
  for (int m = 0; m < n_m; m++) jnum(e, vmetric_name((vmetric)m), p->pred[m]);
  jw_end(e);
  jw_obj(e, "error_pct");
  for (int m = 0; m < n_m; m++) jnum(e, vmetric_name((vmetric)m), verr_pct(p, (vmetric)m));
  jw_end(e);
  jw_bool(e, "output_tok_s_derived", p->tput_derived);
  if (side & 4) {
    jw_obj(e, "cliff");
    jw_bool(e, "measured", side & 1);
    jw_bool(e, "predicted", (side & 2) != 0);
    jw_end(e);
  }
  if (p->ran) {
    jnum(e, "kv_pool_tokens", p->pred_kv_tokens);
    jnum(e, "mean_queue_ms", p->pred_queue_ms);
    jw_u64(e, "preemptions", p->pred_preemptions);
  }
  if (p->staged) {
    stage_json(e, p);
  } else {
    char m[3000];
    vpoint_method(p, ov, m, sizeof m);
    jw_str(e, "method", m);
  }
  jw_end(e);
}

int vreport_json(const vset *s, const vreport_opts *o, FILE *f, sim_err *err) {
  jw jr, *root = &jr;
  jw_begin(root, f);
  jw_str(root, "tool", "servesim validate");
  jw_str(root, "version", SERVESIM_VERSION);
  if (o && o->title) jw_str(root, "parameters", o->title);
  jw_arr(root, "sources");
  for (int i = 0; i < s->n_notes; i++) jw_str(root, NULL, s->notes[i]);
  jw_end(root);
  uint8_t *side = sim_calloc(s->n ? s->n : 1, 1);
  vcliff cl;
  vcliff_count(s, NULL, NULL, &cl, side);
  size_t counts[3] = {0, 0, 0};
  for (size_t i = 0; i < s->n; i++) counts[s->pts[i].skip[0] ? 2 : s->pts[i].fail[0] ? 1 : 0]++;
  jw_obj(root, "summary");
  summary_json(root, s, o ? o->min_points : 0);
  jw_obj(root, "cliffs");
  jnum(root, "factor", VAL_CLIFF_FACTOR);
  jw_u64(root, "measured_yes_predicted_yes", cl.tp);
  jw_u64(root, "measured_no_predicted_no", cl.tn);
  jw_u64(root, "measured_no_predicted_yes", cl.fp);
  jw_u64(root, "measured_yes_predicted_no", cl.fn);
  jw_u64(root, "unclassified", cl.unclassified);
  jw_end(root);
  jw_obj(root, "points");
  jw_u64(root, "total", s->n);
  jw_u64(root, "predicted", counts[0]);
  jw_u64(root, "failed", counts[1]);
  jw_u64(root, "skipped", counts[2]);
  jw_end(root);
  jw_end(root); /* summary */
  vcover_json(s, root);
  jw_arr(root, "points");
  for (size_t i = 0; i < s->n; i++) point_json(root, &s->pts[i], side[i], o ? o->ov : NULL);
  jw_end(root);
  free(side);
  return jw_finish(root, err);
}

/* ---- CSV --------------------------------------------------------------------------------- */

/* Columns: the base metrics, `where`, then the open-loop stages' columns
 * (empty for other points), so the columns before them are as they were. */
int vreport_csv(const vset *s, const voverrides *ov, FILE *f, sim_err *err) {
  fprintf(f, "id,source,shape,model,gpu,engine,tp,weight_dtype,kv_cache_dtype,isl,osl,concurrency,num_prompts,train,"
             "status,reason");
  for (int m = 0; m < VM_BASE_COUNT; m++)
    fprintf(f, ",measured_%s,predicted_%s,error_pct_%s", vmetric_name((vmetric)m), vmetric_name((vmetric)m),
            vmetric_name((vmetric)m));
  fprintf(f, ",where,stage,rate_per_s");
  for (int m = VM_BASE_COUNT; m < VM_COUNT; m++)
    fprintf(f, ",measured_%s,predicted_%s,error_pct_%s", vmetric_name((vmetric)m), vmetric_name((vmetric)m),
            vmetric_name((vmetric)m));
  fprintf(f, ",measured_answered,predicted_answered,measured_kept_up,predicted_kept_up,method\n");
  for (size_t i = 0; i < s->n; i++) {
    const vpoint *p = &s->pts[i];
    outfmt_csv_str(f, p->id);
    fprintf(f, ",%s,%s,%s,%s,%s,%u,%s,%s,%u,%u,%u,%llu,%d,%s,", vsource_name(p->src), vshape_name(p->shape),
            p->model, p->gpu, p->engine, p->tp, dtype_name(p->weight_dtype), dtype_name(p->kv_dtype), p->isl, p->osl,
            p->concurrency, (unsigned long long)p->num_prompts, p->train ? 1 : 0,
            p->skip[0] ? "skipped" : p->fail[0] ? "failed" : p->ran ? "predicted" : "not_run");
    outfmt_csv_str(f, p->skip[0] ? p->skip : p->fail);
    for (int m = 0; m < VM_BASE_COUNT; m++) {
      outfmt_csv_num(f, p->meas[m]);
      outfmt_csv_num(f, p->pred[m]);
      outfmt_csv_num(f, verr_pct(p, (vmetric)m));
    }
    fputc(',', f);
    outfmt_csv_str(f, p->where);
    const vstaged *st = p->staged;
    if (!st) {
      fputs(",,,,,,,,,,,,,,,,", f); /* the 15 stage columns, empty, then the method */
      char m[3000];
      vpoint_method(p, ov, m, sizeof m);
      outfmt_csv_str(f, m);
    } else {
      fprintf(f, ",%u", st->stage);
      outfmt_csv_num(f, st->run.rate_per_s[st->stage]);
      for (int m = VM_BASE_COUNT; m < VM_COUNT; m++) {
        outfmt_csv_num(f, p->meas[m]);
        outfmt_csv_num(f, p->pred[m]);
        outfmt_csv_num(f, verr_pct(p, (vmetric)m));
      }
      fprintf(f, ",%llu", (unsigned long long)st->meas.ok);
      if (p->ran) fprintf(f, ",%llu,%d,%d,", (unsigned long long)st->pred.ok, st->meas.kept_up, st->pred.kept_up);
      else fprintf(f, ",,%d,,", st->meas.kept_up);
      char m[2048];
      vstage_method(p, NULL, m, sizeof m);
      outfmt_csv_str(f, m);
    }
    fputc('\n', f);
  }
  if (ferror(f)) return sim_errf(err, SIM_EINPUT, "cannot write the CSV report");
  return SIM_OK;
}
