/* vnames.c: the names validation prints (sources, shapes, metrics, groups, loops) and its truncating
 * snprintf; the lowest part of validate/: every other file may use it, it uses none of them. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "validate/validate.h"

void vfmt(char *dst, size_t n, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(dst, n, fmt, ap);
  va_end(ap);
}

const char *vsource_name(vsource s) {
  static const char *const n[VSRC_COUNT] = {"aic_closed_loop", "trtllm_0.14_offline", "trtllm_0.9_static_batch",
                                            "mlperf_4.0", "user", "inference_perf"};
  return (unsigned)s < VSRC_COUNT ? n[s] : "?";
}

const char *vshape_name(vshape s) {
  static const char *const n[VSHAPE_COUNT] = {"closed_loop", "offline", "static_batch", "open_loop", "open_loop_stage"};
  return (unsigned)s < VSHAPE_COUNT ? n[s] : "?";
}

const char *vmetric_name(vmetric m) {
  static const char *const n[VM_COUNT] = {"ttft_ms", "tpot_ms", "output_tok_s", "ttft_median_ms", "ttft_p99_ms",
                                                     "e2el_ms"};
  return (unsigned)m < VM_COUNT ? n[m] : "?";
}

const char *vgroup_name(vgroup_by g) {
  static const char *const n[VG_COUNT] = {"source", "gpu", "engine", "tp", "shape", "model", "version", "loop", "split",
                                            "stratum"};
  return (unsigned)g < VG_COUNT ? n[g] : "?";
}

bool vgroup_parse(const char *s, vgroup_by *out) {
  for (int g = 0; g < VG_COUNT; g++)
    if (!strcmp(s, vgroup_name((vgroup_by)g))) {
      *out = (vgroup_by)g;
      return true;
    }
  return false;
}


/* How a shape drives the server: a closed loop of clients, an open loop of
 * timed arrivals (a user's run or an inference-perf stage), one offline
 * burst, one static batch. */
const char *vloop_name(vshape s) {
  switch (s) {
  case VSHAPE_CLOSED: return "closed";
  case VSHAPE_OPEN: return "open";
  case VSHAPE_STAGED: return "open";
  case VSHAPE_OFFLINE: return "offline";
  case VSHAPE_STATIC: return "static";
  default: return "?";
  }
}
