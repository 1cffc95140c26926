#!/bin/sh
# Study (c): max_num_seqs and the token budget (max_num_batched_tokens): 7 x 6 settings of
# Llama-3.1-70B on 4 x H200 (TP4), each at 6 request rates of the Azure conversation trace:
# 252 simulations on all cores (progress bar on a terminal). Which settings hold the most load at
# p99 TTFT <= 2 s and p99 TPOT <= 50 ms, and the Pareto frontier of throughput vs interactivity.
# Regenerates report.html, report.md, result.json and result.csv here. Extra arguments go to servesim.
. "$(dirname "$0")/../common.sh"
need_trace azure2023_conv.csv
"$BIN" sweep --trace shared/traces/azure2023_conv.csv --model llama-3.1-70b --gpu h200 --tp 4 \
  --max-num-seqs 16,32,64,128,256,512,1024 \
  --max-num-batched-tokens 512,1024,2048,4096,8192,16384 \
  --request-rate 2,2.5,3,3.5,4,5 \
  --slo ttft_p99=2000 --slo tpot_p99=50 \
  --json result.json --csv result.csv --report report.html --report-md report.md --force "$@"
