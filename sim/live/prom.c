/* prom.c: vLLM's or SGLang's metrics in the Prometheus text format (see prom.h). */
#include "live/prom.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/common.h"

/* vllm/v1/metrics/loggers.py */
static const double TTFT_B[] = {0.001, 0.005, 0.01, 0.02, 0.04, 0.06, 0.08, 0.1, 0.25, 0.5, 0.75,
                                1.0,   2.5,   5.0,  7.5,  10.0, 20.0, 40.0, 80.0, 160.0, 640.0, 2560.0};
static const double ITL_B[] = {0.01, 0.025, 0.05, 0.075, 0.1, 0.15, 0.2,  0.3,  0.4, 0.5,
                               0.75, 1.0,   2.5,  5.0,   7.5, 10.0, 20.0, 40.0, 80.0};
static const double REQ_B[] = {0.3,  0.5,  0.8,  1.0,  1.5,   2.0,   2.5,   5.0,   10.0,  15.0,  20.0,
                               30.0, 40.0, 50.0, 60.0, 120.0, 240.0, 480.0, 960.0, 1920.0, 7680.0};

/* SGLang's defaults (observability/metrics_collector.py at sgl-project/sglang main of 2026-07-20:
 * TokenizerMetricsCollector's bucket_time_to_first_token, bucket_inter_token_latency,
 * bucket_e2e_request_latency; SchedulerMetricsCollector's queue_time) */
static const double SG_TTFT_B[] = {0.1, 0.2, 0.4, 0.6, 0.8, 1, 2, 4, 6, 8, 10, 20, 40, 60, 80, 100, 200, 400};
static const double SG_ITL_B[] = {0.002, 0.004, 0.006, 0.008, 0.010, 0.015, 0.020, 0.025, 0.030, 0.035, 0.040, 0.060,
                                  0.080, 0.100, 0.200, 0.400, 0.600, 0.800, 1.000, 2.000, 4.000, 6.000, 8.000};
static const double SG_E2E_B[] = {0.1, 0.2, 0.4, 0.6, 0.8, 1, 2, 4, 6, 8, 10, 20, 40, 60, 80, 100, 200, 400, 600,
                                  1200, 1800, 2400};
static const double SG_QUEUE_B[] = {0.000, 0.001, 0.005, 0.010, 0.050, 0.100, 0.200, 0.500, 1,    2,    3,    4,   5,  10,
                                    15,    20,    30,    40,    50,    60,    70,    80,    90,   100,  200,  300, 400,
                                    500,   600,   700,   800,   900,   1000,  1200,  1400,  1600, 1800, 2000, 2500, 3000};

static const struct {
  const char *name, *help;
  const double *b;
  int n;
} HISTS[2][PH_COUNT] = {
    {{"vllm:time_to_first_token_seconds", "Histogram of time to first token in seconds.", TTFT_B, SIM_ARRAY_LEN(TTFT_B)},
     {"vllm:inter_token_latency_seconds", "Histogram of inter-token latency in seconds.", ITL_B, SIM_ARRAY_LEN(ITL_B)},
     {"vllm:e2e_request_latency_seconds", "Histogram of e2e request latency in seconds.", REQ_B, SIM_ARRAY_LEN(REQ_B)},
     {"vllm:request_queue_time_seconds", "Histogram of time spent in WAITING phase for request.", REQ_B,
      SIM_ARRAY_LEN(REQ_B)}},
    {{"sglang:time_to_first_token_seconds", "Histogram of time to first token in seconds.", SG_TTFT_B,
      SIM_ARRAY_LEN(SG_TTFT_B)},
     {"sglang:inter_token_latency_seconds", "Histogram of inter-token latency in seconds.", SG_ITL_B,
      SIM_ARRAY_LEN(SG_ITL_B)},
     {"sglang:e2e_request_latency_seconds", "Histogram of End-to-end request latency in seconds", SG_E2E_B,
      SIM_ARRAY_LEN(SG_E2E_B)},
     {"sglang:queue_time_seconds", "Histogram of queueing time in seconds.", SG_QUEUE_B, SIM_ARRAY_LEN(SG_QUEUE_B)}}};
static const char *const REASONS[PR_COUNT] = {"stop", "length", "abort"};

void prom_init(prom *p, uint32_t n_engines, prom_flavor flavor) {
  SIM_ASSERT(flavor == PROM_VLLM || flavor == PROM_SGLANG);
  p->flavor = flavor;
  p->n_engines = n_engines;
  p->e = sim_calloc(n_engines ? n_engines : 1, sizeof *p->e);
}

void prom_free(prom *p) {
  free(p->e);
  memset(p, 0, sizeof *p);
}

void prom_observe(prom *p, uint32_t engine, prom_hist_kind k, double s) {
  SIM_ASSERT(engine < p->n_engines && k < PH_COUNT);
  prom_hist *h = &p->e[engine].h[k];
  int i = 0;
  int nb = HISTS[p->flavor][k].n;
  SIM_ASSERT(nb <= PROM_MAX_BUCKETS);
  while (i < nb && s > HISTS[p->flavor][k].b[i]) i++; /* le: value <= bound */
  h->count[i]++;
  h->n++;
  h->sum += s;
}

/* A float the way prometheus_client writes it (floatToGoString): 1.0, 0.25, 2560.0. */
static void num(oai_buf *o, double v) {
  if (isinf(v)) oai_printf(o, v > 0 ? "+Inf" : "-Inf");
  else if (v == floor(v) && fabs(v) < 1e15) oai_printf(o, "%.1f", v);
  else { /* the shortest form that reads back exactly (Python's repr) */
    char t[40];
    for (int prec = 1; prec <= 17; prec++) {
      snprintf(t, sizeof t, "%.*g", prec, v);
      if (strtod(t, NULL) == v) break;
    }
    oai_printf(o, "%s", t);
  }
}

static void labels(oai_buf *o, const char *model, uint32_t e) {
  oai_printf(o, "{engine=\"%u\",model_name=", e);
  oai_json_str(o, model); /* the exposition's label escaping (\\, \", \n) is JSON's for these */
  oai_printf(o, "}");
}

static void family(oai_buf *o, const char *name, const char *type, const char *help) {
  oai_printf(o, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

/* Engine e's value of the k-th gauge or counter of prom_write's table. */
static double scalar(const prom *p, const prom_gauges *g, int k, uint32_t e) {
  switch (k) {
    case 0: return g[e].running;
    case 1: return g[e].waiting;
    case 2: return g[e].kv_usage;
    case 3: return (double)g[e].preemptions;
    case 4: return (double)p->e[e].prompt_tokens;
    case 5: return (double)p->e[e].generation_tokens;
    case 6: return (double)g[e].prefix_queries;
    default: return (double)g[e].prefix_hits;
  }
}

static void write_vllm(const prom *p, const char *model, const prom_gauges *g, oai_buf *o) {
  static const struct {
    const char *name, *type, *help;
  } S[] = {{"vllm:num_requests_running", "gauge", "Number of requests in model execution batches."},
           {"vllm:num_requests_waiting", "gauge", "Number of requests waiting to be processed."},
           {"vllm:kv_cache_usage_perc", "gauge", "KV-cache usage. 1 means 100 percent usage."},
           {"vllm:num_preemptions_total", "counter", "Cumulative number of preemption from the engine."},
           {"vllm:prompt_tokens_total", "counter", "Number of prefill tokens processed."},
           {"vllm:generation_tokens_total", "counter", "Number of generation tokens processed."},
           {"vllm:prefix_cache_queries_total", "counter", "Prefix cache queries, in terms of number of queried tokens."},
           {"vllm:prefix_cache_hits_total", "counter", "Prefix cache hits, in terms of number of cached tokens."}};
  for (int k = 0; k < (int)SIM_ARRAY_LEN(S); k++) {
    family(o, S[k].name, S[k].type, S[k].help);
    for (uint32_t e = 0; e < p->n_engines; e++) {
      oai_printf(o, "%s", S[k].name);
      labels(o, model, e);
      oai_printf(o, " ");
      num(o, scalar(p, g, k, e));
      oai_printf(o, "\n");
    }
  }
  family(o, "vllm:request_success_total", "counter", "Count of successfully processed requests.");
  for (uint32_t e = 0; e < p->n_engines; e++)
    for (int r = 0; r < PR_COUNT; r++) {
      oai_printf(o, "vllm:request_success_total{engine=\"%u\",finished_reason=\"%s\",model_name=", e, REASONS[r]);
      oai_json_str(o, model);
      oai_printf(o, "} ");
      num(o, (double)p->e[e].success[r]);
      oai_printf(o, "\n");
    }
  for (int k = 0; k < PH_COUNT; k++) {
    family(o, HISTS[0][k].name, "histogram", HISTS[0][k].help);
    for (uint32_t e = 0; e < p->n_engines; e++) {
      const prom_hist *h = &p->e[e].h[k];
      uint64_t cum = 0;
      for (int i = 0; i <= HISTS[0][k].n; i++) {
        cum += h->count[i];
        oai_printf(o, "%s_bucket{engine=\"%u\",le=\"", HISTS[0][k].name, e);
        num(o, i < HISTS[0][k].n ? HISTS[0][k].b[i] : INFINITY);
        oai_printf(o, "\",model_name=");
        oai_json_str(o, model);
        oai_printf(o, "} ");
        num(o, (double)cum);
        oai_printf(o, "\n");
      }
      oai_printf(o, "%s_count", HISTS[0][k].name);
      labels(o, model, e);
      oai_printf(o, " ");
      num(o, (double)h->n);
      oai_printf(o, "\n%s_sum", HISTS[0][k].name);
      labels(o, model, e);
      oai_printf(o, " ");
      num(o, h->sum);
      oai_printf(o, "\n");
    }
  }
}

/* ---- SGLang ---------------------------------------------------------------------------------------------------- */

/* A label set sorted by name as prometheus_client writes it. The scheduler's (per engine): dp_rank (with several
 * engines: SGLang's DP ranks), engine_type "unified", model_name, moe_ep_rank, pp_rank, tp_rank (rank 0: the
 * scheduler that logs); the tokenizer manager's (the server's): engine_type, model_name. le: a bucket's bound. */
static void sg_labels(oai_buf *o, const prom *p, const char *model, int64_t e, const double *le) {
  oai_printf(o, "{");
  if (e >= 0 && p->n_engines > 1) oai_printf(o, "dp_rank=\"%lld\",", (long long)e);
  oai_printf(o, "engine_type=\"unified\",");
  if (le) {
    oai_printf(o, "le=\"");
    num(o, *le);
    oai_printf(o, "\",");
  }
  oai_printf(o, "model_name=");
  oai_json_str(o, model);
  if (e >= 0) oai_printf(o, ",moe_ep_rank=\"0\",pp_rank=\"0\",tp_rank=\"0\"");
  oai_printf(o, "}");
}

static void sg_sample(oai_buf *o, const prom *p, const char *name, const char *model, int64_t e, const double *le,
                      double v) {
  oai_printf(o, "%s", name);
  sg_labels(o, p, model, e, le);
  oai_printf(o, " ");
  num(o, v);
  oai_printf(o, "\n");
}

/* Histogram k of engine e, or summed over the engines (e < 0: the tokenizer manager's). */
static void sg_hist(oai_buf *o, const prom *p, const char *model, prom_hist_kind k, int64_t e) {
  const double *b = HISTS[1][k].b;
  int nb = HISTS[1][k].n;
  uint64_t cum = 0, n = 0;
  double sum = 0;
  for (int i = 0; i <= nb; i++) {
    for (uint32_t x = 0; x < p->n_engines; x++)
      if (e < 0 || x == (uint32_t)e) cum += p->e[x].h[k].count[i];
    double bound = i < nb ? b[i] : INFINITY;
    char name[96];
    snprintf(name, sizeof name, "%s_bucket", HISTS[1][k].name);
    sg_sample(o, p, name, model, e, &bound, (double)cum);
  }
  for (uint32_t x = 0; x < p->n_engines; x++)
    if (e < 0 || x == (uint32_t)e) n += p->e[x].h[k].n, sum += p->e[x].h[k].sum;
  char name[96];
  snprintf(name, sizeof name, "%s_count", HISTS[1][k].name);
  sg_sample(o, p, name, model, e, NULL, (double)n);
  snprintf(name, sizeof name, "%s_sum", HISTS[1][k].name);
  sg_sample(o, p, name, model, e, NULL, sum);
}

/* The names SGLang's scheduler (per engine) and tokenizer manager (the server) export that servesim has figures
 * for: running and queued requests, token usage (the KV pool's share in use), the prefix cache's hit rate
 * (cumulative here: SGLang logs the rate of its last logging interval), retracted requests; prompt and generation
 * tokens, finished and aborted requests; queueing time per engine; TTFT, ITL and E2E over the server. */
static void write_sglang(const prom *p, const char *model, const prom_gauges *g, oai_buf *o) {
  static const struct {
    const char *name, *type, *help;
  } S[] = {{"sglang:num_running_reqs", "gauge", "The number of running requests."},
           {"sglang:num_queue_reqs", "gauge", "The number of requests in the waiting queue."},
           {"sglang:token_usage", "gauge", "The token usage."},
           {"sglang:cache_hit_rate", "gauge", "The prefix cache hit rate."},
           {"sglang:num_retracted_requests_total", "counter", "Total number of retracted requests."}};
  for (int k = 0; k < (int)SIM_ARRAY_LEN(S); k++) {
    family(o, S[k].name, S[k].type, S[k].help);
    for (uint32_t e = 0; e < p->n_engines; e++) {
      double v = k == 0   ? g[e].running
                 : k == 1 ? g[e].waiting
                 : k == 2 ? g[e].kv_usage
                 : k == 3 ? (g[e].prefix_queries ? (double)g[e].prefix_hits / (double)g[e].prefix_queries : 0.0)
                          : (double)g[e].preemptions;
      sg_sample(o, p, S[k].name, model, e, NULL, v);
    }
  }
  family(o, HISTS[1][PH_QUEUE].name, "histogram", HISTS[1][PH_QUEUE].help);
  for (uint32_t e = 0; e < p->n_engines; e++) sg_hist(o, p, model, PH_QUEUE, e);
  uint64_t prompt = 0, gen = 0, done = 0, aborted = 0;
  for (uint32_t e = 0; e < p->n_engines; e++) {
    prompt += p->e[e].prompt_tokens, gen += p->e[e].generation_tokens, aborted += p->e[e].success[PR_ABORT];
    for (int r = 0; r < PR_COUNT; r++) done += p->e[e].success[r];
  }
  static const struct {
    const char *name, *help;
  } C[] = {{"sglang:prompt_tokens_total", "Number of prefill tokens processed."},
           {"sglang:generation_tokens_total", "Number of generation tokens processed."},
           {"sglang:num_requests_total", "Number of requests processed."},
           {"sglang:num_aborted_requests_total", "Number of requests aborted."}};
  const uint64_t cv[] = {prompt, gen, done, aborted};
  for (int k = 0; k < (int)SIM_ARRAY_LEN(C); k++) {
    family(o, C[k].name, "counter", C[k].help);
    sg_sample(o, p, C[k].name, model, -1, NULL, (double)cv[k]);
  }
  static const prom_hist_kind TK[] = {PH_TTFT, PH_ITL, PH_E2E};
  for (int k = 0; k < (int)SIM_ARRAY_LEN(TK); k++) {
    family(o, HISTS[1][TK[k]].name, "histogram", HISTS[1][TK[k]].help);
    sg_hist(o, p, model, TK[k], -1);
  }
}

void prom_write(const prom *p, const char *model, const prom_gauges *g, oai_buf *o) {
  if (p->flavor == PROM_SGLANG) write_sglang(p, model, g, o);
  else write_vllm(p, model, g, o);
}
