/* test_engver_sglang.c: SGLang's defaults by GPU memory, TP and version (config/engver_sglang.c) against the
 * values its server_args.py gives (docs/SGLANG.md 1.2-1.3, commits e0ab167db = v0.5.1.post1 and 1efc33c64 =
 * v0.5.9). GPU memory as SGLang reads it (nvidia-smi MiB): H100 SXM 81559, H200 143771 (configs/gpus). */
#include <criterion/criterion.h>

#include "config/cfg.h"
#include "config/engver.h"

static engine_cfg load_engine(const char *name) {
  engine_cfg e;
  sim_err err = {0, ""};
  cr_assert_eq(cfg_engine_load(&e, name, &err), SIM_OK, "%s: %s", name, err.msg);
  return e;
}

static gpu_cfg load_gpu(const char *name) {
  gpu_cfg g;
  sim_err err = {0, ""};
  cr_assert_eq(cfg_gpu_load(&g, name, &err), SIM_OK, "%s: %s", name, err.msg);
  return g;
}

Test(engver_sglang, engine_file_matches_its_version) {
  engine_cfg e = load_engine("sglang");
  sim_err err = {0, ""};
  cr_assert_eq(engver_check(&e, &err), SIM_OK, "%s", err.msg);
  cr_assert_eq(e.admission, ADMIT_TOKEN_RATIO);
  cr_assert_eq(e.block_size, 1u, "server_args _handle_page_size: page_size None -> 1");
  cr_assert_eq(e.max_prefill_tokens, 16384u, "server_args.py max_prefill_tokens default");
  cr_assert(cfg_engine_has_alias(&e, "SGLang"));
  /* v0.5.14 prefill piecewise graph (cuda_graph_config.py), decode-only before */
  engine_cfg e14 = load_engine("sglang@0.5.14");
  cr_assert_eq(e14.graph_mode, GRAPH_FULL_AND_PIECEWISE);
  cr_assert_eq(e.graph_mode, GRAPH_DECODE_ONLY);
}

/* _handle_gpu_memory_settings: chunked_prefill_size 8192 on H100 and H200 in every version; 4096 on a 40-60 GiB
 * GPU (L40S 46068 MiB) from v0.5.6 on, 8192 under v0.5.1.post1's "< 160 GiB" rule; 16384 from 160 GiB (B200). */
Test(engver_sglang, chunked_prefill_size_by_gpu_memory) {
  static const struct {
    const char *gpu, *engine;
    uint32_t chunk;
  } cases[] = {{"h100-sxm", "sglang", 8192},          {"h200", "sglang", 8192},
               {"l40s", "sglang", 4096},              {"l40s", "sglang@0.5.1.post1", 8192},
               {"b200", "sglang", 16384},             {"h200", "sglang@0.5.1.post1", 8192}};
  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
    engine_cfg e = load_engine(cases[i].engine);
    gpu_cfg g = load_gpu(cases[i].gpu);
    uint32_t t, s;
    engver_batch_defaults(&e, &g, &t, &s);
    cr_assert_eq(t, cases[i].chunk, "%s on %s: %u", cases[i].engine, cases[i].gpu, t);
  }
}

/* cuda_graph_max_bs: 256 at TP < 4 and 512 at TP >= 4 on H100/H200 (v0.5.6.post2 .. v0.5.9); v0.5.1.post1's
 * capture list ends at 160 on H100 and 256 on H200 (> 90 GiB) whatever the TP. Capture list (v0.5.9
 * _generate_cuda_graph_batch_sizes): [1, 2, 4, 8, 12] + range(16, 257, 8) + range(272, 512, 16) +
 * range(512, max + 1, 32): 5 + 31 + 15 + 1 = 52 sizes up to 512. */
Test(engver_sglang, cuda_graph_sizes) {
  engine_cfg e = load_engine("sglang"), old = load_engine("sglang@0.5.1.post1");
  gpu_cfg h100 = load_gpu("h100-sxm"), h200 = load_gpu("h200");
  cr_assert_eq(engver_sglang_graph_max_bs(&e, &h100, 1), 256u);
  cr_assert_eq(engver_sglang_graph_max_bs(&e, &h100, 4), 512u);
  cr_assert_eq(engver_sglang_graph_max_bs(&e, &h200, 2), 256u);
  cr_assert_eq(engver_sglang_graph_max_bs(&old, &h100, 8), 160u);
  cr_assert_eq(engver_sglang_graph_max_bs(&old, &h200, 1), 256u);
  uint32_t s[128];
  uint32_t n = engver_graph_sizes_on(&e, &h200, 8, 2048, 8192, s, 128);
  cr_assert_eq(n, 52u);
  cr_assert_eq(s[4], 12u);
  cr_assert_eq(s[5], 16u);
  cr_assert_eq(s[35], 256u);
  cr_assert_eq(s[36], 272u);
  cr_assert_eq(s[50], 496u);
  cr_assert_eq(s[51], 512u);
  n = engver_graph_sizes_on(&old, &h100, 1, 2048, 8192, s, 128); /* [1, 2, 4, 8] + range(16, 161, 8) */
  cr_assert_eq(n, 4u + 19u);
  cr_assert_eq(s[n - 1], 160u);
}

/* mem_fraction_static (docs/SGLANG.md 1.3 table, computed from the formulas):
 *   v0.5.9: reserved = 512 + 8192 x 1.5 + max_bs x 2 + tp / 8 x 1024 MiB:
 *     H100 TP1 13440 -> 0.835, H100 TP8 14848 -> 0.818, H200 TP1 -> 0.907, H200 TP4 14336 -> 0.900;
 *   v0.5.1.post1: (9.5 + tp / 2) GiB on H100 (TP1 -> 0.874), (12 + tp / 2) GiB on H200 (TP8 16384 -> 0.886). */
Test(engver_sglang, mem_fraction_static) {
  engine_cfg e = load_engine("sglang"), old = load_engine("sglang@0.5.1.post1");
  gpu_cfg h100 = load_gpu("h100-sxm"), h200 = load_gpu("h200");
  cr_assert_float_eq(engver_mem_fraction_static(&e, &h100, 1, 1, 1, 8192), 0.835, 1e-9);
  cr_assert_float_eq(engver_mem_fraction_static(&e, &h100, 8, 1, 1, 8192), 0.818, 1e-9);
  cr_assert_float_eq(engver_mem_fraction_static(&e, &h200, 1, 1, 1, 8192), 0.907, 1e-9);
  cr_assert_float_eq(engver_mem_fraction_static(&e, &h200, 4, 1, 1, 8192), 0.900, 1e-9);
  cr_assert_float_eq(engver_mem_fraction_static(&old, &h100, 1, 1, 1, 8192), 0.874, 1e-9);
  cr_assert_float_eq(engver_mem_fraction_static(&old, &h200, 8, 1, 1, 8192), 0.886, 1e-9);
  /* DP attention, tp_size 8 over dp 8 on H200 (v0.5.9): chunk 8192 // 8 = 1024 -> max(1024, 2048) x 1.5,
   * reserved = 512 + 3072 + 512 x 2 + 1024 + 512 x 8 x 3 + 512 x 8 x 1.5 = 24064 MiB -> 0.833;
   * conservativeness 1 x 0.3 */
  cr_assert_float_eq(engver_mem_fraction_static(&e, &h200, 8, 1, 8, 1024), 0.833, 1e-9);
  cr_assert_float_eq(engver_sglang_conservativeness(&e, 8), 0.3, 1e-12);
  cr_assert_float_eq(engver_sglang_conservativeness(&e, 1), 1.0, 1e-12);
}

/* cfg_resolve: unset gpu_memory_utilization becomes the formula's value, a given one stays; page size 1 is
 * accepted for SGLang only. */
Test(engver_sglang, resolve_fills_fraction_and_page_size) {
  engine_cfg e = load_engine("sglang"), v = load_engine("vllm");
  gpu_cfg h100 = load_gpu("h100-sxm");
  model_cfg m;
  sim_err err = {0, ""};
  cr_assert_eq(cfg_model_load(&m, "llama-3.1-8b", &err), SIM_OK, "%s", err.msg);
  deploy_cfg d;
  deploy_init(&d);
  cr_assert_eq(cfg_resolve(&d, &m, &h100, &e, &err), SIM_OK, "%s", err.msg);
  cr_assert_float_eq(d.gpu_memory_utilization, 0.835, 1e-9);
  cr_assert_eq(d.block_size, 1u);
  cr_assert_eq(d.max_num_batched_tokens, 8192u);
  deploy_init(&d);
  d.gpu_memory_utilization = 0.8;
  cr_assert_eq(cfg_resolve(&d, &m, &h100, &e, &err), SIM_OK, "%s", err.msg);
  cr_assert_float_eq(d.gpu_memory_utilization, 0.8, 1e-12);
  deploy_init(&d);
  d.dp = 2; /* DP attention: chunked_prefill_size 8192 // 2 */
  cr_assert_eq(cfg_resolve(&d, &m, &h100, &e, &err), SIM_OK, "%s", err.msg);
  cr_assert_eq(d.max_num_batched_tokens, 4096u);
  deploy_init(&d);
  d.block_size = 1;
  cr_assert_eq(cfg_resolve(&d, &m, &h100, &v, &err), SIM_EINPUT);
  cr_assert(strstr(err.msg, "block_size 1") != NULL, "%s", err.msg);
}
