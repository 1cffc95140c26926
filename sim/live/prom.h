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
  /* vLLM's only (SGLang's default /metrics has no counterpart: prom.c) */
  PH_PREFILL,   /* vllm:request_prefill_time_seconds: first scheduled -> first token */
  PH_DECODE,    /* vllm:request_decode_time_seconds: first token -> last token */
  PH_INFERENCE, /* vllm:request_inference_time_seconds: first scheduled -> last token */
  PH_PROMPT,    /* vllm:request_prompt_tokens: a finished request's prompt tokens */
  PH_GEN,       /* vllm:request_generation_tokens: a finished request's generated tokens */
  PH_MAX_GEN,   /* vllm:request_max_num_generation_tokens (n = 1: its generated tokens) */
  PH_MAX_TOKENS,/* vllm:request_params_max_tokens: its max_tokens (given, or the rest of the context) */
  PH_ITER,      /* vllm:iteration_tokens_total: per engine step with output (prom_step_tokens) */
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
  uint64_t step_id, step_tokens; /* the engine step being summed for PH_ITER (step_tokens 0: none open) */
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
  double tok_b[PROM_MAX_BUCKETS]; /* vLLM's build_1_2_5_buckets(max_model_len): the token-count histograms' */
  int n_tok_b;
} prom;

void prom_init(prom *p, uint32_t n_engines, prom_flavor flavor, uint32_t max_model_len);
void prom_free(prom *p);
/* One observation of histogram k (seconds, or tokens). */
void prom_observe(prom *p, uint32_t engine, prom_hist_kind k, double v);
/* vllm:iteration_tokens_total, as vLLM's output loop makes it (one IterationStats per batch of engine-core outputs
 * that holds any): the engine's step `step_id` (the step's end time) put out `tokens` more tokens: prompt tokens
 * of a request whose first token it sampled, plus the tokens sampled. A different step_id closes the open step
 * (one observation of its total); prom_steps_flush closes every open one (all steps up to now have ended). */
void prom_step_tokens(prom *p, uint32_t engine, uint64_t step_id, uint64_t tokens);
void prom_steps_flush(prom *p);
/* Appends the whole exposition; g[] has n_engines entries. */
void prom_write(const prom *p, const char *model_name, const prom_gauges *g, oai_buf *out);

#endif
