/* cost_inplace.h: the cost model on caller storage, for the model's own core (cost.c: cost_new) and white-box
 * tests that read its state (cost_state.h). Everyone else holds a cost_model * from cost_new. */
#ifndef SIM_COST_INPLACE_H
#define SIM_COST_INPLACE_H

#include "hw/cost_state.h"

/* Fills *c (SIM_EINPUT on a config the model cannot price); cost_deinit releases it, also after a failed
 * init. */
int cost_init(cost_model *c, const model_cfg *m, const gpu_cfg *g, const engine_cfg *e, const deploy_cfg *d,
              sim_err *err);
void cost_deinit(cost_model *c);

#endif
