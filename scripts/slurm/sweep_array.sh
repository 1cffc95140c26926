#!/bin/sh
# sweep_array.sh: run a servesim sweep as a Slurm job array, then merge.
#   scripts/slurm/sweep_array.sh -n N -d DIR [-c CPUS] [-b SERVESIM] [-p PARTITION] [-r] [-o OUTDIR] -- SWEEP_ARGS...
# Submits `sbatch --array=1-N`: task K runs `servesim sweep SWEEP_ARGS --shard K/N --part DIR/pK.part --jobs
# CPUS` on CPUS cores (--cpus-per-task), waits for the array to leave the queue, then merges every part into
# OUTDIR/sweep.csv, sweep.json and sweep.html (exactly what the unsplit sweep writes; `servesim merge`).
# -r (resume): submits only the shards whose part is missing (a failed or cancelled task), then merges.
# DIR must be on a filesystem every node sees (the binary too). Exit status: 0 merged, 1 some shards
# failed (their numbers are printed: run again with -r), 2 bad arguments or no Slurm.
set -eu
n="" dir="" cpus=1 bin="" part_name="" resume=0 out=""
while getopts n:d:c:b:p:ro: o; do
  case $o in
    n) n=$OPTARG ;; d) dir=$OPTARG ;; c) cpus=$OPTARG ;; b) bin=$OPTARG ;; p) part_name=$OPTARG ;;
    r) resume=1 ;; o) out=$OPTARG ;; *) exit 2 ;;
  esac
done
shift $((OPTIND - 1))
[ "${1:-}" = "--" ] && shift
case $n in ''|*[!0-9]*) echo "sweep_array.sh: -n N (shards) is required" >&2; exit 2 ;; esac
[ "$n" -ge 1 ] || { echo "sweep_array.sh: -n must be >= 1" >&2; exit 2; }
[ -n "$dir" ] || { echo "sweep_array.sh: -d DIR (shared by the nodes) is required" >&2; exit 2; }
[ $# -gt 0 ] || { echo "sweep_array.sh: give the sweep's arguments after --" >&2; exit 2; }
command -v sbatch >/dev/null 2>&1 || { echo "sweep_array.sh: sbatch not found (is Slurm installed?)" >&2; exit 2; }
[ -n "$bin" ] || bin=$(command -v servesim || echo "$(cd "$(dirname "$0")/../.." && pwd)/build/servesim")
[ -x "$bin" ] || { echo "sweep_array.sh: $bin is not executable (-b SERVESIM)" >&2; exit 2; }
mkdir -p "$dir"
dir=$(cd "$dir" && pwd)
out=${out:-$dir}
mkdir -p "$out"

# the shards to run: all, or (resume) those without a part
todo=""
k=1
while [ "$k" -le "$n" ]; do
  if [ "$resume" = 0 ] || [ ! -s "$dir/p$k.part" ]; then
    todo="$todo${todo:+,}$k"
    rm -f "$dir/p$k.part"
  fi
  k=$((k + 1))
done

if [ -n "$todo" ]; then
  # the task script: the sweep's arguments quoted once, here
  {
    echo "#!/bin/sh"
    echo "set -eu"
    printf 'exec %s sweep' "'$bin'"
    for a in "$@"; do printf " '%s'" "$(printf '%s' "$a" | sed "s/'/'\\\\''/g")"; done
    printf ' --jobs %s --quiet --shard "$SLURM_ARRAY_TASK_ID/%s" --part "%s/p$SLURM_ARRAY_TASK_ID.part"\n' "$cpus" "$n" "$dir"
  } >"$dir/task.sh"
  chmod +x "$dir/task.sh"
  set -- --parsable --array="$todo" --cpus-per-task="$cpus" --job-name=servesim-sweep \
    --output="$dir/task_%a.log" --error="$dir/task_%a.log"
  [ -n "$part_name" ] && set -- "$@" --partition="$part_name"
  jid=$(sbatch "$@" "$dir/task.sh")
  echo "submitted job array $jid: shards $todo of $n"
  while [ -n "$(squeue -h -j "$jid" 2>/dev/null)" ]; do sleep 1; done
fi

missing=""
parts=""
k=1
while [ "$k" -le "$n" ]; do
  if [ -s "$dir/p$k.part" ]; then parts="$parts $dir/p$k.part"; else missing="$missing $k"; fi
  k=$((k + 1))
done
if [ -n "$missing" ]; then
  echo "sweep_array.sh: shard(s)$missing of $n wrote no part (see $dir/task_K.log); run again with -r to re-run only those" >&2
  exit 1
fi
# shellcheck disable=SC2086
"$bin" merge $parts --csv "$out/sweep.csv" --json "$out/sweep.json" --report "$out/sweep.html" --force --quiet
echo "merged $n parts into $out/sweep.csv, sweep.json, sweep.html"
