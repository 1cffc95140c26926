/* prof_write.c: a profile document in format version 2 (see prof_write.h).
 * Key order: format, version, gpu, engine, engine_version, probes_source,
 * attribution, kernel_db, device, units, probes, notes, then the tables:
 * gemm_grid, attn_decode, attn_context, allreduce (each sorted by its lookup
 * key). Numeric arrays are flow arrays: a grid's ns one (m, n) line of len(k)
 * values per text line, an attention table one row per line. */
#include "hw/prof_write.h"

#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "core/jsonw.h"

#define NS_DIGITS 4 /* significant digits of a time: 0.05% rounding, far below run-to-run noise */

void prof_doc_init(prof_doc *d) { memset(d, 0, sizeof *d); }

void prof_doc_free(prof_doc *d) {
  for (size_t i = 0; i < d->nnotes; i++) free(d->notes[i]);
  free(d->notes);
  for (size_t i = 0; i < d->ngrid; i++) {
    free(d->grid[i].m);
    free(d->grid[i].n);
    free(d->grid[i].k);
    free(d->grid[i].ns);
  }
  free(d->grid);
  for (int k = 0; k < PDA_COUNT; k++) {
    for (size_t i = 0; i < d->nattn[k]; i++) {
      free(d->attn[k][i].x);
      free(d->attn[k][i].y);
      free(d->attn[k][i].ns);
    }
    free(d->attn[k]);
  }
  for (size_t i = 0; i < d->nar; i++) {
    free(d->ar[i].bytes);
    free(d->ar[i].ns);
  }
  free(d->ar);
  for (size_t i = 0; i < d->nmoe; i++) {
    free(d->moe[i].tokens);
    free(d->moe[i].ns);
  }
  free(d->moe);
  for (size_t i = 0; i < d->nmla; i++) {
    free(d->mla[i].batch);
    free(d->mla[i].len);
    free(d->mla[i].ns);
  }
  free(d->mla);
  for (size_t i = 0; i < d->ngdn; i++) {
    free(d->gdn[i].batch);
    free(d->gdn[i].len);
    free(d->gdn[i].ns);
  }
  free(d->gdn);
  memset(d, 0, sizeof *d);
}

void prof_doc_note(prof_doc *d, const char *fmt, ...) {
  char buf[1024];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(buf, sizeof buf, fmt, ap);
  va_end(ap);
  SIM_GROW(d->notes, d->cap_notes, d->nnotes + 1);
  d->notes[d->nnotes++] = sim_strdup(buf);
}

prof_doc_grid *prof_doc_add_grid(prof_doc *d) {
  SIM_GROW(d->grid, d->cap_grid, d->ngrid + 1);
  prof_doc_grid *g = &d->grid[d->ngrid++];
  memset(g, 0, sizeof *g);
  return g;
}

prof_doc_attn *prof_doc_add_attn(prof_doc *d, prof_doc_attn_kind kind) {
  SIM_ASSERT((unsigned)kind < PDA_COUNT);
  SIM_GROW(d->attn[kind], d->cap_attn[kind], d->nattn[kind] + 1);
  prof_doc_attn *a = &d->attn[kind][d->nattn[kind]++];
  memset(a, 0, sizeof *a);
  return a;
}

prof_doc_moe *prof_doc_add_moe(prof_doc *d) {
  SIM_GROW(d->moe, d->cap_moe, d->nmoe + 1);
  prof_doc_moe *m = &d->moe[d->nmoe++];
  memset(m, 0, sizeof *m);
  return m;
}

prof_doc_mla *prof_doc_add_mla(prof_doc *d) {
  SIM_GROW(d->mla, d->cap_mla, d->nmla + 1);
  prof_doc_mla *m = &d->mla[d->nmla++];
  memset(m, 0, sizeof *m);
  return m;
}

prof_doc_gdn *prof_doc_add_gdn(prof_doc *d) {
  SIM_GROW(d->gdn, d->cap_gdn, d->ngdn + 1);
  prof_doc_gdn *g = &d->gdn[d->ngdn++];
  memset(g, 0, sizeof *g);
  return g;
}

prof_doc_ar *prof_doc_add_ar(prof_doc *d) {
  SIM_GROW(d->ar, d->cap_ar, d->nar + 1);
  prof_doc_ar *a = &d->ar[d->nar++];
  memset(a, 0, sizeof *a);
  return a;
}

/* ---- sorted order (the loader's lookup keys) ----------------------------------------- */

static int cmp_grid(const void *a, const void *b) {
  const prof_doc_grid *x = *(const prof_doc_grid *const *)a, *y = *(const prof_doc_grid *const *)b;
  if (x->wdtype != y->wdtype) return (int)x->wdtype - (int)y->wdtype;
  if (x->adtype != y->adtype) return (int)x->adtype - (int)y->adtype;
  return (int)x->block - (int)y->block;
}

static int cmp_attn(const void *a, const void *b) {
  const prof_doc_attn *x = *(const prof_doc_attn *const *)a, *y = *(const prof_doc_attn *const *)b;
  if (x->window != y->window) return x->window < y->window ? -1 : 1;
  if (x->kv_dtype != y->kv_dtype) return (int)x->kv_dtype - (int)y->kv_dtype;
  if (x->head_dim != y->head_dim) return x->head_dim < y->head_dim ? -1 : 1;
  if (x->kv_heads != y->kv_heads) return x->kv_heads < y->kv_heads ? -1 : 1;
  if (x->q_heads != y->q_heads) return x->q_heads < y->q_heads ? -1 : 1;
  return 0;
}

static int cmp_ar(const void *a, const void *b) {
  const prof_doc_ar *x = *(const prof_doc_ar *const *)a, *y = *(const prof_doc_ar *const *)b;
  if (x->impl != y->impl) return (int)x->impl - (int)y->impl;
  if (x->num_gpus != y->num_gpus) return x->num_gpus < y->num_gpus ? -1 : 1;
  return 0;
}

static int cmp_moe(const void *a, const void *b) {
  return prof_moe_key_cmp(&(*(const prof_doc_moe *const *)a)->key, &(*(const prof_doc_moe *const *)b)->key);
}

static int cmp_mla(const void *a, const void *b) {
  return prof_mla_key_cmp(&(*(const prof_doc_mla *const *)a)->key, &(*(const prof_doc_mla *const *)b)->key);
}

static int cmp_gdn(const void *a, const void *b) {
  return prof_gdn_key_cmp(&(*(const prof_doc_gdn *const *)a)->key, &(*(const prof_doc_gdn *const *)b)->key);
}

/* Pointers to n elements of size sz at base, sorted by cmp (caller frees). */
static const void **sorted(const void *base, size_t n, size_t sz, int (*cmp)(const void *, const void *)) {
  const void **v = sim_malloc(sizeof *v * (n ? n : 1));
  for (size_t i = 0; i < n; i++) v[i] = (const char *)base + i * sz;
  if (n > 1) qsort(v, n, sizeof *v, cmp);
  return v;
}

/* ---- writing ------------------------------------------------------------------------- */

static void u32s(jw *j, const char *key, const uint32_t *v, int n) {
  jw_arr_flow(j, key, 0);
  for (int i = 0; i < n; i++) jw_u64(j, NULL, v[i]);
  jw_end(j);
}

static void header(jw *j, const prof_doc *d) {
  jw_str(j, "format", "servesim-profile");
  jw_u64(j, "version", 2);
  jw_str(j, "gpu", d->gpu);
  if (d->engine[0]) jw_str(j, "engine", d->engine);
  if (d->engine_version[0]) jw_str(j, "engine_version", d->engine_version);
  jw_str(j, "probes_source", d->probes_datasheet ? "datasheet" : "measured");
  if (d->attribution[0]) jw_str(j, "attribution", d->attribution);
  if (d->kdb_repository[0]) {
    jw_obj(j, "kernel_db");
    jw_str(j, "repository", d->kdb_repository);
    jw_str(j, "commit", d->kdb_commit);
    jw_str(j, "gpu_dir", d->kdb_gpu_dir);
    jw_str(j, "framework_dir", d->kdb_framework_dir);
    if (d->kdb_nccl_dir[0]) jw_str(j, "nccl_dir", d->kdb_nccl_dir);
    if (d->kdb_caveat[0]) jw_str(j, "caveat", d->kdb_caveat);
    jw_end(j);
  }
  if (d->device[0]) {
    jw_obj(j, "device");
    jw_str(j, "name", d->device);
    jw_end(j);
  }
  jw_obj(j, "units");
  jw_str(j, "ns", "nanoseconds per call on one GPU, 4 significant digits (null: not measured)");
  jw_str(j, "bytes", "all-reduce message bytes per GPU");
  jw_str(j, "copy_Bps", "bytes read + written per second");
  jw_str(j, "peak_flops", "FLOP/s (dense tensor cores)");
  jw_end(j);
  jw_obj(j, "probes");
  jw_num(j, "copy_Bps", d->copy_Bps);
  jw_obj(j, "peak_flops");
  static const sim_dtype pk[] = {DT_BF16, DT_FP8, DT_INT8, DT_FP4};
  for (size_t i = 0; i < SIM_ARRAY_LEN(pk); i++)
    if (d->peak[pk[i]] > 0) jw_num(j, dtype_name(pk[i]), d->peak[pk[i]]);
  jw_end(j);
  jw_end(j);
  jw_arr(j, "notes");
  for (size_t i = 0; i < d->nnotes; i++) jw_str(j, NULL, d->notes[i]);
  jw_end(j);
}

static void grids(jw *j, const prof_doc *d) {
  const void **v = sorted(d->grid, d->ngrid, sizeof *d->grid, cmp_grid);
  jw_arr(j, "gemm_grid");
  for (size_t t = 0; t < d->ngrid; t++) {
    const prof_doc_grid *g = v[t];
    jw_obj(j, NULL);
    jw_str(j, "wdtype", dtype_name(g->wdtype));
    jw_str(j, "adtype", dtype_name(g->adtype));
    if (g->block) jw_str(j, "scaling", "block");
    if (g->kernel[0]) jw_str(j, "kernel", g->kernel);
    u32s(j, "m", g->m, g->nm);
    u32s(j, "n", g->n, g->nn);
    u32s(j, "k", g->k, g->nk);
    jw_arr_flow(j, "ns", g->nk);
    size_t cells = (size_t)g->nm * (size_t)g->nn * (size_t)g->nk;
    for (size_t q = 0; q < cells; q++) jw_sig(j, NULL, g->ns[q], NS_DIGITS);
    jw_end(j);
    jw_end(j);
  }
  jw_end(j);
  free(v);
}

/* "ns": nx rows of ny values (row-major), one row per line; NAN is written null. */
static void matrix(jw *j, const double *ns, int nx, int ny) {
  jw_arr(j, "ns");
  for (int x = 0; x < nx; x++) {
    jw_arr_flow(j, NULL, 0);
    for (int y = 0; y < ny; y++) jw_sig(j, NULL, ns[(size_t)x * (size_t)ny + (size_t)y], NS_DIGITS);
    jw_end(j);
  }
  jw_end(j);
}

/* The tables of one kind: the full-attention ones (windowed false) or the
 * sliding-window ones; none: nothing written. */
static size_t n_attn(const prof_doc *d, prof_doc_attn_kind kind, bool windowed) {
  size_t n = 0;
  for (size_t t = 0; t < d->nattn[kind]; t++) n += (d->attn[kind][t].window > 0) == windowed;
  return n;
}

enum { PART_DENSE = 1, PART_MOE = 2 };

static void attns(jw *j, const prof_doc *d, prof_doc_attn_kind kind, int parts) {
  const void **v = sorted(d->attn[kind], d->nattn[kind], sizeof *d->attn[kind], cmp_attn);
  jw_arr(j, kind == PDA_DECODE ? "attn_decode" : "attn_context");
  for (size_t t = 0; t < d->nattn[kind]; t++) {
    const prof_doc_attn *a = v[t];
    if (!(parts & (a->window ? PART_MOE : PART_DENSE))) continue;
    jw_obj(j, NULL);
    jw_str(j, "kv_dtype", dtype_name(a->kv_dtype));
    jw_u64(j, "q_heads", a->q_heads);
    jw_u64(j, "kv_heads", a->kv_heads);
    jw_u64(j, "head_dim", a->head_dim);
    if (a->window) jw_u64(j, "window", a->window);
    if (a->kernel[0]) jw_str(j, "kernel", a->kernel);
    u32s(j, "batch", a->x, a->nx);
    u32s(j, kind == PDA_DECODE ? "kv_len" : "isl", a->y, a->ny);
    matrix(j, a->ns, a->nx, a->ny);
    jw_end(j);
  }
  jw_end(j);
  free(v);
}

static void allreduces(jw *j, const prof_doc *d) {
  const void **v = sorted(d->ar, d->nar, sizeof *d->ar, cmp_ar);
  jw_arr(j, "allreduce");
  for (size_t t = 0; t < d->nar; t++) {
    const prof_doc_ar *a = v[t];
    jw_obj(j, NULL);
    bool nccl = a->impl == PROF_AR_NCCL || a->impl == PROF_AG_NCCL || a->impl == PROF_RS_NCCL;
    jw_str(j, "impl", nccl ? "nccl" : "custom");
    if (!nccl) jw_str(j, "mode", a->impl == PROF_AR_CUSTOM_GRAPH ? "graph" : "eager");
    if (a->impl == PROF_AG_NCCL) jw_str(j, "op", "all_gather");
    if (a->impl == PROF_RS_NCCL) jw_str(j, "op", "reduce_scatter");
    jw_str(j, "dtype", dtype_name(a->dtype));
    jw_u64(j, "num_gpus", a->num_gpus);
    if (a->kernel[0]) jw_str(j, "kernel", a->kernel);
    jw_arr_flow(j, "bytes", 0);
    for (int i = 0; i < a->n; i++) jw_u64(j, NULL, (uint64_t)a->bytes[i]);
    jw_end(j);
    jw_arr_flow(j, "ns", 0);
    for (int i = 0; i < a->n; i++) jw_sig(j, NULL, a->ns[i], NS_DIGITS);
    jw_end(j);
    jw_end(j);
  }
  jw_end(j);
  free(v);
}

static void moes(jw *j, const prof_doc *d) {
  const void **v = sorted(d->moe, d->nmoe, sizeof *d->moe, cmp_moe);
  jw_arr(j, "moe");
  for (size_t t = 0; t < d->nmoe; t++) {
    const prof_doc_moe *m = v[t];
    const prof_moe_key *k = &m->key;
    jw_obj(j, NULL);
    jw_str(j, "dtype", k->dtype);
    jw_u64(j, "hidden", k->hidden);
    jw_u64(j, "inter", k->inter);
    jw_u64(j, "topk", k->topk);
    jw_u64(j, "experts", k->experts);
    jw_u64(j, "tp", k->tp);
    jw_u64(j, "ep", k->ep);
    jw_str(j, "distribution", k->dist);
    if (m->kernel[0]) jw_str(j, "kernel", m->kernel);
    u32s(j, "tokens", m->tokens, m->n);
    jw_arr_flow(j, "ns", 0);
    for (int i = 0; i < m->n; i++) jw_sig(j, NULL, m->ns[i], NS_DIGITS);
    jw_end(j);
    jw_end(j);
  }
  jw_end(j);
  free(v);
}

static void mlas(jw *j, const prof_doc *d) {
  const void **v = sorted(d->mla, d->nmla, sizeof *d->mla, cmp_mla);
  jw_arr(j, "mla_module");
  for (size_t t = 0; t < d->nmla; t++) {
    const prof_doc_mla *m = v[t];
    const prof_mla_key *k = &m->key;
    jw_obj(j, NULL);
    jw_str(j, "phase", k->context ? "context" : "generation");
    jw_str(j, "kv_dtype", dtype_name(k->kv_dtype));
    jw_str(j, "gemm", k->gemm);
    jw_u64(j, "heads", k->heads);
    jw_u64(j, "hidden", k->dims.hidden);
    jw_u64(j, "q_lora", k->dims.q_lora);
    jw_u64(j, "kv_lora", k->dims.kv_lora);
    jw_u64(j, "qk_nope", k->dims.qk_nope);
    jw_u64(j, "qk_rope", k->dims.qk_rope);
    jw_u64(j, "v_head", k->dims.v_head);
    if (k->topk) jw_u64(j, "index_topk", k->topk);
    if (m->model[0]) jw_str(j, "model", m->model);
    if (m->kernel[0]) jw_str(j, "kernel", m->kernel);
    u32s(j, "batch", m->batch, m->nb);
    u32s(j, "len", m->len, m->nl);
    matrix(j, m->ns, m->nb, m->nl);
    jw_end(j);
  }
  jw_end(j);
  free(v);
}

static void gdns(jw *j, const prof_doc *d) {
  const void **v = sorted(d->gdn, d->ngdn, sizeof *d->gdn, cmp_gdn);
  jw_arr(j, "gdn_module");
  for (size_t t = 0; t < d->ngdn; t++) {
    const prof_doc_gdn *g = v[t];
    const prof_gdn_key *k = &g->key;
    jw_obj(j, NULL);
    jw_str(j, "phase", k->context ? "context" : "generation");
    jw_u64(j, "k_heads", k->k_heads);
    jw_u64(j, "k_dim", k->k_dim);
    jw_u64(j, "v_heads", k->v_heads);
    jw_u64(j, "v_dim", k->v_dim);
    jw_u64(j, "conv", k->conv);
    if (g->models[0]) jw_str(j, "models", g->models);
    if (g->kernel[0]) jw_str(j, "kernel", g->kernel);
    u32s(j, "batch", g->batch, g->nb);
    u32s(j, "len", g->len, g->nl);
    matrix(j, g->ns, g->nb, g->nl);
    jw_end(j);
  }
  jw_end(j);
  free(v);
}

/* The dense part: GEMM grids, full-attention tables, all-reduces. The
 * companion part (loaded only for the models that need it, runner/profsel.c):
 * fused-MoE tables, MLA modules, Gated DeltaNet kernels and sliding-window
 * attention tables. One file
 * of both parts holds each kind's tables in one array. */
static int write_parts(const prof_doc *d, FILE *f, int parts, sim_err *err) {
  jw j;
  jw_begin(&j, f);
  header(&j, d);
  if ((parts & PART_DENSE) && d->ngrid) grids(&j, d);
  for (int k = 0; k < PDA_COUNT; k++) {
    size_t n = ((parts & PART_DENSE) ? n_attn(d, (prof_doc_attn_kind)k, false) : 0) +
               ((parts & PART_MOE) ? n_attn(d, (prof_doc_attn_kind)k, true) : 0);
    if (n) attns(&j, d, (prof_doc_attn_kind)k, parts);
  }
  if ((parts & PART_DENSE) && d->nar) allreduces(&j, d);
  if ((parts & PART_MOE) && d->nmoe) moes(&j, d);
  if ((parts & PART_MOE) && d->nmla) mlas(&j, d);
  if ((parts & PART_MOE) && d->ngdn) gdns(&j, d);
  return jw_finish(&j, err);
}

int prof_write_file(const prof_doc *d, FILE *f, sim_err *err) { return write_parts(d, f, PART_DENSE | PART_MOE, err); }
int prof_write_dense(const prof_doc *d, FILE *f, sim_err *err) { return write_parts(d, f, PART_DENSE, err); }
int prof_write_moe(const prof_doc *d, FILE *f, sim_err *err) { return write_parts(d, f, PART_MOE, err); }
