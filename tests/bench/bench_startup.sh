#!/bin/sh
# bench_startup.sh: how long servesim takes to start: a one-request `run` and a `plan` (Llama-2-70B TP4 on
# H100, the measured profile h100-sxm_vllm loaded), whole-process wall time and page faults, paired against a
# baseline binary in the same run: the two binaries alternate, R rounds (default 15), medians and the ratio
# printed. Asserts nothing timed (machines are noisy). [speed] target: <= 10 ms each.
# Usage: tests/bench/bench_startup.sh [BASE_REV] [ROUNDS]
#   BASE_BIN=PATH: a baseline binary already built (BASE_REV then only labels it).
#   BASE_REV: the git revision of the baseline (default: the issue's, 613a1d2), built Release in a temporary
#   worktree; this tree is built Release in build-bench/. RT=1: every measurement under `chrt -f 50` (root), so
#   that other load on a shared machine does not enter the wall times (both binaries alike).
# Three commands: `run` with its default prediction interval (3 extra seeded runs, docs/UNCERTAINTY.md; the
# baseline has no intervals), the same with --interval 0 given to this tree only (the baseline has no such flag),
# and `plan`.
set -eu
cd "$(dirname "$0")/../.."
base_rev=${1:-613a1d2}
rounds=${2:-15}
command -v python3 >/dev/null 2>&1 || { echo "bench_startup: python3 is needed for the clock (tests/bench/pair_lib.sh)" >&2; exit 2; }
. tests/bench/pair_lib.sh
trap pair_cleanup EXIT
pair_setup "$base_rev"
tmp=$(mktemp)
# one measurement: "wall_s minor_faults" of BIN ARGS (run from the repository root, so both binaries read the same
# configs/ tree)
measure() { pair_time ru_minflt "$@"; }
echo "servesim start-up benchmark ($(uname -m), $(nproc) cores, $(date -u +%Y-%m-%d)): $rounds rounds, baseline $base_rev vs $(git rev-parse --short HEAD)$(git diff --quiet || echo '+changes')${rt:+, under $rt}"
for what in run run0 plan; do
  extra=""
  case $what in
    run) args="run --model llama-2-70b --gpu h100-sxm --tp 4 --num-prompts 1 --quiet" ;;
    run0) args="run --model llama-2-70b --gpu h100-sxm --tp 4 --num-prompts 1 --quiet"; extra="--interval 0" ;;
    *) args="plan --model llama-2-70b --gpu h100-sxm --tp 4" ;;
  esac
  : > "$tmp.old"; : > "$tmp.new"
  i=0
  while [ $i -lt "$rounds" ]; do
    # shellcheck disable=SC2086
    measure "$old" $args >> "$tmp.old"
    # shellcheck disable=SC2086
    measure "$new" $args $extra >> "$tmp.new"
    i=$((i + 1))
  done
  mid=$(( (rounds + 1) / 2 ))
  ow=$(cut -d' ' -f1 "$tmp.old" | sort -n | sed -n "${mid}p"); nw=$(cut -d' ' -f1 "$tmp.new" | sort -n | sed -n "${mid}p")
  of=$(cut -d' ' -f2 "$tmp.old" | sort -n | sed -n "${mid}p"); nf=$(cut -d' ' -f2 "$tmp.new" | sort -n | sed -n "${mid}p")
  printf '%-5s baseline %.4f s (%s minor faults), this tree %.4f s (%s minor faults): %.2fx faster (target: <= 0.010 s)\n' \
    "$what" "$ow" "$of" "$nw" "$nf" "$(awk "BEGIN{print ($nw > 0) ? $ow / $nw : 0}")"
done
rm -f "$tmp" "$tmp.old" "$tmp.new"
