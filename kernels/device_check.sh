#!/usr/bin/env bash
# kernels/device_check.sh: everything servesim measures on a GPU, in one call.
#
#   kernels/device_check.sh               build with CUDA, run every kernel correctness check, calibrate
#                                         Llama-3.1-70B at TP 1/2/4/8 (bf16, fp8, int4, int8 weight-only),
#                                         print achieved rates vs the measured ceilings (summary table last)
#   kernels/device_check.sh --dry-run     no GPU needed: build, print the plan and its estimated GPU time
#   kernels/device_check.sh --quick       sparser grids (about a third of the time)
#   kernels/device_check.sh --fetch-deps  (on a machine with apt) download the libuv / cJSON Debian packages
#                                         into build-deps/ (git-ignored) for a GPU machine without them;
#                                         carry build-deps with the tree (device tool: carry ["build-deps"])
# Options: --model NAME|PATH (default llama-3.1-70b), --budget SECONDS (whole script, default 480).
# DEVICE_CHECK_DIRECT=1 skips CMake and builds directly with nvcc and cc (the fallback when CMake fails);
# DEVICE_CHECK_NO_SYSDEPS=1 uses the carried packages even when the system has libuv / cJSON (tests);
# DEVICE_CHECK_BIN=PATH runs an already built servesim (a rerun on a warm machine skips the build).
# Output: $OUT if set, else ./out: device_check.log (all of it), build.log, check.log, calibrate.log,
# summary.txt and profile_<gpu>_<model>.json. Exit 0 when every check passed and the calibration
# completed. Reads the GPU's state with nvidia-smi queries only; never changes clocks or modes.
set -u
ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT"
OUT=${OUT:-$ROOT/out}
MODE=run
QUICK=
MODEL=llama-3.1-70b
BUDGET=480
while [ $# -gt 0 ]; do
  case "$1" in
    --dry-run) MODE=dry ;;
    --quick) QUICK=--quick ;;
    --fetch-deps) MODE=fetch ;;
    --model) MODEL=$2; shift ;;
    --budget) BUDGET=$2; shift ;;
    -h|--help) sed -n '2,/^[^#]/p' "$0" | sed '$d'; exit 0 ;;
    *) echo "device_check.sh: unknown option $1 (see --help)" >&2; exit 2 ;;
  esac
  shift
done
DEPS=$ROOT/build-deps
if [ "$MODE" = fetch ]; then
  mkdir -p "$DEPS/debs" && cd "$DEPS/debs" || exit 1
  apt-get download libuv1 libuv1-dev libcjson1 libcjson-dev || { echo "apt-get download failed" >&2; exit 1; }
  ls -l "$DEPS/debs"
  exit 0
fi

mkdir -p "$OUT" || exit 1
exec > >(tee -a "$OUT/device_check.log") 2>&1
T0=$(date +%s)
say() { echo "[device_check +$(( $(date +%s) - T0 ))s] $*"; }
left() { echo $(( BUDGET - ($(date +%s) - T0) )); }
STATUS=0
RESULTS=()
note() { RESULTS+=("$*"); }

say "servesim device check ($MODE${QUICK:+, quick}) in $ROOT, output in $OUT"
say "host: $(uname -m), $(nproc) CPUs, $(grep -m1 MemTotal /proc/meminfo 2>/dev/null | tr -s ' ')"
if command -v nvidia-smi >/dev/null 2>&1; then
  nvidia-smi --query-gpu=name,memory.total,driver_version,compute_cap,clocks.sm,clocks.max.sm,clocks.mem,temperature.gpu,power.draw \
    --format=csv 2>&1 | sed 's/^/  /'
else
  say "nvidia-smi not found"
fi
NVCC=$(command -v nvcc || true)
[ -z "$NVCC" ] && [ -x /usr/local/cuda/bin/nvcc ] && NVCC=/usr/local/cuda/bin/nvcc
CUDA_HOME=${CUDA_HOME:-$( [ -n "$NVCC" ] && cd "$(dirname "$NVCC")/.." && pwd )}
say "nvcc: ${NVCC:-none} $( [ -n "$NVCC" ] && "$NVCC" --version | tail -1 ); cmake: $(cmake --version 2>/dev/null | head -1); cc: $(cc --version 2>/dev/null | head -1)"

# ---- CUDA architecture: the GPU's own (compute_cap "9.0" -> 90), else both of CMakeLists.txt ----
ARCH="80;90"
CC_CAP=$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader 2>/dev/null | head -1 | tr -d ' .')
case "$CC_CAP" in [0-9][0-9]|[0-9][0-9][0-9]) ARCH=$CC_CAP ;; esac
[ "$MODE" = dry ] && [ -z "$CC_CAP" ] && ARCH="80;90"
say "CUDA architectures: $ARCH"

# ---- dependencies: libuv and cJSON from the system, else from carried Debian packages ----------
EXTRA_INC=() EXTRA_LIB=()
DEPROOT=$DEPS/root
have_sys_deps() { [ -z "${DEVICE_CHECK_NO_SYSDEPS:-}" ] && command -v pkg-config >/dev/null 2>&1 && pkg-config --exists libuv libcjson; }
if have_sys_deps; then
  say "libuv $(pkg-config --modversion libuv), cJSON $(pkg-config --modversion libcjson) from the system"
elif ! ls "$DEPS"/debs/*.deb >/dev/null 2>&1; then
  say "WARNING: libuv / cJSON development files not found by pkg-config and no build-deps/debs/*.deb carried;"
  say "  the build will fail unless the compiler finds them anyway. Fix: kernels/device_check.sh --fetch-deps on a"
  say "  machine with apt, then carry build-deps with the tree."
else
  say "libuv/cJSON not found by pkg-config: unpacking $(ls "$DEPS"/debs/*.deb | wc -l) carried packages into $DEPROOT"
  mkdir -p "$DEPROOT"
  for d in "$DEPS"/debs/*.deb; do
    if command -v dpkg-deb >/dev/null 2>&1; then dpkg-deb -x "$d" "$DEPROOT"
    else (t=$(mktemp -d) && cd "$t" && ar x "$d" && tar xf data.tar.* -C "$DEPROOT"; rm -rf "$t"); fi
  done
  LIBDIR=$DEPROOT/usr/lib/x86_64-linux-gnu
  export PKG_CONFIG_PATH=$LIBDIR/pkgconfig${PKG_CONFIG_PATH:+:$PKG_CONFIG_PATH}
  export PKG_CONFIG_SYSROOT_DIR=$DEPROOT
  export LD_LIBRARY_PATH=$LIBDIR${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
  EXTRA_INC=(-I"$DEPROOT/usr/include")
  EXTRA_LIB=(-L"$LIBDIR" -Wl,-rpath,"$LIBDIR")
fi

# ---- build: CMake first; if it fails, a direct nvcc/cc build of the same sources ------------------
BUILD=$ROOT/build-device
BIN=
build_cmake() {
  local cuda=ON
  [ -z "$NVCC" ] && cuda=OFF
  cmake -S "$ROOT" -B "$BUILD" -DCMAKE_BUILD_TYPE=Release -DSERVESIM_TESTS=OFF -DSERVESIM_CUDA=$cuda \
    -DCMAKE_CUDA_ARCHITECTURES="$ARCH" ${NVCC:+-DCMAKE_CUDA_COMPILER=$NVCC} &&
    cmake --build "$BUILD" -j"$(nproc)"
}
find_lib() { # first existing libNAME.so* under the usual CUDA places
  local n=$1 d
  for d in "$CUDA_HOME/lib64" "$CUDA_HOME/targets/x86_64-linux/lib" /usr/lib/x86_64-linux-gnu \
    $(python3 -c 'import nvidia, os; print(" ".join(os.path.join(p, s, "lib") for p in nvidia.__path__ for s in os.listdir(p)))' 2>/dev/null); do
    ls "$d"/lib"$n".so* >/dev/null 2>&1 && { ls "$d"/lib"$n".so* | head -1; return 0; }
  done
  return 1
}
build_direct() { # no CMake, no -Werror: every sim/**/*.c, kernels/*.cu and the C half of kernels/
  local o=$BUILD/direct && rm -rf "$o" && mkdir -p "$o/obj" || return 1
  local cf=(-std=c11 -O2 -D_POSIX_C_SOURCE=200809L -DSERVESIM_VERSION=\"0.1.0\" -DSERVESIM_HAVE_CUDA=1
    -I"$ROOT/sim" -I"$ROOT/kernels" -I"$CUDA_HOME/include" "${EXTRA_INC[@]}")
  local gen=() a
  for a in ${ARCH//;/ }; do gen+=(-gencode "arch=compute_$a,code=sm_$a"); done
  cc -O2 -o "$o/embedgen" scripts/embedgen.c || return 1
  (cd "$ROOT" && "$o/embedgen" "$o/embedded_data.c" "$ROOT" \
    $( (find configs -name '*.json'; find traces -name '*.csv') 2>/dev/null | LC_ALL=C sort)) || return 1
  local srcs=($(find sim -name '*.c' ! -path 'sim/cli/main.c' | sort) kernels/kern_ref.c kernels/kern_plan.c kernels/kern_host.c "$o/embedded_data.c")
  local pids=() s i=0
  for s in "${srcs[@]}"; do
    cc "${cf[@]}" -c "$s" -o "$o/obj/c$i.o" & pids+=($!); i=$((i+1))
  done
  for s in kernels/*.cu; do
    "$NVCC" -std=c++17 -O3 "${gen[@]}" -I"$ROOT/sim" -I"$ROOT/kernels" -c "$s" -o "$o/obj/u$i.o" & pids+=($!); i=$((i+1))
  done
  local ok=0 p; for p in "${pids[@]}"; do wait "$p" || ok=1; done
  [ $ok = 0 ] || return 1
  local lt rt; lt=$(find_lib cublasLt) || { echo "libcublasLt not found" >&2; return 1; }
  rt=$(find_lib cudart) || { echo "libcudart not found" >&2; return 1; }
  local main=sim/cli/main.c
  if ! grep -q cmd_calibrate sim/cli/main.c; then # calibrate not wired into main.c yet: a direct entry
    printf '%s\n' '/* generated by device_check.sh */' 'int cmd_calibrate(int argc, char **argv);' \
      'int main(int argc, char **argv) { if (argc > 1) return cmd_calibrate(argc - 1, argv + 1); return 2; }' > "$o/main.c"
    main=$o/main.c
  fi
  cc "${cf[@]}" -c "$main" -o "$o/main.o" || return 1
  local dirs=() d
  for d in "$(dirname "$lt")" "$(dirname "$rt")" ${LIBDIR:+"$LIBDIR"}; do dirs+=(-L"$d" -Wl,-rpath,"$d"); done
  c++ -o "$o/servesim" "$o/main.o" "$o"/obj/*.o "${dirs[@]}" "$rt" "$lt" -luv -lcjson -lm -ldl -lpthread
}
say "building (log: $OUT/build.log)"
if [ -n "${DEVICE_CHECK_BIN:-}" ]; then
  BIN=$DEVICE_CHECK_BIN
  say "DEVICE_CHECK_BIN set: using $BIN without building"
elif [ -z "${DEVICE_CHECK_DIRECT:-}" ] && build_cmake > "$OUT/build.log" 2>&1 && [ -x "$BUILD/servesim-cuda" ]; then
  BIN=$BUILD/servesim-cuda # the CUDA half lives in this binary; plain servesim hands calibrate over to it
  say "CMake build ok ($(grep -c 'Building' "$OUT/build.log") compile steps)"
else
  if [ -n "${DEVICE_CHECK_DIRECT:-}" ]; then say "DEVICE_CHECK_DIRECT set: direct nvcc/cc build"
  else say "CMake build failed (tail of build.log below); trying a direct nvcc/cc build"; tail -15 "$OUT/build.log" | sed 's/^/  | /'; fi
  if [ -n "$NVCC" ] && build_direct >> "$OUT/build.log" 2>&1 && [ -x "$BUILD/direct/servesim" ]; then
    BIN=$BUILD/direct/servesim
    say "direct build ok"
  else
    tail -25 "$OUT/build.log" | sed 's/^/  | /'
    say "BUILD FAILED: nothing to run"
    exit 1
  fi
fi
CAL=("$BIN" calibrate)
if ! "${CAL[@]}" --help >/dev/null 2>&1; then
  say "this servesim has no 'calibrate' command wired into sim/cli/main.c; building the direct entry"
  build_direct >> "$OUT/build.log" 2>&1 && [ -x "$BUILD/direct/servesim" ] && BIN=$BUILD/direct/servesim && CAL=("$BIN" calibrate)
  "${CAL[@]}" --help >/dev/null 2>&1 || { say "no calibrate entry point: giving up"; exit 1; }
fi
say "binary: $BIN"

# ---- the model: the bundled config, else Llama-3.1-70B's HF config.json written here --------------
if ! "${CAL[@]}" --model "$MODEL" --dry-run --tp 1 --quick >/dev/null 2>&1; then
  if [ "$MODEL" = llama-3.1-70b ]; then
    MODEL=$BUILD/llama-3.1-70b.json
    cat > "$MODEL" <<'EOF'
{"architectures": ["LlamaForCausalLM"], "attention_bias": false, "attention_dropout": 0.0, "bos_token_id": 128000,
 "eos_token_id": [128001, 128008, 128009], "hidden_act": "silu", "hidden_size": 8192, "initializer_range": 0.02,
 "intermediate_size": 28672, "max_position_embeddings": 131072, "mlp_bias": false, "model_type": "llama",
 "num_attention_heads": 64, "num_hidden_layers": 80, "num_key_value_heads": 8, "pretraining_tp": 1, "rms_norm_eps": 1e-05,
 "rope_scaling": {"factor": 8.0, "high_freq_factor": 4.0, "low_freq_factor": 1.0, "original_max_position_embeddings": 8192,
 "rope_type": "llama3"}, "rope_theta": 500000.0, "tie_word_embeddings": false, "torch_dtype": "bfloat16", "use_cache": true,
 "vocab_size": 128256}
EOF
    say "no bundled llama-3.1-70b config: using $MODEL"
  fi
  "${CAL[@]}" --model "$MODEL" --dry-run --tp 1 --quick > /dev/null || { say "model $MODEL does not load"; exit 2; }
fi
ARGS=(--model "$MODEL" --tp 1,2,4,8 --dtypes bf16,fp8,int4,int8 $QUICK)
say "plan:"
"${CAL[@]}" "${ARGS[@]}" --dry-run | sed 's/^/  /' | grep -v '^  *\(gemm\|wq\) ' | tail -22
if [ "$MODE" = dry ]; then
  say "dry run done (no GPU used)"
  exit 0
fi

# ---- correctness checks (separate process: a kernel that kills the CUDA context takes only itself) ---
say "correctness checks, one process per kernel family (log: $OUT/check.log)"
: > "$OUT/check.log"
CHECK_RC=0
for fam in gemm wq decode prefill; do
  others=$(echo gemm wq decode prefill | tr ' ' '\n' | grep -vx "$fam" | paste -sd, -)
  timeout 150 "${CAL[@]}" --check --skip "$others" >> "$OUT/check.log" 2>&1
  rc=$?
  [ $rc -gt $CHECK_RC ] && CHECK_RC=$rc
  [ $rc -ge 124 ] && echo "family-result $fam all error (the check process died: exit $rc)" >> "$OUT/check.log"
done
grep -E '^(PASS|FAIL|ERROR)' "$OUT/check.log" | sed 's/^/  /'
# a family whose check hit a CUDA error (or never ran: the process died) is left out of the calibration;
# one that merely failed its tolerance is left out per dtype by calibrate itself
SKIP=()
for fam in gemm wq decode prefill; do
  if grep -qE "^family-result $fam [a-z0-9]+ (error|not-run)" "$OUT/check.log" ||
     ! grep -qE "^family-result $fam [a-z0-9]+ (ok|fail|unsupported)" "$OUT/check.log"; then
    SKIP+=("$fam")
  fi
done
[ $CHECK_RC = 0 ] || STATUS=1
note "checks: exit $CHECK_RC, $(grep -c '^PASS' "$OUT/check.log") passed, $(grep -c '^FAIL' "$OUT/check.log") failed$( [ ${#SKIP[@]} -gt 0 ] && echo ", families left out of the calibration: ${SKIP[*]}")"
if [ "$CHECK_RC" -ge 124 ]; then say "a check process died (exit $CHECK_RC): see check.log"; fi

# ---- calibration -----------------------------------------------------------------------------------
GPU=$(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -1 | tr 'A-Z ' 'a-z-' | sed 's/^nvidia-//')
PROFILE=$OUT/profile_${GPU:-gpu}_$(basename "$MODEL" .json).json
SKIPARG=()
[ ${#SKIP[@]} -gt 0 ] && SKIPARG=(--skip "$(IFS=,; echo "${SKIP[*]}")")
REM=$(left)
TB=$(( REM - 45 )); [ $TB -lt 30 ] && TB=30
say "calibrating (time budget ${TB}s of ${REM}s left; log: $OUT/calibrate.log)"
timeout $(( TB + 120 )) "${CAL[@]}" "${ARGS[@]}" --out "$PROFILE" --force --time-budget $TB \
  --summary "$OUT/summary.txt" "${SKIPARG[@]}" > "$OUT/calibrate.log" 2>&1
CAL_RC=$?
[ $CAL_RC = 0 ] || STATUS=1
grep -E '^(probe|family-result|FAIL|ERROR|table |wrote|calibrate:)' "$OUT/calibrate.log" | grep -v '^table ' | sed 's/^/  /' | tail -30
note "calibration: exit $CAL_RC, $(grep -c '^table ' "$OUT/calibrate.log") tables measured, profile $( [ -s "$PROFILE" ] && echo "$PROFILE ($(wc -c < "$PROFILE") bytes)" || echo MISSING)"
if [ -s "$PROFILE" ]; then
  "${CAL[@]}" --loo "$PROFILE" > /dev/null 2>&1 && note "profile loads back: yes" || { note "profile loads back: NO"; STATUS=1; }
fi
nvidia-smi --query-gpu=clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv,noheader 2>/dev/null | sed 's/^/  after: /'

# ---- summary last -----------------------------------------------------------------------------------
echo
echo "================ servesim device check: summary ================"
for r in "${RESULTS[@]}"; do echo "  $r"; done
grep -E '^family-result' "$OUT/check.log" | grep -v ' skipped ' | sed 's/^/  /'
if [ -s "$OUT/summary.txt" ]; then cat "$OUT/summary.txt"; else echo "  (no calibration summary: see calibrate.log)"; tail -20 "$OUT/calibrate.log"; fi
echo "  files in $OUT: $(cd "$OUT" && ls | tr '\n' ' ')"
echo "  total $(( $(date +%s) - T0 ))s, status $STATUS"
exit $STATUS
