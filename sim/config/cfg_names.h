/* cfg_names.h: the names of the configs servesim knows (embedded in the
 * binary and under $SERVESIM_DATA_DIR): listing them, finding the one whose
 * file declares an alias (a Hugging Face id, a GPU's device string), and
 * suggesting the closest name to a mistyped one. cfg.c's name resolution
 * (cfg_find) asks it; it reads and parses the files itself (cfg_parse.c),
 * never through cfg.c. */
#ifndef SIM_CFG_NAMES_H
#define SIM_CFG_NAMES_H

#include "config/cfg.h"

const char *cfg_kind_dir(cfg_kind kind);  /* "models", "gpus", ... (configs/<dir>/) */
const char *cfg_kind_word(cfg_kind kind); /* "model", "gpu", ... (messages) */

/* The known name whose file lists `id` among its aliases (models, GPUs, engines; ASCII case ignored), into
 * name; false when none does. */
bool cfg_alias_name(cfg_kind kind, const char *id, char *name, size_t n);
/* The known name or alias closest to `arg` by edit distance (ASCII case ignored) when it is close (at most a
 * third of its length, and 3, edits away), into buf; "" when nothing is. */
void cfg_suggest(cfg_kind kind, const char *arg, char *buf, size_t n);

#endif
