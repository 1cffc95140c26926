/* grid.h: the configurations a sweep or a capacity search visits.
 *
 * A grid is a set of axes, each a list of values; the points are the
 * cartesian product, optionally crossed with an explicit list of configs.
 * Axes (JSON key / flag):
 *   gpu / --gpu                          GPU config names or paths
 *   every deployment setting the table in config/settings.c marks
 *   sweepable, by its key and flag (tensor_parallel_size / --tp,
 *   quantization, max_num_seqs, ...), checked as the table says
 *   request_rate / --request-rate        req/s > 0 (a trace is rescaled to it;
 *                                        a generator uses it)
 *   max_concurrency / --max-concurrency  client slots >= 1 (closed loop)
 *   rate_scale / --rate-scale            what-if traffic multiplier > 0
 * On the command line an axis is a comma list: --tp 2,4,8.
 *
 * Spec file (JSON; unknown keys are errors naming the file and key):
 *   { "scenario": NAME|PATH|{scenario object},   base scenario (optional)
 *     "grid": { AXIS: [values] or value, ... },  the product
 *     "configs": [ {AXIS: value, ...}, ... ],    explicit points (optional;
 *                                                 crossed with "grid"; an axis
 *                                                 may not be in both)
 *     "slo_ms": {"ttft_p99": 2000, ...},         objectives (slo.h)
 *     "target_rate": R,                          capacity: req/s to serve
 *     "gpu_hour_price": USD or {GPU: USD, ...} } price override
 *
 * Order (the grid index): configs outermost, then the axes in the order
 * above (settings in the table's order), the last one (rate_scale) varying
 * fastest. Outputs are sorted by
 * this index, whatever order the runs finish in.
 * Ownership: grid_spec owns `configs` and `scenario_json` (grid_free). */
#ifndef SIM_GRID_H
#define SIM_GRID_H

#include "plan/slo.h"
#include "runner/scenario.h"

enum { GRID_MAX_VALUES = 64, GRID_MAX_POINTS = 100000, PRICE_MAX = 16 };

/* Axes: the GPU, then one per deployment setting (config/settings.h; AX_SET0 + the table index; only those the
 * table marks SET_SWEEP can be set), then the load axes. */
enum { GRID_MAX_SETTINGS = 40 };
typedef enum grid_axis_id {
  AX_GPU = 0,
  AX_ENGINE, /* --engine vllm,sglang,trtllm: engines (NAME or NAME@VERSION) compared on one workload */
  AX_SET0,
  AX_RATE = AX_SET0 + GRID_MAX_SETTINGS,
  AX_CONC,
  AX_RATE_SCALE,
  AX_COUNT
} grid_axis_id;

typedef struct grid_value {
  char s[64]; /* the value as text (names; numbers as given) */
  double x;   /* numeric axes: the number */
} grid_value;

typedef struct grid_point {
  bool set[AX_COUNT];
  grid_value v[AX_COUNT];
} grid_point;

/* USD per GPU-hour: a per-GPU override, else `all`, else the GPU config's price. */
typedef struct price_spec {
  double all;               /* < 0 = not given */
  int n;
  char gpu[PRICE_MAX][64];  /* GPU short names */
  double usd[PRICE_MAX];
} price_spec;

typedef struct grid_spec {
  int n[AX_COUNT];                           /* values per axis; 0 = not swept */
  grid_value v[AX_COUNT][GRID_MAX_VALUES];
  const char *src[AX_COUNT];                 /* who set the axis ("--tp", "grid.json"), for messages */
  grid_point *configs;                       /* explicit points, heap */
  size_t n_configs;
  char *scenario_json;                       /* base scenario as JSON text (the file's "scenario" object after
                                                the file's newlines before it: errors keep the file's lines), heap */
  char scenario_ref[1024];                   /* or a scenario name/path; "" = none */
  char file[1024];                           /* spec file, for messages; "" = flags only */
  slo_set slo;
  double target_rate;                        /* 0 = not given */
  price_spec price;
} grid_spec;

void grid_init(grid_spec *g);
void grid_free(grid_spec *g);
const char *grid_axis_key(grid_axis_id a);  /* JSON key */
const char *grid_axis_flag(grid_axis_id a); /* flag name without dashes */
const char *grid_axis_alias(grid_axis_id a); /* short flag name ("tp") or NULL */
/* Axis of a flag name (without dashes; "tp" too), or -1 (also for a setting that cannot be swept). */
int grid_axis_of_flag(const char *flag);
/* Axis of a JSON key ("tensor_parallel_size"), or -1. */
int grid_axis_of_key(const char *key);

/* --FLAG a,b,c (src = "--tp" for messages). An axis set twice is an error. */
int grid_set_axis_list(grid_spec *g, grid_axis_id a, const char *list, const char *src, sim_err *err);
/* Reads a spec file (see above). */
int grid_load(grid_spec *g, const char *path, sim_err *err);
int grid_parse(grid_spec *g, const char *json, const char *what, sim_err *err);

/* Number of points (>= 1), or 0 when above GRID_MAX_POINTS. */
size_t grid_size(const grid_spec *g);
void grid_point_at(const grid_spec *g, size_t idx, grid_point *out);
/* Applies a point's values to a scenario (the base with flags applied). */
int grid_apply(const grid_point *p, scenario *sc, sim_err *err);
/* Short label of the swept values, e.g. "h200 tp4 fp8 rate=5". */
void grid_label(const grid_point *p, char *buf, size_t n);
/* Two points equal on every axis except the load axes (rate, concurrency,
 * rate_scale): the same deployment under different load. */
bool grid_same_deployment(const grid_point *a, const grid_point *b);

int price_parse(price_spec *p, const char *s, const char *what, sim_err *err);
double price_lookup(const price_spec *p, const gpu_cfg *g);

#endif
