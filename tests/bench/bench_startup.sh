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
cmake -S . -B build-bench -DCMAKE_BUILD_TYPE=Release -DSERVESIM_TESTS=OFF >/dev/null
cmake --build build-bench -j"$(nproc)" --target servesim >/dev/null
wt=""
trap 'if [ -n "$wt" ]; then git worktree remove --force "$wt" >/dev/null 2>&1 || true; rm -rf "$wt"; fi' EXIT
if [ -n "${BASE_BIN:-}" ]; then
  old=$BASE_BIN
else
  wt=$(mktemp -d /tmp/servesim_base_XXXXXX)
  git worktree add -q --detach "$wt" "$base_rev"
  cmake -S "$wt" -B "$wt/build" -DCMAKE_BUILD_TYPE=Release -DSERVESIM_TESTS=OFF >/dev/null
  cmake --build "$wt/build" -j"$(nproc)" --target servesim >/dev/null
  old=$wt/build/servesim
fi
new=build-bench/servesim
tmp=$(mktemp)
rt=""
[ "${RT:-0}" = 1 ] && rt="chrt -f 50"
timer='
import os, resource, shutil, sys, time
argv = sys.argv[1:]
path = shutil.which(argv[0]) or argv[0]
null = [(os.POSIX_SPAWN_OPEN, fd, os.devnull, os.O_WRONLY, 0) for fd in (1, 2)]
t = time.perf_counter()
pid = os.posix_spawn(path, argv, os.environ, file_actions=null)
os.waitpid(pid, 0)
t = time.perf_counter() - t
print("%.4f %d" % (t, resource.getrusage(resource.RUSAGE_CHILDREN).ru_minflt))'
# one measurement: "wall_s minor_page_faults" of BIN ARGS (run from the repository root, so both binaries read
# the same configs/ tree). The clock is read in the process that forks the command (python3's perf_counter around
# posix_spawn and wait), so the shell's own forks stay out of it; without python3, date(1) around /usr/bin/time.
measure() {
  if command -v python3 >/dev/null 2>&1; then
    # shellcheck disable=SC2086
    $rt python3 -c "$timer" "$@"
    return
  fi
  t0=$(date +%s%N)
  # shellcheck disable=SC2086
  $rt /usr/bin/time -f "%R" -o "$tmp" "$@" >/dev/null 2>&1
  t1=$(date +%s%N)
  echo "$(awk "BEGIN{printf \"%.4f\", ($t1 - $t0) / 1e9}") $(cat "$tmp")"
}
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
