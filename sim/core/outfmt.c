/* outfmt.c: shared CSV and JSON output pieces (see outfmt.h). */
#include "core/outfmt.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

void outfmt_csv_str(FILE *f, const char *s) {
  if (!strpbrk(s, ",\"\r\n")) {
    fputs(s, f);
    return;
  }
  fputc('"', f);
  for (; *s; s++) {
    if (*s == '"') fputc('"', f);
    fputc(*s, f);
  }
  fputc('"', f);
}

void outfmt_csv_num(FILE *f, double v) {
  if (isfinite(v)) fprintf(f, ",%.6g", v);
  else fputs(",", f);
}

int outfmt_json_write(cJSON *root, FILE *f, sim_err *err) {
  char *text = cJSON_Print(root);
  cJSON_Delete(root);
  if (!text) return sim_errf(err, SIM_EINTERNAL, "cannot format the JSON report");
  int bad = fputs(text, f) < 0 || fputc('\n', f) == EOF;
  free(text);
  if (bad) return sim_errf(err, SIM_EINPUT, "cannot write the JSON report");
  return SIM_OK;
}
