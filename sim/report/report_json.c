/* report_json.c: the JSON result (vLLM --save-result keys + servesim section). */
#include <cjson/cJSON.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/outfmt.h"
#include "report/report.h"
#include "runner/whatif.h"

/* Numbers are written with a fixed format so identical runs give identical
 * bytes and the file stays readable: 10 significant digits, integers exact. */
static void num(cJSON *o, const char *k, double v) {
  char buf[64];
  if (!isfinite(v)) {
    cJSON_AddNullToObject(o, k);
    return;
  }
  snprintf(buf, sizeof buf, "%.10g", v);
  if (!strcmp(buf, "-0")) strcpy(buf, "0");
  cJSON_AddRawToObject(o, k, buf);
}

static void u64(cJSON *o, const char *k, uint64_t v) {
  char buf[32];
  snprintf(buf, sizeof buf, "%" PRIu64, v);
  cJSON_AddRawToObject(o, k, buf);
}

static void str(cJSON *o, const char *k, const char *v) { cJSON_AddStringToObject(o, k, v); }

static void dist(cJSON *o, const char *metric, const dist_stats *d) {
  char k[64];
  static const char *const names[] = {"mean", "median", "std", "p90", "p95", "p99"};
  double v[] = {d->mean, d->median, d->std, d->p90, d->p95, d->p99};
  for (size_t i = 0; i < SIM_ARRAY_LEN(names); i++) {
    snprintf(k, sizeof k, "%s_%s_ms", names[i], metric);
    num(o, k, v[i]);
  }
}

static cJSON *config_echo(const run_ctx *r) {
  cJSON *c = cJSON_CreateObject();
  const deploy_cfg *d = &r->deploy;
  str(c, "model", r->model.name);
  str(c, "model_source", r->model.path);
  str(c, "gpu", r->gpu.name);
  str(c, "gpu_full_name", r->gpu.full_name);
  str(c, "engine", r->engine.name);
  str(c, "engine_version", r->engine.version);
  u64(c, "tensor_parallel_size", d->tp);
  u64(c, "pipeline_parallel_size", d->pp ? d->pp : 1);
  if (deploy_dp(d) > 1) u64(c, "data_parallel_size", deploy_dp(d));
  if (r->model.experts) {
    cJSON *mo = cJSON_AddObjectToObject(c, "mixture_of_experts");
    u64(mo, "experts", r->model.experts);
    u64(mo, "experts_per_token", r->model.experts_per_tok);
    u64(mo, "moe_layers", r->model.moe_layers);
    str(mo, "routing", moe_routing_name(d->moe_routing));
  }
  u64(c, "replicas", d->replicas);
  u64(c, "gpus_total", (uint64_t)deploy_gpus(d) * d->replicas);
  str(c, "dtype", dtype_name(d->act_dtype));
  str(c, "weight_dtype", dtype_name(d->weight_dtype));
  str(c, "kv_cache_dtype", dtype_name(d->kv_dtype));
  u64(c, "max_num_seqs", d->max_num_seqs);
  u64(c, "max_num_batched_tokens", d->max_num_batched_tokens);
  u64(c, "block_size", d->block_size);
  u64(c, "max_model_len", d->max_model_len);
  num(c, "gpu_memory_utilization", d->gpu_memory_utilization);
  cJSON_AddBoolToObject(c, "enable_prefix_caching", d->enable_prefix_caching != 0);
  cJSON_AddBoolToObject(c, "enable_chunked_prefill", d->enable_chunked_prefill != 0);
  cJSON_AddBoolToObject(c, "async_scheduling", r->deploy.async_scheduling != 0);
  cJSON_AddStringToObject(c, "allreduce", ar_source_name(r->deploy.allreduce));
  cJSON_AddNumberToObject(c, "gpus_per_node", r->deploy.gpus_per_node);
  char graphs[256];
  cost_graph_sizes_text(&r->cost, graphs, sizeof graphs);
  cJSON_AddStringToObject(c, "cuda_graphs", graphs);
  str(c, "admission", r->engine.admission == ADMIT_ON_DEMAND ? "on_demand" : "reserve_full");
  num(c, "frontend_latency_ms", r->engine.frontend_latency_ns / 1e6);
  str(c, "router", route_policy_name(d->router));
  cJSON *w = cJSON_AddObjectToObject(c, "workload");
  str(w, "source", r->tr.source);
  str(w, "format", trace_format_name(r->tr.format));
  u64(w, "requests", r->tr.n);
  num(w, "span_s", r->tr_stats.span_s);
  num(w, "mean_rate_per_s", r->tr_stats.rate_per_s);
  num(w, "prompt_tokens_mean", r->tr_stats.prompt_mean);
  num(w, "output_tokens_mean", r->tr_stats.output_mean);
  if (r->sc.max_concurrency) u64(w, "max_concurrency", r->sc.max_concurrency);
  else cJSON_AddNullToObject(w, "max_concurrency");
  num(w, "rate_scale", r->sc.rate_scale);
  num(w, "prompt_scale", r->sc.prompt_scale);
  num(w, "output_scale", r->sc.output_scale);
  u64(w, "seed", r->sc.seed);
  if (r->sc.n_failures) {
    cJSON *fa = cJSON_AddArrayToObject(w, "replica_failures");
    for (uint32_t i = 0; i < r->sc.n_failures; i++) {
      cJSON *e = cJSON_CreateObject();
      u64(e, "replica", r->sc.failures[i].replica);
      num(e, "at_s", r->sc.failures[i].at_s);
      cJSON_AddItemToArray(fa, e);
    }
  }
  return c;
}

static cJSON *memory_plan(const mem_plan *p) {
  cJSON *m = cJSON_CreateObject();
  const double gib = 1024.0 * 1024.0 * 1024.0;
  num(m, "device_gib", p->device_bytes / gib);
  num(m, "budget_gib", p->budget_bytes / gib);
  num(m, "weights_gib", p->weights_bytes / gib);
  num(m, "activation_gib", p->activation_bytes / gib);
  num(m, "cuda_graph_gib", p->cuda_graph_bytes / gib);
  num(m, "runtime_overhead_gib", p->runtime_bytes / gib);
  num(m, "kv_cache_gib", p->kv_bytes / gib);
  num(m, "kv_bytes_per_token", p->kv_bytes_per_token);
  u64(m, "kv_blocks", p->kv_blocks);
  u64(m, "kv_tokens", p->kv_tokens);
  u64(m, "block_size", p->block_tokens);
  if (p->pp > 1) {
    cJSON *st = cJSON_AddArrayToObject(m, "pipeline_stages");
    for (uint32_t k = 0; k < p->pp; k++) {
      cJSON *o = cJSON_CreateObject();
      u64(o, "stage", k);
      u64(o, "layers", p->stage_layers[k]);
      num(o, "weights_gib", p->stage_weights_bytes[k] / gib);
      u64(o, "kv_blocks_its_memory_holds", p->stage_kv_blocks[k]);
      cJSON_AddItemToArray(st, o);
    }
    u64(m, "binding_stage", p->binding_stage);
  }
  num(m, "max_concurrency_at_max_model_len", p->max_concurrency_at_max_len);
  num(m, "weights_total_gb", p->weights_total_bytes / 1e9);
  return m;
}

static cJSON *steps_section(const run_ctx *r) {
  const metrics_rec *m = &r->res.m;
  const metrics_summary *s = &r->res.sum;
  cJSON *o = cJSON_CreateObject();
  u64(o, "steps", m->n_steps);
  num(o, "mean_step_ms", s->mean_step_ms);
  num(o, "median_step_ms", s->median_step_ms);
  num(o, "p99_step_ms", s->p99_step_ms);
  num(o, "mean_batch_sequences", s->mean_batch_seqs);
  num(o, "mean_batch_tokens", s->mean_batch_tokens);
  u64(o, "max_batch_sequences", m->max_batch_seqs);
  u64(o, "max_batch_tokens", m->max_batch_tokens);
  u64(o, "steps_with_prefill", m->steps_with_prefill);
  u64(o, "prefill_tokens", m->prefill_tokens);
  u64(o, "decode_tokens", m->decode_tokens);
  u64(o, "preemptions", m->preemptions);
  num(o, "prefix_cache_hit_rate", s->prefix_hit_rate);
  num(o, "preempted_prefix_cache_hit_rate", s->preempted_prefix_hit_rate);
  num(o, "busy_s", m->busy_ns / 1e9);
  cJSON *ops = cJSON_AddObjectToObject(o, "time_by_op_s");
  for (int i = 0; i < OP_COUNT; i++) num(ops, cost_op_name((cost_op)i), m->op_ns[i] / 1e9);
  cJSON *b = cJSON_AddObjectToObject(o, "time_by_bound_s");
  for (int i = 0; i < BOUND_COUNT; i++) num(b, cost_bound_name((cost_bound)i), m->bound_ns[i] / 1e9);
  return o;
}

static cJSON *cost_sources(const run_ctx *r) {
  cJSON *o = cJSON_CreateObject();
  str(o, "summary", r->prof.source);
  cJSON *ops = cJSON_AddObjectToObject(o, "per_op");
  for (int i = 0; i < OP_COUNT; i++) {
    if (i == OP_CPU_OVERHEAD || i == OP_LAUNCH || i == OP_ALLREDUCE || i == OP_ELEMENTWISE) continue;
    uint64_t best = 0;
    int bs = -1;
    for (int k = 0; k < SRC_COUNT; k++)
      if (r->cost.src_count[i][k] > best) best = r->cost.src_count[i][k], bs = k;
    cJSON *e = cJSON_AddObjectToObject(ops, cost_op_name((cost_op)i));
    str(e, "source", bs < 0 ? "unused" : cost_src_name((cost_src)bs));
    for (int k = 0; k < SRC_COUNT; k++) u64(e, cost_src_name((cost_src)k), r->cost.src_count[i][k]);
  }
  return o;
}

static cJSON *bottleneck_section(const run_ctx *r) {
  bottleneck b;
  runner_bottleneck(r, &b);
  cJSON *o = cJSON_CreateObject();
  str(o, "binding_limit", limit_name(b.primary));
  str(o, "step_bound", limit_name(b.step_bound));
  str(o, "explanation", b.explain);
  cJSON *sh = cJSON_AddObjectToObject(o, "step_time_share");
  for (int i = 0; i < BOUND_COUNT; i++) num(sh, cost_bound_name((cost_bound)i), b.share[i]);
  num(o, "gpu_busy_fraction", b.utilization);
  num(o, "queueing_share_of_ttft", b.queue_share);
  num(o, "kv_usage_peak", b.kv_peak);
  num(o, "kv_full_time_fraction", b.kv_full_time);
  return o;
}

int report_json(const run_ctx *r, FILE *f, sim_err *err) { return report_json_cmp(r, NULL, NULL, f, err); }

/* Both runs' key numbers and the recovery (whatif.h). */
static cJSON *comparison(const run_ctx *base, const run_ctx *wi, const whatif_compare *c) {
  cJSON *o = cJSON_CreateObject();
  const run_ctx *runs[2] = {base, wi};
  const char *names[2] = {"baseline", "what_if"};
  for (int k = 0; k < 2; k++) {
    const metrics_summary *s = &runs[k]->res.sum;
    cJSON *e = cJSON_AddObjectToObject(o, names[k]);
    u64(e, "completed", s->completed);
    num(e, "p50_ttft_ms", s->ttft_ms.median);
    num(e, "p99_ttft_ms", s->ttft_ms.p99);
    num(e, "p50_tpot_ms", s->tpot_ms.median);
    num(e, "p99_tpot_ms", s->tpot_ms.p99);
    num(e, "output_throughput", s->output_throughput);
    if (s->has_goodput) num(e, "request_goodput", s->request_goodput);
    num(e, "mean_requests_waiting", s->mean_waiting);
    num(e, "peak_requests_waiting", c->peak_waiting[k]);
    num(e, "peak_kv_usage", c->peak_kv[k]);
  }
  if (c->has_loss) {
    cJSON *rl = cJSON_AddObjectToObject(o, "replica_loss");
    num(rl, "at_s", c->loss_at_s);
    num(rl, "ttft_p99_limit_ms", c->limit_ms);
    str(rl, "limit_from", c->limit_from_slo ? "slo" : "1.1 x baseline p99");
    num(rl, "window_s", WHATIF_WINDOW_S);
    cJSON_AddBoolToObject(rl, "breached", c->breached);
    cJSON_AddBoolToObject(rl, "recovered", c->recovered);
    if (c->recovered) num(rl, "recovery_s", c->recovery_s);
    else cJSON_AddNullToObject(rl, "recovery_s");
    if (isinf(c->worst_window_p99_ms)) str(rl, "worst_window_p99_ttft_ms", "unanswered");
    else num(rl, "worst_window_p99_ttft_ms", c->worst_window_p99_ms);
  }
  return o;
}

int report_json_cmp(const run_ctx *r, const run_ctx *baseline, const whatif_compare *cmp, FILE *f, sim_err *err) {
  const metrics_summary *s = &r->res.sum;
  cJSON *root = cJSON_CreateObject();
  str(root, "backend", "servesim");
  str(root, "model_id", r->model.name);
  u64(root, "num_prompts", r->tr.n);
  if (!r->sc.trace_path[0]) {
    if (isinf(r->sc.gen.request_rate)) str(root, "request_rate", "inf");
    else num(root, "request_rate", r->sc.gen.request_rate);
    num(root, "burstiness", r->sc.gen.burstiness);
  } else {
    num(root, "request_rate", r->tr_stats.rate_per_s);
    cJSON_AddNullToObject(root, "burstiness");
  }
  if (r->sc.max_concurrency) u64(root, "max_concurrency", r->sc.max_concurrency);
  else cJSON_AddNullToObject(root, "max_concurrency");
  num(root, "duration", s->duration_s);
  u64(root, "completed", s->completed);
  u64(root, "total_input_tokens", s->total_input_tokens);
  u64(root, "total_output_tokens", s->total_output_tokens);
  num(root, "request_throughput", s->request_throughput);
  if (s->has_goodput) num(root, "request_goodput", s->request_goodput);
  else cJSON_AddNullToObject(root, "request_goodput");
  num(root, "output_throughput", s->output_throughput);
  num(root, "total_token_throughput", s->total_token_throughput);
  dist(root, "ttft", &s->ttft_ms);
  dist(root, "tpot", &s->tpot_ms);
  dist(root, "itl", &s->itl_ms);
  dist(root, "e2el", &s->e2el_ms);

  cJSON *x = cJSON_AddObjectToObject(root, "servesim");
  str(x, "version", SERVESIM_VERSION);
  cJSON_AddBoolToObject(x, "interrupted", r->interrupted);
  cJSON *cnt = cJSON_AddObjectToObject(x, "requests");
  u64(cnt, "total", s->total);
  u64(cnt, "completed", s->completed);
  u64(cnt, "rejected", s->rejected);
  u64(cnt, "unfinished", s->unfinished);
  cJSON *why = cJSON_AddObjectToObject(cnt, "rejected_by_reason");
  for (int k = 1; k <= REJ_UNFINISHED; k++)
    if (s->rejected_by_reason[k]) u64(why, rq_reject_name((rq_reject)k), s->rejected_by_reason[k]);
  u64(cnt, "trace_failure_rows_skipped", r->tr.n_failed_rows);
  if (s->has_goodput) {
    cJSON *g = cJSON_AddObjectToObject(x, "goodput_slo_ms");
    if (r->sc.goodput.ttft_ms >= 0) num(g, "ttft", r->sc.goodput.ttft_ms);
    if (r->sc.goodput.tpot_ms >= 0) num(g, "tpot", r->sc.goodput.tpot_ms);
    if (r->sc.goodput.e2el_ms >= 0) num(g, "e2el", r->sc.goodput.e2el_ms);
    u64(g, "good_requests", s->good_requests);
  }
  cJSON *q = cJSON_AddObjectToObject(x, "queueing");
  dist(q, "queue", &s->queue_ms);
  num(q, "mean_requests_in_system", s->mean_in_system);
  num(q, "mean_requests_waiting", s->mean_waiting);
  u64(q, "peak_requests_in_system", s->peak_in_system);
  cJSON_AddItemToObject(x, "configuration", config_echo(r));
  cJSON_AddItemToObject(x, "memory_plan", memory_plan(&r->plan));
  cJSON_AddItemToObject(x, "steps", steps_section(r));
  cJSON_AddItemToObject(x, "cost_sources", cost_sources(r));
  cJSON_AddItemToObject(x, "bottleneck", bottleneck_section(r));
  if (baseline && cmp) cJSON_AddItemToObject(x, "baseline_comparison", comparison(baseline, r, cmp));
  whatif_report wr;
  whatif_check(r, &wr);
  if (wr.count) {
    cJSON *wa = cJSON_AddArrayToObject(x, "what_if");
    for (uint32_t i = 0; i < wr.count; i++) {
      cJSON *e = cJSON_CreateObject();
      str(e, "event", wr.n[i].event);
      str(e, "exercised", wr.n[i].exercised ? "yes" : wr.n[i].partly ? "partly" : "no");
      str(e, "detail", wr.n[i].text);
      num(e, "last_arrival_s", wr.last_arrival_s);
      cJSON_AddItemToArray(wa, e);
    }
  }

  return outfmt_json_write(root, f, err);
}
