/* kdb_mla.c: the kernel-db multi-head latent attention module tables
 * (mla_generation_module_perf, mla_context_module_perf -> mla_module): one
 * table per (phase, kv_cache_dtype, gemm_type, num_heads) of a model whose
 * MLA dimensions servesim knows, its latencies over batch_size x length
 * (generation: `step`, the tokens each decode attends to, the decoded one
 * included: the collector's seq_len; context: `isl`, nothing cached). A cell
 * measured twice (kernel_source: the prefill backend the engine chose) keeps
 * the faster time. Rows of other compute dtypes (mla_dtype other than
 * bfloat16) or of models whose dimensions are not listed below are skipped
 * with a note. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hw/kdb_impl.h"

/* MLA dimensions of the models the database collects, from their Hugging Face
 * config.json (hidden_size, q_lora_rank, kv_lora_rank, qk_nope_head_dim,
 * qk_rope_head_dim, v_head_dim), and for the DeepSeek sparse attention models
 * (the dsa_*_module_perf tables) their index_topk (0: plain MLA; the
 * indexer's heads and head dim are the model's: 64 x 128 for DeepSeek-V3.2,
 * 32 x 128 for GLM-5). */
static const struct {
  const char *model;
  prof_mla_dims dims;
  uint32_t topk;
} known[] = {{"deepseek-ai/DeepSeek-V3", {7168, 1536, 512, 128, 64, 128}, 0},
             {"deepseek-ai/DeepSeek-R1", {7168, 1536, 512, 128, 64, 128}, 0},
             {"moonshotai/Kimi-K2-Instruct", {7168, 1536, 512, 128, 64, 128}, 0},
             {"deepseek-ai/DeepSeek-V3.2", {7168, 1536, 512, 128, 64, 128}, 2048},
             {"zai-org/GLM-5", {6144, 2048, 512, 192, 64, 256}, 2048},
             {"zai-org/GLM-5-FP8", {6144, 2048, 512, 192, 64, 256}, 2048}};
enum { NKNOWN = sizeof known / sizeof known[0] };

typedef struct lrow {
  prof_mla_key key;
  int model;          /* index in known[] */
  uint32_t batch, len;
  uint32_t kernels;
  double ns;
} lrow;

static int cmp_row(const void *a, const void *b) {
  const lrow *x = a, *y = b;
  int c = prof_mla_key_cmp(&x->key, &y->key);
  return c ? c : kdb__cmp_cell(x->batch, x->len, x->ns, y->batch, y->len, y->ns);
}

/* The module tables of rows v[0..n) (n > 0), one per key, each a batch x length grid, and the import's note. */
static void add_tables(kdb_ctx *k, lrow *v, size_t n, const kdb_names *kn, bool context, long total,
                       const char *file) {
  qsort(v, n, sizeof *v, cmp_row);
  long dup = 0;
  size_t tables = 0;
  for (size_t a = 0; a < n;) {
    size_t e = a + 1;
    while (e < n && !prof_mla_key_cmp(&v[a].key, &v[e].key)) e++;
    prof_doc_mla *t = prof_doc_add_mla(k->doc);
    tables++;
    t->key = v[a].key;
    snprintf(t->model, sizeof t->model, "%s", known[v[a].model].model);
    t->batch = kdb__axis(&v[a].batch, e - a, sizeof *v, &t->nb);
    t->len = kdb__axis(&v[a].len, e - a, sizeof *v, &t->nl);
    size_t cells = (size_t)t->nb * (size_t)t->nl;
    t->ns = sim_malloc(sizeof *t->ns * cells);
    for (size_t q = 0; q < cells; q++) t->ns[q] = NAN;
    uint32_t mask = 0;
    for (size_t q = a; q < e; q++) {
      double *cell =
          &t->ns[(size_t)kdb__idx_of(t->batch, t->nb, v[q].batch) * (size_t)t->nl + (size_t)kdb__idx_of(t->len, t->nl, v[q].len)];
      mask |= v[q].kernels;
      if (!isnan(*cell)) { /* sorted fastest first */
        dup++;
        continue;
      }
      *cell = v[q].ns;
    }
    kdb__names_join(kn, mask, t->kernel, sizeof t->kernel);
    a = e;
  }
  prof_doc_note(k->doc,
                "%s: %ld rows, %zu %s %s-module tables (one per model, KV dtype, GEMM type and heads per GPU); %ld "
                "rows repeated a cell with another kernel (the fastest kept)",
                file, total, tables, v[0].key.topk ? "DeepSeek sparse attention" : "MLA",
                context ? "context" : "generation", dup);
}

int kdb__mla(kdb_ctx *k, const char *path, bool context, bool dsa, sim_err *err) {
  kdb_csv c;
  int rc = kdb_csv_open(&c, path, err);
  enum { C_MODEL, C_CDT, C_KV, C_GEMM, C_H, C_B, C_ISL, C_STEP, C_KS, C_LAT, NC };
  static const char *const names[NC] = {"model",      "mla_dtype", "kv_cache_dtype", "gemm_type", "num_heads",
                                        "batch_size", "isl",       "step",           "kernel_source", "latency"};
  int col[NC];
  for (int i = 0; i < NC && !rc; i++) rc = kdb_csv_need(&c, names[i], &col[i], err);
  lrow *v = NULL;
  size_t n = 0, cap = 0;
  kdb_names kn;
  memset(&kn, 0, sizeof kn);
  kdb_skips sk;
  memset(&sk, 0, sizeof sk);
  kdb_rows rows;
  kdb__rows_init(&rows, &c);
  for (bool row = true; !rc;) {
    if ((rc = kdb__next_row(k, &rows, &c, &row, err)) || !row) break;
    lrow r;
    memset(&r, 0, sizeof r);
    const char *model = kdb_csv_str(&c, col[C_MODEL]), *cdt = kdb_csv_str(&c, col[C_CDT]);
    const char *kv = kdb_csv_str(&c, col[C_KV]), *gemm = kdb_csv_str(&c, col[C_GEMM]);
    r.model = -1;
    for (int i = 0; i < NKNOWN; i++)
      if (!strcmp(model, known[i].model) && (known[i].topk > 0) == dsa) r.model = i;
    if (r.model < 0) {
      kdb__skip(&sk, "model %.60s (%s dimensions not known to servesim)", model, dsa ? "sparse-attention" : "MLA");
      continue;
    }
    if (strcmp(cdt, "bfloat16")) {
      kdb__skip(&sk, "mla_dtype %.40s (attention computed in bf16 only)", cdt);
      continue;
    }
    if (!strcmp(kv, "bfloat16")) r.key.kv_dtype = DT_BF16;
    else if (!strcmp(kv, "fp8")) r.key.kv_dtype = DT_FP8;
    else {
      rc = kdb_csv_fail(&c, col[C_KV], err, "expected bfloat16 or fp8, got '%s'", kv);
      break;
    }
    if (!gemm[0] || strlen(gemm) >= sizeof r.key.gemm) {
      rc = kdb_csv_fail(&c, col[C_GEMM], err, "expected a GEMM type name, got '%s'", gemm);
      break;
    }
    snprintf(r.key.gemm, sizeof r.key.gemm, "%s", gemm);
    r.key.context = context;
    r.key.dims = known[r.model].dims;
    r.key.topk = known[r.model].topk;
    uint64_t h, b, isl, step;
    if ((rc = kdb_csv_int(&c, col[C_H], 1, 1e6, &h, err)) || (rc = kdb_csv_int(&c, col[C_B], 1, 1e8, &b, err)) ||
        (rc = kdb_csv_int(&c, col[C_ISL], 0, 1e9, &isl, err)) || (rc = kdb_csv_int(&c, col[C_STEP], 0, 1e9, &step, err)) ||
        (rc = kdb_csv_ms(&c, col[C_LAT], &r.ns, err)))
      break;
    uint64_t len = context ? isl : step;
    if (len < 1) {
      rc = kdb_csv_fail(&c, col[context ? C_ISL : C_STEP], err, "expected a length >= 1 for the %s module, got 0",
                        context ? "context" : "generation");
      break;
    }
    r.key.heads = (uint32_t)h, r.batch = (uint32_t)b, r.len = (uint32_t)len;
    r.kernels = kdb__name_bit(&kn, kdb_csv_str(&c, col[C_KS]));
    SIM_GROW(v, cap, n + 1);
    v[n++] = r;
  }
  const char *file = strrchr(path, '/') ? strrchr(path, '/') + 1 : path;
  if (!rc && n) add_tables(k, v, n, &kn, context, rows.total, file);
  if (!rc) kdb__table_notes(k, &rows, &sk, file);
  free(v);
  kdb_csv_close(&c);
  return rc;
}
