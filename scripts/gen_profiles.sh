#!/bin/sh
# gen_profiles.sh: regenerate the bundled measured profiles,
# configs/profiles/<gpu>_<engine>-<version>.json, from NVIDIA AIConfigurator's
# kernel database (Apache-2.0; configs/profiles/README.md) with
# `servesim calibrate --from-kernel-db`: one file per (GPU, engine, version)
# the database has for the GPU types below, and beside it
# <gpu>_<engine>-<version>.moe.json with its fused-MoE tables (loaded only for
# mixture-of-experts models, so dense runs do not parse them). The output is byte-identical
# for the same data and servesim, so a clean `git status` after running this
# means the bundled files are what the importer makes.
#
# usage: scripts/gen_profiles.sh [SERVESIM_BINARY]
#   the binary defaults to build/servesim; the database to ../shared/kernel-db
#   ($SERVESIM_KERNEL_DB overrides). Without the database it changes nothing.
set -eu
cd "$(dirname "$0")/.."
bin=${1:-build/servesim}
db=${SERVESIM_KERNEL_DB:-../shared/kernel-db}
if [ ! -d "$db" ]; then
  echo "gen_profiles: no kernel database at $db (set SERVESIM_KERNEL_DB); bundled profiles left as they are" >&2
  exit 0
fi
if [ ! -x "$bin" ]; then
  echo "gen_profiles: $bin is not built (cmake --build build first, or give the binary)" >&2
  exit 2
fi
export LC_ALL=C
for gpu in a100-sxm-80gb b200 b300 gb200 gb300 h100-sxm h200 l40s; do
  for engine in vllm trtllm sglang; do
    for v in $("$bin" calibrate --from-kernel-db "$db" --gpu "$gpu" --engine "$engine" --list-versions); do
      out="configs/profiles/${gpu}_${engine}-${v}.json"
      moe="configs/profiles/${gpu}_${engine}-${v}.moe.json"
      # b300_sxm/sglang-0.5.14: 7 tables (GEMM and attention among them) are byte copies of gb300's and say
      # device NVIDIA GB300 (the kernel database's README); imported as they are, named in the profile's
      # kernel_db.caveat and so in every run's source line
      other=""
      if [ "$gpu" = b300 ] && [ "$engine" = sglang ]; then other="NVIDIA GB300"; fi
      "$bin" calibrate --from-kernel-db "$db" --gpu "$gpu" --engine "$engine" --engine-version "$v" \
        ${other:+--other-device "$other"} --out "$out" --moe-out "$moe" --force >/dev/null
      echo "$out $(wc -c <"$out") bytes, $moe $(wc -c <"$moe") bytes"
    done
  done
done
