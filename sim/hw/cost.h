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
 * Output path (engine stream_per_seq: SGLang's detokenizer and tokenizer
 * manager with its HTTP server, processes apart from the scheduler): each
 * sampling sequence's token is streamed at that CPU cost; a pipeline runs at
 * its slowest stage, so the step lasts max(gpu [+ cpu], stream); the host
 * term carries the difference (cpu_ns = max(cpu, stream) with async
 * scheduling, max(cpu, stream - gpu) without).
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
 * Ownership: cost_new/cost_free; the model, gpu, engine, deploy and profile
 * pointers are borrowed and must outlive it. Not thread-safe (memo tables):
 * one cost_model per simulation. The state is private (cost_state.h). */
#ifndef SIM_COST_H
#define SIM_COST_H

#include "config/cfg.h"
#include "hw/cost_attn.h"
#include "hw/cost_comm.h"
#include "hw/cost_select.h"
#include "hw/cost_types.h"
#include "hw/prof.h"
#include "model/shard.h"

/* A cost model for this deployment in *out; SIM_EINPUT naming the config field at fault (*out NULL). The
 * model, gpu, engine and deploy are borrowed and must outlive it; cost_free(NULL) does nothing. */
int cost_new(cost_model **out, const model_cfg *m, const gpu_cfg *g, const engine_cfg *e, const deploy_cfg *d,
             sim_err *err);
void cost_free(cost_model *c);
/* Attach profiles (either may be NULL). scaled_gpu: the datasheet of the GPU
 * the scaled profile was measured on. Clears the memo. */
void cost_set_profiles(cost_model *c, const prof *own, const prof *other, const gpu_cfg *other_gpu);
/* Fused-MoE tables of this GPU type (at most 5, in the order asked: the chosen version's companion, then
 * the other versions nearest first), asked for a shape the own profile lacks before the roofline. Clears
 * the memo. */
void cost_set_moe_alternates(cost_model *c, const prof *const *alt, int n);

/* The hot path: fills *out for one step. */
void cost_step(cost_model *c, const batch_desc *b, step_cost *out);

/* Components, for `plan`, tests and reports. Times in ns for one GPU and ONE
 * layer's call (the LM head: its one call per step); they do not touch
 * src_count. src and bound may be NULL. */
double cost_gemm_ns(cost_model *c, cost_op op, uint32_t M, cost_src *src, cost_bound *bound);
/* One line naming the engine's CUDA-graph mode and the capture sizes this
 * deployment uses, e.g. "full_and_piecewise, 51 sizes: 1, 2, 4, 8, ..., 496, 512". */
void cost_graph_sizes_text(const cost_model *c, char *buf, size_t n);
/* Convenience: a step of `batch` decodes each with context `ctx`. */
double cost_decode_step_ns(cost_model *c, uint32_t batch, uint32_t ctx, step_cost *out);
/* Convenience: a step that prefills one prompt of `tokens` (one chunk, ctx 0). */
double cost_prefill_step_ns(cost_model *c, uint32_t tokens, step_cost *out);
/* A speculative decoding step (docs/SPECDEC.md): `batch` sequences at context `ctx` each verifying `drafts` draft
 * tokens (1 + drafts tokens each, logits for every one) plus the deployment's draft forward. */
double cost_verify_step_ns(cost_model *c, uint32_t batch, uint32_t ctx, uint32_t drafts, step_cost *out);

const char *cost_op_name(cost_op op);
const char *cost_src_name(cost_src s);
const char *cost_bound_name(cost_bound b);
/* The CUDA-graph capture size a batch of n tokens is padded to, or n itself
 * when n is above the largest capture size (or graphs are off). */
uint32_t cost_graph_size(const cost_model *c, uint32_t n);
/* The CUDA-graph mode a step of this batch runs alone: 0 eager, 1 piecewise, 2 full (vLLM's CUDAGraphMode
 * NONE / PIECEWISE / FULL order). */
int cost_graph_mode(const cost_model *c, const batch_desc *b);

/* What the model has counted and is: read by the runner, the cluster and the profile selection. */
/* The deployment as the model prices it: its borrowed configs, the per-GPU shapes, and whether all-reduces come
 * from the measured table (deploy->allreduce, or --allreduce auto's check when the profiles were attached). */
typedef struct cost_info {
  const model_cfg *model;
  const gpu_cfg *gpu;
  const engine_cfg *engine;
  const deploy_cfg *deploy;
  const model_shard *shard;
  bool ar_table;
} cost_info;
cost_info cost_info_of(const cost_model *c);
/* Pipeline stages (1 without pipeline parallelism). */
uint32_t cost_pp(const cost_model *c);
/* The profile measured on this GPU (cost_set_profiles), or NULL. */
const prof *cost_profile(const cost_model *c);
/* How often each source served each op so far (cost_step counts once per op per step, prefill attention once
 * per chunk; analytic ops as SRC_ROOFLINE): copied into out, or set from in (a run that starts again on the
 * shared timeline restores the counts it started from, serve/cluster_apart.c). */
void cost_src_counts(const cost_model *c, uint64_t out[OP_COUNT][SRC_COUNT]);
void cost_set_src_counts(cost_model *c, const uint64_t in[OP_COUNT][SRC_COUNT]);
/* Decode-only steps the step table answered / had to compute so far (cost_decstep.c; speed only). */
void cost_step_table_counts(const cost_model *c, uint64_t *hits, uint64_t *misses);

#endif
