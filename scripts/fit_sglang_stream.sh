#!/bin/sh
# fit_sglang_stream.sh: the one SGLang parameter fitted on measurements,
# stream_per_seq_us (configs/engines/sglang.json; what it models and its
# argued range 20..60 us: docs/SGLANG.md 8), reproducibly.
#
# Training subset: AIConfigurator's Llama-3.1-8B H200 TP8 rows
# (`--only llama-3.1-8b/h200/sglang/tp8`, 9 points), the rows whose decode
# steps the output path bounds most plainly (their GPU step is a third of the
# measured one). Everything else is held out: TP1, TP2 and TP4 of the same
# model (TP4 is the check that the cost does not shrink with TP), Qwen3-32B,
# Qwen3-235B, DeepSeek-V3/R1, GLM-5, Qwen3.5 (docs/ACCURACY.md, SGLang).
# Objective: the median |error| of TPOT over the training points (TTFT is left
# out: the clients' phase decides it there, issue #39). Grid: 20..60 us in
# steps of 1; the smallest value at the minimum wins (deterministic).
#
# usage: SERVESIM_SHARED_DIR=../shared sh scripts/fit_sglang_stream.sh [build/servesim]
set -eu
BIN=${1:-build/servesim}
ONLY=llama-3.1-8b/h200/sglang/tp8
best=""
bestv=""
v=20
while [ "$v" -le 60 ]; do
  e=$("$BIN" validate --no-table --only "$ONLY" --param "sglang.stream_per_seq_us=$v" 2>/dev/null |
    awk '$1 == "tpot_ms" { sub("%", "", $3); print $3; exit }')
  [ -n "$e" ] || { echo "fit_sglang_stream.sh: no TPOT summary at $v us (is SERVESIM_SHARED_DIR set?)" >&2; exit 2; }
  printf 'stream_per_seq_us %2d  training TPOT median |e| %s%%\n' "$v" "$e"
  if [ -z "$best" ] || awk -v a="$e" -v b="$best" 'BEGIN { exit !(a < b) }'; then best=$e bestv=$v; fi
  v=$((v + 1))
done
echo "best: stream_per_seq_us $bestv (training TPOT median |e| $best%)"
