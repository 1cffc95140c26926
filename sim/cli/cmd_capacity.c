/* cmd_capacity.c: `servesim capacity`: the highest rate one replica of each
 * candidate sustains at the SLOs, the replicas and GPUs for a target rate,
 * the cheapest verified recommendation and why the others lose
 * (sim/plan/capacity.h). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "cli/cli.h"
#include "core/outfmt.h"
#include "plan/capacity.h"
#include "plan/sweep_part.h"
#include "cli/plan_cli.h"

static const char *USAGE =
    "servesim capacity --slo ttft_p99=2000 --slo tpot_p99=50 --target-rate R [--gpu h100-sxm,h200] [--tp 2,4,8] "
    "[--quantization none,fp8] [options]";
static const char *SUMMARY =
    "For each candidate configuration, finds by bisection the highest request rate one replica sustains while\n"
    "meeting every SLO (requests unfinished at the time limit count as misses), then the replicas and GPUs\n"
    "needed for --target-rate, recommends the cheapest, verifies it by simulating the target on that many\n"
    "replicas (least-outstanding router), and says why the others lose. The workload is the base scenario's\n"
    "(trace rescaled to each probed rate, keeping its burstiness; or the generator at that rate).\n"
    "Exit status: 0 a recommendation, 3 no candidate meets the SLOs at the target (the outputs are still\n"
    "written and say why), 2 bad input.";

static int w_json(const void *s, FILE *f, sim_err *e) { return capacity_write_json(s, f, e); }

/* --shard: this slice's searches, written for merge with the search's arguments. */
static int write_shard(capacity_set *s, size_t sk, size_t sn, unsigned jobs, const char *part, bool quiet, int argc,
                       char **argv, sim_err *err) {
  enum { ARGS_CAP = 1 << 16 };
  char *args = sim_malloc(ARGS_CAP);
  size_t len = plan_shard_args(argc, argv, args, ARGS_CAP);
  int rc = SIM_OK;
  double t0 = plan_wall_s();
  if (len == SIZE_MAX) rc = sim_errf(err, SIM_EINPUT, "--shard: the search's arguments are longer than %d bytes", ARGS_CAP);
  if (!rc) rc = capacity_execute_shard(s, sk, sn, jobs, NULL, NULL, err);
  FILE *f = NULL;
  if (!rc && !(f = fopen(part, "wb"))) rc = sim_errf(err, SIM_EINPUT, "%s: cannot write", part);
  if (!rc) {
    rc = sweep_part_write("capacity", s->c, sizeof *s->c, s->n, sk, sn, args, len, f, part, err);
    if (fclose(f) && !rc) rc = sim_errf(err, SIM_EINPUT, "%s: write failed", part);
  }
  if (!rc && !quiet)
    printf("shard %zu of %zu: %zu of %zu candidate%s searched in %.2f s, written to %s\n", sk, sn,
           sweep_shard_rows(s->n, sk, sn), s->n, s->n == 1 ? "" : "s", plan_wall_s() - t0, part);
  free(args);
  return rc;
}

/* merge: the parts' candidates in, the recommendation made, the outputs written. */
static int merge_parts(capacity_set *s, plan_flags *pf, const sweep_part *parts, int np, int argc, char **argv,
                       sim_err *err) {
  int rc = capacity_parts_fill(s, parts, np, err);
  if (rc) return rc;
  char cmd[4096];
  plan_command_line(argc, argv, cmd, sizeof cmd);
  report_doc doc = {cmd, s->verify_run ? &s->verify_run->res : NULL, &s->slo, NULL, s, NULL, NULL};
  if ((rc = plan_flags_write(pf, w_json, NULL, s, &doc, err))) return rc;
  if (!pf->quiet) {
    capacity_print(s, plan_flags_text_out(pf));
    printf("merged %d part%s: %zu candidate%s (+%d verification run%s here)\n", np, np == 1 ? "" : "s", s->n,
           s->n == 1 ? "" : "s", s->n_verify_runs, s->n_verify_runs == 1 ? "" : "s");
  }
  return SIM_OK;
}

/* capacity, or (parts != NULL) the merge of its shards: the same search rebuilt from argv, the parts'
 * candidates put in, the outputs of `out` written. */
/* The bisection on rate of every candidate: from 0.01 to 10^4 requests/s, --rel-tol and --max-probes checked. */
static int bisection_of(bisect_opts *bo, bool seen_tol, double tol, uint32_t max_probes, sim_err *err) {
  bisect_opts_default(bo);
  bo->lo = 0.01;
  bo->hi = 1e4;
  if (seen_tol) {
    if (!(tol > 0 && tol <= 1)) return sim_errf(err, SIM_EINPUT, "--rel-tol must be in (0, 1], got %g", tol);
    bo->rel_tol = tol;
  }
  if (max_probes) {
    if (max_probes < 2 || max_probes > BISECT_MAX_PROBES)
      return sim_errf(err, SIM_EINPUT, "--max-probes must be in [2, %d], got %u", BISECT_MAX_PROBES, max_probes);
    bo->max_probes = (int)max_probes;
  }
  return SIM_OK;
}

/* --shard K/N with --part FILE: the slice (*sk of *sn), written only to a part file that does not exist yet. */
static int shard_of(const char *shard, const char *part, const plan_flags *pf, size_t *sk, size_t *sn, sim_err *err) {
  if (!shard || !part)
    return sim_errf(err, SIM_EINPUT, "--shard and --part go together (a slice is written only to its part file)");
  if (pf->json || pf->html || pf->md)
    return sim_errf(err, SIM_EINPUT, "--shard writes only its --part: give --json and reports to `servesim merge`");
  int rc = plan_parse_shard(shard, sk, sn, err);
  if (rc) return rc;
  const char *outs[] = {part};
  return outfmt_refuse_existing(outs, 1, pf->force, err);
}

/* With --confidence: the same search on the point estimates first (its recommendation is quoted beside the
 * confident one). */
static int search_alone(capacity_set *s, const scenario *base, const grid_spec *g, const char *instances,
                        unsigned jobs, sim_err *err) {
  if (!(s->confidence > 0)) return SIM_OK;
  capacity_set *p = sim_calloc(1, sizeof *p);
  int rc = capacity_prepare(p, base, g, &s->bo, err);
  if (!rc && instances) rc = capacity_set_instances(p, instances, err);
  if (!rc) rc = capacity_execute(p, jobs, NULL, NULL, err);
  if (!rc) capacity_set_alone(s, p);
  capacity_free(p);
  free(p);
  return rc;
}

/* Every candidate searched, the outputs written and the result printed. */
static int search_all(capacity_set *s, const plan_flags *pf, unsigned jobs, int argc, char **argv, sim_err *err) {
  plan_progress prog;
  plan_progress_start(&prog, "candidates", plan_flags_progress(pf));
  double t0 = plan_wall_s();
  int rc = capacity_execute(s, jobs, plan_progress_cb, &prog, err);
  if (rc) return rc;
  double wall = plan_wall_s() - t0;
  char cmd[4096];
  plan_command_line(argc, argv, cmd, sizeof cmd);
  report_doc doc = {cmd, s->verify_run ? &s->verify_run->res : NULL, &s->slo, NULL, s, NULL, NULL};
  if ((rc = plan_flags_write(pf, w_json, NULL, s, &doc, err))) return rc;
  if (!pf->quiet) {
    FILE *tf = plan_flags_text_out(pf);
    capacity_print(s, tf);
    int probes = 0;
    for (size_t i = 0; i < s->n; i++) probes += s->c[i].bis.n_probes;
    fprintf(tf, "searched %zu candidate%s with %d simulation%s (+%d verification) in %.2f s of wall time\n", s->n,
            s->n == 1 ? "" : "s", probes, probes == 1 ? "" : "s", s->n_verify_runs, wall);
  }
  return SIM_OK;
}

static int capacity_run(int argc, char **argv, const plan_flags *out_flags, const sweep_part *parts, int np) {
  plan_flags *pf = sim_calloc(1, sizeof *pf);
  plan_flags_init(pf);
  double target = 0, tol = 0, confidence = 0;
  const char *instances = NULL, *shard = NULL, *part = NULL;
  uint32_t max_probes = 0;
  bool seen_target = false, seen_tol = false;
  const cli_opt extra[] = {
      {"target-rate", NULL, CLI_F64, &target, "R", "requests/s the whole deployment must serve (the peak to plan for)", &seen_target},
      {"rel-tol", NULL, CLI_F64, &tol, "F", "bisection stops when the failing rate is within F of the passing one (default 0.02)", &seen_tol},
      {"max-probes", NULL, CLI_U32, &max_probes, "N", "simulations per candidate at most (default 24)", NULL},
      {"shard", NULL, CLI_STR, &shard, "K/N", "search only slice K of N of the candidates (i mod N = K-1); needs --part; `servesim merge` recommends", NULL},
      {"part", NULL, CLI_STR, &part, "FILE", "with --shard: write the slice's searches for `servesim merge`", NULL},
      {"confidence", NULL, CLI_F64, &confidence, "P",
       "recommend the smallest deployment that meets the SLOs with probability P by the cost model's validation "
       "error (each SLO value times e^q, q the P quantile of the candidate's stratum's residuals; "
       "docs/UNCERTAINTY.md), and say what the point estimate alone would buy (a second search); default 0 = the "
       "point estimate", NULL},
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
    return parts ? 2 : rc;
  }
  if (out_flags) { /* merge: its outputs, not the shards' */
    pf->json = out_flags->json, pf->csv = out_flags->csv, pf->html = out_flags->html, pf->md = out_flags->md;
    pf->force = out_flags->force, pf->quiet = out_flags->quiet;
  }
  rc = 0;
  sim_err err = {0, ""};
  grid_spec *g = sim_calloc(1, sizeof *g);
  scenario *base = sim_calloc(1, sizeof *base);
  capacity_set *s = sim_calloc(1, sizeof *s);
  grid_init(g);
  unsigned jobs = plan_flags_jobs(pf);
  bisect_opts bo;
  if (bisection_of(&bo, seen_tol, tol, max_probes, &err)) goto fail;
  if (plan_flags_apply(pf, base, g, &err)) goto fail;
  if (seen_target) {
    if (!(target > 0) || !(target <= 1e7)) {
      sim_errf(&err, SIM_EINPUT, "--target-rate must be in (0, 1e7] requests/s, got %g", target);
      goto fail;
    }
    g->target_rate = target;
  }
  size_t sk = 0, sn = 0;
  if ((shard || part) && shard_of(shard, part, pf, &sk, &sn, &err)) goto fail;
  if (plan_flags_check_interval(pf, &err)) goto fail;
  if (sn && confidence > 0) {
    sim_errf(&err, SIM_EINPUT, "--confidence with --shard: not supported (the point-estimate search it quotes "
             "would run in every shard); run it unsharded");
    goto fail;
  }
  if (capacity_prepare(s, base, g, &bo, &err) || plan_flags_check_outputs(pf, &err)) goto fail;
  if (capacity_set_intervals(s, pf->iv_level, pf->residuals, confidence, &err)) goto fail;
  if (instances && capacity_set_instances(s, instances, &err)) goto fail;
  if (sn) {
    if (write_shard(s, sk, sn, jobs, part, pf->quiet, argc, argv, &err)) goto fail;
    goto out;
  }
  if (parts) {
    if (merge_parts(s, pf, parts, np, argc, argv, &err)) goto fail;
    goto answered;
  }
  if (search_alone(s, base, g, instances, jobs, &err) || search_all(s, pf, jobs, argc, argv, &err)) goto fail;
  goto answered;
answered:
  /* no candidate meets the SLOs at the target: an answer, but not one to deploy on (scripts test for it) */
  if (s->best < 0) rc = CAPACITY_EXIT_NONE;
  goto out;
fail:
  rc = cli_fail(parts ? "merge" : "capacity", &err);
out:
  capacity_free(s);
  grid_free(g);
  free(s);
  free(g);
  free(base);
  free(pf);
  return rc;
}

int cmd_capacity(int argc, char **argv) { return capacity_run(argc, argv, NULL, NULL, 0); }

int capacity_merge(int argc, char **argv, const plan_flags *out, const sweep_part *parts, int np) {
  return capacity_run(argc, argv, out, parts, np);
}
