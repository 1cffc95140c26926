/* prof.c: placeholder until the calibration work lands: no profile has data,
 * so every query falls through to the roofline. */
#include "hw/prof.h"

#include <stdlib.h>

int prof_load(prof **out, const char *path, sim_err *err) {
  *out = NULL;
  return sim_errf(err, SIM_EINPUT, "%s: profiles are not supported yet", path);
}
int prof_parse(prof **out, const char *json, const char *what, sim_err *err) {
  (void)json;
  *out = NULL;
  return sim_errf(err, SIM_EINPUT, "%s: profiles are not supported yet", what);
}
void prof_free(prof *p) { free(p); }
const char *prof_gpu_name(const prof *p) { return p ? "" : ""; }
const char *prof_source(const prof *p) { return p ? "" : ""; }
bool prof_gemm_ns(const prof *p, sim_dtype w, sim_dtype a, uint32_t M, uint32_t N, uint32_t K, double *ns) {
  (void)p, (void)w, (void)a, (void)M, (void)N, (void)K, (void)ns;
  return false;
}
bool prof_attn_decode_ns(const prof *p, sim_dtype kv, uint32_t b, uint32_t l, uint32_t qh, uint32_t kvh,
                         uint32_t hd, double *ns) {
  (void)p, (void)kv, (void)b, (void)l, (void)qh, (void)kvh, (void)hd, (void)ns;
  return false;
}
bool prof_attn_prefill_ns(const prof *p, uint32_t c, uint32_t ctx, uint32_t qh, uint32_t kvh, uint32_t hd,
                          double *ns) {
  (void)p, (void)c, (void)ctx, (void)qh, (void)kvh, (void)hd, (void)ns;
  return false;
}
