/* cmd_calibrate.c: `servesim calibrate`: measure a model's per-operation
 * costs on the local GPU and write a profile (configs/profiles/README.md).
 *
 *   servesim calibrate --model M [--tp 1,2,4,8] [--dtypes bf16,fp8] --out FILE [--quick] [--force]
 *   servesim calibrate --model M --dry-run       plan and estimated GPU time, no GPU needed
 *   servesim calibrate --check                   every kernel's correctness check
 *   servesim calibrate --loo FILE                leave-one-out accuracy of a profile, no GPU needed
 *   servesim calibrate --from-kernel-db DIR --gpu GPU --engine E [--engine-version V] --out FILE
 *                                                import measured tables of NVIDIA AIConfigurator's kernel
 *                                                database, no GPU needed (calib_kdb.c, hw/kdb.h)
 *
 * The command parses its flags into calib/calib.h's options and prints the
 * errors calibration returns; what a run does is in sim/calib/. Exit codes:
 * 0 all passed, 1 a check failed or a measurement errored, 2 bad input or no
 * usable GPU / no CUDA in this build. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include <time.h>

#include "calib/calib.h"
#include "cli/cli.h"
#include "config/settings.h"
#include "kern.h"

#define CMD "calibrate"

typedef struct cal_opts {
  const char *model, *out, *gpu_name, *date, *loo, *summary;
  const char *kdb, *gpu, *engine, *engine_version, *moe_out, *other_device; /* --from-kernel-db and its flags */
  uint32_t gemm_m_step;                                       /* --gemm-m-step */
  cli_list tp, dtypes, skip;
  bool force, quick, dry, check, synthetic, help, list_versions;
  double max_call_ms, time_budget_s;
  uint64_t seed;
} cal_opts;

/* ---- flags ------------------------------------------------------------------------------- */

/* Splits every item of l at commas into out[] (pointers into buf). */
static int split_list(const cli_list *l, char *buf, size_t cap, const char **out, int max, int *n,
                      const char *flag, sim_err *err) {
  *n = 0;
  size_t used = 0;
  for (int i = 0; i < l->n; i++) {
    size_t len = strlen(l->items[i]);
    if (used + len + 1 > cap) return sim_errf(err, SIM_EINPUT, "--%s: list too long", flag);
    char *s = buf + used;
    memcpy(s, l->items[i], len + 1);
    used += len + 1;
    for (char *tok = strtok(s, ","); tok; tok = strtok(NULL, ",")) {
      if (*n >= max) return sim_errf(err, SIM_EINPUT, "--%s: at most %d values", flag, max);
      out[(*n)++] = tok;
    }
  }
  return SIM_OK;
}

/* Refuses to replace --out without --force. */
static int check_out(const cal_opts *o, sim_err *err) {
  struct stat st;
  if (!o->force && stat(o->out, &st) == 0)
    return sim_errf(err, SIM_EINPUT, "--out %s: file exists (add --force to overwrite it)", o->out);
  return SIM_OK;
}

/* What the profile records of how it was made: the date and the command. */
static void provenance(const cal_opts *o, int argc, char **argv, char *command, size_t nc, char *date, size_t nd) {
  size_t cl = 0;
  command[0] = 0;
  for (int i = 0; i < argc && cl + 2 < nc; i++)
    cl += (size_t)snprintf(command + cl, nc - cl, "%s%s", i ? " " : "servesim ", argv[i]);
  if (o->date) {
    snprintf(date, nd, "%s", o->date);
  } else {
    time_t now = time(NULL);
    struct tm tmv;
    gmtime_r(&now, &tmv);
    strftime(date, nd, "%Y-%m-%dT%H:%M:%SZ", &tmv);
  }
}

/* Prints err (when it has a message) the way every command does; returns rc. */
static int done(int rc, const sim_err *err) {
  if (rc && err->msg[0]) {
    sim_err e = *err;
    e.code = rc;
    return cli_fail(CMD, &e);
  }
  return rc;
}


static int build_request(const cal_opts *o, kern_plan_req *req, bool *skip, sim_err *err) {
  memset(req, 0, sizeof *req);
  char buf[2048];
  const char *items[64];
  int n, rc;
  if (o->tp.n == 0) {
    static const uint32_t def[] = {1, 2, 4, 8};
    for (size_t i = 0; i < SIM_ARRAY_LEN(def); i++) req->tps[req->ntp++] = def[i];
  } else {
    if ((rc = split_list(&o->tp, buf, sizeof buf, items, KERN_PLAN_MAX_TP, &n, "tp", err))) return rc;
    const setting *tp = settings_by_key("tensor_parallel_size"); /* the one TP range (config/settings.c) */
    for (int i = 0; i < n; i++) {
      deploy_cfg d;
      deploy_init(&d);
      if ((rc = setting_set_text(tp, &d, items[i], "--tp", err))) return rc;
      uint64_t v = d.tp;
      for (int j = 0; j < req->ntp; j++)
        if (req->tps[j] == v) return sim_errf(err, SIM_EINPUT, "--tp: %s given twice", items[i]);
      req->tps[req->ntp++] = (uint32_t)v;
    }
  }
  if (o->dtypes.n == 0) {
    req->gemm_bf16 = req->gemm_fp8 = true;
  } else {
    if ((rc = split_list(&o->dtypes, buf, sizeof buf, items, 16, &n, "dtypes", err))) return rc;
    for (int i = 0; i < n; i++) {
      sim_dtype d;
      if (!dtype_parse(items[i], &d) || (d != DT_BF16 && d != DT_FP8 && d != DT_INT8 && d != DT_INT4))
        return sim_errf(err, SIM_EINPUT, "--dtypes: '%s' is not one of bf16, fp8, int8, int4", items[i]);
      if (d == DT_BF16) req->gemm_bf16 = true;
      if (d == DT_FP8) req->gemm_fp8 = true;
      if (d == DT_INT8) req->gemm_int8 = req->wq_int8 = true;
      if (d == DT_INT4) req->wq_int4 = true;
    }
  }
  req->kv_bf16 = req->prefill = true;
  req->kv_fp8 = req->gemm_fp8;
  memset(skip, 0, sizeof(bool) * KF_COUNT);
  if (o->skip.n) {
    if ((rc = split_list(&o->skip, buf, sizeof buf, items, 16, &n, "skip", err))) return rc;
    for (int i = 0; i < n; i++) {
      kern_family f;
      if (!kern_family_parse(items[i], &f))
        return sim_errf(err, SIM_EINPUT, "--skip: '%s' is not a kernel family (gemm, wq, decode, prefill)", items[i]);
      skip[f] = true;
    }
  }
  if (skip[KF_GEMM]) req->gemm_bf16 = req->gemm_fp8 = req->gemm_int8 = false;
  if (skip[KF_WQ]) req->wq_int4 = req->wq_int8 = false;
  if (skip[KF_DECODE]) req->kv_bf16 = req->kv_fp8 = false;
  if (skip[KF_PREFILL]) req->prefill = false;
  req->quick = o->quick;
  req->max_call_ms = o->max_call_ms;
  return SIM_OK;
}

/* The everyday servesim binary does not link CUDA (it would load cuBLAS on
 * every run); the build puts servesim-cuda beside it where nvcc exists.
 * Hand the whole command over to it; returns only if there is none. */
static void exec_cuda_binary(int argc, char **argv) {
  if (kern_built_with_cuda() || getenv("SERVESIM_NO_CUDA_HANDOVER")) return;
  char self[4096];
  ssize_t n = readlink("/proc/self/exe", self, sizeof self - 32);
  if (n <= 0) return;
  self[n] = 0;
  char *slash = strrchr(self, '/');
  if (!slash) return;
  strcpy(slash + 1, "servesim-cuda");
  if (access(self, X_OK) != 0) return;
  char **args = sim_calloc((size_t)argc + 2, sizeof *args);
  args[0] = self;
  for (int i = 0; i < argc; i++) args[i + 1] = argv[i]; /* argv[0] is "calibrate" */
  execv(self, args);
  free(args); /* exec failed: carry on without CUDA */
}

int cmd_calibrate(int argc, char **argv) {
  exec_cuda_binary(argc, argv);
  cal_opts o;
  memset(&o, 0, sizeof o);
  const cli_opt opts[] = {
      {"model", NULL, CLI_STR, &o.model, "NAME|PATH", "model config (HF config.json): configs/models/NAME.json or a path", NULL},
      {"tp", NULL, CLI_LIST, &o.tp, "LIST", "tensor-parallel degrees, comma-separated (default 1,2,4,8)", NULL},
      {"dtypes", NULL, CLI_LIST, &o.dtypes, "LIST",
       "bf16, fp8 (GEMM + FP8 KV cache), int8 (GEMM + weight-only), int4 (weight-only); default bf16,fp8", NULL},
      {"out", "o", CLI_STR, &o.out, "FILE", "profile to write (refuses to overwrite without --force)", NULL},
      {"force", NULL, CLI_FLAG, &o.force, NULL, "overwrite --out", NULL},
      {"quick", NULL, CLI_FLAG, &o.quick, NULL, "sparser grids and fewer repeats (about a third of the time)", NULL},
      {"gpu-name", NULL, CLI_STR, &o.gpu_name, "NAME", "gpu config name to record (default: mapped from the device name)", NULL},
      {"date", NULL, CLI_STR, &o.date, "DATE", "date to record (default: now, UTC)", NULL},
      {"dry-run", NULL, CLI_FLAG, &o.dry, NULL, "print the plan and its estimated GPU time; needs no GPU", NULL},
      {"synthetic", NULL, CLI_FLAG, &o.synthetic, NULL,
       "write a SYNTHETIC profile (smooth roofline model, H200 ceilings, no GPU) to test the profile pipeline", NULL},
      {"check", NULL, CLI_FLAG, &o.check, NULL, "run every kernel's correctness check and exit", NULL},
      {"loo", NULL, CLI_STR, &o.loo, "FILE", "print the leave-one-out interpolation error of a profile and exit", NULL},
      {"skip", NULL, CLI_LIST, &o.skip, "LIST", "kernel families to leave out: gemm, wq, decode, prefill", NULL},
      {"max-call-ms", NULL, CLI_F64, &o.max_call_ms, "MS", "grid points estimated slower are not measured (default 25, quick 4)", NULL},
      {"time-budget", NULL, CLI_F64, &o.time_budget_s, "S", "stop starting new tables after S seconds (0 = no limit)", NULL},
      {"summary", NULL, CLI_STR, &o.summary, "FILE", "also write the summary table to FILE", NULL},
      {"seed", NULL, CLI_U64, &o.seed, "N", "random input seed (default fixed)", NULL},
      {"from-kernel-db", NULL, CLI_STR, &o.kdb, "DIR",
       "import NVIDIA AIConfigurator's measured kernel tables from DIR (needs --gpu, --engine, --out; no GPU)", NULL},
      {"gpu", NULL, CLI_STR, &o.gpu, "GPU", "with --from-kernel-db: the gpu config (h100-sxm, h200, b200, ...)", NULL},
      {"engine", NULL, CLI_STR, &o.engine, "ENGINE", "with --from-kernel-db: vllm, trtllm or sglang", NULL},
      {"engine-version", NULL, CLI_STR, &o.engine_version, "V", "with --from-kernel-db: the version (default newest)",
       NULL},
      {"moe-out", NULL, CLI_STR, &o.moe_out, "FILE",
       "with --from-kernel-db: write the fused-MoE tables to FILE (a profile of their own, loaded only for "
       "mixture-of-experts models) instead of --out",
       NULL},
      {"gemm-m-step", NULL, CLI_U32, &o.gemm_m_step, "N",
       "with --from-kernel-db: import only the GEMM rows whose m is at most N or a multiple of N (default: all; "
       "a sensitivity study, docs/ACCURACY.md)",
       NULL},
      {"other-device", NULL, CLI_STR, &o.other_device, "NAME",
       "with --from-kernel-db: also accept rows whose device column is NAME (tables the database copied from "
       "another GPU); the profile names them in its notes and in every run's source line",
       NULL},
      {"list-versions", NULL, CLI_FLAG, &o.list_versions, NULL,
       "with --from-kernel-db, --gpu, --engine: print the versions present and exit", NULL},
      {"help", "h", CLI_FLAG, &o.help, NULL, "show this help", NULL},
      {NULL, NULL, 0, NULL, NULL, NULL, NULL}};
  int rc = cli_start(CMD, "servesim calibrate --model M [--tp 1,2,4,8] [--dtypes bf16,fp8] --out FILE [--quick]",
                     "Measure GEMM and attention costs of a model's layers on the local GPU (cuBLASLt GEMMs, our\n"
                     "weight-only, paged decode and prefill attention kernels, each checked against a CPU reference\n"
                     "first) and write a profile for the cost model (configs/profiles/README.md).\n"
                     "Without a GPU: --dry-run (plan and estimated time), --loo FILE (profile accuracy) and\n"
                     "--from-kernel-db DIR (import NVIDIA AIConfigurator's measured tables) still work.",
                     opts, &o.help, argc, argv);
  if (rc != CLI_GO) return rc;
  sim_err err = {0};
  if (o.max_call_ms < 0 || o.time_budget_s < 0) {
    sim_errf(&err, SIM_EINPUT, "--max-call-ms and --time-budget must not be negative");
    return cli_fail(CMD, &err);
  }
  if (o.other_device && !o.kdb) {
    sim_errf(&err, SIM_EINPUT, "--other-device selects rows of the kernel database: it needs --from-kernel-db DIR");
    return cli_fail(CMD, &err);
  }
  if (o.gemm_m_step && !o.kdb) {
    sim_errf(&err, SIM_EINPUT, "--gemm-m-step selects rows of the kernel database: it needs --from-kernel-db DIR");
    return cli_fail(CMD, &err);
  }
  if (o.loo) return done(calib_loo(o.loo, &err), &err);
  if (o.kdb) {
    if (o.gemm_m_step == 1 || o.gemm_m_step > 65536) {
      sim_errf(&err, SIM_EINPUT, "--gemm-m-step %u: expected 2..65536 (0 or absent: every row)", o.gemm_m_step);
      return cli_fail(CMD, &err);
    }
    calib_kdb_opts k = {o.kdb, o.gpu, o.engine, o.engine_version, o.out, o.force, o.list_versions, o.moe_out,
                        o.gemm_m_step, o.other_device};
    return done(calib_kernel_db(&k, &err), &err);
  }
  kern_plan_req req;
  bool skip[KF_COUNT];
  if (build_request(&o, &req, skip, &err)) return cli_fail(CMD, &err);
  char command[1024], date[64];
  provenance(&o, argc, argv, command, sizeof command, date, sizeof date);
  calib_opts co = {o.model, o.out, o.gpu_name, o.summary, command, date, o.quick, o.time_budget_s, o.seed};
  if (o.check) return done(calib_check(&co, skip, &err), &err);
  if (!o.model) {
    sim_errf(&err, SIM_EINPUT, "--model is required (a model config name or an HF config.json path)");
    return cli_fail(CMD, &err);
  }
  if (o.dry) return done(calib_dry_run(&co, &req, &err), &err);
  if (!o.out) {
    sim_errf(&err, SIM_EINPUT, "--out FILE is required (where to write the profile)");
    return cli_fail(CMD, &err);
  }
  if (check_out(&o, &err)) return cli_fail(CMD, &err);
  if (o.synthetic) return done(calib_synthetic(&co, &req, &err), &err);
  return done(calib_measure(&co, &req, &err), &err);
}
