/* kdb_impl.h: the table importers kdb.c calls, one per kind of kernel-db
 * table (kdb_gemm.c: GEMM grids and all-reduce; kdb_attn.c: attention;
 * kdb_moe.c: fused MoE; kdb_mla.c: MLA modules; kdb_gdn.c: Gated DeltaNet). Each importer includes it
 * for its own prototype and calls only the shared helpers (kdb_rows.h), never
 * kdb.c. Nothing outside sim/hw/kdb*.c includes it. */
#ifndef SIM_KDB_IMPL_H
#define SIM_KDB_IMPL_H

#include "hw/kdb_rows.h"

int kdb__gemm(kdb_ctx *k, const char *path, sim_err *err);
int kdb__attn(kdb_ctx *k, const char *path, bool context, sim_err *err);
int kdb__custom_ar(kdb_ctx *k, const char *path, sim_err *err);
int kdb__nccl(kdb_ctx *k, const char *path, sim_err *err);
int kdb__moe(kdb_ctx *k, const char *path, sim_err *err);
int kdb__mla(kdb_ctx *k, const char *path, bool context, bool dsa, sim_err *err);
int kdb__gdn(kdb_ctx *k, const char *path, sim_err *err);

#endif
