/* cost_gemm.h: the linear layers of the cost model (cost_gemm.c): one GEMM on the deployment's dtype path,
 * and one mixture-of-experts block (fused routed experts, router, shared experts). A part that cost.c calls;
 * it calls nothing of cost.c. */
#ifndef SIM_COST_GEMM_H
#define SIM_COST_GEMM_H

#include "hw/cost_types.h"

/* One GEMM of M x N x K on the dtype path of `op` (the LM head's: the activation dtype; the others: the
 * weight dtype's), plus a bias of N when `bias`; from the own profile, a scaled one, else the roofline. */
double cost__gemm_shape_eval(const cost_model *c, cost_op op, uint32_t M, uint32_t N, uint32_t K, bool bias,
                             cost_src *src, cost_bound *bound);
/* One call of a GEMM op (OP_GEMM_QKV .. OP_LM_HEAD) at M tokens, its shape from the model's shard. */
double cost__gemm_eval(const cost_model *c, cost_op op, uint32_t M, cost_src *src, cost_bound *bound);
/* DeciLM's dense MLPs of several widths (model_cfg.ffn_classes): the GATEUP or DOWN GEMMs of every class at its own
 * shard width times its layers; *src and *bound are the widest class's. */
double cost__ffn_classes_eval(const cost_model *c, cost_op op, uint32_t T, cost_src *src, cost_bound *bound);
/* One MoE block of T tokens on one GPU, the routed experts seeing Tg tokens (T plus the other DP ranks'). */
double cost__moe_eval(const cost_model *c, uint32_t T, uint32_t Tg, cost_src *src, cost_bound *bound);

#endif
