/* report_html.c: the self-contained XHTML report (see report_html.h): the
 * answer first, then the evidence as inline SVG charts (svg.h) and tables.
 * Well-formed XML throughout: every element closed, text escaped, only
 * numeric character references. No dates, so identical inputs give
 * identical files. */
#include "report/report.h"
#include "report/report_html.h"
#include "runner/whatif.h"

#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "report/svg.h"

#define GIB (1024.0 * 1024.0 * 1024.0)

static const char *CSS =
    "body{font-family:Helvetica,Arial,sans-serif;color:#222;max-width:1160px;margin:16px auto;padding:0 12px;"
    "line-height:1.4;font-size:14px}"
    "h1{font-size:22px;margin:8px 0}h2{font-size:17px;margin:26px 0 6px;border-bottom:1px solid #ccc}"
    "h3{font-size:14px;margin:14px 0 4px}"
    ".cmd{font-family:monospace;font-size:12px;background:#f4f4f4;padding:6px 8px;word-break:break-all}"
    ".answer{background:#eef5ff;border-left:5px solid #1f77b4;padding:8px 14px;font-size:15px}"
    ".row{display:flex;flex-wrap:wrap;gap:8px}"
    "table{border-collapse:collapse;font-size:12px;margin:6px 0}"
    "td,th{border:1px solid #ddd;padding:3px 6px;text-align:right}th{background:#f0f0f0}"
    "td.l,th.l{text-align:left}td.l:nth-child(2){white-space:nowrap}tr.best td{background:#e8f6e8;font-weight:bold}tr.bad td{color:#888}"
    ".note{color:#555;font-size:12px}";

static void esc(FILE *f, const char *s) { svg_escape(f, s); }

void rh_para(FILE *f, const char *cls, const char *s) {
  fprintf(f, "<p%s%s%s>", cls ? " class=\"" : "", cls ? cls : "", cls ? "\"" : "");
  esc(f, s);
  fputs("</p>\n", f);
}

void rh_heading(FILE *f, int level, const char *s) {
  fprintf(f, "<h%d>", level);
  esc(f, s);
  fprintf(f, "</h%d>\n", level);
}

void rh_td(FILE *f, bool left, const char *fmt, ...) {
  char buf[2048];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(buf, sizeof buf, fmt, ap);
  va_end(ap);
  fputs(left ? "<td class=\"l\">" : "<td>", f);
  esc(f, buf);
  fputs("</td>", f);
}

void rh_th_row(FILE *f, const char *const *cols, int n, unsigned left_mask) {
  fputs("<tr>", f);
  for (int i = 0; i < n; i++) {
    fputs(left_mask >> i & 1 ? "<th class=\"l\">" : "<th>", f);
    esc(f, cols[i]);
    fputs("</th>", f);
  }
  fputs("</tr>\n", f);
}

/* ---- shared with report_md.c ------------------------------------------------------ */

void report_iv_note(const run_result *r, char *buf, size_t n) {
  const unc_figs *iv = &r->iv;
  buf[0] = 0;
  if (!iv->on) return;
  size_t o = (size_t)snprintf(buf, n, "%g%% intervals: where a measured value would fall (docs/UNCERTAINTY.md); "
                              "stratum %s, model part from %s; workload part: ", 100 * iv->level, iv->stratum, iv->table);
  if (o >= n) return;
  if (iv->fixed_trace) snprintf(buf + o, n - o, "none (a fixed trace: no seeds to vary).");
  else if (iv->large) snprintf(buf + o, n - o, "none (more requests than extra seeds are run for).");
  else if (iv->seedless) snprintf(buf + o, n - o, "none (another seed generates the same requests).");
  else if (iv->n_values > 1) snprintf(buf + o, n - o, "the run and %u more seeds.", iv->n_values - 1);
  else snprintf(buf + o, n - o, "none (--interval-seeds 0).");
}

/* The intervals table of a run (HTML). */
static void iv_table(FILE *f, const run_result *r) {
  if (!r->iv.on) return;
  static const char *const cols[] = {"figure", "predicted", "interval", "residuals of"};
  fputs("<table>", f);
  rh_th_row(f, cols, 4, 1u);
  for (int k = 0; k < UF_COUNT; k++) {
    const unc_interval *it = &r->iv.it[k];
    fputs("<tr>", f);
    rh_td(f, true, "%s (%s)", unc_fig_label((unc_fig)k), unc_fig_unit((unc_fig)k));
    rh_td(f, false, "%.2f", it->point);
    if (it->have) {
      rh_td(f, false, "%.2f - %.2f", it->lo, it->hi);
      rh_td(f, false, "%s (%zu points)", it->key, it->n_model);
    } else {
      rh_td(f, false, "no validation data");
      rh_td(f, false, "-");
    }
    fputs("</tr>\n", f);
  }
  fputs("</table>\n", f);
  char note[1024];
  report_iv_note(r, note, sizeof note);
  rh_para(f, "note", note);
}

size_t report_latencies(const run_result *r, int metric, double **out) {
  size_t n = r->n_reqs, m = 0;
  double *v = sim_malloc((n + 1) * sizeof *v);
  for (size_t i = 0; i < n; i++) {
    const run_record *q = &r->reqs[i];
    if (q->outcome != REQ_FINISHED) continue;
    if (metric == SLO_TTFT) v[m++] = run_record_ttft_ms(q);
    else if (metric == SLO_E2EL) v[m++] = run_record_e2el_ms(q);
    else if (q->generated > 1) v[m++] = run_record_tpot_ms(q);
  }
  sim_sort_doubles(v, m);
  *out = v;
  return m;
}

void report_run_summary(const run_result *r, const slo_set *slo, char *buf, size_t n) {
  const metrics_summary *s = &r->sum;
  const deploy_cfg *d = &r->deploy;
  size_t o = 0;
#define ADD(...) o += (size_t)snprintf(buf + o, o < n ? n - o : 0, __VA_ARGS__)
  uint32_t gpus = deploy_gpus_total(d);
  char layout[96];
  deploy_layout_text(d, layout, sizeof layout);
  ADD("%s on %u x %s (%s x %u replica%s, %s weights, %s KV cache) served %zu of %zu requests of %s "
      "(%.2f req/s offered) in %.0f s: p99 TTFT %.0f ms, p99 TPOT %.1f ms, %.0f output tokens/s (%.0f per GPU).",
      r->model.name, gpus, r->gpu.name, layout, d->replicas, d->replicas == 1 ? "" : "s", dtype_name(d->weight_dtype),
      dtype_name(d->kv_dtype), s->completed, s->total, r->tr.source, r->tr_stats.rate_per_s, s->duration_s,
      s->ttft_ms.p99, s->tpot_ms.p99, s->output_throughput, gpus ? s->output_throughput / gpus : 0);
  if (s->unfinished) ADD(" %zu requests were still unfinished when the run stopped.", s->unfinished);
  if (slo && slo->n) {
    slo_result res;
    slo_eval(r, slo, &res);
    if (res.all_ok) ADD(" Every objective is met (");
    else ADD(" Objectives missed (");
    for (int k = 0; k < slo->n; k++)
      ADD("%s%s %.1f ms %s %g", k ? ", " : "", slo->it[k].key, res.value_ms[k], res.ok[k] ? "<=" : ">",
          slo->it[k].limit_ms);
    ADD(").");
  }
  bottleneck b = r->bn;
  ADD(" Binding limit: %s. %s", limit_name(b.primary), b.explain);
  whatif_report wr = r->whatif;
  for (uint32_t i = 0; i < wr.count; i++) ADD(" What-if: %s.", wr.n[i].text);
#undef ADD
}

/* ---- memory ----------------------------------------------------------------------- */

void rh_memory_bars(FILE *f, const char *title, const char *const *labels, const mem_plan *const *mp, int n) {
  static const char *const seg[] = {"weights", "activations", "CUDA graphs", "runtime", "KV cache", "reserve"};
  static const char *const col[] = {"#1f77b4", "#ff7f0e", "#9467bd", "#8c564b", "#2ca02c", "#cccccc"};
  double *v = sim_calloc((size_t)n * 6 + 1, sizeof *v);
  for (int b = 0; b < n; b++) {
    const mem_plan *m = mp[b];
    double *x = v + b * 6;
    x[0] = m->weights_bytes / GIB;
    x[1] = m->activation_bytes / GIB;
    x[2] = m->cuda_graph_bytes / GIB;
    x[3] = m->runtime_bytes / GIB;
    x[4] = m->kv_bytes > 0 ? m->kv_bytes / GIB : 0;
    x[5] = (m->device_bytes - m->budget_bytes) / GIB;
  }
  svg_stacked_bars(f, 1140, title, "GiB per GPU (reserve = memory outside gpu_memory_utilization)", seg, col, 6,
                   labels, v, n, 0);
  free(v);
}

/* ---- a run ------------------------------------------------------------------------- */

static void key_numbers(FILE *f, const run_result *r) {
  const metrics_summary *s = &r->sum;
  fputs("<table><tr><th class=\"l\">metric</th><th>mean</th><th>median</th><th>p90</th><th>p99</th></tr>\n", f);
  const char *names[] = {"TTFT (ms)", "TPOT (ms)", "ITL (ms)", "E2E latency (ms)", "TTFT: frontend (ms)",
                         "TTFT: queueing (ms)", "TTFT: prefill to first token (ms)"};
  const dist_stats *d[] = {&s->ttft_ms, &s->tpot_ms, &s->itl_ms, &s->e2el_ms, &s->frontend_ms, &s->queue_ms,
                           &s->prefill_ms};
  for (int i = 0; i < 7; i++) {
    fputs("<tr>", f);
    rh_td(f, true, "%s", names[i]);
    rh_td(f, false, "%.1f", d[i]->mean);
    rh_td(f, false, "%.1f", d[i]->median);
    rh_td(f, false, "%.1f", d[i]->p90);
    rh_td(f, false, "%.1f", d[i]->p99);
    fputs("</tr>\n", f);
  }
  fputs("</table>\n<table>", f);
  fputs("<tr>", f);
  rh_td(f, true, "completed / unfinished / rejected");
  rh_td(f, false, "%zu / %zu / %zu", s->completed, s->unfinished, s->rejected);
  fputs("</tr><tr>", f);
  rh_td(f, true, "request / output token throughput");
  rh_td(f, false, "%.2f req/s / %.0f tok/s", s->request_throughput, s->output_throughput);
  fputs("</tr><tr>", f);
  rh_td(f, true, "mean batch, steps, preemptions");
  rh_td(f, false, "%.1f seqs, %llu steps, %llu", s->mean_batch_seqs, (unsigned long long)s->steps,
     (unsigned long long)r->m.preemptions);
  fputs("</tr><tr>", f);
  rh_td(f, true, "cost model");
  rh_td(f, false, "%s", r->cost_source);
  fputs("</tr></table>\n", f);
}

static void cdf_chart(FILE *f, const run_result *r, const slo_set *slo, int metric, const char *title) {
  double *v;
  size_t n = report_latencies(r, metric, &v);
  if (!n) {
    free(v);
    return;
  }
  double lo = v[0] > 0.1 ? v[0] : 0.1, hi = v[n - 1];
  for (int k = 0; slo && k < slo->n; k++)
    if ((int)slo->it[k].metric == metric && slo->it[k].limit_ms * 1.3 > hi) hi = slo->it[k].limit_ms * 1.3;
  svg_nice_range(&lo, &hi, true);
  svg_chart c;
  svg_chart_begin(&c, f, 374, 280, title, (svg_axis){lo, hi, true, "milliseconds (log scale)"},
                  (svg_axis){0, 1, false, "fraction of requests"});
  enum { P = 600 };
  size_t m = n < P ? n : P;
  double x[P], y[P];
  for (size_t i = 0; i < m; i++) {
    size_t k = m == 1 ? 0 : (size_t)((double)i * (double)(n - 1) / (double)(m - 1) + 0.5);
    x[i] = v[k] > lo ? v[k] : lo;
    y[i] = (double)(k + 1) / (double)n;
  }
  svg_line(&c, x, y, m, svg_color(0), 2, NULL);
  double p50 = v[(n - 1) / 2], p99 = v[(size_t)floor(0.99 * (double)(n - 1))];
  char lab[96];
  snprintf(lab, sizeof lab, p50 >= 100 ? "p50 %.0f ms" : "p50 %.3g ms", p50);
  svg_marker(&c, p50, 0.5, svg_color(0), 4, lab);
  snprintf(lab, sizeof lab, p99 >= 100 ? "p99 %.0f ms" : "p99 %.3g ms", p99);
  svg_marker(&c, p99, 0.99, svg_color(0), 4, lab);
  for (int k = 0; slo && k < slo->n; k++)
    if ((int)slo->it[k].metric == metric) {
      snprintf(lab, sizeof lab, "SLO %s %g ms", slo->it[k].key, slo->it[k].limit_ms);
      svg_vline(&c, slo->it[k].limit_ms, "#d62728", "6,3", lab);
      if (slo->it[k].pct > 0) svg_hline(&c, slo->it[k].pct / 100, "#999999", "2,3", NULL);
    }
  svg_chart_end(&c);
  free(v);
}

/* Marks failures and traffic shapes on a timeline. */
static void whatif_lines(svg_chart *c, const run_result *r) {
  char lab[96];
  for (uint32_t i = 0; i < r->sc.n_failures; i++) {
    snprintf(lab, sizeof lab, "replica %u lost", r->sc.failures[i].replica);
    svg_vline(c, r->sc.failures[i].at_s, "#d62728", "4,3", lab);
  }
  const traffic_warp *w = &r->sc.traffic;
  if (w->kind != WARP_NONE) {
    snprintf(lab, sizeof lab, "traffic x%g", w->factor);
    svg_vline(c, w->t0_s, "#9467bd", "4,3", w->kind == WARP_STEP ? lab : "ramp starts");
    if (w->kind == WARP_RAMP) svg_vline(c, w->t1_s, "#9467bd", "4,3", lab);
  }
}

/* A run's time series in at most P buckets (bucket maxima keep the spikes). */
enum { TL_POINTS = 600 };
typedef struct tl_series {
  size_t n;
  double t[TL_POINTS], wait[TL_POINTS], run[TL_POINTS], kv[TL_POINTS], kvmax[TL_POINTS];
} tl_series;

static void tl_fill(const run_result *r, tl_series *s) {
  const metrics_rec *m = &r->m;
  size_t k = (m->n_ts + TL_POINTS - 1) / TL_POINTS, n = 0;
  for (size_t i = 0; i < m->n_ts && n < TL_POINTS; i += k, n++) {
    s->t[n] = (double)m->ts[i].t_ns / 1e9;
    s->wait[n] = s->run[n] = s->kv[n] = s->kvmax[n] = 0;
    for (size_t j = i; j < i + k && j < m->n_ts; j++) {
      const ts_row *q = &m->ts[j];
      s->wait[n] = fmax(s->wait[n], q->waiting + q->client_queue);
      s->run[n] = fmax(s->run[n], q->running);
      s->kv[n] = fmax(s->kv[n], 100.0 * q->kv_usage_mean);
      s->kvmax[n] = fmax(s->kvmax[n], 100.0 * q->kv_usage_max);
    }
  }
  s->n = n;
}

/* The timelines; with a baseline (run --baseline) its series in grey beneath. */
static void timelines(FILE *f, const run_result *r, const run_result *base) {
  if (r->m.n_ts < 2) return;
  tl_series *a = sim_malloc(sizeof *a), *b = sim_calloc(1, sizeof *b); /* 24 KB each: not on the stack */
  tl_fill(r, a);
  bool with_b = base && base->m.n_ts >= 2;
  if (with_b) tl_fill(base, b);
  double t1 = a->t[a->n - 1];
  if (with_b && b->t[b->n - 1] > t1) t1 = b->t[b->n - 1];
  const struct {
    const char *title, *ylab;
    double *y, *y2, *yb;
    const char *l1, *l2;
  } ch[] = {{"Requests waiting (replica queues + client)", "requests", a->wait, NULL, b->wait, NULL, NULL},
            {"Running batch (sequences in the step, all replicas)", "sequences", a->run, NULL, b->run, NULL, NULL},
            {"KV cache usage", "% of the KV pool", a->kv, a->kvmax, b->kv, "mean over replicas", "busiest replica"}};
  fputs("<div class=\"row\">\n", f);
  for (size_t c = 0; c < SIM_ARRAY_LEN(ch); c++) {
    double lo = 0, hi = 1;
    for (size_t i = 0; i < a->n; i++) hi = fmax(hi, fmax(ch[c].y[i], ch[c].y2 ? ch[c].y2[i] : 0));
    for (size_t i = 0; with_b && i < b->n; i++) hi = fmax(hi, ch[c].yb[i]);
    if (ch[c].y2) hi = 100;
    svg_nice_range(&lo, &hi, false);
    double x0 = 0, x1 = t1;
    svg_nice_range(&x0, &x1, false);
    svg_chart sc;
    int nleg = (ch[c].y2 ? 2 : 0) + (with_b ? (ch[c].y2 ? 1 : 2) : 0);
    svg_chart_begin_legend(&sc, f, 374, 250, ch[c].title, (svg_axis){x0, x1, false, "time (s)"},
                           (svg_axis){lo, hi, false, ch[c].ylab}, nleg);
    if (with_b) svg_line(&sc, b->t, ch[c].yb, b->n, "#aaaaaa", 1.2, NULL);
    if (ch[c].y2) svg_line(&sc, a->t, ch[c].y2, a->n, svg_color(1), 1.2, NULL);
    svg_line(&sc, a->t, ch[c].y, a->n, svg_color(0), 1.6, NULL);
    if (ch[c].y2) {
      svg_legend(&sc, svg_color(0), ch[c].l1, NULL);
      svg_legend(&sc, svg_color(1), ch[c].l2, NULL);
    } else if (with_b) {
      svg_legend(&sc, svg_color(0), "with the what-if", NULL);
    }
    if (with_b) svg_legend(&sc, "#aaaaaa", ch[c].y2 ? "baseline (mean)" : "baseline (no what-if)", NULL);
    whatif_lines(&sc, r);
    svg_chart_end(&sc);
  }
  fputs("</div>\n", f);
  report_scale_html(r, f);
  free(a);
  free(b);
}

static void run_sections(FILE *f, const run_result *r, const run_result *base, const slo_set *slo, const char *what) {
  char h[256];
  snprintf(h, sizeof h, "%s: latency distributions", what);
  rh_heading(f, 2, h);
  rh_para(f, "note", "Cumulative distributions over completed requests (vLLM's definitions); red dashed lines are the "
                  "objectives, the dotted line their percentile.");
  fputs("<div class=\"row\">\n", f);
  cdf_chart(f, r, slo, SLO_TTFT, "Time to first token");
  cdf_chart(f, r, slo, SLO_TPOT, "Time per output token");
  cdf_chart(f, r, slo, SLO_E2EL, "End-to-end latency");
  fputs("</div>\n", f);
  key_numbers(f, r);
  iv_table(f, r);
  snprintf(h, sizeof h, "%s: over time", what);
  rh_heading(f, 2, h);
  timelines(f, r, base);
  snprintf(h, sizeof h, "%s: memory per GPU", what);
  rh_heading(f, 2, h);
  char lab[256];
  char layout[96];
  deploy_layout_text(&r->deploy, layout, sizeof layout);
  snprintf(lab, sizeof lab, "%s %s %s", r->gpu.name, layout, dtype_name(r->deploy.weight_dtype));
  const char *labels[] = {lab};
  const mem_plan *mp[] = {&r->plan};
  rh_memory_bars(f, "Memory plan of one GPU", labels, mp, 1);
  snprintf(h, sizeof h, "KV cache: %.1f KiB per token, %u blocks of %u tokens = %llu tokens per replica.",
           r->plan.kv_bytes_per_token / 1024, r->plan.kv_blocks, r->plan.block_tokens,
           (unsigned long long)r->plan.kv_tokens);
  rh_para(f, "note", h);
}

/* ---- the document ------------------------------------------------------------------ */

const char *report_doc_kind(const report_doc *d) { return d->cap ? "capacity" : d->sweep ? "sweep" : "run"; }

static void add_source(const char *src, const char **seen, int *n_seen, int cap) {
  if (!src || !src[0]) return;
  for (int i = 0; i < *n_seen; i++)
    if (!strcmp(seen[i], src)) return;
  if (*n_seen < cap) seen[(*n_seen)++] = src;
}

void report_doc_cost_sources(const report_doc *d, char *buf, size_t n) {
  const char *seen[16];
  int k = 0;
  if (d->run) add_source(d->run->cost_source, seen, &k, 16);
  if (d->sweep)
    for (size_t i = 0; i < d->sweep->n; i++) add_source(d->sweep->rows[i].cost_source, seen, &k, 16);
  if (d->cap)
    for (size_t i = 0; i < d->cap->n; i++) add_source(d->cap->c[i].cfg.cost_source, seen, &k, 16);
  size_t used = (size_t)snprintf(buf, n, "Cost model: ");
  for (int i = 0; i < k && used < n; i++) used += (size_t)snprintf(buf + used, n - used, "%s%s", i ? "; " : "", seen[i]);
  if (!k && used < n) snprintf(buf + used, n - used, "none of the configurations ran.");
  else if (used < n) snprintf(buf + used, n - used, ".");
}

void report_doc_answer(const report_doc *d, char *buf, size_t n) {
  if (d->cap) snprintf(buf, n, "%s", d->cap->summary);
  else if (d->sweep) sweep_summary(d->sweep, buf, n);
  else if (d->run) report_run_summary(d->run, d->slo, buf, n);
  else buf[0] = 0;
}

/* `run --baseline`: both runs side by side and the recovery after a loss (whatif.h). */
static void compare_section(FILE *f, const run_result *base, const run_result *wi, const whatif_compare *c) {
  rh_heading(f, 2, "What-if vs baseline");
  char note[400];
  snprintf(note, sizeof note, "The baseline is %s; the timelines below draw it in grey.", c->baseline_is);
  rh_para(f, "note", note);
  const char *cols[] = {"metric", "baseline", "what-if"};
  fputs("<table>", f);
  rh_th_row(f, cols, 3, 1);
  const metrics_summary *a = &base->sum, *b = &wi->sum;
  const struct {
    const char *name;
    double x, y;
  } rows[] = {{"p50 TTFT (ms)", a->ttft_ms.median, b->ttft_ms.median},
              {"p99 TTFT (ms)", a->ttft_ms.p99, b->ttft_ms.p99},
              {"p50 TPOT (ms)", a->tpot_ms.median, b->tpot_ms.median},
              {"p99 TPOT (ms)", a->tpot_ms.p99, b->tpot_ms.p99},
              {"output throughput (tok/s)", a->output_throughput, b->output_throughput},
              {"request goodput (req/s)", a->request_goodput, b->request_goodput},
              {"mean requests waiting", a->mean_waiting, b->mean_waiting},
              {"peak requests waiting", c->peak_waiting[0], c->peak_waiting[1]},
              {"peak KV usage, busiest replica (%)", 100 * c->peak_kv[0], 100 * c->peak_kv[1]}};
  for (size_t i = 0; i < SIM_ARRAY_LEN(rows); i++) {
    if (i == 5 && !a->has_goodput && !b->has_goodput) continue;
    fputs("<tr>", f);
    rh_td(f, true, "%s", rows[i].name);
    rh_td(f, false, "%.2f", rows[i].x);
    rh_td(f, false, "%.2f", rows[i].y);
    fputs("</tr>\n", f);
  }
  fputs("</table>\n", f);
  if (c->has_loss) {
    char p[512], objs[256] = "";
    for (int k = 0; k < c->n_obj; k++) {
      size_t n = strlen(objs);
      snprintf(objs + n, sizeof objs - n, "%s%s %.0f ms", k ? ", " : "", c->obj[k].key, c->obj[k].limit_ms);
    }
    const char *from = c->limit_from_slo ? "the SLOs" : "1.1 x the baseline";
    const char *ev = c->step_event ? "Traffic step (autoscaled)" : "Replica loss";
    if (!c->breached)
      snprintf(p, sizeof p, "%s at %g s: no %g-s window of requests missed %s (%s).", ev, c->loss_at_s,
               WHATIF_WINDOW_S, objs, from);
    else if (c->recovered)
      snprintf(p, sizeof p, "%s at %g s: %s missed from the window at %g s; every objective (%s) met again "
               "%.0f s after %s.", ev, c->loss_at_s, c->obj[c->breach_obj].key, c->breach_at_s, objs, c->recovery_s,
               c->step_event ? "it" : "the loss");
    else
      snprintf(p, sizeof p, "%s at %g s: %s missed from the window at %g s and NOT RECOVERED (%s) before the "
               "last arrival.", ev, c->loss_at_s, c->obj[c->breach_obj].key, c->breach_at_s, objs);
    rh_para(f, NULL, p);
  }
}

void rh_doc_begin(FILE *f, const char *kind) {
  fputs("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<!DOCTYPE html>\n"
        "<html xmlns=\"http://www.w3.org/1999/xhtml\" lang=\"en\">\n<head>\n<meta charset=\"UTF-8\"/>\n",
        f);
  fprintf(f, "<title>servesim %s report</title>\n<style>%s</style>\n</head>\n<body>\n", kind, CSS);
  fprintf(f, "<h1>servesim %s report</h1>\n", kind);
}

int report_html(const report_doc *d, FILE *f, sim_err *err) {
  rh_doc_begin(f, report_doc_kind(d));
  if (d->command) rh_para(f, "cmd", d->command);
  char *sum = sim_malloc(8192);
  report_doc_answer(d, sum, 8192);
  fputs("<div class=\"answer\"><h3>The answer</h3>\n", f);
  rh_para(f, NULL, sum);
  fputs("</div>\n", f);
  report_doc_cost_sources(d, sum, 8192);
  rh_para(f, "note", sum);
  free(sum);
  if (d->cap) rh_capacity_sections(f, d->cap);
  if (d->sweep) rh_sweep_sections(f, d->sweep);
  if (d->run) {
    if (d->cap) {
      char s[4096];
      report_run_summary(d->run, d->slo, s, sizeof s);
      rh_heading(f, 2, "The recommendation, simulated at the target rate");
      rh_para(f, NULL, s);
    }
    if (d->baseline && d->cmp) compare_section(f, d->baseline, d->run, d->cmp);
    run_sections(f, d->run, d->baseline, d->slo, d->cap ? "Verification run" : "Run");
  }
  rh_para(f, "note", "Generated by servesim " SERVESIM_VERSION ". Simulated, not measured: the cost model line at "
                  "the top says what served the step times.");
  fputs("</body>\n</html>\n", f);
  if (ferror(f)) return sim_errf(err, SIM_EINPUT, "write failed");
  return SIM_OK;
}
