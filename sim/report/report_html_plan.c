/* report_html_plan.c: the sweep and capacity sections of the HTML report
 * (Pareto frontiers, latency and throughput vs request rate with the knee,
 * memory of each deployment, the tables). Split from report_html.c to keep
 * both files short; same rules: well-formed XHTML, deterministic. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "report/report_html.h"
#include "report/svg.h"

enum { MAX_CURVES = 12, MAX_BARS = 24, MAX_ROWS = 400 };

static const char *short_limit(limit_kind k) {
  static const char *const n[] = {"light load", "KV capacity", "HBM bandwidth", "compute", "interconnect",
                                  "engine CPU", "queueing"};
  return (unsigned)k < SIM_ARRAY_LEN(n) ? n[k] : "?";
}

/* Range of the finite values of v (ignoring NaN/inf); log ranges use positives only. */
static void range_of(const double *v, size_t n, bool log, double *lo, double *hi) {
  *lo = INFINITY, *hi = -INFINITY;
  for (size_t i = 0; i < n; i++)
    if (isfinite(v[i]) && (!log || v[i] > 0)) *lo = fmin(*lo, v[i]), *hi = fmax(*hi, v[i]);
  if (!isfinite(*lo)) *lo = log ? 1 : 0, *hi = log ? 10 : 1;
  svg_nice_range(lo, hi, log);
}

/* ---- sweep ---------------------------------------------------------------------- */

static void pareto_chart(FILE *f, const sweep_set *s, bool ttft) {
  size_t n = s->n;
  double *x = sim_malloc((n + 1) * sizeof *x), *y = sim_malloc((n + 1) * sizeof *y);
  double *fx = sim_malloc((n + 1) * sizeof *fx), *fy = sim_malloc((n + 1) * sizeof *fy);
  size_t k = 0, n_miss = 0;
  size_t *fi = sim_malloc((n + 1) * sizeof *fi);
  double *mx = sim_malloc((n + 1) * sizeof *mx), *my = sim_malloc((n + 1) * sizeof *my); /* missed an SLO */
  for (size_t i = 0; i < n; i++) {
    const sweep_row *r = &s->rows[i];
    x[i] = y[i] = mx[i] = my[i] = NAN;
    if (!r->feasible || !r->sum.completed) continue;
    bool miss = s->slo.n && !r->slo.all_ok; /* drawn apart: the frontier is over the rows meeting every SLO */
    (miss ? mx : x)[i] = ttft ? r->sum.ttft_ms.p99 : r->tok_s_per_user;
    (miss ? my : y)[i] = r->tput_per_gpu;
    n_miss += miss;
    if (ttft ? r->pareto_ttft : r->pareto_user) fi[k++] = i;
  }
  /* frontier drawn in x order */
  for (size_t a = 1; a < k; a++)
    for (size_t b = a; b > 0 && x[fi[b - 1]] > x[fi[b]]; b--) {
      size_t t = fi[b];
      fi[b] = fi[b - 1];
      fi[b - 1] = t;
    }
  for (size_t a = 0; a < k; a++) fx[a] = x[fi[a]], fy[a] = y[fi[a]];
  double xlo, xhi, ylo, yhi, *ax = sim_malloc((2 * n + 1) * sizeof *ax), *ay = sim_malloc((2 * n + 1) * sizeof *ay);
  memcpy(ax, x, n * sizeof *ax), memcpy(ax + n, mx, n * sizeof *ax);
  memcpy(ay, y, n * sizeof *ay), memcpy(ay + n, my, n * sizeof *ay);
  range_of(ax, 2 * n, ttft, &xlo, &xhi);
  range_of(ay, 2 * n, false, &ylo, &yhi);
  free(ax), free(ay);
  svg_chart c;
  svg_chart_begin_legend(&c, f, 562, 380,
                  ttft ? "Throughput per GPU vs p99 TTFT" : "Throughput per GPU vs tokens/s per user",
                  (svg_axis){xlo, xhi, ttft, ttft ? "p99 time to first token (ms, log scale)" : "tokens/s per user (1000 / mean TPOT)"},
                  (svg_axis){ylo, yhi, false, "output tokens/s per GPU"}, n_miss ? 3 : 2);
  svg_dots(&c, x, y, n, "#999999", 3, true);
  if (n_miss) svg_dots(&c, mx, my, n, "#f4a6a6", 2.5, false);
  svg_line(&c, fx, fy, k, svg_color(1), 2, NULL);
  svg_dots(&c, fx, fy, k, svg_color(1), 4, false);
  for (size_t a = 0; a < k && k <= 12; a++) {
    char lab[32];
    snprintf(lab, sizeof lab, "#%zu", fi[a]);
    svg_marker(&c, fx[a], fy[a], svg_color(1), 0.1, lab);
  }
  svg_legend(&c, "#999999", s->slo.n ? "configurations meeting every SLO" : "every configuration that ran", NULL);
  if (n_miss) svg_legend(&c, "#f4a6a6", "configurations missing an SLO (never on the frontier)", NULL);
  svg_legend(&c, svg_color(1), "Pareto frontier (#: grid index)", NULL);
  svg_chart_end(&c);
  free(x), free(y), free(fx), free(fy), free(fi), free(mx), free(my);
}

static void curve_charts(FILE *f, const sweep_set *s) {
  sweep_curve *all;
  size_t nc = sweep_curves(s, &all), shown = nc < MAX_CURVES ? nc : MAX_CURVES;
  if (!nc) {
    sweep_curves_free(all, nc);
    return;
  }
  /* with more deployments than colors, draw an even spread of them (first and last included) */
  sweep_curve cv[MAX_CURVES];
  for (size_t c = 0; c < shown; c++) cv[c] = all[shown == 1 ? 0 : c * (nc - 1) / (shown - 1)];
  rh_heading(f, 2, "Latency vs request rate");
  rh_para(f, "note", s->slo.n ? "One line per deployment; the diamond marks the knee: the last load before the SLOs "
                                 "are first missed. Points drawn at the top edge exploded past the axis."
                               : "One line per deployment; the diamond marks the knee: the last load before p99 TTFT "
                                 "passes 3x its value at the lowest load. Points at the top edge exploded past the axis.");
  fputs("<div class=\"row\">\n", f);
  for (int which = 0; which < 2; which++) {
    double *x = sim_malloc((s->n + 1) * sizeof *x), *y = sim_malloc((s->n + 1) * sizeof *y);
    size_t m = 0;
    for (size_t c = 0; c < shown; c++)
      for (size_t k = 0; k < cv[c].n; k++) {
        const sweep_row *r = &s->rows[cv[c].row[k]];
        x[m] = r->offered_rate;
        y[m++] = which ? r->sum.tpot_ms.p99 : r->sum.ttft_ms.p99;
      }
    double xlo, xhi, ylo, yhi;
    range_of(x, m, false, &xlo, &xhi);
    range_of(y, m, true, &ylo, &yhi);
    svg_chart ch; /* one question per chart: where each deployment's TTFT, then TPOT, leaves its objective */
    svg_chart_begin_legend(&ch, f, 562, 380, which ? "p99 TPOT vs offered rate" : "p99 TTFT vs offered rate",
                           (svg_axis){xlo, xhi, false, "offered request rate (req/s)"},
                           (svg_axis){ylo, yhi, true, which ? "p99 TPOT (ms, log scale)" : "p99 TTFT (ms, log scale)"},
                           (int)shown);
    for (size_t c = 0; c < shown; c++) {
      double cx[GRID_MAX_VALUES * 4], cy[GRID_MAX_VALUES * 4];
      size_t q = 0;
      for (size_t k = 0; k < cv[c].n && q < SIM_ARRAY_LEN(cx); k++) {
        const sweep_row *r = &s->rows[cv[c].row[k]];
        cx[q] = r->offered_rate;
        cy[q++] = which ? r->sum.tpot_ms.p99 : r->sum.ttft_ms.p99;
      }
      svg_line(&ch, cx, cy, q, svg_color((int)c), 2, svg_dash((int)c));
      svg_dots(&ch, cx, cy, q, svg_color((int)c), 3, false);
      char lab[320];
      if (cv[c].knee >= 0) {
        svg_marker(&ch, cx[cv[c].knee], cy[cv[c].knee], svg_color((int)c), 6, NULL);
        snprintf(lab, sizeof lab, "%s (knee %.3g req/s)", cv[c].label, cx[cv[c].knee]);
      } else {
        snprintf(lab, sizeof lab, "%s (no load passes)", cv[c].label);
      }
      svg_legend(&ch, svg_color((int)c), lab, svg_dash((int)c));
    }
    double slo_ms = slo_limit(&s->slo, which ? SLO_TPOT : SLO_TTFT);
    if (slo_ms > 0) svg_hline(&ch, slo_ms, "#d62728", "6,3", which ? "TPOT objective" : "TTFT objective");
    svg_chart_end(&ch);
    free(x), free(y);
  }
  fputs("</div>\n", f);
  if (nc > shown) {
    char note[160];
    snprintf(note, sizeof note, "%zu of %zu deployments drawn, evenly spread over the grid; all are in the JSON "
                                "output (curves) and the Markdown report.", shown, nc);
    rh_para(f, "note", note);
  }
  sweep_curves_free(all, nc);
}

static void sweep_memory(FILE *f, const sweep_set *s) {
  const char *labels[MAX_BARS];
  const mem_plan *mp[MAX_BARS];
  char buf[MAX_BARS + 1][160];
  int n = 0;
  bool more = false;
  for (size_t i = 0; i < s->n; i++) {
    const sweep_row *r = &s->rows[i];
    if (!r->mem.device_bytes) continue;
    grid_point p = r->pt; /* the deployment: the point without its load */
    p.set[AX_RATE] = p.set[AX_CONC] = p.set[AX_RATE_SCALE] = false;
    char dep[256];
    grid_label(&p, dep, sizeof dep);
    if (!strcmp(dep, "base"))
      snprintf(dep, sizeof dep, "%s TP%u%s%.0u %s kv:%s", r->gpu, r->deploy.tp, r->deploy.pp > 1 ? " PP" : "", r->deploy.pp > 1 ? r->deploy.pp : 0,
               dtype_name(r->deploy.weight_dtype), dtype_name(r->deploy.kv_dtype));
    snprintf(buf[n], sizeof buf[n], "%.150s%s", dep, r->feasible ? "" : " (no)");
    bool dup = false;
    for (int k = 0; k < n; k++) dup |= !strcmp(buf[k], buf[n]);
    if (dup) continue;
    if (n == MAX_BARS) {
      more = true;
      break;
    }
    labels[n] = buf[n];
    mp[n] = &r->mem;
    n++;
  }
  if (!n) return;
  rh_heading(f, 2, "Memory per GPU of each deployment");
  rh_memory_bars(f, more ? "Where each GPU's memory goes: the first 24 deployments ((no) = cannot start)"
                         : "Where each GPU's memory goes ((no) = cannot start)",
                 labels, mp, n);
}

static void sweep_table(FILE *f, const sweep_set *s) {
  rh_heading(f, 2, "All configurations");
  static const char *const cols[] = {"#", "configuration", "offered req/s", "tok/s/GPU", "tok/s/user", "p99 TTFT ms",
                                     "p99 TPOT ms", "$/M out tok", "binding limit", "Pareto", "SLOs"};
  fputs("<table>\n", f);
  rh_th_row(f, cols, (int)SIM_ARRAY_LEN(cols), 0x702);
  for (size_t i = 0; i < s->n && i < MAX_ROWS; i++) {
    const sweep_row *r = &s->rows[i];
    fprintf(f, "<tr%s>", !r->feasible ? " class=\"bad\"" : r->pareto_user ? " class=\"best\"" : "");
    rh_td(f, false, "%zu", i);
    rh_td(f, true, "%s", r->label);
    if (!r->feasible) {
      fputs("<td class=\"l\" colspan=\"9\">cannot start: ", f);
      svg_escape(f, r->reason);
      fputs("</td></tr>\n", f);
      continue;
    }
    rh_td(f, false, "%.3g", r->offered_rate);
    rh_td(f, false, "%.1f", r->tput_per_gpu);
    rh_td(f, false, "%.1f", r->tok_s_per_user);
    rh_td(f, false, "%.0f", r->sum.ttft_ms.p99);
    rh_td(f, false, "%.1f", r->sum.tpot_ms.p99);
    rh_td(f, false, "%.3f", r->usd_per_m_output);
    rh_td(f, true, "%s", short_limit(r->bn.primary));
    rh_td(f, true, "%s%s%s", r->pareto_user ? "vs user" : "", r->pareto_user && r->pareto_ttft ? ", " : "",
          r->pareto_ttft ? "vs TTFT" : "");
    rh_td(f, true, "%s", s->slo.n ? (r->slo.all_ok ? "met" : "missed") : "");
    fputs("</tr>\n", f);
  }
  fputs("</table>\n", f);
  if (s->n > MAX_ROWS) rh_para(f, "note", "Further rows are in the CSV and JSON outputs.");
}

void rh_sweep_sections(FILE *f, const sweep_set *s) {
  rh_heading(f, 2, "Pareto frontier");
  rh_para(f, "note", "Each point is one configuration that ran; the red line joins those no other configuration "
                     "beats on both axes.");
  fputs("<div class=\"row\">\n", f);
  pareto_chart(f, s, false);
  pareto_chart(f, s, true);
  fputs("</div>\n", f);
  curve_charts(f, s);
  sweep_memory(f, s);
  sweep_table(f, s);
}

/* ---- capacity ------------------------------------------------------------------- */

static void probe_chart(FILE *f, const capacity_set *s, int item) {
  /* item >= 0: that SLO's statistic; -1: output throughput */
  double *x = sim_malloc((s->n * BISECT_MAX_PROBES + 1) * sizeof *x), *y = sim_malloc((s->n * BISECT_MAX_PROBES + 1) * sizeof *y);
  size_t m = 0;
  for (size_t i = 0; i < s->n; i++)
    for (int k = 0; k < s->c[i].bis.n_probes; k++) {
      x[m] = s->c[i].probe[k].rate;
      y[m++] = item >= 0 ? s->c[i].probe[k].value_ms[item] : s->c[i].probe[k].output_tput;
    }
  if (!m) {
    free(x), free(y);
    return;
  }
  bool ylog = item >= 0;
  double xlo, xhi, ylo, yhi;
  range_of(x, m, true, &xlo, &xhi);
  range_of(y, m, ylog, &ylo, &yhi);
  if (item >= 0 && s->slo.it[item].limit_ms * 2 > yhi) {
    yhi = s->slo.it[item].limit_ms * 2;
    svg_nice_range(&ylo, &yhi, true);
  }
  char title[96];
  snprintf(title, sizeof title, item >= 0 ? "%s vs request rate per replica" : "%s", item >= 0 ? s->slo.it[item].key : "Output throughput vs request rate per replica");
  svg_chart c;
  int nleg = 0;
  for (size_t i = 0; i < s->n; i++) nleg += s->c[i].bis.n_probes > 0;
  svg_chart_begin_legend(&c, f, 562, 380, title,
                         (svg_axis){xlo, xhi, true, "offered request rate per replica (req/s, log scale)"},
                         (svg_axis){ylo, yhi, ylog, item >= 0 ? "milliseconds (log scale)" : "output tokens/s (one replica)"},
                         nleg);
  int col = 0;
  for (size_t i = 0; i < s->n; i++) {
    const cap_candidate *cd = &s->c[i];
    int np = cd->bis.n_probes;
    if (!np) continue;
    double px[BISECT_MAX_PROBES], py[BISECT_MAX_PROBES];
    int ord[BISECT_MAX_PROBES];
    for (int k = 0; k < np; k++) ord[k] = k;
    for (int a = 1; a < np; a++)
      for (int b = a; b > 0 && cd->probe[ord[b - 1]].rate > cd->probe[ord[b]].rate; b--) {
        int t = ord[b];
        ord[b] = ord[b - 1];
        ord[b - 1] = t;
      }
    for (int k = 0; k < np; k++) {
      px[k] = cd->probe[ord[k]].rate;
      py[k] = item >= 0 ? cd->probe[ord[k]].value_ms[item] : cd->probe[ord[k]].output_tput;
    }
    const char *color = svg_color(col), *dash = svg_dash(col);
    col++;
    svg_line(&c, px, py, (size_t)np, color, 1.8, dash);
    svg_dots(&c, px, py, (size_t)np, color, 2.5, false);
    if (cd->max_rate > 0)
      for (int k = 0; k < np; k++)
        if (px[k] == cd->max_rate) {
          char lab[64];
          snprintf(lab, sizeof lab, "%.3g", cd->max_rate);
          svg_marker(&c, px[k], py[k], color, 6, (int)i == s->best ? lab : NULL);
        }
    svg_legend(&c, color, cd->label, dash);
  }
  if (item >= 0) svg_hline(&c, s->slo.it[item].limit_ms, "#d62728", "6,3", "objective");
  svg_chart_end(&c);
  free(x), free(y);
}

/* What each candidate meeting the SLOs costs at the target rate, cheapest first, the recommendation in its own
 * colour: dollars per hour when every one has a price, else GPUs. */
static void cost_chart(FILE *f, const capacity_set *s) {
  int ord[MAX_BARS], n = 0;
  bool priced = true;
  for (size_t i = 0; i < s->n && n < MAX_BARS; i++) {
    const cap_candidate *c = &s->c[i];
    if (!c->feasible || !(c->max_rate > 0) || !c->replicas || c->verified < 0) continue;
    ord[n++] = (int)i;
    priced &= c->usd_per_hour > 0;
  }
  if (!n) return;
  for (int a = 1; a < n; a++) /* cheapest first; ties in candidate order */
    for (int b = a; b > 0; b--) {
      const cap_candidate *p = &s->c[ord[b - 1]], *q = &s->c[ord[b]];
      double vp = priced ? p->usd_per_hour : p->gpus, vq = priced ? q->usd_per_hour : q->gpus;
      if (vp <= vq) break;
      int t = ord[b];
      ord[b] = ord[b - 1], ord[b - 1] = t;
    }
  const char *labels[MAX_BARS];
  char buf[MAX_BARS][200];
  double vals[2 * MAX_BARS];
  for (int k = 0; k < n; k++) {
    const cap_candidate *c = &s->c[ord[k]];
    snprintf(buf[k], sizeof buf[k], "%.120s: %u x = %u GPU%s", c->label, c->replicas, c->gpus, c->gpus == 1 ? "" : "s");
    labels[k] = buf[k];
    double v = priced ? c->usd_per_hour : c->gpus;
    vals[2 * k] = ord[k] == s->best ? v : 0;
    vals[2 * k + 1] = ord[k] == s->best ? 0 : v;
  }
  static const char *const seg[] = {"recommended", "other candidates meeting the SLOs"};
  const char *col[] = {svg_color(2), "#9ecae1"};
  rh_heading(f, 2, "What each candidate meeting the SLOs costs at the target rate");
  svg_stacked_bars(f, 1140, priced ? "USD per hour of the fleet each candidate needs, cheapest first"
                                   : "GPUs each candidate needs, fewest first (no price for every GPU)",
                   priced ? "USD per hour" : "GPUs", seg, col, 2, labels, vals, n, 0);
}

static void cap_table(FILE *f, const capacity_set *s) {
  static const char *const cols[] = {"#", "candidate", "req/s per replica", "replicas", "GPUs", "$/hour", "verdict"};
  fputs("<table>\n", f);
  rh_th_row(f, cols, (int)SIM_ARRAY_LEN(cols), 0x42);
  for (size_t i = 0; i < s->n; i++) {
    const cap_candidate *c = &s->c[i];
    bool ok = c->feasible && c->max_rate > 0;
    fprintf(f, "<tr%s>", (int)i == s->best ? " class=\"best\"" : ok ? "" : " class=\"bad\"");
    rh_td(f, false, "%zu", i);
    rh_td(f, true, "%s", c->label);
    if (ok) {
      rh_td(f, false, "%.3g", c->max_rate);
      rh_td(f, false, "%u", c->replicas);
      rh_td(f, false, "%u", c->gpus);
      rh_td(f, false, "%.2f", c->usd_per_hour);
    } else {
      fputs("<td>-</td><td>-</td><td>-</td><td>-</td>", f);
    }
    rh_td(f, true, "%s", c->why);
    fputs("</tr>\n", f);
  }
  fputs("</table>\n", f);
}

void rh_capacity_sections(FILE *f, const capacity_set *s) {
  rh_heading(f, 2, "Candidates");
  char note[640];
  snprintf(note, sizeof note,
           "Per-replica capacity by bisection on the offered rate (relative tolerance %g, at most %d simulations "
           "per candidate; requests unfinished at the time limit count as misses). Replicas: the smallest fleet "
           "that met the SLOs when simulated at %g req/s behind the router, where verified; else ceil(%g / "
           "capacity), one replica's arithmetic, where that search starts.",
           s->bo.rel_tol, s->bo.max_probes, s->target_rate, s->target_rate);
  rh_para(f, "note", note);
  cap_table(f, s);
  if (s->mig_layouts[0]) rh_para(f, NULL, s->mig_layouts);
  cost_chart(f, s);
  rh_heading(f, 2, "Latency vs request rate (one replica)");
  rh_para(f, "note", "Every simulation the search ran; the diamond marks each candidate's knee, the highest rate "
                     "meeting every objective (labelled for the recommendation). Points on the top edge are off the "
                     "scale: infinite when more requests than the percentile allows were unfinished at the time "
                     "limit.");
  fputs("<div class=\"row\">\n", f);
  for (int k = 0; k < s->slo.n; k++) probe_chart(f, s, k);
  if (!s->slo.n) probe_chart(f, s, -1); /* no objective: throughput is the only curve to show */
  fputs("</div>\n", f);
  const char *labels[MAX_BARS];
  const mem_plan *mp[MAX_BARS];
  char buf[MAX_BARS][160];
  int n = 0;
  for (size_t i = 0; i < s->n && n < MAX_BARS; i++) {
    const cap_candidate *c = &s->c[i];
    if (!c->cfg.mem.device_bytes) continue;
    snprintf(buf[n], sizeof buf[n], "%.120s%s", c->label, c->feasible ? "" : " (no)");
    labels[n] = buf[n];
    mp[n] = &c->cfg.mem;
    n++;
  }
  if (n) {
    rh_heading(f, 2, "Memory per GPU of each candidate");
    rh_memory_bars(f, "Where each GPU's memory goes ((no) = cannot start)", labels, mp, n);
  }
}
