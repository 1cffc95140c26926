#!/bin/sh
# Study (a): Llama-3.1-70B (BF16) on H200 vs H100 at TP 2, 4 and 8: how many GPUs serve the Azure
# conversation trace scaled to 20 req/s at p99 TTFT <= 2 s and p99 TPOT <= 50 ms, and at what cost.
# Regenerates report.html, report.md and result.json here. Extra arguments go to servesim.
. "$(dirname "$0")/../common.sh"
need_trace azure2023_conv.csv
"$BIN" capacity --trace shared/traces/azure2023_conv.csv --model llama-3.1-70b \
  --gpu h100-sxm,h200 --tp 2,4,8 \
  --slo ttft_p99=2000 --slo tpot_p99=50 --target-rate 20 \
  --json result.json --report report.html --report-md report.md --force "$@"
