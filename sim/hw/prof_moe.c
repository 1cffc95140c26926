/* prof_moe.c: fused mixture-of-experts tables of a profile and prof_moe_ns
 * (see prof.h). A table is one shape (dtype, hidden, inter, topk, experts,
 * tp, ep, routing): measured ns at increasing token counts, interpolated like
 * the all-reduce tables (log time linear in log tokens: exact on the
 * weight-streaming plateau and on the compute line). Tables are sorted by
 * their key and found by binary search. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hw/prof_impl.h"

int prof_moe_key_cmp(const prof_moe_key *x, const prof_moe_key *y) {
  int c = strcmp(x->dtype, y->dtype);
  if (c) return c;
  const uint32_t kx[] = {x->hidden, x->inter, x->topk, x->experts, x->tp, x->ep};
  const uint32_t ky[] = {y->hidden, y->inter, y->topk, y->experts, y->tp, y->ep};
  for (int i = 0; i < 6; i++)
    if (kx[i] != ky[i]) return kx[i] < ky[i] ? -1 : 1;
  int d = strcmp(x->dist, y->dist);
  return d ? d : (int)x->ungated - (int)y->ungated;
}

static int cmp_moe(const void *a, const void *b) {
  return prof_moe_key_cmp(&((const moe_tab *)a)->key, &((const moe_tab *)b)->key);
}

static int parse_one(pctx *c, const cJSON *t, const char *f, moe_tab *t_) {
  prof_moe_key *m = &t_->key;
  static const char *const keys[] = {"dtype",    "hidden", "inter",        "topk",   "experts", "tp",
                                     "ep",       "distribution", "tokens", "ns",      "kernel", NULL};
  if (!cJSON_IsObject(t)) return prof__bad(c, t, f, "expected an object");
  int rc;
  if ((rc = prof__keys(c, t, f, keys)) || (rc = prof__str(c, t, "dtype", f, true, m->dtype, sizeof m->dtype)) ||
      (rc = prof__u32(c, t, "hidden", f, true, &m->hidden)) || (rc = prof__u32(c, t, "inter", f, true, &m->inter)) ||
      (rc = prof__u32(c, t, "topk", f, true, &m->topk)) || (rc = prof__u32(c, t, "experts", f, true, &m->experts)) ||
      (rc = prof__u32(c, t, "tp", f, true, &m->tp)) || (rc = prof__u32(c, t, "ep", f, true, &m->ep)) ||
      (rc = prof__str(c, t, "distribution", f, true, m->dist, sizeof m->dist)) ||
      (rc = prof__grid(c, t, "tokens", f, false, &t_->tokens, &t_->n)))
    return rc;
  const cJSON *kn = prof__get(t, "kernel"); /* the kernels measured: a non-gated one's table is kept apart */
  m->ungated = cJSON_IsString(kn) && strstr(kn->valuestring, "nongated") != NULL;
  if (m->topk > m->experts) {
    char fk[96];
    snprintf(fk, sizeof fk, "%s.topk", f);
    return prof__bad(c, prof__get(t, "topk"), fk, "%u exceeds experts %u", m->topk, m->experts);
  }
  const cJSON *ns = prof__get(t, "ns");
  char fn[96];
  snprintf(fn, sizeof fn, "%s.ns", f);
  if (!cJSON_IsArray(ns) || cJSON_GetArraySize(ns) != t_->n)
    return prof__bad(c, ns, fn, "expected an array of %d numbers (one per token count)", t_->n);
  size_t sz = sizeof(double) * (size_t)t_->n;
  t_->ns = sim_malloc(sz);
  t_->lx = sim_malloc(sz);
  t_->lt = sim_malloc(sz);
  int i = 0;
  for (const cJSON *e = ns->child; e; e = e->next, i++) {
    char fe[128];
    snprintf(fe, sizeof fe, "%s[%d]", fn, i);
    if ((rc = prof__pos(c, e, fe, &t_->ns[i]))) return rc;
    t_->lt[i] = log(t_->ns[i]);
    t_->lx[i] = log((double)t_->tokens[i]);
  }
  return SIM_OK;
}

int prof__parse_moe(pctx *c, prof *p, const cJSON *arr) {
  if (!cJSON_IsArray(arr)) return prof__bad(c, arr, "moe", "expected an array of tables");
  int cnt = cJSON_GetArraySize(arr), i = 0, rc = SIM_OK;
  p->moe = sim_calloc((size_t)(cnt ? cnt : 1), sizeof *p->moe);
  const cJSON **nodes = sim_calloc((size_t)(cnt ? cnt : 1), sizeof *nodes);
  for (const cJSON *t = arr->child; t && !rc; t = t->next, i++) {
    char f[64];
    snprintf(f, sizeof f, "moe[%d]", i);
    nodes[i] = t;
    moe_tab *m = &p->moe[p->nmoe++];
    m->idx = i;
    rc = parse_one(c, t, f, m);
  }
  if (!rc && p->nmoe > 1) {
    qsort(p->moe, (size_t)p->nmoe, sizeof *p->moe, cmp_moe);
    for (int q = 1; q < p->nmoe && !rc; q++) {
      const moe_tab *a = &p->moe[q - 1], *b = &p->moe[q];
      if (cmp_moe(a, b)) continue;
      int second = a->idx < b->idx ? b->idx : a->idx, first = a->idx < b->idx ? a->idx : b->idx;
      char f[64];
      snprintf(f, sizeof f, "moe[%d]", second);
      rc = prof__bad(c, nodes[second], f, "duplicate table (also moe[%d])", first);
    }
  }
  free(nodes);
  return rc;
}

void prof__free_moe(prof *p) {
  for (int i = 0; i < p->nmoe && !p->image; i++) {
    free(p->moe[i].tokens);
    free(p->moe[i].ns);
    free(p->moe[i].lx);
    free(p->moe[i].lt);
  }
  free(p->moe);
  p->moe = NULL;
  p->nmoe = 0;
}

int prof_moe_tables(const prof *p) { return p ? p->nmoe : 0; }

bool prof_moe_ns(const prof *p, const char *dtype, bool ungated, uint32_t tokens, uint32_t hidden, uint32_t inter,
                 uint32_t topk, uint32_t experts, uint32_t tp, uint32_t ep, const char *dist, double *ns) {
  if (!p || !p->nmoe || !tokens || !dtype || !dist) return false;
  moe_tab key;
  memset(&key, 0, sizeof key);
  snprintf(key.key.dtype, sizeof key.key.dtype, "%s", dtype);
  snprintf(key.key.dist, sizeof key.key.dist, "%s", dist);
  key.key.hidden = hidden, key.key.inter = inter, key.key.topk = topk, key.key.experts = experts;
  key.key.tp = tp, key.key.ep = ep, key.key.ungated = ungated;
  const moe_tab *m = bsearch(&key, p->moe, (size_t)p->nmoe, sizeof *p->moe, cmp_moe);
  if (!m) return false;
  double t = tokens;
  if (tokens <= m->tokens[0]) {
    *ns = m->ns[0];
  } else if (tokens >= m->tokens[m->n - 1]) {
    *ns = m->ns[m->n - 1] * t / m->tokens[m->n - 1];
  } else {
    int i;
    double f;
    prof__bracket(m->lx, m->n, log(t), &i, &f);
    *ns = f == 0 ? m->ns[i] : f == 1 ? m->ns[i + 1] : exp(m->lt[i] * (1 - f) + m->lt[i + 1] * f);
  }
  return true;
}
