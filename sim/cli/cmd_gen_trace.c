/* cmd_gen_trace.c: `servesim gen-trace`: write a generated (or transformed)
 * workload as a native CSV trace. With --trace it converts any supported
 * trace format (and applies --window/--rate-scale/...) losslessly. */
#include "cli/cli.h"
#include "cli/run_flags.h"
#include "runner/runner.h"

static const char *USAGE = "servesim gen-trace [workload options] [--out FILE]";
static const char *SUMMARY =
    "Generates a workload like `vllm bench serve --dataset-name random` (or lognormal lengths) and writes it\n"
    "as a native servesim CSV trace (arrival_s,prompt_tokens,output_tokens). With --trace it converts an\n"
    "Azure, BurstGPT or Mooncake trace to the native format, applying any transforms given.";

static const char *const WORKLOAD_FLAGS[] = {
    "trace", "trace-format", "num-prompts", "request-rate", "burstiness", "random-input-len", "random-output-len",
    "random-range-ratio", "input-dist", "input-median", "input-sigma", "input-max", "output-dist", "output-median",
    "output-sigma", "output-max", "seed", "window", "rate-scale", "prompt-scale", "output-scale", "max-requests", NULL};

static int w_trace(const void *t, FILE *f, sim_err *e) { return trace_write_native(t, f, e); }

int cmd_gen_trace(int argc, char **argv) {
  run_flags rf;
  run_flags_init(&rf);
  const char *out = "-";
  bool force = false, help = false;
  const cli_opt extra[] = {{"out", "o", CLI_STR, &out, "FILE", "output file (default: stdout)", NULL},
                           {"force", NULL, CLI_FLAG, &force, NULL, "overwrite an existing output file", NULL},
                           {"help", "h", CLI_FLAG, &help, NULL, "show this help", NULL},
                           {NULL, NULL, 0, NULL, NULL, NULL, NULL}};
  cli_opt opts[64];
  run_flags_subset(&rf, WORKLOAD_FLAGS, extra, opts, 64);
  int rc = cli_start("gen-trace", USAGE, SUMMARY, opts, &help, argc, argv);
  if (rc != CLI_GO) return rc;
  sim_err err = {0, ""};
  scenario sc;
  scenario_init(&sc);
  /* blank scenario: without --trace this generates, with vLLM's defaults for what is not given */
  if (run_flags_apply(&rf, &sc, &err)) return cli_fail("gen-trace", &err);
  trace t;
  rc = runner_load_workload(&sc, &t, &err);
  if (!rc) rc = outfmt_write_file(out, force, w_trace, &t, &err);
  trace_free(&t);
  if (rc) return cli_fail("gen-trace", &err);
  return 0;
}
