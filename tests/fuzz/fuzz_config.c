/* fuzz_config.c: model (servesim's and Hugging Face config.json), GPU (with
 * MIG profiles, and a slice of the parsed GPU), engine and cloud instance
 * files: the first byte picks the kind. */
#include "config/cfg.h"
#include "config/instance.h"
#include "config/mig.h"
#include "fuzz_common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (!size) return 0;
  char *text = fuzz_text(data + 1, size - 1);
  sim_err err = {0, ""};
  int rc;
  switch (data[0] % 4) {
    case 0: {
      model_cfg m;
      rc = cfg_model_parse(&m, text, "fuzz.json", &err);
      break;
    }
    case 1: {
      gpu_cfg g, s;
      rc = cfg_gpu_parse(&g, text, "fuzz.json", &err);
      for (uint32_t i = 0; !rc && i < g.n_mig; i++) { /* every profile it lists cuts a slice */
        sim_err e2 = {0, ""};
        int r2 = mig_slice(&s, &g, g.mig[i].name, &e2);
        fuzz_contract(r2, &e2, "mig_slice"); /* fails only for a name too long for a slice's */
      }
      break;
    }
    case 2: {
      instance_cfg in;
      rc = cfg_instance_parse(&in, text, "fuzz.json", &err);
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
