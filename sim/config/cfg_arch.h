/* cfg_arch.h: architecture features of a Hugging Face config.json that change
 * a model's memory or cost and that servesim does not model (yet), found
 * before the model is read: a feature whose absence would make every figure
 * wrong refuses the model, naming the feature and the keys that declare it;
 * one whose cost is only approximated (the rest of the model read as usual)
 * is named in model_cfg.unmodelled, which every command prints as a warning
 * and validate puts in the point's method. Never silently ignored. */
#ifndef SIM_CFG_ARCH_H
#define SIM_CFG_ARCH_H

#include "config/cfg.h"
#include "config/jsonx.h"

/* o: the language model's object (the root or its text_config); root: the file's top level. SIM_EINPUT
 * (jx_fail, naming the key) for a feature servesim cannot represent; else fills m->unmodelled (may stay ""). */
int cfg_arch_check(const jx *j, const cJSON *root, const cJSON *o, model_cfg *m);

/* True when servesim reads the config.json key (or warns about it by name) or knows it does not change memory or
 * a step's cost (cfg_keys.c). */
bool cfg_arch_key_known(const char *key);
/* The keys of o that are set (not null, false, 0, "" or empty) and not known, comma-separated into out (cut with
 * " and N more" when cap is short); returns their number. */
size_t cfg_arch_unread(const cJSON *o, char *out, size_t cap);

#endif
