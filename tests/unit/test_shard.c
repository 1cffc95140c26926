/* test_shard.c: per-GPU shapes under tensor parallelism (model/shard.h), by
 * hand for Llama-3.1-70B (H 8192, I 28672, 64 query / 8 KV heads of 128,
 * vocabulary 128,256) and a model with an unpadded vocabulary. */
#include <criterion/criterion.h>

#include "model/shard.h"
#include "testutil.h"

Test(shard, llama70b_shapes_by_tp) {
  model_cfg m = tu_model_llama70b();
  static const struct {
    uint32_t tp, qh, kvh, inter, vocab, qkv_n;
  } want[] = {
      {1, 64, 8, 28672, 128256, (64 + 16) * 128}, {2, 32, 4, 14336, 64128, (32 + 8) * 128},
      {4, 16, 2, 7168, 32064, (16 + 4) * 128},    {8, 8, 1, 3584, 16032, (8 + 2) * 128},
      {16, 4, 1, 1792, 8016, (4 + 2) * 128}, /* 8 KV heads over 16 GPUs: each holds a replica of one */
  };
  for (size_t i = 0; i < sizeof want / sizeof *want; i++) {
    model_shard s;
    shard_init(&s, &m, want[i].tp);
    cr_assert_eq(s.q_heads, want[i].qh, "tp %u", want[i].tp);
    cr_assert_eq(s.kv_heads, want[i].kvh, "tp %u", want[i].tp);
    cr_assert_eq(s.inter, want[i].inter);
    cr_assert_eq(s.vocab, want[i].vocab, "128256 is a multiple of 64: no padding");
    cr_assert_eq(s.n[SG_QKV], want[i].qkv_n);
    cr_assert_eq(s.k[SG_QKV], 8192);
    cr_assert_eq(s.n[SG_O], 8192);
    cr_assert_eq(s.k[SG_O], want[i].qh * 128);
    cr_assert_eq(s.n[SG_GATE_UP], 2 * want[i].inter);
    cr_assert_eq(s.k[SG_DOWN], want[i].inter);
    cr_assert_eq(s.n[SG_LM_HEAD], want[i].vocab);
    cr_assert_eq(shard_kv_elems(&s), 2 * want[i].kvh * 128);
  }
}

Test(shard, vocabulary_padded_before_sharding) {
  model_shard s;
  /* Llama-2: 32,000 = 500 x 64, no padding; a 32,001-token vocabulary pads to 32,064 */
  shard_from_dims(&s, 4096, 11008, 32, 32, 128, 32000, 2);
  cr_assert_eq(s.vocab, 16000);
  shard_from_dims(&s, 4096, 11008, 32, 32, 128, 32001, 2);
  cr_assert_eq(s.vocab, 16032);
  shard_from_dims(&s, 4096, 11008, 32, 32, 128, 32001, 1);
  cr_assert_eq(s.vocab, 32064);
  cr_assert_str_eq(shard_gemm_name(SG_GATE_UP), "gate_up");
}

/* vLLM get_pp_indices (model_executor/models/utils.py): layers / pp each, the
 * remainder one each to partitions[-2], [-3], ... (not the last stage, which
 * also holds the final norm and the LM head). */
Test(shard, pipeline_split_follows_vllm) {
  static const struct {
    uint32_t layers, pp, want[16];
  } cases[] = {
      {80, 1, {80}},
      {80, 2, {40, 40}},
      {80, 3, {27, 27, 26}},       /* 26 each, remainder 2: partitions[-2] and [-3] */
      {126, 4, {31, 32, 32, 31}},  /* remainder 2: the middle stages */
      {126, 8, {15, 16, 16, 16, 16, 16, 16, 15}}, /* remainder 6: partitions[-2] .. [-7] */
      {32, 5, {6, 6, 7, 7, 6}},    /* remainder 2: partitions[-2] and [-3] */
      {61, 4, {15, 15, 16, 15}},   /* remainder 1: partitions[-2] only */
  };
  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
    uint32_t sum = 0;
    for (uint32_t k = 0; k < cases[i].pp; k++) sum += shard_pp_layers(cases[i].layers, cases[i].pp, k);
    cr_assert_eq(sum, cases[i].layers, "case %zu: the stages hold every layer once", i);
  }
  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++)
    for (uint32_t k = 0; k < cases[i].pp; k++)
      cr_assert_eq(shard_pp_layers(cases[i].layers, cases[i].pp, k), cases[i].want[k], "%u layers, pp %u, stage %u",
                   cases[i].layers, cases[i].pp, k);
  cr_assert_eq(shard_pp_layers(80, 0, 0), 80, "pp 0 means 1");
}
