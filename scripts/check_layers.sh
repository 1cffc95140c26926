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
#   - a .c file under sim/ grows past 700 lines, or a function past 100 lines,
#     beyond the debts listed below (which may shrink, never grow),
#   - a file and a part split off it call each other (a circle; beyond the
#     circle debts listed below, which may shrink, never grow).
#
# Circles. A part split off a file is D/X_P.c beside D/X.c (cost_attn.c beside
# cost.c, prof_gemm.c beside prof.c). X.c may call its parts; a part calls
# nothing X.c defines: one interface, several implementations, no call back
# into the parent (the parent's shared helpers go to a leaf of their own, e.g.
# prof_read.c, kdb_rows.c). Checked with grep on the text without comments and
# string literals, where the parent's functions are the non-static functions
# X.c defines (a line at column 0 with a name and '(' that does not end in ';'):
#   (a) X_P.c names none of them followed by '(' (a call, or a declaration of
#       its own), and
#   (b) X_P.c includes no header of its module other than the public D/X.h
#       (or the module's public D/D.h) that declares one of them (a private header shared with the parent,
#       X_impl.h or the like, holds only what the parts define, the state they
#       share and static inline helpers).
# Including the public X.h is allowed: it is what every caller sees, and (a)
# still forbids calling the parent through it.
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
  if [ "$n" -gt 700 ]; then
    d=$(debt "$f")
    if [ -z "$d" ] || [ "$n" -gt "$d" ]; then
      echo "$f: $n lines (at most 700${d:+, or its listed debt $d})"
      fail=1
    fi
  fi
  # functions: a definition starts at column 0 and ends at the next '}' in column 0 (the project's style)
  awk -v f="$f" '
    /^[A-Za-z_][^=;]*\(/ && !/;$/ && !start { cand = $0; sub(/\(.*/, "", cand); n = split(cand, w, /[ *]+/); cand = w[n]; cl = NR }
    /\{$/ && !start && cl && NR - cl < 6 { start = cl; name = cand; cl = 0 }
    /^\}/ && start { len = NR - start + 1; if (len > 100) print f ":" name ":" len; start = 0 }
  ' "$f" | while IFS= read -r long; do
    key=${long%:*}
    len=${long##*:}
    d=$(debt "$key")
    if [ -z "$d" ] || [ "$len" -gt "$d" ]; then
      echo "$key: a function of $len lines (at most 100${d:+, or its listed debt $d})"
      echo x >>"${TMPDIR:-/tmp}/check_layers_fn.$$"
    fi
  done
done
if [ -s "${TMPDIR:-/tmp}/check_layers_fn.$$" ]; then fail=1; fi
rm -f "${TMPDIR:-/tmp}/check_layers_fn.$$"

# Circles (header comment): a part X_P.c must not call or privately include its parent X.c's functions.
# Debts: the parts that do today, outside sim/hw (which may only shrink).
CIRCLE_DEBTS="
"
strip_comments() { # the C text of file $1 without comments and string literals, line for line
  awk 'BEGIN { inc = 0 }
  {
    out = ""; s = $0; i = 1; n = length(s)
    while (i <= n) {
      two = substr(s, i, 2)
      if (inc) { if (two == "*/") { inc = 0; i += 2 } else i++; continue }
      if (two == "/*") { inc = 1; i += 2; continue }
      if (two == "//") break
      ch = substr(s, i, 1)
      if (ch == "\"") {
        j = i + 1
        while (j <= n && substr(s, j, 1) != "\"") { if (substr(s, j, 1) == "\\") j++; j++ }
        out = out "\"\""; i = j + 1; continue
      }
      out = out ch; i++
    }
    print out
  }' "$1"
}
parent_fns() { # the non-static functions file $1 defines, as an extended-regex alternation
  strip_comments "$1" | awk '/^[A-Za-z_]/ && !/^static/ && !/^typedef/ && /\(/ && !/;[ \t]*$/ {
    s = $0; sub(/\(.*/, "", s); n = split(s, w, /[ *]+/); if (w[n] != "") print w[n] }' | sort -u | paste -sd'|' -
}
for part in sim/*/*_*.c; do
  dir=${part%/*}
  base=${part##*/}
  parent=$dir/${base%%_*}.c
  [ -f "$parent" ] || continue
  echo "$CIRCLE_DEBTS" | grep -qx "$part" && continue
  fns=$(parent_fns "$parent")
  [ -n "$fns" ] || continue
  calls=$(strip_comments "$part" | grep -Eno "(^|[^A-Za-z0-9_])($fns) *\(" | sed -E 's/^([0-9]+):[^A-Za-z_]*([A-Za-z_0-9]+).*/\1:\2/' | head -3 | tr '\n' ' ')
  if [ -n "$calls" ]; then
    echo "$part: calls what its parent $parent defines (line:name): $calls(a circle: move it to a leaf both call)"
    fail=1
  fi
  for h in $(grep -o '^#include "[a-z_0-9]*/[a-z_0-9]*\.h"' "$part" | sed 's/^#include "//; s/"$//'); do
    [ "sim/$h" = "$dir/${base%%_*}.h" ] && continue
    [ "sim/$h" = "$dir/${dir##*/}.h" ] && continue # the module's own public header (validate/validate.h)
    [ "sim/${h%%/*}" = "$dir" ] || continue
    decl=$(strip_comments "sim/$h" | grep -Eo "(^|[^A-Za-z0-9_])($fns) *\(" | tr -d ' *(' | sort -u | head -3 | tr '\n' ' ')
    if [ -n "$decl" ]; then
      echo "$part: includes sim/$h, which declares what its parent $parent defines: $decl(a circle)"
      fail=1
    fi
  done
done

# Defaults once: below config/, no deployment field is defaulted again ("d->tp ? d->tp : 1"): cfg_resolve fills
# every setting (config/settings.c) and only resolved values go below config/.
F='tp|pp|dp|replicas|gpus_per_node|max_num_seqs|max_num_batched_tokens|block_size|max_model_len|long_prefill_token_threshold|moe_ep|gpu_memory_utilization'
redefault=$(grep -nE "(->|\.)($F) *\?" sim/*/*.c sim/*/*.h | grep -v '^sim/config/' || true)
if [ -n "$redefault" ]; then
  echo "$redefault" | sed 's/$/  <- a deployment setting defaulted again below config\/ (cfg_resolve fills it once)/'
  fail=1
fi

if [ "$fail" -ne 0 ]; then
  echo "check_layers: FAILED (floors and limits: scripts/check_layers.sh, docs/ARCHITECTURE.md)"
  exit 1
fi
echo "check_layers: ok (no upward include, no module cycle, no file-part circle, sizes within limits and listed debts)"
