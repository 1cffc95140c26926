/* test_kdb.c: the kernel-db import (hw/kdb.h, hw/kdb_csv.h) on small
 * fixtures written into temp directories (tests/testutil.c:
 * tu_kdb_fixture): a good database imports every table kind with the
 * documented mapping (dtypes, kv_len = step + offset, duplicates keep the
 * fastest, skipped rows in notes), the written profile loads and is
 * byte-identical when written twice, plain and gzipped files both read, and
 * each kind of bad input fails with SIM_EINPUT naming file, line and column. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "config/cfg.h"
#include "core/version.h"
#include "hw/kdb.h"
#include "hw/prof.h"
#include "testutil.h"

static gpu_cfg h100(void) {
  gpu_cfg g;
  sim_err err = {0};
  cr_assert_eq(cfg_gpu_load(&g, "h100-sxm", &err), SIM_OK, "%s", err.msg);
  return g;
}

static const char *fixture(void) {
  const char *root = tu_tmpdir();
  cr_assert(root && tu_kdb_fixture(root), "cannot write the fixture");
  return root;
}

static bool has_note(const prof_doc *d, const char *needle) {
  for (size_t i = 0; i < d->nnotes; i++)
    if (strstr(d->notes[i], needle)) return true;
  return false;
}

/* Writes d into a temp file and returns its path. */
static const char *write_doc(const prof_doc *d) {
  const char *path = tu_tmpfile(".json", "");
  FILE *f = fopen(path, "w");
  sim_err err = {0};
  cr_assert_eq(prof_write_file(d, f, &err), SIM_OK, "%s", err.msg);
  fclose(f);
  return path;
}

static int import(const char *root, const char *version, prof_doc *d, sim_err *err) {
  gpu_cfg g = h100();
  kdb_req r = {.root = root, .gpu = &g, .engine = "vllm", .engine_version = version};
  prof_doc_init(d);
  return kdb_import(&r, d, err);
}

Test(kdb, imports_every_table_kind) {
  const char *root = fixture();
  prof_doc d;
  sim_err err = {0};
  cr_assert_eq(import(root, "0.14.0", &d, &err), SIM_OK, "%s", err.msg);
  cr_assert_str_eq(d.gpu, "h100-sxm");
  cr_assert_str_eq(d.engine_version, "0.14.0");
  cr_assert_str_eq(d.kdb_gpu_dir, "h100_sxm");
  cr_assert_str_eq(d.kdb_nccl_dir, "nccl-2.29.2");
  cr_assert_str_eq(d.device, "NVIDIA H100 80GB HBM3");
  cr_assert(strstr(d.attribution, "Apache-2.0") && strstr(d.attribution, "0123456789ab"), "%s", d.attribution);
  cr_assert(d.probes_datasheet && d.copy_Bps == 3.35e12 && d.peak[DT_BF16] == 989e12);
  /* GEMM: bfloat16 3 x 2 x 2, the fastest duplicate, one null cell; fp8_block its own block-scaled grid */
  cr_assert_eq(d.ngrid, 2);
  const prof_doc_grid *g = &d.grid[0];
  cr_assert(g->wdtype == DT_BF16 && g->adtype == DT_BF16 && !g->block && g->nm == 3 && g->nn == 2 && g->nk == 2);
  const prof_doc_grid *gb = &d.grid[1];
  cr_assert(gb->wdtype == DT_FP8 && gb->adtype == DT_FP8 && gb->block && gb->nm == 1 && gb->nn == 1 && gb->nk == 1);
  cr_assert(fabs(gb->ns[0] - 3000) < 1e-6, "%g", gb->ns[0]);
  cr_assert(fabs(g->ns[0] - 1500) < 1e-6, "fastest of three kernels: %g", g->ns[0]);
  cr_assert(isnan(g->ns[11]), "(256, 4096, 4096) was not measured");
  cr_assert_str_eq(g->kernel, "kA, kB, kC");
  /* decode: bf16 and fp8 KV; vLLM 0.14.0's collector counts the decoded token in step */
  cr_assert_eq(d.nattn[PDA_DECODE], 2);
  const prof_doc_attn *a = &d.attn[PDA_DECODE][0];
  cr_assert(a->q_heads == 8 && a->kv_heads == 1 && a->head_dim == 128 && a->nx == 2 && a->ny == 3);
  cr_assert(a->y[0] == 1 && a->y[1] == 15 && a->y[2] == 255, "kv_len = step");
  /* context: bf16 compute only; the window-128 rows a table of their own (after the full-attention one) */
  cr_assert_eq(d.nattn[PDA_CONTEXT], 2);
  a = &d.attn[PDA_CONTEXT][0];
  cr_assert(a->q_heads == 8 && a->kv_heads == 8 && a->head_dim == 64 && a->nx == 2 && a->ny == 2 && !a->window);
  cr_assert(fabs(a->ns[0] - (0.01 + 16 * 16 * 1e-7) * 1e6) < 1, "window 0 row: %g", a->ns[0]);
  const prof_doc_attn *w = &d.attn[PDA_CONTEXT][1];
  cr_assert(w->window == 128 && w->q_heads == 8 && w->kv_heads == 8 && w->head_dim == 64 && w->nx == 2 && w->ny == 2);
  cr_assert(fabs(w->ns[3] - (0.01 + 8 * 128 * 128 * 1e-7) / 2 * 1e6) < 1, "window 128 row: %g", w->ns[3]);
  cr_assert(has_note(&d, "1 of them sliding-window"));
  /* collectives: custom graph and eager all-reduce (bytes = 2 x elements), NCCL all_reduce and all_gather in
   * half only (int8 skipped) */
  cr_assert_eq(d.nar, 4);
  int nccl = 0, ag = 0;
  for (size_t i = 0; i < d.nar; i++) {
    bool n = d.ar[i].impl == PROF_AR_NCCL || d.ar[i].impl == PROF_AG_NCCL;
    cr_assert_eq(d.ar[i].bytes[0], n ? 512 : 256);
    nccl += d.ar[i].impl == PROF_AR_NCCL;
    ag += d.ar[i].impl == PROF_AG_NCCL;
    if (d.ar[i].impl == PROF_AG_NCCL) cr_assert(strstr(d.ar[i].kernel, "all_gather"), "%s", d.ar[i].kernel);
  }
  cr_assert_eq(nccl, 1);
  cr_assert_eq(ag, 1);
  cr_assert(has_note(&d, "fp8_block") && has_note(&d, "attn_dtype fp8"));
  cr_assert(has_note(&d, "moe_perf") && has_note(&d, "in int8"));
  /* fused MoE: one table per shape, the faster of two kernels at each token count, ms -> ns */
  cr_assert_eq(d.nmoe, 2);
  for (size_t i = 0; i < d.nmoe; i++) {
    const prof_doc_moe *m = &d.moe[i];
    cr_assert_eq(m->n, 3);
    cr_assert_eq(m->tokens[2], 64);
    if (!strcmp(m->key.dtype, "fp8_block")) {
      cr_assert_str_eq(m->key.dist, "balanced");
      cr_assert(fabs(m->ns[0] - (0.05 + 0.002) * 1e6) < 1, "the faster kernel: %g", m->ns[0]);
      cr_assert_eq(m->key.inter, 1536);
      cr_assert_eq(m->key.tp, 2);
    }
  }
  cr_assert(has_note(&d, "kv_len = step + 0") && has_note(&d, "repeat a"));
  /* MLA modules: one table per phase, DeepSeek-V3's dimensions, the missing cell null, the faster kernel kept;
   * the unknown model's and the fp8-compute rows skipped with a note */
  cr_assert_eq(d.nmla, 2);
  for (size_t i = 0; i < d.nmla; i++) {
    const prof_doc_mla *m = &d.mla[i];
    bool ctx = m->key.context;
    cr_assert(m->key.heads == 16 && m->key.kv_dtype == DT_BF16 && !strcmp(m->key.gemm, "fp8_block"));
    cr_assert(m->key.dims.hidden == 7168 && m->key.dims.kv_lora == 512 && m->key.dims.qk_rope == 64);
    cr_assert(m->nb == 2 && m->nl == 2 && m->batch[1] == 4 && m->len[1] == 64);
    cr_assert(fabs(m->ns[0] - (0.09 + ctx * 0.001) * 1e6) < 1e-3, "%g", m->ns[0]);
    cr_assert(fabs(m->ns[1] - (0.10 + ctx * 0.001) * 1e6) < 1e-3, "the faster of two kernels: %g", m->ns[1]);
    cr_assert(isnan(m->ns[3]), "(4, 64) not measured");
  }
  cr_assert(has_note(&d, "some/OtherMLA") && has_note(&d, "mla_dtype fp8"));
  prof_doc_free(&d);
}

Test(kdb, written_profile_loads_and_is_byte_identical) {
  const char *root = fixture();
  prof_doc d;
  sim_err err = {0};
  cr_assert_eq(import(root, NULL, &d, &err), SIM_OK, "%s", err.msg);
  cr_assert_str_eq(d.engine_version, "0.24.0", "the newest version by default");
  prof_doc_free(&d);
  cr_assert_eq(import(root, "0.14.0", &d, &err), SIM_OK, "%s", err.msg);
  char *a = tu_slurp(write_doc(&d), NULL), *b = tu_slurp(write_doc(&d), NULL);
  prof_doc d2;
  cr_assert_eq(import(root, "0.14.0", &d2, &err), SIM_OK, "%s", err.msg);
  char *c = tu_slurp(write_doc(&d2), NULL);
  cr_assert(a && b && c && !strcmp(a, b) && !strcmp(a, c), "two writes and two imports are byte-identical");
  free(a), free(b), free(c);
  prof *p;
  const char *path = write_doc(&d);
  cr_assert_eq(prof_load(&p, path, &err), SIM_OK, "%s", err.msg);
  cr_assert_str_eq(prof_engine(p), "vllm");
  cr_assert_str_eq(prof_engine_version(p), "0.14.0");
  cr_assert(strstr(prof_attribution(p), "Apache-2.0"));
  cr_assert_str_eq(prof_origin(p), "kernel-db: NVIDIA AIConfigurator, vllm 0.14.0 on h100_sxm");
  double ns;
  cr_assert(prof_gemm_ns(p, DT_BF16, DT_BF16, 1, 1024, 1024, &ns) && ns == 1500);
  cr_assert(prof_gemm_ns(p, DT_BF16, DT_BF16, 16, 4096, 1024, &ns));
  cr_assert(fabs(ns - 1e6 * (17 * 0.001 + 4096 / 1e6 + 1024 / 1e7)) <= 1e-3 * ns, "exact point, 4 digits: %g", ns);
  cr_assert(prof_attn_decode_ns(p, DT_FP8, 8, 255, 8, 1, 128, &ns) && ns == 30400, "%g", ns);
  cr_assert(prof_attn_context_ns(p, DT_BF16, 2, 128, 8, 8, 64, &ns));
  cr_assert(fabs(ns - (0.01 + 8 * 128 * 128 * 1e-7) * 1e6) < 1e-3 * ns, "the full-attention table (4 digits): %g", ns);
  /* the window-128 table answers window-128 queries only */
  cr_assert(prof_attn_window_context_ns(p, 128, DT_BF16, 2, 128, 8, 8, 64, &ns));
  cr_assert(fabs(ns - (0.01 + 8 * 128 * 128 * 1e-7) / 2 * 1e6) < 1e-3 * ns, "the window table (4 digits): %g", ns);
  cr_assert(!prof_attn_window_context_ns(p, 64, DT_BF16, 2, 128, 8, 8, 64, &ns), "no table of window 64");
  cr_assert(!prof_attn_window_decode_ns(p, 128, DT_BF16, 2, 128, 8, 1, 128, &ns), "no windowed decode table");
  cr_assert_eq(prof_window_tables(p, 128), 1);
  cr_assert(prof_allreduce_ns(p, PROF_AR_CUSTOM_EAGER, 2, 256, &ns) && fabs(ns - 20010) < 1, "%g", ns);
  cr_assert(prof_allreduce_ns(p, PROF_AR_NCCL, 4, 512, &ns));
  cr_assert(!prof_allreduce_ns(p, PROF_AR_NCCL, 2, 512, &ns), "no 2-GPU NCCL table");
  prof_free(p);
  /* split: the dense file keeps full attention, the companion takes the window tables (with the MoE ones) */
  const char *dense = tu_tmpfile(".json", ""), *comp = tu_tmpfile(".moe.json", "");
  FILE *f = fopen(dense, "w");
  cr_assert_eq(prof_write_dense(&d, f, &err), SIM_OK, "%s", err.msg);
  fclose(f);
  f = fopen(comp, "w");
  cr_assert_eq(prof_write_moe(&d, f, &err), SIM_OK, "%s", err.msg);
  fclose(f);
  cr_assert_eq(prof_load(&p, dense, &err), SIM_OK, "%s", err.msg);
  cr_assert(prof_attn_context_ns(p, DT_BF16, 2, 128, 8, 8, 64, &ns));
  cr_assert_eq(prof_window_tables(p, 128), 0);
  prof_free(p);
  cr_assert_eq(prof_load(&p, comp, &err), SIM_OK, "%s", err.msg);
  cr_assert_eq(prof_window_tables(p, 128), 1);
  cr_assert(!prof_attn_context_ns(p, DT_BF16, 2, 128, 8, 8, 64, &ns), "no full-attention table in the companion");
  cr_assert(prof_moe_tables(p) > 0);
  prof_free(p);
  prof_doc_free(&d);
  prof_doc_free(&d2);
}

Test(kdb, versions_and_decode_offsets) {
  const char *root = fixture();
  gpu_cfg g = h100();
  char v[KDB_MAX_VERSIONS][KDB_VERSION_LEN];
  int n;
  sim_err err = {0};
  cr_assert_eq(kdb_versions(root, &g, "vllm", v, KDB_MAX_VERSIONS, &n, &err), SIM_OK, "%s", err.msg);
  cr_assert(n == 2 && !strcmp(v[0], "0.14.0") && !strcmp(v[1], "0.24.0"));
  cr_assert_eq(kdb_versions(root, &g, "trtllm", v, KDB_MAX_VERSIONS, &n, &err), SIM_OK);
  cr_assert_eq(n, 0);
  cr_assert_eq(kdb_decode_offset("vllm", "0.14.0"), 0);
  cr_assert_eq(kdb_decode_offset("vllm", "0.19.0"), 0);
  cr_assert_eq(kdb_decode_offset("vllm", "0.24.0"), 1);
  cr_assert_eq(kdb_decode_offset("trtllm", "1.0.0"), 1);
  cr_assert_eq(kdb_decode_offset("trtllm", "1.3.0rc20"), 1);
  /* the 0.24.0 rule reaches the rows: a database with only a 0.24.0 generation table */
  char p[4096];
  snprintf(p, sizeof p, "%s/h100_sxm/vllm-0.24.0/generation_attention_perf.csv.gz", root);
  cr_assert(tu_write_table(p,
                           "batch_size,isl,num_heads,num_key_value_heads,head_dim,attn_dtype,kv_cache_dtype,step,"
                           "latency\n1,1,8,1,128,bfloat16,bfloat16,1,0.01\n1,1,8,1,128,bfloat16,bfloat16,3,0.01\n",
                           true));
  prof_doc d;
  cr_assert_eq(import(root, "0.24.0", &d, &err), SIM_OK, "%s", err.msg);
  cr_assert(d.nattn[PDA_DECODE] == 1 && d.attn[PDA_DECODE][0].y[0] == 2 && d.attn[PDA_DECODE][0].y[1] == 4);
  prof_doc_free(&d);
}

Test(kdb, version_order) {
  cr_assert(version_cmp("0.14.0", "0.24.0") < 0);
  cr_assert(version_cmp("0.9.2", "0.14.0") < 0, "numeric, not text");
  cr_assert(version_cmp("1.3.0rc20", "1.3.0") < 0);
  cr_assert(version_cmp("1.3.0rc20", "1.3.0rc3") > 0);
  cr_assert(version_cmp("1.0", "1.0.0") == 0);
  cr_assert(version_cmp("0.14.1.dev1+gd68209402", "0.14.1") < 0);
  cr_assert(version_cmp("0.14.1.dev1+gd68209402", "0.14.0") > 0);
  cr_assert(version_cmp("1.3.0.post1", "1.3.0") > 0);
  cr_assert(version_cmp("1.2.0rc6.post1", "1.2.0rc6") > 0, "a post-release of a release candidate follows it");
  cr_assert(version_cmp("1.2.0rc6.post1", "1.2.0rc7") < 0);
  cr_assert(version_cmp("1.2.0rc6.post1", "1.2.0") < 0);
  cr_assert(version_cmp("1.0.dev1", "1.0a1") < 0, "a development release of 1.0 precedes its pre-releases");
  cr_assert(version_cmp("1.0.post1.dev2", "1.0.post1") < 0 && version_cmp("1.0.post1.dev2", "1.0") > 0);
  cr_assert(version_cmp("latest", "0.1") < 0 && !version_valid("latest") && version_valid("0.1"));
}

/* A database whose only table is the GEMM text given (gzipped when gz). */
/* A database of one table `name` (e.g. "gemm_perf") holding text. */
static const char *table_db(const char *name, const char *text, bool gz) {
  const char *root = tu_tmpdir();
  char p[4096];
  snprintf(p, sizeof p, "%s/.aic-commit", root);
  cr_assert(tu_write_table(p, "0123456789ab\n", false));
  snprintf(p, sizeof p, "%s/h100_sxm/vllm-0.14.0/%s.csv.gz", root, name);
  cr_assert(tu_write_table(p, text, gz));
  return root;
}

static const char *gemm_db(const char *text, bool gz) { return table_db("gemm_perf", text, gz); }

static void expect_bad_in(const char *name, const char *text, bool gz, const char *where, const char *what) {
  prof_doc d;
  sim_err err = {0};
  int rc = import(table_db(name, text, gz), "0.14.0", &d, &err);
  prof_doc_free(&d);
  cr_assert_eq(rc, SIM_EINPUT, "expected SIM_EINPUT for %s", where);
  cr_assert(strstr(err.msg, where) && strstr(err.msg, what), "expected '%s' and '%s' in: %s", where, what, err.msg);
}

static void expect_bad(const char *text, bool gz, const char *where, const char *what) {
  expect_bad_in("gemm_perf", text, gz, where, what);
}

/* MLA module rows: an unknown KV dtype, a generation row of length 0 and a missing column are refused with the
 * file, line and column. */
Test(kdb, bad_mla_module_rows_name_file_line_and_column) {
#define MHDR                                                                                                           \
  "framework,version,device,op_name,kernel_source,model,architecture,mla_dtype,kv_cache_dtype,gemm_type,num_heads,"    \
  "batch_size,isl,tp_size,step,latency\n"
#define MPRE "VLLM,0.14.0,NVIDIA H100 80GB HBM3,mla_generation_module,K,deepseek-ai/DeepSeek-V3,X,bfloat16,"
  expect_bad_in("mla_generation_module_perf", MHDR MPRE "int4,fp8_block,16,1,1,8,64,0.1\n", false,
                "mla_generation_module_perf.csv.gz:2: column kv_cache_dtype", "bfloat16 or fp8");
  expect_bad_in("mla_generation_module_perf", MHDR MPRE "bfloat16,fp8_block,16,1,1,8,0,0.1\n", true,
                "mla_generation_module_perf.csv.gz:2: column step", "length >= 1");
  expect_bad_in("mla_context_module_perf", "model,mla_dtype\nx,bfloat16\n", true,
                "mla_context_module_perf.csv.gz:1: column kv_cache_dtype", "missing");
#undef MPRE
#undef MHDR
}

/* dsa_*_module_perf: the MLA module importer with the model's index_topk in the key; a plain-MLA model's rows in
 * a sparse-attention file are skipped with a note (and the reverse). */
Test(kdb, dsa_module_rows_carry_the_models_top_k) {
  const char *text =
      "framework,version,device,op_name,kernel_source,model,architecture,mla_dtype,kv_cache_dtype,gemm_type,"
      "num_heads,batch_size,isl,tp_size,step,latency\n"
      "VLLM,0.14.0,NVIDIA H100 80GB HBM3,dsa_generation_module,S,deepseek-ai/DeepSeek-V3.2,X,bfloat16,bfloat16,"
      "fp8_block,16,32,1,1,2048,0.2407\n"
      "VLLM,0.14.0,NVIDIA H100 80GB HBM3,dsa_generation_module,S,zai-org/GLM-5,X,bfloat16,bfloat16,"
      "bfloat16,8,1,1,1,64,0.05\n"
      "VLLM,0.14.0,NVIDIA H100 80GB HBM3,dsa_generation_module,S,deepseek-ai/DeepSeek-V3,X,bfloat16,bfloat16,"
      "fp8_block,16,1,1,1,64,0.05\n";
  prof_doc d;
  sim_err err = {0};
  cr_assert_eq(import(table_db("dsa_generation_module_perf", text, true), "0.14.0", &d, &err), SIM_OK, "%s", err.msg);
  cr_assert_eq(d.nmla, 2);
  for (size_t i = 0; i < d.nmla; i++) {
    const prof_doc_mla *m = &d.mla[i];
    cr_assert_eq(m->key.topk, 2048);
    cr_assert(!m->key.context);
    if (m->key.dims.hidden == 7168) cr_assert_float_eq(m->ns[0], 240700.0, 1e-6, "%g", m->ns[0]);
    else cr_assert(m->key.dims.hidden == 6144 && m->key.dims.qk_nope == 192 && m->key.dims.v_head == 256);
  }
  cr_assert(has_note(&d, "DeepSeek-V3 (sparse-attention dimensions not known"));
  prof *p = NULL;
  cr_assert_eq(prof_load(&p, write_doc(&d), &err), SIM_OK, "%s", err.msg);
  prof_mla_key k = d.mla[0].key;
  double ns;
  cr_assert(prof_mla_module_ns(p, &k, 1, 64, &ns));
  k.topk = 0;
  cr_assert_not(prof_mla_module_ns(p, &k, 1, 64, &ns), "a plain MLA query does not read a sparse-attention table");
  prof_free(p);
  prof_doc_free(&d);
}

/* gdn_perf (kdb_gdn.c): one table per phase and per-GPU shape, each cell the convolution kernel plus the delta
 * rule's (the fastest of each role across kernels and models), a cell with one role only left null (a note),
 * d_model not in the key; bad fields fail naming file, line and column. */
#define GHDR                                                                                                           \
  "framework,version,device,op_name,kernel_source,phase,batch_size,seq_len,num_tokens,d_model,d_conv,num_k_heads,"  \
  "head_k_dim,num_v_heads,head_v_dim,model_name,latency\n"
#define GPRE "vLLM,0.14.0,NVIDIA H100 80GB HBM3,gdn,"
Test(kdb, gdn_rows_become_per_shape_tables_of_convolution_plus_rule) {
  const char *text = GHDR GPRE "causal_conv1d_update,generation,1,1,1,2048,4,8,128,16,128,A,0.002\n" /* 1 */
      GPRE "fused_recurrent_gated_delta_rule,generation,1,1,1,2048,4,8,128,16,128,A,0.010\n"           /* 1 */
      GPRE "fused_recurrent_gated_delta_rule_packed_decode,generation,1,1,1,4096,4,8,128,16,128,B,0.008\n"
      GPRE "causal_conv1d_update,generation,4,1,4,2048,4,8,128,16,128,A,0.003\n"
      GPRE "fused_recurrent_gated_delta_rule,generation,4,1,4,2048,4,8,128,16,128,A,0.020\n"
      GPRE "causal_conv1d_fn,context,2,64,128,2048,4,8,128,16,128,A,0.004\n"
      GPRE "chunk_gated_delta_rule,context,2,64,128,2048,4,8,128,16,128,A,0.030\n"
      GPRE "causal_conv1d_fn,context,2,128,256,2048,4,8,128,16,128,A,0.005\n" /* no rule: null */
      GPRE "causal_conv1d_fn,context,1,64,64,2048,4,2,128,4,128,A,0.001\n"
      GPRE "chunk_gated_delta_rule,context,1,64,64,2048,4,2,128,4,128,A,0.009\n"
      GPRE "something_else,context,1,64,64,2048,4,2,128,4,128,A,0.5\n";
  prof_doc d;
  sim_err err = {0};
  cr_assert_eq(import(table_db("gdn_perf", text, true), "0.14.0", &d, &err), SIM_OK, "%s", err.msg);
  cr_assert_eq(d.ngdn, 3, "generation (8, 16); context (8, 16) and (2, 4)");
  const prof_doc_gdn *gen = NULL, *ctx = NULL;
  for (size_t i = 0; i < d.ngdn; i++) {
    const prof_doc_gdn *g = &d.gdn[i];
    cr_assert(g->key.k_dim == 128 && g->key.v_dim == 128 && g->key.conv == 4);
    if (!g->key.context) gen = g;
    else if (g->key.k_heads == 8) ctx = g;
  }
  cr_assert(gen && ctx);
  cr_assert(gen->key.v_heads == 16 && gen->nb == 2 && gen->nl == 1 && gen->batch[1] == 4 && gen->len[0] == 1);
  cr_assert_float_eq(gen->ns[0], 2000 + 8000, 1e-6, "the faster rule (model B's packed decode): %g", gen->ns[0]);
  cr_assert_float_eq(gen->ns[1], 3000 + 20000, 1e-6, "%g", gen->ns[1]);
  cr_assert_str_eq(gen->models, "A, B");
  cr_assert(strstr(gen->kernel, "causal_conv1d_update") && strstr(gen->kernel, "_packed_decode"), "%s", gen->kernel);
  cr_assert(ctx->nb == 1 && ctx->nl == 2 && ctx->len[0] == 64 && ctx->len[1] == 128);
  cr_assert_float_eq(ctx->ns[0], 4000 + 30000, 1e-6, "%g", ctx->ns[0]);
  cr_assert(isnan(ctx->ns[1]), "the convolution alone is not the layer's recurrence");
  cr_assert(has_note(&d, "1 cells with only one of the two kernels") && has_note(&d, "something_else"));
  /* written, read back and looked up: the profile answers the shape, not another */
  prof *p = NULL;
  cr_assert_eq(prof_load(&p, write_doc(&d), &err), SIM_OK, "%s", err.msg);
  cr_assert_eq(prof_gdn_tables(p), 3);
  double ns;
  prof_gdn_key k = {false, 8, 128, 16, 128, 4};
  cr_assert(prof_gdn_ns(p, &k, 4, 1, &ns) && fabs(ns - 23000) < 1e-6, "%g", ns);
  cr_assert(prof_gdn_ns(p, &k, 8, 1, &ns) && fabs(ns - 46000) < 1e-6, "above the last batch, proportional: %g", ns);
  k.v_heads = 32;
  cr_assert_not(prof_gdn_ns(p, &k, 1, 1, &ns));
  prof_free(p);
  prof_doc_free(&d);
  expect_bad_in("gdn_perf", GHDR GPRE "causal_conv1d_fn,prompt,1,64,64,2048,4,2,128,4,128,A,0.001\n", true,
                "gdn_perf.csv.gz:2: column phase", "context or generation");
  expect_bad_in("gdn_perf", GHDR GPRE "causal_conv1d_fn,context,1,0,0,2048,4,2,128,4,128,A,0.001\n", false,
                "gdn_perf.csv.gz:2: column seq_len", "");
}
#undef GPRE
#undef GHDR

#define HDR "gemm_dtype,m,n,k,latency,device\n"
#define ROW "bfloat16,1,64,64,0.002,NVIDIA H100 80GB HBM3\n"

Test(kdb, bad_tables_name_file_line_and_column) {
  expect_bad("gemm_dtype,m,n,k\nbfloat16,1,64,64\n", true, "gemm_perf.csv.gz:1: column latency", "missing");
  expect_bad(HDR ROW "bfloat16,1x,64,64,0.002,NVIDIA H100 80GB HBM3\n", true, "gemm_perf.csv.gz:3: column m",
             "'1x'");
  expect_bad(HDR "bfloat16,1,64,64,-0.002,NVIDIA H100 80GB HBM3\n", false, "gemm_perf.csv.gz:2: column latency",
             "positive");
  expect_bad(HDR ROW "bfloat16,1,64,64,nan,NVIDIA H100 80GB HBM3\n", true, "gemm_perf.csv.gz:3: column latency",
             "finite");
  expect_bad(HDR ROW "bfloat16,1,64,64,0,NVIDIA H100 80GB HBM3\n", true, "gemm_perf.csv.gz:3: column latency", "positive");
  expect_bad(HDR ROW ROW "bfloat16,1,64\n", true, "gemm_perf.csv.gz:4: column k", "cut short");
  expect_bad(HDR "bfloat16,1,64,64,0.002,NVIDIA A100-SXM4-80GB\n", true, "gemm_perf.csv.gz:2: column device",
             "not a name of gpu h100-sxm");
  expect_bad(HDR "bfloat16,1,64,64,0.002,\"NVIDIA H100\"\n", true, "gemm_perf.csv.gz:2", "quoted");
}

Test(kdb, truncated_gzip_is_a_read_error) {
  /* a big table, gzipped, then cut in the middle of the compressed stream */
  size_t cap = 1 << 20, n = 0;
  char *text = malloc(cap);
  n += (size_t)snprintf(text + n, cap - n, HDR);
  for (int i = 0; i < 5000; i++)
    n += (size_t)snprintf(text + n, cap - n, "bfloat16,%d,%d,64,0.00%d,NVIDIA H100 80GB HBM3\n", i % 97 + 1,
                          64 * (i / 97 + 1), 1000 + i);
  const char *root = gemm_db(text, true);
  free(text);
  char p[4096];
  snprintf(p, sizeof p, "%s/h100_sxm/vllm-0.14.0/gemm_perf.csv.gz", root);
  size_t len;
  char *gz = tu_slurp(p, &len);
  FILE *f = fopen(p, "wb");
  fwrite(gz, 1, len / 2, f);
  fclose(f);
  free(gz);
  prof_doc d;
  sim_err err = {0};
  cr_assert_eq(import(root, "0.14.0", &d, &err), SIM_EINPUT);
  cr_assert(strstr(err.msg, "gemm_perf.csv.gz:") && strstr(err.msg, "read error"), "%s", err.msg);
  prof_doc_free(&d);
}

Test(kdb, missing_pieces_are_errors_or_notes) {
  const char *root = fixture();
  prof_doc d;
  sim_err err = {0};
  cr_assert_eq(import(root, "0.13.0", &d, &err), SIM_EINPUT);
  cr_assert(strstr(err.msg, "vllm-0.13.0") && strstr(err.msg, "0.14.0, 0.24.0"), "%s", err.msg);
  prof_doc_free(&d);
  gpu_cfg g;
  cr_assert_eq(cfg_gpu_load(&g, "b200", &err), SIM_OK);
  kdb_req r = {.root = root, .gpu = &g, .engine = "vllm"};
  prof_doc_init(&d);
  cr_assert_eq(kdb_import(&r, &d, &err), SIM_EINPUT);
  cr_assert(strstr(err.msg, "no directory for gpu b200") && strstr(err.msg, "h100_sxm"), "%s", err.msg);
  prof_doc_free(&d);
  gpu_cfg h = h100();
  r = (kdb_req){.root = root, .gpu = &h, .engine = "sglang"}; /* an engine the fixture has no directory of */
  prof_doc_init(&d);
  cr_assert_eq(kdb_import(&r, &d, &err), SIM_EINPUT);
  cr_assert(strstr(err.msg, "no sglang-<version> directory"), "%s", err.msg);
  prof_doc_free(&d);
  /* absent tables are notes: vllm-0.24.0 has only its GEMM table */
  cr_assert_eq(import(root, "0.24.0", &d, &err), SIM_OK, "%s", err.msg);
  cr_assert(has_note(&d, "context_attention_perf.csv.gz: absent"));
  cr_assert_eq(d.nattn[PDA_CONTEXT], 0);
  prof_doc_free(&d);
  char p[4096];
  snprintf(p, sizeof p, "%s/.aic-commit", root);
  unlink(p);
  cr_assert_eq(import(root, "0.14.0", &d, &err), SIM_EINPUT);
  cr_assert(strstr(err.msg, ".aic-commit"), "%s", err.msg);
  prof_doc_free(&d);
}

/* --gemm-m-step (kdb_req.gemm_m_step): the GEMM rows with m above the step and not a multiple of it are left out
 * of the grid and counted in a note; every other row, and every row without the step, is imported. */
Test(kdb, gemm_m_step_leaves_out_the_rows_between_multiples) {
#define R(m, ms) "fp8," #m ",64,64," #ms ",NVIDIA H100 80GB HBM3\n"
  const char *root = gemm_db(HDR R(1, 0.002) R(16, 0.003) R(17, 0.009) R(32, 0.004) R(33, 0.010) R(48, 0.005), true);
#undef R
  gpu_cfg g = h100();
  for (uint32_t step = 0; step <= 16; step += 16) {
    kdb_req r = {.root = root, .gpu = &g, .engine = "vllm", .engine_version = "0.14.0", .gemm_m_step = step};
    prof_doc d;
    sim_err err = {0};
    prof_doc_init(&d);
    cr_assert_eq(kdb_import(&r, &d, &err), SIM_OK, "%s", err.msg);
    cr_assert_eq(d.ngrid, 1);
    const prof_doc_grid *gr = &d.grid[0];
    if (step) {
      cr_assert_eq(gr->nm, 4);
      uint32_t want[4] = {1, 16, 32, 48};
      for (int i = 0; i < 4; i++) cr_expect_eq(gr->m[i], want[i]);
      cr_expect_float_eq(gr->ns[2], 4000.0, 1e-6, "m = 32 keeps its own time (got %g)", gr->ns[2]);
      cr_assert(has_note(&d, "2 rows left out: m above 16 and not a multiple of it (--gemm-m-step 16)"));
    } else {
      cr_assert_eq(gr->nm, 6);
      cr_assert(!has_note(&d, "left out"));
    }
    prof_doc_free(&d);
  }
}

/* ---- SGLang (engine "sglang") ------------------------------------------------------------- */

#define SG "SGLang,0.5.14,NVIDIA H100 80GB HBM3,"
#define AHDR                                                                                                           \
  "framework,version,device,op_name,kernel_source,batch_size,isl,num_heads,num_key_value_heads,head_dim,beam_width,"   \
  "attn_dtype,kv_cache_dtype,step,window_size,latency\n"

/* A database with SGLang 0.5.14 (its own all-reduce, eager and graph rows in a `backend` column; W8A8 int8_wo
 * GEMM rows; context rows of attn_dtype fp8 with an fp8 cache) and 0.5.6.post2 (whose all-reduce table is
 * TensorRT-LLM's, column `implementation`), in the kernel database's column layout. */
static const char *sglang_db(void) {
  const char *root = tu_tmpdir();
  char p[4096];
  snprintf(p, sizeof p, "%s/.aic-commit", root);
  cr_assert(tu_write_table(p, "0123456789ab\n", false));
  snprintf(p, sizeof p, "%s/h100_sxm/sglang-0.5.14/custom_allreduce_perf.csv.gz", root);
  cr_assert(tu_write_table(p,
                           "framework,version,device,op_name,kernel_source,allreduce_dtype,num_gpus,message_size,"
                           "latency,backend\n" SG "all_reduce,SGLang_CustomAllReduce_graph,bfloat16,2,128,0.0025,"
                           "sglang_graph\n" SG "all_reduce,SGLang_CustomAllReduce_eager,bfloat16,2,128,0.0300,"
                           "sglang_eager\n" SG "all_reduce,SGLang_CustomAllReduce_graph,bfloat16,2,256,0.0026,"
                           "sglang_graph\n" SG "all_reduce,SGLang_CustomAllReduce_eager,bfloat16,2,256,0.0310,"
                           "sglang_eager\n",
                           true));
  snprintf(p, sizeof p, "%s/h100_sxm/sglang-0.5.14/gemm_perf.csv.gz", root);
  cr_assert(tu_write_table(p,
                           "framework,version,device,op_name,kernel_source,gemm_dtype,m,n,k,latency\n" SG
                           "gemm,sglang,int8_wo,1,1024,1024,0.004\n" SG "gemm,sglang_torch_linear,bfloat16,1,1024,1024,"
                           "0.005\n",
                           true));
  snprintf(p, sizeof p, "%s/h100_sxm/sglang-0.5.14/context_attention_perf.csv.gz", root);
  cr_assert(tu_write_table(p,
                           AHDR SG "context_attention,fa3,1,128,8,8,128,1,fp8,fp8,0,0,0.020\n" SG
                           "context_attention,fa3,1,128,8,8,128,1,bfloat16,bfloat16,0,0,0.030\n" SG
                           "context_attention,triton,1,128,8,8,128,1,bfloat16,fp8,0,0,0.025\n" SG
                           "context_attention,fa3,1,128,8,8,128,1,fp8,bfloat16,0,0,0.010\n",
                           true));
  snprintf(p, sizeof p, "%s/h100_sxm/sglang-0.5.14/generation_attention_perf.csv.gz", root);
  cr_assert(tu_write_table(p,
                           AHDR SG "generation_attention,fa3,1,1,8,8,128,1,bfloat16,bfloat16,1,0,0.010\n" SG
                           "generation_attention,fa3,1,1,8,8,128,1,bfloat16,bfloat16,3,0,0.011\n",
                           true));
  snprintf(p, sizeof p, "%s/h100_sxm/sglang-0.5.6.post2/custom_allreduce_perf.csv.gz", root);
  cr_assert(tu_write_table(p,
                           "framework,version,device,op_name,kernel_source,allreduce_dtype,num_gpus,message_size,"
                           "latency,implementation\nTRTLLM,1.2.0rc5,NVIDIA H100 80GB HBM3,all_reduce,TRTLLM,bfloat16,"
                           "2,128,0.0030,trtllm\nTRTLLM,1.2.0rc5,NVIDIA H100 80GB HBM3,all_reduce,TRTLLM,bfloat16,2,"
                           "256,0.0031,trtllm\n",
                           true));
  return root;
}

static int import_sglang(const char *root, const char *version, const char *other, prof_doc *d, sim_err *err) {
  gpu_cfg g = h100();
  kdb_req r = {.root = root, .gpu = &g, .engine = "sglang", .engine_version = version, .other_device = other};
  prof_doc_init(d);
  return kdb_import(&r, d, err);
}

Test(kdb, sglang_tables_import_with_their_engine_rules) {
  const char *root = sglang_db();
  gpu_cfg g = h100();
  char v[KDB_MAX_VERSIONS][KDB_VERSION_LEN];
  int n;
  sim_err err = {0};
  cr_assert_eq(kdb_versions(root, &g, "sglang", v, KDB_MAX_VERSIONS, &n, &err), SIM_OK, "%s", err.msg);
  cr_assert(n == 2 && !strcmp(v[0], "0.5.6.post2") && !strcmp(v[1], "0.5.14"), "version order, not text order");
  cr_assert_eq(kdb_decode_offset("sglang", "0.5.6.post2"), 1);
  prof_doc d;
  cr_assert_eq(import_sglang(root, NULL, NULL, &d, &err), SIM_OK, "%s", err.msg);
  cr_assert_str_eq(d.engine, "sglang");
  cr_assert_str_eq(d.engine_version, "0.5.14", "the newest by default");
  cr_assert_str_eq(d.kdb_framework_dir, "sglang-0.5.14");
  cr_assert_str_eq(d.kdb_caveat, "", "every table SGLang's own, on this GPU");
  /* SGLang's int8_wo rows are W8A8 (int8 activations), bfloat16 stays bf16/bf16 */
  cr_assert_eq(d.ngrid, 2);
  bool w8a8 = false, bf16 = false;
  for (size_t i = 0; i < d.ngrid; i++) {
    w8a8 |= d.grid[i].wdtype == DT_INT8 && d.grid[i].adtype == DT_INT8 && d.grid[i].ns[0] == 4000;
    bf16 |= d.grid[i].wdtype == DT_BF16 && d.grid[i].adtype == DT_BF16 && d.grid[i].ns[0] == 5000;
  }
  cr_assert(w8a8 && bf16 && has_note(&d, "W8A8"));
  /* the all-reduce: its graph and eager rows, two tables, SGLang's kernel */
  cr_assert_eq(d.nar, 2);
  for (size_t i = 0; i < d.nar; i++) {
    const prof_doc_ar *a = &d.ar[i];
    cr_assert(a->impl == PROF_AR_CUSTOM_GRAPH || a->impl == PROF_AR_CUSTOM_EAGER);
    cr_assert_str_eq(a->kernel, "SGLang custom all-reduce");
    cr_assert(a->n == 2 && a->bytes[0] == 256, "bytes = 2 x elements");
    cr_assert_eq(a->ns[0], a->impl == PROF_AR_CUSTOM_GRAPH ? 2500 : 30000);
  }
  /* context: the fp8-cache table from the faster of the attn_dtype fp8 (fa3) and bfloat16 (triton) rows;
   * attn_dtype fp8 with a bf16 cache is no SGLang case and is skipped */
  cr_assert_eq(d.nattn[PDA_CONTEXT], 2);
  for (size_t i = 0; i < d.nattn[PDA_CONTEXT]; i++) {
    const prof_doc_attn *a = &d.attn[PDA_CONTEXT][i];
    cr_assert_eq(a->ns[0], a->kv_dtype == DT_FP8 ? 20000 : 30000, "%s: %g", dtype_name(a->kv_dtype), a->ns[0]);
  }
  cr_assert(has_note(&d, "1 rows of attn_dtype fp8 with an fp8 cache kept") && has_note(&d, "attn_dtype fp8 (1 rows)"));
  /* decode: kv_len = step + 1 */
  cr_assert_eq(d.nattn[PDA_DECODE], 1);
  cr_assert(d.attn[PDA_DECODE][0].y[0] == 2 && d.attn[PDA_DECODE][0].y[1] == 4);
  prof_doc_free(&d);
}

Test(kdb, sglang_trtllm_allreduce_stands_in_with_a_caveat) {
  const char *root = sglang_db();
  prof_doc d;
  sim_err err = {0};
  cr_assert_eq(import_sglang(root, "0.5.6.post2", NULL, &d, &err), SIM_OK, "%s", err.msg);
  cr_assert_eq(d.nar, 1, "TensorRT-LLM's table has graph rows only");
  cr_assert(d.ar[0].impl == PROF_AR_CUSTOM_GRAPH && d.ar[0].ns[1] == 3100);
  cr_assert(strstr(d.ar[0].kernel, "standing in for SGLang's"), "%s", d.ar[0].kernel);
  cr_assert(strstr(d.kdb_caveat, "TensorRT-LLM 1.2.0rc5"), "%s", d.kdb_caveat);
  cr_assert(has_note(&d, "not SGLang's"));
  /* the caveat travels with the profile into its origin, the phrase every run's source line quotes */
  prof *p;
  cr_assert_eq(prof_load(&p, write_doc(&d), &err), SIM_OK, "%s", err.msg);
  cr_assert(strstr(prof_origin(p), "sglang 0.5.6.post2 on h100_sxm; custom_allreduce_perf is TensorRT-LLM 1.2.0rc5"),
            "%s", prof_origin(p));
  prof_free(p);
  prof_doc_free(&d);
}

Test(kdb, rows_of_another_device_only_when_named) {
  const char *root = sglang_db();
  char p[4096];
  snprintf(p, sizeof p, "%s/h100_sxm/sglang-0.5.14/gemm_perf.csv.gz", root);
  cr_assert(tu_write_table(p,
                           "framework,version,device,op_name,kernel_source,gemm_dtype,m,n,k,latency\n"
                           "SGLang,0.5.14,NVIDIA H200,gemm,k,bfloat16,1,1024,1024,0.005\n",
                           true));
  prof_doc d;
  sim_err err = {0};
  cr_assert_eq(import_sglang(root, NULL, NULL, &d, &err), SIM_EINPUT);
  cr_assert(strstr(err.msg, "gemm_perf.csv.gz:2: column device") && strstr(err.msg, "not a name of gpu h100-sxm"),
            "%s", err.msg);
  prof_doc_free(&d);
  cr_assert_eq(import_sglang(root, NULL, "NVIDIA B200", &d, &err), SIM_EINPUT, "another name is still refused");
  prof_doc_free(&d);
  cr_assert_eq(import_sglang(root, NULL, "NVIDIA H200", &d, &err), SIM_OK, "%s", err.msg);
  cr_assert_eq(d.ngrid, 1);
  cr_assert_str_eq(d.kdb_caveat, "gemm_perf measured on NVIDIA H200 (copies in the database)");
  cr_assert(has_note(&d, "gemm_perf.csv.gz: 1 of 1 rows say device NVIDIA H200, not h100-sxm"));
  cr_assert_str_eq(d.device, "NVIDIA H100 80GB HBM3", "the device of the GPU's own rows");
  prof_doc_free(&d);
}
#undef AHDR
#undef SG
