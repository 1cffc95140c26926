/* kdb.h: importing NVIDIA AIConfigurator's kernel database (per-operation
 * GPU timings measured by its collectors, Apache-2.0; layout
 * <root>/<gpu_dir>/<framework>-<version>/<table>.csv.gz and
 * <root>/<gpu_dir>/nccl-<version>/nccl_perf.csv.gz) into a profile document
 * (hw/prof_write.h, format version 2). `servesim calibrate --from-kernel-db`
 * is its command line; configs/profiles/README.md documents every choice.
 *
 * What is read, and how it maps:
 *   gemm_perf                  -> gemm_grid: gemm_dtype bfloat16 -> bf16/bf16,
 *                                 fp8 -> fp8/fp8, int8_wo -> int8/bf16,
 *                                 int4_wo -> int4/bf16, sq -> int8/int8; other
 *                                 dtypes (fp8_block, nvfp4, ...) are skipped
 *   generation_attention_perf  -> attn_decode: batch_size x kv_len, kv_len =
 *                                 step + kdb_decode_offset (below)
 *   context_attention_perf     -> attn_context: batch_size x isl
 *   custom_allreduce_perf      -> allreduce impl custom (graph / eager; SGLang's
 *                                 gemm_dtype int8_wo is W8A8: int8/int8, kdb_gemm.c)
 *   nccl_perf (all_reduce)     -> allreduce impl nccl
 *   moe_perf, mla_*_module_perf -> moe, mla_module (kdb_moe.c, kdb_mla.c)
 *   gdn_perf                   -> gdn_module: per phase and per-GPU shape, the
 *                                 convolution + delta-rule kernels (kdb_gdn.c)
 *   dsa_*_module_perf          -> mla_module with index_topk (DeepSeek sparse
 *                                 attention blocks of DeepSeek-V3.2, GLM-5)
 * Attention rows: beam_width 1, attn_dtype bfloat16 (SGLang's context rows
 * also attn_dtype fp8 with an fp8 cache, kdb_attn.c); kv_cache_dtype bfloat16
 * or fp8; each window_size (0 or no such column: full attention) its own table. Rows that repeat
 * a key (several kernel_source values: alternative backends the collector
 * ran) keep the fastest. Latencies are milliseconds in the data, ns in the
 * profile. Every skipped row kind, absent table and odd version is written to
 * the profile's notes.
 * The GPU directory is the entry of <root> equal (ignoring case) to the gpu
 * config's name or one of its aliases (configs/gpus/NAME.json), and every
 * row's `device` must be one of them too: no GPU table in C.
 * Probes: the gpu config's datasheet HBM bandwidth and dense peaks
 * (probes_source "datasheet"); they only normalize the interpolation.
 *
 * Errors: SIM_EINPUT naming the file, line and column (hw/kdb_csv.h) or the
 * directory. Deterministic: the same data give a byte-identical profile. */
#ifndef SIM_KDB_H
#define SIM_KDB_H

#include "config/cfg.h"
#include "hw/prof_write.h"

typedef struct kdb_req {
  const char *root;           /* the kernel-db directory */
  const gpu_cfg *gpu;         /* its name and aliases find the GPU directory; its datasheet gives the probes */
  const char *engine;         /* "vllm", "trtllm" or "sglang" */
  const char *engine_version; /* NULL or "": the newest version present */
  uint32_t gemm_m_step;       /* > 1: import only the GEMM rows whose m is at most this or a multiple of it
                                 (the collectors also time m = 256j + 1 for every j; a sensitivity study of
                                 what those rows do to the interpolation, docs/ACCURACY.md); 0 or 1: all rows */
  const char *other_device;   /* NULL or "": every row's `device` must name the GPU; else rows whose `device` is
                                 exactly this name are accepted too (tables the database copied from another GPU,
                                 e.g. the GB300 tables in b300_sxm/sglang-0.5.14): each such table is named in a
                                 note and in the profile's kernel_db.caveat, so every report of a run says so */
} kdb_req;

enum { KDB_MAX_VERSIONS = 32, KDB_VERSION_LEN = 32 };

/* The versions of `engine` present for the GPU, oldest first (version order,
 * core/version.h), into out[0..*n). */
int kdb_versions(const char *root, const gpu_cfg *gpu, const char *engine, char (*out)[KDB_VERSION_LEN], int max,
                 int *n, sim_err *err);

/* Imports the tables of one (GPU, engine, version) into d (initialized by the
 * caller; filled even when only some tables exist). */
int kdb_import(const kdb_req *r, prof_doc *d, sim_err *err);

/* Tokens one generation-attention row attends to: step + this offset. The
 * collectors differ (AIConfigurator collector/, at the data's commit):
 * TensorRT-LLM's caches `step` tokens and decodes one more (step + 1);
 * vLLM's collector before the 0.24.0 upgrade built sequences of `step`
 * tokens including the decoded one (step), from 0.24.0 on `step` cached
 * tokens plus the new one (step + 1); SGLang's (collector/sglang/
 * collect_attn.py, every version since 0.5.6: history_len = step cached
 * tokens, total_len = step + 1) step + 1. */
uint32_t kdb_decode_offset(const char *engine, const char *version);

#endif
