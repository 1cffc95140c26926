/* cost_comm.c: the communication terms of the cost model (cost_comm.h): the TP
 * all-reduce (measured table, link formula, hierarchical across nodes), the
 * plausibility check of a measured table (--allreduce auto), the attention
 * data-parallel group's dispatch and combine, and pipeline sends. */
#include <math.h>
#include <string.h>

#include "hw/cost_comm.h"

#include "hw/cost_state.h"

/* ---- all-reduce ------------------------------------------------------------------- */

/* The link formula (header comment): one-shot or ring, whichever is faster. */
static double allreduce_link(const cost_model *c, uint32_t t, double bytes) {
  const engine_cfg *e = c->engine;
  double peers = t - 1.0;
  double bw = c->gpu->link_Bps * e->allreduce_bw_eff, hop = c->gpu->link_latency_ns;
  double one_shot = e->allreduce_latency_ns + peers * hop + ns_of(peers * bytes, bw);
  double ring = e->allreduce_latency_ns + 2.0 * peers * hop + ns_of(2.0 * peers / t * bytes, bw);
  return one_shot < ring ? one_shot : ring;
}

/* Nodes the TP group spans: groups larger than a node take whole nodes
 * (cfg_resolve checks it). */
static uint32_t nodes_of(const cost_model *c) {
  uint32_t t = tp_of(c), g = c->deploy->gpus_per_node;
  return t > g ? t / g : 1;
}

/* A TP group spanning n nodes of g GPUs reduces hierarchically (NCCL's
 * inter-node algorithms, and vLLM's custom all-reduce is node-local): a
 * reduce-scatter and an all-gather inside each node, together the time of one
 * node-local all-reduce of the whole message (NCCL's table at g GPUs, else
 * the link formula), and between them an all-reduce of each GPU's 1/g shard
 * across the n nodes, the g rails in parallel (one NIC per GPU): a ring over
 * the network, 2 (n-1)/n x S/g bytes at the NIC's bandwidth plus 2 (n-1)
 * network hops (the GPU file's per-hop latency, 5 us by default: the network
 * hop latency of NCCL's own tuning model for its low-latency protocols,
 * src/graph/tuning.cc hwLat[NET]; the call's own software cost is in the
 * node-local part). For a 1-token step of 2 nodes of 8 H200 this gives 28.5
 * us per all-reduce, where NCCL's model predicts about 30 us for its tree
 * algorithm (6.8 + 2 x (7 x 0.52 x 1.8 + 1 x 5.0)). */
static double allreduce_network(const cost_model *c, uint32_t nodes, double bytes) {
  uint32_t g = tp_of(c) / nodes;
  double n1 = nodes - 1.0;
  return 2.0 * n1 * c->gpu->net_latency_ns + ns_of(2.0 * n1 / nodes * bytes / g, c->gpu->net_Bps);
}

static double allreduce_nodes(const cost_model *c, uint32_t nodes, double bytes, bool use_table, cost_src *src) {
  uint32_t g = tp_of(c) / nodes;
  double intra = 0, ns;
  *src = SRC_ROOFLINE;
  if (g > 1) {
    if (use_table && c->profile && prof_allreduce_ns(c->profile, PROF_AR_NCCL, g, bytes, &ns)) {
      intra = ns;
      *src = SRC_PROFILE;
    } else {
      intra = allreduce_link(c, g, bytes);
    }
  }
  return intra + allreduce_network(c, nodes, bytes);
}

/* One all-reduce of `tokens` x H activations: the measured table when
 * use_table (and it has the case), else the link formula; across nodes,
 * hierarchical. */
static double allreduce_of(const cost_model *c, uint32_t tokens, bool graphed, bool use_table, cost_src *src) {
  *src = SRC_ROOFLINE;
  uint32_t t = tp_of(c);
  if (t <= 1 || tokens == 0) return 0;
  double bytes = (double)tokens * c->model->hidden * act_b(c), ns;
  uint32_t nodes = nodes_of(c);
  if (nodes > 1) return allreduce_nodes(c, nodes, bytes, use_table, src);
  if (c->profile && use_table) {
    if (prof_allreduce_ns(c->profile, graphed ? PROF_AR_CUSTOM_GRAPH : PROF_AR_CUSTOM_EAGER, t, bytes, &ns) ||
        prof_allreduce_ns(c->profile, PROF_AR_NCCL, t, bytes, &ns)) {
      *src = SRC_PROFILE;
      return ns;
    }
  }
  return allreduce_link(c, t, bytes);
}

/* Attention data parallelism: an MoE layer gathers every rank's hidden states
 * before the experts and scatters the reduced outputs back after them (vLLM's
 * naive dispatch and combine, and its default all2all backend with expert
 * parallelism, allgather_reducescatter: all_gatherv and reduce_scatterv over
 * the DP group with pynccl) of a buffer of Tg x H activations (Tg: every
 * rank's tokens of the step); it stands in for the MoE block's TP all-reduce.
 * Costed from NCCL's measured all_gather and reduce_scatter tables at the
 * node-local GPU count (their sizes are the whole buffer), else NCCL's
 * all-reduce table of the same buffer (the same bytes on the links), else the
 * link formula, plus the network ring when the group spans nodes. */
double cost__dp_collective_ns(const cost_model *c, uint32_t Tg, cost_src *src) {
  *src = SRC_ROOFLINE;
  uint32_t dp = c->shard.dp, g = tp_of(c) * dp;
  if (dp <= 1 || !Tg) return 0;
  uint32_t per = c->deploy->gpus_per_node;
  uint32_t nodes = g > per ? g / per : 1, gl = g / nodes;
  double bytes = (double)Tg * c->model->hidden * act_b(c), ns = 0;
  if (gl > 1) {
    double ag, rs;
    if (c->ar_table && c->profile && prof_allreduce_ns(c->profile, PROF_AG_NCCL, gl, bytes, &ag) &&
        prof_allreduce_ns(c->profile, PROF_RS_NCCL, gl, bytes, &rs))
      ns = ag + rs, *src = SRC_PROFILE;
    else if (c->ar_table && c->profile && prof_allreduce_ns(c->profile, PROF_AR_NCCL, gl, bytes, &ns))
      *src = SRC_PROFILE;
    else
      ns = allreduce_link(c, gl, bytes);
  }
  if (nodes > 1) {
    double n1 = nodes - 1.0;
    ns += 2.0 * n1 * c->gpu->net_latency_ns + ns_of(2.0 * n1 / nodes * bytes / gl, c->gpu->net_Bps);
  }
  return ns;
}

double cost__allreduce_eval(const cost_model *c, uint32_t tokens, bool graphed, cost_src *src) {
  return allreduce_of(c, tokens, graphed, c->ar_table, src);
}

bool cost_allreduce_check(const cost_model *c, ar_check *out) {
  memset(out, 0, sizeof *out);
  uint32_t g = tp_of(c) / nodes_of(c);
  if (g <= 1 || !c->profile) return false;
  double bytes = COST_AR_CHECK_BYTES, ns;
  /* the table the steps use for large messages: node-local, the engine's eager kernel, else NCCL */
  if (!(nodes_of(c) == 1 && prof_allreduce_ns(c->profile, PROF_AR_CUSTOM_EAGER, g, bytes, &ns)) &&
      !prof_allreduce_ns(c->profile, PROF_AR_NCCL, g, bytes, &ns))
    return false;
  double moved = 2.0 * (g - 1) / g * bytes, link = allreduce_link(c, g, bytes);
  out->gpus = g;
  out->table_busbw_Bps = ns > 0 ? moved * 1e9 / ns : 0;
  out->link_busbw_Bps = link > 0 ? moved * 1e9 / link : 0;
  out->implausible = ns > COST_AR_CHECK_RATIO * link;
  return true;
}

double cost_allreduce_link_ns(const cost_model *c, uint32_t tokens) {
  cost_src s;
  return allreduce_of(c, tokens, false, false, &s);
}

uint32_t cost_nodes(const cost_model *c) { return nodes_of(c); }


double cost_allreduce_network_ns(const cost_model *c, uint32_t tokens) {
  uint32_t nodes = nodes_of(c);
  if (nodes <= 1 || tokens == 0) return 0;
  return allreduce_network(c, nodes, (double)tokens * c->model->hidden * act_b(c));
}

/* ---- pipeline sends ------------------------------------------------------------- */

bool cost_pp_hop_crosses_nodes(const cost_model *c, uint32_t hop) {
  uint32_t g = c->deploy->gpus_per_node, t = tp_of(c);
  uint32_t last = (hop + 1) * t - 1, next = (hop + 1) * t; /* GPU indices in the replica, stage-major */
  return last / g != next / g;
}

/* cost.h: point-to-point slices, then the receiving group's all-gather. */
double cost_pp_send_ns(const cost_model *c, uint32_t tokens, uint32_t hop) {
  if (c->pp <= 1 || hop + 1 >= c->pp || tokens == 0) return 0;
  const gpu_cfg *g = c->gpu;
  uint32_t t = tp_of(c);
  double whole = 2.0 * tokens * c->model->hidden * act_b(c); /* hidden states + residual */
  bool cross = cost_pp_hop_crosses_nodes(c, hop);
  double ns = cross ? g->net_latency_ns + ns_of(whole / t, g->net_Bps) : g->link_latency_ns + ns_of(whole / t, g->link_Bps);
  if (t > 1) { /* all-gather of the t slices in the receiving group */
    uint32_t nodes = nodes_of(c), per = t / nodes;
    if (per > 1)
      ns += c->engine->allreduce_latency_ns + (per - 1.0) * g->link_latency_ns +
            ns_of((per - 1.0) / per * whole / nodes, g->link_Bps * c->engine->allreduce_bw_eff);
    if (nodes > 1)
      ns += (nodes - 1.0) * g->net_latency_ns + ns_of((nodes - 1.0) / nodes * whole / per, g->net_Bps);
  }
  return ns;
}

/* cost.h: the rank waits inside the MoE dispatch collective (GPU time, where
 * a profile of the rank shows it: in the all-gather); with async scheduling
 * the host time it hid grows hidden by as much (op_ns still sums to total). */
void cost_step_wait(const cost_model *c, step_cost *out, double ns) {
  if (!(ns > 0)) return;
  double gpu = out->gpu_ns + ns;
  double shown = out->op_ns[OP_CPU_OVERHEAD];
  double now_shown = c->deploy->async_scheduling > 0 ? (out->cpu_ns > gpu ? out->cpu_ns - gpu : 0) : shown;
  out->op_ns[OP_ALLREDUCE] += ns;
  out->bound_ns[BOUND_COMM] += ns;
  out->op_ns[OP_CPU_OVERHEAD] = now_shown;
  out->bound_ns[BOUND_CPU] += now_shown - shown;
  out->gpu_ns = gpu;
  out->stage_ns[0] += ns;
  out->total_ns = gpu + now_shown;
}

double cost_allreduce_ns(const cost_model *c, uint32_t tokens, bool graphed, cost_src *src) {
  cost_src s;
  double ns = cost__allreduce_eval(c, tokens, graphed, &s);
  if (src) *src = s;
  return ns;
}
