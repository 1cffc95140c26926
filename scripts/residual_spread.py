#!/usr/bin/env python3
"""residual_spread.py: how the held-out validation residuals ln(measured / predicted) spread within a model and
between models, per cost source and loop (docs/UNCERTAINTY.md, "Merging sparse strata upward").

Usage: SERVESIM_SHARED_DIR=../shared servesim validate --no-table --json points.json
       python3 scripts/residual_spread.py points.json

For each metric (mean TTFT, mean TPOT) and each group of points (cost source x loop, with '*' for either), prints
the points, the models, the standard deviation of each point's residual about its model's median ("within") and
the standard deviation of the models' medians ("between"), both population standard deviations, in ln units.
"""
import collections
import json
import math
import statistics
import sys


def residual(p, m):
    a, b = p.get("measured", {}).get(m), p.get("predicted", {}).get(m)
    return math.log(a / b) if a and b and a > 0 and b > 0 else None


def main(path):
    pts = [p for p in json.load(open(path))["points"]
           if p.get("status") == "predicted" and not p.get("train") and p.get("stratum")]
    for m in ("ttft_ms", "tpot_ms"):
        print(m)
        groups = collections.defaultdict(lambda: collections.defaultdict(list))
        for p in pts:
            r = residual(p, m)
            if r is None:
                continue
            cost, loop, _ = p["stratum"].split("/")
            for key in ((cost, loop), ("*", loop), (cost, "*")):
                groups[key][p["model"]].append(r)
        for key in sorted(groups):
            g = groups[key]
            medians = [statistics.median(v) for v in g.values()]
            within = [x - statistics.median(v) for v in g.values() for x in v]
            between = statistics.pstdev(medians) if len(medians) > 1 else 0.0
            print("  %-8s %-7s points %5d models %2d within %.2f between %.2f" %
                  (key[0], key[1], len(within), len(g), statistics.pstdev(within), between))


if __name__ == "__main__":
    main(sys.argv[1])
