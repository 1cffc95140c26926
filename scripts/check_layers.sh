#!/bin/sh
# check_layers.sh: the floor plan of sim/, checked on every test run (CTest:
# check_layers). Exits non-zero, naming the file and line, when
#   - a module includes a module of its own floor or a higher one (an upward
#     include; with strict floors this also rules out every module cycle),
#   - a file includes a sim/ module this table does not know (add it here,
#     on its floor, and to docs/ARCHITECTURE.md),
#   - a module above the runner includes serve/ (the run-result boundary:
#     reports, studies, validation and commands read runner/result.h, never
#     the live simulation),
#   - a .c file under sim/ grows past 800 lines, or a function past 120 lines,
#     beyond the debts listed below (which may shrink, never grow).
#
# Floors, lowest first (a module includes only modules of lower floors):
#   0 core                       common types, errors, DES clock, RNG, JSON and CSV writers, thread pool
#   1 config workload            configs and scenarios; traces and generated workloads
#   2 model                      per-GPU shapes of a model (one place)
#   3 hw                         kernel tables, cost model, memory plan, profiles
#   4 metrics                    what a run measured, vLLM's benchmark definitions
#   5 serve                      scheduler, KV cache manager, router, cluster
#   6 runner live                the two drivers of a simulation: one run (config -> cost -> engine -> metrics
#                                -> result; bottleneck verdict), and `serve` (the cluster behind HTTP, live time)
#   7 plan validate calib        studies (plan, sweep, capacity), validation against measurements, calibration
#   8 report                     writers of run and study results (text, JSON, CSV, Markdown, HTML)
#   9 cli                        commands and flags
set -eu
cd "$(dirname "$0")/.."

floor_of() {
  case "$1" in
    core) echo 0 ;; config | workload) echo 1 ;; model) echo 2 ;; hw) echo 3 ;; metrics) echo 4 ;;
    serve) echo 5 ;; runner | live) echo 6 ;; plan | validate | calib) echo 7 ;; report) echo 8 ;; cli) echo 9 ;;
    *) echo "" ;;
  esac
}

fail=0
for f in sim/*/*.c sim/*/*.h; do
  mod=$(echo "$f" | cut -d/ -f2)
  mine=$(floor_of "$mod")
  if [ -z "$mine" ]; then
    echo "$f: module '$mod' has no floor in scripts/check_layers.sh"
    fail=1
    continue
  fi
  # every '#include "dir/file.h"' of a sim/ module directory
  grep -n '^#include "[a-z_]*/' "$f" | while IFS= read -r hit; do
    line=${hit%%:*}
    dep=$(echo "$hit" | sed 's/^[0-9]*:#include "\([a-z_]*\)\/.*/\1/')
    [ "$dep" = "$mod" ] && continue
    [ -d "sim/$dep" ] || continue # not a sim/ module (e.g. kernels/, cjson/)
    theirs=$(floor_of "$dep")
    if [ "$dep" = serve ] && [ "$mine" -gt 6 ]; then
      echo "$f:$line: $mod reads the simulation (serve/) past the run-result boundary: use runner/result.h"
      echo x >>"${TMPDIR:-/tmp}/check_layers.$$"
    elif [ -z "$theirs" ]; then
      echo "$f:$line: includes module '$dep', which has no floor in scripts/check_layers.sh"
      echo x >>"${TMPDIR:-/tmp}/check_layers.$$"
    elif [ "$theirs" -ge "$mine" ]; then
      echo "$f:$line: $mod (floor $mine) includes $dep (floor $theirs): an upward or sideways include"
      echo x >>"${TMPDIR:-/tmp}/check_layers.$$"
    fi
  done
done
if [ -s "${TMPDIR:-/tmp}/check_layers.$$" ]; then fail=1; fi
rm -f "${TMPDIR:-/tmp}/check_layers.$$"

# Size debts: FILE:LINES or FILE:FUNCTION:LINES, each the size today; over it fails.
DEBTS="
"
debt() { echo "$DEBTS" | awk -F: -v k="$1" '{ key = $1; for (i = 2; i < NF; i++) key = key ":" $i; if (key == k) print $NF }'; }

for f in sim/*/*.c; do
  n=$(wc -l <"$f")
  if [ "$n" -gt 800 ]; then
    d=$(debt "$f")
    if [ -z "$d" ] || [ "$n" -gt "$d" ]; then
      echo "$f: $n lines (at most 800${d:+, or its listed debt $d})"
      fail=1
    fi
  fi
  # functions: a definition starts at column 0 and ends at the next '}' in column 0 (the project's style)
  awk -v f="$f" '
    /^[A-Za-z_][^=;]*\(/ && !/;$/ && !start { cand = $0; sub(/\(.*/, "", cand); n = split(cand, w, /[ *]+/); cand = w[n]; cl = NR }
    /\{$/ && !start && cl && NR - cl < 6 { start = cl; name = cand; cl = 0 }
    /^\}/ && start { len = NR - start + 1; if (len > 120) print f ":" name ":" len; start = 0 }
  ' "$f" | while IFS= read -r long; do
    key=${long%:*}
    len=${long##*:}
    d=$(debt "$key")
    if [ -z "$d" ] || [ "$len" -gt "$d" ]; then
      echo "$key: a function of $len lines (at most 120${d:+, or its listed debt $d})"
      echo x >>"${TMPDIR:-/tmp}/check_layers_fn.$$"
    fi
  done
done
if [ -s "${TMPDIR:-/tmp}/check_layers_fn.$$" ]; then fail=1; fi
rm -f "${TMPDIR:-/tmp}/check_layers_fn.$$"

if [ "$fail" -ne 0 ]; then
  echo "check_layers: FAILED (floors and limits: scripts/check_layers.sh, docs/ARCHITECTURE.md)"
  exit 1
fi
echo "check_layers: ok (no upward include, no module cycle, sizes within limits and listed debts)"
