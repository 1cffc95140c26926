/* prof_gemm.c: GEMM tables of a profile: 1-D tables (one (dtypes, N, K)
 * shape, measured over M; calibrate) and 3-D grids (one dtype pair over M x N
 * x K; the kernel-db import), their reading and prof_gemm_ns.
 *
 * Lookup: an exact 1-D table first (binary search on (wdtype, adtype, N, K)),
 * else the grid of the dtypes; fp8 weights with 16-bit activations fall back
 * to the fp8/fp8 table or grid (prof.h).
 * Grid: log(efficiency) trilinear in (log M, log N, log K), each coordinate
 * clamped to its axis (the boundary efficiency held outside), an exact
 * measured grid point returns its measurement. Inside the grid the time is
 * kept between the least and the greatest time of the eight corners of the
 * query's cell: interpolating efficiency rather than time can otherwise dip
 * just below both neighbours where the speed of light is nearly flat in M
 * (weight-streaming GEMMs: a call between M = 64 and 512 came out 0.1%
 * faster than M = 64); a GEMM between measured shapes takes between their
 * times. (Outside the grid the held efficiency scales with the SOL alone.)
 * Unmeasured grid cells (null) take the log-efficiency of the nearest
 * measured cell: the smallest grid-index distance |di| + |dj| + |dl|, on a
 * tie the first in m-major order (smaller M, then N, then K), among measured
 * cells only (so the rule does not depend on the order cells are filled). The
 * kernel-db leaves out corners of huge shapes (N = K = 65536 for every M;
 * M = 32768 with K = 65536 in the TensorRT-LLM tables); their cells take the
 * efficiency of a neighbour one or two steps away (N or K = 51200, M = 16384).
 * A null cell with no measured cell within GRID_FILL_MAX_STEPS steps is
 * rejected: its efficiency would be a guess. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hw/prof_impl.h"

#define GRID_FILL_MAX_STEPS 3 /* farthest measured cell (grid steps) a null cell may hold */

static int cmp_gemm(const void *a, const void *b) {
  const gemm_tab *x = a, *y = b;
  if (x->wdtype != y->wdtype) return (int)x->wdtype - (int)y->wdtype;
  if (x->adtype != y->adtype) return (int)x->adtype - (int)y->adtype;
  if (x->n != y->n) return x->n < y->n ? -1 : 1;
  if (x->k != y->k) return x->k < y->k ? -1 : 1;
  return 0;
}

static int cmp_grid(const void *a, const void *b) {
  const grid_tab *x = a, *y = b;
  if (x->wdtype != y->wdtype) return (int)x->wdtype - (int)y->wdtype;
  if (x->adtype != y->adtype) return (int)x->adtype - (int)y->adtype;
  return (int)x->block - (int)y->block;
}

/* ---- 1-D tables ------------------------------------------------------------------------ */

int prof__parse_gemm(pctx *c, prof *p, const cJSON *arr) {
  static const char *const keys[] = {"wdtype", "adtype", "n", "k", "m", "ns", "layer", "tp", "kernel", NULL};
  if (!cJSON_IsArray(arr)) return prof__bad(c, arr, "gemm", "expected an array of tables");
  int cnt = cJSON_GetArraySize(arr);
  p->gemm = sim_calloc((size_t)(cnt ? cnt : 1), sizeof *p->gemm);
  const cJSON **nodes = sim_calloc((size_t)(cnt ? cnt : 1), sizeof *nodes);
  int i = 0, rc = SIM_OK;
  for (const cJSON *t = arr->child; t && !rc; t = t->next, i++) {
    char f[64], fn[96];
    snprintf(f, sizeof f, "gemm[%d]", i);
    snprintf(fn, sizeof fn, "%s.ns", f);
    nodes[i] = t;
    if (!cJSON_IsObject(t)) {
      rc = prof__bad(c, t, f, "expected an object");
      break;
    }
    if ((rc = prof__keys(c, t, f, keys))) break;
    gemm_tab *g = &p->gemm[p->ngemm++];
    g->idx = i;
    if ((rc = prof__dtype(c, t, "wdtype", f, &g->wdtype)) || (rc = prof__dtype(c, t, "adtype", f, &g->adtype)) ||
        (rc = prof__u32(c, t, "n", f, true, &g->n)) || (rc = prof__u32(c, t, "k", f, true, &g->k)) ||
        (rc = prof__grid(c, t, "m", f, false, &g->m, &g->np)))
      break;
    if (g->wdtype == DT_FP16) g->wdtype = DT_BF16;
    if (g->adtype == DT_FP16) g->adtype = DT_BF16;
    const cJSON *ns = prof__get(t, "ns");
    if (!ns) {
      rc = prof__bad(c, t, fn, "missing (measured ns per M)");
      break;
    }
    if (!cJSON_IsArray(ns) || cJSON_GetArraySize(ns) != g->np) {
      rc = prof__bad(c, ns, fn, "expected an array of %d numbers (one per m)", g->np);
      break;
    }
    g->ns = sim_malloc(sizeof(double) * (size_t)g->np);
    g->lx = sim_malloc(sizeof(double) * (size_t)g->np);
    g->le = sim_malloc(sizeof(double) * (size_t)g->np);
    prof_work w;
    prof_gemm_work(g->wdtype, g->adtype, 1, g->n, g->k, &w);
    if ((rc = prof__need_peak(c, p, t, f, w.compute))) break;
    int j = 0;
    for (const cJSON *e = ns->child; e && !rc; e = e->next, j++) {
      char fe[128];
      snprintf(fe, sizeof fe, "%s[%d]", fn, j);
      if ((rc = prof__pos(c, e, fe, &g->ns[j]))) break;
      g->lx[j] = log((double)g->m[j]);
      g->le[j] = log(prof__gemm_sol(p, g->wdtype, g->adtype, g->m[j], g->n, g->k) / g->ns[j]);
    }
  }
  if (!rc && p->ngemm > 1) {
    qsort(p->gemm, (size_t)p->ngemm, sizeof *p->gemm, cmp_gemm);
    for (int q = 1; q < p->ngemm && !rc; q++) {
      const gemm_tab *a = &p->gemm[q - 1], *b = &p->gemm[q];
      if (cmp_gemm(a, b)) continue;
      int first = a->idx < b->idx ? a->idx : b->idx, second = a->idx < b->idx ? b->idx : a->idx;
      char f[64];
      snprintf(f, sizeof f, "gemm[%d]", second);
      rc = prof__bad(c, nodes[second], f, "duplicate table for %s/%s N=%u K=%u (also gemm[%d])", dtype_name(b->wdtype),
                     dtype_name(b->adtype), b->n, b->k, first);
    }
  }
  free(nodes);
  return rc;
}

/* ---- grids ------------------------------------------------------------------------------- */

/* The measured cell nearest to (i, j, l) at grid-index distance d (L1), the
 * first in m-major order; -1 when none at that distance. */
static long nearest_at(const grid_tab *g, int i, int j, int l, int d) {
  long best = -1;
  for (int di = -d; di <= d; di++) {
    int ii = i + di;
    if (ii < 0 || ii >= g->nm) continue;
    int rest = d - abs(di);
    for (int dj = -rest; dj <= rest; dj++) {
      int jj = j + dj, dl = rest - abs(dj);
      if (jj < 0 || jj >= g->nn) continue;
      for (int s = -1; s <= 1; s += 2) {
        int ll = l + s * dl;
        if (ll < 0 || ll >= g->nk || (s > 0 && dl == 0)) continue;
        long at = ((long)ii * g->nn + jj) * g->nk + ll;
        if (!isnan(g->ns[at]) && (best < 0 || at < best)) best = at;
      }
    }
  }
  return best;
}

/* Fills unmeasured cells (see the file comment). */
static int fill_grid(pctx *c, const cJSON *at, const char *f, grid_tab *g) {
  size_t nn = (size_t)g->nn, nk = (size_t)g->nk;
  for (int i = 0; i < g->nm; i++)
    for (int j = 0; j < g->nn; j++)
      for (int l = 0; l < g->nk; l++) {
        size_t idx = ((size_t)i * nn + (size_t)j) * nk + (size_t)l;
        if (!isnan(g->ns[idx])) continue;
        long src = -1;
        for (int d = 1; d <= GRID_FILL_MAX_STEPS && src < 0; d++) src = nearest_at(g, i, j, l, d);
        if (src < 0)
          return prof__bad(c, at, f,
                           "cell (m %u, n %u, k %u) is null and no measured cell lies within %d grid steps "
                           "(the efficiency to hold is unknown)",
                           g->m[i], g->n[j], g->k[l], GRID_FILL_MAX_STEPS);
        g->le[idx] = g->le[src];
      }
  return SIM_OK;
}

static void free_grid(grid_tab *g) {
  free(g->m);
  free(g->n);
  free(g->k);
  free(g->lm);
  free(g->ln);
  free(g->lk);
  free(g->ns);
  free(g->le);
}

static double *logs_of(const uint32_t *v, int n) {
  double *l = sim_malloc(sizeof(double) * (size_t)n);
  for (int i = 0; i < n; i++) l[i] = log((double)v[i]);
  return l;
}

/* One grid table t (JSON) into g. */
static int parse_one_grid(pctx *c, prof *p, const cJSON *t, const char *f, grid_tab *g) {
  static const char *const keys[] = {"wdtype", "adtype", "scaling", "kernel", "m", "n", "k", "ns", NULL};
  if (!cJSON_IsObject(t)) return prof__bad(c, t, f, "expected an object");
  int rc;
  if ((rc = prof__keys(c, t, f, keys)) || (rc = prof__dtype(c, t, "wdtype", f, &g->wdtype)) ||
      (rc = prof__dtype(c, t, "adtype", f, &g->adtype)) || (rc = prof__grid(c, t, "m", f, false, &g->m, &g->nm)) ||
      (rc = prof__grid(c, t, "n", f, false, &g->n, &g->nn)) || (rc = prof__grid(c, t, "k", f, false, &g->k, &g->nk)))
    return rc;
  if (g->wdtype == DT_FP16) g->wdtype = DT_BF16;
  if (g->adtype == DT_FP16) g->adtype = DT_BF16;
  const cJSON *sc = prof__get(t, "scaling");
  if (sc) {
    char fs[96];
    snprintf(fs, sizeof fs, "%s.scaling", f);
    if (!cJSON_IsString(sc) || (strcmp(sc->valuestring, "block") && strcmp(sc->valuestring, "tensor")))
      return prof__bad(c, sc, fs, "expected \"block\" (block-scaled FP8) or \"tensor\" (the default)");
    g->block = !strcmp(sc->valuestring, "block");
    if (g->block && !(g->wdtype == DT_FP8 && g->adtype == DT_FP8))
      return prof__bad(c, sc, fs, "\"block\" scaling is block-scaled FP8: wdtype and adtype must be fp8, got %s/%s",
                       dtype_name(g->wdtype), dtype_name(g->adtype));
  }
  prof_work w;
  prof_gemm_work(g->wdtype, g->adtype, 1, 1, 1, &w);
  if ((rc = prof__need_peak(c, p, t, f, w.compute))) return rc;
  g->lm = logs_of(g->m, g->nm);
  g->ln = logs_of(g->n, g->nn);
  g->lk = logs_of(g->k, g->nk);
  size_t cells = (size_t)g->nm * (size_t)g->nn * (size_t)g->nk;
  char fn[96];
  snprintf(fn, sizeof fn, "%s.ns", f);
  const cJSON *ns = prof__get(t, "ns");
  if (!ns) return prof__bad(c, t, fn, "missing (measured ns, m-major: index (i len(n) + j) len(k) + l)");
  if (!cJSON_IsArray(ns) || (size_t)cJSON_GetArraySize(ns) != cells)
    return prof__bad(c, ns, fn, "expected an array of %zu values (len(m) x len(n) x len(k); null = not measured)",
                     cells);
  g->ns = sim_malloc(sizeof(double) * cells);
  g->le = sim_malloc(sizeof(double) * cells);
  size_t q = 0, measured = 0;
  for (const cJSON *e = ns->child; e; e = e->next, q++) {
    if (cJSON_IsNull(e)) {
      g->ns[q] = g->le[q] = NAN;
      continue;
    }
    if (cJSON_IsNumber(e) && isfinite(e->valuedouble) && e->valuedouble > 0) {
      g->ns[q] = e->valuedouble; /* the common case: no field path to format */
    } else {
      char fe[128];
      snprintf(fe, sizeof fe, "%s[%zu]", fn, q);
      if ((rc = prof__pos(c, e, fe, &g->ns[q]))) return rc;
    }
    size_t l = q % (size_t)g->nk, j = q / (size_t)g->nk % (size_t)g->nn, i = q / ((size_t)g->nk * (size_t)g->nn);
    g->le[q] = log(prof__gemm_sol(p, g->wdtype, g->adtype, g->m[i], g->n[j], g->k[l]) / g->ns[q]);
    measured++;
  }
  if (!measured) return prof__bad(c, ns, fn, "no measured value");
  return fill_grid(c, ns, fn, g);
}

int prof__parse_grid(pctx *c, prof *p, const cJSON *arr) {
  if (!cJSON_IsArray(arr)) return prof__bad(c, arr, "gemm_grid", "expected an array of tables");
  int cnt = cJSON_GetArraySize(arr), i = 0, rc = SIM_OK;
  p->grid = sim_calloc((size_t)(cnt ? cnt : 1), sizeof *p->grid);
  const cJSON **nodes = sim_calloc((size_t)(cnt ? cnt : 1), sizeof *nodes);
  for (const cJSON *t = arr->child; t && !rc; t = t->next, i++) {
    char f[64];
    snprintf(f, sizeof f, "gemm_grid[%d]", i);
    nodes[i] = t;
    grid_tab *g = &p->grid[p->ngrid++];
    g->idx = i;
    rc = parse_one_grid(c, p, t, f, g);
  }
  if (!rc && p->ngrid > 1) {
    qsort(p->grid, (size_t)p->ngrid, sizeof *p->grid, cmp_grid);
    for (int q = 1; q < p->ngrid && !rc; q++) {
      const grid_tab *a = &p->grid[q - 1], *b = &p->grid[q];
      if (cmp_grid(a, b)) continue;
      int first = a->idx < b->idx ? a->idx : b->idx, second = a->idx < b->idx ? b->idx : a->idx;
      char f[64];
      snprintf(f, sizeof f, "gemm_grid[%d]", second);
      rc = prof__bad(c, nodes[second], f, "duplicate grid for %s/%s%s (also gemm_grid[%d])", dtype_name(b->wdtype),
                     dtype_name(b->adtype), b->block ? " block-scaled" : "", first);
    }
  }
  free(nodes);
  return rc;
}

void prof__free_tables(prof *p) {
  for (int i = 0; i < p->ngemm && !p->image; i++) {
    free(p->gemm[i].m);
    free(p->gemm[i].ns);
    free(p->gemm[i].lx);
    free(p->gemm[i].le);
  }
  free(p->gemm);
  for (int i = 0; i < p->ngrid && !p->image; i++) free_grid(&p->grid[i]);
  free(p->grid);
  for (int k = 0; k < AK_COUNT; k++) {
    for (int i = 0; i < p->nattn[k] && !p->image; i++) {
      attn_tab *t = &p->attn[k][i];
      free(t->x);
      free(t->y);
      free(t->lx);
      free(t->ly);
      free(t->ns);
      free(t->le);
    }
    free(p->attn[k]);
  }
  for (int i = 0; i < p->nar && !p->image; i++) {
    free(p->ar[i].bytes);
    free(p->ar[i].ns);
    free(p->ar[i].lb);
    free(p->ar[i].lt);
  }
  free(p->ar);
}

/* ---- lookup ------------------------------------------------------------------------------- */

static const gemm_tab *find_gemm(const prof *p, sim_dtype w, sim_dtype a, uint32_t N, uint32_t K) {
  gemm_tab key = {.wdtype = w, .adtype = a, .n = N, .k = K};
  return p->ngemm ? bsearch(&key, p->gemm, (size_t)p->ngemm, sizeof *p->gemm, cmp_gemm) : NULL;
}

static const grid_tab *find_grid(const prof *p, sim_dtype w, sim_dtype a, bool block) {
  grid_tab key = {.wdtype = w, .adtype = a, .block = block};
  return p->ngrid ? bsearch(&key, p->grid, (size_t)p->ngrid, sizeof *p->grid, cmp_grid) : NULL;
}

/* Time at (M, N, K) inside or outside grid g: SOL over the trilinear
 * log-efficiency; inside the grid on every axis the result is kept within the
 * times of the eight corners of its cell (see the file comment). */
static double grid_time(const prof *p, const grid_tab *g, uint32_t M, uint32_t N, uint32_t K) {
  int idx[3];
  double f[3];
  prof__bracket(g->lm, g->nm, log((double)M), &idx[0], &f[0]);
  prof__bracket(g->ln, g->nn, log((double)N), &idx[1], &f[1]);
  prof__bracket(g->lk, g->nk, log((double)K), &idx[2], &f[2]);
  bool inside = M >= g->m[0] && M <= g->m[g->nm - 1] && N >= g->n[0] && N <= g->n[g->nn - 1] && K >= g->k[0] &&
                K <= g->k[g->nk - 1];
  size_t nn = (size_t)g->nn, nk = (size_t)g->nk;
  double le = 0, tmin = INFINITY, tmax = 0;
  for (int c = 0; c < 8; c++) {
    int d[3] = {c >> 2 & 1, c >> 1 & 1, c & 1};
    double w = 1;
    for (int a = 0; a < 3; a++) w *= d[a] ? f[a] : 1 - f[a];
    size_t i = (size_t)(g->nm > 1 ? idx[0] + d[0] : 0), j = (size_t)(g->nn > 1 ? idx[1] + d[1] : 0),
           l = (size_t)(g->nk > 1 ? idx[2] + d[2] : 0);
    double e = g->le[(i * nn + j) * nk + l];
    le += w * e;
    if (inside && w > 0) { /* the corners of the cell the query is in */
      double t = prof__gemm_sol(p, g->wdtype, g->adtype, g->m[i], g->n[j], g->k[l]) / exp(e);
      tmin = t < tmin ? t : tmin;
      tmax = t > tmax ? t : tmax;
    }
  }
  double t = prof__gemm_sol(p, g->wdtype, g->adtype, M, N, K) / exp(le);
  return inside ? (t < tmin ? tmin : t > tmax ? tmax : t) : t;
}

static bool grid_ns(const prof *p, const grid_tab *g, uint32_t M, uint32_t N, uint32_t K, double *ns) {
  int i = prof__find_u32(g->m, g->nm, M), j = prof__find_u32(g->n, g->nn, N), l = prof__find_u32(g->k, g->nk, K);
  if (i >= 0 && j >= 0 && l >= 0) {
    double v = g->ns[((size_t)i * (size_t)g->nn + (size_t)j) * (size_t)g->nk + (size_t)l];
    if (!isnan(v)) {
      *ns = v;
      return true;
    }
  }
  *ns = grid_time(p, g, M, N, K);
  return true;
}

static double interp1(const double *lx, const double *e, int n, double u) {
  int i;
  double f;
  prof__bracket(lx, n, u, &i, &f);
  return n == 1 ? e[0] : e[i] * (1 - f) + e[i + 1] * f;
}

bool prof_gemm_ns(const prof *p, sim_dtype wdtype, sim_dtype adtype, uint32_t M, uint32_t N, uint32_t K,
                  double *ns) {
  if (!p || M == 0 || N == 0 || K == 0) return false;
  if (wdtype == DT_FP16) wdtype = DT_BF16;
  if (adtype == DT_FP16) adtype = DT_BF16;
  const gemm_tab *g = find_gemm(p, wdtype, adtype, N, K);
  /* FP8 weights with 16-bit activations: on Hopper vLLM quantizes the
   * activations to FP8 per step and runs the FP8 GEMM */
  bool fp8_fallback = wdtype == DT_FP8 && adtype != DT_FP8;
  if (!g && fp8_fallback) g = find_gemm(p, DT_FP8, DT_FP8, N, K);
  if (g) {
    int i = prof__find_u32(g->m, g->np, M);
    if (i >= 0) {
      *ns = g->ns[i];
      return true;
    }
    double eff = exp(interp1(g->lx, g->le, g->np, log((double)M)));
    *ns = prof__gemm_sol(p, g->wdtype, g->adtype, M, g->n, g->k) / eff;
    return true;
  }
  const grid_tab *gr = find_grid(p, wdtype, adtype, false);
  if (!gr && fp8_fallback) gr = find_grid(p, DT_FP8, DT_FP8, false);
  return gr ? grid_ns(p, gr, M, N, K, ns) : false;
}

bool prof_gemm_block_ns(const prof *p, uint32_t M, uint32_t N, uint32_t K, double *ns) {
  if (!p || M == 0 || N == 0 || K == 0) return false;
  const grid_tab *gr = find_grid(p, DT_FP8, DT_FP8, true);
  return gr ? grid_ns(p, gr, M, N, K, ns) : false;
}
