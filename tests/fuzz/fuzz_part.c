/* fuzz_part.c: a sweep's shard file as `servesim merge` reads it
 * (plan/sweep_part.h), and the check of a set of two parts (the input and a
 * valid seed-shaped copy of it). The reader takes a path: the input goes to a
 * private file. */
#include <unistd.h>

#include "fuzz_common.h"
#include "plan/sweep_part.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  static char path[64];
  if (!path[0]) snprintf(path, sizeof path, "/tmp/servesim_fuzz_part_%d.part", (int)getpid());
  FILE *f = fopen(path, "wb");
  if (!f) abort();
  if (size && fwrite(data, 1, size, f) != size) abort();
  fclose(f);
  sweep_part p[2];
  sim_err err = {0, ""};
  int rc = sweep_part_read(&p[0], path, &err);
  fuzz_contract(rc, &err, "sweep_part_read");
  if (rc == SIM_OK) {
    sim_err e2 = {0, ""};
    rc = sweep_part_read(&p[1], path, &e2); /* the same part twice: a duplicate shard unless N = 1... */
    fuzz_contract(rc, &e2, "sweep_part_read (again)");
    if (rc == SIM_OK) {
      sim_err e3 = {0, ""};
      fuzz_contract(sweep_parts_check(p, 2, &e3), &e3, "sweep_parts_check");
      sweep_part_free(&p[1]);
    }
    sweep_part_free(&p[0]);
  }
  return 0;
}
