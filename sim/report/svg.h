/* svg.h: drawing helpers for the HTML reports: inline SVG charts (line,
 * scatter, step and stacked-bar) written straight to a FILE.
 *
 * A chart maps data to a plot box inside margins; axes are linear or log10
 * with "nice" ticks (1, 2, 5 x 10^k). Points outside the axis range, and
 * infinite values, are drawn clamped to the box edge (so "exploded" latencies
 * show at the top rather than vanish); NaN breaks a line. Everything is
 * well-formed XML (text escaped), sized in px, and deterministic (coordinates
 * printed with one decimal).
 * Usage: svg_chart_begin, any number of drawing calls, svg_chart_end. */
#ifndef SIM_SVG_H
#define SIM_SVG_H

#include <stdbool.h>
#include <stdio.h>

typedef struct svg_axis {
  double lo, hi;      /* data range shown */
  bool log;           /* log10 scale (lo > 0) */
  const char *label;  /* axis title */
} svg_axis;

typedef struct svg_chart {
  FILE *f;
  double w, h;          /* whole chart, px */
  double ml, mr, mt, mb; /* margins: left, right, top, bottom, px */
  svg_axis x, y;
  int legend_n;         /* legend entries drawn so far */
  int vlabel_n;         /* vertical-line labels drawn so far (stacked upwards) */
  int legend_cap;       /* entries reserved below the plot (0 = legend inside, top-left) */
} svg_chart;

/* Escapes & < > " for XML text and attributes. */
void svg_escape(FILE *f, const char *s);
/* Series i's colour (twelve, then again) and dash pattern (NULL: solid for the first twelve, then dashed, then
 * dotted): a chart of up to 36 series tells every one apart, its legend too. */
const char *svg_color(int i);
const char *svg_dash(int i);
/* Widens [lo, hi] to nice bounds (log: powers of ten; linear: nice steps, lo
 * kept at 0 when it is >= 0 and small). Handles lo == hi. */
void svg_nice_range(double *lo, double *hi, bool log);

void svg_chart_begin(svg_chart *c, FILE *f, double w, double h, const char *title, svg_axis x, svg_axis y);
/* Same, with room for `entries` legend entries below the plot (one per row);
 * the chart grows by 15 px per entry, so the legend never hides data. */
void svg_chart_begin_legend(svg_chart *c, FILE *f, double w, double h, const char *title, svg_axis x, svg_axis y,
                            int entries);
void svg_chart_end(svg_chart *c);
double svg_px(const svg_chart *c, double x);
double svg_py(const svg_chart *c, double y);

/* Line through n points (NaN breaks it). dash: NULL or an SVG dasharray. */
void svg_line(svg_chart *c, const double *x, const double *y, size_t n, const char *color, double width,
              const char *dash);
/* Dots of radius r; hollow draws a ring. */
void svg_dots(svg_chart *c, const double *x, const double *y, size_t n, const char *color, double r, bool hollow);
/* One marker with an optional label beside it. */
void svg_marker(svg_chart *c, double x, double y, const char *color, double r, const char *label);
/* Vertical / horizontal reference line across the plot with a label. */
void svg_vline(svg_chart *c, double x, const char *color, const char *dash, const char *label);
void svg_hline(svg_chart *c, double y, const char *color, const char *dash, const char *label);
/* Adds a legend entry (dash: NULL = a solid line): below the plot when room was reserved, else top-left
 * inside the plot box, one per row. */
void svg_legend(svg_chart *c, const char *color, const char *text, const char *dash);

/* Horizontal stacked bars: nbar bars of nseg segments, vals[b * nseg + s]
 * in `unit`; the scale runs 0..max (max <= 0: the largest total). */
void svg_stacked_bars(FILE *f, double w, const char *title, const char *unit, const char *const *seg_names,
                      const char *const *seg_colors, int nseg, const char *const *bar_labels, const double *vals,
                      int nbar, double max);

#endif
