#!/bin/sh
# fuzz.sh [SECONDS] [TARGET...]: build the libFuzzer targets of tests/fuzz with
# clang (build-fuzz/, ASan + UBSan) and run each for SECONDS (default 20) from
# its seed corpus; new inputs go to a scratch directory, never into the
# corpus. Prints executions, coverage and speed per target; exits non-zero on
# any crash, leak or contract violation (its input is kept and named).
# Targets: trace scenario config profile validate yaml kdb part merge openai (default: all).
set -eu
cd "$(dirname "$0")/.."
secs=${1:-20}
[ $# -gt 0 ] && shift
targets=${*:-"trace scenario config profile validate yaml kdb part merge openai"}
command -v clang >/dev/null 2>&1 || { echo "fuzz.sh: clang is needed (apt-get install clang)" >&2; exit 1; }
cmake -S . -B build-fuzz -DCMAKE_C_COMPILER=clang -DCMAKE_BUILD_TYPE=RelWithDebInfo -DSERVESIM_FUZZ=ON \
  -DSERVESIM_CUDA=OFF -DSERVESIM_TESTS=OFF >/dev/null
cmake --build build-fuzz -j"$(nproc)" >/dev/null
scratch=$(mktemp -d "${TMPDIR:-/tmp}/servesim_fuzz.XXXXXX")
fail=0
for t in $targets; do
  bin=build-fuzz/fuzz_$t
  [ -x "$bin" ] || { echo "fuzz.sh: no target fuzz_$t" >&2; exit 2; }
  dict=tests/fuzz/json.dict
  case $t in trace | validate | yaml | kdb) dict=tests/fuzz/csv.dict ;; esac
  mkdir -p "$scratch/$t"
  log="$scratch/$t.log"
  if (cd "$scratch/$t" && ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 \
      "$OLDPWD/$bin" -max_total_time="$secs" -print_final_stats=1 -dict="$OLDPWD/$dict" -max_len=8192 \
      . "$OLDPWD/tests/fuzz/corpus/$t") >"$log" 2>&1; then
    ex=$(grep -o 'number_of_executed_units: [0-9]*' "$log" | tail -1 | grep -o '[0-9]*$')
    cov=$(grep -o 'cov: [0-9]*' "$log" | tail -1 | grep -o '[0-9]*$')
    rate=$(grep -o 'average_exec_per_sec: *[0-9]*' "$log" | tail -1 | grep -o '[0-9]*$')
    printf 'fuzz_%-9s ok   %12s executions  cov %5s  %8s exec/s  (%s s)\n' "$t" "$ex" "$cov" "$rate" "$secs"
  else
    echo "fuzz_$t FAILED: $(grep -m1 -E 'ERROR|SUMMARY|abort|contract' "$log")"
    echo "  log: $log; the input: $(ls "$scratch/$t"/crash-* "$scratch/$t"/leak-* "$scratch/$t"/timeout-* 2>/dev/null | head -1)"
    fail=1
  fi
done
[ "$fail" -eq 0 ] && rm -rf "$scratch"
exit "$fail"
