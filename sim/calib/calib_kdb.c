/* calib_kdb.c: `servesim calibrate --from-kernel-db DIR --gpu GPU --engine E
 * [--engine-version V] [--other-device NAME] --out FILE [--force]` (and
 * `--list-versions`): the
 * driver of hw/kdb.h. Imports, writes the profile through the
 * JSON writer (a temporary renamed into place), reads it back through
 * prof_load (so a written profile always loads) and prints what it holds
 * with its leave-one-out error. */
#include <stdio.h>
#include <string.h>

#include "calib/calib.h"
#include "core/outfmt.h"
#include "hw/kdb.h"

void calib_print_loo(const prof *p, FILE *f) {
  prof_loo l;
  prof_loo_error(p, &l);
  fprintf(f, "leave-one-out interpolation error (each grid point predicted from the others):\n");
  fprintf(f, "  %-14s %6s %7s %9s %9s %9s\n", "family", "tables", "points", "median", "p90", "max");
  for (int k = 0; k < PK_COUNT; k++) {
    if (!prof_table_count(p, (prof_kind)k)) continue;
    fprintf(f, "  %-14s %6d %7u %8.2f%% %8.2f%% %8.2f%%\n", prof_kind_name((prof_kind)k),
            prof_table_count(p, (prof_kind)k), l.n[k], 100 * l.median[k], 100 * l.p90[k], 100 * l.max[k]);
  }
}

static int write_doc(const void *arg, FILE *f, sim_err *err) { return prof_write_file(arg, f, err); }
static int write_dense(const void *arg, FILE *f, sim_err *err) { return prof_write_dense(arg, f, err); }
static int write_moe(const void *arg, FILE *f, sim_err *err) { return prof_write_moe(arg, f, err); }

static int list_versions(const calib_kdb_opts *o, const gpu_cfg *g, sim_err *err) {
  char v[KDB_MAX_VERSIONS][KDB_VERSION_LEN];
  int n;
  int rc = kdb_versions(o->root, g, o->engine, v, KDB_MAX_VERSIONS, &n, err);
  if (rc) return rc;
  for (int i = 0; i < n; i++) printf("%s\n", v[i]);
  return 0;
}

int calib_kernel_db(const calib_kdb_opts *o, sim_err *err) {
  if (!o->gpu || !o->engine)
    return sim_errf(err, SIM_EINPUT, "--from-kernel-db needs --gpu (a gpu config: h100-sxm, h200, ...) and --engine "
                                     "(vllm, trtllm or sglang)");
  gpu_cfg g;
  int rc = cfg_gpu_load(&g, o->gpu, err);
  if (rc) return rc;
  if (o->list) return list_versions(o, &g, err);
  if (!o->out) return sim_errf(err, SIM_EINPUT, "--out FILE is required (where to write the profile; - for stdout)");
  const char *outs[] = {o->out, o->moe_out};
  if ((rc = outfmt_refuse_existing(outs, o->moe_out ? 2 : 1, o->force, err))) return rc;
  prof_doc d;
  prof_doc_init(&d);
  kdb_req r = {.root = o->root,
               .gpu = &g,
               .engine = o->engine,
               .engine_version = o->engine_version,
               .gemm_m_step = o->gemm_m_step,
               .other_device = o->other_device};
  rc = kdb_import(&r, &d, err);
  if (!rc) rc = outfmt_write_file(o->out, o->force, o->moe_out ? write_dense : write_doc, &d, err);
  if (!rc && o->moe_out) rc = outfmt_write_file(o->moe_out, o->force, write_moe, &d, err);
  prof_doc_free(&d);
  if (rc) return rc;
  if (!strcmp(o->out, "-")) return 0;
  prof *p;
  sim_err lerr = {0, ""};
  if (prof_load(&p, o->out, &lerr)) {
    fprintf(stderr, "calibrate: the written profile does not load back: %s\n", lerr.msg);
    return SIM_EINTERNAL;
  }
  printf("wrote %s: %s %s on %s (%s): %d GEMM grids, %d decode, %d context attention, %d all-reduce tables\n", o->out,
         prof_engine(p), prof_engine_version(p), prof_gpu_name(p), prof_origin(p), prof_table_count(p, PK_GEMM_GRID),
         prof_table_count(p, PK_DECODE), prof_table_count(p, PK_CONTEXT), prof_table_count(p, PK_ALLREDUCE));
  calib_print_loo(p, stdout);
  prof_free(p);
  if (o->moe_out && strcmp(o->moe_out, "-")) {
    if (prof_load(&p, o->moe_out, &lerr)) {
      fprintf(stderr, "calibrate: the written MoE profile does not load back: %s\n", lerr.msg);
      return SIM_EINTERNAL;
    }
    printf("wrote %s: %d fused-MoE tables\n", o->moe_out, prof_moe_tables(p));
    prof_free(p);
  }
  return 0;
}
