#!/bin/sh
# test_serve.sh BIN: CTest entry of tests/serve/test_serve.py (`servesim serve` against a real streaming
# client). It needs Debian's python3 with aiohttp (python3-aiohttp): installed here when missing and we
# are root (scripts/deps.sh serve), else the test is skipped (exit 77) with the reason.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
bin=$1
py=/usr/bin/python3
if ! "$py" -c 'import aiohttp' 2>/dev/null; then
  if [ "$(id -u)" = 0 ]; then
    "$here/../../scripts/deps.sh" serve
  else
    echo "SKIP: $py with aiohttp (Debian python3-aiohttp) is needed; run scripts/deps.sh serve as root"
    exit 77
  fi
fi
exec "$py" "$here/test_serve.py" "$bin"
