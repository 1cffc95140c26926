/* fuzz_validate.c: the readers of published measurements and user files
 * (AIConfigurator CSV, TensorRT-LLM tables, MLPerf facts, {scenario, result}
 * JSON with vllm bench serve or genai-perf results): the first byte picks the
 * reader. */
#include "fuzz_common.h"
#include "validate/validate.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (!size) return 0;
  char *text = fuzz_text(data + 1, size - 1);
  vset s;
  vset_init(&s);
  sim_err err = {0, ""};
  int rc;
  switch (data[0] % 5) {
    case 0: rc = vdata_parse_aic(&s, text, "fuzz.csv", &err); break;
    case 1: rc = vdata_parse_trt_overview(&s, text, "fuzz.csv", &err); break;
    case 2: rc = vdata_parse_static_batch(&s, text, "fuzz.csv", &err); break;
    case 3: rc = vdata_parse_mlperf(&s, text, "fuzz.json", &err); break;
    default: rc = vdata_parse_user(&s, text, "fuzz.json", &err); break;
  }
  fuzz_contract(rc, &err, "vdata_parse_*");
  vset_free(&s);
  free(text);
  return 0;
}
