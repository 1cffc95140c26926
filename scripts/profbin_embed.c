/* profbin_embed.c: profbin's embedded-file table, empty (profbin reads its input from disk; core/embed.h). */
#include <stddef.h>

#include "core/embed.h"

const sim_embedded_file sim_embedded_files[] = {{NULL, NULL, 0}};
