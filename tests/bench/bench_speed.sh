#!/bin/sh
# bench_speed.sh: how fast is servesim? Prints figures, asserts nothing timed
# (machines are noisy): compare them with the targets printed beside them.
#   1. the Azure 2023 conversation trace (19,366 requests) through
#      Llama-3.1-70B TP4 on H200, whole process wall time including loading
#      (median of 5 runs); skipped when ../shared/traces is absent
#   2. a generated trace of 1,000,000 requests (1024 +-50% in, 128 +-50% out,
#      Poisson 8 req/s, about 70% of one TP4 replica's capacity) on one core
#      (taskset -c 0 when available): wall time and peak memory
# Usage: tests/bench/bench_speed.sh [build-dir]   (default build-bench, Release)
set -eu
cd "$(dirname "$0")/../.."
B=${1:-build-bench}
cmake -S . -B "$B" -DCMAKE_BUILD_TYPE=Release -DSERVESIM_TESTS=OFF >/dev/null
cmake --build "$B" -j"$(nproc)" >/dev/null
bin="$B/servesim"
now() { date +%s.%N; }
shared=${SERVESIM_SHARED_DIR:-../shared}
echo "servesim speed benchmark ($(uname -m), $(nproc) cores, $(date -u +%Y-%m-%d))"

conv="$shared/traces/azure2023_conv.csv"
if [ -f "$conv" ]; then
  times=""
  for i in 1 2 3 4 5; do
    t0=$(now)
    "$bin" run --trace "$conv" --tp 4 --gpu h200 --model llama-3.1-70b --quiet
    t1=$(now)
    times="$times $(awk "BEGIN{print $t1 - $t0}")"
  done
  med=$(echo $times | tr ' ' '\n' | sort -n | sed -n 3p)
  printf 'azure2023_conv (19,366 requests), Llama-3.1-70B TP4 H200: median wall %.3f s of 5 (target: well under 1 s)\n' "$med"
  printf '  runs: %s\n' "$times"
  printf '  ratio to Vidur (issue figure, about 5 s per 1,000 requests, not measured here): %.0fx faster\n' \
    "$(awk "BEGIN{print 19.366 * 5 / $med}")"
else
  echo "azure2023_conv: skipped ($conv absent)"
fi

pin=""
command -v taskset >/dev/null 2>&1 && pin="taskset -c 0"
t0=$(now)
out=$($pin "$bin" run --num-prompts 1000000 --request-rate 8 --random-range-ratio 0.5 --tp 4 --gpu h200 \
  --model llama-3.1-70b)
t1=$(now)
wall=$(awk "BEGIN{print $t1 - $t0}")
mem=$(echo "$out" | sed -n 's/^peak memory \([0-9.]*\) MiB/\1/p')
done_=$(echo "$out" | sed -n 's/^Successful requests: *//p')
steps=$(echo "$out" | sed -n 's/.* \([0-9]*\) steps,.*/\1/p')
printf '1,000,000 generated requests on one core: wall %.2f s (target < 10 s), peak memory %s MiB (target < 1024)\n' "$wall" "$mem"
printf '  %s completed, %s engine steps simulated: %.2f M steps/s, %.0f k requests/s\n' "$done_" "$steps" \
  "$(awk "BEGIN{print $steps / $wall / 1000000}")" "$(awk "BEGIN{print 1000 / $wall}")"
