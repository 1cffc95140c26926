/* report_text.c: the human summary of a run. */
#include <math.h>
#include <string.h>

#include "config/specdec.h"
#include "report/report.h"
#include "runner/whatif.h"

static void line(FILE *f, const char *label, const char *fmt, double v) {
  char buf[64];
  snprintf(buf, sizeof buf, fmt, v);
  fprintf(f, "%-40s %s\n", label, buf);
}

/* Why requests were rejected, one indented line a reason (the JSON's rejected_by_reason, in words). */
static void rejected_why(FILE *f, const metrics_summary *s) {
  static const char *why[] = {
      [REJ_TOO_LONG] = "prompt + output over max_model_len:",
      [REJ_KV_TOO_SMALL] = "larger than the whole KV cache:",
      [REJ_NO_REPLICA] = "no replica left (every one lost):",
  };
  for (size_t k = 1; k < SIM_ARRAY_LEN(why); k++)
    if (s->rejected_by_reason[k] && why[k]) fprintf(f, "  %-38s %zu\n", why[k], s->rejected_by_reason[k]);
}

/* "  [80%: lo - hi]" after a headline figure when the run has intervals ("  [80%: no validation data]" where the
 * residual file has none for it), else "". */
static const char *iv_suffix(const run_result *r, int fig, char *buf, size_t n) {
  buf[0] = 0;
  if (!r || !r->iv.on || fig < 0) return buf;
  const unc_interval *it = &r->iv.it[fig];
  if (it->have)
    snprintf(buf, n, "  [%g%%: %.2f - %.2f]", 100 * r->iv.level, it->lo, it->hi);
  else
    snprintf(buf, n, "  [%g%%: no validation data]", 100 * r->iv.level);
  return buf;
}

/* The figure line with its interval. */
static void line_iv(FILE *f, const char *label, double v, const run_result *r, int fig) {
  char buf[64], s[96];
  snprintf(buf, sizeof buf, "%.2f", v);
  fprintf(f, "%-40s %s%s\n", label, buf, iv_suffix(r, fig, s, sizeof s));
}

/* Below the table: what the intervals rest on (docs/UNCERTAINTY.md). */
static void iv_legend(FILE *f, const run_result *r) {
  const unc_figs *iv = &r->iv;
  if (!iv->on) return;
  fprintf(f, "Intervals (%g%%): where a measured value would fall; stratum %s; model part: residuals of ", 100 * iv->level,
          iv->stratum);
  bool first = true;
  for (int k = 0; k < UF_COUNT; k++) {
    const unc_interval *it = &iv->it[k];
    if (!it->have) continue;
    bool seen = false;
    for (int j = 0; j < k && !seen; j++) seen = iv->it[j].have && !strcmp(iv->it[j].key, it->key);
    if (seen) continue;
    fprintf(f, "%s%s", first ? "" : ", ", it->key);
    first = false;
  }
  if (first) fprintf(f, "none (no validation data for this stratum)");
  fprintf(f, " (%s); workload part: ", iv->table);
  if (iv->fixed_trace) fprintf(f, "none (a fixed trace: no seeds to vary)\n");
  else if (iv->large)
    fprintf(f, "none (%zu requests: the seeds' spread of a mean is a fraction of a percent there)\n", r->sum.total);
  else if (iv->seedless)
    fprintf(f, "none (another seed generates the same requests: fixed lengths, all sent at once)\n");
  else if (iv->n_values > 1)
    fprintf(f, "the run and %u more seeds (ln spread of mean TTFT %.2f%%, mean TPOT %.2f%%)\n", iv->n_values - 1,
            100 * iv->it[UF_TTFT_MEAN].workload_sd, 100 * iv->it[UF_TPOT_MEAN].workload_sd);
  else fprintf(f, "none (--interval-seeds 0)\n");
}

static void dist_block_iv(FILE *f, const char *title, const char *abbr, const dist_stats *d, const run_result *r,
                          int fig_mean, int fig_p99) {
  char head[64], l[64];
  snprintf(head, sizeof head, "%s", title);
  int pad = (50 - (int)strlen(head)) / 2;
  fprintf(f, "%.*s%s%.*s\n", pad, "--------------------------------------------------", head,
          50 - pad - (int)strlen(head), "--------------------------------------------------");
  snprintf(l, sizeof l, "Mean %s (ms):", abbr);
  line_iv(f, l, d->mean, r, fig_mean);
  snprintf(l, sizeof l, "Median %s (ms):", abbr);
  line(f, l, "%.2f", d->median);
  snprintf(l, sizeof l, "P90 %s (ms):", abbr);
  line(f, l, "%.2f", d->p90);
  snprintf(l, sizeof l, "P99 %s (ms):", abbr);
  line_iv(f, l, d->p99, r, fig_p99);
}

static void dist_block(FILE *f, const char *title, const char *abbr, const dist_stats *d) {
  dist_block_iv(f, title, abbr, d, NULL, -1, -1);
}

/* Below the benchmark table: how exact its percentiles are, then the three terms that add up to each
 * request's TTFT (metrics.h; docs/USAGE.md, "TTFT, term by term"). */
static void after_table(FILE *f, const metrics_summary *s) {
  if (s->itl_from_histogram || s->steps_from_histogram)
    fprintf(f, "Percentiles of %s from a histogram (the run outgrew exact records): within %.3f%% of the exact "
               "values; counts, means, std, min and max exact\n",
            s->itl_from_histogram && s->steps_from_histogram ? "ITL and step times"
            : s->itl_from_histogram                          ? "ITL"
                                                             : "step times",
            100 * HDR_REL_ERR);
  if (!s->completed) return;
  fprintf(f, "TTFT term by term (mean / p99, ms): frontend %.2f / %.2f, queue %.2f / %.2f, prefill to first token "
             "%.2f / %.2f\n",
          s->frontend_ms.mean, s->frontend_ms.p99, s->queue_ms.mean, s->queue_ms.p99, s->prefill_ms.mean,
          s->prefill_ms.p99);
}

/* The mixture-of-experts line of the header and, for Nemotron-3's ungated experts, where their time came from. */
static void moe_lines(FILE *f, const run_result *r, const deploy_cfg *d) {
  if (r->model.experts)
    fprintf(f, "  mixture of experts: %u routed experts, top-%u, in %u of %u layers%s; routing %s (--moe-routing)\n",
            r->model.experts, r->model.experts_per_tok, r->model.moe_layers, r->model.layers,
            r->model.shared_inter ? ", with shared experts" : "", moe_routing_name(d->moe_routing));
  if (r->model.experts && r->model.moe_ungated) { /* Nemotron-3: where the routed experts' time came from */
    uint64_t tab = r->src_count[OP_MOE][SRC_PROFILE] + r->src_count[OP_MOE][SRC_PROFILE_SCALED];
    uint64_t all = tab + r->src_count[OP_MOE][SRC_ROOFLINE];
    fprintf(f, "  ungated relu2 experts (up, down: 2 matrices each)");
    if (r->model.moe_latent) fprintf(f, " at moe_latent_size %u between two latent projections", r->model.moe_latent);
    fprintf(f, ": routed experts from measured non-gated fused-MoE tables in %.0f%% of the MoE costings, else first "
               "principles (the roofline of 2 matrices per expert reached)\n",
            all ? 100.0 * (double)tab / (double)all : 0.0);
  }
}

/* Speculative decoding: the method, k, the mean acceptance length drawn beside the expected one, the source. */
static void spec_line(FILE *f, const run_result *r) {
  const deploy_cfg *dc = &r->deploy;
  if (!dc->num_speculative_tokens || dc->spec_method == SPEC_NONE) return;
  fprintf(f, "Speculative decoding: %s, %u draft tokens; mean acceptance length %.2f (expected %.2f), %llu drafts; "
             "acceptance: %s\n",
          spec_method_name(dc->spec_method), dc->num_speculative_tokens,
          r->spec_drafts ? 1.0 + (double)r->spec_accepted / (double)r->spec_drafts : 0.0,
          specdec_expected_tokens(dc->spec_rates, dc->num_speculative_tokens), (unsigned long long)r->spec_drafts,
          dc->spec_source);
}

void report_text(const run_result *r, double wall_s, bool verbose, FILE *f) {
  const metrics_summary *s = &r->sum;
  const deploy_cfg *d = &r->deploy;
  const mem_plan *p = &r->plan;
  const double gib = 1024.0 * 1024.0 * 1024.0;
  char layout[96];
  deploy_layout_text(d, layout, sizeof layout);
  fprintf(f, "servesim %s: %s on %u x %s (%s x %u replica%s), %s%s%s engine\n", SERVESIM_VERSION, r->model.name,
          deploy_gpus_total(d), r->gpu.name, layout, d->replicas, d->replicas == 1 ? "" : "s", r->engine.name,
          r->engine.version[0] ? " " : "", r->engine.version);
  fprintf(f, "  weights %s%s, KV cache %s, max_num_seqs %u, max_num_batched_tokens %u, prefix caching %s, async scheduling %s\n",
          dtype_name(d->weight_dtype),
          deploy_fp8_weight_only(d, &r->gpu) ? " (weight-only: no fp8 tensor cores; vLLM's FP8 Marlin)" : "",
          dtype_name(d->kv_dtype), d->max_num_seqs, d->max_num_batched_tokens,
          d->enable_prefix_caching ? "on" : "off", d->async_scheduling ? "on" : "off");
  fprintf(f, "  memory per GPU: weights %.1f GiB, activations %.1f GiB, other %.1f GiB, KV cache %.1f GiB "
             "= %llu tokens (%u blocks of %u)\n",
          p->weights_bytes / gib, p->activation_bytes / gib, (p->cuda_graph_bytes + p->runtime_bytes) / gib,
          p->kv_bytes / gib, (unsigned long long)p->kv_tokens, p->kv_blocks, p->block_tokens);
  if (d->disagg) /* the header's layout is the deployment's default; the pools run their own */
    fprintf(f, "  disaggregated %uP%uD: prefill %u x TP%u x DP%u (max_num_seqs %u, max_num_batched_tokens %u; memory "
               "above), decode %u x TP%u x DP%u (max_num_seqs %u, KV cache %.1f GiB per GPU = %llu tokens) = %u GPUs; "
               "KV over %s: %llu transfers, %.1f GiB, mean %.3f ms, max %.3f ms\n",
            d->prefill_workers, d->decode_workers, d->prefill_workers, d->prefill_tp, d->prefill_dp,
            d->prefill_max_num_seqs, d->prefill_max_num_batched_tokens, d->decode_workers, d->decode_tp, d->decode_dp,
            d->decode_max_num_seqs,
            r->plan_dec.kv_bytes / gib, (unsigned long long)r->plan_dec.kv_tokens,
            deploy_gpus_total(d), r->xfer_nvlink ? "NVLink" : "the network",
            (unsigned long long)r->xfer_count, (double)r->xfer_bytes / gib, r->xfer_ms_mean, r->xfer_ms_max);
  if (d->disagg && d->max_local_prefill_length)
    fprintf(f, "  conditional disaggregation: %llu of %zu requests prefilled on their decode worker (at most %u "
               "uncached prompt tokens%s), no KV transfer\n",
            (unsigned long long)r->local_prefills, r->n_reqs, d->max_local_prefill_length,
            strcmp(r->engine.name, "trtllm") ? "" : " and a prefix hit");
  moe_lines(f, r, d);
  if (p->pp > 1) {
    fprintf(f, "  pipeline: %u stages of", p->pp);
    for (uint32_t k = 0; k < p->pp; k++) fprintf(f, "%s %u", k ? "," : "", p->stage_layers[k]);
    fprintf(f, " layers; the memory above is stage %u's, whose pool is the smallest\n", p->binding_stage);
  }
  fprintf(f, "  workload: %s: %zu requests over %.1f s (%.2f req/s), prompt mean %.0f, output mean %.0f tokens%s\n",
          r->tr.source, r->tr.n, r->tr_stats.span_s, r->tr_stats.rate_per_s, r->tr_stats.prompt_mean,
          r->tr_stats.output_mean, r->sc.max_concurrency ? ", closed loop" : "");
  if (r->sc.max_concurrency) fprintf(f, "  client: max concurrency %u\n", r->sc.max_concurrency);
  if (r->sc.max_concurrency && r->tr.n > r->sc.max_concurrency && r->tr_stats.output_max == r->tr_stats.output_mean)
    fprintf(f, "  note: every request asks for exactly %.0f output tokens, so clients that start together stay\n"
               "    phase-locked (their prompts prefill together, wave after wave); real closed-loop benchmarks drift\n"
               "    apart and measure lower TTFTs. `servesim validate` reproduces published closed-loop runs with\n"
               "    output lengths spread around the requested one (--output-range-ratio; each engine's fitted\n"
               "    spread and why: docs/ACCURACY.md).\n",
            r->tr_stats.output_max);
  if (r->engine.frontend_latency_ns > 0)
    fprintf(f, "  engine frontend: %.2f ms per request from send to the scheduler's queue (HTTP, tokenization), "
               "counted in TTFT\n",
            r->engine.frontend_latency_ns / 1e6);
  fprintf(f, "  cost model: %s\n", r->cost_source);
  fprintf(f, "  CUDA graphs: %s\n", r->cost_graphs);
  if (r->interrupted) fprintf(f, "  INTERRUPTED: partial results up to the interrupt\n");
  fprintf(f, "============ Serving Benchmark Result ============\n");
  fprintf(f, "%-40s %zu\n", "Successful requests:", s->completed);
  if (s->rejected) {
    fprintf(f, "%-40s %zu\n", "Rejected requests:", s->rejected);
    rejected_why(f, s);
  }
  if (s->unfinished) fprintf(f, "%-40s %zu\n", "Unfinished requests:", s->unfinished);
  line(f, "Benchmark duration (s):", "%.2f", s->duration_s);
  fprintf(f, "%-40s %llu\n", "Total input tokens:", (unsigned long long)s->total_input_tokens);
  fprintf(f, "%-40s %llu\n", "Total generated tokens:", (unsigned long long)s->total_output_tokens);
  line(f, "Request throughput (req/s):", "%.2f", s->request_throughput);
  if (s->has_goodput) line(f, "Request goodput (req/s):", "%.2f", s->request_goodput);
  line_iv(f, "Output token throughput (tok/s):", s->output_throughput, r, UF_TPUT);
  line(f, "Total Token throughput (tok/s):", "%.2f", s->total_token_throughput);
  dist_block_iv(f, "Time to First Token", "TTFT", &s->ttft_ms, r, UF_TTFT_MEAN, UF_TTFT_P99);
  dist_block_iv(f, "Time per Output Token (excl. 1st token)", "TPOT", &s->tpot_ms, r, UF_TPOT_MEAN, UF_TPOT_P99);
  dist_block(f, "Inter-token Latency", "ITL", &s->itl_ms);
  dist_block_iv(f, "End-to-end Latency", "E2EL", &s->e2el_ms, r, UF_E2E_MEAN, UF_E2E_P99);
  fprintf(f, "==================================================\n");
  iv_legend(f, r);
  after_table(f, s);
  bottleneck b = r->bn;
  fprintf(f, "Binding limit: %s\n  %s\n", limit_name(b.primary), b.explain);
  fprintf(f, "  step time by bound: compute %.0f%%, HBM %.0f%%, interconnect %.0f%%, CPU %.0f%%; "
             "mean batch %.1f seqs / %.0f tokens, %llu steps, %llu preemptions\n",
          100 * b.share[BOUND_COMPUTE], 100 * b.share[BOUND_MEMORY], 100 * b.share[BOUND_COMM],
          100 * b.share[BOUND_CPU], s->mean_batch_seqs, s->mean_batch_tokens, (unsigned long long)s->steps,
          (unsigned long long)b.preemptions);
  spec_line(f, r);
  for (uint32_t i = 0; i < r->whatif.count; i++) fprintf(f, "What-if: %s\n", r->whatif.n[i].text);
  report_scale_text(r, f);
  if (wall_s >= 0 && !verbose) fprintf(f, "simulated in %.3f s of wall time\n", wall_s);
  else if (wall_s >= 0) /* the simulator's own counters (speed only): --verbose */
    fprintf(f,
            "simulated in %.3f s of wall time (%llu events, %.0f%% of the steps as closed-form decode runs, "
            "decode-step table %llu hits / %llu misses)\n",
            wall_s, (unsigned long long)r->events,
            s->steps ? 100.0 * (double)r->closed_form_steps / (double)s->steps : 0.0,
            (unsigned long long)r->step_table_hits, (unsigned long long)r->step_table_misses);
}
