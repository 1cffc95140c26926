/* prof_write.h: writing a profile in format version 2 (configs/profiles/
 * README.md) from tables held in memory, through the one JSON writer
 * (core/jsonw.h). The kernel-db importer (hw/kdb.h) fills a prof_doc and
 * writes it here; prof_load reads the result back.
 *
 * Determinism: the output depends only on the document's content, never on
 * the order tables were added, the clock or the locale: tables are written
 * sorted by their lookup key (the order prof_load sorts them into), keys in a
 * fixed order, times in ns with 4 significant digits (jw_sig), byte counts
 * and grids as integers. Two writes of one document are byte-identical.
 *
 * Ownership: prof_doc_init zeroes a caller-owned document; the add functions
 * return a zeroed table owned by the document, whose arrays the caller
 * allocates with malloc and hands over; prof_doc_free releases everything. */
#ifndef SIM_PROF_WRITE_H
#define SIM_PROF_WRITE_H

#include <stdio.h>

#include "core/common.h"
#include "core/dtype.h"
#include "hw/prof.h"

typedef struct prof_doc_grid {
  sim_dtype wdtype, adtype; /* weights, activations */
  bool block;               /* block-scaled FP8 ("scaling": "block") */
  char kernel[256];         /* the kernel(s) the engine ran, informational */
  uint32_t *m, *n, *k;      /* [nm], [nn], [nk] increasing (owned) */
  int nm, nn, nk;
  double *ns;               /* [nm * nn * nk] m-major, NAN = not measured (owned) */
} prof_doc_grid;

typedef struct prof_doc_attn {
  sim_dtype kv_dtype;                   /* bf16 or fp8 */
  uint32_t q_heads, kv_heads, head_dim; /* per GPU */
  uint32_t window;                      /* sliding window (tokens); 0 = full attention */
  char kernel[256];                     /* informational */
  uint32_t *x, *y;                      /* decode: batch, kv_len; context: batch, isl (owned) */
  int nx, ny;
  double *ns;                           /* [nx * ny], NAN = not measured (owned) */
} prof_doc_attn;

typedef struct prof_doc_ar {
  prof_ar_impl impl;  /* custom graph / eager, nccl */
  sim_dtype dtype;    /* element dtype measured */
  uint32_t num_gpus;
  char kernel[128];   /* informational */
  double *bytes;      /* [n] message bytes per GPU, increasing integers (owned) */
  double *ns;         /* [n] (owned) */
  int n;
} prof_doc_ar;

typedef struct prof_doc_moe {
  prof_moe_key key;   /* the shape (hw/prof.h) */
  char kernel[128];   /* informational */
  uint32_t *tokens;   /* [n] increasing (owned) */
  double *ns;         /* [n] (owned) */
  int n;
} prof_doc_moe;

typedef struct prof_doc_mla {
  prof_mla_key key;   /* phase, KV dtype, GEMM type, heads per GPU, dimensions (hw/prof.h) */
  char model[96];     /* the model the dimensions come from, informational */
  char kernel[128];   /* informational */
  uint32_t *batch, *len; /* [nb], [nl] increasing (owned) */
  int nb, nl;
  double *ns;         /* [nb * nl] batch-major, NAN = not measured (owned) */
} prof_doc_mla;

typedef struct prof_doc_gdn {
  prof_gdn_key key;   /* phase, heads and head dims per GPU, convolution kernel (hw/prof.h) */
  char models[160];   /* the models whose shapes were measured, informational */
  char kernel[192];   /* informational: the convolution and delta-rule kernels summed */
  uint32_t *batch, *len; /* [nb], [nl] increasing (owned) */
  int nb, nl;
  double *ns;         /* [nb * nl] batch-major, NAN = not measured (owned) */
} prof_doc_gdn;

typedef enum prof_doc_attn_kind { PDA_DECODE = 0, PDA_CONTEXT, PDA_COUNT } prof_doc_attn_kind;

typedef struct prof_doc {
  char gpu[64];             /* gpu config name */
  char engine[32];          /* "" = not recorded */
  char engine_version[64];
  char attribution[1024];   /* "" = none (required with kdb_repository) */
  char device[128];         /* device name of the measurements, "" = unknown */
  bool probes_datasheet;    /* probes are datasheet figures, not measured */
  /* provenance of imported tables; kdb_repository "" = not imported */
  char kdb_repository[128], kdb_commit[64], kdb_gpu_dir[64], kdb_framework_dir[64], kdb_nccl_dir[64];
  char kdb_caveat[384];     /* "" = none; else tables measured elsewhere than the folder says (kernel_db.caveat) */
  double copy_Bps;          /* bytes read + written per s */
  double peak[DT_COUNT];    /* FLOP/s by dtype, 0 = absent (fp16 is not written: it defaults to bf16) */
  char **notes;             /* [nnotes] (owned) */
  size_t nnotes, cap_notes;
  prof_doc_grid *grid;      /* [ngrid] (owned) */
  size_t ngrid, cap_grid;
  prof_doc_attn *attn[PDA_COUNT]; /* (owned) */
  size_t nattn[PDA_COUNT], cap_attn[PDA_COUNT];
  prof_doc_ar *ar;          /* [nar] (owned) */
  size_t nar, cap_ar;
  prof_doc_moe *moe;        /* [nmoe] (owned) */
  size_t nmoe, cap_moe;
  prof_doc_mla *mla;        /* [nmla] (owned): written with the fused-MoE tables */
  size_t nmla, cap_mla;
  prof_doc_gdn *gdn;        /* [ngdn] (owned): Gated DeltaNet kernels, written with the fused-MoE tables */
  size_t ngdn, cap_gdn;
} prof_doc;

void prof_doc_init(prof_doc *d);
void prof_doc_free(prof_doc *d);
/* Appends a note (one line, printf-style). */
void prof_doc_note(prof_doc *d, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
prof_doc_grid *prof_doc_add_grid(prof_doc *d);
prof_doc_attn *prof_doc_add_attn(prof_doc *d, prof_doc_attn_kind kind);
prof_doc_ar *prof_doc_add_ar(prof_doc *d);
prof_doc_moe *prof_doc_add_moe(prof_doc *d);
prof_doc_mla *prof_doc_add_mla(prof_doc *d);
prof_doc_gdn *prof_doc_add_gdn(prof_doc *d);

/* Writes d to f; SIM_EINPUT on a write error. (The CLI writes files through
 * outfmt_write_file: a temporary renamed into place.) */
int prof_write_file(const prof_doc *d, FILE *f, sim_err *err);
/* The same document in two parts: every table but the fused-MoE, MLA
 * module and Gated DeltaNet ones, and the header with those alone (a profile of its own, loaded
 * for mixture-of-experts models only). */
int prof_write_dense(const prof_doc *d, FILE *f, sim_err *err);
int prof_write_moe(const prof_doc *d, FILE *f, sim_err *err);

#endif
