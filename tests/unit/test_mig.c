/* test_mig.c: MIG profiles in GPU files and slices as GPUs: the slice
 * arithmetic (SMs and peaks N/7; memory, L2 and bandwidth M/8; no NVLink;
 * price), the profile tables of the bundled GPUs, parallelism across slices
 * refused, and clear errors for bad names and bad "mig" sections. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "config/cfg.h"
#include "config/mig.h"

#define MIB (1024.0 * 1024.0)

static void has(const sim_err *e, const char *needle) {
  cr_assert(strstr(e->msg, needle) != NULL, "expected '%s' in: %s", needle, e->msg);
}

Test(mig, bundled_profile_tables) {
  static const struct {
    const char *gpu, *profile;
    uint32_t n, m, max;
  } want[] = {
      {"h200", "1g.18gb", 1, 1, 7},       {"h200", "1g.35gb", 1, 2, 4},   {"h200", "2g.35gb", 2, 2, 3},
      {"h200", "3g.71gb", 3, 4, 2},       {"h200", "4g.71gb", 4, 4, 1},   {"h200", "7g.141gb", 7, 8, 1},
      {"h200", "1g.18gb+me", 1, 1, 1},    {"h100-sxm", "1g.10gb", 1, 1, 7}, {"h100-sxm", "3g.40gb", 3, 4, 2},
      {"a100-sxm-80gb", "7g.80gb", 7, 8, 1}, {"b200", "1g.23gb", 1, 1, 7}, {"b200", "3g.90gb", 3, 4, 2},
      {"h20", "3g.48gb", 3, 4, 2},        {"h20", "1g.12gb", 1, 1, 7},
  };
  for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
    gpu_cfg g;
    sim_err e = {0};
    cr_assert_eq(cfg_gpu_load(&g, want[i].gpu, &e), SIM_OK, "%s", e.msg);
    const mig_profile *p = mig_find(&g, want[i].profile);
    cr_assert_not_null(p, "%s has %s", want[i].gpu, want[i].profile);
    cr_assert_eq(p->compute_slices, want[i].n, "%s %s", want[i].gpu, want[i].profile);
    cr_assert_eq(p->memory_slices, want[i].m, "%s %s", want[i].gpu, want[i].profile);
    cr_assert_eq(p->max_instances, want[i].max, "%s %s", want[i].gpu, want[i].profile);
    cr_assert(strstr(g.mig_source, "mig-parted") != NULL);
  }
  gpu_cfg g;
  sim_err e = {0};
  cr_assert_eq(cfg_gpu_load(&g, "h200", &e), SIM_OK);
  cr_assert_str_eq(g.mig_balanced, "2x1g.18gb+1x2g.35gb+1x3g.71gb");
  cr_assert_eq(cfg_gpu_load(&g, "l40s", &e), SIM_OK);
  cr_assert_eq(g.n_mig, 0, "L40S is not MIG-capable");
}

Test(mig, slice_arithmetic) {
  gpu_cfg w, s;
  sim_err e = {0};
  cr_assert_eq(cfg_gpu_load(&w, "h200", &e), SIM_OK, "%s", e.msg);
  cr_assert_eq(cfg_gpu_load(&s, "h200:3g.71gb", &e), SIM_OK, "%s", e.msg);
  cr_assert_str_eq(s.name, "h200:3g.71gb");
  cr_assert_str_eq(s.mig_parent, "h200");
  cr_assert_eq(s.mig_compute_slices, 3);
  cr_assert_eq(s.mig_memory_slices, 4);
  cr_assert_float_eq(s.mem_bytes, 143771 * MIB / 2, 1, "4/8 of the memory");
  cr_assert_float_eq(s.hbm_Bps, 4.8e12 / 2, 1, "4/8 of the bandwidth");
  cr_assert_float_eq(s.l2_bytes, 50 * MIB / 2, 1);
  cr_assert_float_eq(s.flops[DT_BF16], 989e12 * 3 / 7, 1, "3/7 of the tensor cores");
  cr_assert_float_eq(s.flops[DT_FP8], 1979e12 * 3 / 7, 1);
  cr_assert_eq(s.sm_count, 57, "132 x 3/7 = 56.6");
  cr_assert_float_eq(s.price_per_hour, w.price_per_hour * 3 / 7, 1e-9);
  cr_assert_eq(s.gpus_per_node, 1, "no NVLink to another slice");
  cr_assert_eq(s.naliases, 0, "no measured table is the slice's own");
  cr_assert_eq(s.n_mig, 0);
  cr_assert(strstr(s.full_name, "MIG 3g.71gb") != NULL);
  cr_assert(strstr(s.source, "3/7 of the SMs") != NULL);
  /* the whole GPU as one slice: the same figures */
  cr_assert_eq(cfg_gpu_load(&s, "h200:7g.141gb", &e), SIM_OK, "%s", e.msg);
  cr_assert_float_eq(s.mem_bytes, w.mem_bytes, 1);
  cr_assert_float_eq(s.flops[DT_BF16], w.flops[DT_BF16], 1);
  cr_assert_eq(s.sm_count, w.sm_count);
  /* the smallest: 1/7 and 1/8 */
  cr_assert_eq(cfg_gpu_load(&s, "h200:1g.18gb", &e), SIM_OK, "%s", e.msg);
  cr_assert_float_eq(s.mem_bytes, w.mem_bytes / 8, 1);
  cr_assert_float_eq(s.flops[DT_BF16], w.flops[DT_BF16] / 7, 1);
}

Test(mig, bad_names_are_clear_errors) {
  gpu_cfg g;
  sim_err e = {0};
  cr_assert_eq(cfg_gpu_load(&g, "h200:5g.70gb", &e), SIM_EINPUT);
  has(&e, "--gpu h200:5g.70gb");
  has(&e, "no MIG profile '5g.70gb'");
  has(&e, "1g.18gb, ");
  cr_assert_eq(cfg_gpu_load(&g, "l40s:1g.10gb", &e), SIM_EINPUT);
  has(&e, "'l40s' has no MIG profiles");
  cr_assert_eq(cfg_gpu_load(&g, "nosuchgpu:1g.10gb", &e), SIM_EINPUT);
  has(&e, "unknown gpu 'nosuchgpu'");
  cr_assert_eq(cfg_gpu_load(&g, "h200:", &e), SIM_EINPUT);
  has(&e, "no MIG profile ''");
}

Test(mig, parallelism_across_slices_refused) {
  gpu_cfg g;
  model_cfg m;
  engine_cfg en;
  sim_err e = {0};
  cr_assert_eq(cfg_gpu_load(&g, "h200:3g.71gb", &e), SIM_OK);
  cr_assert_eq(cfg_model_load(&m, "llama-3.1-8b", &e), SIM_OK, "%s", e.msg);
  cr_assert_eq(cfg_engine_load(&en, "vllm", &e), SIM_OK, "%s", e.msg);
  deploy_cfg d;
  deploy_init(&d);
  d.tp = 2;
  cr_assert_eq(cfg_resolve(&d, &m, &g, &en, &e), SIM_EINPUT);
  has(&e, "MIG slice");
  has(&e, "tensor_parallel_size 2");
  deploy_init(&d);
  d.tp = 1;
  cr_assert_eq(cfg_resolve(&d, &m, &g, &en, &e), SIM_OK, "%s", e.msg);
}

/* A GPU file's "mig" section: errors name the file, line and key. */
static const char *with_mig(const char *mig) {
  static char buf[2048];
  snprintf(buf, sizeof buf,
           "{\n  \"name\": \"t\", \"full_name\": \"T\", \"memory_mib\": 81920, \"hbm_bandwidth_gb_s\": 2000,\n"
           "  \"dense_tflops\": {\"bf16\": 300, \"fp16\": 300}, \"interconnect\": \"nvlink\",\n"
           "  \"interconnect_bandwidth_gb_s\": 300, \"allreduce_base_latency_us\": 2, \"sm_count\": 100,\n"
           "  \"l2_mib\": 40, \"source\": \"test\",\n"
           "  \"mig\": %s\n}\n",
           mig);
  return buf;
}

Test(mig, file_section_errors) {
  gpu_cfg g;
  sim_err e = {0};
  const char *ok = "{\"profiles\": {\"1g.10gb\": 7, \"2g.20gb\": 3, \"7g.80gb\": 1}, \"source\": \"s\"}";
  cr_assert_eq(cfg_gpu_parse(&g, with_mig(ok), "g.json", &e), SIM_OK, "%s", e.msg);
  cr_assert_eq(g.n_mig, 3);
  cr_assert_eq(g.mig[1].memory_slices, 2);
  cr_assert_eq(cfg_gpu_parse(&g, with_mig("{\"profiles\": {\"1x.10gb\": 7, \"7g.80gb\": 1}, \"source\": \"s\"}"),
                             "g.json", &e),
               SIM_EINPUT);
  has(&e, "g.json:6: mig.profiles.1x.10gb: not a MIG profile name");
  cr_assert_eq(cfg_gpu_parse(&g, with_mig("{\"profiles\": {\"1g.30gb\": 2, \"7g.80gb\": 1}, \"source\": \"s\"}"),
                             "g.json", &e),
               SIM_EINPUT);
  has(&e, "1g.30gb: 30 GB is not 1/8, 2/8, 4/8 or all");
  cr_assert_eq(cfg_gpu_parse(&g, with_mig("{\"profiles\": {\"1g.10gb\": 9, \"7g.80gb\": 1}, \"source\": \"s\"}"),
                             "g.json", &e),
               SIM_EINPUT);
  has(&e, "1g.10gb");
  cr_assert_eq(cfg_gpu_parse(&g, with_mig("{\"profiles\": {\"7g.80gb\": 1}}"), "g.json", &e), SIM_EINPUT);
  has(&e, "missing key \"source\"");
  cr_assert_eq(cfg_gpu_parse(&g, with_mig("{\"profiles\": {}, \"source\": \"s\"}"), "g.json", &e), SIM_EINPUT);
  has(&e, "expected a non-empty object");
  cr_assert_eq(cfg_gpu_parse(&g, with_mig("{\"profiles\": {\"7g.80gb\": 1}, \"source\": \"s\", \"x\": 1}"),
                             "g.json", &e),
               SIM_EINPUT);
  has(&e, "unknown key");
}
