#!/bin/sh
# frontend_fit_check.sh: runs `servesim validate` with the values of the variant
# fit that also searched frontend_latency_us (tried on 2026-11-30, not shipped;
# docs/ACCURACY.md, "The HTTP/tokenizer path"). Extra arguments go to servesim,
# e.g. --no-table. SERVESIM_BIN overrides the binary (default build/servesim).
set -eu
cd "$(dirname "$0")/.."
BIN=${SERVESIM_BIN:-build/servesim}
set -- --param vllm.step_overhead_us=916 --param vllm.per_seq_overhead_us=0.579 \
  --param vllm.gemm_compute_eff=0.7544 --param vllm.gemm_memory_eff=0.8 --param vllm.gemm_blend=1.061 \
  --param vllm.attn_prefill_eff=1 --param vllm.attn_decode_eff=0.9 --param vllm.allreduce_bw_eff=1 \
  --param vllm.allreduce_latency_us=16 --param vllm.runtime_overhead_mib=2060 \
  --param vllm.frontend_latency_us=9715 --param vllm.closed_loop_output_spread=0.08192 \
  --param trtllm.step_overhead_us=150 --param trtllm.per_seq_overhead_us=2 \
  --param trtllm.gemm_compute_eff=0.75 --param trtllm.gemm_memory_eff=0.8 --param trtllm.gemm_blend=1.398 \
  --param trtllm.attn_prefill_eff=0.625 --param trtllm.attn_decode_eff=0.75 \
  --param trtllm.allreduce_bw_eff=0.8484 --param trtllm.allreduce_latency_us=12.8 \
  --param trtllm.runtime_overhead_mib=256 --param trtllm.frontend_latency_us=33550 \
  --param trtllm.closed_loop_output_spread=0.09213 "$@"
echo "servesim validate $*"
exec "$BIN" validate "$@"
