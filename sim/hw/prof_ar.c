/* prof_ar.c: all-reduce tables of a profile and prof_allreduce_ns.
 *
 * A table is one implementation (the engine's own kernel in a CUDA graph or
 * eager, or NCCL) on num_gpus GPUs: measured ns at increasing message sizes
 * (bytes per GPU). Time, not efficiency, is interpolated: log(time) linear in
 * log(bytes) between measured sizes, which is exact on the latency plateau
 * (time flat) and on the bandwidth line (time proportional to bytes), the two
 * regimes a collective lives in; below the smallest size its time is held
 * (nothing gets faster than the latency floor), above the largest the time
 * grows in proportion to bytes from the largest (the bandwidth regime).
 * Tables are sorted by (implementation, num_gpus) and found by binary search;
 * a size by binary search in the table. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hw/prof_impl.h"

static const char *const impl_names[PROF_AR_COUNT] = {"custom graph", "custom eager", "nccl", "nccl all_gather",
                                                      "nccl reduce_scatter"};
const char *prof_ar_impl_name(prof_ar_impl i) { return (unsigned)i < PROF_AR_COUNT ? impl_names[i] : "?"; }

static int cmp_ar(const void *a, const void *b) {
  const ar_tab *x = a, *y = b;
  if (x->impl != y->impl) return (int)x->impl - (int)y->impl;
  if (x->num_gpus != y->num_gpus) return x->num_gpus < y->num_gpus ? -1 : 1;
  return 0;
}

/* "impl" and "mode" of table t into a->impl. */
static int parse_impl(pctx *c, const cJSON *t, const char *f, ar_tab *a) {
  const cJSON *im = prof__get(t, "impl"), *mo = prof__get(t, "mode");
  char fi[96], fm[96];
  snprintf(fi, sizeof fi, "%s.impl", f);
  snprintf(fm, sizeof fm, "%s.mode", f);
  if (!im) return prof__bad(c, t, fi, "missing (\"custom\" or \"nccl\")");
  if (!cJSON_IsString(im) || (strcmp(im->valuestring, "custom") && strcmp(im->valuestring, "nccl")))
    return prof__bad(c, im, fi, "expected \"custom\" (the engine's own all-reduce) or \"nccl\"");
  const cJSON *op = prof__get(t, "op");
  if (!strcmp(im->valuestring, "nccl")) {
    if (mo) return prof__bad(c, mo, fm, "only custom all-reduce tables have a mode");
    a->impl = PROF_AR_NCCL;
    if (op) {
      char fo[96];
      snprintf(fo, sizeof fo, "%s.op", f);
      if (!cJSON_IsString(op) || (strcmp(op->valuestring, "all_reduce") && strcmp(op->valuestring, "all_gather") &&
                                  strcmp(op->valuestring, "reduce_scatter")))
        return prof__bad(c, op, fo, "expected \"all_reduce\" (the default), \"all_gather\" or \"reduce_scatter\"");
      a->impl = !strcmp(op->valuestring, "all_gather")       ? PROF_AG_NCCL
                : !strcmp(op->valuestring, "reduce_scatter") ? PROF_RS_NCCL
                                                             : PROF_AR_NCCL;
    }
    return SIM_OK;
  }
  if (op) {
    char fo[96];
    snprintf(fo, sizeof fo, "%s.op", f);
    return prof__bad(c, op, fo, "only NCCL tables name their collective (custom kernels are all-reduces)");
  }
  if (!mo) return prof__bad(c, t, fm, "missing (\"graph\" or \"eager\")");
  if (!cJSON_IsString(mo) || (strcmp(mo->valuestring, "graph") && strcmp(mo->valuestring, "eager")))
    return prof__bad(c, mo, fm, "expected \"graph\" (replayed in a CUDA graph) or \"eager\"");
  a->impl = strcmp(mo->valuestring, "graph") ? PROF_AR_CUSTOM_EAGER : PROF_AR_CUSTOM_GRAPH;
  return SIM_OK;
}

/* "bytes" (increasing positive integers, may pass 2^32) and "ns" of table t. */
static int parse_points(pctx *c, const cJSON *t, const char *f, ar_tab *a) {
  const cJSON *b = prof__get(t, "bytes"), *ns = prof__get(t, "ns");
  char fb[96], fn[96];
  snprintf(fb, sizeof fb, "%s.bytes", f);
  snprintf(fn, sizeof fn, "%s.ns", f);
  if (!b) return prof__bad(c, t, fb, "missing (increasing message sizes, bytes per GPU)");
  if (!cJSON_IsArray(b) || cJSON_GetArraySize(b) < 1) return prof__bad(c, b, fb, "expected a non-empty array");
  a->n = cJSON_GetArraySize(b);
  if (!ns) return prof__bad(c, t, fn, "missing (measured ns, one per size)");
  if (!cJSON_IsArray(ns) || cJSON_GetArraySize(ns) != a->n)
    return prof__bad(c, ns, fn, "expected an array of %d numbers (one per size)", a->n);
  size_t sz = sizeof(double) * (size_t)a->n;
  a->bytes = sim_malloc(sz);
  a->ns = sim_malloc(sz);
  a->lb = sim_malloc(sz);
  a->lt = sim_malloc(sz);
  int i = 0, rc;
  for (const cJSON *e = b->child; e; e = e->next, i++) {
    double d = cJSON_IsNumber(e) ? e->valuedouble : -1;
    if (!(d >= 1) || d > 9007199254740992.0 || d != floor(d) || (i && d <= a->bytes[i - 1])) {
      char fe[128];
      snprintf(fe, sizeof fe, "%s[%d]", fb, i);
      return prof__bad(c, e, fe, "expected a positive integer greater than the previous one");
    }
    a->bytes[i] = d;
    a->lb[i] = log(d);
  }
  i = 0;
  for (const cJSON *e = ns->child; e; e = e->next, i++) {
    char fe[128];
    snprintf(fe, sizeof fe, "%s[%d]", fn, i);
    if ((rc = prof__pos(c, e, fe, &a->ns[i]))) return rc;
    a->lt[i] = log(a->ns[i]);
  }
  return SIM_OK;
}

static int parse_one(pctx *c, const cJSON *t, const char *f, ar_tab *a) {
  static const char *const keys[] = {"impl", "mode", "op", "dtype", "num_gpus", "bytes", "ns", "kernel", NULL};
  if (!cJSON_IsObject(t)) return prof__bad(c, t, f, "expected an object");
  int rc;
  if ((rc = prof__keys(c, t, f, keys)) || (rc = parse_impl(c, t, f, a)) ||
      (rc = prof__dtype(c, t, "dtype", f, &a->dtype)) || (rc = prof__u32(c, t, "num_gpus", f, true, &a->num_gpus)))
    return rc;
  if (a->num_gpus < 2) {
    char fg[96];
    snprintf(fg, sizeof fg, "%s.num_gpus", f);
    return prof__bad(c, prof__get(t, "num_gpus"), fg, "a collective needs at least 2 GPUs");
  }
  return parse_points(c, t, f, a);
}

int prof__parse_ar(pctx *c, prof *p, const cJSON *arr) {
  if (!cJSON_IsArray(arr)) return prof__bad(c, arr, "allreduce", "expected an array of tables");
  int cnt = cJSON_GetArraySize(arr), i = 0, rc = SIM_OK;
  p->ar = sim_calloc((size_t)(cnt ? cnt : 1), sizeof *p->ar);
  const cJSON **nodes = sim_calloc((size_t)(cnt ? cnt : 1), sizeof *nodes);
  for (const cJSON *t = arr->child; t && !rc; t = t->next, i++) {
    char f[64];
    snprintf(f, sizeof f, "allreduce[%d]", i);
    nodes[i] = t;
    ar_tab *a = &p->ar[p->nar++];
    a->idx = i;
    rc = parse_one(c, t, f, a);
  }
  if (!rc && p->nar > 1) {
    qsort(p->ar, (size_t)p->nar, sizeof *p->ar, cmp_ar);
    for (int q = 1; q < p->nar && !rc; q++) {
      const ar_tab *a = &p->ar[q - 1], *b = &p->ar[q];
      if (cmp_ar(a, b)) continue;
      int first = a->idx < b->idx ? a->idx : b->idx, second = a->idx < b->idx ? b->idx : a->idx;
      char f[64];
      snprintf(f, sizeof f, "allreduce[%d]", second);
      rc = prof__bad(c, nodes[second], f, "duplicate table for %s on %u GPUs (also allreduce[%d])",
                     prof_ar_impl_name(b->impl), b->num_gpus, first);
    }
  }
  free(nodes);
  return rc;
}

bool prof_allreduce_ns(const prof *p, prof_ar_impl impl, uint32_t num_gpus, double bytes, double *ns) {
  if (!p || p->nar == 0 || !(bytes >= 0) || !isfinite(bytes)) return false;
  ar_tab key = {.impl = impl, .num_gpus = num_gpus};
  const ar_tab *a = bsearch(&key, p->ar, (size_t)p->nar, sizeof *p->ar, cmp_ar);
  if (!a) return false;
  if (bytes <= a->bytes[0]) {
    *ns = a->ns[0];
  } else if (bytes >= a->bytes[a->n - 1]) {
    *ns = a->ns[a->n - 1] * bytes / a->bytes[a->n - 1];
  } else {
    int i;
    double f;
    prof__bracket(a->lb, a->n, log(bytes), &i, &f);
    *ns = f == 0 ? a->ns[i] : f == 1 ? a->ns[i + 1] : exp(a->lt[i] * (1 - f) + a->lt[i + 1] * f);
  }
  return true;
}
