/* mig.h: MIG slices as GPUs. A GPU file may list the MIG profiles of that
 * GPU ("mig"); `--gpu h200:3g.71gb` then names one slice of it, which
 * cfg_gpu_load builds from the whole GPU's facts by the slice's shares:
 *   - SMs and tensor-core peaks x N/7 (NVIDIA's profile tables give a
 *     profile N/7 of the SMs; servesim assumes the seven compute slices
 *     together hold every SM of the datasheet: per-slice SM counts are not
 *     confirmed by the sources read, and if MIG leaves some SMs unused the
 *     slices are a little slower than modelled);
 *   - memory and L2 x M/8 (the profile tables' memory fraction; the memory
 *     of a slice is the GPU's as the driver reports it x M/8);
 *   - HBM bandwidth x M/8: servesim's assumption that a memory slice brings
 *     its own memory controllers (the tables give no bandwidth column);
 *   - no NVLink: a slice talks to nothing, so tensor, pipeline and data
 *     parallelism across slices are refused (cfg_resolve); a deployment of
 *     several slices is several replicas;
 *   - price per hour x N/7 (a share of the GPU's, an assumption);
 *   - measured kernel tables: the whole GPU's, scaled to the slice by these
 *     ratios (runner/profsel), and every output says so.
 * Profiles, counts and the balanced layout come from the GPU file, each with
 * its source (NVIDIA mig-parted's config-default.yaml, the MIG user guide). */
#ifndef SIM_MIG_H
#define SIM_MIG_H

#include <cjson/cJSON.h>

#include "config/cfg.h"
#include "config/jsonx.h"

/* Reads a GPU file's "mig" object: {"profiles": {"1g.18gb": 7, ...},
 * "all_balanced": "2x1g.18gb+...", "source": "..."} into g. */
int mig_parse(const jx *j, const cJSON *o, gpu_cfg *g);
/* "h200:3g.71gb" -> "h200" and "3g.71gb"; false when name has no ':' (or
 * is a file that exists). */
bool mig_split(const char *name, char *gpu, size_t gn, char *profile, size_t pn);
/* The slice `profile` of the whole GPU `whole`, as a GPU of its own. */
int mig_slice(gpu_cfg *out, const gpu_cfg *whole, const char *profile, sim_err *err);
/* The profile of that name, or NULL. */
const mig_profile *mig_find(const gpu_cfg *whole, const char *profile);

#endif
