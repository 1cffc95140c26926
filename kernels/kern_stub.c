/* kern_stub.c: the kernels API in a build without CUDA. */
#include <string.h>

#include "kern.h"

bool kern_built_with_cuda(void) { return false; }

int kern_device_query(kern_device_info *out, sim_err *err) {
  memset(out, 0, sizeof *out);
  return sim_errf(err, SIM_EINPUT,
                  "this servesim was built without CUDA: no GPU can be used (install the CUDA toolkit and "
                  "rebuild with -DSERVESIM_CUDA=ON)");
}
