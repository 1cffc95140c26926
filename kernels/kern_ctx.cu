/* kern_ctx.cu: the calibration context (stream, events, cuBLASLt handle,
 * rotated random input buffers), the timing harness every kern_time_* uses,
 * the probes (copy bandwidth, launch overhead) and the check dispatch.
 *
 * Timing protocol (kern.h): an eager call (warm-up: module load, cuBLASLt
 * kernel selection) and a second eager call timed with events to size the
 * graph; then `calls` calls cycling through the rotated input sets are
 * captured into one CUDA graph; `warmup` replays untimed, `reps` replays each
 * between two events; per-call time = replay time / calls; the median over
 * replays is the result. If capturing fails, the same calls run as plain
 * launches (kern_time.graph = false). */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include <algorithm>

#include "kern_internal.cuh"

/* ---- errors ------------------------------------------------------------------------ */

static bool sticky(cudaError_t e) {
  switch (e) {
    case cudaErrorIllegalAddress:
    case cudaErrorLaunchFailure:
    case cudaErrorHardwareStackError:
    case cudaErrorIllegalInstruction:
    case cudaErrorMisalignedAddress:
    case cudaErrorInvalidAddressSpace:
    case cudaErrorInvalidPc:
    case cudaErrorAssert:
    case cudaErrorLaunchTimeout:
    case cudaErrorECCUncorrectable:
    case cudaErrorUnknown:
      return true;
    default:
      return false;
  }
}

int kcuda_fail(kern_ctx *k, sim_err *err, cudaError_t e, const char *call, const char *file, int line) {
  bool dead = sticky(e);
  if (k && dead) k->usable = false;
  if (!dead) (void)cudaGetLastError(); /* clear a non-sticky error so later calls work */
  return sim_errf(err, SIM_EINTERNAL, "%s failed at %s:%d: %s (%s)%s", call, file, line, cudaGetErrorString(e),
                  cudaGetErrorName(e),
                  dead ? "; the CUDA context is unusable now (a kernel bug: run `servesim calibrate --check`)" : "");
}

int klt_fail(kern_ctx *k, sim_err *err, cublasStatus_t s, const char *call, const char *file, int line) {
  (void)k;
  (void)cudaGetLastError();
  /* NOT_SUPPORTED / INVALID_VALUE: this dtype or shape is not available here */
  int code = (s == CUBLAS_STATUS_NOT_SUPPORTED || s == CUBLAS_STATUS_INVALID_VALUE || s == CUBLAS_STATUS_ARCH_MISMATCH)
                 ? SIM_EINPUT
                 : SIM_EINTERNAL;
  return sim_errf(err, code, "%s failed at %s:%d: %s (%s)", call, file, line, cublasLtGetStatusString(s),
                  cublasLtGetStatusName(s));
}

/* ---- random fill on the device ------------------------------------------------------ */

__device__ __forceinline__ uint64_t mix64(uint64_t z) {
  z += 0x9e3779b97f4a7c15ull;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

/* One 64-bit word of random contents of kind `fill` per index. */
__global__ void kfill_kernel(uint64_t *p, size_t nwords, int fill, uint64_t seed) {
  for (size_t w = blockIdx.x * (size_t)blockDim.x + threadIdx.x; w < nwords; w += (size_t)gridDim.x * blockDim.x) {
    uint64_t r = mix64(seed ^ (w * 0xd6e8feb86659fd93ull)), out = 0;
    if (fill == KFILL_BF16 || fill == KFILL_SCALE) {
      for (int i = 0; i < 4; i++) {
        float u = (float)((r >> (16 * i)) & 0xffff) * (1.0f / 65536.0f); /* [0, 1) */
        float v = fill == KFILL_BF16 ? 2.0f * u - 1.0f : 0.005f + 0.01f * u;
        if (fill == KFILL_BF16 && v == 0.0f) v = 0.5f; /* never zeros */
        __nv_bfloat16 b = __float2bfloat16_rn(v);
        out |= (uint64_t)(*reinterpret_cast<uint16_t *>(&b)) << (16 * i);
      }
    } else if (fill == KFILL_FP8) {
      for (int i = 0; i < 8; i++) {
        float v = (float)((r >> (8 * i)) & 0xff) * (2.0f / 255.0f) - 1.0f;
        if (v == 0.0f) v = 0.25f;
        uint8_t b = (uint8_t)__nv_cvt_float_to_fp8(v, __NV_SATFINITE, __NV_E4M3);
        out |= (uint64_t)b << (8 * i);
      }
    } else if (fill == KFILL_INT8) {
      for (int i = 0; i < 8; i++) {
        int v = (int)((r >> (8 * i)) & 0xff) % 255 - 127; /* -127..127 */
        out |= (uint64_t)(uint8_t)(int8_t)v << (8 * i);
      }
    } else {
      out = r;
    }
    p[w] = out;
  }
}

int kbuf_need(kern_ctx *k, kbuf_slot slot, size_t bytes, kfill fill, sim_err *err) {
  kbuf *b = &k->buf[slot];
  bytes = (bytes + 255) & ~(size_t)255;
  if (bytes < 256) bytes = 256;
  if (b->cap < bytes) {
    if (b->p) {
      KCK(cudaStreamSynchronize(k->stream));
      KCK(cudaFree(b->p));
      b->p = nullptr;
    }
    size_t cap = std::max(bytes, 2 * b->cap); /* doubling: a sweep grows M step by step */
    cap = (cap + 255) & ~(size_t)255;
    cudaError_t e = cudaMalloc(&b->p, cap);
    if (e != cudaSuccess && cap > bytes) {
      (void)cudaGetLastError();
      cap = bytes;
      e = cudaMalloc(&b->p, cap);
    }
    if (e != cudaSuccess) {
      b->p = nullptr;
      b->cap = 0;
      (void)cudaGetLastError();
      return sim_errf(err, SIM_EINPUT, "cudaMalloc of %.2f GiB for the rotated inputs failed: %s",
                      (double)cap / (1 << 30), cudaGetErrorString(e));
    }
    b->cap = cap;
    b->fill = KFILL_NONE;
    b->filled = 0;
  }
  if (fill != KFILL_NONE && (b->fill != fill || b->filled < bytes)) {
    size_t words = b->cap / 8;
    int blocks = std::min<size_t>((words + 255) / 256, (size_t)k->info.sm_count * 16);
    kfill_kernel<<<blocks, 256, 0, k->stream>>>((uint64_t *)b->p, words, fill, k->seed++ * 0x632be59bd9b4e019ull);
    KLAUNCHED();
    b->fill = fill;
    b->filled = b->cap;
  }
  return SIM_OK;
}

int kdev_alloc(kern_ctx *k, kdev *d, size_t bytes, sim_err *err) {
  KCK(cudaMalloc(&d->p, bytes ? bytes : 1));
  return SIM_OK;
}
int kdev_upload(kern_ctx *k, kdev *d, const void *host, size_t bytes, sim_err *err) {
  int rc = kdev_alloc(k, d, bytes, err);
  if (rc) return rc;
  KCK(cudaMemcpy(d->p, host, bytes, cudaMemcpyHostToDevice));
  return SIM_OK;
}
int kdev_download(kern_ctx *k, void *host, const void *dev, size_t bytes, sim_err *err) {
  KCK(cudaStreamSynchronize(k->stream));
  KCK(cudaMemcpy(host, dev, bytes, cudaMemcpyDeviceToHost));
  return SIM_OK;
}
int kdev_poison(kern_ctx *k, void *dev, size_t bytes, int v, sim_err *err) {
  KCK(cudaMemsetAsync(dev, v, bytes, k->stream));
  return SIM_OK;
}

krng kern_check_rng(kern_ctx *k) {
  krng r;
  r.s = k->opts.seed ^ (0x2545f4914f6cdd1dull * ++k->seed);
  return r;
}

void kcheck_set(kern_check *c, const char *name, double rel, double tol, size_t bad, const char *note) {
  memset(c, 0, sizeof *c);
  snprintf(c->name, sizeof c->name, "%s", name);
  c->rel_err = rel;
  c->tol = tol;
  c->ok = bad == 0 && rel <= tol;
  if (note && note[0]) snprintf(c->note, sizeof c->note, "%s", note);
  else if (bad) snprintf(c->note, sizeof c->note, "%zu outputs NaN or never written", bad);
  else if (!c->ok) snprintf(c->note, sizeof c->note, "relative error %.3g over tolerance %.3g", rel, tol);
}

/* ---- context --------------------------------------------------------------------------- */

static int open_impl(kern_ctx *k, sim_err *err) {
  KCK(cudaSetDevice(0));
  KCK(cudaStreamCreateWithFlags(&k->stream, cudaStreamNonBlocking));
  KCK(cudaEventCreate(&k->ev0));
  KCK(cudaEventCreate(&k->ev1));
  KLT(cublasLtCreate(&k->lt));
  k->lt_ws_bytes = 32u << 20; /* 32 MiB, what cuBLASLt's Hopper kernels ask for */
  KCK(cudaMalloc(&k->lt_ws, k->lt_ws_bytes));
  KCK(cudaMalloc(&k->scales, 2 * sizeof(float)));
  const float sc[2] = {0.75f, 0.5f}; /* per-tensor FP8 scales of W and X */
  KCK(cudaMemcpy(k->scales, sc, sizeof sc, cudaMemcpyHostToDevice));
  return SIM_OK;
}

int kern_open(kern_ctx **out, const kern_opts *o, sim_err *err) {
  *out = nullptr;
  kern_device_info info;
  int rc = kern_device_query(&info, err);
  if (rc) return rc;
  kern_ctx *k = new kern_ctx();
  memset(k, 0, sizeof *k);
  k->opts = *o;
  if (!k->opts.reps || !k->opts.warmup || k->opts.replay_min_ns <= 0 || k->opts.point_budget_ns <= 0) {
    kern_opts d;
    kern_opts_default(&d, false);
    if (!k->opts.reps) k->opts.reps = d.reps;
    if (!k->opts.warmup) k->opts.warmup = d.warmup;
    if (k->opts.replay_min_ns <= 0) k->opts.replay_min_ns = d.replay_min_ns;
    if (k->opts.point_budget_ns <= 0) k->opts.point_budget_ns = d.point_budget_ns;
  }
  k->info = info;
  k->usable = true;
  k->seed = o->seed;
  k->lt_dt = -1;
  k->rotate_bytes = o->rotate_bytes > 0 ? o->rotate_bytes : std::max(2.5 * info.l2_bytes, 64.0 * (1 << 20));
  if ((rc = open_impl(k, err))) {
    kern_close(k);
    return rc;
  }
  *out = k;
  return SIM_OK;
}

void kern_close(kern_ctx *k) {
  if (!k) return;
  if (k->stream) (void)cudaStreamSynchronize(k->stream);
  kgemm_release(k);
  for (int i = 0; i < KB_COUNT; i++)
    if (k->buf[i].p) cudaFree(k->buf[i].p);
  if (k->lt_ws) cudaFree(k->lt_ws);
  if (k->scales) cudaFree(k->scales);
  if (k->lt) cublasLtDestroy(k->lt);
  if (k->ev0) cudaEventDestroy(k->ev0);
  if (k->ev1) cudaEventDestroy(k->ev1);
  if (k->stream) cudaStreamDestroy(k->stream);
  (void)cudaGetLastError();
  delete k;
}

const kern_device_info *kern_info(const kern_ctx *k) { return k ? &k->info : nullptr; }
bool kern_usable(const kern_ctx *k) { return k && k->usable; }
uint64_t kern_calls(const kern_ctx *k) { return k ? k->calls : 0; }

/* ---- timing harness ---------------------------------------------------------------------- */

uint32_t ktime_sets(kern_ctx *k, double set_bytes) {
  kern_protocol p;
  kern_protocol_for(&k->opts, 1e3, set_bytes, k->rotate_bytes, &p);
  return p.sets;
}

struct graph_guard {
  cudaGraph_t g = nullptr;
  cudaGraphExec_t x = nullptr;
  ~graph_guard() {
    if (x) cudaGraphExecDestroy(x);
    if (g) cudaGraphDestroy(g);
  }
};

static int replay(kern_ctx *k, klaunch_fn fn, void *st, const kern_protocol *p, cudaGraphExec_t x, sim_err *err) {
  if (x) {
    KCK(cudaGraphLaunch(x, k->stream));
    return SIM_OK;
  }
  for (uint32_t i = 0; i < p->calls; i++) {
    int rc = fn(k, st, i % p->sets, err);
    if (rc) return rc;
  }
  return SIM_OK;
}

int ktime_run(kern_ctx *k, klaunch_fn fn, void *st, uint32_t sets, double set_bytes, kern_time *t, sim_err *err) {
  memset(t, 0, sizeof *t);
  if (!k->usable) return sim_errf(err, SIM_EINTERNAL, "the CUDA context is unusable after an earlier error");
  /* eager warm-up, then one eager call timed to size the graph */
  int rc = fn(k, st, 0, err);
  if (rc) return rc;
  KCK(cudaStreamSynchronize(k->stream));
  KCK(cudaEventRecord(k->ev0, k->stream));
  if ((rc = fn(k, st, 1 % sets, err))) return rc;
  KCK(cudaEventRecord(k->ev1, k->stream));
  KCK(cudaEventSynchronize(k->ev1));
  float ms = 0;
  KCK(cudaEventElapsedTime(&ms, k->ev0, k->ev1));
  kern_protocol p;
  kern_protocol_for(&k->opts, ms * 1e6, set_bytes, k->rotate_bytes, &p);
  p.sets = sets;
  if (p.calls < sets) p.calls = sets;
  /* capture */
  graph_guard gg;
  bool graph = false;
  if (cudaStreamBeginCapture(k->stream, cudaStreamCaptureModeThreadLocal) == cudaSuccess) {
    sim_err cap_err;
    int crc = SIM_OK;
    for (uint32_t i = 0; i < p.calls && !crc; i++) crc = fn(k, st, i % sets, &cap_err);
    cudaError_t e = cudaStreamEndCapture(k->stream, &gg.g);
    if (!k->usable) return sim_errf(err, SIM_EINTERNAL, "while capturing: %s", cap_err.msg);
    if (!crc && e == cudaSuccess && gg.g && cudaGraphInstantiate(&gg.x, gg.g, 0) == cudaSuccess) graph = true;
  }
  if (!graph) {
    (void)cudaGetLastError(); /* capture not possible: fall back to plain launches */
    if (gg.x) {
      cudaGraphExecDestroy(gg.x);
      gg.x = nullptr;
    }
    cudaStreamCaptureStatus cs;
    if (cudaStreamIsCapturing(k->stream, &cs) == cudaSuccess && cs != cudaStreamCaptureStatusNone) {
      cudaGraph_t dummy = nullptr;
      (void)cudaStreamEndCapture(k->stream, &dummy);
      if (dummy) cudaGraphDestroy(dummy);
      (void)cudaGetLastError();
    }
  }
  for (uint32_t w = 0; w < p.warmup; w++)
    if ((rc = replay(k, fn, st, &p, gg.x, err))) return rc;
  std::vector<double> per(p.reps);
  for (uint32_t r = 0; r < p.reps; r++) {
    KCK(cudaEventRecord(k->ev0, k->stream));
    if ((rc = replay(k, fn, st, &p, gg.x, err))) return rc;
    KCK(cudaEventRecord(k->ev1, k->stream));
    KCK(cudaEventSynchronize(k->ev1));
    KCK(cudaEventElapsedTime(&ms, k->ev0, k->ev1));
    per[r] = ms * 1e6 / p.calls;
  }
  std::sort(per.begin(), per.end());
  size_t n = per.size();
  t->ns = n % 2 ? per[n / 2] : 0.5 * (per[n / 2 - 1] + per[n / 2]);
  t->min_ns = per.front();
  t->max_ns = per.back();
  t->calls = p.calls;
  t->reps = p.reps;
  t->sets = sets;
  t->graph = graph;
  k->calls += 2 + (uint64_t)p.calls * (p.warmup + p.reps);
  return SIM_OK;
}

int kcheck_gate(kern_ctx *k, kern_family f, sim_dtype dt, sim_err *err) {
  if (!k->usable) return sim_errf(err, SIM_EINTERNAL, "the CUDA context is unusable after an earlier error");
  if (!k->passed[f][dt])
    return sim_errf(err, SIM_EINPUT, "%s %s: its correctness check has not passed in this run; not timing it",
                    kern_family_name(f), dtype_name(dt));
  return SIM_OK;
}

/* ---- probes --------------------------------------------------------------------------------- */

struct copy_state {
  const uint4 *src;
  uint4 *dst;
  size_t n16;  /* 16-byte elements per copy */
  bool kernel; /* our kernel instead of cudaMemcpyAsync */
};

__global__ void kcopy_kernel(const uint4 *__restrict__ src, uint4 *__restrict__ dst, size_t n) {
  size_t stride = (size_t)gridDim.x * blockDim.x;
  size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
  /* 4 independent 16-byte loads in flight per thread */
  for (; i + 3 * stride < n; i += 4 * stride) {
    uint4 a = src[i], b = src[i + stride], c = src[i + 2 * stride], d = src[i + 3 * stride];
    dst[i] = a;
    dst[i + stride] = b;
    dst[i + 2 * stride] = c;
    dst[i + 3 * stride] = d;
  }
  for (; i < n; i += stride) dst[i] = src[i];
}

static int copy_launch(kern_ctx *k, void *vs, uint32_t set, sim_err *err) {
  copy_state *s = (copy_state *)vs;
  const uint4 *src = s->src + set * s->n16;
  uint4 *dst = s->dst + set * s->n16;
  if (s->kernel) {
    kcopy_kernel<<<k->info.sm_count * 8, 512, 0, k->stream>>>(src, dst, s->n16);
    KLAUNCHED();
  } else {
    KCK(cudaMemcpyAsync(dst, src, s->n16 * 16, cudaMemcpyDeviceToDevice, k->stream));
  }
  return SIM_OK;
}

int kern_probe_copy(kern_ctx *k, double *Bps, sim_err *err) {
  *Bps = 0;
  const size_t bytes = (size_t)1 << 30; /* 1 GiB per copy: read 1 GiB, write 1 GiB */
  int rc;
  if ((rc = kbuf_need(k, KB_X, 2 * bytes, KFILL_BYTES, err)) || (rc = kbuf_need(k, KB_Y, 2 * bytes, KFILL_NONE, err)))
    return rc;
  copy_state s = {(const uint4 *)k->buf[KB_X].p, (uint4 *)k->buf[KB_Y].p, bytes / 16, false};
  double best = 0;
  for (int pass = 0; pass < 2; pass++) /* the first pass also warms the clocks up */
    for (int kernel = 0; kernel < 2; kernel++) {
      s.kernel = kernel;
      kern_time t;
      if ((rc = ktime_run(k, copy_launch, &s, 2, 2.0 * bytes, &t, err))) return rc;
      best = std::max(best, 2.0 * bytes / (t.ns * 1e-9));
    }
  *Bps = best;
  return SIM_OK;
}

__global__ void kempty_kernel(int *p) {
  if (p && threadIdx.x == 1023) *p = 0; /* never true for our launches: the kernel does nothing */
}

int kern_probe_launch(kern_ctx *k, double *eager_ns, double *graph_ns, sim_err *err) {
  *eager_ns = *graph_ns = 0;
  const int n = 500;
  std::vector<double> e(5), g(5);
  graph_guard gg;
  KCK(cudaStreamBeginCapture(k->stream, cudaStreamCaptureModeThreadLocal));
  for (int i = 0; i < n; i++) kempty_kernel<<<1, 32, 0, k->stream>>>(nullptr);
  KCK(cudaStreamEndCapture(k->stream, &gg.g));
  KCK(cudaGraphInstantiate(&gg.x, gg.g, 0));
  KCK(cudaGraphLaunch(gg.x, k->stream)); /* warm-up */
  for (int i = 0; i < n; i++) kempty_kernel<<<1, 32, 0, k->stream>>>(nullptr);
  KLAUNCHED();
  KCK(cudaStreamSynchronize(k->stream));
  for (int r = 0; r < 5; r++) {
    float ms;
    KCK(cudaEventRecord(k->ev0, k->stream));
    for (int i = 0; i < n; i++) kempty_kernel<<<1, 32, 0, k->stream>>>(nullptr);
    KLAUNCHED();
    KCK(cudaEventRecord(k->ev1, k->stream));
    KCK(cudaEventSynchronize(k->ev1));
    KCK(cudaEventElapsedTime(&ms, k->ev0, k->ev1));
    e[r] = ms * 1e6 / n;
    KCK(cudaEventRecord(k->ev0, k->stream));
    KCK(cudaGraphLaunch(gg.x, k->stream));
    KCK(cudaEventRecord(k->ev1, k->stream));
    KCK(cudaEventSynchronize(k->ev1));
    KCK(cudaEventElapsedTime(&ms, k->ev0, k->ev1));
    g[r] = ms * 1e6 / n;
  }
  std::sort(e.begin(), e.end());
  std::sort(g.begin(), g.end());
  *eager_ns = e[2];
  *graph_ns = g[2];
  return SIM_OK;
}

/* ---- support and checks -------------------------------------------------------------------------- */

bool kern_supported(const kern_ctx *k, kern_family f, sim_dtype dt, char *why, size_t n) {
  int cc = k->info.cc_major * 10 + k->info.cc_minor;
  const char *no = nullptr;
  char buf[400];
  switch (f) {
    case KF_GEMM:
      if (dt != DT_BF16 && dt != DT_FP8 && dt != DT_INT8) no = "cuBLASLt GEMMs are calibrated for bf16, fp8 and int8";
      else if (dt == DT_FP8 && cc < 90) {
        snprintf(buf, sizeof buf, "unsupported: fp8 GEMM needs compute capability >= 9.0 (Hopper); %.200s is %d.%d",
                 k->info.name, k->info.cc_major, k->info.cc_minor);
        no = buf;
      }
      break;
    case KF_WQ:
      if (dt != DT_INT4 && dt != DT_INT8) no = "the weight-only kernel takes int4 or int8 weights";
      break;
    case KF_DECODE:
      if (dt != DT_BF16 && dt != DT_FP8) no = "decode attention takes a bf16 or fp8 KV cache";
      break;
    case KF_PREFILL:
      if (dt != DT_BF16) no = "prefill attention is bf16";
      break;
    default:
      no = "unknown kernel family";
  }
  if (!no && cc < 80) {
    snprintf(buf, sizeof buf, "unsupported: our kernels use bf16 mma.sync (compute capability >= 8.0); %.200s is %d.%d",
             k->info.name, k->info.cc_major, k->info.cc_minor);
    no = buf;
  }
  if (no && why && n) snprintf(why, n, "%s", no);
  return !no;
}

int kern_check_family(kern_ctx *k, kern_family f, sim_dtype dt, kern_check *out, int max, int *n, sim_err *err) {
  *n = 0;
  if (!k->usable) return sim_errf(err, SIM_EINTERNAL, "the CUDA context is unusable after an earlier error");
  char why[200];
  if (!kern_supported(k, f, dt, why, sizeof why)) return sim_errf(err, SIM_EINPUT, "%s", why);
  int rc;
  switch (f) {
    case KF_GEMM: rc = kgemm_check(k, dt, out, max, n, err); break;
    case KF_WQ: rc = kwq_check(k, dt, out, max, n, err); break;
    case KF_DECODE: rc = kdecode_check(k, dt, out, max, n, err); break;
    default: rc = kprefill_check(k, out, max, n, err); break;
  }
  bool ok = rc == SIM_OK && *n > 0;
  for (int i = 0; i < *n; i++) ok = ok && out[i].ok;
  k->passed[f][dt] = ok;
  return rc;
}
