/* cost.c: the cost model: the time of one engine step from its batch_desc
 * (see cost.h for the terms and their sources).
 *
 * Everything here is per GPU of a TP group (model/shard.h). Times are double
 * ns; the caller rounds.
 *
 * How a GEMM computes on GPU g (the dtype path of its weights, the key of its
 * table, the bytes and peak of its roofline): cost_gemm.c.
 *
 * Roofline fallback (no profile): t = max(t_c, t_m), t_c = flops / (peak x
 * gemm_compute_eff), t_m = bytes / (HBM x gemm_memory_eff) for GEMMs;
 * attention likewise with attn_prefill_eff / attn_decode_eff. The bound of an
 * op is the larger of the two on THIS GPU's datasheet, whatever served it.
 *
 * Scaled profile (another GPU type's): the time is scaled by the datasheet
 * ratio of the bound resource (peak FLOP/s or HBM bandwidth).
 *
 * All-reduce, bytes S = T x H x act_b per call:
 *   profile: the engine's kernel (PROF_AR_CUSTOM_GRAPH when the step replays
 *   graphs, PROF_AR_CUSTOM_EAGER otherwise), else NCCL's table; otherwise the
 *   formula: the cheaper of one-shot (sw + (t-1) hop + (t-1) S / bw) and ring
 *   (sw + 2 (t-1) hop + 2 (t-1)/t S / bw), bw = link_Bps x allreduce_bw_eff,
 *   sw = allreduce_latency_ns, hop = link_latency_ns.
 *   Which one (deploy->allreduce): AR_TABLE, AR_LINK, or AR_AUTO: the table
 *   unless, for a 16 MiB message at the node-local GPU count, it takes more
 *   than 3x the link formula's time (bus bandwidth below a third of the
 *   link's: GPUs without peer-to-peer access, i.e. another machine's
 *   topology); decided once per profile attach (cost_allreduce_check).
 *
 * Elementwise, per layer: n = elementwise_kernels_per_layer kernels moving
 *   act_b x T x (8 H        two residual-add + RMSNorm: read x, read
 *                           residual, write residual, write normed
 *              + 3 I_g      SiLU(gate) x up: read 2 I_g, write I_g (an ungated
 *                           MLP's activation: read I_g, write I_g)
 *              + 2 (qh_g + kvh_g) hd)  RoPE on q and k, read + write
 *   bytes; time = max(n x kernel_floor, bytes / (HBM x elementwise_eff)).
 *   (The KV-cache write belongs to the measured attention call, the FP8
 *   quantization of a GEMM input to the measured W8A8 GEMM.) Once per step:
 *   embedding gather and final norm, 2 kernels over 4 H act_b bytes a token.
 * Nemotron-H's blocks (a layer is a mixer or an MLP, not both): QKV and O
 *   over the attention layers, the MLP over the MLP layers, one all-reduce per
 *   block, and the elementwise terms and host launches of half a layer per
 *   block (one norm and residual add each: first principles, no table).
 * Sampler: SAMPLER_PASSES passes over num_sample x V fp32 logits (vLLM
 *   gathers the full vocabulary), at least one kernel floor each.
 *
 * Kernel floor: the profile's measured time of a 1 x 128 x 128 bf16 GEMM (the
 * smallest kernel of a kernel-db grid, replayed in a CUDA graph); else the
 * engine file's kernel_floor_ns. Attention floor: the profile's 2-token
 * single-sequence decode call; else the kernel floor.
 *
 * Invariant: op_ns and bound_ns of a step_cost each sum to total_ns (up to
 * rounding of double additions). */
#include "hw/cost.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "config/engver.h"
#include "hw/cost_decstep.h"
#include "hw/cost_draft.h"
#include "hw/cost_dsv4.h"
#include "hw/cost_gemm.h"
#include "hw/cost_linattn.h"
#include "hw/cost_inplace.h"
#include "hw/cost_state.h"

#define SAMPLER_PASSES 3.0    /* fp32 passes over the logits: cast/temperature, softmax, sample */
#define MEMO_MIN 512u

void cost_graph_sizes_text(const cost_model *c, char *buf, size_t n) {
  size_t k = (size_t)snprintf(buf, n, "%s", graph_mode_name(c->engine->graph_mode));
  if (k >= n) return;
  if (!c->n_graph_sizes) {
    snprintf(buf + k, n - k, ", no capture sizes (every step eager)");
    return;
  }
  k += (size_t)snprintf(buf + k, n - k, ", %u capture sizes:", c->n_graph_sizes);
  for (uint32_t i = 0; i < c->n_graph_sizes && k < n; i++) {
    if (c->n_graph_sizes > 10 && i == 6) { /* first six, then the last two */
      k += (size_t)snprintf(buf + k, n - k, " ...");
      i = c->n_graph_sizes - 3;
      continue;
    }
    k += (size_t)snprintf(buf + k, n - k, "%s %u", i ? "," : "", c->graph_sizes[i]);
  }
}

/* ---- elementwise ------------------------------------------------------------------ */

static double elem_layer_bytes_per_token(const cost_model *c) {
  const model_shard *s = &c->shard;
  double H = s->hidden, hd = s->head_dim;
  return act_b(c) * (8.0 * H + (c->model->mlp_ungated ? 2.0 : 3.0) * s->inter + 2.0 * (s->q_heads + s->kv_heads) * hd);
}


/* ---- the T-dependent part ---------------------------------------------------------- */

static void tpart_compute(const cost_model *c, uint32_t T, bool graphed, cost_memo *r) {
  memset(r, 0, sizeof *r);
  double L = c->model->layers, Lm = c->model->moe_layers, Ll = c->model->lin_layers;
  /* Nemotron-H's blocks: layers without a mixer have no QKV/O, layers without an FFN no MLP; one all-reduce and
     half a layer's norms and residual adds per block */
  double Lnm = c->model->nomix_layers, Lnf = c->model->noffn_layers, Lblk = 2.0 * L - Lnm - Lnf;
  for (int op = OP_GEMM_QKV; op <= OP_GEMM_DOWN; op++) {
    cost_src s;
    cost_bound b;
    if (c->mla_module && (op == OP_GEMM_QKV || op == OP_GEMM_O)) { /* inside the measured MLA module */
      r->src[op] = SRC_PROFILE;
      continue;
    }
    bool ffn = op == OP_GEMM_GATEUP || op == OP_GEMM_DOWN; /* dense layers only */
    /* QKV, O: the attention layers */
    double ns = ffn && c->model->ffn_classes ? cost__ffn_classes_eval(c, (cost_op)op, T, &s, &b)
                                             : cost__gemm_eval(c, (cost_op)op, T, &s, &b) * (ffn ? L - Lm - Lnf : L - Ll - Lnm);
    r->op_ns[op] += ns;
    r->bound_ns[b] += ns;
    r->src[op] = (uint8_t)s;
  }
  if (c->shard.mla && !c->mla_module) { /* q_b and kv_b (decode absorbs kv_b into the query and output: the same
                                             weights and flops) */
    cost_src s;
    cost_bound b, b2;
    const model_shard *sh = &c->shard;
    double qb = cost__gemm_shape_eval(c, OP_GEMM_QKV, T, sh->qb_n, sh->qb_k, false, &s, &b);
    double kvb = cost__gemm_shape_eval(c, OP_GEMM_QKV, T, sh->kvb_n, sh->kvb_k, false, &s, &b2);
    r->op_ns[OP_GEMM_QKV] += (qb + kvb) * L;
    r->bound_ns[b] += qb * L;
    r->bound_ns[b2] += kvb * L;
  }
  if (c->model->dsv4) { /* DeepSeek-V4's compressors and indexer queries */
    cost_bound b;
    double ns = cost__dsv4_proj_ns(c, T, &b);
    r->op_ns[OP_GEMM_QKV] += ns, r->bound_ns[b] += ns;
  }
  if (Ll > 0) { /* linear-attention layers' in_proj (q, k, v, gate, b, a) and out_proj */
    cost_src s;
    cost_bound b, b2;
    const model_shard *sh = &c->shard;
    double in = cost__gemm_shape_eval(c, OP_GEMM_QKV, T, sh->lin_in_n, sh->lin_in_k, false, &s, &b) * Ll;
    double out = cost__gemm_shape_eval(c, OP_GEMM_O, T, sh->lin_out_n, sh->lin_out_k, false, &s, &b2) * Ll;
    r->op_ns[OP_GEMM_QKV] += in, r->op_ns[OP_GEMM_O] += out;
    r->bound_ns[b] += in, r->bound_ns[b2] += out;
  }
  if (Lm > 0 && c->shard.dp <= 1) { /* with data parallelism: per step, from every rank's tokens (dp_moe) */
    cost_src s;
    cost_bound b;
    double ns = cost__moe_eval(c, T, T, &s, &b) * Lm;
    r->op_ns[OP_MOE] += ns;
    r->bound_ns[b] += ns;
    r->src[OP_MOE] = (uint8_t)s;
  }
  cost_src ars;
  double ar = cost__allreduce_eval(c, T, graphed, &ars) * Lblk; /* one after each block: 2 a layer but Nemotron-H's */
  if (c->shard.dp > 1 && Lm > 0) /* the MoE layers' TP all-reduce becomes the DP group's dispatch and combine */
    ar -= cost__allreduce_eval(c, T, graphed, &ars) * Lm;
  r->op_ns[OP_ALLREDUCE] = ar;
  r->bound_ns[BOUND_COMM] += ar;
  r->src[OP_ALLREDUCE] = (uint8_t)ars;
  double el = 0;
  if (T) {
    /* a measured MLA module holds its own RoPE: one kernel fewer outside it */
    double kpl = c->engine->elementwise_kernels_per_layer - (c->mla_module && c->engine->elementwise_kernels_per_layer >= 1);
    el = Lblk / 2.0 * cost__kernels_ns(c, kpl, (double)T * elem_layer_bytes_per_token(c)); /* L but Nemotron-H's */
    r->once_ns = cost__kernels_ns(c, 2.0, (double)T * 4.0 * c->model->hidden * act_b(c));
    el += r->once_ns;
  }
  r->op_ns[OP_ELEMENTWISE] = el;
  r->bound_ns[BOUND_MEMORY] += el;
  r->src[OP_ELEMENTWISE] = SRC_ROOFLINE;
  for (int op = 0; op < OP_COUNT; op++) r->ns += r->op_ns[op];
  r->valid = true;
}

static const cost_memo *tpart(cost_model *c, uint32_t T, bool graphed, cost_memo *scratch) {
  if (T < c->memo_len) {
    cost_memo *mm = &c->memo[graphed][T];
    if (!mm->valid) {
      tpart_compute(c, T, graphed, mm);
      if (T >= c->memo_top[graphed]) c->memo_top[graphed] = (size_t)T + 1;
    }
    return mm;
  }
  tpart_compute(c, T, graphed, scratch);
  return scratch;
}

/* ---- setup -------------------------------------------------------------------------- */

static int bad_eff(sim_err *err, const engine_cfg *e, const char *field, double v) {
  return sim_errf(err, SIM_EINPUT, "engine %s: %s: must be > 0 and <= 1.5 (got %g)", e->name, field, v);
}

static int check_inputs(const model_cfg *m, const gpu_cfg *g, const engine_cfg *e, const deploy_cfg *d,
                        sim_err *err) {
  if (!m->hidden || !m->intermediate || !m->layers || !m->q_heads || !m->kv_heads || !m->head_dim || !m->vocab)
    return sim_errf(err, SIM_EINPUT, "model %s: hidden, intermediate, layers, heads, head_dim and vocab must be > 0",
                    m->name);
  if ((unsigned)d->act_dtype >= DT_COUNT || (unsigned)d->weight_dtype >= DT_COUNT ||
      (unsigned)d->kv_dtype >= DT_COUNT)
    return sim_errf(err, SIM_EINPUT, "deployment: unknown dtype");
  if (!(g->hbm_Bps > 0)) return sim_errf(err, SIM_EINPUT, "gpu %s: hbm_Bps: must be > 0", g->name);
  if (!(g->flops[d->act_dtype] > 0))
    return sim_errf(err, SIM_EINPUT, "gpu %s: flops: no %s tensor-core peak given", g->name,
                    dtype_name(d->act_dtype));
  if (d->tp > 1 && !(g->link_Bps > 0))
    return sim_errf(err, SIM_EINPUT, "gpu %s: link_Bps: must be > 0 for tensor parallelism", g->name);
  uint32_t gpn = d->gpus_per_node;
  if (d->pp > CFG_MAX_PP || d->pp > m->layers)
    return sim_errf(err, SIM_EINPUT, "deployment: pipeline_parallel_size %u is out of range 1..%u", d->pp,
                    SIM_MIN(CFG_MAX_PP, m->layers));
  if (d->pp > 1 && deploy_gpus(d) > gpn && !(g->net_Bps > 0))
    return sim_errf(err, SIM_EINPUT, "gpu %s: pipeline stages on several nodes need a network (network_bandwidth_gb_s > 0)",
                    g->name);
  if (d->tp > gpn && (d->tp % gpn || !(g->net_Bps > 0) || !(g->net_latency_ns >= 0)))
    return sim_errf(err, SIM_EINPUT,
                    "gpu %s: a TP group of %u spanning nodes of %u GPUs needs whole nodes and a network "
                    "(network_bandwidth_gb_s > 0)",
                    g->name, d->tp, gpn);
  const struct {
    const char *name;
    double v;
  } effs[] = {{"gemm_compute_eff", e->gemm_compute_eff}, {"gemm_memory_eff", e->gemm_memory_eff},
              {"attn_prefill_eff", e->attn_prefill_eff}, {"attn_decode_eff", e->attn_decode_eff},
              {"elementwise_eff", e->elementwise_eff},   {"allreduce_bw_eff", e->allreduce_bw_eff}};
  for (size_t i = 0; i < SIM_ARRAY_LEN(effs); i++)
    if (!(effs[i].v > 0 && effs[i].v <= 1.5)) return bad_eff(err, e, effs[i].name, effs[i].v);
  if (e->step_overhead_ns < 0 || e->per_seq_overhead_ns < 0 || e->launch_overhead_ns_per_layer < 0 ||
      e->stream_per_seq_ns < 0 || e->allreduce_latency_ns < 0 || e->kernel_floor_ns < 0 || e->elementwise_kernels_per_layer < 0)
    return sim_errf(err, SIM_EINPUT, "engine %s: overheads, latencies and kernel counts must be >= 0", e->name);
  return SIM_OK;
}

int cost_init(cost_model *c, const model_cfg *m, const gpu_cfg *g, const engine_cfg *e, const deploy_cfg *d,
              sim_err *err) {
  SIM_ASSERT(d->resolved); /* cfg_resolve filled every setting: none is defaulted here */
  memset(c, 0, sizeof *c);
  int rc = check_inputs(m, g, e, d, err);
  if (rc) return rc;
  c->model = m, c->gpu = g, c->engine = e, c->deploy = d;
  shard_init_dp(&c->shard, m, d->tp, deploy_dp(d), deploy_ep(d));
  for (int k = 0; k < 4; k++) c->attn_kind_f[k / 2][k % 2] = cost__attn_kind_factor(c, k / 2, k % 2);
  c->pp = d->pp;
  for (uint32_t k = 0; k < c->pp; k++) c->stage_layers[k] = shard_pp_layers(m->layers, c->pp, k);
  uint32_t mnbt = d->max_num_batched_tokens;
  uint32_t mns = d->max_num_seqs;
  c->n_graph_sizes = engver_graph_sizes_on(e, g, d->tp * deploy_dp(d), mns, mnbt, c->graph_sizes, COST_MAX_GRAPH_SIZES);
  if (c->n_graph_sizes) { /* the first size >= n, looked up once per step: a table, not a search */
    uint32_t top = c->graph_sizes[c->n_graph_sizes - 1];
    c->graph_of = sim_calloc((size_t)top + 1, sizeof *c->graph_of);
    for (uint32_t v = 1, i = 0; v <= top; c->graph_of[v++] = c->graph_sizes[i]) i += c->graph_sizes[i] < v;
  }
  size_t n = SIM_MAX(SIM_MAX(mnbt, mns), MEMO_MIN);
  c->memo_len = n + 1;
  c->memo[0] = sim_calloc(c->memo_len, sizeof *c->memo[0]);
  c->memo[1] = sim_calloc(c->memo_len, sizeof *c->memo[1]);
  c->lm_memo = sim_calloc(c->memo_len, sizeof *c->lm_memo);
  cost__dec_step_init(c);
  c->kernel_floor_ns = e->kernel_floor_ns;
  c->attn_floor_ns = e->kernel_floor_ns;
  c->ar_table = d->allreduce != AR_LINK;
  return SIM_OK;
}

void cost_set_profiles(cost_model *c, const prof *own, const prof *other, const gpu_cfg *other_gpu) {
  c->profile = own;
  c->mla_module = false, c->mla_prof = NULL; /* cost_set_mla_modules attaches them again */
  c->gdn_prof = NULL; /* cost_set_gdn_tables attaches them again */
  c->scaled_profile = other_gpu ? other : NULL;
  c->scaled_gpu = other ? other_gpu : NULL;
  c->ar_table = c->deploy->allreduce != AR_LINK;
  ar_check chk;
  if (c->deploy->allreduce == AR_AUTO && cost_allreduce_check(c, &chk) && chk.implausible) c->ar_table = false;
  double r;
  c->block_own = own && cost_block_gemm_check(own, &r);
  c->block_scaled = c->scaled_profile && cost_block_gemm_check(c->scaled_profile, &r);
  c->kernel_floor_ns = c->engine->kernel_floor_ns;
  c->attn_floor_ns = c->engine->kernel_floor_ns;
  if (own) cost__floors_from(c, own);
  /* a MIG slice's launch floors are its whole GPU's (a 1 x 128 x 128 GEMM is launch latency, not SMs) */
  else if (other && other_gpu && c->gpu->mig_parent[0] && !strcmp(c->gpu->mig_parent, other_gpu->name))
    cost__floors_from(c, other);
  c->fp8_requant_ns[0] = cost__fp8_requant_ns(c, own);
  c->fp8_requant_ns[1] = cost__fp8_requant_ns(c, c->scaled_profile);
  cost__memo_clear(c);
  for (size_t i = 0; i < c->lm_top; i++) c->lm_memo[i].valid = false;
  c->lm_top = 0;
}

int cost_new(cost_model **out, const model_cfg *m, const gpu_cfg *g, const engine_cfg *e, const deploy_cfg *d,
             sim_err *err) {
  cost_model *c = sim_calloc(1, sizeof *c);
  int rc = cost_init(c, m, g, e, d, err);
  if (rc) {
    cost_deinit(c);
    free(c);
    c = NULL;
  }
  *out = c;
  return rc;
}

void cost_free(cost_model *c) {
  if (!c) return;
  cost_deinit(c);
  free(c);
}

void cost_set_moe_alternates(cost_model *c, const prof *const *alt, int n) {
  c->n_moe_alt = 0;
  for (int i = 0; i < n && i < 5; i++) c->moe_alt[c->n_moe_alt++] = alt[i];
  cost__memo_clear(c);
}

void cost_deinit(cost_model *c) {
  free(c->memo[0]);
  free(c->memo[1]);
  free(c->lm_memo);
  free(c->dec_memo);
  free(c->dec_step);
  free(c->graph_of);
  memset(c, 0, sizeof *c);
}

/* ---- one step ------------------------------------------------------------------------- */

static void add(step_cost *out, cost_op op, cost_bound b, double ns) {
  out->op_ns[op] += ns;
  out->bound_ns[b] += ns;
}

uint32_t cost_graph_size(const cost_model *c, uint32_t n) { return cost__graph_size(c, n); }

typedef enum exec_mode { EXEC_EAGER = 0, EXEC_PIECEWISE, EXEC_FULL } exec_mode;

static exec_mode mode_of(const cost_model *c, const batch_desc *b) {
  if (c->n_graph_sizes == 0 || b->num_tokens > c->graph_sizes[c->n_graph_sizes - 1]) return EXEC_EAGER;
  graph_mode g = c->engine->graph_mode;
  bool decode_only = b->num_prefill == 0;
  if (decode_only && (g == GRAPH_DECODE_ONLY || g == GRAPH_FULL_AND_PIECEWISE)) return EXEC_FULL;
  if (g == GRAPH_PIECEWISE || g == GRAPH_FULL_AND_PIECEWISE) return EXEC_PIECEWISE;
  return EXEC_EAGER;
}

int cost_graph_mode(const cost_model *c, const batch_desc *b) { return (int)mode_of(c, b); }

/* The linear-attention layers' recurrence (cost_linattn.c): one decode call and one varlen prefill call per
 * layer, added to the attention ops. Not counted in src_count (a step counts each op's source once: the
 * full-attention call's); the model's warning says these kernels are priced from first principles. */
static void linear_attention(cost_model *c, const batch_desc *b, double Ll, step_cost *out) {
  if (b->num_decode > 0) {
    add(out, OP_ATTN_DECODE, BOUND_MEMORY, cost__lin_decode(c, b->num_decode) * Ll);
  }
  if (b->num_prefill > 0) {
    uint64_t tokens = 0;
    uint32_t longest = 0;
    for (uint32_t i = 0; i < b->num_prefill; i++) {
      tokens += b->prefills[i].chunk_tokens;
      if (b->prefills[i].chunk_tokens > longest) longest = b->prefills[i].chunk_tokens;
    }
    cost_bound bd;
    double ns = cost__lin_prefill(c, tokens, b->num_prefill, longest, &bd);
    add(out, OP_ATTN_PREFILL, bd, ns * Ll);
  }
}

/* Attention of the step: the decode call and every chunk, one varlen call
 * (the per-call floor paid once). */
static void attention(cost_model *c, const batch_desc *b, step_cost *out) {
  const model_cfg *m = c->model;
  double L = m->layers, Ls = m->sliding_layers, Ll = m->lin_layers, Lc = m->csa_layers, Lh = m->hca_layers;
  double sum = 0, largest = 0, slide_dec = 0, slide_pre = 0, comp_dec = 0, comp_pre = 0; /* comp: V4's CSA, HCA */
  if (Ll > 0) linear_attention(c, b, Ll, out);
  uint32_t parts = 0;
  double part_ns[2] = {0, 0}; /* decode, prefill (per layer) */
  cost_bound part_b[2] = {BOUND_MEMORY, BOUND_COMPUTE};
  cost_src s;
  cost_bound bd;
  /* sparse attention: the top-k keys of each query, and the indexer (inside a measured sparse-attention module) */
  bool dsa = m->dsa_topk > 0 && !c->mla_module;
  if (b->num_decode > 0) {
    uint64_t ctx = dsa ? cost__dsa_decode_ctx(c, b->num_decode, b->decode_ctx_tokens) : b->decode_ctx_tokens;
    double ns = cost__attn_decode_eval(c, b->num_decode, ctx, &s, &bd);
    if (dsa) add(out, OP_ATTN_DECODE, BOUND_MEMORY, cost__dsa_index_decode(c, b->num_decode, b->decode_ctx_tokens) * L);
    part_ns[0] = ns, part_b[0] = bd;
    c->src_count[OP_ATTN_DECODE][s]++;
    sum += ns, parts++;
    if (ns > largest) largest = ns;
    cost_src s2;
    if (Ls > 0) slide_dec = cost__attn_window_decode(c, b->num_decode, b->decode_ctx_tokens, &s2);
    if (Lc + Lh > 0) { /* DeepSeek-V4: each compressed layer's window and entries; the CSA indexer */
      uint64_t xc = cost__dsv4_decode_ctx(c, b->num_decode, b->decode_ctx_tokens, m->csa_ratio);
      uint64_t xh = cost__dsv4_decode_ctx(c, b->num_decode, b->decode_ctx_tokens, m->hca_ratio);
      comp_dec = (Lc ? cost__attn_decode_eval(c, b->num_decode, xc, &s2, &bd) * Lc : 0) +
                 (Lh ? cost__attn_decode_eval(c, b->num_decode, xh, &s2, &bd) * Lh : 0);
      add(out, OP_ATTN_DECODE, BOUND_MEMORY, cost__dsv4_index_decode(c, b->num_decode, b->decode_ctx_tokens) * Lc);
    }
  }
  for (uint32_t i = 0; i < b->num_prefill; i++) {
    uint32_t ch = b->prefills[i].chunk_tokens, x = b->prefills[i].ctx_tokens;
    double ns = cost__attn_prefill_eval(c, ch, x, &s, &bd);
    if (dsa) {
      ns *= cost__dsa_prefill_share(c, ch, x);
      add(out, OP_ATTN_PREFILL, BOUND_COMPUTE, cost__dsa_index_prefill(c, ch, x) * L);
    }
    part_ns[1] += ns;
    if (bd == BOUND_MEMORY) part_b[1] = BOUND_MEMORY;
    c->src_count[OP_ATTN_PREFILL][s]++;
    sum += ns, parts++;
    if (ns > largest) largest = ns;
    cost_src s2;
    if (Ls > 0) slide_pre += cost__attn_window_prefill(c, ch, x, ns, &s2);
    if (Lc + Lh > 0) {
      comp_pre += ns * (Lc * cost__dsv4_prefill_share(c, ch, x, m->csa_ratio) +
                        Lh * cost__dsv4_prefill_share(c, ch, x, m->hca_ratio));
      add(out, OP_ATTN_PREFILL, BOUND_COMPUTE, cost__dsv4_index_prefill(c, ch, x) * Lc);
    }
  }
  if (parts == 0) return;
  double f = sum > 0 ? 1.0 : 0, merged; /* the saving, shared in proportion (one call: none, sum / sum = 1) */
  if (parts > 1 && sum > 0) {
    merged = sum - (parts - 1) * (c->mla_module ? c->mla_floor_ns : c->attn_floor_ns);
    f = (merged < largest ? largest : merged) / sum;
  }
  double Lf = L - Ls - Ll - m->nomix_layers - Lc - Lh; /* full-attention layers (Nemotron-H: its '*' blocks) */
  /* layer kinds with shapes of their own (Gemma 4, MiMo): each kind's calls scaled from the model's shapes */
  double fd = c->attn_kind_f[0][1], fp = c->attn_kind_f[0][0], sd = c->attn_kind_f[1][1], sp = c->attn_kind_f[1][0];
  if (part_ns[0] > 0) add(out, OP_ATTN_DECODE, part_b[0], (part_ns[0] * Lf * fd + slide_dec * Ls * sd + comp_dec) * f);
  if (part_ns[1] > 0) add(out, OP_ATTN_PREFILL, part_b[1], (part_ns[1] * Lf * fp + slide_pre * Ls * sp + comp_pre) * f);
}

/* Splits the step's GPU time into pipeline stages (one stage without PP), adds each stage's launch floor and
 * the sends between stages; op_ns holds the whole model's time on entry, *sum gets its total. True if it added. */
static bool stages(cost_model *c, const batch_desc *b, exec_mode mode, uint32_t Tg, double once, step_cost *out,
                   double *sum) {
  const engine_cfg *e = c->engine;
  double L = c->model->layers, lm = out->op_ns[OP_LM_HEAD], all = *sum = cost__sum_ops(out->op_ns);
  bool added = false;
  double layered = all - lm - once; /* the part proportional to layers */
  bool host_launches = mode != EXEC_FULL && b->num_tokens > 0 && e->launch_overhead_ns_per_layer > 0;
  bool blocks = c->model->nomix_layers || c->model->noffn_layers;
  for (uint32_t k = 0, first = 0; k < c->pp; first += c->stage_layers[k++]) {
    double ns;
    if (c->pp == 1) {
      ns = all;
    } else {
      ns = layered * c->stage_layers[k] / L;
      if (k == 0) ns += once / 2; /* embedding gather */
      if (k + 1 == c->pp) ns += once / 2 + lm; /* final norm, LM head, sampler */
    }
    if (host_launches) {
      /* the host launches the stage's layers: its GPU cannot run ahead of it */
      /* Nemotron-H: a layer is one block, half a layer's kernels */
      double lay = blocks ? cfg_model_blocks_in(c->model, first, c->stage_layers[k]) / 2.0 : c->stage_layers[k];
      double issue = e->launch_overhead_ns_per_layer * lay;
      if (issue > ns) {
        add(out, OP_LAUNCH, BOUND_CPU, issue - ns);
        ns = issue, added = true;
      }
    }
    out->stage_ns[k] = ns;
    if (k + 1 < c->pp) {
      out->send_ns[k] = cost_pp_send_ns(c, Tg, k);
      add(out, OP_PP_SEND, BOUND_COMM, out->send_ns[k]);
      added = true;
    }
  }
  if (host_launches) c->src_count[OP_LAUNCH][SRC_ROOFLINE]++;
  if (c->pp > 1 && Tg > 0) c->src_count[OP_PP_SEND][SRC_ROOFLINE]++;
  return added;
}

/* Attention data parallelism: the MoE layers of a step and the DP group's
 * dispatch and combine, from this rank's T (padded to its graph size) and the
 * other ranks' tokens; not memoized (they depend on the peers). */
static void dp_moe(cost_model *c, uint32_t T, uint32_t peers, step_cost *out) {
  double Lm = c->model->moe_layers;
  if (c->shard.dp <= 1 || Lm <= 0 || !T) return;
  cost_src s, cs;
  cost_bound bd;
  double moe = cost__moe_eval(c, T, T + peers, &s, &bd) * Lm;
  add(out, OP_MOE, bd, moe);
  add(out, OP_ALLREDUCE, BOUND_COMM, cost__dp_collective_ns(c, T + peers, &cs) * Lm);
  c->src_count[OP_MOE][s]++;
  c->src_count[OP_ALLREDUCE][cs]++;
}

/* Speculative decoding's draft (docs/SPECDEC.md). EAGLE, EAGLE-3 and MTP draft with one decoder layer of the
 * target's shape and the LM head (vLLM v1/spec_decode/eagle.py, propose: the first pass runs the head over every
 * token the step computed, with the target's hidden states; the num_speculative_tokens - 1 later passes over one
 * token per speculating sequence; each pass attends to the sequences' caches in the head's own layer, and ends in
 * the LM head and a greedy argmax). The layer costs what one of the target's layers costs at that M (the memoized
 * GEMMs, MoE, all-reduces and elementwise kernels of all layers, over the layers; a MoE target's MTP layer is a MoE
 * layer), its attention one decode call over the speculating sequences' contexts. ngram drafts on the host (vLLM
 * ngram_proposer.py, numba): no GPU term, and its host time is not modelled. */
static void spec_draft(cost_model *c, const batch_desc *b, bool graphed, step_cost *out) {
  spec_method m = c->deploy->spec_method;
  uint32_t k = c->deploy->num_speculative_tokens, B = b->spec_seqs;
  if (m == SPEC_DRAFT_MODEL && B && k) {
    cost__draft_model(c, b, graphed, out); /* cost_draft.c */
    return;
  }
  if ((m != SPEC_EAGLE && m != SPEC_EAGLE3 && m != SPEC_MTP) || !B || !k) return;
  double L = c->model->layers, bound[BOUND_COUNT] = {0}, total = 0;
  cost_src s;
  cost_bound bd;
  uint64_t ctx = b->decode_ctx_tokens * B / (b->num_decode ? b->num_decode : 1); /* the speculating ones' share */
  double attn = cost__attn_decode_eval(c, B, ctx, &s, &bd);
  /* the draft's LM head and its greedy argmax. An EAGLE-3 head with its own vocabulary (draft_vocab_size in its
     config.json, e.g. 32000 of Llama-3.1's 128256) multiplies at that size, then vLLM's llama_eagle3.py
     compute_logits spreads the logits over the target's vocabulary (arange, add of the d2t offsets, a -inf fill of
     batch x vocab, the scatter) before propose's argmax over the whole of it: five kernels, the fill and the argmax
     over the target's vocabulary, the scatter over the draft's. */
  double Vt = c->model->vocab, Vd = c->deploy->spec_draft_vocab;
  double lm = Vd > 0 ? cost__gemm_shape_eval(c, OP_LM_HEAD, B, shard_vocab((uint32_t)Vd, c->shard.tp),
                                             c->shard.k[SG_LM_HEAD], false, &s, &bd) +
                           cost__kernels_ns(c, 5, (double)B * 4.0 * (2.0 * Vt + 2.0 * Vd))
                     : cost__gemm_eval(c, OP_LM_HEAD, B, &s, &bd) + cost__kernels_ns(c, 1, (double)B * Vt * 4.0);
  for (uint32_t p = 0; p < k; p++) {
    uint32_t M = p == 0 ? b->num_tokens : B, Mg = graphed ? cost_graph_size(c, M) : M;
    cost_memo scratch;
    const cost_memo *tp = tpart(c, Mg, graphed, &scratch);
    for (int q = 0; q < BOUND_COUNT; q++)
      bound[q] += (tp->bound_ns[q] - (q == BOUND_MEMORY ? tp->once_ns : 0)) / L;
    total += (tp->ns - tp->once_ns) / L;
    bound[bd] += attn + lm;
    total += attn + lm;
  }
  out->op_ns[OP_SPEC_DRAFT] += total;
  for (int q = 0; q < BOUND_COUNT; q++) out->bound_ns[q] += bound[q];
  c->src_count[OP_SPEC_DRAFT][s]++;
}

static void step_compute(cost_model *c, const batch_desc *b, step_cost *out) {
  /* every field a reader may read, not the stages beyond pp (a whole-struct memset was a fifth of this function) */
  out->total_ns = out->gpu_ns = out->cpu_ns = out->stage_ns[0] = out->send_ns[0] = 0;
  for (uint32_t k = 1; k < c->pp; k++) out->stage_ns[k] = out->send_ns[k] = 0;
  const engine_cfg *e = c->engine;
  exec_mode mode = mode_of(c, b);
  if (b->dp_mode && (exec_mode)(b->dp_mode - 1) < mode) mode = (exec_mode)(b->dp_mode - 1);
  uint32_t T = b->num_tokens, Tg = mode == EXEC_EAGER ? T : cost_graph_size(c, T);
  if (mode != EXEC_EAGER && b->dp_pad > Tg) Tg = b->dp_pad; /* a lockstep DP group pads every rank to its largest */
  double once = 0;
  /* element by element: a memset or memcpy of these small arrays compiles to rep stos/movs, whose start-up
   * cost was a tenth of this function, and stalls the loads of single elements right after */
  if (Tg > 0) { /* copied, not added to zeros: the same bits (0 + x = x for the non-negative times here) */
    cost_memo scratch;
    const cost_memo *tp = tpart(c, Tg, mode != EXEC_EAGER, &scratch);
    once = tp->once_ns;
    for (int op = 0; op < OP_COUNT; op++) out->op_ns[op] = tp->op_ns[op];
    for (int bd = 0; bd < BOUND_COUNT; bd++) out->bound_ns[bd] = tp->bound_ns[bd];
    for (int op = OP_GEMM_QKV; op <= OP_GEMM_DOWN; op++) c->src_count[op][tp->src[op]]++;
    if (c->model->moe_layers && c->shard.dp <= 1) c->src_count[OP_MOE][tp->src[OP_MOE]]++;
    if (tp_of(c) > 1) c->src_count[OP_ALLREDUCE][tp->src[OP_ALLREDUCE]]++;
    c->src_count[OP_ELEMENTWISE][SRC_ROOFLINE]++;
    dp_moe(c, Tg, b->moe_peer_tokens, out);
  } else {
    for (int op = 0; op < OP_COUNT; op++) out->op_ns[op] = 0;
    for (int bd = 0; bd < BOUND_COUNT; bd++) out->bound_ns[bd] = 0;
  }
  attention(c, b, out);
  /* logits of every sampling sequence, and of each draft position verified (vLLM's rejection sampler reads the
     target's probabilities at every draft position and the bonus one: v1/sample/rejection_sampler.py) */
  uint32_t n_logits = b->num_sample + b->spec_tokens;
  if (n_logits > 0) {
    cost_lm_memo fresh, *lm = n_logits < c->memo_len ? &c->lm_memo[n_logits] : &fresh;
    if (lm == &fresh || !lm->valid) {
      cost_src s;
      cost_bound bd;
      lm->gemm_ns = cost__gemm_eval(c, OP_LM_HEAD, n_logits, &s, &bd);
      double logits = (double)n_logits * c->model->vocab * 4.0 * SAMPLER_PASSES;
      lm->sampler_ns = cost__kernels_ns(c, SAMPLER_PASSES, logits);
      lm->src = (uint8_t)s, lm->bound = (uint8_t)bd, lm->valid = true;
      if (lm != &fresh && n_logits >= c->lm_top) c->lm_top = (size_t)n_logits + 1;
    }
    add(out, OP_LM_HEAD, (cost_bound)lm->bound, lm->gemm_ns);
    add(out, OP_LM_HEAD, BOUND_MEMORY, lm->sampler_ns);
    c->src_count[OP_LM_HEAD][lm->src]++;
  }
  if (b->spec_seqs) spec_draft(c, b, mode != EXEC_EAGER, out);
  double gpu;
  if (stages(c, b, mode, Tg, once, out, &gpu)) gpu = cost__sum_ops(out->op_ns); /* else the sum stages took */
  double cpu = e->step_overhead_ns + e->per_seq_overhead_ns * b->num_seqs;
  double stream = e->stream_per_seq_ns * b->num_sample; /* the output path's stage: steps last >= this (cost.h) */
  bool async = c->deploy->async_scheduling > 0;
  cpu = async ? fmax(cpu, stream) : fmax(cpu, stream - gpu); /* total = max(gpu [+ cpu], stream) */
  double cpu_shown = async ? (cpu > gpu ? cpu - gpu : 0) : cpu;
  if (cpu > 0) c->src_count[OP_CPU_OVERHEAD][SRC_ROOFLINE]++;
  add(out, OP_CPU_OVERHEAD, BOUND_CPU, cpu_shown);
  out->gpu_ns = gpu;
  out->cpu_ns = cpu;
  out->total_ns = gpu + cpu_shown;
}

void cost_step(cost_model *c, const batch_desc *b, step_cost *out) {
  cost_dec_key k;
  if (cost__dec_step_get(c, b, out, &k)) return; /* cost_decstep.c */
  step_compute(c, b, out);
  cost__dec_step_put(c, &k, out);
}

/* ---- components ------------------------------------------------------------------------ */

double cost_gemm_ns(cost_model *c, cost_op op, uint32_t M, cost_src *src, cost_bound *bound) {
  cost_src s;
  cost_bound b;
  double ns = cost__gemm_eval(c, op, M, &s, &b);
  if (src) *src = s;
  if (bound) *bound = b;
  return ns;
}

double cost_decode_step_ns(cost_model *c, uint32_t batch, uint32_t ctx, step_cost *out) {
  batch_desc b = {.num_tokens = batch,
                  .num_seqs = batch,
                  .num_decode = batch,
                  .decode_ctx_tokens = (uint64_t)batch * ctx,
                  .num_sample = batch,
                  .moe_peer_tokens = (c->shard.dp - 1) * batch}; /* every DP rank decoding the same batch */
  step_cost tmp;
  step_cost *o = out ? out : &tmp;
  cost_step(c, &b, o);
  return o->total_ns;
}

double cost_verify_step_ns(cost_model *c, uint32_t batch, uint32_t ctx, uint32_t drafts, step_cost *out) {
  batch_desc b = {.num_tokens = batch * (1 + drafts),
                  .num_seqs = batch,
                  .num_decode = batch,
                  .decode_ctx_tokens = (uint64_t)batch * (ctx + 1 + drafts), /* as serve/sched.c describes a verify */
                  .num_sample = batch,
                  .moe_peer_tokens = (c->shard.dp - 1) * batch * (1 + drafts),
                  .spec_seqs = drafts ? batch : 0,
                  .spec_tokens = batch * drafts};
  step_cost tmp;
  step_cost *o = out ? out : &tmp;
  cost_step(c, &b, o);
  return o->total_ns;
}

double cost_prefill_step_ns(cost_model *c, uint32_t tokens, step_cost *out) {
  if (tokens < 2) return cost_decode_step_ns(c, 1, 1, out); /* one token is a decode */
  prefill_chunk ch = {.chunk_tokens = tokens, .ctx_tokens = 0};
  batch_desc b = {.num_tokens = tokens, .num_seqs = 1, .num_sample = 1, .num_prefill = 1, .prefills = &ch};
  step_cost tmp;
  step_cost *o = out ? out : &tmp;
  cost_step(c, &b, o);
  return o->total_ns;
}

const char *cost_op_name(cost_op op) {
  static const char *const n[OP_COUNT] = {"gemm_qkv",     "gemm_o",      "gemm_gate_up", "gemm_down",
                                          "lm_head",      "attn_prefill", "attn_decode", "allreduce",
                                          "elementwise",  "cpu_overhead", "launch",      "pp_send",
                                          "moe",          "spec_draft"};
  return (unsigned)op < OP_COUNT ? n[op] : "?";
}

const char *cost_src_name(cost_src s) {
  static const char *const n[SRC_COUNT] = {"profile", "profile_scaled", "roofline"};
  return (unsigned)s < SRC_COUNT ? n[s] : "?";
}

const char *cost_bound_name(cost_bound b) {
  static const char *const n[BOUND_COUNT] = {"compute", "memory", "comm", "cpu"};
  return (unsigned)b < BOUND_COUNT ? n[b] : "?";
}

cost_info cost_info_of(const cost_model *c) {
  return (cost_info){c->model, c->gpu, c->engine, c->deploy, &c->shard, c->ar_table};
}

uint32_t cost_pp(const cost_model *c) { return c->pp; }

const prof *cost_profile(const cost_model *c) { return c->profile; }

void cost_src_counts(const cost_model *c, uint64_t out[OP_COUNT][SRC_COUNT]) {
  memcpy(out, c->src_count, sizeof c->src_count);
}

void cost_set_src_counts(cost_model *c, const uint64_t in[OP_COUNT][SRC_COUNT]) {
  memcpy(c->src_count, in, sizeof c->src_count);
}

void cost_step_table_counts(const cost_model *c, uint64_t *hits, uint64_t *misses) {
  *hits = c->dec_hits;
  *misses = c->dec_misses;
}
