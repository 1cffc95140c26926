/* testutil.c: helpers shared by the Criterion tests. */
#define _DEFAULT_SOURCE
#include "testutil.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

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

const char *tu_tmpfile(const char *suffix, const char *text) {
  static char bufs[8][256];
  static int k = 0;
  char *p = bufs[k++ % 8];
  snprintf(p, 256, "/tmp/servesim_test_XXXXXX%s", suffix ? suffix : "");
  int fd = mkstemps(p, suffix ? (int)strlen(suffix) : 0);
  if (fd < 0) return NULL;
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
  e.gemm_compute_eff = 0.75, e.gemm_memory_eff = 0.85, e.gemm_blend = 4;
  e.attn_prefill_eff = 0.5, e.attn_decode_eff = 0.7, e.elementwise_eff = 0.7;
  e.allreduce_bw_eff = 0.7, e.allreduce_latency_ns = 10e3;
  e.runtime_overhead_bytes = 1.5 * 1024 * MIB, e.cuda_graph_bytes = 0.5 * 1024 * MIB, e.activation_scale = 1.2;
  return e;
}

deploy_cfg tu_deploy(uint32_t tp, sim_dtype w) {
  deploy_cfg d;
  memset(&d, 0, sizeof d);
  d.tp = tp, d.replicas = 1, d.act_dtype = DT_BF16, d.weight_dtype = w, d.kv_dtype = DT_BF16;
  d.max_num_seqs = 1024, d.max_num_batched_tokens = 8192, d.block_size = 16, d.max_model_len = 131072;
  d.gpu_memory_utilization = 0.92;
  d.async_scheduling = 1; /* the vLLM engine's default */
  return d;
}
