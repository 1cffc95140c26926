/* svg.c: inline SVG charts for the reports (see svg.h). Coordinates are
 * printed with one decimal; text goes through svg_escape. */
#include "report/svg.h"

#include <math.h>
#include <string.h>

/* Twelve colours told apart on screen and in print (the first eight as before; grey, olive, black and light blue
 * after them); series beyond twelve repeat them with a dash pattern (svg_dash), so no two of 36 series look the
 * same. */
static const char *const PALETTE[] = {"#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b",
                                      "#e377c2", "#17becf", "#7f7f7f", "#bcbd22", "#000000", "#aec7e8"};
enum { NCOLORS = (int)(sizeof PALETTE / sizeof PALETTE[0]) };

const char *svg_color(int i) { return PALETTE[((i % NCOLORS) + NCOLORS) % NCOLORS]; }

const char *svg_dash(int i) {
  static const char *const DASH[] = {NULL, "7,3", "2,2"};
  int k = i < 0 ? 0 : i / NCOLORS;
  return DASH[k % 3];
}

/* Width of s at font size px: Helvetica's average advance is about 0.55 em for mixed text; 0.6 em is taken so
 * that an estimate never falls short of what a browser draws (tests/report checks it in Chromium). */
static double text_width(const char *s, double px) { return 0.6 * px * (double)strlen(s); }

void svg_escape(FILE *f, const char *s) {
  for (; s && *s; s++) {
    switch (*s) {
      case '&': fputs("&amp;", f); break;
      case '<': fputs("&lt;", f); break;
      case '>': fputs("&gt;", f); break;
      case '"': fputs("&quot;", f); break;
      default: fputc(*s, f);
    }
  }
}

/* 1, 2 or 5 x 10^k at or above x. */
static double nice_step(double x) {
  if (!(x > 0)) return 1;
  double p = pow(10, floor(log10(x))), m = x / p;
  return (m <= 1 ? 1 : m <= 2 ? 2 : m <= 5 ? 5 : 10) * p;
}

void svg_nice_range(double *lo, double *hi, bool log) {
  if (log) {
    if (!(*lo > 0)) *lo = *hi > 0 ? *hi / 10 : 1;
    if (!(*hi > *lo)) *hi = *lo * 10;
    *lo = pow(10, floor(log10(*lo) + 1e-9));
    *hi = pow(10, ceil(log10(*hi) - 1e-9));
    if (*hi <= *lo) *hi = *lo * 10;
    return;
  }
  if (!isfinite(*lo) || !isfinite(*hi)) *lo = 0, *hi = 1;
  if (*hi <= *lo) {
    double d = fabs(*lo) > 0 ? fabs(*lo) * 0.5 : 1;
    *lo -= d, *hi += d;
  }
  if (*lo >= 0 && *lo <= 0.3 * *hi) *lo = 0;
  double st = nice_step((*hi - *lo) / 5);
  *lo = floor(*lo / st + 1e-9) * st;
  *hi = ceil(*hi / st - 1e-9) * st;
}

static double tx(const svg_axis *a, double v) {
  if (a->log) return log10(v > 0 ? v : a->lo);
  return v;
}

/* Where v falls along axis a, as a fraction of its length clamped to [0, 1]
 * (infinities go to the ends). */
static double frac(const svg_axis *a, double v) {
  double t0 = tx(a, a->lo), t1 = tx(a, a->hi), t = isinf(v) ? (v > 0 ? t1 : t0) : tx(a, v);
  double p = (t - t0) / (t1 - t0);
  if (p < 0) p = 0;
  if (p > 1) p = 1;
  return p;
}

double svg_px(const svg_chart *c, double x) { return c->ml + frac(&c->x, x) * (c->w - c->ml - c->mr); }

double svg_py(const svg_chart *c, double y) { return c->mt + (1 - frac(&c->y, y)) * (c->h - c->mt - c->mb); }

static void fmt_tick(char *buf, size_t n, double v) {
  double a = fabs(v);
  if (a >= 1e6) snprintf(buf, n, "%gM", v / 1e6);
  else if (a >= 1e4) snprintf(buf, n, "%gk", v / 1e3);
  else snprintf(buf, n, "%.6g", v);
}

static void text(FILE *f, double x, double y, const char *anchor, double size, const char *color, const char *s) {
  fprintf(f, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"%s\" font-size=\"%.0f\" fill=\"%s\">", x, y, anchor, size,
          color);
  svg_escape(f, s);
  fputs("</text>\n", f);
}

/* Ticks of an axis into t[]; returns the count (<= max). */
static int ticks(const svg_axis *a, double *t, int max) {
  int n = 0;
  if (a->log) {
    int k0 = (int)floor(log10(a->lo) + 1e-9), k1 = (int)ceil(log10(a->hi) - 1e-9);
    bool fine = k1 - k0 <= 2;
    for (int k = k0; k <= k1 && n < max; k++) {
      double p = pow(10, k);
      const double m[] = {1, 2, 5};
      for (int i = 0; i < (fine ? 3 : 1) && n < max; i++) {
        double v = m[i] * p;
        if (v >= a->lo * (1 - 1e-9) && v <= a->hi * (1 + 1e-9)) t[n++] = v;
      }
    }
    return n;
  }
  double st = nice_step((a->hi - a->lo) / 5);
  for (double v = ceil(a->lo / st - 1e-9) * st; v <= a->hi + st * 1e-9 && n < max; v += st)
    t[n++] = fabs(v) < st * 1e-9 ? 0 : v;
  return n;
}

/* The chart's title, whole: over the plot at 13 px when it fits, else from the left edge, smaller (down to
 * 10 px), else on two lines (the plot moves down by one line; c->h was sized before, so the plot box shrinks). */
static void title_text(svg_chart *c, const char *title) {
  double avail = c->w - c->ml - c->mr, x = c->ml, px = 13;
  if (text_width(title, px) > avail) x = 6, avail = c->w - 12;
  if (text_width(title, px) > avail) px = fmax(10, floor(avail / (0.6 * (double)strlen(title))));
  if (text_width(title, px) <= avail) {
    text(c->f, x, 18, "start", px, "#222222", title);
    return;
  }
  size_t n = strlen(title), cut = n / 2; /* the space nearest the middle */
  for (size_t d = 0; d < n / 2; d++) {
    if (title[n / 2 + d] == ' ') { cut = n / 2 + d; break; }
    if (title[n / 2 - d] == ' ') { cut = n / 2 - d; break; }
  }
  char first[512];
  snprintf(first, sizeof first, "%.*s", (int)(cut < sizeof first ? cut : sizeof first - 1), title);
  const char *second = title + cut + (title[cut] == ' ');
  px = fmax(8, fmin(px, floor(avail / (0.6 * (double)fmax((double)strlen(first), (double)strlen(second))))));
  text(c->f, x, 15, "start", px, "#222222", first);
  text(c->f, x, 15 + px + 2, "start", px, "#222222", second);
  c->mt += px + 2;
}

void svg_chart_begin(svg_chart *c, FILE *f, double w, double h, const char *title, svg_axis x, svg_axis y) {
  svg_chart_begin_legend(c, f, w, h, title, x, y, 0);
}

void svg_chart_begin_legend(svg_chart *c, FILE *f, double w, double h, const char *title, svg_axis x, svg_axis y,
                            int entries) {
  memset(c, 0, sizeof *c);
  int rows = entries;
  h += 15.0 * rows + (rows ? 6 : 0);
  c->f = f, c->w = w, c->h = h, c->x = x, c->y = y;
  c->legend_cap = entries;
  c->ml = 64, c->mr = 18, c->mt = 30, c->mb = 44 + 15.0 * rows + (rows ? 6 : 0);
  fprintf(f, "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%.0f\" height=\"%.0f\" viewBox=\"0 0 %.0f %.0f\" "
             "font-family=\"Helvetica, Arial, sans-serif\" role=\"img\">\n", w, h, w, h);
  fprintf(f, "<rect x=\"0\" y=\"0\" width=\"%.0f\" height=\"%.0f\" fill=\"#ffffff\"/>\n", w, h);
  title_text(c, title);
  double x0 = c->ml, x1 = w - c->mr, y0 = c->mt, y1 = h - c->mb;
  double t[64];
  int n = ticks(&c->x, t, 64);
  char buf[32];
  for (int i = 0; i < n; i++) {
    double px = svg_px(c, t[i]);
    fprintf(f, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#e3e3e3\"/>\n", px, y0, px, y1);
    fmt_tick(buf, sizeof buf, t[i]);
    text(f, px, y1 + 15, "middle", 10, "#555555", buf);
  }
  n = ticks(&c->y, t, 64);
  for (int i = 0; i < n; i++) {
    double py = svg_py(c, t[i]);
    fprintf(f, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#e3e3e3\"/>\n", x0, py, x1, py);
    fmt_tick(buf, sizeof buf, t[i]);
    text(f, x0 - 5, py + 3.5, "end", 10, "#555555", buf);
  }
  fprintf(f, "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" fill=\"none\" stroke=\"#999999\"/>\n", x0, y0,
          x1 - x0, y1 - y0);
  text(f, (x0 + x1) / 2, y1 + 36, "middle", 11, "#333333", c->x.label ? c->x.label : "");
  fprintf(f, "<text x=\"14\" y=\"%.1f\" text-anchor=\"middle\" font-size=\"11\" fill=\"#333333\" "
             "transform=\"rotate(-90 14 %.1f)\">", (y0 + y1) / 2, (y0 + y1) / 2);
  svg_escape(f, c->y.label ? c->y.label : "");
  fputs("</text>\n", f);
}

void svg_chart_end(svg_chart *c) { fputs("</svg>\n", c->f); }

void svg_line(svg_chart *c, const double *x, const double *y, size_t n, const char *color, double width,
              const char *dash) {
  bool open = false;
  for (size_t i = 0; i < n; i++) {
    if (isnan(x[i]) || isnan(y[i])) {
      if (open) fputs("\"/>\n", c->f);
      open = false;
      continue;
    }
    if (!open) {
      fprintf(c->f, "<polyline fill=\"none\" stroke=\"%s\" stroke-width=\"%.1f\"%s%s%s stroke-linejoin=\"round\" points=\"",
              color, width, dash ? " stroke-dasharray=\"" : "", dash ? dash : "", dash ? "\"" : "");
      open = true;
    } else {
      fputc(' ', c->f);
    }
    fprintf(c->f, "%.1f,%.1f", svg_px(c, x[i]), svg_py(c, y[i]));
  }
  if (open) fputs("\"/>\n", c->f);
}

void svg_dots(svg_chart *c, const double *x, const double *y, size_t n, const char *color, double r, bool hollow) {
  for (size_t i = 0; i < n; i++) {
    if (isnan(x[i]) || isnan(y[i])) continue;
    fprintf(c->f, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"%.1f\" fill=\"%s\" stroke=\"%s\"%s/>\n", svg_px(c, x[i]),
            svg_py(c, y[i]), r, hollow ? "none" : color, color, hollow ? " stroke-width=\"1.2\"" : " fill-opacity=\"0.75\"");
  }
}

void svg_marker(svg_chart *c, double x, double y, const char *color, double r, const char *label) {
  double px = svg_px(c, x), py = svg_py(c, y);
  fprintf(c->f, "<path d=\"M %.1f %.1f L %.1f %.1f L %.1f %.1f L %.1f %.1f Z\" fill=\"%s\" stroke=\"#222222\" "
                "stroke-width=\"0.8\"/>\n",
          px, py - r, px + r, py, px, py + r, px - r, py, color);
  if (label && *label) { /* above the marker, or below it where the title would be in the way */
    bool right = px < c->w - c->mr - text_width(label, 10) - r - 6;
    double ly = py - r - 2 - 10 < c->mt ? py + r + 11 : py - r - 2;
    text(c->f, right ? px + r + 3 : px - r - 3, ly, right ? "start" : "end", 10, "#222222", label);
  }
}

void svg_vline(svg_chart *c, double x, const char *color, const char *dash, const char *label) {
  double px = svg_px(c, x);
  fprintf(c->f, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"%s\" stroke-width=\"1.5\"%s%s%s/>\n",
          px, c->mt, px, c->h - c->mb, color, dash ? " stroke-dasharray=\"" : "", dash ? dash : "", dash ? "\"" : "");
  if (label && *label) {
    bool right = px < c->w - c->mr - 120;
    double y = c->h - c->mb - 6 - 13 * (c->vlabel_n++ % 6);
    text(c->f, right ? px + 4 : px - 4, y, right ? "start" : "end", 10, color, label);
  }
}

void svg_hline(svg_chart *c, double y, const char *color, const char *dash, const char *label) {
  double py = svg_py(c, y);
  fprintf(c->f, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"%s\" stroke-width=\"1.5\"%s%s%s/>\n",
          c->ml, py, c->w - c->mr, py, color, dash ? " stroke-dasharray=\"" : "", dash ? dash : "", dash ? "\"" : "");
  if (label && *label) text(c->f, c->w - c->mr - 4, py - 4 - 10 < c->mt ? py + 13 : py - 4, "end", 10, color, label);
}

void svg_legend(svg_chart *c, const char *color, const char *s, const char *dash) {
  int k = c->legend_n++;
  double x = c->ml + 10, y = c->mt + 14 + 15 * k;
  if (k < c->legend_cap) { /* below the plot, one entry per row */
    x = c->ml + 4;
    y = c->h - c->mb + 56 + 15 * k;
  } else { /* inside the plot, on a white ground */
    fprintf(c->f, "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"15\" fill=\"#ffffff\" fill-opacity=\"0.85\"/>\n",
            x - 4, y - 11, 6.2 * (double)strlen(s) + 30);
  }
  fprintf(c->f, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"%s\" stroke-width=\"2.5\"%s%s%s/>\n", x,
          y - 4, x + 18, y - 4, color, dash ? " stroke-dasharray=\"" : "", dash ? dash : "", dash ? "\"" : "");
  text(c->f, x + 23, y, "start", 10.5, "#222222", s);
}

void svg_stacked_bars(FILE *f, double w, const char *title, const char *unit, const char *const *seg_names,
                      const char *const *seg_colors, int nseg, const char *const *bar_labels, const double *vals,
                      int nbar, double max) {
  const double row = 24, top = 30, bot = 58;
  double lw = 230, h = top + row * nbar + bot; /* the labels' column widens to the longest, up to half the chart */
  for (int b = 0; b < nbar; b++) lw = fmax(lw, fmin(w / 2, text_width(bar_labels[b], 10.5) + 16));
  if (max <= 0)
    for (int b = 0; b < nbar; b++) {
      double t = 0;
      for (int s = 0; s < nseg; s++) t += vals[b * nseg + s] > 0 ? vals[b * nseg + s] : 0;
      if (t > max) max = t;
    }
  double lo = 0, hi = max > 0 ? max : 1;
  svg_nice_range(&lo, &hi, false);
  double x0 = lw, x1 = w - 20, sc = (x1 - x0) / hi;
  fprintf(f, "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%.0f\" height=\"%.0f\" viewBox=\"0 0 %.0f %.0f\" "
             "font-family=\"Helvetica, Arial, sans-serif\" role=\"img\">\n", w, h, w, h);
  fprintf(f, "<rect x=\"0\" y=\"0\" width=\"%.0f\" height=\"%.0f\" fill=\"#ffffff\"/>\n", w, h);
  text(f, 10, 18, "start", 13, "#222222", title);
  svg_axis ax = {lo, hi, false, NULL};
  double t[32];
  int nt = ticks(&ax, t, 32);
  char buf[64];
  for (int i = 0; i < nt; i++) {
    double px = x0 + t[i] * sc;
    fprintf(f, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#e3e3e3\"/>\n", px, top,
            px, top + row * nbar);
    fmt_tick(buf, sizeof buf, t[i]);
    text(f, px, top + row * nbar + 13, "middle", 10, "#555555", buf);
  }
  text(f, (x0 + x1) / 2, top + row * nbar + 27, "middle", 11, "#333333", unit);
  for (int b = 0; b < nbar; b++) {
    double y = top + row * b + 3, x = x0;
    text(f, x0 - 6, y + 13, "end", 10.5, "#222222", bar_labels[b]);
    for (int s = 0; s < nseg; s++) {
      double v = vals[b * nseg + s];
      if (!(v > 0)) continue;
      double wd = v * sc;
      fprintf(f, "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" fill=\"%s\"><title>", x, y, wd, row - 6,
              seg_colors[s]);
      snprintf(buf, sizeof buf, "%s: %.1f", seg_names[s], v);
      svg_escape(f, buf);
      fputs("</title></rect>\n", f);
      if (wd > 34) {
        snprintf(buf, sizeof buf, "%.1f", v);
        text(f, x + wd / 2, y + 12.5, "middle", 9.5, "#ffffff", buf);
      }
      x += wd;
    }
  }
  double lx = 10, ly = h - 12;
  for (int s = 0; s < nseg; s++) {
    fprintf(f, "<rect x=\"%.1f\" y=\"%.1f\" width=\"11\" height=\"11\" fill=\"%s\"/>\n", lx, ly - 9, seg_colors[s]);
    text(f, lx + 15, ly, "start", 10.5, "#222222", seg_names[s]);
    lx += 15 + 6.3 * (double)strlen(seg_names[s]) + 16;
  }
  fputs("</svg>\n", f);
}
