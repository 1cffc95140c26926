#!/bin/sh
# specdec_published.sh: reproduces the published speculative-decoding measurements of
# configs/specdec/published.csv (docs/ACCURACY.md, "Speculative decoding"): for each row one servesim run without
# speculation and one with the row's method, k and measured acceptance length, and prints the measured and
# predicted baseline, speculative figure and speedup, with the relative error of each.
#
# usage: scripts/specdec_published.sh [ROW_ID_PREFIX]
#   the binary is $SERVESIM_BIN, else build/servesim. Rows whose id starts with ROW_ID_PREFIX only (all without).
set -eu
prefix=${1:-}
cd "$(dirname "$0")/.."
bin=${SERVESIM_BIN:-build/servesim}
csv=configs/specdec/published.csv
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT INT TERM

# the value of a top-level key of servesim's --json result
get() { sed -n "s/^  \"$2\": *\([0-9.e+-]*\),*$/\1/p" "$1" | head -n 1; }

printf '%-14s %-12s %9s %9s %6s %9s %9s %6s %7s %7s %6s\n' row metric base_meas base_pred err spec_meas \
  spec_pred err up_meas up_pred err
tail -n +2 "$csv" | while IFS=, read -r id src date eng sv gpu tp model draft method k ds client conc inl outl al \
  alfrom metric base spec dvocab; do
  case $id in "$prefix"*) ;; *) continue ;; esac
  set -- --model llama-3.1-8b --gpu "$gpu" --tp "$tp" --engine "$sv" --num-prompts 80 --max-concurrency "$conc" \
    --random-input-len "$inl" --random-output-len "$outl" --quiet --force
  extra=${dvocab:+, \"draft_vocab_size\": $dvocab}
  "$bin" run "$@" --json "$tmp/b.json" >/dev/null
  "$bin" run "$@" --json "$tmp/s.json" --speculative-config \
    "{\"method\": \"$method\", \"num_speculative_tokens\": $k, \"acceptance_length\": $al$extra}" >/dev/null
  key=mean_tpot_ms
  [ "$metric" = output_tok_s ] && key=output_throughput
  pb=$(get "$tmp/b.json" $key)
  ps=$(get "$tmp/s.json" $key)
  awk -v id="$id" -v m="$metric" -v b="$base" -v s="$spec" -v pb="$pb" -v ps="$ps" 'BEGIN {
    up = m == "tpot_ms" ? b / s : s / b; pup = m == "tpot_ms" ? pb / ps : ps / pb
    printf "%-14s %-12s %9.2f %9.2f %+5.0f%% %9.2f %9.2f %+5.0f%% %7.2f %7.2f %+5.0f%%\n", id, m, b, pb,
      100 * (pb / b - 1), s, ps, 100 * (ps / s - 1), up, pup, 100 * (pup / up - 1) }'
done
