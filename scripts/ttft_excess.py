#!/usr/bin/env python3
"""ttft_excess.py: how much of each closed-loop series' TTFT error is one completion interval.

Reads `servesim validate --csv FILE` and prints, per model, engine and engine version (the version is the
`--engine` of the method's Redo command), the median over its predicted closed-loop points of
(measured TTFT - predicted TTFT) / (measured E2E / concurrency): about 1 where every new request waited for
the next completion of another before its prefill began, about 0 where the TTFT error is not of that kind
(docs/ACCURACY.md, "The whole public set").

usage: servesim validate --csv v.csv --only aic/ --no-table; scripts/ttft_excess.py v.csv
"""
import csv
import re
import statistics
import sys
from collections import defaultdict


def main(path):
    series = defaultdict(list)
    with open(path, newline="") as f:
        for r in csv.DictReader(f):
            if r["status"] != "predicted" or r["shape"] != "closed_loop":
                continue
            try:
                mt, pt = float(r["measured_ttft_ms"]), float(r["predicted_ttft_ms"])
                tpot, osl, c = float(r["measured_tpot_ms"]), int(r["osl"]), int(r["concurrency"])
            except ValueError:
                continue
            m = re.search(r"--engine (\S+)", r["method"])
            e2e = mt + (osl - 1) * tpot
            series[(r["model"].split("/")[-1], m.group(1) if m else r["engine"])].append((mt - pt) / (e2e / c))
    print(f"{'model':44} {'engine':22} {'points':>6} {'median':>7} {'p25':>6} {'p75':>6}")
    for (model, engine), v in sorted(series.items()):
        q = statistics.quantiles(v, n=4) if len(v) > 1 else [v[0], v[0], v[0]]
        print(f"{model:44} {engine:22} {len(v):6d} {statistics.median(v):7.2f} {q[0]:6.2f} {q[2]:6.2f}")


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    main(sys.argv[1])
