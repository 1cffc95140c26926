#!/bin/sh
# test.sh: build servesim and run the whole test suite twice (with munge and slurm-wlm installed, so the
# Slurm job-array test runs a real one-node cluster, tests/slurm/, and with python3-aiohttp, curl and wrk,
# so `servesim serve` is driven by a real streaming client, tests/serve/, and with chromium, which renders
# the HTML reports at 1400 px, tests/report/): a normal build
# (with the CUDA kernels compiled where nvcc exists) and an AddressSanitizer +
# UndefinedBehaviorSanitizer build; build the quick start's Release binary
# (-O3 warns where -O2 does not) and run the default scenario with it; then
# every libFuzzer target of tests/fuzz for 20 s from its corpus (clang).
# Exits non-zero if anything fails.
set -eu
cd "$(dirname "$0")/.."
./scripts/deps.sh
./scripts/deps.sh slurm
./scripts/deps.sh serve
./scripts/deps.sh report
jobs=$(nproc)
export LC_ALL=C
echo "== normal build (build/) =="
cmake -S . -B build -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build build -j"$jobs"
(cd build && ctest --output-on-failure -j"$jobs")
echo "== ASan + UBSan build (build-asan/) =="
cmake -S . -B build-asan -DCMAKE_BUILD_TYPE=Debug -DSERVESIM_SANITIZE=ON -DSERVESIM_CUDA=OFF >/dev/null
cmake --build build-asan -j"$jobs"
(cd build-asan && ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 ctest --output-on-failure -j"$jobs")
echo "== Release build (build-release/), the quick start's configuration =="
cmake -S . -B build-release -DCMAKE_BUILD_TYPE=Release -DSERVESIM_TESTS=OFF >/dev/null
cmake --build build-release -j"$jobs" --target servesim
./build-release/servesim run --max-requests 300 >/dev/null
echo "== fuzz targets, 20 s each (build-fuzz/, clang) =="
./scripts/deps.sh fuzz
./scripts/fuzz.sh 20
