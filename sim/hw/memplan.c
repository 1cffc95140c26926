/* memplan.c: per-GPU memory plan of one replica and the KV pool it leaves.
 *
 * Mixture of experts: an MoE layer holds every routed expert (3 H I_e each;
 * Nemotron-3's 2 L I_e, L its moe_latent_size or H) and the shared experts
 * (3 H I_s; 2 H I_s) in the weight dtype, Nemotron-3's latent projections
 * (2 H L, replicated on every rank), the router (H x
 * experts) in the activation dtype, split over TP like a dense MLP (vLLM's
 * FusedMoE without expert parallelism); its activation peak counts top-k
 * expert intermediates per token.
 * Weights (bytes), whole model (memplan_weight_bytes):
 *   layers x [H (qh + 2 kvh) hd + qh hd H + 2 H I + I H] x w_bytes
 *     w_bytes = dtype_bytes(weight_dtype); INT4 adds one 16-bit scale per 128
 *     weights (0.5 + 2/128 bytes per weight)
 *   + QKV bias (if any) layers x (qh + 2 kvh) hd, embedding V H, LM head V H
 *     (unless tied) and the (2 layers + 1) H RMSNorm weights, all in the
 *     activation dtype.
 * Weights per GPU: the same sum over one rank's shards (model/shard.h: KV
 * heads replicated when tp > kv_heads, the vocabulary padded to a multiple
 * of 64 before sharding) with norms replicated: the shapes sim/hw/cost.c
 * streams each step.
 *
 * Activation peak per GPU (the profile run vLLM does before sizing the pool):
 *   T = max_num_batched_tokens, live tensors of one layer, the larger of
 *     attention phase: T x act_b x (2 H + (qh_g + 2 kvh_g) hd + qh_g hd)
 *                      (residual, normed input, qkv output, attention output)
 *     MLP phase:       T x act_b x (2 H + 3 I_g)
 *                      (residual, normed input, gate+up output, SiLU x up output; an ungated MLP 2 I_g)
 *     Mamba-2 phase:   T x act_b x (2 H + in_proj N + conv channels + heads hd)
 *   + sampler logits: max_num_seqs x V x 4 bytes (fp32, full vocabulary: vLLM
 *     gathers the logits on every rank)
 *   all x engine activation_scale (0 = unset = 1), which absorbs allocator
 *   fragmentation and temporaries the formula leaves out.
 * CUDA graph pool: engine cuda_graph_bytes, 0 when cuda_graph_max_batch = 0.
 * Runtime: engine runtime_overhead_bytes.
 * An engine with mem_fraction_static (SGLang) sizes the pool as
 *   budget - weights - runtime: its fraction is (weights + KV pool) / memory, the
 *   activations and CUDA graphs use the memory outside it (docs/SGLANG.md 1.3).
 *
 * Nemotron-H's blocks: a layer is a mixer or an MLP, not both; its MLP-only layers hold no KV cache and no
 * attention weights, its mixer-only layers no MLP; one RMSNorm per block.
 * Linear-attention layers (hybrid models, model_cfg lin_*, Mamba-2 too): no KV cache; each sequence holds a
 * recurrent and a convolution state per layer (memplan_state_bytes_per_seq), set aside before the KV pool is cut: for
 * max_num_seqs sequences (TensorRT-LLM's MambaCacheManager, sized by max_batch_size; for vLLM, whose hybrid
 * allocator shares one pool between states and KV blocks, the state of a full batch: an upper bound), or with
 * an engine state_memory_ratio r > 0 the fraction r / (1 + r) of what is left, as many states as fit, which
 * then caps the running requests (SGLang's _handle_max_mamba_cache, mamba_full_memory_ratio 0.9).
 *
 * Refusals, in order (each fills *p, fits = false, kv_blocks = 0):
 *   weights alone exceed the budget; nothing left for the KV pool; the pool
 *   holds fewer than max_model_len tokens. Sizes are printed in GiB (2^30). */
#include "hw/memplan.h"

#include "core/jsonw.h"

#include "model/shard.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#define GIB (1024.0 * 1024.0 * 1024.0)


static double weight_elem_bytes(sim_dtype w) { return dtype_weight_bytes(w); }

/* One attention layer of a kind (sliding-window or full) on one of t GPUs, at the kind's own shapes
 * (model_cfg.full_* / swa_*): its q/k/v/o weight elements; *kv_elems its KV cache elements per token. */
static double kind_attn_elems(const model_cfg *m, uint32_t t, bool sliding, double *kv_elems) {
  model_shard s;
  shard_from_dims(&s, m->hidden, m->intermediate, m->q_heads, cfg_model_kind_kv_heads(m, sliding),
                  cfg_model_kind_head_dim(m, sliding), m->vocab, t);
  double w = (double)s.n[SG_QKV] * s.k[SG_QKV] + (double)s.n[SG_O] * s.k[SG_O];
  if (m->attn_out_gate) w += (double)s.q_heads * s.head_dim * m->hidden;
  if (!sliding && m->full_k_eq_v) w -= (double)s.kv_heads * s.head_dim * m->hidden; /* no v_proj */
  *kv_elems = shard_kv_elems(&s);
  return w;
}

/* Weight bytes of one rank of a stage of `layers` layers when heads,
 * intermediate and vocabulary are split t ways (t = 1: unpadded vocabulary).
 * The first stage holds the input embedding, the last the final norm and the
 * LM head; with pipeline parallelism a tied LM head is loaded on the last
 * stage as its own copy (vLLM's llama.py builds embed_tokens on the first
 * rank and, for tied weights, on the last too). */
static double stage_weights(const model_cfg *m, const deploy_cfg *d, uint32_t t, uint32_t first_layer,
                            uint32_t layers, bool first, bool last) {
  double ab = dtype_bytes(d->act_dtype), wb = weight_elem_bytes(d->weight_dtype);
  double H = m->hidden;
  model_shard s;
  shard_init_dp(&s, m, t, deploy_dp(d), t > 1 || deploy_dp(d) > 1 ? deploy_ep(d) : 1);
  double V = t == 1 ? m->vocab : s.vocab;
  double attn = (double)s.n[SG_QKV] * s.k[SG_QKV] + (double)s.n[SG_O] * s.k[SG_O];
  if (s.mla) attn += (double)s.qb_n * s.qb_k + (double)s.kvb_n * s.kvb_k;
  double mlp = (double)s.n[SG_GATE_UP] * s.k[SG_GATE_UP] + (double)s.n[SG_DOWN] * s.k[SG_DOWN];
  uint32_t moe = cfg_model_moe_layers_in(m, first_layer, layers);
  /* an MoE block: every routed expert (gate, up, down; up, down for Nemotron-3's, at its latent width) and the
     shared experts in the weight dtype, Nemotron-3's latent projections (replicated) too, the router (gate)
     unquantized (checkpoints keep it out of quantization) */
  double experts = (double)s.local_experts * s.expert_mats * s.expert_hidden * s.expert_inter +
                   s.expert_mats * H * s.shared_inter;
  if (s.moe_latent) experts += 2.0 * H * s.moe_latent;
  double attn_b = m->attn_unquantized ? ab : wb; /* a checkpoint that keeps its attention unquantized */
  uint32_t lin = cfg_model_lin_layers_in(m, first_layer, layers); /* Gated DeltaNet mixers instead of attention */
  double lin_w = (double)s.lin_in_n * s.lin_in_k + (double)s.lin_out_n * s.lin_out_k;
  double lin_small = (double)s.lin_conv_ch * m->lin_conv + 2.0 * s.lin_v_heads + m->lin_v_dim; /* conv, A, dt, norm */
  if (m->mamba) /* conv and its bias, A_log, D, dt_bias, the gated norm (split over TP with the heads) */
    lin_small = (double)s.lin_conv_ch * (m->lin_conv + 1.0) + 3.0 * s.lin_v_heads + s.lin_out_k;
  /* Nemotron-H's blocks: layers without a mixer hold no attention, layers without an FFN no MLP */
  uint32_t nomix = cfg_model_nomix_layers_in(m, first_layer, layers);
  uint32_t noffn = cfg_model_noffn_layers_in(m, first_layer, layers);
  double mlps = (layers - moe - noffn) * mlp;
  if (m->ffn_classes) { /* DeciLM: each layer's MLP at its own width, split t ways */
    mlps = 0;
    for (uint32_t k = 0; k < m->ffn_classes; k++)
      mlps += cfg_model_ffn_class_layers_in(m, k, first_layer, layers) * cfg_model_mlp_mats(m) * H *
              (double)((m->ffn_class_inter[k] + s.tp - 1) / s.tp);
  }
  double attns = (layers - lin - nomix) * attn;
  if (cfg_model_typed_attn(m)) { /* each kind's layers at their own shapes */
    uint32_t slide = cfg_model_sliding_layers_in(m, first_layer, layers);
    double kv;
    attns = (layers - lin - nomix - slide) * kind_attn_elems(m, t, false, &kv) + slide * kind_attn_elems(m, t, true, &kv);
  }
  double w = attns * attn_b + lin * (lin_w * wb + lin_small * ab) +
             (mlps + moe * experts) * wb + moe * H * s.experts * ab;
  if (m->qkv_bias) w += (layers - lin - nomix) * (double)s.n[SG_QKV] * ab;
  w += layers * cfg_model_dsa_params(m) * attn_b; /* a sparse-attention indexer, replicated on every rank */
  if (m->dsv4) /* DeepSeek-V4: compressors and indexers (replicated), hyper-connection mixing, attention sinks */
    w += (cfg_model_csa_layers_in(m, first_layer, layers) * cfg_model_dsv4_layer_params(m, m->csa_ratio) +
          cfg_model_hca_layers_in(m, first_layer, layers) * cfg_model_dsv4_layer_params(m, m->hca_ratio)) * attn_b +
         layers * (cfg_model_hc_params(m) + s.q_heads) * ab;
  double vocab_mats = (first ? 1.0 : 0.0) + (last ? 1.0 : 0.0);
  if (first && last && m->tied_embeddings) vocab_mats = 1.0;
  w += V * H * ab * vocab_mats;
  w += (2.0 * layers - nomix - noffn + (last ? 1.0 : 0.0)) * H * ab; /* an RMSNorm per block (the final one) */
  if (s.mla) w += layers * ((double)m->q_lora_rank + m->kv_lora_rank) * ab; /* the latent norms */
  return w;
}


/* A draft model's KV bytes per token on one GPU (its layers' keys and values, KV heads split over the ranks or
 * replicated where fewer than the ranks, in the cache's dtype as vLLM gives the draft the target's cache config);
 * 0 without one. */
static double draft_model_token_bytes(const deploy_cfg *d, uint32_t t) {
  if (d->spec_method != SPEC_DRAFT_MODEL || !d->num_speculative_tokens) return 0;
  uint32_t kvh = d->spec_draft.kv_heads >= t ? d->spec_draft.kv_heads / t : 1;
  return 2.0 * d->spec_draft.layers * kvh * d->spec_draft.head_dim * dtype_bytes(d->kv_dtype);
}

/* The speculative draft head's weights on one GPU of the last stage (memplan.h), 0 without a head. An MTP layer is
 * one of the model's own layers (its last kind: MoE for DeepSeek-V3), in the checkpoint's dtype; an EAGLE or
 * EAGLE-3 head is a dense decoder layer of the target's attention and intermediate sizes in bf16 (a head's own
 * config.json may differ: its intermediate_size is not read). */
static double draft_weights(const model_cfg *m, const deploy_cfg *d, uint32_t t) {
  spec_method sm = d->spec_method;
  if (sm == SPEC_DRAFT_MODEL && d->num_speculative_tokens) /* a draft model: its parameters over the ranks, bf16 */
    return d->spec_draft.params / t * dtype_bytes(d->act_dtype);
  if (!d->num_speculative_tokens || (sm != SPEC_EAGLE && sm != SPEC_EAGLE3 && sm != SPEC_MTP)) return 0;
  double ab = dtype_bytes(d->act_dtype), H = m->hidden;
  model_shard s;
  shard_init(&s, m, t);
  double w = 2.0 * H * H * ab + 2.0 * H * ab; /* fc / eh_proj (replicated), the input and hidden-state norms */
  if (sm == SPEC_MTP) return w + stage_weights(m, d, t, m->layers - 1, 1, false, false);
  double qkv = (double)s.n[SG_QKV] * s.k[SG_QKV] * (sm == SPEC_EAGLE3 ? 2.0 : 1.0); /* EAGLE-3: [embedding, h] */
  double layer = qkv + (double)s.n[SG_O] * s.k[SG_O] + (double)s.n[SG_GATE_UP] * s.k[SG_GATE_UP] +
                 (double)s.n[SG_DOWN] * s.k[SG_DOWN] + 2.0 * H;
  w += layer * ab;
  if (sm == SPEC_EAGLE3) w += H * H * ab; /* its fc is 3H -> H */
  if (sm == SPEC_EAGLE3 && d->spec_draft_vocab) w += (double)shard_vocab(d->spec_draft_vocab, t) * H * ab;
  return w;
}

double memplan_weight_bytes(const model_cfg *m, const deploy_cfg *d) {
  deploy_cfg whole = *d; /* one unsplit copy of everything */
  whole.dp = 1, whole.expert_parallel = false, whole.moe_ep = 1;
  return stage_weights(m, &whole, 1, 0, m->layers, true, true);
}

double memplan_active_weight_bytes(const model_cfg *m, const deploy_cfg *d) {
  double idle = (double)m->moe_layers * (m->experts - m->experts_per_tok) * cfg_model_expert_mats(m) *
                cfg_model_expert_hidden(m) * m->expert_inter;
  return memplan_weight_bytes(m, d) - idle * weight_elem_bytes(d->weight_dtype);
}

/* Cache bytes per token of the stage's layers [first, first + L) that keep one entry per token or per
 * compression group (not the sliding-window, linear-attention or mixer-less ones): kv_layer_token each, DeepSeek-V4's
 * compressed layers their share (cfg_model_dsv4_token_bytes); `extra` more layers of kv_layer_token (a draft head's). */
static double stage_token_bytes(const model_cfg *m, double kv_layer_token, uint32_t first, uint32_t L,
                                uint32_t extra) {
  uint32_t full = L - cfg_model_sliding_layers_in(m, first, L) - cfg_model_lin_layers_in(m, first, L) -
                  cfg_model_nomix_layers_in(m, first, L) - cfg_model_csa_layers_in(m, first, L) -
                  cfg_model_hca_layers_in(m, first, L);
  return (full + extra) * kv_layer_token + cfg_model_dsv4_token_bytes(m, kv_layer_token, first, L);
}

/* The windows of a stage's sliding-window layers (DeepSeek-V4: of every layer, compressed ones too), each
 * sequence's rounded up to blocks plus one, for max_num_seqs sequences. */
static double window_reserve(const model_cfg *m, const deploy_cfg *d, double kv_layer_token, uint32_t first,
                             uint32_t L) {
  uint32_t n = cfg_model_sliding_layers_in(m, first, L) + cfg_model_csa_layers_in(m, first, L) +
               cfg_model_hca_layers_in(m, first, L);
  double block = d->block_size;
  return n ? d->max_num_seqs * (ceil(m->sliding_window / block) + 1.0) * block * kv_layer_token * n : 0;
}

double memplan_kv_bytes_per_token(const model_cfg *m, const deploy_cfg *d) {
  model_shard s;
  shard_init(&s, m, d->tp);
  double kv_layer_token = shard_kv_elems(&s) * dtype_bytes(d->kv_dtype) + cfg_model_dsa_cache_bytes(m);
  if (m->dsv4) return stage_token_bytes(m, kv_layer_token, 0, m->layers, 0);
  return (double)(m->layers - m->lin_layers - m->nomix_layers) * kv_layer_token;
}

double memplan_state_bytes_per_seq(const model_cfg *m, const deploy_cfg *d, uint32_t first_layer, uint32_t layers) {
  uint32_t lin = cfg_model_lin_layers_in(m, first_layer, layers);
  if (!lin) return 0;
  model_shard s;
  shard_init(&s, m, d->tp);
  return lin * (s.lin_state_elems * dtype_bytes(m->lin_state_dtype) + s.lin_conv_elems * dtype_bytes(d->act_dtype));
}

/* The recurrent states of a stage's linear-attention layers, out of the memory `rest` left for KV and states:
 * how many sequences get one (*slots) and the bytes set aside. */
static double state_reserve(const engine_cfg *e, const deploy_cfg *d, double per_seq, double rest, uint32_t *slots) {
  if (per_seq <= 0) return *slots = UINT32_MAX, 0.0;
  if (e->state_memory_ratio > 0) { /* SGLang _handle_max_mamba_cache: budget = rest r / (1 + r), all of it states */
    double r = e->state_memory_ratio, n = rest > 0 ? floor(rest * r / (1.0 + r) / per_seq) : 0;
    *slots = n > UINT32_MAX ? UINT32_MAX : (uint32_t)n;
    return n * per_seq;
  }
  *slots = d->max_num_seqs; /* a state for every sequence the scheduler may run */
  return (double)d->max_num_seqs * per_seq;
}

/* The profile run's peak: one layer's live tensors at max_num_batched_tokens,
 * plus the sampler's logits on the stage that samples (the last). */
static double activation_peak(const model_cfg *m, const engine_cfg *e, const deploy_cfg *d, bool last) {
  model_shard s;
  shard_init(&s, m, d->tp);
  double T = d->max_num_batched_tokens;
  double S = d->max_num_seqs;
  double ab = dtype_bytes(d->act_dtype), H = m->hidden;
  double attn = T * ab * (2.0 * H + (double)s.n[SG_QKV] + (double)s.k[SG_O]);
  double inter = s.inter;
  if (s.experts) inter = fmax(inter, (double)s.topk * s.expert_inter + s.shared_inter); /* each token's experts */
  double mlp = T * ab * (2.0 * H + (m->mlp_ungated ? 2.0 : 3.0) * inter); /* ungated: up output, activation */
  if (m->mamba) { /* a Mamba-2 layer: residual, normed input, in_proj output, convolution output, scan output */
    double mix = T * ab * (2.0 * H + (double)s.lin_in_n + s.lin_conv_ch + s.lin_out_k);
    if (mix > attn) attn = mix;
  }
  double logits = last ? S * (double)m->vocab * 4.0 : 0.0;
  double scale = e->activation_scale > 0 ? e->activation_scale : 1.0;
  return ((attn > mlp ? attn : mlp) + logits) * scale;
}

/* 1234567 -> "1,234,567" */
static void fmt_thousands(char *buf, size_t n, uint64_t v) {
  char raw[32];
  int len = snprintf(raw, sizeof raw, "%llu", (unsigned long long)v);
  size_t o = 0;
  for (int i = 0; i < len && o + 1 < n; i++) {
    if (i > 0 && (len - i) % 3 == 0 && o + 2 < n) buf[o++] = ',';
    buf[o++] = raw[i];
  }
  buf[o] = 0;
}

/* Nothing (or no state for one sequence) left for the KV cache: the refusal with every term of the budget. */
static int refuse_no_kv(const mem_plan *p, const char *who, const char *larger, sim_err *err) {
  if (p->state_bytes_per_seq > 0 && p->state_slots == 0)
    return sim_errf(err, SIM_EINPUT,
                    "%s: no room for one sequence's linear-attention state (%.1f MiB per GPU): %.1f GiB left after "
                    "weights, activations, CUDA graphs and runtime; %s or --quantization",
                    who, p->state_bytes_per_seq / (1024.0 * 1024.0), (p->kv_bytes + p->state_bytes) / GIB, larger);
  char states[192] = "";
  if (p->window_bytes > 0) /* the sliding-window layers' windows, set aside before the pool */
    snprintf(states, sizeof states, " - sliding windows %.1f GiB (max_num_seqs sequences)", p->window_bytes / GIB);
  if (p->state_bytes > 0)
    snprintf(states + strlen(states), sizeof states - strlen(states),
             " - linear-attention states %.1f GiB (%u sequences)", p->state_bytes / GIB, p->state_slots);
  return sim_errf(err, SIM_EINPUT,
                  "%s: no memory left for the KV cache: budget %.1f GiB - weights %.1f GiB - activations %.1f "
                  "GiB - CUDA graphs %.1f GiB - runtime %.1f GiB%s = %.1f GiB per GPU; %s or --quantization, "
                  "lower --max-num-batched-tokens%s or raise --gpu-memory-utilization",
                  who, p->budget_bytes / GIB, p->weights_bytes / GIB, p->activation_bytes / GIB,
                  p->cuda_graph_bytes / GIB, p->runtime_bytes / GIB, states, p->kv_bytes / GIB, larger,
                  p->state_bytes > 0 || p->window_bytes > 0 ? ", lower --max-num-seqs" : "");
}

/* KV cache bytes a token takes in one full-attention layer on one of t GPUs; *window: in a sliding-window layer
 * (the same unless the kinds have shapes of their own). */
static double kv_token_bytes(const model_cfg *m, const deploy_cfg *d, uint32_t t, double *window) {
  model_shard sh;
  shard_init(&sh, m, t);
  double full = shard_kv_elems(&sh), slide = full;
  if (cfg_model_typed_attn(m)) kind_attn_elems(m, t, false, &full), kind_attn_elems(m, t, true, &slide);
  *window = slide * dtype_bytes(d->kv_dtype) + cfg_model_dsa_cache_bytes(m);
  return full * dtype_bytes(d->kv_dtype) + cfg_model_dsa_cache_bytes(m);
}

int memplan_compute(mem_plan *p, const model_cfg *m, const gpu_cfg *g, const engine_cfg *e,
                    const deploy_cfg *d, sim_err *err) {
  SIM_ASSERT(d->resolved); /* cfg_resolve filled every setting: none is defaulted here */
  memset(p, 0, sizeof *p);
  uint32_t t = d->tp, pp = d->pp;
  SIM_ASSERT(pp <= CFG_MAX_PP);
  double util = d->gpu_memory_utilization > 0 ? d->gpu_memory_utilization : e->gpu_memory_utilization;
  uint32_t block = d->block_size;
  SIM_ASSERT(block > 0);
  double kv_window_token, kv_layer_token = kv_token_bytes(m, d, t, &kv_window_token);
  p->pp = pp, p->device_bytes = g->mem_bytes, p->budget_bytes = g->mem_bytes * util;
  p->weights_total_bytes = memplan_weight_bytes(m, d);
  p->cuda_graph_bytes = e->cuda_graph_max_batch > 0 ? e->cuda_graph_bytes : 0;
  p->runtime_bytes = e->runtime_overhead_bytes, p->block_tokens = block, p->max_model_len = d->max_model_len;

  /* Each stage sizes its own pool; the engine uses the smallest (vLLM V1
   * unifies the workers' KV-cache configs to the minimum number of blocks). */
  double best = -1;
  uint32_t first_layer = 0;
  for (uint32_t s = 0; s < pp; first_layer += shard_pp_layers(m->layers, pp, s), s++) {
    uint32_t L = shard_pp_layers(m->layers, pp, s);
    bool first = s == 0, last = s + 1 == pp;
    double dw = last ? draft_weights(m, d, t) : 0; /* a draft head and its attention layer, or a draft model */
    double Ldraft = dw > 0 && d->spec_method != SPEC_DRAFT_MODEL;
    double w = stage_weights(m, d, t, first_layer, L, first, last) + dw, act = activation_peak(m, e, d, last);
    /* SGLang's mem_fraction_static covers weights and KV pool only: activations and graphs use the rest
       (model_runner_kv_cache_mixin.py profile_max_num_token: rest = available - total x (1 - fraction)) */
    double outside = e->static_mem_fraction ? 0 : act + p->cuda_graph_bytes;
    double kv = p->budget_bytes - w - outside - p->runtime_bytes;
    /* sliding-window layers keep only their window per sequence (vLLM's hybrid KV cache): the pool is
       sized by the full-attention layers, and every sequence's window of the sliding ones (plus a block of
       slack) is set aside for max_num_seqs sequences */
    double win = window_reserve(m, d, kv_window_token, first_layer, L);
    kv -= win;
    uint32_t slots;
    double per_seq = memplan_state_bytes_per_seq(m, d, first_layer, L);
    double states = state_reserve(e, d, per_seq, kv, &slots);
    kv -= states;
    /* Nemotron-H's MLP-only layers and the linear-attention ones hold no KV (stage_token_bytes); a draft head's
       attention layer does */
    double tok = stage_token_bytes(m, kv_layer_token, first_layer, L, (uint32_t)Ldraft) +
                 (last ? draft_model_token_bytes(d, t) : 0),
           per_block = tok * block;
    double blocks = kv > 0 ? floor(kv / per_block) - 1.0 : -1.0;
    p->stage_layers[s] = L;
    p->stage_weights_bytes[s] = w;
    double cap = floor(MEMPLAN_MAX_KV_TOKENS / block);
    if (blocks > cap) blocks = cap, p->kv_capped = true;
    p->stage_kv_blocks[s] = blocks < 0 ? 0 : (uint32_t)blocks;
    /* the stage the plan describes: the first whose weights do not fit, else the one with the fewest blocks */
    bool pick = s == 0 || (p->weights_bytes <= p->budget_bytes && (w > p->budget_bytes || blocks < best));
    if (pick) {
      best = blocks;
      p->binding_stage = s;
      p->weights_bytes = w;
      p->activation_bytes = act;
      p->kv_bytes = kv;
      p->kv_bytes_per_token = tok;
      p->draft_weights_bytes = dw;
      p->draft_kv_layers = dw > 0 && !Ldraft ? d->spec_draft.layers : (uint32_t)Ldraft;
      p->state_bytes_per_seq = per_seq;
      p->state_bytes = states;
      p->state_slots = slots;
      p->window_bytes = win;
    }
  }
  p->kv_bytes_per_block = p->kv_bytes_per_token * block;

  char who[256], stage[48] = "";
  if (pp > 1) snprintf(stage, sizeof stage, " (pipeline stage %u of %u, %u layers)", p->binding_stage, pp,
                       p->stage_layers[p->binding_stage]);
  snprintf(who, sizeof who, "%s %s on %u x %s%s", m->name, dtype_name(d->weight_dtype), t * pp, g->name, stage);
  /* what to change: a slice cannot be split further (no NVLink between slices), only made larger */
  const char *larger = g->mig_parent[0] ? "use a larger MIG slice" : "use a larger --tensor-parallel-size";
  if (p->weights_bytes > p->budget_bytes)
    return sim_errf(err, SIM_EINPUT,
                    "%s: weights %.1f GiB per GPU exceed the %.1f GiB budget (%.1f GiB x gpu_memory_utilization "
                    "%.2f); %s%s or --quantization",
                    who, p->weights_bytes / GIB, p->budget_bytes / GIB, p->device_bytes / GIB, util, larger,
                    g->mig_parent[0] ? "" : ", --pipeline-parallel-size");
  if (p->kv_bytes <= 0 || (p->state_bytes_per_seq > 0 && p->state_slots == 0))
    return refuse_no_kv(p, who, larger, err);

  uint32_t nblocks = p->stage_kv_blocks[p->binding_stage];
  uint64_t tokens = (uint64_t)nblocks * block;
  if (tokens < p->max_model_len) {
    char n[32];
    fmt_thousands(n, sizeof n, tokens);
    return sim_errf(err, SIM_EINPUT,
                    "%s: KV pool holds %s tokens, fewer than max_model_len %u; lower --max-model-len or raise "
                    "--gpu-memory-utilization",
                    who, n, p->max_model_len);
  }
  p->kv_blocks = nblocks;
  p->kv_tokens = tokens;
  p->max_concurrency_at_max_len = (double)tokens / p->max_model_len;
  p->fits = true;
  return SIM_OK;
}

void memplan_write_json(jw *m, const char *key, const mem_plan *p) {
  jw_obj(m, key);
  const double gib = 1024.0 * 1024.0 * 1024.0;
  jw_num(m, "device_gib", p->device_bytes / gib);
  jw_num(m, "budget_gib", p->budget_bytes / gib);
  jw_num(m, "weights_gib", p->weights_bytes / gib);
  if (p->draft_weights_bytes > 0) { /* included in weights_gib and kv_bytes_per_token */
    jw_num(m, "draft_head_weights_gib", p->draft_weights_bytes / gib);
    jw_u64(m, "draft_head_kv_layers", p->draft_kv_layers);
  }
  jw_num(m, "activation_gib", p->activation_bytes / gib);
  jw_num(m, "cuda_graph_gib", p->cuda_graph_bytes / gib);
  jw_num(m, "runtime_overhead_gib", p->runtime_bytes / gib);
  jw_num(m, "kv_cache_gib", p->kv_bytes / gib);
  jw_num(m, "kv_bytes_per_token", p->kv_bytes_per_token);
  jw_u64(m, "kv_blocks", p->kv_blocks);
  if (p->kv_capped) jw_bool(m, "kv_blocks_capped", true); /* at MEMPLAN_MAX_KV_TOKENS */
  jw_u64(m, "kv_tokens", p->kv_tokens);
  jw_u64(m, "block_size", p->block_tokens);
  if (p->state_bytes_per_seq > 0) { /* a hybrid model's linear-attention states */
    jw_num(m, "linear_attention_state_mib_per_seq", p->state_bytes_per_seq / (1024.0 * 1024.0));
    jw_num(m, "linear_attention_states_gib", p->state_bytes / gib);
    jw_u64(m, "linear_attention_state_slots", p->state_slots);
  }
  if (p->pp > 1) {
    jw_arr(m, "pipeline_stages");
    for (uint32_t k = 0; k < p->pp; k++) {
      jw_obj(m, NULL);
      jw_u64(m, "stage", k);
      jw_u64(m, "layers", p->stage_layers[k]);
      jw_num(m, "weights_gib", p->stage_weights_bytes[k] / gib);
      jw_u64(m, "kv_blocks_its_memory_holds", p->stage_kv_blocks[k]);
      jw_end(m);
    }
    jw_end(m);
    jw_u64(m, "binding_stage", p->binding_stage);
  }
  jw_num(m, "max_concurrency_at_max_model_len", p->max_concurrency_at_max_len);
  jw_num(m, "weights_total_gb", p->weights_total_bytes / 1e9);
  jw_end(m);
}
