/* report_md.c: the Markdown report: the same answer and tables as the HTML
 * report (report_html.h), without charts. Deterministic. */
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "report/report_html.h"

/* Table cell text: '|' escaped, newlines flattened. */
static void cell(FILE *f, const char *s) {
  fputs(" ", f);
  for (; *s; s++) {
    if (*s == '|') fputs("\\|", f);
    else if (*s == '\n') fputc(' ', f);
    else fputc(*s, f);
  }
  fputs(" |", f);
}

static void cellf(FILE *f, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void cellf(FILE *f, const char *fmt, ...) {
  char buf[2048];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(buf, sizeof buf, fmt, ap);
  va_end(ap);
  cell(f, buf);
}

static void header(FILE *f, const char *const *cols, int n) {
  fputs("|", f);
  for (int i = 0; i < n; i++) cell(f, cols[i]);
  fputs("\n|", f);
  for (int i = 0; i < n; i++) fputs(i <= 1 ? " :-- |" : " --: |", f);
  fputs("\n", f);
}

static void run_md(FILE *f, const run_result *r, const slo_set *slo, const char *what) {
  const metrics_summary *s = &r->sum;
  fprintf(f, "\n## %s: key numbers\n\n", what);
  static const char *const cols[] = {"metric", "what", "mean", "median", "p90", "p99"};
  header(f, cols, 6);
  const char *names[] = {"TTFT", "TPOT", "ITL", "E2E latency", "TTFT: frontend", "TTFT: queueing",
                         "TTFT: prefill to first token"};
  const dist_stats *d[] = {&s->ttft_ms, &s->tpot_ms, &s->itl_ms, &s->e2el_ms, &s->frontend_ms, &s->queue_ms,
                           &s->prefill_ms};
  for (int i = 0; i < 7; i++) {
    fputs("|", f);
    cell(f, names[i]);
    cell(f, "ms");
    cellf(f, "%.1f", d[i]->mean);
    cellf(f, "%.1f", d[i]->median);
    cellf(f, "%.1f", d[i]->p90);
    cellf(f, "%.1f", d[i]->p99);
    fputs("\n", f);
  }
  if (r->iv.on) {
    fputs("\n| figure | predicted | interval | residuals of |\n| :-- | --: | --: | :-- |\n", f);
    for (int k = 0; k < UF_COUNT; k++) {
      const unc_interval *it = &r->iv.it[k];
      fprintf(f, "| %s (%s) | %.2f |", unc_fig_label((unc_fig)k), unc_fig_unit((unc_fig)k), it->point);
      if (it->have) fprintf(f, " %.2f - %.2f | %s (%zu points) |\n", it->lo, it->hi, it->key, it->n_model);
      else fputs(" no validation data | - |\n", f);
    }
    char note[1024];
    report_iv_note(r, note, sizeof note);
    fprintf(f, "\n%s\n", note);
  }
  fprintf(f, "\nCompleted %zu, unfinished %zu, rejected %zu; %.2f req/s, %.0f output tokens/s over %.1f s.\n",
          s->completed, s->unfinished, s->rejected, s->request_throughput, s->output_throughput, s->duration_s);
  if (slo && slo->n) {
    slo_result res;
    slo_eval(r, slo, &res);
    fputs("\n| objective | limit (ms) | measured (ms) | met |\n| :-- | --: | --: | :-- |\n", f);
    for (int k = 0; k < slo->n; k++)
      fprintf(f, "| %s | %g | %.1f | %s |\n", slo->it[k].key, slo->it[k].limit_ms, res.value_ms[k], res.ok[k] ? "yes" : "no");
  }
  const mem_plan *p = &r->plan;
  const double gib = 1024.0 * 1024.0 * 1024.0;
  char layout[96];
  deploy_layout_text(&r->deploy, layout, sizeof layout);
  fprintf(f, "\nMemory per GPU (%s, %s%s): weights %.1f GiB, activations %.1f GiB, CUDA graphs %.1f GiB, runtime %.1f "
             "GiB, KV cache %.1f GiB = %llu tokens (%.1f KiB per token).\n",
          r->gpu.name, layout, p->pp > 1 ? ", the pipeline stage with the smallest pool" : "", p->weights_bytes / gib, p->activation_bytes / gib, p->cuda_graph_bytes / gib,
          p->runtime_bytes / gib, p->kv_bytes / gib, (unsigned long long)p->kv_tokens, p->kv_bytes_per_token / 1024);
  fprintf(f, "\nCost model: %s\n", r->cost_source);
}

static void sweep_md(FILE *f, const sweep_set *s) {
  static const char *const cols[] = {"#", "configuration", "offered req/s", "tok/s/GPU", "tok/s/user", "p99 TTFT ms",
                                     "p99 TPOT ms", "$/M out tok", "limit", "SLO"};
  fputs("\n## Pareto frontier (throughput per GPU vs tokens/s per user)\n\n", f);
  header(f, cols, 10);
  for (int pass = 0; pass < 2; pass++) {
    if (pass == 1) fputs("\n## All configurations\n\n", f), header(f, cols, 10);
    for (size_t i = 0; i < s->n && i < 400; i++) {
      const sweep_row *r = &s->rows[i];
      if (pass == 0 && !r->pareto_user) continue;
      fputs("|", f);
      cellf(f, "%zu", i);
      cell(f, r->label);
      if (!r->feasible) {
        char b[1200];
        snprintf(b, sizeof b, "cannot start: %s", r->reason);
        cell(f, b);
        fputs(" | | | | | | |\n", f);
        continue;
      }
      cellf(f, "%.3g", r->offered_rate);
      cellf(f, "%.1f", r->tput_per_gpu);
      cellf(f, "%.1f", r->tok_s_per_user);
      cellf(f, "%.0f", r->sum.ttft_ms.p99);
      cellf(f, "%.1f", r->sum.tpot_ms.p99);
      cellf(f, "%.3f", r->usd_per_m_output);
      cell(f, limit_name(r->bn.primary));
      cell(f, s->slo.n ? (r->slo.all_ok ? "meets" : "misses") : "");
      fputs("\n", f);
    }
  }
  sweep_curve *cv;
  size_t nc = sweep_curves(s, &cv);
  if (nc) {
    fprintf(f, "\n## Knee per deployment (%s)\n\n| deployment | p99 TTFT line (ms) | knee (req/s) | "
               "highest load tried (req/s) |\n| :-- | --: | --: | --: |\n",
            s->slo.n ? "the last load meeting the SLOs" : "the last load before p99 TTFT passes 3x its low-load value");
    for (size_t c = 0; c < nc; c++) {
      fputs("|", f);
      cell(f, cv[c].label);
      cellf(f, "%.0f", cv[c].limit_ms);
      if (cv[c].knee >= 0) cellf(f, "%.3g", s->rows[cv[c].row[cv[c].knee]].offered_rate);
      else cell(f, "none: the lowest load already fails");
      cellf(f, "%.3g", s->rows[cv[c].row[cv[c].n - 1]].offered_rate);
      fputs("\n", f);
    }
  }
  sweep_curves_free(cv, nc);
}

static void capacity_md(FILE *f, const capacity_set *s) {
  fprintf(f, "\n## Candidates\n\nPer-replica capacity by bisection on the offered rate (relative tolerance %g, at most "
             "%d simulations per candidate); replicas: the smallest fleet that met the SLOs when simulated at %g req/s "
             "behind the router, where verified; else ceil(%g / capacity), one replica's arithmetic, where that "
             "search starts.\n\n",
          s->bo.rel_tol, s->bo.max_probes, s->target_rate, s->target_rate);
  static const char *const cols[] = {"#", "candidate", "req/s per replica", "replicas", "GPUs", "$/hour", "verdict"};
  header(f, cols, 7);
  for (size_t i = 0; i < s->n; i++) {
    const cap_candidate *c = &s->c[i];
    fputs("|", f);
    cellf(f, "%zu%s", i, (int)i == s->best ? " (recommended)" : "");
    cell(f, c->label);
    if (c->feasible && c->max_rate > 0) {
      cellf(f, "%.3g", c->max_rate);
      cellf(f, "%u", c->replicas);
      cellf(f, "%u", c->gpus);
      cellf(f, "%.2f", c->usd_per_hour);
    } else {
      fputs(" - | - | - | - |", f);
    }
    cell(f, c->why);
    fputs("\n", f);
  }
  if (s->mig_layouts[0]) fprintf(f, "\n%s\n", s->mig_layouts);
  if (s->best >= 0) {
    const cap_candidate *b = &s->c[s->best];
    fprintf(f, "\n## Search for the recommendation (%s)\n\n| rate (req/s) | meets |", b->label);
    for (int k = 0; k < s->slo.n; k++) fprintf(f, " %s (ms) |", s->slo.it[k].key);
    fputs(" output tok/s | unfinished |\n| --: | :-- |", f);
    for (int k = 0; k < s->slo.n; k++) fputs(" --: |", f);
    fputs(" --: | --: |\n", f);
    for (int k = 0; k < b->bis.n_probes; k++) {
      const cap_probe *p = &b->probe[k];
      fprintf(f, "| %.4g | %s |", p->rate, p->ok ? "yes" : "no");
      for (int q = 0; q < s->slo.n; q++) fprintf(f, " %.4g |", p->value_ms[q]);
      fprintf(f, " %.0f | %zu |\n", p->output_tput, p->unfinished);
    }
  }
}

int report_md(const report_doc *d, FILE *f, sim_err *err) {
  fprintf(f, "# servesim %s report\n\n", report_doc_kind(d));
  if (d->command) fprintf(f, "```\n%s\n```\n\n", d->command);
  char *sum = sim_malloc(8192);
  report_doc_answer(d, sum, 8192);
  fprintf(f, "**The answer.** %s\n", sum);
  report_doc_cost_sources(d, sum, 8192);
  fprintf(f, "\n%s\n", sum);
  if (d->cap) capacity_md(f, d->cap);
  if (d->sweep) sweep_md(f, d->sweep);
  if (d->run) {
    if (d->cap) {
      report_run_summary(d->run, d->slo, sum, 8192);
      fprintf(f, "\n## The recommendation, simulated at the target rate\n\n%s\n", sum);
    }
    run_md(f, d->run, d->slo, d->cap ? "Verification run" : "Run");
  }
  free(sum);
  fprintf(f, "\n_Generated by servesim %s; simulated, not measured._\n", SERVESIM_VERSION);
  if (ferror(f)) return sim_errf(err, SIM_EINPUT, "write failed");
  return SIM_OK;
}
