/* fuzz_scenario.c: scenario JSON files (runner/scenario.h). */
#include "fuzz_common.h"
#include "runner/scenario.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  char *text = fuzz_text(data, size);
  scenario sc;
  scenario_init(&sc);
  sim_err err = {0, ""};
  fuzz_contract(scenario_parse(&sc, text, "fuzz.json", &err), &err, "scenario_parse");
  free(text);
  return 0;
}
