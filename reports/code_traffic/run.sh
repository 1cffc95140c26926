#!/bin/sh
# Study (d): the Azure code trace (long prompts, bursty) at 1x to 4x its traffic on Llama-3.1-70B,
# 4 x H200 per replica (TP4), 1 to 16 replicas behind a least-outstanding router: where p99 TTFT
# explodes, and how many replicas keep it under 2 s. (Only the TTFT objective: with the default
# 8192-token budget, short outputs that share a step with a long prefill chunk see p99 TPOT of
# about half a second at any replica count; the report shows it.)
# Regenerates report.html, report.md, result.json, result.csv and replicas_needed.txt here.
. "$(dirname "$0")/../common.sh"
need_trace azure2023_code.csv
"$BIN" sweep --trace shared/traces/azure2023_code.csv --model llama-3.1-70b --gpu h200 --tp 4 \
  --router least_outstanding --replicas 1,2,4,6,8,10,12,16 --rate-scale 1,1.5,2,3,4 \
  --slo ttft_p99=2000 \
  --json result.json --csv result.csv --report report.html --report-md report.md --force "$@"
# The fewest replicas keeping p99 TTFT within 2 s at each traffic level (from result.csv).
awk -F, 'NR == 1 { for (i = 1; i <= NF; i++) col[$i] = i; next }
  { s = $col["rate_scale"]; r = $col["replicas"]; seen[s] = 1
    if ($col["meets_slo"] == "true" && (!(s in best) || r + 0 < best[s] + 0)) best[s] = r }
  END { for (s in seen)
          if (s in best) printf "traffic x%s: %s replica(s) of 4 x H200 (TP4) keep p99 TTFT <= 2 s\n", s, best[s]
          else printf "traffic x%s: no replica count tried (1-16) keeps p99 TTFT <= 2 s\n", s }' \
  result.csv | sort -t x -k2 -g > replicas_needed.txt
cat replicas_needed.txt
