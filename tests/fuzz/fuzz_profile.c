/* fuzz_profile.c: measured cost profiles (format 2, hw/prof.h), and a few
 * lookups on what loaded. */
#include "fuzz_common.h"
#include "hw/prof.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  char *text = fuzz_text(data, size);
  prof *p = NULL;
  sim_err err = {0, ""};
  int rc = prof_parse(&p, text, "fuzz.json", &err);
  fuzz_contract(rc, &err, "prof_parse");
  if (rc == SIM_OK) {
    double ns;
    (void)prof_gemm_ns(p, DT_BF16, DT_BF16, 7, 4096, 8192, &ns);
    (void)prof_attn_decode_ns(p, DT_BF16, 3, 1000, 8, 1, 128, &ns);
    (void)prof_allreduce_ns(p, PROF_AR_NCCL, 4, 1e6, &ns);
    prof_free(p);
  }
  free(text);
  return 0;
}
