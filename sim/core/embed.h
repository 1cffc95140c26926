/* embed.h: data files carried by the binary (configs/ JSON: models, GPUs,
 * engines, scenarios, bundled profiles; traces/ CSV). scripts/embedgen.c
 * generates the table at build time; the bytes come in through the
 * assembler's .incbin, read-only, each file NUL-terminated. */
#ifndef SIM_EMBED_H
#define SIM_EMBED_H
#include <stddef.h>

typedef struct sim_embedded_file {
  const char *path; /* relative to the source root, e.g. "configs/gpus/h200.json" */
  const char *data; /* NUL-terminated */
  size_t len;       /* bytes, without the NUL */
} sim_embedded_file;

extern const sim_embedded_file sim_embedded_files[]; /* ends with path == NULL */

/* Returns the embedded file with exactly this relative path, or NULL. */
const sim_embedded_file *sim_embed_find(const char *path);

/* The bundled profiles' binary images (configs/profiles/NAME.json.bin, made by scripts/profbin.c), linked into
 * the servesim executables only: other programs of the build (tests, fuzz targets) get core/embed_images.c's
 * empty table (a weak definition) and parse the JSON, with the same results. */
extern const sim_embedded_file sim_profile_images[]; /* ends with path == NULL */
const sim_embedded_file *sim_image_find(const char *path);

#endif
