/* cmd_sweep.c: `servesim sweep`: a grid of configurations simulated on
 * libuv's thread pool; results as a table, CSV, JSON and reports, with the
 * Pareto frontiers and cost per million tokens (sim/plan/sweep.h). With
 * --shard K/N --part FILE it simulates one interleaved slice of the grid and
 * writes it for `servesim merge` (sim/plan/sweep_part.h), which rebuilds the
 * same sweep from the arguments the part carries and writes what the unsplit
 * sweep writes. */
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/plan_cli.h"
#include "core/outfmt.h"
#include "plan/sweep.h"
#include "plan/sweep_part.h"

static const char *USAGE = "servesim sweep [--grid FILE] [--gpu A,B] [--tp 2,4,8] [--request-rate 1,2,4] [options]";
static const char *SUMMARY =
    "Simulates every combination of the listed values (GPU type, TP, replicas, weight and KV precision,\n"
    "max_num_seqs, max_num_batched_tokens, request rate or concurrency, rate scale) in parallel and reports\n"
    "throughput per GPU, tokens/s per user, latency percentiles, cost per million output tokens, the Pareto\n"
    "frontiers and where p99 TTFT explodes. Configurations that cannot start are listed with the reason.\n"
    "Other flags (run's) set the base scenario every point starts from. On a cluster: --shard K/N --part FILE\n"
    "runs one of N slices of the grid; `servesim merge` combines the parts (README, Capacity planning).";

static int w_json(const void *s, FILE *f, sim_err *e) { return sweep_write_json(s, f, e); }
static int w_csv(const void *s, FILE *f, sim_err *e) { return sweep_write_csv(s, f, e); }

/* The outputs of a finished sweep (run or merged): files, then the table, summary and `tail` on the text output. */
static int write_all(plan_flags *pf, sweep_set *s, const char *cmd, const char *tail, sim_err *err) {
  report_doc doc = {cmd, NULL, &s->slo, s, NULL, NULL, NULL};
  int rc = plan_flags_write(pf, w_json, w_csv, s, &doc, err);
  if (rc || pf->quiet) return rc;
  FILE *tf = plan_flags_text_out(pf);
  sweep_print(s, tf);
  char summary[4096];
  sweep_summary(s, summary, sizeof summary);
  fprintf(tf, "\n%s\n%s", summary, tail);
  return SIM_OK;
}

/* The sweep's flags (merge parses a part's arguments with the same table). */
static void sweep_opts(plan_flags *pf, const char **shard, const char **part, cli_opt *opts, int cap) {
  int n = plan_flags_table(pf, "grid", opts, cap - 20);
  const cli_opt extra[] = {
      {"shard", NULL, CLI_STR, shard, "K/N", "simulate only slice K of N of the grid (rows i with i mod N = K-1); needs --part", NULL},
      {"part", NULL, CLI_STR, part, "FILE", "with --shard: write the slice's rows for `servesim merge`", NULL},
      {NULL, NULL, 0, NULL, NULL, NULL, NULL}};
  n = cli_opts_append(opts, n, cap, extra);
  plan_flags_outputs(pf, "write all results as JSON (- = stdout)", "write one CSV row per configuration", opts, n, cap);
}

int cmd_sweep(int argc, char **argv) {
  plan_flags *pf = sim_calloc(1, sizeof *pf);
  plan_flags_init(pf);
  const char *shard = NULL, *part = NULL;
  cli_opt opts[200];
  sweep_opts(pf, &shard, &part, opts, 200);
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
  char *args = NULL;
  grid_init(g);
  unsigned jobs = plan_flags_jobs(pf);
  size_t sk = 0, sn = 0;
  if (shard || part) {
    if (!shard || !part) {
      sim_errf(&err, SIM_EINPUT, "--shard and --part go together (a slice is written only to its part file)");
      goto fail;
    }
    if (pf->json || pf->csv || pf->html || pf->md) {
      sim_errf(&err, SIM_EINPUT, "--shard writes only its --part: give --json, --csv and reports to `servesim merge`");
      goto fail;
    }
    if (plan_parse_shard(shard, &sk, &sn, &err)) goto fail;
    const char *outs[] = {part};
    if (outfmt_refuse_existing(outs, 1, pf->force, &err)) goto fail;
  }
  if (plan_flags_apply(pf, base, g, &err) || plan_flags_check_interval(pf, &err) ||
      sweep_prepare(s, base, g, &g->slo, &g->price, &err) || plan_flags_check_outputs(pf, &err) ||
      sweep_set_intervals(s, pf->iv_level, pf->residuals, &err))
    goto fail;
  plan_progress prog;
  plan_progress_start(&prog, "configs", plan_flags_progress(pf));
  double t0 = plan_wall_s();
  if (sn) {
    enum { ARGS_CAP = 1 << 16 };
    args = sim_malloc(ARGS_CAP);
    size_t len = plan_shard_args(argc, argv, args, ARGS_CAP);
    if (len == SIZE_MAX) {
      sim_errf(&err, SIM_EINPUT, "--shard: the sweep's arguments are longer than %d bytes", ARGS_CAP);
      goto fail;
    }
    if (sweep_execute_shard(s, sk, sn, jobs, plan_progress_cb, &prog, &err)) goto fail;
    FILE *f = fopen(part, "wb");
    if (!f) {
      sim_errf(&err, SIM_EINPUT, "%s: cannot write", part);
      goto fail;
    }
    int w = sweep_part_write("sweep", s->rows, sizeof *s->rows, s->n, sk, sn, args, len, f, part, &err);
    if (fclose(f) && !w) w = sim_errf(&err, SIM_EINPUT, "%s: write failed", part);
    if (w) goto fail;
    if (!pf->quiet)
      fprintf(stdout, "shard %zu of %zu: %zu of %zu configurations simulated in %.2f s, written to %s\n", sk, sn,
              sweep_shard_rows(s->n, sk, sn), s->n, plan_wall_s() - t0, part);
    goto out;
  }
  if (sweep_execute(s, jobs, plan_progress_cb, &prog, &err)) goto fail;
  double wall = plan_wall_s() - t0;
  char cmd[4096], tail[160];
  plan_command_line(argc, argv, cmd, sizeof cmd);
  snprintf(tail, sizeof tail, "swept %zu configurations in %.2f s of wall time (%.1f configs/s) with %u job%s\n", s->n,
           wall, wall > 0 ? (double)s->n / wall : 0.0, jobs, jobs == 1 ? "" : "s");
  if (write_all(pf, s, cmd, tail, &err)) goto fail;
  goto out;
fail:
  rc = cli_fail("sweep", &err);
out:
  free(args);
  sweep_free(s);
  grid_free(g);
  free(s);
  free(g);
  free(base);
  free(pf);
  return rc;
}

/* ---- merge ------------------------------------------------------------------------ */

static const char *MERGE_USAGE = "servesim merge PART... [--json F] [--csv F] [--report F.html] [--report-md F.md]";
static const char *MERGE_SUMMARY =
    "Combines the parts that `servesim sweep ... --shard K/N --part FILE` wrote (every K of 1..N, once) into\n"
    "what the unsplit sweep writes: the same rows, Pareto frontiers, CSV and JSON bytes. Parts of\n"
    "`servesim capacity ... --shard K/N --part FILE` merge the same way; the recommendation (verified by\n"
    "simulating the target rate) is made here. A missing, duplicated or foreign part (another study, another\n"
    "servesim build) is an error that names it.";

int cmd_merge(int argc, char **argv) {
  plan_flags *out = sim_calloc(1, sizeof *out); /* merge's own output flags */
  plan_flags_init(out);
  cli_opt mopts[16] = {{NULL, NULL, 0, NULL, NULL, NULL, NULL}};
  plan_flags_outputs(out, "write all results as JSON (- = stdout)", "write one CSV row per configuration", mopts, 0, 16);
  /* options (with their values) to the parser, everything else is a part */
  char **oargv = sim_calloc((size_t)argc + 1, sizeof *oargv), **parts = sim_calloc((size_t)argc + 1, sizeof *parts);
  int on = 0, np = 0;
  if (argc > 0) oargv[on++] = argv[0]; /* the command's name, as the parser expects */
  for (int i = 1; i < argc; i++) {
    if (argv[i][0] == '-' && argv[i][1]) {
      oargv[on++] = argv[i];
      bool takes = !strchr(argv[i], '=') && (!strcmp(argv[i], "--json") || !strcmp(argv[i], "--csv") ||
                                            !strcmp(argv[i], "--report") || !strcmp(argv[i], "--report-md"));
      if (takes && i + 1 < argc) oargv[on++] = argv[++i];
    } else {
      parts[np++] = argv[i];
    }
  }
  int rc = cli_start("merge", MERGE_USAGE, MERGE_SUMMARY, mopts, &out->show_help, on, oargv);
  sim_err err = {0, ""};
  sweep_part *p = sim_calloc((size_t)np + 1, sizeof *p);
  plan_flags *pf = NULL;
  grid_spec *g = NULL;
  scenario *base = NULL;
  sweep_set *s = NULL;
  char **sargv = NULL;
  if (rc != CLI_GO) goto done;
  rc = 0;
  if (!np) {
    sim_errf(&err, SIM_EINPUT, "no part given (%s)", MERGE_USAGE);
    goto fail;
  }
  for (int i = 0; i < np; i++) outfmt_protect(parts[i]); /* no output replaces a part */
  for (int i = 0; i < np; i++)
    if (sweep_part_read(&p[i], parts[i], &err)) goto fail;
  if (sweep_parts_check(p, np, &err)) goto fail;
  /* the study again, from the arguments the parts carry (NUL-separated, argv[0] the command) */
  int sargc = 0;
  for (size_t o = 0; o < p[0].args_len; o += strlen(p[0].args + o) + 1) sargc++;
  sargv = sim_calloc((size_t)sargc + 1, sizeof *sargv);
  sargc = 0;
  for (size_t o = 0; o < p[0].args_len; o += strlen(p[0].args + o) + 1) sargv[sargc++] = p[0].args + o;
  if (!strcmp(p[0].kind, "capacity")) { /* a capacity search's parts: its own half of merge */
    rc = capacity_merge(sargc, sargv, out, p, np);
    goto done;
  }
  pf = sim_calloc(1, sizeof *pf);
  plan_flags_init(pf);
  const char *shard = NULL, *part = NULL;
  cli_opt opts[200];
  sweep_opts(pf, &shard, &part, opts, 200);
  if (cli_start("sweep", USAGE, SUMMARY, opts, &pf->show_help, sargc, sargv) != CLI_GO) {
    sim_errf(&err, SIM_EINPUT, "%s: its sweep arguments no longer parse", p[0].path);
    goto fail;
  }
  pf->json = out->json, pf->csv = out->csv, pf->html = out->html, pf->md = out->md;
  pf->force = out->force, pf->quiet = out->quiet;
  g = sim_calloc(1, sizeof *g);
  base = sim_calloc(1, sizeof *base);
  s = sim_calloc(1, sizeof *s);
  grid_init(g);
  if (plan_flags_apply(pf, base, g, &err) || plan_flags_check_interval(pf, &err) ||
      sweep_prepare(s, base, g, &g->slo, &g->price, &err) || plan_flags_check_outputs(pf, &err) ||
      sweep_set_intervals(s, pf->iv_level, pf->residuals, &err))
    goto fail;
  if (sweep_parts_fill(s, p, np, &err)) goto fail;
  sweep_finish(s); /* the frontiers over all the rows */
  char cmd[4096], tail[96];
  plan_command_line(sargc, sargv, cmd, sizeof cmd); /* "servesim sweep ...": the study's arguments */
  snprintf(tail, sizeof tail, "merged %d part%s: %zu configurations\n", np, np == 1 ? "" : "s", s->n);
  if (write_all(pf, s, cmd, tail, &err)) goto fail;
  goto done;
fail:
  rc = cli_fail("merge", &err);
done:
  for (int i = 0; i < np; i++) sweep_part_free(&p[i]);
  free(p);
  free(sargv);
  if (s) sweep_free(s);
  if (g) grid_free(g);
  free(s);
  free(g);
  free(base);
  free(pf);
  free(out);
  free(oargv);
  free(parts);
  return rc;
}
