/* cmd_sweep.c: `servesim sweep`: a grid of configurations simulated on
 * libuv's thread pool; results as a table, CSV, JSON and reports, with the
 * Pareto frontiers and cost per million tokens (sim/plan/sweep.h). */
#include <stdlib.h>

#include "cli/cli.h"
#include "cli/plan_cli.h"
#include "plan/sweep.h"

static const char *USAGE = "servesim sweep [--grid FILE] [--gpu A,B] [--tp 2,4,8] [--request-rate 1,2,4] [options]";
static const char *SUMMARY =
    "Simulates every combination of the listed values (GPU type, TP, replicas, weight and KV precision,\n"
    "max_num_seqs, max_num_batched_tokens, request rate or concurrency, rate scale) in parallel and reports\n"
    "throughput per GPU, tokens/s per user, latency percentiles, cost per million output tokens, the Pareto\n"
    "frontiers and where p99 TTFT explodes. Configurations that cannot start are listed with the reason.\n"
    "Other flags (run's) set the base scenario every point starts from.";

static int w_json(const void *s, FILE *f, sim_err *e) { return sweep_write_json(s, f, e); }
static int w_csv(const void *s, FILE *f, sim_err *e) { return sweep_write_csv(s, f, e); }

int cmd_sweep(int argc, char **argv) {
  plan_flags *pf = sim_calloc(1, sizeof *pf);
  plan_flags_init(pf);
  cli_opt opts[200];
  int n = plan_flags_table(pf, "grid", opts, 180);
  plan_flags_outputs(pf, "write all results as JSON (- = stdout)", "write one CSV row per configuration", opts, n, 200);
  int rc = cli_start("sweep", USAGE, SUMMARY, opts, &pf->show_help, argc, argv);
  if (rc != CLI_GO) {
    free(pf);
    return rc;
  }
  rc = 0;
  sim_err err = {0, ""};
  grid_spec *g = sim_calloc(1, sizeof *g);
  scenario *base = sim_calloc(1, sizeof *base);
  sweep_set *s = sim_calloc(1, sizeof *s);
  grid_init(g);
  unsigned jobs = plan_flags_jobs(pf);
  if (plan_flags_apply(pf, base, g, &err) || sweep_prepare(s, base, g, &g->slo, &g->price, &err) ||
      plan_flags_check_outputs(pf, &err))
    goto fail;
  plan_progress prog;
  plan_progress_start(&prog, "configs", plan_flags_progress(pf));
  double t0 = plan_wall_s();
  if (sweep_execute(s, jobs, plan_progress_cb, &prog, &err)) goto fail;
  double wall = plan_wall_s() - t0;
  char cmd[4096];
  plan_command_line(argc, argv, cmd, sizeof cmd);
  report_doc doc = {cmd, NULL, &s->slo, s, NULL, NULL, NULL};
  if (plan_flags_write(pf, w_json, w_csv, s, &doc, &err)) goto fail;
  if (!pf->quiet) {
    FILE *tf = plan_flags_text_out(pf);
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
