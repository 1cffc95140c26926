/* cmd_sweep.c: `servesim sweep`: a grid of configurations simulated on
 * libuv's thread pool; results as a table, CSV, JSON and reports, with the
 * Pareto frontiers and cost per million tokens (sim/plan/sweep.h). */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/cli.h"
#include "plan/plan_cli.h"
#include "plan/sweep.h"
#include "report/report_html.h"

static const char *USAGE = "servesim sweep [--grid FILE] [--gpu A,B] [--tp 2,4,8] [--request-rate 1,2,4] [options]";
static const char *SUMMARY =
    "Simulates every combination of the listed values (GPU type, TP, replicas, weight and KV precision,\n"
    "max_num_seqs, max_num_batched_tokens, request rate or concurrency, rate scale) in parallel and reports\n"
    "throughput per GPU, tokens/s per user, latency percentiles, cost per million output tokens, the Pareto\n"
    "frontiers and where p99 TTFT explodes. Configurations that cannot start are listed with the reason.\n"
    "Other flags (run's) set the base scenario every point starts from.";

typedef struct out_args {
  const sweep_set *s;
  const report_doc *doc;
} out_args;

static int w_json(const void *a, FILE *f, sim_err *e) { return sweep_write_json(((const out_args *)a)->s, f, e); }
static int w_csv(const void *a, FILE *f, sim_err *e) { return sweep_write_csv(((const out_args *)a)->s, f, e); }
static int w_html(const void *a, FILE *f, sim_err *e) { return report_html(((const out_args *)a)->doc, f, e); }
static int w_md(const void *a, FILE *f, sim_err *e) { return report_md(((const out_args *)a)->doc, f, e); }

int cmd_sweep(int argc, char **argv) {
  plan_flags *pf = sim_calloc(1, sizeof *pf);
  plan_flags_init(pf);
  const char *json = NULL, *csv = NULL, *html = NULL, *md = NULL;
  bool force = false, quiet = false, help = false;
  cli_opt opts[200];
  int n = plan_flags_table(pf, "grid", opts, 180);
  cli_opt extra[] = {
      {"json", NULL, CLI_STR, &json, "FILE", "write all results as JSON (- = stdout)", NULL},
      {"csv", NULL, CLI_STR, &csv, "FILE", "write one CSV row per configuration", NULL},
      {"report", NULL, CLI_STR, &html, "FILE.html", "write a self-contained HTML report", NULL},
      {"report-md", NULL, CLI_STR, &md, "FILE.md", "write a Markdown report", NULL},
      {"force", NULL, CLI_FLAG, &force, NULL, "overwrite existing output files", NULL},
      {"quiet", "q", CLI_FLAG, &quiet, NULL, "print nothing but errors", NULL},
      {"help", "h", CLI_FLAG, &help, NULL, "show this help", NULL},
      {NULL, NULL, 0, NULL, NULL, NULL, NULL}};
  for (int i = 0; extra[i].name; i++) opts[n++] = extra[i];
  opts[n] = (cli_opt){NULL, NULL, 0, NULL, NULL, NULL, NULL};
  sim_err err = {0, ""};
  int rc = 0;
  grid_spec *g = sim_calloc(1, sizeof *g);
  scenario *base = sim_calloc(1, sizeof *base);
  sweep_set *s = sim_calloc(1, sizeof *s);
  grid_init(g);
  if (cli_parse(opts, argc, argv, NULL, &err)) {
    rc = cli_fail("sweep", &err);
    goto out;
  }
  if (help) {
    cli_print_help(stdout, USAGE, SUMMARY, opts);
    goto out;
  }
  /* the pool size must be in the environment before libuv's first use */
  unsigned jobs = pf->jobs ? pf->jobs : pool_default_jobs();
  pool_set_threads(jobs);
  if (plan_flags_apply(pf, base, g, &err) || sweep_prepare(s, base, g, &g->slo, &g->price, &err)) {
    rc = cli_fail("sweep", &err);
    goto out;
  }
  const char *outs[] = {json, csv, html, md};
  for (int i = 0; i < 4; i++)
    if (outs[i] && strcmp(outs[i], "-") && !force && access(outs[i], F_OK) == 0) {
      sim_errf(&err, SIM_EINPUT, "%s already exists: not overwriting it (pass --force to replace it)", outs[i]);
      rc = cli_fail("sweep", &err);
      goto out;
    }
  plan_progress prog;
  plan_progress_start(&prog, "configs", pf->seen_progress ? pf->progress : (!quiet && isatty(2)));
  double t0 = plan_wall_s();
  if (sweep_execute(s, jobs, plan_progress_cb, &prog, &err)) {
    rc = cli_fail("sweep", &err);
    goto out;
  }
  double wall = plan_wall_s() - t0;
  char cmd[4096];
  plan_command_line(argc, argv, cmd, sizeof cmd);
  report_doc doc = {cmd, NULL, &s->slo, s, NULL};
  out_args oa = {s, &doc};
  if (json && (rc = cli_write_output(json, force, w_json, &oa, &err))) goto fail;
  if (csv && (rc = cli_write_output(csv, force, w_csv, &oa, &err))) goto fail;
  if (html && (rc = cli_write_output(html, force, w_html, &oa, &err))) goto fail;
  if (md && (rc = cli_write_output(md, force, w_md, &oa, &err))) goto fail;
  if (!quiet) {
    FILE *tf = json && !strcmp(json, "-") ? stderr : stdout;
    sweep_print(s, tf);
    char summary[4096];
    sweep_summary(s, summary, sizeof summary);
    fprintf(tf, "\n%s\n", summary);
    fprintf(tf, "swept %zu configurations in %.2f s of wall time (%.1f configs/s) with %u job%s\n", s->n, wall,
            wall > 0 ? (double)s->n / wall : 0.0, jobs, jobs == 1 ? "" : "s");
  }
  goto out;
fail:
  rc = cli_fail("sweep", &err);
out:
  sweep_free(s);
  grid_free(g);
  free(s);
  free(g);
  free(base);
  free(pf);
  return rc;
}
