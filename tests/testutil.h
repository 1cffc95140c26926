/* testutil.h: helpers shared by the Criterion tests. */
#ifndef SIM_TESTUTIL_H
#define SIM_TESTUTIL_H

#include <stdbool.h>
#include <stddef.h>

#include "config/cfg.h"
#include "runner/runner.h"
#include "serve/cluster.h"

/* Runs `servesim <args>` (args is a shell-quoted string), captures stdout and
 * stderr (each truncated to cap-1 bytes, NUL-terminated) and returns the exit
 * status (or -1 if it did not exit normally, e.g. a crash). */
int tu_run_cli(const char *args, char *out, size_t out_cap, char *errout, size_t err_cap);
/* Path of a file under the source tree. */
const char *tu_src(const char *rel); /* static buffer: copy if needed */
/* Path of ../shared/<rel> beside the source tree if it exists, else NULL
 * (tests that need shared data skip when it is absent). */
const char *tu_shared(const char *rel);
/* Writes text to a fresh temp file and returns its path (static buffer rotation of 8). */
const char *tu_tmpfile(const char *suffix, const char *text);
/* The number after "key": in a JSON text (its first occurrence), NAN when absent. */
double tu_json_num(const char *text, const char *key);
/* Reads a whole file (malloc'd, NUL-terminated) or NULL. */
char *tu_slurp(const char *path, size_t *len);

/* Writes `text` to path: gzipped when gz, else plain (the kernel-db reader
 * reads both under a .csv.gz name). Creates missing parent directories.
 * Returns false on an I/O error. */
bool tu_write_table(const char *path, const char *text, bool gz);
/* A fresh empty directory under /tmp (static buffer rotation of 4). */
const char *tu_tmpdir(void);
/* Removes path (a file, or a directory with everything in it) when this
 * test process exits, whether the test passed or not. tu_tmpfile and
 * tu_tmpdir track what they make already. */
void tu_tmp_track(const char *path);
/* A tiny kernel database under root (see testutil.c for its content):
 * h100_sxm/vllm-0.14.0 (every table kind), h100_sxm/vllm-0.24.0 (GEMM only),
 * h100_sxm/nccl-2.29.2, and .aic-commit "0123456789ab". */
bool tu_kdb_fixture(const char *root);

/* Configs built in code, independent of the config loaders and files, for
 * tests that check numbers computed by hand: Llama-3.1-70B (bf16, untied
 * embeddings); H200 and H100 SXM datasheet figures (NVLink, 132 SMs, no
 * all-reduce base latency); a vLLM-like engine (vLLM's limits, the memory
 * overheads and efficiency factors of configs/engines/vllm.json at the time
 * the tests were written); a deployment of one replica of tp GPUs with
 * weights w, bf16 activations and KV cache, vLLM's limits, max_model_len
 * 131072, memory utilization 0.92 (prefix caching and chunked prefill 0). */
model_cfg tu_model_llama70b(void);
gpu_cfg tu_gpu_h200(void);
gpu_cfg tu_gpu_h100(void);
engine_cfg tu_engine_vllm(void);
deploy_cfg tu_deploy(uint32_t tp, sim_dtype w);
/* DeepSeek-V3's config.json fields that matter here (MLA, 256 routed experts, 3 dense layers first), with
 * block-FP8 quantization_config when fp8_block (the checkpoint's own), else none. */
model_cfg tu_model_deepseek_v3(bool fp8_block);

/* Prepares and executes scenario sc, failing the test with the message if either fails; tu_run_done frees. */
run_ctx *tu_run_scenario(const scenario *sc);
void tu_run_done(run_ctx *r);
/* Two runs of one scenario gave the same results bit for bit: every per-request record, the summary, time by op
   and bound, busy time, level integrals, span, every time-series row and the prefix-cache counts. */
void tu_assert_same_results(const run_result *x, const run_result *y, const char *what);
/* A generated open-loop scenario (the defaults otherwise): TP4, `replicas` replicas, n requests at `rate`/s. */
void tu_gen_scenario(scenario *sc, uint32_t replicas, size_t n, double rate);
/* tu_gen_scenario with a small KV pool: Llama-3.1-8B on one L40S at 0.45 of its memory, max_model_len 3000,
   prompts 1500 +-90%, outputs 600 +-90% (some longer than max_model_len together: refused at send), 256 seqs. */
void tu_small_pool_scenario(scenario *sc, uint32_t replicas, size_t n, double rate);
/* Preemptions summed over a run's requests. */
uint64_t tu_preemptions(const run_result *r);

/* What a cluster test builds: the configs, a cost model on them, a trace and the cluster (caller storage). */
typedef struct tu_world {
  model_cfg m;
  gpu_cfg g;
  engine_cfg e;
  deploy_cfg d;
  cost_model *cost;
  trace tr;
  cluster *c;
} tu_world;

#endif
