# common.sh: sourced by reports/<study>/run.sh. Finds the servesim binary and
# the shared traces, and runs from the study's folder through a `shared`
# symlink so that commands, reports and JSON show `shared/traces/...` rather
# than a path of this machine (the outputs are committed and must not depend
# on where the repository lives).
set -eu
STUDY_DIR=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$STUDY_DIR/../.." && pwd)
BIN=${SERVESIM_BIN:-$ROOT/build/servesim}
if [ ! -x "$BIN" ]; then
  echo "error: $BIN not found: build servesim first (cmake -S . -B build && cmake --build build -j) or set SERVESIM_BIN" >&2
  exit 1
fi
SHARED_IN=${SERVESIM_SHARED_DIR:-$ROOT/../shared}
# absolute, resolved from the caller's directory (a relative SERVESIM_SHARED_DIR means from where you are)
SHARED_IN=$(cd "$SHARED_IN" 2>/dev/null && pwd || echo "$SHARED_IN")

# need_trace NAME: fails with a clear message when shared/traces/NAME is absent.
need_trace() {
  if [ ! -f "$SHARED_IN/traces/$1" ]; then
    echo "error: trace $SHARED_IN/traces/$1 not found." >&2
    echo "The Azure traces are not part of the repository (a fresh clone has none): put them in ../shared/traces" >&2
    echo "beside the repository, or set SERVESIM_SHARED_DIR to the folder that holds traces/$1." >&2
    exit 1
  fi
}

cd "$STUDY_DIR"
ln -sfn "$SHARED_IN" shared
trap 'rm -f "$STUDY_DIR/shared"' EXIT
export LC_ALL=C
