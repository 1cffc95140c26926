#!/bin/sh
# bench_fleet.sh: fleets and long traces (issue fleet-scale). For each case it prints wall time,
# peak memory (the binary's own "peak memory" line: the process's maximum resident set), bytes of
# peak memory per request, engine steps and simulation events processed per second, beside the issue's target. With
# BASELINE=/path/to/old/servesim it runs the old binary on the same case first and prints the
# ratios (paired, same machine, same run of this script). Figures, not assertions: machines are noisy.
#   tests/bench/bench_fleet.sh                      # the table, minus the 10-million-request case
#   FULL=1 tests/bench/bench_fleet.sh               # with it (minutes)
#   BASELINE=/tmp/old/servesim tests/bench/bench_fleet.sh
# Environment: SERVESIM_BIN (default: a Release build in build-bench, built here).
set -eu
cd "$(dirname "$0")/../.."
if [ -z "${SERVESIM_BIN:-}" ]; then
  cmake -S . -B build-bench -DCMAKE_BUILD_TYPE=Release -DSERVESIM_TESTS=OFF >/dev/null
  cmake --build build-bench -j"$(nproc)" >/dev/null
  SERVESIM_BIN=build-bench/servesim
fi
pin=""
command -v taskset >/dev/null 2>&1 && pin="taskset -c 0"
now() { date +%s.%N; }

# one BIN ARGS...: sets wall, mib, steps (wall "-" when it ran past BASELINE_LIMIT seconds, default 120: baselines only)
one() {
  b=$1
  shift
  t0=$(now)
  lim=""
  [ "$b" = "${BASELINE:-}" ] && lim="timeout ${BASELINE_LIMIT:-120}"
  # shellcheck disable=SC2086
  if ! out=$($lim $pin "$b" run "$@"); then
    wall="-" mib="-" steps=0
    return 0
  fi
  t1=$(now)
  wall=$(awk "BEGIN{printf \"%.2f\", $t1 - $t0}")
  mib=$(echo "$out" | sed -n 's/^peak memory \([0-9.]*\) MiB/\1/p')
  steps=$(echo "$out" | sed -n 's/.* \([0-9]*\) steps,.*/\1/p')
  events=$(echo "$out" | sed -n 's/.*(\([0-9]*\) events,.*/\1/p')
  [ -n "$events" ] || events=0 # binaries before the event count
}

# case LABEL REQUESTS TARGET ARGS...
case_() {
  label=$1 reqs=$2 target=$3
  shift 3
  if [ -n "${BASELINE:-}" ]; then
    one "$BASELINE" "$@"
    bw=$wall bm=$mib
  fi
  one "$SERVESIM_BIN" "$@"
  printf '%-46s wall %7s s  peak %8s MiB  %6.0f B/request  %5.2f M steps/s  %5.2f M events/s   target: %s\n' "$label" \
    "$wall" "$mib" "$(awk "BEGIN{print $mib * 1048576 / $reqs}")" "$(awk "BEGIN{print $steps / ($wall > 0 ? $wall : 1) / 1e6}")" \
    "$(awk "BEGIN{print $events / ($wall > 0 ? $wall : 1) / 1e6}")" "$target"
  if [ -n "${BASELINE:-}" ] && [ "$bw" = "-" ]; then
    printf '%-46s baseline: not finished in %s s\n' "" "${BASELINE_LIMIT:-120}"
  elif [ -n "${BASELINE:-}" ]; then
    printf '%-46s baseline wall %s s, peak %s MiB: %.2fx the time, %.2fx the memory\n' "" "$bw" "$bm" \
      "$(awk "BEGIN{print $wall / $bw}")" "$(awk "BEGIN{print $mib / $bm}")"
  fi
}

echo "servesim fleet benchmark ($(uname -m), $(nproc) cores, one core used, $(date -u +%Y-%m-%d)); binary $SERVESIM_BIN"
for r in 1 100 1000 10000; do
  t="-"
  [ "$r" = 10000 ] && t="< 5 s"
  case_ "default scenario (3,300 requests), $r replicas" 3300 "$t" --replicas "$r"
done
case_ "1,000 replicas, 200,000 requests at 2,000/s" 200000 "< 2 s, < 300 MB" \
  --replicas 1000 --num-prompts 200000 --request-rate 2000
case_ "16 replicas, 1,000,000 requests at 200/s" 1000000 "< 5 s, < 300 B/request" \
  --replicas 16 --num-prompts 1000000 --request-rate 200
if [ "${FULL:-0}" = 1 ]; then
  case_ "1,000 replicas, 10,000,000 requests at 2,000/s" 10000000 "< 60 s, < 2 GB" \
    --replicas 1000 --num-prompts 10000000 --request-rate 2000
else
  echo "(10,000,000 requests on 1,000 replicas: FULL=1)"
fi
