/* test_engine.c: the whole simulation against analysis:
 *  - one request at a time: TTFT is the cost model's prefill step, TPOT the
 *    mean of its batch-1 decode steps;
 *  - throughput rises with the offered rate and saturates;
 *  - Little's law on the simulated system and queue (also with an engine
 *    frontend latency, which is in the system and not in the queue);
 *  - conservation on the Azure 2023 conversation trace (when ../shared exists):
 *    every request completes or is rejected with a reason, output tokens equal
 *    the trace's;
 *  - a lost replica: its requests finish on the others. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runner/runner.h"
#include "testutil.h"

static void base(scenario *sc) {
  scenario_init(sc);
  sc->deploy.tp = 4;
}

static run_ctx *run(const scenario *sc) { return tu_run_scenario(sc); }

static void done(run_ctx *r) { tu_run_done(r); }

/* 8 requests at t=0 (engine: a path, or NULL for the default): all 8 prompts
 * (800 tokens < the 8192 budget) are prefilled in the first step together. */
static void burst_forms_one_batch(const char *engine) {
  scenario sc;
  base(&sc);
  if (engine) snprintf(sc.engine, sizeof sc.engine, "%s", engine);
  sc.gen.num_prompts = 8;
  sc.gen.request_rate = INFINITY;
  sc.gen.input.len = 100;
  sc.gen.output.len = 4;
  run_ctx *r = run(&sc);
  cr_assert_eq(r->res.m.max_batch_tokens, 800);
  for (size_t i = 1; i < r->res.n_reqs; i++) cr_assert_eq(r->res.reqs[i].first_token_ns, r->res.reqs[0].first_token_ns);
  done(r);
}

/* The timeline of one request alone on a replica, from the cost model's
 * steps (sched.h, cluster.c): step j's host work (cpu) starts when it is
 * scheduled, or when the previous step's host work ends if that one is still
 * queued; the step starts on the GPU when its host work is done and the
 * previous step has ended. With async scheduling the engine keeps two steps
 * queued: step j is scheduled when step j-2 ends (the first two at the
 * arrival); without, step j is scheduled when step j-1 ends. Returns the end
 * of each step in end_ns[0..n). */
/* How often source s served op o in run r. */
static uint64_t src_count(const run_ctx *r, cost_op o, cost_src s) {
  uint64_t n[OP_COUNT][SRC_COUNT];
  cost_src_counts(r->cost, n);
  return n[o][s];
}

static void alone_timeline(cost_model *cm, bool async, uint32_t P, uint32_t O, double *end_ns) {
  double ready_prev = 0;
  for (uint32_t j = 0; j < O; j++) {
    step_cost c;
    prefill_chunk ch = {P, 0};
    batch_desc pre = {.num_tokens = P, .num_seqs = 1, .num_sample = 1, .num_prefill = 1, .prefills = &ch};
    batch_desc dec = {.num_tokens = 1, .num_seqs = 1, .num_decode = 1, .decode_ctx_tokens = (uint64_t)P + j, .num_sample = 1};
    cost_step(cm, j ? &dec : &pre, &c);
    double sched_at = async ? (j < 2 ? 0 : end_ns[j - 2]) : (j ? end_ns[j - 1] : 0);
    double host_from = sched_at;
    if (async && j >= 1 && ready_prev > host_from) host_from = ready_prev; /* step j-1 still queued */
    double ready = host_from + ceil(c.cpu_ns);
    double start = j && end_ns[j - 1] > ready ? end_ns[j - 1] : ready;
    end_ns[j] = start + ceil(c.gpu_ns);
    ready_prev = ready;
  }
}

Test(engine, isolated_request_matches_the_cost_model) {
  const uint32_t P = 777, O = 50;
  /* requests 100 s apart: each runs alone */
  char text[4096] = "arrival_s,prompt_tokens,output_tokens\n";
  for (int i = 0; i < 5; i++) {
    char row[64];
    snprintf(row, sizeof row, "%d.0,%u,%u\n", 100 * i, P, O);
    strcat(text, row);
  }
  const char *path = tu_tmpfile(".csv", text);
  for (int async = 0; async < 2; async++) {
    scenario sc;
    base(&sc);
    snprintf(sc.trace_path, sizeof sc.trace_path, "%s", path);
    sc.deploy.async_scheduling = (int8_t)async; /* --[no-]async-scheduling */
    run_ctx *r = run(&sc);
    cr_assert_eq(r->deploy.async_scheduling, async);
    cr_assert_eq(r->res.sum.completed, 5);
    double end_ns[64];
    alone_timeline(r->cost, async, P, O, end_ns);
    /* the engine frontend's per-request latency, then the prefill step */
    double fe = (double)llround(r->engine.frontend_latency_ns);
    double ttft_ms = (end_ns[0] + fe) / 1e6, e2el_ms = (end_ns[O - 1] + fe) / 1e6;
    double tpot_ms = (end_ns[O - 1] - end_ns[0]) / 1e6 / (O - 1);
    cr_assert_float_eq(r->res.sum.ttft_ms.mean, ttft_ms, 1e-9 * ttft_ms + 1e-9, "async %d: TTFT %f vs prefill step %f", async,
                       r->res.sum.ttft_ms.mean, ttft_ms);
    cr_assert_float_eq(r->res.sum.ttft_ms.std, 0.0, 1e-9);
    cr_assert_float_eq(r->res.sum.tpot_ms.mean, tpot_ms, 1e-9 * tpot_ms, "async %d: TPOT %f vs decode %f", async,
                       r->res.sum.tpot_ms.mean, tpot_ms);
    cr_assert_float_eq(r->res.sum.e2el_ms.mean, e2el_ms, 1e-6);
    cr_assert_eq(r->res.sum.itl_ms.n, 5 * (O - 1));
    cr_assert_eq(r->res.m.preemptions, 0);
    cr_assert_eq(r->res.m.n_steps, 5 * O, "async %d: no step past the last token (vLLM PR #27922)", async);
    done(r);
  }
  remove(path);
}

#include <cjson/cJSON.h>

/* Writes root to a temporary .json file (freed with the test's temp files) and frees root. */
static const char *json_tmpfile(cJSON *root) {
  char *out = cJSON_Print(root);
  cJSON_Delete(root);
  const char *path = tu_tmpfile(".json", out);
  free(out);
  return path;
}

/* The vLLM engine file with frontend_latency_us set to us. */
static const char *vllm_with_frontend(double us) {
  char *text = tu_slurp(tu_src("configs/engines/vllm.json"), NULL);
  cr_assert(text);
  cJSON *root = cJSON_Parse(text);
  free(text);
  cr_assert(root);
  cJSON_DeleteItemFromObjectCaseSensitive(root, "frontend_latency_us");
  cJSON_AddNumberToObject(root, "frontend_latency_us", us);
  return json_tmpfile(root);
}

/* The frontend latency delays each request on its way in: it adds exactly to
 * TTFT and E2EL, and changes nothing else (isolated requests, open loop; and a
 * burst still forms one batch, since every request of it arrives together). */
Test(engine, frontend_latency_adds_to_ttft_only) {
  char text[1024] = "arrival_s,prompt_tokens,output_tokens\n";
  for (int i = 0; i < 4; i++) {
    char row[64];
    snprintf(row, sizeof row, "%d.0,%u,%u\n", 50 * i, 500u + 100u * i, 20u);
    strcat(text, row);
  }
  const char *tpath = tu_tmpfile(".csv", text);
  run_ctx *r[2];
  const double us[2] = {0, 7250};
  for (int k = 0; k < 2; k++) {
    scenario sc;
    base(&sc);
    snprintf(sc.trace_path, sizeof sc.trace_path, "%s", tpath);
    snprintf(sc.engine, sizeof sc.engine, "%s", vllm_with_frontend(us[k]));
    r[k] = run(&sc);
    cr_assert_eq(r[k]->res.sum.completed, 4);
  }
  for (size_t i = 0; i < 4; i++) {
    const run_record *a = &r[0]->res.reqs[i], *b = &r[1]->res.reqs[i];
    cr_assert_eq(b->send_ns, a->send_ns, "sent at the same time");
    cr_assert_eq(b->first_token_ns - a->first_token_ns, 7250000, "request %zu", i);
    cr_assert_eq(b->finish_ns - a->finish_ns, 7250000, "request %zu", i);
  }
  cr_assert_float_eq(r[1]->res.sum.ttft_ms.mean - r[0]->res.sum.ttft_ms.mean, 7.25, 1e-9);
  cr_assert_float_eq(r[1]->res.sum.tpot_ms.mean, r[0]->res.sum.tpot_ms.mean, 1e-12);
  cr_assert_float_eq(r[1]->res.sum.e2el_ms.mean - r[0]->res.sum.e2el_ms.mean, 7.25, 1e-9);
  for (int k = 0; k < 2; k++) done(r[k]);
  burst_forms_one_batch(vllm_with_frontend(7250)); /* still together after the delay */
  remove(tpath);
}

Test(engine, throughput_rises_with_rate_and_saturates) {
  const double rates[] = {1, 2, 4, 8, 16, 32, 64, 128, INFINITY};
  double thr[9];
  for (int i = 0; i < 9; i++) {
    scenario sc;
    base(&sc);
    sc.deploy.tp = 8;
    sc.gen.num_prompts = 600;
    sc.gen.request_rate = rates[i];
    sc.gen.input.len = 512;
    sc.gen.output.len = 128;
    sc.gen.seed = 5;
    run_ctx *r = run(&sc);
    cr_assert_eq(r->res.sum.completed, 600);
    thr[i] = r->res.sum.output_throughput;
    done(r);
  }
  for (int i = 1; i < 9; i++)
    cr_assert_geq(thr[i], thr[i - 1] * 0.98, "throughput fell from rate %g to %g: %f -> %f", rates[i - 1], rates[i],
                  thr[i - 1], thr[i]);
  cr_assert_gt(thr[4], 2.0 * thr[0], "throughput must rise well above the light-load value");
  cr_assert_lt(thr[8], 1.15 * thr[7], "and saturate: inf %f vs 128/s %f", thr[8], thr[7]);
}

/* engine: a path, or NULL for the default */
static void check_littles_law(const char *engine) {
  scenario sc;
  base(&sc);
  if (engine) snprintf(sc.engine, sizeof sc.engine, "%s", engine);
  sc.gen.num_prompts = 2000;
  sc.gen.request_rate = 20;
  sc.gen.input.len = 1024;
  sc.gen.input.range_ratio = 0.5;
  sc.gen.output.len = 200;
  sc.gen.output.range_ratio = 0.5;
  sc.gen.seed = 1;
  sc.deploy.max_num_seqs = 32; /* make requests queue */
  run_ctx *r = run(&sc);
  const metrics_summary *s = &r->res.sum;
  cr_assert_eq(s->completed, 2000);
  cr_assert_eq(r->res.m.preemptions, 0);
  double T = (double)r->res.m.level_t_ns / 1e9, lambda = (double)s->completed / T;
  /* L = lambda W for the whole system (sojourn = E2EL) and for the waiting queue */
  cr_assert_float_eq(s->mean_in_system, lambda * s->e2el_ms.mean / 1e3, 1e-6 * s->mean_in_system,
                     "L %f vs lambda W %f", s->mean_in_system, lambda * s->e2el_ms.mean / 1e3);
  cr_assert_gt(s->queue_ms.mean, 1.0, "the queue must be non-trivial for this test to mean something");
  cr_assert_float_eq(s->mean_waiting, lambda * s->queue_ms.mean / 1e3, 1e-6 * s->mean_waiting + 1e-9,
                     "Lq %f vs lambda Wq %f", s->mean_waiting, lambda * s->queue_ms.mean / 1e3);
  done(r);
}

Test(engine, littles_law_holds) { check_littles_law(NULL); }

/* With a frontend latency: the system (from the send) includes the transit, the
 * waiting queue (from the scheduler's queue) does not, and both laws hold. */
Test(engine, littles_law_holds_with_a_frontend_latency) { check_littles_law(vllm_with_frontend(7250)); }

Test(engine, closed_loop_keeps_concurrency) {
  scenario sc;
  base(&sc);
  sc.gen.num_prompts = 400;
  sc.gen.request_rate = INFINITY;
  sc.max_concurrency = 16;
  run_ctx *r = run(&sc);
  cr_assert_eq(r->res.sum.completed, 400);
  cr_assert_leq(r->res.m.peak_in_system, 16);
  cr_assert_eq(r->res.m.peak_in_system, 16);
  /* a client-held request's TTFT counts from slot acquisition: never includes client wait */
  for (size_t i = 0; i < r->res.n_reqs; i++) cr_assert_geq(r->res.reqs[i].send_ns, r->res.reqs[i].arrival_ns);
  done(r);
}

Test(engine, lost_replica_requests_finish_elsewhere) {
  scenario sc;
  base(&sc);
  sc.deploy.replicas = 3;
  sc.deploy.router = ROUTE_LEAST_OUTSTANDING;
  sc.gen.num_prompts = 900;
  sc.gen.request_rate = 30;
  sc.n_failures = 1;
  sc.failures[0].replica = 1;
  sc.failures[0].at_s = 10;
  run_ctx *r = run(&sc);
  cr_assert_eq(r->res.sum.completed, 900);
  uint64_t late_on_1 = 0;
  for (size_t i = 0; i < r->res.n_reqs; i++)
    if (r->res.reqs[i].finish_ns > 10 * SIM_NS_PER_S && r->res.reqs[i].replica == 1) late_on_1++;
  cr_assert_eq(late_on_1, 0, "nothing finishes on the lost replica after it is lost");
  done(r);
}

Test(engine, azure_conversation_trace_conserves_requests_and_tokens) {
  const char *p = tu_shared("traces/azure2023_conv.csv");
  if (!p) cr_skip_test("../shared/traces is absent");
  /* the trace's total output tokens, counted independently of servesim's reader */
  FILE *f = fopen(p, "r");
  char line[256];
  uint64_t rows = 0, out_total = 0;
  cr_assert(fgets(line, sizeof line, f));
  while (fgets(line, sizeof line, f)) {
    char *c = strrchr(line, ',');
    if (!c) continue;
    out_total += strtoull(c + 1, NULL, 10);
    rows++;
  }
  fclose(f);
  scenario sc;
  base(&sc);
  snprintf(sc.trace_path, sizeof sc.trace_path, "%s", p);
  run_ctx *r = run(&sc);
  const metrics_summary *s = &r->res.sum;
  cr_assert_eq(rows, 19366);
  cr_assert_eq(s->total, rows);
  cr_assert_eq(s->completed + s->rejected, rows, "every request completes or is rejected with a reason");
  cr_assert_eq(s->unfinished, 0);
  uint64_t rej_out = 0;
  for (size_t i = 0; i < r->res.n_reqs; i++) {
    const run_record *q = &r->res.reqs[i];
    if (q->outcome == REQ_REJECTED) {
      cr_assert_neq(q->reject, REJ_NONE);
      rej_out += q->output_tokens;
    } else {
      cr_assert_eq(q->generated, q->output_tokens);
    }
  }
  cr_assert_eq(s->total_output_tokens + rej_out, out_total, "output tokens conserved");
  done(r);
}

Test(engine, simultaneous_arrivals_form_one_batch) { burst_forms_one_batch(NULL); }

/* A measured table for the exact QKV shape of Llama-3.1-70B at TP4 serves that
 * operation (source "profile"), and the same profile serves another GPU type
 * scaled by datasheet ratios ("profile_scaled"); other ops stay on the roofline. */

static const char *qkv_profile(void) {
  char *text = tu_slurp(tu_src("tests/data/profiles/synthetic.json"), NULL);
  cr_assert(text);
  cJSON *root = cJSON_Parse(text);
  free(text);
  cJSON *g0 = cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(root, "gemm"), 0);
  /* QKV at TP4: N = (64/4 + 2 * 8/4) * 128 = 2560, K = 8192 */
  cJSON_ReplaceItemInObjectCaseSensitive(g0, "n", cJSON_CreateNumber(2560));
  cJSON_ReplaceItemInObjectCaseSensitive(g0, "k", cJSON_CreateNumber(8192));
  return json_tmpfile(root);
}

Test(engine, measured_profile_serves_matching_ops) {
  const char *path = qkv_profile();
  scenario sc;
  base(&sc);
  sc.gen.num_prompts = 50;
  sc.gen.request_rate = 5;
  snprintf(sc.profile, sizeof sc.profile, "%s", path);
  run_ctx *r = run(&sc);
  cr_assert_gt(src_count(r, OP_GEMM_QKV, SRC_PROFILE), 0);
  cr_assert_eq(src_count(r, OP_GEMM_QKV, SRC_ROOFLINE), 0);
  cr_assert_eq(src_count(r, OP_GEMM_O, SRC_PROFILE), 0, "no table for O: roofline");
  cr_assert(strstr(r->prof.source, "measured profile"));
  double ttft_prof = r->res.sum.ttft_ms.mean;
  done(r);
  snprintf(sc.profile, sizeof sc.profile, "none");
  r = run(&sc);
  cr_assert_neq(r->res.sum.ttft_ms.mean, ttft_prof, "the profile must change the prediction");
  done(r);
  /* another GPU type: the h200 profile is scaled */
  snprintf(sc.profile, sizeof sc.profile, "%s", path);
  snprintf(sc.gpu, sizeof sc.gpu, "h100-sxm");
  r = run(&sc);
  cr_assert_gt(src_count(r, OP_GEMM_QKV, SRC_PROFILE_SCALED), 0);
  cr_assert(strstr(r->prof.source, "scaled to h100-sxm"));
  done(r);
  remove(path);
}

Test(engine, profile_of_an_unknown_gpu_is_a_clear_error) {
  char *text = tu_slurp(tu_src("tests/data/profiles/synthetic.json"), NULL);
  char *g = strstr(text, "\"gpu\": \"h200\"");
  cr_assert(g);
  memcpy(g, "\"gpu\": \"zz99\"", 13);
  const char *path = tu_tmpfile(".json", text);
  free(text);
  scenario sc;
  base(&sc);
  sc.gen.num_prompts = 5;
  snprintf(sc.profile, sizeof sc.profile, "%s", path);
  run_ctx *r = calloc(1, sizeof *r);
  sim_err err = {0, ""};
  cr_assert_eq(runner_prepare(r, &sc, &err), SIM_EINPUT);
  cr_assert(strstr(err.msg, "zz99") && strstr(err.msg, path), "%s", err.msg);
  runner_free(r);
  free(r);
  remove(path);
}

/* Every replica lost while the client holds requests for lack of slots: the
 * held requests are sent as slots free and rejected (no replica left), so the
 * run closes every request and ends on its own. The time limit only guards
 * against the hang this once was (samples re-armed forever while the client
 * queue never drained). */
Test(engine, all_replicas_lost_with_a_client_queue_rejects_the_rest) {
  for (int when = 0; when < 2; when++) {
    scenario sc;
    base(&sc);
    sc.deploy.replicas = 2;
    sc.gen.num_prompts = 40;
    sc.gen.request_rate = INFINITY;
    sc.max_concurrency = 3;
    sc.sample_interval_s = 1;
    sc.time_limit_s = 10000;
    sc.n_failures = 2;
    sc.failures[0].replica = 0;
    sc.failures[1].replica = 1;
    sc.failures[0].at_s = sc.failures[1].at_s = when ? 5.0 : 0.0;
    run_ctx *r = run(&sc);
    const metrics_summary *s = &r->res.sum;
    cr_assert(r->res.complete, "the run closes every request (t_fail=%d)", when);
    cr_assert_eq(s->unfinished, 0, "t_fail=%d", when);
    cr_assert_eq(s->completed + s->rejected, 40);
    cr_assert_eq(s->rejected, s->rejected_by_reason[REJ_NO_REPLICA]);
    cr_assert_eq(r->res.in_flight, 0);
    if (when) cr_assert_gt(s->completed, 0, "some finish before the loss");
    cr_assert_lt(r->res.m.n_ts, 100, "no samples long after the last request closed");
    done(r);
  }
}

/* runner_prepare failing at each stage (configs, memory plan, workload,
 * profile, cluster) leaves a run_ctx that runner_free releases, twice even
 * (ASan/LSan builds check the frees). */
Test(engine, runner_free_is_safe_after_a_failure_at_any_stage) {
  for (int stage = 0; stage < 6; stage++) {
    scenario sc;
    base(&sc);
    sc.gen.num_prompts = 5;
    switch (stage) {
      case 0: snprintf(sc.model, sizeof sc.model, "no-such-model"); break;
      case 1: sc.deploy.tp = 1; sc.deploy.max_model_len = 131072; break; /* 70B bf16 on one H200: refused */
      case 2: snprintf(sc.trace_path, sizeof sc.trace_path, "/nonexistent/trace.csv"); break;
      case 3: snprintf(sc.profile, sizeof sc.profile, "/nonexistent/profile.json"); break;
      case 4: sc.n_failures = 1, sc.failures[0].replica = 7, sc.failures[0].at_s = 1; break;
      case 5: sc.window_start_s = 1e6; break; /* empty workload */
    }
    run_ctx *r = calloc(1, sizeof *r);
    sim_err err = {0, ""};
    int rc = runner_prepare(r, &sc, &err);
    cr_assert_neq(rc, SIM_OK, "stage %d must fail", stage);
    cr_assert(err.msg[0], "stage %d: a message", stage);
    cr_assert(!r->prepared);
    runner_free(r);
    runner_free(r);
    free(r);
  }
}

/* Times beyond what virtual nanoseconds can hold saturate: a replica lost
 * "at 1e20 s" is lost after the run, not at t = 0 (the double-to-integer
 * conversion once wrapped to 0), and a time limit of 1e12 s is no limit. */
Test(engine, far_future_failure_and_time_limit_saturate) {
  scenario sc;
  base(&sc);
  sc.gen.num_prompts = 20;
  sc.gen.request_rate = 10;
  sc.n_failures = 1;
  sc.failures[0].replica = 0;
  sc.failures[0].at_s = 1e20;
  sc.time_limit_s = 1e12;
  run_ctx *r = run(&sc);
  cr_assert_eq(r->res.sum.completed, 20, "completed %zu, rejected %zu", r->res.sum.completed, r->res.sum.rejected);
  cr_assert_gt(r->res.failure_at_ns[0], 1000 * SIM_NS_PER_S);
  cr_assert_gt(r->res.time_limit_ns, 1000 * SIM_NS_PER_S);
  done(r);
  cr_assert_eq(sim_s_to_ns(1.5), 1500000000ull);
  cr_assert_eq(sim_s_to_ns(-1), 0);
  cr_assert_lt(sim_s_to_ns(1e30), SIM_NS_INF);
  cr_assert_geq(sim_s_to_ns(1e30), sim_s_to_ns(1e10));
}

/* The preemption storm of issue [scheduler]: six 24,000-token prompts (1,000
 * output tokens each) at t=0 on Llama-3.1-70B TP4 H200 with
 * gpu_memory_utilization 0.32 and max_model_len 32768 (a pool of ~108k
 * tokens). vLLM keeps the hashes of a preempted request's blocks, so it finds
 * them again when it resumes (and >= 0.19 admits a prompt only when all of it
 * fits): at most a handful of preemptions, and decoding at the pace of a
 * small batch (median TPOT under 40 ms), not the 472 preemptions and 278 ms
 * of a scheduler that recomputes from scratch. */
Test(engine, long_prompts_under_memory_pressure_do_not_storm) {
  const char *engines[] = {"vllm", "vllm@0.15.1"}; /* with and without full-ISL admission */
  for (int i = 0; i < 2; i++) {
    scenario sc;
    base(&sc);
    snprintf(sc.engine, sizeof sc.engine, "%s", engines[i]);
    snprintf(sc.gpu, sizeof sc.gpu, "h200");
    sc.deploy.gpu_memory_utilization = 0.32;
    sc.deploy.max_model_len = 32768;
    sc.gen.num_prompts = 6;
    sc.gen.request_rate = INFINITY;
    sc.gen.input.len = 24000;
    sc.gen.output.len = 1000;
    run_ctx *r = run(&sc);
    cr_assert_lt(r->plan.kv_tokens, 6 * 25000, "%s: the pool cannot hold all six", engines[i]);
    cr_assert_eq(r->res.sum.completed, 6);
    cr_assert_leq(r->res.m.preemptions, 5, "%s: %llu preemptions", engines[i],
                  (unsigned long long)r->res.m.preemptions);
    cr_assert_lt(r->res.sum.tpot_ms.median, 40.0, "%s: median TPOT %.1f ms", engines[i], r->res.sum.tpot_ms.median);
    done(r);
  }
}

/* Eight requests at t=0 sharing a 2,048-token prefix (and 100 tokens of their
 * own) are prefilled in one step that computes the prefix once: their p99
 * TTFT stays under 1.6x the TTFT of one such request alone. */
Test(engine, a_burst_sharing_a_prefix_computes_it_once) {
  double ttft[2];
  for (int burst = 0; burst < 2; burst++) {
    char text[2048] = "# hash_block_tokens=512\narrival_s,prompt_tokens,output_tokens,session_id,hash_ids\n";
    for (int i = 0; i < (burst ? 8 : 1); i++) {
      char row[128];
      snprintf(row, sizeof row, "0,2148,100,,1|2|3|4|%d\n", 100 + i);
      strcat(text, row);
    }
    const char *path = tu_tmpfile(".csv", text);
    scenario sc;
    base(&sc);
    snprintf(sc.trace_path, sizeof sc.trace_path, "%s", path);
    run_ctx *r = run(&sc);
    cr_assert_eq(r->res.sum.completed, burst ? 8 : 1);
    ttft[burst] = r->res.sum.ttft_ms.p99;
    done(r);
    remove(path);
  }
  cr_assert_lt(ttft[1], 1.6 * ttft[0], "p99 TTFT %.1f ms vs alone %.1f ms", ttft[1], ttft[0]);
}
