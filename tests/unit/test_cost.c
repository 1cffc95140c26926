/* test_cost.c: the cost model against hand-computed roofline numbers and
 * physical properties (monotonicity, conservation of time, TP and dtype
 * effects). Configs are built in code (Llama-3.1-70B, H200, H100, a
 * vLLM-like engine: testutil.h) so the test does not depend on the config
 * loaders. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hw/cost.h"
#include "hw/cost_attn.h"
#include "hw/cost_inplace.h" /* the model on caller storage, its state: white-box */
#include "testutil.h"

static model_cfg llama1b(void) { /* Llama-3.2-1B */
  model_cfg m = tu_model_llama70b();
  strcpy(m.name, "llama-3.2-1b");
  m.hidden = 2048, m.intermediate = 8192, m.layers = 16, m.q_heads = 32, m.kv_heads = 8, m.head_dim = 64;
  m.tied_embeddings = true;
  return m;
}

static deploy_cfg dep(uint32_t tp, sim_dtype w) {
  deploy_cfg d = tu_deploy(tp, w);
  d.enable_prefix_caching = 1, d.enable_chunked_prefill = 1;
  return d;
}

/* One test's world: configs live here so the cost model's borrowed pointers stay valid. */
typedef struct world {
  model_cfg m;
  gpu_cfg g;
  engine_cfg e;
  deploy_cfg d;
  cost_model c;
} world;

static void world_init(world *w, model_cfg m, gpu_cfg g, engine_cfg e, deploy_cfg d) {
  w->m = m, w->g = g, w->e = e, w->d = d;
  sim_err err = {0};
  int rc = cost_init(&w->c, &w->m, &w->g, &w->e, &w->d, &err);
  cr_assert_eq(rc, SIM_OK, "cost_init: %s", err.msg);
}

static double gemm_sum(const step_cost *s) {
  return s->op_ns[OP_GEMM_QKV] + s->op_ns[OP_GEMM_O] + s->op_ns[OP_GEMM_GATEUP] + s->op_ns[OP_GEMM_DOWN];
}

static void assert_sums(const step_cost *s) {
  double a = 0, b = 0;
  for (int i = 0; i < OP_COUNT; i++) {
    cr_assert_geq(s->op_ns[i], 0, "op %s negative", cost_op_name((cost_op)i));
    a += s->op_ns[i];
  }
  for (int i = 0; i < BOUND_COUNT; i++) {
    cr_assert_geq(s->bound_ns[i], 0);
    b += s->bound_ns[i];
  }
  cr_assert(s->total_ns > 0);
  cr_assert(fabs(a - s->total_ns) <= 1e-9 * s->total_ns, "op_ns sum %.6f != total %.6f", a, s->total_ns);
  cr_assert(fabs(b - s->total_ns) <= 1e-9 * s->total_ns, "bound_ns sum %.6f != total %.6f", b, s->total_ns);
}

Test(cost, graph_size_matches_vllm_capture_list) {
  /* vLLM >= 0.11, max_num_seqs 1024: [1, 2, 4] + range(8, 256, 8) + range(256, 513, 16) */
  world w;
  world_init(&w, tu_model_llama70b(), tu_gpu_h200(), tu_engine_vllm(), dep(1, DT_BF16));
  const uint32_t in[] = {0, 1, 2, 3, 4, 5, 8, 9, 16, 17, 248, 249, 255, 257, 500, 511, 512, 513, 1000};
  const uint32_t out[] = {0, 1, 2, 4, 4, 8, 8, 16, 16, 24, 248, 256, 256, 272, 512, 512, 512, 513, 1000};
  for (size_t i = 0; i < SIM_ARRAY_LEN(in); i++)
    cr_assert_eq(cost_graph_size(&w.c, in[i]), out[i], "size(%u) = %u, want %u", in[i], cost_graph_size(&w.c, in[i]),
                 out[i]);
  for (uint32_t n = 1; n <= 520; n++) { /* every batch: the first capture size >= n, else n itself */
    uint32_t want = n;
    for (uint32_t k = w.c.n_graph_sizes; k-- > 0;)
      if (w.c.graph_sizes[k] >= n) want = w.c.graph_sizes[k];
    cr_assert_eq(cost_graph_size(&w.c, n), want, "size(%u)", n);
  }
  char text[256];
  cost_graph_sizes_text(&w.c, text, sizeof text); /* 3 + 31 + 17 sizes, what plan and run print */
  cr_assert_str_eq(text, "full_and_piecewise, 51 capture sizes: 1, 2, 4, 8, 16, 24 ..., 496, 512");
  cost_deinit(&w.c);
  /* max_num_seqs 48: max capture 96; 97 and above run as they are */
  deploy_cfg d = dep(1, DT_BF16);
  d.max_num_seqs = 48;
  world_init(&w, tu_model_llama70b(), tu_gpu_h200(), tu_engine_vllm(), d);
  cr_assert_eq(cost_graph_size(&w.c, 95), 96);
  cr_assert_eq(cost_graph_size(&w.c, 96), 96);
  cr_assert_eq(cost_graph_size(&w.c, 97), 97);
  cost_deinit(&w.c);
  d.max_num_seqs = 16; /* max capture min(2 x 16, 512) = 32 */
  world_init(&w, tu_model_llama70b(), tu_gpu_h200(), tu_engine_vllm(), d);
  cost_graph_sizes_text(&w.c, text, sizeof text);
  cr_assert_str_eq(text, "full_and_piecewise, 7 capture sizes: 1, 2, 4, 8, 16, 24, 32");
  cost_deinit(&w.c);
  /* no graphs at all */
  engine_cfg e = tu_engine_vllm();
  e.graph_mode = GRAPH_NONE;
  world_init(&w, tu_model_llama70b(), tu_gpu_h200(), e, dep(1, DT_BF16));
  cr_assert_eq(cost_graph_size(&w.c, 3), 3);
  cost_graph_sizes_text(&w.c, text, sizeof text);
  cr_assert_str_eq(text, "none, no capture sizes (every step eager)");
  cost_deinit(&w.c);
}

Test(cost, names) {
  cr_assert_str_eq(cost_op_name(OP_ALLREDUCE), "allreduce");
  cr_assert_str_eq(cost_src_name(SRC_PROFILE_SCALED), "profile_scaled");
  cr_assert_str_eq(cost_bound_name(BOUND_COMM), "comm");
  for (int i = 0; i < OP_COUNT; i++) cr_assert_str_neq(cost_op_name((cost_op)i), "?");
}

Test(cost, rejects_bad_engine_and_gpu) {
  model_cfg m = tu_model_llama70b();
  gpu_cfg g = tu_gpu_h200();
  engine_cfg e = tu_engine_vllm();
  deploy_cfg d = dep(1, DT_BF16);
  cost_model c;
  sim_err err = {0};
  e.kernel_floor_ns = -1;
  cr_assert_eq(cost_init(&c, &m, &g, &e, &d, &err), SIM_EINPUT);
  cr_assert(strstr(err.msg, "kernel counts must be >= 0"), "%s", err.msg);
  e = tu_engine_vllm();
  e.attn_decode_eff = 0;
  cr_assert_eq(cost_init(&c, &m, &g, &e, &d, &err), SIM_EINPUT);
  cr_assert(strstr(err.msg, "attn_decode_eff"), "%s", err.msg);
  e = tu_engine_vllm();
  d = dep(4, DT_BF16);
  g.link_Bps = 0;
  cr_assert_eq(cost_init(&c, &m, &g, &e, &d, &err), SIM_EINPUT);
  cr_assert(strstr(err.msg, "link_Bps"), "%s", err.msg);
  cost_deinit(&c); /* safe after a failed init */
}

Test(cost, gemm_roofline_by_hand) {
  world w;
  world_init(&w, tu_model_llama70b(), tu_gpu_h200(), tu_engine_vllm(), dep(1, DT_BF16));
  cost_src s; /* the roofline: exactly max(t_c, t_m) */
  cost_bound b;
  /* gate+up at TP1, M = 1: N = 57344, K = 8192.
   * bytes = 57344*8192*2 + 1*8192*2 + 1*57344*2 = 939,524,096 + 16,384 + 114,688 = 939,655,168
   * t_m = 939,655,168 / (4.8e12 * 0.85) s = 230,307.6 ns;  t_c = 2*57344*8192/(989e12*0.75) = 1.27 us */
  double ns = cost_gemm_ns(&w.c, OP_GEMM_GATEUP, 1, &s, &b);
  cr_assert_eq(s, SRC_ROOFLINE);
  cr_assert_eq(b, BOUND_MEMORY);
  cr_assert_float_eq(ns, 939655168.0 / (4.8e12 * 0.85) * 1e9, 1e-6);
  /* M = 8192: t_c = 2*8192*57344*8192 / (989e12*0.75) = 10.377 ms; t_m = (939.5e6 + 134.2e6 + 939.5e6) B /
   * 4.08e12 = 0.49 ms: compute-bound */
  ns = cost_gemm_ns(&w.c, OP_GEMM_GATEUP, 8192, &s, &b);
  cr_assert_eq(b, BOUND_COMPUTE);
  cr_assert_float_eq(ns, 2.0 * 8192 * 57344 * 8192 / (989e12 * 0.75) * 1e9, 1e-3);
  /* near the ridge: the larger of the two, nothing blended */
  double tc = 2.0 * 256 * 57344 * 8192 / (989e12 * 0.75) * 1e9;
  double tm = (939524096.0 + 256.0 * 8192 * 2 + 256.0 * 57344 * 2) / (4.8e12 * 0.85) * 1e9;
  ns = cost_gemm_ns(&w.c, OP_GEMM_GATEUP, 256, NULL, NULL);
  cr_assert_float_eq(ns, fmax(tc, tm), 1e-9 * ns);
  /* shapes: QKV N = (64 + 16) * 128 = 10240 at TP1; O K = 8192 */
  cr_assert_float_eq(cost_gemm_ns(&w.c, OP_GEMM_QKV, 0, NULL, NULL), 0.0, 0);
  cr_assert_float_eq(cost_gemm_ns(&w.c, OP_GEMM_QKV, 1, NULL, NULL),
                     (8192.0 * 10240 * 2 + 8192 * 2 + 10240 * 2) / (4.8e12 * 0.85) * 1e9, 1e-6);
  cost_deinit(&w.c);
}

Test(cost, tp_shards_shapes_and_replicates_kv_heads) {
  /* at TP8 each GPU has 8 q heads and 1 kv head: QKV N = (8 + 2) * 128 = 1280;
   * at TP16 KV heads are replicated: still 1 kv head, 4 q heads: N = 6 * 128 = 768 */
  world w8, w16;
  world_init(&w8, tu_model_llama70b(), tu_gpu_h200(), tu_engine_vllm(), dep(8, DT_BF16));
  world_init(&w16, tu_model_llama70b(), tu_gpu_h200(), tu_engine_vllm(), dep(16, DT_BF16));
  double want8 = (8192.0 * 1280 * 2 + 8192 * 2 + 1280 * 2) / (4.8e12 * 0.85) * 1e9;
  double want16 = (8192.0 * 768 * 2 + 8192 * 2 + 768 * 2) / (4.8e12 * 0.85) * 1e9;
  cr_assert_float_eq(cost_gemm_ns(&w8.c, OP_GEMM_QKV, 1, NULL, NULL), want8, 1e-6);
  cr_assert_float_eq(cost_gemm_ns(&w16.c, OP_GEMM_QKV, 1, NULL, NULL), want16, 1e-6);
  /* down at TP8: K = 28672 / 8 = 3584, N = 8192 */
  cr_assert_float_eq(cost_gemm_ns(&w8.c, OP_GEMM_DOWN, 1, NULL, NULL),
                     (3584.0 * 8192 * 2 + 3584 * 2 + 8192 * 2) / (4.8e12 * 0.85) * 1e9, 1e-6);
  /* LM head at TP8: N = 128256 / 8 = 16032 */
  cr_assert_float_eq(cost_gemm_ns(&w8.c, OP_LM_HEAD, 1, NULL, NULL),
                     (16032.0 * 8192 * 2 + 8192 * 2 + 16032 * 2) / (4.8e12 * 0.85) * 1e9, 1e-6);
  cost_deinit(&w8.c);
  cost_deinit(&w16.c);
}

Test(cost, allreduce_formula_and_zero_at_tp1) {
  world w1, w4;
  world_init(&w1, tu_model_llama70b(), tu_gpu_h200(), tu_engine_vllm(), dep(1, DT_BF16));
  gpu_cfg g = tu_gpu_h200();
  g.link_latency_ns = 3000;
  world_init(&w4, tu_model_llama70b(), g, tu_engine_vllm(), dep(4, DT_BF16));
  cr_assert_float_eq(cost_allreduce_ns(&w1.c, 1000, true, NULL), 0.0, 0);
  /* 100 tokens x 8192 x 2 B = 1,638,400 B at 450e9 * 0.7 B/s, 10 us engine latency, 3 us per hop:
   * one-shot reads 3 peers' copies (4,915,200 B) after 3 hops; ring moves 2 * 3/4 of it
   * (2,457,600 B) after 6 hops; the cheaper wins */
  double one_shot = 10e3 + 3 * 3e3 + 4915200.0 / (450e9 * 0.7) * 1e9;
  double ring = 10e3 + 6 * 3e3 + 2457600.0 / (450e9 * 0.7) * 1e9;
  cr_assert(one_shot < ring);
  cr_assert_float_eq(cost_allreduce_ns(&w4.c, 100, true, NULL), one_shot, 1e-6);
  /* a prefill-size message: ring wins (bandwidth-optimal) */
  cr_assert_float_eq(cost_allreduce_ns(&w4.c, 8192, true, NULL), 10e3 + 6 * 3e3 + 1.5 * 8192 * 8192 * 2 / (450e9 * 0.7) * 1e9,
                     1e-6);
  /* small messages: the latency grows with the peers (handshakes) */
  world w8;
  world_init(&w8, tu_model_llama70b(), g, tu_engine_vllm(), dep(8, DT_BF16));
  cr_assert(cost_allreduce_ns(&w8.c, 1, true, NULL) > cost_allreduce_ns(&w4.c, 1, true, NULL) + 3 * 3e3 - 1);
  cost_deinit(&w8.c);
  step_cost s;
  cost_decode_step_ns(&w1.c, 8, 1000, &s);
  cr_assert_float_eq(s.op_ns[OP_ALLREDUCE], 0.0, 0);
  cr_assert_float_eq(s.bound_ns[BOUND_COMM], 0.0, 0);
  /* TP4 decode batch 8: 2 x 80 all-reduces of 8 tokens */
  cost_decode_step_ns(&w4.c, 8, 1000, &s);
  cr_assert_float_eq(s.op_ns[OP_ALLREDUCE], 160 * cost_allreduce_ns(&w4.c, 8, true, NULL), 1e-6);
  cr_assert_float_eq(s.bound_ns[BOUND_COMM], s.op_ns[OP_ALLREDUCE], 1e-6);
  cost_deinit(&w1.c);
  cost_deinit(&w4.c);
}

/* Weight bytes streamed by one TP1 decode step of Llama-3.1-70B in bf16: the
 * 80 layers' linear weights (855,638,016 params each) plus the LM head
 * (128,256 x 8192): 80 * 855,638,016 * 2 + 1,050,673,152 * 2 = 138,998,720,512 B. */
#define W70_STREAMED 138998720512.0

Test(cost, batch1_decode_70b_h200_is_weight_bound) {
  world w;
  world_init(&w, tu_model_llama70b(), tu_gpu_h200(), tu_engine_vllm(), dep(1, DT_BF16));
  step_cost s;
  double ns = cost_decode_step_ns(&w.c, 1, 1024, &s);
  assert_sums(&s);
  /* lower bound: weight reads at the GEMM memory efficiency, 138.999e9 / 4.08e12 = 34.07 ms */
  double lo = W70_STREAMED / (4.8e12 * 0.85) * 1e9;
  cr_assert(ns >= lo, "%.0f < %.0f", ns, lo);
  /* upper bound: + 5%: attention over 1024 cached tokens reads 1024*2*8*128*2*80 B = 0.34 GB (~0.1 ms),
   * elementwise and the CPU overhead (hidden by async scheduling) are smaller */
  cr_assert(ns <= lo * 1.05, "%.0f > %.0f", ns, lo * 1.05);
  cr_assert(s.bound_ns[BOUND_MEMORY] > 0.98 * ns);
  cr_assert_float_eq(s.op_ns[OP_CPU_OVERHEAD], 0.0, 0); /* 0.5 ms CPU hidden behind 34 ms GPU */
  cr_assert_float_eq(s.op_ns[OP_LAUNCH], 0.0, 0);       /* CUDA graph */
  cr_assert(w.c.src_count[OP_GEMM_QKV][SRC_ROOFLINE] == 1 && w.c.src_count[OP_GEMM_QKV][SRC_PROFILE] == 0);
  cr_assert(w.c.src_count[OP_ATTN_DECODE][SRC_ROOFLINE] == 1);
  cr_assert(w.c.src_count[OP_LM_HEAD][SRC_ROOFLINE] == 1);
  cr_assert(w.c.src_count[OP_ALLREDUCE][SRC_ROOFLINE] == 0);
  cr_log_info("70B bf16 TP1 H200 batch-1 decode step: %.2f ms (weights alone %.2f ms)", ns / 1e6, lo / 1e6);
  cost_deinit(&w.c);
}

Test(cost, classic_check_70b_on_h100_cannot_reach_50_tok_s) {
  /* 70B FP16: 140 GB of weights; 50 tok/s at batch 1 needs 7 TB/s. Even at 100% of every peak
   * and no overheads, two H100s (3.35 TB/s each, 70 GB each) need 69.5e9 / 3.35e12 = 20.7 ms. */
  engine_cfg e = tu_engine_vllm();
  e.gemm_compute_eff = e.gemm_memory_eff = e.attn_decode_eff = e.attn_prefill_eff = e.elementwise_eff = 1.0;
  e.allreduce_bw_eff = 1.0;
  e.allreduce_latency_ns = 0, e.step_overhead_ns = 0, e.per_seq_overhead_ns = 0, e.launch_overhead_ns_per_layer = 0;
  world w;
  world_init(&w, tu_model_llama70b(), tu_gpu_h100(), e, dep(2, DT_BF16));
  double ns = cost_decode_step_ns(&w.c, 1, 1, NULL);
  cr_assert(ns > 20e6, "TPOT %.2f ms", ns / 1e6);
  cr_assert(ns >= W70_STREAMED / 2 / 3.35e12 * 1e9);
  cr_assert(1e9 / ns < 50.0);
  cost_deinit(&w.c);
  /* and with the realistic engine, TP2 and TP4 on H100 stay above 20 ms at TP2 */
  world_init(&w, tu_model_llama70b(), tu_gpu_h100(), tu_engine_vllm(), dep(2, DT_BF16));
  cr_assert(cost_decode_step_ns(&w.c, 1, 1024, NULL) > 20e6);
  cost_deinit(&w.c);
}

Test(cost, decode_monotone_in_batch_and_context) {
  world w;
  world_init(&w, tu_model_llama70b(), tu_gpu_h200(), tu_engine_vllm(), dep(4, DT_BF16));
  double prev = 0;
  for (uint32_t b = 1; b <= 1024; b++) {
    step_cost s;
    double ns = cost_decode_step_ns(&w.c, b, 2048, &s);
    assert_sums(&s);
    cr_assert(ns >= prev, "batch %u: %.0f < %.0f", b, ns, prev);
    prev = ns;
  }
  prev = 0;
  for (uint32_t ctx = 1; ctx <= 131072; ctx = ctx * 3 / 2 + 1) {
    double ns = cost_decode_step_ns(&w.c, 64, ctx, NULL);
    cr_assert(ns >= prev, "ctx %u", ctx);
    prev = ns;
  }
  cost_deinit(&w.c);
}

Test(cost, prefill_increasing_in_chunk_beyond_memo_too) {
  world w;
  world_init(&w, tu_model_llama70b(), tu_gpu_h200(), tu_engine_vllm(), dep(2, DT_BF16));
  cr_assert_eq(w.c.memo_len, 8193u);
  double prev = 0;
  for (uint32_t t = 2; t <= 20000; t += (t < 600 ? 1 : 37)) {
    step_cost s;
    double ns = cost_prefill_step_ns(&w.c, t, &s);
    assert_sums(&s);
    cr_assert(ns > prev, "chunk %u: %.0f <= %.0f", t, ns, prev);
    prev = ns;
  }
  cost_deinit(&w.c);
}

Test(cost, memo_equals_direct_computation) {
  /* A model whose memo covers T = 8192 and one whose memo stops at 512 agree. */
  world a, b;
  deploy_cfg d = dep(4, DT_FP8);
  world_init(&a, tu_model_llama70b(), tu_gpu_h200(), tu_engine_vllm(), d);
  d.max_num_batched_tokens = 256, d.max_num_seqs = 64;
  world_init(&b, tu_model_llama70b(), tu_gpu_h200(), tu_engine_vllm(), d);
  cr_assert_eq(b.c.memo_len, 513u);
  prefill_chunk ch[2] = {{3000, 500}, {2000, 0}};
  batch_desc bd = {.num_tokens = 5100, .num_seqs = 102, .num_decode = 100, .decode_ctx_tokens = 100 * 900,
                   .num_sample = 101, .num_prefill = 2, .prefills = ch};
  for (int rep = 0; rep < 2; rep++) { /* second time from the memo */
    step_cost sa, sb;
    cost_step(&a.c, &bd, &sa);
    cost_step(&b.c, &bd, &sb);
    assert_sums(&sa);
    cr_assert_eq(sa.total_ns, sb.total_ns);
    for (int i = 0; i < OP_COUNT; i++) cr_assert_eq(sa.op_ns[i], sb.op_ns[i]);
  }
  cr_assert(a.c.memo[0][5100].valid, "5100 tokens run eagerly");
  cr_assert_eq(a.c.src_count[OP_ATTN_PREFILL][SRC_ROOFLINE], 4u); /* 2 chunks x 2 steps */
  cr_assert_eq(a.c.src_count[OP_GEMM_DOWN][SRC_ROOFLINE], 2u);
  cost_set_profiles(&a.c, NULL, NULL, NULL);
  cr_assert_not(a.c.memo[0][5100].valid);
  cost_deinit(&a.c);
  cost_deinit(&b.c);
}

Test(cost, sums_hold_for_every_kind_of_step) {
  engine_cfg sync = tu_engine_vllm();
  sync.async_scheduling = false;
  const engine_cfg engines[] = {tu_engine_vllm(), sync};
  const uint32_t tps[] = {1, 2, 8};
  for (size_t ei = 0; ei < 2; ei++)
    for (size_t ti = 0; ti < 3; ti++) {
      world w;
      world_init(&w, tu_model_llama70b(), tu_gpu_h200(), engines[ei], dep(tps[ti], DT_INT4));
      step_cost s;
      cost_decode_step_ns(&w.c, 3, 100, &s); /* graphed, padded to 4 */
      assert_sums(&s);
      cost_decode_step_ns(&w.c, 700, 5000, &s); /* eager: above the largest capture size */
      assert_sums(&s);
      cost_prefill_step_ns(&w.c, 8192, &s);
      assert_sums(&s);
      prefill_chunk ch = {600, 20000};
      batch_desc bd = {.num_tokens = 640, .num_seqs = 41, .num_decode = 40, .decode_ctx_tokens = 40 * 3000,
                       .num_sample = 40, .num_prefill = 1, .prefills = &ch};
      cost_step(&w.c, &bd, &s);
      assert_sums(&s);
      cr_assert(s.op_ns[OP_ATTN_PREFILL] > 0 && s.op_ns[OP_ATTN_DECODE] > 0);
      cost_deinit(&w.c);
    }
  /* a tiny model whose CPU overhead exceeds the GPU time (async: only the excess shows) */
  world w;
  world_init(&w, llama1b(), tu_gpu_h200(), tu_engine_vllm(), dep(1, DT_BF16));
  w.e.step_overhead_ns = 2e6; /* the 1B model streams 2.5 GB: ~0.6 ms of GPU */
  step_cost s;
  cost_decode_step_ns(&w.c, 1, 10, &s);
  assert_sums(&s);
  cr_assert(s.bound_ns[BOUND_CPU] > 0);
  cost_deinit(&w.c);
}

Test(cost, graphs_pad_the_batch_and_host_launches_bound_small_steps) {
  world w;
  world_init(&w, tu_model_llama70b(), tu_gpu_h200(), tu_engine_vllm(), dep(1, DT_BF16));
  step_cost s5, s8;
  cost_decode_step_ns(&w.c, 5, 100, &s5);
  cost_decode_step_ns(&w.c, 8, 100, &s8);
  /* batch 5 runs the batch-8 graph: same GEMMs, all-reduces and elementwise */
  cr_assert_eq(gemm_sum(&s5), gemm_sum(&s8));
  cr_assert_eq(s5.op_ns[OP_ELEMENTWISE], s8.op_ns[OP_ELEMENTWISE]);
  cr_assert(s5.op_ns[OP_ATTN_DECODE] < s8.op_ns[OP_ATTN_DECODE]); /* attention sees the real batch */
  cr_assert_float_eq(s5.op_ns[OP_LAUNCH], 0.0, 0);
  /* a 70B layer keeps the GPU busy far longer than the host needs to launch it */
  step_cost sp;
  cost_prefill_step_ns(&w.c, 100, &sp);
  cr_assert_float_eq(sp.op_ns[OP_LAUNCH], 0.0, 0);
  cost_deinit(&w.c);
  /* a 1B model at a slow host (200 us per layer): a mixed step of 100 tokens replays piecewise graphs
   * but the host launches the attention of each of the 16 layers, so the step lasts 16 x 200 us */
  engine_cfg e = tu_engine_vllm();
  e.launch_overhead_ns_per_layer = 200e3;
  world_init(&w, llama1b(), tu_gpu_h200(), e, dep(1, DT_BF16));
  cost_prefill_step_ns(&w.c, 100, &sp);
  cr_assert_float_eq(sp.gpu_ns, 16 * 200e3, 1e-6);
  cr_assert_gt(sp.op_ns[OP_LAUNCH], 0.0);
  cr_assert_float_eq(sp.bound_ns[BOUND_CPU], sp.op_ns[OP_LAUNCH] + sp.op_ns[OP_CPU_OVERHEAD], 1e-6);
  assert_sums(&sp);
  /* a decode-only batch replays one full graph: no launches */
  cost_decode_step_ns(&w.c, 100, 100, &s5);
  cr_assert_float_eq(s5.op_ns[OP_LAUNCH], 0.0, 0);
  cost_deinit(&w.c);
}

Test(cost, async_scheduling_hides_cpu_under_gpu) {
  deploy_cfg ds = dep(1, DT_BF16);
  ds.async_scheduling = 0; /* --no-async-scheduling */
  world a, s;
  world_init(&a, tu_model_llama70b(), tu_gpu_h200(), tu_engine_vllm(), dep(1, DT_BF16));
  world_init(&s, tu_model_llama70b(), tu_gpu_h200(), tu_engine_vllm(), ds);
  step_cost ca, cs;
  double ta = cost_decode_step_ns(&a.c, 64, 1000, &ca);
  double ts = cost_decode_step_ns(&s.c, 64, 1000, &cs);
  double cpu = 500e3 + 2e3 * 64; /* step + per-seq overhead */
  cr_assert_float_eq(ca.op_ns[OP_CPU_OVERHEAD], 0.0, 0);
  cr_assert_float_eq(cs.op_ns[OP_CPU_OVERHEAD], cpu, 1e-6);
  cr_assert_float_eq(ts - ta, cpu, 1e-6 * ts);
  /* the timeline's inputs: the same GPU and host work either way */
  cr_assert_float_eq(ca.gpu_ns, cs.gpu_ns, 1e-9 * ca.gpu_ns);
  cr_assert_float_eq(ca.cpu_ns, cpu, 1e-6);
  cr_assert_float_eq(cs.cpu_ns, cpu, 1e-6);
  /* CPU longer than GPU: async shows only the excess, the step lasts cpu */
  a.e.step_overhead_ns = 100e6;
  cost_decode_step_ns(&a.c, 64, 1000, &ca);
  cr_assert_float_eq(ca.total_ns, 100e6 + 2e3 * 64, 1e-6 * ca.total_ns);
  /* GPU ~41 ms (34 ms of weights + 64 x 1000 tokens x 327,680 B of KV = 21 GB, 6.2 ms): ~59 ms show */
  double gpu = ca.total_ns - ca.op_ns[OP_CPU_OVERHEAD];
  cr_assert(gpu > 35e6 && gpu < 45e6, "gpu %.0f", gpu);
  cr_assert_float_eq(ca.op_ns[OP_CPU_OVERHEAD], 100e6 + 2e3 * 64 - gpu, 1e-6 * ca.total_ns);
  assert_sums(&ca);
  cost_deinit(&a.c);
  cost_deinit(&s.c);
}

/* SGLang's output path (detokenizer, tokenizer manager and HTTP server: processes apart from the scheduler,
 * tokenizer_manager.py _handle_batch_output and serving_chat.py at v0.5.6.post2; docs/SGLANG.md 8) is a pipeline
 * stage: a step lasts at least stream_per_seq x its sampling sequences. By hand, at the engine file's 43 us:
 * 512 decoding sequences stream 512 x 43 us = 22.016 ms a step, far above a 1B model's GPU step and the host's
 * 0.5 ms + 512 x 2 us = 1.524 ms, so the step is 22.016 ms with overlap and without it (the stage is not the
 * scheduler's: max(gpu + cpu, stream)); at 8 sequences (344 us) the GPU step is longer and nothing changes. */
Test(cost, sglang_output_path_bounds_the_step) {
  engine_cfg e = tu_engine_vllm();
  e.stream_per_seq_ns = 43e3;
  deploy_cfg ds = dep(1, DT_BF16);
  ds.async_scheduling = 0; /* --disable-overlap-schedule */
  world a, s, z;
  world_init(&a, llama1b(), tu_gpu_h200(), e, dep(1, DT_BF16));
  world_init(&s, llama1b(), tu_gpu_h200(), e, ds);
  world_init(&z, llama1b(), tu_gpu_h200(), tu_engine_vllm(), dep(1, DT_BF16));
  step_cost ca, cs, cz;
  double ta = cost_decode_step_ns(&a.c, 512, 1000, &ca);
  double ts = cost_decode_step_ns(&s.c, 512, 1000, &cs);
  cost_decode_step_ns(&z.c, 512, 1000, &cz);
  cr_assert(cz.gpu_ns < 15e6 && cz.total_ns < 15e6, "1B model, 512 x 1000 tokens: gpu %.0f", cz.gpu_ns);
  cr_assert_float_eq(ta, 512 * 43e3, 1e-9 * ta);
  cr_assert_float_eq(ts, 512 * 43e3, 1e-9 * ts);
  cr_assert_float_eq(ca.gpu_ns, cz.gpu_ns, 1e-9 * cz.gpu_ns); /* the GPU's work is the same */
  cr_assert_float_eq(ca.cpu_ns, 512 * 43e3, 1e-6);              /* async: max(cpu, stream) */
  cr_assert_float_eq(cs.cpu_ns, 512 * 43e3 - cs.gpu_ns, 1e-6);  /* sync: max(cpu, stream - gpu) */
  cr_assert_float_eq(ca.op_ns[OP_CPU_OVERHEAD], 512 * 43e3 - ca.gpu_ns, 1e-6);
  assert_sums(&ca);
  assert_sums(&cs);
  step_cost c8, z8;
  cost_decode_step_ns(&a.c, 8, 1000, &c8);
  cost_decode_step_ns(&z.c, 8, 1000, &z8);
  cr_assert(z8.gpu_ns > 8 * 43e3, "gpu %.0f", z8.gpu_ns);
  cr_assert_float_eq(c8.total_ns, z8.total_ns, 1e-9 * z8.total_ns);
  cost_deinit(&a.c);
  cost_deinit(&s.c);
  cost_deinit(&z.c);
}

Test(cost, tp4_faster_than_tp1_with_growing_allreduce_share) {
  double share_prev = -1, t1 = 0;
  const uint32_t tps[] = {1, 2, 4, 8};
  for (size_t i = 0; i < 4; i++) {
    world w;
    world_init(&w, tu_model_llama70b(), tu_gpu_h200(), tu_engine_vllm(), dep(tps[i], DT_BF16));
    step_cost s;
    double ns = cost_decode_step_ns(&w.c, 1, 1024, &s);
    double share = s.op_ns[OP_ALLREDUCE] / ns;
    if (tps[i] == 1) t1 = ns;
    if (tps[i] == 4) cr_assert(ns < t1 / 2.5, "tp4 %.2f ms vs tp1 %.2f ms", ns / 1e6, t1 / 1e6);
    cr_assert(share > share_prev, "tp%u share %.4f", tps[i], share);
    cr_log_info("tp%u batch-1 decode %.2f ms, all-reduce share %.1f%%", tps[i], ns / 1e6, 100 * share);
    share_prev = share;
    cost_deinit(&w.c);
  }
}

Test(cost, fp8_halves_and_int4_quarters_batch1_gemms) {
  world wb, w8, w4, wi8;
  world_init(&wb, tu_model_llama70b(), tu_gpu_h200(), tu_engine_vllm(), dep(1, DT_BF16));
  world_init(&w8, tu_model_llama70b(), tu_gpu_h200(), tu_engine_vllm(), dep(1, DT_FP8));
  world_init(&w4, tu_model_llama70b(), tu_gpu_h200(), tu_engine_vllm(), dep(1, DT_INT4));
  gpu_cfg a100 = tu_gpu_h200();
  a100.flops[DT_FP8] = 0; /* no fp8 tensor cores: weight-only fp8 */
  world_init(&wi8, tu_model_llama70b(), a100, tu_engine_vllm(), dep(1, DT_FP8));
  step_cost sb, s8, s4, si8;
  cost_decode_step_ns(&wb.c, 1, 100, &sb);
  cost_decode_step_ns(&w8.c, 1, 100, &s8);
  cost_decode_step_ns(&w4.c, 1, 100, &s4);
  cost_decode_step_ns(&wi8.c, 1, 100, &si8);
  double r8 = gemm_sum(&s8) / gemm_sum(&sb), r4 = gemm_sum(&s4) / gemm_sum(&sb);
  cr_assert(r8 > 0.49 && r8 < 0.52, "fp8/bf16 %.4f", r8);
  /* int4: 0.5 + 2/128 = 0.515625 bytes per weight vs 2 -> 0.2578 */
  cr_assert(r4 > 0.255 && r4 < 0.265, "int4/bf16 %.4f", r4);
  cr_assert(gemm_sum(&si8) / gemm_sum(&sb) < 0.52);
  /* the LM head stays bf16 */
  cr_assert_float_eq(s8.op_ns[OP_LM_HEAD], sb.op_ns[OP_LM_HEAD], 1e-9 * sb.op_ns[OP_LM_HEAD]);
  /* large M, compute-bound: fp8 uses the 2x peak, int4 is slower than bf16 (weight-only 0.8 factor) */
  double gb = cost_gemm_ns(&wb.c, OP_GEMM_GATEUP, 8192, NULL, NULL);
  double g8 = cost_gemm_ns(&w8.c, OP_GEMM_GATEUP, 8192, NULL, NULL);
  double g4 = cost_gemm_ns(&w4.c, OP_GEMM_GATEUP, 8192, NULL, NULL);
  double gi8 = cost_gemm_ns(&wi8.c, OP_GEMM_GATEUP, 8192, NULL, NULL);
  cr_assert(g8 < 0.55 * gb, "fp8 %.0f bf16 %.0f", g8, gb);
  cr_assert(g4 > 1.2 * gb && g4 < 1.3 * gb, "int4 %.0f bf16 %.0f", g4, gb);
  cr_assert(gi8 > 1.2 * gb, "weight-only fp8 must not use fp8 tensor cores");
  cost_deinit(&wb.c);
  cost_deinit(&w8.c);
  cost_deinit(&w4.c);
  cost_deinit(&wi8.c);
}

Test(cost, attention_decode_bytes_and_fp8_kv) {
  world w, wk;
  deploy_cfg d = dep(4, DT_BF16);
  world_init(&w, tu_model_llama70b(), tu_gpu_h200(), tu_engine_vllm(), d);
  d.kv_dtype = DT_FP8;
  world_init(&wk, tu_model_llama70b(), tu_gpu_h200(), tu_engine_vllm(), d);
  /* 32 sequences, 4096 tokens each, TP4: 2 kv heads per GPU.
   * KV bytes = 131072 * 2 * 2 * 128 * 2 = 134,217,728; q/o = 32 * 2 * 16 * 128 * 2 = 262,144 B
   * t = 134,479,872 / (4.8e12 * 0.7) s = 40,023.8 ns per layer */
  cost_src src;
  double ns = cost_attn_decode_ns(&w.c, 32, 32 * 4096, &src);
  cr_assert_eq(src, SRC_ROOFLINE);
  cr_assert_float_eq(ns, 134479872.0 / (4.8e12 * 0.7) * 1e9, 1e-6);
  double nk = cost_attn_decode_ns(&wk.c, 32, 32 * 4096, NULL);
  cr_assert_float_eq(nk, (67108864.0 + 262144) / (4.8e12 * 0.7) * 1e9, 1e-6);
  cr_assert_float_eq(cost_attn_decode_ns(&w.c, 0, 0, NULL), 0.0, 0);
  cost_deinit(&w.c);
  cost_deinit(&wk.c);
}

Test(cost, attention_prefill_flops) {
  world w;
  world_init(&w, tu_model_llama70b(), tu_gpu_h200(), tu_engine_vllm(), dep(1, DT_BF16));
  /* chunk 4096 after 8192 cached, 64 heads x 128: 4*64*128*4096*(8192 + 4097/2) = 1.374e12 FLOP
   * / (989e12 * 0.5) = 2.78 ms per layer; reading 12288 tokens of KV is 50 MB, 10 us: compute-bound */
  double want = 4.0 * 64 * 128 * 4096 * (8192 + 4097.0 / 2) / (989e12 * 0.5) * 1e9;
  cr_assert_float_eq(cost_attn_prefill_ns(&w.c, 4096, 8192, NULL), want, 1e-6 * want);
  /* more context, same chunk: slower */
  cr_assert(cost_attn_prefill_ns(&w.c, 512, 100000, NULL) > cost_attn_prefill_ns(&w.c, 512, 1000, NULL));
  cost_deinit(&w.c);
}

Test(cost, lm_head_only_for_sampling_sequences) {
  world w;
  world_init(&w, tu_model_llama70b(), tu_gpu_h200(), tu_engine_vllm(), dep(1, DT_BF16));
  prefill_chunk ch = {1000, 0};
  batch_desc bd = {.num_tokens = 1000, .num_seqs = 1, .num_sample = 0, .num_prefill = 1, .prefills = &ch};
  step_cost s;
  cost_step(&w.c, &bd, &s);
  cr_assert_float_eq(s.op_ns[OP_LM_HEAD], 0.0, 0);
  assert_sums(&s);
  bd.num_sample = 1;
  cost_step(&w.c, &bd, &s);
  /* one row: the LM head streams 128256 x 8192 x 2 B = 2.1 GB: ~0.5 ms */
  cr_assert(s.op_ns[OP_LM_HEAD] > 2.1e9 / 4.8e12 * 1e9);
  cost_deinit(&w.c);
}

Test(cost, empty_batch_costs_cpu_only) {
  world w;
  world_init(&w, tu_model_llama70b(), tu_gpu_h200(), tu_engine_vllm(), dep(2, DT_BF16));
  batch_desc bd = {0};
  step_cost s;
  cost_step(&w.c, &bd, &s);
  cr_assert_float_eq(s.total_ns, 500e3, 1e-6);
  cr_assert_float_eq(s.bound_ns[BOUND_CPU], 500e3, 1e-6);
  cost_deinit(&w.c);
}

/* A decode batch above the largest captured size runs eagerly (vLLM's
 * dispatcher finds no graph), so the host launches every layer. */
Test(cost, graph_only_up_to_the_largest_capture_size) {
  engine_cfg e = tu_engine_vllm();
  e.cuda_graph_max_batch = 100; /* captures up to 96 */
  e.launch_overhead_ns_per_layer = 1e6; /* a host slower than the GPU, to see the launches */
  world w;
  world_init(&w, llama1b(), tu_gpu_h200(), e, tu_deploy(1, DT_BF16));
  step_cost s96, s97;
  cost_decode_step_ns(&w.c, 96, 1000, &s96);
  cost_decode_step_ns(&w.c, 97, 1000, &s97);
  cr_assert_float_eq(s96.op_ns[OP_LAUNCH], 0.0, 0, "96 is captured");
  cr_assert_gt(s97.op_ns[OP_LAUNCH], 0.0, "97 > 96 runs eagerly, paying launches");
  cr_assert_float_eq(s97.gpu_ns, 16 * 1e6, 1e-6);
  cost_deinit(&w.c);
}

/* ---- with measured tables ------------------------------------------------------------------- */

/* The bundled H200 vLLM 0.24.0 tables (imported from the kernel database). */
static const prof *bundled(const char *name) {
  static prof *cache[4];
  static char names[4][64];
  for (int i = 0; i < 4; i++)
    if (cache[i] && !strcmp(names[i], name)) return cache[i];
  char path[1024];
  sim_err err = {0};
  cr_assert_eq(cfg_find(CFG_PROFILE, name, path, sizeof path, &err), SIM_OK, "%s", err.msg);
  prof *p = NULL;
  cr_assert_eq(prof_load(&p, path, &err), SIM_OK, "%s", err.msg);
  for (int i = 0; i < 4; i++)
    if (!cache[i]) {
      cache[i] = p;
      snprintf(names[i], sizeof names[i], "%s", name);
      return p;
    }
  return p; /* leaked in the test process only when more than 4 are asked for */
}

/* TensorRT-LLM's FP8 tables were timed with dynamic input quantization (their collector loads no input scale);
 * an engine file with fp8_static_activation_scale has each FP8 GEMM of such a table lowered by the table's
 * 1 x 128 x 128 FP8 time less twice its BF16 time (the quantization beyond one static-scale kernel), never
 * below the kernel floor; BF16 GEMMs and tables timed with a static scale (vLLM 0.24.0's) keep their times. */
Test(cost, fp8_tables_lose_their_collectors_dynamic_quantization) {
  const prof *trt = bundled("h200_trtllm-1.3.0rc20"), *vl = bundled("h200_vllm-0.24.0");
  double t8, t16, want;
  cr_assert(prof_gemm_ns(trt, DT_FP8, DT_FP8, 1, 128, 128, &t8) && prof_gemm_ns(trt, DT_BF16, DT_BF16, 1, 128, 128, &t16));
  cr_assert(t8 - t16 > 8e3, "the table's FP8 linear carries ~9 us of quantization: %.0f vs %.0f ns", t8, t16);
  for (int stat = 0; stat < 2; stat++) {
    engine_cfg e = tu_engine_vllm();
    e.fp8_static_act_scale = stat;
    world w;
    world_init(&w, tu_model_llama70b(), tu_gpu_h200(), e, dep(8, DT_FP8));
    cost_set_profiles(&w.c, trt, NULL, NULL);
    cr_assert_float_eq(w.c.fp8_requant_ns[0], stat ? t8 - 2 * t16 : 0, 1e-9);
    /* O at TP8: N 8192, K 1024, a grid point at M = 16 */
    cr_assert(prof_gemm_ns(trt, DT_FP8, DT_FP8, 16, 8192, 1024, &want));
    cr_assert_float_eq(cost_gemm_ns(&w.c, OP_GEMM_O, 16, NULL, NULL), want - w.c.fp8_requant_ns[0], 1e-6);
    cr_assert_geq(cost_gemm_ns(&w.c, OP_GEMM_O, 1, NULL, NULL), w.c.kernel_floor_ns);
    /* the LM head computes in BF16: untouched */
    cr_assert(prof_gemm_ns(trt, DT_BF16, DT_BF16, 16, w.c.shard.n[SG_LM_HEAD], w.c.shard.k[SG_LM_HEAD], &want));
    cr_assert_float_eq(cost_gemm_ns(&w.c, OP_LM_HEAD, 16, NULL, NULL), want, 1e-6 * want);
    /* vLLM 0.24.0's FP8 linear was timed with a static scale: nothing to take off */
    cost_set_profiles(&w.c, vl, NULL, NULL);
    cr_assert_float_eq(w.c.fp8_requant_ns[0], 0, 0);
    cr_assert(prof_gemm_ns(vl, DT_FP8, DT_FP8, 16, 8192, 1024, &want));
    cr_assert_float_eq(cost_gemm_ns(&w.c, OP_GEMM_O, 16, NULL, NULL), want, 1e-6);
    cost_deinit(&w.c);
  }
  /* the same table serving another GPU type (scaled by the datasheets): the same quantization comes off first */
  {
    engine_cfg e = tu_engine_vllm();
    gpu_cfg h200 = tu_gpu_h200();
    double scaled[2];
    for (int stat = 0; stat < 2; stat++) {
      e.fp8_static_act_scale = stat;
      world w;
      world_init(&w, tu_model_llama70b(), tu_gpu_h100(), e, dep(8, DT_FP8));
      cost_set_profiles(&w.c, NULL, trt, &h200);
      cr_assert_float_eq(w.c.fp8_requant_ns[1], stat ? t8 - 2 * t16 : 0, 1e-9);
      cost_src src;
      scaled[stat] = cost_gemm_ns(&w.c, OP_GEMM_O, 16, &src, NULL);
      cr_assert_eq(src, SRC_PROFILE_SCALED);
      cost_deinit(&w.c);
    }
    cr_assert(prof_gemm_ns(trt, DT_FP8, DT_FP8, 16, 8192, 1024, &want));
    /* both scaled by one datasheet ratio r: scaled[0] = want r, scaled[1] = (want - q) r */
    cr_assert_float_eq(scaled[1] / scaled[0], (want - (t8 - 2 * t16)) / want, 1e-9);
  }
  /* BF16 weights on the same tables: no FP8 GEMM, nothing changes */
  engine_cfg e = tu_engine_vllm();
  e.fp8_static_act_scale = true;
  world w;
  world_init(&w, tu_model_llama70b(), tu_gpu_h200(), e, dep(8, DT_BF16));
  cost_set_profiles(&w.c, trt, NULL, NULL);
  cr_assert(prof_gemm_ns(trt, DT_BF16, DT_BF16, 16, 8192, 1024, &want));
  cr_assert_float_eq(cost_gemm_ns(&w.c, OP_GEMM_O, 16, NULL, NULL), want, 1e-6);
  cost_deinit(&w.c);
}

Test(cost, measured_tables_serve_every_kernel) {
  world w;
  world_init(&w, tu_model_llama70b(), tu_gpu_h200(), tu_engine_vllm(), dep(4, DT_FP8));
  const prof *p = bundled("h200_vllm-0.24.0");
  cost_set_profiles(&w.c, p, NULL, NULL);
  /* the kernel floor is the table's 1 x 128 x 128 bf16 GEMM */
  double floor_ns;
  cr_assert(prof_gemm_ns(p, DT_BF16, DT_BF16, 1, 128, 128, &floor_ns));
  cr_assert_float_eq(w.c.kernel_floor_ns, floor_ns, 0);
  cr_assert(floor_ns > 1e3 && floor_ns < 5e3, "a kernel in a graph takes a few us: %.0f ns", floor_ns);
  /* a GEMM at a grid point is the measured time: TP4 gate_up is N = 14336 (not a grid point), the
   * LM head's M = 16, N = 32064, K = 8192 neither; but O (N 8192, K 2048) at M = 16 is */
  double want, got = cost_gemm_ns(&w.c, OP_GEMM_O, 16, NULL, NULL);
  cr_assert(prof_gemm_ns(p, DT_FP8, DT_FP8, 16, 8192, 2048, &want));
  cr_assert_float_eq(got, want, 0);
  prefill_chunk ch = {2000, 1000};
  batch_desc bd = {.num_tokens = 2032, .num_seqs = 33, .num_decode = 32, .decode_ctx_tokens = 32 * 1500,
                   .num_sample = 33, .num_prefill = 1, .prefills = &ch};
  step_cost s;
  cost_step(&w.c, &bd, &s);
  assert_sums(&s);
  cr_assert_eq(w.c.src_count[OP_GEMM_QKV][SRC_PROFILE], 1);
  cr_assert_eq(w.c.src_count[OP_ATTN_DECODE][SRC_PROFILE], 1);
  cr_assert_eq(w.c.src_count[OP_ATTN_PREFILL][SRC_PROFILE], 1);
  cr_assert_eq(w.c.src_count[OP_ALLREDUCE][SRC_PROFILE], 1);
  cr_assert_eq(w.c.src_count[OP_LM_HEAD][SRC_PROFILE], 1);
  /* the all-reduce of 2032 tokens (eager: above the 512 capture) is the engine's eager kernel's time */
  double ar;
  cr_assert(prof_allreduce_ns(p, PROF_AR_CUSTOM_EAGER, 4, 2032.0 * 8192 * 2, &ar));
  cr_assert_float_eq(s.op_ns[OP_ALLREDUCE], 160 * ar, 1e-6 * s.op_ns[OP_ALLREDUCE]);
  cost_deinit(&w.c);
}

/* --allreduce auto on the kernel database's L40S tables: between 2 GPUs the
 * measured all-reduce is what PCIe gives (kept); among 4 and 8 it is 5-25% of
 * the link (GPUs without peer-to-peer on the measured machine), so auto uses
 * the link formula there, and --allreduce table still forces the table. On
 * the H200's NVLink tables auto keeps the table at every TP. */
static double ar_with(ar_source a, const char *gpu, const char *profile, uint32_t tp, cost_src *src, ar_check *chk,
                      bool *checked) {
  world w;
  gpu_cfg g;
  engine_cfg e;
  sim_err err = {0};
  cr_assert_eq(cfg_gpu_load(&g, gpu, &err), SIM_OK, "%s", err.msg);
  cr_assert_eq(cfg_engine_load(&e, "trtllm", &err), SIM_OK, "%s", err.msg);
  deploy_cfg d = dep(tp, DT_FP8);
  d.allreduce = a;
  world_init(&w, tu_model_llama70b(), g, e, d);
  cost_set_profiles(&w.c, bundled(profile), NULL, NULL);
  *checked = cost_allreduce_check(&w.c, chk);
  double ns = cost_allreduce_ns(&w.c, 1024, false, src);
  cost_deinit(&w.c);
  return ns;
}

Test(cost, allreduce_auto_drops_a_table_without_peer_to_peer) {
  cost_src src;
  ar_check chk;
  bool checked;
  /* L40S TP2: plausible, the table serves */
  ar_with(AR_AUTO, "l40s", "l40s_trtllm-1.3.0rc20", 2, &src, &chk, &checked);
  cr_assert(checked);
  cr_assert_eq(chk.gpus, 2);
  cr_assert(!chk.implausible, "TP2 %.1f of %.1f GB/s", chk.table_busbw_Bps / 1e9, chk.link_busbw_Bps / 1e9);
  cr_assert_eq(src, SRC_PROFILE);
  for (uint32_t tp = 4; tp <= 8; tp *= 2) {
    double a = ar_with(AR_AUTO, "l40s", "l40s_trtllm-1.3.0rc20", tp, &src, &chk, &checked);
    cr_assert(checked && chk.implausible && chk.gpus == tp);
    cr_assert_lt(chk.table_busbw_Bps * COST_AR_CHECK_RATIO, chk.link_busbw_Bps);
    cr_assert_eq(src, SRC_ROOFLINE, "auto at TP%u: the link formula", tp);
    double l = ar_with(AR_LINK, "l40s", "l40s_trtllm-1.3.0rc20", tp, &src, &chk, &checked);
    cr_assert_float_eq(a, l, 0);
    double t = ar_with(AR_TABLE, "l40s", "l40s_trtllm-1.3.0rc20", tp, &src, &chk, &checked);
    cr_assert_eq(src, SRC_PROFILE, "--allreduce table forces the measurement");
    cr_assert_gt(t, 2 * a, "TP%u: the table is the slow one (%.1f vs %.1f us)", tp, t / 1e3, a / 1e3);
  }
  for (uint32_t tp = 2; tp <= 8; tp *= 2) {
    ar_with(AR_AUTO, "h200", "h200_trtllm-1.3.0rc20", tp, &src, &chk, &checked);
    cr_assert(checked && !chk.implausible, "H200 TP%u: %.1f of %.1f GB/s", tp, chk.table_busbw_Bps / 1e9,
              chk.link_busbw_Bps / 1e9);
    cr_assert_eq(src, SRC_PROFILE);
  }
}

/* --allreduce link: the measured machine's topology is not the user's; the
 * all-reduce then comes from the link formula although the table has it, and
 * every other kernel still from the table. */
Test(cost, allreduce_link_overrides_the_measured_table) {
  world w;
  deploy_cfg d = dep(4, DT_FP8);
  d.allreduce = AR_LINK;
  world_init(&w, tu_model_llama70b(), tu_gpu_h200(), tu_engine_vllm(), d);
  const prof *p = bundled("h200_vllm-0.24.0");
  cost_set_profiles(&w.c, p, NULL, NULL);
  cost_src src;
  double got = cost_allreduce_ns(&w.c, 2032, false, &src), link = cost_allreduce_link_ns(&w.c, 2032), table;
  cr_assert_eq(src, SRC_ROOFLINE);
  cr_assert_float_eq(got, link, 0);
  cr_assert(prof_allreduce_ns(p, PROF_AR_CUSTOM_EAGER, 4, 2032.0 * 8192 * 2, &table));
  cr_assert(fabs(table - link) > 0.01 * table, "the two sources must differ for the test to mean anything");
  /* by hand: ring, 3 peers, 2 x 3/4 x S over 450 GB/s x allreduce_bw_eff, plus the software latency and hops */
  const engine_cfg *e = &w.e;
  double S = 2032.0 * 8192 * 2, bw = w.g.link_Bps * e->allreduce_bw_eff;
  double ring = e->allreduce_latency_ns + 6 * w.g.link_latency_ns + 1.5 * S / bw * 1e9;
  double one = e->allreduce_latency_ns + 3 * w.g.link_latency_ns + 3 * S / bw * 1e9;
  cr_assert_float_eq(link, ring < one ? ring : one, 1e-6 * link);
  cr_assert_float_eq(cost_gemm_ns(&w.c, OP_GEMM_O, 16, &src, NULL), cost_gemm_ns(&w.c, OP_GEMM_O, 16, NULL, NULL), 0);
  cr_assert_eq(src, SRC_PROFILE, "GEMMs still come from the table");
  cost_deinit(&w.c);
}

/* A TP group larger than a node: one node-local all-reduce (NCCL's measured
 * table at 8 GPUs) plus a ring over the network of each GPU's 1/8 shard:
 * 2 (n-1)/n x S/8 bytes at 50 GB/s and 2 (n-1) hops of 5 us (NCCL's own
 * tuning model's network hop, src/graph/tuning.cc hwLat[NET]). */
Test(cost, tp_across_nodes_pays_the_network) {
  world w8, w16, w32;
  world_init(&w8, tu_model_llama70b(), tu_gpu_h200(), tu_engine_vllm(), dep(8, DT_FP8));
  world_init(&w16, tu_model_llama70b(), tu_gpu_h200(), tu_engine_vllm(), dep(16, DT_FP8));
  world_init(&w32, tu_model_llama70b(), tu_gpu_h200(), tu_engine_vllm(), dep(32, DT_FP8));
  const prof *p = bundled("h200_vllm-0.24.0");
  cost_set_profiles(&w8.c, p, NULL, NULL);
  cost_set_profiles(&w16.c, p, NULL, NULL);
  cost_set_profiles(&w32.c, p, NULL, NULL);
  cr_assert_eq(cost_nodes(&w8.c), 1);
  cr_assert_eq(cost_nodes(&w16.c), 2);
  cr_assert_eq(cost_nodes(&w32.c), 4);
  cr_assert_float_eq(cost_allreduce_network_ns(&w8.c, 512), 0, 0);
  for (uint32_t T = 1; T <= 4096; T *= 8) {
    double S = T * 8192.0 * 2, intra;
    cr_assert(prof_allreduce_ns(p, PROF_AR_NCCL, 8, S, &intra));
    double net16 = 2 * 1 * 5e3 + 2.0 * 1 / 2 * S / 8 / 50e9 * 1e9;
    double net32 = 2 * 3 * 5e3 + 2.0 * 3 / 4 * S / 8 / 50e9 * 1e9;
    cr_assert_float_eq(cost_allreduce_network_ns(&w16.c, T), net16, 1e-9 * net16);
    cr_assert_float_eq(cost_allreduce_ns(&w16.c, T, true, NULL), intra + net16, 1e-9 * (intra + net16), "T %u", T);
    cr_assert_float_eq(cost_allreduce_ns(&w32.c, T, true, NULL), intra + net32, 1e-9 * (intra + net32), "T %u", T);
    cr_assert_gt(cost_allreduce_ns(&w16.c, T, true, NULL), cost_allreduce_ns(&w8.c, T, true, NULL));
  }
  /* a group that does not take whole nodes is refused, naming both numbers */
  deploy_cfg d = dep(12, DT_FP8);
  d.gpus_per_node = 8;
  model_cfg m = tu_model_llama70b();
  m.q_heads = 96, m.kv_heads = 12; /* 12 divides the heads: only the node rule refuses it */
  gpu_cfg g = tu_gpu_h200();
  engine_cfg e = tu_engine_vllm();
  cost_model c;
  sim_err err = {0};
  cr_assert_eq(cost_init(&c, &m, &g, &e, &d, &err), SIM_EINPUT);
  cr_assert(strstr(err.msg, "TP group of 12 spanning nodes of 8 GPUs"), "%s", err.msg);
  cost_deinit(&w8.c), cost_deinit(&w16.c), cost_deinit(&w32.c);
}

/* vLLM runs the whole step's attention as one varlen call: the per-call floor
 * is paid once, not once for the decodes and once per prefill chunk. */
Test(cost, one_attention_call_per_step) {
  world w;
  world_init(&w, tu_model_llama70b(), tu_gpu_h200(), tu_engine_vllm(), dep(4, DT_BF16));
  cost_set_profiles(&w.c, bundled("h200_vllm-0.24.0"), NULL, NULL);
  double dec = cost_attn_decode_ns(&w.c, 16, 16 * 800, NULL);
  double c1 = cost_attn_prefill_ns(&w.c, 300, 0, NULL), c2 = cost_attn_prefill_ns(&w.c, 200, 900, NULL);
  prefill_chunk ch[2] = {{300, 0}, {200, 900}};
  batch_desc bd = {.num_tokens = 516, .num_seqs = 18, .num_decode = 16, .decode_ctx_tokens = 16 * 800,
                   .num_sample = 17, .num_prefill = 2, .prefills = ch};
  step_cost s;
  cost_step(&w.c, &bd, &s);
  double per_layer = (s.op_ns[OP_ATTN_DECODE] + s.op_ns[OP_ATTN_PREFILL]) / 80;
  cr_assert_float_eq(per_layer, dec + c1 + c2 - 2 * w.c.attn_floor_ns, 1e-9 * per_layer);
  cr_assert(w.c.attn_floor_ns > 1e3 && w.c.attn_floor_ns < 30e3, "floor %.0f ns", w.c.attn_floor_ns);
  cost_deinit(&w.c);
}

/* A chunk after a long context: its attention does the work of a prompt of
 * L tokens with L (L + 1) / 2 = c x + c (c + 1) / 2, and takes at least the
 * time of reading the whole context once. */
Test(cost, chunk_after_context_from_measured_tables) {
  world w;
  world_init(&w, tu_model_llama70b(), tu_gpu_h200(), tu_engine_vllm(), dep(4, DT_BF16));
  cost_set_profiles(&w.c, bundled("h200_vllm-0.24.0"), NULL, NULL);
  /* 2 new tokens after 8192: bounded by reading the context, not 2731 times a 2-token prompt */
  double t2 = cost_attn_prefill_ns(&w.c, 2, 8192, NULL);
  double read = cost_attn_decode_ns(&w.c, 1, 8194, NULL);
  cr_assert(t2 >= read && t2 < 3 * read, "chunk %.0f ns vs reading the context %.0f ns", t2, read);
  /* 4096 after 4096: the work of a 7094-token prompt, so between the 4096 and 8192 prompts */
  double tc = cost_attn_prefill_ns(&w.c, 4096, 4096, NULL);
  double lo = cost_attn_prefill_ns(&w.c, 4096, 0, NULL), hi = cost_attn_prefill_ns(&w.c, 8192, 0, NULL);
  cr_assert(tc > lo && tc < hi, "%.0f not in (%.0f, %.0f)", tc, lo, hi);
  /* more context, same chunk: slower */
  cr_assert(cost_attn_prefill_ns(&w.c, 512, 30000, NULL) > cost_attn_prefill_ns(&w.c, 512, 1000, NULL));
  cost_deinit(&w.c);
}

/* Elementwise kernels are each at least the kernel floor: at batch 1 the four
 * per layer (two residual-add + RMSNorm, RoPE, SiLU x up) cost 4 floors. */
Test(cost, elementwise_kernels_are_at_least_the_floor) {
  world w;
  world_init(&w, tu_model_llama70b(), tu_gpu_h200(), tu_engine_vllm(), dep(4, DT_BF16));
  step_cost s;
  cost_decode_step_ns(&w.c, 1, 100, &s);
  cr_assert_float_eq(s.op_ns[OP_ELEMENTWISE], (80 * 4 + 2) * 2.5e3, 1e-6);
  /* at 8192 tokens the bytes bind: 8192 x (8 x 8192 + 3 x 7168 + 2 x 18 x 128) x 2 B per layer at
   * 4.8 TB/s x 0.7 */
  cost_prefill_step_ns(&w.c, 8192, &s);
  double layer = 8192.0 * (8 * 8192 + 3 * 7168 + 2 * 18 * 128) * 2 / (4.8e12 * 0.7) * 1e9;
  double once = 8192.0 * 4 * 8192 * 2 / (4.8e12 * 0.7) * 1e9;
  cr_assert_float_eq(s.op_ns[OP_ELEMENTWISE], 80 * layer + once, 1e-6 * s.op_ns[OP_ELEMENTWISE]);
  cost_deinit(&w.c);
}

/* Pipeline parallelism: the stages split the step's per-layer time in
 * proportion to their layers (here 40 + 40), the first adds the embedding,
 * the last the LM head and sampler; the sends between stages follow
 * cost_pp_send_ns: each TP rank sends its 1/tp slice of hidden states and
 * residual (2 x T x H x 2 B), NVLink inside a node, the network across,
 * then the receiving group all-gathers. */
Test(cost, pipeline_stages_split_the_step_and_pay_the_sends) {
  world one, two, cross;
  deploy_cfg d = dep(4, DT_BF16);
  d.async_scheduling = 0;
  world_init(&one, tu_model_llama70b(), tu_gpu_h200(), tu_engine_vllm(), d);
  d.pp = 2;
  world_init(&two, tu_model_llama70b(), tu_gpu_h200(), tu_engine_vllm(), d);
  d.gpus_per_node = 4; /* the same, with one stage per node */
  world_init(&cross, tu_model_llama70b(), tu_gpu_h200(), tu_engine_vllm(), d);
  cr_assert_eq(two.c.pp, 2);
  cr_assert_eq(two.c.stage_layers[0], 40);
  cr_assert_not(cost_pp_hop_crosses_nodes(&two.c, 0));
  cr_assert(cost_pp_hop_crosses_nodes(&cross.c, 0));
  const uint32_t batches[] = {1, 8, 64, 512};
  for (size_t i = 0; i < sizeof batches / sizeof *batches; i++) {
    uint32_t b = batches[i];
    step_cost s1, s2, s3;
    cost_decode_step_ns(&one.c, b, 2048, &s1);
    cost_decode_step_ns(&two.c, b, 2048, &s2);
    cost_decode_step_ns(&cross.c, b, 2048, &s3);
    assert_sums(&s2);
    assert_sums(&s3);
    /* a decode batch replays a full graph: no launch floor; the stages hold the same work as one GPU group */
    double stages = s2.stage_ns[0] + s2.stage_ns[1];
    cr_assert_float_eq(stages, s1.gpu_ns, 1e-9 * s1.gpu_ns, "batch %u", b);
    cr_assert_float_eq(s2.gpu_ns, stages + s2.send_ns[0], 1e-9 * s2.gpu_ns);
    cr_assert_float_eq(s2.op_ns[OP_PP_SEND], s2.send_ns[0], 0);
    cr_assert_gt(s2.stage_ns[1], s2.stage_ns[0], "the last stage samples");
    double whole = 2.0 * b * 8192 * 2, per = 4;
    double gather = (per - 1) * 0 + (per - 1) / per * whole / (450e9 * two.e.allreduce_bw_eff) * 1e9 +
                    two.e.allreduce_latency_ns + (per - 1) * two.g.link_latency_ns;
    double nv = two.g.link_latency_ns + whole / per / 450e9 * 1e9 + gather;
    double net = 5e3 + whole / per / 50e9 * 1e9 + gather;
    cr_assert_float_eq(s2.send_ns[0], nv, 1e-9 * nv, "batch %u", b);
    cr_assert_float_eq(s3.send_ns[0], net, 1e-9 * net, "batch %u", b);
    cr_assert_float_eq(s2.send_ns[1], 0, 0, "no send after the last stage");
  }
  cost_deinit(&one.c), cost_deinit(&two.c), cost_deinit(&cross.c);
}

/* A fused-MoE table the database lacks at this TP (vLLM's fp8_block triton
 * MoE is measured at TP 1, 2 and 4): TP8 follows the kernel's own trend,
 * t(8) = t(4) x t(4) / t(2), and TP16 (two doublings past the table) t(4) x
 * (t(4) / t(2))^2, before any other kernel's table is tried. */
Test(cost, moe_tp_beyond_the_table_follows_its_trend) {
  model_cfg m = tu_model_llama70b();
  strcpy(m.name, "mixtral");
  m.hidden = 4096, m.intermediate = 14336, m.layers = 32, m.q_heads = 32, m.kv_heads = 8, m.head_dim = 128;
  m.vocab = 32000, m.tied_embeddings = false;
  m.experts = 8, m.experts_per_tok = 2, m.expert_inter = 14336, m.moe_freq = m.moe_step = 1, m.moe_layers = 32;
  const char *json =
      "{\"format\": \"servesim-profile\", \"version\": 2, \"gpu\": \"h100-sxm\", \"probes\": {\"copy_Bps\": 3.35e12, "
      "\"peak_flops\": {\"bf16\": 9.89e14}}, \"moe\": ["
      "{\"dtype\": \"bfloat16\", \"hidden\": 4096, \"inter\": 14336, \"topk\": 2, \"experts\": 8, \"tp\": 2, \"ep\": 1, "
      "\"distribution\": \"balanced\", \"tokens\": [1, 64], \"ns\": [400000, 800000]},"
      "{\"dtype\": \"bfloat16\", \"hidden\": 4096, \"inter\": 14336, \"topk\": 2, \"experts\": 8, \"tp\": 4, \"ep\": 1, "
      "\"distribution\": \"balanced\", \"tokens\": [1, 64], \"ns\": [300000, 500000]}]}";
  prof *p = NULL;
  sim_err err = {0};
  cr_assert_eq(prof_parse(&p, json, "moe.json", &err), SIM_OK, "%s", err.msg);
  world w8, w4;
  world_init(&w8, m, tu_gpu_h100(), tu_engine_vllm(), dep(8, DT_BF16));
  world_init(&w4, m, tu_gpu_h100(), tu_engine_vllm(), dep(4, DT_BF16));
  cost_set_profiles(&w8.c, p, NULL, NULL);
  cost_set_profiles(&w4.c, p, NULL, NULL);
  step_cost a8, a4;
  cost_decode_step_ns(&w8.c, 1, 512, &a8);
  cost_decode_step_ns(&w4.c, 1, 512, &a4);
  cr_assert_eq(w8.c.src_count[OP_MOE][SRC_PROFILE], 1);
  /* per layer: TP4 300 us (measured); TP8 300 x 300/400 = 225 us, plus the same router GEMM */
  double router4 = a4.op_ns[OP_MOE] / 32 - 300000.0, routed8 = a8.op_ns[OP_MOE] / 32 - router4;
  cr_assert_float_eq(routed8, 225000.0, 1500.0, "TP8 routed experts %.0f ns a layer", routed8);
  world w16;
  world_init(&w16, m, tu_gpu_h100(), tu_engine_vllm(), dep(16, DT_BF16));
  cost_set_profiles(&w16.c, p, NULL, NULL);
  step_cost a16;
  cost_decode_step_ns(&w16.c, 1, 512, &a16);
  cr_assert_eq(w16.c.src_count[OP_MOE][SRC_PROFILE], 1);
  double routed16 = a16.op_ns[OP_MOE] / 32 - router4;
  cr_assert_float_eq(routed16, 168750.0, 1500.0, "TP16 routed experts %.0f ns a layer (300 x 0.75^2 us)", routed16);
  cost_deinit(&w8.c), cost_deinit(&w4.c), cost_deinit(&w16.c);
  prof_free(p);
}

/* Attention data parallelism: DP2 x TP1 slices every expert over the 2 ranks
 * like TP2 does (moe_tp 2), while attention stays whole on each rank. A
 * rank's MoE layers see its own tokens plus its peer's (moe_peer_tokens), so
 * a busy peer lengthens the step; the MoE block's reduction is the DP
 * group's dispatch and combine (all-reduce volume over the 2 GPUs), and
 * plan's decode figure assumes every rank decodes the same batch. */
Test(cost, data_parallel_ranks_share_the_moe_layers) {
  model_cfg m = tu_model_llama70b();
  strcpy(m.name, "mixtral");
  m.hidden = 4096, m.intermediate = 14336, m.layers = 32, m.q_heads = 32, m.kv_heads = 8, m.head_dim = 128;
  m.vocab = 32000, m.tied_embeddings = false;
  m.experts = 8, m.experts_per_tok = 2, m.expert_inter = 14336, m.moe_freq = m.moe_step = 1, m.moe_layers = 32;
  deploy_cfg d = dep(1, DT_BF16);
  d.dp = 2;
  world w;
  world_init(&w, m, tu_gpu_h100(), tu_engine_vllm(), d);
  cr_assert_eq(w.c.shard.dp, 2);
  cr_assert_eq(w.c.shard.moe_tp, 2, "the experts over dp x tp");
  cr_assert_eq(w.c.shard.expert_inter, 7168);
  cr_assert_eq(w.c.shard.q_heads, 32, "attention whole on the rank");
  prefill_chunk ch = {4096, 0}; /* compute-bound experts: twice the tokens, about twice the time */
  batch_desc alone = {4096, 1, 0, 0, 1, 1, &ch, 0, 0, 0, 0, 0}, busy = alone;
  busy.moe_peer_tokens = 4096;
  step_cost a, b;
  cost_step(&w.c, &alone, &a);
  cost_step(&w.c, &busy, &b);
  assert_sums(&a);
  assert_sums(&b);
  cr_assert_gt(b.op_ns[OP_MOE], a.op_ns[OP_MOE] * 1.7, "twice the tokens through the experts: %g vs %g",
               b.op_ns[OP_MOE], a.op_ns[OP_MOE]);
  cr_assert_gt(b.op_ns[OP_ALLREDUCE], a.op_ns[OP_ALLREDUCE], "the dispatch and combine move the peer's tokens too");
  cr_assert_gt(a.op_ns[OP_ALLREDUCE], 0, "TP1, but the DP group communicates");
  cr_assert_float_eq(a.op_ns[OP_ATTN_PREFILL], b.op_ns[OP_ATTN_PREFILL], 0, "attention is the rank's own");
  /* plan's decode step: both ranks at the batch */
  step_cost d1;
  cost_decode_step_ns(&w.c, 8, 512, &d1);
  batch_desc dec = {8, 8, 8, 8 * 512, 8, 0, NULL, 8, 0, 0, 0, 0};
  step_cost d2;
  cost_step(&w.c, &dec, &d2);
  cr_assert_float_eq(d1.total_ns, d2.total_ns, 1e-6 * d1.total_ns);
  /* with the measured tables (bundled H100 vLLM 0.24.0): the dispatch and combine are NCCL's all_gather and
   * reduce_scatter of the 8192-token buffer (8192 x 4096 x 2 bytes), once per MoE layer */
  const prof *p = bundled("h100-sxm_vllm-0.24.0");
  cost_set_profiles(&w.c, p, NULL, NULL);
  cost_step(&w.c, &busy, &b);
  double ag, rs, bytes = 8192.0 * 4096 * 2;
  cr_assert(prof_allreduce_ns(p, PROF_AG_NCCL, 2, bytes, &ag) && prof_allreduce_ns(p, PROF_RS_NCCL, 2, bytes, &rs));
  cr_assert_float_eq(b.op_ns[OP_ALLREDUCE], 32 * (ag + rs), 1e-6 * 32 * (ag + rs), "%g vs %g", b.op_ns[OP_ALLREDUCE],
                     32 * (ag + rs));
  cost_deinit(&w.c);
}

/* Mixture of experts (Mixtral-8x7B shapes, every layer an MoE block): the FFN
 * time moves from the dense GEMMs to OP_MOE; without a table it is the
 * roofline of the experts a step reaches (balanced routing: 8 (1 - (3/4)^T)
 * of 8 for top-2), so a lone token streams 2 experts and a step of 64 all 8;
 * with the profile's fused-MoE table the table serves it. The memory plan
 * counts every expert: BF16 weights are 2 bytes x the parameter count. */
Test(cost, mixture_of_experts_blocks) {
  model_cfg m = tu_model_llama70b();
  strcpy(m.name, "mixtral");
  m.hidden = 4096, m.intermediate = 14336, m.layers = 32, m.q_heads = 32, m.kv_heads = 8, m.head_dim = 128;
  m.vocab = 32000, m.tied_embeddings = false;
  m.experts = 8, m.experts_per_tok = 2, m.expert_inter = 14336, m.moe_freq = m.moe_step = 1, m.moe_layers = 32;
  deploy_cfg d = dep(2, DT_BF16);
  d.async_scheduling = 0;
  world w;
  world_init(&w, m, tu_gpu_h100(), tu_engine_vllm(), d);
  cr_assert_eq(w.c.shard.expert_inter, 7168);
  step_cost s1, s64;
  cost_decode_step_ns(&w.c, 1, 512, &s1);
  cost_decode_step_ns(&w.c, 64, 512, &s64);
  assert_sums(&s1);
  cr_assert_float_eq(s1.op_ns[OP_GEMM_GATEUP] + s1.op_ns[OP_GEMM_DOWN], 0, 0, "no dense FFN layer");
  cr_assert_gt(s1.op_ns[OP_MOE], 0);
  /* memory-bound: the weights of the experts reached; 1 token: 2 experts, 64 tokens: 8 (1 - 0.75^64) */
  double hit64 = 8 * (1 - pow(0.75, 64));
  double r = s64.op_ns[OP_MOE] / s1.op_ns[OP_MOE];
  cr_assert(r > 0.9 * hit64 / 2 && r < 1.1 * hit64 / 2, "64 tokens vs 1: %g (experts %g vs 2)", r, hit64);
  cr_assert_eq(w.c.src_count[OP_MOE][SRC_ROOFLINE], 2);
  /* a measured table of this shape serves it */
  const char *json =
      "{\"format\": \"servesim-profile\", \"version\": 2, \"gpu\": \"h100-sxm\", \"probes\": {\"copy_Bps\": 3.35e12, "
      "\"peak_flops\": {\"bf16\": 9.89e14}}, \"moe\": [{\"dtype\": \"bfloat16\", \"hidden\": 4096, \"inter\": 14336, "
      "\"topk\": 2, \"experts\": 8, \"tp\": 2, \"ep\": 1, \"distribution\": \"balanced\", \"tokens\": [1, 64], "
      "\"ns\": [100000, 400000]}]}";
  prof *p = NULL;
  sim_err err = {0};
  cr_assert_eq(prof_parse(&p, json, "moe.json", &err), SIM_OK, "%s", err.msg);
  cost_set_profiles(&w.c, p, NULL, NULL);
  step_cost t1;
  cost_decode_step_ns(&w.c, 1, 512, &t1);
  cr_assert_gt(t1.op_ns[OP_MOE], 32 * 100000.0, "the table's 100 us per layer, plus the router GEMM");
  cr_assert_lt(t1.op_ns[OP_MOE], 32 * 110000.0);
  cr_assert_eq(w.c.src_count[OP_MOE][SRC_PROFILE], 1);
  cost_deinit(&w.c);
  prof_free(p);
  /* expert parallelism (--enable-expert-parallel): each of the 2 ranks holds 4 whole experts; the table of
     moe_tp 1, moe_ep 2 serves it, and the memory plan holds the same bytes as the TP split */
  d.expert_parallel = true;
  world we;
  world_init(&we, m, tu_gpu_h100(), tu_engine_vllm(), d);
  cr_assert_eq(we.c.shard.ep, 2);
  cr_assert_eq(we.c.shard.local_experts, 4);
  cr_assert_eq(we.c.shard.expert_inter, 14336, "whole experts");
  const char *json_ep =
      "{\"format\": \"servesim-profile\", \"version\": 2, \"gpu\": \"h100-sxm\", \"probes\": {\"copy_Bps\": 3.35e12, "
      "\"peak_flops\": {\"bf16\": 9.89e14}}, \"moe\": [{\"dtype\": \"bfloat16\", \"hidden\": 4096, \"inter\": 14336, "
      "\"topk\": 2, \"experts\": 8, \"tp\": 1, \"ep\": 2, \"distribution\": \"balanced\", \"tokens\": [1, 64], "
      "\"ns\": [70000, 300000]}]}";
  cr_assert_eq(prof_parse(&p, json_ep, "ep.json", &err), SIM_OK, "%s", err.msg);
  cost_set_profiles(&we.c, p, NULL, NULL);
  cost_decode_step_ns(&we.c, 1, 512, &t1);
  cr_assert_gt(t1.op_ns[OP_MOE], 32 * 70000.0);
  cr_assert_lt(t1.op_ns[OP_MOE], 32 * 80000.0, "the EP table, not the TP one");
  cost_deinit(&we.c);
  prof_free(p);
}

/* The kernel database times fused MoE with AIConfigurator's balanced router,
 * which spreads T tokens over min(E, T k) experts; independent tokens reach
 * E (1 - (1 - k/E)^T). A 32-token decode step of a gpt-oss-like layer (128
 * experts, top 4): the table's call reaches all 128 experts, real tokens 81.7
 * on average, so the call is lowered by 46.3 experts' reads at the table's
 * own cost per expert ((t(32) - t(1)) / (128 - 4)), never below the table at
 * the 21 tokens whose balanced spread reaches 81.7 experts. A skewed
 * (power-law) table is sampled per token already: used as measured. At one
 * token both routings reach k experts: no change. */
Test(cost, balanced_moe_tables_are_corrected_to_independent_routing) {
  model_cfg m = tu_model_llama70b();
  strcpy(m.name, "oss");
  m.hidden = 2880, m.intermediate = 2880, m.layers = 4, m.q_heads = 64, m.kv_heads = 8, m.head_dim = 64;
  m.vocab = 32000, m.tied_embeddings = false;
  m.experts = 128, m.experts_per_tok = 4, m.expert_inter = 2880, m.moe_freq = m.moe_step = 1, m.moe_layers = 4;
  const char *json =
      "{\"format\": \"servesim-profile\", \"version\": 2, \"gpu\": \"h200\", \"probes\": {\"copy_Bps\": 4.8e12, "
      "\"peak_flops\": {\"bf16\": 9.89e14}}, \"moe\": ["
      "{\"dtype\": \"bfloat16\", \"hidden\": 2880, \"inter\": 2880, \"topk\": 4, \"experts\": 128, \"tp\": 1, \"ep\": 1, "
      "\"distribution\": \"balanced\", \"tokens\": [1, 32, 512], \"ns\": [60000, 660000, 680000]},"
      "{\"dtype\": \"bfloat16\", \"hidden\": 2880, \"inter\": 2880, \"topk\": 4, \"experts\": 128, \"tp\": 1, \"ep\": 1, "
      "\"distribution\": \"power_law_1.2\", \"tokens\": [1, 32, 512], \"ns\": [60000, 660000, 680000]}]}";
  prof *p = NULL;
  sim_err err = {0};
  cr_assert_eq(prof_parse(&p, json, "moe.json", &err), SIM_OK, "%s", err.msg);
  deploy_cfg db = dep(1, DT_BF16), dp = dep(1, DT_BF16);
  dp.moe_routing = MOE_POWER_LAW_12;
  world wb, wp;
  world_init(&wb, m, tu_gpu_h200(), tu_engine_vllm(), db);
  world_init(&wp, m, tu_gpu_h200(), tu_engine_vllm(), dp);
  cost_set_profiles(&wb.c, p, NULL, NULL);
  cost_set_profiles(&wp.c, p, NULL, NULL);
  step_cost b32, p32, b1, p1;
  cost_decode_step_ns(&wb.c, 32, 512, &b32);
  cost_decode_step_ns(&wp.c, 32, 512, &p32);
  cost_decode_step_ns(&wb.c, 1, 512, &b1);
  cost_decode_step_ns(&wp.c, 1, 512, &p1);
  cr_assert_eq(wb.c.src_count[OP_MOE][SRC_PROFILE], 2, "both from the table");
  double cov = 128.0 * (1.0 - pow(1.0 - 4.0 / 128.0, 32.0)), per = (660000.0 - 60000.0) / 124.0;
  double lowered = 660000.0 - (128.0 - cov) * per, floor21 = 0;
  cr_assert(prof_moe_ns(p, "bfloat16", false, 21, 2880, 2880, 4, 128, 1, 1, "balanced", &floor21));
  double want = 660000.0 - fmax(lowered, floor21);
  double got = (p32.op_ns[OP_MOE] - b32.op_ns[OP_MOE]) / 4; /* per layer: the router GEMM is the same in both */
  cr_assert_float_eq(got, want, 1.0, "lowered by %.0f ns a layer, want %.0f (cover %.1f experts)", got, want, cov);
  cr_assert_gt(want, 150000.0, "a real correction");
  cr_assert_float_eq(p1.op_ns[OP_MOE], b1.op_ns[OP_MOE], 1e-6, "one token: k experts either way");
  cost_deinit(&wb.c), cost_deinit(&wp.c);
  prof_free(p);
}

/* NVFP4 (roofline, no tables): 0.5625 bytes per weight, so batch-1 GEMMs read 0.5625 / 2 of bf16's bytes; on
 * FP4 tensor cores (an H200 given a 4x fp4 peak here, standing in for a Blackwell part) a compute-bound GEMM
 * runs at that peak (activations quantized to FP4 too), while without them it is weight-only: dequantized
 * into the bf16 MMAs, slower than bf16 at large M like int4. */
Test(cost, nvfp4_is_w4a4_on_fp4_tensor_cores_and_weight_only_elsewhere) {
  world wb, w4h, w4b;
  gpu_cfg blackwell = tu_gpu_h200();
  blackwell.flops[DT_FP4] = 4.0 * blackwell.flops[DT_BF16];
  world_init(&wb, tu_model_llama70b(), tu_gpu_h200(), tu_engine_vllm(), dep(1, DT_BF16));
  world_init(&w4h, tu_model_llama70b(), tu_gpu_h200(), tu_engine_vllm(), dep(1, DT_FP4));
  world_init(&w4b, tu_model_llama70b(), blackwell, tu_engine_vllm(), dep(1, DT_FP4));
  step_cost sb, s4;
  cost_decode_step_ns(&wb.c, 1, 100, &sb);
  cost_decode_step_ns(&w4h.c, 1, 100, &s4);
  double r = gemm_sum(&s4) / gemm_sum(&sb);
  cr_assert(r > 0.275 && r < 0.29, "nvfp4/bf16 batch 1 %.4f (0.5625 / 2 = 0.28125)", r);
  double gb = cost_gemm_ns(&wb.c, OP_GEMM_GATEUP, 8192, NULL, NULL);
  double gh = cost_gemm_ns(&w4h.c, OP_GEMM_GATEUP, 8192, NULL, NULL);
  double gw = cost_gemm_ns(&w4b.c, OP_GEMM_GATEUP, 8192, NULL, NULL);
  cr_assert(gh > 1.2 * gb, "weight-only nvfp4 %.0f vs bf16 %.0f", gh, gb);
  cr_assert(gw < 0.3 * gb, "W4A4 on fp4 tensor cores %.0f vs bf16 %.0f", gw, gb);
  cost_deinit(&wb.c);
  cost_deinit(&w4h.c);
  cost_deinit(&w4b.c);
}

/* Block-scaled FP8 checkpoints: a profile's block-scaled grid serves their linears when it passes
 * cost_block_gemm_check (the bundled vLLM 0.14 and TensorRT-LLM tables), and the per-tensor grid does
 * when it fails (vLLM 0.24: host-bound timings, see cost.h); a per-tensor checkpoint never takes it. */
Test(cost, block_fp8_linears_take_the_block_grid_that_passes_its_check) {
  double r;
  cr_assert(cost_block_gemm_check(bundled("h200_vllm-0.14.0"), &r), "ratio %.2f", r);
  cr_assert(r > 1.5 && r < COST_BLOCK_CHECK_RATIO, "vLLM 0.14 triton block kernel: %.2f", r);
  cr_assert(cost_block_gemm_check(bundled("h200_trtllm-1.3.0rc20"), &r), "ratio %.2f", r);
  cr_assert_not(cost_block_gemm_check(bundled("h200_vllm-0.24.0"), &r), "ratio %.2f", r);
  cr_assert_gt(r, COST_BLOCK_CHECK_RATIO);
  for (int blk = 0; blk < 2; blk++) {
    model_cfg m = tu_model_llama70b();
    m.fp8_block = blk;
    world w;
    world_init(&w, m, tu_gpu_h200(), tu_engine_vllm(), dep(4, DT_FP8));
    const prof *p14 = bundled("h200_vllm-0.14.0"), *p24 = bundled("h200_vllm-0.24.0");
    cost_set_profiles(&w.c, p14, NULL, NULL);
    cost_src s;
    cost_bound bd;
    double got = cost_gemm_ns(&w.c, OP_GEMM_O, 16, &s, &bd), tab;
    uint32_t N = w.c.shard.n[SG_O], K = w.c.shard.k[SG_O];
    if (blk) cr_assert(prof_gemm_block_ns(p14, 16, N, K, &tab));
    else cr_assert(prof_gemm_ns(p14, DT_FP8, DT_FP8, 16, N, K, &tab));
    cr_assert_float_eq(got, tab, 1e-9 * tab, "fp8_block %d: %g vs %g", blk, got, tab);
    cr_assert_eq(s, SRC_PROFILE);
    /* the LM head stays in the activation dtype */
    double lm = cost_gemm_ns(&w.c, OP_LM_HEAD, 16, &s, &bd), lm_tab;
    cr_assert(prof_gemm_ns(p14, DT_BF16, DT_BF16, 16, w.c.shard.n[SG_LM_HEAD], w.c.shard.k[SG_LM_HEAD], &lm_tab));
    cr_assert_float_eq(lm, lm_tab, 1e-9 * lm_tab);
    cost_set_profiles(&w.c, p24, NULL, NULL); /* fails the check: per-tensor */
    got = cost_gemm_ns(&w.c, OP_GEMM_O, 16, &s, &bd);
    cr_assert(prof_gemm_ns(p24, DT_FP8, DT_FP8, 16, N, K, &tab));
    cr_assert_float_eq(got, tab, 1e-9 * tab, "vLLM 0.24: per-tensor %g vs %g", got, tab);
    cost_deinit(&w.c);
  }
}

/* MLA from the measured module tables (bundled H200 vLLM 0.24.0 companion): a DeepSeek-V3 FP8 (block) layer's
 * attention block is the generation module at the step's decodes and mean context, the projections are not
 * counted again, a prompt is the context module; per-tensor FP8 weights (no such table) keep the composition. */
Test(cost, mla_attention_blocks_from_measured_modules) {
  model_cfg m = tu_model_deepseek_v3(true);
  cr_assert(m.fp8_block && m.mla);
  world w;
  world_init(&w, m, tu_gpu_h200(), tu_engine_vllm(), dep(8, DT_FP8));
  const prof *own = bundled("h200_vllm-0.24.0"), *comp = bundled("h200_vllm-0.24.0.moe");
  cost_set_profiles(&w.c, own, NULL, NULL);
  cr_assert(cost_set_mla_modules(&w.c, comp), "16 heads per GPU, bf16 KV, fp8_block: measured");
  cr_assert_eq(w.c.mla_gen.heads, 16);
  /* 32 decodes at 2048 tokens each: OP_ATTN_DECODE is 61 layers of the measured module */
  step_cost s;
  cost_decode_step_ns(&w.c, 32, 2048, &s);
  double mod;
  cr_assert(prof_mla_module_ns(comp, &w.c.mla_gen, 32, 2048, &mod));
  cr_assert_float_eq(s.op_ns[OP_ATTN_DECODE], 61 * mod, 1e-6 * 61 * mod, "%g vs %g", s.op_ns[OP_ATTN_DECODE],
                     61 * mod);
  cr_assert_float_eq(s.op_ns[OP_GEMM_QKV] + s.op_ns[OP_GEMM_O], 0.0, 0, "projections are inside the module");
  assert_sums(&s);
  /* a prompt of 1024 tokens, nothing cached: the context module */
  double pre = cost_attn_prefill_ns(&w.c, 1024, 0, NULL), ctxm;
  cr_assert(prof_mla_module_ns(comp, &w.c.mla_ctx, 1, 1024, &ctxm));
  cr_assert_float_eq(pre, ctxm, 1e-9 * ctxm);
  /* after 4096 cached tokens it costs more, by the roofline of the cached work */
  cr_assert_gt(cost_attn_prefill_ns(&w.c, 1024, 4096, NULL), pre);
  /* without modules (per-tensor FP8: no fp8 module table) the composition returns */
  w.m.fp8_block = false;
  cr_assert_not(cost_set_mla_modules(&w.c, comp));
  cost_decode_step_ns(&w.c, 32, 2048, &s);
  cr_assert_gt(s.op_ns[OP_GEMM_QKV], 0.0);
  cost_deinit(&w.c);
}

/* DeepSeek sparse attention (DeepSeek-V3.2: V3's MLA dimensions, index_topk 2048, an indexer of 64 heads of 128)
 * from the kernel database's dsa_generation_module_perf (bundled H200 vLLM 0.24.0 companion): the row checked by
 * hand in h200_sxm/vllm-0.24.0/dsa_generation_module_perf.csv.gz, FLASHMLA_SPARSE, bf16 KV, fp8_block, 16 heads,
 * batch 32, step 2048: 0.2407 ms. A decode step's attention is 61 layers of it, the indexer and the top-k cap
 * inside (not added again); the same model without index_topk takes the plain MLA module instead. */
Test(cost, sparse_attention_blocks_from_measured_dsa_modules) {
  model_cfg m = tu_model_deepseek_v3(true);
  m.dsa_topk = 2048, m.dsa_heads = 64, m.dsa_head_dim = 128;
  world w;
  world_init(&w, m, tu_gpu_h200(), tu_engine_vllm(), dep(8, DT_FP8));
  const prof *comp = bundled("h200_vllm-0.24.0.moe");
  cost_set_profiles(&w.c, bundled("h200_vllm-0.24.0"), NULL, NULL);
  cr_assert(cost_set_mla_modules(&w.c, comp), "V3.2's sparse-attention block at 16 heads per GPU: measured");
  cr_assert_eq(w.c.mla_gen.topk, 2048);
  double mod;
  cr_assert(prof_mla_module_ns(comp, &w.c.mla_gen, 32, 2048, &mod));
  cr_assert_float_eq(mod, 240700.0, 1e-6, "%g", mod);
  step_cost s;
  cost_decode_step_ns(&w.c, 32, 2048, &s);
  cr_assert_float_eq(s.op_ns[OP_ATTN_DECODE], 61 * mod, 1e-6 * 61 * mod, "%g vs %g", s.op_ns[OP_ATTN_DECODE],
                     61 * mod);
  assert_sums(&s);
  w.m.dsa_topk = 0; /* plain MLA: the mla_*_module tables, another key */
  cr_assert(cost_set_mla_modules(&w.c, comp));
  double plain;
  cr_assert(prof_mla_module_ns(comp, &w.c.mla_gen, 32, 2048, &plain));
  cr_assert(plain != mod, "%g", plain);
  cost_deinit(&w.c);
}

/* The decode-attention memo (cost.h dec_memo) returns what the table lookup returns: the same decode call asked
 * twice, and every (batch, context) asked in random order, equals a fresh model's first answer; re-attaching the
 * profiles forgets it. */
Test(cost, decode_attention_memo_is_the_table_lookup) {
  world w, f;
  world_init(&w, tu_model_llama70b(), tu_gpu_h200(), tu_engine_vllm(), dep(4, DT_FP8));
  world_init(&f, tu_model_llama70b(), tu_gpu_h200(), tu_engine_vllm(), dep(4, DT_FP8));
  const prof *p = bundled("h200_vllm-0.24.0");
  cost_set_profiles(&w.c, p, NULL, NULL);
  uint64_t x = 12345;
  for (int i = 0; i < 2000; i++) {
    x = x * 6364136223846793005ull + 1442695040888963407ull;
    uint32_t batch = 1 + (uint32_t)(x >> 59), ctx = 1 + (uint32_t)((x >> 20) % 9000);
    cost_src s1, s2;
    double a = cost_attn_decode_ns(&w.c, batch, (uint64_t)batch * ctx, &s1);
    cost_set_profiles(&f.c, p, NULL, NULL); /* a fresh memo */
    double b = cost_attn_decode_ns(&f.c, batch, (uint64_t)batch * ctx, &s2);
    cr_assert_eq(a, b, "batch %u ctx %u: %.17g vs %.17g", batch, ctx, a, b);
    cr_assert_eq(s1, SRC_PROFILE);
  }
  cr_assert_not_null(w.c.dec_memo);
  cost_set_profiles(&w.c, p, NULL, NULL);
  cr_assert_null(w.c.dec_memo, "re-attaching the tables drops the memo");
  cost_deinit(&w.c), cost_deinit(&f.c);
}

/* A lockstep DP rank's wait (cost_step_wait) is GPU time in the dispatch
 * collective: gpu_ns and the all-reduce op grow by it, the sums still hold,
 * and with async scheduling the host time the step showed beyond its GPU
 * time shrinks by as much as the GPU time grew (max(gpu, cpu)). */
Test(cost, dp_wait_is_gpu_time_and_keeps_the_sums) {
  for (int async = 0; async <= 1; async++) {
    world *w = calloc(1, sizeof *w);
    engine_cfg e = tu_engine_vllm();
    e.step_overhead_ns = 3e6; /* host work longer than a 1-token step's GPU time */
    deploy_cfg d = dep(1, DT_BF16);
    d.async_scheduling = async;
    world_init(w, llama1b(), tu_gpu_h200(), e, d);
    batch_desc b = {.num_tokens = 1, .num_seqs = 1, .num_sample = 1, .num_decode = 1, .decode_ctx_tokens = 100};
    step_cost s, t;
    cost_step(&w->c, &b, &s);
    assert_sums(&s);
    t = s;
    double wait = 0.5 * s.gpu_ns;
    cost_step_wait(&w->c, &t, wait);
    assert_sums(&t);
    cr_assert_float_eq(t.gpu_ns, s.gpu_ns + wait, 1e-6);
    cr_assert_float_eq(t.stage_ns[0], s.stage_ns[0] + wait, 1e-6);
    cr_assert_float_eq(t.op_ns[OP_ALLREDUCE], s.op_ns[OP_ALLREDUCE] + wait, 1e-6);
    cr_assert_float_eq(t.cpu_ns, s.cpu_ns, 1e-9);
    if (async) {
      cr_assert_gt(s.op_ns[OP_CPU_OVERHEAD], wait, "the host showed beyond the GPU before the wait");
      cr_assert_float_eq(t.total_ns, s.total_ns, 1e-6, "max(gpu, cpu) is still the host's");
    } else {
      cr_assert_float_eq(t.total_ns, s.total_ns + wait, 1e-6);
    }
    step_cost u = t;
    cost_step_wait(&w->c, &u, 0);
    cr_assert_eq(memcmp(&u, &t, sizeof u), 0, "no wait changes nothing");
    cost_deinit(&w->c);
    free(w);
  }
}

/* Sliding-window layers from a window table (cost_set_window_tables): a decode step's attention is the full
 * layers' call plus the window layers' measured call (here an exact cell); without the table the window layers
 * cost the full-attention call at the capped context; a table of another window is not used. A prompt chunk's
 * window layers take the windowed prompt's measured time. */
Test(cost, sliding_window_layers_use_their_measured_tables) {
  model_cfg m = llama1b();
  m.sliding_window = 128;
  m.sliding_layers = 8;
  for (uint32_t i = 1; i < m.layers; i += 2) m.sliding_mask[i / 8] |= (uint8_t)(1u << (i % 8));
  world *w = calloc(1, sizeof *w);
  world_init(w, m, tu_gpu_h100(), tu_engine_vllm(), dep(1, DT_BF16));
  char json[1024];
  for (int window = 128; window <= 256; window += 128) {
    snprintf(json, sizeof json,
             "{\"format\": \"servesim-profile\", \"version\": 2, \"gpu\": \"h100-sxm\", \"probes\": {\"copy_Bps\": "
             "3.35e12, \"peak_flops\": {\"bf16\": 9.89e14}}, \"attn_decode\": [{\"kv_dtype\": \"bf16\", \"q_heads\": "
             "32, \"kv_heads\": 8, \"head_dim\": 64, \"window\": %d, \"batch\": [4], \"kv_len\": [1000], \"ns\": "
             "[[50000]]}], \"attn_context\": [{\"kv_dtype\": \"bf16\", \"q_heads\": 32, \"kv_heads\": 8, \"head_dim\": "
             "64, \"window\": %d, \"batch\": [1], \"isl\": [2048], \"ns\": [[90000]]}]}",
             window, window);
    prof *p = NULL;
    sim_err err = {0};
    cr_assert_eq(prof_parse(&p, json, "win.json", &err), SIM_OK, "%s", err.msg);
    batch_desc b = {.num_tokens = 4, .num_seqs = 4, .num_decode = 4, .decode_ctx_tokens = 4000, .num_sample = 4};
    step_cost without, with;
    cost_set_window_tables(&w->c, NULL, 0);
    cost_step(&w->c, &b, &without);
    cost_set_window_tables(&w->c, (const prof *const *)&p, 1);
    cost_step(&w->c, &b, &with);
    assert_sums(&with);
    double full = cost_attn_decode_ns(&w->c, 4, 4000, NULL), capped = cost_attn_decode_ns(&w->c, 4, 4 * 128, NULL);
    cr_assert_float_eq(without.op_ns[OP_ATTN_DECODE], 8 * full + 8 * capped, 1e-6 * full,
                       "no table: the capped context (%g)", without.op_ns[OP_ATTN_DECODE]);
    double want = window == 128 ? 8 * full + 8 * 50000.0 : without.op_ns[OP_ATTN_DECODE];
    cr_assert_float_eq(with.op_ns[OP_ATTN_DECODE], want, 1e-6 * want, "window %d: %g, want %g", window,
                       with.op_ns[OP_ATTN_DECODE], want);
    /* a 2048-token prompt: the window layers take the measured windowed prompt */
    prefill_chunk ch = {2048, 0};
    batch_desc pb = {.num_tokens = 2048, .num_seqs = 1, .num_prefill = 1, .prefills = &ch, .num_sample = 1};
    cost_set_window_tables(&w->c, NULL, 0);
    cost_step(&w->c, &pb, &without);
    cost_set_window_tables(&w->c, (const prof *const *)&p, 1);
    cost_step(&w->c, &pb, &with);
    double fullp = cost_attn_prefill_ns(&w->c, 2048, 0, NULL);
    want = window == 128 ? 8 * fullp + 8 * 90000.0 : without.op_ns[OP_ATTN_PREFILL];
    cr_assert_float_eq(with.op_ns[OP_ATTN_PREFILL], want, 1e-6 * want, "prefill, window %d: %g, want %g", window,
                       with.op_ns[OP_ATTN_PREFILL], want);
    cost_set_window_tables(&w->c, NULL, 0);
    prof_free(p);
  }
  cost_deinit(&w->c);
  free(w);
}

/* A lockstep DP group's agreement (batch_desc dp_mode, dp_pad; vLLM's coordinate_batch_across_dp): a rank's
 * linears run at the group's padded token count (a 1-token decode padded to 64 costs the GEMMs of 64 tokens, its
 * attention stays its own), and a mode below the batch's own (eager where it could replay a full graph) adds the
 * host's launches; a mode above the batch's own is ignored. */
Test(cost, dp_group_padding_and_agreed_mode) {
  world *w = calloc(1, sizeof *w);
  engine_cfg eng = tu_engine_vllm();
  eng.launch_overhead_ns_per_layer = 1e5; /* launches that outlast a small step's GPU time */
  world_init(w, llama1b(), tu_gpu_h100(), eng, dep(1, DT_BF16));
  batch_desc one = {.num_tokens = 1, .num_seqs = 1, .num_decode = 1, .decode_ctx_tokens = 512, .num_sample = 1};
  batch_desc many = {.num_tokens = 64, .num_seqs = 64, .num_decode = 64, .decode_ctx_tokens = 64 * 512,
                     .num_sample = 64};
  step_cost own, padded, wide, eager;
  cr_assert_eq(cost_graph_mode(&w->c, &one), 2, "a decode replays a full graph");
  cost_step(&w->c, &one, &own);
  cost_step(&w->c, &many, &wide);
  batch_desc p = one;
  p.dp_mode = 3, p.dp_pad = 64;
  cost_step(&w->c, &p, &padded);
  assert_sums(&padded);
  cr_assert_float_eq(padded.op_ns[OP_GEMM_QKV], wide.op_ns[OP_GEMM_QKV], 1e-9 * wide.op_ns[OP_GEMM_QKV],
                     "the padded rank's QKV GEMM is the 64-token one");
  cr_assert_float_eq(padded.op_ns[OP_ATTN_DECODE], own.op_ns[OP_ATTN_DECODE], 1e-9 * own.op_ns[OP_ATTN_DECODE],
                     "its attention is its own sequence's");
  cr_assert_gt(padded.op_ns[OP_GEMM_QKV], own.op_ns[OP_GEMM_QKV]);
  batch_desc e = one;
  e.dp_mode = 1, e.dp_pad = 64; /* eager: no padding */
  cost_step(&w->c, &e, &eager);
  assert_sums(&eager);
  cr_assert_float_eq(eager.op_ns[OP_GEMM_QKV], own.op_ns[OP_GEMM_QKV], 1e-9 * own.op_ns[OP_GEMM_QKV]);
  cr_assert_gt(eager.op_ns[OP_LAUNCH], 0, "an eager step pays the host's launches");
  cr_assert_eq(own.op_ns[OP_LAUNCH], 0);
  prefill_chunk ch = {2048, 0};
  batch_desc pre = {.num_tokens = 2048, .num_seqs = 1, .num_prefill = 1, .prefills = &ch, .num_sample = 1};
  step_cost a, b;
  cost_step(&w->c, &pre, &a);
  pre.dp_mode = 3; /* full, above the batch's own (eager: 2048 tokens exceed the capture sizes): ignored */
  cost_step(&w->c, &pre, &b);
  cr_assert_eq(memcmp(a.op_ns, b.op_ns, sizeof a.op_ns), 0);
  cost_deinit(&w->c);
  free(w);
}

/* A decode attention call answered from the memo (by batch and mean context) names the bound its own context
 * gives, as the uncached formulas do: checked across the context where the roofline turns from memory- to
 * compute-bound (attention efficiency set so the compute time per cached token is 1.001 x the memory time:
 * at batch 4 of Llama-3.1-70B at TP1 that is at 32,000 tokens, kv_len 8,000, inside the memo). */
Test(cost, memoized_decode_attention_names_the_bound_of_its_context) {
  world w;
  engine_cfg e = tu_engine_vllm();
  gpu_cfg g = tu_gpu_h200();
  model_cfg m = tu_model_llama70b();
  /* per cached token: memory 2 kv_heads hd 2 bytes / (bw ed), compute 4 q_heads hd / (flops ea) */
  double mem_per_tok = 2.0 * m.kv_heads * m.head_dim * 2.0 / (g.hbm_Bps * e.attn_decode_eff);
  e.attn_prefill_eff = 4.0 * m.q_heads * m.head_dim / (g.flops[DT_BF16] * 1.001 * mem_per_tok);
  world_init(&w, m, g, e, dep(1, DT_BF16));
  const prof *p = bundled("h200_vllm-0.24.0");
  cost_set_profiles(&w.c, p, NULL, NULL);
  uint32_t seen[BOUND_COUNT] = {0};
  for (uint64_t C = 31900; C <= 32100; C++) {
    cost_src s1, s2;
    cost_bound b1, b2;
    cost__memo_clear(&w.c);
    double t1 = cost__attn_decode_eval(&w.c, 4, C, &s1, &b1); /* computed (and memoized) */
    cr_assert_eq(s1, SRC_PROFILE, "the bundled table serves batch 4");
    double t2 = cost__attn_decode_eval(&w.c, 4, C, &s2, &b2); /* from the memo */
    cr_assert_eq(t1, t2);
    cr_assert_eq(b1, b2, "C = %llu", (unsigned long long)C);
    /* a neighbour's context with the same kv_len, answered from this one's memo entry */
    cost_bound b3, b4;
    double t3 = cost__attn_decode_eval(&w.c, 4, C + 1, &s2, &b3);
    cost__memo_clear(&w.c);
    double t4 = cost__attn_decode_eval(&w.c, 4, C + 1, &s2, &b4);
    cr_assert_eq(t3, t4);
    cr_assert_eq(b3, b4, "C = %llu", (unsigned long long)C + 1);
    seen[b1]++;
  }
  cr_assert(seen[BOUND_MEMORY] > 0 && seen[BOUND_COMPUTE] > 0, "the scan crosses the bound (%u memory, %u compute)",
            seen[BOUND_MEMORY], seen[BOUND_COMPUTE]);
  cost_deinit(&w.c);
}

/* Whole decode-only steps from the step memo (cost_decstep.c) equal the sums computed afresh, field by field and
 * bit for bit, with the same source counts: random batches and contexts asked again and again (hits), a context
 * scan across the attention bound (the engine tuned as above so that it flips near 32,000 tokens at batch 4),
 * contexts beyond the attention memo, and mixed steps that the memo does not keep; with and without async
 * scheduling, TP 1 and 4. */
Test(cost, decode_step_memo_returns_the_computed_step) {
  const prof *p = bundled("h200_vllm-0.24.0");
  for (int v = 0; v < 3; v++) {
    engine_cfg e = tu_engine_vllm();
    model_cfg m = tu_model_llama70b();
    gpu_cfg g = tu_gpu_h200();
    deploy_cfg d = dep(v == 2 ? 4 : 1, DT_BF16);
    d.async_scheduling = v == 1 ? 0 : 1;
    if (v == 0) {
      double mem_per_tok = 2.0 * m.kv_heads * m.head_dim * 2.0 / (g.hbm_Bps * e.attn_decode_eff);
      e.attn_prefill_eff = 4.0 * m.q_heads * m.head_dim / (g.flops[DT_BF16] * 1.001 * mem_per_tok);
    }
    world w, f;
    world_init(&w, m, g, e, d);
    world_init(&f, m, g, e, d);
    cost_set_profiles(&w.c, p, NULL, NULL);
    cost_set_profiles(&f.c, p, NULL, NULL);
    uint64_t x = 777 + (uint64_t)v;
    prefill_chunk ch = {.chunk_tokens = 300, .ctx_tokens = 40};
    for (int i = 0; i < 6000; i++) {
      x = x * 6364136223846793005ull + 1442695040888963407ull;
      uint32_t B = 1 + (uint32_t)(x >> 59) % 31;
      uint64_t C = (uint64_t)B * (1 + (x >> 20) % 40) + (x >> 40) % B; /* few shapes: each asked again */
      if (i >= 3000 && i < 4000) B = 4, C = 28500 + (uint64_t)i; /* across the bound; 4 contexts share a kv_len */
      if (i >= 4000 && i < 4200) B = 2, C = 2ull * COST_DEC_MEMO_L + (uint64_t)i; /* beyond the memo */
      if (i >= 5500) B = 1 + (uint32_t)(x >> 59) % 31, C = (uint64_t)B * (1 + (x >> 20) % 8000); /* mostly new */
      bool mixed = i % 97 == 0;
      batch_desc b = {.num_tokens = B, .num_seqs = B, .num_decode = B, .decode_ctx_tokens = C, .num_sample = B};
      if (mixed) b.num_tokens += 300, b.num_seqs++, b.num_sample++, b.num_prefill = 1, b.prefills = &ch;
      step_cost s1, s2;
      cost_step(&w.c, &b, &s1);
      cost__memo_clear(&f.c); /* no attention memo, so no step memo: computed */
      cost_step(&f.c, &b, &s2);
      cr_assert_null(f.c.dec_step);
      cr_assert(s1.total_ns == s2.total_ns && s1.gpu_ns == s2.gpu_ns && s1.cpu_ns == s2.cpu_ns &&
                    s1.stage_ns[0] == s2.stage_ns[0] && s1.send_ns[0] == s2.send_ns[0],
                "v %d step %d (B %u C %llu): %.17g vs %.17g", v, i, B, (unsigned long long)C, s1.total_ns, s2.total_ns);
      for (int op = 0; op < OP_COUNT; op++) cr_assert(s1.op_ns[op] == s2.op_ns[op], "step %d op %d", i, op);
      for (int bd = 0; bd < BOUND_COUNT; bd++) cr_assert(s1.bound_ns[bd] == s2.bound_ns[bd], "step %d bound %d", i, bd);
    }
    cr_assert_not_null(w.c.dec_step, "the memo was used");
    cr_assert_gt(w.c.dec_hits, 3000, "v %d: %llu hits", v, (unsigned long long)w.c.dec_hits);
    cr_assert(!memcmp(w.c.src_count, f.c.src_count, sizeof w.c.src_count), "v %d: the same sources counted", v);
    cost_set_profiles(&w.c, p, NULL, NULL);
    cr_assert_null(w.c.dec_step, "re-attaching the tables drops it");
    cost_deinit(&w.c), cost_deinit(&f.c);
  }
}

/* Where misses prevail (every step a new shape), the table stops being asked after its trial: no more misses are
 * counted, and the steps still equal the computed ones. */
Test(cost, decode_step_memo_stops_where_it_misses) {
  const prof *p = bundled("h200_vllm-0.24.0");
  world w, f;
  world_init(&w, tu_model_llama70b(), tu_gpu_h200(), tu_engine_vllm(), dep(4, DT_FP8));
  world_init(&f, tu_model_llama70b(), tu_gpu_h200(), tu_engine_vllm(), dep(4, DT_FP8));
  cost_set_profiles(&w.c, p, NULL, NULL);
  cost_set_profiles(&f.c, p, NULL, NULL);
  for (uint32_t i = 0; i < 12000; i++) {
    uint32_t B = 1 + i % 31;
    batch_desc b = {.num_tokens = B, .num_seqs = B, .num_decode = B, .decode_ctx_tokens = (uint64_t)B * (1 + i / 31),
                    .num_sample = B};
    step_cost s1, s2;
    cost_step(&w.c, &b, &s1);
    cost__memo_clear(&f.c);
    cost_step(&f.c, &b, &s2);
    cr_assert(s1.total_ns == s2.total_ns && s1.op_ns[OP_ATTN_DECODE] == s2.op_ns[OP_ATTN_DECODE], "step %u", i);
  }
  cr_assert_eq(w.c.dec_hits, 0);
  cr_assert(w.c.dec_misses >= 4096 && w.c.dec_misses < 4200, "%llu misses: it stopped asking",
            (unsigned long long)w.c.dec_misses);
  cr_assert(!memcmp(w.c.src_count, f.c.src_count, sizeof w.c.src_count));
  cost_deinit(&w.c), cost_deinit(&f.c);
}

/* Layer kinds with attention shapes of their own (Gemma 4's full layers: model_cfg.full_*): the attention of the
 * kind's layers is the model-shape call scaled by the kind's KV elements per token on one GPU (decode) and its head
 * dim (prefill). Every layer here is full, the full kind 2 KV heads x 128 against the model's 8 x 64: half the KV
 * elements, twice the head dim, so the decode attention halves and the prefill attention doubles against the same
 * model without kinds; a model without kinds gets a factor of 1. */
Test(cost, attention_of_layer_kinds_scales_from_the_model_shapes) {
  model_cfg m = llama1b();
  world a, b;
  world_init(&a, m, tu_gpu_h200(), tu_engine_vllm(), dep(1, DT_BF16));
  cr_assert_eq(cost__attn_kind_factor(&a.c, false, true), 1.0);
  m.full_head_dim = 128, m.full_kv_heads = 2, m.full_k_eq_v = true; /* head_dim 64, 8 KV heads */
  world_init(&b, m, tu_gpu_h200(), tu_engine_vllm(), dep(1, DT_BF16));
  cr_assert_float_eq(cost__attn_kind_factor(&b.c, false, true), 0.5, 1e-12);
  cr_assert_float_eq(cost__attn_kind_factor(&b.c, false, false), 2.0, 1e-12);
  cr_assert_float_eq(cost__attn_kind_factor(&b.c, true, true), 1.0, 1e-12, "no sliding kind of its own");
  batch_desc dec = {.num_tokens = 16, .num_seqs = 16, .num_decode = 16, .decode_ctx_tokens = 16 * 2048,
                    .num_sample = 16};
  prefill_chunk ch = {1024, 0};
  batch_desc pre = {.num_tokens = 1024, .num_seqs = 1, .num_sample = 1, .num_prefill = 1, .prefills = &ch};
  step_cost sa, sb;
  cost_step(&a.c, &dec, &sa), cost_step(&b.c, &dec, &sb);
  cr_assert_float_eq(sb.op_ns[OP_ATTN_DECODE], 0.5 * sa.op_ns[OP_ATTN_DECODE], 1e-6 * sa.op_ns[OP_ATTN_DECODE]);
  cost_step(&a.c, &pre, &sa), cost_step(&b.c, &pre, &sb);
  cr_assert_float_eq(sb.op_ns[OP_ATTN_PREFILL], 2.0 * sa.op_ns[OP_ATTN_PREFILL], 1e-6 * sa.op_ns[OP_ATTN_PREFILL]);
  cost_deinit(&a.c);
  cost_deinit(&b.c);
}
