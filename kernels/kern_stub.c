/* kern_stub.c: the [gpu] half of the kernels API in a build without CUDA.
 * Every function fails with SIM_EINPUT "built without CUDA"; the [cpu] half
 * (kern_ref.c, kern_plan.c) is compiled into every build. */
#include <string.h>

#include "kern.h"

#define NO_CUDA                                                                                                    \
  "this servesim was built without CUDA: no GPU can be used (install the CUDA toolkit and rebuild with "          \
  "-DSERVESIM_CUDA=ON)"

static int no_cuda(sim_err *err) { return sim_errf(err, SIM_EINPUT, "%s", NO_CUDA); }

bool kern_built_with_cuda(void) { return false; }

int kern_device_query(kern_device_info *out, sim_err *err) {
  memset(out, 0, sizeof *out);
  return no_cuda(err);
}

int kern_open(kern_ctx **out, const kern_opts *o, sim_err *err) {
  (void)o;
  *out = NULL;
  return no_cuda(err);
}
void kern_close(kern_ctx *k) { (void)k; }
const kern_device_info *kern_info(const kern_ctx *k) {
  (void)k;
  return NULL;
}
bool kern_usable(const kern_ctx *k) {
  (void)k;
  return false;
}
uint64_t kern_calls(const kern_ctx *k) {
  (void)k;
  return 0;
}

int kern_probe_copy(kern_ctx *k, double *Bps, sim_err *err) {
  (void)k;
  *Bps = 0;
  return no_cuda(err);
}
int kern_probe_launch(kern_ctx *k, double *eager_ns, double *graph_ns, sim_err *err) {
  (void)k;
  *eager_ns = *graph_ns = 0;
  return no_cuda(err);
}
int kern_probe_gemm_peak(kern_ctx *k, sim_dtype dt, bool quick, double *flops, sim_err *err) {
  (void)k, (void)dt, (void)quick;
  *flops = 0;
  return no_cuda(err);
}

bool kern_supported(const kern_ctx *k, kern_family f, sim_dtype dt, char *why, size_t n) {
  (void)k, (void)f, (void)dt;
  if (why && n) snprintf(why, n, "%s", NO_CUDA);
  return false;
}

int kern_check_family(kern_ctx *k, kern_family f, sim_dtype dt, kern_check *out, int max, int *n, sim_err *err) {
  (void)k, (void)f, (void)dt, (void)out, (void)max;
  *n = 0;
  return no_cuda(err);
}

int kern_time_gemm(kern_ctx *k, sim_dtype dt, uint32_t M, uint32_t N, uint32_t K, kern_time *t, sim_err *err) {
  (void)k, (void)dt, (void)M, (void)N, (void)K;
  memset(t, 0, sizeof *t);
  return no_cuda(err);
}
int kern_time_wq(kern_ctx *k, sim_dtype wdt, uint32_t M, uint32_t N, uint32_t K, kern_time *t, sim_err *err) {
  (void)k, (void)wdt, (void)M, (void)N, (void)K;
  memset(t, 0, sizeof *t);
  return no_cuda(err);
}
int kern_time_decode(kern_ctx *k, sim_dtype kv, uint32_t batch, uint32_t kv_len, uint32_t q_heads,
                     uint32_t kv_heads, uint32_t head_dim, kern_time *t, sim_err *err) {
  (void)k, (void)kv, (void)batch, (void)kv_len, (void)q_heads, (void)kv_heads, (void)head_dim;
  memset(t, 0, sizeof *t);
  return no_cuda(err);
}
int kern_time_prefill(kern_ctx *k, uint32_t chunk, uint32_t ctx, uint32_t q_heads, uint32_t kv_heads,
                      uint32_t head_dim, kern_time *t, sim_err *err) {
  (void)k, (void)chunk, (void)ctx, (void)q_heads, (void)kv_heads, (void)head_dim;
  memset(t, 0, sizeof *t);
  return no_cuda(err);
}
