/* testutil.c: helpers shared by the Criterion tests. */
#define _DEFAULT_SOURCE
#include "testutil.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

static void read_into(const char *path, char *buf, size_t cap) {
  if (!buf || !cap) return;
  buf[0] = 0;
  FILE *f = fopen(path, "rb");
  if (!f) return;
  size_t n = fread(buf, 1, cap - 1, f);
  buf[n] = 0;
  fclose(f);
}

int tu_run_cli(const char *args, char *out, size_t out_cap, char *errout, size_t err_cap) {
  char o[] = "/tmp/servesim_out_XXXXXX", e[] = "/tmp/servesim_err_XXXXXX";
  int fo = mkstemp(o), fe = mkstemp(e);
  if (fo < 0 || fe < 0) return -2;
  close(fo);
  close(fe);
  size_t n = strlen(args) + 4096;
  char *cmd = malloc(n);
  snprintf(cmd, n, "cd '%s' && '%s' %s >'%s' 2>'%s' </dev/null", SERVESIM_SOURCE_DIR, SERVESIM_BIN, args, o, e);
  int st = system(cmd);
  free(cmd);
  read_into(o, out, out_cap);
  read_into(e, errout, err_cap);
  unlink(o);
  unlink(e);
  if (st == -1 || !WIFEXITED(st)) return -1;
  return WEXITSTATUS(st);
}

const char *tu_src(const char *rel) {
  static char buf[4096];
  snprintf(buf, sizeof buf, "%s/%s", SERVESIM_SOURCE_DIR, rel);
  return buf;
}

const char *tu_shared(const char *rel) {
  static char buf[4096];
  struct stat st;
  const char *env = getenv("SERVESIM_SHARED_DIR");
  if (env && *env)
    snprintf(buf, sizeof buf, "%s/%s", env, rel);
  else
    snprintf(buf, sizeof buf, "%s/../shared/%s", SERVESIM_SOURCE_DIR, rel);
  return stat(buf, &st) == 0 ? buf : NULL;
}

const char *tu_tmpfile(const char *suffix, const char *text) {
  static char bufs[8][256];
  static int k = 0;
  char *p = bufs[k++ % 8];
  snprintf(p, 256, "/tmp/servesim_test_XXXXXX%s", suffix ? suffix : "");
  int fd = mkstemps(p, suffix ? (int)strlen(suffix) : 0);
  if (fd < 0) return NULL;
  size_t len = strlen(text);
  if (write(fd, text, len) != (ssize_t)len) {
    close(fd);
    return NULL;
  }
  close(fd);
  return p;
}

char *tu_slurp(const char *path, size_t *len) {
  FILE *f = fopen(path, "rb");
  if (!f) return NULL;
  fseek(f, 0, SEEK_END);
  long n = ftell(f);
  fseek(f, 0, SEEK_SET);
  char *b = malloc((size_t)n + 1);
  size_t r = fread(b, 1, (size_t)n, f);
  b[r] = 0;
  fclose(f);
  if (len) *len = r;
  return b;
}
