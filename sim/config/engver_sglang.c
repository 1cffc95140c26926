/* engver_sglang.c: SGLang's defaults that depend on the GPU, the parallel
 * sizes and the version (see engver.h). Read from SGLang's
 * python/sglang/srt/server_args.py at the commits docs/SGLANG.md pins
 * (section 1): v0.5.1.post1 (e0ab167db) and v0.5.6.post2 .. v0.5.9
 * (5c8bd8b51 .. 1efc33c64). The release between them that replaced the
 * 0.5.1.post1 rules is not pinned: servesim applies them below 0.5.6. Versions
 * after 0.5.9 get the 0.5.9 rules (v0.5.14 adds a prefill CUDA-graph term to
 * the memory reserve, not modelled).
 *
 * SGLang reads the GPU's memory with nvidia-smi memory.total in MiB
 * (srt/utils/common.py get_nvgpu_memory_capacity); the GPU files' memory_mib
 * is that reading (H100 SXM 81559, H200 143771). */
#include "config/engver.h"

#include "core/version.h"

#include <math.h>
#include <string.h>

#define MIB (1024.0 * 1024.0)

static double gpu_mib(const gpu_cfg *g) { return g->mem_bytes / MIB; }

/* The 0.5.1.post1 rules apply (version below 0.5.6). */
static bool old_rules(const engine_cfg *e) { return e->version[0] && version_cmp(e->version, "0.5.6") < 0; }

bool engver_is_sglang(const engine_cfg *e) { return !strcmp(e->name, "sglang"); }

/* chunked_prefill_size: ServerArgs._handle_gpu_memory_settings (v0.5.6.post2 .. v0.5.9) by GPU memory:
 * < 20 GiB 2048, < 35 GiB 2048, < 60 GiB 4096, < 90 GiB 8192, < 160 GiB 8192, else 16384;
 * v0.5.1.post1 (server_args.py l.405-424): < 35 GiB 2048, < 160 GiB 8192, else 16384. */
uint32_t engver_sglang_chunked_prefill(const engine_cfg *e, const gpu_cfg *g) {
  double m = gpu_mib(g);
  if (m < 35 * 1024) return 2048;
  if (!old_rules(e) && m < 60 * 1024) return 4096;
  if (m < 160 * 1024) return 8192;
  return 16384;
}

/* cuda_graph_max_bs: _handle_gpu_memory_settings (v0.5.6.post2 .. v0.5.9), tp < 4 / tp >= 4:
 * < 20 GiB 8 / 8, < 35 GiB 24 / 80, < 60 GiB 32 / 160, < 160 GiB 256 / 512, else 512.
 * v0.5.1.post1 sets it below 35 GiB only (8 / 80); otherwise its capture list
 * (model_executor/cuda_graph_runner.py get_batch_sizes_to_capture) ends at 160, at 256 above 90 GiB and at
 * 512 above 160,000 MiB, whatever the TP. */
uint32_t engver_sglang_graph_max_bs(const engine_cfg *e, const gpu_cfg *g, uint32_t tp) {
  double m = gpu_mib(g);
  bool wide = tp >= 4;
  if (old_rules(e)) {
    if (m < 35 * 1024) return wide ? 80 : 8;
    return m > 160 * 1000 ? 512 : m > 90 * 1024 ? 256 : 160;
  }
  if (m < 20 * 1024) return 8;
  if (m < 35 * 1024) return wide ? 80 : 24;
  if (m < 60 * 1024) return wide ? 160 : 32;
  if (m < 160 * 1024) return wide ? 512 : 256;
  return 512;
}

/* Capture sizes up to max_bs: v0.5.6.post2 .. v0.5.9 _generate_cuda_graph_batch_sizes: [1, 2, 4, 8, 12] +
 * range(16, 257, 8) + range(272, 512, 16) + range(512, max_bs + 1, 32); v0.5.1.post1: [1, 2, 4, 8] +
 * range(16, 161, 8), then range(168, 257, 8) and range(272, 513, 16) on the larger GPUs (the max above). */
uint32_t engver_sglang_graph_sizes(const engine_cfg *e, uint32_t max_bs, uint32_t *sizes, uint32_t cap) {
  uint32_t n = 0;
  bool old = old_rules(e);
  static const uint32_t head_new[] = {1, 2, 4, 8, 12}, head_old[] = {1, 2, 4, 8};
  const uint32_t *head = old ? head_old : head_new;
  uint32_t nh = old ? 4 : 5;
  for (uint32_t i = 0; i < nh && head[i] <= max_bs && n < cap; i++) sizes[n++] = head[i];
  for (uint32_t s = 16; s <= 256 && s <= max_bs && n < cap; s += 8) sizes[n++] = s;
  for (uint32_t s = 272; s <= (old ? 512u : 511u) && s <= max_bs && n < cap; s += 16) sizes[n++] = s;
  for (uint32_t s = 512; !old && s <= max_bs && n < cap; s += 32) sizes[n++] = s;
  return n;
}

/* mem_fraction_static when not given, in MiB (v0.5.6.post2 .. v0.5.9 _handle_gpu_memory_settings):
 *   reserved = 512 + max(chunked_prefill_size, 2048) x 1.5 + cuda_graph_max_bs x 2 + tp x pp / 8 x 1024,
 *   at least 10 GiB on GPUs over 60 GiB; fraction = round((gpu_mem - reserved) / gpu_mem, 3).
 * v0.5.1.post1 (server_args.py l.354-395): reserved (2.8 + tp pp / 10) GiB below 35 GiB, (9.5 + tp pp / 2)
 * GiB below 90 GiB, (12 + tp pp / 2) GiB below 160 GiB, else 32 GiB. Without speculative decoding, DP
 * or a piecewise CUDA graph (their terms are not modelled); DP attention (dp > 1) adds cuda_graph_max_bs x dp
 * x 3 MiB, and x 1.5 more above 300 (v0.5.1.post1: 4 GiB). tp is SGLang's tp_size (every GPU of the
 * replica's attention ranks). prefill_tokens: chunked_prefill_size, or max_prefill_tokens with chunking off. */
double engver_mem_fraction_static(const engine_cfg *e, const gpu_cfg *g, uint32_t tp, uint32_t pp, uint32_t dp,
                                  uint32_t prefill_tokens) {
  double m = gpu_mib(g), tpp = (double)tp * pp, reserved;
  if (old_rules(e)) {
    double gib = m < 35 * 1024 ? 2.8 + tpp / 10 : m < 160 * 1024 ? (m < 90 * 1024 ? 9.5 : 12) + tpp / 2 : 32;
    reserved = (gib + (dp > 1 ? 4 : 0)) * 1024; /* + 4 GiB with DP attention */
  } else {
    double chunk = prefill_tokens > 2048 ? prefill_tokens : 2048, bs = engver_sglang_graph_max_bs(e, g, tp);
    reserved = 512 + chunk * 1.5 + bs * 2.0 + tpp / 8 * 1024;
    if (dp > 1) reserved += bs * dp * 3 + (bs > 300 ? bs * dp * 1.5 : 0); /* DP attention */
    if (m > 60 * 1024 && reserved < 10 * 1024) reserved = 10 * 1024;
  }
  double f = round((m - reserved) / m * 1000) / 1000;
  return f > 0.05 ? f : 0.05; /* a GPU too small for the reserve: SGLang would fail to load; keep a valid fraction */
}

/* retract_decode: v0.5.6.post2 on retract until one decode step fits (check_decode_mem); v0.5.1.post1 until
 * the pool holds retract_decode_steps = 20 tokens per remaining request (schedule_batch.py l.1397-1510). */
uint32_t engver_sglang_retract_steps(const engine_cfg *e) { return old_rules(e) ? 20 : 1; }

/* _handle_data_parallelism (server_args.py l.2109-2125, every version): with DP attention
 * schedule_conservativeness x 0.3 and chunked_prefill_size // dp_size. */
double engver_sglang_conservativeness(const engine_cfg *e, uint32_t dp) {
  return e->schedule_conservativeness * (dp > 1 ? 0.3 : 1.0);
}
