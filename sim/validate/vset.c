/* vset.c: a set of validation points (vset_*, vpoint_release) and the helpers that fill a point's fields
 * (vdata_impl.h: strings, precision, notes, series), which every reader of measurements uses (vdata.c,
 * vdata_aic.c, vopen.c) and the runs add notes with (vrun.c); it uses none of them. */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "validate/validate.h"
#include "validate/vdata_impl.h"

void vset_init(vset *s) { memset(s, 0, sizeof *s); }

void vpoint_release(vpoint *p) {
  free(p->user_sc);
  free(p->in_lens);
  free(p->out_lens);
  free(p->staged);
  p->user_sc = NULL;
  p->in_lens = p->out_lens = NULL;
  p->staged = NULL;
}

void vset_free(vset *s) {
  for (size_t i = 0; i < s->n; i++) vpoint_release(&s->pts[i]);
  free(s->pts);
  vres_free(s->res);
  memset(s, 0, sizeof *s);
}

vpoint *vset_add(vset *s) {
  SIM_GROW(s->pts, s->cap, s->n + 1);
  vpoint *p = &s->pts[s->n++];
  memset(p, 0, sizeof *p);
  for (int m = 0; m < VM_COUNT; m++) p->meas[m] = p->pred[m] = NAN;
  p->act_dtype = p->weight_dtype = p->kv_dtype = DT_BF16;
  p->tp = p->pp = 1;
  p->burstiness = 1.0;
  p->request_rate = INFINITY;
  return p;
}

void vset_note(vset *s, const char *fmt, ...) {
  if (s->n_notes >= (int)SIM_ARRAY_LEN(s->notes)) return;
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(s->notes[s->n_notes++], sizeof s->notes[0], fmt, ap);
  va_end(ap);
}

/* ---- mapping helpers ---------------------------------------------------------- */

vresolve *vset_resolver(vset *s) {
  if (!s->res) s->res = vres_new();
  return s->res;
}

void vdata__set_str(char *dst, size_t n, const char *v) { vfmt(dst, n, "%s", v ? v : ""); }

/* Precision: "fp8" (weights FP8; KV FP8 for TensorRT-LLM), "fp16"/"mixed" (all FP16),
 * "bf16". Returns false when unknown. */
bool vdata__set_precision(vpoint *p, const char *prec) {
  bool trt = !strcmp(p->engine, "trtllm");
  if (!strcasecmp(prec, "fp8")) {
    p->act_dtype = DT_BF16;
    p->weight_dtype = DT_FP8;
    p->kv_dtype = trt ? DT_FP8 : DT_BF16;
    return true;
  }
  if (!strcasecmp(prec, "fp16") || !strcasecmp(prec, "mixed") || !strcasecmp(prec, "float16")) {
    p->act_dtype = p->weight_dtype = p->kv_dtype = DT_FP16;
    return true;
  }
  if (!strcasecmp(prec, "bf16") || !strcasecmp(prec, "bfloat16")) {
    p->act_dtype = p->weight_dtype = p->kv_dtype = DT_BF16;
    return true;
  }
  return false;
}

void vdata__note(vpoint *p, const char *fmt, ...) {
  char one[sizeof p->note];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(one, sizeof one, fmt, ap);
  va_end(ap);
  sim_append_note(p->note, sizeof p->note, "%s", one);
}

void vdata__set_group(vpoint *p, const char *gpu_label) {
  vfmt(p->group, sizeof p->group, "%s/%s/%s/tp%u/%ux%u", p->model[0] ? p->model : "?", gpu_label,
           p->engine[0] ? p->engine : "?", p->tp, p->isl, p->osl);
}

/* A model config name, or the stem of a --models path. */
const char *vdata__model_short(const char *m) {
  const char *b = strrchr(m, '/');
  static char buf[128];
  vfmt(buf, sizeof buf, "%s", b ? b + 1 : m);
  size_t n = strlen(buf);
  if (n > 5 && !strcmp(buf + n - 5, ".json")) buf[n - 5] = 0;
  return buf;
}
