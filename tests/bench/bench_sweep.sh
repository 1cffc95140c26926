#!/bin/sh
# bench_sweep.sh: how many configurations per second `servesim sweep` simulates, on one core and on
# all of them. The grid is study (c)'s shape: 7 max_num_seqs x 6 token budgets x 5 request rates =
# 210 configurations of Llama-3.1-70B on 4 x H200, each replaying the Azure conversation trace
# (19,366 requests) rescaled to its rate; a generated workload of the same size when the trace is
# absent. Prints configs/s per job count and the speed-up. Not part of the test suite (timings are
# noisy); run it by hand:
#   tests/bench/bench_sweep.sh            # 1 job, then all processors
#   JOBS="4" tests/bench/bench_sweep.sh   # only the listed job counts
# Environment: SERVESIM_BIN (default build/servesim), SERVESIM_SHARED_DIR (default ../shared).
set -eu
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
BIN=${SERVESIM_BIN:-$ROOT/build/servesim}
[ -x "$BIN" ] || { echo "error: $BIN not found: build first (cmake -S . -B build && cmake --build build -j)" >&2; exit 1; }
TRACE=${SERVESIM_SHARED_DIR:-$ROOT/../shared}/traces/azure2023_conv.csv
NPROC=$(nproc 2>/dev/null || echo 1)
JOBS=${JOBS:-"1 $NPROC"}
if [ -f "$TRACE" ]; then
  WL="--trace $TRACE"
  echo "workload: $TRACE"
else
  WL="--num-prompts 19366 --random-input-len 1000 --random-output-len 200 --random-range-ratio 0.9"
  echo "workload: generated (the Azure conversation trace is absent at $TRACE)"
fi
GRID="--max-num-seqs 16,32,64,128,256,512,1024 --max-num-batched-tokens 512,1024,2048,4096,8192,16384 --request-rate 2,3,4,5,6"
first=""
for j in $JOBS; do
  t0=$(date +%s.%N)
  # shellcheck disable=SC2086
  "$BIN" sweep $WL $GRID --jobs "$j" --no-progress --quiet
  t1=$(date +%s.%N)
  awk -v n=210 -v j="$j" -v a="$t0" -v b="$t1" -v f="$first" 'BEGIN {
    t = b - a; r = n / t
    printf "jobs %-3s %d configurations in %.2f s = %.2f configs/s", j, n, t, r
    if (f != "") printf "  (x%.2f vs 1 job)", r / f
    printf "\n" }'
  [ -n "$first" ] || first=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.6f", 210 / (b - a) }')
done
