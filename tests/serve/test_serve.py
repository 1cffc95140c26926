#!/usr/bin/python3
"""test_serve.py: `servesim serve` driven by a real streaming HTTP client (aiohttp).

Checks, each against a server this script starts on 127.0.0.1 (port 0) and stops by pid:
  1. accuracy: a fixed-rate workload streamed at --speed 1 gives client-measured mean TTFT and ITL within
     10% of what `servesim run` predicts for the same requests (same arrival offsets, token-id prompts);
  2. bad requests get their status (400 malformed JSON, 400 too long with vLLM's message, 404 unknown model,
     404 unknown path, 405 wrong method) while the good ones, in flight at the same time, all complete;
  3. /metrics counts every request (success by reason, prompt and generation tokens, TTFT count) and has vLLM's
     per-request token and phase-time histograms and its per-step token histogram, well formed and summing to
     the counters;
  4. a client that disconnects mid-stream aborts its request: the abort is counted, nothing keeps running
     and the KV cache is empty again; a repeated prompt hits the prefix cache;
  5. past --max-connections the next connection gets a 503, and the others keep being served; pipelined
     requests are answered in order; malformed HTTP gets a 400; curl's Expect: 100-continue is honoured;
  6. SIGTERM with a stream in flight: the stream finishes ([DONE]) and the server exits 0;
  7. --log-interval prints vLLM's periodic engine line while requests run.
Usage: test_serve.py SERVESIM_BIN (exit 0 pass, 1 fail)."""
import asyncio
import json
import os
import re
import signal
import socket
import subprocess
import sys
import tempfile
import time

import aiohttp

BIN = sys.argv[1]
FAILS = []


def check(cond, what):
    print(("ok   " if cond else "FAIL ") + what, flush=True)
    if not cond:
        FAILS.append(what)


def start(*args, quiet=True):
    p = subprocess.Popen([BIN, "serve", "--port", "0", *(["--quiet"] if quiet else []), *args], stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True)
    line = p.stdout.readline()
    m = re.match(r"listening on http://127\.0\.0\.1:(\d+)", line)
    if not m:
        p.kill()
        print(p.stderr.read())
        raise SystemExit("serve did not start: %r" % line)
    return p, "http://127.0.0.1:%s" % m.group(1)


def stop(p):
    if p.poll() is None:
        p.send_signal(signal.SIGTERM)
        try:
            p.wait(timeout=40)
        except subprocess.TimeoutExpired:
            p.kill()
            p.wait()
    return p.returncode


async def stream_one(session, url, prompt_len, max_tokens, delay, first=0):
    """One streamed completion sent `delay` seconds from now, timed as vLLM's benchmark times it. Its prompt
    starts with `first`: distinct prompts share no prefix (as a trace's requests do in `servesim run`)."""
    await asyncio.sleep(delay)
    body = {"prompt": [first] + [0] * (prompt_len - 1), "max_tokens": max_tokens, "ignore_eos": True, "stream": True,
            "stream_options": {"include_usage": True}}
    st = time.perf_counter()
    ttft, last, itl, tokens, usage = None, st, [], 0, None
    async with session.post(url + "/v1/completions", json=body) as r:
        assert r.status == 200, r.status
        async for raw in r.content:
            line = raw.decode().strip()
            if not line.startswith("data: "):
                continue
            data = line[6:]
            if data == "[DONE]":
                break
            now = time.perf_counter()
            j = json.loads(data)
            if j.get("usage"):
                usage = j["usage"]
            if j["choices"] and j["choices"][0]["text"]:
                if ttft is None:
                    ttft = now - st
                else:
                    itl.append(now - last)
                last = now
                tokens += j["choices"][0]["text"].count(" tok")
    return ttft, itl, tokens, usage


async def bad_requests(session, url):
    out = {}
    await asyncio.sleep(0.5)
    async with session.post(url + "/v1/completions", data="{\"prompt\": [1,2") as r:
        out["malformed"] = (r.status, await r.json())
    async with session.post(url + "/v1/completions", json={"prompt": [1] * 10, "max_tokens": 200000}) as r:
        out["too_long"] = (r.status, await r.json())
    async with session.post(url + "/v1/completions", json={"prompt": "hi", "model": "nope"}) as r:
        out["model"] = (r.status, await r.json())
    async with session.get(url + "/v1/nothing") as r:
        out["path"] = (r.status, await r.text())
    async with session.get(url + "/v1/completions") as r:
        out["method"] = (r.status, await r.text())
    return out


def scrape(url):
    """/metrics: its text and {series: value}."""
    import urllib.request
    text = urllib.request.urlopen(url + "/metrics").read().decode()
    vals = {}
    for line in text.splitlines():
        if line.startswith("#") or not line:
            continue
        k, v = line.rsplit(" ", 1)
        vals[k] = float(v)
    return text, vals


def metrics(url):
    return scrape(url)[1]


# vLLM's histograms of a finished request (v0.12 vllm/v1/metrics/loggers.py) and their HELP strings
REQUEST_HISTS = {
    "vllm:request_prompt_tokens": "Number of prefill tokens processed.",
    "vllm:request_generation_tokens": "Number of generation tokens processed.",
    "vllm:request_max_num_generation_tokens": "Histogram of maximum number of requested generation tokens.",
    "vllm:request_params_max_tokens": "Histogram of the max_tokens request parameter.",
    "vllm:request_prefill_time_seconds": "Histogram of time spent in PREFILL phase for request.",
    "vllm:request_decode_time_seconds": "Histogram of time spent in DECODE phase for request.",
    "vllm:request_inference_time_seconds": "Histogram of time spent in RUNNING phase for request.",
}
ITER_HELP = "Histogram of number of tokens per engine_step."


def histogram(vals, name, engine="0"):
    """Engine `engine`'s histogram `name`: ([(le, cumulative count)] in the exposition's order, count, sum)."""
    bk = []
    for k, v in vals.items():
        m = re.match(re.escape(name) + r'_bucket\{engine="%s",le="([^"]+)",' % engine, k)
        if m:
            bk.append((float(m.group(1)), v))
    lab = '{engine="%s",' % engine
    cnt = [v for k, v in vals.items() if k.startswith(name + "_count" + lab)]
    sm = [v for k, v in vals.items() if k.startswith(name + "_sum" + lab)]
    return bk, (cnt[0] if cnt else None), (sm[0] if sm else None)


def well_formed(text, vals, name, help_):
    """HELP and TYPE lines; bounds increasing up to +Inf, counts cumulative (monotone), +Inf's = _count."""
    bk, cnt, _ = histogram(vals, name)
    return ("# HELP %s %s\n# TYPE %s histogram\n" % (name, help_, name) in text and len(bk) > 1
            and all(a[0] < b[0] and a[1] <= b[1] for a, b in zip(bk, bk[1:])) and bk[-1][0] == float("inf")
            and bk[-1][1] == cnt)


def total(vals, prefix):
    return sum(v for k, v in vals.items() if k.startswith(prefix))


async def accuracy_and_errors(tmp):
    n, rate, plen, olen = 30, 8.0, 512, 48
    trace = os.path.join(tmp, "w.csv")
    with open(trace, "w") as f:
        f.write("arrival_s,prompt_tokens,output_tokens\n")
        for i in range(n):
            f.write("%.6f,%d,%d\n" % (i / rate, plen, olen))
    pred_json = os.path.join(tmp, "pred.json")
    subprocess.run([BIN, "run", "--trace", trace, "--json", pred_json, "--quiet"], check=True)
    pred = json.load(open(pred_json))
    for attempt in (1, 2):  # one retry: a 2-core machine running other tests can stall the client
        p, url = start()
        try:
            async with aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=120)) as s:
                jobs = [stream_one(s, url, plen, olen, i / rate, first=i + 1) for i in range(n)]
                res = await asyncio.gather(*jobs, bad_requests(s, url))
            text, vals = scrape(url)
        finally:
            rc = stop(p)
        good, bad = res[:n], res[n]
        ttft = sum(r[0] for r in good) / n * 1e3
        itls = [x for r in good for x in r[1]]
        itl = sum(itls) / len(itls) * 1e3
        e_ttft = abs(ttft / pred["mean_ttft_ms"] - 1)
        e_itl = abs(itl / pred["mean_itl_ms"] - 1)
        print("attempt %d: client mean TTFT %.2f ms (servesim run %.2f, %.1f%%), mean ITL %.2f ms (servesim run %.2f, "
              "%.1f%%)" % (attempt, ttft, pred["mean_ttft_ms"], 100 * e_ttft, itl, pred["mean_itl_ms"], 100 * e_itl),
              flush=True)
        if e_ttft <= 0.10 and e_itl <= 0.10:
            break
    check(e_ttft <= 0.10, "mean TTFT within 10%% of servesim run (%.1f%%)" % (100 * e_ttft))
    check(e_itl <= 0.10, "mean ITL within 10%% of servesim run (%.1f%%)" % (100 * e_itl))
    check(all(r[2] == olen for r in good), "every streamed request got its %d tokens" % olen)
    check(all(r[3] == {"prompt_tokens": plen, "total_tokens": plen + olen, "completion_tokens": olen} for r in good),
          "usage chunk counts prompt and completion tokens")
    check(bad["malformed"][0] == 400 and "not valid JSON" in bad["malformed"][1]["error"]["message"],
          "malformed JSON -> 400")
    check(bad["too_long"][0] == 400 and bad["too_long"][1]["error"]["message"].startswith(
        "This model's maximum context length is"), "prompt + max_tokens over max_model_len -> 400, vLLM's message")
    check(bad["model"][0] == 404 and bad["model"][1]["error"]["type"] == "NotFoundError", "unknown model -> 404")
    check(bad["path"][0] == 404, "unknown path -> 404")
    check(bad["method"][0] == 405, "GET on /v1/completions -> 405")
    check(total(vals, "vllm:request_success_total{engine=\"0\",finished_reason=\"length\"") == n,
          "/metrics: %d requests finished by length" % n)
    check(total(vals, "vllm:prompt_tokens_total") == n * plen, "/metrics: prompt tokens")
    check(total(vals, "vllm:generation_tokens_total") == n * olen, "/metrics: generation tokens")
    check(total(vals, "vllm:time_to_first_token_seconds_count") == n, "/metrics: one TTFT per request")
    check(total(vals, "vllm:num_requests_running") == 0 and total(vals, "vllm:kv_cache_usage_perc") == 0,
          "/metrics: nothing running afterwards, KV cache empty")
    for name, help_ in list(REQUEST_HISTS.items()) + [("vllm:iteration_tokens_total", ITER_HELP)]:
        check(well_formed(text, vals, name, help_), "/metrics: %s has HELP/TYPE, cumulative monotone buckets" % name)
    for name in REQUEST_HISTS:
        check(histogram(vals, name)[1] == n, "/metrics: %s_count = %d finished requests" % (name, n))
    check(histogram(vals, "vllm:request_prompt_tokens")[2] == n * plen, "/metrics: request_prompt_tokens_sum = prompt "
          "tokens sent")
    check(histogram(vals, "vllm:request_generation_tokens")[2] == n * olen
          and histogram(vals, "vllm:request_max_num_generation_tokens")[2] == n * olen
          and histogram(vals, "vllm:request_params_max_tokens")[2] == n * olen,
          "/metrics: request_generation_tokens_sum = tokens generated (max_num_generation_tokens, params_max_tokens "
          "too: max_tokens = %d, ignore_eos)" % olen)
    _, it_n, it_sum = histogram(vals, "vllm:iteration_tokens_total")
    check(it_sum == total(vals, "vllm:prompt_tokens_total") + total(vals, "vllm:generation_tokens_total")
          == n * (plen + olen) and olen <= it_n <= n * olen,
          "/metrics: iteration_tokens_total_sum = prompt_tokens_total + generation_tokens_total (%s over %s steps)"
          % (it_sum, it_n))
    _, _, pre = histogram(vals, "vllm:request_prefill_time_seconds")
    _, _, dec = histogram(vals, "vllm:request_decode_time_seconds")
    _, _, inf = histogram(vals, "vllm:request_inference_time_seconds")
    _, _, ttft_sum = histogram(vals, "vllm:time_to_first_token_seconds")
    check(0 < pre <= ttft_sum and dec > 0 and abs(inf - (pre + dec)) <= 1e-6 * inf,
          "/metrics: inference time = prefill (scheduled -> first token, within TTFT) + decode (first -> last token)")
    check(rc == 0, "SIGTERM on an idle server: exit 0")


async def disconnect_and_drain():
    p, url = start()
    try:
        # a client that goes away mid-stream
        async with aiohttp.ClientSession() as s:
            body = {"prompt": [0] * 100, "max_tokens": 5000, "ignore_eos": True, "stream": True}
            async with s.post(url + "/v1/completions", json=body) as r:
                got = 0
                async for raw in r.content:
                    if raw.startswith(b"data: "):
                        got += 1
                    if got == 5:
                        break
        await asyncio.sleep(0.3)
        v = metrics(url)
        check(total(v, "vllm:request_success_total{engine=\"0\",finished_reason=\"abort\"") == 1,
              "a client gone mid-stream: its request aborted")
        check(total(v, "vllm:num_requests_running") == 0 and total(v, "vllm:kv_cache_usage_perc") == 0,
              "after the abort nothing runs and the KV cache is empty")
        check(total(v, "vllm:generation_tokens_total") < 200, "the aborted request stopped generating")
        # prefix caching across requests: the same 4000-token prompt again is mostly cached (vLLM's default)
        async with aiohttp.ClientSession() as s:
            lat = []
            for _ in range(2):
                t = time.perf_counter()
                async with s.post(url + "/v1/completions",
                                  json={"prompt": list(range(4000)), "max_tokens": 1, "ignore_eos": True}) as r:
                    await r.read()
                lat.append(time.perf_counter() - t)
        v = metrics(url)
        hits = total(v, "vllm:prefix_cache_hits_total")
        # vLLM counts a prompt's cached tokens as prompt tokens too (IterationStats: the whole prompt), so the
        # per-step histogram sums the two counters with a prefix-cache hit and an aborted request among them
        check(histogram(v, "vllm:iteration_tokens_total")[2] == total(v, "vllm:prompt_tokens_total")
              + total(v, "vllm:generation_tokens_total")
              and histogram(v, "vllm:request_prompt_tokens")[1:] == (2, 8000),
              "with prefix-cache hits and an abort: iteration_tokens_total_sum = prompt + generation tokens; "
              "request_prompt_tokens counts the 2 finished requests' whole prompts")
        check(hits >= 4000 - 16 and lat[1] * 2 < lat[0],
              "a repeated prompt hits the prefix cache (%d tokens; %.0f ms then %.0f ms)" % (hits, lat[0] * 1e3,
                                                                                               lat[1] * 1e3))
        # SIGTERM while a stream is in flight: it finishes, then the server exits 0
        async with aiohttp.ClientSession() as s:
            body = {"prompt": [0] * 100, "max_tokens": 60, "ignore_eos": True, "stream": True}
            async with s.post(url + "/v1/completions", json=body) as r:
                first = await r.content.readline()
                p.send_signal(signal.SIGTERM)
                text = (first + await r.read()).decode()
        check(text.rstrip().endswith("data: [DONE]") and text.count(" tok") == 60,
              "SIGTERM: the stream in flight finishes with its 60 tokens and [DONE]")
        p.wait(timeout=40)
        check(p.returncode == 0, "SIGTERM with a stream in flight: exit 0 after it")
    finally:
        stop(p)


async def sglang_metrics():
    # --engine sglang: /metrics under SGLang's names (sglang:*), none of vLLM's
    p, url = start("--engine", "sglang")
    try:
        async with aiohttp.ClientSession() as s:
            for _ in range(3):
                async with s.post(url + "/v1/completions",
                                  json={"prompt": [1] * 100, "max_tokens": 10, "ignore_eos": True}) as r:
                    await r.read()
        v = metrics(url)
        check(total(v, "sglang:num_requests_total") == 3 and total(v, "sglang:prompt_tokens_total") == 300
              and total(v, "sglang:generation_tokens_total") == 30
              and total(v, "sglang:time_to_first_token_seconds_count") == 3,
              "--engine sglang: /metrics counts the 3 requests under SGLang's names")
        check(not any(k.startswith("vllm:") for k in v), "--engine sglang: no vllm:* metric")
    finally:
        stop(p)


def raw_http():
    p, url = start("--max-connections", "2")
    port = int(url.rsplit(":", 1)[1])
    try:
        a = socket.create_connection(("127.0.0.1", port))
        b = socket.create_connection(("127.0.0.1", port))
        time.sleep(0.2)
        c = socket.create_connection(("127.0.0.1", port))
        c.settimeout(5)
        reply = c.recv(4096).decode()
        check(reply.startswith("HTTP/1.1 503") and "ServiceUnavailableError" in reply,
              "a connection past --max-connections gets a 503")
        a.sendall(b"GET /health HTTP/1.1\r\nHost: x\r\n\r\n")
        a.settimeout(5)
        check(a.recv(4096).startswith(b"HTTP/1.1 200"), "the connections within the limit are still served")
        for s in (a, b, c):
            s.close()
        time.sleep(0.2)
        # raw HTTP: two pipelined requests in one write are answered in order on the same connection
        a = socket.create_connection(("127.0.0.1", port))
        a.settimeout(10)
        body = b'{"prompt":[1,2,3],"max_tokens":2,"ignore_eos":true}'
        post = b"POST /v1/completions HTTP/1.1\r\nHost: x\r\nContent-Length: %d\r\n\r\n%s" % (len(body), body)
        a.sendall(post + b"GET /v1/models HTTP/1.1\r\nHost: x\r\n\r\n")
        got = b""
        while got.count(b"HTTP/1.1 200") < 2 or not got.rstrip().endswith(b"}]}"):
            chunk = a.recv(65536)
            if not chunk:
                break
            got += chunk
        first, second = got.find(b"text_completion"), got.find(b'"object":"list"')
        check(got.count(b"HTTP/1.1 200") == 2 and 0 <= first < second, "pipelined requests answered in order")
        # a malformed request gets a 400 and the connection closes; the server carries on
        a.sendall(b"BLAH\x01 / HTTP/1.1\r\n\r\n")
        reply = b""
        while True:
            chunk = a.recv(65536)
            if not chunk:
                break
            reply += chunk
        check(reply.startswith(b"HTTP/1.1 400") and b"malformed HTTP request" in reply,
              "malformed HTTP -> 400, connection closed")
        a.close()
        # curl's Expect: 100-continue (bodies over 1 KiB) is answered at once, not after curl's 1 s wait
        big = json.dumps({"prompt": "x" * 4000, "max_tokens": 1, "ignore_eos": True})
        t = time.perf_counter()
        out = subprocess.run(["curl", "-s", "-o", "/dev/null", "-w", "%{http_code}", "-H", "Expect: 100-continue",
                              "-H", "Content-Type: application/json", "--data-binary", big, url + "/v1/completions"],
                             capture_output=True, text=True)
        dt = time.perf_counter() - t
        check(out.stdout == "200" and dt < 0.9, "Expect: 100-continue answered (curl, %.0f ms)" % (dt * 1e3))
    finally:
        check(stop(p) == 0, "SIGTERM: exit 0")


def log_lines():
    """--log-interval: vLLM's periodic engine line on stderr while busy, none when idle."""
    p, url = start("--log-interval", "0.25", quiet=False)
    try:
        body = json.dumps({"prompt": [1, 2, 3], "max_tokens": 60, "ignore_eos": True}).encode()
        import urllib.request
        urllib.request.urlopen(urllib.request.Request(url + "/v1/completions", data=body,
                                                      headers={"Content-Type": "application/json"})).read()
        time.sleep(0.8)
    finally:
        rc = stop(p)
    err = p.stderr.read()
    busy = [l for l in err.splitlines() if "Engine 000: Avg prompt throughput" in l]
    check(rc == 0 and busy and "Running: 1 reqs" in busy[0] and "GPU KV cache usage" in busy[0]
          and "stopped: 1 requests served" in err, "--log-interval prints vLLM's engine line while busy")


def main():
    log_lines()
    with tempfile.TemporaryDirectory() as tmp:
        asyncio.run(accuracy_and_errors(tmp))
    asyncio.run(disconnect_and_drain())
    asyncio.run(sglang_metrics())
    raw_http()
    if FAILS:
        print("%d check(s) failed" % len(FAILS))
        return 1
    print("all checks passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
