/* report_json.c: the JSON result (vLLM --save-result keys + servesim section),
 * streamed through the project's one JSON writer (core/jsonw.h). */
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "config/engver.h"
#include "config/settings.h"
#include "config/specdec.h"
#include "core/jsonw.h"
#include "report/report.h"
#include "runner/whatif.h"

/* Numbers: 10 significant digits, integers exact, non-finite as null (jsonw). */
static void num(jw *o, const char *k, double v) { jw_num(o, k, v); }
static void u64(jw *o, const char *k, uint64_t v) { jw_u64(o, k, v); }
static void str(jw *o, const char *k, const char *v) { jw_str(o, k, v); }

static void dist(jw *o, const char *metric, const dist_stats *d) {
  char k[64];
  static const char *const names[] = {"mean", "median", "std", "p90", "p95", "p99"};
  double v[] = {d->mean, d->median, d->std, d->p90, d->p95, d->p99};
  for (size_t i = 0; i < SIM_ARRAY_LEN(names); i++) {
    snprintf(k, sizeof k, "%s_%s_ms", names[i], metric);
    num(o, k, v[i]);
  }
}

static void config_echo(jw *c, const run_result *r) {
  jw_obj(c, "configuration");
  const deploy_cfg *d = &r->deploy;
  str(c, "model", r->model.name);
  str(c, "model_source", r->model.path);
  str(c, "gpu", r->gpu.name);
  str(c, "gpu_full_name", r->gpu.full_name);
  str(c, "engine", r->engine.name);
  str(c, "engine_version", r->engine.version);
  settings_json_echo(d, 0, c); /* every deployment setting, resolved (config/settings.c's table) */
  if (r->model.experts) {
    jw_obj(c, "mixture_of_experts");
    u64(c, "experts", r->model.experts);
    u64(c, "experts_per_token", r->model.experts_per_tok);
    u64(c, "moe_layers", r->model.moe_layers);
    str(c, "routing", moe_routing_name(d->moe_routing));
    jw_end(c);
  }
  u64(c, "gpus_total", deploy_gpus_total(d));
  str(c, "cuda_graphs", r->cost_graphs);
  str(c, "admission", r->engine.admission == ADMIT_ON_DEMAND ? "on_demand" : "reserve_full");
  num(c, "frontend_latency_ms", r->engine.frontend_latency_ns / 1e6);
  jw *w = c;
  jw_obj(w, "workload");
  str(w, "source", r->tr.source);
  str(w, "format", trace_format_name(r->tr.format));
  u64(w, "requests", r->tr.n);
  num(w, "span_s", r->tr_stats.span_s);
  num(w, "mean_rate_per_s", r->tr_stats.rate_per_s);
  num(w, "prompt_tokens_mean", r->tr_stats.prompt_mean);
  num(w, "output_tokens_mean", r->tr_stats.output_mean);
  if (r->sc.max_concurrency) u64(w, "max_concurrency", r->sc.max_concurrency);
  else jw_null(w, "max_concurrency");
  num(w, "rate_scale", r->sc.rate_scale);
  num(w, "prompt_scale", r->sc.prompt_scale);
  num(w, "output_scale", r->sc.output_scale);
  u64(w, "seed", r->sc.seed);
  if (r->sc.n_failures) {
    jw_arr(w, "replica_failures");
    for (uint32_t i = 0; i < r->sc.n_failures; i++) {
      jw_obj(w, NULL);
      u64(w, "replica", r->sc.failures[i].replica);
      num(w, "at_s", r->sc.failures[i].at_s);
      jw_end(w);
    }
    jw_end(w);
  }
  jw_end(w); /* workload */
  jw_end(c); /* configuration */
}

static void steps_section(jw *o, const run_result *r) {
  const metrics_rec *m = &r->m;
  const metrics_summary *s = &r->sum;
  jw_obj(o, "steps");
  u64(o, "steps", m->n_steps);
  num(o, "mean_step_ms", s->mean_step_ms);
  num(o, "median_step_ms", s->median_step_ms);
  num(o, "p99_step_ms", s->p99_step_ms);
  if (s->itl_from_histogram || s->steps_from_histogram) { /* only then: outputs of ordinary runs stay as they were */
    jw_obj(o, "percentiles_from_histogram");
    jw_bool(o, "itl", s->itl_from_histogram);
    jw_bool(o, "step_times", s->steps_from_histogram);
    num(o, "relative_error_bound", HDR_REL_ERR);
    jw_end(o);
  }
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
  jw_obj(o, "time_by_op_s");
  for (int i = 0; i < OP_COUNT; i++)
    if (i != OP_SPEC_DRAFT || m->op_ns[i] > 0) num(o, cost_op_name((cost_op)i), m->op_ns[i] / 1e9);
  jw_end(o);
  jw_obj(o, "time_by_bound_s");
  for (int i = 0; i < BOUND_COUNT; i++) num(o, cost_bound_name((cost_bound)i), m->bound_ns[i] / 1e9);
  jw_end(o);
  jw_end(o);
}

/* Speculative decoding as vLLM's metrics count it (v1/spec_decode/metrics.py: drafts, draft tokens, accepted
 * tokens, per position; the mean acceptance length is 1 + accepted / drafts), beside what the run drew from. */
static void spec_section(jw *o, const run_result *r) {
  const deploy_cfg *d = &r->deploy;
  uint32_t k = d->num_speculative_tokens;
  jw_obj(o, "speculative_decoding");
  str(o, "method", spec_method_name(d->spec_method));
  u64(o, "num_speculative_tokens", k);
  str(o, "acceptance_source", d->spec_source);
  jw_arr(o, "acceptance_rates");
  for (uint32_t i = 0; i < k && i < SPEC_MAX_K; i++) jw_num(o, NULL, d->spec_rates[i]);
  jw_end(o);
  num(o, "expected_tokens_per_step", specdec_expected_tokens(d->spec_rates, k));
  u64(o, "drafts", r->spec_drafts);
  u64(o, "draft_tokens", r->spec_draft_tokens);
  u64(o, "accepted_tokens", r->spec_accepted);
  num(o, "mean_acceptance_length", r->spec_drafts ? 1.0 + (double)r->spec_accepted / (double)r->spec_drafts : 0);
  jw_arr(o, "accepted_per_position");
  for (uint32_t i = 0; i < k && i < SPEC_MAX_K; i++) jw_u64(o, NULL, r->spec_accepted_pos[i]);
  jw_end(o);
  jw_end(o);
}

static void cost_sources(jw *o, const run_result *r) {
  jw_obj(o, "cost_sources");
  str(o, "summary", r->cost_source);
  jw_obj(o, "per_op");
  for (int i = 0; i < OP_COUNT; i++) {
    if (i == OP_CPU_OVERHEAD || i == OP_LAUNCH || i == OP_ALLREDUCE || i == OP_ELEMENTWISE) continue;
    if (i == OP_SPEC_DRAFT && !r->src_count[i][0] && !r->src_count[i][1] && !r->src_count[i][2]) continue;
    uint64_t best = 0;
    int bs = -1;
    for (int k = 0; k < SRC_COUNT; k++)
      if (r->src_count[i][k] > best) best = r->src_count[i][k], bs = k;
    jw_obj(o, cost_op_name((cost_op)i));
    str(o, "source", bs < 0 ? "unused" : cost_src_name((cost_src)bs));
    for (int k = 0; k < SRC_COUNT; k++) u64(o, cost_src_name((cost_src)k), r->src_count[i][k]);
    jw_end(o);
  }
  jw_end(o); /* per_op */
  jw_end(o);
}

static void bottleneck_section(jw *o, const run_result *r) {
  bottleneck b = r->bn;
  jw_obj(o, "bottleneck");
  str(o, "binding_limit", limit_name(b.primary));
  str(o, "step_bound", limit_name(b.step_bound));
  str(o, "explanation", b.explain);
  jw_obj(o, "step_time_share");
  for (int i = 0; i < BOUND_COUNT; i++) num(o, cost_bound_name((cost_bound)i), b.share[i]);
  jw_end(o);
  num(o, "gpu_busy_fraction", b.utilization);
  num(o, "queueing_share_of_ttft", b.queue_share);
  num(o, "kv_usage_peak", b.kv_peak);
  num(o, "kv_full_time_fraction", b.kv_full_time);
  jw_end(o);
}

int report_json(const run_result *r, FILE *f, sim_err *err) { return report_json_cmp(r, NULL, NULL, f, err); }

/* Both runs' key numbers and the recovery (whatif.h). */
static void comparison(jw *o, const run_result *base, const run_result *wi, const whatif_compare *c) {
  jw_obj(o, "baseline_comparison");
  str(o, "baseline_is", c->baseline_is);
  const run_result *runs[2] = {base, wi};
  const char *names[2] = {"baseline", "what_if"};
  for (int k = 0; k < 2; k++) {
    const metrics_summary *s = &runs[k]->sum;
    jw *e = o;
    jw_obj(e, names[k]);
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
    jw_end(e);
  }
  if (c->has_loss) {
    jw *rl = o;
    jw_obj(rl, c->step_event ? "traffic_step_recovery" : "replica_loss");
    num(rl, "at_s", c->loss_at_s);
    if (isnan(c->limit_ms)) jw_null(rl, "ttft_p99_limit_ms");
    else num(rl, "ttft_p99_limit_ms", c->limit_ms);
    str(rl, "limit_from", c->limit_from_slo ? "slo" : "1.1 x baseline p99");
    jw_arr(rl, "objectives"); /* every objective the windows are judged on, its worst window */
    for (int k = 0; k < c->n_obj; k++) {
      jw_obj(rl, NULL);
      str(rl, "key", c->obj[k].key);
      num(rl, "limit_ms", c->obj[k].limit_ms);
      if (isinf(c->worst_ms[k])) str(rl, "worst_window_ms", "unanswered");
      else num(rl, "worst_window_ms", c->worst_ms[k]);
      jw_end(rl);
    }
    jw_end(rl);
    if (c->breach_obj >= 0) str(rl, "first_missed", c->obj[c->breach_obj].key);
    else jw_null(rl, "first_missed");
    num(rl, "window_s", WHATIF_WINDOW_S);
    jw_bool(rl, "breached", c->breached);
    jw_bool(rl, "recovered", c->recovered);
    if (c->recovered) num(rl, "recovery_s", c->recovery_s);
    else jw_null(rl, "recovery_s");
    if (isinf(c->worst_window_p99_ms)) str(rl, "worst_window_p99_ttft_ms", "unanswered");
    else num(rl, "worst_window_p99_ttft_ms", c->worst_window_p99_ms);
    jw_end(rl);
  }
  jw_end(o);
}

/* --engine sglang: the keys sglang.bench_serving's result JSON has that vLLM's benchmark does not (its `result`
 * dict in v0.5.9, docs/SGLANG.md section 6; `calculate_metrics` read at sgl-project/sglang 0033168f), beside
 * vLLM's, so a reader of either finds its own:
 *   tag, dataset_name, random_input_len, random_output_len, random_range_ratio, sharegpt_output_len: the
 *     arguments (generated: "random" and the generator's lengths; a trace: its path, the lengths null);
 *   total_input_text_tokens (all of the input), total_input_vision_tokens (0: text prompts only);
 *   total_output_tokens_retokenized: the generated text re-encoded; a simulation's tokens are exact, so it
 *     equals total_output_tokens;
 *   input_throughput: total input tokens / duration; total_throughput: vLLM's total_token_throughput;
 *   mean/median/std/p90/p99_e2e_latency_ms: vLLM's e2el under SGLang's name;
 *   concurrency: the sum of the completed requests' E2E latencies / duration (SGLang's mean requests in flight);
 *   accept_length: speculative decoding's mean accepted length, null without it. */
static void sglang_keys(jw *root, const run_result *r) {
  const metrics_summary *s = &r->sum;
  bool gen = !r->sc.trace_path[0];
  str(root, "dataset_name", gen ? "random" : r->sc.trace_path);
  const len_dist *in = &r->sc.gen.input, *out = &r->sc.gen.output;
  if (gen && in->kind == LEN_UNIFORM_RATIO && out->kind == LEN_UNIFORM_RATIO) {
    num(root, "random_input_len", in->len);
    num(root, "random_output_len", out->len);
    num(root, "random_range_ratio", in->range_ratio);
  } else {
    jw_null(root, "random_input_len");
    jw_null(root, "random_output_len");
    jw_null(root, "random_range_ratio");
  }
  jw_null(root, "sharegpt_output_len");
  jw_null(root, "tag");
  u64(root, "total_input_text_tokens", s->total_input_tokens);
  u64(root, "total_input_vision_tokens", 0);
  u64(root, "total_output_tokens_retokenized", s->total_output_tokens);
  num(root, "input_throughput", s->duration_s > 0 ? s->total_input_tokens / s->duration_s : 0);
  num(root, "total_throughput", s->total_token_throughput);
  num(root, "mean_e2e_latency_ms", s->e2el_ms.mean);
  num(root, "median_e2e_latency_ms", s->e2el_ms.median);
  num(root, "std_e2e_latency_ms", s->e2el_ms.std);
  num(root, "p90_e2e_latency_ms", s->e2el_ms.p90);
  num(root, "p99_e2e_latency_ms", s->e2el_ms.p99);
  num(root, "concurrency", s->duration_s > 0 ? s->e2el_ms.mean * s->e2el_ms.n / 1000.0 / s->duration_s : 0);
  if (r->spec_drafts) num(root, "accept_length", 1.0 + (double)r->spec_accepted / (double)r->spec_drafts);
  else jw_null(root, "accept_length");
}

/* "intervals": one object per headline figure, {level, lo, hi, stratum, parts} (docs/UNCERTAINTY.md). */
static void intervals_section(jw *x, const run_result *r) {
  const unc_figs *iv = &r->iv;
  jw_obj(x, "intervals");
  str(x, "stratum", iv->stratum);
  str(x, "residuals", iv->table);
  for (int k = 0; k < UF_COUNT; k++) {
    const unc_interval *it = &iv->it[k];
    jw_obj(x, unc_fig_key((unc_fig)k));
    num(x, "level", iv->level);
    num(x, "point", it->point);
    if (it->have) {
      num(x, "lo", it->lo);
      num(x, "hi", it->hi);
      str(x, "stratum", it->key);
    } else {
      jw_null(x, "lo");
      jw_null(x, "hi");
      jw_null(x, "stratum");
    }
    jw_obj(x, "parts");
    jw_obj(x, "model");
    if (it->have) {
      u64(x, "residuals", it->n_model);
      num(x, "lo_factor", it->model_lo);
      num(x, "hi_factor", it->model_hi);
    } else {
      str(x, "none", "no validation residuals for this figure in the stratum or the strata it merges into");
    }
    jw_end(x);
    jw_obj(x, "workload");
    u64(x, "runs", iv->n_values);
    if (iv->fixed_trace) str(x, "none", "a fixed trace: no seeds to vary");
    else if (iv->large) str(x, "none", "more requests than the extra seeds are run for (runner/intervals.h)");
    else if (iv->seedless) str(x, "none", "another seed generates the same requests (runner/intervals.c)");
    num(x, "sd_ln", it->workload_sd);
    jw_end(x);
    jw_end(x);
    jw_end(x);
  }
  jw_end(x);
}

/* --mode disagg: memory_plan is the prefill pool's; the decode pool's and the KV transfers */
static void disagg_section(jw *x, const run_result *r) {
  memplan_write_json(x, "decode_memory_plan", &r->plan_dec);
  jw *t = x;
  jw_obj(t, "kv_transfer");
  str(t, "link", r->xfer_nvlink ? "nvlink" : "network");
  u64(t, "transfers", r->xfer_count);
  u64(t, "bytes", r->xfer_bytes);
  if (r->deploy.max_local_prefill_length) u64(t, "local_prefills", r->local_prefills);
  num(t, "mean_ms", r->xfer_ms_mean);
  num(t, "max_ms", r->xfer_ms_max);
  jw_end(t);
}

int report_json_cmp(const run_result *r, const run_result *baseline, const whatif_compare *cmp, FILE *f, sim_err *err) {
  const metrics_summary *s = &r->sum;
  jw jj, *root = &jj;
  jw_begin(root, f);
  str(root, "backend", "servesim");
  str(root, "model_id", r->model.name);
  u64(root, "num_prompts", r->tr.n);
  if (!r->sc.trace_path[0]) {
    if (isinf(r->sc.gen.request_rate)) str(root, "request_rate", "inf");
    else num(root, "request_rate", r->sc.gen.request_rate);
    num(root, "burstiness", r->sc.gen.burstiness);
  } else {
    num(root, "request_rate", r->tr_stats.rate_per_s);
    jw_null(root, "burstiness");
  }
  if (r->sc.max_concurrency) u64(root, "max_concurrency", r->sc.max_concurrency);
  else jw_null(root, "max_concurrency");
  num(root, "duration", s->duration_s);
  u64(root, "completed", s->completed);
  u64(root, "total_input_tokens", s->total_input_tokens);
  u64(root, "total_output_tokens", s->total_output_tokens);
  num(root, "request_throughput", s->request_throughput);
  if (s->has_goodput) num(root, "request_goodput", s->request_goodput);
  else jw_null(root, "request_goodput");
  num(root, "output_throughput", s->output_throughput);
  num(root, "total_token_throughput", s->total_token_throughput);
  dist(root, "ttft", &s->ttft_ms);
  dist(root, "tpot", &s->tpot_ms);
  dist(root, "itl", &s->itl_ms);
  dist(root, "e2el", &s->e2el_ms);
  if (engver_is_sglang(&r->engine)) sglang_keys(root, r);

  jw *x = root, *cnt = root;
  jw_obj(x, "servesim");
  str(x, "version", SERVESIM_VERSION);
  jw_bool(x, "interrupted", r->interrupted);
  jw_obj(cnt, "requests");
  u64(cnt, "total", s->total);
  u64(cnt, "completed", s->completed);
  u64(cnt, "rejected", s->rejected);
  u64(cnt, "unfinished", s->unfinished);
  jw_obj(cnt, "rejected_by_reason");
  for (int k = 1; k <= REJ_UNFINISHED; k++)
    if (s->rejected_by_reason[k]) u64(cnt, rq_reject_name((rq_reject)k), s->rejected_by_reason[k]);
  jw_end(cnt);
  u64(cnt, "trace_failure_rows_skipped", r->tr.n_failed_rows);
  jw_end(cnt); /* requests */
  if (s->has_goodput) {
    jw *g = x;
    jw_obj(g, "goodput_slo_ms");
    if (r->sc.goodput.ttft_ms >= 0) num(g, "ttft", r->sc.goodput.ttft_ms);
    if (r->sc.goodput.tpot_ms >= 0) num(g, "tpot", r->sc.goodput.tpot_ms);
    if (r->sc.goodput.e2el_ms >= 0) num(g, "e2el", r->sc.goodput.e2el_ms);
    u64(g, "good_requests", s->good_requests);
    jw_end(g);
  }
  jw *q = x;
  jw_obj(q, "queueing");
  dist(q, "queue", &s->queue_ms);
  dist(q, "frontend", &s->frontend_ms);            /* TTFT = frontend + queue + prefill_to_first_token */
  dist(q, "prefill_to_first_token", &s->prefill_ms);
  num(q, "mean_requests_in_system", s->mean_in_system);
  num(q, "mean_requests_waiting", s->mean_waiting);
  u64(q, "peak_requests_in_system", s->peak_in_system);
  jw_end(q);
  config_echo(x, r);
  memplan_write_json(x, "memory_plan", &r->plan);
  if (r->deploy.disagg) disagg_section(x, r);
  if (r->spec_drafts || r->deploy.num_speculative_tokens) spec_section(x, r);
  steps_section(x, r);
  cost_sources(x, r);
  if (r->iv.on) intervals_section(x, r);
  bottleneck_section(x, r);
  if (baseline && cmp) comparison(x, baseline, r, cmp);
  report_scale_json(r, x);
  whatif_report wr = r->whatif;
  if (wr.count) {
    jw_arr(x, "what_if");
    for (uint32_t i = 0; i < wr.count; i++) {
      jw_obj(x, NULL);
      str(x, "event", wr.n[i].event);
      str(x, "exercised", wr.n[i].exercised ? "yes" : wr.n[i].partly ? "partly" : "no");
      str(x, "detail", wr.n[i].text);
      num(x, "last_arrival_s", wr.last_arrival_s);
      jw_end(x);
    }
    jw_end(x);
  }
  jw_end(x); /* servesim */
  return jw_finish(root, err);
}
