/* instance.h: cloud instance types, the unit one rents GPUs in
 * (configs/instances/NAME.json, or a user's file of the same form):
 *   {"name": "aws-p5.48xlarge", "provider": "aws", "gpu": "h100-sxm",
 *    "gpu_count": 8, "interconnect": "nvlink",
 *    "price_usd_per_hour": 98.32, "price_date": "2026-03",
 *    "price_source": "where the figure was published"}
 * or, for a figure nobody published, "price_is_assumption": true with a
 * "price_source" saying what it assumes. The price is per instance-hour, on
 * demand. Every key is required except price_date (when the source has none)
 * and price_is_assumption (false).
 * instance_pack: how many replicas of a deployment one instance holds and how
 * many instances a number of replicas takes (several replicas share an
 * instance when they fit; a MIG slice's replicas fill every GPU of it with
 * that profile). */
#ifndef SIM_INSTANCE_H
#define SIM_INSTANCE_H

#include "config/cfg.h"

typedef struct instance_cfg {
  char name[64];
  char provider[96];
  char gpu[64];            /* GPU name or path, as --gpu takes it (a whole GPU) */
  uint32_t gpu_count;      /* GPUs in one instance */
  link_kind link;          /* between its GPUs */
  double price_per_hour;   /* USD per instance-hour, on demand */
  char price_date[64];     /* when the price was published ("" unknown) */
  char price_source[512];  /* where it was published, or what the assumption is */
  bool price_assumed;      /* true: an assumption, not a published figure */
  char path[1100];         /* the file it came from */
} instance_cfg;

int cfg_instance_load(instance_cfg *in, const char *name_or_path, sim_err *err);
int cfg_instance_parse(instance_cfg *in, const char *json, const char *what, sim_err *err);

/* Replicas of `gpus_per_replica` GPUs of type `gpu` on instance `in`:
 * returns how many one instance holds (0: none, why says why) and sets
 * *instances for `replicas` of them. A MIG slice (gpu->mig_parent) packs
 * max_instances of its profile on every GPU of the instance. */
uint32_t instance_pack(const instance_cfg *in, const gpu_cfg *gpu, uint32_t gpus_per_replica, uint32_t replicas,
                       uint32_t *instances, char *why, size_t why_n);

#endif
