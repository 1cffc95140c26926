/* cmd_capacity.c: `servesim capacity`: the highest rate one replica of each
 * candidate sustains at the SLOs, the replicas and GPUs for a target rate,
 * the cheapest verified recommendation and why the others lose
 * (sim/plan/capacity.h). */
#include <math.h>
#include <stdlib.h>

#include "cli/cli.h"
#include "plan/capacity.h"
#include "cli/plan_cli.h"

static const char *USAGE =
    "servesim capacity --slo ttft_p99=2000 --slo tpot_p99=50 --target-rate R [--gpu h100-sxm,h200] [--tp 2,4,8] "
    "[--quantization none,fp8] [options]";
static const char *SUMMARY =
    "For each candidate configuration, finds by bisection the highest request rate one replica sustains while\n"
    "meeting every SLO (requests unfinished at the time limit count as misses), then the replicas and GPUs\n"
    "needed for --target-rate, recommends the cheapest, verifies it by simulating the target on that many\n"
    "replicas (least-outstanding router), and says why the others lose. The workload is the base scenario's\n"
    "(trace rescaled to each probed rate, keeping its burstiness; or the generator at that rate).";

static int w_json(const void *s, FILE *f, sim_err *e) { return capacity_write_json(s, f, e); }

int cmd_capacity(int argc, char **argv) {
  plan_flags *pf = sim_calloc(1, sizeof *pf);
  plan_flags_init(pf);
  double target = 0, tol = 0;
  const char *instances = NULL;
  uint32_t max_probes = 0;
  bool seen_target = false, seen_tol = false;
  const cli_opt extra[] = {
      {"target-rate", NULL, CLI_F64, &target, "R", "requests/s the whole deployment must serve (the peak to plan for)", &seen_target},
      {"rel-tol", NULL, CLI_F64, &tol, "F", "bisection stops when the failing rate is within F of the passing one (default 0.02)", &seen_tol},
      {"max-probes", NULL, CLI_U32, &max_probes, "N", "simulations per candidate at most (default 24)", NULL},
      {"instances", NULL, CLI_STR, &instances, "NAME,...",
       "price per rented cloud instance (configs/instances: aws-p5.48xlarge, ... or files): each candidate on the "
       "cheapest type holding its replicas, several per instance when they fit", NULL},
      {NULL, NULL, 0, NULL, NULL, NULL, NULL}};
  cli_opt opts[200];
  int n = cli_opts_append(opts, plan_flags_table(pf, "candidates", opts, 180), 200, extra);
  plan_flags_outputs(pf, "write the result as JSON (max_request_rate, recommendation, candidates)", NULL, opts, n, 200);
  int rc = cli_start("capacity", USAGE, SUMMARY, opts, &pf->show_help, argc, argv);
  if (rc != CLI_GO) {
    free(pf);
    return rc;
  }
  rc = 0;
  sim_err err = {0, ""};
  grid_spec *g = sim_calloc(1, sizeof *g);
  scenario *base = sim_calloc(1, sizeof *base);
  capacity_set *s = sim_calloc(1, sizeof *s);
  grid_init(g);
  unsigned jobs = plan_flags_jobs(pf);
  bisect_opts bo;
  bisect_opts_default(&bo);
  bo.lo = 0.01;
  bo.hi = 1e4;
  if (seen_tol) {
    if (!(tol > 0 && tol <= 1)) {
      sim_errf(&err, SIM_EINPUT, "--rel-tol must be in (0, 1], got %g", tol);
      goto fail;
    }
    bo.rel_tol = tol;
  }
  if (max_probes) {
    if (max_probes < 2 || max_probes > BISECT_MAX_PROBES) {
      sim_errf(&err, SIM_EINPUT, "--max-probes must be in [2, %d], got %u", BISECT_MAX_PROBES, max_probes);
      goto fail;
    }
    bo.max_probes = (int)max_probes;
  }
  if (plan_flags_apply(pf, base, g, &err)) goto fail;
  if (seen_target) {
    if (!(target > 0) || !(target <= 1e7)) {
      sim_errf(&err, SIM_EINPUT, "--target-rate must be in (0, 1e7] requests/s, got %g", target);
      goto fail;
    }
    g->target_rate = target;
  }
  if (capacity_prepare(s, base, g, &bo, &err) || plan_flags_check_outputs(pf, &err)) goto fail;
  if (instances && capacity_set_instances(s, instances, &err)) goto fail;
  plan_progress prog;
  plan_progress_start(&prog, "candidates", plan_flags_progress(pf));
  double t0 = plan_wall_s();
  if (capacity_execute(s, jobs, plan_progress_cb, &prog, &err)) goto fail;
  double wall = plan_wall_s() - t0;
  char cmd[4096];
  plan_command_line(argc, argv, cmd, sizeof cmd);
  report_doc doc = {cmd, s->verify_run, &s->slo, NULL, s, NULL, NULL};
  if (plan_flags_write(pf, w_json, NULL, s, &doc, &err)) goto fail;
  if (!pf->quiet) {
    FILE *tf = plan_flags_text_out(pf);
    capacity_print(s, tf);
    int probes = 0;
    for (size_t i = 0; i < s->n; i++) probes += s->c[i].bis.n_probes;
    fprintf(tf, "searched %zu candidates with %d simulations (+%d verification) in %.2f s of wall time\n", s->n, probes,
            s->n_verify_runs, wall);
  }
  goto out;
fail:
  rc = cli_fail("capacity", &err);
out:
  capacity_free(s);
  grid_free(g);
  free(s);
  free(g);
  free(base);
  free(pf);
  return rc;
}
