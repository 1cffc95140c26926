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
  DT_FP4,  /* NVFP4: E2M1 values in blocks of 16 with an E4M3 scale each (Blackwell FP4 tensor cores; elsewhere
              weight-only); storage 0.5 byte (block scales added separately) */
  DT_COUNT
} sim_dtype;

/* Storage bytes per element; INT4 is 0.5 (group scales are added separately). */
double dtype_bytes(sim_dtype d);
/* Bytes a quantized weight takes with its scales: INT4 0.5 + one 16-bit scale per 128 weights (AWQ/GPTQ
 * group 128); FP4 0.5 + one E4M3 scale per 16 (NVFP4's block; NVIDIA, "Introducing NVFP4", 2025; the
 * per-tensor FP32 scale is negligible); others their storage. */
double dtype_weight_bytes(sim_dtype d);
const char *dtype_name(sim_dtype d); /* "bf16", "fp16", "fp8", "int8", "int4", "fp32", "fp4" */
/* Parses a dtype name, accepting aliases (bfloat16, float16/half, fp8_e4m3,
 * fp8_e5m2, float32, nvfp4). Returns false if unknown. */
bool dtype_parse(const char *s, sim_dtype *out);

#endif
