/* cmd_serve.c: `servesim serve`: the simulated deployment behind an OpenAI-compatible HTTP endpoint
 * (live/live.h, docs/SERVE.md). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/run_flags.h"
#include "live/live.h"
#include "runner/runner.h"

static const char *USAGE = "servesim serve [--port P] [--host ADDR] [--speed X] [deployment options]";
static const char *SUMMARY =
    "Serves the OpenAI API as vLLM does (/v1/completions, /v1/chat/completions, streamed or not, /v1/models,\n"
    "/health, /version, /metrics with vLLM's Prometheus metrics per engine) in front of a simulated deployment:\n"
    "each request enters the same cluster model as `servesim run`, in wall-clock time, and each token is sent\n"
    "when the simulation emits it. Point a gateway, autoscaler, load generator or dashboard at it.\n"
    "Prompt tokens: token ids counted exactly, text by a documented rule (docs/SERVE.md). Output: placeholder\n"
    "tokens; max_tokens of them with ignore_eos, else a length drawn from --eos-dist (capped by max_tokens).\n"
    "Defaults: the built-in deployment (Llama-3.1-70B on 4 x H200, TP4, vLLM), 127.0.0.1:8000, speed 1.\n"
    "Prints 'listening on http://HOST:PORT' when ready. SIGINT/SIGTERM: finish the requests in flight, exit 0.";

/* The deployment flags of run_flags that serve takes (the workload comes over HTTP). */
static const char *const KEEP[] = {"scenario", "model", "gpu", "engine", "profile", RUN_FLAGS_DEPLOYMENT, "seed", "fail-replica", NULL};

int cmd_serve(int argc, char **argv) {
  run_flags rf;
  run_flags_init(&rf);
  live_opts lo;
  memset(&lo, 0, sizeof lo);
  lo.host = "127.0.0.1";
  const char *eos = "geometric:256", *served = NULL;
  uint32_t port = 8000, max_conns = 1024;
  double speed = 1.0, drain = 30.0, log_interval = 10.0;
  bool help = false, quiet = false;
  cli_opt extra[] = {
      {"host", NULL, CLI_STR, &lo.host, "ADDR", "address to listen on (default 127.0.0.1; 0.0.0.0 or :: for every interface)", NULL},
      {"port", NULL, CLI_U32, &port, "P", "TCP port (default 8000; 0 = any free port, printed)", NULL},
      {"speed", NULL, CLI_F64, &speed, "X", "simulated seconds per wall second (default 1: real time; 100 = a hundred times faster, "
       "for tests and load generators)", NULL},
      {"served-model-name", NULL, CLI_STR, &served, "NAME", "the model name clients use (default: the model's name)", NULL},
      {"eos-dist", NULL, CLI_STR, &eos, "DIST",
       "output length of a request without ignore_eos, capped by its max_tokens: geometric:MEAN (default geometric:256: "
       "an end-of-sequence chance of 1/MEAN per token), fixed:N, uniform:LO:HI, lognormal:MEDIAN:SIGMA", NULL},
      {"max-connections", NULL, CLI_U32, &max_conns, "N", "open connections (default 1024); the next gets a 503", NULL},
      {"drain-timeout", NULL, CLI_F64, &drain, "S", "after SIGINT/SIGTERM, wall seconds to finish requests in flight (default 30)", NULL},
      {"log-interval", NULL, CLI_F64, &log_interval, "S",
       "every S wall seconds, one line per busy engine on stderr as vLLM logs it (throughputs per simulated "
       "second, running, waiting, KV cache usage, prefix cache hit rate); default 10, 0 = none", NULL},
      {"quiet", "q", CLI_FLAG, &quiet, NULL, "only the 'listening on' line", NULL},
      {"help", "h", CLI_FLAG, &help, NULL, "show this help", NULL},
      {NULL, NULL, 0, NULL, NULL, NULL, NULL}};
  cli_opt opts[64];
  run_flags_subset(&rf, KEEP, extra, opts, 64);
  int rc = cli_start("serve", USAGE, SUMMARY, opts, &help, argc, argv);
  if (rc != CLI_GO) return rc;

  sim_err err = {0, ""};
  if (!(speed > 0) || !isfinite(speed) || speed > 1e9) {
    sim_errf(&err, SIM_EINPUT, "--speed must be in (0, 1e9], got %g", speed);
    return cli_fail("serve", &err);
  }
  if (port > 65535) {
    sim_errf(&err, SIM_EINPUT, "--port must be in 0..65535, got %u", port);
    return cli_fail("serve", &err);
  }
  if (max_conns == 0 || max_conns > 1000000) {
    sim_errf(&err, SIM_EINPUT, "--max-connections must be in 1..1000000, got %u", max_conns);
    return cli_fail("serve", &err);
  }
  if (!(drain >= 0) || drain > 86400) {
    sim_errf(&err, SIM_EINPUT, "--drain-timeout must be in [0, 86400] seconds, got %g", drain);
    return cli_fail("serve", &err);
  }
  if (!(log_interval >= 0) || log_interval > 86400) {
    sim_errf(&err, SIM_EINPUT, "--log-interval must be in [0, 86400] seconds, got %g", log_interval);
    return cli_fail("serve", &err);
  }
  if (served && (!served[0] || strlen(served) >= 200)) {
    sim_errf(&err, SIM_EINPUT, "--served-model-name must have 1 to 199 characters");
    return cli_fail("serve", &err);
  }
  if (eos_dist_parse(eos, &lo.eos, &err)) return cli_fail("serve", &err);
  scenario sc;
  scenario_default(&sc);
  if (run_flags_apply(&rf, &sc, &err)) return cli_fail("serve", &err);
  /* the workload arrives over HTTP: no trace, no client slots, no time series, no time limit */
  sc.trace_path[0] = '\0';
  sc.max_concurrency = 0;
  sc.sample_interval_s = -1;
  sc.time_limit_s = 0;
  sc.traffic.kind = WARP_NONE;
  if (sc.autoscale.on) { /* a scenario's "autoscale": the fleet is fixed here */
    sim_errf(&err, SIM_EINPUT, "autoscale: `servesim serve` runs a fixed fleet (autoscaling is `servesim run`'s)");
    return cli_fail("serve", &err);
  }

  run_ctx *r = sim_calloc(1, sizeof *r);
  runner_init(r, &sc);
  rc = scenario_load_configs(&r->sc, &r->model, &r->gpu, &r->engine, &r->deploy, &err);
  if (!rc && r->deploy.disagg)
    rc = sim_errf(&err, SIM_EINPUT, "--mode disagg: `servesim serve` runs aggregated deployments only (use `servesim "
                  "run --mode disagg`)");
  if (!rc) rc = runner_build(r, true, &err);
  if (!rc) {
    lo.port = (int)port;
    lo.speed = speed;
    lo.max_conns = max_conns;
    lo.drain_s = drain;
    lo.served_model_name = served;
    lo.seed = sc.seed;
    lo.quiet = quiet;
    lo.log_interval_s = log_interval;
    char dep[256];
    snprintf(dep, sizeof dep, "%u x %s (TP%u PP%u DP%u) x %u replica%s, %s %s", deploy_gpus(&r->deploy), r->gpu.name,
             r->deploy.tp, r->deploy.pp, r->deploy.dp, r->deploy.replicas, r->deploy.replicas == 1 ? "" : "s", r->engine.name,
             r->engine.version);
    live_info info = {r->model.name, r->engine.name, r->engine.version, dep, r->prof.source};
    rc = live_serve(r->sim, &info, &lo, &err);
  }
  runner_free(r);
  free(r);
  if (rc) return cli_fail("serve", &err);
  return 0;
}
