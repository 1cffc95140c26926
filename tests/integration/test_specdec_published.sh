#!/bin/sh
# test_specdec_published.sh: the table of docs/ACCURACY.md "Speculative decoding (published vLLM measurements)" is
# what scripts/specdec_published.sh prints now (the figures in the docs stay reproducible by the command beside
# them; a change that moves them regenerates the table).
#
# usage: tests/integration/test_specdec_published.sh SERVESIM_BINARY
set -eu
cd "$(dirname "$0")/../.."
[ $# -eq 1 ] || { echo "usage: $0 SERVESIM_BINARY" >&2; exit 2; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT INT TERM
awk '/^scripts\/specdec_published.sh +# every row/ { on = 1; next } on && /^```/ { exit } on' docs/ACCURACY.md \
  >"$tmp/doc.txt"
[ -s "$tmp/doc.txt" ] || { echo "test_specdec_published: no table in docs/ACCURACY.md" >&2; exit 1; }
SERVESIM_BIN=$1 sh scripts/specdec_published.sh >"$tmp/now.txt"
if ! diff "$tmp/doc.txt" "$tmp/now.txt"; then
  echo "test_specdec_published: docs/ACCURACY.md's table differs from scripts/specdec_published.sh (above)" >&2
  exit 1
fi
echo "test_specdec_published: the table in docs/ACCURACY.md is reproduced ($(wc -l <"$tmp/now.txt") lines)"
