#!/bin/sh
# quickstart.sh: install what is missing, build servesim, and run the built-in
# default scenario (Llama-3.1-70B on 4 x H200, vLLM, the bundled chat trace).
# Extra arguments go to `servesim run`, e.g. ./scripts/quickstart.sh --tp 8
set -eu
cd "$(dirname "$0")/.."
./scripts/deps.sh
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build build -j"$(nproc)" >/dev/null
exec ./build/servesim run "$@"
