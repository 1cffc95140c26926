/* test_validate.c: the validation harness (sim/validate/).
 *  - each reader: a well-formed row becomes the right point; a malformed row
 *    is rejected with FILE:LINE: FIELD; unrepresentable rows are kept as
 *    skipped with a reason;
 *  - each workload shape maps to the right scenario (closed loop 10 x C,
 *    offline all at t=0, static batch in one step);
 *  - tiny runs checked by hand against the cost model: a static batch's TTFT
 *    is one step over the whole batch and its TPOT the mean of the decode
 *    steps; a closed loop at concurrency 1 prefills each request alone; the
 *    client never holds more than C requests;
 *  - error statistics, the cliff rule and the training subset. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config/cfg.h"
#include "hw/cost.h"
#include "hw/cost_inplace.h" /* models on caller storage */
#include "runner/profsel.h"
#include "testutil.h"
#include "validate/validate.h"

/* ---- helpers ------------------------------------------------------------------------ */

static const char *AIC_HEADER =
    "id,silicon_data_source,backend,backend_version,model_path,system,precision,mode,isl,osl,gemm_quant_mode,"
    "moe_quant_mode,batch_size,tp_size,pp_size,attention_dp_size,silicon_ttft_ms,silicon_tpot_ms\n";

static int parse_err(int (*fn)(vset *, const char *, const char *, sim_err *), const char *text, sim_err *err) {
  vset s;
  vset_init(&s);
  int rc = fn(&s, text, "x.csv", err);
  vset_free(&s);
  return rc;
}

static void expect_error(int (*fn)(vset *, const char *, const char *, sim_err *), const char *text,
                         const char *where, const char *field) {
  sim_err err = {0, ""};
  int rc = parse_err(fn, text, &err);
  cr_assert_eq(rc, SIM_EINPUT, "accepted: %s", text);
  cr_assert(strstr(err.msg, where), "message '%s' lacks '%s'", err.msg, where);
  cr_assert(strstr(err.msg, field), "message '%s' lacks '%s'", err.msg, field);
}

/* ---- AIConfigurator closed-loop rows ----------------------------------------------------- */

Test(validate_read, aic_row_becomes_a_closed_loop_point) {
  char text[4096];
  snprintf(text, sizeof text,
           "%s"
           "a,source_file=x.csv; model=Llama-3.1-70B; silicon_concurrency=16; wip=False,trtllm,,meta-llama/"
           "Llama-3.1-70B,h200_sxm,fp8,agg,1024,8192,fp8,fp8,16,4,1,1,120.5,9.4\n"
           "b,silicon_concurrency=8,vllm,,meta-llama/Llama-3.1-70B,h100_sxm,fp8,agg,8192,1024,fp8,fp8,8,2,1,1,900,20\n",
           AIC_HEADER);
  vset s;
  vset_init(&s);
  sim_err err = {0, ""};
  cr_assert_eq(vdata_parse_aic(&s, text, "x.csv", &err), 0, "%s", err.msg);
  cr_assert_eq(s.n, 2);
  const vpoint *p = &s.pts[0];
  cr_assert_eq(p->shape, VSHAPE_CLOSED);
  cr_assert_str_eq(p->gpu, "h200");
  cr_assert_str_eq(p->engine, "trtllm");
  cr_assert_str_eq(p->model, "llama-3.1-70b");
  cr_assert_eq(p->tp, 4);
  cr_assert_eq(p->isl, 1024);
  cr_assert_eq(p->osl, 8192);
  cr_assert_eq(p->concurrency, 16);
  cr_assert_eq(p->num_prompts, 160);
  cr_assert_eq(p->weight_dtype, DT_FP8);
  cr_assert_eq(p->kv_dtype, DT_FP8, "TensorRT-LLM: FP8 weights imply an FP8 KV cache");
  cr_assert_float_eq(p->meas[VM_TTFT], 120.5, 1e-12);
  cr_assert_float_eq(p->meas[VM_TPOT], 9.4, 1e-12);
  /* derived: C x osl / E2EL = 16 x 8192 / (0.1205 + 8191 x 0.0094) */
  cr_assert_float_eq(p->meas[VM_TPUT], 16.0 * 8192 / (0.1205 + 8191 * 0.0094), 1e-9);
  cr_assert(p->tput_derived);
  cr_assert_str_eq(p->where, "x.csv:2");
  cr_assert_eq(p->skip[0], 0);
  const vpoint *q = &s.pts[1];
  cr_assert_str_eq(q->gpu, "h100-sxm");
  cr_assert_eq(q->kv_dtype, DT_BF16, "vLLM keeps --kv-cache-dtype auto");
  cr_assert_str_eq(q->where, "x.csv:3");
  vset_free(&s);
}

Test(validate_read, aic_unrepresentable_rows_are_skipped_with_a_reason) {
  char text[4096];
  snprintf(text, sizeof text,
           "%s"
           "a,silicon_concurrency=4,trtllm,,meta-llama/Llama-3.1-70B,h200_sxm,fp8,agg,1024,1024,fp8,fp8,4,4,2,1,1,1\n"
           "b,silicon_concurrency=4,trtllm,,meta-llama/Llama-3.1-70B,mi300x,fp8,agg,1024,1024,fp8,fp8,4,4,1,1,1,1\n"
           "c,silicon_concurrency=4,lmdeploy,,meta-llama/Llama-3.1-70B,h200_sxm,fp8,agg,1024,1024,fp8,fp8,4,4,1,1,1,1\n"
           "d,silicon_concurrency=4,trtllm,,meta-llama/Llama-3.1-70B,h200_sxm,fp8,disagg,1024,1024,fp8,fp8,4,4,1,1,1,1\n"
           "e,silicon_concurrency=4,sglang,0.5.6.post2,meta-llama/Llama-3.1-70B,h200_sxm,fp8,agg,1024,1024,fp8,fp8,4,4,1,1,1,1\n",
           AIC_HEADER);
  vset s;
  vset_init(&s);
  sim_err err = {0, ""};
  cr_assert_eq(vdata_parse_aic(&s, text, "x.csv", &err), 0, "%s", err.msg);
  cr_assert_eq(s.n, 5, "skipped rows stay in the set");
  cr_assert_eq(s.pts[0].skip[0], 0, "pipeline parallelism is modelled: %s", s.pts[0].skip);
  cr_assert_eq(s.pts[0].pp, 2);
  cr_assert(strstr(s.pts[1].skip, "GPU config"), "%s", s.pts[1].skip);
  cr_assert(strstr(s.pts[2].skip, "engine"), "%s", s.pts[2].skip);
  cr_assert(strstr(s.pts[3].skip, "disagg"), "%s", s.pts[3].skip);
  /* SGLang agg rows run engine sglang at the row's version (configs/engines/sglang.json, engver_sglang.c) */
  cr_assert_eq(s.pts[4].skip[0], 0, "%s", s.pts[4].skip);
  cr_assert_str_eq(s.pts[4].engine, "sglang");
  cr_assert_str_eq(s.pts[4].engine_version, "0.5.6.post2");
  vset_free(&s);
}

Test(validate_read, aic_malformed_rows_name_file_line_and_field) {
  char text[4096];
  const char *good = "a,silicon_concurrency=4,vllm,,meta-llama/Llama-3.1-70B,h100_sxm,fp8,agg,1024,1024,fp8,fp8,4,4,1,1,80,11\n";
  snprintf(text, sizeof text, "%s%sb,x,vllm,,m,h100_sxm,fp8,agg,abc,1024,fp8,fp8,4,4,1,1,80,11\n", AIC_HEADER, good);
  expect_error(vdata_parse_aic, text, "x.csv:3:", "isl");
  snprintf(text, sizeof text, "%s%sb,x,vllm,,m,h100_sxm,fp8,agg,1024,1024,fp8,fp8,4,4,1,1,-3,11\n", AIC_HEADER, good);
  expect_error(vdata_parse_aic, text, "x.csv:3:", "silicon_ttft_ms");
  /* a measured value has a ceiling too ([hardening] item 5): 1e308 ms is no measurement */
  snprintf(text, sizeof text, "%s%sb,x,vllm,,m,h100_sxm,fp8,agg,1024,1024,fp8,fp8,4,4,1,1,1e308,11\n", AIC_HEADER, good);
  expect_error(vdata_parse_aic, text, "x.csv:3:", "silicon_ttft_ms: expected a positive number up to 1e12");
  snprintf(text, sizeof text, "%s%sb,x,vllm,,m,h100_sxm,fp8,agg,1024,1024,fp8,fp8,4,x,1,1,80,11\n", AIC_HEADER, good);
  expect_error(vdata_parse_aic, text, "x.csv:3:", "tp_size");
  snprintf(text, sizeof text, "%s%sb,x,vllm,,m,h100_sxm\n", AIC_HEADER, good);
  expect_error(vdata_parse_aic, text, "x.csv:3:", "fields");
  snprintf(text, sizeof text, "%sb,silicon_concurrency=x,vllm,,m,h100_sxm,fp8,agg,1024,1024,fp8,fp8,4,4,1,1,80,11\n",
           AIC_HEADER);
  expect_error(vdata_parse_aic, text, "x.csv:2:", "silicon_concurrency");
  expect_error(vdata_parse_aic, "id,isl\n1,2\n", "x.csv:1:", "required column");
  snprintf(text, sizeof text, "%sb,\"unterminated,vllm\n", AIC_HEADER);
  expect_error(vdata_parse_aic, text, "x.csv:2:", "quote");
}

/* The newer AIConfigurator rows (the full column set of the MoE sample): blank
 * or 0 parallelism fields mean 1; with attention data parallelism batch_size
 * is per rank and silicon_concurrency counts the clients; quantization modes
 * servesim has no precision for, disaggregated rows, unrecorded versions and
 * models without a config are skipped with the missing piece named, never an
 * input error. */
static const char *AIC_FULL_HEADER =
    "id,silicon_data_source,backend,backend_version,model_path,system,precision,mode,isl,osl,gemm_quant_mode,"
    "moe_quant_mode,batch_size,tp_size,pp_size,attention_dp_size,moe_tp_size,moe_ep_size,prefill_batch_size,"
    "prefill_num_workers,prefill_tp_size,prefill_pp_size,prefill_attention_dp_size,prefill_moe_tp_size,"
    "prefill_moe_ep_size,decode_batch_size,decode_num_workers,decode_tp_size,decode_pp_size,"
    "decode_attention_dp_size,decode_moe_tp_size,decode_moe_ep_size,silicon_ttft_ms,silicon_tpot_ms\n";
#define AIC_TAIL ",,,,,,,,,,,,,,"

Test(validate_read, aic_newer_rows_and_their_quirks) {
  char text[10240];
  snprintf(text, sizeof text,
           "%s"
           /* 2: blank parallelism fields, a Llama-3.1-8B id, B200 */
           "a,silicon_concurrency=8,vllm,0.12.0,meta-llama/Meta-Llama-3.1-8B,b200_sxm,fp8,agg,1000,100,fp8,,8,,,,,"
           AIC_TAIL ",50.5,7.25\n"
           /* 3: attention DP 2: 144 per rank, 288 clients */
           "b,silicon_concurrency=288,trtllm,1.0.0rc3,meta-llama/Llama-3.1-70B,h200_sxm,fp8,agg,1000,100,fp8,,144,8,1,2,8,1"
           AIC_TAIL ",300,20\n"
           /* 4: batch_size x attention_dp_size contradicts silicon_concurrency */
           "c,silicon_concurrency=288,trtllm,,meta-llama/Llama-3.1-70B,h200_sxm,fp8,agg,1000,100,fp8,,144,8,1,1,8,1"
           AIC_TAIL ",300,20\n"
           /* 5: fp8_block weights: FP8 */
           "d,silicon_concurrency=4,vllm,0.18.0,meta-llama/Llama-3.1-70B,h200_sxm,fp8,agg,1000,100,fp8_block,,4,4,0,0,0,0"
           AIC_TAIL ",90,12\n"
           /* 6: nvfp4 weights */
           "e,silicon_concurrency=4,vllm,,meta-llama/Llama-3.1-70B,h200_sxm,fp4,agg,1000,100,nvfp4,nvfp4,4,4,1,1,4,1"
           AIC_TAIL ",90,12\n"
           /* 7: disaggregated, batch and tp blank (the prefill_ / decode_ columns hold them) */
           "f,silicon_concurrency=16,trtllm,,meta-llama/Llama-3.1-70B,h200_sxm,fp8,disagg,1000,100,fp8,,,,,,,"
           AIC_TAIL ",90,12\n"
           /* 8: a model no config declares */
           "g,silicon_concurrency=4,vllm,0.12.0,Qwen/Qwen3-32B,h200_sxm,fp8,agg,1000,100,fp8,,4,2,1,1,2,1" AIC_TAIL
           ",90,12\n"
           /* 9: vLLM version unrecorded, measured while 0.11.0 was current */
           "h,source_file=y.csv; measured=2025-10-29T00:00:00.000Z; silicon_concurrency=4,vllm,,meta-llama/"
           "Llama-3.1-70B,h100_sxm,fp8,agg,1000,100,fp8,,4,2,1,1,2,1" AIC_TAIL ",90,12\n"
           /* 10: ... and measured later: the engine file's version */
           "i,measured=2026-03-01; silicon_concurrency=4,vllm,,meta-llama/Llama-3.1-70B,h100_sxm,fp8,agg,1000,100,fp8,,"
           "4,2,1,1,2,1" AIC_TAIL ",90,12\n"
           /* 11: nothing measured */
           "j,silicon_concurrency=4,vllm,,meta-llama/Llama-3.1-70B,h100_sxm,fp8,agg,1000,100,fp8,,4,2,1,1,2,1" AIC_TAIL
           ",,\n"
           /* 12: expert parallelism over the TP ranks (moe_tp 1, moe_ep 2 = tp) */
           "k,silicon_concurrency=4,vllm,,meta-llama/Llama-3.1-70B,h100_sxm,fp8,agg,1000,100,fp8,,4,2,1,1,1,2" AIC_TAIL
           ",90,12\n"
           /* 13: expert parallelism beyond them */
           "l,silicon_concurrency=4,vllm,,meta-llama/Llama-3.1-70B,h100_sxm,fp8,agg,1000,100,fp8,,4,2,1,1,1,4" AIC_TAIL
           ",90,12\n"
           /* 14: the MoE layers over 2 GPUs, attention on 1 (attention_dp_size blank): data parallelism 2 */
           "m,silicon_concurrency=8,vllm,0.12.0,meta-llama/Llama-3.1-70B,h200_sxm,fp8,agg,1000,100,fp8,,8,1,1,,2,1"
           AIC_TAIL ",90,12\n"
           /* 15: moe_tp over more GPUs than attention_dp_size x tp_size: not a layout vLLM runs */
           "n,silicon_concurrency=8,vllm,0.12.0,meta-llama/Llama-3.1-70B,h200_sxm,fp8,agg,1000,100,fp8,,4,1,1,2,8,1"
           AIC_TAIL ",90,12\n"
           /* 16: disaggregated 2P (TP4, batch 1) + 1D (TP8, batch 8) */
           "o,silicon_concurrency=8,vllm,0.12.0,meta-llama/Llama-3.1-70B,h200_sxm,fp8,disagg,1000,100,fp8,,,,,,,,"
           "1,2,4,1,1,0,0,8,1,8,1,1,0,0,90,12\n"
           /* 17: a decode pool with attention data parallelism (8 ranks of TP1) */
           "p,silicon_concurrency=8,trtllm,,meta-llama/Llama-3.1-70B,h200_sxm,fp8,disagg,1000,100,fp8,,,,,,,,"
           "1,1,8,1,1,1,1,8,1,1,1,8,1,1,90,12\n",
           AIC_FULL_HEADER);
  vset s;
  vset_init(&s);
  sim_err err = {0, ""};
  cr_assert_eq(vdata_parse_aic(&s, text, "new.csv", &err), 0, "%s", err.msg);
  cr_assert_eq(s.n, 16);
  const vpoint *p = &s.pts[0];
  cr_assert_eq(p->skip[0], 0, "%s", p->skip);
  cr_assert_str_eq(p->model, "llama-3.1-8b", "resolved through the config's aliases");
  cr_assert_str_eq(p->gpu, "b200", "b200_sxm is an alias of configs/gpus/b200.json");
  cr_assert_eq(p->tp, 1, "blank tp_size means 1");
  cr_assert_eq(p->pp, 1);
  cr_assert_str_eq(p->engine_version, "0.12.0");
  p = &s.pts[1];
  cr_assert_eq(p->concurrency, 288, "the clients: silicon_concurrency");
  cr_assert(strstr(p->skip, "attention data parallelism 2"), "%s", p->skip);
  cr_assert_str_eq(p->engine_version, "1.0.0rc3");
  cr_assert(strstr(s.pts[2].skip, "batch_size 144 x attention_dp_size 1 differs from silicon_concurrency=288"), "%s",
            s.pts[2].skip);
  p = &s.pts[3];
  cr_assert_eq(p->skip[0], 0, "%s", p->skip);
  cr_assert_eq(p->weight_dtype, DT_FP8);
  cr_assert_eq(p->tp, 4);
  cr_assert_eq(p->pp, 1, "0 means 1");
  cr_assert_eq(s.pts[4].skip[0], 0, "FP4 weights run weight-only: %s", s.pts[4].skip);
  cr_assert_eq(s.pts[4].weight_dtype, DT_INT4);
  cr_assert(strstr(s.pts[5].skip, "the pools' sizes are unknown"), "%s", s.pts[5].skip);
  cr_assert(strstr(s.pts[6].skip, "no servesim model config for Qwen/Qwen3-32B (add one with --models DIR)"), "%s",
            s.pts[6].skip);
  cr_assert_str_eq(s.pts[7].engine_version, "0.11.0", "measured 2025-10-29: vLLM 0.11.0");
  cr_assert_str_eq(s.pts[7].kernel_version, "0.24.0");
  cr_assert_str_eq(s.pts[8].engine_version, "", "a later date: the engine file's version");
  cr_assert(strstr(s.pts[9].skip, "nothing measured"), "%s", s.pts[9].skip);
  cr_assert_eq(s.pts[10].skip[0], 0, "expert parallelism over the TP ranks is modelled: %s", s.pts[10].skip);
  cr_assert(s.pts[10].ep);
  /* moe_ep 4 over tp 2: vLLM's data parallelism 2 with expert parallelism over all 4 ranks */
  cr_assert_eq(s.pts[11].skip[0], 0, "%s", s.pts[11].skip);
  cr_assert_eq(s.pts[11].dp, 2);
  cr_assert(s.pts[11].ep);
  cr_assert(strstr(s.pts[11].id, "/tp2dp2/"), "%s", s.pts[11].id);
  p = &s.pts[12];
  cr_assert_eq(p->skip[0], 0, "%s", p->skip);
  cr_assert_eq(p->tp, 1);
  cr_assert_eq(p->dp, 2, "moe_tp_size 2 over tp_size 1: two attention ranks");
  cr_assert_eq(p->concurrency, 8, "the clients of both ranks");
  cr_assert(!p->ep);
  cr_assert(strstr(s.pts[13].skip, "attention data parallelism 2 with moe_tp_size 8"), "%s", s.pts[13].skip);
  p = &s.pts[14];
  cr_assert_eq(p->skip[0], 0, "%s", p->skip);
  cr_assert(p->disagg);
  cr_assert_eq(p->p_workers, 2);
  cr_assert_eq(p->p_tp, 4);
  cr_assert_eq(p->p_seqs, 1);
  cr_assert_eq(p->d_workers, 1);
  cr_assert_eq(p->d_tp, 8);
  cr_assert_eq(p->d_seqs, 8);
  cr_assert_eq(p->concurrency, 8);
  cr_assert(strstr(p->id, "/tp8-2Ptp4-1Dtp8/"), "%s", p->id);
  p = &s.pts[15]; /* a decode pool of TP1 x attention DP 8 */
  cr_assert_eq(p->skip[0], 0, "%s", p->skip);
  cr_assert_eq(p->d_tp, 1);
  cr_assert_eq(p->d_dp, 8);
  cr_assert_eq(p->p_dp, 1);
  cr_assert(strstr(p->id, "-1Ptp8-1Dtp1dp8/"), "%s", p->id);
  vset_free(&s);
}

/* Models the data names by Hugging Face id resolve through a --models
 * directory of config.json files named org--name.json; one servesim cannot
 * read (here: an MLA config without its head sizes) resolves to the reason. */
Test(validate_read, models_directory_resolves_hugging_face_ids) {
  const char *dir = tu_tmpdir();
  char path[1024];
  snprintf(path, sizeof path, "%s/Qwen--Qwen3-32B.json", dir);
  cr_assert(tu_write_table(path,
                           "{\"model_type\": \"qwen3\", \"hidden_size\": 5120, \"intermediate_size\": 25600, "
                           "\"num_hidden_layers\": 64, \"num_attention_heads\": 64, \"num_key_value_heads\": 8, "
                           "\"head_dim\": 128, \"vocab_size\": 151936, \"max_position_embeddings\": 40960, "
                           "\"torch_dtype\": \"bfloat16\"}",
                           false));
  snprintf(path, sizeof path, "%s/deepseek-ai--DeepSeek-V3.json", dir);
  cr_assert(tu_write_table(path,
                           "{\"model_type\": \"deepseek_v3\", \"hidden_size\": 7168, \"intermediate_size\": 18432, "
                           "\"num_hidden_layers\": 61, \"num_attention_heads\": 128, \"num_key_value_heads\": 128, "
                           "\"n_routed_experts\": 256, \"num_experts_per_tok\": 8, \"kv_lora_rank\": 512, "
                           "\"vocab_size\": 129280, \"max_position_embeddings\": 163840}",
                           false));
  snprintf(path, sizeof path, "%s/README.md", dir);
  cr_assert(tu_write_table(path, "not a config", false));
  vset s;
  vset_init(&s);
  sim_err err = {0, ""};
  size_t n = 0;
  cr_assert_eq(vres_add_models_dir(vset_resolver(&s), dir, &n, &err), 0, "%s", err.msg);
  cr_assert_eq(n, 2, "the .json files only");
  char text[4096];
  snprintf(text, sizeof text,
           "%sa,silicon_concurrency=4,vllm,0.12.0,qwen/qwen3-32b,h200_sxm,bf16,agg,1000,100,bfloat16,,4,2,1,1,2,1"
           AIC_TAIL ",90,12\n"
           "b,silicon_concurrency=4,vllm,0.12.0,deepseek-ai/DeepSeek-V3,h200_sxm,bf16,agg,1000,100,bfloat16,,4,"
           "2,1,1,2,1" AIC_TAIL ",90,12\n"
           "c,silicon_concurrency=4,sglang,0.5.9,qwen/qwen3-32b,h200_sxm,bf16,agg,1000,100,bfloat16,,4,128,1,1,1,1"
           AIC_TAIL ",90,12\n",
           AIC_FULL_HEADER);
  cr_assert_eq(vdata_parse_aic(&s, text, "q.csv", &err), 0, "%s", err.msg);
  cr_assert(strstr(s.pts[2].skip, "tp_size 128 is more GPUs than the model's 64 attention heads"), "%s", s.pts[2].skip);
  cr_assert_eq(s.pts[0].skip[0], 0, "%s", s.pts[0].skip);
  cr_assert(strstr(s.pts[0].model, "Qwen--Qwen3-32B.json"), "ids compare ignoring case: %s", s.pts[0].model);
  cr_assert(strstr(s.pts[1].skip, "qk_nope_head_dim: missing required key"), "%s", s.pts[1].skip);
  cr_assert(strstr(s.pts[1].skip, "deepseek-ai/DeepSeek-V3"), "%s", s.pts[1].skip);
  char missing[1100];
  snprintf(missing, sizeof missing, "%s/nope", dir);
  cr_assert_eq(vres_add_models_dir(vset_resolver(&s), missing, NULL, &err), SIM_EINPUT);
  cr_assert(strstr(err.msg, "--models"), "%s", err.msg);
  vset_free(&s);
}

/* ---- TensorRT-LLM offline table -------------------------------------------------------------- */

Test(validate_read, trt_overview_cells_become_offline_points) {
  const char *text = "# source: test\n"
                     "model,isl,osl,tp,H200_FP8,H100_FP16,A100PCIE80_FP16,Z9000_FP16\n"
                     "llama3.1-70b,128,128,2,5357.0,,806.7,100\n"
                     "mystery-13b,1000,1000,8,3391.0,,,\n"
                     "llama3.1-70b,999,999,1,10.0,,,\n";
  vset s;
  vset_init(&s);
  sim_err err = {0, ""};
  cr_assert_eq(vdata_parse_trt_overview(&s, text, "x.csv", &err), 0, "%s", err.msg);
  cr_assert_eq(s.n, 5, "empty cells are not points");
  const vpoint *p = &s.pts[0];
  cr_assert_eq(p->shape, VSHAPE_OFFLINE);
  cr_assert_str_eq(p->gpu, "h200");
  cr_assert_eq(p->tp, 2);
  cr_assert_eq(p->num_prompts, 30000, "perf-overview: 30000 requests at 128/128");
  cr_assert_float_eq(p->meas[VM_TPUT], 5357.0, 1e-9);
  cr_assert(isnan(p->meas[VM_TTFT]));
  cr_assert_eq(p->skip[0], 0);
  cr_assert_str_eq(p->where, "x.csv:3");
  cr_assert_str_eq(s.pts[1].gpu, "a100-pcie-80gb", "the column's GPU by its alias");
  cr_assert_eq(s.pts[1].skip[0], 0, "%s", s.pts[1].skip);
  cr_assert(strstr(s.pts[2].skip, "no servesim GPU config for Z9000"), "%s", s.pts[2].skip);
  cr_assert(strstr(s.pts[3].skip, "no servesim model config for mystery-13b"), "%s", s.pts[3].skip);
  cr_assert(strstr(s.pts[4].skip, "number of requests"), "%s", s.pts[4].skip);
  vset_free(&s);
  expect_error(vdata_parse_trt_overview, "model,isl,osl,tp,H200_FP8\nllama3.1-70b,128,128,2,fast\n", "x.csv:2:",
               "H200_FP8");
  expect_error(vdata_parse_trt_overview, "model,isl,osl,tp,H200_FP8\nllama3.1-70b,128,x,2,1\n", "x.csv:2:", "osl");
  /* found by fuzz_validate: a column name longer than the reader's label cut its _PRECISION off and
   * crashed the reader */
  expect_error(vdata_parse_trt_overview,
               "model,isl,osl,tp,H200_XXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXX_FP8\n"
               "llama3.1-70b,128,128,2,10\n",
               "x.csv:1:", "of at most 63 characters");
  expect_error(vdata_parse_trt_overview, "model,isl,osl,H200_FP8\nllama3.1-70b,128,128,1\n", "x.csv:1:", "tp");
  expect_error(vdata_parse_trt_overview, "model,isl,osl,tp,H200FP8\nllama3.1-70b,128,128,2,1\n", "x.csv:1:",
               "H200FP8");
}

/* ---- TensorRT-LLM 0.9 static batch ------------------------------------------------------------- */

static const char *STATIC_HEADER =
    "GPU,Precision,Tensor Model Parallel Size,Pipeline Model Parallel Size,Input/Output Lengths,Batch Size,"
    "1st Token Latency (ms),Token-to-token Latency (ms),Latency (ms),Throughput (tokens / sec),Throughput per GPU "
    "(tokens / sec / GPU),Generation Throughput (tokens / sec),GPU Peak Memory Usage (GB),Enable XQA,Use Fake Weight\n";

Test(validate_read, static_rows_and_their_errors) {
  char text[4096];
  snprintf(text, sizeof text,
           "%sA100-SXM4-80GB,Mixed,2,1,\"128,2048\",4,179.7,52.4,107644.6,76.1,38.05,76.23,72.68,Yes,Yes\n"
           "L40S,FP8,4,2,\"128,128\",1,70,20,2600,49,12,50,40,Yes,Yes\n",
           STATIC_HEADER);
  vset s;
  vset_init(&s);
  sim_err err = {0, ""};
  cr_assert_eq(vdata_parse_static_batch(&s, text, "x.csv", &err), 0, "%s", err.msg);
  cr_assert_eq(s.n, 2);
  const vpoint *p = &s.pts[0];
  cr_assert_eq(p->shape, VSHAPE_STATIC);
  cr_assert_str_eq(p->gpu, "a100-sxm-80gb");
  cr_assert_str_eq(p->model, "llama-2-70b");
  cr_assert_eq(p->isl, 128);
  cr_assert_eq(p->osl, 2048);
  cr_assert_eq(p->concurrency, 4);
  cr_assert_eq(p->num_prompts, 4);
  cr_assert_eq(p->act_dtype, DT_FP16, "Mixed = FP16");
  cr_assert_eq(p->kv_dtype, DT_FP16);
  cr_assert_float_eq(p->meas[VM_TTFT], 179.7, 1e-9);
  cr_assert_float_eq(p->meas[VM_TPOT], 52.4, 1e-9);
  cr_assert_float_eq(p->meas[VM_TPUT], 76.1, 1e-9);
  cr_assert_eq(s.pts[1].skip[0], 0, "pipeline parallelism is modelled: %s", s.pts[1].skip);
  cr_assert_gt(s.pts[1].pp, 1);
  cr_assert_eq(s.pts[1].weight_dtype, DT_FP8);
  vset_free(&s);
  snprintf(text, sizeof text, "%sH100 80GB HBM3,Mixed,2,1,\"128;128\",4,1,1,1,1,1,1,1,Yes,Yes\n", STATIC_HEADER);
  expect_error(vdata_parse_static_batch, text, "x.csv:2:", "Input/Output Lengths");
  snprintf(text, sizeof text, "%sH100 80GB HBM3,Mixed,2,1,\"128,128\",0,1,1,1,1,1,1,1,Yes,Yes\n", STATIC_HEADER);
  expect_error(vdata_parse_static_batch, text, "x.csv:2:", "Batch Size");
  snprintf(text, sizeof text, "%sH100 80GB HBM3,Mixed,2,1,\"128,128\",4,1,nan,1,1,1,1,1,Yes,Yes\n", STATIC_HEADER);
  expect_error(vdata_parse_static_batch, text, "x.csv:2:", "Token-to-token");
}

/* ---- MLPerf records -------------------------------------------------------------------------- */

Test(validate_read, mlperf_records_are_listed_as_skipped) {
  const char *text = "[\n"
                     " {\"kind\": \"hardware_spec\", \"conditions\": {}, \"values\": {}},\n"
                     " {\"kind\": \"mlperf_result\",\n"
                     "  \"conditions\": {\"system\": \"X\", \"scenario\": \"Server\"},\n"
                     "  \"values\": {\"tokens_per_s\": 20556.4, \"ttft_ms\": {\"mean\": 381.6},\n"
                     "             \"tpot_ms\": {\"mean\": 136.8}}}\n"
                     "]\n";
  vset s;
  vset_init(&s);
  sim_err err = {0, ""};
  cr_assert_eq(vdata_parse_mlperf(&s, text, "f.json", &err), 0, "%s", err.msg);
  cr_assert_eq(s.n, 1, "only mlperf_result records are points");
  cr_assert_float_eq(s.pts[0].meas[VM_TTFT], 381.6, 1e-9);
  cr_assert_float_eq(s.pts[0].meas[VM_TPUT], 20556.4, 1e-9);
  cr_assert(strstr(s.pts[0].skip, "input-length"), "%s", s.pts[0].skip);
  cr_assert_str_eq(s.pts[0].where, "f.json:3");
  vset_free(&s);
  vset_init(&s);
  const char *bad = "[\n {\"kind\": \"mlperf_result\", \"conditions\": {\"system\": \"X\", \"scenario\": \"Offline\"},\n"
                    "  \"values\": {\"tokens_per_s\": \"fast\"}}\n]\n";
  cr_assert_eq(vdata_parse_mlperf(&s, bad, "f.json", &err), SIM_EINPUT);
  cr_assert(strstr(err.msg, "f.json:2:") && strstr(err.msg, "tokens_per_s"), "%s", err.msg);
  cr_assert_eq(vdata_parse_mlperf(&s, "[\n {\"kind\": 3}\n]", "f.json", &err), SIM_EINPUT);
  cr_assert(strstr(err.msg, "f.json:2:") && strstr(err.msg, "kind"), "%s", err.msg);
  cr_assert_eq(vdata_parse_mlperf(&s, "[{\"kind\": ", "f.json", &err), SIM_EINPUT);
  cr_assert(strstr(err.msg, "invalid JSON"), "%s", err.msg);
  vset_free(&s);
}

/* ---- the user format --------------------------------------------------------------------------- */

Test(validate_read, user_wrapper_reproduces_the_run_it_describes) {
  const char *text = "{\"name\": \"mine\",\n"
                     " \"scenario\": {\"model\": \"llama-3.1-8b\", \"gpu\": \"h200\", \"engine\": \"vllm\",\n"
                     "              \"deployment\": {\"tensor_parallel_size\": 1}},\n"
                     " \"result\": {\"num_prompts\": 3, \"request_rate\": Infinity, \"burstiness\": 1.0,\n"
                     "            \"max_concurrency\": 2, \"completed\": 3, \"total_input_tokens\": 300,\n"
                     "            \"total_output_tokens\": 30, \"input_lens\": [100, 90, 110],\n"
                     "            \"output_lens\": [10, 10, 10], \"mean_ttft_ms\": 20.5, \"mean_tpot_ms\": 7.5,\n"
                     "            \"output_throughput\": 99.0}}\n";
  vset s;
  vset_init(&s);
  sim_err err = {0, ""};
  cr_assert_eq(vdata_parse_user(&s, text, "u.json", &err), 0, "%s", err.msg);
  cr_assert_eq(s.n, 1);
  const vpoint *p = &s.pts[0];
  cr_assert_str_eq(p->id, "user/mine");
  cr_assert_eq(p->shape, VSHAPE_OPEN);
  cr_assert(isinf(p->request_rate), "Infinity is vLLM's inf");
  cr_assert_eq(p->concurrency, 2);
  cr_assert_eq(p->num_prompts, 3);
  cr_assert_eq(p->n_lens, 3);
  cr_assert_eq(p->in_lens[1], 90);
  cr_assert_eq(p->isl, 100);
  cr_assert_eq(p->osl, 10);
  cr_assert_float_eq(p->meas[VM_TPOT], 7.5, 1e-12);
  scenario sc;
  vpoint_scenario(p, NULL, &sc);
  cr_assert_eq(sc.max_concurrency, 2);
  cr_assert_eq(sc.gen.num_prompts, 3);
  cr_assert_str_eq(sc.model, "llama-3.1-8b");
  vset_free(&s);
  vset_init(&s);
  const char *no_np = "{\"scenario\": {}, \"result\": {\"mean_ttft_ms\": 5}}";
  cr_assert_eq(vdata_parse_user(&s, no_np, "u.json", &err), SIM_EINPUT);
  cr_assert(strstr(err.msg, "u.json:1:") && strstr(err.msg, "result.num_prompts"), "%s", err.msg);
  const char *bad_key = "[\n {\"scenario\": {}, \"result\": {}, \"extra\": 1}\n]";
  cr_assert_eq(vdata_parse_user(&s, bad_key, "u.json", &err), SIM_EINPUT);
  cr_assert(strstr(err.msg, "u.json:2:") && strstr(err.msg, "extra"), "%s", err.msg);
  const char *bad_sc = "{\"scenario\": {\"deployment\": {\"tensor_parallel_size\": \"two\"}}, \"result\": "
                       "{\"num_prompts\": 1, \"mean_ttft_ms\": 5, \"completed\": 1, \"total_input_tokens\": 1, "
                       "\"total_output_tokens\": 1}}";
  cr_assert_eq(vdata_parse_user(&s, bad_sc, "u.json", &err), SIM_EINPUT);
  cr_assert(strstr(err.msg, "u.json:1: scenario") && strstr(err.msg, "tensor_parallel_size"), "%s", err.msg);
  const char *bad_gpu = "{\"scenario\": {\"gpu\": \"h900\"}, \"result\": {\"num_prompts\": 1, \"mean_ttft_ms\": 5}}";
  cr_assert_eq(vdata_parse_user(&s, bad_gpu, "u.json", &err), SIM_EINPUT);
  cr_assert(strstr(err.msg, "u.json:1: scenario") && strstr(err.msg, "h900"), "%s", err.msg);
  const char *bad_lens = "{\"scenario\": {}, \"result\": {\"num_prompts\": 2, \"input_lens\": [1], "
                         "\"output_lens\": [1, 2], \"mean_ttft_ms\": 5}}";
  cr_assert_eq(vdata_parse_user(&s, bad_lens, "u.json", &err), SIM_EINPUT);
  cr_assert(strstr(err.msg, "result.input_lens"), "%s", err.msg);
  /* mean lengths beyond any model (found by fuzz_validate: 1e51 input tokens overflowed the cast) */
  const char *huge = "{\"scenario\": {\"model\": \"llama-3.1-8b\"}, \"result\": {\"num_prompts\": 10, \"completed\": 10, "
                     "\"total_input_tokens\": 1e51, \"total_output_tokens\": 1000, \"mean_tpot_ms\": 10}}";
  cr_assert_eq(vdata_parse_user(&s, huge, "u.json", &err), SIM_EINPUT);
  cr_assert(strstr(err.msg, "u.json:1:") && strstr(err.msg, "1 to 10,000,000 tokens"), "%s", err.msg);
  vset_free(&s);
}

/* ---- workload shapes -------------------------------------------------------------------------- */

static vpoint *tiny_point(vset *s, vshape shape, uint32_t conc, uint32_t isl, uint32_t osl) {
  vpoint *p = vset_add(s);
  p->shape = shape;
  snprintf(p->id, sizeof p->id, "test/%d/%u", (int)shape, conc);
  snprintf(p->model, sizeof p->model, "llama-3.1-8b");
  snprintf(p->gpu, sizeof p->gpu, "h200");
  p->tp = 1;
  p->isl = isl, p->osl = osl, p->concurrency = conc;
  p->num_prompts = shape == VSHAPE_CLOSED ? 10ull * conc : conc;
  p->meas[VM_TTFT] = p->meas[VM_TPOT] = p->meas[VM_TPUT] = 1.0;
  return p;
}

Test(validate_shape, scenarios_of_the_three_shapes) {
  vset s;
  vset_init(&s);
  voverrides ov;
  memset(&ov, 0, sizeof ov);
  ov.closed_output_spread = 0.02; /* one spread for every engine */
  scenario sc;
  vpoint *c = tiny_point(&s, VSHAPE_CLOSED, 8, 1024, 256);
  snprintf(c->engine, sizeof c->engine, "vllm");
  vpoint_scenario(c, &ov, &sc);
  cr_assert_eq(sc.max_concurrency, 8);
  cr_assert_eq(sc.gen.num_prompts, 80);
  cr_assert(isinf(sc.gen.request_rate), "first wave at t=0");
  cr_assert_eq(sc.deploy.enable_prefix_caching, 0);
  cr_assert_float_eq(sc.gen.input.len, 1024, 0);
  cr_assert_float_eq(sc.gen.input.range_ratio, 0, 0);
  cr_assert_float_eq(sc.gen.output.range_ratio, 0.02, 0, "the closed-loop output spread");
  vpoint_scenario(c, NULL, &sc);
  cr_assert_float_eq(sc.gen.output.range_ratio, vclosed_spread(NULL, "vllm"), 0, "no overrides: the fitted spread");
  vpoint *o = tiny_point(&s, VSHAPE_OFFLINE, 0, 128, 128);
  o->num_prompts = 300;
  snprintf(o->engine, sizeof o->engine, "trtllm");
  vpoint_scenario(o, &ov, &sc);
  cr_assert_eq(sc.max_concurrency, 0, "offline: no client limit");
  cr_assert_eq(sc.gen.num_prompts, 300);
  cr_assert(isinf(sc.gen.request_rate));
  cr_assert_float_eq(sc.gen.output.range_ratio, 0, 0, "offline lengths stay fixed");
  vpoint *b = tiny_point(&s, VSHAPE_STATIC, 16, 2048, 128);
  snprintf(b->engine, sizeof b->engine, "trtllm");
  vpoint_scenario(b, &ov, &sc);
  cr_assert_eq(sc.gen.num_prompts, 16);
  cr_assert_eq(sc.deploy.max_num_seqs, 16);
  cr_assert_geq(sc.deploy.max_num_batched_tokens, 16u * 2048, "the whole batch prefills in one step");
  cr_assert_eq(sc.max_concurrency, 0);
  vset_free(&s);
}

/* The closed-loop output spread: fitted per engine, overridden per engine
 * (--param E.closed_loop_output_spread, the fit) or for all (--output-spread). */
Test(validate_shape, closed_loop_spread_resolution) {
  vset s;
  vset_init(&s);
  voverrides ov;
  memset(&ov, 0, sizeof ov);
  ov.closed_output_spread = NAN;
  scenario sc;
  vpoint *v = tiny_point(&s, VSHAPE_CLOSED, 8, 1024, 1024);
  snprintf(v->engine, sizeof v->engine, "vllm");
  vpoint *t = tiny_point(&s, VSHAPE_CLOSED, 8, 1024, 1024);
  snprintf(t->engine, sizeof t->engine, "trtllm");
  vpoint *u = tiny_point(&s, VSHAPE_CLOSED, 8, 1024, 1024);
  snprintf(u->engine, sizeof u->engine, "my-engine");
  double dv = vclosed_spread(NULL, "vllm"), dt = vclosed_spread(NULL, "trtllm");
  cr_assert(dv > 0 && dv < 0.5 && dt > 0 && dt < 0.5, "fitted defaults %g %g", dv, dt);
  cr_assert_float_eq(vclosed_spread(NULL, "my-engine"), 0, 0, "no fitted spread: fixed lengths");
  vpoint_scenario(v, &ov, &sc);
  cr_assert_float_eq(sc.gen.output.range_ratio, dv, 0);
  vpoint_scenario(u, &ov, &sc);
  cr_assert_float_eq(sc.gen.output.range_ratio, 0, 0);
  /* a per-engine value touches that engine only, and no engine_cfg field */
  ov.n = 1;
  snprintf(ov.e[0].engine, sizeof ov.e[0].engine, "vllm");
  for (int k = 0; k < VP_COUNT; k++) ov.e[0].v[k] = NAN;
  ov.e[0].v[VP_CLOSED_OUTPUT_SPREAD] = 0.125;
  vpoint_scenario(v, &ov, &sc);
  cr_assert_float_eq(sc.gen.output.range_ratio, 0.125, 0);
  vpoint_scenario(t, &ov, &sc);
  cr_assert_float_eq(sc.gen.output.range_ratio, dt, 0);
  engine_cfg e1, e2;
  sim_err err = {0, ""};
  cr_assert_eq(cfg_engine_load(&e1, "vllm", &err), 0, "%s", err.msg);
  e2 = e1;
  vparam_apply(&ov, &e2);
  for (int k = 0; k < VP_CLOSED_OUTPUT_SPREAD; k++)
    cr_assert_float_eq(vparam_get(&e1, (vparam)k), vparam_get(&e2, (vparam)k), 0, "%s changed",
                       vparam_name((vparam)k));
  cr_assert_float_eq(vparam_get(&e1, VP_CLOSED_OUTPUT_SPREAD), dv, 0);
  /* the global value wins over both */
  ov.closed_output_spread = 0;
  vpoint_scenario(v, &ov, &sc);
  cr_assert_float_eq(sc.gen.output.range_ratio, 0, 0);
  vpoint_scenario(t, &ov, &sc);
  cr_assert_float_eq(sc.gen.output.range_ratio, 0, 0);
  vpoint *o = tiny_point(&s, VSHAPE_OFFLINE, 0, 128, 128);
  snprintf(o->engine, sizeof o->engine, "vllm");
  ov.closed_output_spread = 0.3;
  vpoint_scenario(o, &ov, &sc);
  cr_assert_float_eq(sc.gen.output.range_ratio, 0, 0, "only closed-loop points are spread");
  vset_free(&s);
}

/* Builds the cost model vrun uses for a tiny static point: TensorRT-LLM 0.9
 * facts (no overlap, no CUDA graphs), FP16, the batch as the step budget. */
/* The measured tables a point's run uses (--profile auto), attached to c. */
static void attach_auto(cost_model *c, const gpu_cfg *g, const engine_cfg *e) {
  static prof_sel ps; /* the profiles stay in the process-wide cache */
  sim_err err = {0, ""};
  cr_assert_eq(profsel_choose(&ps, "auto", g, e, &err), 0, "%s", err.msg);
  profsel_attach(&ps, c);
}

static void static_cost(cost_model *c, model_cfg *m, gpu_cfg *g, engine_cfg *e, deploy_cfg *d, uint32_t B,
                        uint32_t isl, uint32_t osl) {
  sim_err err = {0, ""};
  cr_assert_eq(cfg_model_load(m, "llama-3.1-8b", &err), 0, "%s", err.msg);
  cr_assert_eq(cfg_gpu_load(g, "h200", &err), 0, "%s", err.msg);
  cr_assert_eq(cfg_engine_load(e, "trtllm", &err), 0, "%s", err.msg);
  e->cuda_graph_max_batch = 0;
  deploy_init(d);
  d->async_scheduling = 0;
  d->tp = 1;
  d->act_dtype = d->weight_dtype = d->kv_dtype = DT_FP16;
  d->act_dtype_set = d->weight_dtype_set = d->kv_dtype_set = true;
  d->max_num_seqs = B;
  d->max_num_batched_tokens = B * isl;
  d->max_model_len = isl + osl;
  d->gpu_memory_utilization = 1.0;
  d->enable_prefix_caching = 0;
  cr_assert_eq(cfg_resolve(d, m, g, e, &err), 0, "%s", err.msg);
  cr_assert_eq(cost_init(c, m, g, e, d, &err), 0, "%s", err.msg);
  attach_auto(c, g, e);
}

/* A step alone on a replica without async scheduling: its host work, then
 * its GPU time (the cluster rounds each up to whole ns). */
static double step_ms(cost_model *c, const batch_desc *b) {
  step_cost sc;
  cost_step(c, b, &sc);
  return (ceil(sc.cpu_ns) + ceil(sc.gpu_ns)) / 1e6;
}

Test(validate_shape, static_batch_matches_the_cost_model_by_hand) {
  const uint32_t B = 4, ISL = 64, OSL = 8;
  vset s;
  vset_init(&s);
  vpoint *p = tiny_point(&s, VSHAPE_STATIC, B, ISL, OSL);
  p->src = VSRC_STATIC_BATCH;
  snprintf(p->engine, sizeof p->engine, "trtllm");
  p->act_dtype = p->weight_dtype = p->kv_dtype = DT_FP16;
  sim_err err = {0, ""};
  cr_assert_eq(vrun_point(p, NULL, &err), 0);
  cr_assert(p->ran, "failed: %s", p->fail);
  /* by hand: one step prefills the four prompts, then OSL - 1 decode steps */
  model_cfg m;
  gpu_cfg g;
  engine_cfg e;
  deploy_cfg d;
  cost_model c;
  static_cost(&c, &m, &g, &e, &d, B, ISL, OSL);
  prefill_chunk ch[4] = {{ISL, 0}, {ISL, 0}, {ISL, 0}, {ISL, 0}};
  batch_desc pre = {B * ISL, B, 0, 0, B, B, ch, 0, 0, 0, 0, 0};
  double ttft = step_ms(&c, &pre), dec = 0;
  for (uint32_t j = 1; j < OSL; j++) {
    batch_desc bd = {B, B, B, (uint64_t)B * (ISL + j), B, 0, NULL, 0, 0, 0, 0, 0};
    dec += step_ms(&c, &bd);
  }
  cr_assert_float_eq(p->pred[VM_TTFT], ttft, 1e-6, "ttft %.6f vs %.6f", p->pred[VM_TTFT], ttft);
  cr_assert_float_eq(p->pred_ttft_min_ms, p->pred_ttft_max_ms, 1e-9, "the whole batch gets its first token together");
  cr_assert_float_eq(p->pred[VM_TPOT], dec / (OSL - 1), 1e-6, "tpot %.6f vs %.6f", p->pred[VM_TPOT],
                     dec / (OSL - 1));
  cr_assert_float_eq(p->pred[VM_TPUT], B * OSL / ((ttft + dec) / 1e3), 1e-6);
  cr_assert_eq(p->pred_completed, B);
  cr_assert_eq(p->pred_peak_in_system, B);
  cost_deinit(&c);
  vset_free(&s);
}

Test(validate_shape, closed_loop_of_one_prefills_each_request_alone) {
  const uint32_t ISL = 128, OSL = 4;
  vset s;
  vset_init(&s);
  vpoint *p = tiny_point(&s, VSHAPE_CLOSED, 1, ISL, OSL);
  p->src = VSRC_AIC; /* vLLM 0.11.0 as measured there: no async scheduling, utilization 0.9 */
  snprintf(p->engine, sizeof p->engine, "vllm");
  snprintf(p->engine_version, sizeof p->engine_version, "0.11.0");
  sim_err err = {0, ""};
  voverrides fixed; /* strictly OSL tokens each, for the hand check */
  memset(&fixed, 0, sizeof fixed);
  fixed.closed_output_spread = 0;
  cr_assert_eq(vrun_point(p, &fixed, &err), 0);
  cr_assert(p->ran, "failed: %s", p->fail);
  cr_assert_eq(p->pred_completed, 10, "10 x concurrency requests");
  cr_assert_eq(p->pred_peak_in_system, 1);
  model_cfg m;
  gpu_cfg g;
  engine_cfg e;
  cr_assert_eq(cfg_model_load(&m, "llama-3.1-8b", &err), 0);
  cr_assert_eq(cfg_gpu_load(&g, "h200", &err), 0);
  cr_assert_eq(cfg_engine_load(&e, "vllm@0.11.0", &err), 0);
  cr_assert_not(e.async_scheduling);
  cr_assert_float_eq(e.gpu_memory_utilization, 0.9, 1e-12);
  deploy_cfg d;
  deploy_init(&d);
  d.tp = 1;
  d.enable_prefix_caching = 0;
  d.max_model_len = ISL + OSL;
  cr_assert_eq(cfg_resolve(&d, &m, &g, &e, &err), 0, "%s", err.msg);
  cost_model c;
  cr_assert_eq(cost_init(&c, &m, &g, &e, &d, &err), 0);
  attach_auto(&c, &g, &e);
  prefill_chunk ch = {ISL, 0};
  batch_desc pre = {ISL, 1, 0, 0, 1, 1, &ch, 0, 0, 0, 0, 0};
  double ttft = step_ms(&c, &pre) + llround(e.frontend_latency_ns) / 1e6, dec = 0; /* the HTTP frontend, then the prefill */
  for (uint32_t j = 1; j < OSL; j++) {
    batch_desc bd = {1, 1, 1, ISL + j, 1, 0, NULL, 0, 0, 0, 0, 0};
    dec += step_ms(&c, &bd);
  }
  /* the engine idles when the lone request finishes, so each next one starts at once */
  cr_assert_float_eq(p->pred_ttft_min_ms, ttft, 1e-6, "min %.6f vs %.6f", p->pred_ttft_min_ms, ttft);
  cr_assert_float_eq(p->pred_ttft_max_ms, ttft, 1e-6, "max %.6f vs %.6f", p->pred_ttft_max_ms, ttft);
  cr_assert_float_eq(p->pred[VM_TPOT], dec / (OSL - 1), 1e-6);
  cr_assert_float_eq(p->pred[VM_TPUT], 1.0 * OSL / ((ttft + dec) / 1e3), 1e-6, "derived C x osl / E2EL");
  cost_deinit(&c);
  vset_free(&s);
}

Test(validate_shape, closed_loop_holds_c_requests_and_offline_sends_all_at_once) {
  vset s;
  vset_init(&s);
  vpoint *c = tiny_point(&s, VSHAPE_CLOSED, 3, 64, 16);
  c->src = VSRC_AIC;
  snprintf(c->engine, sizeof c->engine, "vllm");
  vpoint *one = tiny_point(&s, VSHAPE_CLOSED, 1, 64, 16);
  one->src = VSRC_AIC;
  snprintf(one->engine, sizeof one->engine, "vllm");
  vpoint *o = tiny_point(&s, VSHAPE_OFFLINE, 0, 64, 16);
  o->src = VSRC_TRT_OVERVIEW;
  o->num_prompts = 7;
  snprintf(o->engine, sizeof o->engine, "trtllm");
  voverrides ov;
  memset(&ov, 0, sizeof ov);
  sim_err err = {0, ""};
  cr_assert_eq(vrun_all(&s, &ov, false, NULL, &err), 0, "%s", err.msg);
  cr_assert(c->ran && o->ran, "%s %s", c->fail, o->fail);
  cr_assert_eq(c->pred_completed, 30);
  cr_assert_eq(c->pred_peak_in_system, 3, "the client holds at most C requests");
  cr_assert_eq(o->pred_completed, 7);
  cr_assert_eq(o->pred_peak_in_system, 7, "offline: every request is in the system at t=0");
  /* the three clients' first requests arrive together and prefill in one step, and
   * their successors keep that phase (fixed lengths): every TTFT is one three-prompt
   * step, longer than a lone prompt's */
  cr_assert_float_eq(c->pred_ttft_min_ms, c->pred_ttft_max_ms, 1e-9);
  cr_assert_gt(c->pred_ttft_min_ms, one->pred_ttft_max_ms);
  vset_free(&s);
}

Test(validate_shape, unrepresentable_deployment_fails_with_a_reason) {
  vset s;
  vset_init(&s);
  vpoint *p = tiny_point(&s, VSHAPE_CLOSED, 4, 1024, 128);
  snprintf(p->model, sizeof p->model, "llama-3.1-70b");
  snprintf(p->gpu, sizeof p->gpu, "l40s");
  snprintf(p->engine, sizeof p->engine, "vllm");
  p->act_dtype = p->weight_dtype = p->kv_dtype = DT_BF16; /* 141 GB of weights on one 48 GB GPU */
  sim_err err = {0, ""};
  cr_assert_eq(vrun_point(p, NULL, &err), 0);
  cr_assert(!p->ran);
  cr_assert(strstr(p->fail, "weights") && strstr(p->fail, "exceed"), "%s", p->fail);
  cr_assert(isnan(verr_pct(p, VM_TTFT)), "a failed point has no error");
  vset_free(&s);
}

/* ---- statistics, cliffs, training subset --------------------------------------------------------- */

static vpoint *stat_point(vset *s, const char *group, uint32_t conc, double meas, double pred) {
  vpoint *p = vset_add(s);
  p->shape = VSHAPE_CLOSED;
  p->ran = true;
  snprintf(p->group, sizeof p->group, "%s", group);
  snprintf(p->id, sizeof p->id, "%s/c%u", group, conc);
  p->concurrency = conc;
  p->meas[VM_TTFT] = meas;
  p->pred[VM_TTFT] = pred;
  return p;
}

Test(validate_stats, median_mean_and_worst) {
  vset s;
  vset_init(&s);
  stat_point(&s, "a", 4, 100, 110);  /* +10% */
  stat_point(&s, "a", 8, 100, 80);   /* -20% */
  stat_point(&s, "a", 16, 200, 230); /* +15% */
  vpoint *skip = stat_point(&s, "a", 32, 100, 1000);
  snprintf(skip->skip, sizeof skip->skip, "not representable");
  vpoint *fail = stat_point(&s, "a", 64, 100, 1000);
  snprintf(fail->fail, sizeof fail->fail, "plan refused");
  verr_stats st;
  verr_summarize(&s, VM_TTFT, NULL, NULL, &st);
  cr_assert_eq(st.n, 3, "skipped and failed points have no error");
  cr_assert_float_eq(st.median_abs, 15.0, 1e-9);
  cr_assert_float_eq(st.mean_abs, 15.0, 1e-9);
  cr_assert_float_eq(st.median_signed, 10.0, 1e-9);
  cr_assert_float_eq(st.worst_abs, 20.0, 1e-9);
  cr_assert_eq(st.worst, &s.pts[1]);
  verr_summarize(&s, VM_TPOT, NULL, NULL, &st);
  cr_assert_eq(st.n, 0);
  vset_free(&s);
}

Test(validate_stats, cliff_is_a_jump_from_the_next_lower_concurrency) {
  vset s;
  vset_init(&s);
  /* measured: gradual growth, then a jump at c32 that stays; predicted: jump at c16 */
  stat_point(&s, "a", 4, 100, 100);
  stat_point(&s, "a", 8, 150, 150);
  stat_point(&s, "a", 16, 400, 900); /* measured 2.7x, predicted 6x: false positive */
  stat_point(&s, "a", 32, 9000, 8000);
  stat_point(&s, "a", 64, 12000, 9000); /* 1.3x from c32 but already on the cliff */
  stat_point(&s, "b", 4, 100, 100);    /* another series, never on the cliff */
  stat_point(&s, "b", 8, 400, 400);
  vcliff cl;
  uint8_t side[7];
  vcliff_count(&s, NULL, NULL, &cl, side);
  cr_assert_eq(cl.unclassified, 2, "the lowest concurrency of each series");
  cr_assert_eq(cl.tp, 2);
  cr_assert_eq(cl.fp, 1);
  cr_assert_eq(cl.fn, 0);
  cr_assert_eq(cl.tn, 2);
  cr_assert_eq(side[2], 4 | 2);
  cr_assert_eq(side[4], 4 | 1 | 2);
  vset_free(&s);
}

Test(validate_stats, training_subset_is_every_other_concurrency_of_the_closed_loop_source) {
  vset s;
  vset_init(&s);
  const uint32_t cs[] = {4, 8, 16, 32, 64, 128};
  /* the fitted series: Llama-3.1-70B, vLLM on H100 and TensorRT-LLM on H200 */
  for (size_t i = 0; i < 6; i++) {
    vpoint *p = stat_point(&s, "a", cs[i], 1, 1);
    p->src = VSRC_AIC;
    snprintf(p->model, sizeof p->model, "llama-3.1-70b");
    snprintf(p->engine, sizeof p->engine, i % 2 ? "trtllm" : "vllm");
    snprintf(p->gpu, sizeof p->gpu, i % 2 ? "h200" : "h100-sxm");
  }
  stat_point(&s, "b", 4, 1, 1)->src = VSRC_STATIC_BATCH;
  vpoint *sk = stat_point(&s, "a", 16, 1, 1);
  sk->src = VSRC_AIC;
  snprintf(sk->model, sizeof sk->model, "llama-3.1-70b");
  snprintf(sk->engine, sizeof sk->engine, "vllm");
  snprintf(sk->gpu, sizeof sk->gpu, "h100-sxm");
  snprintf(sk->skip, sizeof sk->skip, "x");
  /* held out: another model, and Llama-3.1-70B on the other GPU of an engine (rows the fit never saw) */
  const char *const other[][3] = {{"llama-3.1-8b", "vllm", "h100-sxm"}, {"llama-3.1-70b", "vllm", "h200"},
                                  {"llama-3.1-70b", "trtllm", "h100-sxm"}};
  for (int i = 0; i < 3; i++) {
    vpoint *p = stat_point(&s, "c", 16, 1, 1);
    p->src = VSRC_AIC;
    snprintf(p->model, sizeof p->model, "%s", other[i][0]);
    snprintf(p->engine, sizeof p->engine, "%s", other[i][1]);
    snprintf(p->gpu, sizeof p->gpu, "%s", other[i][2]);
  }
  vfit_mark_training(&s);
  const bool want[] = {true, false, true, false, true, false, false, false, false, false, false};
  for (size_t i = 0; i < s.n; i++) cr_assert_eq(s.pts[i].train, want[i], "point %zu", i);
  vset_free(&s);
}

Test(validate_stats, data_dir_resolution) {
  char dir[1024];
  sim_err err = {0, ""};
  cr_assert_eq(vdata_find_dir("/nonexistent/validation", dir, sizeof dir, &err), SIM_EINPUT);
  cr_assert(strstr(err.msg, "/nonexistent/validation"), "%s", err.msg);
  cr_assert_eq(vdata_find_dir(SERVESIM_SOURCE_DIR, dir, sizeof dir, &err), 0);
  cr_assert_str_eq(dir, SERVESIM_SOURCE_DIR);
  vset s;
  vset_init(&s);
  cr_assert_eq(vdata_load_dir(&s, SERVESIM_SOURCE_DIR, &err), SIM_EINPUT, "no known file there");
  cr_assert(strstr(err.msg, "no measurements found"), "%s", err.msg);
  vset_free(&s);
}

/* Files are recognized by their content, whatever their names; a directory is
 * searched; what is not a measurement is an error when named, ignored when met
 * in a directory; a bare benchmark result asks for its deployment. */
Test(validate_read, files_are_recognized_by_content) {
  const char *dir = tu_tmpdir();
  char aic[4096], path[1024];
  snprintf(aic, sizeof aic,
           "%sa,silicon_concurrency=8,vllm,0.12.0,meta-llama/Meta-Llama-3.1-8B,b200_sxm,fp8,agg,1000,100,fp8,,8,1,1,1,"
           "1,1" AIC_TAIL ",50.5,7.25\n",
           AIC_FULL_HEADER);
  snprintf(path, sizeof path, "%s/sub/my-runs-2026.csv", dir);
  cr_assert(tu_write_table(path, aic, false));
  snprintf(path, sizeof path, "%s/notes.json", dir);
  cr_assert(tu_write_table(path, "{\"hello\": 1}", false));
  snprintf(path, sizeof path, "%s/README.md", dir);
  cr_assert(tu_write_table(path, "# notes", false));
  vset s;
  vset_init(&s);
  sim_err err = {0, ""};
  cr_assert_eq(vdata_load_path(&s, dir, &err), 0, "%s", err.msg);
  cr_assert_eq(s.n, 1, "the CSV below, whatever its name; the other files ignored");
  cr_assert_str_eq(s.pts[0].gpu, "b200");
  /* the same file named explicitly, under any name */
  snprintf(path, sizeof path, "%s/data.txt", dir);
  cr_assert(tu_write_table(path, aic, false));
  cr_assert_eq(vdata_load_path(&s, path, &err), 0, "%s", err.msg);
  cr_assert_eq(s.n, 2);
  /* named but not a measurement */
  snprintf(path, sizeof path, "%s/notes.json", dir);
  cr_assert_eq(vdata_load_path(&s, path, &err), SIM_EINPUT);
  cr_assert(strstr(err.msg, "notes.json:1: not a measurement file"), "%s", err.msg);
  /* a bare vllm bench serve result */
  snprintf(path, sizeof path, "%s/bench.json", dir);
  cr_assert(tu_write_table(path, "{\"num_prompts\": 10, \"mean_ttft_ms\": 50}", false));
  cr_assert_eq(vdata_load_path(&s, path, &err), SIM_EINPUT);
  cr_assert(strstr(err.msg, "without the deployment it ran on"), "%s", err.msg);
  /* a truncated CSV: file and line */
  snprintf(path, sizeof path, "%s/cut.csv", dir);
  char cut[4096];
  snprintf(cut, sizeof cut, "%sa,silicon_concurrency=8,vllm,0.12.0,m,b200_sxm,fp8,agg,10", AIC_FULL_HEADER);
  cr_assert(tu_write_table(path, cut, false));
  cr_assert_eq(vdata_load_path(&s, path, &err), SIM_EINPUT);
  cr_assert(strstr(err.msg, "cut.csv:2:"), "%s", err.msg);
  snprintf(path, sizeof path, "%s/absent.csv", dir);
  cr_assert_eq(vdata_load_path(&s, path, &err), SIM_EINPUT);
  cr_assert(strstr(err.msg, "absent.csv: no such file or directory"), "%s", err.msg);
  vset_free(&s);
}

/* genai-perf (profile_export_genai_perf.json) and AIPerf (profile_export_aiperf.json,
 * hierarchical llm_metrics) results, wrapped with the deployment: mean TTFT,
 * mean inter-token latency as TPOT, output token throughput, the mean
 * lengths; latencies in any time unit. */
Test(validate_read, genai_perf_and_aiperf_results) {
  const char *gp =
      "{\"name\": \"gp\", \"scenario\": {\"model\": \"meta-llama/Llama-3.1-8B-Instruct\", \"gpu\": \"NVIDIA H100 80GB HBM3\", "
      "\"engine\": \"vllm\"}, \"result\": {"
      "\"time_to_first_token\": {\"unit\": \"ms\", \"avg\": 45.5, \"p99\": 120},"
      "\"inter_token_latency\": {\"unit\": \"ms\", \"avg\": 9.5},"
      "\"output_token_throughput\": {\"unit\": \"tokens/sec\", \"avg\": 2048.5},"
      "\"input_sequence_length\": {\"unit\": \"tokens\", \"avg\": 511.6},"
      "\"output_sequence_length\": {\"unit\": \"tokens\", \"avg\": 128.2},"
      "\"request_count\": {\"unit\": \"requests\", \"avg\": 500},"
      "\"input_config\": {\"concurrency\": 32}}}";
  vset s;
  vset_init(&s);
  sim_err err = {0, ""};
  cr_assert_eq(vdata_parse_user(&s, gp, "gp.json", &err), 0, "%s", err.msg);
  const vpoint *p = &s.pts[0];
  cr_assert_str_eq(p->model, "llama-3.1-8b", "an HF id in the scenario resolves too");
  cr_assert_str_eq(p->gpu, "h100-sxm");
  cr_assert_float_eq(p->meas[VM_TTFT], 45.5, 1e-12);
  cr_assert_float_eq(p->meas[VM_TPOT], 9.5, 1e-12);
  cr_assert_float_eq(p->meas[VM_TPUT], 2048.5, 1e-12);
  cr_assert_eq(p->isl, 512);
  cr_assert_eq(p->osl, 128);
  cr_assert_eq(p->num_prompts, 500);
  cr_assert_eq(p->concurrency, 32);
  cr_assert(isinf(p->request_rate));
  const char *ap =
      "{\"scenario\": {\"model\": \"llama-3.1-8b\", \"gpu\": \"h100-sxm\", \"engine\": \"vllm\", \"workload\": "
      "{\"num_prompts\": 200, \"request_rate\": 4}}, \"result\": {\"llm_metrics\": {"
      "\"time_to_first_token\": {\"unit\": \"s\", \"avg\": 0.05},"
      "\"inter_token_latency\": {\"unit\": \"ms\", \"avg\": 10},"
      "\"input_sequence_length\": {\"unit\": \"tokens\", \"avg\": 1000},"
      "\"output_sequence_length\": {\"unit\": \"tokens\", \"avg\": 100}}}}";
  cr_assert_eq(vdata_parse_user(&s, ap, "ap.json", &err), 0, "%s", err.msg);
  p = &s.pts[1];
  cr_assert_float_eq(p->meas[VM_TTFT], 50, 1e-9, "seconds become ms");
  cr_assert_eq(p->num_prompts, 200, "from the scenario's workload");
  cr_assert_float_eq(p->request_rate, 4, 0);
  cr_assert(isnan(p->meas[VM_TPUT]));
  /* no lengths anywhere */
  const char *bad =
      "{\"scenario\": {\"model\": \"llama-3.1-8b\", \"gpu\": \"h100-sxm\", \"engine\": \"vllm\"}, \"result\": "
      "{\"time_to_first_token\": {\"unit\": \"ms\", \"avg\": 50}, \"request_count\": 10}}";
  cr_assert_eq(vdata_parse_user(&s, bad, "bad.json", &err), SIM_EINPUT);
  cr_assert(strstr(err.msg, "bad.json:1: result: no input_sequence_length"), "%s", err.msg);
  const char *unit =
      "{\"scenario\": {\"model\": \"llama-3.1-8b\", \"gpu\": \"h100-sxm\", \"engine\": \"vllm\"}, \"result\": "
      "{\"time_to_first_token\": {\"unit\": \"fortnights\", \"avg\": 50}, \"request_count\": 10}}";
  cr_assert_eq(vdata_parse_user(&s, unit, "u.json", &err), SIM_EINPUT);
  cr_assert(strstr(err.msg, "time_to_first_token.unit: expected ms, s, us or ns, got 'fortnights'"), "%s", err.msg);
  vset_free(&s);
}

/* ---- the fit ------------------------------------------------------------------------------------ */

Test(validate_fit, search_recovers_lower_error_and_is_deterministic) {
  /* "measurements" made by the model itself with a weight-streaming efficiency of
   * 0.55 instead of the starting 0.80: the search must lower the objective, stay
   * in bounds and give the same values twice */
  vset s;
  vset_init(&s);
  const uint32_t cs[] = {4, 8, 16};
  for (int i = 0; i < 3; i++) {
    vpoint *p = tiny_point(&s, VSHAPE_CLOSED, cs[i], 256, 24);
    p->src = VSRC_AIC;
    snprintf(p->engine, sizeof p->engine, "vllm");
    snprintf(p->group, sizeof p->group, "g");
  }
  /* the training subset as vfit_mark_training would mark a fitted series (its own test checks the rule) */
  s.pts[0].train = s.pts[2].train = true;
  voverrides truth;
  memset(&truth, 0, sizeof truth);
  truth.n = 1;
  snprintf(truth.e[0].engine, sizeof truth.e[0].engine, "vllm");
  for (int k = 0; k < VP_COUNT; k++) truth.e[0].v[k] = NAN;
  truth.e[0].v[VP_GEMM_MEMORY_EFF] = 0.55;
  sim_err err = {0, ""};
  cr_assert_eq(vrun_all(&s, &truth, false, NULL, &err), 0, "%s", err.msg);
  for (size_t i = 0; i < s.n; i++) {
    cr_assert(s.pts[i].ran, "%s", s.pts[i].fail);
    for (int m = 0; m < VM_COUNT; m++) s.pts[i].meas[m] = s.pts[i].pred[m];
  }
  /* the starting point: fit.c's vLLM priors */
  voverrides start;
  memset(&start, 0, sizeof start);
  start.n = 1;
  snprintf(start.e[0].engine, sizeof start.e[0].engine, "vllm");
  const double prior[VP_COUNT] = {300, 3, 0.70, 0.80, 3, 0.50, 0.70, NAN, 0.80, 10, 1536};
  for (int k = 0; k < VP_COUNT; k++) start.e[0].v[k] = prior[k];
  double f0 = vfit_objective(&s, &start, "vllm", &err);
  cr_assert(f0 > 0.05, "the starting point misses the synthetic data (%g)", f0);
  voverrides a, b;
  memset(&a, 0, sizeof a);
  memset(&b, 0, sizeof b);
  vfit_opts o = {2, false, NULL};
  cr_assert_eq(vfit_engine(&s, &a, "vllm", &o, &err), 0, "%s", err.msg);
  cr_assert_eq(vfit_engine(&s, &b, "vllm", &o, &err), 0, "%s", err.msg);
  double f1 = vfit_objective(&s, &a, "vllm", &err);
  cr_assert_lt(f1, f0 / 3, "objective %g -> %g", f0, f1);
  cr_assert_eq(a.n, 1);
  for (int k = 0; k < VP_COUNT; k++) {
    if (isnan(a.e[0].v[k])) continue;
    cr_assert_eq(a.e[0].v[k], b.e[0].v[k], "%s differs between two fits", vparam_name((vparam)k));
  }
  cr_assert_leq(a.e[0].v[VP_GEMM_COMPUTE_EFF], 0.80, "bounds hold");
  cr_assert_geq(a.e[0].v[VP_GEMM_MEMORY_EFF], 0.40);
  vset_free(&s);
}

Test(validate_shape, burst_on_several_replicas_completes) {
  /* simultaneous arrivals on idle replicas: each replica's wake must run once
   * the burst is queued, without waiting for the others' wakes */
  const char *text = "{\"name\": \"two\",\n"
                     " \"scenario\": {\"model\": \"llama-3.1-8b\", \"gpu\": \"h200\", \"engine\": \"vllm\",\n"
                     "              \"deployment\": {\"tensor_parallel_size\": 1, \"replicas\": 3}},\n"
                     " \"result\": {\"num_prompts\": 12, \"request_rate\": \"inf\", \"completed\": 12,\n"
                     "            \"total_input_tokens\": 1536, \"total_output_tokens\": 96, \"mean_tpot_ms\": 5}}\n";
  vset s;
  vset_init(&s);
  sim_err err = {0, ""};
  cr_assert_eq(vdata_parse_user(&s, text, "u.json", &err), 0, "%s", err.msg);
  cr_assert_eq(vrun_point(&s.pts[0], NULL, &err), 0);
  cr_assert(s.pts[0].ran, "%s", s.pts[0].fail);
  cr_assert_eq(s.pts[0].pred_completed, 12);
  cr_assert_eq(s.pts[0].pred_peak_in_system, 12);
  /* round robin: 4 prompts per replica, prefilled together in each replica's first step */
  cr_assert_float_eq(s.pts[0].pred_ttft_min_ms, s.pts[0].pred_ttft_max_ms, 1e-9);
  vset_free(&s);
}
