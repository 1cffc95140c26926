/* cfg.h: the configuration of one simulated deployment, read from JSON.
 *
 *   model_cfg   a transformer's architecture, read straight from a Hugging Face
 *               config.json (configs/models/<name>.json or any path)
 *   gpu_cfg     one GPU type's datasheet figures, with their source
 *               (configs/gpus/<name>.json)
 *   engine_cfg  a serving engine's scheduler defaults, overheads and efficiency
 *               factors (configs/engines/<name>.json, e.g. vllm, trtllm)
 *   deploy_cfg  the deployment knobs a user sets (TP, replicas, precision,
 *               max_num_seqs, ...): vLLM's flag names. Zero / negative / -1
 *               means "unset": cfg_resolve() fills it from the engine defaults.
 *
 * Name resolution (cfg_find): an argument that is an existing file path is read
 * from disk; otherwise a bare name ("h200") is looked up as
 * configs/<kind>/<name>.json, first on disk relative to $SERVESIM_DATA_DIR
 * (if set), then among the files embedded in the binary.
 *
 * Strictness: servesim's own files (gpu, engine, scenario) reject unknown keys
 * and wrong types, naming the file and the field. HF config.json files carry
 * many keys servesim does not need; those are ignored, but the needed ones
 * must be present with the right type.
 *
 * Ownership: all structs are plain values (fixed-size strings), no heap. */
#ifndef SIM_CFG_H
#define SIM_CFG_H

#include <string.h>

#include "core/common.h"
#include "core/dtype.h"

#define CFG_MAX_ALIASES 8 /* aliases capacity of model, GPU and engine configs */

typedef struct model_cfg {
  char name[64];          /* short name: file stem or the name given */
  char path[512];         /* where it was read from ("<embedded> configs/...") */
  char arch[64];          /* HF model_type, e.g. "llama", "qwen2" */
  char unmodelled[1024];   /* architecture features read but costed approximately (config/cfg_arch.h), "" = none:
                             printed as a warning by every command */
  uint32_t hidden;        /* hidden_size */
  uint32_t intermediate;  /* intermediate_size (each of gate and up) */
  uint32_t layers;        /* num_hidden_layers */
  uint32_t q_heads;       /* num_attention_heads */
  uint32_t kv_heads;      /* num_key_value_heads (GQA); = q_heads if absent */
  uint32_t head_dim;      /* head_dim, or hidden / q_heads if absent */
  uint32_t vocab;         /* vocab_size */
  uint32_t max_pos;       /* max_position_embeddings, tokens */
  uint32_t mtp_layers;    /* num_nextn_predict_layers (DeepSeek-V3 multi-token prediction), 0 = none */
  bool tied_embeddings;   /* tie_word_embeddings */
  bool qkv_bias;          /* attention_bias or (qwen2) implied true */
  sim_dtype native_dtype; /* torch_dtype */
  char aliases[CFG_MAX_ALIASES][96]; /* servesim's optional "aliases" key: the Hugging Face ids and benchmark
                                        labels this model goes by (validate resolves measurements with them) */
  uint32_t naliases;
  /* sliding-window attention layers (layer_types "sliding_attention", e.g. gpt-oss): they attend to the last
     sliding_window tokens only, and vLLM's hybrid KV cache keeps only those for them */
  uint32_t sliding_window;  /* tokens; 0 = none */
  /* attention shapes by layer kind where the config gives a kind its own (0 = head_dim / kv_heads): the full
     layers' (Gemma 4: global_head_dim; num_global_key_value_heads with attention_k_eq_v, transformers'
     modeling_gemma4.py) or the sliding-window layers' (MiMo-V2-Flash: swa_head_dim, swa_num_key_value_heads).
     full_k_eq_v: the full layers have no v_proj (values from the key projection; the cache still holds both).
     The memory plan (weights, KV cache, windows) and the parameters use them; the attention kernels' time is
     costed at head_dim / kv_heads (cfg_arch.c warns) */
  uint32_t full_head_dim, full_kv_heads, swa_head_dim, swa_kv_heads;
  bool full_k_eq_v;
  uint32_t sliding_layers;  /* layers with a window */
  uint8_t sliding_mask[32]; /* bit i: layer i has a window (layers < 256) */
  /* linear-attention layers (layer_types "linear_attention": Gated DeltaNet, Qwen3-Next / Qwen3.5). Such a
     layer keeps no KV cache: each sequence holds a fixed-size recurrent state (v_heads x k_dim x v_dim in
     lin_state_dtype, HF mamba_ssm_dtype) and a short-convolution state ((lin_conv - 1) x conv channels, conv
     channels = 2 k_heads k_dim + v_heads v_dim, in the activation dtype). Projections: in_proj N = 2 k_heads
     k_dim + 2 v_heads v_dim (q, k, v, the output gate z) + 2 v_heads (beta, the decay a), K = H; out_proj
     N = H, K = v_heads v_dim. Heads split over TP (vLLM/SGLang qwen3_next.py) */
  uint32_t lin_layers;      /* layers of linear attention; the others are full (or sliding) attention */
  uint8_t lin_mask[32];     /* bit i: layer i is linear attention (layers < 256) */
  uint32_t lin_k_heads, lin_v_heads, lin_k_dim, lin_v_dim, lin_conv; /* linear_num_key_heads, ..., kernel size */
  sim_dtype lin_state_dtype; /* the recurrent state's dtype: mamba_ssm_dtype, else the model's own */
  bool attn_out_gate;       /* attn_output_gate: q_proj also emits a sigmoid gate per query element (Qwen3.5);
                               Kimi-K3's mla_use_output_gate: a sigmoid gate of heads x v_head_dim from the hidden
                               state before o_proj of its MLA layers */
  /* Kimi Delta Attention (Kimi-Linear / Kimi-K3: text_config.linear_attn_config; kda = true): a gated delta rule
     like Gated DeltaNet, read into the lin_* fields above (num_heads query, key and value heads of head_dim,
     short_conv_kernel_size; kda_layers, 1-based, into lin_mask). What differs: the decay is per channel, from a
     low-rank projection (H -> head_dim -> heads x head_dim, f_a/f_b) instead of GDN's per-head a, so
     cfg_model_lin_layer_params adds that projection; state and convolution sizes are GDN's */
  bool kda;
  /* Mamba-2 layers (Nemotron-H hybrid_override_pattern 'M', layers_block_type "mamba"; mamba = true): lin_mask
     and lin_layers mark them as for Gated DeltaNet (no KV cache, a fixed state per sequence), lin_conv is
     conv_kernel and lin_state_dtype the SSM state's (mamba_ssm_cache_dtype, else the model's). Per layer and
     sequence: the SSM state mamba_heads x mamba_head_dim x ssm_state, the convolution state (lin_conv - 1) x
     (mamba_heads mamba_head_dim + 2 mamba_groups ssm_state) channels. Projections (vLLM's MambaMixer2):
     in_proj N = 2 heads head_dim (z, x) + 2 groups state (B, C) + heads (dt), K = H; out_proj N = H,
     K = heads head_dim. Heads and groups split over TP (n_groups 1: replicated) */
  bool mamba;
  uint32_t mamba_heads, mamba_head_dim, ssm_state, mamba_groups, mamba_chunk; /* mamba_num_heads, ..., chunk_size */
  /* Nemotron-H's blocks: each layer of its pattern is one block, a mixer (Mamba-2 'M', attention '*') or an FFN
     (MLP '-'), not both as in the other models' layers. nomix: layers without a mixer (no attention, no
     state); noffn: layers without an FFN. 0 for every other model */
  uint32_t nomix_layers, noffn_layers;
  uint8_t nomix_mask[32], noffn_mask[32]; /* bit i: layer i (layers < 256) */
  bool mlp_ungated;         /* the MLP is up and down only, no gate (Nemotron-H's relu2 MLP): GATE_UP N = I */
  /* DeciLM / Nemotron-NAS (block_configs: Llama-3.3-Nemotron-Super-49B): the dense MLP's width by layer.
     ffn_classes > 0: layer i's MLP is ffn_class_inter[ffn_class[i]] wide, and `intermediate` holds the widest
     (activation sizing); 0 for every other model (every dense MLP is `intermediate` wide). Layers without
     attention or without an FFN are nomix / noffn layers, as Nemotron-H's blocks */
  uint32_t ffn_classes;
  uint32_t ffn_class_inter[16];
  uint8_t ffn_class[256];
  /* DeepSeek sparse attention (DeepSeek-V3.2, GLM-5: index_topk > 0): a lightning indexer (index_n_heads heads
     of index_head_dim over its own FP8 key cache, one key per token and layer) scores every cached token and
     the MLA attention reads only the dsa_topk best of each query's context */
  uint32_t dsa_topk, dsa_heads, dsa_head_dim;
  /* DeepSeek-V4 (compress_ratios; dsv4 = true; config/cfg_dsv4.c). Read as MLA whose latent is the one shared KV
     head (kv_lora_rank = head_dim - qk_rope_dim, v_head_dim = head_dim, no kv_b), queries through q_lora_rank, the
     output through a grouped low-rank projection (o_groups groups of heads -> o_lora_rank each, then all groups
     -> hidden). Every layer attends to the last sliding_window tokens uncompressed; compress_ratios[i] says what
     else: 0 nothing (sliding_mask), csa_ratio (4: CSA) one compressed entry per csa_ratio tokens of which each
     query reads its csa_topk best (index_topk), chosen by an indexer (dsa_heads x dsa_head_dim, its own key per
     compressed entry), hca_ratio (128: HCA) one entry per hca_ratio tokens, all read. hc_mult: hyper-connections
     (the residual stream hc_mult copies wide) */
  bool dsv4;
  uint32_t o_lora_rank, o_groups, hc_mult, csa_topk, csa_ratio, hca_ratio, csa_layers, hca_layers;
  uint8_t csa_mask[32], hca_mask[32]; /* bit i: layer i is CSA / HCA (layers < 256) */
  /* the checkpoint's own quantization (quantization_config.quant_method), the default weights when
     --quantization is not given, as vLLM loads it: fp8 -> DT_FP8, mxfp4 -> DT_INT4 (4-bit weights with a
     scale per 32: run weight-only on GPUs without FP4 tensor cores) */
  bool ckpt_quant;          /* the checkpoint is quantized as ckpt_wdtype */
  sim_dtype ckpt_wdtype;
  bool mxfp4;
  bool attn_unquantized;    /* quantization_config.modules_to_not_convert lists the attention ("self_attn"): its
                               projections stay in the activation dtype whatever the weights' quantization */
  /* multi-head latent attention (DeepSeek-V2/V3, Kimi-K2; mla = kv_lora_rank > 0): queries through a
     q_lora_rank bottleneck (0: a direct projection), keys and values from one latent of kv_lora_rank plus a
     shared RoPE key of qk_rope_dim, which is all the KV cache holds; head_dim = qk_nope_dim + qk_rope_dim */
  bool mla;
  uint32_t q_lora_rank, kv_lora_rank, qk_nope_dim, qk_rope_dim, v_head_dim;
  /* mixture of experts (experts = 0: dense). A layer's FFN is an MoE block
     when cfg_model_is_moe_layer says so, else a dense MLP of `intermediate`. */
  uint32_t experts;         /* routed experts per MoE block (num_local_experts / num_experts / n_routed_experts) */
  uint32_t experts_per_tok; /* top-k: routed experts each token uses */
  uint32_t expert_inter;    /* intermediate size of one routed expert (moe_intermediate_size, else intermediate_size) */
  uint32_t shared_inter;    /* intermediate size of the shared expert(s) every token also uses, together; 0 = none */
  uint32_t moe_first_dense; /* the first layers are dense (DeepSeek first_k_dense_replace) */
  uint32_t moe_freq;        /* MoE when layer % freq == 0 (DeepSeek moe_layer_freq), >= 1 */
  uint32_t moe_step;        /* MoE when (layer + 1) % step == 0 (Qwen decoder_sparse_step, Llama-4
                               interleave_moe_layer_step), >= 1 */
  uint32_t mlp_only[32];    /* layers listed dense (Qwen mlp_only_layers) */
  uint32_t n_mlp_only;
  uint32_t moe_layers;      /* layers with an MoE block */
  /* Nemotron-3's MoE blocks (hybrid_override_pattern 'E', layers_block_type "moe"; vLLM nemotron_h.py
     NemotronHMoE): moe_masked: moe_mask says which layers are MoE blocks (not the keys above); moe_ungated:
     every expert, routed and shared, is up and down only (relu2, no gate: 2 matrices, not 3); moe_latent
     (moe_latent_size, 0 = none): the routed experts run at this width instead of hidden_size, between a
     fc1_latent_proj (hidden -> latent) and a fc2_latent_proj (latent -> hidden), both replicated on every
     TP rank; the shared expert and the router read the full hidden state */
  bool moe_masked, moe_ungated;
  uint8_t moe_mask[32];     /* bit i: layer i is an MoE block (layers < 256) */
  uint32_t moe_latent;
  bool fp8_block;           /* the checkpoint is block-scaled FP8 (quantization_config.weight_block_size): vLLM runs
                               its linear and MoE layers with the block-FP8 kernels */
  /* derived by cfg_model_load: parameter counts */
  double params_per_layer_linear; /* weights of QKV, O, gate, up, down in one layer (a dense layer) */
  double params_embedding;        /* vocab x hidden (input embedding) */
  double params_lm_head;          /* vocab x hidden, 0 if tied */
  double params_total;            /* everything incl. norms */
} model_cfg;

typedef enum link_kind { LINK_NVLINK = 0, LINK_PCIE } link_kind;

/* A MIG GPU-instance profile as nvidia-smi names it, "<N>g.<M>gb" (a "+me"
 * suffix: the same slice with the media engines). NVIDIA's profile tables
 * (MIG user guide, "Supported MIG Profiles") give a profile N/7 of the SMs
 * and M/8 of the memory and L2 in "memory slices"; the GPU file lists its
 * profiles and how many of each fit on one GPU (config/mig.c). */
#define CFG_MAX_MIG 12
typedef struct mig_profile {
  char name[24];
  uint32_t compute_slices; /* N of 7 */
  uint32_t memory_slices;  /* of 8: memory, L2 and (servesim's assumption) HBM bandwidth */
  uint32_t max_instances;  /* on one GPU, when every instance has this profile */
} mig_profile;

typedef struct gpu_cfg {
  char name[64];             /* short name, e.g. "h200" */
  char full_name[128];       /* e.g. "NVIDIA H200 SXM 141GB" */
  char source[1024];         /* where the figures come from */
  double mem_bytes;          /* device memory as the driver reports it, bytes */
  double hbm_Bps;            /* datasheet peak memory bandwidth, bytes/s */
  double flops[DT_COUNT];    /* dense tensor-core peak per dtype, FLOP/s; 0 = no native support */
  link_kind link;            /* interconnect between the GPUs of one TP group */
  double link_Bps;           /* per-GPU one-direction interconnect bandwidth, bytes/s */
  double link_latency_ns;    /* base latency of one all-reduce, ns */
  uint32_t gpus_per_node;    /* GPUs one node holds on the interconnect above (a TP group larger than this
                                spans nodes); default 8 */
  double net_Bps;            /* per-GPU one-direction bandwidth of the inter-node network (one NIC per GPU,
                                rail-optimized), bytes/s; default 50e9 (400 Gb/s) */
  double net_latency_ns;     /* per-hop latency of one inter-node transfer, ns; default 5 us */
  uint32_t sm_count;         /* streaming multiprocessors */
  double l2_bytes;           /* L2 cache, bytes */
  double price_per_hour;     /* default USD per GPU-hour for cost reports; 0 = unknown */
  char aliases[CFG_MAX_ALIASES][64]; /* other names of this GPU type: kernel-db directory ("h100_sxm"),
                                        device strings as CUDA reports them ("NVIDIA H100 80GB HBM3") */
  uint32_t naliases;         /* entries of aliases[] in use */
  /* MIG: the profiles a whole GPU can be cut into (its file's "mig"; n_mig 0: not MIG-capable) */
  mig_profile mig[CFG_MAX_MIG];
  uint32_t n_mig;
  char mig_balanced[128];    /* NVIDIA's mixed "all-balanced" layout, e.g. "2x1g.18gb+1x2g.35gb+1x3g.71gb"; "" none */
  char mig_source[768];
  /* a MIG slice ("h200:3g.71gb", cfg_gpu_load): the whole GPU's name and the slice's shares; "" for a whole GPU */
  char mig_parent[64];
  uint32_t mig_compute_slices, mig_memory_slices;
} gpu_cfg;

typedef enum admit_policy {
  ADMIT_ON_DEMAND = 0, /* vLLM: blocks allocated as tokens are scheduled; preempt on shortage */
  ADMIT_RESERVE_FULL,  /* TensorRT-LLM guaranteed-no-evict: admit only if prompt+max output fit */
  ADMIT_TOKEN_RATIO    /* SGLang: prefill first; admit while free KV covers the new request's prompt + output and
                          new_token_ratio of the running ones' remaining output; retract decodes on shortage */
} admit_policy;

/* Upper bound of an engine's frontend_latency (one hour): keeps send + latency in range. */
#define CFG_MAX_FRONTEND_LATENCY_NS 3.6e12

/* How an engine uses CUDA graphs (vLLM's cudagraph_mode). */
typedef enum graph_mode {
  GRAPH_NONE = 0,          /* eager: every kernel launched by the host */
  GRAPH_DECODE_ONLY,       /* decode-only batches replay a full graph, the rest run eagerly (TensorRT-LLM) */
  GRAPH_PIECEWISE,         /* batches up to the largest capture size replay graphs between the
                              attention calls, which are launched eagerly (vLLM < 0.11) */
  GRAPH_FULL_AND_PIECEWISE /* decode-only batches: full graph; mixed batches: piecewise (vLLM >= 0.11) */
} graph_mode;

typedef struct engine_cfg {
  char name[32];    /* "vllm", "trtllm" */
  char aliases[CFG_MAX_ALIASES][64]; /* other names of the engine ("tensorrt_llm"), e.g. as benchmark data spell it */
  uint32_t naliases;
  char version[32]; /* the engine version the values describe (engver.h); "" = not stated. --profile auto
                       picks the measured tables of the nearest version (runner/profsel.h) */
  char source[1024];/* what the defaults and parameters rest on */
  /* scheduler defaults (deploy_cfg overrides) */
  uint32_t max_num_seqs;
  uint32_t max_num_batched_tokens;
  uint32_t block_size;               /* tokens per KV block */
  double gpu_memory_utilization;     /* fraction of device memory the engine may use */
  bool enable_prefix_caching;
  bool enable_chunked_prefill;
  bool async_scheduling;             /* CPU scheduling overlaps the GPU step */
  uint32_t long_prefill_token_threshold; /* cap on one prefill chunk; 0 = off */
  admit_policy admission;
  bool reserve_full_isl;             /* ADMIT_ON_DEMAND: admit only when the whole current sequence fits
                                        (vLLM scheduler_reserve_full_isl) */
  graph_mode graph_mode;             /* CUDA graph use (vLLM cudagraph_mode) */
  /* ADMIT_TOKEN_RATIO (SGLang server_args.py): a prefill batch holds at most max_prefill_tokens new tokens
     (chunked_prefill_size = max_num_batched_tokens caps it further); schedule_conservativeness scales the
     initial new_token_ratio; 0 = not stated in the file */
  uint32_t max_prefill_tokens;
  double schedule_conservativeness;
  bool static_mem_fraction;          /* gpu_memory_utilization is SGLang's mem_fraction_static: (weights + KV pool)
                                        / device memory; activations and CUDA graphs live in the rest */
  /* CPU and launch overheads */
  double step_overhead_ns;           /* fixed CPU cost per step (schedule, prepare inputs, sample) */
  double per_seq_overhead_ns;        /* CPU cost per scheduled sequence per step */
  double stream_per_seq_ns;          /* CPU time of the output path (processes apart from the scheduler: SGLang's
                                        detokenizer and tokenizer manager with the HTTP server) per sequence that
                                        streams a token in the step; a pipeline stage, so a step lasts at least
                                        this x sampling sequences (cost.h); 0 = not modelled apart */
  double frontend_latency_ns;        /* per request: client send -> engine queue (HTTP, tokenization, IPC); counts in TTFT;
                                        at most CFG_MAX_FRONTEND_LATENCY_NS */
  uint32_t cuda_graph_max_batch;     /* largest CUDA-graph capture size the engine allows (vLLM caps
                                        max_cudagraph_capture_size at 512); 0 = no graphs */
  double launch_overhead_ns_per_layer; /* host time to launch one layer's kernels when the step does not
                                          replay a full graph (piecewise or eager), ns */
  double elementwise_kernels_per_layer; /* norm/RoPE/activation kernels per layer (from the engine's model code) */
  double kernel_floor_ns;            /* the smallest kernel's GPU time when no profile measures it, ns */
  bool fp8_static_act_scale;         /* FP8 linears quantize their input with the checkpoint's static scale, one
                                        elementwise kernel or fused into the kernel before (TensorRT-LLM serves FP8
                                        only from calibrated checkpoints); false: as the profile's table measured */
  /* roofline fallback (no measured profile): achieved fraction of the datasheet peak */
  double gemm_compute_eff;           /* large GEMMs vs dense tensor-core peak */
  double gemm_memory_eff;            /* weight-streaming GEMMs vs HBM bandwidth */
  double attn_prefill_eff;           /* prefill attention vs tensor-core peak */
  double attn_decode_eff;            /* decode attention vs HBM bandwidth */
  double elementwise_eff;            /* norms, activation, residual vs HBM bandwidth (always used) */
  double allreduce_bw_eff;           /* all-reduce bus bandwidth vs link bandwidth */
  double allreduce_latency_ns;       /* fixed cost per all-reduce call, ns */
  /* device memory held outside the KV pool, per GPU */
  double runtime_overhead_bytes;     /* CUDA context, NCCL buffers, allocator slack */
  double cuda_graph_bytes;           /* CUDA graph memory pool */
  double activation_scale;           /* multiplier on the analytic activation peak */
  /* linear-attention (recurrent) states of hybrid models: 0 = the engine holds a state for each of max_num_seqs
     sequences (TensorRT-LLM's MambaCacheManager is sized by max_batch_size); r > 0 = the memory left after
     weights, activations and graphs is split r : 1 between states and the KV cache, and the running requests
     are capped at the states that fit (SGLang's mamba_full_memory_ratio, default 0.9) */
  double state_memory_ratio;
} engine_cfg;

/* Token routing of mixture-of-experts layers, as the kernel database measured
 * it (AIConfigurator's collector: expert loads balanced, or drawn from a power
 * law of exponent 1.01 or 1.2). Default balanced: MoE models are trained
 * with load-balancing losses that spread a batch's tokens over the experts,
 * and on the measured Qwen3-235B-A22B decode steps the balanced tables come
 * closest (docs/ACCURACY.md, "Mixture of experts"). */
/* Where all-reduce times come from (--allreduce):
 *   AR_AUTO   the profile's measured table, unless its bus bandwidth at the
 *             deployment's node-local GPU count is below a third of what the
 *             GPU file's link gives (a measurement of GPUs without
 *             peer-to-peer access, e.g. across CPU sockets: another machine's
 *             topology); then the link formula, and the outputs say so
 *   AR_TABLE  the measured table whatever it says
 *   AR_LINK   the link formula (GPU file's link bandwidth and latency) */
typedef enum ar_source { AR_AUTO = 0, AR_TABLE, AR_LINK } ar_source;

typedef enum moe_routing { MOE_BALANCED = 0, MOE_POWER_LAW_101, MOE_POWER_LAW_12 } moe_routing;
const char *moe_routing_name(moe_routing r); /* the kernel-db names: "balanced", "power_law_1.01", "power_law_1.2" */
bool moe_routing_parse(const char *s, moe_routing *out);

typedef enum route_policy {
  ROUTE_ROUND_ROBIN = 0,
  ROUTE_LEAST_OUTSTANDING, /* fewest requests assigned and not finished */
  ROUTE_LEAST_KV           /* lowest KV-cache usage */
} route_policy;

/* Speculative decoding's method (vLLM's speculative_config.method; config/specdec.h). */
typedef enum spec_method {
  SPEC_NONE = 0,
  SPEC_EAGLE,       /* EAGLE / EAGLE-2 head: one decoder layer of the target's width + LM head */
  SPEC_EAGLE3,      /* EAGLE-3 head: the same shape, fed by three of the target's layers */
  SPEC_MTP,         /* the model's own multi-token-prediction layer (DeepSeek-V3 num_nextn_predict_layers) */
  SPEC_NGRAM,       /* prompt lookup on the host: no draft forward */
  SPEC_DRAFT_MODEL  /* a separate draft model (speculative_config.model): a small dense transformer */
} spec_method;
enum { SPEC_MAX_K = 16 }; /* most draft tokens per step servesim takes */

typedef struct deploy_cfg {
  uint32_t tp;                      /* tensor-parallel size; 0 = unset (1) */
  uint32_t dp;                      /* --data-parallel-size: engine ranks of one replica, each with its own
                                       scheduler and KV cache (attention data parallel); a mixture of experts'
                                       MoE layers span all dp x tp GPUs (experts sliced, or whole with expert
                                       parallelism) and see every rank's tokens; 0 = 1 */
  uint32_t pp;                      /* --pipeline-parallel-size: stages of consecutive layers, each a TP group;
                                       0 = unset (1). A replica holds tp x pp GPUs */
  uint32_t replicas;                /* 0 = unset (1) */
  sim_dtype act_dtype;              /* --dtype: bf16 or fp16 */
  sim_dtype weight_dtype;           /* --quantization: bf16/fp16 (none), fp8, int8, int4 */
  sim_dtype kv_dtype;               /* --kv-cache-dtype: act dtype (auto) or fp8 */
  bool act_dtype_set, weight_dtype_set, kv_dtype_set;
  uint32_t max_num_seqs;            /* 0 = engine default */
  uint32_t max_num_batched_tokens;  /* 0 = engine default */
  uint32_t block_size;              /* 0 = engine default */
  uint32_t max_model_len;           /* 0 = model's max_position_embeddings */
  uint32_t long_prefill_token_threshold; /* cap on one prefill chunk per step (vLLM's flag); 0 = the engine file's */
  double gpu_memory_utilization;    /* < 0 = engine default */
  int8_t enable_prefix_caching;     /* -1 = engine default, 0/1 */
  int8_t enable_chunked_prefill;    /* -1 = engine default, 0/1 */
  int8_t async_scheduling;          /* -1 = engine default, 0/1: vLLM's --[no-]async-scheduling */
  uint32_t gpus_per_node;           /* --gpus-per-node: 0 = the GPU file's (cfg_resolve fills it) */
  ar_source allreduce;              /* --allreduce: where all-reduce times come from (ar_source) */
  moe_routing moe_routing;          /* --moe-routing: expert load skew of MoE layers (default balanced) */
  bool expert_parallel;             /* --enable-expert-parallel: MoE layers split their experts over the TP ranks */
  uint32_t moe_ep;                  /* --moe-expert-parallel-size: the dp x tp GPUs of the MoE layers as moe_ep groups
                                       of whole experts, each expert sliced over dp x tp / moe_ep of them (TensorRT-LLM's
                                       and SGLang's hybrid MoE TP x EP); 0 = unset: deploy_ep */
  route_policy router;
  bool schedule_lpm;                /* SGLang's --schedule-policy lpm (longest prefix match first); false: fcfs */
  bool mixed_chunk;                 /* SGLang's --enable-mixed-chunk: a prefill batch also decodes the running ones */
  /* disaggregated serving (docs/DISAGG.md): --mode disagg splits the replica into prefill workers and decode
     workers (Dynamo / AIConfigurator's xPyD), each pool with its own TP and batch knobs; 0 = unset (cfg_resolve
     fills the pool fields from the deployment's own tp, max_num_seqs, max_num_batched_tokens) */
  bool disagg;                      /* --mode disagg (else agg: one engine does both) */
  uint32_t prefill_workers, decode_workers;
  uint32_t prefill_tp, decode_tp;
  uint32_t prefill_dp, decode_dp;   /* attention data-parallel ranks of each worker (TensorRT-LLM's DP attention) */
  uint32_t prefill_max_num_seqs, prefill_max_num_batched_tokens;
  uint32_t decode_max_num_seqs, decode_max_num_batched_tokens;
  uint32_t max_local_prefill_length; /* conditional disaggregation: prompts with at most this many tokens not in the
                                        decode worker's prefix cache prefill there; 0 = off (cluster_disagg.c) */
  /* speculative decoding (--speculative-config, config/specdec.h; off: method none or k 0) */
  spec_method spec_method;          /* speculative_config.method */
  uint32_t num_speculative_tokens;  /* k: draft tokens per step; 0 = off */
  uint32_t spec_draft_tp;           /* draft_tensor_parallel_size; 0 = the target's */
  uint32_t spec_draft_vocab;        /* draft_vocab_size (an EAGLE-3 head's config.json): the draft LM head's rows;
                                       0 = the target's vocabulary */
  uint32_t spec_disable_bs;         /* disable_by_batch_size (TensorRT-LLM's max_concurrency): no drafts in a step
                                       whose running batch is larger; 0 = none */
  uint32_t spec_n_rates;            /* acceptance_rates given (unconditional per position), 0 = none */
  double spec_accept_length;        /* acceptance_length given (mean tokens per step, bonus included); < 0 = none */
  double spec_rates[SPEC_MAX_K];    /* the given rates, then (cfg_resolve) the k rates the run draws from */
  char spec_model[96];              /* speculative_config.model: the draft's name (EAGLE head, draft model) */
  char spec_dataset[32];            /* which published measurement (acceptance table's dataset); "" = its default */
  char spec_source[400];            /* resolved: where the rates come from */
  /* method draft_model, resolved from the draft's config.json (specdec_resolve): a dense transformer whose every
     layer is full attention; the cost model (hw/cost.c spec_draft) and the memory plan read these */
  struct {
    uint32_t layers, hidden, q_heads, kv_heads, head_dim, inter, vocab;
    bool tied;                      /* tie_word_embeddings: one vocab x hidden matrix, not two */
    double params;                  /* its parameters (cfg_model_params: the weights' elements) */
    char name[64];
  } spec_draft;
  bool resolved;                    /* set by cfg_resolve: no field is unset; only such a value goes below config/ */
} deploy_cfg;

/* Largest pipeline-parallel size (stages per replica). */
#define CFG_MAX_PP 16u
#define CFG_MAX_DP 64u

/* Data-parallel ranks of a deployment (an unresolved one: 1 when unset). */
static inline uint32_t deploy_dp(const deploy_cfg *d) { return d->dp ? d->dp : 1; }
/* FP8 weights on a GPU without FP8 tensor cores: weight-only (vLLM's FP8 Marlin, W8A16), the weights
 * dequantized into the activation-dtype GEMMs (cfg_resolve admits it for vLLM only). */
static inline bool deploy_fp8_weight_only(const deploy_cfg *d, const gpu_cfg *g) {
  return d->weight_dtype == DT_FP8 && g->flops[DT_FP8] <= 0;
}
/* Expert-parallel degree of the MoE layers: moe_ep when given, else whole experts over all dp x tp ranks with
 * --enable-expert-parallel (vLLM FusedMoEParallelConfig: ep_size = dp x tp), else 1. */
static inline uint32_t deploy_ep(const deploy_cfg *d) {
  if (d->moe_ep) return d->moe_ep;
  return d->expert_parallel ? (d->tp ? d->tp : 1) * deploy_dp(d) : 1;
}

/* GPUs one replica holds: tp x pp x dp (an unresolved deployment: unset sizes count 1). */
static inline uint32_t deploy_gpus(const deploy_cfg *d) {
  return (d->tp ? d->tp : 1) * (d->pp ? d->pp : 1) * deploy_dp(d);
}

/* GPUs of the whole deployment: replicas x tp x pp x dp, or (--mode disagg) both pools' workers x their TP. */
static inline uint32_t deploy_gpus_total(const deploy_cfg *d) {
  if (d->disagg) return d->prefill_workers * d->prefill_tp * d->prefill_dp + d->decode_workers * d->decode_tp * d->decode_dp;
  return deploy_gpus(d) * d->replicas;
}

/* One pool of a resolved disaggregated deployment as a deployment of its own (decode: the decode pool, else the
 * prefill pool): the pool's TP, batch knobs and worker count (as replicas), MoE expert parallelism over all its
 * ranks when the deployment's spans all of them, agg mode. */
void deploy_pool(const deploy_cfg *d, bool decode, deploy_cfg *out);

/* The replica's layout in words: "TP4", "TP8 x PP2 over 2 nodes of 8". */
void deploy_layout_text(const deploy_cfg *d, char *buf, size_t n);

/* Kinds of named configs and where their files live. */
typedef enum cfg_kind { CFG_MODEL = 0, CFG_GPU, CFG_ENGINE, CFG_SCENARIO, CFG_PROFILE, CFG_INSTANCE } cfg_kind;

/* Resolves a name or path to a readable path (disk or embedded). Returns
 * SIM_EINPUT listing the known names when nothing matches. */
int cfg_find(cfg_kind kind, const char *name_or_path, char *path_out, size_t n, sim_err *err);
/* Lists known names of a kind (embedded and under $SERVESIM_DATA_DIR), sorted,
 * comma-separated, into buf. */
void cfg_list(cfg_kind kind, char *buf, size_t n);
/* The text of a named config (embedded or on disk; *text malloc'd) and what to call it in messages. */
int cfg_read(cfg_kind kind, const char *name_or_path, char **text, char *what, size_t wn, sim_err *err);

int cfg_model_load(model_cfg *m, const char *name_or_path, sim_err *err);
int cfg_gpu_load(gpu_cfg *g, const char *name_or_path, sim_err *err);
int cfg_engine_load(engine_cfg *e, const char *name_or_path, sim_err *err);

/* Sliding-window layers among [first, first + n). */
uint32_t cfg_model_sliding_layers_in(const model_cfg *m, uint32_t first, uint32_t n);

/* Whether layer i (0-based) of m has a mixture-of-experts block. */
bool cfg_model_is_moe_layer(const model_cfg *m, uint32_t i);
/* MoE layers among [first, first + n). */
uint32_t cfg_model_moe_layers_in(const model_cfg *m, uint32_t first, uint32_t n);
/* Linear-attention layers among layers [first, first + n). */
uint32_t cfg_model_lin_layers_in(const model_cfg *m, uint32_t first, uint32_t n);
/* Layers without a mixer, without an FFN (Nemotron-H's blocks) among [first, first + n); blocks: the mixers
 * and FFNs there, 2 n for every model but Nemotron-H. */
uint32_t cfg_model_nomix_layers_in(const model_cfg *m, uint32_t first, uint32_t n);
uint32_t cfg_model_noffn_layers_in(const model_cfg *m, uint32_t first, uint32_t n);
static inline uint32_t cfg_model_blocks_in(const model_cfg *m, uint32_t first, uint32_t n) {
  return 2 * n - cfg_model_nomix_layers_in(m, first, n) - cfg_model_noffn_layers_in(m, first, n);
}
/* DeepSeek-V4's CSA and HCA layers among [first, first + n) (0 for other models). */
uint32_t cfg_model_csa_layers_in(const model_cfg *m, uint32_t first, uint32_t n);
uint32_t cfg_model_hca_layers_in(const model_cfg *m, uint32_t first, uint32_t n);
/* DeepSeek-V4: the weights a compressed layer adds to its attention (the KV compressor; for CSA also the
 * indexer and its own compressor), elements, for a layer of compression ratio `ratio`; and the hyper-connection
 * mixing weights of one layer (0 without hc_mult). */
double cfg_model_dsv4_layer_params(const model_cfg *m, uint32_t ratio);
double cfg_model_hc_params(const model_cfg *m);
/* DeepSeek-V4's cache bytes per token of a stage's compressed layers [first, first + n): each CSA layer's
 * kv_layer_token (the shared KV vector in the KV dtype) plus its index key (index_head_dim in the same dtype) over
 * csa_ratio, each HCA layer's kv_layer_token over hca_ratio; 0 for other models. Windows are not included. */
double cfg_model_dsv4_token_bytes(const model_cfg *m, double kv_layer_token, uint32_t first, uint32_t n);
/* Weight matrices of one MLP of intermediate I, in units of H x I: 3 (gate, up, down), 2 ungated. */
static inline double cfg_model_mlp_mats(const model_cfg *m) { return m->mlp_ungated ? 2.0 : 3.0; }
/* Dense-MLP layers (neither MoE nor without an FFN) in [first, first + n) whose width is class k's
 * (ffn_class_inter[k]); without classes, k = 0 counts every dense-MLP layer (width `intermediate`). */
uint32_t cfg_model_ffn_class_layers_in(const model_cfg *m, uint32_t k, uint32_t first, uint32_t n);
/* The width of class k: ffn_class_inter[k], or `intermediate` without classes. */
static inline uint32_t cfg_model_ffn_class_inter(const model_cfg *m, uint32_t k) {
  return m->ffn_classes ? m->ffn_class_inter[k] : m->intermediate;
}
/* True when a layer kind has attention shapes of its own (full_* or swa_* set). */
static inline bool cfg_model_typed_attn(const model_cfg *m) {
  return m->full_head_dim || m->full_kv_heads || m->swa_head_dim || m->swa_kv_heads || m->full_k_eq_v;
}
/* A layer kind's KV heads and head dim (sliding: the sliding-window layers', else the full layers'). */
static inline uint32_t cfg_model_kind_kv_heads(const model_cfg *m, bool sliding) {
  uint32_t v = sliding ? m->swa_kv_heads : m->full_kv_heads;
  return v ? v : m->kv_heads;
}
static inline uint32_t cfg_model_kind_head_dim(const model_cfg *m, bool sliding) {
  uint32_t v = sliding ? m->swa_head_dim : m->full_head_dim;
  return v ? v : m->head_dim;
}
/* One attention layer's q/k/v/o parameters at a kind's shapes (sliding-window or full layers). */
double cfg_model_attn_kind_params(const model_cfg *m, bool sliding);
/* The dense MLPs' parameters over every layer (gate, up, down; up, down ungated). */
double cfg_model_dense_mlp_params(const model_cfg *m);
/* The number of width classes (1 without classes). */
static inline uint32_t cfg_model_ffn_nclasses(const model_cfg *m) { return m->ffn_classes ? m->ffn_classes : 1; }
/* The same for one expert (routed or shared): 2 for Nemotron-3's relu2 experts, 3 for every other model's. */
static inline double cfg_model_expert_mats(const model_cfg *m) { return m->moe_ungated ? 2.0 : 3.0; }
/* The width the routed experts run at: moe_latent_size when given, else hidden_size. */
static inline uint32_t cfg_model_expert_hidden(const model_cfg *m) { return m->moe_latent ? m->moe_latent : m->hidden; }
/* Weights of one MoE block, elements: the routed experts, the shared expert(s), the router (hidden x experts)
 * and the latent projections (2 hidden x latent); 0 for a dense model. */
double cfg_model_moe_block_params(const model_cfg *m);
/* DeepSeek sparse attention's indexer per layer: its weights (wq_b from the q latent, wk and the head weights
 * from the hidden state, k_norm), elements; its key cache per token, bytes: index_head_dim FP8 values and an
 * FP32 scale per 128 (vLLM's DeepseekV32IndexerCache). 0 without sparse attention. */
double cfg_model_dsa_params(const model_cfg *m);
double cfg_model_dsa_cache_bytes(const model_cfg *m);
/* Weights of one linear-attention layer's mixer (no FFN), elements. */
double cfg_model_lin_layer_params(const model_cfg *m);

/* True when name equals the config's name or one of its aliases, ignoring ASCII case. */
bool cfg_gpu_has_alias(const gpu_cfg *g, const char *name);
bool cfg_model_has_alias(const model_cfg *m, const char *name);
bool cfg_engine_has_alias(const engine_cfg *e, const char *name);

/* Parses from an in-memory JSON text; `what` names it in error messages. */
int cfg_model_parse(model_cfg *m, const char *json, const char *what, sim_err *err);
/* A ModelOpt hf_quant_config.json (its text) for model m, whose config.json has no quantization_config: sets the
 * checkpoint's weight format (cfg_parse.c); cfg_model_load reads the file beside the config (X.hf_quant_config.json
 * beside X.json, or hf_quant_config.json beside config.json). */
int cfg_model_quant_sidecar(model_cfg *m, const char *json, const char *what, sim_err *err);
int cfg_gpu_parse(gpu_cfg *g, const char *json, const char *what, sim_err *err);
int cfg_engine_parse(engine_cfg *e, const char *json, const char *what, sim_err *err);

void deploy_init(deploy_cfg *d); /* everything unset */
/* KV block (page) sizes an engine takes: powers of two 8..128 (vLLM, TensorRT-LLM); SGLang also 1, its default
 * token-granular page (server_args.py _handle_page_size: page_size None -> 1), and 2, 4 (any power of two
 * works in its allocator; servesim bounds it at 128 like the others). */
static inline bool cfg_block_size_ok(const engine_cfg *e, uint32_t b) {
  if (b == 0 || b > 128 || (b & (b - 1))) return false;
  return b >= 8 || !strcmp(e->name, "sglang");
}
static inline const char *cfg_block_sizes_text(const engine_cfg *e) {
  return strcmp(e->name, "sglang") ? "8, 16, 32, 64, 128" : "1, 2, 4, 8, 16, 32, 64, 128";
}
/* Fills unset deployment fields from the engine and model, then checks the
 * combination: TP must divide the attention heads (and KV heads, or be a
 * multiple of them), PP at most the layers, max_model_len <= model limit,
 * dtypes supported by the GPU, ... Errors name the offending field.
 * Pipeline parallelism turns async scheduling off by default and rejects it
 * when asked for (vLLM: "Async scheduling is not yet supported with
 * pipeline_parallel_size > 1", config/vllm.py; arg_utils.py raises on an
 * explicit --async-scheduling). */
int cfg_resolve(deploy_cfg *d, const model_cfg *m, const gpu_cfg *g, const engine_cfg *e, sim_err *err);

/* Parses vLLM's --quantization values: "none", "fp8", "int8", "int4", "awq",
 * "gptq" (awq/gptq = int4 weight-only). act is the activation dtype. */
bool cfg_parse_quantization(const char *s, sim_dtype act, sim_dtype *weight_out);
const char *route_policy_name(route_policy r);
const char *graph_mode_name(graph_mode m);
bool route_policy_parse(const char *s, route_policy *out);
/* "auto", "table" or "link": deploy_cfg.allreduce; false for anything else. */
bool cfg_parse_allreduce(const char *s, ar_source *out);
const char *ar_source_name(ar_source a);

#endif
