/* coldstart.h: how long a replica the autoscaler starts takes before it serves (configs/coldstart.json, each
 * figure with its source):
 *   cold start = pod start + weights load + warm-up
 *   weights load = the replica's weight bytes / the source's bandwidth (a shared source: local NVMe, network
 *                  storage), or one GPU's weight bytes / the bandwidth (a per-GPU source: peer GPUs over each
 *                  GPU's own NIC)
 *   warm-up = the engine's compile and CUDA-graph capture (the file's figure per engine, "default" otherwise)
 * The --autoscale spec's pod_start=, load_from=, warmup= override the file. */
#ifndef SIM_COLDSTART_H
#define SIM_COLDSTART_H

#include "config/scalecfg.h"

typedef struct cold_start {
  double pod_s, load_s, warmup_s, total_s;
  char load_from[32];       /* the source's name */
  double load_bytes_per_s;  /* its bandwidth */
  bool per_gpu;
  char pod_source[256], load_source[400], warmup_source[400];
} cold_start;

/* Fills *out for a replica of `gpus` GPUs holding gpu_weight_bytes each, on engine `engine`. */
int coldstart_resolve(const autoscale_cfg *p, const char *engine, double gpu_weight_bytes, uint32_t gpus,
                      cold_start *out, sim_err *err);

#endif
