#!/usr/bin/python3
"""test_serve_refusals.py: a request `servesim serve` refuses before reading it whole gets one answer, and the
connection is closed (issue [hardening], item 6: a 20 MB body was answered with the same 413 22 times).

Against a server this script starts on 127.0.0.1 (port 0) and stops by pid, each case on a raw socket that
keeps sending while it reads until EOF:
  1. a Content-Length body of 20 MB over the 16 MiB limit, streamed: one 413, before the body is read;
  2. the same body chunked (no Content-Length, refused once 16 MiB have arrived): one 413;
  3. a URL over 8 KiB: one 414;
  4. malformed HTTP followed by more bytes: one 400;
  5. headers over http-parser's 80 KiB: one 400;
each with `connection: close`, the OpenAI-style error JSON, and EOF within a few seconds; after each, a
normal request on a new connection is answered, and the server exits 0 on SIGTERM.
Only the standard library. Usage: test_serve_refusals.py SERVESIM_BIN (exit 0 pass, 1 fail)."""
import json
import re
import signal
import socket
import subprocess
import sys
import threading
import time

BIN = sys.argv[1]
FAILS = []
EOF_WITHIN_S = 5.0


def check(cond, what):
    print(("ok   " if cond else "FAIL ") + what, flush=True)
    if not cond:
        FAILS.append(what)


def start():
    p = subprocess.Popen([BIN, "serve", "--port", "0", "--quiet"], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                         text=True)
    line = p.stdout.readline()
    m = re.match(r"listening on http://127\.0\.0\.1:(\d+)", line)
    if not m:
        p.kill()
        print(p.stderr.read())
        raise SystemExit("serve did not start: %r" % line)
    return p, int(m.group(1))


def stop(p):
    if p.poll() is None:
        p.send_signal(signal.SIGTERM)
        try:
            p.wait(timeout=40)
        except subprocess.TimeoutExpired:
            p.kill()
            p.wait()
    return p.returncode


def refused(port, head, body_chunks):
    """Sends head, then body_chunks from a thread (stopping at the first send error: the server may close
    while we send) while this thread reads until EOF. Returns (bytes received, seconds from the first byte
    received to EOF, how the read ended)."""
    s = socket.create_connection(("127.0.0.1", port))
    s.settimeout(EOF_WITHIN_S + 5)
    stop_sending = threading.Event()

    def send():
        try:
            s.sendall(head)
            for chunk in body_chunks:
                if stop_sending.is_set():
                    return
                s.sendall(chunk)
        except OSError:
            pass  # reset or broken pipe: the server closed, as it should

    t = threading.Thread(target=send, daemon=True)
    t.start()
    got, first, end = b"", None, "eof"
    try:
        while True:
            chunk = s.recv(65536)
            if not chunk:
                break
            if first is None:
                first = time.perf_counter()
            got += chunk
    except socket.timeout:
        end = "timeout"
    except ConnectionResetError:
        end = "reset"
    dt = time.perf_counter() - first if first is not None else float("inf")
    stop_sending.set()
    s.close()
    t.join(timeout=10)
    return got, dt, end


def one_answer(name, got, dt, end, status, message):
    lines = re.findall(rb"HTTP/1\.[01] \d{3}", got)
    head, _, body = got.partition(b"\r\n\r\n")
    try:
        err = json.loads(body)["error"]
        body_ok = err["code"] == status and message in err["message"] and err["type"] == "BadRequestError"
    except (ValueError, KeyError, TypeError):
        body_ok = False
    check(len(lines) == 1 and lines[0].endswith(b"%d" % status),
          "%s: exactly one status line, %d (got %d: %s)" % (name, status, len(lines), b", ".join(lines[:3]).decode()))
    check(b"\r\nconnection: close\r\n" in head.lower() + b"\r\n", "%s: connection: close" % name)
    check(body_ok, "%s: the error JSON names the refusal (%r)" % (name, body[:120]))
    check(end in ("eof", "reset") and dt < EOF_WITHIN_S, "%s: the server closed it (%s after %.2f s)" % (name, end, dt))


def still_serves(name, port):
    s = socket.create_connection(("127.0.0.1", port))
    s.settimeout(5)
    s.sendall(b"GET /v1/models HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
    got = b""
    try:
        while True:
            chunk = s.recv(65536)
            if not chunk:
                break
            got += chunk
    except OSError:
        pass
    s.close()
    check(got.startswith(b"HTTP/1.1 200") and b'"object":"list"' in got,
          "%s: then a new connection is served" % name)


def main():
    p, port = start()
    try:
        mb = b"x" * (1 << 20)
        head = b"POST /v1/completions HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
        # 1. 20 MB announced, 19 MiB of it streamed (refused at the headers; answered on every read once past
        #    16 MiB, 22 times, when the refusal came from the body callback alone)
        got, dt, end = refused(port, head + b"Content-Length: 20000000\r\n\r\n", [mb] * 19)
        one_answer("Content-Length 20 MB", got, dt, end, 413, "request body too large")
        still_serves("Content-Length 20 MB", port)
        # 2. chunked: refused only when the 16 MiB limit is crossed, 20 MiB are streamed
        chunk = b"%x\r\n%s\r\n" % (len(mb), mb)
        got, dt, end = refused(port, head + b"Transfer-Encoding: chunked\r\n\r\n", [chunk] * 20)
        one_answer("chunked body over 16 MiB", got, dt, end, 413, "request body too large")
        still_serves("chunked body over 16 MiB", port)
        # 3. a URL over 8 KiB, more URL bytes behind it
        got, dt, end = refused(port, b"GET /" + b"a" * 9000, [b"a" * 65536] * 32)
        one_answer("URL over 8 KiB", got, dt, end, 414, "URL too long")
        still_serves("URL over 8 KiB", port)
        # 4. malformed HTTP, then more bytes (each of which would be malformed again)
        got, dt, end = refused(port, b"BLAH\x01 / HTTP/1.1\r\n\r\n", [b"\x01" * 65536] * 32)
        one_answer("malformed HTTP", got, dt, end, 400, "malformed HTTP request")
        still_serves("malformed HTTP", port)
        # 5. headers over http-parser's 80 KiB: malformed too, one 400
        got, dt, end = refused(port, b"GET /health HTTP/1.1\r\nX-A: ", [b"a" * 65536] * 32)
        one_answer("headers over 80 KiB", got, dt, end, 400, "malformed HTTP request")
        still_serves("headers over 80 KiB", port)
    finally:
        check(stop(p) == 0, "SIGTERM: exit 0")
    if FAILS:
        print("%d check(s) failed" % len(FAILS))
        return 1
    print("all checks passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
