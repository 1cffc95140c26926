/* prof_bin.c: a loaded profile as a flat binary image and back (prof.h: prof_bin_write, prof_bin_read).
 *
 * The bundled profiles are JSON (configs/profiles/); parsing one is most of a short run's start-up (tens of
 * milliseconds for 1.5 MB of numbers: docs/PERFORMANCE.md, "Start-up"). The build turns each into this image
 * (scripts/profbin.c) and embeds it beside the JSON; prof_load takes the image when the JSON it was asked for
 * has the bytes the image was made from (their length and a 64-bit hash, stored in the header), and parses
 * the JSON otherwise. The image holds everything a parse leaves in the tables, derived logs and filled
 * log-efficiencies included, bit for bit, in the order the parse left them: a profile read from it answers every
 * query with the same bits (tests/unit/test_prof_bin.c compares every bundled profile field by field).
 *
 * Layout: a header (magic, layout signature, source length and hash, payload length and hash), then the payload:
 * integers as little-endian u32/u64, doubles as their IEEE-754 bits, strings as a u32 length and their bytes. The
 * layout signature changes with the format and with the number of dtypes or attention kinds, so an image of
 * another build is refused (and the JSON parsed) rather than misread. Every read is bounds-checked: a truncated
 * or altered image is an error, never a wrong table. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hw/prof_impl.h"

#define BIN_MAGIC "SVSMPRB1"
#define BIN_LAYOUT (0x50420000u | (uint32_t)(DT_COUNT << 8) | (uint32_t)(AK_COUNT << 4) | 4u) /* 2: MoE key's ungated; 3: gdn; 4: MLA topk */
#define BIN_HEADER 48 /* magic 8, layout 4, byte order 4, source length 8, source hash 8, payload length 8, hash 8 */
#define BIN_ORDER 0x01020304u /* written in host order: an image of another byte order is refused */

/* FNV-1a's step over 8-byte words (host order: an image is read by the build that wrote it), then the tail
 * bytes, then a final avalanche: a few hundred microseconds for a 1.5 MB profile, where parsing it takes tens
 * of milliseconds. It tells an edited file from the bundled one; it is no defence against a forged one (an image
 * is the build's own data, and a JSON file is parsed and checked whenever it differs). */
uint64_t prof_bin_hash(const void *data, size_t n) {
  const unsigned char *b = data;
  uint64_t h = 1469598103934665603ull ^ (uint64_t)n;
  size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    uint64_t w;
    memcpy(&w, b + i, 8);
    h = (h ^ w) * 1099511628211ull;
    h ^= h >> 29;
  }
  for (; i < n; i++) h = (h ^ b[i]) * 1099511628211ull;
  h ^= h >> 33;
  h *= 0xff51afd7ed558ccdull;
  h ^= h >> 33;
  return h;
}

/* ---- writing ---------------------------------------------------------------------------------------- */

typedef struct wbuf {
  unsigned char *b;
  size_t n, cap;
} wbuf;

static void put(wbuf *w, const void *p, size_t n) {
  if (w->n + n > w->cap) {
    size_t c = w->cap ? w->cap : 1 << 16;
    while (c < w->n + n) c *= 2;
    w->b = sim_realloc(w->b, c);
    w->cap = c;
  }
  memcpy(w->b + w->n, p, n);
  w->n += n;
}
static void put_u64(wbuf *w, uint64_t v) {
  unsigned char b[8];
  for (int i = 0; i < 8; i++) b[i] = (unsigned char)(v >> (8 * i));
  put(w, b, 8);
}
static void put_u32(wbuf *w, uint32_t v) {
  unsigned char b[4];
  for (int i = 0; i < 4; i++) b[i] = (unsigned char)(v >> (8 * i));
  put(w, b, 4);
}
static void put_i32(wbuf *w, int v) { put_u32(w, (uint32_t)v); }
static void put_f64(wbuf *w, double v) {
  uint64_t u;
  memcpy(&u, &v, sizeof u);
  put_u64(w, u);
}
static void put_str(wbuf *w, const char *s) {
  size_t n = strlen(s);
  put_u32(w, (uint32_t)n);
  put(w, s, n);
}
/* Arrays start 8-byte aligned (zero bytes pad) and are stored in host order, so that a reader of this build
 * points into the image instead of copying them. */
static void align8(wbuf *w) {
  static const unsigned char zero[8] = {0};
  if (w->n % 8) put(w, zero, 8 - w->n % 8);
}
static void put_u32s(wbuf *w, const uint32_t *a, size_t n) {
  align8(w);
  if (n) put(w, a, n * sizeof *a);
}
static void put_f64s(wbuf *w, const double *a, size_t n) {
  align8(w);
  if (n) put(w, a, n * sizeof *a);
}

/* A module table's rows (MLA modules, Gated DeltaNet kernels): count, position in the file, log(batch), rows. */
static void put_rows(wbuf *w, const mod_rows *m, int idx) {
  put_i32(w, m->nrows), put_i32(w, idx);
  put_f64s(w, m->lb, (size_t)m->nrows);
  for (int r = 0; r < m->nrows; r++) {
    const mla_row *row = &m->rows[r];
    put_u32(w, row->batch), put_i32(w, row->n);
    put_u32s(w, row->len, (size_t)row->n);
    put_f64s(w, row->ns, (size_t)row->n), put_f64s(w, row->ll, (size_t)row->n), put_f64s(w, row->lt, (size_t)row->n);
  }
}

static void put_payload(wbuf *w, const prof *p) {
  put_i32(w, p->version);
  put_str(w, p->gpu);
  put_str(w, p->engine);
  put_str(w, p->engine_version);
  put_str(w, p->origin);
  put_str(w, p->attribution);
  put_f64(w, p->copy_Bps);
  put_f64s(w, p->peak, DT_COUNT);
  put_i32(w, p->ngemm);
  for (int i = 0; i < p->ngemm; i++) {
    const gemm_tab *t = &p->gemm[i];
    put_u32(w, (uint32_t)t->wdtype), put_u32(w, (uint32_t)t->adtype), put_u32(w, t->n), put_u32(w, t->k);
    put_i32(w, t->np), put_i32(w, t->idx);
    put_u32s(w, t->m, (size_t)t->np);
    put_f64s(w, t->ns, (size_t)t->np), put_f64s(w, t->lx, (size_t)t->np), put_f64s(w, t->le, (size_t)t->np);
  }
  put_i32(w, p->ngrid);
  for (int i = 0; i < p->ngrid; i++) {
    const grid_tab *t = &p->grid[i];
    size_t cells = (size_t)t->nm * (size_t)t->nn * (size_t)t->nk;
    put_u32(w, (uint32_t)t->wdtype), put_u32(w, (uint32_t)t->adtype), put_u32(w, t->block);
    put_i32(w, t->nm), put_i32(w, t->nn), put_i32(w, t->nk), put_i32(w, t->idx);
    put_u32s(w, t->m, (size_t)t->nm), put_u32s(w, t->n, (size_t)t->nn), put_u32s(w, t->k, (size_t)t->nk);
    put_f64s(w, t->lm, (size_t)t->nm), put_f64s(w, t->ln, (size_t)t->nn), put_f64s(w, t->lk, (size_t)t->nk);
    put_f64s(w, t->ns, cells), put_f64s(w, t->le, cells);
  }
  for (int k = 0; k < AK_COUNT; k++) {
    put_i32(w, p->nattn[k]);
    for (int i = 0; i < p->nattn[k]; i++) {
      const attn_tab *t = &p->attn[k][i];
      size_t cells = (size_t)t->nx * (size_t)t->ny;
      put_u32(w, (uint32_t)t->kind), put_u32(w, (uint32_t)t->kv_dtype);
      put_u32(w, t->q_heads), put_u32(w, t->kv_heads), put_u32(w, t->head_dim), put_u32(w, t->window);
      put_i32(w, t->nx), put_i32(w, t->ny), put_i32(w, t->idx);
      put_u32s(w, t->x, (size_t)t->nx), put_u32s(w, t->y, (size_t)t->ny);
      put_f64s(w, t->lx, (size_t)t->nx), put_f64s(w, t->ly, (size_t)t->ny);
      put_f64s(w, t->ns, cells), put_f64s(w, t->le, cells);
    }
  }
  put_i32(w, p->nar);
  for (int i = 0; i < p->nar; i++) {
    const ar_tab *t = &p->ar[i];
    put_u32(w, (uint32_t)t->impl), put_u32(w, t->num_gpus), put_u32(w, (uint32_t)t->dtype);
    put_i32(w, t->n), put_i32(w, t->idx);
    put_f64s(w, t->bytes, (size_t)t->n), put_f64s(w, t->ns, (size_t)t->n);
    put_f64s(w, t->lb, (size_t)t->n), put_f64s(w, t->lt, (size_t)t->n);
  }
  put_i32(w, p->nmoe);
  for (int i = 0; i < p->nmoe; i++) {
    const moe_tab *t = &p->moe[i];
    put_str(w, t->key.dtype);
    put_u32(w, t->key.hidden), put_u32(w, t->key.inter), put_u32(w, t->key.topk), put_u32(w, t->key.experts);
    put_u32(w, t->key.tp), put_u32(w, t->key.ep);
    put_str(w, t->key.dist);
    put_u32(w, t->key.ungated);
    put_i32(w, t->n), put_i32(w, t->idx);
    put_u32s(w, t->tokens, (size_t)t->n);
    put_f64s(w, t->ns, (size_t)t->n), put_f64s(w, t->lx, (size_t)t->n), put_f64s(w, t->lt, (size_t)t->n);
  }
  put_i32(w, p->nmla);
  for (int i = 0; i < p->nmla; i++) {
    const mla_tab *t = &p->mla[i];
    const prof_mla_key *k = &t->key;
    put_u32(w, k->context), put_u32(w, (uint32_t)k->kv_dtype);
    put_str(w, k->gemm);
    put_u32(w, k->heads);
    put_u32(w, k->dims.hidden), put_u32(w, k->dims.q_lora), put_u32(w, k->dims.kv_lora);
    put_u32(w, k->dims.qk_nope), put_u32(w, k->dims.qk_rope), put_u32(w, k->dims.v_head), put_u32(w, k->topk);
    put_rows(w, &t->r, t->idx);
  }
  put_i32(w, p->ngdn);
  for (int i = 0; i < p->ngdn; i++) {
    const gdn_tab *t = &p->gdn[i];
    const prof_gdn_key *k = &t->key;
    put_u32(w, k->context), put_u32(w, k->k_heads), put_u32(w, k->k_dim), put_u32(w, k->v_heads);
    put_u32(w, k->v_dim), put_u32(w, k->conv);
    put_rows(w, &t->r, t->idx);
  }
}

int prof_bin_write(const prof *p, const char *src, size_t src_len, unsigned char **out, size_t *n, sim_err *err) {
  (void)err;
  wbuf pay = {0};
  put_payload(&pay, p);
  wbuf w = {0};
  put(&w, BIN_MAGIC, 8);
  put_u32(&w, BIN_LAYOUT);
  uint32_t order = BIN_ORDER;
  put(&w, &order, 4);
  put_u64(&w, src_len);
  put_u64(&w, prof_bin_hash(src, src_len));
  put_u64(&w, pay.n);
  put_u64(&w, prof_bin_hash(pay.b, pay.n));
  put(&w, pay.b, pay.n);
  free(pay.b);
  *out = w.b;
  *n = w.n;
  return SIM_OK;
}

/* ---- reading ---------------------------------------------------------------------------------------- */

typedef struct rbuf {
  const unsigned char *b;
  size_t n, at;
  bool bad;
} rbuf;

static const unsigned char *take(rbuf *r, size_t n) {
  if (r->bad || n > r->n - r->at) {
    r->bad = true;
    return NULL;
  }
  const unsigned char *p = r->b + r->at;
  r->at += n;
  return p;
}
static uint64_t get_u64(rbuf *r) {
  const unsigned char *b = take(r, 8);
  uint64_t v = 0;
  for (int i = 0; b && i < 8; i++) v |= (uint64_t)b[i] << (8 * i);
  return v;
}
static uint32_t get_u32(rbuf *r) {
  const unsigned char *b = take(r, 4);
  uint32_t v = 0;
  for (int i = 0; b && i < 4; i++) v |= (uint32_t)b[i] << (8 * i);
  return v;
}
/* a count: at most what the rest of the image could hold at `each` bytes an item */
static int get_count(rbuf *r, size_t each) {
  uint32_t v = get_u32(r);
  if (v > (uint32_t)INT32_MAX || (size_t)v * each > r->n - r->at) r->bad = true;
  return r->bad ? 0 : (int)v;
}
static int get_i32(rbuf *r) { return (int)get_u32(r); }
static double get_f64(rbuf *r) {
  uint64_t u = get_u64(r);
  double v;
  memcpy(&v, &u, sizeof v);
  return v;
}
static void get_str(rbuf *r, char *out, size_t cap) {
  uint32_t n = get_u32(r);
  const unsigned char *b = n < cap ? take(r, n) : NULL;
  if (!b) {
    r->bad = true;
    out[0] = 0;
    return;
  }
  memcpy(out, b, n);
  out[n] = 0;
}
/* An array of the image, in place (the tables of an image-backed profile are read-only views of it); NULL and
 * r->bad past the end. */
static const void *get_array(rbuf *r, size_t n, size_t size) {
  if (r->at % 8) take(r, 8 - r->at % 8);
  if (r->bad || n > (r->n - r->at) / size) {
    r->bad = true;
    return NULL;
  }
  return take(r, n * size);
}
static uint32_t *get_u32s(rbuf *r, int n) { return (uint32_t *)get_array(r, n < 0 ? SIZE_MAX : (size_t)n, 4); }
static double *get_f64s(rbuf *r, size_t n) { return (double *)get_array(r, n, 8); }
static sim_dtype get_dtype(rbuf *r) {
  uint32_t v = get_u32(r);
  if (v >= DT_COUNT) r->bad = true;
  return r->bad ? DT_BF16 : (sim_dtype)v;
}

static void get_rows(rbuf *r, mod_rows *m, int *idx) {
  int n = get_count(r, 8);
  *idx = get_i32(r);
  m->lb = get_f64s(r, (size_t)n);
  m->rows = sim_calloc((size_t)n + 1, sizeof *m->rows);
  for (int j = 0; j < n && !r->bad; j++, m->nrows++) {
    mla_row *row = &m->rows[j];
    row->batch = get_u32(r), row->n = get_count(r, 28);
    row->len = get_u32s(r, row->n);
    row->ns = get_f64s(r, (size_t)row->n), row->ll = get_f64s(r, (size_t)row->n), row->lt = get_f64s(r, (size_t)row->n);
  }
}

static void get_payload(rbuf *r, prof *p) {
  p->version = get_i32(r);
  get_str(r, p->gpu, sizeof p->gpu);
  get_str(r, p->engine, sizeof p->engine);
  get_str(r, p->engine_version, sizeof p->engine_version);
  get_str(r, p->origin, sizeof p->origin);
  get_str(r, p->attribution, sizeof p->attribution);
  p->copy_Bps = get_f64(r);
  const double *peak = get_f64s(r, DT_COUNT);
  if (peak) memcpy(p->peak, peak, sizeof p->peak);
  /* each table is counted in its array as soon as it is allocated, so prof_free releases whatever was read */
  int n = get_count(r, 24);
  p->gemm = sim_calloc((size_t)n + 1, sizeof *p->gemm);
  for (int i = 0; i < n && !r->bad; i++, p->ngemm++) {
    gemm_tab *t = &p->gemm[i];
    t->wdtype = get_dtype(r), t->adtype = get_dtype(r), t->n = get_u32(r), t->k = get_u32(r);
    t->np = get_count(r, 28), t->idx = get_i32(r);
    t->m = get_u32s(r, t->np);
    t->ns = get_f64s(r, (size_t)t->np), t->lx = get_f64s(r, (size_t)t->np), t->le = get_f64s(r, (size_t)t->np);
  }
  n = get_count(r, 28);
  p->grid = sim_calloc((size_t)n + 1, sizeof *p->grid);
  for (int i = 0; i < n && !r->bad; i++, p->ngrid++) {
    grid_tab *t = &p->grid[i];
    t->wdtype = get_dtype(r), t->adtype = get_dtype(r), t->block = get_u32(r) != 0;
    t->nm = get_count(r, 12), t->nn = get_count(r, 12), t->nk = get_count(r, 12), t->idx = get_i32(r);
    size_t cells = (size_t)t->nm * (size_t)t->nn * (size_t)t->nk;
    t->m = get_u32s(r, t->nm), t->n = get_u32s(r, t->nn), t->k = get_u32s(r, t->nk);
    t->lm = get_f64s(r, (size_t)t->nm), t->ln = get_f64s(r, (size_t)t->nn), t->lk = get_f64s(r, (size_t)t->nk);
    t->ns = get_f64s(r, cells), t->le = get_f64s(r, cells);
  }
  for (int k = 0; k < AK_COUNT; k++) {
    n = get_count(r, 36);
    p->attn[k] = sim_calloc((size_t)n + 1, sizeof *p->attn[k]);
    for (int i = 0; i < n && !r->bad; i++, p->nattn[k]++) {
      attn_tab *t = &p->attn[k][i];
      uint32_t kind = get_u32(r);
      if (kind != (uint32_t)k) r->bad = true;
      t->kind = (attn_kind)k, t->kv_dtype = get_dtype(r);
      t->q_heads = get_u32(r), t->kv_heads = get_u32(r), t->head_dim = get_u32(r), t->window = get_u32(r);
      t->nx = get_count(r, 12), t->ny = get_count(r, 12), t->idx = get_i32(r);
      size_t cells = (size_t)t->nx * (size_t)t->ny;
      t->x = get_u32s(r, t->nx), t->y = get_u32s(r, t->ny);
      t->lx = get_f64s(r, (size_t)t->nx), t->ly = get_f64s(r, (size_t)t->ny);
      t->ns = get_f64s(r, cells), t->le = get_f64s(r, cells);
    }
  }
  n = get_count(r, 20);
  p->ar = sim_calloc((size_t)n + 1, sizeof *p->ar);
  for (int i = 0; i < n && !r->bad; i++, p->nar++) {
    ar_tab *t = &p->ar[i];
    uint32_t impl = get_u32(r);
    if (impl >= PROF_AR_COUNT) r->bad = true;
    t->impl = r->bad ? PROF_AR_NCCL : (prof_ar_impl)impl;
    t->num_gpus = get_u32(r), t->dtype = get_dtype(r);
    t->n = get_count(r, 32), t->idx = get_i32(r);
    t->bytes = get_f64s(r, (size_t)t->n), t->ns = get_f64s(r, (size_t)t->n);
    t->lb = get_f64s(r, (size_t)t->n), t->lt = get_f64s(r, (size_t)t->n);
  }
  n = get_count(r, 40);
  p->moe = sim_calloc((size_t)n + 1, sizeof *p->moe);
  for (int i = 0; i < n && !r->bad; i++, p->nmoe++) {
    moe_tab *t = &p->moe[i];
    get_str(r, t->key.dtype, sizeof t->key.dtype);
    t->key.hidden = get_u32(r), t->key.inter = get_u32(r), t->key.topk = get_u32(r), t->key.experts = get_u32(r);
    t->key.tp = get_u32(r), t->key.ep = get_u32(r);
    get_str(r, t->key.dist, sizeof t->key.dist);
    t->key.ungated = get_u32(r) != 0;
    t->n = get_count(r, 28), t->idx = get_i32(r);
    t->tokens = get_u32s(r, t->n);
    t->ns = get_f64s(r, (size_t)t->n), t->lx = get_f64s(r, (size_t)t->n), t->lt = get_f64s(r, (size_t)t->n);
  }
  n = get_count(r, 48);
  p->mla = sim_calloc((size_t)n + 1, sizeof *p->mla);
  for (int i = 0; i < n && !r->bad; i++, p->nmla++) {
    mla_tab *t = &p->mla[i];
    prof_mla_key *k = &t->key;
    k->context = get_u32(r) != 0, k->kv_dtype = get_dtype(r);
    get_str(r, k->gemm, sizeof k->gemm);
    k->heads = get_u32(r);
    k->dims.hidden = get_u32(r), k->dims.q_lora = get_u32(r), k->dims.kv_lora = get_u32(r);
    k->dims.qk_nope = get_u32(r), k->dims.qk_rope = get_u32(r), k->dims.v_head = get_u32(r), k->topk = get_u32(r);
    get_rows(r, &t->r, &t->idx);
  }
  n = get_count(r, 40);
  p->gdn = sim_calloc((size_t)n + 1, sizeof *p->gdn);
  for (int i = 0; i < n && !r->bad; i++, p->ngdn++) {
    gdn_tab *t = &p->gdn[i];
    prof_gdn_key *k = &t->key;
    k->context = get_u32(r) != 0, k->k_heads = get_u32(r), k->k_dim = get_u32(r), k->v_heads = get_u32(r);
    k->v_dim = get_u32(r), k->conv = get_u32(r);
    get_rows(r, &t->r, &t->idx);
  }
  if (r->at != r->n) r->bad = true;
}

/* The header's fields after the magic, when it is an image of this build's layout and byte order. */
static bool header(rbuf *r, uint64_t *src_len, uint64_t *src_hash, uint64_t *len, uint64_t *hash) {
  const unsigned char *m = take(r, 8);
  const unsigned char *o = m && !memcmp(m, BIN_MAGIC, 8) && get_u32(r) == BIN_LAYOUT ? take(r, 4) : NULL;
  uint32_t order;
  if (!o) return false;
  memcpy(&order, o, 4);
  *src_len = get_u64(r), *src_hash = get_u64(r), *len = get_u64(r), *hash = get_u64(r);
  return order == BIN_ORDER && !r->bad;
}

bool prof_bin_matches(const void *img, size_t n, const char *src, size_t src_len) {
  rbuf r = {img, n, 0, false};
  uint64_t sl, sh, len, hash;
  return header(&r, &sl, &sh, &len, &hash) && sl == src_len && (!src || sh == prof_bin_hash(src, src_len));
}

int prof_bin_read(prof **out, const void *img, size_t n, const char *what, bool verify, sim_err *err) {
  *out = NULL;
  rbuf r = {img, n, 0, false};
  uint64_t sl, sh, len, hash;
  if (((uintptr_t)img % 8) || !header(&r, &sl, &sh, &len, &hash))
    return sim_errf(err, SIM_EINPUT, "%s: not a profile image of this build (magic, layout, byte order or alignment "
                    "differs)", what);
  if (len != n - BIN_HEADER || (verify && hash != prof_bin_hash((const unsigned char *)img + BIN_HEADER, (size_t)len)))
    return sim_errf(err, SIM_EINPUT, "%s: profile image truncated or altered (payload length or hash)", what);
  rbuf pay = {(const unsigned char *)img + BIN_HEADER, (size_t)len, 0, false};
  prof *p = sim_calloc(1, sizeof *p);
  p->image = true;
  snprintf(p->source, sizeof p->source, "%s", what);
  get_payload(&pay, p);
  if (pay.bad) { /* as prof_free (prof.c, which this module does not call) */
    prof__free_tables(p);
    prof__free_moe(p);
    prof__free_modules(p);
    free(p);
    return sim_errf(err, SIM_EINPUT, "%s: profile image inconsistent (a count or a field out of range)", what);
  }
  *out = p;
  return SIM_OK;
}
