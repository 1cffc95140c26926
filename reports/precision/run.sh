#!/bin/sh
# Study (b): BF16 vs FP8 vs INT4 (AWQ/GPTQ-style) weights, with and without an FP8 KV cache, for
# Llama-3.1-70B on H200 at TP 1, 2 and 4: the highest rate one replica holds at p99 TTFT <= 2 s and
# p99 TPOT <= 50 ms on the Azure conversation trace, and GPUs and cost for 20 req/s.
# Regenerates report.html, report.md and result.json here. Extra arguments go to servesim.
. "$(dirname "$0")/../common.sh"
need_trace azure2023_conv.csv
"$BIN" capacity --trace shared/traces/azure2023_conv.csv --model llama-3.1-70b --gpu h200 \
  --tp 1,2,4 --quantization none,fp8,int4 --kv-cache-dtype auto,fp8 \
  --slo ttft_p99=2000 --slo tpot_p99=50 --target-rate 20 \
  --json result.json --report report.html --report-md report.md --force "$@"
