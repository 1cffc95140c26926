/* report_valid.c: the validation report's HTML page (report_valid.h). */
#include "report/report_valid.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "report/report_html.h"
#include "report/svg.h"

#define VR_MAX_KEYS 64

/* One table row per group key and metric: n, median |e|, median signed e, mean |e|, worst point. */
static void group_table(FILE *f, const vset *s, vgroup_by g) {
  static char keys[VR_MAX_KEYS][96];
  int nk = vgroup_keys(s, g, keys, VR_MAX_KEYS);
  char h[160];
  snprintf(h, sizeof h, "Error by %s", vgroup_name(g));
  rh_heading(f, 2, h);
  static const char *const cols[] = {"group", "metric", "points", "median |error|", "median signed error",
                                     "mean |error|", "worst |error|", "worst point"};
  fputs("<table>\n", f);
  rh_th_row(f, cols, 8, 1u | 2u | 128u);
  for (int k = 0; k < nk; k++)
    for (int staged = 0; staged < 2; staged++) {
      const vmetric *ms = staged ? vmetrics_stage : vmetrics_base;
      int nm = staged ? 4 : 3;
      vgroup_sel sel = {g, keys[k], staged};
      for (int i = 0; i < nm; i++) {
        verr_stats st;
        verr_summarize(s, ms[i], vfilter_group, &sel, &st);
        if (!st.n) continue;
        fputs("<tr>", f);
        rh_td(f, true, "%s%s", keys[k], staged ? " stages" : "");
        rh_td(f, true, "%s", vmetric_name(ms[i]));
        rh_td(f, false, "%zu", st.n);
        rh_td(f, false, "%.1f%%", st.median_abs);
        rh_td(f, false, "%+.1f%%", st.median_signed);
        rh_td(f, false, "%.1f%%", st.mean_abs);
        rh_td(f, false, "%.1f%%", st.worst_abs);
        rh_td(f, true, "%s", st.worst ? st.worst->id : "");
        fputs("</tr>\n", f);
      }
    }
  fputs("</table>\n", f);
}

static bool has(const vpoint *p, vmetric m) { return p->ran && !p->fail[0] && isfinite(p->meas[m]) && isfinite(p->pred[m]); }

/* A closed-loop point the scatter of metric m draws (both values positive: log axes). */
static bool plotted(const vpoint *p, vmetric m) {
  return p->shape == VSHAPE_CLOSED && has(p, m) && p->meas[m] > 0 && p->pred[m] > 0;
}

/* The open-loop stages in order: measured (filled) and predicted (hollow) mean and p99 TTFT, log scale; a table of
 * the same numbers with each stage's id. */
static void stages_section(FILE *f, const vset *s) {
  size_t n = 0;
  for (size_t i = 0; i < s->n; i++) n += s->pts[i].shape == VSHAPE_STAGED && has(&s->pts[i], VM_TTFT);
  if (!n) return;
  rh_heading(f, 2, "Open-loop stages: TTFT, measured and predicted");
  double *x = calloc(n, sizeof *x), *v[4];
  const vpoint **pt = calloc(n, sizeof *pt);
  for (int k = 0; k < 4; k++) v[k] = calloc(n, sizeof *v[k]);
  double lo = INFINITY, hi = 0;
  size_t j = 0;
  for (size_t i = 0; i < s->n && j < n; i++) {
    const vpoint *p = &s->pts[i];
    if (p->shape != VSHAPE_STAGED || !has(p, VM_TTFT)) continue;
    pt[j] = p, x[j] = (double)(j + 1);
    v[0][j] = p->meas[VM_TTFT], v[1][j] = p->pred[VM_TTFT], v[2][j] = p->meas[VM_TTFT_P99], v[3][j] = p->pred[VM_TTFT_P99];
    for (int k = 0; k < 4; k++)
      if (isfinite(v[k][j]) && v[k][j] > 0) lo = fmin(lo, v[k][j]), hi = fmax(hi, v[k][j]);
    j++;
  }
  svg_nice_range(&lo, &hi, true);
  svg_chart c;
  svg_chart_begin_legend(&c, f, 760, 300, "TTFT per open-loop stage (ms, log scale)",
                         (svg_axis){0, (double)n + 1, false, "stage (numbered as in the table below)"},
                         (svg_axis){lo, hi, true, "TTFT (ms)"}, 4);
  static const char *const names[4] = {"mean, measured (filled dots)", "mean, predicted (rings)",
                                       "p99, measured (filled dots)", "p99, predicted (rings)"};
  for (int k = 0; k < 4; k++) {
    svg_dots(&c, x, v[k], n, svg_color(k / 2), 4, k % 2);
    svg_legend(&c, svg_color(k / 2), names[k], k % 2 ? "2,2" : NULL);
  }
  svg_chart_end(&c);
  static const char *const cols[] = {"#", "stage", "mean TTFT measured", "predicted", "error", "p99 TTFT measured",
                                     "predicted", "error"};
  fputs("<table>\n", f);
  rh_th_row(f, cols, 8, 2u);
  for (size_t i = 0; i < n; i++) {
    fputs("<tr>", f);
    rh_td(f, false, "%zu", i + 1);
    rh_td(f, true, "%s", pt[i]->id);
    rh_td(f, false, "%.1f ms", v[0][i]);
    rh_td(f, false, "%.1f ms", v[1][i]);
    rh_td(f, false, "%+.1f%%", verr_pct(pt[i], VM_TTFT));
    rh_td(f, false, "%.1f ms", v[2][i]);
    rh_td(f, false, "%.1f ms", v[3][i]);
    rh_td(f, false, "%+.1f%%", verr_pct(pt[i], VM_TTFT_P99));
    fputs("</tr>\n", f);
  }
  fputs("</table>\n", f);
  for (int k = 0; k < 4; k++) free(v[k]);
  free(x);
  free(pt);
}

/* Closed-loop points, measured against predicted metric m on log axes, one colour per engine, the line of no
 * error and the lines of +-25%. */
static void scatter(FILE *f, const vset *s, vmetric m, const char *title) {
  static char engines[8][96];
  int ne = vgroup_keys(s, VG_ENGINE, engines, 8);
  double lo = INFINITY, hi = 0;
  size_t n = 0;
  for (size_t i = 0; i < s->n; i++) {
    const vpoint *p = &s->pts[i];
    if (!plotted(p, m)) continue;
    lo = fmin(lo, fmin(p->meas[m], p->pred[m])), hi = fmax(hi, fmax(p->meas[m], p->pred[m]));
    n++;
  }
  if (!n) return;
  svg_nice_range(&lo, &hi, true);
  svg_chart c;
  svg_chart_begin_legend(&c, f, 520, 420, title, (svg_axis){lo, hi, true, "measured (ms)"},
                         (svg_axis){lo, hi, true, "predicted (ms)"}, ne + 1);
  double *x = calloc(n, sizeof *x), *y = calloc(n, sizeof *y);
  for (int e = 0; e < ne; e++) {
    size_t k = 0;
    for (size_t i = 0; i < s->n; i++) {
      const vpoint *p = &s->pts[i];
      if (!plotted(p, m) || strcmp(p->engine, engines[e])) continue;
      x[k] = p->meas[m], y[k] = p->pred[m], k++;
    }
    svg_dots(&c, x, y, k, svg_color(e), 2.5, false);
    char lab[128];
    snprintf(lab, sizeof lab, "%.80s (%zu points)", engines[e], k);
    svg_legend(&c, svg_color(e), lab, NULL);
  }
  static const double band[3] = {1.0, 1.25, 0.8};
  static const char *const dash[3] = {NULL, "4,3", "1,3"}; /* each line its own pattern */
  for (int b = 0; b < 3; b++) {
    double lx[2] = {lo, hi}, ly[2] = {lo * band[b], hi * band[b]};
    svg_line(&c, lx, ly, 2, "#555555", 1, dash[b]);
  }
  svg_legend(&c, "#555555", "no error (dashed: +25%, dotted: -20%)", NULL);
  svg_chart_end(&c);
  free(x);
  free(y);
}

int report_validate_html(const vset *s, const vreport_opts *o, FILE *f, sim_err *err) {
  rh_doc_begin(f, "validation");
  if (o && o->title) rh_para(f, "cmd", o->title);
  size_t pr, fa, sk;
  vcover_counts(s, &pr, &fa, &sk);
  char buf[512];
  snprintf(buf, sizeof buf, "%zu rows: %zu predicted, %zu failed, %zu skipped (the text report and "
           "--show-skipped give every reason). Errors are (predicted - measured) / measured; a median signed error "
           "far from zero is a bias: a cost the model lacks or counts twice.", s->n, pr, fa, sk);
  rh_para(f, NULL, buf);
  stages_section(f, s);
  rh_heading(f, 2, "Closed-loop points: measured against predicted");
  size_t closed = 0;
  for (size_t i = 0; i < s->n; i++) closed += plotted(&s->pts[i], VM_TTFT);
  if (!closed) rh_para(f, "note", "No closed-loop point was predicted in this validation.");
  fputs("<div>", f);
  scatter(f, s, VM_TTFT, "TTFT (ms), closed loop");
  scatter(f, s, VM_TPOT, "TPOT (ms), closed loop");
  fputs("</div>\n", f);
  static const vgroup_by groups[] = {VG_SOURCE, VG_ENGINE, VG_GPU};
  for (size_t i = 0; i < sizeof groups / sizeof groups[0]; i++) group_table(f, s, groups[i]);
  rh_para(f, "note", "Generated by servesim " SERVESIM_VERSION " validate: every prediction a simulation, every "
                  "measurement from the files the command read (docs/ACCURACY.md names their sources).");
  fputs("</body>\n</html>\n", f);
  if (ferror(f)) return sim_errf(err, SIM_EINPUT, "write failed");
  return SIM_OK;
}
