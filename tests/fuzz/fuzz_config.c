/* fuzz_config.c: model (servesim's and Hugging Face config.json), GPU and
 * engine files: the first byte picks the kind. */
#include "config/cfg.h"
#include "fuzz_common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (!size) return 0;
  char *text = fuzz_text(data + 1, size - 1);
  sim_err err = {0, ""};
  int rc;
  switch (data[0] % 3) {
    case 0: {
      model_cfg m;
      rc = cfg_model_parse(&m, text, "fuzz.json", &err);
      break;
    }
    case 1: {
      gpu_cfg g;
      rc = cfg_gpu_parse(&g, text, "fuzz.json", &err);
      break;
    }
    default: {
      engine_cfg e;
      rc = cfg_engine_parse(&e, text, "fuzz.json", &err);
      break;
    }
  }
  fuzz_contract(rc, &err, "cfg_*_parse");
  free(text);
  return 0;
}
