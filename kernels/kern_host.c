/* kern_host.c: host side of the kernels API when built with CUDA. */
#include <cuda_runtime_api.h>
#include <stdio.h>
#include <string.h>

#include "kern.h"

bool kern_built_with_cuda(void) { return true; }

int kern_device_query(kern_device_info *out, sim_err *err) {
  memset(out, 0, sizeof *out);
  int n = 0;
  cudaError_t rc = cudaGetDeviceCount(&n);
  if (rc != cudaSuccess || n == 0)
    return sim_errf(err, SIM_EINPUT, "no usable CUDA GPU: %s (cudaGetDeviceCount returned %d)",
                    rc == cudaSuccess ? "no device" : cudaGetErrorString(rc), (int)rc);
  struct cudaDeviceProp p;
  rc = cudaGetDeviceProperties(&p, 0);
  if (rc != cudaSuccess)
    return sim_errf(err, SIM_EINPUT, "cudaGetDeviceProperties: %s", cudaGetErrorString(rc));
  snprintf(out->name, sizeof out->name, "%s", p.name);
  out->sm_count = p.multiProcessorCount;
  out->mem_bytes = (double)p.totalGlobalMem;
  out->cc_major = p.major;
  out->cc_minor = p.minor;
  cudaRuntimeGetVersion(&out->cuda_runtime_version);
  cudaDriverGetVersion(&out->cuda_driver_version);
  int clk = 0;
  if (cudaDeviceGetAttribute(&clk, cudaDevAttrClockRate, 0) == cudaSuccess) out->sm_clock_mhz = clk / 1000.0;
  if (cudaDeviceGetAttribute(&clk, cudaDevAttrMemoryClockRate, 0) == cudaSuccess) out->mem_clock_mhz = clk / 1000.0;
  return SIM_OK;
}
