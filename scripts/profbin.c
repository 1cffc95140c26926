/* profbin: the binary image of a profile (hw/prof.h prof_bin_write), made at build time for each bundled
 * profile and embedded beside it, so that a run loads it without parsing JSON (docs/PERFORMANCE.md, "Start-up").
 * usage: profbin OUT.bin IN.json
 * The image is a function of IN's bytes only (reproducible builds). Linked with the profile modules and an
 * empty embedded-file table (scripts/profbin_embed.c): it reads IN from disk. */
#include <stdio.h>
#include <stdlib.h>

#include "hw/prof.h"

int main(int argc, char **argv) {
  if (argc != 3) {
    fprintf(stderr, "usage: profbin OUT.bin IN.json\n");
    return 2;
  }
  sim_err err = {0, ""};
  char *text;
  size_t len;
  prof *p;
  if (sim_read_file(argv[2], &text, &len, &err) || prof_parse(&p, text, argv[2], &err)) {
    fprintf(stderr, "profbin: %s\n", err.msg);
    return 2;
  }
  unsigned char *img;
  size_t n;
  if (prof_bin_write(p, text, len, &img, &n, &err)) {
    fprintf(stderr, "profbin: %s\n", err.msg);
    return 1;
  }
  FILE *f = fopen(argv[1], "wb");
  if (!f || fwrite(img, 1, n, f) != n || fclose(f) != 0) {
    perror(argv[1]);
    return 1;
  }
  prof_free(p);
  free(img);
  free(text);
  return 0;
}
