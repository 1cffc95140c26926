/* scaling.h: an autoscaled run's setup and accounting (the runner's side of serve/cluster_scale.c):
 *  - setup: the policy's slots (2 x max engine cores: replicas draining beside a full fleet), the replicas at
 *    t = 0, the cold start (config/coldstart.h) and the price of a GPU-hour (the --autoscale spec's instance=,
 *    configs/instances, or the GPU file's price);
 *  - accounting: GPU-hours = replica-seconds holding GPUs (starting, serving, draining; serve/cluster.h) x GPUs
 *    per replica / 3600, up to the run's last event; cost = GPU-hours x USD per GPU-hour;
 *  - hours: the requests by arrival hour, each hour's share meeting every --goodput objective (an unfinished
 *    request misses), its p99 TTFT and its mean replicas held (from the time series); an hour misses the SLO
 *    when fewer than 99% of its requests meet the objectives (its p99 is over them).
 * Owned by the run's result (run_scale_free). */
#ifndef SIM_SCALING_H
#define SIM_SCALING_H

#include "config/coldstart.h"
#include "hw/memplan.h"
#include "runner/planner_cap.h"
#include "runner/scenario.h"

struct cluster;
struct cluster_cfg;
struct run_result;

#define SCALE_HOUR_S 3600.0
#define SCALE_HOUR_ATTAIN 0.99

typedef struct run_scale_event {
  double t_s;
  uint32_t from, to;        /* replicas counted by the policy (starting + ready) */
  uint32_t ready, starting; /* before the decision */
  double metric;            /* mean over ready replicas */
} run_scale_event;

typedef struct scale_hour {
  uint32_t requests, met;   /* arrived in the hour; of those, meeting every --goodput objective */
  double ttft_p99_ms;       /* NAN: no first token in the hour */
  double replicas_mean;     /* replicas holding GPUs, mean of the hour's samples (NAN: no time series) */
} scale_hour;

typedef struct run_scale {
  bool on;
  uint32_t initial, slots, gpus_per_replica;
  cold_start cs;
  double held_replica_s, serving_replica_s;
  uint32_t peak_held, decisions, starts, drains, cancelled, slots_short;
  run_scale_event *ev;
  size_t n_ev;
  double usd_per_gpu_hour;  /* 0: unknown */
  bool price_assumed;
  char price_source[700];
  double gpu_hours, cost_usd;
  scale_hour *hours;
  uint32_t n_hours, hours_missed;
  bool slo_given;           /* some --goodput objective (else no hour is judged) */
  /* mode=planner: the capacity search (live during the run; freed by scaling_collect, which keeps its table) */
  planner_cap *pc;
  planner_cap_entry *caps;  /* the buckets searched, in the order the planner asked */
  uint32_t n_caps;
  uint64_t cap_probes;      /* simulations the searches ran */
  char cap_error[512];      /* a probe that could not run ("" = none) */
} run_scale;

/* Fills cc->scale and cc->replicas for sc->autoscale (nothing when it is off) and *out's setup. */
int scaling_setup(const scenario *sc, const engine_cfg *e, const gpu_cfg *g, const deploy_cfg *d, const mem_plan *plan,
                  struct cluster_cfg *cc, run_scale *out, sim_err *err);
/* After cluster_finish: the fleet's totals and changes. */
void scaling_collect(const struct cluster *c, run_scale *out);
/* After the records and the time series are in the result: GPU-hours, cost, the hours. */
void scaling_hours(struct run_result *res);
void run_scale_free(run_scale *s);

#endif
