/* cost_comm.h: the communication terms of the cost model (cost_comm.c): the TP all-reduce (measured table,
 * link formula, hierarchical across nodes), its plausibility check, the attention data-parallel group's
 * dispatch and combine, the lockstep wait, and pipeline sends. A part that cost.c calls; it calls nothing of
 * cost.c. */
#ifndef SIM_COST_COMM_H
#define SIM_COST_COMM_H

#include "hw/cost_types.h"

/* One TP all-reduce of `tokens` x H activations as the deployment costs it; the DP group's dispatch and
 * combine of Tg tokens. */
double cost__allreduce_eval(const cost_model *c, uint32_t tokens, bool graphed, cost_src *src);
double cost__dp_collective_ns(const cost_model *c, uint32_t Tg, cost_src *src);

/* Attention data parallelism with MoE layers: the DP ranks of a replica run
 * each step in lockstep (every MoE layer gathers all ranks' tokens), so a
 * rank whose own step (cost_step) is shorter than the slowest rank's waits
 * the difference, `ns`: added to *out as GPU time of OP_ALLREDUCE / BOUND_COMM
 * (the dispatch collective the rank waits in). */
void cost_step_wait(const cost_model *c, step_cost *out, double ns);
/* One all-reduce of `tokens` x H activations, as in a step that replays
 * graphs (graphed) or not. */
double cost_allreduce_ns(const cost_model *c, uint32_t tokens, bool graphed, cost_src *src);
/* The same all-reduce by the link formula alone (GPU file's link bandwidth
 * and latency, engine's allreduce_bw_eff and allreduce_latency_us), whatever
 * the profile measured: what `--allreduce link` uses. */
double cost_allreduce_link_ns(const cost_model *c, uint32_t tokens);
/* The plausibility check of --allreduce auto: the measured table against
 * the link formula for one COST_AR_CHECK_BYTES message at the node-local GPU
 * count (bus bandwidth 2 (g-1)/g x S / t). implausible: the table takes more
 * than COST_AR_CHECK_RATIO x the link's time. Why a ratio of 3: all-reduces
 * with peer-to-peer access (NVLink, PCIe P2P) reach a large share of the
 * link, those bounced through host memory or across CPU sockets a small one,
 * and a third lies between the two populations with room on both sides
 * (their measured shares: docs/ACCURACY.md, "Measured figures behind the cost
 * model"). False (out zeroed but for nothing) when there is no table for
 * this case. */
#define COST_AR_CHECK_BYTES (16.0 * 1024 * 1024)
#define COST_AR_CHECK_RATIO 3.0
typedef struct ar_check {
  uint32_t gpus;                 /* the node-local GPU count checked */
  double table_busbw_Bps, link_busbw_Bps;
  bool implausible;
} ar_check;
bool cost_allreduce_check(const cost_model *c, ar_check *out);
/* Pipeline parallelism: the time for stage `hop`'s output of `tokens`
 * tokens to reach stage hop + 1 (0 <= hop < pp - 1): vLLM sends the hidden
 * states and the residual (2 x tokens x H activations), each TP rank its
 * 1/tp slice (send_tensor_dict with all_gather_group), point to point over
 * NVLink inside a node or the network across nodes (latency + bytes /
 * bandwidth of the GPU file), then the receiving TP group all-gathers the
 * slices (the link formula's ring all-gather, plus a network ring when the
 * group spans nodes). */
double cost_pp_send_ns(const cost_model *c, uint32_t tokens, uint32_t hop);
/* Whether stage hop's send to hop + 1 leaves its node. */
bool cost_pp_hop_crosses_nodes(const cost_model *c, uint32_t hop);
/* Nodes the TP group spans (1 inside a node). */
uint32_t cost_nodes(const cost_model *c);
/* The inter-node part of one all-reduce of `tokens` x H activations (0
 * inside a node): included in cost_allreduce_ns. */
double cost_allreduce_network_ns(const cost_model *c, uint32_t tokens);

#endif
