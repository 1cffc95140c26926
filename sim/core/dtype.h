/* dtype.h: numeric formats of weights, activations and the KV cache. */
#ifndef SIM_DTYPE_H
#define SIM_DTYPE_H

#include <stdbool.h>

typedef enum sim_dtype {
  DT_BF16 = 0,
  DT_FP16,
  DT_FP8,  /* E4M3 (Hopper/Ada/Blackwell tensor cores) */
  DT_INT8,
  DT_INT4, /* weight-only, group-quantized (AWQ/GPTQ style, group 128, 16-bit scales) */
  DT_FP32,
  DT_COUNT
} sim_dtype;

/* Storage bytes per element; INT4 is 0.5 (group scales are added separately). */
double dtype_bytes(sim_dtype d);
const char *dtype_name(sim_dtype d); /* "bf16", "fp16", "fp8", "int8", "int4", "fp32" */
/* Parses a dtype name, accepting aliases (bfloat16, float16/half, fp8_e4m3,
 * fp8_e5m2, float32). Returns false if unknown. */
bool dtype_parse(const char *s, sim_dtype *out);

#endif
