#!/bin/sh
# result_checksums.sh BIN [--check FILE]: runs servesim BIN over a fixed set of
# commands (the bundled scenarios, a MoE and a pipeline-parallel run, a
# what-if with its baseline, plan, sweep, capacity and, when ../shared is
# there, validate on two pinned measurement files) and prints an MD5 of every
# output file.
#
#   without --check: prints the listing (run it with the binaries of two
#     commits and diff: a refactoring leaves every line identical;
#     docs/ARCHITECTURE.md)
#   --check FILE: compares the listing with FILE (tests/data/result_checksums.txt,
#     CTest's result_checksums), line by line for the files this run wrote
#     (without ../shared the MoE run and validate are not run and not
#     compared); prints the differences and exits 1 on any. A change that
#     means to change an output regenerates FILE in the same commit:
#       scripts/result_checksums.sh build/servesim > tests/data/result_checksums.txt
#     and its message names the outputs that changed and why.
#
# Outputs are deterministic (no wall times in files). They go to
# .result-sums/ in the repository (replaced on every call; ignored by git): a
# relative path, because reports quote their own command line.
set -eu
bin=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
check=""
if [ "${2:-}" = "--check" ]; then check=$(cd "$(dirname "$3")" && pwd)/$(basename "$3"); fi
cd "$(dirname "$0")/.."
out=.result-sums
rm -rf "$out"
mkdir -p "$out"
q() { "$bin" "$@" --force >/dev/null 2>&1 || { echo "result_checksums: failed: servesim $*" >&2; echo x >>"$out/.failed"; }; }
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
v=../shared/validation
# pinned files: measurements added beside them change nothing here
[ -f $v/trtllm090_static_batch_llama2_70b.csv ] && [ -f $v/aic_silicon_moe_h200_vllm.csv ] &&
  q validate --measurements $v/trtllm090_static_batch_llama2_70b.csv --measurements $v/aic_silicon_moe_h200_vllm.csv \
    --json "$out/validate.json" --csv "$out/validate.csv"
sums=$(cd "$out" && md5sum -- *)
if [ -z "$check" ]; then
  echo "$sums"
  exit 0
fi
bad=0
echo "$sums" | while read -r sum file; do
  want=$(awk -v f="$file" '$2 == f { print $1 }' "$check")
  if [ -z "$want" ]; then
    echo "result_checksums: $file is not in $check (a new output: regenerate the file)"
    echo x >>"$out/.bad"
  elif [ "$want" != "$sum" ]; then
    echo "result_checksums: $file changed ($sum, was $want): an output differs from $check; if the change is meant,"
    echo "  regenerate it (scripts/result_checksums.sh build/servesim > tests/data/result_checksums.txt) and say why"
    echo x >>"$out/.bad"
  fi
done
[ -f "$out/.bad" ] && bad=1
[ -f "$out/.failed" ] && bad=1
n=$(echo "$sums" | wc -l)
if [ "$bad" -ne 0 ]; then exit 1; fi
echo "result_checksums: the $n outputs are byte-identical to $check"
