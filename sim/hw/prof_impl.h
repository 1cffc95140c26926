/* prof_impl.h: the internals the profile modules share (prof.c: loading and
 * probes; prof_read.c: JSON reading helpers; prof_work.c: the work of one
 * call, speed of light, interpolation helpers; prof_gemm.c: 1-D GEMM tables
 * and GEMM grids; prof_attn.c: decode, prefill and context attention;
 * prof_ar.c: all-reduce; prof_moe.c, prof_mla.c, prof_gdn.c: fused MoE, MLA modules, Gated DeltaNet
 * kernels (their batch x length rows: prof_rows.c);
 * prof_loo.c: leave-one-out). It declares nothing prof.c defines: prof.c
 * calls the table modules, they never call it (scripts/check_layers.sh).
 * Nothing outside sim/hw/prof*.c includes it. Internal functions carry the
 * prefix prof__.
 *
 * Invariants after a successful load (every table kind):
 *   - grids are strictly increasing, every measured time is a finite positive
 *     number of ns, unmeasured cells are NAN in ns[] and carry a filled
 *     log-efficiency in le[];
 *   - every table has its speed-of-light rates in the profile's probes, so
 *     le = log(SOL / measured) is defined at every measured point;
 *   - tables of one kind are sorted by their lookup key (binary search) and
 *     no two share a key; `idx` keeps each table's position in the file. */
#ifndef SIM_PROF_IMPL_H
#define SIM_PROF_IMPL_H

#include <cjson/cJSON.h>

#include "config/jsonx.h"
#include "hw/prof.h"

typedef struct gemm_tab {
  sim_dtype wdtype, adtype; /* weights, activations (fp16 stored as bf16) */
  uint32_t n, k;            /* output and input features */
  int np;                   /* measured points */
  uint32_t *m;              /* [np] tokens, increasing */
  double *ns;               /* [np] measured ns */
  double *lx;               /* [np] log(m) */
  double *le;               /* [np] log(efficiency), efficiency = SOL / measured */
  int idx;                  /* position in the file's "gemm" array */
} gemm_tab;

typedef struct grid_tab {
  sim_dtype wdtype, adtype; /* the lookup key (fp16 stored as bf16), with `block` */
  bool block;               /* block-scaled FP8 (1 x 128 activation groups, 128 x 128 weight blocks: the
                               "scaling": "block" key), else per-tensor / per-channel scales */
  int nm, nn, nk;           /* grid sizes */
  uint32_t *m, *n, *k;      /* [nm], [nn], [nk] tokens, output and input features, increasing */
  double *lm, *ln, *lk;     /* logs of the coordinates */
  double *ns;               /* [nm * nn * nk] measured ns, m-major ((i nn + j) nk + l), NAN = not measured */
  double *le;               /* same layout: log(efficiency), unmeasured cells filled */
  int idx;                  /* position in the file's "gemm_grid" array */
} grid_tab;

typedef enum attn_kind { AK_DECODE = 0, AK_PREFILL, AK_CONTEXT, AK_COUNT } attn_kind;

typedef struct attn_tab {
  attn_kind kind;     /* decode: x = batch, y = kv_len; prefill: x = chunk, y = ctx; context: x = batch, y = isl */
  sim_dtype kv_dtype; /* bf16 or fp8 (prefill: bf16) */
  uint32_t q_heads, kv_heads, head_dim; /* per GPU: the lookup key */
  uint32_t window;    /* sliding-window attention: each query attends to the last `window` tokens; 0 = full */
  int nx, ny;         /* grid sizes */
  uint32_t *x, *y;    /* [nx], [ny] increasing */
  double *lx, *ly;    /* logs (prefill: log(1 + ctx), ctx may be 0) */
  double *ns;         /* [nx * ny] measured ns, NAN where not measured */
  double *le;         /* [nx * ny] log(efficiency), unmeasured cells filled */
  int idx;            /* position in the file's array of this kind */
} attn_tab;

typedef struct ar_tab {
  prof_ar_impl impl;  /* the lookup key with num_gpus */
  uint32_t num_gpus;  /* GPUs in the group */
  sim_dtype dtype;    /* element dtype of the measurement (informational) */
  int n;              /* measured sizes */
  double *bytes;      /* [n] message bytes per GPU, increasing */
  double *ns;         /* [n] measured ns */
  double *lb, *lt;    /* [n] log(bytes), log(ns) */
  int idx;            /* position in the file's "allreduce" array */
} ar_tab;

/* One fused-MoE shape (kernel-db moe_perf): measured ns by tokens. */
typedef struct moe_tab {
  prof_moe_key key;   /* dtype (the kernel-db moe_dtype), sizes (inter: one expert's, unsharded), TP, EP, routing */
  int n;              /* measured token counts */
  uint32_t *tokens;   /* [n] increasing */
  double *ns;         /* [n] */
  double *lx, *lt;    /* [n] log(tokens), log(ns) */
  int idx;            /* position in the file's "moe" array */
} moe_tab;

/* A module table's rows (MLA modules, Gated DeltaNet kernels): ragged, one per measured batch. */
typedef struct mla_row {
  uint32_t batch;
  int n;              /* measured lengths of this batch */
  uint32_t *len;      /* [n] increasing */
  double *ns;         /* [n] */
  double *ll, *lt;    /* [n] log(len), log(ns) */
} mla_row;
typedef struct mod_rows {
  int nrows;
  mla_row *rows;      /* by increasing batch */
  double *lb;         /* [nrows] log(batch) */
} mod_rows;
typedef struct mla_tab {
  prof_mla_key key;
  mod_rows r;
  int idx;            /* position in the file's "mla_module" array */
} mla_tab;
/* One Gated DeltaNet table (prof_gdn.c). */
typedef struct gdn_tab {
  prof_gdn_key key;
  mod_rows r;
  int idx;            /* position in the file's "gdn_module" array */
} gdn_tab;

struct prof {
  int version;               /* file format version, 1 or 2 */
  bool image;                /* read from a binary image (prof_bin.c): the tables' arrays point into it (read-only,
                                never freed); only the arrays of tables (gemm, grid, attn, ...) are allocated */
  char gpu[64];              /* gpu config name */
  char source[512];          /* path or description, for reports */
  char engine[32];           /* "" when not recorded */
  char engine_version[64];   /* "" when not recorded */
  char origin[640];          /* imported tables: their origin in one phrase (and its caveat); "" otherwise */
  char attribution[1024];    /* "" when none */
  double copy_Bps;           /* probe: bytes read + written per s */
  double peak[DT_COUNT];     /* probe: FLOP/s by dtype, 0 = not measured */
  gemm_tab *gemm;            /* [ngemm] sorted by (wdtype, adtype, n, k) */
  int ngemm;
  grid_tab *grid;            /* [ngrid] sorted by (wdtype, adtype) */
  int ngrid;
  attn_tab *attn[AK_COUNT];  /* [nattn[k]] sorted by (window, kv_dtype, head_dim, kv_heads, q_heads) */
  int nattn[AK_COUNT];
  ar_tab *ar;                /* [nar] sorted by (impl, num_gpus) */
  int nar;
  moe_tab *moe;              /* [nmoe] sorted by their key (prof_moe.c) */
  int nmoe;
  mla_tab *mla;              /* [nmla] sorted by their key (prof_mla.c) */
  int nmla;
  gdn_tab *gdn;              /* [ngdn] sorted by their key (prof_gdn.c) */
  int ngdn;
};

/* ---- reading (prof_read.c): strict keys; messages "<file>:<line>: <field path>: <problem>" ---- */
typedef struct pctx {
  const jx *j;
} pctx;
int prof__bad(pctx *c, const cJSON *at, const char *field, const char *fmt, ...) __attribute__((format(printf, 4, 5)));
int prof__keys(pctx *c, const cJSON *obj, const char *field, const char *const *allowed);
const cJSON *prof__get(const cJSON *obj, const char *key);
int prof__u32(pctx *c, const cJSON *obj, const char *key, const char *field, bool required, uint32_t *out);
int prof__pos(pctx *c, const cJSON *v, const char *f, double *out);
int prof__dtype(pctx *c, const cJSON *obj, const char *key, const char *field, sim_dtype *out);
int prof__str(pctx *c, const cJSON *obj, const char *key, const char *field, bool required, char *out, size_t n);
/* A strictly increasing non-empty array of integers >= 1 (>= 0 with allow_zero). */
int prof__grid(pctx *c, const cJSON *obj, const char *key, const char *field, bool allow_zero, uint32_t **out, int *n);
/* Fails unless the probes hold the peak of the compute dtype `w` needs. */
int prof__need_peak(pctx *c, const prof *p, const cJSON *at, const char *table, sim_dtype compute);

/* Table readers: arr is the JSON array of that key (prof_gemm.c, prof_attn.c, prof_ar.c). */
int prof__parse_gemm(pctx *c, prof *p, const cJSON *arr);
int prof__parse_grid(pctx *c, prof *p, const cJSON *arr);
int prof__parse_attn(pctx *c, prof *p, const cJSON *arr, attn_kind kind);
int prof__parse_ar(pctx *c, prof *p, const cJSON *arr);
int prof__parse_moe(pctx *c, prof *p, const cJSON *arr);
void prof__free_moe(prof *p);
int prof__parse_mla(pctx *c, prof *p, const cJSON *arr);
int prof__parse_gdn(pctx *c, prof *p, const cJSON *arr);
/* Frees the module tables (MLA and Gated DeltaNet; prof_rows.c). */
void prof__free_modules(prof *p);
/* The batch x length tables of the module kinds (prof_rows.c): reading t's "batch", "len" and "ns" (a matrix,
 * null = not measured) into ragged rows and their log(batch); freeing an array of n tables of `size` bytes whose
 * mod_rows are at byte rows_off (and the array); the lookup (prof.h, prof_mla_module_ns) in such a sorted array
 * of the table whose key equals that of `key` by cmp: false when none. */
int prof__parse_rows(pctx *c, const cJSON *t, const char *f, mod_rows *r);
/* A module table's "phase" (text `phase` of table t, field f): *context for "context", false for "generation",
 * else a refusal naming f.phase. */
int prof__parse_phase(pctx *c, const cJSON *t, const char *f, const char *phase, bool *context);
void prof__free_mods(void *tabs, int n, size_t size, size_t rows_off, bool image);
bool prof__mod_ns(const void *tabs, int n, size_t size, size_t rows_off, const void *key,
                  int (*cmp)(const void *, const void *), uint32_t batch, uint32_t len, double *ns);
/* Reads the array arr of a module kind (field: its key, e.g. "mla_module") into *tabs (n tables of `size`
 * bytes, their position in the file at byte idx_off), each by one(), then sorted and checked by
 * prof__sort_unique. */
int prof__parse_mods(pctx *c, const cJSON *arr, const char *field, void **tabs, int *n, size_t size, size_t idx_off,
                     int (*one)(pctx *, const cJSON *, const char *, void *), int (*cmp)(const void *, const void *));
/* After parsing: sorts n tables of `size` bytes (their int position in the file at byte idx_off) with cmp and
 * fails naming the second of two with the same key (field: the array's name). */
int prof__sort_unique(pctx *c, void *tabs, int n, size_t size, size_t idx_off, int (*cmp)(const void *, const void *),
                      const cJSON *arr, const char *field);
void prof__free_tables(prof *p);

/* ---- speed of light and interpolation (prof_work.c) ------------------------------------- */
double prof__sol_ns(const prof *p, const prof_work *w);
double prof__gemm_sol(const prof *p, sim_dtype w, sim_dtype a, double M, double N, double K);
/* An attention call's speed of light; window > 0: a sliding-window call (each
 * query attends to at most `window` tokens: a decode reads and scores that
 * many, a prompt's token i scores min(i, window)). */
double prof__attn_sol(const prof *p, attn_kind kind, sim_dtype kv, uint32_t qh, uint32_t kvh, uint32_t hd, uint32_t x,
                      uint32_t y, uint32_t window);
/* Bracket of u on the increasing grid lx[0..n): lx[*i] <= u <= lx[*i + 1] with
 * weight *f of the upper point, clamped to the ends (f 0 or 1); n == 1: i 0, f 0. */
void prof__bracket(const double *lx, int n, double u, int *i, double *f);
/* Index of v in the increasing array a[0..n), or -1. */
int prof__find_u32(const uint32_t *a, int n, uint32_t v);
/* log(efficiency) of an attention table at log coordinates (u, v), bilinear. */
double prof__attn_le(const attn_tab *t, double u, double v);
/* The y axis value of an attention coordinate in its interpolation space. */
double prof__attn_ly(attn_kind kind, uint32_t y);

#endif
