/* prof_read.c: the JSON reading helpers every table module shares
 * (prof_impl.h): errors naming the file and field, allowed keys, numbers,
 * dtypes, strings and grids, and the probe a table's speed of light needs. A
 * leaf: prof.c and the table modules call it; it calls none of them. */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hw/prof_impl.h"

int prof__bad(pctx *c, const cJSON *at, const char *field, const char *fmt, ...) {
  char msg[600];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  return jx_fail(c->j, at, field, NULL, "%s", msg);
}

/* Rejects keys not in allowed (NULL-terminated) and repeated keys. */
int prof__keys(pctx *c, const cJSON *obj, const char *field, const char *const *allowed) {
  return jx_keys(c->j, obj, *field ? field : NULL, allowed, NULL);
}

const cJSON *prof__get(const cJSON *obj, const char *key) { return cJSON_GetObjectItemCaseSensitive(obj, key); }

int prof__u32(pctx *c, const cJSON *obj, const char *key, const char *field, bool required, uint32_t *out) {
  const cJSON *v = prof__get(obj, key);
  char f[256];
  snprintf(f, sizeof f, "%s.%s", field, key);
  if (!v) return required ? prof__bad(c, obj, f, "missing (a positive integer)") : SIM_OK;
  if (!cJSON_IsNumber(v) || v->valuedouble < 1 || v->valuedouble > 4294967295.0 ||
      v->valuedouble != floor(v->valuedouble))
    return prof__bad(c, v, f, "expected a positive integer");
  *out = (uint32_t)v->valuedouble;
  return SIM_OK;
}

int prof__pos(pctx *c, const cJSON *v, const char *f, double *out) {
  if (!cJSON_IsNumber(v) || !isfinite(v->valuedouble) || v->valuedouble <= 0)
    return prof__bad(c, v, f, "expected a positive number");
  *out = v->valuedouble;
  return SIM_OK;
}

int prof__dtype(pctx *c, const cJSON *obj, const char *key, const char *field, sim_dtype *out) {
  const cJSON *v = prof__get(obj, key);
  char f[256];
  snprintf(f, sizeof f, "%s.%s", field, key);
  if (!v) return prof__bad(c, obj, f, "missing (a dtype name: bf16, fp16, fp8, int8, int4, fp4)");
  if (!cJSON_IsString(v) || !dtype_parse(v->valuestring, out) || *out == DT_FP32)
    return prof__bad(c, v, f, "expected a dtype name (bf16, fp16, fp8, int8, int4, fp4)");
  return SIM_OK;
}

int prof__str(pctx *c, const cJSON *obj, const char *key, const char *field, bool required, char *out, size_t n) {
  const cJSON *v = prof__get(obj, key);
  char f[256];
  snprintf(f, sizeof f, "%s%s%s", field, *field ? "." : "", key);
  if (!v) return required ? prof__bad(c, obj, f, "missing (a non-empty string)") : SIM_OK;
  if (!cJSON_IsString(v) || !v->valuestring[0] || strlen(v->valuestring) >= n)
    return prof__bad(c, v, f, "expected a non-empty string shorter than %zu bytes", n);
  snprintf(out, n, "%s", v->valuestring);
  return SIM_OK;
}

int prof__grid(pctx *c, const cJSON *obj, const char *key, const char *field, bool allow_zero, uint32_t **out, int *n) {
  const cJSON *v = prof__get(obj, key);
  char f[256];
  snprintf(f, sizeof f, "%s.%s", field, key);
  if (!v) return prof__bad(c, obj, f, "missing (an increasing array of integers)");
  if (!cJSON_IsArray(v) || cJSON_GetArraySize(v) < 1)
    return prof__bad(c, v, f, "expected a non-empty array of integers");
  int k = cJSON_GetArraySize(v);
  uint32_t *g = sim_malloc(sizeof *g * (size_t)k);
  int i = 0;
  for (const cJSON *e = v->child; e; e = e->next, i++) {
    double d = cJSON_IsNumber(e) ? e->valuedouble : -1;
    if (d < (allow_zero ? 0 : 1) || d > 4294967295.0 || d != floor(d) || (i && d <= g[i - 1])) {
      free(g);
      char fi[300];
      snprintf(fi, sizeof fi, "%s[%d]", f, i);
      return prof__bad(c, e, fi, "expected a %s integer greater than the previous one",
                       allow_zero ? "non-negative" : "positive");
    }
    g[i] = (uint32_t)d;
  }
  *out = g;
  *n = k;
  return SIM_OK;
}

int prof__need_peak(pctx *c, const prof *p, const cJSON *at, const char *table, sim_dtype compute) {
  if (p->peak[compute] > 0) return SIM_OK;
  char fp[64];
  snprintf(fp, sizeof fp, "probes.peak_flops.%s", dtype_name(compute));
  return prof__bad(c, at, fp, "missing, but %s holds a %s GEMM table", table, dtype_name(compute));
}
