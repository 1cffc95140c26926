#!/bin/sh
# bench_intervals.sh: what the default prediction intervals cost (issue #43's target: at most 5x a plain run).
# Alternating batches of 10 whole-process runs of `servesim run --model llama-3.1-70b --gpu h200 --tp 4
# --num-prompts 5000 --request-rate 20 -q` with --interval 0 (plain) and with the default --interval 0.8 (three
# extra seeded runs), 5 batches each; prints the median wall and CPU time per run and their ratios. Asserts nothing
# (machines are noisy). Also `capacity` with and without --confidence 0.9 (which runs the point-estimate search
# beside the confident one).
# Usage: tests/bench/bench_intervals.sh [servesim binary]   (default build/servesim)
set -eu
cd "$(dirname "$0")/../.."
bin=${1:-build/servesim}
run="$bin run --model llama-3.1-70b --gpu h200 --tp 4 --num-prompts 5000 --request-rate 20 -q"
cap="$bin capacity --model llama-3.1-8b --gpu h100-sxm,h20 --tp 1 --num-prompts 200 --slo tpot_p99=30 --slo ttft_p99=1000 --target-rate 60 -q"
now() { date +%s.%N; }
cpu() { awk '{print $14 + $15 + $16 + $17}' /proc/$$/stat; } # this shell's and its waited-for children's CPU ticks
tick=$(getconf CLK_TCK)
batch() { # $1 = label, rest = command; prints "wall cpu" per run of a batch of 10
  shift
  c0=$(cpu); t0=$(now)
  for i in 1 2 3 4 5 6 7 8 9 10; do "$@" >/dev/null; done
  t1=$(now); c1=$(cpu)
  awk "BEGIN{printf \"%.5f %.5f\n\", ($t1 - $t0) / 10, ($c1 - $c0) / $tick / 10}"
}
median() { sort -n | awk '{v[NR]=$1} END{print v[int((NR+1)/2)]}'; }
compare() { # $1 = name, $2 = plain command, $3 = the command with intervals
  : >/tmp/bench_iv_a.$$; : >/tmp/bench_iv_b.$$
  for k in 1 2 3 4 5; do
    batch a $2 >>/tmp/bench_iv_a.$$
    batch b $3 >>/tmp/bench_iv_b.$$
  done
  wa=$(cut -d' ' -f1 /tmp/bench_iv_a.$$ | median); ca=$(cut -d' ' -f2 /tmp/bench_iv_a.$$ | median)
  wb=$(cut -d' ' -f1 /tmp/bench_iv_b.$$ | median); cb=$(cut -d' ' -f2 /tmp/bench_iv_b.$$ | median)
  awk "BEGIN{printf \"%s: plain %.1f ms wall %.1f ms CPU; with %.1f ms wall %.1f ms CPU: %.2fx wall, %.2fx CPU\n\", \
    \"$1\", $wa * 1000, $ca * 1000, $wb * 1000, $cb * 1000, $wb / $wa, $cb / $ca}"
  rm -f /tmp/bench_iv_a.$$ /tmp/bench_iv_b.$$
}
echo "servesim interval cost ($(uname -m), $(nproc) cores, $(date -u +%Y-%m-%d))"
compare "run, default intervals (3 extra seeds) vs --interval 0" "$run --interval 0" "$run"
compare "capacity, --confidence 0.9 vs the point estimate" "$cap" "$cap --confidence 0.9"
