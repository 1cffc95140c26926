/* kern_host.c: device discovery for the CUDA build (plain C over the CUDA
 * runtime API). cudaGetDeviceCount returning cudaErrorInsufficientDriver (35)
 * or cudaErrorNoDevice (100) means "no GPU here": SIM_EINPUT, not a crash. */
#include <cuda_runtime_api.h>
#include <stdio.h>
#include <string.h>

#include "kern.h"

bool kern_built_with_cuda(void) { return true; }

static int attr(int *v, enum cudaDeviceAttr a, const char *name, sim_err *err) {
  cudaError_t rc = cudaDeviceGetAttribute(v, a, 0);
  if (rc != cudaSuccess)
    return sim_errf(err, SIM_EINPUT, "cudaDeviceGetAttribute(%s): %s", name, cudaGetErrorString(rc));
  return SIM_OK;
}

int kern_device_query(kern_device_info *out, sim_err *err) {
  memset(out, 0, sizeof *out);
  int n = 0;
  cudaError_t rc = cudaGetDeviceCount(&n);
  if (rc != cudaSuccess || n == 0) {
    (void)cudaGetLastError();
    const char *why = rc == cudaSuccess         ? "the driver reports no device"
                      : rc == cudaErrorInsufficientDriver
                          ? "no NVIDIA driver, or one older than the CUDA runtime this binary was built with"
                      : rc == cudaErrorNoDevice ? "no CUDA device"
                                                : cudaGetErrorString(rc);
    return sim_errf(err, SIM_EINPUT, "no usable CUDA GPU: %s (cudaGetDeviceCount returned %d, %s)", why, (int)rc,
                    cudaGetErrorName(rc));
  }
  struct cudaDeviceProp p;
  rc = cudaGetDeviceProperties(&p, 0);
  if (rc != cudaSuccess) return sim_errf(err, SIM_EINPUT, "cudaGetDeviceProperties: %s", cudaGetErrorString(rc));
  snprintf(out->name, sizeof out->name, "%s", p.name);
  out->sm_count = p.multiProcessorCount;
  out->mem_bytes = (double)p.totalGlobalMem;
  out->cc_major = p.major;
  out->cc_minor = p.minor;
  if ((rc = cudaRuntimeGetVersion(&out->cuda_runtime_version)) != cudaSuccess)
    return sim_errf(err, SIM_EINPUT, "cudaRuntimeGetVersion: %s", cudaGetErrorString(rc));
  if ((rc = cudaDriverGetVersion(&out->cuda_driver_version)) != cudaSuccess)
    return sim_errf(err, SIM_EINPUT, "cudaDriverGetVersion: %s", cudaGetErrorString(rc));
  int v = 0, r;
  if ((r = attr(&v, cudaDevAttrClockRate, "ClockRate", err))) return r;
  out->sm_clock_mhz = v / 1000.0; /* kHz */
  if ((r = attr(&v, cudaDevAttrMemoryClockRate, "MemoryClockRate", err))) return r;
  out->mem_clock_mhz = v / 1000.0;
  if ((r = attr(&v, cudaDevAttrL2CacheSize, "L2CacheSize", err))) return r;
  out->l2_bytes = (double)v;
  if ((r = attr(&v, cudaDevAttrGlobalMemoryBusWidth, "GlobalMemoryBusWidth", err))) return r;
  out->mem_bus_bits = v;
  return SIM_OK;
}
