/* outfmt.c: shared CSV and JSON output pieces (see outfmt.h). */
#include "core/outfmt.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

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

static int refuse(const char *path, sim_err *err) {
  return sim_errf(err, SIM_EINPUT, "%s already exists: not overwriting it (pass --force to replace it)", path);
}

int outfmt_write_file(const char *path, bool force, outfmt_write_fn fn, const void *arg, sim_err *err) {
  struct stat st;
  bool to_stdout = !strcmp(path, "-");
  if (!to_stdout && !force && stat(path, &st) == 0) return refuse(path, err);
  if (to_stdout) return fn(arg, stdout, err);
  char tmp[4200];
  snprintf(tmp, sizeof tmp, "%s.tmp.%ld", path, (long)getpid());
  FILE *f = fopen(tmp, "w");
  if (!f) return sim_errf(err, SIM_EINPUT, "%s: cannot create the file", path);
  int rc = fn(arg, f, err);
  if (fclose(f) != 0 && !rc) rc = sim_errf(err, SIM_EINPUT, "%s: write failed", path);
  if (!rc && rename(tmp, path) != 0) rc = sim_errf(err, SIM_EINPUT, "%s: cannot rename the temporary file", path);
  if (rc) unlink(tmp);
  return rc;
}

int outfmt_refuse_existing(const char *const *paths, int n, bool force, sim_err *err) {
  struct stat st;
  for (int i = 0; i < n && !force; i++)
    if (paths[i] && strcmp(paths[i], "-") && stat(paths[i], &st) == 0) return refuse(paths[i], err);
  return SIM_OK;
}
