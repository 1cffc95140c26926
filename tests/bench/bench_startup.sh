#!/bin/sh
# bench_startup.sh: how long servesim takes to start: a one-request `run` and a `plan` (Llama-2-70B TP4 on
# H100, the measured profile h100-sxm_vllm loaded), whole-process wall time and page faults, paired against a
# baseline binary in the same run: the two binaries alternate, R rounds (default 15), medians and the ratio
# printed. Asserts nothing timed (machines are noisy). [speed] target: <= 10 ms each.
# Usage: tests/bench/bench_startup.sh [BASE_REV] [ROUNDS]
#   BASE_REV: the git revision of the baseline (default: the commit before the start-up work, 8ddce73), built
#   Release in a temporary worktree; this tree is built Release in build-bench/.
set -eu
cd "$(dirname "$0")/../.."
base_rev=${1:-8ddce73}
rounds=${2:-15}
cmake -S . -B build-bench -DCMAKE_BUILD_TYPE=Release -DSERVESIM_TESTS=OFF >/dev/null
cmake --build build-bench -j"$(nproc)" --target servesim >/dev/null
wt=$(mktemp -d /tmp/servesim_base_XXXXXX)
trap 'git worktree remove --force "$wt" >/dev/null 2>&1 || true; rm -rf "$wt"' EXIT
git worktree add -q --detach "$wt" "$base_rev"
cmake -S "$wt" -B "$wt/build" -DCMAKE_BUILD_TYPE=Release -DSERVESIM_TESTS=OFF >/dev/null
cmake --build "$wt/build" -j"$(nproc)" --target servesim >/dev/null
new=build-bench/servesim
old=$wt/build/servesim
tmp=$(mktemp)
# one measurement: wall seconds and minor page faults of BIN ARGS (run from the repository root, so both
# binaries read the same configs/ tree)
# (the clock around it: /usr/bin/time's %e has 10 ms steps)
measure() {
  t0=$(date +%s%N)
  /usr/bin/time -f "%R" -o "$tmp" "$@" >/dev/null 2>&1
  t1=$(date +%s%N)
  echo "$(awk "BEGIN{printf \"%.4f\", ($t1 - $t0) / 1e9}") $(cat "$tmp")"
}
echo "servesim start-up benchmark ($(uname -m), $(nproc) cores, $(date -u +%Y-%m-%d)): $rounds rounds, baseline $base_rev vs $(git rev-parse --short HEAD)$(git diff --quiet || echo '+changes')"
for what in run plan; do
  if [ "$what" = run ]; then args="run --model llama-2-70b --gpu h100-sxm --tp 4 --num-prompts 1 --quiet"
  else args="plan --model llama-2-70b --gpu h100-sxm --tp 4"; fi
  : > "$tmp.old"; : > "$tmp.new"
  i=0
  while [ $i -lt "$rounds" ]; do
    # shellcheck disable=SC2086
    measure "$old" $args >> "$tmp.old"
    # shellcheck disable=SC2086
    measure "$new" $args >> "$tmp.new"
    i=$((i + 1))
  done
  mid=$(( (rounds + 1) / 2 ))
  ow=$(cut -d' ' -f1 "$tmp.old" | sort -n | sed -n "${mid}p"); nw=$(cut -d' ' -f1 "$tmp.new" | sort -n | sed -n "${mid}p")
  of=$(cut -d' ' -f2 "$tmp.old" | sort -n | sed -n "${mid}p"); nf=$(cut -d' ' -f2 "$tmp.new" | sort -n | sed -n "${mid}p")
  printf '%-5s baseline %.4f s (%s page faults), this tree %.4f s (%s page faults): %.2fx faster (target: <= 0.010 s)\n' \
    "$what" "$ow" "$of" "$nw" "$nf" "$(awk "BEGIN{print ($nw > 0) ? $ow / $nw : 0}")"
done
rm -f "$tmp" "$tmp.old" "$tmp.new"
