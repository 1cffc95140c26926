/* prof_mla.c: multi-head latent attention module tables of a profile and
 * prof_mla_module_ns (see prof.h). A table is one key (phase, KV dtype, GEMM
 * type, heads per GPU, MLA dimensions) over batch x length; the file holds
 * the full matrix with null where nothing was measured (the collector stops
 * at a token budget, batch x length), memory holds ragged rows of the
 * measured cells (prof_rows.c). Tables are sorted by key and found by binary
 * search. */
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hw/prof_impl.h"

int prof_mla_key_cmp(const prof_mla_key *x, const prof_mla_key *y) {
  if (x->context != y->context) return x->context ? 1 : -1;
  if (x->kv_dtype != y->kv_dtype) return (int)x->kv_dtype - (int)y->kv_dtype;
  int c = strcmp(x->gemm, y->gemm);
  if (c) return c;
  const uint32_t kx[] = {x->heads, x->dims.hidden, x->dims.q_lora, x->dims.kv_lora, x->dims.qk_nope,
                         x->dims.qk_rope, x->dims.v_head, x->topk};
  const uint32_t ky[] = {y->heads, y->dims.hidden, y->dims.q_lora, y->dims.kv_lora, y->dims.qk_nope,
                         y->dims.qk_rope, y->dims.v_head, y->topk};
  for (int i = 0; i < 8; i++)
    if (kx[i] != ky[i]) return kx[i] < ky[i] ? -1 : 1;
  return 0;
}

static int cmp_mla(const void *a, const void *b) {
  return prof_mla_key_cmp(&((const mla_tab *)a)->key, &((const mla_tab *)b)->key);
}

static int parse_one(pctx *c, const cJSON *t, const char *f, void *tab) {
  mla_tab *m = tab;
  static const char *const keys[] = {"phase",   "kv_dtype", "gemm",    "heads", "hidden", "q_lora", "kv_lora",
                                     "qk_nope", "qk_rope",  "v_head",  "model", "kernel", "batch",  "len",
                                     "ns",      "index_topk", NULL};
  if (!cJSON_IsObject(t)) return prof__bad(c, t, f, "expected an object");
  prof_mla_key *k = &m->key;
  char phase[16];
  char model[96];
  int rc;
  if ((rc = prof__keys(c, t, f, keys)) || (rc = prof__str(c, t, "phase", f, true, phase, sizeof phase)) ||
      (rc = prof__dtype(c, t, "kv_dtype", f, &k->kv_dtype)) ||
      (rc = prof__str(c, t, "gemm", f, true, k->gemm, sizeof k->gemm)) ||
      (rc = prof__u32(c, t, "heads", f, true, &k->heads)) || (rc = prof__u32(c, t, "hidden", f, true, &k->dims.hidden)) ||
      (rc = prof__u32(c, t, "q_lora", f, true, &k->dims.q_lora)) ||
      (rc = prof__u32(c, t, "kv_lora", f, true, &k->dims.kv_lora)) ||
      (rc = prof__u32(c, t, "qk_nope", f, true, &k->dims.qk_nope)) ||
      (rc = prof__u32(c, t, "qk_rope", f, true, &k->dims.qk_rope)) ||
      (rc = prof__u32(c, t, "v_head", f, true, &k->dims.v_head)) ||
      (rc = prof__u32(c, t, "index_topk", f, false, &k->topk)) ||
      (rc = prof__str(c, t, "model", f, false, model, sizeof model)))
    return rc;
  if ((rc = prof__parse_phase(c, t, f, phase, &k->context))) return rc;
  if (k->kv_dtype == DT_FP16) k->kv_dtype = DT_BF16;
  return prof__parse_rows(c, t, f, &m->r);
}

int prof__parse_mla(pctx *c, prof *p, const cJSON *arr) {
  return prof__parse_mods(c, arr, "mla_module", (void **)&p->mla, &p->nmla, sizeof *p->mla, offsetof(mla_tab, idx),
                          parse_one, cmp_mla);
}

int prof_mla_tables(const prof *p) { return p ? p->nmla : 0; }

bool prof_mla_module_ns(const prof *p, const prof_mla_key *k, uint32_t batch, uint32_t len, double *ns) {
  if (!p) return false;
  mla_tab key;
  memset(&key, 0, sizeof key);
  key.key = *k;
  if (key.key.kv_dtype == DT_FP16) key.key.kv_dtype = DT_BF16;
  return prof__mod_ns(p->mla, p->nmla, sizeof *p->mla, offsetof(mla_tab, r), &key, cmp_mla, batch, len, ns);
}
