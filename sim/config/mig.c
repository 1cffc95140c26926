/* mig.c: MIG profiles in GPU files and slices as GPUs (see mig.h). */
#include "config/mig.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

/* "<N>g.<M>gb" with an optional "+me": N and M. */
static bool parse_name(const char *name, uint32_t *n, uint32_t *gb) {
  unsigned a, b;
  int used = 0;
  if (sscanf(name, "%ug.%ugb%n", &a, &b, &used) != 2) return false;
  if (name[used] && strcmp(name + used, "+me") != 0) return false;
  *n = a, *gb = b;
  return true;
}

int mig_parse(const jx *j, const cJSON *o, gpu_cfg *g) {
  static const char *const known[] = {"profiles", "all_balanced", "source", NULL};
  const cJSON *found[3];
  if (!cJSON_IsObject(o)) return jx_fail(j, o, NULL, "mig", "expected an object, got %s", jx_type_name(o));
  int rc = jx_keys(j, o, "mig", known, found);
  if (!rc) rc = jx_str(j, o, "mig", "source", g->mig_source, sizeof g->mig_source);
  if (!rc && !found[2]) rc = jx_fail(j, o, NULL, "mig", "missing key \"source\" (where the profile table comes from)");
  if (!rc && found[1]) rc = jx_str(j, o, "mig", "all_balanced", g->mig_balanced, sizeof g->mig_balanced);
  if (rc) return rc;
  const cJSON *p = found[0];
  if (!cJSON_IsObject(p) || !p->child)
    return jx_fail(j, p ? p : o, "mig", "profiles", "expected a non-empty object {\"1g.18gb\": 7, ...}, got %s",
                   p ? jx_type_name(p) : "nothing");
  uint32_t gb_max = 0;
  for (const cJSON *e = p->child; e; e = e->next) {
    if (g->n_mig == CFG_MAX_MIG) return jx_fail(j, e, "mig.profiles", e->string, "more than %d profiles", CFG_MAX_MIG);
    mig_profile *m = &g->mig[g->n_mig];
    uint32_t gb;
    if (strlen(e->string) >= sizeof m->name || !parse_name(e->string, &m->compute_slices, &gb))
      return jx_fail(j, e, "mig.profiles", e->string, "not a MIG profile name <N>g.<M>gb[+me]");
    if (m->compute_slices < 1 || m->compute_slices > 7 || gb < 1)
      return jx_fail(j, e, "mig.profiles", e->string, "a profile has 1 to 7 compute slices and some memory");
    if ((rc = jx_u32(j, p, "mig.profiles", e->string, &m->max_instances, 1, 7, 0))) return rc;
    snprintf(m->name, sizeof m->name, "%s", e->string);
    m->memory_slices = gb; /* the profile's GB until every name is read */
    if (gb > gb_max) gb_max = gb;
    g->n_mig++;
  }
  /* memory slices: M GB of the largest profile's (the whole GPU's) GB, in eighths: the names round to whole
     GB (18 of 141 is 1/8), so the nearest eighth must be one of 1, 2, 4, 8 */
  for (uint32_t i = 0; i < g->n_mig; i++) {
    mig_profile *m = &g->mig[i];
    uint32_t ms = (uint32_t)lround(8.0 * m->memory_slices / gb_max);
    if (ms != 1 && ms != 2 && ms != 4 && ms != 8)
      return jx_fail(j, p, "mig", "profiles", "%s: %u GB is not 1/8, 2/8, 4/8 or all of the largest profile's %u GB",
                     m->name, m->memory_slices, gb_max);
    m->memory_slices = ms;
  }
  return SIM_OK;
}

bool mig_split(const char *name, char *gpu, size_t gn, char *profile, size_t pn) {
  const char *c = strchr(name, ':');
  if (!c || sim_is_file(name)) return false;
  snprintf(gpu, gn, "%.*s", (int)(c - name), name);
  snprintf(profile, pn, "%s", c + 1);
  return true;
}

const mig_profile *mig_find(const gpu_cfg *whole, const char *profile) {
  for (uint32_t i = 0; i < whole->n_mig; i++)
    if (!strcmp(whole->mig[i].name, profile)) return &whole->mig[i];
  return NULL;
}

int mig_slice(gpu_cfg *out, const gpu_cfg *whole, const char *profile, sim_err *err) {
  if (whole->mig_parent[0])
    return sim_errf(err, SIM_EINPUT, "GPU '%s' is already a MIG slice: it cannot be cut again", whole->name);
  if (!whole->n_mig)
    return sim_errf(err, SIM_EINPUT, "GPU '%s' has no MIG profiles (its file lists none: not MIG-capable)",
                    whole->name);
  const mig_profile *m = mig_find(whole, profile);
  if (!m) {
    char list[CFG_MAX_MIG * 26] = "";
    for (uint32_t i = 0; i < whole->n_mig; i++)
      snprintf(list + strlen(list), sizeof list - strlen(list), "%s%s", i ? ", " : "", whole->mig[i].name);
    return sim_errf(err, SIM_EINPUT, "GPU '%s' has no MIG profile '%s'; its profiles: %s", whole->name, profile, list);
  }
  *out = *whole;
  double c = m->compute_slices / 7.0, b = m->memory_slices / 8.0;
  if (snprintf(out->name, sizeof out->name, "%s:%s", whole->name, m->name) >= (int)sizeof out->name ||
      snprintf(out->full_name, sizeof out->full_name, "%s, MIG %s slice", whole->full_name, m->name) >=
          (int)sizeof out->full_name)
    return sim_errf(err, SIM_EINPUT, "GPU '%s', MIG profile '%s': the slice's name is too long", whole->name, m->name);
  snprintf(out->mig_parent, sizeof out->mig_parent, "%s", whole->name);
  out->mig_compute_slices = m->compute_slices;
  out->mig_memory_slices = m->memory_slices;
  out->mem_bytes = whole->mem_bytes * b;
  out->hbm_Bps = whole->hbm_Bps * b;
  out->l2_bytes = whole->l2_bytes * b;
  for (int d = 0; d < DT_COUNT; d++) out->flops[d] = whole->flops[d] * c;
  out->sm_count = (uint32_t)lround(whole->sm_count * c);
  if (!out->sm_count) out->sm_count = 1;
  out->price_per_hour = whole->price_per_hour * c;
  out->gpus_per_node = 1; /* no NVLink to any other slice */
  out->naliases = 0;      /* no measured table is this slice's own */
  out->n_mig = 0;
  out->mig_balanced[0] = 0;
  if (snprintf(out->source, sizeof out->source,
           "MIG %s of %s: %u/7 of the SMs and tensor-core peaks, %u/8 of the memory, L2 and HBM bandwidth (the "
           "bandwidth share: servesim assumption), no NVLink, price %u/7 of the GPU's (assumption); profiles: %s; "
           "the whole GPU's figures: its file's source",
           m->name, whole->name, m->compute_slices, m->memory_slices, m->compute_slices,
           whole->mig_source) >= (int)sizeof out->source)
    out->source[sizeof out->source - 2] = '~'; /* cut: a description only */
  return SIM_OK;
}
