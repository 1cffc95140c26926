/* testutil.c: helpers shared by the Criterion tests. */
#define _DEFAULT_SOURCE
#define _XOPEN_SOURCE 700
#include "testutil.h"

#include <criterion/criterion.h>

#include <ftw.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <zlib.h>

static void read_into(const char *path, char *buf, size_t cap) {
  if (!buf || !cap) return;
  buf[0] = 0;
  FILE *f = fopen(path, "rb");
  if (!f) return;
  size_t n = fread(buf, 1, cap - 1, f);
  buf[n] = 0;
  fclose(f);
}

int tu_run_cli(const char *args, char *out, size_t out_cap, char *errout, size_t err_cap) {
  char o[] = "/tmp/servesim_out_XXXXXX", e[] = "/tmp/servesim_err_XXXXXX";
  int fo = mkstemp(o), fe = mkstemp(e);
  if (fo < 0 || fe < 0) return -2;
  close(fo);
  close(fe);
  size_t n = strlen(args) + 4096;
  char *cmd = malloc(n);
  snprintf(cmd, n, "cd '%s' && '%s' %s >'%s' 2>'%s' </dev/null", SERVESIM_SOURCE_DIR, SERVESIM_BIN, args, o, e);
  int st = system(cmd);
  free(cmd);
  read_into(o, out, out_cap);
  read_into(e, errout, err_cap);
  unlink(o);
  unlink(e);
  if (st == -1 || !WIFEXITED(st)) return -1;
  return WEXITSTATUS(st);
}

const char *tu_src(const char *rel) {
  static char buf[4096];
  snprintf(buf, sizeof buf, "%s/%s", SERVESIM_SOURCE_DIR, rel);
  return buf;
}

const char *tu_shared(const char *rel) {
  static char buf[4096];
  struct stat st;
  const char *env = getenv("SERVESIM_SHARED_DIR");
  if (env && *env)
    snprintf(buf, sizeof buf, "%s/%s", env, rel);
  else
    snprintf(buf, sizeof buf, "%s/../shared/%s", SERVESIM_SOURCE_DIR, rel);
  return stat(buf, &st) == 0 ? buf : NULL;
}

/* Every temp file and directory a test process makes is removed when it
 * exits (Criterion runs each test in its own process and exits it
 * normally), so the suite leaves nothing in /tmp. */
#define TU_MAX_TMP 256
static char tu_tmp_paths[TU_MAX_TMP][256];
static int tu_tmp_n = 0;
static pid_t tu_tmp_owner = 0;

static int rm_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw) {
  (void)st, (void)flag, (void)ftw;
  (void)remove(path); /* best effort: keep going */
  return 0;
}

static void tu_tmp_cleanup(void) {
  if (tu_tmp_owner != getpid()) return; /* a forked child's copy of the list: its parent cleans */
  for (int i = 0; i < tu_tmp_n; i++) nftw(tu_tmp_paths[i], rm_entry, 16, FTW_DEPTH | FTW_PHYS);
  tu_tmp_n = 0;
}

void tu_tmp_track(const char *path) {
  if (tu_tmp_owner != getpid()) { /* first temp path of this process */
    tu_tmp_owner = getpid();
    tu_tmp_n = 0;
    atexit(tu_tmp_cleanup);
  }
  if (tu_tmp_n < TU_MAX_TMP) snprintf(tu_tmp_paths[tu_tmp_n++], sizeof tu_tmp_paths[0], "%s", path);
}

const char *tu_tmpfile(const char *suffix, const char *text) {
  static char bufs[8][256];
  static int k = 0;
  char *p = bufs[k++ % 8];
  snprintf(p, 256, "/tmp/servesim_test_XXXXXX%s", suffix ? suffix : "");
  int fd = mkstemps(p, suffix ? (int)strlen(suffix) : 0);
  if (fd < 0) return NULL;
  tu_tmp_track(p);
  size_t len = strlen(text);
  if (write(fd, text, len) != (ssize_t)len) {
    close(fd);
    return NULL;
  }
  close(fd);
  return p;
}

char *tu_slurp(const char *path, size_t *len) {
  FILE *f = fopen(path, "rb");
  if (!f) return NULL;
  fseek(f, 0, SEEK_END);
  long n = ftell(f);
  fseek(f, 0, SEEK_SET);
  char *b = malloc((size_t)n + 1);
  size_t r = fread(b, 1, (size_t)n, f);
  b[r] = 0;
  fclose(f);
  if (len) *len = r;
  return b;
}

#define MIB (1024.0 * 1024.0)

model_cfg tu_model_llama70b(void) {
  model_cfg m;
  memset(&m, 0, sizeof m);
  strcpy(m.name, "llama-3.1-70b");
  strcpy(m.arch, "llama");
  m.hidden = 8192, m.intermediate = 28672, m.layers = 80, m.q_heads = 64, m.kv_heads = 8, m.head_dim = 128;
  m.vocab = 128256, m.max_pos = 131072, m.native_dtype = DT_BF16;
  return m;
}

gpu_cfg tu_gpu_h200(void) {
  gpu_cfg g;
  memset(&g, 0, sizeof g);
  strcpy(g.name, "h200");
  g.mem_bytes = 143771 * MIB, g.hbm_Bps = 4.8e12;
  g.flops[DT_BF16] = g.flops[DT_FP16] = 989e12;
  g.flops[DT_FP8] = g.flops[DT_INT8] = 1979e12;
  g.link = LINK_NVLINK, g.link_Bps = 450e9, g.link_latency_ns = 0;
  g.gpus_per_node = 8, g.net_Bps = 50e9, g.net_latency_ns = 5e3; /* 8-GPU nodes, 400 Gb/s per GPU */
  g.sm_count = 132;
  return g;
}

gpu_cfg tu_gpu_h100(void) {
  gpu_cfg g = tu_gpu_h200();
  strcpy(g.name, "h100-sxm");
  g.mem_bytes = 81559 * MIB, g.hbm_Bps = 3.35e12;
  return g;
}

engine_cfg tu_engine_vllm(void) {
  engine_cfg e;
  memset(&e, 0, sizeof e);
  strcpy(e.name, "vllm");
  e.max_num_seqs = 1024, e.max_num_batched_tokens = 8192, e.block_size = 16, e.gpu_memory_utilization = 0.92;
  e.async_scheduling = true;
  e.step_overhead_ns = 500e3, e.per_seq_overhead_ns = 2e3;
  e.cuda_graph_max_batch = 512, e.launch_overhead_ns_per_layer = 20e3;
  e.graph_mode = GRAPH_FULL_AND_PIECEWISE;
  e.elementwise_kernels_per_layer = 4, e.kernel_floor_ns = 2.5e3;
  e.gemm_compute_eff = 0.75, e.gemm_memory_eff = 0.85;
  e.attn_prefill_eff = 0.5, e.attn_decode_eff = 0.7, e.elementwise_eff = 0.7;
  e.allreduce_bw_eff = 0.7, e.allreduce_latency_ns = 10e3;
  e.runtime_overhead_bytes = 1.5 * 1024 * MIB, e.cuda_graph_bytes = 0.5 * 1024 * MIB, e.activation_scale = 1.2;
  return e;
}

model_cfg tu_model_deepseek_v3(bool fp8_block) {
  char json[1024];
  snprintf(json, sizeof json,
           "{\"model_type\": \"deepseek_v3\", \"hidden_size\": 7168, \"intermediate_size\": 18432, "
           "\"moe_intermediate_size\": 2048, \"num_hidden_layers\": 61, \"num_attention_heads\": 128, "
           "\"num_key_value_heads\": 128, \"q_lora_rank\": 1536, \"kv_lora_rank\": 512, "
           "\"qk_nope_head_dim\": 128, \"qk_rope_head_dim\": 64, \"v_head_dim\": 128, "
           "\"n_routed_experts\": 256, \"num_experts_per_tok\": 8, \"n_shared_experts\": 1, "
           "\"first_k_dense_replace\": 3, \"vocab_size\": 129280, \"max_position_embeddings\": 163840%s}",
           fp8_block ? ", \"quantization_config\": {\"quant_method\": \"fp8\", \"weight_block_size\": [128, 128]}"
                     : "");
  model_cfg m;
  sim_err err = {0};
  if (cfg_model_parse(&m, json, "deepseek-v3.json", &err) != SIM_OK) {
    fprintf(stderr, "tu_model_deepseek_v3: %s\n", err.msg);
    abort();
  }
  return m;
}

deploy_cfg tu_deploy(uint32_t tp, sim_dtype w) {
  deploy_cfg d;
  memset(&d, 0, sizeof d);
  d.tp = tp, d.replicas = 1, d.act_dtype = DT_BF16, d.weight_dtype = w, d.kv_dtype = DT_BF16;
  d.max_num_seqs = 1024, d.max_num_batched_tokens = 8192, d.block_size = 16, d.max_model_len = 131072;
  d.gpu_memory_utilization = 0.92;
  d.async_scheduling = 1; /* the vLLM engine's default */
  d.pp = 1, d.dp = 1, d.gpus_per_node = 8; /* what cfg_resolve gives: a resolved value (moe_ep 0: deploy_ep) */
  d.resolved = true;
  return d;
}

/* ---- kernel-db fixtures ------------------------------------------------------------ */

static bool mkdirs(const char *path) {
  char p[4096];
  snprintf(p, sizeof p, "%s", path);
  for (char *s = p + 1; *s; s++)
    if (*s == '/') {
      *s = 0;
      mkdir(p, 0755);
      *s = '/';
    }
  return true;
}

bool tu_write_table(const char *path, const char *text, bool gz) {
  mkdirs(path);
  if (!gz) {
    FILE *f = fopen(path, "w");
    if (!f) return false;
    bool ok = fputs(text, f) >= 0;
    return fclose(f) == 0 && ok;
  }
  gzFile g = gzopen(path, "wb");
  if (!g) return false;
  int n = (int)strlen(text);
  bool ok = gzwrite(g, text, (unsigned)n) == n;
  return gzclose(g) == Z_OK && ok;
}

const char *tu_tmpdir(void) {
  static char bufs[4][64];
  static int k = 0;
  char *p = bufs[k++ % 4];
  snprintf(p, 64, "/tmp/servesim_testdir_XXXXXX");
  if (!mkdtemp(p)) return NULL;
  tu_tmp_track(p);
  return p;
}

/* Appends a printf'd line to a growing text. */
static void addf(char **s, size_t *n, size_t *cap, const char *fmt, ...) __attribute__((format(printf, 4, 5)));
static void addf(char **s, size_t *n, size_t *cap, const char *fmt, ...) {
  for (;;) {
    va_list ap;
    va_start(ap, fmt);
    int w = vsnprintf(*s + *n, *cap - *n, fmt, ap);
    va_end(ap);
    if (w >= 0 && (size_t)w < *cap - *n) {
      *n += (size_t)w;
      return;
    }
    *cap = *cap * 2 + (size_t)(w > 0 ? w : 0) + 64;
    *s = realloc(*s, *cap);
  }
}

#define DEV "NVIDIA H100 80GB HBM3"

/* GEMM rows: m {1, 16, 256} x n {1024, 4096} x k {1024, 4096}, latency
 * (m + 1) * 0.001 + n / 1e6 + k / 1e7 ms; cell (256, 4096, 4096) left out;
 * (1, 1024, 1024) repeated by a faster and a slower kernel; one fp8_block row (a block-scaled grid). */
static char *gemm_text(const char *version) {
  size_t n = 0, cap = 4096;
  char *s = malloc(cap);
  s[0] = 0;
  addf(&s, &n, &cap, "framework,version,device,op_name,kernel_source,gemm_dtype,m,n,k,latency\n");
  static const int ms[] = {1, 16, 256}, ns[] = {1024, 4096};
  for (int i = 0; i < 3; i++)
    for (int j = 0; j < 2; j++)
      for (int l = 0; l < 2; l++) {
        if (i == 2 && j == 1 && l == 1) continue;
        double lat = (ms[i] + 1) * 0.001 + ns[j] / 1e6 + ns[l] / 1e7;
        addf(&s, &n, &cap, "VLLM,%s,%s,gemm,kA,bfloat16,%d,%d,%d,%.7f\n", version, DEV, ms[i], ns[j], ns[l], lat);
      }
  addf(&s, &n, &cap, "VLLM,%s,%s,gemm,kB,bfloat16,1,1024,1024,0.0015\n", version, DEV);
  addf(&s, &n, &cap, "VLLM,%s,%s,gemm,kC,bfloat16,1,1024,1024,0.0100\n", version, DEV);
  addf(&s, &n, &cap, "VLLM,%s,%s,gemm,kD,fp8_block,1,1024,1024,0.0030\n", version, DEV);
  return s;
}

bool tu_kdb_fixture(const char *root) {
  char p[4096];
  bool ok = true;
  snprintf(p, sizeof p, "%s/.aic-commit", root);
  ok &= tu_write_table(p, "0123456789ab\n", false);
  char *g = gemm_text("0.14.0");
  snprintf(p, sizeof p, "%s/h100_sxm/vllm-0.14.0/gemm_perf.csv.gz", root);
  ok &= tu_write_table(p, g, true);
  free(g);
  g = gemm_text("0.24.0");
  snprintf(p, sizeof p, "%s/h100_sxm/vllm-0.24.0/gemm_perf.csv.gz", root);
  ok &= tu_write_table(p, g, true);
  free(g);
  /* generation attention, written plain under the .gz name: batch {1, 8} x step {1, 15, 255}, heads 8/1/128 */
  size_t n = 0, cap = 4096;
  char *s = malloc(cap);
  addf(&s, &n, &cap, "framework,version,device,op_name,kernel_source,batch_size,isl,num_heads,num_key_value_heads,"
                     "head_dim,beam_width,attn_dtype,kv_cache_dtype,step,latency\n");
  static const int bs[] = {1, 8}, steps[] = {1, 15, 255};
  for (int kv = 0; kv < 2; kv++)
    for (int i = 0; i < 2; i++)
      for (int j = 0; j < 3; j++)
        addf(&s, &n, &cap, "VLLM,0.14.0,%s,generation_attention,fa,%d,1,8,1,128,1,bfloat16,%s,%d,%.4f\n", DEV, bs[i],
             kv ? "fp8" : "bfloat16", steps[j], 0.01 + bs[i] * steps[j] * 1e-5);
  snprintf(p, sizeof p, "%s/h100_sxm/vllm-0.14.0/generation_attention_perf.csv.gz", root);
  ok &= tu_write_table(p, s, false);
  /* context attention with window_size and fp8-compute rows: batch {1, 2} x isl {16, 128}, heads 8/8/64 */
  n = 0;
  addf(&s, &n, &cap, "framework,version,device,op_name,kernel_source,batch_size,isl,num_heads,num_key_value_heads,"
                     "head_dim,beam_width,attn_dtype,kv_cache_dtype,step,window_size,latency\n");
  static const int isls[] = {16, 128};
  for (int i = 0; i < 2; i++)
    for (int j = 0; j < 2; j++) {
      double lat = 0.01 + bs[i] * isls[j] * isls[j] * 1e-7;
      addf(&s, &n, &cap, "VLLM,0.14.0,%s,context_attention,fa,%d,%d,8,8,64,1,bfloat16,bfloat16,0,0,%.6f\n", DEV,
           i + 1, isls[j], lat);
      addf(&s, &n, &cap, "VLLM,0.14.0,%s,context_attention,fa,%d,%d,8,8,64,1,bfloat16,bfloat16,0,128,%.6f\n", DEV,
           i + 1, isls[j], lat / 2);
      addf(&s, &n, &cap, "VLLM,0.14.0,%s,context_attention,fa,%d,%d,8,8,64,1,fp8,fp8,0,0,%.6f\n", DEV, i + 1,
           isls[j], lat / 3);
    }
  snprintf(p, sizeof p, "%s/h100_sxm/vllm-0.14.0/context_attention_perf.csv.gz", root);
  ok &= tu_write_table(p, s, true);
  /* vLLM custom all-reduce, graph and eager, 2 GPUs, 128..8192 elements */
  n = 0;
  addf(&s, &n, &cap, "framework,version,device,op_name,kernel_source,allreduce_dtype,num_gpus,message_size,latency,"
                     "backend\n");
  for (int e = 128; e <= 8192; e *= 8) {
    addf(&s, &n, &cap, "vLLM,0.14.0,%s,all_reduce,vLLM_custom_graph,bfloat16,2,%d,%.5f,vllm_graph\n", DEV, e,
         0.004 + e * 1e-7);
    addf(&s, &n, &cap, "vLLM,0.14.0,%s,all_reduce,vLLM_custom_eager,bfloat16,2,%d,%.5f,vllm_eager\n", DEV, e,
         0.02 + e * 1e-7);
  }
  snprintf(p, sizeof p, "%s/h100_sxm/vllm-0.14.0/custom_allreduce_perf.csv.gz", root);
  ok &= tu_write_table(p, s, true);
  n = 0; /* fused MoE: one shape by two kernels (the faster kept) at 3 token counts, and one balanced shape */
  addf(&s, &n, &cap, "framework,version,device,op_name,kernel_source,moe_dtype,num_tokens,hidden_size,inter_size,topk,"
                     "num_experts,moe_tp_size,moe_ep_size,distribution,latency\n");
  for (int t = 1; t <= 64; t *= 8) {
    addf(&s, &n, &cap, "VLLM,0.14.0,%s,moe,vllm_fused_moe,fp8_block,%d,4096,1536,8,128,2,1,balanced,%.5f\n", DEV, t,
         0.05 + t * 0.002);
    addf(&s, &n, &cap, "VLLM,0.14.0,%s,moe,vllm_other_moe,fp8_block,%d,4096,1536,8,128,2,1,balanced,%.5f\n", DEV, t,
         0.08 + t * 0.002);
    addf(&s, &n, &cap, "VLLM,0.14.0,%s,moe,vllm_fused_moe,bfloat16,%d,4096,14336,2,8,2,1,power_law_1.01,%.5f\n", DEV,
         t, 0.2 + t * 0.01);
  }
  snprintf(p, sizeof p, "%s/h100_sxm/vllm-0.14.0/moe_perf.csv.gz", root);
  ok &= tu_write_table(p, s, true);
  /* MLA modules: DeepSeek-V3 at 16 heads, bf16 KV, fp8_block linears, batch {1, 4} x len {1, 64} with the
   * (4, 64) cell missing and (1, 64) measured by two kernels; a row of an unknown model and one of fp8 compute */
  static const char *const mhdr = "framework,version,device,op_name,kernel_source,model,architecture,mla_dtype,"
                                  "kv_cache_dtype,gemm_type,num_heads,batch_size,isl,tp_size,step,latency\n";
  for (int ctx = 0; ctx < 2; ctx++) {
    n = 0;
    addf(&s, &n, &cap, "%s", mhdr);
    const char *op = ctx ? "mla_context_module" : "mla_generation_module";
    int mb[3] = {1, 1, 4}, ml[3] = {1, 64, 1};
    for (int q = 0; q < 3; q++) {
      int isl = ctx ? ml[q] : 1, step = ctx ? 0 : ml[q];
      addf(&s, &n, &cap, "VLLM,0.14.0,%s,%s,FLASH_ATTN_MLA,deepseek-ai/DeepSeek-V3,DeepseekV3ForCausalLM,bfloat16,"
                         "bfloat16,fp8_block,16,%d,%d,8,%d,%.4f\n",
           DEV, op, mb[q], isl, step, 0.09 + q * 0.01 + ctx * 0.001);
    }
    addf(&s, &n, &cap, "VLLM,0.14.0,%s,%s,FLASH_ATTN,deepseek-ai/DeepSeek-V3,DeepseekV3ForCausalLM,bfloat16,bfloat16,"
                       "fp8_block,16,1,%d,8,%d,0.5\n", DEV, op, ctx ? 64 : 1, ctx ? 0 : 64);
    addf(&s, &n, &cap, "VLLM,0.14.0,%s,%s,X,some/OtherMLA,X,bfloat16,bfloat16,fp8_block,16,1,%d,8,%d,0.1\n", DEV, op,
         ctx ? 64 : 1, ctx ? 0 : 64);
    addf(&s, &n, &cap, "VLLM,0.14.0,%s,%s,X,deepseek-ai/DeepSeek-V3,X,fp8,bfloat16,fp8_block,16,1,%d,8,%d,0.1\n", DEV,
         op, ctx ? 64 : 1, ctx ? 0 : 64);
    snprintf(p, sizeof p, "%s/h100_sxm/vllm-0.14.0/%s_perf.csv.gz", root, op);
    ok &= tu_write_table(p, s, ctx == 1);
  }
  n = 0;
  addf(&s, &n, &cap, "framework,version,device,op_name,kernel_source,nccl_dtype,num_gpus,message_size,latency\n");
  for (int e = 256; e <= 65536; e *= 16) {
    addf(&s, &n, &cap, "TRTLLM,2.29.2,%s,all_reduce,NCCL,half,4,%d,%.5f\n", DEV, e, 0.01 + e * 1e-7);
    addf(&s, &n, &cap, "TRTLLM,2.29.2,%s,all_reduce,NCCL,int8,4,%d,%.5f\n", DEV, e, 0.01 + e * 1e-7);
    addf(&s, &n, &cap, "TRTLLM,2.29.2,%s,all_gather,NCCL,half,4,%d,%.5f\n", DEV, e, 0.01 + e * 1e-7);
  }
  snprintf(p, sizeof p, "%s/h100_sxm/nccl-2.29.2/nccl_perf.csv.gz", root);
  ok &= tu_write_table(p, s, true);
  free(s);
  return ok;
}

run_ctx *tu_run_scenario(const scenario *sc) {
  run_ctx *r = calloc(1, sizeof *r);
  cr_assert_not_null(r);
  sim_err err = {0, ""};
  int rc = runner_prepare(r, sc, &err);
  cr_assert_eq(rc, 0, "prepare: %s", err.msg);
  rc = runner_execute(r, NULL, &err);
  cr_assert_eq(rc, 0, "execute: %s", err.msg);
  return r;
}

void tu_run_done(run_ctx *r) {
  runner_free(r);
  free(r);
}

void tu_assert_same_results(const run_result *x, const run_result *y, const char *what) {
  cr_assert_eq(x->n_reqs, y->n_reqs, "%s", what);
  cr_assert(!memcmp(x->reqs, y->reqs, x->n_reqs * sizeof *x->reqs), "%s: per-request records", what);
  cr_assert(!memcmp(&x->sum, &y->sum, sizeof x->sum), "%s: summary", what);
  cr_assert(!memcmp(x->m.op_ns, y->m.op_ns, sizeof x->m.op_ns), "%s: time by op", what);
  cr_assert(!memcmp(x->m.bound_ns, y->m.bound_ns, sizeof x->m.bound_ns), "%s: time by bound", what);
  cr_assert(x->m.busy_ns == y->m.busy_ns && x->m.area_in_system == y->m.area_in_system &&
                x->m.area_waiting == y->m.area_waiting && x->m.level_t_ns == y->m.level_t_ns,
            "%s: busy time, level integrals, span", what);
  cr_assert_eq(x->m.n_ts, y->m.n_ts, "%s: time-series rows %zu vs %zu", what, x->m.n_ts, y->m.n_ts);
  for (size_t k = 0; k < x->m.n_ts; k++)
    cr_assert(x->m.ts[k].t_ns == y->m.ts[k].t_ns && x->m.ts[k].running == y->m.ts[k].running &&
                  x->m.ts[k].waiting == y->m.ts[k].waiting && x->m.ts[k].client_queue == y->m.ts[k].client_queue &&
                  !memcmp(&x->m.ts[k].kv_usage_mean, &y->m.ts[k].kv_usage_mean, sizeof(float)) &&
                  !memcmp(&x->m.ts[k].kv_usage_max, &y->m.ts[k].kv_usage_max, sizeof(float)) &&
                  x->m.ts[k].preemptions == y->m.ts[k].preemptions && x->m.ts[k].finished == y->m.ts[k].finished &&
                  x->m.ts[k].tokens == y->m.ts[k].tokens && x->m.ts[k].steps == y->m.ts[k].steps,
              "%s: time-series row %zu: t %lld/%lld run %u/%u wait %u/%u kv %.9g/%.9g max %.9g/%.9g pre %llu/%llu "
              "fin %llu/%llu tok %llu/%llu steps %llu/%llu",
              what, k, (long long)x->m.ts[k].t_ns, (long long)y->m.ts[k].t_ns, x->m.ts[k].running, y->m.ts[k].running,
              x->m.ts[k].waiting, y->m.ts[k].waiting, x->m.ts[k].kv_usage_mean, y->m.ts[k].kv_usage_mean,
              x->m.ts[k].kv_usage_max, y->m.ts[k].kv_usage_max, (unsigned long long)x->m.ts[k].preemptions,
              (unsigned long long)y->m.ts[k].preemptions, (unsigned long long)x->m.ts[k].finished,
              (unsigned long long)y->m.ts[k].finished, (unsigned long long)x->m.ts[k].tokens,
              (unsigned long long)y->m.ts[k].tokens, (unsigned long long)x->m.ts[k].steps,
              (unsigned long long)y->m.ts[k].steps);
  cr_assert_eq(x->kv_hit_tokens, y->kv_hit_tokens, "%s", what);
  cr_assert_eq(x->preempted_hit_tokens, y->preempted_hit_tokens, "%s", what);
}

void tu_gen_scenario(scenario *sc, uint32_t replicas, size_t n, double rate) {
  scenario_init(sc);
  sc->deploy.tp = 4;
  sc->deploy.replicas = replicas;
  sc->gen.num_prompts = n;
  sc->gen.request_rate = rate;
}

uint64_t tu_preemptions(const run_result *r) {
  uint64_t n = 0;
  for (size_t i = 0; i < r->n_reqs; i++) n += r->reqs[i].preemptions;
  return n;
}

void tu_small_pool_scenario(scenario *sc, uint32_t replicas, size_t n, double rate) {
  tu_gen_scenario(sc, replicas, n, rate);
  snprintf(sc->model, sizeof sc->model, "llama-3.1-8b");
  snprintf(sc->gpu, sizeof sc->gpu, "l40s");
  sc->deploy.tp = 1;
  sc->deploy.gpu_memory_utilization = 0.45;
  sc->deploy.max_model_len = 3000;
  sc->gen.input.len = 1500;
  sc->gen.input.range_ratio = 0.9;
  sc->gen.output.len = 600;
  sc->gen.output.range_ratio = 0.9;
  sc->deploy.max_num_seqs = 256;
}

double tu_json_num(const char *text, const char *key) {
  char pat[96];
  snprintf(pat, sizeof pat, "\"%s\":", key);
  const char *p = strstr(text, pat);
  return p ? strtod(p + strlen(pat), NULL) : NAN;
}
