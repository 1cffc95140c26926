#!/usr/bin/env python3
"""test_report_render.py: the HTML reports of `run`, `sweep`, `capacity` and `validate`, rendered by headless Chromium at
1400 px wide as a reader sees them ([planner]: titles clipped, labels over titles, series sharing a colour).

For each report: the page renders (its headings and charts are there), no text of a chart leaves the chart
(every <text> box inside its <svg>'s viewBox), no text of a chart overlaps the chart's title, no two series of a
chart are drawn alike (colour and dash pattern), the page is not wider than the window, and a screenshot at
1400 px is written (REPORT_SHOTS=DIR keeps them there: docs/report.png is one of them).

Usage: test_report_render.py SERVESIM   (exit 77 = skipped: no Chromium here)
"""
import os
import re
import shutil
import struct
import subprocess
import sys
import tempfile

CHECK = r"""
<script>
(function () {
  var bad = [], svgs = document.querySelectorAll('svg');
  function box(t, sv) { /* on the page (rotation applied), relative to the chart's corner */
    var b = t.getBoundingClientRect(), o = sv.getBoundingClientRect();
    return {x: b.left - o.left, y: b.top - o.top, w: b.width, h: b.height};
  }
  function meets(a, b) { return a.x < b.x + b.w - 0.5 && b.x < a.x + a.w - 0.5 && a.y < b.y + b.h - 0.5 && b.y < a.y + a.h - 0.5; }
  svgs.forEach(function (sv, i) {
    var o = sv.getBoundingClientRect(), W = o.width, H = o.height;
    var texts = sv.querySelectorAll('text'), title = texts.length ? box(texts[0], sv) : null;
    texts.forEach(function (t, k) {
      if (!t.textContent.trim()) return;
      var b = box(t, sv);
      if (b.x < -0.5 || b.y < -0.5 || b.x + b.w > W + 0.5 || b.y + b.h > H + 0.5)
        bad.push('chart ' + i + ': text "' + t.textContent + '" leaves the chart (' + [b.x, b.y, b.w, b.h].map(Math.round) + ' in ' + W + 'x' + H + ')');
      if (k > 0 && title && meets(b, title))
        bad.push('chart ' + i + ': text "' + t.textContent + '" overlaps the title "' + texts[0].textContent + '"');
    });
    var seen = {};
    sv.querySelectorAll('polyline').forEach(function (p) {
      var key = p.getAttribute('stroke') + '/' + (p.getAttribute('stroke-dasharray') || 'solid');
      var n = p.getAttribute('points').trim().split(/\s+/).length;
      if (n < 2) return;
      seen[key] = (seen[key] || 0) + 1;
    });
    Object.keys(seen).forEach(function (k) {
      if (seen[k] > 1) bad.push('chart ' + i + ': ' + seen[k] + ' series drawn alike (' + k + ')');
    });
  });
  if (document.documentElement.scrollWidth > window.innerWidth + 1)
    bad.push('the page is ' + document.documentElement.scrollWidth + ' px wide in a ' + window.innerWidth + ' px window');
  var pre = document.createElement('pre');
  pre.id = 'render-check';
  pre.textContent = 'HEADINGS ' + document.querySelectorAll('h1,h2').length + '\nSVGS ' + svgs.length + '\nBAD ' + bad.length + '\n' + bad.join('\n') + '\nEND';
  document.body.appendChild(pre);
})();
</script>
"""


def chromium():
    for name in ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable"):
        p = shutil.which(name)
        if p:
            return p
    return None


def browser(exe, args, timeout=120):
    return subprocess.run([exe, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
                           "--no-first-run", "--disable-dev-shm-usage"] + args,
                          capture_output=True, text=True, timeout=timeout)


def png_size(path):
    with open(path, "rb") as f:
        head = f.read(24)
    if head[:8] != b"\x89PNG\r\n\x1a\n":
        return None
    return struct.unpack(">II", head[16:24])


def check(exe, html, name, shots):
    text = open(html, encoding="utf-8").read()
    assert "</body>" in text, f"{name}: no </body>"
    probe = html + ".check.html"
    with open(probe, "w", encoding="utf-8") as f:
        f.write(text.replace("</body>", CHECK + "</body>"))
    r = browser(exe, ["--window-size=1400,2000", "--virtual-time-budget=5000", "--dump-dom", "file://" + probe])
    m = re.search(r"HEADINGS (\d+)\nSVGS (\d+)\nBAD (\d+)\n(.*?)END", r.stdout, re.S)
    if not m:
        return [f"{name}: Chromium did not render it (rc {r.returncode}): {r.stderr[-400:]}"]
    problems = []
    headings, svgs, nbad = int(m.group(1)), int(m.group(2)), int(m.group(3))
    if headings < 2 or svgs < 1:
        problems.append(f"{name}: {headings} headings and {svgs} charts rendered")
    if nbad:
        problems += [f"{name}: {line}" for line in m.group(4).strip().split("\n")]
    shot = os.path.join(shots, name + ".png")
    r = browser(exe, ["--window-size=1400,1600", "--screenshot=" + shot, "file://" + html])
    size = png_size(shot) if os.path.exists(shot) else None
    if not size or size[0] != 1400:
        problems.append(f"{name}: no 1400 px screenshot ({size}, rc {r.returncode})")
    return problems


def main():
    if len(sys.argv) != 2:
        print(__doc__)
        return 2
    exe = chromium()
    if not exe:
        print("skipped: no chromium in PATH")
        return 77
    sim = os.path.abspath(sys.argv[1])
    work = tempfile.mkdtemp(prefix="servesim_render_")
    shots = os.environ.get("REPORT_SHOTS") or work
    os.makedirs(shots, exist_ok=True)
    slo = ["--slo", "ttft_p99=400", "--slo", "tpot_p99=25"]
    runs = {
        "run": ["run", "--model", "llama-3.1-8b", "--gpu", "h100-sxm", "--num-prompts", "300", "--request-rate", "8"] + slo,
        # 16 deployments: more series than colours, each told apart by its dash pattern
        "sweep": ["sweep", "--model", "llama-3.1-8b", "--gpu", "h100-sxm,h200", "--tp", "1,2",
                  "--quantization", "none,fp8", "--max-num-seqs", "32,256", "--request-rate", "4,16",
                  "--num-prompts", "150"] + slo,
        "capacity": ["capacity", "--model", "llama-3.1-8b", "--gpu", "h100-sxm,h200", "--tp", "1,2,4",
                     "--quantization", "none,fp8", "--num-prompts", "200", "--target-rate", "30"] + slo,
        # validate --report: the open-loop stage chart and the error tables (the suite's inference-perf fixture)
        "validate": ["validate", "--data", os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "data",
                                                        "infperf", "ok"), "--no-table"],
    }
    problems = []
    for name, args in runs.items():
        html = os.path.join(work, name + ".html")
        r = subprocess.run([sim] + args + ["--report", html], capture_output=True, text=True, timeout=600)
        if r.returncode not in (0, 3) or not os.path.exists(html):
            problems.append(f"{name}: servesim exited {r.returncode}: {r.stderr[-400:]}")
            continue
        problems += check(exe, html, name, shots)
    for p in problems:
        print("FAIL", p)
    if not problems:
        print(f"ok: {len(runs)} reports rendered at 1400 px, no text outside its chart or over a title, every series "
              f"distinct (screenshots in {shots})")
    if not os.environ.get("REPORT_SHOTS"):
        shutil.rmtree(work, ignore_errors=True)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
