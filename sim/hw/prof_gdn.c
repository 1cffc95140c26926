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

static int parse_one(pctx *c, const cJSON *t, const char *f, void *tab) {
  gdn_tab *g = tab;
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
  if ((rc = prof__parse_phase(c, t, f, phase, &k->context))) return rc;
  return prof__parse_rows(c, t, f, &g->r);
}

int prof__parse_gdn(pctx *c, prof *p, const cJSON *arr) {
  return prof__parse_mods(c, arr, "gdn_module", (void **)&p->gdn, &p->ngdn, sizeof *p->gdn, offsetof(gdn_tab, idx),
                          parse_one, cmp_gdn);
}

int prof_gdn_tables(const prof *p) { return p ? p->ngdn : 0; }

bool prof_gdn_ns(const prof *p, const prof_gdn_key *k, uint32_t batch, uint32_t len, double *ns) {
  if (!p) return false;
  gdn_tab key;
  memset(&key, 0, sizeof key);
  key.key = *k;
  return prof__mod_ns(p->gdn, p->ngdn, sizeof *p->gdn, offsetof(gdn_tab, r), &key, cmp_gdn, batch, len, ns);
}
