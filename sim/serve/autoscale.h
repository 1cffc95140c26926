/* autoscale.h: a replica autoscaler as Kubernetes' Horizontal Pod Autoscaler (HPA) decides, on the metric a
 * KEDA/Prometheus trigger on vLLM's gauges gives it. A pure policy: samples in, a replica count out; the cluster
 * (cluster_scale.c) applies it (cold start, drain).
 *
 * Every decision period (HPA's --horizontal-pod-autoscaler-sync-period, default 15 s; KEDA's pollingInterval,
 * default 30 s, keda.sh/docs/latest/reference/scaledobject-spec):
 *  1. the raw recommendation, HPA's rule for a per-pod metric with an average-value target
 *     (kubernetes.io/docs/tasks/run-application/horizontal-pod-autoscale, "Algorithm details"; the code:
 *     pkg/controller/podautoscaler/replica_calculator.go, calcPlainMetricReplicas):
 *       ratio = (sum of the metric over ready pods / ready pods) / target
 *       no pod starting:  |1 - ratio| <= tolerance (0.1) -> current, else ceil(ratio x ready)
 *       pods starting (no metrics yet: vLLM's /metrics answers once the server is up): they count as the target
 *       when ratio < 1 and as 0 when ratio > 1; the new ratio over ready + starting pods decides as above, and a
 *       new ratio on the other side of 1 than the first, or a count that moves against it, keeps current;
 *       no ready pod: no metrics, current is kept (HPA: "did not receive metrics").
 *  2. stabilization (KEP-853, configurable scale velocity; HPAScalingRules.stabilizationWindowSeconds, defaults
 *     scale-up 0 s, scale-down 300 s): the recommendation is the current count raised to at most the lowest
 *     recommendation in the scale-up window and lowered to at least the highest in the scale-down window (the
 *     raw ones, this one included);
 *  3. the scale-up rate limit of HPA's default policies (100% or 4 pods per 15 s, the larger): at most
 *     max(ceil(2 x n0), n0 + 4) where n0 = the count 15 s ago minus nothing removed (HPA: the current count less
 *     the pods added in the period); the default scale-down policy (100% per 15 s) limits nothing;
 *  4. clamped to [min, max].
 * KEDA's cooldownPeriod only governs scaling to zero, which servesim does not model (min >= 1).
 * Metrics (vLLM's Prometheus names, vllm/v1/metrics/loggers.py): vllm:num_requests_waiting and
 * vllm:num_requests_running (requests per replica), vllm:kv_cache_usage_perc (a fraction in [0, 1] per replica;
 * vllm:gpu_cache_usage_perc is its former name); and one fleet-wide value, the p90 of the TTFTs of the first
 * tokens of the last `window` seconds (what histogram_quantile(0.9, rate(vllm:time_to_first_token_seconds_bucket
 * [window])) reads), judged as HPA judges an External metric with a Value target (getUsageRatioReplicaCount):
 * ratio = value / target; within the tolerance, current; else ceil(ratio x ready pods); no first token in the
 * window (Prometheus: no value), current.
 * Ownership: autoscaler_init/autoscaler_deinit on caller storage (the recommendation history). */
#ifndef SIM_AUTOSCALE_H
#define SIM_AUTOSCALE_H

#include "config/scalecfg.h"

/* Step 1 alone (no history): the raw recommendation for `ready` pods whose metrics sum to `sum` and `starting`
 * pods without metrics; current = ready + starting. */
uint32_t autoscale_raw(const autoscale_cfg *c, uint32_t ready, uint32_t starting, double sum);
/* The same for the fleet-wide value (ttft_p90; NAN: no sample). */
uint32_t autoscale_raw_fleet(const autoscale_cfg *c, uint32_t ready, uint32_t starting, double value);

typedef struct as_rec {
  sim_ns t_ns;
  uint32_t raw;           /* step 1's recommendation */
  uint32_t added;         /* replicas added by this decision (the rate limit's history) */
} as_rec;

typedef struct autoscaler {
  autoscale_cfg cfg;
  as_rec *rec;            /* decisions within the longest window, oldest first */
  size_t n, cap;
} autoscaler;

void autoscaler_init(autoscaler *a, const autoscale_cfg *cfg);
void autoscaler_deinit(autoscaler *a);
/* Steps 1-4 at time now (non-decreasing across calls): the desired replica count. `sum`: the per-replica metric
 * summed over ready replicas, or for ttft_p90 the fleet's value (NAN: none). */
uint32_t autoscaler_decide(autoscaler *a, sim_ns now, uint32_t ready, uint32_t starting, double sum);

/* mode=planner: NVIDIA Dynamo's SLA planner, throughput-based, without correction factors (github.com/ai-dynamo/
 * dynamo, components/planner/src/dynamo/planner/utils/planner_core.py, _compute_replica_requirements and
 * make_adjustments; defaults.py; load_predictor.py ConstantPredictor). Every adjustment interval it reads the
 * frontend's request count and mean input and output tokens over the interval (prometheus.py: increase() of
 * dynamo_frontend_requests_total and of the token histograms' sum / count), predicts the next interval's as the
 * last one's (the constant predictor), and sets
 *     replicas = ceil(requests / interval / capacity(ISL, OSL)), at least min (min_endpoint), at most max
 * where Dynamo's capacity is its pre-deployment profile's throughput per GPU at the SLA and servesim's is its own
 * simulated capacity of one replica (runner/planner_cap.h). No stabilization window and no rate limit: the
 * connector sets the count. Dynamo splits the count into prefill and decode workers; servesim's replicas are
 * aggregated ones, so one capacity covers both. It skips an interval whose metrics are missing (no request sent or
 * none finished: NaN averages) or whose capacity cannot be computed (`cap_rps` NAN or <= 0): current is kept. */
uint32_t planner_replicas(const autoscale_cfg *c, uint32_t current, double requests, double cap_rps);

#endif
