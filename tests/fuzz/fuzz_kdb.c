/* fuzz_kdb.c: one kernel-database table (hw/kdb_csv.h) as the import reads
 * it: the header, every row, every field as an integer and as a latency.
 * The reader takes a path (zlib's gzopen): the input goes to a private file. */
#include <unistd.h>

#include "fuzz_common.h"
#include "hw/kdb_csv.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  static char path[64];
  if (!path[0]) snprintf(path, sizeof path, "/tmp/servesim_fuzz_kdb_%d.csv", (int)getpid());
  FILE *f = fopen(path, "wb");
  if (!f) abort();
  if (size && fwrite(data, 1, size, f) != size) abort();
  fclose(f);
  kdb_csv c;
  sim_err err = {0, ""};
  int rc = kdb_csv_open(&c, path, &err);
  fuzz_contract(rc, &err, "kdb_csv_open");
  if (rc == SIM_OK) {
    bool row = true;
    while (row && rc == SIM_OK) {
      rc = kdb_csv_next(&c, &row, &err);
      fuzz_contract(rc, &err, "kdb_csv_next");
      for (int k = 0; row && rc == SIM_OK && k < c.ncols; k++) {
        uint64_t u;
        double ns;
        sim_err e2 = {0, ""};
        fuzz_contract(kdb_csv_int(&c, k, 0, 1e12, &u, &e2), &e2, "kdb_csv_int");
        sim_err e3 = {0, ""};
        fuzz_contract(kdb_csv_ms(&c, k, &ns, &e3), &e3, "kdb_csv_ms");
      }
    }
  }
  kdb_csv_close(&c);
  return 0;
}
