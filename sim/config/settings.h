/* settings.h: the table of deployment settings. Every knob of a deployment
 * (deploy_cfg) is declared once, in settings.c: its vLLM name (also the
 * scenario key under "deployment", the grid axis and the JSON echo), its
 * flag and short alias, its type and accepted range, the field it lives in,
 * its default rule, whether a sweep may vary it and where it is echoed.
 * Flags (cli/run_flags.c), scenario files (runner/scenario.c), sweep grids
 * (plan/grid.c), cfg_resolve's defaults and range checks, the JSON echoes of
 * runs, sweeps and capacity searches, and validate's reproduction commands
 * all loop over this table; none of them names a setting of its own.
 *
 * Adding a numeric setting: a field in deploy_cfg (cfg.h), a row here
 * (settings.c), and the code that acts on it. Nothing else.
 *
 * Unset values: U32 0, F64 < 0, TRI -1; BOOL and CHOICE settings have a
 * value from deploy_init (false, the first choice) and count as given when
 * they differ from it. */
#ifndef SIM_SETTINGS_H
#define SIM_SETTINGS_H

#include <stdio.h>

#include "config/cfg.h"
#include "config/jsonx.h"
#include "core/jsonw.h"

typedef enum set_kind {
  SK_U32 = 0, /* uint32_t; 0 = unset */
  SK_F64,     /* double; < 0 = unset */
  SK_TRI,     /* int8_t -1 unset, 0/1 (vLLM's --[no-]flag) */
  SK_BOOL,    /* bool, false unless given (a switch) */
  SK_CHOICE   /* one of named values: parse/show functions */
} set_kind;

/* Default rule of an unset value, applied by cfg_resolve (settings_fill). */
typedef enum set_default {
  SD_ONE = 0, /* 1 (parallel sizes, replicas) */
  SD_ENGINE,  /* the engine file's field at eng_off (same type; tristates from a bool) */
  SD_RULE,    /* a rule in cfg.c (engine version, model, GPU), named in `deflt` */
  SD_FIXED    /* the value deploy_init gives */
} set_default;

/* Where a setting is used besides flags and scenario files. */
enum {
  SET_SWEEP = 1u, /* a grid axis (sweep, capacity): --flag A,B,... and "grid": {key: [...]} */
  SET_ROW = 2u,   /* echoed in every sweep and capacity row (JSON and CSV) */
  SET_DISAGG = 4u, /* a disaggregated deployment's (--mode disagg): JSON echoes skip it in agg mode, whose outputs
                      stay as they were before disaggregation existed */
  SET_GIVEN = 8u   /* one engine's setting (SGLang's schedule_policy): JSON echoes skip it unless given, so the
                      other engines' outputs stay as they were */
};

typedef struct setting {
  const char *key;     /* vLLM's name: scenario key, grid axis, JSON echo key */
  const char *flag;    /* long flag without dashes */
  const char *alias;   /* short flag or NULL */
  const char *out_key; /* echo key when it differs from key (the resolved value), else NULL */
  set_kind kind;
  size_t off;          /* offsetof(deploy_cfg, field) */
  double lo, hi;       /* SK_U32 / SK_F64: accepted values [lo, hi], (lo, hi] when lo_open */
  bool lo_open;
  set_default def;
  size_t eng_off;      /* SD_ENGINE: offsetof(engine_cfg, field) */
  unsigned use;        /* SET_* */
  const char *label;   /* sweep labels: prefix before the value ("tp", "seqs=") */
  const char *meta, *help, *deflt; /* flag help: value name, text, default rule in words */
  /* SK_CHOICE: text -> value (false: not one of the choices), the value as a flag would give it, the value as
     echoed (resolved: "bf16" where the flag says "auto"; NULL: as shown), whether it was given */
  bool (*parse)(deploy_cfg *d, const char *text);
  const char *(*show)(const deploy_cfg *d);
  const char *(*echo)(const deploy_cfg *d);
  bool (*given)(const deploy_cfg *d);
  const char *choices;
  /* SK_CHOICE whose value is a JSON object (speculative_config): parses text, false with the field at fault in why;
     a scenario file may give the object itself */
  bool (*parse_why)(deploy_cfg *d, const char *text, char *why, size_t n);
} setting;

size_t settings_count(void);
const setting *settings_at(size_t i);
/* By key ("tensor_parallel_size"), or by flag or alias ("tensor-parallel-size", "tp"); NULL if none. */
const setting *settings_by_key(const char *key);
const setting *settings_by_flag(const char *flag);
size_t settings_index(const setting *s);

/* Whether d holds a given (not unset / not default) value of s. */
bool setting_given(const setting *s, const deploy_cfg *d);
/* Parses text ("4", "0.9", "on", "fp8", "auto") into d, checking the range;
 * `who` names the source in errors ("--tp", "grid.json: line 3: ..."). */
int setting_set_text(const setting *s, deploy_cfg *d, const char *text, const char *who, sim_err *err);
/* The value as text: integers exactly, numbers %g, switches on/off, choices by name (the resolved value where
 * out_key says so: quantization -> the weight dtype). */
void setting_text(const setting *s, const deploy_cfg *d, char *buf, size_t n);
/* Writes the value as a JSON member (numbers, booleans, strings), under out_key or key. */
void setting_json(const setting *s, const deploy_cfg *d, jw *w);

/* The "deployment" object of a scenario: every key of the table, unknown keys refused (file, line, key). */
int settings_read_json(const jx *j, const cJSON *obj, const char *where, deploy_cfg *d);
/* Range check of every given numeric value (cfg_resolve; the flag/file/grid readers check on reading). */
int settings_check(const deploy_cfg *d, sim_err *err);
/* Fills unset values whose rule is `rule` (SD_ONE, SD_ENGINE; e may be NULL for SD_ONE). */
void settings_fill(deploy_cfg *d, const engine_cfg *e, set_default rule);

/* Echoes: the settings of `use` (0: all) as JSON members; CSV header names and values (",a,b" each). */
void settings_json_echo(const deploy_cfg *d, unsigned use, jw *w);
void settings_csv_header(unsigned use, FILE *f);
void settings_csv_row(const deploy_cfg *d, unsigned use, FILE *f);
/* " --flag value" for every given setting (the switches as --flag / --no-flag), into buf at *k. */
void settings_flags_text(const deploy_cfg *d, char *buf, size_t n, size_t *k);

#endif
