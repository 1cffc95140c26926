#!/bin/sh
# validate_reference.sh: `servesim validate` on the reference set, the published files the fidelity targets
# of docs/ACCURACY.md were set and fitted on (AIConfigurator's Llama-3.1-70B and vLLM mixture-of-experts
# samples, the TensorRT-LLM 0.14 and 0.9 tables, published_facts.json, the inference-perf runs), whatever
# else ../shared/validation holds now (test_validate_cli judges the same files). Extra arguments go to validate.
#
# usage: scripts/validate_reference.sh [validate options...]
#   the binary is $SERVESIM_BIN, else build/servesim; the data $SERVESIM_SHARED_DIR/validation, else
#   ../shared/validation
set -eu
cd "$(dirname "$0")/.."
bin=${SERVESIM_BIN:-build/servesim}
v=${SERVESIM_SHARED_DIR:-../shared}/validation
if [ ! -d "$v" ]; then
  echo "validate_reference: no validation data at $v (set SERVESIM_SHARED_DIR)" >&2
  exit 2
fi
for f in aic_silicon_llama31_70b.csv aic_silicon_moe_h200_vllm.csv trtllm_v0.14_perf_overview_llama31_70b.csv \
  trtllm090_static_batch_llama2_70b.csv published_facts.json openloop; do
  [ -e "$v/$f" ] || { echo "validate_reference: $v/$f is missing" >&2; exit 2; }
  set -- "$@" --measurements "$v/$f"
done
exec "$bin" validate "$@"
