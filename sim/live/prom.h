/* prom.h: the Prometheus text exposition of the engine's server metrics, per
 * engine (replica), for `servesim serve`'s /metrics. Names, labels and
 * histogram buckets are vLLM's (vllm/v1/metrics/loggers.py,
 * PrometheusStatLogger: labels model_name and engine) or, with --engine
 * sglang, SGLang's (python/sglang/srt/observability/metrics_collector.py:
 * the scheduler's gauges per engine, the tokenizer manager's counters and
 * histograms over the server); counters end in _total and labels are sorted
 * as prometheus_client writes them. Times are simulated seconds.
 * Ownership: prom_init/prom_free on caller storage. */
#ifndef SIM_LIVE_PROM_H
#define SIM_LIVE_PROM_H

#include <stddef.h>
#include <stdint.h>

#include "live/openai.h" /* oai_buf */

typedef enum prom_hist_kind {
  PH_TTFT = 0,  /* vllm:time_to_first_token_seconds (sglang: the same name) */
  PH_ITL,       /* vllm:inter_token_latency_seconds */
  PH_E2E,       /* vllm:e2e_request_latency_seconds */
  PH_QUEUE,     /* vllm:request_queue_time_seconds (sglang:queue_time_seconds) */
  PH_COUNT
} prom_hist_kind;

enum { PROM_MAX_BUCKETS = 40 };

typedef enum prom_flavor { PROM_VLLM = 0, PROM_SGLANG } prom_flavor;

typedef struct prom_hist {
  uint64_t count[PROM_MAX_BUCKETS + 1]; /* per bucket (not cumulative); the last is +Inf */
  uint64_t n;
  double sum;
} prom_hist;

typedef enum prom_reason { PR_STOP = 0, PR_LENGTH, PR_ABORT, PR_COUNT } prom_reason;

typedef struct prom_engine {
  prom_hist h[PH_COUNT];
  uint64_t prompt_tokens, generation_tokens;
  uint64_t success[PR_COUNT]; /* vllm:request_success_total by finished_reason */
} prom_engine;

/* What the exposition reads of each engine's scheduler at scrape time. */
typedef struct prom_gauges {
  uint32_t running, waiting;
  double kv_usage;        /* [0, 1] */
  uint64_t preemptions;   /* cumulative */
  uint64_t prefix_queries, prefix_hits; /* prompt tokens looked up in the prefix cache and found, cumulative */
} prom_gauges;

typedef struct prom {
  prom_flavor flavor;
  uint32_t n_engines;
  prom_engine *e;
} prom;

void prom_init(prom *p, uint32_t n_engines, prom_flavor flavor);
void prom_free(prom *p);
void prom_observe(prom *p, uint32_t engine, prom_hist_kind k, double seconds);
/* Appends the whole exposition; g[] has n_engines entries. */
void prom_write(const prom *p, const char *model_name, const prom_gauges *g, oai_buf *out);

#endif
