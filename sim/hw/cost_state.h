/* cost_state.h: the cost model's state, private to its files (sim/hw/cost*.c and white-box tests): the borrowed
 * configs, the attached tables, the memos, and the small helpers every part computes with. It declares no
 * function: the core (cost.c) calls its parts through their own headers (cost_gemm.h, cost_attn.h,
 * cost_comm.h, cost_select.h, cost_decstep.h) and no part calls the core (scripts/check_layers.sh). */
#ifndef SIM_COST_STATE_H
#define SIM_COST_STATE_H

#include <math.h>

#include "hw/cost_types.h"
#include "hw/prof.h"
#include "model/shard.h"

typedef struct cost_memo {
  double ns;                    /* T-dependent part of a step for all layers */
  double once_ns;               /* the part of op_ns[OP_ELEMENTWISE] paid once per step, not per layer
                                   (embedding gather, final norm) */
  double op_ns[OP_COUNT];
  double bound_ns[BOUND_COUNT];
  uint8_t src[OP_COUNT];        /* cost_src that served each op at this T (for src_count) */
  bool valid;
} cost_memo;

/* The LM head and sampler of a step with n sampling sequences. */
typedef struct cost_lm_memo {
  double gemm_ns, sampler_ns;
  uint8_t src, bound;
  bool valid;
} cost_lm_memo;

enum { COST_MAX_GRAPH_SIZES = 128, COST_DEC_MEMO_B = 32 * 8, COST_DEC_MEMO_L = 8192 };

typedef struct cost_model {
  const model_cfg *model;
  const gpu_cfg *gpu;
  const engine_cfg *engine;
  const deploy_cfg *deploy;
  model_shard shard;          /* per-GPU shapes */
  uint32_t pp;                /* pipeline stages (1 without pipeline parallelism) */
  uint32_t stage_layers[CFG_MAX_PP]; /* layers of each stage (shard_pp_layers) */
  const prof *profile;        /* measured on this GPU, or NULL */
  const prof *scaled_profile; /* measured on another GPU (scaled), or NULL */
  const gpu_cfg *scaled_gpu;  /* the GPU scaled_profile was measured on */
  const prof *moe_alt[5];     /* this GPU's fused-MoE tables (the profiles' .moe.json companions: the chosen
                                 version's, then the others nearest first), for shapes `profile` lacks */
  int n_moe_alt;
  const prof *win_alt[5];     /* the same companions, for sliding-window attention tables (cost_set_window_tables) */
  int n_win_alt;
  const prof *attn_alt;       /* this GPU's and engine's profile of another version holding the attention tables
                                 of the model's head layout where `profile` has none (cost_set_attention_alternate),
                                 or NULL */
  bool mla_module;            /* MLA attention blocks from measured module tables (cost_set_mla_modules) */
  const prof *mla_prof;       /* the profile holding them */
  prof_mla_key mla_gen, mla_ctx; /* their keys for this deployment */
  double mla_floor_ns;        /* the generation module at batch 1, length 1: one module's launch floor */
  const prof *gdn_prof;       /* the profile holding measured Gated DeltaNet kernels of this deployment's per-GPU
                                 shape (cost_set_gdn_tables), or NULL: cost_linattn.c's roofline */
  prof_gdn_key gdn_gen, gdn_ctx; /* their keys */
  uint32_t graph_sizes[COST_MAX_GRAPH_SIZES]; /* CUDA-graph capture sizes, increasing (engver_graph_sizes) */
  uint32_t n_graph_sizes;
  uint32_t *graph_of;         /* [n] for 0 < n <= the largest size: the capture size a batch of n tokens replays */
  bool ar_table;              /* all-reduces from the profile's table (else the link formula): deploy->allreduce,
                                 AR_AUTO decided by cost_allreduce_check when the profiles are attached */
  bool block_own, block_scaled; /* the own / scaled profile's block-scaled FP8 GEMM grid serves the linears of a
                                   block-FP8 checkpoint (cost_block_gemm_check passed), else its per-tensor grid */
  double kernel_floor_ns;     /* the smallest kernel's time (profile, else the engine file's) */
  double fp8_requant_ns[2];   /* per FP8 per-tensor GEMM call of the own / scaled profile's table: the input
                                 quantization its collector timed beyond the one kernel an engine with static
                                 activation scales runs (cost__fp8_requant_ns); 0 unless the engine file sets
                                 fp8_static_activation_scale */
  double attn_floor_ns;       /* the smallest attention call's time (profile, else the kernel floor) */
  double attn_kind_f[2][2];   /* [sliding][decode]: a layer kind's attention factor from the model's shapes
                                 (cost__attn_kind_factor), once at cost_init; 1 without kinds of their own */
  cost_memo *memo[2];         /* [graphed][T], 0 <= T < memo_len */
  cost_lm_memo *lm_memo;      /* [num_sample], 0 <= num_sample < memo_len */
  size_t memo_top[2], lm_top; /* entries at or above these were not filled since the memos were last cleared: a
                                 clear stops there (the tables hold memo_len entries of ~200 bytes, megabytes a
                                 clear would otherwise touch, page by page, at every start) */
  double *dec_memo;           /* the own profile's decode attention call by (batch, mean kv_len) for batch <
                                 COST_DEC_MEMO_B and kv_len < COST_DEC_MEMO_L, +0.0 (or NaN) = not asked yet, a
                                 measured 0 kept as -0.0 (cost__dec_filled); allocated zeroed at the first decode,
                                 so only the pages of shapes asked are touched (a fleet's replicas ask the same few
                                 thousand shapes again and again); the value prof_attn_decode_ns returns */
  double dec_rate[3];         /* set with dec_memo: the decode roofline's ns per cached token of memory and of
                                 compute, and per sequence of memory (cost_attn.c: which bound a memoized call
                                 names, without the two divisions) */
  uint64_t dec_inv[COST_DEC_MEMO_B]; /* ceil(2^32 / B) for 0 < B: the step table's key (cost_decstep.c) */
  struct cost_dec_step *dec_step; /* whole decode-only steps by (batch, mean kv_len): cost_decstep.c;
                                     allocated with dec_memo, cleared with it */
  uint64_t dec_hits, dec_misses;  /* its lookups so far (it stops asking where misses prevail) */
  size_t memo_len;
  uint64_t src_count[OP_COUNT][SRC_COUNT]; /* how often each source served each op: counted by
                                              cost_step, once per op per step (prefill attention once
                                              per chunk); analytic ops count as SRC_ROOFLINE */
} cost_model;

static inline uint32_t tp_of(const cost_model *c) { return c->shard.tp; }
static inline double act_b(const cost_model *c) { return dtype_bytes(c->deploy->act_dtype); }
static inline double kv_b(const cost_model *c) { return dtype_bytes(c->deploy->kv_dtype); }
static inline double ns_of(double work, double rate) { return work / rate * 1e9; }
/* The CUDA-graph capture size a batch of n tokens replays (n itself past the largest): cost_graph_size's body. */
static inline uint32_t cost__graph_size(const cost_model *c, uint32_t n) {
  if (n == 0 || c->n_graph_sizes == 0 || n > c->graph_sizes[c->n_graph_sizes - 1]) return n;
  return c->graph_of[n];
}
/* `kernels` kernels moving `bytes` together: the bytes at the elementwise rate, at least each kernel's floor. */
static inline double cost__kernels_ns(const cost_model *c, double kernels, double bytes) {
  double tb = ns_of(bytes, c->gpu->hbm_Bps * c->engine->elementwise_eff), tf = kernels * c->kernel_floor_ns;
  return tb > tf ? tb : tf;
}
/* A step's op times added in op order, zeros skipped (x + 0 is x): the same sum, a shorter chain of additions. */
static inline double cost__sum_ops(const double *v) {
  double s = 0;
  for (int op = 0; op < OP_COUNT; op++)
    if (v[op] != 0) s += v[op];
  return s;
}
/* Attention work of a chunk of c tokens after x cached ones: token i attends
 * to x + i + 1 tokens. */
static inline double chunk_work(double c, double x) { return c * x + c * (c + 1.0) / 2.0; }

/* A time measured on another GPU type (scaled_gpu) scaled to this one by the datasheet ratio of the resource
 * that bounds the operation: peak FLOP/s (peak_here, peak_there) or HBM bandwidth. False when the ratio is not a
 * positive number (*ns untouched). */
static inline bool cost__scale_other(const cost_model *c, cost_bound b, double peak_here, double peak_there,
                                     double *ns) {
  double ratio = b == BOUND_COMPUTE ? peak_there / peak_here : c->scaled_gpu->hbm_Bps / c->gpu->hbm_Bps;
  if (!(isfinite(ratio) && ratio > 0)) return false;
  *ns *= ratio;
  return true;
}

/* A dec_memo slot holds a value: not +0.0 (the zeroed "empty") and not NaN. */
static inline bool cost__dec_filled(double v) { return !isnan(v) && !(v == 0 && !signbit(v)); }

#endif
