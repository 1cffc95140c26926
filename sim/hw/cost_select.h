/* cost_select.h: which measured tables serve which operation of the cost model (cost_select.c): the tables
 * attached beside the own profile (sliding-window, attention of another version, MLA modules, Gated DeltaNet
 * kernels), the plausibility check of block-scaled FP8 grids, the floors and FP8 input quantization a profile
 * measures, and the memo reset when they change. A part that cost.c calls; it calls nothing of cost.c. */
#ifndef SIM_COST_SELECT_H
#define SIM_COST_SELECT_H

#include "hw/cost_types.h"
#include "hw/prof.h"

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

/* Gated DeltaNet layers from measured kernel tables (hw/prof.h, prof_gdn_ns): when p holds decode and prompt
 * tables of the deployment's per-GPU shape (key and value heads per GPU, their head dims, the convolution
 * kernel), each linear-attention layer's recurrence (the convolution and the gated delta rule:
 * cost_linattn.h) is the measured time; the projections stay GEMMs. Models of other linear layers (Mamba-2,
 * Kimi Delta Attention) never match. True when p answers (then attached); false leaves the tables attached
 * before unchanged, and p NULL detaches them. Clears the memo. */
bool cost_set_gdn_tables(cost_model *c, const prof *p);

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
 * time (which measured grids pass and fail, with their times: docs/ACCURACY.md,
 * "Measured figures behind the cost model"). True (ratio set) when the
 * profile has both grids and passes. */
#define COST_BLOCK_CHECK_RATIO 3.0
bool cost_block_gemm_check(const prof *p, double *ratio);

/* The floors a profile measures: kernel_floor_ns from its 1 x 128 x 128 GEMM in the
 * activation dtype, attn_floor_ns from its 2-token single-sequence decode call. */
void cost__floors_from(cost_model *c, const prof *p);
/* What one FP8 per-tensor (W8A8) GEMM call of profile p's table spends quantizing its input beyond the one
 * elementwise kernel of a static activation scale; 0 when p has no such table or the
 * difference is not positive. */
double cost__fp8_requant_ns(const cost_model *c, const prof *p);

/* Marks the memoized T-dependent parts and decode-attention lookups stale, after a change of
 * the tables that serve them. */
void cost__memo_clear(cost_model *c);

#endif
