/* profsel.h: which measured cost profile serves a deployment (see cost.h for
 * how a profile is used). `spec` is what the user gave with --profile:
 *   "none"  the roofline alone;
 *   "auto"  (the default) the newest bundled or $SERVESIM_DATA_DIR profile
 *           (names sort by date) measured on this GPU type, else the newest one
 *           of any GPU type servesim has a config for (scaled by the datasheet
 *           ratios), else the roofline alone;
 *   a name or a path: that profile; if it was measured on another GPU type it
 *           is scaled (that GPU type must have a config).
 * The `source` line says which, for every report.
 * Thread-safe (sweeps choose profiles on worker threads).
 * Ownership: profsel_choose fills caller storage; profsel_free releases it. */
#ifndef SIM_PROFSEL_H
#define SIM_PROFSEL_H

#include "config/cfg.h"
#include "hw/cost.h"
#include "hw/prof.h"

typedef struct prof_sel {
  prof *own;         /* measured on the deployment's GPU type, or NULL */
  prof *other;       /* measured on another GPU type, served scaled, or NULL */
  gpu_cfg other_gpu; /* the GPU type `other` was measured on */
  char source[1400]; /* one line: what serves the step costs */
} prof_sel;

int profsel_choose(prof_sel *s, const char *spec, const gpu_cfg *gpu, const engine_cfg *engine, sim_err *err);
/* Hands the chosen profiles to a cost model (which borrows them). */
void profsel_attach(const prof_sel *s, cost_model *c);
void profsel_free(prof_sel *s);

#endif
