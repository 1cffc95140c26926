/* cfg_keys.c: the keys of a Hugging Face config.json servesim does not read (cfg_arch.h: cfg_arch_unread).
 * Every key of the language model's object is either read by the model reader (cfg_parse.c, cfg_layers.c,
 * cfg_blocks.c, cfg_dsv4.c), named by a warning of its own (cfg_arch.c), or known not to change the memory plan
 * or a step's cost as servesim models them (token ids, generation defaults, dropout and initialisation, norm
 * epsilons, RoPE and activation constants, the router's numerics, training-only settings). Any other key that is
 * set (not null, false, 0, "" or empty) is named in a warning, so a configuration from a new architecture never has
 * a field silently ignored. The lists are searched in order (a few thousand comparisons a model). */
#include <stdio.h>
#include <string.h>

#include "config/cfg_arch.h"

/* read by the model reader, or warned about by cfg_arch_check; the multi-token-prediction layers' keys too: the
 * engines load those layers only for speculative decoding, which holds and costs them (--speculative-config) */
static const char *const read_keys[] = {
    "aliases", "attention_bias", "attention_chunk_size", "attention_k_eq_v", "attn_output_gate", "attn_res_block_size", "block_configs",
    "chunk_size", "compress_ratios", "conv_kernel", "decoder_sparse_step", "dense_intermediate_size", "dtype",
    "enable_moe_block", "expert_dtype", "first_k_dense_replace", "global_head_dim", "hc_mult", "head_dim",
    "hidden_size", "hybrid_layer_pattern", "hybrid_override_pattern", "index_head_dim", "index_n_heads", "index_skip_topk_offset", "index_topk",
    "index_topk_freq", "index_topk_pattern", "indexer_types",
    "interleave_moe_layer_step", "intermediate_size", "intermediate_size_mlp", "kv_lora_rank", "layer_types",
    "layers_block_type", "linear_attn_config", "linear_conv_kernel_dim", "linear_key_head_dim", "linear_num_key_heads",
    "linear_num_value_heads", "linear_value_head_dim", "mamba_head_dim", "mamba_num_heads", "mamba_ssm_dtype",
    "max_position_embeddings", "mla_use_output_gate", "mlp_only_layers", "model_type", "mtp_hybrid_override_pattern",
    "mtp_layers_block_type", "mtp_num_hidden_layers", "mtp_transformer_layers", "mtp_use_dedicated_embeddings", "moe_intermediate_size",
    "moe_latent_size", "moe_layer_freq", "moe_num_experts", "moe_shared_expert_intermediate_size", "n_group",
    "n_groups", "n_routed_experts", "n_shared_experts", "num_attention_heads", "num_experts", "num_experts_per_tok",
    "num_experts_per_token", "num_global_key_value_heads", "num_hash_layers", "num_hidden_layers",
    "num_key_value_heads", "num_local_experts", "num_mtp_modules", "num_nextn_predict_layers", "num_shared_experts", "o_groups",
    "o_lora_rank", "q_lora_rank", "qk_nope_head_dim", "qk_rope_head_dim", "quantization_config",
    "routed_expert_hidden_size", "shared_expert_intermediate_size", "shared_intermediate_size", "sliding_window",
    "sparse_attention_config", "ssm_state_size", "swa_head_dim", "swa_num_key_value_heads", "text_config",
    "tie_word_embeddings", "top_k_experts", "topk_group", "torch_dtype", "use_mtp", "v_head_dim", "vocab_size",
};

/* known not to change memory or a step's cost as servesim models them: identifiers and token ids, generation
 * defaults, training settings (dropout, initialisation, auxiliary losses), numerical constants (norm epsilons,
 * RoPE, activation and softcap constants, the router's scoring and scaling), values another read key already
 * carries (qk_head_dim = nope + rope; attention_head_dim = head_dim; share_expert_dim = n_shared_experts x
 * moe_intermediate_size; experts_per_token = num_experts_per_tok; expand = Mamba heads x head dim / hidden;
 * full_attention_interval, mlp_layer_types, max_window_layers, attn_type_list: what layer_types,
 * first_k_dense_replace or use_sliding_window already say), and small per-layer vectors (biases of a few
 * thousand values, sinks, q/k norms) */
static const char *const benign_keys[] = {
    "_name_or_path", "activation_situ_beta", "activation_situ_linear_beta", "add_cross_attention",
    "add_full_attention_sink_bias", "add_swa_attention_sink_bias", "architectures", "attention_dropout", "attention_head_dim", "attention_output_gate", "attention_value_scale", "attn_type_list",
    "auto_map", "aux_loss_alpha", "bad_words_ids", "begin_suppress_tokens", "bos_token_id", "chunk_size_feed_forward",
    "compress_rope_theta", "cross_attention_hidden_size", "decoder_start_token_id", "diversity_penalty", "do_sample",
    "early_stopping", "encoder_no_repeat_ngram_size", "eos_token_id", "ep_size", "expand", "experts_per_token",
    "exponential_decay_length_penalty", "final_logit_softcapping", "finetuning_task", "forced_bos_token_id",
    "forced_eos_token_id", "full_attention_interval", "hc_eps", "hc_sinkhorn_iters", "hidden_act", "hidden_activation",
    "hidden_dropout", "id2label", "index_share_for_mtp_iteration", "indexer_rope_interleave", "initial_context_length",
    "initializer_range", "is_decoder", "is_encoder_decoder", "label2id", "latent_moe_use_norm", "layer_norm_epsilon",
    "layernorm_epsilon", "length_penalty", "mamba_hidden_act", "mamba_proj_bias", "max_length", "max_window_layers",
    "min_length", "mla_use_nope", "mlp_bias", "mlp_hidden_act", "mlp_layer_types", "moe_renormalize",
    "moe_router_activation_func", "moe_router_dtype", "moe_router_scaling_factor", "no_repeat_ngram_size", "norm_eps",
    "norm_topk_prob", "num_beam_groups", "num_beams", "num_expert_group", "num_logits_to_keep",
    "num_return_sequences", "output_attentions", "output_gate_type", "output_hidden_states", "output_router_logits",
    "output_scores", "pad_token_id", "partial_rotary_factor", "prefix", "pretraining_tp", "problem_type",
    "pruned_heads", "qk_head_dim", "qk_norm_type", "qkv_bias", "remove_invalid_values", "repetition_penalty",
    "rescale_prenorm_residual", "residual_in_fp32", "return_dict", "return_dict_in_generate", "rms_norm_eps",
    "rope_interleave", "rope_parameters", "rope_scaling", "rope_theta", "rotary_dim", "routed_scaling_factor",
    "router_aux_loss_coef", "router_jitter_noise", "scoring_func", "sep_token_id", "seq_aux", "share_expert_dim",
    "sliding_window_size", "suppress_tokens", "swa_num_attention_heads", "swa_rope_theta", "swa_v_head_dim",
    "swiglu_alpha", "swiglu_limit", "task_specific_params", "temperature", "tf_legacy_loss", "tie_encoder_decoder",
    "time_step_floor", "time_step_limit", "time_step_max", "time_step_min", "time_step_rank", "tokenizer_class",
    "top_k", "top_p", "topk_method", "torchscript", "transformers_version", "typical_p", "use_bfloat16", "use_bias",
    "use_bidirectional_attention", "use_cache", "use_conv_bias", "use_gemma_norm", "use_grouped_topk",
    "use_mamba_kernels", "use_moe_router_bias", "use_mrope", "use_qk_norm", "use_routing_bias",
    "vocab_size_per_layer_input",
};

static bool listed(const char *k, const char *const *list, size_t n) {
  for (size_t i = 0; i < n; i++)
    if (!strcmp(k, list[i])) return true;
  return false;
}

bool cfg_arch_key_known(const char *key) {
  return listed(key, read_keys, SIM_ARRAY_LEN(read_keys)) || listed(key, benign_keys, SIM_ARRAY_LEN(benign_keys));
}

/* A value that sets nothing: null, false, 0, "" or an empty array or object. */
static bool off(const cJSON *v) {
  return cJSON_IsNull(v) || cJSON_IsFalse(v) || (cJSON_IsNumber(v) && v->valuedouble == 0) ||
         (cJSON_IsString(v) && !v->valuestring[0]) || ((cJSON_IsArray(v) || cJSON_IsObject(v)) && !v->child);
}

size_t cfg_arch_unread(const cJSON *o, char *out, size_t cap) {
  size_t n = 0, len = 0, more = 0;
  if (cap) out[0] = 0;
  for (const cJSON *e = o ? o->child : NULL; e; e = e->next) {
    if (!e->string || off(e) || cfg_arch_key_known(e->string)) continue;
    n++;
    int w = snprintf(out + len, cap > len ? cap - len : 0, "%s%s", len ? ", " : "", e->string);
    if (w < 0 || len + (size_t)w + 16 >= cap) { /* keep room for the count of the rest */
      more++;
      if (cap > len) out[len] = 0;
      continue;
    }
    len += (size_t)w;
  }
  if (more && cap > len) snprintf(out + len, cap - len, " and %zu more", more);
  return n;
}
