/* plan.c: the arithmetic of one deployment (see plan.h): memory plan, largest
 * batch, decode and prefill step times from the cost model, the classic
 * weights-and-bandwidth check, and the four gates. Sizes print in GiB (2^30)
 * where they are device memory and in GB (1e9) for the classic check, as the
 * datasheets and the usual back-of-envelope write them. */
#include "config/mig.h"
#include "config/specdec.h"
#include "plan/plan.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "hw/prof.h"
#include "runner/profsel.h"
#include "core/jsonw.h"
#include "runner/bottleneck.h"

#define GIB (1024.0 * 1024.0 * 1024.0)

static const limit_kind of_bound[BOUND_COUNT] = {LIMIT_COMPUTE, LIMIT_HBM, LIMIT_INTERCONNECT, LIMIT_CPU};

static void finish_step(plan_step *s) {
  double top = -1, all = s->cost.total_ns > 0 ? s->cost.total_ns : s->ns;
  for (int b = 0; b < BOUND_COUNT; b++)
    if (s->cost.bound_ns[b] > top) top = s->cost.bound_ns[b], s->bound = (cost_bound)b;
  s->bound_share = all > 0 ? top / all : 0;
}

/* `batch` sequences decoding at context `ctx`. With pipeline parallelism
 * they form min(pp, batch) micro-batches of ceil(batch / pp) (one per
 * stage); a token takes one trip: the micro-batch's time through every stage,
 * or, when the stages are the bottleneck, the micro-batches' turns on the
 * slowest stage. */
static void decode_step(cost_model *c, uint32_t batch, uint32_t ctx, plan_step *s) {
  memset(s, 0, sizeof *s);
  s->batch = batch;
  s->ctx_tokens = ctx;
  s->chunks = 1;
  uint32_t pp = cost_pp(c), groups = batch < pp ? batch : pp;
  if (groups < 1) groups = 1;
  s->micro = (batch + groups - 1) / groups;
  double trip = cost_decode_step_ns(c, s->micro, ctx, &s->cost), top = 0;
  for (uint32_t k = 0; k < pp; k++) top = fmax(top, s->cost.stage_ns[k]);
  if (pp > 1 && groups * top > trip) trip = groups * top;
  s->ns = trip;
  s->tokens_per_s = s->ns > 0 ? batch * 1e9 / s->ns : 0;
  s->seq_tokens_per_s = s->ns > 0 ? 1e9 / s->ns : 0;
  finish_step(s);
}

/* One prompt of `tokens`, chunked by the token budget like the scheduler does
 * on an idle replica; the last chunk samples the first token. */
/* The same decode with speculation: `batch` sequences verifying k drafts each, emitting `per_step` tokens each on
 * average (no pipeline parallelism: one micro-batch). */
static void verify_step(cost_model *c, uint32_t batch, uint32_t ctx, uint32_t k, double per_step, plan_step *s) {
  memset(s, 0, sizeof *s);
  s->batch = s->micro = batch;
  s->ctx_tokens = ctx;
  s->chunks = 1;
  s->ns = cost_verify_step_ns(c, batch, ctx, k, &s->cost);
  s->tokens_per_s = s->ns > 0 ? batch * per_step * 1e9 / s->ns : 0;
  s->seq_tokens_per_s = s->ns > 0 ? per_step * 1e9 / s->ns : 0;
  finish_step(s);
}

static void prefill_steps(cost_model *c, uint32_t tokens, uint32_t budget, plan_step *s) {
  memset(s, 0, sizeof *s);
  s->batch = 1;
  s->ctx_tokens = tokens;
  uint32_t done = 0;
  while (done < tokens) {
    uint32_t n = SIM_MIN(budget, tokens - done);
    step_cost sc;
    if (n < 2 && done == 0) {
      cost_decode_step_ns(c, 1, 1, &sc);
    } else {
      prefill_chunk ch = {.chunk_tokens = n, .ctx_tokens = done};
      bool last = done + n == tokens;
      batch_desc b = {.num_tokens = n, .num_seqs = 1, .num_sample = last ? 1 : 0, .num_prefill = 1, .prefills = &ch};
      if (n < 2) b = (batch_desc){.num_tokens = 1, .num_seqs = 1, .num_decode = 1, .decode_ctx_tokens = done + 1,
                                  .num_sample = 1};
      cost_step(c, &b, &sc);
    }
    s->ns += sc.total_ns;
    for (int i = 0; i < OP_COUNT; i++) s->cost.op_ns[i] += sc.op_ns[i];
    for (int i = 0; i < BOUND_COUNT; i++) s->cost.bound_ns[i] += sc.bound_ns[i];
    s->chunks++;
    done += n;
  }
  s->cost.total_ns = s->ns;
  s->tokens_per_s = s->ns > 0 ? tokens * 1e9 / s->ns : 0;
  finish_step(s);
}

static void gates(plan_result *p) {
  plan_gate *g = p->gates;
  const mem_plan *m = &p->mem;
  g[PLAN_GATE_CAPACITY].name = "can it start (memory capacity)";
  g[PLAN_GATE_BANDWIDTH].name = "is it fed (HBM bandwidth)";
  g[PLAN_GATE_COMPUTE].name = "is it computed (tensor cores)";
  g[PLAN_GATE_INTERCONNECT].name = "does it scale (interconnect)";
  if (p->fits) {
    g[0].status = "ok";
    snprintf(g[0].detail, sizeof g[0].detail,
             "weights %.1f GiB + activations %.1f GiB + CUDA graphs and runtime %.1f GiB leave %.1f GiB per GPU "
             "for the KV cache: %llu tokens, %llu sequences of %u tokens",
             m->weights_bytes / GIB, m->activation_bytes / GIB, (m->cuda_graph_bytes + m->runtime_bytes) / GIB,
             m->kv_bytes / GIB, (unsigned long long)m->kv_tokens, (unsigned long long)p->max_batch_memory,
             p->opts.context_tokens);
  } else {
    g[0].status = "fails";
    snprintf(g[0].detail, sizeof g[0].detail, "%s", p->refusal);
  }
  uint32_t tp = p->deploy.tp;
  double need = p->weight_read_Bps, have = p->deploy_hbm_Bps;
  if (have < need) g[1].status = "fails";
  else if (p->decode1.seq_tokens_per_s < p->opts.target_tps) g[1].status = "short";
  else g[1].status = "ok";
  snprintf(g[1].detail, sizeof g[1].detail,
           "one sequence at %g tokens/s reads the weights %g times a second: %.1f GB x %g = %.2f TB/s; %u x %s "
           "give %.2f TB/s (%u GPU%s at least); the cost model predicts %.1f tokens/s at batch 1 (%s)",
           p->opts.target_tps, p->opts.target_tps, p->weights_active_bytes / 1e9, p->opts.target_tps, need / 1e12, tp,
           p->gpu.name, have / 1e12, p->min_gpus_bandwidth, p->min_gpus_bandwidth == 1 ? "" : "s",
           p->decode1.seq_tokens_per_s, limit_name(of_bound[p->decode1.bound]));
  const plan_step *dm = p->max_batch ? &p->decode_max : &p->decode1;
  g[2].status = dm->bound == BOUND_COMPUTE || p->prefill.bound == BOUND_COMPUTE ? "binds" : "ok";
  snprintf(g[2].detail, sizeof g[2].detail,
           "prefill of a %u-token prompt takes %.1f ms (%.0f%% %s, %.0f tokens/s): the TTFT floor of an idle "
           "replica; decode at batch %u is %.0f%% compute-bound",
           p->prefill.ctx_tokens, p->prefill.ns / 1e6, 100 * p->prefill.bound_share,
           limit_name(of_bound[p->prefill.bound]), p->prefill.tokens_per_s, dm->batch,
           dm->ns > 0 ? 100 * dm->cost.bound_ns[BOUND_COMPUTE] / dm->ns : 0.0);
  if (tp <= 1) {
    g[3].status = "ok";
    snprintf(g[3].detail, sizeof g[3].detail, "no all-reduce at TP1");
    if (p->deploy.pp > 1 && p->decode1.cost.bound_ns[BOUND_COMM] > 0.1 * p->decode1.ns) g[3].status = "binds";
  } else {
    double s1 = p->decode1.ns > 0 ? p->decode1.cost.bound_ns[BOUND_COMM] / p->decode1.ns : 0;
    double sm = dm->ns > 0 ? dm->cost.bound_ns[BOUND_COMM] / dm->ns : 0;
    g[3].status = p->decode1.bound == BOUND_COMM || dm->bound == BOUND_COMM ? "binds" : (s1 < 0.1 && sm < 0.1) ? "minor" : "ok";
    if (p->nodes > 1) {
      /* the network binds when crossing nodes makes the batch-1 step no faster than one node's */
      bool slower = p->decode1_node_ns > 0 && p->decode1.ns >= p->decode1_node_ns;
      if (slower) g[3].status = "binds";
      snprintf(g[3].detail, sizeof g[3].detail,
               "TP%u spans %u nodes of %u GPUs: 2 all-reduces per layer, over %s (%.0f GB/s one way) inside a node "
               "and the network (%.0f GB/s per GPU, %.0f us per hop) between nodes: %.0f%% of the batch-1 decode "
               "step, %.0f%% at batch %u; one all-reduce of the batch-1 step takes %.1f us, %.1f us of it on the "
               "network. The batch-1 step takes %.2f ms here and %.2f ms at TP%u inside one node: %s",
               tp, p->nodes, p->deploy.gpus_per_node, p->gpu.link == LINK_NVLINK ? "NVLink" : "PCIe",
               p->gpu.link_Bps / 1e9, p->gpu.net_Bps / 1e9, p->gpu.net_latency_ns / 1e3, 100 * s1, 100 * sm,
               dm->batch, p->ar1_ns / 1e3, p->ar1_network_ns / 1e3, p->decode1.ns / 1e6, p->decode1_node_ns / 1e6,
               p->deploy.gpus_per_node,
               slower ? "the network binds: crossing nodes costs more than the extra GPUs save (pipeline "
                        "parallelism across nodes is the usual answer: see the layouts)"
                      : "crossing nodes still pays at batch 1 (the layouts compare pipeline parallelism)");
    } else {
      snprintf(g[3].detail, sizeof g[3].detail,
               "2 all-reduces per layer over %s (%.0f GB/s one way): %.0f%% of the batch-1 decode step, %.0f%% at "
               "batch %u",
               p->gpu.link == LINK_NVLINK ? "NVLink" : "PCIe", p->gpu.link_Bps / 1e9, 100 * s1, 100 * sm, dm->batch);
    }
    if (p->deploy.pp > 1 && p->decode1.cost.bound_ns[BOUND_COMM] > 0.5 * p->decode1.ns) g[3].status = "binds";
    /* A measured table far below the link says the measured machine's GPUs
     * talk through a slower path (no peer-to-peer, another socket): say so,
     * and which of the two the costs use. */
    if (p->ar_chk_valid && p->ar_chk.implausible) {
      size_t n = strlen(g[3].detail);
      snprintf(g[3].detail + n, sizeof g[3].detail - n,
               "; the measured all-reduce reaches %.1f GB/s bus bandwidth among %u GPUs, %.0f%% of what the link "
               "gives (%.1f GB/s): the measured machine's GPUs had no peer-to-peer path; %s",
               p->ar_chk.table_busbw_Bps / 1e9, p->ar_chk.gpus,
               100 * p->ar_chk.table_busbw_Bps / p->ar_chk.link_busbw_Bps, p->ar_chk.link_busbw_Bps / 1e9,
               p->ar_measured ? "the costs use it (--allreduce table); --allreduce auto uses the link"
                              : "the costs use the link (add --allreduce table if your GPUs are connected like that)");
    }
  }
  if (p->deploy.pp > 1) {
    size_t n = strlen(g[3].detail);
    snprintf(g[3].detail + n, sizeof g[3].detail - n,
             "; pipeline: %u stages, %u send%s of the activations per token (%u over the network), together %.1f us "
             "for a batch-1 token and %.1f us for a micro-batch of %u",
             p->deploy.pp, p->deploy.pp - 1, p->deploy.pp == 2 ? "" : "s", p->pp_network_hops, p->pp_send1_ns / 1e3,
             p->pp_send_max_ns / 1e3, dm->micro);
  }
}

/* The layouts of the same GPUs (plan.h), each resolved from the scenario
 * with its own tp and pp (engine defaults for the rest: async scheduling off
 * with PP). */
static void compare_layouts(plan_result *p, const scenario *sc, prof_sel *ps) {
  const deploy_cfg *d = &p->deploy;
  uint32_t G = deploy_gpus(d);
  p->this_layout = -1;
  scenario s2 = *sc;
  for (uint32_t pp = 1; pp <= G && pp <= CFG_MAX_PP && p->n_layouts < PLAN_MAX_LAYOUTS; pp *= 2) {
    if (G % pp) continue;
    plan_layout *L = &p->layouts[p->n_layouts];
    memset(L, 0, sizeof *L);
    L->tp = G / pp, L->pp = pp;
    L->nodes = (G + d->gpus_per_node - 1) / d->gpus_per_node;
    s2.deploy = sc->deploy;
    s2.deploy.tp = L->tp, s2.deploy.pp = pp;
    if (pp > 1 && s2.deploy.async_scheduling > 0) s2.deploy.async_scheduling = -1; /* PP: vLLM's default (off) */
    model_cfg m;
    gpu_cfg g;
    engine_cfg e;
    deploy_cfg dl;
    sim_err e1 = {0, ""};
    if (scenario_load_configs(&s2, &m, &g, &e, &dl, &e1)) {
      snprintf(L->why, sizeof L->why, "%.159s", e1.msg);
      if (L->tp > p->model.q_heads || pp > p->model.layers) continue; /* not worth a row */
      p->n_layouts++;
      continue;
    }
    L->valid = true;
    mem_plan mp;
    L->fits = memplan_compute(&mp, &m, &g, &e, &dl, &e1) == SIM_OK;
    if (!L->fits) snprintf(L->why, sizeof L->why, "%.159s", e1.msg);
    L->kv_tokens = L->fits ? mp.kv_tokens : 0;
    cost_model *c;
    if (cost_new(&c, &m, &g, &e, &dl, &e1) != SIM_OK) {
      L->valid = false;
      snprintf(L->why, sizeof L->why, "%.159s", e1.msg);
      p->n_layouts++;
      continue;
    }
    profsel_attach(ps, c);
    decode_step(c, 1, p->opts.context_tokens, &L->decode1);
    uint64_t cap = L->fits ? mp.kv_blocks / p->blocks_per_seq : 0;
    L->ref_batch = (uint32_t)(p->max_batch < cap ? p->max_batch : cap);
    if (L->ref_batch) decode_step(c, L->ref_batch, p->opts.context_tokens, &L->decode_ref);
    cost_free(c);
    if (L->tp == d->tp && L->pp == d->pp) p->this_layout = (int)p->n_layouts;
    p->n_layouts++;
  }
}

/* The largest decode batch at the context the plan asks about, and what limits it. */
static void largest_batch(plan_result *p, const deploy_cfg *d) {
  uint32_t block = p->mem.block_tokens ? p->mem.block_tokens : 16;
  p->blocks_per_seq = (p->opts.context_tokens + block - 1) / block;
  p->max_batch_memory = p->fits ? p->mem.kv_blocks / p->blocks_per_seq : 0;
  uint64_t mb = p->max_batch_memory;
  p->batch_limit = "memory capacity (KV cache)";
  if (d->max_num_seqs < mb) mb = d->max_num_seqs, p->batch_limit = "max_num_seqs";
  if (p->mem.state_bytes_per_seq > 0 && p->mem.state_slots < mb)
    mb = p->mem.state_slots, p->batch_limit = "linear-attention states";
  if (d->max_num_batched_tokens < mb) mb = d->max_num_batched_tokens, p->batch_limit = "max_num_batched_tokens";
  p->max_batch = (uint32_t)mb;
}

/* --mode disagg: the plan is one engine's; each pool is planned as one. */
static int refuse_disagg(const deploy_cfg *d, sim_err *err) {
  return sim_errf(err, SIM_EINPUT, "--mode disagg: plan analyses one engine's shape; plan each pool with its own --tp "
                  "(prefill: --tp %u --max-num-seqs %u, decode: --tp %u --max-num-seqs %u)", d->prefill_tp,
                  d->prefill_max_num_seqs, d->decode_tp, d->decode_max_num_seqs);
}

/* Nemotron-3's ungated experts: what priced the routed experts of the steps computed so far ("" otherwise). */
static void ungated_moe_text(plan_result *p, const cost_model *c) {
  p->ungated_moe[0] = 0;
  if (!p->model.experts || !p->model.moe_ungated) return;
  uint64_t n[OP_COUNT][SRC_COUNT];
  cost_src_counts(c, n);
  uint64_t tab = n[OP_MOE][SRC_PROFILE] + n[OP_MOE][SRC_PROFILE_SCALED], all = tab + n[OP_MOE][SRC_ROOFLINE];
  snprintf(p->ungated_moe, sizeof p->ungated_moe,
           "up and down, 2 matrices each%s; routed experts from %s (%llu of %llu MoE costings from a table)",
           p->model.moe_latent ? ", at the latent width" : "",
           tab == all && all ? "a measured non-gated fused-MoE table"
           : tab            ? "a measured non-gated fused-MoE table where it has the shape, else first principles"
                            : "first principles (no measured non-gated fused-MoE table has this shape)",
           (unsigned long long)tab, (unsigned long long)all);
}

int plan_analyze(plan_result *p, const scenario *sc, const plan_opts *opts, sim_err *err) {
  memset(p, 0, sizeof *p);
  p->opts = *opts;
  if (!p->opts.context_tokens) p->opts.context_tokens = 2048;
  if (!p->opts.prompt_tokens) p->opts.prompt_tokens = 1024;
  if (!(p->opts.target_tps > 0)) p->opts.target_tps = 50;
  int rc = scenario_load_configs(sc, &p->model, &p->gpu, &p->engine, &p->deploy, err);
  if (rc || p->deploy.disagg) return rc ? rc : refuse_disagg(&p->deploy, err);
  const deploy_cfg *d = &p->deploy;
  if (p->opts.context_tokens > d->max_model_len)
    return sim_errf(err, SIM_EINPUT, "context %u tokens exceeds max_model_len %u (lower --context or raise --max-model-len)",
                    p->opts.context_tokens, d->max_model_len);
  sim_err merr = {0, ""};
  p->fits = memplan_compute(&p->mem, &p->model, &p->gpu, &p->engine, d, &merr) == SIM_OK;
  if (!p->fits) snprintf(p->refusal, sizeof p->refusal, "%s", merr.msg);

  cost_model *c;
  if ((rc = cost_new(&c, &p->model, &p->gpu, &p->engine, d, err))) return rc;
  prof_sel ps;
  if ((rc = profsel_choose(&ps, sc->profile, &p->gpu, &p->engine, err))) {
    cost_free(c);
    return rc;
  }
  profsel_attach(&ps, c);
  snprintf(p->cost_source, sizeof p->cost_source, "%s", ps.source);
  p->block_fp8[0] = 0;
  if (p->model.fp8_block && d->weight_dtype == DT_FP8 && cost_profile(c)) {
    double r;
    bool ok = cost_block_gemm_check(cost_profile(c), &r);
    if (ok)
      snprintf(p->block_fp8, sizeof p->block_fp8,
               "the profile's block-scaled FP8 grid (%.2fx the per-tensor GEMM at 1 x 4096 x 4096, at most %.0fx)", r,
               COST_BLOCK_CHECK_RATIO);
    else if (r > 0)
      snprintf(p->block_fp8, sizeof p->block_fp8,
               "the per-tensor FP8 grid: the profile's block-scaled one takes %.2fx it at 1 x 4096 x 4096 (over %.0fx: "
               "host-bound timings, hw/cost.h)", r, COST_BLOCK_CHECK_RATIO);
    else
      snprintf(p->block_fp8, sizeof p->block_fp8, "the per-tensor FP8 grid: the profile has no block-scaled one");
  }
  cost_graph_sizes_text(c, p->graphs, sizeof p->graphs);
  if (d->tp > 1) {
    uint32_t T = d->max_num_batched_tokens;
    cost_src src;
    double t_ns = cost_allreduce_ns(c, T, false, &src), l_ns = cost_allreduce_link_ns(c, T);
    double moved = 2.0 * (d->tp - 1) / d->tp * T * p->model.hidden * dtype_bytes(d->act_dtype);
    p->ar_measured = src != SRC_ROOFLINE;
    p->ar_busbw_Bps = t_ns > 0 ? moved * 1e9 / t_ns : 0;
    p->ar_link_busbw_Bps = l_ns > 0 ? moved * 1e9 / l_ns : 0;
    p->ar_chk_valid = cost_allreduce_check(c, &p->ar_chk);
    p->nodes = cost_nodes(c);
    p->ar1_ns = cost_allreduce_ns(c, 1, true, NULL);
    p->ar1_network_ns = cost_allreduce_network_ns(c, 1);
  }
  if (p->nodes > 1) { /* the same step inside one node, to say whether crossing nodes pays */
    deploy_cfg d1 = *d;
    d1.tp = d->gpus_per_node;
    cost_model *c1;
    step_cost sc1;
    sim_err e1 = {0, ""}; /* cannot fail where the deployment itself did not: no comparison if it does */
    if (cost_new(&c1, &p->model, &p->gpu, &p->engine, &d1, &e1) == SIM_OK) {
      profsel_attach(&ps, c1);
      p->decode1_node_ns = cost_decode_step_ns(c1, 1, p->opts.context_tokens, &sc1);
      cost_free(c1);
    }
  }

  largest_batch(p, d);

  decode_step(c, 1, p->opts.context_tokens, &p->decode1);
  if (p->max_batch) decode_step(c, p->max_batch, p->opts.context_tokens, &p->decode_max);
  if (d->num_speculative_tokens && d->spec_method != SPEC_NONE) {
    uint32_t k = d->num_speculative_tokens;
    p->spec_tokens_per_step = specdec_expected_tokens(d->spec_rates, k);
    verify_step(c, 1, p->opts.context_tokens, k, p->spec_tokens_per_step, &p->spec1);
    if (p->max_batch) verify_step(c, p->max_batch, p->opts.context_tokens, k, p->spec_tokens_per_step, &p->spec_max);
  }
  prefill_steps(c, p->opts.prompt_tokens, d->max_num_batched_tokens, &p->prefill);
  ungated_moe_text(p, c);

  p->params = p->model.params_total;
  p->weights_total_bytes = p->mem.weights_total_bytes;
  p->min_gpus_weights = (uint32_t)ceil(p->weights_total_bytes / p->gpu.mem_bytes);
  p->weights_active_bytes = memplan_active_weight_bytes(&p->model, d);
  p->weight_read_Bps = p->weights_active_bytes * p->opts.target_tps;
  p->min_gpus_bandwidth = (uint32_t)ceil(p->weight_read_Bps / p->gpu.hbm_Bps);
  p->deploy_hbm_Bps = d->tp * p->gpu.hbm_Bps;
  if (d->pp > 1) {
    for (uint32_t k = 0; k + 1 < d->pp; k++) p->pp_network_hops += cost_pp_hop_crosses_nodes(c, k);
    for (uint32_t k = 0; k + 1 < d->pp; k++) {
      p->pp_send1_ns += p->decode1.cost.send_ns[k];
      p->pp_send_max_ns += (p->max_batch ? &p->decode_max : &p->decode1)->cost.send_ns[k];
    }
  }
  if (deploy_gpus(d) > d->gpus_per_node || d->pp > 1) compare_layouts(p, sc, &ps);
  gates(p);
  cost_free(c);
  profsel_free(&ps);
  return SIM_OK;
}

/* ---- text ------------------------------------------------------------------------ */

static void step_line(FILE *f, const char *what, const plan_step *s, bool decode) {
  char head[96];
  snprintf(head, sizeof head, "%s", what);
  if (decode)
    fprintf(f, "  %-38s %9.2f ms/step  %10.0f tokens/s (%.1f per sequence)   bound: %s (%.0f%%)\n", head, s->ns / 1e6,
            s->tokens_per_s, s->seq_tokens_per_s, limit_name(of_bound[s->bound]), 100 * s->bound_share);
  else
    fprintf(f, "  %-38s %9.2f ms in %u step%s %7.0f tokens/s                 bound: %s (%.0f%%)\n", head, s->ns / 1e6,
            s->chunks, s->chunks == 1 ? " " : "s", s->tokens_per_s, limit_name(of_bound[s->bound]),
            100 * s->bound_share);
}

static void layout_name(const plan_layout *L, char *buf, size_t n) {
  if (L->pp > 1) snprintf(buf, n, "TP%u x PP%u", L->tp, L->pp);
  else snprintf(buf, n, "TP%u", L->tp);
}

/* The layouts table and what it says. */
static void layouts_print(const plan_result *p, FILE *f) {
  uint32_t G = deploy_gpus(&p->deploy), ref = p->max_batch;
  fprintf(f, "\nLayouts of the same %u GPUs (%u per node; decode at %u tokens of context, one token per sequence "
             "per trip through the stages)\n",
          G, p->deploy.gpus_per_node, p->opts.context_tokens);
  fprintf(f, "  %-14s %5s %12s %16s %11s %24s %11s\n", "layout", "nodes", "KV tokens", "batch 1 ms/token",
          "comm share", "largest batch ms/token", "tokens/s");
  int best1 = -1, bestB = -1;
  for (uint32_t i = 0; i < p->n_layouts; i++) {
    const plan_layout *L = &p->layouts[i];
    char name[32], b[48];
    layout_name(L, name, sizeof name);
    const char *mark = (int)i == p->this_layout ? "  <- this plan" : "";
    if (!L->valid) {
      fprintf(f, "  %-14s  not possible: %s\n", name, L->why);
      continue;
    }
    if (!L->fits) {
      fprintf(f, "  %-14s %5u %12s %16.2f  does not start: %s%s\n", name, L->nodes, "-", L->decode1.ns / 1e6, L->why,
              mark);
      continue;
    }
    if (best1 < 0 || L->decode1.ns < p->layouts[best1].decode1.ns) best1 = (int)i;
    if (L->ref_batch && (bestB < 0 || L->decode_ref.tokens_per_s > p->layouts[bestB].decode_ref.tokens_per_s)) bestB = (int)i;
    if (L->ref_batch) snprintf(b, sizeof b, "%.2f (batch %u)", L->decode_ref.ns / 1e6, L->ref_batch);
    else snprintf(b, sizeof b, "-");
    fprintf(f, "  %-14s %5u %12llu %16.2f %10.0f%% %24s %11.0f%s\n", name, L->nodes, (unsigned long long)L->kv_tokens,
            L->decode1.ns / 1e6, L->decode1.ns > 0 ? 100 * L->decode1.cost.bound_ns[BOUND_COMM] / L->decode1.ns : 0.0,
            b, L->ref_batch ? L->decode_ref.tokens_per_s : 0.0, mark);
  }
  if (best1 >= 0) {
    char n1[32], nb[32];
    layout_name(&p->layouts[best1], n1, sizeof n1);
    fprintf(f, "  lowest latency at batch 1: %s (%.2f ms a token)", n1, p->layouts[best1].decode1.ns / 1e6);
    if (bestB >= 0) {
      layout_name(&p->layouts[bestB], nb, sizeof nb);
      fprintf(f, "; most tokens/s at batch %u: %s (%.0f)", ref, nb, p->layouts[bestB].decode_ref.tokens_per_s);
    }
    fprintf(f, ".\n  (comm share: all-reduces and pipeline sends in the batch-1 token's time. A TP group across nodes "
               "pays 2 all-reduces per layer on the network; a pipeline pays one send per stage boundary, but a "
               "token runs the stages one after the other, and with PP vLLM schedules synchronously)\n");
  }
}

/* A MIG slice: what it is a share of, and how many of it one GPU holds (config/mig.h). */
static void plan_print_mig(const plan_result *p, FILE *f) {
  const gpu_cfg *g = &p->gpu;
  gpu_cfg w;
  sim_err ignore;
  if (!g->mig_parent[0] || cfg_gpu_load(&w, g->mig_parent, &ignore)) return;
  const mig_profile *m = mig_find(&w, strchr(g->name, ':') + 1);
  if (!m) return;
  fprintf(f, "  MIG slice: %u/7 of the SMs and tensor cores (%u SMs), %u/8 of the memory, L2 and HBM bandwidth "
             "(%.2f TB/s); one %s holds %u of these%s%s%s\n",
          m->compute_slices, g->sm_count, m->memory_slices, g->hbm_Bps / 1e12, w.name, m->max_instances,
          w.mig_balanced[0] ? " (or NVIDIA's balanced layout " : "", w.mig_balanced, w.mig_balanced[0] ? ")" : "");
}

void plan_print(const plan_result *p, FILE *f) {
  const deploy_cfg *d = &p->deploy;
  const mem_plan *m = &p->mem;
  char layout[96];
  deploy_layout_text(d, layout, sizeof layout);
  fprintf(f, "servesim plan: %s (%.2f B parameters) on %u x %s (%s), %s engine\n", p->model.name, p->params / 1e9,
          deploy_gpus(d), p->gpu.name, layout, p->engine.name);
  fprintf(f, "  weights %s%s, activations %s, KV cache %s; max_model_len %u, max_num_seqs %u, max_num_batched_tokens %u\n\n",
          dtype_name(d->weight_dtype), deploy_fp8_weight_only(d, &p->gpu) ? " (weight-only: no fp8 tensor cores; vLLM's FP8 Marlin)" : "",
          dtype_name(d->act_dtype), dtype_name(d->kv_dtype), d->max_model_len, d->max_num_seqs,
          d->max_num_batched_tokens);
  fprintf(f, "Memory per GPU (%s: %.1f GiB as the driver reports it)\n", p->gpu.full_name, m->device_bytes / GIB);
  plan_print_mig(p, f);
  if (m->pp > 1) {
    fprintf(f, "  pipeline stages (vLLM's split of %u layers; the first holds the embedding, the last the LM head):\n",
            p->model.layers);
    for (uint32_t k = 0; k < m->pp; k++)
      fprintf(f, "    stage %-2u %3u layers  weights %6.1f GiB  its memory holds %u KV blocks%s\n", k, m->stage_layers[k],
              m->stage_weights_bytes[k] / GIB, m->stage_kv_blocks[k],
              k == m->binding_stage ? "  <- the smallest pool: the engine's (below)" : "");
  }
  fprintf(f, "  %-44s %8.1f GiB\n", "budget (x gpu_memory_utilization)", m->budget_bytes / GIB);
  fprintf(f, "  %-44s %8.1f GiB\n", "weights", m->weights_bytes / GIB);
  if (m->draft_weights_bytes > 0) /* a draft model's layers, or a draft head's one attention layer */
    fprintf(f, "    of which the %-29.29s %8.2f GiB  (and its %u attention layer(s)' KV a token)\n",
            d->spec_method == SPEC_DRAFT_MODEL ? d->spec_draft.name : "speculative draft head",
            m->draft_weights_bytes / GIB, m->draft_kv_layers);
  char act[96];
  snprintf(act, sizeof act, "activation peak (%u-token forward)", d->max_num_batched_tokens);
  fprintf(f, "  %-44s %8.1f GiB\n", act, m->activation_bytes / GIB);
  fprintf(f, "  %-44s %8.1f GiB\n", "CUDA graph pool", m->cuda_graph_bytes / GIB);
  fprintf(f, "  %-44s %8.1f GiB\n", "runtime (CUDA context, NCCL, allocator)", m->runtime_bytes / GIB);
  if (m->state_bytes_per_seq > 0) {
    char st[96];
    snprintf(st, sizeof st, "linear-attention states (%u x %.1f MiB)", m->state_slots,
             m->state_bytes_per_seq / (1024.0 * 1024.0));
    fprintf(f, "  %-44s %8.1f GiB\n", st, m->state_bytes / GIB);
  }
  if (m->window_bytes > 0) /* sliding-window layers' windows (DeepSeek-V4: every layer's), set aside first */
    fprintf(f, "  %-44s %8.1f GiB\n", "sliding windows (max_num_seqs sequences)", m->window_bytes / GIB);
  fprintf(f, "  %-44s %8.1f GiB%s\n", "KV cache", m->kv_bytes / GIB, m->kv_bytes <= 0 ? "  (nothing left)" : "");
  fprintf(f, "  %-44s %8.0f bytes (%.1f KiB)\n", "KV cache per token", m->kv_bytes_per_token,
          m->kv_bytes_per_token / 1024);
  fprintf(f, "  %-44s %8u of %u tokens = %llu tokens (%.1f sequences of max_model_len)\n", "KV blocks", m->kv_blocks,
          m->block_tokens, (unsigned long long)m->kv_tokens, m->max_concurrency_at_max_len);
  if (p->fits)
    fprintf(f, "\nLargest batch at %u tokens of context: %u sequences (%llu fit in the KV cache; %s binds)\n",
            p->opts.context_tokens, p->max_batch, (unsigned long long)p->max_batch_memory, p->batch_limit);
  fprintf(f, "\nStep times (%s)\n", p->cost_source);
  fprintf(f, "  CUDA graphs: %s\n", p->graphs);
  if (p->block_fp8[0]) fprintf(f, "  block-scaled FP8 checkpoint: its linears run on %s\n", p->block_fp8);
  if (p->ungated_moe[0]) fprintf(f, "  ungated relu2 experts: %s\n", p->ungated_moe);
  char w[96];
  snprintf(w, sizeof w, "decode, batch 1, context %u", p->opts.context_tokens);
  step_line(f, w, &p->decode1, true);
  if (p->max_batch) {
    snprintf(w, sizeof w, "decode, batch %u, context %u", p->max_batch, p->opts.context_tokens);
    step_line(f, w, &p->decode_max, true);
  }
  snprintf(w, sizeof w, "prefill of a %u-token prompt", p->opts.prompt_tokens);
  step_line(f, w, &p->prefill, false);
  if (p->spec_tokens_per_step > 0) {
    fprintf(f, "  speculative decoding: %s, %u draft tokens, %.2f expected tokens per step (%s)\n",
            spec_method_name(d->spec_method), d->num_speculative_tokens, p->spec_tokens_per_step, d->spec_source);
    snprintf(w, sizeof w, "verify, batch 1, context %u", p->opts.context_tokens);
    step_line(f, w, &p->spec1, true);
    if (p->max_batch) {
      snprintf(w, sizeof w, "verify, batch %u, context %u", p->max_batch, p->opts.context_tokens);
      step_line(f, w, &p->spec_max, true);
    }
  }

  if (p->n_layouts) layouts_print(p, f);
  fprintf(f, "\nThe classic check\n");
  fprintf(f, "  weights: %.2f B parameters in %s = %.1f GB: at least %u GPU%s of %.1f GB (%s) just to hold them\n",
          p->params / 1e9, dtype_name(d->weight_dtype), p->weights_total_bytes / 1e9, p->min_gpus_weights,
          p->min_gpus_weights == 1 ? "" : "s", p->gpu.mem_bytes / 1e9, p->gpu.name);
  if (p->model.experts)
    fprintf(f, "  a mixture of experts: a token uses %u of %u routed experts in %u of %u layers, so it reads %.1f GB of "
               "the %.1f GB\n",
            p->model.experts_per_tok, p->model.experts, p->model.moe_layers, p->model.layers,
            p->weights_active_bytes / 1e9, p->weights_total_bytes / 1e9);
  fprintf(f, "  one sequence at %g tokens/s reads its weights %g times a second: %.1f GB x %g = %.2f TB/s\n",
          p->opts.target_tps, p->opts.target_tps, p->weights_active_bytes / 1e9, p->opts.target_tps,
          p->weight_read_Bps / 1e12);
  fprintf(f, "  one %s has %.2f TB/s: %s; at least %u GPUs' bandwidth (ideal tensor parallelism); this deployment "
             "has %u x %.2f = %.2f TB/s\n",
          p->gpu.name, p->gpu.hbm_Bps / 1e12, p->gpu.hbm_Bps >= p->weight_read_Bps ? "enough" : "not enough",
          p->min_gpus_bandwidth, d->tp, p->gpu.hbm_Bps / 1e12, p->deploy_hbm_Bps / 1e12);
  fprintf(f, "\nGates\n");
  for (int i = 0; i < PLAN_GATES; i++)
    fprintf(f, "  %-32s %-5s  %s\n", p->gates[i].name, p->gates[i].status, p->gates[i].detail);
  if (!p->fits) fprintf(f, "\nREFUSED: %s\n", p->refusal);
}

/* ---- JSON ------------------------------------------------------------------------ */

static void step_json(jw *j, const char *key, const plan_step *s) {
  jw_obj(j, key);
  jw_u64(j, "batch", s->batch);
  jw_u64(j, "context_tokens", s->ctx_tokens);
  jw_u64(j, "steps", s->chunks);
  if (s->micro && s->micro != s->batch) jw_u64(j, "sequences_per_micro_batch", s->micro);
  jw_num(j, "time_ms", s->ns / 1e6);
  jw_num(j, "tokens_per_s", s->tokens_per_s);
  if (s->batch && s->chunks == 1) jw_num(j, "tokens_per_s_per_sequence", s->seq_tokens_per_s);
  jw_str(j, "bound", limit_name(of_bound[s->bound]));
  jw_num(j, "bound_share", s->bound_share);
  jw_obj(j, "time_by_bound_ms");
  for (int b = 0; b < BOUND_COUNT; b++) jw_num(j, cost_bound_name((cost_bound)b), s->cost.bound_ns[b] / 1e6);
  jw_end(j);
  jw_end(j);
}

/* plan_write_json's blocks: the full-step all-reduce, the layouts of the same GPUs (the memory per GPU: memplan.h). */
static void allreduce_json(jw *j, const plan_result *p) {
  const deploy_cfg *d = &p->deploy;
  if (d->tp > 1) {
    jw_obj(j, "allreduce_full_step");
    jw_str(j, "source", p->ar_measured ? "measured table" : "link formula");
    jw_str(j, "allreduce", ar_source_name(d->allreduce));
    if (p->ar_chk_valid) {
      jw_num(j, "measured_bus_bandwidth_gb_s_16mib", p->ar_chk.table_busbw_Bps / 1e9);
      jw_num(j, "link_bus_bandwidth_gb_s_16mib", p->ar_chk.link_busbw_Bps / 1e9);
      jw_bool(j, "measured_table_implausible", p->ar_chk.implausible);
    }
    jw_num(j, "bus_bandwidth_gb_s", p->ar_busbw_Bps / 1e9);
    jw_num(j, "link_formula_bus_bandwidth_gb_s", p->ar_link_busbw_Bps / 1e9);
    jw_u64(j, "nodes", p->nodes);
    jw_u64(j, "gpus_per_node", d->gpus_per_node);
    jw_num(j, "batch1_allreduce_us", p->ar1_ns / 1e3);
    jw_num(j, "batch1_allreduce_network_us", p->ar1_network_ns / 1e3);
    if (p->nodes > 1) jw_num(j, "batch1_decode_ms_inside_one_node", p->decode1_node_ns / 1e6);
    else jw_null(j, "batch1_decode_ms_inside_one_node");
    jw_end(j);
  } else {
    jw_null(j, "allreduce_full_step");
  }
}

static void layouts_json(jw *j, const plan_result *p) {
  if (p->n_layouts) {
    jw_arr(j, "layouts");
    for (uint32_t i = 0; i < p->n_layouts; i++) {
      const plan_layout *L = &p->layouts[i];
      jw_obj(j, NULL);
      jw_u64(j, "tensor_parallel_size", L->tp);
      jw_u64(j, "pipeline_parallel_size", L->pp);
      jw_u64(j, "nodes", L->nodes);
      jw_bool(j, "this_plan", (int)i == p->this_layout);
      jw_bool(j, "valid", L->valid);
      jw_bool(j, "fits", L->fits);
      if (L->why[0]) jw_str(j, "why_not", L->why);
      else jw_null(j, "why_not");
      if (L->valid) {
        jw_u64(j, "kv_tokens", L->kv_tokens);
        step_json(j, "decode_batch1", &L->decode1);
        if (L->ref_batch) step_json(j, "decode_ref_batch", &L->decode_ref);
        else jw_null(j, "decode_ref_batch");
      }
      jw_end(j);
    }
    jw_end(j);
  } else {
    jw_null(j, "layouts");
  }
}

int plan_write_json(const plan_result *p, FILE *f, sim_err *err) {
  const deploy_cfg *d = &p->deploy;
  jw j;
  jw_begin(&j, f);
  jw_str(&j, "model", p->model.name);
  jw_str(&j, "gpu", p->gpu.name);
  jw_str(&j, "engine", p->engine.name);
  jw_u64(&j, "tensor_parallel_size", d->tp);
  jw_u64(&j, "pipeline_parallel_size", d->pp);
  if (deploy_dp(d) > 1) jw_u64(&j, "data_parallel_size", deploy_dp(d));
  jw_u64(&j, "gpus", deploy_gpus(d));
  jw_str(&j, "dtype", dtype_name(d->act_dtype));
  jw_str(&j, "weight_dtype", dtype_name(d->weight_dtype));
  jw_str(&j, "kv_cache_dtype", dtype_name(d->kv_dtype));
  jw_u64(&j, "max_model_len", d->max_model_len);
  jw_u64(&j, "max_num_seqs", d->max_num_seqs);
  jw_u64(&j, "max_num_batched_tokens", d->max_num_batched_tokens);
  jw_u64(&j, "context_tokens", p->opts.context_tokens);
  jw_u64(&j, "prompt_tokens", p->opts.prompt_tokens);
  jw_bool(&j, "fits", p->fits);
  if (p->fits) jw_null(&j, "refusal");
  else jw_str(&j, "refusal", p->refusal);
  memplan_write_json(&j, "memory_per_gpu", &p->mem);
  jw_obj(&j, "batch");
  jw_u64(&j, "blocks_per_sequence", p->blocks_per_seq);
  jw_u64(&j, "max_batch_memory", p->max_batch_memory);
  jw_u64(&j, "max_batch", p->max_batch);
  jw_str(&j, "limit", p->batch_limit);
  jw_end(&j);
  jw_str(&j, "cost_source", p->cost_source);
  jw_str(&j, "cuda_graphs", p->graphs);
  if (p->block_fp8[0]) jw_str(&j, "block_fp8_linears", p->block_fp8);
  if (p->ungated_moe[0]) jw_str(&j, "ungated_experts", p->ungated_moe);
  else jw_null(&j, "block_fp8_linears");
  allreduce_json(&j, p);
  step_json(&j, "decode_batch1", &p->decode1);
  if (p->max_batch) step_json(&j, "decode_max_batch", &p->decode_max);
  else jw_null(&j, "decode_max_batch");
  step_json(&j, "prefill", &p->prefill);
  if (p->spec_tokens_per_step > 0) {
    jw_obj(&j, "speculative_decoding");
    jw_str(&j, "method", spec_method_name(p->deploy.spec_method));
    jw_u64(&j, "num_speculative_tokens", p->deploy.num_speculative_tokens);
    jw_num(&j, "expected_tokens_per_step", p->spec_tokens_per_step);
    jw_str(&j, "acceptance_source", p->deploy.spec_source);
    step_json(&j, "verify_batch1", &p->spec1);
    if (p->max_batch) step_json(&j, "verify_max_batch", &p->spec_max);
    jw_end(&j);
  }
  jw_obj(&j, "classic_check");
  jw_num(&j, "parameters", p->params);
  jw_num(&j, "weights_total_gb", p->weights_total_bytes / 1e9);
  jw_num(&j, "weights_read_per_token_gb", p->weights_active_bytes / 1e9);
  jw_num(&j, "gpu_memory_gb", p->gpu.mem_bytes / 1e9);
  jw_u64(&j, "min_gpus_for_weights", p->min_gpus_weights);
  jw_num(&j, "target_tokens_per_s_per_sequence", p->opts.target_tps);
  jw_num(&j, "weight_read_tb_s", p->weight_read_Bps / 1e12);
  jw_num(&j, "gpu_hbm_tb_s", p->gpu.hbm_Bps / 1e12);
  jw_u64(&j, "min_gpus_for_bandwidth", p->min_gpus_bandwidth);
  jw_num(&j, "deployment_hbm_tb_s", p->deploy_hbm_Bps / 1e12);
  jw_end(&j);
  layouts_json(&j, p);
  jw_arr(&j, "gates");
  for (int i = 0; i < PLAN_GATES; i++) {
    jw_obj(&j, NULL);
    jw_str(&j, "gate", p->gates[i].name);
    jw_str(&j, "status", p->gates[i].status);
    jw_str(&j, "detail", p->gates[i].detail);
    jw_end(&j);
  }
  jw_end(&j);
  return jw_finish(&j, err);
}
