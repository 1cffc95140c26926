#!/bin/sh
# make_traces.sh: regenerate the traces servesim ships (traces/*.csv) with
# servesim's own generator. Deterministic: running it again gives
# byte-identical files (tests/integration/test_traces.c checks this).
#
# chat_default.csv: 10 minutes of chat-like traffic for the default scenario.
# Shape chosen to resemble the public Azure LLM inference 2023 conversation
# trace (prompt p50 1020 / p90 2735 tokens, output p50 129 / p90 424, mean
# rate 5.5 req/s, inter-arrival CV about 1.1; see ../shared/traces/SOURCES.md):
# lognormal lengths fitted to those medians and p90s
# (sigma = ln(p90/p50) / 1.2816), gamma arrivals with burstiness 0.85
# (CV = 1/sqrt(0.85) = 1.08). No real trace data is copied.
set -eu
cd "$(dirname "$0")/.."
bin=${SERVESIM:-./build/servesim}
out=${TRACES_OUT_DIR:-traces}
"$bin" gen-trace --num-prompts 3300 --request-rate 5.5 --burstiness 0.85 \
  --input-dist lognormal --input-median 1020 --input-sigma 0.77 --input-max 14000 \
  --output-dist lognormal --output-median 129 --output-sigma 0.93 --output-max 1000 \
  --seed 2026 --out "$out/chat_default.csv" --force
