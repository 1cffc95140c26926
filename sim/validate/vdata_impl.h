/* vdata_impl.h: the mapping helpers the readers of measurements share (defined in vset.c, below every
 * reader: vdata.c, vdata_aic.c; vrun.c adds notes with vdata__note); no other module includes it. */
#ifndef SIM_VDATA_IMPL_H
#define SIM_VDATA_IMPL_H

#include "validate/validate.h"

/* dst = v (empty when v is NULL), truncated to n. */
void vdata__set_str(char *dst, size_t n, const char *v);
/* Precision: "fp8" (weights FP8; KV FP8 for TensorRT-LLM), "fp16"/"mixed" (all FP16), "bf16". Returns false
 * when unknown. */
bool vdata__set_precision(vpoint *p, const char *prec);
/* Appends a reading note to p->note ("; " between notes). */
void vdata__note(vpoint *p, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* The point's series: model/gpu/engine/tpN/ISLxOSL. */
void vdata__set_group(vpoint *p, const char *gpu_label);

/* A model's short name for ids: the last path part without ".json" (a static buffer: use it at once). */
const char *vdata__model_short(const char *m);

#endif
