/* report_html.h: reports people read: one self-contained XHTML file (inline
 * SVG charts, inline CSS, no scripts, no network) or Markdown, for `run`,
 * `sweep` and `capacity`. What a report holds depends on what it is given:
 *   a run (or capacity's verification run): TTFT/TPOT/E2EL CDFs with the SLO
 *     lines, timelines of the queue, the running batch and KV usage, the
 *     memory breakdown;
 *   a sweep: the Pareto frontiers, latency and throughput vs request rate
 *     with the knee marked (sweep_curves), the memory breakdown of each
 *     deployment, the results table;
 *   a capacity search: latency and throughput vs rate from the probes with
 *     the knee (max rate at the SLOs) marked, the candidates' verdicts, the
 *     memory breakdown of each candidate, the recommendation;
 * always: a plain-language summary of the answer first, and the command.
 * Well-formed XML (xmllint --noout passes); deterministic (no dates). */
#ifndef SIM_REPORT_HTML_H
#define SIM_REPORT_HTML_H

#include <stdio.h>

#include "plan/capacity.h"
#include "plan/slo.h"
#include "plan/sweep.h"
#include "runner/whatif.h"

typedef struct report_doc {
  const char *command;      /* command line shown in the report, or NULL */
  const run_result *run;       /* a finished run, or NULL */
  const slo_set *slo;       /* objectives (lines on the CDFs), or NULL */
  const sweep_set *sweep;   /* or NULL */
  const capacity_set *cap;  /* or NULL */
  const run_result *baseline;  /* `run --baseline`: the run without its what-ifs (overlaid on the timelines), or NULL */
  const whatif_compare *cmp; /* and the comparison, or NULL */
} report_doc;

int report_html(const report_doc *d, FILE *f, sim_err *err);
int report_md(const report_doc *d, FILE *f, sim_err *err);

/* Shared by the HTML and Markdown writers. */
/* What the document is: "capacity", "sweep" or "run". */
const char *report_doc_kind(const report_doc *d);
/* The answer first: the capacity summary, the sweep summary or the run summary ("" for none). */
void report_doc_answer(const report_doc *d, char *buf, size_t n);
/* "Cost model: ..." : the distinct cost sources of the runs in the document
 * (a sweep over GPU types has one per type). */
void report_doc_cost_sources(const report_doc *d, char *buf, size_t n);
/* The summary paragraph of a single run. */
void report_run_summary(const run_result *r, const slo_set *slo, char *buf, size_t n);
/* What a run's intervals rest on (stratum, residual file, workload part), one sentence; "" when it has none. */
void report_iv_note(const run_result *r, char *buf, size_t n);
/* Sorted per-request latencies of finished requests (ms), for CDFs; caller frees. */
size_t report_latencies(const run_result *r, int metric /* slo_metric */, double **out);

/* XHTML pieces shared by report_html.c and report_html_plan.c (text escaped). */
/* The document's head (the shared style sheet) and its <h1>: "servesim KIND report". */
void rh_doc_begin(FILE *f, const char *kind);
void rh_para(FILE *f, const char *cls, const char *s);
void rh_heading(FILE *f, int level, const char *s);
void rh_td(FILE *f, bool left, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* Header row; bit i of left_mask left-aligns column i. */
void rh_th_row(FILE *f, const char *const *cols, int n, unsigned left_mask);
void rh_memory_bars(FILE *f, const char *title, const char *const *labels, const mem_plan *const *mp, int n);
void rh_sweep_sections(FILE *f, const sweep_set *s);
void rh_capacity_sections(FILE *f, const capacity_set *s);

#endif
