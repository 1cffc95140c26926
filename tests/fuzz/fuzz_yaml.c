/* fuzz_yaml.c: the YAML subset inference-perf's configs use (config/yamlx.h). */
#include "config/yamlx.h"
#include "fuzz_common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  char *text = fuzz_text(data, size);
  yx_doc d;
  sim_err err = {0, ""};
  int rc = yx_parse(&d, text, "fuzz.yaml", &err);
  fuzz_contract(rc, &err, "yx_parse");
  if (rc == SIM_OK) yx_free(&d);
  free(text);
  return 0;
}
