#!/bin/sh
# bench_cases.sh: the [speed] issue's three Poisson cases, paired against a baseline binary in the same run.
# Llama-2-70B TP4 on H100, vLLM's scheduler, --max-model-len 4096, fixed lengths, arrivals drawn as Vidur's
# PoissonRequestIntervalGenerator draws them (vidur/request_generator/poisson_request_interval_generator.py:
# gap = min(-ln(1 - U) / qps, 3 / qps), U from Python's random after random.seed(42); request i arrives at the sum
# of the first i + 1 gaps):
#   (a) 1,000 requests 1024/256 at 6 QPS   (b) 20,000 requests 1024/256 at 6 QPS   (c) 20,000 requests 512/128 at 12 QPS
# The traces are written by python3 into a temporary directory (native CSV) and replayed with --trace. Each
# case alternates the two binaries for R rounds (default 7) and prints the medians of whole-process wall time
# (and peak memory) and their ratio. Figures, not assertions: machines are noisy. [speed] targets (ratios to
# 613a1d2): (a) >= 8x, (b) >= 2.5x, (c) >= 2.5x.
# Usage: tests/bench/bench_cases.sh [BASE_REV] [ROUNDS]
#   BASE_BIN=PATH: a baseline binary already built (BASE_REV then only labels it).
#   BASE_REV: the baseline's git revision (default 613a1d2, the issue's), built Release in a temporary worktree;
#   this tree is built Release in build-bench/. RT=1: run every measurement under `chrt -f 50` (root), so that
#   other load on a shared machine does not enter the wall times (both binaries alike).
set -eu
cd "$(dirname "$0")/../.."
base_rev=${1:-613a1d2}
rounds=${2:-7}
command -v python3 >/dev/null 2>&1 || { echo "bench_cases: python3 is needed to draw Vidur's arrivals" >&2; exit 2; }
. tests/bench/pair_lib.sh
dir=$(mktemp -d /tmp/servesim_cases_XXXXXX)
trap 'pair_cleanup; rm -rf "$dir"' EXIT
pair_setup "$base_rev"

# trace NAME N QPS IN OUT
trace() {
  python3 - "$dir/$1.csv" "$2" "$3" "$4" "$5" <<'EOF'
import math, random, sys
path, n, qps, isl, osl = sys.argv[1], int(sys.argv[2]), float(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5])
random.seed(42)
t = 0.0
with open(path, "w") as f:
    f.write("arrival_s,prompt_tokens,output_tokens\n")
    for _ in range(n):
        t += min(-math.log(1.0 - random.random()) / qps, 3.0 / qps)
        f.write("%.9f,%d,%d\n" % (t, isl, osl))
EOF
}
trace a 1000 6 1024 256
trace b 20000 6 1024 256
trace c 20000 12 512 128

# one measurement: "wall_s peak_kib" of BIN ARGS
measure() { pair_time ru_maxrss "$@"; }
med() { cut -d' ' -f"$2" "$1" | sort -n | sed -n "$(( (rounds + 1) / 2 ))p"; }
echo "servesim Poisson cases ($(uname -m), $(nproc) cores, $(date -u +%Y-%m-%d)): $rounds rounds, baseline $base_rev vs $(git rev-parse --short HEAD)$(git diff --quiet || echo '+changes')${rt:+, under $rt}"
for c in a b c; do
  args="run --model llama-2-70b --gpu h100-sxm --tp 4 --max-model-len 4096 --trace $dir/$c.csv --quiet"
  : > "$dir/old"; : > "$dir/new"
  i=0
  while [ $i -lt "$rounds" ]; do
    # shellcheck disable=SC2086
    measure "$old" $args >> "$dir/old"
    # shellcheck disable=SC2086
    measure "$new" $args >> "$dir/new"
    i=$((i + 1))
  done
  ow=$(med "$dir/old" 1); nw=$(med "$dir/new" 1); om=$(med "$dir/old" 2); nm=$(med "$dir/new" 2)
  printf '(%s) baseline %.4f s (%d MiB), this tree %.4f s (%d MiB): %.2fx faster\n' "$c" "$ow" $((om / 1024)) \
    "$nw" $((nm / 1024)) "$(awk "BEGIN{print ($nw > 0) ? $ow / $nw : 0}")"
done
