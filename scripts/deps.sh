#!/bin/sh
# deps.sh [fuzz|slurm|serve|report]: install the Debian 12 packages servesim needs, if any are missing
# ("fuzz": also clang and its libFuzzer runtime, for scripts/fuzz.sh; "slurm": munge and slurm-wlm, for
# the Slurm integration test, tests/slurm/, and scripts/slurm/ on a machine that submits jobs; "serve":
# python3-aiohttp, curl and wrk, the clients of `servesim serve`'s test, tests/serve/, and benchmark,
# tests/bench/bench_serve.sh); "report": chromium, which renders the HTML reports in tests/report/).
# Sourced by quickstart.sh and test.sh; safe to run again (installs nothing
# when everything is present). Needs root (or sudo) only when installing.
set -eu
need="build-essential cmake pkg-config libuv1-dev libcjson-dev libcriterion-dev libxml2-utils zlib1g-dev libhttp-parser-dev"
if [ "${1:-}" = fuzz ]; then need="$need clang libclang-rt-dev"; fi
if [ "${1:-}" = slurm ]; then need="munge slurm-wlm"; fi
if [ "${1:-}" = serve ]; then need="python3 python3-aiohttp curl wrk"; fi
if [ "${1:-}" = report ]; then need="python3 chromium"; fi
missing=""
for p in $need; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing="$missing $p"
done
if [ -n "$missing" ]; then
  echo "servesim: installing missing packages:$missing" >&2
  SUDO=""
  if [ "$(id -u)" != 0 ]; then
    if command -v sudo >/dev/null 2>&1; then SUDO=sudo; else
      echo "servesim: need root (or sudo) to install:$missing" >&2
      exit 1
    fi
  fi
  export DEBIAN_FRONTEND=noninteractive
  $SUDO apt-get update -qq
  # shellcheck disable=SC2086
  $SUDO apt-get install -y -qq --no-install-recommends $missing >/dev/null
fi
