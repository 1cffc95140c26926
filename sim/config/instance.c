/* instance.c: cloud instance files and replica packing (see instance.h). */
#include "config/instance.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config/jsonx.h"
#include "config/mig.h"

int cfg_instance_parse(instance_cfg *in, const char *json, const char *what, sim_err *err) {
  memset(in, 0, sizeof *in);
  static const char *const known[] = {"name",       "provider",     "gpu",          "gpu_count",           "interconnect",
                                      "price_usd_per_hour", "price_date", "price_source", "price_is_assumption", NULL};
  const cJSON *found[9];
  jx j;
  int rc = jx_parse(&j, json, what, err);
  if (rc) return rc;
  const cJSON *o = j.root;
  rc = jx_keys(&j, o, NULL, known, found);
  static const int required[] = {0, 1, 2, 3, 4, 5, 7};
  for (size_t k = 0; !rc && k < sizeof required / sizeof required[0]; k++)
    if (!found[required[k]]) rc = jx_fail(&j, NULL, NULL, known[required[k]], "missing required key");
  if (!rc) rc = jx_str(&j, o, NULL, "name", in->name, sizeof in->name);
  if (!rc) rc = jx_str(&j, o, NULL, "provider", in->provider, sizeof in->provider);
  if (!rc) rc = jx_str(&j, o, NULL, "gpu", in->gpu, sizeof in->gpu);
  if (!rc) rc = jx_u32(&j, o, NULL, "gpu_count", &in->gpu_count, 1, 1024, 0);
  char link[16] = "";
  if (!rc) rc = jx_str(&j, o, NULL, "interconnect", link, sizeof link);
  if (!rc) {
    if (!strcmp(link, "nvlink")) in->link = LINK_NVLINK;
    else if (!strcmp(link, "pcie")) in->link = LINK_PCIE;
    else rc = jx_fail(&j, found[4], NULL, "interconnect", "expected \"nvlink\" or \"pcie\", got \"%s\"", link);
  }
  if (!rc) rc = jx_num(&j, o, NULL, "price_usd_per_hour", &in->price_per_hour, 0, 1e7, JX_GT);
  if (!rc) rc = jx_str(&j, o, NULL, "price_date", in->price_date, sizeof in->price_date);
  if (!rc) rc = jx_str(&j, o, NULL, "price_source", in->price_source, sizeof in->price_source);
  if (!rc) rc = jx_bool(&j, o, NULL, "price_is_assumption", &in->price_assumed);
  if (!rc && strchr(in->gpu, ':'))
    rc = jx_fail(&j, found[2], NULL, "gpu", "\"%s\": an instance holds whole GPUs (MIG slices are cut by whoever rents "
                 "it: give the whole GPU)", in->gpu);
  jx_free(&j);
  if (!rc) snprintf(in->path, sizeof in->path, "%s", what);
  return rc;
}

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
