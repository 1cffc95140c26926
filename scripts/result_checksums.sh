#!/bin/sh
# result_checksums.sh BIN: runs servesim BIN over a fixed set of
# commands (the bundled scenarios, a MoE and a pipeline-parallel run, a
# what-if with its baseline, plan, sweep, capacity and, when ../shared is
# there, validate) and prints an MD5 of every output file. Run it with the
# binaries of two commits and diff the two listings: a refactoring must leave
# every line identical (docs/ARCHITECTURE.md). Outputs are deterministic (no
# wall times in files); they go to $TMPDIR/servesim-sums/ (replaced on every
# call), a fixed path because reports quote their own command line.
set -eu
bin=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
cd "$(dirname "$0")/.."
out=${TMPDIR:-/tmp}/servesim-sums
rm -rf "$out"
mkdir -p "$out"
q() { "$bin" "$@" --force >/dev/null 2>&1 || echo "result_checksums: failed: servesim $*" >&2; }
for s in default closed-loop-fp8-h100 llama-8b-l40s; do
  q run --scenario "$s" --json "$out/run_$s.json" --csv "$out/req_$s.csv" --timeseries "$out/ts_$s.csv" \
    --report-md "$out/run_$s.md"
done
q run --scenario default --report "$out/run_default.html"
q run --model configs/models/llama-3.1-8b.json --num-prompts 300 --request-rate 20 --fail-replica 0@5 --replicas 2 \
  --baseline --json "$out/whatif.json" --report "$out/whatif.html"
[ -f ../shared/models/openai--gpt-oss-120b.json ] &&
  q run --model ../shared/models/openai--gpt-oss-120b.json --gpu h200 --num-prompts 200 --json "$out/run_moe.json"
q run --model llama-3.1-405b --tp 8 --pp 2 --num-prompts 200 --json "$out/run_pp.json"
q plan --model llama-2-70b --gpu l40s --engine trtllm --tp 4 --json "$out/plan.json"
q sweep --tp 2,4 --max-num-seqs 64,128 --num-prompts 100 --json "$out/sweep.json" --csv "$out/sweep.csv"
q capacity --slo ttft_p99=2000 --slo tpot_p99=50 --target-rate 10 --tp 4,8 --num-prompts 200 --json "$out/cap.json"
[ -d ../shared/validation ] && q validate --json "$out/validate.json" --csv "$out/validate.csv"
(cd "$out" && md5sum -- *)
