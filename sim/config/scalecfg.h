/* scalecfg.h: an autoscaling policy as the user writes it (`--autoscale key=value,...`, the scenario's
 * "autoscale" key): which vLLM gauge, its target per replica, the replica bounds, Kubernetes HPA's timing knobs
 * and the cold start's parameters. What the policy decides with them is serve/autoscale.h's; the keys, their
 * defaults and sources are in docs/planning.md, "Autoscaling". Plain value type. */
#ifndef SIM_SCALECFG_H
#define SIM_SCALECFG_H

#include "core/common.h"

typedef enum as_metric { AS_WAITING = 0, AS_RUNNING, AS_KV_USAGE, AS_TTFT_P90, AS_METRIC_COUNT } as_metric;

typedef struct autoscale_cfg {
  bool on;
  bool fixed;             /* fixed=N: a fleet of N replicas for the same accounting (min = max = initial = N) */
  as_metric metric;
  double target;          /* the metric's target per replica (requests, or a KV fraction in (0, 1]); for
                             ttft_p90 the fleet's p90 TTFT in seconds */
  double window_s;        /* ttft_p90: the first tokens of the last window_s seconds (Prometheus' rate() range),
                             default 60 */
  uint32_t min, max;      /* replicas, 1 <= min <= max */
  uint32_t initial;       /* replicas at t = 0 (0: the deployment's --replicas, clamped to [min, max]) */
  double interval_s;      /* decision period, default 15 (HPA sync period) */
  double tolerance;       /* default 0.1 (HPA) */
  double up_window_s;     /* scale-up stabilization window, default 0 */
  double down_window_s;   /* scale-down stabilization window, default 300 */
  bool up_limit;          /* HPA's default scale-up policies (100% / 4 pods per 15 s); default on */
  /* mode=planner: Dynamo's SLA planner instead of HPA (serve/autoscale.h, planner_replicas): every interval
     (default 180 s, Dynamo's adjustment_interval) the replicas for the last interval's request count at
     servesim's own capacity of one replica for its mean prompt and output lengths under these targets */
  bool planner;
  double ttft_s, itl_s;   /* the planner's targets on mean TTFT and mean ITL, s (Dynamo's defaults 0.5, 0.05) */
  bool interval_set;      /* interval= was given (else the mode's default) */
  bool metric_set;        /* metric= was given (refused with the planner) */
  /* cold start (cluster_scale.c, configs/coldstart.json) */
  double pod_start_s;     /* container scheduled, image present, process up; < 0: the file's default */
  char load_from[32];     /* weight source name in configs/coldstart.json ("" = its default) */
  double warmup_s;        /* compile + CUDA-graph capture + warm-up; < 0: the engine's figure in the file */
  char instance[1024];    /* instance type for the price (configs/instances); "" = the GPU file's price */
} autoscale_cfg;

/* Defaults above, off. */
void autoscale_cfg_init(autoscale_cfg *c);
/* Parses "key=value,key=value" (docs/planning.md, "Autoscaling") into *c (over what it holds) and turns it on;
 * checks the ranges. `what` names the flag or scenario key in messages. */
int autoscale_parse(autoscale_cfg *c, const char *spec, const char *what, sim_err *err);
/* The metric's name as vLLM exports it ("vllm:num_requests_waiting"). */
const char *autoscale_metric_name(as_metric m);
/* The spec back as text (for echoes and JSON). */
void autoscale_describe(const autoscale_cfg *c, char *buf, size_t n);

#endif
