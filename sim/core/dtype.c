/* dtype.c: names and sizes of numeric formats. */
#include "core/dtype.h"

#include <string.h>
#include <strings.h>

static const char *const names[DT_COUNT] = {"bf16", "fp16", "fp8", "int8", "int4", "fp32", "fp4"};
static const double bytes[DT_COUNT] = {2.0, 2.0, 1.0, 1.0, 0.5, 4.0, 0.5};

double dtype_bytes(sim_dtype d) { return (unsigned)d < DT_COUNT ? bytes[d] : 0.0; }
double dtype_weight_bytes(sim_dtype d) {
  return d == DT_INT4 ? 0.5 + 2.0 / 128.0 : d == DT_FP4 ? 0.5 + 1.0 / 16.0 : dtype_bytes(d);
}
const char *dtype_name(sim_dtype d) { return (unsigned)d < DT_COUNT ? names[d] : "?"; }

bool dtype_parse(const char *s, sim_dtype *out) {
  static const struct {
    const char *name;
    sim_dtype d;
  } tab[] = {{"bf16", DT_BF16},     {"bfloat16", DT_BF16},   {"fp16", DT_FP16},    {"float16", DT_FP16},
             {"half", DT_FP16},     {"fp8", DT_FP8},         {"fp8_e4m3", DT_FP8}, {"fp8_e5m2", DT_FP8},
             {"float8", DT_FP8},    {"int8", DT_INT8},       {"int4", DT_INT4},    {"fp32", DT_FP32},
             {"float32", DT_FP32},  {"float", DT_FP32},      {"fp4", DT_FP4},      {"nvfp4", DT_FP4}};
  for (size_t i = 0; i < sizeof tab / sizeof tab[0]; i++)
    if (strcasecmp(s, tab[i].name) == 0) {
      *out = tab[i].d;
      return true;
    }
  return false;
}
