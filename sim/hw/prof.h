/* prof.h: measured per-operation cost tables ("profiles") and their
 * interpolation. A profile is produced by `servesim calibrate` on a real GPU
 * (kernels/, format version 1 or 2) or imported from NVIDIA AIConfigurator's
 * kernel database (`servesim calibrate --from-kernel-db`, hw/kdb.h, format
 * version 2), and stored as JSON under configs/profiles/ (format:
 * configs/profiles/README.md).
 *
 * Queries return true and the time in ns when the profile has a table for the
 * operation (dtype, N, K or head layout); false means "no data": the cost
 * model then falls back (another GPU's profile scaled, then the roofline).
 * Inside a table's grid the result interpolates efficiency (achieved / speed
 * of light, from the profile's own probes) between measured points; outside
 * the grid it holds the boundary efficiency. An exact grid point returns the
 * measured value. (log(efficiency) is interpolated linearly in the log of the
 * coordinates: 1-D GEMM tables, bilinearly for attention tables, trilinearly
 * in (log M, log N, log K) for GEMM grids.)
 * Dtypes: fp16 is looked up as bf16 (same tensor-core rate). GEMM tables are
 * keyed by (weights, activations): bf16/bf16, fp8/fp8 and int8/int8 (cuBLASLt
 * or the engine's W8A8 GEMM), int4/bf16 and int8/bf16 (weight-only); an
 * fp8-weight query with 16-bit activations uses the fp8/fp8 table when it has
 * no table of its own (vLLM on Hopper quantizes the activations to fp8 per
 * step). A GEMM query takes an exact 1-D table (dtypes, N, K) first, else the
 * 3-D grid of its dtypes.
 * Head layouts (version 2 profiles only; version 1 keeps exact matching):
 * when no attention table has the query's (q_heads, kv_heads, head_dim) for
 * its KV dtype, the table with the same KV dtype and head_dim nearest in
 * (log kv_heads, log(q_heads / kv_heads)) serves it with its efficiency held
 * (the speed of light is the query's own, so time scales with the heads).
 *
 * Cost per query: O(log tables + log grid) (tables are sorted at load and
 * found by binary search) plus, for a head layout without a table of its
 * own, a scan of the tables of that KV dtype and head_dim (tens at most).
 * Ownership: prof_load allocates, prof_free releases. Read-only after load,
 * so thread-safe for reads. */
#ifndef SIM_PROF_H
#define SIM_PROF_H

#include "core/common.h"
#include "core/dtype.h"

typedef struct prof prof;

/* prof_load takes the build's binary image of a bundled profile (prof_bin.c) when the file at `path` holds the
 * exact bytes the image was made from, and parses the JSON otherwise; either way the tables are the same bits. */
int prof_load(prof **out, const char *path, sim_err *err);
int prof_parse(prof **out, const char *json, const char *what, sim_err *err);
void prof_free(prof *p);

/* Binary images of loaded profiles (prof_bin.c; the build makes one per bundled profile, scripts/profbin.c).
 * prof_bin_write: the image of p, made from the JSON text src[0..src_len) (its length and hash are kept so that
 * prof_bin_matches can tell whether a file is that text); *out is malloc'd. prof_bin_read: the profile of an
 * image, named `what`, whose tables are read-only views into the image (it must outlive the profile and be
 * 8-byte aligned); a foreign image (another layout or byte order) or one of the wrong length is an input error,
 * and with `verify` one whose payload hash differs. prof_bin_matches with src NULL checks the length only. */
uint64_t prof_bin_hash(const void *data, size_t n);
int prof_bin_write(const prof *p, const char *src, size_t src_len, unsigned char **out, size_t *n, sim_err *err);
bool prof_bin_matches(const void *img, size_t n, const char *src, size_t src_len);
int prof_bin_read(prof **out, const void *img, size_t n, const char *what, bool verify, sim_err *err);

const char *prof_gpu_name(const prof *p);   /* e.g. "h200" (the gpu config it was measured on) */
const char *prof_source(const prof *p);     /* path / description for reports */
int prof_format_version(const prof *p);     /* 1 or 2 */
const char *prof_engine(const prof *p);         /* "vllm", "trtllm"; "" when not recorded */
const char *prof_engine_version(const prof *p); /* "0.14.0"; "" when not recorded */
const char *prof_attribution(const prof *p);    /* license attribution of the data; "" when none */
/* Where the tables come from when imported, e.g. "kernel-db: NVIDIA
 * AIConfigurator, vllm 0.14.0 on h100_sxm"; "" for a calibrate profile. */
const char *prof_origin(const prof *p);

/* GEMM C[M,N] = A[M,K] x W[K,N]^T with weights in wdtype, activations in adtype. */
bool prof_gemm_ns(const prof *p, sim_dtype wdtype, sim_dtype adtype, uint32_t M, uint32_t N, uint32_t K,
                  double *ns);
/* A block-scaled FP8 GEMM (DeepSeek-style checkpoints, quantization_config
 * weight_block_size [128, 128]: activations quantized per token in groups of
 * 128 by a kernel of their own each call, weights in 128 x 128 blocks), from
 * a grid measured with those scales ("scaling": "block"); false when the
 * profile has none (the caller may then take the per-tensor FP8 GEMM). */
bool prof_gemm_block_ns(const prof *p, uint32_t M, uint32_t N, uint32_t K, double *ns);
/* Paged decode attention, one layer on one GPU: `batch` sequences each attending
 * to `kv_len` cached tokens; q_heads/kv_heads are per GPU. */
bool prof_attn_decode_ns(const prof *p, sim_dtype kv_dtype, uint32_t batch, uint32_t kv_len, uint32_t q_heads,
                         uint32_t kv_heads, uint32_t head_dim, double *ns);
/* Prefill attention, one layer on one GPU: `chunk` new tokens attending to
 * `ctx` cached tokens and causally to themselves. */
bool prof_attn_prefill_ns(const prof *p, uint32_t chunk, uint32_t ctx, uint32_t q_heads, uint32_t kv_heads,
                          uint32_t head_dim, double *ns);
/* Context (prompt) attention, one layer on one GPU: `batch` prompts of `isl`
 * tokens each, causal, no cached context; the call also writes their K and V
 * into the cache of kv_dtype. Bilinear in (log batch, log isl). */
bool prof_attn_context_ns(const prof *p, sim_dtype kv_dtype, uint32_t batch, uint32_t isl, uint32_t q_heads,
                          uint32_t kv_heads, uint32_t head_dim, double *ns);

/* Tables (decode and context) of that sliding window in p. */
int prof_window_tables(const prof *p, uint32_t window);
/* Sliding-window attention (each query attends to the last `window` tokens),
 * from tables measured with that window ("window" in attn_decode and
 * attn_context tables): a decode call of `batch` sequences holding kv_len
 * tokens each, a context call of `batch` prompts of `isl` tokens. False when
 * the profile has no table of that window (the caller then estimates). */
bool prof_attn_window_decode_ns(const prof *p, uint32_t window, sim_dtype kv_dtype, uint32_t batch, uint32_t kv_len,
                                uint32_t q_heads, uint32_t kv_heads, uint32_t head_dim, double *ns);
bool prof_attn_window_context_ns(const prof *p, uint32_t window, sim_dtype kv_dtype, uint32_t batch, uint32_t isl,
                                 uint32_t q_heads, uint32_t kv_heads, uint32_t head_dim, double *ns);

/* All-reduce of one TP group: the engine's own kernel replayed in a CUDA
 * graph or launched eagerly, or NCCL's. */
/* NCCL's all-gather and reduce-scatter (the data-parallel group's dispatch and
 * combine of mixture-of-experts layers) are tables of the same kind; their
 * `bytes` is the whole gathered buffer (what nccl-tests calls the size: every
 * rank's part together), an all-reduce's the vector each GPU holds. */
typedef enum prof_ar_impl {
  PROF_AR_CUSTOM_GRAPH = 0,
  PROF_AR_CUSTOM_EAGER,
  PROF_AR_NCCL,
  PROF_AG_NCCL, /* NCCL all_gather */
  PROF_RS_NCCL, /* NCCL reduce_scatter */
  PROF_AR_COUNT
} prof_ar_impl;
const char *prof_ar_impl_name(prof_ar_impl i); /* "custom graph", "custom eager", "nccl", "nccl all_gather", ... */
/* Time of one all-reduce of `bytes` bytes per GPU over num_gpus GPUs.
 * log(time) is linear in log(bytes) between measured sizes (exact on the
 * latency plateau and on the bandwidth line); below the smallest size the
 * time of the smallest is held; above the largest, time grows in proportion
 * to bytes from the largest. False when the profile has no table of that
 * implementation and GPU count. */
bool prof_allreduce_ns(const prof *p, prof_ar_impl impl, uint32_t num_gpus, double bytes, double *ns);

/* One fused mixture-of-experts layer on one GPU (version 2 profiles imported
 * from the kernel database): `tokens` tokens routed to `topk` of `experts`
 * experts of hidden x inter (one expert's intermediate size, unsharded),
 * split over `tp` ranks by tensor parallelism and `ep` by expert parallelism,
 * weights in `dtype` (the kernel-db moe_dtype: "bfloat16", "fp8",
 * "fp8_block", "int4_wo", "w4a16_mxfp4"), routing `dist` ("balanced",
 * "power_law_1.01", "power_law_1.2"), ungated: the experts' kind (a non-gated
 * kernel's table, prof_moe_key). log(time) is linear in log(tokens)
 * between measured counts; below the smallest the time of the smallest is
 * held, above the largest it grows in proportion to tokens. False when the
 * profile has no table of that exact shape. */
bool prof_moe_ns(const prof *p, const char *dtype, bool ungated, uint32_t tokens, uint32_t hidden, uint32_t inter,
                 uint32_t topk, uint32_t experts, uint32_t tp, uint32_t ep, const char *dist, double *ns);
/* A fused-MoE table's shape, the lookup key of the tables in memory, in a
 * written profile and in the kernel-db import alike (one order for all). */
typedef struct prof_moe_key {
  char dtype[32];
  uint32_t hidden, inter, topk, experts, tp, ep;
  char dist[24];
  bool ungated; /* a non-gated kernel's table (kernel_source / "kernel" names "nongated": TensorRT-LLM's
                   moe_torch_flow_nongated, up and down only, Nemotron-3's relu2 experts), never merged with nor
                   taken for a gated (gate, up, down) one of the same shape */
} prof_moe_key;
int prof_moe_key_cmp(const prof_moe_key *a, const prof_moe_key *b);
/* Tables in the profile (for reports). */
int prof_moe_tables(const prof *p);

/* Multi-head latent attention modules (version 2 profiles imported from the
 * kernel database's mla_generation_module_perf and mla_context_module_perf):
 * the whole attention block of one layer on one GPU as the engine runs it in
 * a CUDA graph (q and kv down- and up-projections, their norms, RoPE, the
 * attention: absorbed for decodes, expanded for prompts, the output
 * projection), measured with one model's MLA dimensions, per phase, KV
 * dtype, linear-layer GEMM type and heads per GPU, over batch x length
 * (generation: the tokens each decode attends to; context: the prompt length,
 * nothing cached). Lookup: along a batch row log(time) is linear in
 * log(length) between measured lengths, held below the first, and beyond the
 * row's last measured length grows linearly in length with the row's last
 * slope (the attention reads the cache: time linear in it), never below the
 * last time; across rows log(time) is linear in log(batch) between the two
 * rows around the batch, held below the first row and proportional to batch
 * above the last. False when the profile has no table of that exact key. */
typedef struct prof_mla_dims {
  uint32_t hidden, q_lora, kv_lora, qk_nope, qk_rope, v_head;
} prof_mla_dims;
typedef struct prof_mla_key {
  bool context;       /* false: the generation (decode) module; true: the context (prompt) module */
  sim_dtype kv_dtype; /* bf16 or fp8 */
  char gemm[16];      /* the linears' kernel-db gemm_type: "bfloat16", "fp8_block", "nvfp4" */
  uint32_t heads;     /* attention heads on one GPU */
  prof_mla_dims dims;
  uint32_t topk;      /* DeepSeek sparse attention modules (dsa_*_module_perf: the indexer, its top-k and the
                         sparse MLA in the block): the model's index_topk; 0: plain MLA */
} prof_mla_key;
int prof_mla_key_cmp(const prof_mla_key *a, const prof_mla_key *b);
bool prof_mla_module_ns(const prof *p, const prof_mla_key *k, uint32_t batch, uint32_t len, double *ns);
int prof_mla_tables(const prof *p);

/* Gated DeltaNet recurrence kernels (version 2 profiles imported from the kernel database's gdn_perf): per
 * layer on one GPU, the short causal convolution plus the gated delta rule, as the engine calls them (decode:
 * causal_conv1d_update and the fused recurrent rule for one token of each sequence; context: causal_conv1d_fn
 * and the chunked rule over prompts with nothing cached). The layer's projections are GEMMs and not in them.
 * Key: phase, heads and head dims per GPU, convolution kernel size; over batch x length (generation: length
 * 1; context: tokens per sequence). Lookup as prof_mla_module_ns (log-log along a batch row, linear with the
 * row's last slope above its last length; log-log across rows, proportional to batch above the last). False
 * when the profile has no table of that exact key. */
typedef struct prof_gdn_key {
  bool context;            /* false: decode (one token a sequence); true: prompts */
  uint32_t k_heads, k_dim; /* key heads per GPU, key head dim */
  uint32_t v_heads, v_dim; /* value heads per GPU, value head dim */
  uint32_t conv;           /* short-convolution kernel size */
} prof_gdn_key;
int prof_gdn_key_cmp(const prof_gdn_key *a, const prof_gdn_key *b);
bool prof_gdn_ns(const prof *p, const prof_gdn_key *k, uint32_t batch, uint32_t len, double *ns);
int prof_gdn_tables(const prof *p);

/* ---- additions of the calibration work (the contract above is unchanged) ----
 *
 * The work of one call as the speed-of-light (SOL) counts it: flops, the
 * fewest bytes moved through device memory (each input read once, each output
 * written once) and the dtype whose peak rate bounds the arithmetic.
 * SOL time = max(flops / peak_flops[compute], bytes / copy_Bps) with the
 * profile's own probes. Efficiency = SOL time / measured time. */
typedef struct prof_work {
  double flops;      /* FLOP (multiply-add = 2) */
  double bytes;      /* bytes read + written */
  sim_dtype compute; /* DT_BF16 (bf16/fp16 and weight-only), DT_FP8 or DT_INT8 */
} prof_work;
void prof_gemm_work(sim_dtype wdtype, sim_dtype adtype, uint32_t M, uint32_t N, uint32_t K, prof_work *w);
void prof_decode_work(sim_dtype kv_dtype, uint32_t batch, uint32_t kv_len, uint32_t q_heads, uint32_t kv_heads,
                      uint32_t head_dim, prof_work *w);
void prof_prefill_work(uint32_t chunk, uint32_t ctx, uint32_t q_heads, uint32_t kv_heads, uint32_t head_dim,
                       prof_work *w);
/* Context attention: flops = 4 q_heads head_dim batch isl (isl + 1) / 2 (token
 * i attends to i + 1 tokens); bytes = batch isl (2 q_heads hd 2 (Q in, O out,
 * 16-bit) + 2 kv_heads hd 2 (K, V in, 16-bit) + 2 kv_heads hd kv_bytes (K, V
 * written to the cache)); compute bf16. */
void prof_context_work(sim_dtype kv_dtype, uint32_t batch, uint32_t isl, uint32_t q_heads, uint32_t kv_heads,
                       uint32_t head_dim, prof_work *w);

/* Probes recorded in the profile. */
double prof_copy_Bps(const prof *p);               /* bytes read + written per s */
double prof_peak_flops(const prof *p, sim_dtype d); /* FLOP/s, 0 when not measured */

/* Leave-one-out accuracy: every measured grid point is predicted from the
 * others by the same interpolation (a 1-D table without the point, holding the
 * boundary efficiency at the ends; a 2-D or 3-D table by the 1-D prediction
 * along each axis with the point left out, the mean of those that interpolate
 * between two measured neighbours, else the mean of the held boundaries; an
 * all-reduce table by its own rule: log-log between the neighbours, the next
 * time held below, proportional scaling above) and |predicted - measured| /
 * measured is collected per operation family. */
typedef enum prof_kind {
  PK_GEMM = 0,  /* 1-D GEMM tables, 16-bit or W8A8 */
  PK_GEMM_WQ,   /* 1-D GEMM tables, weight-only */
  PK_DECODE,    /* decode attention */
  PK_PREFILL,   /* prefill attention (chunk after cached context) */
  PK_GEMM_GRID, /* 3-D GEMM grids, every dtype */
  PK_CONTEXT,   /* context attention (prompts without cached context) */
  PK_ALLREDUCE, /* all-reduce, every implementation */
  PK_COUNT
} prof_kind;
typedef struct prof_loo {
  uint32_t n[PK_COUNT];        /* points predicted */
  double median[PK_COUNT];     /* median relative error (0 when n == 0) */
  double p90[PK_COUNT];        /* 90th percentile relative error */
  double max[PK_COUNT];        /* largest relative error */
} prof_loo;
/* "gemm", "gemm_wq", "attn_decode", "attn_prefill", "gemm_grid", "attn_context", "allreduce" */
const char *prof_kind_name(prof_kind k);
void prof_loo_error(const prof *p, prof_loo *out);
/* Number of tables of a kind. */
int prof_table_count(const prof *p, prof_kind k);

#endif
