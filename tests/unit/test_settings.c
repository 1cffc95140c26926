/* test_settings.c: the table of deployment settings (config/settings.h) and
 * the readers and writers that loop over it: every row is well formed and
 * reachable by its key, flag and alias; a value given as text, as a scenario
 * key or as a grid axis lands in its field or is refused naming the source
 * and the table's range; resolution fills each unset value by its rule;
 * echoes read back what was set; and a setting added as one row (the
 * long-prefill token threshold) works end to end from the command line. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/run_flags.h"
#include "config/settings.h"
#include "model/shard.h"
#include "plan/grid.h"
#include "runner/scenario.h"
#include "testutil.h"

Test(settings, rows_are_well_formed_and_unique) {
  size_t n = settings_count();
  cr_assert_gt(n, 15);
  cr_assert_leq(n, GRID_MAX_SETTINGS, "grid.h has room for every setting");
  cr_assert_leq(n, RUN_MAX_SETTINGS, "run_flags.h has room for every setting");
  for (size_t i = 0; i < n; i++) {
    const setting *s = settings_at(i);
    cr_assert(s->key && s->flag && s->help && s->deflt, "row %zu", i);
    cr_assert_eq(settings_by_key(s->key), s, "%s", s->key);
    cr_assert_eq(settings_by_flag(s->flag), s, "%s", s->flag);
    if (s->alias) cr_assert_eq(settings_by_flag(s->alias), s, "%s", s->alias);
    cr_assert_eq(settings_index(s), i);
    if (s->kind == SK_U32 || s->kind == SK_F64) cr_assert(s->lo <= s->hi && s->hi > 0, "%s: range", s->key);
    if (s->kind == SK_CHOICE) cr_assert(s->parse && s->show && s->given && s->choices, "%s", s->key);
    if (s->use & SET_SWEEP) {
      cr_assert(s->label, "%s: a sweep label", s->key);
      cr_assert_geq(grid_axis_of_key(s->key), 0, "%s is a grid axis", s->key);
    } else {
      cr_assert_lt(grid_axis_of_key(s->key), 0, "%s is not a grid axis", s->key);
    }
    for (size_t k = 0; k < i; k++) cr_assert_str_neq(settings_at(k)->key, s->key);
  }
  cr_assert_null(settings_by_key("tp"), "keys are vLLM's names, not aliases");
  cr_assert_null(settings_by_flag("nonsense"));
}

/* text in, range checked, the same text out (deploy_init's values are "not given") */
Test(settings, text_round_trip_and_ranges) {
  deploy_cfg d;
  deploy_init(&d);
  for (size_t i = 0; i < settings_count(); i++) cr_assert_not(setting_given(settings_at(i), &d), "%s", settings_at(i)->key);
  sim_err err;
  const struct {
    const char *key, *in, *out;
  } ok[] = {{"tensor_parallel_size", "8", "8"},      {"gpu_memory_utilization", "0.85", "0.85"},
            {"enable_prefix_caching", "off", "off"}, {"enable_expert_parallel", "true", "on"},
            {"dtype", "fp16", "fp16"},               {"quantization", "fp8", "fp8"},
            {"kv_cache_dtype", "fp8", "fp8"},        {"router", "least_kv", "least_kv"},
            {"long_prefill_token_threshold", "512", "512"}};
  char buf[64];
  for (size_t i = 0; i < SIM_ARRAY_LEN(ok); i++) {
    const setting *s = settings_by_key(ok[i].key);
    cr_assert_eq(setting_set_text(s, &d, ok[i].in, ok[i].key, &err), SIM_OK, "%s", err.msg);
    cr_assert(setting_given(s, &d), "%s", ok[i].key);
    setting_text(s, &d, buf, sizeof buf);
    cr_assert_str_eq(buf, ok[i].out, "%s", ok[i].key);
  }
  cr_assert_eq(d.tp, 8);
  cr_assert_eq(d.enable_prefix_caching, 0);
  cr_assert_eq(d.weight_dtype, DT_FP8);
  cr_assert_eq(d.long_prefill_token_threshold, 512);
  const struct {
    const char *key, *in, *msg;
  } bad[] = {{"tensor_parallel_size", "65", "--tp: '65' is not an integer in [1, 64]"},
             {"tensor_parallel_size", "0", "'0' is not an integer in [1, 64]"},
             {"pipeline_parallel_size", "x", "'x' is not an integer in [1, 16]"},
             {"gpu_memory_utilization", "0", "'0' is not a number in (0, 1]"},
             {"enable_chunked_prefill", "maybe", "'maybe' is not on or off"},
             {"kv_cache_dtype", "int4", "unknown value 'int4' (auto, fp8, bf16, fp16)"}};
  for (size_t i = 0; i < SIM_ARRAY_LEN(bad); i++) {
    const char *who = !strcmp(bad[i].key, "tensor_parallel_size") ? "--tp" : bad[i].key;
    cr_assert_eq(setting_set_text(settings_by_key(bad[i].key), &d, bad[i].in, who, &err), SIM_EINPUT, "%s", bad[i].in);
    cr_assert(strstr(err.msg, bad[i].msg), "%s", err.msg);
  }
  cr_assert_eq(d.tp, 8, "a refused value leaves the field as it was");
}

/* cfg_resolve's rules: the parallel sizes 1, the engine file's values, the one range check */
Test(settings, fill_and_check) {
  deploy_cfg d;
  deploy_init(&d);
  engine_cfg e;
  memset(&e, 0, sizeof e);
  e.block_size = 32;
  e.gpu_memory_utilization = 0.8;
  e.enable_prefix_caching = true;
  e.long_prefill_token_threshold = 2048;
  settings_fill(&d, NULL, SD_ONE);
  cr_assert(d.tp == 1 && d.pp == 1 && d.dp == 1 && d.replicas == 1);
  settings_fill(&d, &e, SD_ENGINE);
  cr_assert_eq(d.block_size, 32);
  cr_assert_float_eq(d.gpu_memory_utilization, 0.8, 0);
  cr_assert_eq(d.enable_prefix_caching, 1);
  cr_assert_eq(d.enable_chunked_prefill, 0);
  cr_assert_eq(d.long_prefill_token_threshold, 2048);
  d.block_size = 64; /* a given value is kept */
  settings_fill(&d, &e, SD_ENGINE);
  cr_assert_eq(d.block_size, 64);
  sim_err err;
  cr_assert_eq(settings_check(&d, &err), SIM_OK, "%s", err.msg);
  d.tp = 128;
  cr_assert_eq(settings_check(&d, &err), SIM_EINPUT);
  cr_assert(strstr(err.msg, "tensor_parallel_size 128 is out of range 1..64"), "%s", err.msg);
}

/* the scenario's "deployment" object reads every key of the table and nothing else */
Test(settings, scenario_keys_from_the_table) {
  scenario sc;
  sim_err err;
  scenario_init(&sc);
  const char *ok = "{\"deployment\": {\"tensor_parallel_size\": 2, \"long_prefill_token_threshold\": 256, "
                   "\"enable_chunked_prefill\": false, \"quantization\": \"fp8\", \"gpu_memory_utilization\": 0.7}}";
  cr_assert_eq(scenario_parse(&sc, ok, "s.json", &err), SIM_OK, "%s", err.msg);
  cr_assert_eq(sc.deploy.tp, 2);
  cr_assert_eq(sc.deploy.long_prefill_token_threshold, 256);
  cr_assert_eq(sc.deploy.enable_chunked_prefill, 0);
  cr_assert_eq(sc.deploy.weight_dtype, DT_FP8);
  scenario_init(&sc);
  cr_assert_eq(scenario_parse(&sc, "{\"deployment\": {\"tensor_parallel\": 2}}", "s.json", &err), SIM_EINPUT);
  cr_assert(strstr(err.msg, "s.json") && strstr(err.msg, "tensor_parallel"), "%s", err.msg);
  scenario_init(&sc);
  cr_assert_eq(scenario_parse(&sc, "{\"deployment\": {\"max_num_seqs\": 0}}", "s.json", &err), SIM_EINPUT);
  cr_assert(strstr(err.msg, "deployment.max_num_seqs"), "%s", err.msg);
}

/* echoes: JSON members and CSV columns of the row settings, and the flags that give the same deployment again */
Test(settings, echoes_read_back) {
  deploy_cfg d, again;
  deploy_init(&d);
  sim_err err;
  cr_assert_eq(setting_set_text(settings_by_key("tensor_parallel_size"), &d, "4", "t", &err), 0);
  cr_assert_eq(setting_set_text(settings_by_key("quantization"), &d, "fp8", "t", &err), 0);
  cr_assert_eq(setting_set_text(settings_by_key("enable_prefix_caching"), &d, "off", "t", &err), 0);
  cr_assert_eq(setting_set_text(settings_by_key("max_num_seqs"), &d, "64", "t", &err), 0);
  char cmd[512] = "run";
  size_t k = strlen(cmd);
  settings_flags_text(&d, cmd, sizeof cmd, &k);
  cr_assert_str_eq(cmd, "run --tp 4 --quantization fp8 --max-num-seqs 64 --no-enable-prefix-caching");
  /* the flags parse back into the same deployment */
  run_flags f;
  run_flags_init(&f);
  cli_opt o[160];
  int n = run_flags_table(&f, o, 159);
  o[n] = (cli_opt){NULL, NULL, 0, NULL, NULL, NULL, NULL};
  char *argv[] = {"run", "--tp", "4", "--quantization", "fp8", "--max-num-seqs", "64", "--no-enable-prefix-caching"};
  cr_assert_eq(cli_parse(o, 8, argv, NULL, &err), 0, "%s", err.msg);
  scenario sc;
  scenario_init(&sc);
  cr_assert_eq(run_flags_apply(&f, &sc, &err), 0, "%s", err.msg);
  again = sc.deploy;
  cr_assert(again.tp == d.tp && again.weight_dtype == d.weight_dtype && again.max_num_seqs == d.max_num_seqs &&
            again.enable_prefix_caching == d.enable_prefix_caching);
  char *text = NULL;
  size_t len = 0;
  FILE *mf = open_memstream(&text, &len);
  settings_csv_header(SET_ROW, mf);
  fputc('\n', mf);
  settings_csv_row(&d, SET_ROW, mf);
  fclose(mf);
  cr_assert_str_eq(text, ",tensor_parallel_size,pipeline_parallel_size,data_parallel_size,weight_dtype,kv_cache_dtype,"
                         "max_num_seqs,max_num_batched_tokens\n,4,0,0,fp8,bf16,64,0");
  free(text);
}

/* One table row is the whole setting: the flag, the scenario key, the sweep axis, the JSON echo and the
 * scheduler all see --long-prefill-token-threshold, which cfg.h, settings.c and runner.c alone define. */
Test(settings, a_new_setting_end_to_end) {
  static char out[1 << 16], err[4096];
  cr_assert_eq(tu_run_cli("run --num-prompts 30 --random-input-len 3000 --long-prefill-token-threshold 256 --json -", out,
                          sizeof out, err, sizeof err),
               0, "%s", err);
  cr_assert(strstr(out, "\"long_prefill_token_threshold\": 256"), "%s", out);
  char *p = strstr(out, "\"mean_ttft_ms\": ");
  cr_assert(p);
  double capped = atof(p + 16);
  cr_assert_eq(tu_run_cli("run --num-prompts 30 --random-input-len 3000 --json -", out, sizeof out, err, sizeof err), 0,
               "%s", err);
  p = strstr(out, "\"mean_ttft_ms\": ");
  cr_assert(p);
  double free_ = atof(p + 16);
  cr_assert_gt(capped, free_, "256-token chunks prefill a 3000-token prompt in more steps (%g vs %g ms)", capped, free_);
  cr_assert_eq(tu_run_cli("sweep --long-prefill-token-threshold 256,4096 --num-prompts 20 --json -", out, sizeof out,
                          err, sizeof err),
               0, "%s", err);
  cr_assert(strstr(out, "chunk=256") && strstr(out, "chunk=4096"), "%s", out);
  cr_assert_eq(tu_run_cli("run --long-prefill-token-threshold 0", out, sizeof out, err, sizeof err), 2);
  cr_assert(strstr(err, "--long-prefill-token-threshold: '0' is not an integer in [1, 10000000]"), "%s", err);
}

/* Hybrid MoE TP x EP (TensorRT-LLM's moe_expert_parallel_size, SGLang's --ep-size): the dp x tp GPUs of the MoE
 * layers as ep groups of whole experts, each expert sliced over the rest; vLLM runs only ep = dp x tp. */
Test(settings, hybrid_expert_parallelism) {
  static const char *moe = "{\"model_type\": \"mixtral\", \"hidden_size\": 4096, \"intermediate_size\": 14336, "
                           "\"num_hidden_layers\": 32, \"num_attention_heads\": 32, \"num_key_value_heads\": 8, "
                           "\"vocab_size\": 32000, \"max_position_embeddings\": 32768, \"torch_dtype\": \"bfloat16\", "
                           "\"num_local_experts\": 8, \"num_experts_per_tok\": 2}";
  model_cfg m;
  gpu_cfg g;
  engine_cfg trt, vllm;
  sim_err err;
  cr_assert_eq(cfg_model_parse(&m, moe, "moe.json", &err), 0, "%s", err.msg);
  cr_assert_eq(cfg_gpu_load(&g, "h200", &err), 0, "%s", err.msg);
  cr_assert_eq(cfg_engine_load(&trt, "trtllm", &err), 0, "%s", err.msg);
  cr_assert_eq(cfg_engine_load(&vllm, "vllm", &err), 0, "%s", err.msg);
  deploy_cfg d;
  deploy_init(&d);
  d.tp = 8, d.moe_ep = 4;
  cr_assert_eq(cfg_resolve(&d, &m, &g, &trt, &err), 0, "%s", err.msg);
  cr_assert_eq(deploy_ep(&d), 4);
  char lay[96];
  deploy_layout_text(&d, lay, sizeof lay);
  cr_assert_str_eq(lay, "TP8 (MoE TP2 x EP4)");
  model_shard s;
  shard_init_dp(&s, &m, d.tp, d.dp, deploy_ep(&d));
  cr_assert_eq(s.moe_tp, 2, "8 GPUs / 4 EP groups");
  cr_assert_eq(s.local_experts, 2);
  cr_assert_eq(s.expert_inter, 14336 / 2);
  deploy_init(&d); /* unset: 1 without --enable-expert-parallel, dp x tp with it; resolved either way */
  d.tp = 4;
  cr_assert_eq(cfg_resolve(&d, &m, &g, &trt, &err), 0, "%s", err.msg);
  cr_assert_eq(d.moe_ep, 1);
  deploy_init(&d);
  d.tp = 4, d.expert_parallel = true;
  cr_assert_eq(cfg_resolve(&d, &m, &g, &vllm, &err), 0, "%s", err.msg);
  cr_assert_eq(d.moe_ep, 4);
  const struct {
    uint32_t tp, ep;
    bool vllm_engine;
    const char *msg;
  } bad[] = {{8, 2, true, "vLLM runs expert parallelism over all data-parallel x tensor-parallel ranks only"},
             {4, 3, false, "moe_expert_parallel_size 3 does not divide the 4 GPUs of the MoE layers"},
             {8, 16, false, "moe_expert_parallel_size 16 does not divide the 8 GPUs"}};
  for (size_t i = 0; i < SIM_ARRAY_LEN(bad); i++) {
    deploy_init(&d);
    d.tp = bad[i].tp, d.moe_ep = bad[i].ep;
    cr_assert_eq(cfg_resolve(&d, &m, &g, bad[i].vllm_engine ? &vllm : &trt, &err), SIM_EINPUT, "tp %u ep %u", d.tp, d.moe_ep);
    cr_assert(strstr(err.msg, bad[i].msg), "%s", err.msg);
  }
}
