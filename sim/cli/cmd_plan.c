/* cmd_plan.c: `servesim plan`: the memory plan, largest batch, step times and
 * the gates of one deployment (sim/plan/plan.h). Exit 2 when the deployment
 * cannot start (after printing the numbers). */
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/run_flags.h"
#include "plan/plan.h"
#include "plan/pools.h"

static const char *USAGE = "servesim plan [--model M] [--gpu G] [--tp N] [--quantization Q] [options]";
static const char *SUMMARY =
    "Per-GPU memory breakdown (weights, KV bytes per token, KV blocks and tokens, activation peak, runtime\n"
    "overheads), the largest batch at a given context, decode step time at batch 1 and at that batch, the\n"
    "prefill time of a prompt, which limit binds for each, and the classic weights/bandwidth check.\n"
    "Defaults: the built-in scenario's deployment (Llama-3.1-70B on 4 x H200). A deployment that cannot\n"
    "start is refused with the numbers (exit 2). With --mode disagg, each pool is planned as one of its\n"
    "workers (its --prefill-*/--decode-* settings), one after the other.";

/* The deployment flags of run_flags that plan understands. */
static const char *const KEEP[] = {"scenario", "model", "gpu", "engine", "profile", RUN_FLAGS_DEPLOYMENT, NULL};

static int w_json(const void *p, FILE *f, sim_err *e) { return plan_write_json(p, f, e); }
static int w_pools_json(const void *p, FILE *f, sim_err *e) { return plan_write_pools_json(p, f, e); }

/* --mode disagg: both pools (plan_pools.c); exit 2 when either cannot start, naming it. */
static int plan_pools(const scenario *sc, const plan_opts *po, const char *json, bool force) {
  sim_err err = {0, ""};
  plan_result *p = sim_calloc(2, sizeof *p);
  int rc = plan_analyze_pools(p, sc, po, &err);
  if (!rc && p[0].model.unmodelled[0])
    fprintf(stderr, "servesim plan: warning: %s: %s\n", p[0].model.name, p[0].model.unmodelled);
  if (!rc) {
    bool to_stdout = json && !strcmp(json, "-");
    plan_print_pools(p, sc, to_stdout ? stderr : stdout);
    if (json) rc = outfmt_write_file(json, force, w_pools_json, p, &err);
  }
  for (int k = 0; k < 2 && !rc; k++)
    if (!p[k].fits) rc = sim_errf(&err, SIM_EINPUT, "cannot start: the %s pool: %s", k ? "decode" : "prefill",
                                  p[k].refusal);
  free(p);
  return rc ? cli_fail("plan", &err) : 0;
}

int cmd_plan(int argc, char **argv) {
  run_flags rf;
  run_flags_init(&rf);
  plan_opts po = {0, 0, 0};
  const char *json = NULL;
  bool force = false, help = false;
  cli_opt extra[] = {
      {"context", NULL, CLI_U32, &po.context_tokens, "N", "tokens of context per sequence for the batch and decode figures (default 2048)", NULL},
      {"prompt-len", NULL, CLI_U32, &po.prompt_tokens, "N", "prompt tokens for the prefill figure (default 1024)", NULL},
      {"target-tps", NULL, CLI_F64, &po.target_tps, "X", "tokens/s one sequence should see, for the bandwidth check (default 50)", NULL},
      {"json", NULL, CLI_STR, &json, "FILE", "write the plan as JSON (- = stdout)", NULL},
      {"force", NULL, CLI_FLAG, &force, NULL, "overwrite an existing output file", NULL},
      {"help", "h", CLI_FLAG, &help, NULL, "show this help", NULL},
      {NULL, NULL, 0, NULL, NULL, NULL, NULL}};
  cli_opt opts[64];
  run_flags_subset(&rf, KEEP, extra, opts, 64);
  int rc = cli_start("plan", USAGE, SUMMARY, opts, &help, argc, argv);
  if (rc != CLI_GO) return rc;

  sim_err err = {0, ""};
  if (po.target_tps < 0 || po.target_tps > 1e6) {
    sim_errf(&err, SIM_EINPUT, "--target-tps must be in (0, 1e6], got %g", po.target_tps);
    return cli_fail("plan", &err);
  }
  scenario sc;
  scenario_default(&sc);
  if (run_flags_apply(&rf, &sc, &err)) return cli_fail("plan", &err);
  if (sc.deploy.disagg) return plan_pools(&sc, &po, json, force);
  plan_result *p = sim_calloc(1, sizeof *p);
  rc = plan_analyze(p, &sc, &po, &err);
  if (!rc && p->model.unmodelled[0]) fprintf(stderr, "servesim plan: warning: %s: %s\n", p->model.name, p->model.unmodelled);
  if (!rc) {
    bool to_stdout = json && !strcmp(json, "-");
    plan_print(p, to_stdout ? stderr : stdout);
    if (json) rc = outfmt_write_file(json, force, w_json, p, &err);
  }
  if (!rc && !p->fits) {
    sim_errf(&err, SIM_EINPUT, "cannot start: %s", p->refusal);
    rc = SIM_EINPUT;
  }
  free(p);
  return rc ? cli_fail("plan", &err) : 0;
}
