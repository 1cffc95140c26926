/* prof_loo.c: leave-one-out accuracy of a profile's interpolation (prof.h)
 * and the table counts per operation family.
 *
 * Each measured point is predicted without it by the rule the queries use:
 *   1-D tables: log(efficiency) linear in log(coordinate) between the nearest
 *     measured neighbours, the nearer one held at the ends;
 *   2-D and 3-D tables: that 1-D prediction along each axis through the
 *     point (unmeasured cells are not neighbours), the mean of the axes that
 *     bracket the point, else the mean of the held boundaries;
 *   all-reduce: log(time) linear in log(bytes) between the neighbours, the
 *     next size's time held at the small end, the previous size's time scaled
 *     by the bytes at the large end.
 * Cost: O(points x longest axis); a few milliseconds for a kernel-db profile. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "hw/prof_impl.h"

static const char *const kind_names[PK_COUNT] = {"gemm",      "gemm_wq",      "attn_decode", "attn_prefill",
                                                 "gemm_grid", "attn_context", "allreduce"};
const char *prof_kind_name(prof_kind k) { return (unsigned)k < PK_COUNT ? kind_names[k] : "?"; }

static bool weight_only(sim_dtype w, sim_dtype a) { return (w == DT_INT4 || w == DT_INT8) && a == DT_BF16; }

int prof_table_count(const prof *p, prof_kind k) {
  int n = 0;
  switch (k) {
    case PK_GEMM:
    case PK_GEMM_WQ:
      for (int i = 0; i < p->ngemm; i++) n += weight_only(p->gemm[i].wdtype, p->gemm[i].adtype) == (k == PK_GEMM_WQ);
      return n;
    case PK_DECODE: return p->nattn[AK_DECODE];
    case PK_PREFILL: return p->nattn[AK_PREFILL];
    case PK_CONTEXT: return p->nattn[AK_CONTEXT];
    case PK_GEMM_GRID: return p->ngrid;
    case PK_ALLREDUCE: return p->nar;
    default: return 0;
  }
}

typedef struct errs {
  double *v;
  size_t n, cap;
} errs;

static void push(errs *e, double x) {
  SIM_GROW(e->v, e->cap, e->n + 1);
  e->v[e->n++] = x;
}

/* log(efficiency) at index i of a 1-D series predicted without it: linear in
 * the log coordinate between the nearest measured neighbours, the nearer one
 * held at the ends (*inner false). meas (NULL = all measured) says which
 * entries are measured, read with the stride. Returns NAN if no neighbour. */
static double loo1(const double *lx, const double *e, const double *meas, size_t stride, int n, int i, bool *inner) {
  int lo = -1, hi = -1;
  for (int k = i - 1; k >= 0; k--)
    if (!meas || !isnan(meas[(size_t)k * stride])) {
      lo = k;
      break;
    }
  for (int k = i + 1; k < n; k++)
    if (!meas || !isnan(meas[(size_t)k * stride])) {
      hi = k;
      break;
    }
  *inner = lo >= 0 && hi >= 0;
  if (lo < 0 && hi < 0) return NAN;
  if (lo < 0) return e[(size_t)hi * stride];
  if (hi < 0) return e[(size_t)lo * stride];
  double f = (lx[i] - lx[lo]) / (lx[hi] - lx[lo]);
  return e[(size_t)lo * stride] * (1 - f) + e[(size_t)hi * stride] * f;
}

/* Combines the per-axis predictions (NAN = none): the bracketed ones if any. */
static double combine(const double *pred, const bool *inner, int axes) {
  double sum = 0;
  int n = 0;
  bool any_inner = false;
  for (int a = 0; a < axes; a++) any_inner |= inner[a] && !isnan(pred[a]);
  for (int a = 0; a < axes; a++)
    if (!isnan(pred[a]) && (inner[a] || !any_inner)) sum += pred[a], n++;
  return n ? sum / n : NAN;
}

static void loo_gemm(const prof *p, errs *e) {
  for (int t = 0; t < p->ngemm; t++) {
    const gemm_tab *g = &p->gemm[t];
    prof_kind k = weight_only(g->wdtype, g->adtype) ? PK_GEMM_WQ : PK_GEMM;
    for (int i = 0; g->np > 1 && i < g->np; i++) {
      bool inner;
      double eff = loo1(g->lx, g->le, NULL, 1, g->np, i, &inner);
      double pred = prof__gemm_sol(p, g->wdtype, g->adtype, g->m[i], g->n, g->k) / exp(eff);
      push(&e[k], fabs(pred - g->ns[i]) / g->ns[i]);
    }
  }
}

static void loo_grid(const prof *p, errs *e) {
  for (int t = 0; t < p->ngrid; t++) {
    const grid_tab *g = &p->grid[t];
    size_t nn = (size_t)g->nn, nk = (size_t)g->nk;
    for (int i = 0; i < g->nm; i++)
      for (int j = 0; j < g->nn; j++)
        for (int l = 0; l < g->nk; l++) {
          size_t at = ((size_t)i * nn + (size_t)j) * nk + (size_t)l;
          if (isnan(g->ns[at])) continue;
          /* lines through the cell along k, n and m */
          size_t base[3] = {at - (size_t)l, at - (size_t)j * nk, at - (size_t)i * nn * nk};
          size_t stride[3] = {1, nk, nn * nk};
          const double *lx[3] = {g->lk, g->ln, g->lm};
          int len[3] = {g->nk, g->nn, g->nm}, pos[3] = {l, j, i};
          double pred[3];
          bool inner[3];
          for (int a = 0; a < 3; a++)
            pred[a] = loo1(lx[a], g->le + base[a], g->ns + base[a], stride[a], len[a], pos[a], &inner[a]);
          double le = combine(pred, inner, 3);
          if (isnan(le)) continue;
          double sol = prof__gemm_sol(p, g->wdtype, g->adtype, g->m[i], g->n[j], g->k[l]);
          push(&e[PK_GEMM_GRID], fabs(sol / exp(le) - g->ns[at]) / g->ns[at]);
        }
  }
}

static void loo_attn(const prof *p, errs *e) {
  static const prof_kind pk[AK_COUNT] = {PK_DECODE, PK_PREFILL, PK_CONTEXT};
  for (int kind = 0; kind < AK_COUNT; kind++)
    for (int t = 0; t < p->nattn[kind]; t++) {
      const attn_tab *a = &p->attn[kind][t];
      size_t ny = (size_t)a->ny;
      for (int i = 0; i < a->nx; i++)
        for (int j = 0; j < a->ny; j++) {
          if (isnan(a->ns[i * ny + j])) continue;
          /* along x: column j; along y: row i */
          double pred[2];
          bool inner[2];
          pred[0] = loo1(a->lx, a->le + j, a->ns + j, ny, a->nx, i, &inner[0]);
          pred[1] = loo1(a->ly, a->le + i * ny, a->ns + i * ny, 1, a->ny, j, &inner[1]);
          double le = combine(pred, inner, 2);
          if (isnan(le)) continue;
          double m = a->ns[i * ny + j];
          double sol =
              prof__attn_sol(p, a->kind, a->kv_dtype, a->q_heads, a->kv_heads, a->head_dim, a->x[i], a->y[j], a->window);
          push(&e[pk[kind]], fabs(sol / exp(le) - m) / m);
        }
    }
}

static void loo_ar(const prof *p, errs *e) {
  for (int t = 0; t < p->nar; t++) {
    const ar_tab *a = &p->ar[t];
    for (int i = 0; a->n > 1 && i < a->n; i++) {
      double pred;
      if (i == 0) pred = a->ns[1];
      else if (i == a->n - 1) pred = a->ns[i - 1] * a->bytes[i] / a->bytes[i - 1];
      else {
        double f = (a->lb[i] - a->lb[i - 1]) / (a->lb[i + 1] - a->lb[i - 1]);
        pred = exp(a->lt[i - 1] * (1 - f) + a->lt[i + 1] * f);
      }
      push(&e[PK_ALLREDUCE], fabs(pred - a->ns[i]) / a->ns[i]);
    }
  }
}

void prof_loo_error(const prof *p, prof_loo *out) {
  memset(out, 0, sizeof *out);
  errs e[PK_COUNT];
  memset(e, 0, sizeof e);
  loo_gemm(p, e);
  loo_grid(p, e);
  loo_attn(p, e);
  loo_ar(p, e);
  for (int k = 0; k < PK_COUNT; k++) {
    size_t n = e[k].n;
    out->n[k] = (uint32_t)n;
    if (n) {
      sim_sort_doubles(e[k].v, n);
      out->median[k] = n % 2 ? e[k].v[n / 2] : 0.5 * (e[k].v[n / 2 - 1] + e[k].v[n / 2]);
      double r = 0.9 * (double)(n - 1);
      size_t lo = (size_t)r;
      double f = r - (double)lo;
      out->p90[k] = lo + 1 < n ? e[k].v[lo] * (1 - f) + e[k].v[lo + 1] * f : e[k].v[lo];
      out->max[k] = e[k].v[n - 1];
    }
    free(e[k].v);
  }
}
