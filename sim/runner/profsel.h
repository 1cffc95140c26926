/* profsel.h: which measured cost profile serves a deployment (see cost.h for
 * how a profile is used). `spec` is what the user gave with --profile:
 *   "none"  the roofline alone;
 *   "auto"  (the default) a bundled or $SERVESIM_DATA_DIR profile chosen by
 *           its file name alone, <gpu>_<engine>-<version>.json (e.g.
 *           h100-sxm_vllm-0.14.0.json; the big files are not parsed to choose):
 *           1. of this GPU type and the deployment's engine, the nearest
 *              version: the newest not newer than the engine's `version`
 *              (configs/engines/NAME.json), else the oldest there is; an engine
 *              without a version takes the newest;
 *           2. else the same engine's profile of another GPU type servesim has
 *              a config for, the one with the nearest datasheet HBM bandwidth
 *              (|log ratio|, then name order), version chosen as in 1, served
 *              scaled by the datasheet ratios;
 *           3. else the roofline alone.
 *           Files named otherwise (e.g. a calibrate run's <gpu>_<model>.json)
 *           are used only when named explicitly;
 *   a name or a path: that profile; if it was measured on another GPU type it
 *           is scaled (that GPU type must have a config).
 * The `source` line names the table, GPU, engine and version, for every report.
 * Fused-MoE tables live in a companion file, <profile>.moe.json (so dense
 * runs never parse them): for a model with experts, profsel_attach loads the
 * chosen profile's companion, then those of the same GPU's other versions.
 *
 * Profiles are loaded once per path per process into a cache (read-only
 * afterwards, shared by every run and worker thread; a libuv mutex guards
 * loading) and released by profsel_cache_clear, which main calls at exit.
 * Thread-safe (sweeps choose profiles on worker threads).
 * Ownership: profsel_choose fills caller storage that borrows cached
 * profiles; profsel_free resets it (the cache keeps the profiles). */
#ifndef SIM_PROFSEL_H
#define SIM_PROFSEL_H

#include "config/cfg.h"
#include "hw/cost.h"
#include "hw/prof.h"

enum { PROFSEL_MAX_ALT = 4 };

typedef struct prof_sel {
  const prof *own;   /* measured on the deployment's GPU type, or NULL (borrowed from the cache) */
  /* auto: the same GPU type and engine's profiles of the other versions, nearest version first; a model
     with mixture-of-experts layers looks up a fused-MoE shape there when `own` lacks it (measured on this
     GPU at another engine version beats the roofline); loaded by profsel_attach only for such models */
  char alt_names[PROFSEL_MAX_ALT][128];
  int n_alt;
  char own_path[1024];  /* where `own` came from: its fused-MoE companion is <stem>.moe.json beside it */
  const prof *other; /* measured on another GPU type, served scaled, or NULL (borrowed) */
  gpu_cfg other_gpu; /* the GPU type `other` was measured on */
  char source[1400]; /* one line: what serves the step costs */
} prof_sel;

int profsel_choose(prof_sel *s, const char *spec, const gpu_cfg *gpu, const engine_cfg *engine, sim_err *err);
/* Hands the chosen profiles to a cost model (which borrows them). */
void profsel_attach(prof_sel *s, cost_model *c);
void profsel_free(prof_sel *s);

/* The profile at path (a disk path or an embedded relative path), loaded on
 * first use; *out stays valid until profsel_cache_clear. */
int profsel_cache_get(const char *path, const prof **out, sim_err *err);
/* Frees every cached profile. Call once no run uses them (main, at exit). */
void profsel_cache_clear(void);

#endif
