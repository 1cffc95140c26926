#!/bin/sh
# bench_serve.sh: load on `servesim serve` with wrk (Debian): non-streamed /v1/completions (16-token
# prompts as token ids, 16 output tokens, ignore_eos) at a high --speed, against /health on the same
# server as the baseline (HTTP alone, no simulation). Prints requests/s, errors (non-2xx, socket
# errors), the ratio to the baseline, and the server's resident memory after a warm-up and after the
# main run (which serves at least MIN_REQUESTS requests): stable memory = no leak.
# Environment: SERVESIM_BIN (default build-release/servesim), SPEED (default 1000), CONNS (64),
# SECONDS_MAIN (30), MIN_REQUESTS (100000). Needs wrk and curl (scripts/deps.sh serve).
set -eu
cd "$(dirname "$0")/../.."
BIN=${SERVESIM_BIN:-build-release/servesim}
SPEED=${SPEED:-1000}
CONNS=${CONNS:-64}
SECS=${SECONDS_MAIN:-30}
MIN=${MIN_REQUESTS:-100000}
command -v wrk >/dev/null || { echo "bench_serve: wrk is missing (scripts/deps.sh serve)"; exit 2; }
tmp=$(mktemp -d)
trap 'kill "$pid" 2>/dev/null || true; rm -rf "$tmp"' EXIT
"$BIN" serve --port 0 --speed "$SPEED" --quiet >"$tmp/out" 2>"$tmp/err" &
pid=$!
for _ in $(seq 50); do grep -q listening "$tmp/out" 2>/dev/null && break; sleep 0.1; done
url=$(sed -n 's/^listening on //p' "$tmp/out")
[ -n "$url" ] || { cat "$tmp/err"; exit 1; }
cat >"$tmp/post.lua" <<'LUA'
wrk.method = "POST"
wrk.headers["Content-Type"] = "application/json"
wrk.body = '{"prompt":[1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16],"max_tokens":16,"ignore_eos":true}'
LUA
rss() { awk '/^VmRSS/ {print $2}' "/proc/$pid/status"; }
reqs() { awk '/requests in/ {print $1}' "$1"; }
rate() { awk '/^Requests\/sec/ {print $2}' "$1"; }
errs() { awk '/Non-2xx/ {n += $NF} /Socket errors/ {gsub(",", ""); n += $4 + $6 + $8 + $10} END {print n + 0}' "$1"; }
echo "servesim serve at $url, speed ${SPEED}x, $CONNS connections, one wrk thread; $(nproc) cores"
wrk -t1 -c"$CONNS" -d5s "$url/health" >"$tmp/base"
wrk -t1 -c"$CONNS" -d5s -s "$tmp/post.lua" "$url/v1/completions" >"$tmp/warm"
rss0=$(rss)
wrk -t1 -c"$CONNS" -d"${SECS}s" -s "$tmp/post.lua" "$url/v1/completions" >"$tmp/main"
rss1=$(rss)
n=$(reqs "$tmp/main")
served=$(curl -s "$url/metrics" | awk '/^vllm:request_success_total/ {s += $NF} END {printf "%d", s}')
printf 'baseline GET /health:             %10s req/s\n' "$(rate "$tmp/base")"
printf 'POST /v1/completions (warm-up):   %10s req/s, %s errors\n' "$(rate "$tmp/warm")" "$(errs "$tmp/warm")"
printf 'POST /v1/completions (main):      %10s req/s, %s errors, %s requests in %ss\n' "$(rate "$tmp/main")" \
  "$(errs "$tmp/main")" "$n" "$SECS"
awk -v a="$(rate "$tmp/main")" -v b="$(rate "$tmp/base")" 'BEGIN {printf "ratio completions / health:       %10.2f\n", a / b}'
echo "requests the server counted finished (/metrics, warm-up + main): $served"
printf 'server RSS after warm-up: %d KiB; after the main run: %d KiB (%+d KiB)\n' "$rss0" "$rss1" $((rss1 - rss0))
kill -TERM "$pid"
wait "$pid" && echo "server exited 0 on SIGTERM"
if [ "$n" -lt "$MIN" ]; then echo "bench_serve: only $n requests in the main run (wanted >= $MIN)"; exit 1; fi
