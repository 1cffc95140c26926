/* run_flags.h: the flags shared by run, sweep and capacity that describe one
 * scenario (vLLM's names where vLLM has one), and how they override the
 * scenario file (or the built-in default).
 *
 * Workload selection: --trace FILE replays a trace; any generator flag
 * (--num-prompts, --random-*, --input-*, --output-*, --burstiness) without
 * --trace switches to the generator (vLLM defaults for the rest); otherwise
 * the scenario's workload is used. --request-rate sets the generator's rate,
 * or, with a trace, rescales the trace to that mean rate. */
#ifndef SIM_RUN_FLAGS_H
#define SIM_RUN_FLAGS_H

#include "cli/cli.h"
#include "runner/scenario.h"

#define RUN_MAX_SETTINGS 40
#define RUN_FLAGS_DEPLOYMENT "@deployment" /* capacity for config/settings.h's table */

typedef struct run_flags {
  const char *scenario, *model, *gpu, *engine, *profile;
  /* the deployment settings (config/settings.h), by table index: values as text, switches as on/off */
  const char *set_text[RUN_MAX_SETTINGS];
  bool set_on[RUN_MAX_SETTINGS], set_seen[RUN_MAX_SETTINGS];
  /* workload */
  const char *trace, *trace_format, *window;
  uint64_t num_prompts, seed, max_requests;
  double request_rate, burstiness, range_ratio, out_range_ratio;
  uint32_t input_len, output_len, max_concurrency;
  const char *input_dist, *output_dist;
  double input_median, input_sigma, output_median, output_sigma;
  uint32_t input_max, output_max;
  double rate_scale, prompt_scale, output_scale;
  cli_list fail_replica; /* "R@T" */
  const char *traffic_step, *traffic_ramp; /* "T:X", "T0:T1:X" (workload/warp.h) */
  const char *autoscale;                  /* "key=value,..." (config/scalecfg.h) */
  cli_list goodput;      /* "ttft:MS" ... */
  double sample_interval, time_limit, duration;
  bool repeat_shares_prefixes;
  bool shared_timeline;
  bool step_by_step;
  bool seen[64];         /* which flags were given, by index in the table */
} run_flags;

void run_flags_init(run_flags *f);
/* Whether the deployment setting of this key (config/settings.h) was given as a flag. */
bool run_flags_given(const run_flags *f, const char *key);
/* Fills opts[0..cap) with the flag table; returns how many (no terminator). */
int run_flags_table(run_flags *f, cli_opt *opts, int cap);
/* The table of a command that takes only some of the run flags: those named
 * in names[] (NULL-terminated; in the order of the full table; the name
 * RUN_FLAGS_DEPLOYMENT stands for every deployment setting), then extra[]
 * (NULL-terminated); terminated; returns the count. */
int run_flags_subset(run_flags *f, const char *const *names, const cli_opt *extra, cli_opt *opts, int cap);
/* Applies the flags to *sc (which the caller initialized, e.g. with
 * scenario_default): a --scenario file replaces it first, then every flag
 * given overrides. Errors name the flag. */
int run_flags_apply(const run_flags *f, scenario *sc, sim_err *err);

#endif
