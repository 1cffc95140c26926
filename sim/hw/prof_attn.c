/* prof_attn.c: attention tables of a profile (decode, prefill, context), their
 * reading and the attention queries of prof.h.
 *
 * Every kind is a 2-D grid x by y (decode: batch x kv_len; prefill: chunk x
 * ctx; context: batch x isl), ns[i][j] for (x[i], y[j]), keyed by (KV dtype,
 * q_heads, kv_heads, head_dim) per GPU. Tables are sorted by (KV dtype,
 * head_dim, kv_heads, q_heads) at load, so the tables one (KV dtype,
 * head_dim) can use are one contiguous run found by binary search.
 *
 * Unmeasured cells (null) take the log-efficiency of the nearest measured
 * cell with a smaller y in their row, else with a smaller x in their column:
 * a measurement campaign skips the largest calls (calibrate's per-call cap,
 * the kernel-db collector's batch x length limits), a region monotone in both
 * axes, so every skipped cell has such a neighbour; the loader rejects a
 * table where one does not.
 *
 * Nearest head layout (version 2 profiles): without a table of the query's
 * own layout, the table of the same KV dtype and head_dim minimizing
 * (log kv_heads' - log kv_heads)^2 + (log g' - log g)^2, g = q_heads /
 * kv_heads (the GQA group), serves it; on a tie the first in the sort order
 * (fewer KV heads, then fewer query heads). Its efficiency at (x, y) is held
 * and the time is the query's own SOL over that efficiency: the speed of
 * light carries the heads (bytes of K and V scale with kv_heads, flops with
 * q_heads). Version 1 profiles match layouts exactly (as before version 2).
 *
 * Sliding-window tables (decode and context, optional "window": W > 0) time
 * another operation, each query attending to the last W tokens only; they
 * serve queries of the same window alone (the window is the first sort key,
 * so each window's tables are one run) and their speed of light counts the
 * windowed work (prof__attn_sol), so beyond the measured lengths the time
 * stays flat as the kernel's does. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hw/prof_impl.h"

static const char *const kind_key[AK_COUNT] = {"attn_decode", "attn_prefill", "attn_context"};
static const char *const x_key[AK_COUNT] = {"batch", "chunk", "batch"};
static const char *const y_key[AK_COUNT] = {"kv_len", "ctx", "isl"};

double prof__attn_ly(attn_kind kind, uint32_t y) { return kind == AK_PREFILL ? log(1.0 + y) : log((double)y); }

static int cmp_attn(const void *a, const void *b) {
  const attn_tab *x = a, *y = b;
  if (x->window != y->window) return x->window < y->window ? -1 : 1;
  if (x->kv_dtype != y->kv_dtype) return (int)x->kv_dtype - (int)y->kv_dtype;
  if (x->head_dim != y->head_dim) return x->head_dim < y->head_dim ? -1 : 1;
  if (x->kv_heads != y->kv_heads) return x->kv_heads < y->kv_heads ? -1 : 1;
  if (x->q_heads != y->q_heads) return x->q_heads < y->q_heads ? -1 : 1;
  return 0;
}

/* Fills unmeasured cells (see the file comment). */
static int fill_attn(pctx *c, const cJSON *at, const char *f, attn_tab *t) {
  for (int i = 0; i < t->nx; i++)
    for (int j = 0; j < t->ny; j++) {
      double *e = &t->le[i * t->ny + j];
      if (!isnan(t->ns[i * t->ny + j])) continue;
      *e = NAN;
      for (int jj = j - 1; jj >= 0 && isnan(*e); jj--)
        if (!isnan(t->ns[i * t->ny + jj])) *e = t->le[i * t->ny + jj];
      for (int ii = i - 1; ii >= 0 && isnan(*e); ii--)
        if (!isnan(t->ns[ii * t->ny + j])) *e = t->le[ii * t->ny + j];
      if (isnan(*e))
        return prof__bad(c, at, f,
                         "cell ns[%d][%d] is null and no measured cell precedes it in its row or column "
                         "(the efficiency to hold is unknown)",
                         i, j);
    }
  return SIM_OK;
}

/* The dtype and head keys of table t (JSON) into a. */
static int parse_key(pctx *c, const cJSON *t, const char *f, attn_tab *a) {
  int rc;
  bool prefill = a->kind == AK_PREFILL;
  a->kv_dtype = DT_BF16;
  const char *dkey = prefill ? "dtype" : "kv_dtype";
  if (!prefill || prof__get(t, "dtype"))
    if ((rc = prof__dtype(c, t, dkey, f, &a->kv_dtype))) return rc;
  if (a->kv_dtype == DT_FP16) a->kv_dtype = DT_BF16;
  if (a->kv_dtype != DT_BF16 && (prefill || a->kv_dtype != DT_FP8)) {
    char fd[96];
    snprintf(fd, sizeof fd, "%s.%s", f, dkey);
    return prof__bad(c, prof__get(t, dkey), fd, "expected %s", prefill ? "bf16" : "bf16 or fp8");
  }
  uint32_t bs = 16;
  if ((rc = prof__u32(c, t, "q_heads", f, true, &a->q_heads)) ||
      (rc = prof__u32(c, t, "kv_heads", f, true, &a->kv_heads)) ||
      (rc = prof__u32(c, t, "head_dim", f, true, &a->head_dim)) ||
      (a->kind != AK_CONTEXT && (rc = prof__u32(c, t, "block_size", f, false, &bs))) ||
      (a->kind != AK_PREFILL && (rc = prof__u32(c, t, "window", f, false, &a->window))))
    return rc;
  if (a->q_heads % a->kv_heads) {
    char fq[96];
    snprintf(fq, sizeof fq, "%s.q_heads", f);
    return prof__bad(c, prof__get(t, "q_heads"), fq, "%u is not a multiple of kv_heads %u", a->q_heads, a->kv_heads);
  }
  return SIM_OK;
}

/* The ns rows of table t into a (grids already read). */
static int parse_cells(pctx *c, const prof *p, const cJSON *t, const char *f, attn_tab *a) {
  const cJSON *ns = prof__get(t, "ns");
  char fn[96];
  snprintf(fn, sizeof fn, "%s.ns", f);
  if (!ns) return prof__bad(c, t, fn, "missing (rows of measured ns, one row per %s)", x_key[a->kind]);
  if (!cJSON_IsArray(ns) || cJSON_GetArraySize(ns) != a->nx)
    return prof__bad(c, ns, fn, "expected %d rows (one per %s)", a->nx, x_key[a->kind]);
  size_t cells = (size_t)a->nx * (size_t)a->ny;
  a->ns = sim_malloc(sizeof(double) * cells);
  a->le = sim_malloc(sizeof(double) * cells);
  a->lx = sim_malloc(sizeof(double) * (size_t)a->nx);
  a->ly = sim_malloc(sizeof(double) * (size_t)a->ny);
  for (int x = 0; x < a->nx; x++) a->lx[x] = log((double)a->x[x]);
  for (int y = 0; y < a->ny; y++) a->ly[y] = prof__attn_ly(a->kind, a->y[y]);
  int x = 0, measured = 0, rc;
  for (const cJSON *row = ns->child; row; row = row->next, x++) {
    char fr[128];
    if (!cJSON_IsArray(row) || cJSON_GetArraySize(row) != a->ny) {
      snprintf(fr, sizeof fr, "%s[%d]", fn, x);
      return prof__bad(c, row, fr, "expected %d values (one per %s; null = not measured)", a->ny, y_key[a->kind]);
    }
    int y = 0;
    for (const cJSON *e = row->child; e; e = e->next, y++) {
      double *v = &a->ns[(size_t)x * a->ny + y];
      if (cJSON_IsNull(e)) {
        *v = NAN;
        continue;
      }
      if (cJSON_IsNumber(e) && isfinite(e->valuedouble) && e->valuedouble > 0) {
        *v = e->valuedouble; /* the common case: no field path to format */
      } else {
        char fe[160];
        snprintf(fr, sizeof fr, "%s[%d]", fn, x);
        snprintf(fe, sizeof fe, "%s[%d]", fr, y);
        if ((rc = prof__pos(c, e, fe, v))) return rc;
      }
      double sol =
          prof__attn_sol(p, a->kind, a->kv_dtype, a->q_heads, a->kv_heads, a->head_dim, a->x[x], a->y[y], a->window);
      a->le[(size_t)x * a->ny + y] = log(sol / *v);
      measured++;
    }
  }
  if (!measured) return prof__bad(c, ns, fn, "no measured value");
  return fill_attn(c, ns, fn, a);
}

static int parse_one(pctx *c, const prof *p, const cJSON *t, const char *f, attn_tab *a) {
  static const char *const keys[AK_COUNT][12] = {
      {"kv_dtype", "q_heads", "kv_heads", "head_dim", "block_size", "tp", "kernel", "window", "batch", "kv_len", "ns",
       NULL},
      {"dtype", "q_heads", "kv_heads", "head_dim", "block_size", "tp", "kernel", "chunk", "ctx", "ns", NULL},
      {"kv_dtype", "q_heads", "kv_heads", "head_dim", "kernel", "window", "batch", "isl", "ns", NULL}};
  if (!cJSON_IsObject(t)) return prof__bad(c, t, f, "expected an object");
  int rc;
  if ((rc = prof__keys(c, t, f, keys[a->kind])) || (rc = parse_key(c, t, f, a)) ||
      (rc = prof__grid(c, t, x_key[a->kind], f, false, &a->x, &a->nx)) ||
      (rc = prof__grid(c, t, y_key[a->kind], f, a->kind == AK_PREFILL, &a->y, &a->ny)))
    return rc;
  return parse_cells(c, p, t, f, a);
}

int prof__parse_attn(pctx *c, prof *p, const cJSON *arr, attn_kind kind) {
  const char *name = kind_key[kind];
  if (!cJSON_IsArray(arr)) return prof__bad(c, arr, name, "expected an array of tables");
  int cnt = cJSON_GetArraySize(arr), i = 0, rc = SIM_OK;
  attn_tab *tabs = sim_calloc((size_t)(cnt ? cnt : 1), sizeof *tabs);
  const cJSON **nodes = sim_calloc((size_t)(cnt ? cnt : 1), sizeof *nodes);
  p->attn[kind] = tabs;
  for (const cJSON *t = arr->child; t && !rc; t = t->next, i++) {
    char f[64];
    snprintf(f, sizeof f, "%s[%d]", name, i);
    nodes[i] = t;
    attn_tab *a = &tabs[p->nattn[kind]++];
    a->kind = kind;
    a->idx = i;
    rc = parse_one(c, p, t, f, a);
  }
  int n = p->nattn[kind];
  if (!rc && n > 1) {
    qsort(tabs, (size_t)n, sizeof *tabs, cmp_attn);
    for (int q = 1; q < n && !rc; q++) {
      const attn_tab *a = &tabs[q - 1], *b = &tabs[q];
      if (cmp_attn(a, b)) continue;
      int first = a->idx < b->idx ? a->idx : b->idx, second = a->idx < b->idx ? b->idx : a->idx;
      char f[64];
      snprintf(f, sizeof f, "%s[%d]", name, second);
      char win[32] = "";
      if (b->window) snprintf(win, sizeof win, " window %u", b->window);
      rc = prof__bad(c, nodes[second], f, "duplicate table for %s heads %u/%u d%u%s (also %s[%d])",
                     dtype_name(b->kv_dtype), b->q_heads, b->kv_heads, b->head_dim, win, name, first);
    }
  }
  free(nodes);
  return rc;
}

/* ---- lookup ------------------------------------------------------------------------------- */

double prof__attn_le(const attn_tab *t, double u, double v) {
  int i, j;
  double fx, fy;
  prof__bracket(t->lx, t->nx, u, &i, &fx);
  prof__bracket(t->ly, t->ny, v, &j, &fy);
  int i1 = t->nx > 1 ? i + 1 : i, j1 = t->ny > 1 ? j + 1 : j;
  const double *e = t->le;
  size_t ny = (size_t)t->ny;
  double a = e[i * ny + j] * (1 - fy) + e[i * ny + j1] * fy;
  double b = e[i1 * ny + j] * (1 - fy) + e[i1 * ny + j1] * fy;
  return a * (1 - fx) + b * fx;
}

/* First table of tabs[0..n) not ordered before key (lower bound). */
static int lower_bound(const attn_tab *tabs, int n, const attn_tab *key) {
  int lo = 0, hi = n;
  while (lo < hi) {
    int mid = (lo + hi) / 2;
    if (cmp_attn(&tabs[mid], key) < 0) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/* The table serving a layout: its own (*exact) or, in a version 2 profile,
 * the nearest of the same window, KV dtype and head_dim; NULL when none. */
static const attn_tab *find_attn(const prof *p, attn_kind kind, uint32_t window, sim_dtype kv, uint32_t qh,
                                 uint32_t kvh, uint32_t hd, bool *exact) {
  const attn_tab *tabs = p->attn[kind];
  int n = p->nattn[kind];
  attn_tab key = {.window = window, .kv_dtype = kv, .head_dim = hd, .kv_heads = kvh, .q_heads = qh};
  int at = lower_bound(tabs, n, &key);
  *exact = at < n && !cmp_attn(&tabs[at], &key);
  if (*exact) return &tabs[at];
  if (p->version < 2 || qh == 0 || kvh == 0) return NULL;
  key.kv_heads = key.q_heads = 0;
  const attn_tab *best = NULL;
  double best_d = INFINITY, lk = log((double)kvh), lg = log((double)qh / kvh);
  for (int i = lower_bound(tabs, n, &key);
       i < n && tabs[i].window == window && tabs[i].kv_dtype == kv && tabs[i].head_dim == hd; i++) {
    double dk = log((double)tabs[i].kv_heads) - lk, dg = log((double)tabs[i].q_heads / tabs[i].kv_heads) - lg;
    double d = dk * dk + dg * dg;
    if (d < best_d) best_d = d, best = &tabs[i];
  }
  return best;
}

static bool attn_query(const prof *p, attn_kind kind, uint32_t window, sim_dtype kv, uint32_t x, uint32_t y,
                       uint32_t qh, uint32_t kvh, uint32_t hd, double *ns) {
  bool exact;
  const attn_tab *t = find_attn(p, kind, window, kv, qh, kvh, hd, &exact);
  if (!t) return false;
  if (exact) {
    int i = prof__find_u32(t->x, t->nx, x), j = prof__find_u32(t->y, t->ny, y);
    if (i >= 0 && j >= 0 && !isnan(t->ns[(size_t)i * t->ny + j])) {
      *ns = t->ns[(size_t)i * t->ny + j];
      return true;
    }
  }
  double le = prof__attn_le(t, log((double)x), prof__attn_ly(kind, y));
  *ns = prof__attn_sol(p, kind, kv, qh, kvh, hd, x, y, window) / exp(le);
  return true;
}

bool prof_attn_decode_ns(const prof *p, sim_dtype kv_dtype, uint32_t batch, uint32_t kv_len, uint32_t q_heads,
                         uint32_t kv_heads, uint32_t head_dim, double *ns) {
  if (!p || batch == 0) return false;
  if (kv_dtype == DT_FP16) kv_dtype = DT_BF16;
  return attn_query(p, AK_DECODE, 0, kv_dtype, batch, kv_len ? kv_len : 1, q_heads, kv_heads, head_dim, ns);
}

bool prof_attn_prefill_ns(const prof *p, uint32_t chunk, uint32_t ctx, uint32_t q_heads, uint32_t kv_heads,
                          uint32_t head_dim, double *ns) {
  if (!p || chunk == 0) return false;
  return attn_query(p, AK_PREFILL, 0, DT_BF16, chunk, ctx, q_heads, kv_heads, head_dim, ns);
}

bool prof_attn_context_ns(const prof *p, sim_dtype kv_dtype, uint32_t batch, uint32_t isl, uint32_t q_heads,
                          uint32_t kv_heads, uint32_t head_dim, double *ns) {
  if (!p || batch == 0 || isl == 0) return false;
  if (kv_dtype == DT_FP16) kv_dtype = DT_BF16;
  return attn_query(p, AK_CONTEXT, 0, kv_dtype, batch, isl, q_heads, kv_heads, head_dim, ns);
}

bool prof_attn_window_decode_ns(const prof *p, uint32_t window, sim_dtype kv_dtype, uint32_t batch, uint32_t kv_len,
                                uint32_t q_heads, uint32_t kv_heads, uint32_t head_dim, double *ns) {
  if (!p || batch == 0 || window == 0) return false;
  if (kv_dtype == DT_FP16) kv_dtype = DT_BF16;
  return attn_query(p, AK_DECODE, window, kv_dtype, batch, kv_len ? kv_len : 1, q_heads, kv_heads, head_dim, ns);
}

bool prof_attn_window_context_ns(const prof *p, uint32_t window, sim_dtype kv_dtype, uint32_t batch, uint32_t isl,
                                 uint32_t q_heads, uint32_t kv_heads, uint32_t head_dim, double *ns) {
  if (!p || batch == 0 || isl == 0 || window == 0) return false;
  if (kv_dtype == DT_FP16) kv_dtype = DT_BF16;
  return attn_query(p, AK_CONTEXT, window, kv_dtype, batch, isl, q_heads, kv_heads, head_dim, ns);
}

int prof_window_tables(const prof *p, uint32_t window) {
  int n = 0;
  for (int k = 0; p && window && k < AK_COUNT; k++)
    for (int t = 0; t < p->nattn[k]; t++) n += p->attn[k][t].window == window;
  return n;
}
