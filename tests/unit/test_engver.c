/* test_engver.c: engine versions and their behaviour facts (config/engver.h),
 * each against the number vLLM's code or release gives. */
#include <criterion/criterion.h>
#include <string.h>

#include "config/engver.h"
#include "testutil.h"

static engine_cfg load(const char *name) {
  engine_cfg e;
  sim_err err = {0, ""};
  cr_assert_eq(cfg_engine_load(&e, name, &err), SIM_OK, "%s: %s", name, err.msg);
  return e;
}

Test(engver, parse_and_order) {
  engver a, b;
  cr_assert(engver_parse("0.11.0", &a));
  cr_assert(engver_parse("0.11", &b));
  cr_assert_eq(engver_cmp(&a, &b), 0, "0.11 = 0.11.0");
  cr_assert(engver_parse("0.9.2", &b));
  cr_assert_lt(engver_cmp(&b, &a), 0, "numeric, not lexical: 0.9.2 < 0.11.0");
  cr_assert(engver_parse("1.3.0rc20", &a));
  cr_assert(engver_parse("1.3.0", &b));
  cr_assert_lt(engver_cmp(&a, &b), 0, "a release candidate precedes its release");
  cr_assert(engver_parse("1.3.0rc3", &b));
  cr_assert_lt(engver_cmp(&b, &a), 0, "rc3 < rc20");
  /* PEP 440 suffixes, as AIConfigurator's rows record them (TensorRT-LLM 0.8.1.post3, 1.2.0rc6.post1, SGLang
   * 0.5.1.post1) and as development builds name themselves */
  cr_assert(engver_parse("1.2.0rc6.post1", &a));
  cr_assert(engver_parse("1.2.0rc6", &b));
  cr_assert_gt(engver_cmp(&a, &b), 0, "a post-release follows its release candidate");
  cr_assert(engver_parse("1.2.0", &b));
  cr_assert_lt(engver_cmp(&a, &b), 0, "and precedes the release");
  cr_assert(engver_parse("0.8.1.post3", &a));
  cr_assert(engver_parse("0.8.1.post1", &b));
  cr_assert_gt(engver_cmp(&a, &b), 0, "post3 > post1");
  cr_assert(engver_parse("0.8.1", &b));
  cr_assert_gt(engver_cmp(&a, &b), 0, "0.8.1.post3 > 0.8.1");
  cr_assert(engver_parse("0.8.2", &b));
  cr_assert_lt(engver_cmp(&a, &b), 0, "0.8.1.post3 < 0.8.2");
  cr_assert(engver_parse("0.14.1.dev1+gd68209402", &a));
  cr_assert(engver_parse("0.14.1rc1", &b));
  cr_assert_lt(engver_cmp(&a, &b), 0, "a development build precedes the pre-releases");
  cr_assert(engver_parse("1.0.0b2", &a) && engver_parse("1.0.0a9", &b));
  cr_assert_gt(engver_cmp(&a, &b), 0, "b2 > a9");
  const char *bad[] = {"", "v0.11", "0.11.x", "0..1", "0.11.0-beta", "abc", "1.2.3.4", "gpt-oss-dev", "glm5-hopper",
                       "1.0.0rc", "1.0.0.post", "1.0.0+", "1.0.0rc1rc2", "1.0.0 "};
  for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) cr_assert_not(engver_parse(bad[i], &a), "'%s'", bad[i]);
}

Test(engver, bundled_engine_files_agree_with_the_table) {
  const char *names[] = {"vllm", "trtllm"};
  for (int i = 0; i < 2; i++) {
    engine_cfg e = load(names[i]);
    cr_assert_neq(e.version[0], 0, "%s states its version", names[i]);
    sim_err err = {0, ""};
    cr_assert_eq(engver_check(&e, &err), SIM_OK, "%s", err.msg);
  }
}

Test(engver, vllm_versions_switch_the_facts) {
  /* vLLM 0.11.0 (the AIConfigurator measurements of 2025-10): no async
   * scheduling by default (on from 0.14.0), first-chunk admission (full-ISL
   * admission from PR #37307, 0.19.0), gpu_memory_utilization 0.9, and
   * FULL_AND_PIECEWISE graphs (0.11.0) */
  engine_cfg e = load("vllm@0.11.0");
  cr_assert_str_eq(e.version, "0.11.0");
  cr_assert_not(e.async_scheduling);
  cr_assert_not(e.reserve_full_isl);
  cr_assert_float_eq(e.gpu_memory_utilization, 0.9, 1e-12);
  cr_assert_eq(e.graph_mode, GRAPH_FULL_AND_PIECEWISE);
  e = load("vllm@0.10.2");
  cr_assert_eq(e.graph_mode, GRAPH_PIECEWISE);
  e = load("vllm@0.15.1");
  cr_assert(e.async_scheduling);
  cr_assert_not(e.reserve_full_isl);
  e = load("vllm@0.19.0");
  cr_assert(e.reserve_full_isl);
  cr_assert_float_eq(e.gpu_memory_utilization, 0.9, 1e-12);
  e = load("vllm@0.25.0");
  cr_assert_float_eq(e.gpu_memory_utilization, 0.92, 1e-12);
  /* parameters that are not version facts stay the file's */
  engine_cfg base = load("vllm");
  cr_assert_float_eq(e.step_overhead_ns, base.step_overhead_ns, 0);
}

Test(engver, bad_versions_are_input_errors) {
  engine_cfg e;
  sim_err err = {0, ""};
  cr_assert_eq(cfg_engine_load(&e, "vllm@0.7.3", &err), SIM_EINPUT);
  cr_assert(strstr(err.msg, "from 0.8.0"), "%s", err.msg);
  cr_assert_eq(cfg_engine_load(&e, "vllm@latest", &err), SIM_EINPUT);
  cr_assert(strstr(err.msg, "vllm@latest") && strstr(err.msg, "0.11.0"), "%s", err.msg);
  cr_assert_eq(cfg_engine_load(&e, "nosuch@0.1", &err), SIM_EINPUT);
}

/* vLLM EngineArgs.get_batch_defaults (vllm/engine/arg_utils.py), OpenAI
 * server context: >= 70 GiB and not an A100 -> 8192 / 1024, else 2048 / 256
 * (PR #17885 for the A100); >= 160 GiB from 0.28.0 -> 16384 tokens. */
Test(engver, vllm_batch_defaults_by_gpu) {
  static const struct {
    const char *gpu, *engine;
    uint32_t tokens, seqs;
  } cases[] = {
      {"h100-sxm", "vllm", 8192, 1024},       {"h200", "vllm", 8192, 1024},
      {"a100-sxm-80gb", "vllm", 2048, 256},   {"l40s", "vllm", 2048, 256},
      {"h20", "vllm", 8192, 1024},            {"b200", "vllm", 8192, 1024},
      {"b200", "vllm@0.28.0", 16384, 1024},   {"l40s", "trtllm", 8192, 2048},
  };
  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
    gpu_cfg g;
    sim_err err = {0, ""};
    cr_assert_eq(cfg_gpu_load(&g, cases[i].gpu, &err), SIM_OK, "%s", err.msg);
    engine_cfg e = load(cases[i].engine);
    uint32_t t, s;
    engver_batch_defaults(&e, &g, &t, &s);
    cr_assert_eq(t, cases[i].tokens, "%s %s: max_num_batched_tokens %u", cases[i].engine, cases[i].gpu, t);
    cr_assert_eq(s, cases[i].seqs, "%s %s: max_num_seqs %u", cases[i].engine, cases[i].gpu, s);
  }
}

/* vLLM VllmConfig._set_cudagraph_sizes (0.11.0 on): [1, 2, 4] + range(8, 256,
 * 8) + range(256, max + 1, 16) with max = min(2 x max_num_seqs, 512), no size
 * above max_num_batched_tokens. */
Test(engver, vllm_cudagraph_capture_sizes) {
  engine_cfg e = load("vllm");
  uint32_t s[600];
  uint32_t n = engver_graph_sizes(&e, 1024, 8192, s, 600);
  cr_assert_eq(n, 3 + 31 + 17, "1,2,4 + 8..248 + 256..512 step 16");
  cr_assert_eq(s[0], 1);
  cr_assert_eq(s[3], 8);
  cr_assert_eq(s[33], 248);
  cr_assert_eq(s[34], 256);
  cr_assert_eq(s[35], 272);
  cr_assert_eq(s[n - 1], 512);
  n = engver_graph_sizes(&e, 64, 8192, s, 600); /* max = 2 x 64 */
  cr_assert_eq(s[n - 1], 128);
  cr_assert_eq(n, 3 + 16);
  n = engver_graph_sizes(&e, 1024, 100, s, 600); /* the token budget caps it */
  cr_assert_eq(s[n - 1], 96);
  /* before 0.11: steps of 8 up to 512 */
  engine_cfg old = load("vllm@0.10.2");
  n = engver_graph_sizes(&old, 1024, 8192, s, 600);
  cr_assert_eq(n, 3 + 64);
  cr_assert_eq(s[n - 1], 512);
  cr_assert_eq(s[n - 2], 504);
  e.graph_mode = GRAPH_NONE;
  cr_assert_eq(engver_graph_sizes(&e, 1024, 8192, s, 600), 0);
}
