/* test_specdec.c: speculative decoding (docs/SPECDEC.md).
 *  - --speculative-config: parsing, errors naming the field, the acceptance table and the length-to-rates rule;
 *  - the scheduler: a verify schedules 1 + k tokens against the budget and KV; acceptance 0 emits one token per
 *    step, acceptance 1 emits k + 1; KV blocks are conserved through accept and reject on random runs (with
 *    preemptions); the batch-size cut-off (TensorRT-LLM's max_concurrency) switches drafts off;
 *  - EAGLE-3's reduced draft vocabulary (draft_vocab_size): parsed, refused for other methods, cheapens the draft's
 *    LM head only; the draft head's weights and its attention layer's KV in the memory plan;
 *  - whole runs: acceptance 0 gives the non-speculative run's tokens at a higher step cost, acceptance 1 k + 1
 *    tokens per step; the same seed gives the same draws. */
#include <criterion/criterion.h>
#include <math.h>
#include <string.h>

#include "config/specdec.h"
#include "core/rng.h"
#include "hw/cost.h"
#include "hw/memplan.h"
#include "model/shard.h"
#include "runner/runner.h"
#include "serve/sched.h"
#include "testutil.h"

/* ---- the flag --------------------------------------------------------------------------------------------- */

static deploy_cfg fresh(void) {
  deploy_cfg d;
  deploy_init(&d);
  return d;
}

Test(specdec, parses_vllm_json) {
  deploy_cfg d = fresh();
  char why[512];
  cr_assert(specdec_parse(&d, "{\"method\": \"eagle3\", \"num_speculative_tokens\": 4, \"model\": \"x/y\", "
                              "\"acceptance_rates\": [0.8, 0.6, 0.4, 0.2]}", why, sizeof why), "%s", why);
  cr_assert_eq(d.spec_method, SPEC_EAGLE3);
  cr_assert_eq(d.num_speculative_tokens, 4u);
  cr_assert_str_eq(d.spec_model, "x/y");
  cr_assert_eq(d.spec_n_rates, 4u);
  cr_assert_float_eq(d.spec_rates[3], 0.2, 1e-12);
  cr_assert(specdec_parse(&d, "{\"method\": \"deepseek_mtp\"}", why, sizeof why), "%s", why);
  cr_assert_eq(d.spec_method, SPEC_MTP);
  cr_assert_eq(d.num_speculative_tokens, 4u, "keys not given keep their values");
}

Test(specdec, bad_input_names_the_field) {
  static const struct {
    const char *json, *field;
  } bad[] = {
      {"{\"method\": \"medusa2\"}", "method"},
      {"{\"num_speculative_tokens\": 0}", "num_speculative_tokens"},
      {"{\"num_speculative_tokens\": 2.5}", "num_speculative_tokens"},
      {"{\"num_speculative_tokens\": 17}", "num_speculative_tokens"},
      {"{\"acceptance_rates\": [0.5, 0.7]}", "acceptance_rates[1]"},
      {"{\"acceptance_rates\": [1.5]}", "acceptance_rates[0]"},
      {"{\"acceptance_length\": 0.5}", "acceptance_length"},
      {"{\"acceptance_length\": 2, \"acceptance_rates\": [0.5]}", "acceptance_length"},
      {"{\"draft_tensor_parallel_size\": 0}", "draft_tensor_parallel_size"},
      {"{\"draft_vocab_size\": 0}", "draft_vocab_size"},
      {"{\"draft_vocab_size\": 3.5}", "draft_vocab_size"},
      {"{\"speculative_model\": \"x\"}", "speculative_model"},
      {"[1, 2]", "JSON object"},
      {"{\"method\": ", "JSON object"},
      {"{\"method\": \"eagle\"} x", "JSON object"},
  };
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    deploy_cfg d = fresh();
    char why[512] = "";
    cr_assert_not(specdec_parse(&d, bad[i].json, why, sizeof why), "%s accepted", bad[i].json);
    cr_assert(strstr(why, bad[i].field), "%s: '%s' does not name %s", bad[i].json, why, bad[i].field);
    cr_assert_eq(d.spec_method, SPEC_NONE, "a refused flag changes nothing");
  }
}

static int resolve(deploy_cfg *d, const char *model, const char *engine, sim_err *err) {
  model_cfg m;
  engine_cfg e;
  cr_assert_eq(cfg_model_load(&m, model, err), 0, "%s", err->msg);
  cr_assert_eq(cfg_engine_load(&e, engine, err), 0, "%s", err->msg);
  d->tp = 1;
  return specdec_resolve(d, &m, &e, err);
}

Test(specdec, table_and_given_acceptance) {
  sim_err err;
  char why[256];
  /* EAGLE-3 on Llama-3.1-8B, MT-bench: mean length 2.77 at K = 7 -> a constant conditional rate a with
     a + ... + a^7 = 1.77; k = 3 draws the first three */
  deploy_cfg d = fresh();
  cr_assert(specdec_parse(&d, "{\"method\": \"eagle3\", \"num_speculative_tokens\": 7}", why, sizeof why));
  cr_assert_eq(resolve(&d, "llama-3.1-8b", "vllm", &err), 0, "%s", err.msg);
  cr_assert_float_eq(specdec_expected_tokens(d.spec_rates, 7), 2.77, 1e-9);
  cr_assert(strstr(d.spec_source, "eagle3-llama3.1-8b-mt_bench"), "%s", d.spec_source);
  double a = d.spec_rates[0];
  for (int i = 1; i < 7; i++) cr_assert_float_eq(d.spec_rates[i], d.spec_rates[i - 1] * a, 1e-12);
  /* another dataset of the same entry family */
  d = fresh();
  cr_assert(specdec_parse(&d, "{\"method\": \"eagle3\", \"num_speculative_tokens\": 7, \"dataset\": \"humaneval\"}",
                          why, sizeof why));
  cr_assert_eq(resolve(&d, "llama-3.1-8b", "vllm", &err), 0, "%s", err.msg);
  cr_assert_float_eq(specdec_expected_tokens(d.spec_rates, 7), 3.49, 1e-9);
  /* an unmeasured dataset names what there is */
  d = fresh();
  cr_assert(specdec_parse(&d, "{\"method\": \"eagle3\", \"num_speculative_tokens\": 3, \"dataset\": \"nope\"}", why,
                          sizeof why));
  cr_assert_neq(resolve(&d, "llama-3.1-8b", "vllm", &err), 0);
  cr_assert(strstr(err.msg, "dataset") && strstr(err.msg, "humaneval"), "%s", err.msg);
  /* a given mean length at k */
  d = fresh();
  cr_assert(specdec_parse(&d, "{\"method\": \"ngram\", \"num_speculative_tokens\": 4, \"acceptance_length\": 2.5}",
                          why, sizeof why));
  cr_assert_eq(resolve(&d, "llama-3.1-8b", "vllm", &err), 0, "%s", err.msg);
  cr_assert_float_eq(specdec_expected_tokens(d.spec_rates, 4), 2.5, 1e-9);
  /* fewer rates than drafts */
  d = fresh();
  cr_assert(specdec_parse(&d, "{\"method\": \"eagle\", \"num_speculative_tokens\": 3, \"acceptance_rates\": [0.5]}",
                          why, sizeof why));
  cr_assert_neq(resolve(&d, "llama-3.1-8b", "vllm", &err), 0);
  cr_assert(strstr(err.msg, "acceptance_rates"), "%s", err.msg);
}

Test(specdec, engine_and_model_checks) {
  sim_err err;
  char why[256];
  /* vLLM V1 has no batch-size cut-off; TensorRT-LLM's max_concurrency is one */
  deploy_cfg d = fresh();
  cr_assert(specdec_parse(&d, "{\"method\": \"eagle3\", \"num_speculative_tokens\": 2, \"acceptance_length\": 2, "
                              "\"disable_by_batch_size\": 8}", why, sizeof why));
  deploy_cfg t = d;
  cr_assert_neq(resolve(&d, "llama-3.1-8b", "vllm", &err), 0);
  cr_assert(strstr(err.msg, "disable_by_batch_size"), "%s", err.msg);
  cr_assert_eq(resolve(&t, "llama-3.1-8b", "trtllm", &err), 0, "%s", err.msg);
  /* MTP needs the model's MTP layers; SGLang's scheduler is not modelled with drafts yet */
  d = fresh();
  cr_assert(specdec_parse(&d, "{\"method\": \"mtp\", \"num_speculative_tokens\": 1}", why, sizeof why));
  cr_assert_neq(resolve(&d, "llama-3.1-8b", "vllm", &err), 0);
  cr_assert(strstr(err.msg, "num_nextn_predict_layers"), "%s", err.msg);
  d = fresh();
  cr_assert(specdec_parse(&d, "{\"method\": \"eagle\", \"num_speculative_tokens\": 1, \"acceptance_length\": 1.5}",
                          why, sizeof why));
  cr_assert_neq(resolve(&d, "llama-3.1-8b", "sglang", &err), 0);
  cr_assert(strstr(err.msg, "SGLang"), "%s", err.msg);
  /* k 0 with a method is off (a sweep's baseline) */
  d = fresh();
  d.spec_method = SPEC_EAGLE3;
  cr_assert_eq(resolve(&d, "llama-3.1-8b", "vllm", &err), 0, "%s", err.msg);
  cr_assert_eq(d.spec_source[0], 0);
}

/* draft_vocab_size: only an EAGLE-3 head has its own vocabulary, at most the target's; it round-trips through
   the flag's JSON text (the run's report) */
Test(specdec, draft_vocab_size) {
  sim_err err;
  char why[256], text[512];
  deploy_cfg d = fresh();
  cr_assert(specdec_parse(&d, "{\"method\": \"eagle3\", \"num_speculative_tokens\": 3, \"acceptance_length\": 2.5, "
                              "\"draft_vocab_size\": 32000}", why, sizeof why), "%s", why);
  cr_assert_eq(d.spec_draft_vocab, 32000u);
  cr_assert_eq(resolve(&d, "llama-3.1-8b", "vllm", &err), 0, "%s", err.msg);
  specdec_json_text(&d, text, sizeof text);
  cr_assert(strstr(text, "\"draft_vocab_size\":32000"), "%s", text);
  d = fresh();
  cr_assert(specdec_parse(&d, "{\"method\": \"eagle\", \"num_speculative_tokens\": 3, \"acceptance_length\": 2.5, "
                              "\"draft_vocab_size\": 32000}", why, sizeof why), "%s", why);
  cr_assert_neq(resolve(&d, "llama-3.1-8b", "vllm", &err), 0);
  cr_assert(strstr(err.msg, "draft_vocab_size") && strstr(err.msg, "EAGLE-3"), "%s", err.msg);
  d = fresh();
  cr_assert(specdec_parse(&d, "{\"method\": \"eagle3\", \"num_speculative_tokens\": 3, \"acceptance_length\": 2.5, "
                              "\"draft_vocab_size\": 200000}", why, sizeof why), "%s", why);
  cr_assert_neq(resolve(&d, "llama-3.1-8b", "vllm", &err), 0);
  cr_assert(strstr(err.msg, "draft_vocab_size") && strstr(err.msg, "128256"), "%s", err.msg);
}

/* Llama-3.1-70B at TP4 verifying 3 drafts for 8 sequences, with an EAGLE-3 head of draft_vocab_size V: the draft's
   time falls with V and nothing else of the step moves (the target's LM head still covers every verified
   position over its whole vocabulary). */
Test(specdec_cost, reduced_draft_vocab_cheapens_the_draft_only) {
  model_cfg m = tu_model_llama70b();
  gpu_cfg g = tu_gpu_h200();
  engine_cfg e = tu_engine_vllm();
  static const uint32_t vocab[] = {0, 64000, 32000}; /* 0: the target's 128256 */
  step_cost sc[3];
  for (int i = 0; i < 3; i++) {
    deploy_cfg d = tu_deploy(4, DT_BF16);
    d.spec_method = SPEC_EAGLE3, d.num_speculative_tokens = 3, d.spec_draft_vocab = vocab[i];
    cost_model *c;
    sim_err err;
    cr_assert_eq(cost_new(&c, &m, &g, &e, &d, &err), SIM_OK, "%s", err.msg);
    cost_verify_step_ns(c, 8, 2048, 3, &sc[i]);
    cost_free(c);
  }
  for (int i = 1; i < 3; i++) {
    cr_assert_lt(sc[i].op_ns[OP_SPEC_DRAFT], sc[i - 1].op_ns[OP_SPEC_DRAFT], "draft vocabulary %u", vocab[i]);
    for (int op = 0; op < OP_COUNT; op++)
      if (op != OP_SPEC_DRAFT && op != OP_CPU_OVERHEAD)
        cr_assert_float_eq(sc[i].op_ns[op], sc[0].op_ns[op], 1e-9, "op %s moved", cost_op_name((cost_op)op));
  }
}

/* The memory plan holds the draft head (memplan.h): for an EAGLE-3 head on Llama-3.1-70B at TP4, one decoder
   layer of the target's shard with a 2 x hidden QKV input, the replicated 3H -> H fc, two norms and its own LM
   head at draft_vocab_size; its one attention layer adds a layer of KV a token. ngram, k 0 and EAGLE-1 (no own
   head, a 2H -> H fc, the plain QKV) follow from the same count. */
Test(specdec_mem, draft_head_weights_and_kv) {
  model_cfg m = tu_model_llama70b();
  gpu_cfg g = tu_gpu_h200();
  engine_cfg e = tu_engine_vllm();
  sim_err err;
  deploy_cfg off = tu_deploy(4, DT_BF16);
  off.max_model_len = 8192;
  mem_plan p0, p;
  cr_assert_eq(memplan_compute(&p0, &m, &g, &e, &off, &err), SIM_OK, "%s", err.msg);
  cr_assert_float_eq(p0.draft_weights_bytes, 0.0, 0);
  double H = 8192, qkv = (64.0 / 4 + 2.0 * 8 / 4) * 128 * H, o = H * (64.0 / 4 * 128), mlp = 3.0 * H * (28672.0 / 4);
  struct {
    spec_method sm;
    uint32_t k, dvocab;
    double params; /* per GPU, bf16 */
  } cases[] = {
      {SPEC_EAGLE3, 3, 32000, 2 * qkv + o + mlp + 2 * H + 3 * H * H + 2 * H + 32000.0 / 4 * H},
      {SPEC_EAGLE, 2, 0, qkv + o + mlp + 2 * H + 2 * H * H + 2 * H},
      {SPEC_NGRAM, 3, 0, 0},
      {SPEC_EAGLE3, 0, 32000, 0},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    deploy_cfg d = off;
    d.spec_method = cases[i].sm, d.num_speculative_tokens = cases[i].k, d.spec_draft_vocab = cases[i].dvocab;
    cr_assert_eq(memplan_compute(&p, &m, &g, &e, &d, &err), SIM_OK, "%s", err.msg);
    double want = cases[i].params * 2.0;
    cr_assert_float_eq(p.draft_weights_bytes, want, 1.0, "case %zu: %.0f bytes, expected %.0f", i,
                       p.draft_weights_bytes, want);
    cr_assert_float_eq(p.weights_bytes, p0.weights_bytes + want, 1.0, "case %zu", i);
    uint32_t layers = want > 0 ? 81 : 80;
    cr_assert_float_eq(p.kv_bytes_per_token, p0.kv_bytes_per_token / 80 * layers, 1e-6, "case %zu", i);
    cr_assert_eq(p.draft_kv_layers, want > 0 ? 1u : 0u);
    if (want > 0) cr_assert_lt(p.kv_blocks, p0.kv_blocks, "case %zu: the head's weights and KV cost blocks", i);
  }
}

/* method draft_model: the draft's config is loaded by name and its shape kept; it must share the target's
   vocabulary, be named, and run at the target's tensor parallelism. */
Test(specdec, draft_model_resolves_the_draft) {
  sim_err err;
  char why[256];
  deploy_cfg d = fresh();
  cr_assert(specdec_parse(&d, "{\"method\": \"draft_model\", \"model\": \"llama-3.1-8b\", \"num_speculative_tokens\": 3, "
                              "\"acceptance_length\": 2.5}", why, sizeof why), "%s", why);
  cr_assert_eq(resolve(&d, "llama-3.1-70b", "vllm", &err), 0, "%s", err.msg);
  cr_assert_eq(d.spec_draft.layers, 32u);
  cr_assert_eq(d.spec_draft.hidden, 4096u);
  cr_assert_eq(d.spec_draft.kv_heads, 8u);
  cr_assert_eq(d.spec_draft.inter, 14336u);
  cr_assert_eq(d.spec_draft.vocab, 128256u);
  cr_assert(d.spec_draft.params > 8.0e9 && d.spec_draft.params < 8.1e9, "%g", d.spec_draft.params); /* 8.03 B */
  cr_assert_str_eq(d.spec_draft.name, "llama-3.1-8b");
  struct {
    const char *json, *target, *msg;
  } bad[] = {
      {"{\"method\": \"draft_model\", \"num_speculative_tokens\": 3, \"acceptance_length\": 2}", "llama-3.1-70b",
       "model: required"},
      {"{\"method\": \"draft_model\", \"model\": \"llama-2-7b\", \"num_speculative_tokens\": 3, \"acceptance_length\": 2}",
       "llama-3.1-70b", "vocabulary"},
      {"{\"method\": \"draft_model\", \"model\": \"llama-3.1-8b\", \"num_speculative_tokens\": 3, \"acceptance_length\": 2, "
       "\"draft_tensor_parallel_size\": 2}", "llama-3.1-70b", "draft_tensor_parallel_size"},
      {"{\"method\": \"draft_model\", \"model\": \"no-such-model\", \"num_speculative_tokens\": 3, \"acceptance_length\": 2}",
       "llama-3.1-70b", "no-such-model"},
  };
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    d = fresh();
    cr_assert(specdec_parse(&d, bad[i].json, why, sizeof why), "%s", why);
    cr_assert_neq(resolve(&d, bad[i].target, "vllm", &err), 0, "case %zu accepted", i);
    cr_assert(strstr(err.msg, bad[i].msg), "case %zu: %s", i, err.msg);
  }
}

/* A target with latent (MLA) attention: the draft's attention is scaled from the target's decode call, which MLA's
   is not; refused naming it (DeepSeek-V3 from ../shared when present). */
Test(specdec, draft_model_refuses_a_latent_attention_target) {
  const char *f = tu_shared("models/deepseek-ai--DeepSeek-V3.json");
  if (!f) cr_skip_test("../shared/models/deepseek-ai--DeepSeek-V3.json absent");
  sim_err err;
  char why[256];
  deploy_cfg d = fresh();
  cr_assert(specdec_parse(&d, "{\"method\": \"draft_model\", \"model\": \"llama-3.1-8b\", \"num_speculative_tokens\": 2, "
                              "\"acceptance_length\": 2}", why, sizeof why), "%s", why);
  cr_assert_neq(resolve(&d, f, "vllm", &err), 0);
  cr_assert(strstr(err.msg, "latent (MLA)"), "%s", err.msg);
}

/* A draft model in the memory plan: Llama-3.1-8B drafting for Llama-3.1-70B at TP4 holds its parameters over the
   four ranks in bf16 (8.03 B x 2 / 4) and its 32 layers' KV a token: 2 x 32 x (8 KV heads / 4) x 128 x 2 bytes =
   32,768 bytes more a token than the target's 80 layers. */
Test(specdec_mem, draft_model_weights_and_kv) {
  model_cfg m = tu_model_llama70b(), dm;
  gpu_cfg g = tu_gpu_h200();
  engine_cfg e = tu_engine_vllm();
  sim_err err;
  cr_assert_eq(cfg_model_load(&dm, "llama-3.1-8b", &err), 0, "%s", err.msg);
  deploy_cfg off = tu_deploy(4, DT_BF16), d;
  off.max_model_len = 8192;
  d = off;
  char why[256];
  cr_assert(specdec_parse(&d, "{\"method\": \"draft_model\", \"model\": \"llama-3.1-8b\", \"num_speculative_tokens\": 3, "
                              "\"acceptance_length\": 2.5}", why, sizeof why), "%s", why);
  cr_assert_eq(specdec_resolve(&d, &m, &e, &err), 0, "%s", err.msg);
  mem_plan p0, p;
  cr_assert_eq(memplan_compute(&p0, &m, &g, &e, &off, &err), SIM_OK, "%s", err.msg);
  cr_assert_eq(memplan_compute(&p, &m, &g, &e, &d, &err), SIM_OK, "%s", err.msg);
  double want = dm.params_total / 4 * 2;
  cr_assert_float_eq(p.draft_weights_bytes, want, 1.0);
  cr_assert_float_eq(p.weights_bytes, p0.weights_bytes + want, 1.0);
  cr_assert_float_eq(p.kv_bytes_per_token, p0.kv_bytes_per_token + 32768.0, 1e-6);
  cr_assert_eq(p.draft_kv_layers, 32u);
  cr_assert_lt(p.kv_blocks, p0.kv_blocks);
}

/* The draft model's time in a verify step (Llama-3.1-70B at TP4, 8 sequences, 3 drafts, Llama-3.1-8B drafting):
   three forwards of the 8B at the target's TP on the same tables. Each later pass is a decode of the 8 sequences,
   which the 8B's own cost model prices as a decode step of 8; the draft pass omits that step's sampler and CPU
   overhead and prices attention by the KV ratio, so the three passes land near 3 of its GPU decode steps (within
   35%: the first pass runs over the 32 verified tokens, not 8), and the target's own ops do not move. */
Test(specdec_cost, draft_model_passes_by_hand) {
  model_cfg m = tu_model_llama70b(), dm;
  gpu_cfg g = tu_gpu_h200();
  engine_cfg e = tu_engine_vllm();
  sim_err err;
  char why[256];
  cr_assert_eq(cfg_model_load(&dm, "llama-3.1-8b", &err), 0, "%s", err.msg);
  deploy_cfg d = tu_deploy(4, DT_BF16), plain = d, dd = d;
  cr_assert(specdec_parse(&d, "{\"method\": \"draft_model\", \"model\": \"llama-3.1-8b\", \"num_speculative_tokens\": 3, "
                              "\"acceptance_length\": 2.5}", why, sizeof why), "%s", why);
  cr_assert_eq(specdec_resolve(&d, &m, &e, &err), 0, "%s", err.msg);
  plain.spec_method = SPEC_EAGLE, plain.num_speculative_tokens = 3; /* the same verify, another draft */
  cost_model *c, *c8, *ce;
  cr_assert_eq(cost_new(&c, &m, &g, &e, &d, &err), SIM_OK, "%s", err.msg);
  cr_assert_eq(cost_new(&ce, &m, &g, &e, &plain, &err), SIM_OK, "%s", err.msg);
  cr_assert_eq(cost_new(&c8, &dm, &g, &e, &dd, &err), SIM_OK, "%s", err.msg);
  step_cost v, ve, d8;
  cost_verify_step_ns(c, 8, 2048, 3, &v);
  cost_verify_step_ns(ce, 8, 2048, 3, &ve);
  cost_decode_step_ns(c8, 8, 2048, &d8);
  double draft = v.op_ns[OP_SPEC_DRAFT], one = d8.gpu_ns;
  cr_assert(draft > 2.0 * one && draft < 3.0 * 1.35 * one, "draft %.0f ns against 3 x %.0f", draft, one);
  cr_assert_gt(draft, ve.op_ns[OP_SPEC_DRAFT], "an 8B draft costs more than a one-layer head");
  for (int op = 0; op < OP_COUNT; op++)
    if (op != OP_SPEC_DRAFT && op != OP_CPU_OVERHEAD)
      cr_assert_float_eq(v.op_ns[op], ve.op_ns[op], 1e-9, "op %s moved", cost_op_name((cost_op)op));
  cost_free(c), cost_free(ce), cost_free(c8);
}

Test(specdec, draws_follow_the_rates) {
  double u[3] = {0.8, 0.5, 0.2}, n[4] = {0};
  const int N = 200000;
  for (int i = 0; i < N; i++) n[specdec_accepted(u, 3, specdec_uniform(7, (uint64_t)i, 100))]++;
  /* P(a >= i) = u_i: P(0) = 0.2, P(1) = 0.3, P(2) = 0.3, P(3) = 0.2 */
  double want[4] = {0.2, 0.3, 0.3, 0.2};
  for (int a = 0; a < 4; a++) cr_assert(fabs(n[a] / N - want[a]) < 0.005, "P(%d) = %g", a, n[a] / N);
  cr_assert_eq(specdec_uniform(7, 3, 100), specdec_uniform(7, 3, 100));
  cr_assert_neq(specdec_uniform(7, 3, 100), specdec_uniform(8, 3, 100));
  cr_assert_neq(specdec_uniform(7, 3, 100), specdec_uniform(7, 3, 101));
}

/* ---- the scheduler ------------------------------------------------------------------------------------------ */

typedef struct harness {
  sched s;
  request reqs[96];
  uint32_t n;
  metrics_rec m;
  sim_ns now;
  batch_desc bd;
  uint32_t done[96];
} harness;

static void h_init(harness *h, uint32_t seqs, uint32_t budget, uint32_t blocks, bool async, uint32_t k,
                   const double *rates, uint32_t lookahead, uint32_t cutoff) {
  memset(h, 0, sizeof *h);
  sched_cfg c = {seqs, budget, 0, true, async, ADMIT_ON_DEMAND, false, 1, 0, 0, 0, false, false, false, 0, 0, 0, 0, {0}};
  c.spec_k = k;
  c.spec_lookahead = lookahead;
  c.spec_disable_bs = cutoff;
  c.spec_seed = 42;
  for (uint32_t i = 0; i < k; i++) c.spec_rates[i] = rates[i];
  sched_init(&h->s, &c, blocks, 16, true);
  metrics_init(&h->m, 0);
}

static uint32_t h_add(harness *h, uint32_t prompt, uint32_t output) {
  request *r = &h->reqs[h->n];
  memset(r, 0, sizeof *r);
  r->id = h->n;
  r->prompt_tokens = prompt;
  r->output_tokens = output;
  r->num_tokens = prompt;
  r->first_sched_ns = SIM_NS_INF;
  kv_seq_init(&r->kv);
  sched_add(&h->s, h->reqs, h->n);
  return h->n++;
}

static uint32_t h_step(harness *h) {
  while (!sched_queue_full(&h->s) && sched_schedule(&h->s, h->reqs, h->now)) {
  }
  cr_assert(h->s.q_len > 0, "nothing scheduled");
  h->bd = sched_queued(&h->s, 0)->bd;
  h->now += SIM_NS_PER_MS;
  return sched_complete(&h->s, h->reqs, h->now, &h->m, h->done);
}

/* Every block is free or held by exactly one request's table, the tables are consistent with the pool. */
static void h_check_kv(harness *h) {
  const kv_seq *seqs[96];
  uint64_t held = 0;
  for (uint32_t i = 0; i < h->n; i++) seqs[i] = &h->reqs[i].kv, held += h->reqs[i].kv.n_blocks;
  sim_err err;
  cr_assert_eq(kv_check(h->s.kv, seqs, h->n, &err), 0, "%s", err.msg);
  cr_assert_leq(held + kv_num_free(h->s.kv), kv_num_blocks(h->s.kv));
}

static void h_free(harness *h) {
  for (uint32_t i = 0; i < h->n; i++) {
    kv_seq_free(h->s.kv, &h->reqs[i].kv);
    kv_seq_deinit(&h->reqs[i].kv);
  }
  sched_deinit(&h->s);
  metrics_deinit(&h->m);
}

static bool all_done(const harness *h) {
  for (uint32_t i = 0; i < h->n; i++)
    if (h->reqs[i].state != RQ_FINISHED) return false;
  return true;
}

Test(specdec_sched, acceptance_one_emits_k_plus_one) {
  harness h;
  double one[3] = {1, 1, 1};
  h_init(&h, 8, 64, 100, false, 3, one, 3, 0);
  uint32_t a = h_add(&h, 20, 9);
  h_step(&h); /* prefill: the first token */
  cr_assert_eq(h.reqs[a].generated, 1u);
  cr_assert_eq(h.bd.spec_seqs, 0u);
  h_step(&h); /* 1 + 3 tokens verified, all accepted: 4 tokens */
  cr_assert_eq(h.bd.num_tokens, 4u);
  cr_assert_eq(h.bd.spec_seqs, 1u);
  cr_assert_eq(h.bd.spec_tokens, 3u);
  cr_assert_eq(h.reqs[a].generated, 5u);
  cr_assert_eq(h.reqs[a].num_computed, 24u, "the last sampled token's KV is the next step's");
  /* its KV holds the lookahead too: 20 + 4 + 3 = 27 tokens, 2 blocks */
  cr_assert_eq(h.reqs[a].kv.n_blocks, 2u);
  h_step(&h); /* 4 left: all 4 */
  cr_assert_eq(h.reqs[a].generated, 9u);
  cr_assert_eq(h.reqs[a].state, RQ_FINISHED);
  cr_assert_eq(h.s.spec_accepted, h.s.spec_draft_tokens);
  cr_assert_eq(h.s.spec_drafts, 2u);
  h_free(&h);
}

Test(specdec_sched, acceptance_zero_is_one_token_per_step) {
  harness h, base;
  double zero[4] = {0, 0, 0, 0};
  h_init(&h, 8, 64, 100, true, 4, zero, 4, 0);
  h_init(&base, 8, 64, 100, true, 0, zero, 0, 0);
  for (uint32_t i = 0; i < 3; i++) h_add(&h, 10 + 7 * i, 6 + i), h_add(&base, 10 + 7 * i, 6 + i);
  uint32_t steps = 0;
  while (!all_done(&base)) {
    h_step(&base);
    h_step(&h);
    steps++;
    cr_assert_eq(h.bd.num_tokens, base.bd.num_tokens + h.bd.spec_tokens, "step %u", steps);
    cr_assert_eq(h.bd.num_sample, base.bd.num_sample);
    for (uint32_t i = 0; i < 3; i++) cr_assert_eq(h.reqs[i].generated, base.reqs[i].generated, "step %u", steps);
  }
  cr_assert(all_done(&h));
  cr_assert_gt(h.s.spec_draft_tokens, 0u);
  cr_assert_eq(h.s.spec_accepted, 0u);
  h_free(&h);
  h_free(&base);
}

Test(specdec_sched, drafts_take_the_token_budget) {
  harness h;
  double r[5] = {0.9, 0.8, 0.7, 0.6, 0.5};
  h_init(&h, 8, 7, 100, false, 5, r, 5, 0);
  h_add(&h, 3, 50);
  h_add(&h, 3, 50);
  h_step(&h); /* both prompts: 6 tokens */
  h_step(&h); /* the first verifies 1 + 5 = 6, the second gets the one token left: a plain decode */
  cr_assert_eq(h.bd.num_tokens, 7u);
  cr_assert_eq(h.bd.spec_seqs, 1u);
  cr_assert_eq(h.bd.spec_tokens, 5u);
  h_free(&h);
}

Test(specdec_sched, batch_size_cutoff_switches_drafts_off) {
  harness h;
  double r[2] = {0.5, 0.25};
  h_init(&h, 8, 256, 200, false, 2, r, 2, 2); /* TensorRT-LLM max_concurrency 2 */
  h_add(&h, 8, 4);
  h_add(&h, 8, 4);
  h_add(&h, 8, 40);
  h_step(&h); /* three prompts */
  h_step(&h);
  cr_assert_eq(h.bd.num_decode, 3u);
  cr_assert_eq(h.bd.spec_seqs, 0u, "3 running > 2: no drafts");
  while (h.s.n_running > 2) h_step(&h);
  h_step(&h);
  cr_assert_eq(h.bd.spec_seqs, h.bd.num_decode, "2 or fewer running: every decode drafts");
  cr_assert_gt(h.bd.spec_seqs, 0u);
  h_free(&h);
}

/* Random runs with a small pool (preemptions), async scheduling or not, random acceptance: after every step the
 * pool is consistent (each block free or held once), every request ends with exactly its output, and at the end
 * every block is free again. */
Test(specdec_sched, kv_blocks_conserved_on_random_runs) {
  rng g;
  rng_seed(&g, 2026);
  uint64_t preempted = 0, drafts = 0;
  for (int round = 0; round < 40; round++) {
    harness h;
    uint32_t k = 1 + (uint32_t)rng_below(&g, 6);
    double rates[SPEC_MAX_K], p = 1;
    for (uint32_t i = 0; i < k; i++) rates[i] = p *= rng_uniform(&g);
    uint32_t blocks = 24 + (uint32_t)rng_below(&g, 40);
    h_init(&h, 1 + (uint32_t)rng_below(&g, 8), 16 + (uint32_t)rng_below(&g, 64), blocks, round % 2, k, rates,
           round % 3 ? k : 0, round % 5 == 4 ? 2 : 0);
    uint32_t n = 4 + (uint32_t)rng_below(&g, 20);
    for (uint32_t i = 0; i < n; i++) h_add(&h, 1 + (uint32_t)rng_below(&g, 120), 1 + (uint32_t)rng_below(&g, 90));
    for (int steps = 0; !all_done(&h); steps++) {
      cr_assert_lt(steps, 100000, "round %d does not finish", round);
      h_step(&h);
      h_check_kv(&h);
      for (uint32_t i = 0; i < n; i++) {
        const request *r = &h.reqs[i];
        cr_assert_leq(r->generated + r->pending, r->output_tokens);
        cr_assert_leq(r->num_computed, r->num_tokens + r->pending);
      }
    }
    for (uint32_t i = 0; i < n; i++) cr_assert_eq(h.reqs[i].generated, h.reqs[i].output_tokens);
    cr_assert_eq(kv_num_free(h.s.kv), kv_num_blocks(h.s.kv), "round %d: blocks leaked", round);
    preempted += h.s.preemptions;
    drafts += h.s.spec_drafts;
    h_free(&h);
  }
  cr_assert_gt(preempted, 0u, "the pools were small enough to preempt");
  cr_assert_gt(drafts, 0u);
}

/* ---- whole runs --------------------------------------------------------------------------------------------- */

static void small_run(scenario *sc) {
  scenario_default(sc);
  sc->trace_path[0] = 0;
  gen_params_default(&sc->gen);
  sc->gen.num_prompts = 60;
  sc->gen.request_rate = 2;
  snprintf(sc->model, sizeof sc->model, "llama-3.1-8b");
  snprintf(sc->gpu, sizeof sc->gpu, "h100");
  sc->deploy.tp = 1;
}

static run_ctx *spec_run(double rate, uint32_t k) {
  scenario sc;
  small_run(&sc);
  if (k) {
    sc.deploy.spec_method = SPEC_EAGLE3;
    sc.deploy.num_speculative_tokens = k;
    sc.deploy.spec_n_rates = k;
    for (uint32_t i = 0; i < k; i++) sc.deploy.spec_rates[i] = rate;
  }
  return tu_run_scenario(&sc);
}

Test(specdec_run, acceptance_zero_same_tokens_higher_cost) {
  run_ctx *off = spec_run(0, 0), *on = spec_run(0, 3);
  const run_result *a = &off->res, *b = &on->res;
  cr_assert_eq(a->n_reqs, b->n_reqs);
  for (size_t i = 0; i < a->n_reqs; i++) cr_assert_eq(a->reqs[i].generated, b->reqs[i].generated);
  cr_assert_eq(b->spec_accepted, 0u);
  cr_assert_gt(b->spec_drafts, 0u);
  /* every decode computes its token plus the rejected drafts: the same decode tokens otherwise, one per token */
  cr_assert_eq(b->m.decode_tokens, a->m.decode_tokens + b->spec_draft_tokens);
  cr_assert_eq(b->m.prefill_tokens, a->m.prefill_tokens);
  cr_assert_gt(b->m.busy_ns, a->m.busy_ns, "verify and draft cost more");
  cr_assert_gt(b->sum.tpot_ms.mean, a->sum.tpot_ms.mean);
  cr_assert_gt(b->m.op_ns[OP_SPEC_DRAFT], 0);
  tu_run_done(off);
  tu_run_done(on);
}

Test(specdec_run, acceptance_one_k_plus_one_tokens_per_step) {
  run_ctx *off = spec_run(0, 0), *on = spec_run(1, 3);
  const run_result *a = &off->res, *b = &on->res;
  for (size_t i = 0; i < a->n_reqs; i++) cr_assert_eq(a->reqs[i].generated, b->reqs[i].generated);
  cr_assert_eq(b->spec_accepted, b->spec_draft_tokens);
  cr_assert_eq(b->spec_accepted, 3 * b->spec_drafts);
  cr_assert_lt(b->sum.tpot_ms.mean, a->sum.tpot_ms.mean);
  tu_run_done(off);
  tu_run_done(on);
}

Test(specdec_run, same_seed_same_run) {
  run_ctx *a = spec_run(0.6, 4), *b = spec_run(0.6, 4);
  cr_assert_eq(a->res.spec_accepted, b->res.spec_accepted);
  for (size_t i = 0; i < a->res.n_reqs; i++) cr_assert_eq(a->res.reqs[i].finish_ns, b->res.reqs[i].finish_ns);
  cr_assert_gt(a->res.spec_accepted, 0u);
  cr_assert_lt(a->res.spec_accepted, a->res.spec_draft_tokens);
  tu_run_done(a);
  tu_run_done(b);
}
