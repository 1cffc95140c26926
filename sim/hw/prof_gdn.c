/* prof_gdn.c: Gated DeltaNet kernel tables of a profile ("gdn_module") and prof_gdn_ns (see prof.h). A table
 * is one key (phase, heads and head dims per GPU, convolution kernel size) over batch x length, stored and
 * interpolated as the MLA modules (prof_rows.c). Tables are sorted by key and found by binary search. */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hw/prof_impl.h"

int prof_gdn_key_cmp(const prof_gdn_key *x, const prof_gdn_key *y) {
  if (x->context != y->context) return x->context ? 1 : -1;
  const uint32_t kx[] = {x->k_heads, x->k_dim, x->v_heads, x->v_dim, x->conv};
  const uint32_t ky[] = {y->k_heads, y->k_dim, y->v_heads, y->v_dim, y->conv};
  for (int i = 0; i < 5; i++)
    if (kx[i] != ky[i]) return kx[i] < ky[i] ? -1 : 1;
  return 0;
}

static int cmp_gdn(const void *a, const void *b) {
  return prof_gdn_key_cmp(&((const gdn_tab *)a)->key, &((const gdn_tab *)b)->key);
}

static int parse_one(pctx *c, const cJSON *t, const char *f, gdn_tab *g) {
  static const char *const keys[] = {"phase", "k_heads", "k_dim", "v_heads", "v_dim", "conv", "models",
                                     "kernel", "batch",  "len",   "ns",      NULL};
  if (!cJSON_IsObject(t)) return prof__bad(c, t, f, "expected an object");
  prof_gdn_key *k = &g->key;
  char phase[16];
  int rc;
  if ((rc = prof__keys(c, t, f, keys)) || (rc = prof__str(c, t, "phase", f, true, phase, sizeof phase)) ||
      (rc = prof__u32(c, t, "k_heads", f, true, &k->k_heads)) || (rc = prof__u32(c, t, "k_dim", f, true, &k->k_dim)) ||
      (rc = prof__u32(c, t, "v_heads", f, true, &k->v_heads)) || (rc = prof__u32(c, t, "v_dim", f, true, &k->v_dim)) ||
      (rc = prof__u32(c, t, "conv", f, true, &k->conv)))
    return rc;
  char fp[96];
  snprintf(fp, sizeof fp, "%s.phase", f);
  if (!strcmp(phase, "context")) k->context = true;
  else if (strcmp(phase, "generation"))
    return prof__bad(c, prof__get(t, "phase"), fp, "expected \"generation\" or \"context\", got \"%s\"", phase);
  return prof__parse_rows(c, t, f, &g->rows, &g->nrows, &g->lb);
}

int prof__parse_gdn(pctx *c, prof *p, const cJSON *arr) {
  if (!cJSON_IsArray(arr)) return prof__bad(c, arr, "gdn_module", "expected an array of tables");
  int cnt = cJSON_GetArraySize(arr), i = 0, rc = SIM_OK;
  p->gdn = sim_calloc((size_t)(cnt ? cnt : 1), sizeof *p->gdn);
  for (const cJSON *t = arr->child; t && !rc; t = t->next, i++) {
    char f[64];
    snprintf(f, sizeof f, "gdn_module[%d]", i);
    gdn_tab *g = &p->gdn[p->ngdn++];
    g->idx = i;
    rc = parse_one(c, t, f, g);
  }
  if (!rc) rc = prof__sort_unique(c, p->gdn, p->ngdn, sizeof *p->gdn, offsetof(gdn_tab, idx), cmp_gdn, arr, "gdn_module");
  return rc;
}

void prof__free_gdn(prof *p) {
  for (int i = 0; i < p->ngdn; i++) prof__free_rows(p->gdn[i].rows, p->gdn[i].nrows, p->gdn[i].lb, p->image);
  free(p->gdn);
  p->gdn = NULL;
  p->ngdn = 0;
}

int prof_gdn_tables(const prof *p) { return p ? p->ngdn : 0; }

bool prof_gdn_ns(const prof *p, const prof_gdn_key *k, uint32_t batch, uint32_t len, double *ns) {
  if (!p || !p->ngdn || !batch || !len) return false;
  gdn_tab key;
  memset(&key, 0, sizeof key);
  key.key = *k;
  const gdn_tab *g = bsearch(&key, p->gdn, (size_t)p->ngdn, sizeof *p->gdn, cmp_gdn);
  if (!g || !g->nrows) return false;
  *ns = prof__rows_ns(g->rows, g->nrows, g->lb, batch, len);
  return true;
}
