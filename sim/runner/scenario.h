/* scenario.h: everything one simulation run needs, by name: model, GPU,
 * engine profile, deployment knobs, workload (trace or generator), client,
 * SLOs and what-ifs. Read from a scenario JSON file (configs/examples/) and
 * overridden by command-line flags; then runner.h turns it into a result.
 * Plain value type, no heap (names and paths are fixed-size strings). */
#ifndef SIM_SCENARIO_H
#define SIM_SCENARIO_H

#include "config/cfg.h"
#include "config/scalecfg.h"
#include "metrics/metrics.h"
#include "workload/gen.h"
#include "workload/trace.h"
#include "workload/warp.h"

/* What-if replica losses a scenario may name (the cluster holds as many). */
enum { SCENARIO_MAX_FAILURES = 16 };

typedef struct scenario {
  char name[128];
  char source[1024];          /* scenario file it came from ("" = built-in default) */
  char model[1024];           /* name or path */
  char gpu[1024];
  char engine[1024];
  char profile[1024];         /* "auto" (bundled profile for the GPU if any), "none", or a path */
  deploy_cfg deploy;
  /* workload */
  char trace_path[1024];      /* "" = generated */
  trace_format trace_fmt;
  gen_params gen;             /* used when trace_path is empty */
  double window_start_s;      /* keep arrivals in [start, end) of the trace; end < 0 = no end */
  double window_end_s;
  double rate_scale;          /* 2 = arrivals twice as fast (what-if) */
  double target_rate;         /* > 0: rescale the trace to this mean rate, req/s */
  double prompt_scale, output_scale;
  uint64_t max_requests;      /* 0 = all */
  double duration_s;          /* > 0: arrivals cut or extended (trace repeated, generator sized) to this many
                                 seconds of the run's clock; 0 = the workload's own length */
  bool repeat_shares_prefixes; /* repeated copies keep their sessions and prefix ids (caches hit across copies) */
  uint32_t max_concurrency;   /* client slots, 0 = unlimited */
  /* what-ifs */
  uint32_t n_failures;
  struct {
    uint32_t replica;
    double at_s;
  } failures[SCENARIO_MAX_FAILURES];
  traffic_warp traffic;       /* traffic step or ramp (workload/warp.h), applied after rate scaling */
  autoscale_cfg autoscale;    /* replicas scaled by a policy (config/scalecfg.h); off by default */
  /* metrics and run control */
  slo_cfg goodput;            /* negative = not part of goodput */
  double sample_interval_s;   /* time series period; 0 = auto, < 0 = none */
  double time_limit_s;        /* 0 = none */
  bool shared_timeline;       /* never simulate the replicas apart (cluster.h; the same results, for checking) */
  bool step_by_step;          /* no closed-form decode runs (cluster.h; the same results, for checking) */
  uint64_t seed;
} scenario;

/* Blank defaults: bundled names (llama-3.1-70b, h200, vllm), every
 * deployment knob unset, vLLM bench serve generator defaults, no trace. */
void scenario_init(scenario *s);
/* The built-in default: Llama-3.1-70B on H200 x TP4 (vLLM), replaying the
 * bundled chat trace. Kept identical to configs/examples/default.json. */
void scenario_default(scenario *s);
/* Loads a scenario JSON file over *s (keys present override; unknown keys are
 * errors naming the file and key). */
int scenario_load(scenario *s, const char *path, sim_err *err);
int scenario_parse(scenario *s, const char *json, const char *what, sim_err *err);
/* Loads the scenario's model, GPU and engine configs (by name or path) and
 * resolves its deployment against them (cfg_resolve) into *d. */
int scenario_load_configs(const scenario *s, model_cfg *m, gpu_cfg *g, engine_cfg *e, deploy_cfg *d, sim_err *err);

#endif
