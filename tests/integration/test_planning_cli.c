/* test_planning_cli.c: plan, sweep and capacity end to end through the
 * binary: the classic check and the refusal (exit 2), sweep output that does
 * not depend on --jobs, infeasible rows, capacity's bisection (monotone,
 * within tolerance, verified), bad specs (exit 2 naming the flag or field),
 * and reports that are well-formed XHTML (xmllint --noout, skipped when
 * xmllint is absent). Workloads are small generated ones, except one sweep
 * over the Azure conversation trace (skipped when ../shared is absent). */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "testutil.h"

static char out[1 << 20], err[1 << 16];

static const char *tmp(const char *name) {
  static char buf[8][512];
  static int k;
  char *b = buf[k++ % 8];
  snprintf(b, 512, "/tmp/servesim_plan_%d_%s", getpid(), name);
  unlink(b);
  tu_tmp_track(b);
  return b;
}

static cJSON *load_json(const char *path) {
  char *t = tu_slurp(path, NULL);
  cr_assert(t, "%s missing", path);
  cJSON *j = cJSON_Parse(t);
  free(t);
  cr_assert(j, "%s: invalid JSON", path);
  return j;
}

static double jnum(const cJSON *o, const char *k) {
  const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);
  return cJSON_IsNumber(v) ? v->valuedouble : NAN;
}

static bool have_xmllint(void) { return system("xmllint --version >/dev/null 2>&1") == 0; }

static void assert_wellformed(const char *path) {
  char cmd[700];
  snprintf(cmd, sizeof cmd, "xmllint --noout %s", path);
  cr_assert_eq(system(cmd), 0, "%s is not well-formed XML", path);
}

#define SMALL                                                                                                 \
  "--model llama-3.1-8b --max-model-len 8192 --num-prompts 120 --random-input-len 512 --random-output-len 64 " \
  "--random-range-ratio 0.5"

Test(planning_cli, help) {
  const char *cmds[] = {"plan --help", "sweep --help", "capacity --help"};
  for (size_t i = 0; i < sizeof cmds / sizeof cmds[0]; i++) {
    cr_assert_eq(tu_run_cli(cmds[i], out, sizeof out, err, sizeof err), 0, "%s: %s", cmds[i], err);
    cr_assert(strstr(out, "usage") && strstr(out, "--tp"), "%s", cmds[i]);
  }
  tu_run_cli("sweep --help", out, sizeof out, err, sizeof err);
  cr_assert(strstr(out, "--jobs") && strstr(out, "--grid") && strstr(out, "--traffic-step"), "%s", out);
  tu_run_cli("capacity --help", out, sizeof out, err, sizeof err);
  cr_assert(strstr(out, "--target-rate") && strstr(out, "--candidates") && strstr(out, "--rel-tol"), "%s", out);
  cr_assert(strstr(out, "3 no candidate meets the SLOs"), "the exit status is documented: %s", out);
}

Test(planning_cli, plan_classic_check_and_refusal) {
  int rc = tu_run_cli("plan --model llama-3.1-70b --gpu h100-sxm --tp 1 --dtype fp16", out, sizeof out, err, sizeof err);
  cr_assert_eq(rc, 2, "a 70B FP16 model on one H100 cannot start: exit %d", rc);
  cr_assert(strstr(err, "cannot start") && strstr(err, "131.4 GiB") && strstr(err, "exceed"), "%s", err);
  cr_assert(strstr(out, "141.1 GB"), "weights in GB: %s", out);
  cr_assert(strstr(out, "at least 2 GPUs"), "%s", out);
  cr_assert(strstr(out, "7.06 TB/s"), "%s", out);
  cr_assert(strstr(out, "3.35 TB/s"), "%s", out);
}

Test(planning_cli, plan_json) {
  const char *j = tmp("plan.json");
  char cmd[1024];
  snprintf(cmd, sizeof cmd, "plan --gpu h200 --tp 4 --context 4096 --prompt-len 2000 --json %s", j);
  cr_assert_eq(tu_run_cli(cmd, out, sizeof out, err, sizeof err), 0, "%s", err);
  cr_assert(strstr(out, "Largest batch at 4096 tokens"), "%s", out);
  cJSON *root = load_json(j);
  cr_assert(cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(root, "fits")));
  const cJSON *mem = cJSON_GetObjectItemCaseSensitive(root, "memory_per_gpu");
  cr_assert_float_eq(jnum(mem, "kv_bytes_per_token"), 81920, 0);
  const cJSON *b = cJSON_GetObjectItemCaseSensitive(root, "batch");
  cr_assert_eq(jnum(b, "max_batch_memory"), floor(jnum(mem, "kv_blocks") / 256));
  const cJSON *pf = cJSON_GetObjectItemCaseSensitive(root, "prefill");
  cr_assert_eq(jnum(pf, "context_tokens"), 2000);
  cJSON_Delete(root);
  /* bad flags */
  cr_assert_eq(tu_run_cli("plan --context x", out, sizeof out, err, sizeof err), 2);
  cr_assert(strstr(err, "--context"), "%s", err);
  cr_assert_eq(tu_run_cli("plan --tp 3", out, sizeof out, err, sizeof err), 2);
  unlink(j);
}

/* The bundled L40S tables were measured on a machine whose 4 GPUs all-reduce
 * at about 5 GB/s bus bandwidth, a quarter of what PCIe gives with
 * peer-to-peer: by default (--allreduce auto) plan costs the all-reduces from
 * the link and says why in the gate and the source line; --allreduce table
 * forces the measurement (slower prefill) and says that too. */
Test(planning_cli, plan_drops_a_measured_allreduce_far_below_the_link) {
  const char *j = tmp("l40s.json");
  char cmd[1024];
  const char *base = "plan --model llama-2-70b --gpu l40s --engine trtllm --tp 4 --quantization fp8 "
                     "--kv-cache-dtype fp8 --max-model-len 4096";
  snprintf(cmd, sizeof cmd, "%s --json %s", base, j);
  cr_assert_eq(tu_run_cli(cmd, out, sizeof out, err, sizeof err), 0, "%s", err);
  cr_assert(strstr(out, "the costs use the link (add --allreduce table"), "%s", out);
  cr_assert(strstr(out, "all-reduces from the l40s file's link: the measured table reaches"), "%s", out);
  cJSON *root = load_json(j);
  const cJSON *ar = cJSON_GetObjectItemCaseSensitive(root, "allreduce_full_step");
  cr_assert_str_eq(cJSON_GetObjectItemCaseSensitive(ar, "source")->valuestring, "link formula");
  cr_assert_str_eq(cJSON_GetObjectItemCaseSensitive(ar, "allreduce")->valuestring, "auto");
  cr_assert(cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(ar, "measured_table_implausible")));
  double meas = jnum(ar, "measured_bus_bandwidth_gb_s_16mib"), link = jnum(ar, "link_bus_bandwidth_gb_s_16mib");
  cr_assert(meas > 0 && meas < link / 3, "measured %g GB/s, link %g GB/s", meas, link);
  const cJSON *pf = cJSON_GetObjectItemCaseSensitive(root, "prefill");
  double auto_ms = jnum(pf, "time_ms");
  cJSON_Delete(root);
  snprintf(cmd, sizeof cmd, "%s --allreduce table --force --json %s", base, j);
  cr_assert_eq(tu_run_cli(cmd, out, sizeof out, err, sizeof err), 0, "%s", err);
  cr_assert(strstr(out, "the costs use it (--allreduce table)"), "%s", out);
  root = load_json(j);
  ar = cJSON_GetObjectItemCaseSensitive(root, "allreduce_full_step");
  cr_assert_str_eq(cJSON_GetObjectItemCaseSensitive(ar, "source")->valuestring, "measured table");
  pf = cJSON_GetObjectItemCaseSensitive(root, "prefill");
  cr_assert(jnum(pf, "time_ms") > 1.5 * auto_ms, "the slow table must lengthen the prefill: %g vs %g ms",
            jnum(pf, "time_ms"), auto_ms);
  cJSON_Delete(root);
  snprintf(cmd, sizeof cmd, "%s --allreduce link", base);
  cr_assert_eq(tu_run_cli(cmd, out, sizeof out, err, sizeof err), 0, "%s", err);
  cr_assert(strstr(out, "(--allreduce link), not the measured table"), "%s", out);
  /* L40S TP2 and NVLink H200 tables are plausible: no note, the table serves */
  cr_assert_eq(tu_run_cli("plan --model llama-2-70b --gpu l40s --engine trtllm --tp 2 --quantization fp8", out,
                          sizeof out, err, sizeof err),
               0, "%s", err);
  cr_assert(!strstr(out, "--allreduce"), "%s", out);
  cr_assert_eq(tu_run_cli("plan --gpu h200 --tp 4", out, sizeof out, err, sizeof err), 0, "%s", err);
  cr_assert(!strstr(out, "--allreduce"), "%s", out);
  cr_assert_eq(tu_run_cli("plan --allreduce fast", out, sizeof out, err, sizeof err), 2);
  cr_assert(strstr(err, "--allreduce: unknown value 'fast' (auto, table, link)"), "%s", err);
  unlink(j);
}

/* A TP group larger than a node (8 GPUs by default) spans nodes: its
 * all-reduces pay the network (hierarchical: NVLink inside, the network
 * between), and plan compares the step with one node's. */
Test(planning_cli, plan_tp_across_nodes) {
  const char *j = tmp("tp32.json");
  char cmd[1024];
  const char *base = "plan --model llama-3.1-405b --gpu h200 --quantization fp8 --max-model-len 16384";
  snprintf(cmd, sizeof cmd, "%s --tp 32 --json %s", base, j);
  cr_assert_eq(tu_run_cli(cmd, out, sizeof out, err, sizeof err), 0, "%s", err);
  cr_assert(strstr(out, "TP32 spans 4 nodes of 8 GPUs"), "%s", out);
  cr_assert(strstr(out, "the network binds"), "%s", out);
  cJSON *root = load_json(j);
  const cJSON *ar = cJSON_GetObjectItemCaseSensitive(root, "allreduce_full_step");
  cr_assert_eq(jnum(ar, "nodes"), 4);
  double one_node = jnum(ar, "batch1_decode_ms_inside_one_node");
  double here = jnum(cJSON_GetObjectItemCaseSensitive(root, "decode_batch1"), "time_ms");
  cr_assert(here > one_node, "TP32 over 4 nodes must decode slower than TP8 in one: %g vs %g ms", here, one_node);
  cr_assert(jnum(ar, "batch1_allreduce_network_us") > 0.5 * jnum(ar, "batch1_allreduce_us"));
  cJSON_Delete(root);
  /* nodes of 32 GPUs (e.g. an NVL system): no network */
  snprintf(cmd, sizeof cmd, "%s --tp 32 --gpus-per-node 32", base);
  cr_assert_eq(tu_run_cli(cmd, out, sizeof out, err, sizeof err), 0, "%s", err);
  cr_assert(!strstr(out, "spans"), "%s", out);
  /* a group that does not take whole nodes */
  snprintf(cmd, sizeof cmd, "%s --tp 16 --gpus-per-node 6", base);
  cr_assert_eq(tu_run_cli(cmd, out, sizeof out, err, sizeof err), 2);
  cr_assert(strstr(err, "tensor_parallel_size 16 spans nodes of 6 GPUs but is not a multiple of it"), "%s", err);
  snprintf(cmd, sizeof cmd, "%s --tp 16 --gpus-per-node 0", base);
  cr_assert_eq(tu_run_cli(cmd, out, sizeof out, err, sizeof err), 2);
  cr_assert(strstr(err, "--gpus-per-node: '0' is not an integer in [1, 1024]"), "%s", err);
}

/* Pipeline parallelism across nodes: plan lists the layouts of the same GPUs.
 * For Llama-3.1-405B FP8 on two nodes of 8 H200, TP8 x PP2 holds twice
 * TP16's KV tokens (each GPU keeps half the layers; TP16 replicates the 8 KV
 * heads) and decodes a large batch faster (no all-reduce on the network),
 * while a lone sequence's token runs both stages one after the other. */
Test(planning_cli, plan_compares_pipeline_and_tensor_parallel_layouts) {
  const char *j = tmp("pp.json");
  char cmd[1024];
  const char *base = "plan --model llama-3.1-405b --gpu h200 --quantization fp8 --max-model-len 16384";
  snprintf(cmd, sizeof cmd, "%s --tp 16 --json %s", base, j);
  cr_assert_eq(tu_run_cli(cmd, out, sizeof out, err, sizeof err), 0, "%s", err);
  cr_assert(strstr(out, "Layouts of the same 16 GPUs"), "%s", out);
  cJSON *root = load_json(j);
  const cJSON *ls = cJSON_GetObjectItemCaseSensitive(root, "layouts");
  cr_assert(cJSON_IsArray(ls) && cJSON_GetArraySize(ls) >= 2);
  const cJSON *tp16 = cJSON_GetArrayItem(ls, 0), *pp2 = cJSON_GetArrayItem(ls, 1);
  cr_assert_eq(jnum(tp16, "tensor_parallel_size"), 16);
  cr_assert(cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(tp16, "this_plan")));
  cr_assert_eq(jnum(pp2, "tensor_parallel_size"), 8);
  cr_assert_eq(jnum(pp2, "pipeline_parallel_size"), 2);
  cr_assert(jnum(pp2, "kv_tokens") > 1.9 * jnum(tp16, "kv_tokens"), "%g vs %g", jnum(pp2, "kv_tokens"),
            jnum(tp16, "kv_tokens"));
  double t16 = jnum(cJSON_GetObjectItemCaseSensitive(tp16, "decode_ref_batch"), "tokens_per_s");
  double t8 = jnum(cJSON_GetObjectItemCaseSensitive(pp2, "decode_ref_batch"), "tokens_per_s");
  cr_assert(t8 > 1.2 * t16, "TP8 x PP2 %g tokens/s vs TP16 %g", t8, t16);
  cJSON_Delete(root);
  /* the pipeline itself: stages, memory per stage, sends */
  snprintf(cmd, sizeof cmd, "%s --tp 8 --pp 2", base);
  cr_assert_eq(tu_run_cli(cmd, out, sizeof out, err, sizeof err), 0, "%s", err);
  cr_assert(strstr(out, "on 16 x h200 (TP8 x PP2 over 2 nodes of 8)"), "%s", out);
  cr_assert(strstr(out, "stage 1   63 layers"), "%s", out);
  cr_assert(strstr(out, "pipeline: 2 stages, 1 send of the activations per token (1 over the network)"), "%s", out);
  cr_assert(strstr(out, "<- this plan"), "%s", out);
  /* vLLM refuses async scheduling with PP; too many stages */
  cr_assert_eq(tu_run_cli("run --pp 2 --async-scheduling --num-prompts 5", out, sizeof out, err, sizeof err), 2);
  cr_assert(strstr(err, "async_scheduling is not supported with pipeline_parallel_size 2 > 1"), "%s", err);
  cr_assert_eq(tu_run_cli("plan --pp 99", out, sizeof out, err, sizeof err), 2);
  cr_assert(strstr(err, "--pipeline-parallel-size: '99' is not an integer in [1, 16]"), "%s", err);
}

/* run with pipeline parallelism: the header names the layout, every request
 * finishes, the scenario key works like the flag. */
Test(planning_cli, run_with_pipeline_parallelism) {
  char cmd[1024];
  snprintf(cmd, sizeof cmd, "run --tp 2 --pp 2 --num-prompts 40 --request-rate 8 --random-output-len 64");
  cr_assert_eq(tu_run_cli(cmd, out, sizeof out, err, sizeof err), 0, "%s", err);
  cr_assert(strstr(out, "on 4 x h200 (TP2 x PP2 x 1 replica)"), "%s", out);
  cr_assert(strstr(out, "pipeline: 2 stages of 40, 40 layers"), "%s", out);
  cr_assert(strstr(out, "async scheduling off"), "%s", out);
  cr_assert(strstr(out, "Successful requests:                     40"), "%s", out);
  const char *sc = tu_tmpfile(".json", "{\"deployment\": {\"tensor_parallel_size\": 2, \"pipeline_parallel_size\": 2}, "
                                       "\"workload\": {\"num_prompts\": 40, \"request_rate\": 8, "
                                       "\"random_output_len\": 64}}");
  char out2[sizeof out];
  snprintf(cmd, sizeof cmd, "run --scenario %s", sc);
  cr_assert_eq(tu_run_cli(cmd, out2, sizeof out2, err, sizeof err), 0, "%s", err);
  cr_assert(strstr(out2, "(TP2 x PP2 x 1 replica)"), "%s", out2);
  const char *bad = tu_tmpfile(".json", "{\"deployment\": {\"pipeline_parallel_size\": 0}}");
  snprintf(cmd, sizeof cmd, "run --scenario %s", bad);
  cr_assert_eq(tu_run_cli(cmd, out2, sizeof out2, err, sizeof err), 2);
  cr_assert(strstr(err, "pipeline_parallel_size"), "%s", err);
}

Test(planning_cli, sweep_is_deterministic_across_jobs) {
  const char *a = tmp("a.json"), *b = tmp("b.json"), *c = tmp("a.csv");
  char cmd[2048];
  const char *args = "sweep " SMALL " --gpu h100-sxm,l40s --tp 1,2 --max-num-seqs 16,128 --request-rate 4,30 "
                     "--slo ttft_p99=1000 --slo tpot_p99=40";
  snprintf(cmd, sizeof cmd, "%s --jobs 1 --json %s --csv %s", args, a, c);
  cr_assert_eq(tu_run_cli(cmd, out, sizeof out, err, sizeof err), 0, "%s", err);
  cr_assert_eq(err[0], 0, "no progress bar when stderr is not a terminal: %s", err);
  cr_assert(strstr(out, "swept 16 configurations"), "%s", out);
  snprintf(cmd, sizeof cmd, "%s --jobs 2 --json %s", args, b);
  cr_assert_eq(tu_run_cli(cmd, out, sizeof out, err, sizeof err), 0, "%s", err);
  size_t la, lb;
  char *ja = tu_slurp(a, &la), *jb = tu_slurp(b, &lb);
  cr_assert(ja && jb);
  cr_assert_eq(la, lb);
  cr_assert(memcmp(ja, jb, la) == 0, "--jobs must not change the output");
  cJSON *root = cJSON_Parse(ja);
  const cJSON *res = cJSON_GetObjectItemCaseSensitive(root, "results");
  cr_assert_eq(cJSON_GetArraySize(res), 16);
  int i = 0;
  const cJSON *r;
  cJSON_ArrayForEach(r, res) cr_assert_eq(jnum(r, "index"), i++, "sorted by grid index");
  const cJSON *p = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(root, "pareto"),
                                                     "throughput_per_gpu_vs_tokens_per_user");
  cr_assert_gt(cJSON_GetArraySize(p), 0);
  cJSON_Delete(root);
  char *csv = tu_slurp(c, NULL);
  cr_assert(csv && strstr(csv, "index,label,feasible"), "CSV header");
  int lines = 0;
  for (char *q = csv; *q; q++) lines += *q == '\n';
  cr_assert_eq(lines, 17);
  free(csv), free(ja), free(jb);
  unlink(a), unlink(b), unlink(c);
}

Test(planning_cli, sweep_lists_infeasible_configs) {
  int rc = tu_run_cli("sweep --num-prompts 30 --tp 1,2,4 --gpu h100-sxm", out, sizeof out, err, sizeof err);
  cr_assert_eq(rc, 0, "infeasible points are results, not a failure: %s", err);
  cr_assert(strstr(out, "cannot start"), "%s", out);
  cr_assert(strstr(out, "3 configurations: 1 ran, 2 could not start"), "%s", out);
}

Test(planning_cli, bad_sweep_specs_exit_2) {
  const char *g = tu_tmpfile(".json", "{\"grid\": {\"tensor_parallel_size\": [1, 2], \"gpus\": [\"h200\"]}}");
  const char *g2 = tu_tmpfile(".json", "{\"grid\": {\"max_num_seqs\": [16, -4]}}");
  char c1[1024], c2[1024];
  snprintf(c1, sizeof c1, "sweep --num-prompts 10 --grid %s", g);
  snprintf(c2, sizeof c2, "sweep --num-prompts 10 --grid %s", g2);
  const struct {
    const char *args, *e1, *e2;
  } bad[] = {
      {"sweep --num-prompts 10 --tp 2,x", "--tp", "'x'"},
      {"sweep --num-prompts 10 --quantization none,fp7", "--quantization", "fp7"},
      {"sweep --num-prompts 10 --gpu h200,nosuchgpu", "nosuchgpu", "--gpu"},
      {"sweep --num-prompts 10 --slo ttft_p99", "--slo", "KEY=MS"},
      {"sweep --num-prompts 10 --slo latency_p99=5", "--slo", "unknown objective"},
      {"sweep --num-prompts 10 --gpu-hour-price cheap", "--gpu-hour-price", "cheap"},
      {"sweep --num-prompts 10 --request-rate 1,2 --max-concurrency 4,8", "request_rate", "one load axis"},
      {c1, "gpus", g},
      {c2, "grid.max_num_seqs[1]", "-4"},
      {"sweep --grid /nonexistent/grid.json", "/nonexistent/grid.json", ""},
  };
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    int rc = tu_run_cli(bad[i].args, out, sizeof out, err, sizeof err);
    cr_assert_eq(rc, 2, "%s: exit %d", bad[i].args, rc);
    cr_assert(strstr(err, bad[i].e1) && strstr(err, bad[i].e2), "%s: %s", bad[i].args, err);
  }
}

Test(planning_cli, bad_capacity_specs_exit_2) {
  const struct {
    const char *args, *e1, *e2;
  } bad[] = {
      {"capacity " SMALL " --target-rate 5", "--slo", "objective"},
      {"capacity " SMALL " --slo ttft_p99=1000", "--target-rate", "required"},
      {"capacity " SMALL " --slo ttft_p99=1000 --target-rate 0", "--target-rate", "got 0"},
      {"capacity " SMALL " --slo ttft_p99=1000 --target-rate 1e30", "--target-rate", "1e7"},
      {"capacity " SMALL " --slo ttft_p99=1000 --target-rate 5 --replicas 1,2", "replicas", "computes"},
      {"capacity " SMALL " --slo ttft_p99=1000 --target-rate 5 --request-rate 3", "request_rate", "searches"},
      {"capacity " SMALL " --slo ttft_p99=1000 --target-rate 5 --max-concurrency 8", "max", "open-loop"},
      {"capacity " SMALL " --slo ttft_p99=1000 --target-rate 5 --rel-tol 0", "--rel-tol", "(0, 1]"},
      {"capacity " SMALL " --slo ttft_p99=1000 --target-rate 5 --max-probes 1", "--max-probes", "[2,"},
      {"capacity " SMALL " --slo ttft_p99=1000 --target-rate 5 --tp 1,y", "--tp", "'y'"},
  };
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    int rc = tu_run_cli(bad[i].args, out, sizeof out, err, sizeof err);
    cr_assert_eq(rc, 2, "%s: exit %d", bad[i].args, rc);
    cr_assert(strstr(err, bad[i].e1) && strstr(err, bad[i].e2), "%s: %s", bad[i].args, err);
  }
}

Test(planning_cli, capacity_bisection_and_recommendation) {
  const char *j = tmp("cap.json");
  char cmd[2048];
  snprintf(cmd, sizeof cmd,
           "capacity --model llama-3.1-8b --max-model-len 8192 --num-prompts 200 --random-input-len 1024 --random-output-len 128 "
           "--random-range-ratio 0.5 --gpu h100-sxm,l40s --tp 1,2 --slo ttft_p99=1500 --slo tpot_p99=40 "
           "--target-rate 60 --rel-tol 0.03 --json %s",
           j);
  cr_assert_eq(tu_run_cli(cmd, out, sizeof out, err, sizeof err), 0, "%s", err);
  cr_assert(strstr(out, "recommended"), "%s", out);
  cJSON *root = load_json(j);
  double maxr = jnum(root, "max_request_rate");
  cr_assert(maxr > 0, "max_request_rate %g", maxr);
  const cJSON *rec = cJSON_GetObjectItemCaseSensitive(root, "recommendation");
  cr_assert(cJSON_IsObject(rec));
  cr_assert(cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(rec, "verified")));
  double reps = jnum(rec, "replicas");
  cr_assert_geq(reps, ceil(60 / maxr) - 1e-9, "at least ceil(target / per-replica rate) replicas");
  cr_assert_leq(reps, ceil(60 / maxr) + 4);
  const cJSON *c;
  double best_cost = jnum(rec, "usd_per_hour");
  cJSON_ArrayForEach(c, cJSON_GetObjectItemCaseSensitive(root, "candidates")) {
    const cJSON *why = cJSON_GetObjectItemCaseSensitive(c, "why");
    cr_assert(cJSON_IsString(why) && why->valuestring[0], "every candidate says why");
    double m = jnum(c, "max_request_rate");
    if (isnan(m)) continue;
    /* the bisection: passing probes all below failing ones, stopped within tolerance */
    double lo_fail = INFINITY, hi_pass = 0;
    const cJSON *p;
    int n = 0;
    cJSON_ArrayForEach(p, cJSON_GetObjectItemCaseSensitive(c, "probes")) {
      double r = jnum(p, "rate");
      if (cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(p, "meets_slo"))) hi_pass = fmax(hi_pass, r);
      else lo_fail = fmin(lo_fail, r);
      n++;
    }
    cr_assert_leq(n, 24);
    cr_assert_float_eq(hi_pass, m, 1e-9, "max_request_rate is the highest passing probe");
    cr_assert_lt(hi_pass, lo_fail, "monotone: no failing probe below a passing one");
    cr_assert_leq(lo_fail, m * 1.03 * (1 + 1e-9), "stops within the 3%% tolerance");
    if (cJSON_IsNumber(cJSON_GetObjectItemCaseSensitive(c, "usd_per_hour")) &&
        !strcmp(cJSON_GetObjectItemCaseSensitive(c, "verification")->valuestring, "passed"))
      cr_assert_geq(jnum(c, "usd_per_hour"), best_cost - 1e-9, "the recommendation is the cheapest verified");
  }
  cJSON_Delete(root);
  unlink(j);
}

Test(planning_cli, capacity_when_nothing_meets_the_slos) {
  const char *j = tmp("none.json");
  char cmd[1024];
  snprintf(cmd, sizeof cmd, "capacity " SMALL " --tp 1 --slo tpot_p99=1 --target-rate 5 --json %s", j);
  /* an answer (the outputs are written) but nothing to deploy: exit 3, documented in --help */
  cr_assert_eq(tu_run_cli(cmd, out, sizeof out, err, sizeof err), 3, "no candidate meets the SLOs: exit 3: %s", err);
  cr_assert(strstr(out, "No candidate serves"), "%s", out);
  cJSON *root = load_json(j);
  cr_assert(cJSON_IsNull(cJSON_GetObjectItemCaseSensitive(root, "max_request_rate")));
  cr_assert(cJSON_IsNull(cJSON_GetObjectItemCaseSensitive(root, "recommendation")));
  const cJSON *c = cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(root, "candidates"), 0);
  const char *why = cJSON_GetObjectItemCaseSensitive(c, "why")->valuestring;
  cr_assert(strstr(why, "decode step at batch 1") && strstr(why, "HBM bandwidth"), "%s", why);
  cJSON_Delete(root);
  unlink(j);
}

/* singular where there is one (issue #40: "1 candidates", "= 1 GPUs") */
Test(planning_cli, capacity_counts_in_the_singular) {
  int rc = tu_run_cli("capacity " SMALL " --tp 1 --slo ttft_p99=2000 --target-rate 5", out, sizeof out, err, sizeof err);
  cr_assert_eq(rc, 0, "%s", err);
  cr_assert(strstr(out, "searched 1 candidate with ") && strstr(out, "1 replica of TP1 on h200 = 1 GPU ("), "%s", out);
  cr_assert(!strstr(out, "1 candidates") && !strstr(out, "= 1 GPUs"), "%s", out);
}

Test(planning_cli, reports_are_wellformed) {
  const char *h1 = tmp("run.html"), *m1 = tmp("run.md"), *h2 = tmp("sweep.html"), *m2 = tmp("sweep.md");
  const char *h3 = tmp("cap.html"), *m3 = tmp("cap.md");
  char cmd[2048];
  snprintf(cmd, sizeof cmd,
           "run " SMALL " --request-rate 10 --replicas 2 --fail-replica 1@5 --traffic-step 4:2 --slo ttft_p99=500 "
           "--report %s --report-md %s --quiet", h1, m1);
  cr_assert_eq(tu_run_cli(cmd, out, sizeof out, err, sizeof err), 0, "%s", err);
  snprintf(cmd, sizeof cmd, "sweep " SMALL " --tp 1,2 --request-rate 5,20,80 --report %s --report-md %s --quiet", h2, m2);
  cr_assert_eq(tu_run_cli(cmd, out, sizeof out, err, sizeof err), 0, "%s", err);
  snprintf(cmd, sizeof cmd,
           "capacity " SMALL " --tp 1,2 --slo ttft_p99=800 --target-rate 30 --report %s --report-md %s --quiet", h3, m3);
  cr_assert_eq(tu_run_cli(cmd, out, sizeof out, err, sizeof err), 0, "%s", err);
  const char *html[] = {h1, h2, h3}, *md[] = {m1, m2, m3};
  const char *must[] = {"Time to first token", "Pareto frontier", "Candidates"};
  for (int i = 0; i < 3; i++) {
    char *t = tu_slurp(html[i], NULL);
    cr_assert(t && strstr(t, "<svg") && strstr(t, "The answer") && strstr(t, must[i]), "%s", html[i]);
    cr_assert(!strstr(t, "<script"), "no scripts");
    cr_assert(!strstr(t, "https://"), "no network references");
    free(t);
    t = tu_slurp(md[i], NULL);
    cr_assert(t && strstr(t, "**The answer.**"), "%s", md[i]);
    free(t);
  }
  char *t = tu_slurp(h1, NULL);
  cr_assert(strstr(t, "replica 1 lost") && strstr(t, "traffic x2"), "what-ifs are marked on the timelines");
  free(t);
  if (!have_xmllint()) {
    for (int i = 0; i < 3; i++) unlink(html[i]), unlink(md[i]);
    cr_skip_test("xmllint is not installed");
  }
  for (int i = 0; i < 3; i++) assert_wellformed(html[i]);
  /* and xmllint does catch a broken file */
  const char *broken = tu_tmpfile(".html", "<html><body><p>unclosed</body></html>");
  char c2[600];
  snprintf(c2, sizeof c2, "xmllint --noout %s 2>/dev/null", broken);
  cr_assert_neq(system(c2), 0);
  for (int i = 0; i < 3; i++) unlink(html[i]), unlink(md[i]);
}

Test(planning_cli, sweep_over_the_azure_conversation_trace) {
  const char *tr = tu_shared("traces/azure2023_conv.csv");
  if (!tr) cr_skip_test("../shared/traces/azure2023_conv.csv is absent");
  const char *j = tmp("conv.json");
  char cmd[2048];
  snprintf(cmd, sizeof cmd,
           "sweep --trace %s --window 0:300 --tp 2,4 --request-rate 2,8 --traffic-step 120:2 --json %s --quiet", tr, j);
  cr_assert_eq(tu_run_cli(cmd, out, sizeof out, err, sizeof err), 0, "%s", err);
  cJSON *root = load_json(j);
  const cJSON *r;
  int n = 0;
  cJSON_ArrayForEach(r, cJSON_GetObjectItemCaseSensitive(root, "results")) {
    cr_assert(cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(r, "feasible")));
    const cJSON *m = cJSON_GetObjectItemCaseSensitive(r, "metrics");
    cr_assert_gt(jnum(m, "completed"), 100);
    n++;
  }
  cr_assert_eq(n, 4);
  cJSON_Delete(root);
  unlink(j);
}

/* A mixture-of-experts model from its Hugging Face config: run names its
 * experts and costs the MoE blocks from the bundled fused-MoE tables; plan's
 * classic check reads the active experts only; MLA is refused by name. */
Test(planning_cli, mixture_of_experts_run_and_plan) {
  const char *mixtral = tu_tmpfile(".json",
                                   "{\"model_type\": \"mixtral\", \"hidden_size\": 4096, \"intermediate_size\": 14336, "
                                   "\"num_hidden_layers\": 32, \"num_attention_heads\": 32, \"num_key_value_heads\": 8, "
                                   "\"num_local_experts\": 8, \"num_experts_per_tok\": 2, \"vocab_size\": 32000, "
                                   "\"max_position_embeddings\": 32768, \"torch_dtype\": \"bfloat16\"}");
  const char *j = tmp("moe.json");
  char cmd[2048];
  snprintf(cmd, sizeof cmd, "run --model %s --gpu h100-sxm --tp 2 --num-prompts 20 --json %s", mixtral, j);
  cr_assert_eq(tu_run_cli(cmd, out, sizeof out, err, sizeof err), 0, "%s", err);
  cr_assert(strstr(out, "mixture of experts: 8 routed experts, top-2, in 32 of 32 layers; routing balanced"), "%s",
            out);
  cr_assert(strstr(out, "Successful requests:                     20"), "%s", out);
  cJSON *root = load_json(j);
  const cJSON *moe = cJSON_GetObjectItemCaseSensitive(
      cJSON_GetObjectItemCaseSensitive(
          cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(root, "servesim"), "cost_sources"),
          "per_op"),
      "moe");
  cr_assert(cJSON_IsObject(moe));
  cr_assert_str_eq(cJSON_GetObjectItemCaseSensitive(moe, "source")->valuestring, "profile",
                   "the bundled H100 tables measure Mixtral's shape");
  cJSON_Delete(root);
  snprintf(cmd, sizeof cmd, "plan --model %s --gpu h100-sxm --tp 2", mixtral);
  cr_assert_eq(tu_run_cli(cmd, out, sizeof out, err, sizeof err), 0, "%s", err);
  cr_assert(strstr(out, "a token uses 2 of 8 routed experts in 32 of 32 layers"), "%s", out);
  snprintf(cmd, sizeof cmd, "run --model %s --gpu h100-sxm --tp 2 --moe-routing skewed", mixtral);
  cr_assert_eq(tu_run_cli(cmd, out, sizeof out, err, sizeof err), 2);
  cr_assert(strstr(err, "--moe-routing: unknown value 'skewed' (balanced, power_law_1.01, power_law_1.2)"), "%s", err);
  /* DeepSeek-R1 (MLA, 256 experts) in FP8 on 8 x H200: about one byte per parameter, the replicated
   * latent cache, the batch that fits */
  const char *r1 = tu_tmpfile(".json", "{\"model_type\": \"deepseek_v3\", \"hidden_size\": 7168, \"intermediate_size\": "
                                       "18432, \"moe_intermediate_size\": 2048, \"num_hidden_layers\": 61, "
                                       "\"num_attention_heads\": 128, \"num_key_value_heads\": 128, \"q_lora_rank\": 1536, "
                                       "\"kv_lora_rank\": 512, \"qk_nope_head_dim\": 128, \"qk_rope_head_dim\": 64, "
                                       "\"v_head_dim\": 128, \"n_routed_experts\": 256, \"num_experts_per_tok\": 8, "
                                       "\"n_shared_experts\": 1, \"first_k_dense_replace\": 3, \"vocab_size\": 129280, "
                                       "\"max_position_embeddings\": 163840, \"quantization_config\": {\"quant_method\": "
                                       "\"fp8\", \"weight_block_size\": [128, 128]}}");
  snprintf(cmd, sizeof cmd, "plan --model %s --gpu h200 --tp 8 --quantization fp8 --max-model-len 32768", r1);
  cr_assert_eq(tu_run_cli(cmd, out, sizeof out, err, sizeof err), 0, "%s", err);
  cr_assert(strstr(out, "(671.03 B parameters) on 8 x h200"), "%s", out);
  cr_assert(strstr(out, "KV cache per token                              70272 bytes"), "%s", out);
  cr_assert(strstr(out, "Largest batch at 2048 tokens of context:"), "%s", out);
  cr_assert(strstr(out, "fp8 = 673.0 GB"), "%s", out);
}

/* Attention data parallelism (--data-parallel-size): a replica of 2 engine
 * ranks x TP1 holds 2 GPUs, every request is served by one rank, the layout
 * is named in run and plan, JSON echoes it, and what is not modelled (with
 * pipeline parallelism, a lost replica) is refused by name. */
Test(planning_cli, data_parallel_ranks) {
  const char *mixtral = tu_tmpfile(".json",
                                   "{\"model_type\": \"mixtral\", \"hidden_size\": 4096, \"intermediate_size\": 14336, "
                                   "\"num_hidden_layers\": 32, \"num_attention_heads\": 32, \"num_key_value_heads\": 8, "
                                   "\"num_local_experts\": 8, \"num_experts_per_tok\": 2, \"vocab_size\": 32000, "
                                   "\"max_position_embeddings\": 32768, \"torch_dtype\": \"bfloat16\"}");
  const char *j = tmp("dp.json");
  char cmd[2048];
  snprintf(cmd, sizeof cmd, "run --model %s --gpu h100-sxm --tp 1 --dp 2 --num-prompts 40 --json %s --force", mixtral,
           j);
  cr_assert_eq(tu_run_cli(cmd, out, sizeof out, err, sizeof err), 0, "%s", err);
  cr_assert(strstr(out, "on 2 x h100-sxm (DP2 x TP1 x 1 replica)"), "%s", out);
  cr_assert(strstr(out, "Successful requests:                     40"), "%s", out);
  cJSON *root = load_json(j);
  const cJSON *cfg = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(root, "servesim"), "configuration");
  cr_assert(cJSON_IsObject(cfg));
  cr_assert_eq(jnum(cfg, "data_parallel_size"), 2);
  cr_assert_eq(jnum(cfg, "gpus_total"), 2);
  cJSON_Delete(root);
  snprintf(cmd, sizeof cmd, "plan --model %s --gpu h100-sxm --tp 1 --dp 4 --enable-expert-parallel", mixtral);
  cr_assert_eq(tu_run_cli(cmd, out, sizeof out, err, sizeof err), 0, "%s", err);
  cr_assert(strstr(out, "on 4 x h100-sxm (DP4 x TP1 (EP4))"), "%s", out);
  snprintf(cmd, sizeof cmd, "run --model %s --gpu h100-sxm --tp 1 --dp 2 --pp 2", mixtral);
  cr_assert_eq(tu_run_cli(cmd, out, sizeof out, err, sizeof err), 2);
  cr_assert(strstr(err, "data_parallel_size 2 with pipeline_parallel_size 2: not modelled"), "%s", err);
  snprintf(cmd, sizeof cmd, "run --model %s --gpu h100-sxm --tp 1 --dp 2 --fail-replica 0@1", mixtral);
  cr_assert_eq(tu_run_cli(cmd, out, sizeof out, err, sizeof err), 2);
  cr_assert(strstr(err, "with data_parallel_size 2: not modelled"), "%s", err);
  snprintf(cmd, sizeof cmd, "run --model %s --gpu h100-sxm --tp 1 --dp 3 --enable-expert-parallel", mixtral);
  cr_assert_eq(tu_run_cli(cmd, out, sizeof out, err, sizeof err), 2);
  cr_assert(strstr(err, "data_parallel_size x tensor_parallel_size = 3 does not divide the 8 experts"), "%s", err);
}

/* MIG slices as GPUs (issue mig-cloud): the slice's memory budget and step times from the whole GPU's tables,
   a model that does not fit refused with the numbers, TP across slices refused, a run on a slice. */
Test(planning_cli, mig_slices) {
  int rc = tu_run_cli("plan --model llama-3.1-8b --gpu h200:1g.18gb", out, sizeof out, err, sizeof err);
  cr_assert_eq(rc, 2, "8B BF16 does not fit 1/8 of an H200: exit %d\n%s", rc, err);
  cr_assert(strstr(err, "h200:1g.18gb") && strstr(err, "weights 15.0 GiB") && strstr(err, "budget 16.1 GiB"), "%s",
            err);
  cr_assert(strstr(err, "a larger MIG slice"), "the advice fits a slice: %s", err);
  rc = tu_run_cli("plan --model llama-3.1-8b --gpu h200:3g.71gb", out, sizeof out, err, sizeof err);
  cr_assert_eq(rc, 0, "%s", err);
  cr_assert(strstr(out, "MIG 3g.71gb slice: 70.2 GiB"), "%s", out);
  cr_assert(strstr(out, "of the whole h200, scaled to the MIG slice h200:3g.71gb by its shares (3/7"), "%s", out);
  cr_assert(strstr(out, "1 x h200:3g.71gb (TP1)"), "a slice defaults to TP1: %s", out);
  rc = tu_run_cli("plan --model llama-3.1-8b --gpu h200:3g.71gb --tp 2", out, sizeof out, err, sizeof err);
  cr_assert_eq(rc, 2);
  cr_assert(strstr(err, "share no NVLink"), "%s", err);
  rc = tu_run_cli("plan --model llama-3.1-8b --gpu h200:9g.1gb", out, sizeof out, err, sizeof err);
  cr_assert_eq(rc, 2);
  cr_assert(strstr(err, "no MIG profile '9g.1gb'; its profiles: 1g.18gb"), "%s", err);
  /* the 7g slice is the whole GPU: the same step times through the scaled-table path */
  static char whole[65536];
  cr_assert_eq(tu_run_cli("plan --model llama-3.1-8b --gpu h200 --tp 1", whole, sizeof whole, err, sizeof err), 0);
  cr_assert_eq(tu_run_cli("plan --model llama-3.1-8b --gpu h200:7g.141gb", out, sizeof out, err, sizeof err), 0);
  const char *a = strstr(whole, "  decode, batch 1,"), *b = strstr(out, "  decode, batch 1,");
  cr_assert(a && b);
  cr_assert_eq(strncmp(a, b, (size_t)(strchr(a, '\n') - a)), 0, "%.80s vs %.80s", a, b);
  rc = tu_run_cli("run --model llama-3.1-8b --gpu h200:3g.71gb --num-prompts 40 --request-rate 2 --replicas 2", out,
                  sizeof out, err, sizeof err);
  cr_assert_eq(rc, 0, "%s", err);
  cr_assert(strstr(out, "Successful requests:                     40"), "%s", out);
}

/* capacity over MIG profiles of one GPU: the per-GPU layouts (homogeneous and NVIDIA's all-balanced), the best
   named; slices default to TP1 */
Test(planning_cli, capacity_mig_layouts) {
  int rc = tu_run_cli("capacity --model llama-3.1-8b --quantization fp8 --max-model-len 8192 --num-prompts 200 "
                      "--gpu h200:1g.18gb,h200:2g.35gb,h200:3g.71gb,h200:7g.141gb --slo ttft_p99=2000 "
                      "--slo tpot_p99=100 --target-rate 10",
                      out, sizeof out, err, sizeof err);
  cr_assert_eq(rc, 0, "%s", err);
  cr_assert(strstr(out, "MIG layouts of one h200"), "%s", out);
  cr_assert(strstr(out, "7 x 1g.18gb") && strstr(out, "3 x 2g.35gb") && strstr(out, "2 x 3g.71gb") &&
                strstr(out, "1 x 7g.141gb"),
            "%s", out);
  cr_assert(strstr(out, "all-balanced (2x1g.18gb+1x2g.35gb+1x3g.71gb)"), "%s", out);
  cr_assert(strstr(out, "best: "), "%s", out);
  cr_assert(strstr(out, "TP1 on h200:"), "%s", out);
}

/* list names the instance catalog and every GPU's MIG slices */
Test(planning_cli, list_shows_instances_and_mig_slices) {
  cr_assert_eq(tu_run_cli("list", out, sizeof out, err, sizeof err), 0, "%s", err);
  cr_assert(strstr(out, "instances  aws-p5.48xlarge"), "%s", out);
  cr_assert(strstr(out, "h200           1g.18gb (x7),"), "%s", out);
  cr_assert(!strstr(out, "l40s           "), "L40S is not MIG-capable: %s", out);
}

/* capacity --instances: deployments priced per rented instance, the cheapest type named with its price source */
Test(planning_cli, capacity_instances) {
  int rc = tu_run_cli("capacity --model llama-3.1-70b --gpu h100-sxm,h200 --tp 4,8 --quantization fp8 --slo "
                      "ttft_p99=2000 --slo tpot_p99=50 --target-rate 20 --num-prompts 200 --max-model-len 8192 "
                      "--instances aws-p5.48xlarge,lambda-8x-h100,generic-8x-h200,tier2-1x-h100",
                      out, sizeof out, err, sizeof err);
  cr_assert_eq(rc, 0, "%s", err);
  cr_assert(strstr(out, "rented as ") && strstr(out, "; price "), "%s", out);
  cr_assert(strstr(out, "x lambda-8x-h100") || strstr(out, "x generic-8x-h200"), "the cheapest 8-GPU type: %s", out);
  cr_assert(strstr(out, "disintermediate.global") || strstr(out, "ASSUMED"), "the price's source: %s", out);
  rc = tu_run_cli("capacity --model llama-3.1-8b --gpu h200 --tp 1 --slo ttft_p99=2000 --target-rate 5 "
                  "--num-prompts 50 --instances nope",
                  out, sizeof out, err, sizeof err);
  cr_assert_eq(rc, 2);
  cr_assert(strstr(err, "--instances nope") && strstr(err, "unknown instance 'nope'"), "%s", err);
}

/* Files dir/a and dir/b hold the same bytes (and are not trivially short). */
static void same_file(const char *dir, const char *a, const char *b) {
  char pa[1024], pb[1024];
  snprintf(pa, sizeof pa, "%s/%s", dir, a);
  snprintf(pb, sizeof pb, "%s/%s", dir, b);
  size_t la, lb;
  char *x = tu_slurp(pa, &la), *y = tu_slurp(pb, &lb);
  cr_assert(x && y && la > 100, "%s or %s missing", a, b);
  cr_assert(la == lb && !memcmp(x, y, la), "%s differs from %s (the unsplit run's)", b, a);
  free(x);
  free(y);
}

/* sweep --shard K/N --part F, then merge: the unsplit sweep's CSV and JSON, byte for byte; bad part sets refused */
Test(planning_cli, sweep_shards_merge_to_the_unsplit_bytes) {
  const char *d = tu_tmpdir();
  const char *sw = "sweep --model llama-3.1-8b --gpu h100-sxm,h200 --tp 1,2 --request-rate 2,4,8 --num-prompts 60 "
                   "--slo ttft_p99=2000 --quiet";
  char cmd[2048];
  snprintf(cmd, sizeof cmd, "%s --csv %s/full.csv --json %s/full.json", sw, d, d);
  cr_assert_eq(tu_run_cli(cmd, out, sizeof out, err, sizeof err), 0, "%s", err);
  for (int k = 1; k <= 3; k++) {
    snprintf(cmd, sizeof cmd, "%s --shard %d/3 --part %s/p%d.part", sw, k, d, k);
    cr_assert_eq(tu_run_cli(cmd, out, sizeof out, err, sizeof err), 0, "%s", err);
  }
  snprintf(cmd, sizeof cmd, "merge %s/p3.part %s/p1.part %s/p2.part --csv %s/m.csv --json %s/m.json --quiet", d, d, d,
           d, d);
  cr_assert_eq(tu_run_cli(cmd, out, sizeof out, err, sizeof err), 0, "%s", err);
  same_file(d, "full.csv", "m.csv");
  same_file(d, "full.json", "m.json");
  snprintf(cmd, sizeof cmd, "merge %s/p1.part %s/p3.part", d, d);
  cr_assert_eq(tu_run_cli(cmd, out, sizeof out, err, sizeof err), 2);
  cr_assert(strstr(err, "missing shard 2 of 3"), "%s", err);
  snprintf(cmd, sizeof cmd, "merge %s/p1.part %s/p1.part %s/p2.part", d, d, d);
  cr_assert_eq(tu_run_cli(cmd, out, sizeof out, err, sizeof err), 2);
  cr_assert(strstr(err, "are both shard 1 of 3"), "%s", err);
  snprintf(cmd, sizeof cmd, "sweep --model llama-3.1-8b --gpu h200 --tp 1,2 --num-prompts 30 --shard 1/2 --part %s/o.part",
           d);
  cr_assert_eq(tu_run_cli(cmd, out, sizeof out, err, sizeof err), 0, "%s", err);
  snprintf(cmd, sizeof cmd, "merge %s/p2.part %s/o.part", d, d);
  cr_assert_eq(tu_run_cli(cmd, out, sizeof out, err, sizeof err), 2);
  cr_assert(strstr(err, "a part of another sweep"), "%s", err);
  const char *junk = tu_tmpfile(".part", "servesim-sweep-part 1\nversion x\n");
  snprintf(cmd, sizeof cmd, "merge %s", junk);
  cr_assert_eq(tu_run_cli(cmd, out, sizeof out, err, sizeof err), 2);
  cr_assert(strstr(err, "not a sweep part"), "%s", err);
  snprintf(cmd, sizeof cmd, "%s --shard 4/3 --part %s/z.part", sw, d);
  cr_assert_eq(tu_run_cli(cmd, out, sizeof out, err, sizeof err), 2);
  cr_assert(strstr(err, "--shard: expected K/N"), "%s", err);
  snprintf(cmd, sizeof cmd, "%s --shard 1/3 --part %s/z.part --csv %s/z.csv", sw, d, d);
  cr_assert_eq(tu_run_cli(cmd, out, sizeof out, err, sizeof err), 2);
  cr_assert(strstr(err, "give --json, --csv and reports to `servesim merge`"), "%s", err);
}

/* capacity --shard K/N --part F, then merge: the unsplit search's JSON byte for byte (merge verifies and
   recommends) */
Test(planning_cli, capacity_shards_merge_to_the_unsplit_bytes) {
  const char *d = tu_tmpdir();
  const char *c = "capacity --model llama-3.1-70b --gpu h100-sxm,h200 --tp 4,8 --quantization fp8 --slo ttft_p99=2000 "
                  "--slo tpot_p99=50 --target-rate 20 --num-prompts 150 --max-model-len 8192 --instances "
                  "lambda-8x-h100,generic-8x-h200 --quiet";
  char cmd[2048];
  snprintf(cmd, sizeof cmd, "%s --json %s/cfull.json", c, d);
  cr_assert_eq(tu_run_cli(cmd, out, sizeof out, err, sizeof err), 0, "%s", err);
  for (int k = 1; k <= 3; k++) {
    snprintf(cmd, sizeof cmd, "%s --shard %d/3 --part %s/c%d.part", c, k, d, k);
    cr_assert_eq(tu_run_cli(cmd, out, sizeof out, err, sizeof err), 0, "%s", err);
  }
  snprintf(cmd, sizeof cmd, "merge %s/c2.part %s/c3.part %s/c1.part --json %s/cm.json --quiet", d, d, d, d);
  cr_assert_eq(tu_run_cli(cmd, out, sizeof out, err, sizeof err), 0, "%s", err);
  same_file(d, "cfull.json", "cm.json");
  char b[1024];
  snprintf(b, sizeof b, "%s/cm.json", d);
  char *y = tu_slurp(b, NULL);
  cr_assert(y && strstr(y, "\"instance\""), "the recommendation names its instance");
  free(y);
  snprintf(cmd, sizeof cmd, "merge %s/c1.part %s/c2.part", d, d);
  cr_assert_eq(tu_run_cli(cmd, out, sizeof out, err, sizeof err), 2);
  cr_assert(strstr(err, "missing shard 3 of 3"), "%s", err);
}

/* --engine A,B sweeps the engine (NAME or NAME@VERSION): each row runs and names its engine as run; an unknown
 * engine is refused before anything runs (exit 2); capacity takes engines as candidates. */
Test(planning_cli, sweep_and_capacity_compare_engines) {
  cr_assert_eq(tu_run_cli("sweep --engine vllm,sglang@0.5.6.post2,trtllm --num-prompts 40 --request-rate 4 --json -",
                          out, sizeof out, err, sizeof err), 0, "%s", err);
  cJSON *j = cJSON_Parse(out);
  cr_assert(j, "sweep JSON parses");
  const cJSON *res = cJSON_GetObjectItem(j, "results");
  cr_assert_eq(cJSON_GetArraySize(res), 3);
  const char *want[] = {"vllm@", "sglang@0.5.6.post2", "trtllm@"};
  for (int i = 0; i < 3; i++) {
    const cJSON *r = cJSON_GetArrayItem(res, i);
    cr_assert(cJSON_IsTrue(cJSON_GetObjectItem(r, "feasible")));
    const char *e = cJSON_GetObjectItem(cJSON_GetObjectItem(r, "config"), "engine")->valuestring;
    cr_assert(!strncmp(e, want[i], strlen(want[i])), "row %d engine %s", i, e);
  }
  cJSON_Delete(j);
  cr_assert_eq(tu_run_cli("sweep --engine vllm,nope --num-prompts 10", out, sizeof out, err, sizeof err), 2);
  cr_assert(strstr(err, "--engine: unknown engine 'nope'"), "%s", err);
  cr_assert_eq(tu_run_cli("capacity --engine vllm,sglang --slo tpot_p99=60 --target-rate 2 --num-prompts 60", out,
                          sizeof out, err, sizeof err), 0, "%s", err);
  cr_assert(strstr(out, "0*  vllm ") && strstr(out, "1   sglang "), "%s", out);
}
