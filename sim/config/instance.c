/* instance.c: loading cloud instance files (parsed in cfg_parse.c with the
 * other config kinds) and packing replicas onto instances (see instance.h). */
#include "config/instance.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config/mig.h"

int cfg_instance_load(instance_cfg *in, const char *name_or_path, sim_err *err) {
  char *text = NULL, what[1100];
  int rc = cfg_read(CFG_INSTANCE, name_or_path, &text, what, sizeof what, err);
  if (rc) return rc;
  rc = cfg_instance_parse(in, text, what, err);
  free(text);
  if (rc) return rc;
  gpu_cfg g; /* the GPU must exist */
  if ((rc = cfg_gpu_load(&g, in->gpu, err))) return sim_err_prefix(err, "%s: gpu", what);
  return SIM_OK;
}

uint32_t instance_pack(const instance_cfg *in, const gpu_cfg *gpu, uint32_t gpus_per_replica, uint32_t replicas,
                       uint32_t *instances, char *why, size_t why_n) {
  *instances = 0;
  if (why_n) why[0] = 0;
  const char *whole = gpu->mig_parent[0] ? gpu->mig_parent : gpu->name;
  gpu_cfg ig;
  sim_err ignore;
  bool same = !strcmp(in->gpu, whole);
  if (!same && !cfg_gpu_load(&ig, in->gpu, &ignore)) same = !strcmp(ig.name, whole) || cfg_gpu_has_alias(&ig, whole);
  if (!same) {
    snprintf(why, why_n, "%s holds %s, not %s", in->name, in->gpu, whole);
    return 0;
  }
  uint32_t per;
  if (gpu->mig_parent[0]) {
    gpu_cfg w;
    const mig_profile *m = NULL;
    if (!cfg_gpu_load(&w, whole, &ignore)) m = mig_find(&w, strchr(gpu->name, ':') + 1);
    per = m ? in->gpu_count * m->max_instances : 0;
    if (!per) snprintf(why, why_n, "%s: the profile of %s is unknown to its GPU file", in->name, gpu->name);
  } else {
    per = gpus_per_replica ? in->gpu_count / gpus_per_replica : 0;
    if (!per)
      snprintf(why, why_n, "%s has %u GPUs, a replica needs %u (a replica spanning instances is not modelled)",
               in->name, in->gpu_count, gpus_per_replica);
  }
  if (per) *instances = (replicas + per - 1) / per;
  return per;
}
