/* prof.c: loading a profile (format: configs/profiles/README.md) and its
 * probes. The tables themselves are read and interpolated by prof_gemm.c,
 * prof_attn.c, prof_ar.c, prof_moe.c and prof_mla.c, with the helpers they
 * share (hw/prof_impl.h: prof_read.c reads, prof_work.c computes the work of
 * a call and interpolates); none of them calls prof.c.
 *
 * Version 1 files are read exactly as before version 2 existed: the same keys
 * (a version 2 key in a version 1 file is an unknown key), exact head-layout
 * matching. Version 2 adds the engine, its version, the data's attribution
 * and origin (required together for tables imported from the kernel
 * database), GEMM grids, context attention and all-reduce tables.
 *
 * Interpolation (all table kinds): log(efficiency) piecewise linear in
 * log(coordinate) (log(1 + ctx) for the prefill context, which can be 0),
 * bilinear for 2-D and trilinear for 3-D tables, the boundary efficiency held
 * outside the grid; time = SOL(query) / efficiency. Interpolating the log
 * makes efficiency a power law between two grid points: exact where time is
 * flat (launch- and latency-bound small calls: efficiency grows in proportion
 * to the size) and on the bandwidth and compute plateaus; plain linear
 * interpolation of efficiency overestimates the flat region by up to 25%
 * across a 4x gap (measured on the synthetic profile: decode leave-one-out
 * p90 17.5% linear vs 5.4% log). An exact measured grid point returns the
 * measured time itself. */
#define _DEFAULT_SOURCE /* MAP_POPULATE */
#include "hw/prof_impl.h"

#include "core/embed.h"

#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

/* ---- the document ------------------------------------------------------------------ */

void prof_free(prof *p) {
  if (!p) return;
  prof__free_tables(p);
  prof__free_moe(p);
  prof__free_modules(p);
  free(p);
}

static int parse_probes(pctx *c, prof *p, const cJSON *pr) {
  static const char *const keys[] = {"copy_Bps", "memcpy_Bps", "copy_kernel_Bps", "peak_flops", "peak_shape",
                                     "launch_ns", NULL};
  if (!cJSON_IsObject(pr)) return prof__bad(c, pr, "probes", "expected an object");
  int rc = prof__keys(c, pr, "probes", keys);
  if (rc) return rc;
  const cJSON *v = prof__get(pr, "copy_Bps");
  if (!v)
    return prof__bad(c, pr, "probes.copy_Bps", "missing (device-to-device copy bandwidth, bytes read + written per s)");
  if ((rc = prof__pos(c, v, "probes.copy_Bps", &p->copy_Bps))) return rc;
  const cJSON *pf = prof__get(pr, "peak_flops");
  if (!pf) return prof__bad(c, pr, "probes.peak_flops", "missing (object: dtype name -> FLOP/s)");
  if (!cJSON_IsObject(pf)) return prof__bad(c, pf, "probes.peak_flops", "expected an object: dtype name -> FLOP/s");
  for (const cJSON *e = pf->child; e; e = e->next) {
    char f[256];
    snprintf(f, sizeof f, "probes.peak_flops.%s", e->string ? e->string : "?");
    sim_dtype d;
    if (!e->string || !dtype_parse(e->string, &d) || d == DT_INT4 || d == DT_FP32)
      return prof__bad(c, e, f, "unknown dtype (expected bf16, fp16, fp8, int8 or fp4)");
    if ((rc = prof__pos(c, e, f, &p->peak[d]))) return rc;
  }
  if (p->peak[DT_BF16] <= 0)
    return prof__bad(c, pf, "probes.peak_flops.bf16", "missing (the bf16 GEMM peak bounds attention too)");
  if (p->peak[DT_FP16] <= 0) p->peak[DT_FP16] = p->peak[DT_BF16];
  return SIM_OK;
}

/* Version 2 header: engine, provenance and, for imported tables, the
 * kernel_db record and the attribution it requires. */
static int parse_v2_header(pctx *c, prof *p, const cJSON *root) {
  int rc;
  if ((rc = prof__str(c, root, "engine", "", false, p->engine, sizeof p->engine)) ||
      (rc = prof__str(c, root, "engine_version", "", false, p->engine_version, sizeof p->engine_version)) ||
      (rc = prof__str(c, root, "attribution", "", false, p->attribution, sizeof p->attribution)))
    return rc;
  const cJSON *ps = prof__get(root, "probes_source");
  if (ps && (!cJSON_IsString(ps) || (strcmp(ps->valuestring, "measured") && strcmp(ps->valuestring, "datasheet"))))
    return prof__bad(c, ps, "probes_source", "expected \"measured\" or \"datasheet\"");
  const cJSON *kd = prof__get(root, "kernel_db");
  if (!kd) return SIM_OK;
  static const char *const keys[] = {"repository", "commit", "gpu_dir", "framework_dir", "nccl_dir", "caveat", NULL};
  if (!cJSON_IsObject(kd)) return prof__bad(c, kd, "kernel_db", "expected an object");
  if ((rc = prof__keys(c, kd, "kernel_db", keys))) return rc;
  char commit[64] = "", gpu_dir[64] = "", fw[64] = "", repo[128] = "", nccl[64] = "", caveat[384] = "";
  if ((rc = prof__str(c, kd, "repository", "kernel_db", true, repo, sizeof repo)) ||
      (rc = prof__str(c, kd, "commit", "kernel_db", true, commit, sizeof commit)) ||
      (rc = prof__str(c, kd, "gpu_dir", "kernel_db", true, gpu_dir, sizeof gpu_dir)) ||
      (rc = prof__str(c, kd, "framework_dir", "kernel_db", true, fw, sizeof fw)) ||
      (rc = prof__str(c, kd, "nccl_dir", "kernel_db", false, nccl, sizeof nccl)) ||
      (rc = prof__str(c, kd, "caveat", "kernel_db", false, caveat, sizeof caveat)))
    return rc;
  if (!p->engine[0] || !p->engine_version[0])
    return prof__bad(c, kd, "engine", "missing: tables imported from a kernel database name their engine and "
                                      "engine_version");
  if (!p->attribution[0] || !strstr(p->attribution, "Apache-2.0") || !strstr(p->attribution, commit))
    return prof__bad(c, prof__get(root, "attribution") ? prof__get(root, "attribution") : kd, "attribution",
                     "required for tables imported from a kernel database: it must name the Apache-2.0 license and "
                     "the commit %s",
                     commit);
  snprintf(p->origin, sizeof p->origin, "kernel-db: NVIDIA AIConfigurator, %s %s on %s%s%s", p->engine,
           p->engine_version, gpu_dir, caveat[0] ? "; " : "", caveat);
  return SIM_OK;
}

static int parse_version(pctx *c, prof *p, const cJSON *root) {
  const cJSON *v = prof__get(root, "format");
  if (!cJSON_IsString(v) || strcmp(v->valuestring, "servesim-profile"))
    return prof__bad(c, v, "format", "expected \"servesim-profile\"");
  v = prof__get(root, "version");
  if (!cJSON_IsNumber(v) || (v->valuedouble != 1 && v->valuedouble != 2))
    return prof__bad(c, v, "version", "expected 1 or 2 (this servesim reads profile format versions 1 and 2)");
  p->version = (int)v->valuedouble;
  return SIM_OK;
}

static int parse_doc(pctx *c, prof *p, const cJSON *root) {
  static const char *const keys1[] = {"format", "version", "gpu", "device", "date", "model", "servesim_version",
                                      "command", "settings", "units", "probes", "gemm", "attn_decode",
                                      "attn_prefill", "checks", "notes", "complete", "summary", NULL};
  static const char *const keys2[] = {"format", "version", "gpu", "device", "date", "model", "servesim_version",
                                      "command", "settings", "units", "probes", "gemm", "attn_decode",
                                      "attn_prefill", "checks", "notes", "complete", "summary", "engine",
                                      "engine_version", "attribution", "probes_source", "kernel_db", "gemm_grid",
                                      "attn_context", "allreduce", "moe", "mla_module", "gdn_module", NULL};
  if (!cJSON_IsObject(root)) return prof__bad(c, root, "", "expected an object");
  int rc = parse_version(c, p, root);
  if (rc) return rc;
  if ((rc = prof__keys(c, root, "", p->version == 1 ? keys1 : keys2))) return rc;
  const cJSON *v = prof__get(root, "gpu");
  if (!cJSON_IsString(v) || !v->valuestring[0] || strlen(v->valuestring) >= sizeof p->gpu)
    return prof__bad(c, v, "gpu", "expected the gpu config name the profile was measured on (e.g. \"h200\")");
  snprintf(p->gpu, sizeof p->gpu, "%s", v->valuestring);
  if (p->version >= 2 && (rc = parse_v2_header(c, p, root))) return rc;
  v = prof__get(root, "probes");
  if (!v) return prof__bad(c, NULL, "probes", "missing (copy_Bps and peak_flops)");
  if ((rc = parse_probes(c, p, v))) return rc;
  if ((v = prof__get(root, "gemm")) && (rc = prof__parse_gemm(c, p, v))) return rc;
  if ((v = prof__get(root, "attn_decode")) && (rc = prof__parse_attn(c, p, v, AK_DECODE))) return rc;
  if ((v = prof__get(root, "attn_prefill")) && (rc = prof__parse_attn(c, p, v, AK_PREFILL))) return rc;
  if ((v = prof__get(root, "gemm_grid")) && (rc = prof__parse_grid(c, p, v))) return rc;
  if ((v = prof__get(root, "attn_context")) && (rc = prof__parse_attn(c, p, v, AK_CONTEXT))) return rc;
  if ((v = prof__get(root, "allreduce")) && (rc = prof__parse_ar(c, p, v))) return rc;
  if ((v = prof__get(root, "moe")) && (rc = prof__parse_moe(c, p, v))) return rc;
  if ((v = prof__get(root, "mla_module")) && (rc = prof__parse_mla(c, p, v))) return rc;
  if ((v = prof__get(root, "gdn_module")) && (rc = prof__parse_gdn(c, p, v))) return rc;
  return SIM_OK;
}

int prof_parse(prof **out, const char *json, const char *what, sim_err *err) {
  *out = NULL;
  jx j;
  int rc = jx_parse_big(&j, json, what, err);
  if (rc) return rc;
  pctx c = {&j};
  prof *p = sim_calloc(1, sizeof *p);
  snprintf(p->source, sizeof p->source, "%s", what);
  rc = parse_doc(&c, p, j.root);
  jx_free(&j);
  if (rc) {
    prof_free(p);
    return rc;
  }
  *out = p;
  return SIM_OK;
}

/* The embedded image of a bundled profile file of that name (configs/profiles/NAME.bin, made by the build from
 * configs/profiles/NAME), or NULL. */
static const sim_embedded_file *bundled_image(const char *path) {
  const char *base = strrchr(path, '/');
  base = base ? base + 1 : path;
  char rel[512];
  if ((size_t)snprintf(rel, sizeof rel, "configs/profiles/%s.bin", base) >= sizeof rel) return NULL;
  return sim_image_find(rel);
}

/* Whether the regular file at path holds the bytes the image was made from: its size first, then its hash over a
 * read-only mapping (no copy into fresh pages: reading 1.5 MB into a new buffer cost more than the hash). */
static bool disk_matches(const char *path, const sim_embedded_file *img) {
  int fd = open(path, O_RDONLY);
  if (fd < 0) return false;
  struct stat st;
  bool same = false;
  if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_size > 0 &&
      prof_bin_matches(img->data, img->len, NULL, (size_t)st.st_size)) {
    void *m = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE | MAP_POPULATE, fd, 0);
    if (m != MAP_FAILED) {
      same = prof_bin_matches(img->data, img->len, m, (size_t)st.st_size);
      munmap(m, (size_t)st.st_size);
    }
  }
  close(fd);
  return same;
}

int prof_load(prof **out, const char *path, sim_err *err) {
  *out = NULL;
  const sim_embedded_file *img = bundled_image(path), *json;
  sim_err ie;
  /* not on disk: the embedded JSON, which the embedded image was made from in this build */
  if (img && !sim_is_file(path) && (json = sim_embed_find(path)) &&
      prof_bin_matches(img->data, img->len, NULL, json->len) &&
      !prof_bin_read(out, img->data, img->len, path, false, &ie))
    return SIM_OK;
  if (img && disk_matches(path, img) && !prof_bin_read(out, img->data, img->len, path, false, &ie)) return SIM_OK;
  char *text;
  size_t len;
  int rc = sim_read_file(path, &text, &len, err);
  if (rc) return rc;
  rc = prof_parse(out, text, path, err);
  free(text);
  return rc;
}

const char *prof_gpu_name(const prof *p) { return p ? p->gpu : ""; }
const char *prof_source(const prof *p) { return p ? p->source : ""; }
int prof_format_version(const prof *p) { return p->version; }
const char *prof_engine(const prof *p) { return p ? p->engine : ""; }
const char *prof_engine_version(const prof *p) { return p ? p->engine_version : ""; }
const char *prof_attribution(const prof *p) { return p ? p->attribution : ""; }
const char *prof_origin(const prof *p) { return p ? p->origin : ""; }
double prof_copy_Bps(const prof *p) { return p->copy_Bps; }
double prof_peak_flops(const prof *p, sim_dtype d) { return (unsigned)d < DT_COUNT ? p->peak[d] : 0; }
