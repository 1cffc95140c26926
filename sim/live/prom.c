/* prom.c: vLLM's metrics in the Prometheus text format (see prom.h). */
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

static const struct {
  const char *name, *help;
  const double *b;
  int n;
} HISTS[PH_COUNT] = {
    {"vllm:time_to_first_token_seconds", "Histogram of time to first token in seconds.", TTFT_B, SIM_ARRAY_LEN(TTFT_B)},
    {"vllm:inter_token_latency_seconds", "Histogram of inter-token latency in seconds.", ITL_B, SIM_ARRAY_LEN(ITL_B)},
    {"vllm:e2e_request_latency_seconds", "Histogram of e2e request latency in seconds.", REQ_B, SIM_ARRAY_LEN(REQ_B)},
    {"vllm:request_queue_time_seconds", "Histogram of time spent in WAITING phase for request.", REQ_B,
     SIM_ARRAY_LEN(REQ_B)},
};
static const char *const REASONS[PR_COUNT] = {"stop", "length", "abort"};

void prom_init(prom *p, uint32_t n_engines) {
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
  while (i < HISTS[k].n && s > HISTS[k].b[i]) i++; /* le: value <= bound */
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

void prom_write(const prom *p, const char *model, const prom_gauges *g, oai_buf *o) {
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
    family(o, HISTS[k].name, "histogram", HISTS[k].help);
    for (uint32_t e = 0; e < p->n_engines; e++) {
      const prom_hist *h = &p->e[e].h[k];
      uint64_t cum = 0;
      for (int i = 0; i <= HISTS[k].n; i++) {
        cum += h->count[i];
        oai_printf(o, "%s_bucket{engine=\"%u\",le=\"", HISTS[k].name, e);
        num(o, i < HISTS[k].n ? HISTS[k].b[i] : INFINITY);
        oai_printf(o, "\",model_name=");
        oai_json_str(o, model);
        oai_printf(o, "} ");
        num(o, (double)cum);
        oai_printf(o, "\n");
      }
      oai_printf(o, "%s_count", HISTS[k].name);
      labels(o, model, e);
      oai_printf(o, " ");
      num(o, (double)h->n);
      oai_printf(o, "\n%s_sum", HISTS[k].name);
      labels(o, model, e);
      oai_printf(o, " ");
      num(o, h->sum);
      oai_printf(o, "\n");
    }
  }
}
