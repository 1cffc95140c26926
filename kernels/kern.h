/* kern.h: the C API of servesim calibration kernels (CUDA C files in kernels/).
 * A build without CUDA links kern_stub.c instead, whose functions return
 * SIM_EINPUT with "built without CUDA". Without a GPU at run time (no driver,
 * no device) functions return SIM_EINPUT with a clear message: never a crash.
 * The calibration issue fills this API in. */
#ifndef SIM_KERN_H
#define SIM_KERN_H

#include "core/common.h"

typedef struct kern_device_info {
  char name[256];
  int sm_count;
  double mem_bytes;
  int cc_major, cc_minor;
  int cuda_runtime_version, cuda_driver_version;
  double sm_clock_mhz, mem_clock_mhz;
} kern_device_info;

/* True when this binary was compiled with CUDA kernels. */
bool kern_built_with_cuda(void);
/* Queries device 0. SIM_EINPUT with a message when there is no usable GPU. */
int kern_device_query(kern_device_info *out, sim_err *err);

#endif
