#!/usr/bin/python3
"""bench_serve_streams.py BIN [STREAMS]: many concurrent streams against `servesim serve` at --speed 1.

Starts the server (loopback, port 0), opens STREAMS (default 300) streamed completions at once (distinct 256-token
prompts as token ids, 100 output tokens, ignore_eos), and prints the mean inter-token gap the client saw next
to the one the server recorded (/metrics, vllm:inter_token_latency_seconds): equal when every token leaves on
time, larger on the client's side when the server falls behind. Stops the server by pid. Needs aiohttp
(Debian python3-aiohttp; scripts/deps.sh serve)."""
import asyncio
import re
import signal
import subprocess
import sys
import time
import urllib.request

import aiohttp


async def one(s, url, i):
    # distinct prompts: no prefix shared
    body = {"prompt": [i + 1] + [0] * 255, "max_tokens": 100, "ignore_eos": True, "stream": True}
    last, gaps, n = None, [], 0
    async with s.post(url + "/v1/completions", json=body) as r:
        async for raw in r.content:
            if raw.startswith(b"data: {"):
                now = time.perf_counter()
                if last is not None:
                    gaps.append(now - last)
                last, n = now, n + 1
    return n, gaps


async def run(url, streams):
    async with aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=0)) as s:
        t = time.perf_counter()
        res = await asyncio.gather(*[one(s, url, i) for i in range(streams)])
        wall = time.perf_counter() - t
    gaps = [g for r in res for g in r[1]]
    return wall, sum(r[0] for r in res), sum(gaps) / len(gaps)


def main():
    bin_, streams = sys.argv[1], int(sys.argv[2]) if len(sys.argv) > 2 else 300
    p = subprocess.Popen([bin_, "serve", "--port", "0", "--quiet"], stdout=subprocess.PIPE, text=True)
    try:
        url = re.match(r"listening on (\S+)", p.stdout.readline()).group(1)
        wall, tokens, itl = asyncio.run(run(url, streams))
        text = urllib.request.urlopen(url + "/metrics").read().decode()
        val = lambda name: sum(float(l.rsplit(" ", 1)[1]) for l in text.splitlines() if l.startswith(name))
        server = val("vllm:inter_token_latency_seconds_sum") / val("vllm:inter_token_latency_seconds_count")
        print("%d concurrent streams, %d tokens in %.2f s" % (streams, tokens, wall))
        print("mean inter-token gap: client %.2f ms, server (/metrics) %.2f ms, ratio %.4f" %
              (itl * 1e3, server * 1e3, itl / server))
    finally:
        p.send_signal(signal.SIGTERM)
        p.wait(timeout=60)


if __name__ == "__main__":
    main()
