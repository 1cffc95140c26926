/* cmd_run.c: `servesim run`: one simulation, a readable summary, result files. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#include "cli/cli.h"
#include "cli/run_flags.h"
#include "cli/plan_cli.h"
#include "plan/slo.h"
#include "runner/whatif.h"
#include "report/report.h"
#include "report/report_html.h"
#include "runner/intervals.h"
#include "runner/runner.h"

static const char *USAGE = "servesim run [--scenario FILE] [options]";
static const char *SUMMARY =
    "Replays a trace (or a generated workload) through a simulated vLLM-style deployment and reports\n"
    "TTFT, TPOT, ITL, end-to-end latency and throughput with vLLM's benchmark definitions.\n"
    "Without options it runs the built-in default: Llama-3.1-70B on 4 x H200 (TP4), vLLM, replaying\n"
    "the bundled chat trace (traces/chat_default.csv).\n"
    "Exit status: 0 done, 3 every replica was lost (--fail-replica) and requests were rejected with no\n"
    "replica left (the outputs are written), 2 bad input, 1 internal error, 130 interrupted by Ctrl-C\n"
    "(partial results are still printed and written).";

typedef struct json_arg {
  const run_result *r, *base;
  const whatif_compare *cmp;
} json_arg;
static int w_json(const void *p, FILE *f, sim_err *e) {
  const json_arg *a = p;
  return report_json_cmp(a->r, a->base, a->cmp, f, e);
}

/* --baseline: the scenario without its what-ifs and, unless keep_scale, without its scaling (--rate-scale,
 * --prompt-scale, --output-scale: "2x traffic and longer prompts vs today"), run to the end (no driver: it is
 * not the run the user watches), and the comparison. NULL (err set) on failure. */
static run_ctx *run_baseline(const scenario *sc, const run_ctx *wi, const slo_set *slo, bool keep_scale,
                             whatif_compare *cmp, sim_err *err) {
  bool scaled = sc->rate_scale != 1 || sc->prompt_scale != 1 || sc->output_scale != 1;
  if (!sc->n_failures && sc->traffic.kind == WARP_NONE && (keep_scale || !scaled)) {
    sim_errf(err, SIM_EINPUT, "--baseline needs a what-if to compare (--fail-replica, --traffic-step, "
                              "--traffic-ramp, or --rate-scale/--prompt-scale/--output-scale)");
    return NULL;
  }
  scenario b = *sc;
  b.n_failures = 0;
  b.traffic.kind = WARP_NONE;
  char scale[160] = "";
  if (scaled)
    snprintf(scale, sizeof scale, "--rate-scale %g --prompt-scale %g --output-scale %g", sc->rate_scale,
             sc->prompt_scale, sc->output_scale);
  if (!keep_scale) b.rate_scale = b.prompt_scale = b.output_scale = 1;
  run_ctx *r = sim_calloc(1, sizeof *r);
  if (runner_prepare(r, &b, err) || runner_execute(r, NULL, err)) {
    sim_err_prefix(err, "--baseline");
    runner_free(r);
    free(r);
    return NULL;
  }
  whatif_objective obj[WHATIF_MAX_OBJ]; /* recovery is judged on every objective given */
  int n_obj = 0;
  for (int k = 0; slo && k < slo->n && n_obj < WHATIF_MAX_OBJ; k++, n_obj++) {
    obj[n_obj] = (whatif_objective){(int)slo->it[k].metric, slo->it[k].pct, slo->it[k].limit_ms, ""};
    snprintf(obj[n_obj].key, sizeof obj[n_obj].key, "%s", slo->it[k].key);
  }
  whatif_compare_runs(&r->res, &wi->res, obj, n_obj, cmp);
  if (!scaled)
    snprintf(cmp->baseline_is, sizeof cmp->baseline_is, "the same run without the replica losses and traffic shapes");
  else if (keep_scale)
    snprintf(cmp->baseline_is, sizeof cmp->baseline_is,
             "the same run without the replica losses and traffic shapes, scaling kept (%.120s, --baseline-keep-scale)",
             scale);
  else
    snprintf(cmp->baseline_is, sizeof cmp->baseline_is,
             "the workload unscaled (not %.120s) without the replica losses and traffic shapes", scale);
  return r;
}
static int w_csv(const void *r, FILE *f, sim_err *e) { return report_requests_csv(r, f, e); }
static int w_ts(const void *r, FILE *f, sim_err *e) { return report_timeseries_csv(r, f, e); }
static int w_html(const void *d, FILE *f, sim_err *e) { return report_html(d, f, e); }
static int w_md(const void *d, FILE *f, sim_err *e) { return report_md(d, f, e); }

/* The files asked for (outs: JSON, per-request CSV, time series, HTML, Markdown; NULL = not asked), in that
 * order, until one fails. */
static int write_outputs(const run_ctx *r, const run_ctx *base, const whatif_compare *cmp, const slo_set *slo,
                         const char *const outs[5], bool force, int argc, char **argv, sim_err *err) {
  const char *json = outs[0], *csv = outs[1], *ts = outs[2], *html = outs[3], *md = outs[4];
  int rc = SIM_OK;
  const run_result *result = &r->res, *base_res = base ? &base->res : NULL; /* reports read the result only */
  json_arg ja = {result, base_res, cmp};
  if (json && !rc) rc = outfmt_write_file(json, force, w_json, &ja, err);
  if (csv && !rc) rc = outfmt_write_file(csv, force, w_csv, result, err);
  if (ts && !rc) rc = outfmt_write_file(ts, force, w_ts, result, err);
  if ((html || md) && !rc) {
    char cmd[4096];
    plan_command_line(argc, argv, cmd, sizeof cmd);
    report_doc doc = {cmd, result, slo, NULL, NULL, base_res, cmp};
    if (html) rc = outfmt_write_file(html, force, w_html, &doc, err);
    if (md && !rc) rc = outfmt_write_file(md, force, w_md, &doc, err);
  }
  return rc;
}

/* The text summary: the run, its SLOs, the baseline beside it, the peak memory. */
static void print_summary(const run_ctx *r, const run_ctx *base, const whatif_compare *cmp, const slo_set *slo,
                          double wall, bool verbose, FILE *tf) {
  report_text(&r->res, wall, verbose, tf);
  if (slo->n) {
    slo_result res;
    slo_eval(&r->res, slo, &res);
    fprintf(tf, "SLOs (over all requests, unfinished = missed): %s\n", res.all_ok ? "all met" : "MISSED");
    for (int k = 0; k < slo->n; k++)
      fprintf(tf, "  %-12s %10.2f ms  (limit %g ms)  %s\n", slo->it[k].key, res.value_ms[k], slo->it[k].limit_ms,
              res.ok[k] ? "ok" : "missed");
  }
  if (base) whatif_compare_text(&base->res, &r->res, cmp, tf);
  struct rusage ru;
  if (getrusage(RUSAGE_SELF, &ru) == 0) fprintf(tf, "peak memory %.1f MiB\n", ru.ru_maxrss / 1024.0);
}

/* Every replica lost (--fail-replica): the deployment stopped serving; the outputs are written, stderr and the
 * exit status say so. The requests rejected for it. */
static size_t lost_all(const run_result *r) {
  size_t lost = r->sum.rejected_by_reason[REJ_NO_REPLICA];
  if (lost)
    fprintf(stderr, "servesim run: every replica was lost: %zu request%s rejected with no replica left (exit 3)\n", lost,
            lost == 1 ? "" : "s");
  return lost;
}

/* --interval P, --interval-seeds N, --residuals FILE (docs/UNCERTAINTY.md). */
typedef struct iv_flags {
  double level;
  uint32_t seeds;
  const char *resid;
} iv_flags;

/* Their table (3 options and the end marker) into o[4]. */
static void iv_opts(iv_flags *f, cli_opt o[4]) {
  const cli_opt t[4] = {
      {"interval", NULL, CLI_F64, &f->level, "P",
       "prediction intervals at level P next to the headline figures (mean and p99 TTFT, TPOT, E2E; output "
       "throughput), text and JSON: the cost model's validation error for this run's stratum combined with the "
       "spread over other seeds (docs/UNCERTAINTY.md); default 0.8, at most 0.98; 0 = none (no extra runs)",
       NULL},
      {"interval-seeds", NULL, CLI_U32, &f->seeds, "N",
       "extra runs with seeds seed+1..seed+N for the workload part of the intervals (default 3; a trace replay has "
       "no seeds and runs none)",
       NULL},
      {"residuals", NULL, CLI_STR, &f->resid, "FILE",
       "the residual file the intervals read (default: the bundled configs/uncertainty/residuals.json, built by "
       "`servesim validate --residuals-out`)",
       NULL},
      {NULL, NULL, 0, NULL, NULL, NULL, NULL}};
  memcpy(o, t, sizeof t);
}

/* --speed, --interval and --interval-seeds, before anything runs. */
static int check_values(double speed, const iv_flags *f, sim_err *err) {
  if (speed < 0 || !isfinite(speed)) return sim_errf(err, SIM_EINPUT, "--speed must be a finite number >= 0");
  double level = f->level;
  uint32_t seeds = f->seeds;
  if (!(level == 0 || (level > 0 && level <= UNC_MAX_LEVEL)))
    return sim_errf(err, SIM_EINPUT, "--interval must be 0 (none) or in (0, %g], got %g", UNC_MAX_LEVEL, level);
  if (seeds > RUNNER_IV_MAX_SEEDS)
    return sim_errf(err, SIM_EINPUT, "--interval-seeds must be at most %u", RUNNER_IV_MAX_SEEDS);
  return SIM_OK;
}

/* The intervals of a finished run (runner/intervals.h) from the residual file (NULL = the bundled one). */
static int intervals(run_ctx *r, const char *resid, double level, uint32_t seeds, sim_err *err) {
  unc_table t;
  int rc = unc_table_load(&t, resid, err);
  if (rc) return rc;
  rc = runner_intervals(r, &t, level, seeds, err);
  unc_table_free(&t);
  return rc;
}

/* exit status of a run whose replicas were all lost while requests still came (documented in --help, USAGE.md) */
enum { RUN_EXIT_NO_REPLICA = 3 };

int cmd_run(int argc, char **argv) {
  run_flags rf;
  run_flags_init(&rf);
  const char *json = NULL, *csv = NULL, *ts = NULL, *html = NULL, *md = NULL;
  cli_list slo_flags = {{0}, 0};
  bool force = false, quiet = false, help = false, strict_whatif = false, baseline = false, keep_scale = false, verbose = false;
  double speed = 0;
  iv_flags ivf = {0.8, RUNNER_IV_DEFAULT_SEEDS, NULL};
  cli_opt out_opts[] = {
      {"json", NULL, CLI_STR, &json, "FILE", "write the result JSON (vLLM --save-result keys + servesim section); - = stdout", NULL},
      {"csv", NULL, CLI_STR, &csv, "FILE", "write one CSV row per request", NULL},
      {"timeseries", NULL, CLI_STR, &ts, "FILE", "write the server-side time series CSV", NULL},
      {"report", NULL, CLI_STR, &html, "FILE.html", "write a self-contained HTML report (charts, no network)", NULL},
      {"report-md", NULL, CLI_STR, &md, "FILE.md", "write a Markdown report", NULL},
      {"slo", NULL, CLI_LIST, &slo_flags, "KEY=MS", "objective checked and drawn in reports, repeatable: ttft_p99=2000", NULL},
      {"force", NULL, CLI_FLAG, &force, NULL, "overwrite existing output files", NULL},
      {"quiet", "q", CLI_FLAG, &quiet, NULL, "do not print the summary", NULL},
      {"verbose", "v", CLI_FLAG, &verbose, NULL, "add the simulator's own counters (events, closed-form steps, "
       "step-table hits) to the wall-time line", NULL},
      {"strict-what-if", NULL, CLI_FLAG, &strict_whatif, NULL,
       "exit 2 when a what-if (--fail-replica, --traffic-step, --traffic-ramp) falls after the last arrival "
       "(not exercised) or a ramp is cut short (every output says so either way)",
       NULL},
      {"baseline", NULL, CLI_FLAG, &baseline, NULL,
       "also run the workload without its what-ifs (replica losses, traffic step or ramp) and without its scaling "
       "(--rate-scale, --prompt-scale, --output-scale) and report both "
       "side by side, with the recovery time after a replica loss (text, JSON, HTML)",
       NULL},
      {"baseline-keep-scale", NULL, CLI_FLAG, &keep_scale, NULL,
       "with --baseline: keep --rate-scale/--prompt-scale/--output-scale in the baseline (by default it is the "
       "workload unscaled: scaling is compared as a what-if)",
       NULL},
      {"speed", NULL, CLI_F64, &speed, "X", "paced replay: X simulated seconds per wall second (0 = as fast as possible)", NULL},
      {"help", "h", CLI_FLAG, &help, NULL, "show this help", NULL},
      {NULL, NULL, 0, NULL, NULL, NULL, NULL}};
  cli_opt opts[160], ivo[4];
  iv_opts(&ivf, ivo);
  cli_opts_append(opts, cli_opts_append(opts, run_flags_table(&rf, opts, 140), 160, ivo), 160, out_opts);
  int rc = cli_start("run", USAGE, SUMMARY, opts, &help, argc, argv);
  if (rc != CLI_GO) return rc;

  sim_err err = {0, ""};
  if (keep_scale && !baseline) {
    sim_errf(&err, SIM_EINPUT, "--baseline-keep-scale goes with --baseline");
    return cli_fail("run", &err);
  }
  if (check_values(speed, &ivf, &err)) return cli_fail("run", &err);
  scenario sc;
  scenario_default(&sc);
  if (run_flags_apply(&rf, &sc, &err)) return cli_fail("run", &err);

  slo_set slo = {0};
  for (int i = 0; i < slo_flags.n; i++)
    if (slo_add(&slo, slo_flags.items[i], "--slo", &err)) return cli_fail("run", &err);
  /* check output paths before spending time on the run */
  const char *outs[] = {json, csv, ts, html, md};
  if (outfmt_refuse_existing(outs, 5, force, &err)) return cli_fail("run", &err);

  double t0 = plan_wall_s();
  run_ctx *r = sim_calloc(1, sizeof *r);
  rc = runner_prepare(r, &sc, &err);
  if (!rc && r->model.unmodelled[0]) fprintf(stderr, "servesim run: warning: %s: %s\n", r->model.name, r->model.unmodelled);
  if (!rc) {
    drv_opts d = {speed, 0, 0};
    rc = runner_execute(r, &d, &err);
  }
  double wall = plan_wall_s() - t0; /* the run's own; the intervals' extra runs come after */
  if (!rc && ivf.level > 0 && !r->interrupted) rc = intervals(r, ivf.resid, ivf.level, ivf.seeds, &err);
  if (rc) {
    runner_free(r);
    free(r);
    return cli_fail("run", &err);
  }
  run_ctx *base = NULL;
  whatif_compare cmp;
  if (baseline && !(base = run_baseline(&sc, r, &slo, keep_scale, &cmp, &err))) {
    runner_free(r);
    free(r);
    return cli_fail("run", &err);
  }
  const char *outs_cmd[] = {json, csv, ts, html, md};
  rc = write_outputs(r, base, base ? &cmp : NULL, &slo, outs_cmd, force, argc, argv, &err);
  if (!quiet) print_summary(r, base, &cmp, &slo, wall, verbose, (json && !strcmp(json, "-")) ? stderr : stdout);
  bool interrupted = r->interrupted;
  whatif_report wr = r->res.whatif;
  if (!rc && strict_whatif && wr.missed) {
    sim_errf(&err, SIM_EINPUT, "--strict-what-if: %u what-if%s not fully exercised: %s", wr.missed,
             wr.missed == 1 ? "" : "s", wr.n[0].exercised ? wr.n[wr.count - 1].text : wr.n[0].text);
    rc = SIM_EINPUT;
  }
  if (interrupted) fprintf(stderr, "servesim run: interrupted: the results written are partial\n");
  size_t lost = !rc && !interrupted ? lost_all(&r->res) : 0;
  runner_free(r);
  free(r);
  if (base) runner_free(base);
  free(base);
  if (rc) return cli_fail("run", &err);
  return interrupted ? 130 : lost ? RUN_EXIT_NO_REPLICA : 0; /* 130: 128 + SIGINT, like a shell */
}
