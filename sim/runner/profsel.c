/* profsel.c: choosing the measured profile of a deployment (see profsel.h). */
#include "runner/profsel.h"

#include <stdio.h>
#include <string.h>

static int attach(prof_sel *s, prof *p, const char *what, const gpu_cfg *gpu, sim_err *err) {
  if (!strcmp(prof_gpu_name(p), gpu->name)) {
    s->own = p;
    snprintf(s->source, sizeof s->source,
             "measured profile %s (this GPU type); roofline from the %s datasheet where it has no data", what,
             gpu->name);
    return SIM_OK;
  }
  int rc = cfg_gpu_load(&s->other_gpu, prof_gpu_name(p), err);
  if (rc) {
    sim_err_prefix(err, "%s: measured on GPU '%s'", what, prof_gpu_name(p));
    prof_free(p);
    return rc;
  }
  s->other = p;
  snprintf(s->source, sizeof s->source,
           "measured profile %s of %s, scaled to %s by the datasheet ratios; roofline where it has no data", what,
           s->other_gpu.name, gpu->name);
  return SIM_OK;
}

static int load(prof_sel *s, const char *name, const gpu_cfg *gpu, sim_err *err) {
  char path[1024];
  prof *pr = NULL;
  int rc = cfg_find(CFG_PROFILE, name, path, sizeof path, err);
  if (!rc) rc = prof_load(&pr, path, err);
  if (rc) return rc;
  return attach(s, pr, path, gpu, err);
}

int profsel_choose(prof_sel *s, const char *spec, const gpu_cfg *gpu, const engine_cfg *engine, sim_err *err) {
  memset(s, 0, sizeof *s);
  snprintf(s->source, sizeof s->source,
           "roofline from the %s datasheet with the %s engine's efficiency factors (no measured profile)", gpu->name,
           engine->name);
  if (!spec[0] || !strcmp(spec, "none")) return SIM_OK;
  if (strcmp(spec, "auto") != 0) return load(s, spec, gpu, err);
  char names[4096], *save = NULL;
  cfg_list(CFG_PROFILE, names, sizeof names);
  char best_own[256] = "", best_other[256] = "";
  for (char *tok = strtok_r(names, ", ", &save); tok; tok = strtok_r(NULL, ", ", &save)) {
    char path[1024];
    prof *pr = NULL;
    sim_err ignore;
    if (cfg_find(CFG_PROFILE, tok, path, sizeof path, &ignore) || prof_load(&pr, path, &ignore)) continue;
    gpu_cfg g;
    if (!strcmp(prof_gpu_name(pr), gpu->name)) {
      if (strcmp(tok, best_own) > 0) snprintf(best_own, sizeof best_own, "%s", tok);
    } else if (!cfg_gpu_load(&g, prof_gpu_name(pr), &ignore)) {
      if (strcmp(tok, best_other) > 0) snprintf(best_other, sizeof best_other, "%s", tok);
    }
    prof_free(pr);
  }
  const char *pick = best_own[0] ? best_own : best_other[0] ? best_other : NULL;
  return pick ? load(s, pick, gpu, err) : SIM_OK;
}

void profsel_attach(const prof_sel *s, cost_model *c) {
  cost_set_profiles(c, s->own, s->other, s->other ? &s->other_gpu : NULL);
}

void profsel_free(prof_sel *s) {
  prof_free(s->own);
  prof_free(s->other);
  s->own = s->other = NULL;
}
