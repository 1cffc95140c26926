/* cost.h: the cost model: how long one engine step keeps the GPU busy, and
 * how much host work it needs, for a given batch.
 *
 * One step is one forward over all scheduled tokens T (prefill chunks + one
 * token per decode) on each GPU of a TP group (model/shard.h gives the shapes
 * on one GPU). Its GPU time is the sum of its operations, each served by the
 * best source available, in order:
 *   (1) a measured profile of this GPU type (configs/profiles: kernel tables
 *       imported from a measured kernel database, or timed here by
 *       `servesim calibrate`), interpolated (hw/prof.h);
 *   (2) a measured profile of another GPU type, scaled by the datasheet ratio
 *       of the resource that bounds the operation;
 *   (3) the datasheet roofline: max(flops / (peak x eff_c), bytes / (HBM x
 *       eff_m)) with the engine file's fallback efficiencies.
 * A measured kernel time already contains its own overlap of compute and
 * memory traffic: nothing blends them. The terms no table covers are
 * estimated from first principles, each named in the breakdown (cost_op):
 *
 * Per layer (x layers):
 *   GEMMs QKV, O, GATE_UP, DOWN at M = T (padded to the CUDA-graph capture
 *     size when the step replays a graph: vLLM pads the batch; a block-scaled
 *     FP8 checkpoint's on the profile's block-scaled grid when it passes
 *     cost_block_gemm_check, below; an FP8 table timed with dynamic input
 *     quantization, for an engine whose FP8 linears use a static scale
 *     (fp8_static_activation_scale), less the quantization beyond one kernel
 *     the table itself shows, cost__fp8_requant_ns in cost_select.c); in a mixture-
 *     of-experts layer the FFN is an MoE block instead (OP_MOE): the fused
 *     routed experts (the profile's measured fused-MoE table, else the
 *     roofline of the experts the step reaches), the router GEMM and the
 *     shared experts (GEMM tables); a table measured with AIConfigurator's
 *     balanced router (every token-expert pair on a different expert up to
 *     E) is lowered to the experts independently routed tokens reach,
 *     E (1 - (1 - k/E)^T), at the table's own cost per expert
 *     (moe_independent_routing in cost.c);
 *   attention (MLA models with measured module tables: the whole attention
 *     block from them, cost_set_mla_modules): decodes as one paged decode call over the batch (its KV-cache
 *     write included, as measured); each prefill chunk of c tokens after x
 *     cached ones costs the measured c-token prompt's time scaled by the
 *     attention work c x + c (c + 1) / 2 over c (c + 1) / 2, at least the
 *     time of reading its x + c cached tokens (a decode call of that
 *     length); vLLM runs every sequence of the step in one varlen kernel, so
 *     the per-call floor (the measured time of the smallest call) is paid once
 *     per step, not once per part;
 *   2 all-reduces of T x H activations when TP > 1 (the engine's own kernel:
 *     its CUDA-graph timing when the step replays graphs, else its eager
 *     timing; NCCL's table or the ring/one-shot formula otherwise; a group
 *     spanning nodes reduces hierarchically: one node-local all-reduce plus
 *     a ring over the inter-node network of each GPU's 1/g shard);
 *   elementwise kernels (residual add + RMSNorm twice, RoPE, SiLU x up: the
 *     engine's elementwise_kernels_per_layer), each at least the kernel
 *     floor (the measured time of the smallest GEMM of the profile, a kernel
 *     replayed in a graph), together at least their bytes over the HBM
 *     bandwidth x elementwise_eff.
 * Once per step: embedding gather and final norm (2 kernels), the LM head
 *   GEMM over the sequences that sample (activation dtype: vLLM does not
 *   quantize it) and the sampler's passes over num_sample x V fp32 logits.
 *
 * Pipeline parallelism (deploy pp > 1): the step's batch runs through pp
 *   stages, each a TP group holding consecutive layers (shard_pp_layers). A
 *   stage's GPU time is the per-layer part above x its layers / all layers,
 *   the first stage's the embedding gather, the last's the final norm, LM
 *   head and sampler, each stage at least its own layers' launch time when
 *   the host launches; between stages the activations are sent
 *   (cost_pp_send_ns, OP_PP_SEND). The replica's timeline (serve/cluster.c)
 *   runs up to pp batches at once, one per stage.
 * Graphs (engine graph_mode, engver.h): a decode-only batch of at most the
 * largest capture size replays a full graph; with piecewise graphs a mixed
 * batch of at most that size replays graphs between the attention calls,
 * which the host launches; larger batches run eagerly. When the host launches
 * (piecewise or eager), the GPU cannot run ahead of it: the step's GPU time
 * is at least layers x launch_overhead_per_layer (OP_LAUNCH holds the part the
 * host adds).
 * Host work (cpu_ns): step_overhead + per_seq_overhead x sequences: schedule,
 * prepare inputs, process outputs. The replica's timeline (serve/cluster.c)
 * overlaps it with the GPU when the engine schedules asynchronously.
 * total_ns = the step's share of wall time in a stream of such steps: gpu +
 * cpu, or max(gpu, cpu) with async scheduling (OP_CPU_OVERHEAD holds what is
 * not hidden).
 *
 * Speed: the T-dependent part (GEMMs, all-reduces, elementwise) is memoized
 * per (T, graphed) in arrays of max(max_num_batched_tokens, max_num_seqs,
 * 512) + 1 entries, the LM head and sampler per number of sampling
 * sequences, so a step costs O(number of prefill chunks); a decode-only step
 * whose attention call the own profile answers is a lookup of the whole step
 * by (batch, mean context) (cost_decstep.c: the same bits as computing it).
 * The cost model knows nothing of requests: it sees a batch_desc only.
 * Ownership: cost_init/cost_deinit on caller storage; the model, gpu, engine,
 * deploy and profile pointers are borrowed and must outlive it. Not
 * thread-safe (memo tables): one cost_model per simulation. */
#ifndef SIM_COST_H
#define SIM_COST_H

#include "config/cfg.h"
#include "hw/prof.h"
#include "model/shard.h"

typedef enum cost_op {
  OP_GEMM_QKV = 0,
  OP_GEMM_O,
  OP_GEMM_GATEUP,
  OP_GEMM_DOWN,
  OP_LM_HEAD,      /* LM head GEMM and the sampler */
  OP_ATTN_PREFILL,
  OP_ATTN_DECODE,
  OP_ALLREDUCE,
  OP_ELEMENTWISE,  /* norms, RoPE, activation, residual, embedding */
  OP_CPU_OVERHEAD, /* engine host work not hidden behind the GPU */
  OP_LAUNCH,       /* GPU time added because the host launches kernels (piecewise or eager) */
  OP_PP_SEND,      /* pipeline parallelism: activations sent from one stage to the next */
  OP_MOE,          /* mixture-of-experts blocks: routed experts (fused), router, shared experts */
  OP_COUNT
} cost_op;

typedef enum cost_src { SRC_PROFILE = 0, SRC_PROFILE_SCALED, SRC_ROOFLINE, SRC_COUNT } cost_src;

/* What bound each nanosecond of a step: the gates of a GPU plan. */
typedef enum cost_bound {
  BOUND_COMPUTE = 0, /* tensor cores */
  BOUND_MEMORY,      /* HBM bandwidth */
  BOUND_COMM,        /* interconnect */
  BOUND_CPU,         /* engine overhead, launches */
  BOUND_COUNT
} cost_bound;

typedef struct prefill_chunk {
  uint32_t chunk_tokens; /* new tokens computed this step, >= 2 (single tokens count as decodes) */
  uint32_t ctx_tokens;   /* tokens already in the KV cache before this chunk */
} prefill_chunk;

/* One step's batch, as the scheduler describes it. */
typedef struct batch_desc {
  uint32_t num_tokens;        /* T: all tokens computed this step */
  uint32_t num_seqs;          /* sequences in the step */
  uint32_t num_decode;        /* sequences computing exactly one token */
  uint64_t decode_ctx_tokens; /* sum over those of the tokens they attend to (cached + 1) */
  uint32_t num_sample;        /* sequences that sample a token at the end of the step */
  uint32_t num_prefill;       /* chunks of >= 2 tokens */
  const prefill_chunk *prefills;
  uint32_t moe_peer_tokens;   /* attention data parallelism: the tokens the replica's other DP ranks feed
                                 the same MoE layers in this step (their steps of the same lockstep group
                                 step, serve/cluster.c); 0 otherwise */
  uint8_t dp_mode;            /* a lockstep DP group's agreed execution: 0 = this batch's own (mode_of);
                                 else 1 + the CUDA-graph mode the ranks agreed on (0 eager, 1 piecewise, 2
                                 full: the least any rank can run, as vLLM's coordinate_batch_across_dp
                                 takes the minimum), never above the batch's own */
  uint32_t dp_pad;            /* with a graph mode agreed: the token count every rank pads to (the largest
                                 rank's graph size); 0 = its own */
} batch_desc;

typedef struct step_cost {
  double total_ns;              /* the step's share of wall time in a steady stream of such steps:
                                   gpu + cpu, or max(gpu, cpu) when the engine schedules asynchronously;
                                   with pipeline parallelism: one batch's time through every stage + cpu */
  double gpu_ns;                /* GPU time: from the step's start to its end on the device (with pipeline
                                   parallelism: the sum of stage_ns and send_ns) */
  double stage_ns[CFG_MAX_PP];  /* each pipeline stage's GPU time (stage_ns[0] = gpu_ns without PP) */
  double send_ns[CFG_MAX_PP];   /* send_ns[s]: stage s's activations reaching stage s + 1 */
  double cpu_ns;                /* host work to schedule and prepare it (before it can start) */
  double op_ns[OP_COUNT];       /* contribution of each op (sums to total_ns) */
  double bound_ns[BOUND_COUNT]; /* same time, by what bound it (sums to total_ns) */
} step_cost;

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

enum { COST_MAX_GRAPH_SIZES = 128, COST_DEC_MEMO_B = 32, COST_DEC_MEMO_L = 8192 };

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
  cost_memo *memo[2];         /* [graphed][T], 0 <= T < memo_len */
  cost_lm_memo *lm_memo;      /* [num_sample], 0 <= num_sample < memo_len */
  double *dec_memo;           /* the own profile's decode attention call by (batch, mean kv_len) for batch <
                                 COST_DEC_MEMO_B and kv_len < COST_DEC_MEMO_L, NAN = not asked yet; allocated at
                                 the first decode (a fleet's replicas ask the same few thousand shapes again and
                                 again); the same value prof_attn_decode_ns returns */
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

int cost_init(cost_model *c, const model_cfg *m, const gpu_cfg *g, const engine_cfg *e, const deploy_cfg *d,
              sim_err *err);
/* Attach profiles (either may be NULL). scaled_gpu: the datasheet of the GPU
 * the scaled profile was measured on. Clears the memo. */
void cost_set_profiles(cost_model *c, const prof *own, const prof *other, const gpu_cfg *other_gpu);
void cost_deinit(cost_model *c);
/* Fused-MoE tables of this GPU type (at most 5, in the order asked: the chosen version's companion, then
 * the other versions nearest first), asked for a shape the own profile lacks before the roofline. Clears
 * the memo. */
void cost_set_moe_alternates(cost_model *c, const prof *const *alt, int n);
/* Sliding-window attention tables (hw/prof.h prof_attn_window_*): the profiles asked, in order (at most 5: the
 * chosen version's companion, then the other versions' nearest first), for a sliding-window layer's calls with
 * the model's window before the estimate from full-attention tables. Clears the memo. */
void cost_set_window_tables(cost_model *c, const prof *const *p, int n);
/* Whether profile p has decode and prompt attention tables of the deployment's head layout (per GPU) and KV
   dtype; cost_set_attention_alternate makes p answer the attention calls `profile` cannot (NULL: none). */
bool cost_attention_covered(const cost_model *c, const prof *p);
void cost_set_attention_alternate(cost_model *c, const prof *p);

/* Multi-head latent attention from measured module tables (hw/prof.h,
 * prof_mla_module_ns): when p (the chosen engine version's fused-MoE
 * companion of this GPU's profile) holds generation and context modules for
 * this model's MLA dimensions, its heads per GPU, KV dtype and linear-layer
 * GEMM type (bf16 weights "bfloat16", block-FP8 checkpoints "fp8_block", FP4
 * "nvfp4"; per-tensor FP8 has none), each MLA layer's attention block is the
 * measured module: OP_ATTN_DECODE a step's decodes as one generation module
 * call (batch = decodes, length = their mean context), OP_ATTN_PREFILL each
 * chunk's context module at its length, plus, for a chunk after cached
 * tokens, the roofline of the attention work the cache adds (the tables
 * measure prompts with nothing cached); the projection GEMMs (OP_GEMM_QKV,
 * OP_GEMM_O) are then inside those and not counted again; a step with several
 * parts runs one module and pays its launch floor once (the generation module
 * at batch 1, length 1). Otherwise (no table, other dimensions) MLA stays the
 * GEMM tables plus the attention roofline. Clears the memo. Returns whether
 * the modules serve this deployment. */
bool cost_set_mla_modules(cost_model *c, const prof *p);

/* The hot path: fills *out for one step. */
void cost_step(cost_model *c, const batch_desc *b, step_cost *out);
/* Attention data parallelism with MoE layers: the DP ranks of a replica run
 * each step in lockstep (every MoE layer gathers all ranks' tokens), so a
 * rank whose own step (cost_step) is shorter than the slowest rank's waits
 * the difference, `ns`: added to *out as GPU time of OP_ALLREDUCE / BOUND_COMM
 * (the dispatch collective the rank waits in). */
void cost_step_wait(const cost_model *c, step_cost *out, double ns);

/* Components, for `plan`, tests and reports. Times in ns for one GPU and ONE
 * layer's call (the LM head: its one call per step); they do not touch
 * src_count. src and bound may be NULL. */
double cost_gemm_ns(cost_model *c, cost_op op, uint32_t M, cost_src *src, cost_bound *bound);
/* One all-reduce of `tokens` x H activations, as in a step that replays
 * graphs (graphed) or not. */
double cost_allreduce_ns(const cost_model *c, uint32_t tokens, bool graphed, cost_src *src);
/* The same all-reduce by the link formula alone (GPU file's link bandwidth
 * and latency, engine's allreduce_bw_eff and allreduce_latency_us), whatever
 * the profile measured: what `--allreduce link` uses. */
double cost_allreduce_link_ns(const cost_model *c, uint32_t tokens);
/* The plausibility check of --allreduce auto: the measured table against
 * the link formula for one COST_AR_CHECK_BYTES message at the node-local GPU
 * count (bus bandwidth 2 (g-1)/g x S / t). implausible: the table takes more
 * than COST_AR_CHECK_RATIO x the link's time. The ratio: a PCIe or NVLink
 * all-reduce with peer-to-peer reaches 50-90% of the link in NCCL's and the
 * engines' own measurements (the kernel database's tables at 2-8 GPUs on
 * H100, H200, B200 and A100 reach 50-110% of the GPU files' links, and between 2 L40S 64-94%), while
 * GPUs without peer-to-peer (bounced through host memory, or across CPU
 * sockets) fall to 5-25%: a third separates the two with room on both sides.
 * False (out zeroed but for nothing) when there is no table for this case. */
#define COST_AR_CHECK_BYTES (16.0 * 1024 * 1024)
#define COST_AR_CHECK_RATIO 3.0
typedef struct ar_check {
  uint32_t gpus;                 /* the node-local GPU count checked */
  double table_busbw_Bps, link_busbw_Bps;
  bool implausible;
} ar_check;
bool cost_allreduce_check(const cost_model *c, ar_check *out);
/* Block-scaled FP8 GEMMs (checkpoints with quantization_config
 * weight_block_size): a profile's block-scaled grid ("scaling": "block") serves
 * their linears when it passes this check, else the per-tensor FP8 grid does.
 * In a step that replays CUDA graphs a block-scaled GEMM is the per-tensor
 * GEMM's work plus a per-token-group activation quantization kernel and the
 * scale loads: within a few times the per-tensor GEMM's time even where both
 * are launch-bound. The check compares the two measured grids at the smallest
 * GEMM that is all launch floor (M = 1, N = K = 4096, 32 MiB of BF16 weights):
 * a block-scaled time above COST_BLOCK_CHECK_RATIO x the per-tensor time is
 * per-call host work the collector timed (kernels launched eagerly), not GPU
 * time. The kernel database passes it for vLLM 0.14 (35.7 vs 16.8 us on H200:
 * the triton block kernel, 2x the BF16 GEMM up to M = 8192, a property of the
 * kernel) and TensorRT-LLM (13.1 vs 17.6 us) and fails it for vLLM 0.24
 * (61 vs 12 us at M = 1, 86 us at M = 128 to 1024 against the per-tensor
 * 14-37 us), whose own measured MLA module (three block-FP8 projections,
 * attention and two batched matmuls: 94 us per layer at 16 heads, batch 1,
 * 2048 tokens on H200) could not contain three of those GEMMs. True (ratio
 * set) when the profile has both grids and passes. */
#define COST_BLOCK_CHECK_RATIO 3.0
bool cost_block_gemm_check(const prof *p, double *ratio);
/* One line naming the engine's CUDA-graph mode and the capture sizes this
 * deployment uses, e.g. "full_and_piecewise, 51 sizes: 1, 2, 4, 8, ..., 496, 512". */
void cost_graph_sizes_text(const cost_model *c, char *buf, size_t n);
/* Pipeline parallelism: the time for stage `hop`'s output of `tokens`
 * tokens to reach stage hop + 1 (0 <= hop < pp - 1): vLLM sends the hidden
 * states and the residual (2 x tokens x H activations), each TP rank its
 * 1/tp slice (send_tensor_dict with all_gather_group), point to point over
 * NVLink inside a node or the network across nodes (latency + bytes /
 * bandwidth of the GPU file), then the receiving TP group all-gathers the
 * slices (the link formula's ring all-gather, plus a network ring when the
 * group spans nodes). */
double cost_pp_send_ns(const cost_model *c, uint32_t tokens, uint32_t hop);
/* Whether stage hop's send to hop + 1 leaves its node. */
bool cost_pp_hop_crosses_nodes(const cost_model *c, uint32_t hop);
/* Nodes the TP group spans (1 inside a node). */
uint32_t cost_nodes(const cost_model *c);
/* The inter-node part of one all-reduce of `tokens` x H activations (0
 * inside a node): included in cost_allreduce_ns. */
double cost_allreduce_network_ns(const cost_model *c, uint32_t tokens);
double cost_attn_decode_ns(cost_model *c, uint32_t batch, uint64_t ctx_tokens_total, cost_src *src);
/* One prefill chunk alone (its own attention call). */
double cost_attn_prefill_ns(cost_model *c, uint32_t chunk, uint32_t ctx, cost_src *src);
/* Convenience: a step of `batch` decodes each with context `ctx`. */
double cost_decode_step_ns(cost_model *c, uint32_t batch, uint32_t ctx, step_cost *out);
/* Convenience: a step that prefills one prompt of `tokens` (one chunk, ctx 0). */
double cost_prefill_step_ns(cost_model *c, uint32_t tokens, step_cost *out);

const char *cost_op_name(cost_op op);
const char *cost_src_name(cost_src s);
const char *cost_bound_name(cost_bound b);
/* The CUDA-graph capture size a batch of n tokens is padded to, or n itself
 * when n is above the largest capture size (or graphs are off). */
uint32_t cost_graph_size(const cost_model *c, uint32_t n);
/* The CUDA-graph mode a step of this batch runs alone: 0 eager, 1 piecewise, 2 full (vLLM's CUDAGraphMode
 * NONE / PIECEWISE / FULL order). */
int cost_graph_mode(const cost_model *c, const batch_desc *b);

#endif
