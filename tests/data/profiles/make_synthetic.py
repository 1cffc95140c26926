#!/usr/bin/env python3
"""Writes synthetic.json: small profile tables whose times are SOL / efficiency
for the efficiencies listed here (test_prof.c holds the same numbers and checks
the interpolation against them). SOL mirrors prof_*_work in sim/hw/prof.c.
Run from this directory: python3 make_synthetic.py"""
import json, math

COPY = 4e12
PEAK = {"bf16": 8e14, "fp8": 1.6e15}

def gemm_sol(w, a, M, N, K):
    flops = 2.0 * M * N * K
    if w in ("int4", "int8") and a == "bf16":
        wb = 0.5 if w == "int4" else 1.0
        byt, peak = M * K * 2 + N * K * wb + N * (K / 128) * 2 + M * N * 2, PEAK["bf16"]
    elif w == "fp8":
        byt, peak = M * K + N * K + M * N * 2, PEAK["fp8"]
    else:
        byt, peak = (M * K + N * K + M * N) * 2, PEAK["bf16"]
    return max(flops / peak, byt / COPY) * 1e9

def decode_sol(kvb, B, L, qh, kvh, hd):
    flops = 4.0 * B * L * qh * hd
    byt = B * L * kvh * hd * 2 * kvb + 2 * B * qh * hd * 2 + B * math.ceil(L / 16) * 4
    return max(flops / PEAK["bf16"], byt / COPY) * 1e9

def prefill_sol(c, x, qh, kvh, hd):
    flops = 4.0 * qh * hd * (c * x + c * (c + 1) / 2)
    byt = (x + c) * kvh * hd * 2 * 2 + 2 * c * qh * hd * 2
    return max(flops / PEAK["bf16"], byt / COPY) * 1e9

def g(v): return float("%.17g" % v)

gemm = []
for w, a, ms, effs in [("bf16", "bf16", [1, 16, 256, 4096], [0.5, 0.6, 0.8, 0.9]),
                       ("fp8", "fp8", [1, 64, 1024], [0.4, 0.6, 0.85]),
                       ("int4", "bf16", [1, 8, 64], [0.7, 0.6, 0.3])]:
    gemm.append({"wdtype": w, "adtype": a, "n": 4096, "k": 4096, "layer": "test", "tp": 1, "kernel": "synthetic",
                 "m": ms, "ns": [g(gemm_sol(w, a, m, 4096, 4096) / e) for m, e in zip(ms, effs)]})
DEC_B, DEC_L = [1, 4, 16], [256, 1024, 4096]
DEC_E = [[0.1, 0.2, 0.4], [0.3, 0.5, 0.7], [0.6, 0.8, None]]
PRE_C, PRE_X = [16, 256, 4096], [0, 1024, 8192]
PRE_E = [[0.05, 0.1, 0.2], [0.3, 0.4, 0.5], [0.6, 0.7, None]]
dec = {"kv_dtype": "bf16", "q_heads": 8, "kv_heads": 1, "head_dim": 128, "block_size": 16, "tp": 8,
       "kernel": "synthetic", "batch": DEC_B, "kv_len": DEC_L,
       "ns": [[None if DEC_E[i][j] is None else g(decode_sol(2, b, l, 8, 1, 128) / DEC_E[i][j])
               for j, l in enumerate(DEC_L)] for i, b in enumerate(DEC_B)]}
pre = {"dtype": "bf16", "q_heads": 8, "kv_heads": 1, "head_dim": 128, "tp": 8, "kernel": "synthetic",
       "chunk": PRE_C, "ctx": PRE_X,
       "ns": [[None if PRE_E[i][j] is None else g(prefill_sol(c, x, 8, 1, 128) / PRE_E[i][j])
               for j, x in enumerate(PRE_X)] for i, c in enumerate(PRE_C)]}
prof = {"format": "servesim-profile", "version": 1, "gpu": "h200",
        "device": {"name": "synthetic test data"}, "date": "2026-01-01", "model": "test",
        "probes": {"copy_Bps": COPY, "peak_flops": PEAK, "launch_ns": {"eager": 4000, "graph": 2000}},
        "gemm": gemm, "attn_decode": [dec], "attn_prefill": [pre],
        "notes": ["synthetic: ns = SOL / efficiency, efficiencies in make_synthetic.py and test_prof.c"],
        "complete": True}
with open("synthetic.json", "w") as f:
    json.dump(prof, f, indent=1)
    f.write("\n")
