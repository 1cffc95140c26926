/* coldstart.c: a started replica's cold start from configs/coldstart.json (coldstart.h). */
#include "config/coldstart.h"

#include <stdio.h>
#include <string.h>

#include "config/jsonx.h"
#include "core/embed.h"

#define FILE_PATH "configs/coldstart.json"

static int source(const jx *j, const autoscale_cfg *p, cold_start *out, sim_err *err) {
  char want[32];
  if (p->load_from[0]) snprintf(want, sizeof want, "%s", p->load_from);
  else {
    int rc = jx_str(j, j->root, FILE_PATH, "default_source", want, sizeof want);
    if (rc) return rc;
  }
  const cJSON *arr = cJSON_GetObjectItemCaseSensitive(j->root, "sources"), *e;
  char names[256] = "";
  cJSON_ArrayForEach(e, arr) {
    const cJSON *nm = cJSON_GetObjectItemCaseSensitive(e, "name"), *bw = cJSON_GetObjectItemCaseSensitive(e, "bytes_per_s");
    const cJSON *pg = cJSON_GetObjectItemCaseSensitive(e, "per_gpu"), *src = cJSON_GetObjectItemCaseSensitive(e, "source");
    if (!cJSON_IsString(nm) || !cJSON_IsNumber(bw) || !(bw->valuedouble > 0) || !cJSON_IsBool(pg) || !cJSON_IsString(src))
      return jx_fail(j, e, "sources", NULL, "a source needs name, bytes_per_s > 0, per_gpu and source");
    size_t k = strlen(names);
    snprintf(names + k, sizeof names - k, "%s%s", k ? ", " : "", nm->valuestring);
    if (strcmp(nm->valuestring, want)) continue;
    snprintf(out->load_from, sizeof out->load_from, "%s", nm->valuestring);
    out->load_bytes_per_s = bw->valuedouble;
    out->per_gpu = cJSON_IsTrue(pg);
    snprintf(out->load_source, sizeof out->load_source, "%s", src->valuestring);
    return SIM_OK;
  }
  return sim_errf(err, SIM_EINPUT, "--autoscale: load_from=%s: unknown weight source (%s)", want, names);
}

static int warmup(const jx *j, const char *engine, cold_start *out) {
  const cJSON *arr = cJSON_GetObjectItemCaseSensitive(j->root, "warmup"), *e, *dflt = NULL, *hit = NULL;
  cJSON_ArrayForEach(e, arr) {
    const cJSON *en = cJSON_GetObjectItemCaseSensitive(e, "engine"), *s = cJSON_GetObjectItemCaseSensitive(e, "seconds");
    if (!cJSON_IsString(en) || !cJSON_IsNumber(s) || s->valuedouble < 0 ||
        !cJSON_IsString(cJSON_GetObjectItemCaseSensitive(e, "source")))
      return jx_fail(j, e, "warmup", NULL, "an entry needs engine, seconds >= 0 and source");
    if (!strcmp(en->valuestring, engine)) hit = e;
    if (!strcmp(en->valuestring, "default")) dflt = e;
  }
  if (!hit) hit = dflt;
  if (!hit) return jx_fail(j, arr, "warmup", NULL, "no entry for engine %s and no \"default\"", engine);
  out->warmup_s = cJSON_GetObjectItemCaseSensitive(hit, "seconds")->valuedouble;
  snprintf(out->warmup_source, sizeof out->warmup_source, "%s",
           cJSON_GetObjectItemCaseSensitive(hit, "source")->valuestring);
  return SIM_OK;
}

int coldstart_resolve(const autoscale_cfg *p, const char *engine, double gpu_weight_bytes, uint32_t gpus,
                      cold_start *out, sim_err *err) {
  memset(out, 0, sizeof *out);
  const sim_embedded_file *f = sim_embed_find(FILE_PATH);
  if (!f) return sim_errf(err, SIM_EINTERNAL, "%s: not embedded", FILE_PATH);
  jx j;
  int rc = jx_parse(&j, f->data, FILE_PATH, err);
  if (rc) return rc;
  if (!rc) rc = jx_num(&j, j.root, FILE_PATH, "pod_start_s", &out->pod_s, 0, 86400, 0);
  if (!rc) rc = jx_str(&j, j.root, FILE_PATH, "pod_start_source", out->pod_source, sizeof out->pod_source);
  if (!rc) rc = source(&j, p, out, err);
  if (!rc) rc = warmup(&j, engine, out);
  jx_free(&j);
  if (rc) return rc;
  if (p->pod_start_s >= 0) out->pod_s = p->pod_start_s, snprintf(out->pod_source, sizeof out->pod_source, "given (pod_start=)");
  if (p->warmup_s >= 0) out->warmup_s = p->warmup_s, snprintf(out->warmup_source, sizeof out->warmup_source, "given (warmup=)");
  double bytes = out->per_gpu ? gpu_weight_bytes : gpu_weight_bytes * gpus;
  out->load_s = bytes / out->load_bytes_per_s;
  out->total_s = out->pod_s + out->load_s + out->warmup_s;
  return SIM_OK;
}
